"""Whether a text may hold a kspread case, told without parsing it.

A module of its own, with no import beyond the standard library: the pytest plugin
asks it of every YAML and JSON file under the tested paths at start-up, before (and
without ever, in a run that meets no case) importing the loader and the engine.
"""

from __future__ import annotations

import re

# Text that may hold a kspread document: how pytest picks the files it reads, and
# whether a document that cannot be parsed at all was meant to be a case.
_MENTIONS_CASE = re.compile(r"kspread/|\bkind[\"']?\s*:\s*[\"']?Case\b")


def mentions_case(text: str) -> bool:
    """Whether text (a file, or a document that cannot be parsed) may hold a case."""
    return _MENTIONS_CASE.search(text) is not None
