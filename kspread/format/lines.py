"""Where a field is written: the line of a field path in a YAML or JSON text.

A load error names a field path (``pods[3].requests.cpu``); its line is found by one
streaming scan of the text that stops at the field, never by building the file's node
tree: time proportional to the text before the field, memory bounded by the largest
item skipped on the way (JSON) or constant (YAML).

* YAML: libyaml's parser events (``yaml.parse`` without the composer). A subtree
  off the path is skipped by counting collection starts and ends; an alias on the
  path is followed to the node its anchor names (a second scan to that node), and a
  key a mapping lacks is looked for in the mappings it merges (``<<``). In a
  document whose root is a block mapping, the scan first jumps to the top-level key
  and to an item of its list (``_jump``, below).
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
from collections.abc import Callable, Iterator
from itertools import pairwise
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


def _follow(get: Callable[[], Any], ev: Any, path: PathT, line: int,
            merges: list | None = None) -> tuple[int, Any, int]:
    """Follow ``path`` from the node whose first event is ``ev``: the line reached, the
    event where the walk stopped and how many parts of the path it followed. When it
    stops at a mapping that lacks the key, ``merges`` receives the aliases that mapping
    merges (``<<: *a`` or ``<<: [*a, *b]``), in order: the key may come from one."""
    for n, part in enumerate(path):
        t = type(ev)
        nxt = None
        if t is MappingStartEvent:
            want = str(part)
            merged: list = []
            while True:
                key = get()
                if type(key) is MappingEndEvent:
                    if merges is not None:
                        merges += merged
                    break
                if type(key) is ScalarEvent and key.value == want:
                    line = _line(key)
                    nxt = get()
                    break
                if type(key) is ScalarEvent and key.value == "<<" and not key.style:
                    value = get()
                    if type(value) is AliasEvent:
                        merged.append(value)
                    elif type(value) is SequenceStartEvent:
                        while type(value) is not SequenceEndEvent:
                            value = get()
                            if type(value) is AliasEvent:
                                merged.append(value)
                            else:
                                _skip(get, value)
                    else:
                        _skip(get, value)
                    continue
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
    found = _jump(text, index, path, None)
    if found is None:
        found = _yaml_walk(text, index, path, None)
    return found


def yaml_key_lines(text: str, index: int, path: PathT) -> dict[str, int]:
    """The line of every key of the mapping at ``path`` in YAML document ``index``
    (empty when there is no such mapping)."""
    keys: dict[str, int] = {}
    if _jump(text, index, path, keys) is None:
        keys.clear()
        _yaml_walk(text, index, path, keys)
    return keys


def _key_lines(get: Callable[[], Any], keys: dict[str, int], base: int = 0) -> None:
    """The line of each key of the mapping whose start event was just read."""
    while True:
        key = get()
        if type(key) is MappingEndEvent:
            return
        if type(key) is ScalarEvent:
            keys.setdefault(key.value, base + _line(key))
        _skip(get, key)
        _skip(get, get())


# ---- YAML: the jump to a top-level key and to an item of its list ---------------------------------------
#
# In a document whose root is a block mapping at column 0 (a case as people write it),
# a line that starts with ``key:`` is that top-level key exactly when libyaml parses
# the text before it as a whole (no flow collection or quoted scalar is left open
# across it; block scalars and plain scalars cannot reach column 0): libyaml's
# ``raw_parse`` checks that in C, without an event object. The key's value then
# ends at the next line that starts at column 0 (and is not an item of a list at
# column 0), and is parsed alone. When the value is a block list whose items start
# with ``-`` at column c, and the items before the one wanted hold no quote or
# bracket (so no scalar or flow collection spans lines), the items are exactly the
# lines that start with ``-`` at column c: the one wanted is parsed alone. Anything
# else (several documents, line breaks other than \n and \r\n, a key that must be
# quoted, an alias on the path, a part that does not parse alone) takes the event
# scan of the whole text above.

class _Lines:
    """Lines that start with a pattern: found by searching for a line break followed by
    it (a literal start, which the regular expression engine finds fast)."""

    def __init__(self, body: str) -> None:
        self._first = re.compile(body)
        self._next = re.compile("\n" + body)

    def starts(self, text: str, pos: int, end: int) -> Iterator[int]:
        """Where each such line in ``text[pos:end]`` starts."""
        if (pos == 0 or text[pos - 1] == "\n") and self._first.match(text, pos, end):
            yield pos
        for m in self._next.finditer(text, pos, end):
            yield m.start() + 1

    def first(self, text: str, pos: int, end: int | None = None) -> int | None:
        return next(self.starts(text, pos, len(text) if end is None else end), None)


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*")
_ITEM = r"-(?=[ \t\r\n]|$)"
_DOC_MARK = _Lines(r"(?:---|\.\.\.)(?=[ \t\r\n]|$)")
_CONTENT = _Lines(r" *[^ \t\r\n#]")
_DASH = re.compile(r"( *)" + _ITEM)
_NOT_PLAIN = _Lines(r"[\"'?&!*\[{|>%@`]")  # a line that starts with what no plain key starts with
_ODD = ("\x85", "\u2028", "\u2029")


def _boundary(c: int) -> _Lines:
    """A line that ends a block list whose items start with ``-`` at column ``c``: content
    further left, or at column c but no item."""
    left = rf" {{0,{c - 1}}}[^ \t\r\n#]|" if c else ""
    return _Lines(rf"(?:{left} {{{c}}}(?!{_ITEM})[^ \r\n#])")


def _parse_alone(part: str, path: PathT, base: int, keys: dict[str, int] | None, sequence: bool) -> int | None:
    """Follow ``path`` in a piece of the text parsed alone (its first line is line ``base``
    + 1 of the text): from its root mapping, or from the first item of its root list."""
    p = CParser(part)
    try:
        get = p.get_event
        ev = _to_document(get, 0)
        if sequence:
            if type(ev) is not SequenceStartEvent:
                return None
            ev = get()
        merges: list = []
        line, ev, n = _follow(get, ev, path, _line(ev), merges)
        if n < len(path) and (type(ev) is AliasEvent or merges):
            return None  # an anchor is elsewhere in the text
        if keys is not None and n == len(path):
            if type(ev) is not MappingStartEvent:
                return None
            _key_lines(get, keys, base)
        return base + line
    except yaml.YAMLError:
        return None
    finally:
        p.dispose()


def column0_root(text: str) -> Any:
    """The start mark of the root of a one-document text (after at most a leading ``---``)
    whose root is a block mapping at column 0, with no tag or anchor, and whose lines
    break as the counts of this module count them; None otherwise."""
    if CParser is None or any(c in text for c in _ODD):
        return None
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return None  # a lone \r breaks a line for libyaml, not for the counts below
    first = _CONTENT.first(text, 0)
    if first is None or _DOC_MARK.first(text, text.find("\n", first) + 1 or len(text)) is not None:
        return None  # one document, after at most a leading ``---``
    head = CParser(text[:first + 200])  # the root: a block mapping at column 0?
    try:
        root: Any = _to_document(head.get_event, 0)
    except yaml.YAMLError:
        return None
    finally:
        head.dispose()
    mark: Any = root.start_mark
    if type(root) is not MappingStartEvent or root.flow_style or mark.column != 0 or root.tag is not None \
            or root.anchor is not None:
        return None  # (a tag or an anchor: the mapping starts at its first key, not at the node's mark)
    return mark


def _jump(text: str, index: int, path: PathT, keys: dict[str, int] | None) -> int | None:
    if CParser is None or index != 0 or not path or not isinstance(path[0], str) \
            or not _PLAIN_KEY.fullmatch(path[0]):
        return None
    mark = column0_root(text)
    if mark is None:
        return None
    key = _Lines(rf"{re.escape(path[0])}[ \t]*:(?=[ \t\r\n]|$)").first(text, 0)
    if key is None:
        # no such key, unless a key at column 0 is written other than plain (quoted, ...)
        return mark.line + 1 if _NOT_PLAIN.first(text, 0) is None else None
    try:
        CParser(text[:key]).raw_parse()
    except yaml.YAMLError:
        return None  # the line is inside something that spans lines
    key_line = text.count("\n", 0, key) + 1
    if len(path) == 1 and keys is None:
        return key_line
    after_key = text.find(":", key) + 1
    end = _boundary(0).first(text, after_key)
    if end is None:
        end = len(text)
    if len(path) >= 2 and isinstance(path[1], int) and path[1] >= 0:
        found = _jump_to_item(text, after_key, end, path, keys, key_line)
        if found is not None:
            return found
    return _parse_alone(text[key:end], path, key_line - 1, keys, False)


def _block_list(text: str, after_key: int, end: int) -> tuple[int, int] | None:
    """Where the block list that is the value of the key ending at ``after_key`` starts
    (its first item's line) and the column of its dashes; None when the value is on the
    key's line, is missing before ``end`` or is not a block list."""
    eol = text.find("\n", after_key)
    rest = text[after_key:eol if eol != -1 else end].strip()
    if rest and not rest.startswith("#"):
        return None  # the value is on the key's line
    first = _CONTENT.first(text, after_key, end)
    if first is None:
        return None
    dash = _DASH.match(text, first)
    if dash is None:
        return None  # not a block list
    return first, len(dash.group(1))


def _jump_to_item(text: str, after_key: int, end: int, path: PathT, keys: dict[str, int] | None,
                  key_line: int) -> int | None:
    found = _block_list(text, after_key, end)
    if found is None:
        return None
    first, c = found
    stop = _boundary(c).first(text, first, end)
    if stop is not None:
        end = stop
    want = path[1]
    assert isinstance(want, int)
    at = nxt = None
    for i, start in enumerate(_Lines(rf" {{{c}}}{_ITEM}").starts(text, first, end)):
        if i == want:
            at = start
        elif at is not None:
            nxt = start
            break
    if at is None or any(text.find(q, first, at) != -1 for q in "\"'[{"):
        return None
    line = key_line + text.count("\n", after_key, at)
    return _parse_alone(text[at:nxt if nxt is not None else end], path[2:], line - 1, keys, True)


# ---- YAML: a text cut into segments, each read alone -----------------------------------------------
#
# The same lines cut a one-document text whose root is a block mapping at column 0 into
# segments: one per top-level key (from a line that starts at column 0 with anything
# but a comment or a list item, to the next), and a top-level key whose value is a
# large block list into runs of its items (at the lines that start with ``-`` at the
# list's column). A run after the first is read behind its key's line (``head``), so
# that libyaml sees it where it sees it in the text. Where a segment starts is only a
# candidate: the start of a segment is where the text's top-level key (or list item)
# starts when every segment before it parses alone (libyaml's ``raw_parse``), as
# then no flow collection or quoted scalar is left open across it; the caller checks
# that, segment by segment (``parses_alone``).

# the most characters of list items in one segment
SEGMENT_SIZE = 1 << 17
_TOP_KEY = _Lines(r"(?!-(?:[ \t\r\n]|$))[^ \t\r\n#]")


class Segment:
    """A part of a text, read alone as ``head + text[start:end]``: its line ``n`` is line
    ``base + n`` of the text."""

    __slots__ = ("start", "end", "head", "base")

    def __init__(self, start: int, end: int, head: str, base: int) -> None:
        self.start, self.end, self.head, self.base = start, end, head, base

    def text(self, text: str) -> str:
        return self.head + text[self.start:self.end]

    @property
    def line(self) -> int:
        """The line of the text where the segment starts."""
        return self.base + self.head.count("\n") + 1


def yaml_segments(text: str, size: int | None = None) -> list[Segment] | None:
    """The segments of a one-document text whose root is a block mapping at column 0, in
    order (the first from the text's start); None for any other text. A run of list
    items holds at least ``size`` characters (``SEGMENT_SIZE``) but its last item's."""
    size = SEGMENT_SIZE if size is None else size
    root = column0_root(text)
    if root is None:
        return None
    key_line = 0  # where the root's first key starts
    for _ in range(root.line):
        key_line = text.index("\n", key_line) + 1
    starts = [0, *_TOP_KEY.starts(text, text.find("\n", key_line) + 1 or len(text), len(text)), len(text)]
    out: list[Segment] = []
    line = 1  # the line of starts[i]
    for a, b in pairwise(starts):
        runs = _runs(text, max(a, key_line), b, size) if b - a > size else None
        if runs is None:
            out.append(Segment(a, b, "", line - 1))
        else:
            head, at = runs
            out.append(Segment(a, at[0], "", line - 1))
            at_line = line + text.count("\n", a, at[0])
            for i, start in enumerate(at):
                end = at[i + 1] if i + 1 < len(at) else b
                out.append(Segment(start, end, head, at_line - 2))
                at_line += text.count("\n", start, end)
        line += text.count("\n", a, b)
    return out


def _runs(text: str, a: int, b: int, size: int) -> tuple[str, list[int]] | None:
    """For a top-level key at ``a`` whose value is a block list: the head for the runs of
    its items (the key's line), and where each run after the first starts (the first
    stays with the key): at the first item at least ``size`` characters after the
    previous run."""
    colon = _KEY_COLON.match(text, a)
    if colon is None:
        return None
    after_key = colon.end()
    found = _block_list(text, after_key, b)
    if found is None:
        return None
    first, c = found
    item = _Lines(rf" {{{c}}}{_ITEM}")
    runs: list[int] = []
    at: int | None = first
    while at is not None and at + size < b:
        at = item.first(text, at + size, b)
        if at is not None:
            runs.append(at)
    return (text[a:after_key] + "\n", runs) if runs else None


_KEY_COLON = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*[ \t]*:(?=[ \t\r\n]|$)")


def continues(text: str, s: Segment) -> bool:
    """Whether segment ``s``, read alone, opens as it continues the text before it when
    that text has been read: with a key of a block mapping at column 0 (a segment that
    starts with any other line, a plain scalar say, may parse alone where the text does
    not). The first segment is the text's start, and a run of items opens with its key
    and an item."""
    if s.start == 0 or s.head:
        return True
    eol = text.find("\n", s.start)
    p = CParser(text[s.start:eol if eol != -1 else len(text)])
    try:
        get = p.get_event
        get(), get()  # the stream's and the document's start
        ev: Any = get()
    except yaml.YAMLError:
        return False
    finally:
        p.dispose()
    mark: Any = ev.start_mark
    return type(ev) is MappingStartEvent and not ev.flow_style and (mark.line, mark.column) == (0, 0)


def parses_alone(part: str) -> bool:
    """Whether libyaml parses ``part`` (in C, without an event object)."""
    try:
        CParser(part).raw_parse()
    except yaml.YAMLError:
        return False
    return True


def _yaml_walk(text: str, index: int, path: PathT, keys: dict[str, int] | None) -> int | None:
    try:
        p = _parser(text)
        try:
            get = p.get_event
            ev = _to_document(get, index)
            merges: list = []
            line, ev, n = _follow(get, ev, path, _line(ev), merges)
            hops = 0
            while (n < len(path) or (keys is not None and type(ev) is AliasEvent)) and hops < _MAX_ALIAS_HOPS:
                hops += 1
                if type(ev) is AliasEvent:
                    p.dispose()
                    mark: Any = ev.start_mark
                    p, ev = _anchored(text, index, str(ev.anchor), mark.index)
                    get = p.get_event
                    merges = []
                    line, ev, m = _follow(get, ev, path[n:], line, merges)
                    n += m
                    continue
                # the key may come from a mapping this one merges: the first that has it
                for alias in merges if n < len(path) else []:
                    mark = alias.start_mark
                    q, first = _anchored(text, index, str(alias.anchor), mark.index)
                    more: list = []
                    found, at, m = _follow(q.get_event, first, path[n:], line, more)
                    if m:
                        p.dispose()
                        p, get, line, ev, n, merges = q, q.get_event, found, at, n + m, more
                        break
                    q.dispose()
                else:
                    break
            if keys is not None and n == len(path) and type(ev) is MappingStartEvent:
                _key_lines(get, keys)
            return line
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


def json_key_occurrences(text: str, path: PathT, key: str) -> list[int]:
    """The line of each occurrence of ``key`` in the object at ``path`` of a JSON text
    (an object may give a key twice)."""
    out: list[int] = []
    try:
        w = _JSONWalk(text)
        if w.follow(path) < len(path) or w.text[w.pos] != "{":
            return out
        for k, at, _ in w.members():
            if k == key:
                out.append(w.line(at))
    except (ValueError, IndexError):
        return out
    return out


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
