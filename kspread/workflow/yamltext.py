"""Values as YAML text: what reports print and what a golden update writes.

``flow`` renders a value on one line in YAML flow style (``{n1: 50, n2: 0}``,
``[a, b]``, ``null``, ``true``); a string is written plain when YAML would read
it back as that same string, else double-quoted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import yaml

from kspread.format.yamlwrite import double_quoted, writable_raw

# Characters that may not start a plain scalar, and text a plain scalar in flow
# context may not contain.
_PLAIN = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`][^,\[\]{}\n\r\t]*")
_RESOLVER = yaml.resolver.Resolver()


def reads_as_string(s: str) -> bool:
    """Whether ``s`` written plain reads back as the string ``s``."""
    if not _PLAIN.fullmatch(s) or s != s.strip() or ": " in s or " #" in s or s.endswith(":") or not writable_raw(s):
        return False
    return _RESOLVER.resolve(yaml.ScalarNode, s, (True, False)) == "tag:yaml.org,2002:str"


def scalar(v: Any, quote: str | None = None) -> str:
    """One scalar as YAML text. ``quote`` ('"' or "'") keeps a string's quoting style."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return ".nan"
        if math.isinf(v):
            return ".inf" if v > 0 else "-.inf"
        text = repr(v)
        return text if "." in text or "e" in text else text + ".0"
    s = str(v)
    if quote == "'" and "\n" not in s and all(c.isprintable() for c in s):
        return "'" + s.replace("'", "''") + "'"
    if quote != '"' and reads_as_string(s):
        return s
    return double_quoted(s)


def flow(v: Any) -> str:
    """A value on one line, in YAML flow style."""
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{scalar(k)}: {flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    return scalar(v)
