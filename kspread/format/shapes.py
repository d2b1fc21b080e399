"""Hashable keys for parsed case data: two values get the same key exactly when
``json.dumps(value, sort_keys=True, default=repr)`` writes them alike, without writing
any text.

The loader and the builder use them to do a check or a conversion once per distinct
item of a big list (150,000 pods are a few hundred distinct specs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class _Tag:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<{self.name}>"


# Markers for what JSON tells apart and Python's == does not (True == 1 == 1.0), and
# for the two kinds of collection.
_TRUE, _FALSE, _FLOAT, _LIST, _DICT = (_Tag(n) for n in ("true", "false", "float", "list", "dict"))


def freeze(v: Any) -> Any:
    """A hashable key of ``v``: equal exactly when JSON (sorted keys, ``repr`` for
    what JSON cannot write) writes the values alike. Mapping keys must be strings,
    as they are in every document the loader returns."""
    t = type(v)
    if t is str or t is int or v is None:
        return v
    if t is dict:
        return freeze_pairs(v)
    if t is list:
        return (_LIST, *[freeze(x) for x in v])
    if t is bool:
        return _TRUE if v else _FALSE
    if t is float:
        return (_FLOAT, float.__repr__(v))
    # subclasses, as the JSON encoder treats them
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, bool):  # pragma: no cover - bool has no subclasses
        return _TRUE if v else _FALSE
    if isinstance(v, int):
        return int.__int__(v)
    if isinstance(v, float):
        return (_FLOAT, float.__repr__(v))
    if isinstance(v, dict):
        return freeze_pairs(v)
    if isinstance(v, (list, tuple)):
        return (_LIST, *[freeze(x) for x in v])
    return repr(v)  # JSON writes it as the string repr(v)


def freeze_pairs(m: Mapping[str, Any]) -> tuple:
    pairs = [(k, freeze(x)) for k, x in m.items()]
    pairs.sort()  # by key: keys differ, so values are never compared
    return (_DICT, *pairs)
