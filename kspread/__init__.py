"""kspread: a declarative policy-testing harness for the Kubernetes scheduler.

The package reproduces kube-scheduler's scheduling cycle for a given minor version
(``kspread.engine.versions``), on a cluster described by a case file (``kspread.format.loader``),
through a plugin framework shaped like upstream's (``kspread.engine.framework``,
``kspread.engine.plugins``).
"""

from kspread.errors import CaseError

__all__ = ["CaseError", "__version__"]
__version__ = "0.1.0"
