"""In-tree plugins, one module each. A module registers its plugin class with
``kspread.engine.framework.registry.register``; ``register_in_tree`` imports every
module here (upstream's plugins/registry.go, NewInTreeRegistry). The scheduler calls
it before it builds a profile's framework, so the framework imports no plugin."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache


@cache
def register_in_tree() -> None:
    """Import every plugin module once, registering its implementation."""
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
