"""Where a field is written: the line of a field path in a YAML or JSON text.

A load error names a field path (``pods[3].requests.cpu``); its line is found by one
streaming scan of the text that stops at the field, never by building the file's node
tree: time proportional to the text before the field, memory bounded by the largest
item skipped on the way (JSON) or constant (YAML).

* YAML: libyaml's parser events (``yaml.parse`` without the composer). A subtree
  off the path is skipped by counting collection starts and ends; an alias on the
  path is followed to the node its anchor names (a second scan to that node).
* JSON: the ``json`` module's own scanner, driven key by key along the path: keys
  are read with ``scanstring``, and what is off the path is skipped by ``scan_once``:
  the items of a list on the path one at a time, the value of a key off the path item
  by item (so no more than one item of a list is ever built).

As the composed node marks did, a path is followed as deep as it can be: the line
of a mapping key (or of a list item) on the path, and when a key is not there (a
missing required field), the line of the deepest one that is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from kspread.errors import PathT

try:
    from yaml._yaml import CParser
except ImportError:  # PyYAML without libyaml
    CParser = None  # type: ignore[assignment, misc]

# ---- YAML -------------------------------------------------------------------------------------------

_DEPTH = {MappingStartEvent: 1, SequenceStartEvent: 1, MappingEndEvent: -1, SequenceEndEvent: -1}
# the most aliases a path is followed through (each costs a scan)
_MAX_ALIAS_HOPS = 8


class _NotFound(Exception):
    """The document, or the anchor an alias names, is not in the text."""


def _parser(text: str) -> Any:
    return CParser(text) if CParser is not None else yaml.SafeLoader(text)


def _skip(get: Callable[[], Any], first: Any) -> None:
    """Consume the node whose first event is ``first``."""
    t = type(first)
    if t is not MappingStartEvent and t is not SequenceStartEvent:
        return
    depth = 1
    delta = _DEPTH.get
    while depth:
        depth += delta(type(get()), 0)


def _line(ev: Any) -> int:
    return int(ev.start_mark.line) + 1


def _to_document(get: Callable[[], Any], index: int) -> Any:
    """The first event of the root node of document ``index``."""
    seen = -1
    while True:
        t = type(get())
        if t is DocumentStartEvent:
            seen += 1
            if seen == index:
                return get()
        elif t is StreamEndEvent:
            raise _NotFound


def _follow(get: Callable[[], Any], ev: Any, path: PathT, line: int) -> tuple[int, Any, int]:
    """Follow ``path`` from the node whose first event is ``ev``: the line reached, the
    event where the walk stopped and how many parts of the path it followed."""
    for n, part in enumerate(path):
        t = type(ev)
        nxt = None
        if t is MappingStartEvent:
            want = str(part)
            while True:
                key = get()
                if type(key) is MappingEndEvent:
                    break
                if type(key) is ScalarEvent and key.value == want:
                    line = _line(key)
                    nxt = get()
                    break
                _skip(get, key)
                _skip(get, get())
        elif t is SequenceStartEvent and isinstance(part, int) and part >= 0:
            i = 0
            while True:
                item = get()
                if type(item) is SequenceEndEvent:
                    break
                if i == part:
                    nxt = item
                    line = _line(item)
                    break
                _skip(get, item)
                i += 1
        if nxt is None:
            return line, ev, n
        ev = nxt
    return line, ev, len(path)


def _anchored(text: str, index: int, anchor: str, before: int) -> Any:
    """A parser positioned on the node that ``anchor`` names at offset ``before`` of
    document ``index`` (the last definition before it), and that node's first event."""
    where = None
    p = _parser(text)
    try:
        get = p.get_event
        ev = _to_document(get, index)
        while type(ev) is not StreamEndEvent and ev.start_mark.index < before:
            if getattr(ev, "anchor", None) == anchor and type(ev) is not AliasEvent:
                where = ev.start_mark.index
            ev = get()
    finally:
        p.dispose()
    if where is None:
        raise _NotFound
    p = _parser(text)
    get = p.get_event
    ev = _to_document(get, index)
    while ev.start_mark.index != where or type(ev) is AliasEvent or getattr(ev, "anchor", None) != anchor:
        ev = get()
        if type(ev) is StreamEndEvent:
            p.dispose()
            raise _NotFound
    return p, ev


def yaml_line(text: str, index: int, path: PathT) -> int | None:
    """The line (1-based) of ``path`` in YAML document ``index`` of ``text``, as deep as
    the path can be followed; None when the text cannot be parsed that far."""
    found = _yaml_walk(text, index, path, None)
    return found[0] if found is not None else None


def yaml_key_lines(text: str, index: int, path: PathT) -> dict[str, int]:
    """The line of every key of the mapping at ``path`` in YAML document ``index``
    (empty when there is no such mapping)."""
    keys: dict[str, int] = {}
    _yaml_walk(text, index, path, keys)
    return keys


def _yaml_walk(text: str, index: int, path: PathT, keys: dict[str, int] | None) -> tuple[int, Any] | None:
    try:
        p = _parser(text)
        try:
            get = p.get_event
            ev = _to_document(get, index)
            line, ev, n = _follow(get, ev, path, _line(ev))
            hops = 0
            while n < len(path) or (keys is not None and type(ev) is AliasEvent):
                if type(ev) is not AliasEvent or hops >= _MAX_ALIAS_HOPS:
                    break
                hops += 1
                p.dispose()
                mark: Any = ev.start_mark
                p, ev = _anchored(text, index, str(ev.anchor), mark.index)
                get = p.get_event
                line, ev, m = _follow(get, ev, path[n:], line)
                n += m
            if keys is not None and n == len(path) and type(ev) is MappingStartEvent:
                while True:
                    key = get()
                    if type(key) is MappingEndEvent:
                        break
                    if type(key) is ScalarEvent:
                        keys.setdefault(key.value, _line(key))
                    _skip(get, key)
                    _skip(get, get())
            return line, ev
        finally:
            p.dispose()
    except (_NotFound, yaml.YAMLError, RecursionError):
        return None


# ---- JSON -------------------------------------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _scan_end(text: str, pos: int) -> int:
    """Where the JSON value at ``pos`` ends (ValueError when there is none)."""
    try:
        return int(_scan_once(text, pos)[1])
    except StopIteration:  # the scanner's way of saying so; inside a generator, a RuntimeError
        raise ValueError(f"no JSON value at offset {pos}") from None
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


class _JSONWalk:
    """A position in a JSON text, moved along a path by the json module's scanner."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = _WS.match(text, 1 if text.startswith("\ufeff") else 0).end()  # type: ignore[union-attr]
        self.at = self.pos  # where the key or item last reached starts
        self._counted = (0, 1)  # an offset and its line: lines are counted forward from it

    def _ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()  # type: ignore[union-attr]

    def _expect(self, pos: int, chars: str) -> str:
        """The character at ``pos``, which must be one of ``chars`` (ValueError: the text
        is not JSON there)."""
        c = self.text[pos]
        if c not in chars:
            raise ValueError(f"not JSON at offset {pos}")
        return c

    def _skip_value(self, pos: int) -> int:
        """The end of the value at ``pos``: an array or object item by item (none of its
        siblings is built whole), anything else by the scanner."""
        text = self.text
        c = text[pos]
        if c == "[":
            pos = self._ws(pos + 1)
            if text[pos] == "]":
                return pos + 1
            while True:
                pos = self._ws(_scan_end(text, pos))
                if self._expect(pos, ",]") == "]":
                    return pos + 1
                pos = self._ws(pos + 1)
        if c == "{":
            pos = self._ws(pos + 1)
            if text[pos] == "}":
                return pos + 1
            while True:
                self._expect(pos, '"')
                pos = self._ws(_scanstring(text, pos + 1)[1])
                self._expect(pos, ":")
                pos = self._ws(_scan_end(text, self._ws(pos + 1)))
                if self._expect(pos, ",}") == "}":
                    return pos + 1
                pos = self._ws(pos + 1)
        return _scan_end(text, pos)

    def members(self) -> Any:
        """(key, where the key starts, where its value starts) for the object at ``pos``,
        moving past each value the caller does not enter."""
        text = self.text
        pos = self._ws(self.pos + 1)
        if text[pos] == "}":
            return
        while True:
            self._expect(pos, '"')
            key, end = _scanstring(text, pos + 1)
            end = self._ws(end)
            self._expect(end, ":")
            value = self._ws(end + 1)
            yield key, pos, value
            pos = self._ws(self._skip_value(value))
            if self._expect(pos, ",}") == "}":
                return
            pos = self._ws(pos + 1)

    def items(self) -> Any:
        """Where each item of the array at ``pos`` starts."""
        text = self.text
        pos = self._ws(self.pos + 1)
        if text[pos] == "]":
            return
        while True:
            yield pos
            pos = self._ws(_scan_end(text, pos))  # one item built at a time
            if self._expect(pos, ",]") == "]":
                return
            pos = self._ws(pos + 1)

    def follow(self, path: PathT) -> int:
        """Move to the value at ``path``, as deep as it goes: how many parts it followed."""
        for n, part in enumerate(path):
            c = self.text[self.pos]
            nxt = None
            if c == "{":
                want = str(part)
                for key, at, value in self.members():
                    if key == want:
                        self.at, nxt = at, value
                        break
            elif c == "[" and isinstance(part, int) and part >= 0:
                for i, at in enumerate(self.items()):
                    if i == part:
                        self.at = nxt = at
                        break
            if nxt is None:
                return n
            self.pos = nxt
        return len(path)

    def line(self, pos: int) -> int:
        """The line of offset ``pos``, counted on from the last offset asked for."""
        at, line = self._counted
        if pos < at:
            at, line = 0, 1
        line += self.text.count("\n", at, pos)
        self._counted = (pos, line)
        return line


def json_line(text: str, path: PathT) -> int | None:
    """The line (1-based) of ``path`` in a JSON text, as deep as the path can be
    followed; None when the text is not JSON that far."""
    try:
        w = _JSONWalk(text)
        w.follow(path)
        return w.line(w.at)
    except (ValueError, IndexError):
        return None


def json_item_lines(text: str) -> list[int]:
    """The line where each item of a JSON text's top-level array starts (the line of the
    text's value, once, when it is not an array)."""
    try:
        w = _JSONWalk(text)
        if w.text[w.pos] != "[":
            return [w.line(w.pos)]
        return [w.line(at) for at in w.items()]
    except (ValueError, IndexError):
        return []


def json_key_lines(text: str, path: PathT) -> dict[str, int]:
    """The line of every key of the object at ``path`` in a JSON text."""
    out: dict[str, int] = {}
    try:
        w = _JSONWalk(text)
        if w.follow(path) < len(path) or w.text[w.pos] != "{":
            return out
        for key, at, _ in w.members():
            out.setdefault(key, w.line(at))
    except (ValueError, IndexError):
        return {}
    return out
