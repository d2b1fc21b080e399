"""Golden update: rewrite the ``expect`` of failing (or empty) cases with the
actual results, in place. Used by ``pytest --kspread-update`` and ``kspread run
--update``; nothing is ever written without one of them.

The file keeps what it was. Only the values inside an ``expect`` that change are
rewritten, byte for byte everything else stays: comments (an end-of-line comment
on a rewritten line included), key order, quoting, anchors, line endings (CRLF
stays CRLF), and a JSON file stays JSON. Before anything is written the new text
is parsed again and must hold exactly the old documents with only the updated
``expect`` entries replaced; the file is written once, through a temporary file
in its own directory, fsync and an atomic rename (a symlink stays a symlink: its
target is rewritten). An update that cannot be made (a variant that inherits its
case's ``expect``, results that would still not pass, a file that changed during
the run) is an :class:`UpdateError`, reported as a failure, never a pass.

Two runs may update one file at the same time (two terminals, two CI jobs on one
checkout): each holds a lock on the file while it reads, checks and rewrites it, and
plans its updates on the text it finds then. An update is written only if its case
reads in that text as it did when it ran (other cases, and other entries' ``expect``,
may have changed meanwhile); otherwise it fails, saying the file changed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from typing import Any

import yaml

from kspread.errors import format_path
from kspread.format.files import locked, write_atomic
from kspread.workflow.runner import EXPECT_KEYS, tie_nodes
from kspread.workflow.yamltext import flow, scalar


class UpdateError(Exception):
    """A golden update that cannot be made; the message says why."""


@dataclass
class Update:
    file: str
    index: int  # document index in the file (YAML document, or item of a JSON list of cases)
    variant: str | None
    case: str
    new: dict[str, Any]  # the new values of expect's keys (None value: remove the key, see expect_after)
    fill: bool  # the expect was empty: new is the whole expect
    old: dict[str, Any] = field(default_factory=dict)  # the expect before
    expect: dict[str, Any] = field(default_factory=dict)  # the whole expect after the update
    digest: str = ""  # sha256 of the file text the update was checked against
    source: str = ""  # case_fingerprint of the case's data the run ran from
    target: str = ""  # case_fingerprint of that data with this update written

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for pytest-xdist: a worker's update travels with its test report)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Update:
        return cls(**d)


@dataclass
class ApplyResult:
    changes: list[str] = field(default_factory=list)  # one line per changed key
    updated: list[Update] = field(default_factory=list)  # written
    failed: list[tuple[Update, str]] = field(default_factory=list)  # not written, and why


# ---------------------------------------------------------------- what to write


DEFAULT_FAILING_NODES = 10  # an unschedulable pod's default update names the first nodes' statuses


def _placements_with_ties(actual: Mapping[str, Any]) -> dict[str, Any]:
    """A sequence's placements as an update writes them: a placement kspread took from a
    tie upstream breaks at random is written as the tied set (the pod ends on one of them),
    never as a plain fact."""
    ties = {p: tie_nodes(t) for p, t in (actual.get("ties") or {}).items()}
    return {p: (ties[p] if p in ties and len(ties[p]) > 1 else n) for p, n in actual["placements"].items()}


def default_expect(actual: Mapping[str, Any]) -> dict[str, Any]:
    """What an update writes into an empty ``expect``: what answers the case's question.
    A sequence: where each pod ends (``placements``; a tied placement as its tied set). One
    pod: the node it goes to (``selected``, the tied set on a tie), or that it goes nowhere
    (``unschedulable``), why on the first nodes (``filter``) and what preemption does. A case
    with ResourceClaims: also the devices each claim got (``allocations``)."""
    devices = {"allocations": actual["allocations"]} if actual.get("allocations") else {}
    if "placements" in actual:
        # a sequence with steps (a timeline): the pods evicted and the capacity answered too
        return {"placements": _placements_with_ties(actual),
                **{key: actual[key] for key in ("evicted", "capacity") if actual.get("timeline") and actual.get(key)},
                **devices}
    out: dict[str, Any] = {}
    if actual.get("selected") is not None:
        out["selected"] = actual["selected"]
        return {**out, **devices}
    out["unschedulable"] = bool(actual.get("unschedulable"))
    failing = [(n, st) for n, st in (actual.get("filter") or {}).items() if st.get("code") != "Success"]
    if failing:
        out["filter"] = dict(failing[:DEFAULT_FAILING_NODES])
    if "preemption" in actual:
        out["preemption"] = actual["preemption"]
    return {**out, **devices}


def _chosen(actual: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """The keys a person asked an update to write (``--update-keys``), whole."""
    out: dict[str, Any] = {}
    for key in keys:
        if key == "placements" and "placements" in actual:
            out[key] = _placements_with_ties(actual)
        elif key == "filter":
            out[key] = dict(actual.get("filter") or {})
        elif key in actual:
            out[key] = actual[key]
    return out


def new_expect_values(expect: Mapping[str, Any], actual: Mapping[str, Any],
                      keys: Iterable[str] = ()) -> tuple[dict[str, Any], bool]:
    """What to write: for an empty ``expect`` what answers the case's question
    (``default_expect``); otherwise the keys the expectation names, restricted to the nodes,
    plugins and pods it lists. ``keys`` (``--update-keys``) are written too, whole."""
    if not expect:
        out = default_expect(actual) if not keys else {}
        out.update(_chosen(actual, keys))
        return out, True
    out = {}
    for key in EXPECT_KEYS:
        if key not in expect:
            continue
        want = expect[key]
        if key not in actual:
            out[key] = None
            continue
        have = actual[key]
        if key == "filter":
            out[key] = {
                n: (have[n]["code"] if isinstance(w, str) else dict(have[n])) if n in have else w
                for n, w in want.items()
            }
        elif key in ("rawScores", "scores"):
            if want == {}:
                out[key] = have
            else:
                out[key] = {p: {n: (have.get(p) or {}).get(n) for n in per_node} for p, per_node in want.items()}
        elif key == "placements" and isinstance(want, Mapping) and want:
            written = _placements_with_ties(actual)
            out[key] = {p: (w if isinstance(w, list) and have.get(p) in w else written.get(p))
                        for p, w in want.items()}
        elif key in ("totals", "capacity") and isinstance(want, Mapping) and want:
            out[key] = {n: have.get(n) for n in want}
        elif key == "allocations" and isinstance(want, Mapping) and want:
            out[key] = {c: have.get(c) for c in want}  # null: unallocated
        else:
            out[key] = have
    out.update(_chosen(actual, [k for k in keys if k not in out]))
    return out, False


def _removes(key: str, value: Any) -> bool:
    """A key the run did not produce is removed, but ``selected`` and ``preemption``,
    where ``null`` is itself an expectation."""
    return value is None and key not in ("selected", "preemption")


def expect_after(old: Mapping[str, Any], new: Mapping[str, Any], fill: bool) -> dict[str, Any]:
    """The whole ``expect`` once ``new`` is written into ``old``."""
    if fill:
        return dict(new)
    out = dict(old)
    for key, value in new.items():
        if _removes(key, value):
            out.pop(key, None)
        else:
            out[key] = value
    return out


def update_for(doc, verdict, keys: Iterable[str] = ()) -> Update | None:
    """The update a checked case needs, or None (passing, error case, did not load or
    run). Raises UpdateError when no rewrite of its ``expect`` can make it pass.
    ``keys``: expectation keys to write whole besides (``--update-keys``)."""
    from kspread.format.loader import expected_error
    from kspread.workflow.runner import compare, render

    if expected_error(doc) is not None or verdict.outcome is None or verdict.case is None:
        return None
    expect = verdict.case.expect
    if verdict.passed and expect:
        return None
    if doc.variant is not None and not (isinstance(doc.overlay, Mapping) and "expect" in doc.overlay):
        raise UpdateError(f"variant {doc.variant!r} has no expect of its own (it inherits the case's); "
                          f"give it one (variants.{doc.variant}.expect) to have it updated")
    actual = verdict.outcome.actual
    new, fill = new_expect_values(expect, actual, keys)
    after = expect_after(expect, new, fill)
    if not after:
        raise UpdateError("the run produced none of the keys the expect names; the updated expect would "
                          "assert nothing")
    diffs = compare(after, actual)
    if diffs:
        raise UpdateError("even with the actual results written, the case would not pass:\n"
                          + render(diffs, after, actual))
    old = dict(expect) if isinstance(expect, Mapping) else {}
    return Update(doc.file, doc.index, doc.variant, doc.name, new, fill, _plain(old), _plain(after),
                  source=case_fingerprint(doc.data), target=case_fingerprint({**doc.data, "expect": _plain(after)}))


def case_fingerprint(data: Any) -> str:
    """A digest of a case's data (a document, or a variant merged into its case) that
    changes with any of its values, their types or their order."""
    return hashlib.sha256(repr(data).encode("utf-8", "backslashreplace")).hexdigest()


def _source_in(path: str, text: str, u: Update) -> str | None:
    """case_fingerprint of the case ``u`` updates as ``text`` holds it (None: not there)."""
    from kspread.format.loader import _read_docs, variant_data

    c = _cached(path, text)
    if "documents" not in c:  # each document on its own: a broken neighbour does not matter
        try:
            c["documents"] = _read_docs(text.removeprefix(BOM), path)  # as the loader reads it
        except Exception:  # the whole text cannot be read
            c["documents"] = []
    docs = c["documents"]
    doc = docs[u.index] if u.index < len(docs) else None
    raw = doc.data if doc is not None and doc.error is None else None
    if not isinstance(raw, Mapping):
        return None
    base = {k: v for k, v in raw.items() if k != "variants"}
    if u.variant is None:
        return case_fingerprint(base)
    variants = raw.get("variants")
    for name, over in variants.items() if isinstance(variants, Mapping) else ():
        if str(name) == u.variant:
            return case_fingerprint(variant_data(base, over))
    return None


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


# ---------------------------------------------------------------- the file as a tree with positions


class Node:
    """A value of the file with its place in the text: [start, end) covers its anchor
    and tag (if any) and its content; ``body`` is where the content starts."""

    __slots__ = ("kind", "start", "end", "body", "flow", "anchor", "items", "data", "style", "target")

    def __init__(self, kind: str, start: int, end: int = 0, flow: bool = True) -> None:
        self.kind = kind  # map, seq, scalar, alias; skipped: a value whose content is not needed
        self.start = start
        self.end = end
        self.body = start
        self.flow = flow
        self.anchor: str | None = None
        self.items: list = []  # map: [(key, value)], seq: [value]
        self.data: Any = None
        self.style: str | None = None
        self.target: Node | None = None  # alias: the anchored node

    def get(self, key: str) -> tuple[Node, Node] | None:
        if self.kind != "map":
            return None
        for k, v in self.items:
            if k.kind == "scalar" and k.data == key:
                return k, v
        return None



@dataclass
class _Doc:
    root: Node | None
    span: tuple[int, int] = (0, 0)  # the document's text
    anchors: dict[str, Node] = field(default_factory=dict)
    aliases: dict[str, list[Node]] = field(default_factory=dict)


_PROPS = re.compile(r"(?:[&!][^\s,\[\]{}]*(?:[ \t]|#[^\n]*|\r?\n)*)*")


def _start(ev: yaml.Event) -> int:
    """Where a parser event starts in the text (the parser marks every event it yields)."""
    assert ev.start_mark is not None
    return ev.start_mark.index


def _end(ev: yaml.Event) -> int:
    assert ev.end_mark is not None
    return ev.end_mark.index


def _resolver():
    from kspread.format.loader import _Loader

    class _Resolver(yaml.resolver.Resolver):
        yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers

    return _Resolver()


def _yaml_docs(text: str) -> list[_Doc]:
    """Every YAML document of ``text`` as a tree, aliases kept as such (PyYAML's
    composer would share the anchored node and lose where an alias stood)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    resolver = _resolver()
    ctor = yaml.constructor.SafeConstructor()
    events = yaml.parse(text, Loader=loader)
    docs: list[_Doc] = []

    def skip(ev, doc: _Doc) -> Node:
        """A value outside ``expect`` and ``variants``: only its span, and any anchor or
        alias in it, are needed."""
        if isinstance(ev, yaml.AliasEvent) or getattr(ev, "anchor", None) is not None:
            return build(ev, doc)
        n = Node("skipped", _start(ev), _end(ev))
        if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            while True:
                nxt = next(events)
                if isinstance(nxt, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                    break
                n.end = skip(nxt, doc).end
            if ev.flow_style:
                n.end = _end(nxt)
        return n

    def build(ev, doc: _Doc, case: bool = False) -> Node:
        """``case``: a document's root, of which only ``expect`` and ``variants`` are
        needed as trees."""
        if isinstance(ev, yaml.AliasEvent):
            n = Node("alias", _start(ev), _end(ev))
            anchor = ev.anchor or ""  # an alias always names its anchor
            target = doc.anchors.get(anchor)
            if target is None:
                raise UpdateError(f"undefined alias *{anchor}")
            n.target, n.anchor, n.data = target, anchor, target.data
            doc.aliases.setdefault(anchor, []).append(n)
            return n
        if isinstance(ev, yaml.ScalarEvent):
            n = Node("scalar", _start(ev), _end(ev))
            n.style = ev.style
            if ev.tag is None:
                tag = resolver.resolve(yaml.ScalarNode, ev.value, ev.implicit)
            else:
                tag = "tag:yaml.org,2002:str" if ev.tag == "!" else ev.tag
            try:
                n.data = ctor.construct_object(yaml.ScalarNode(tag, ev.value, style=ev.style))
            except yaml.YAMLError as e:
                raise UpdateError(f"cannot read the value {ev.value!r}: {e}") from None
        elif isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            is_map = isinstance(ev, yaml.MappingStartEvent)
            n = Node("map" if is_map else "seq", _start(ev), flow=bool(ev.flow_style))
            end_type = yaml.MappingEndEvent if is_map else yaml.SequenceEndEvent
            while True:
                nxt = next(events)
                if isinstance(nxt, end_type):
                    break
                child = build(nxt, doc)
                if is_map and case and child.data not in ("expect", "variants"):
                    n.items.append((child, skip(next(events), doc)))
                else:
                    n.items.append((child, build(next(events), doc)) if is_map else child)
            last = (n.items[-1][1] if is_map else n.items[-1]) if n.items else None
            n.end = _end(nxt) if n.flow or last is None else last.end
            if is_map:
                data: dict = {}
                for k, v in n.items:
                    try:
                        data[k.data] = v.data
                    except TypeError:
                        raise UpdateError("a mapping key that is not a scalar") from None
                n.data = data
            else:
                n.data = [v.data for v in n.items]
        else:  # pragma: no cover - the parser yields nothing else here
            raise UpdateError(f"unexpected YAML event {ev}")
        if ev.anchor is not None or ev.tag is not None:
            if n.kind == "map" and not n.flow and n.items:
                n.body = n.items[0][0].start
            else:
                props = _PROPS.match(text, n.start)  # matches the empty string too
                n.body = props.end() if props else n.start
        if ev.anchor is not None:
            n.anchor = ev.anchor
            doc.anchors[ev.anchor] = n
        return n

    try:
        for ev in events:
            if isinstance(ev, yaml.DocumentStartEvent):
                doc = _Doc(None)
                doc.root = build(next(events), doc, case=True)
                doc.span = (_start(ev), len(text))
                docs.append(doc)
            elif isinstance(ev, yaml.DocumentEndEvent):
                docs[-1].span = (docs[-1].span[0], _end(ev))
    except yaml.YAMLError as e:
        raise UpdateError(f"cannot parse the file: {e}") from None
    return docs


_JWS = re.compile(r"[ \t\r\n]*")


def _json_tree(text: str) -> Node:
    """A JSON text as a tree; values that only need skipping are decoded by the json
    module (C speed) without building their subtree."""
    dec = json.JSONDecoder()

    def ws(i: int) -> int:
        m = _JWS.match(text, i)  # matches the empty string too
        return m.end() if m else i

    def skip(i: int) -> Node:
        i = ws(i)
        value, end = dec.raw_decode(text, i)
        n = Node("scalar", i, end)
        n.data = value
        return n

    def build(i: int, case: bool = False) -> Node:
        """``case``: a case object, of which only ``expect`` and ``variants`` are needed
        as trees."""
        i = ws(i)
        c = text[i:i + 1]
        if c in ("{", "["):
            is_map = c == "{"
            n = Node("map" if is_map else "seq", i)
            j = ws(i + 1)
            close = "}" if is_map else "]"
            if text[j:j + 1] == close:
                n.end = j + 1
            else:
                while True:
                    if is_map:
                        key, kend = dec.raw_decode(text, j)
                        if not isinstance(key, str):
                            raise UpdateError("invalid JSON")
                        k = Node("scalar", j, kend)
                        k.data = key
                        j = ws(kend)
                        if text[j:j + 1] != ":":
                            raise UpdateError("invalid JSON")
                        v = build(j + 1) if not case or key in ("expect", "variants") else skip(j + 1)
                        n.items.append((k, v))
                    else:
                        v = build(j, case=case)
                        n.items.append(v)
                    j = ws(v.end)
                    if text[j:j + 1] == ",":
                        j = ws(j + 1)
                        continue
                    if text[j:j + 1] != close:
                        raise UpdateError("invalid JSON")
                    n.end = j + 1
                    break
            n.data = {k.data: v.data for k, v in n.items} if is_map else [v.data for v in n.items]
            n.body = n.start
            return n
        value, end = dec.raw_decode(text, i)
        n = Node("scalar", i, end)
        n.data = value
        n.style = '"' if c == '"' else None
        return n

    try:
        return build(0, case=True)
    except (ValueError, IndexError) as e:
        raise UpdateError(f"cannot parse the file as JSON: {e}") from None


def _is_json(text: str, path: str) -> bool:
    """JSON exactly when kspread's loader reads the file as JSON."""
    if path.endswith(".json"):
        return True
    if text.lstrip()[:1] in ("{", "["):
        try:
            json.loads(text)
            return True
        except ValueError:
            return False
    return False


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _col(text: str, i: int) -> int:
    return i - _line_start(text, i)


# ---------------------------------------------------------------- planning the edits


_Span = tuple[int, int]  # [start, end) of the text
_Edit = tuple[int, int, str]  # replace [start, end) with the text


@dataclass
class _Ctx:
    in_flow: bool
    key_col: int | None  # column of the key this value belongs to (None: a sequence item)


@dataclass
class _Op:
    node: Node
    value: Any
    ctx: _Ctx
    keep_anchor: bool = True


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same types (``1`` is not ``true``, ``1`` is not ``1.0``)."""
    if a is b:
        return True
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _diff(text: str, node: Node, new: Any, ctx: _Ctx, ops: list[_Op], removals: list[_Span]) -> None:
    """The smallest replacements that turn ``node`` into ``new``: unchanged entries,
    and the bytes around them, stay."""
    if _same(node.data, new):
        return
    child_flow = ctx.in_flow or node.flow
    if node.kind == "map" and isinstance(new, Mapping) and new:
        keys = [k.data for k, _ in node.items]
        plain_keys = all(k.kind == "scalar" for k, _ in node.items) and len(set(keys)) == len(keys)
        if plain_keys and set(new) <= set(keys):
            for k, v in node.items:
                if k.data in new:
                    _diff(text, v, new[k.data], _Ctx(child_flow, _col(text, k.start)), ops, removals)
                else:
                    removals.append(_removal(text, node, k, v))
            return
    if node.kind == "seq" and isinstance(new, list) and new and len(new) == len(node.items):
        for v, x in zip(node.items, new):
            _diff(text, v, x, _Ctx(child_flow, None), ops, removals)
        return
    ops.append(_Op(node, new, ctx))


def _removal(text: str, m: Node, k: Node, v: Node) -> _Span:
    """The span that removes the entry ``k: v`` from mapping ``m``."""
    idx = next(i for i, (kk, _) in enumerate(m.items) if kk is k)
    if m.flow:
        if idx + 1 < len(m.items):
            return k.start, m.items[idx + 1][0].start
        if idx > 0:
            return m.items[idx - 1][1].end, v.end
        raise UpdateError("cannot remove the only entry of a mapping")
    ls = _line_start(text, k.start)
    if text[ls:k.start].strip():
        raise UpdateError("cannot remove an entry that shares its line")
    nl = text.find("\n", v.end)
    return ls, (len(text) if nl < 0 else nl + 1)


def _is_leaf(v: Any) -> bool:
    """Written in flow style: lists, and mappings of scalars and lists of scalars."""
    if isinstance(v, list):
        return True
    if isinstance(v, Mapping):
        return all(not isinstance(x, (Mapping, list)) or (isinstance(x, list) and all(
            not isinstance(y, (Mapping, list)) for y in x)) for x in v.values())
    return True


def _block(v: Mapping[str, Any], unit: int) -> list[str]:
    lines: list[str] = []
    for k, x in v.items():
        if isinstance(x, Mapping) and x and not _is_leaf(x):
            lines.append(f"{scalar(k)}:")
            lines.extend(" " * unit + ln for ln in _block(x, unit))
        else:
            lines.append(f"{scalar(k)}: {flow(x)}")
    return lines


def _yaml_unit(text: str, span: _Span) -> int:
    """The document's indentation step: how far the first nested line under a
    top-level key is indented (default 2)."""
    m = re.compile(r"^[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?\n(?:[ \t]*(?:#[^\n]*)?\r?\n)*( +)[^\s-]",
                   re.M).search(text, span[0], span[1])
    return len(m.group(1)) if m else 2


def _render_yaml(text: str, op: _Op, unit: int, nl: str) -> _Edit:
    node, v, ctx = op.node, op.value, op.ctx
    start, end = node.start, node.end
    props = text[node.start:node.body] if node.kind != "alias" else ""
    if props and not op.keep_anchor and node.anchor:
        props = re.sub(r"&" + re.escape(node.anchor) + r"(?![^\s,\[\]{}])[ \t]*", "", props, count=1)
    block_node = node.kind in ("map", "seq") and not node.flow
    if isinstance(v, Mapping) and v and not ctx.in_flow and (block_node or (ctx.key_col is not None
                                                                            and not _is_leaf(v))):
        if block_node and node.kind == "map":
            col = _col(text, node.items[0][0].start)
            body = (nl + " " * col).join(_block(v, unit))
        else:
            col = (ctx.key_col or 0) + unit
            body = nl + nl.join(" " * col + ln for ln in _block(v, unit))
            props = props.rstrip()
    else:
        body = scalar(v, node.style if node.style in ("'", '"') else None) if not isinstance(
            v, (Mapping, list)) else flow(v)
        if block_node and not props.strip():
            props = ""  # a block collection replaced by a flow value: back onto the key's line
            start = len(text[:start].rstrip())
            body = " " + body
        elif node.kind == "scalar" and node.start == node.end:
            body = " " + body  # an empty value (``expect:``)
        elif props and not props[-1].isspace():
            props += " "
    new = props + body
    if new[:1] in ("\n", "\r"):
        while start > 0 and text[start - 1] in " \t":
            start -= 1
        eol = text.find("\n", end)
        eol = len(text) if eol < 0 else eol - (text[eol - 1:eol] == "\r")
        if text[end:eol].strip().startswith("#"):  # a comment after the old value stays on the key's line
            new, end = text[end:eol] + new, eol
    return start, end, new


def _json_style(text: str) -> int | None:
    """The indentation step of a pretty-printed JSON text (None: written on one line)."""
    m = re.search(r"\n([ \t]+)\S", text)
    return len(m.group(1)) if m else None


def _render_json(text: str, op: _Op, nl: str) -> _Edit:
    node, v = op.node, op.value
    unit = _json_style(text)
    was_empty = node.kind != "scalar" and not node.items
    multi = "\n" in text[node.start:node.end] or (unit is not None and isinstance(v, (Mapping, list)) and v
                                                  and was_empty)
    if multi and isinstance(v, (Mapping, list)):
        ls = _line_start(text, node.start)
        m = re.match(r"[ \t]*", text[ls:])  # matches the empty string too
        indent = m.group(0) if m else ""
        body = json.dumps(v, ensure_ascii=False, indent=unit or 2).replace("\n", nl + indent)
    else:
        body = json.dumps(v, ensure_ascii=False)
    return node.start, node.end, body


def _newline(text: str) -> str:
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def _case_node(root: Node | None, u: Update, is_json: bool) -> Node:
    node = root
    if is_json and node is not None and node.kind == "seq":
        if u.index >= len(node.items):
            raise UpdateError(f"the file has no case #{u.index + 1}")
        node = node.items[u.index]
    if node is None or node.kind != "map":
        raise UpdateError("the case is not a mapping")
    if u.variant is not None:
        vs = node.get("variants")
        var = vs[1].get(u.variant) if vs is not None else None
        if var is None:
            for k, v in (vs[1].items if vs is not None and vs[1].kind == "map" else []):
                if str(k.data) == u.variant:
                    var = (k, v)
        if var is None or var[1].kind != "map":
            raise UpdateError(f"no variant {u.variant!r} in the file")
        node = var[1]
    return node


def plan(path: str, text: str, updates: list[Update], *, whole_file: bool = True) -> str:
    """The new text of ``path`` with ``updates`` written; raises UpdateError. The new
    text is checked: it must read as the old documents with only the updated
    ``expect`` entries replaced by what the updates say.

    A YAML file with a document that does not parse is updated document by document:
    each updated document's text is planned on its own (anchors never cross documents),
    so a broken neighbour does not stop the others' update and is left as it is.

    A leading byte order mark (which kspread reads past, in YAML and JSON alike) is kept."""
    if text.startswith(BOM):
        return BOM + plan(path, text[len(BOM):], updates, whole_file=whole_file)
    try:
        is_json, docs = _tree(path, text)
    except UpdateError:  # the text does not parse
        if _is_json(text, path) or not whole_file:
            raise  # JSON, or already one document of a YAML file
        return _plan_by_document(path, text, updates)
    nl = _newline(text)
    ops_of: dict[int, list[_Op]] = {}  # per document
    regions_of: dict[int, list[_Span]] = {}
    edits: list[_Edit] = []
    for u in updates:
        di = 0 if is_json else u.index
        if di >= len(docs):
            raise UpdateError(f"the file has no document #{u.index + 1}")
        case = _case_node(docs[di].root, u, is_json)
        entry = case.get("expect")
        if entry is None:
            raise UpdateError("no expect entry found")
        k, v = entry
        ops = ops_of.setdefault(di, [])
        removals: list[_Span] = []
        _diff(text, v, u.expect, _Ctx(case.flow, _col(text, k.start)), ops, removals)
        regions_of.setdefault(di, []).extend(removals)
        edits.extend((s, e, "") for s, e in removals)
    for di, ops in ops_of.items():
        doc = docs[di]
        if not is_json:
            regions = [(op.node.start, op.node.end) for op in ops] + regions_of[di]
            edits.extend(_move_anchors(text, doc, ops, regions))
        unit = 2 if is_json else _yaml_unit(text, doc.span)
        for op in ops:
            edits.append(_render_json(text, op, nl) if is_json else _render_yaml(text, op, unit, nl))
    edits.sort()
    for (_, e1, _), (s2, _, _) in itertools.pairwise(edits):
        if s2 < e1:
            raise UpdateError("overlapping edits (an anchor shared between updated entries?)")
    new = text
    for s, e, t in reversed(edits):
        new = new[:s] + t + new[e:]
    _verify(path, text, new, updates, _doc_span(docs, updates, is_json, edits))
    return new


def _plan_by_document(path: str, text: str, updates: list[Update]) -> str:
    from dataclasses import replace

    from kspread.format.yamlio import split_documents

    chunks = split_documents(text)
    bounds = [(c.start, chunks[i + 1].start if i + 1 < len(chunks) else len(text)) for i, c in enumerate(chunks)]
    by_doc: dict[int, list[Update]] = {}
    for u in updates:
        if u.index >= len(bounds):
            raise UpdateError(f"the file has no document #{u.index + 1}")
        by_doc.setdefault(u.index, []).append(replace(u, index=0))
    new = text
    for di in sorted(by_doc, reverse=True):
        start, end = bounds[di]
        piece = plan(path, text[start:end], by_doc[di], whole_file=False)
        new = new[:start] + piece + new[end:]
    return new


def _move_anchors(text: str, doc: _Doc, ops: list[_Op], regions: list[_Span]) -> list[_Edit]:
    """Anchors whose value an update changes, aliased where nothing is rewritten: the
    alias keeps the old value. The first such alias becomes the anchor's definition
    (``&a <old value>``) and the anchor leaves the rewritten value."""

    def inside(n: Node) -> bool:
        return any(s <= n.start and n.end <= e for s, e in regions)

    def touched(n: Node) -> bool:
        return any((s < n.end and n.start < e) or (s == e and n.start <= s <= n.end) for s, e in regions)

    edits: list[_Edit] = []
    by_node = {id(op.node): op for op in ops}
    for name, anchored in doc.anchors.items():
        if not touched(anchored):
            continue
        outside = [a for a in doc.aliases.get(name, []) if not inside(a) and a.start > anchored.start]
        if not outside:
            continue
        first = min(outside, key=lambda a: a.start)
        edits.append((first.start, first.end, f"&{name} {flow(anchored.data)}"))
        op = by_node.get(id(anchored))
        if op is not None:
            op.keep_anchor = False
        elif not inside(anchored):
            props = text[anchored.start:anchored.body]
            m = re.search(r"&" + re.escape(name) + r"(?![^\s,\[\]{}])[ \t]*", props)
            if m is None:
                raise UpdateError(f"cannot find the anchor &{name}")
            s, e = anchored.start + m.start(), anchored.start + m.end()
            if text[e:e + 1] in ("\n", "\r", "#", ""):
                while s > 0 and text[s - 1] in " \t":
                    s -= 1
            edits.append((s, e, ""))
    return edits


# The last files read as trees, by (real path, digest of the text): every case of a
# file checks its update against the same text.
_CACHE: dict[tuple[str, str], dict[str | tuple[str, _Span], Any]] = {}


def _cached(path: str, text: str) -> dict[str | tuple[str, _Span], Any]:
    key = (os.path.realpath(path), digest(text))
    hit = _CACHE.get(key)
    if hit is None:
        if len(_CACHE) >= 4:
            _CACHE.clear()
        hit = _CACHE[key] = {}
    return hit


def _tree(path: str, text: str) -> tuple[bool, list[_Doc]]:
    c = _cached(path, text)
    if "tree" not in c:
        is_json = _is_json(text, path)
        c["tree"] = (is_json, [_Doc(_json_tree(text), (0, len(text)))] if is_json else _yaml_docs(text))
    return c["tree"]


def _old_docs(path: str, text: str) -> list[Any]:
    from kspread.format.loader import _parse

    c = _cached(path, text)
    if "docs" not in c:
        try:
            c["docs"] = _parse(text, path)
        except Exception as e:  # any parse failure of the old text stops the update
            raise UpdateError(f"cannot read the file: {e}") from None
    return c["docs"]


def _doc_span(docs: list[_Doc], updates: list[Update], is_json: bool, edits: list[_Edit]) -> _Span | None:
    """The text of the one document (a YAML document, an item of a JSON list) that all
    ``updates`` and ``edits`` fall in, if there is one: only it needs reading again."""
    if len({u.index for u in updates}) != 1:
        return None
    u = updates[0]
    if is_json:
        root = docs[0].root
        if root is None or root.kind != "seq" or u.index >= len(root.items):
            return None
        span = (root.items[u.index].start, root.items[u.index].end)
    else:
        span = docs[u.index].span
    if all(span[0] <= s and e <= span[1] for s, e, _ in edits):
        return span
    return None


def _load_piece(piece: str, is_json: bool, fast: bool) -> list[Any]:
    """The documents of one document's text, read the way the loader reads the file."""
    from kspread.format.loader import _Loader, _read_docs

    if is_json:
        return [json.loads(piece)]
    if fast:
        # yaml-rs with the loader's YAML 1.1 checks (yaml-rs alone reads a plain 1e3 as a
        # number, which the strict reader and Kubernetes read as a string); on an error the
        # whole file is read instead
        docs = _read_docs(piece, "piece.yaml")
        return [docs[0].data] if len(docs) == 1 and docs[0].error is None and isinstance(docs[0].data, dict) else []
    # types-PyYAML admits only PyYAML's own loader classes; ours is one of their kind
    return list(yaml.load_all(piece, Loader=_Loader))  # type: ignore[arg-type]


def _verify(path: str, old_text: str, new_text: str, updates: list[Update], span: _Span | None = None) -> None:
    """The new text must read as the old one with only the updated ``expect`` entries
    replaced (just the one document that changed, when ``span`` gives it)."""
    from kspread.format.loader import FAST_YAML_THRESHOLD, _parse, yaml_rs

    is_json = _is_json(old_text, path)
    if span is not None:
        fast = not is_json and yaml_rs is not None and span[1] - span[0] > FAST_YAML_THRESHOLD
        delta = len(new_text) - len(old_text)
        cache = _cached(path, old_text)
        try:
            if ("piece", span) not in cache:
                cache["piece", span] = _load_piece(old_text[span[0]:span[1]], is_json, fast)
            old = cache["piece", span]
            new = _load_piece(new_text[span[0]:span[1] + delta], is_json, fast)
        except Exception:  # read the whole file instead
            old = new = []
        if len(old) == 1 and len(new) == 1:
            _check_replaced(old, new, updates, lambda u: 0)
            return
    old_docs = _old_docs(path, old_text)
    try:
        new_docs = _parse(new_text, path)
    except Exception as e:
        raise UpdateError(f"the rewritten file would not parse ({e}); not written") from None
    _check_replaced(old_docs, new_docs, updates, lambda u: u.index)


def _check_replaced(old_docs: list[Any], new_docs: list[Any], updates: list[Update], position) -> None:
    want = list(old_docs)  # copied only along the paths the updates change
    for u in updates:
        i = position(u)
        if i >= len(want) or not isinstance(want[i], dict):
            raise UpdateError(f"the file has no case #{u.index + 1}")
        target = want[i] = dict(want[i])
        if u.variant is not None:
            variants = target["variants"] = dict(target.get("variants") or {})
            if not isinstance(variants.get(u.variant), dict):
                raise UpdateError(f"no variant {u.variant!r} in the file")
            target = variants[u.variant] = dict(variants[u.variant])
        target["expect"] = u.expect
    if len(new_docs) != len(want) or not all(_same(a, b) for a, b in zip(want, new_docs)):
        raise UpdateError("the rewritten file would not hold the old cases with only the updated expect "
                          "replaced; not written")


# ---------------------------------------------------------------- reading and writing


BOM = "\ufeff"


def read_text(path: str) -> str:
    """The file's text as it is on disk (line endings and a byte order mark kept)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


CHANGED = "the file changed during the run; not updated (run the update again)"


def _unchanged(path: str, text: str, u: Update) -> bool:
    """Whether ``u`` can be written into ``text``: its case reads there as it did when
    it ran, or as the update makes it (another run wrote the same); an update that does
    not say what it ran from, only into the text it was checked against."""
    if u.digest and u.digest == digest(text):
        return True  # check_update compared the case with this very text
    if u.source:
        return _source_in(path, text, u) in (u.source, u.target)
    return not u.digest


def check_update(u: Update) -> Update:
    """Check that ``u`` can be written into its file as it is now (raises UpdateError),
    and note which text it was checked against."""
    try:
        text = read_text(u.file)
    except (OSError, UnicodeDecodeError) as e:
        raise UpdateError(f"cannot read {u.file}: {e}") from None
    if not _unchanged(u.file, text, u):
        raise UpdateError(CHANGED)
    plan(u.file, text, [u])
    u.digest = digest(text)
    return u


def _leaf_changes(path: list, old: Any, new: Any, out: list[tuple[list, str, str]]) -> None:
    """Each changed leaf between ``old`` and ``new`` with its path, its values whole: a
    mapping on both sides is followed key by key; anything else (a scalar, a list, which
    the format compares as a set or in order, a change of type) is one leaf."""
    if isinstance(old, Mapping) and isinstance(new, Mapping) and old and new:
        for k in new:
            if k not in old:
                out.append(([*path, k], "(absent)", flow(new[k])))
            elif not _same(old[k], new[k]):
                _leaf_changes([*path, k], old[k], new[k], out)
        for k in old:
            if k not in new:
                out.append(([*path, k], flow(old[k]), "(absent)"))
        return
    out.append((path, flow(old), flow(new)))


def _change_lines(u: Update) -> list[str]:
    """One line per changed leaf of the expectations, with its whole path and its whole
    values (``expect.scores.NodeResourcesBalancedAllocation.n21: 67 -> 68``); a key the
    update fills, or a value that changes type, is printed whole."""
    out = []
    for key, value in u.new.items():
        if key not in u.expect:
            if key in u.old:
                out.append(f"{u.file}: {u.case}: expect.{key} removed (the run produced no {key})")
            continue
        had = not u.fill and key in u.old
        if had and _same(u.old[key], value):
            continue
        leaves: list[tuple[list, str, str]] = []
        if had:
            _leaf_changes(["expect", str(key)], u.old[key], value, leaves)
        else:
            leaves.append((["expect", str(key)], "(absent)", flow(value)))
        out.extend(f"{u.file}: {u.case}: {format_path(p)}: {old} -> {new}" for p, old, new in leaves)
    return out


def apply_file(path: str, updates: list[Update]) -> ApplyResult:
    """Write every update of one file at once (one rewrite of the file), holding the
    file's lock from reading it to replacing it."""
    with ExitStack() as stack:
        try:
            stack.enter_context(locked(path))
        except OSError as e:
            res = ApplyResult()
            res.failed.extend((u, f"cannot read {path}: {e}") for u in updates)
            return res
        return _apply_locked(path, updates)


def _apply_locked(path: str, updates: list[Update]) -> ApplyResult:
    res = ApplyResult()
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError) as e:
        res.failed.extend((u, f"cannot read {path}: {e}") for u in updates)
        return res
    good = []
    for u in updates:
        if _unchanged(path, text, u):
            good.append(u)
        else:
            res.failed.append((u, CHANGED))
    try:
        new = plan(path, text, good) if good else text
    except UpdateError:
        # find the updates that cannot be made, and write the others
        ok = []
        for u in good:
            try:
                plan(path, text, [u])
                ok.append(u)
            except UpdateError as e:
                res.failed.append((u, str(e)))
        try:
            new = plan(path, text, ok) if ok else text
            good = ok
        except UpdateError as e:
            res.failed.extend((u, str(e)) for u in ok)
            return res
    if new != text:
        try:
            write_atomic(path, new)
        except OSError as e:
            res.failed.extend((u, f"cannot write {path}: {e}") for u in good)
            return res
    res.updated.extend(good)
    for u in good:
        res.changes.extend(_change_lines(u))
    return res


def apply_all(updates: list[Update]) -> ApplyResult:
    """Write every update, each file once."""
    by_file: dict[str, list[Update]] = {}
    res = ApplyResult()
    seen: dict[tuple, Update] = {}
    conflicts: set[tuple] = set()
    for u in updates:
        real = os.path.realpath(u.file)
        key = (real, u.index, u.variant)
        if key in seen:  # the same case run twice (a symlink, pytest-xdist --dist each)
            if not _same(seen[key].expect, u.expect):
                conflicts.add(key)
                res.failed.append((u, "the case ran twice with different results; not updated"))
            continue
        seen[key] = u
        by_file.setdefault(real, []).append(u)
    for key in conflicts:
        u = seen[key]
        by_file[key[0]].remove(u)
        res.failed.append((u, "the case ran twice with different results; not updated"))
    for us in by_file.values():
        if not us:
            continue
        r = apply_file(us[0].file, sorted(us, key=lambda u: (u.index, u.variant or "")))
        res.changes.extend(r.changes)
        res.updated.extend(r.updated)
        res.failed.extend(r.failed)
    return res
