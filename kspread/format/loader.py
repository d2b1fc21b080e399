"""Reading case files: YAML documents, fast, with lines only where an error needs one.

Data is parsed by the fastest loader at hand (``json`` for JSON text, yaml-rs for
large YAML files when installed, else libyaml through ``kspread.format.yamlio``, which
is strict: duplicate keys, non-string keys, alias bombs and deep nesting are
errors with lines); the line of an error's field is found afterwards, by one scan
of the text that stops at the field (``kspread.format.lines``). Timestamps stay
strings: the case format reads them itself.

A document is kspread's when its apiVersion is in the ``kspread/`` group or its
kind is ``Case`` (``claims_case``); such a document that is not exactly
``apiVersion: kspread/v1, kind: Case`` is an error, never skipped. A document that
cannot be read fails alone: the other documents of its file still load.
"""

from __future__ import annotations

import gc
import json
import os
import re
import sys
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kspread.errors import UNPRINTABLE_RE, CaseError, PathT
from kspread.format import lines, yamlio
from kspread.format.case import OWN_FIELDS, Case, build_case, check_expect
from kspread.format.files import decode_text, read_regular, read_text, sniff_text, tested_trees
from kspread.format.limits import MAX_INT_DIGITS, check_sizes, huge_int_message
from kspread.format.schema import validate
from kspread.format.shapes import freeze
from kspread.format.sniff import mentions_case
from kspread.format.yamlio import Document

if TYPE_CHECKING:
    from kspread.format.extenders import ExtenderAccess

try:
    import yaml_rs
except ImportError:  # optional: pip install kspread[fast]
    # the module when installed (it is typed), Any when not: the ignore is needed in one case only
    yaml_rs = None  # type: ignore[assignment, unused-ignore]

# Above this size yaml-rs, all the checks below included, reads a case file faster than
# the strict reader: x1.6 to x3 at 2 KB (data, a duplicate key, a syntax error), x0.7 to
# x1.1 at 400 bytes (bench/yamlsizes.py; README, Scale, "Loading").
FAST_YAML_THRESHOLD = 2048


# Safe loading (no tags that run code), timestamps left as strings, bounded nesting;
# for callers that compose a case file themselves (kspread.workflow.update).
_Loader = yamlio.Loader

_DOC_START = re.compile(r"^---(\s|$)")
_CONTENT = re.compile(r"^[^\s#%]")
# The same over a whole text whose lines all end at "\n" (no other character that
# str.splitlines breaks at): a ``---`` line with the rest of it, a content line.
_ODD_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_DOC_START_FIRST = re.compile(r"---(?=\s|$)([^\n]*)")  # on the first line
_DOC_START_NEXT = re.compile(r"\n---(?=\s|$)([^\n]*)")  # on a later one (a literal prefix: fast)
_CONTENT_LINE = re.compile(r"^[^\s#%]", re.MULTILINE)


@contextmanager
def gc_paused():
    """The cyclic garbage collector off while a case is parsed or built: both make
    hundreds of thousands of containers and no cycles, and the collector's passes over
    them would cost a quarter of the time. (Not around schema validation: jsonschema
    leaves cyclic garbage.)"""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@dataclass
class CaseDoc:
    """One case document of a file, not yet validated."""

    file: str
    index: int  # position among the file's YAML documents
    line: int  # 1-based line where the document's content starts
    data: Any
    default_name: str
    variant: str | None = None  # the name of the variant this document was expanded from
    overlay: Any = None  # that variant's overlay
    error: CaseError | None = None  # the document cannot be read (bad YAML, duplicate key, ...)
    # the directory trees being tested, which a profile.config must resolve into (see
    # tested_trees); None: the case file's own directory
    roots: tuple[str, ...] | None = None
    # what the person running kspread allows the case's HTTP extenders, given outside the
    # case (kspread.format.extenders.ExtenderAccess: --extender NAME=URL, --extender-env,
    # --allow-extender-host; pytest's options and ini keys); None: loopback only, no variable
    extender_access: ExtenderAccess | None = None

    @property
    def name(self) -> str:
        if isinstance(self.data, Mapping) and isinstance(self.data.get("name"), str) and self.data["name"] \
                and not _has_surrogate(self.data["name"]) and UNPRINTABLE_RE.search(self.data["name"]) is None:
            base = self.data["name"]
        else:
            base = self.default_name
        return base if self.variant is None else f"{base}[{self.variant}]"

    def user_path(self, path: PathT) -> tuple:
        """Where a field is written: inside the variant's overlay when it sets it."""
        if self.variant is not None and _has_path(self.overlay, path):
            return ("variants", self.variant, *path)
        return tuple(path)

    def place(self, e: CaseError) -> CaseError:
        """Fill in where an error raised while loading or running this document is: a
        field of this document (its path, inside a variant's overlay where it sets it),
        or of the other file the error names (a KubeSchedulerConfiguration), at that
        file's line."""
        if e.file is None:
            line = self.locate(e.path)
            e.path = self.user_path(e.path)
            return e.located(self.file, line)
        if e.line is None and e.file != self.file:
            e.line = yamlio.file_line(e.file, e.path)
        return e

    def locate(self, path: PathT) -> int | None:
        """The line of ``path``: inside the variant's overlay when it sets that field."""
        if self.variant is not None and _has_path(self.overlay, path):
            return locate(self.file, self.index, ["variants", self.variant, *path])
        return locate(self.file, self.index, path) if path else self.line


def _has_path(data: Any, path: PathT) -> bool:
    if not path:
        return False
    for part in path:
        if isinstance(data, Mapping) and part in data:  # noqa: SIM114 - the arms narrow differently
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            data = data[part]
        else:
            return False
    return True


def merge_overlay(base: Any, over: Any, top: bool = True) -> Any:
    """A variant's overlay merged into its case: mappings merge key by key, anything
    else (lists included) replaces, ``null`` removes the key; the overlay's ``expect``
    replaces the case's whole ``expect``."""
    if isinstance(base, Mapping) and isinstance(over, Mapping):
        out = dict(base)
        for k, v in over.items():
            if v is None:
                out.pop(k, None)
            elif top and k == "expect":
                out[k] = v
            else:
                out[k] = merge_overlay(base.get(k), v, False)
        return out
    return over


# A variant's name, as the schema spells it (``variants.propertyNames``): part of an item id.
_VARIANT_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


def _variant_error(vname: Any, over: Mapping[str, Any], base: Mapping[str, Any], item: str
                   ) -> tuple[str, list] | None:
    """What is wrong with a variant that would otherwise be silently dropped or
    renamed: (message, path)."""
    if not isinstance(vname, str) or not _VARIANT_NAME.fullmatch(vname):
        what = "an empty name" if vname == "" else f"the name {vname!r}"
        message = ("a variant needs a name of letters, digits, '_', '.', '+' or '-' (its item is "
                   f"<case>[<variant>]); {what} is not one")
        return message, ["variants", vname]
    if not over:
        return "an empty overlay changes nothing: the variant would run the case itself again", ["variants", vname]
    if "name" in over:
        return f"a variant cannot rename its case: it runs as {item} (remove `name`)", ["variants", vname, "name"]
    if "variants" in over:
        message = ("variants do not nest: a variant's own `variants` would never run (declare each one under "
                   "the case's `variants`)")
        return message, ["variants", vname, "variants"]
    path = _null_removing_nothing(base, over, [])
    if path is not None:
        return (f"`{path[-1]}: null` removes a field the case does not set: it would change nothing",
                ["variants", vname, *path])
    if merge_overlay(base, over) == base:
        message = ("the overlay changes nothing (it sets what the case already has): the variant would run the "
                   "case itself again")
        return message, ["variants", vname]
    return None


def _null_removing_nothing(base: Any, over: Mapping[str, Any], path: list) -> list | None:
    """The path of a ``null`` in an overlay that removes nothing (``merge_overlay``: a
    null removes the key; the overlay's ``expect`` replaces the case's whole, so a null
    in it is a value)."""
    for k, v in over.items():
        here = [*path, k]
        if v is None and not (isinstance(base, Mapping) and k in base):
            return here
        if isinstance(v, Mapping) and isinstance(base, Mapping) and isinstance(base.get(k), Mapping) \
                and here != ["expect"]:
            found = _null_removing_nothing(base[k], v, here)
            if found is not None:
                return found
    return None


def expand_variants(doc: CaseDoc) -> list[CaseDoc]:
    """The case itself and one document per entry of its ``variants``. A variant whose
    name or overlay kspread cannot honour (``_variant_error``) is a document that fails
    alone, at that key; ``variants: {}`` fails the case itself."""
    data = doc.data
    variants = data.get("variants") if isinstance(data, Mapping) else None
    if not isinstance(variants, Mapping) or not all(isinstance(v, Mapping) for v in variants.values()):
        return [doc]  # absent, or malformed: the schema reports it
    base = {k: v for k, v in data.items() if k != "variants"}
    out = [CaseDoc(doc.file, doc.index, doc.line, base, doc.default_name)]
    if not variants:
        out[0].error = _format_error("an empty mapping declares no variant: add one or remove `variants`",
                                     ["variants"], file=doc.file, line=locate(doc.file, doc.index, ["variants"]))
    where = locate_keys(doc.file, doc.index, ["variants"])  # one scan for all of them
    for vname, over in variants.items():
        vdoc = CaseDoc(doc.file, doc.index, doc.line, variant_data(base, over), doc.default_name, str(vname), over)
        vdoc.line = where.get(str(vname)) or doc.line
        bad = _variant_error(vname, over, base, vdoc.name)
        if bad is not None:
            message, path = bad
            vdoc.error = _format_error(message, path, file=doc.file, line=locate(doc.file, doc.index, path))
        out.append(vdoc)
    return out


def variant_data(base: Mapping[str, Any], over: Any) -> Any:
    """A variant's document: its overlay merged into its case (``base``, the case's
    document without ``variants``), under the case's name."""
    data = merge_overlay(base, over)
    if isinstance(data, dict) and isinstance(base.get("name"), str):
        data["name"] = base["name"]
    return data


@dataclass
class FileResult:
    path: str
    docs: list[CaseDoc]
    error: CaseError | None = None  # the file could not be parsed at all


def _doc_lines(text: str) -> list[int]:
    """Where each YAML document's content starts (1-based), by scanning for ``---``.
    Checked against the parser's document count by the caller."""
    if any(c in text for c in _ODD_BREAKS):
        return _doc_lines_by_line(text)
    # lines end at "\n" only: the same scan, by regular expressions over the whole text
    starts: list[int] = []
    current: int | None = None
    marker: int | None = None
    pos = 0  # where the part of the text not yet scanned for content starts
    line, counted = 1, 0  # the line number at offset ``counted``

    def line_at(offset: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, offset)
        counted = offset
        return line

    first = _DOC_START_FIRST.match(text)
    for m in chain([first] if first is not None else [], _DOC_START_NEXT.finditer(text)):
        at = m.start(1) - 3  # where the ``---`` line starts
        if current is None:
            c = _CONTENT_LINE.search(text, pos, at)
            if c is not None:
                current = line_at(c.start())
        i = line_at(at)
        if current is not None or marker is not None:
            starts.append(current or marker or i)
        marker = i
        current = i if m.group(1).strip() else None
        pos = m.end()
    if current is None:
        c = _CONTENT_LINE.search(text, pos)
        if c is not None:
            current = line_at(c.start())
    if current is not None or marker is not None:
        starts.append(current or marker or 1)
    return starts


def _doc_lines_by_line(text: str) -> list[int]:
    starts: list[int] = []
    current: int | None = None  # first content line of the document being read
    marker: int | None = None  # line of the ``---`` that opened it
    for i, line in enumerate(text.splitlines(), 1):
        if _DOC_START.match(line):
            if current is not None or marker is not None:
                starts.append(current or marker or i)
            marker = i
            current = i if line[3:].strip() else None
        elif current is None and _CONTENT.match(line):
            current = i
    if current is not None or marker is not None:
        starts.append(current or marker or 1)
    return starts


class _DuplicateKeys(dict):
    """A JSON object that gives a key twice (``key``; the dict holds the last value)."""

    key = ""


def _json_object(pairs: list[tuple[str, Any]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                dup = _DuplicateKeys(out)
                dup.key = k
                return dup
            seen.add(k)
    return out


def _duplicate_keys(data: Any) -> tuple[list, str] | None:
    """The path of the first object (in the text's order) that gives a key twice, and the
    key: one walk over the data."""
    stack: list[tuple[Any, list]] = [(data, [])]
    while stack:
        x, at = stack.pop()
        if isinstance(x, dict):
            if isinstance(x, _DuplicateKeys):
                return at, x.key
            stack += [(v, [*at, k]) for k, v in reversed(x.items()) if isinstance(v, (dict, list))]
        elif isinstance(x, list):
            stack += [(v, [*at, i]) for i, v in reversed(list(enumerate(x))) if isinstance(v, (dict, list))]
    return None


_LONG_DIGITS = re.compile(f"[0-9]{{{MAX_INT_DIGITS + 1},}}")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_ALL_BUT_BRACKETS = {c: None for c in range(128) if chr(c) not in "[]{}"}
_ALL_BUT_BRACKETS_AND_QUOTES = {c: None for c in range(128) if chr(c) not in '[]{}"'}


def _json_depth_error(text: str, path: str) -> CaseError | None:
    """JSON nested deeper than yamlio.MAX_DEPTH (the JSON parser itself would stop
    only at the interpreter's recursion limit)."""
    half = yamlio.MAX_DEPTH // 2
    if text.count("[") + text.count("{") < half:
        return None
    if "\\" not in text:
        # the brackets outside strings: without escapes, every other piece between quotes,
        # once the text is only brackets and quotes (and adjacent quotes, which close one
        # string and open the next or open and close one without brackets, are gone)
        kept = text.translate(_ALL_BUT_BRACKETS_AND_QUOTES).replace('""', "")
        brackets = "".join(kept.split('"')[0::2])
    else:
        brackets = _JSON_STRING.sub("", text).translate(_ALL_BUT_BRACKETS)
    for _ in range(half):  # each round takes off at least one level of nesting, at most two
        shorter = brackets.replace("[]", "").replace("{}", "")
        if not shorter or shorter == brackets:
            return None  # shallow enough, or unbalanced (the JSON parser says where)
        brackets = shorter
    blanked = _JSON_STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)
    depth = 0
    for m in re.finditer(r"[\[\]{}]", blanked):
        depth += 1 if m.group() in "[{" else -1
        if depth > yamlio.MAX_DEPTH:
            return CaseError(f"invalid JSON: the data nests more than {yamlio.MAX_DEPTH} levels deep", file=path,
                             line=text.count("\n", 0, m.start()) + 1)
    return CaseError(f"invalid JSON: the data nests more than {yamlio.MAX_DEPTH} levels deep", file=path)


def _read_json(text: str, path: str) -> Any:
    """JSON text, strictly: a duplicate key is an error naming both lines, and so is
    nesting deeper than yamlio.MAX_DEPTH."""
    err = _json_depth_error(text, path)
    if err is not None:
        raise err
    try:
        data = json.loads(text, object_pairs_hook=_json_object)
    except RecursionError:
        raise CaseError(f"invalid JSON: the data nests more than {yamlio.MAX_DEPTH} levels deep",
                        file=path) from None
    except json.JSONDecodeError:
        raise
    except ValueError:
        # an integer of more digits than Python converts from text (4,300): where it is
        blanked = _JSON_STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)
        m = _LONG_DIGITS.search(blanked)
        if m is None:
            raise
        raise CaseError(huge_int_message(len(m.group())), file=path,
                        line=text.count("\n", 0, m.start()) + 1) from None
    dup = _duplicate_keys(data)
    if dup is not None:
        at, key = dup
        found = lines.json_key_occurrences(text, at, key)[:2]
        where = f" (lines {found[0]} and {found[1]})" if len(found) == 2 and found[0] != found[1] else \
            f" (twice on line {found[0]})" if len(found) == 2 else ""
        raise CaseError(f"duplicate key {key!r}{where}", at, file=path, line=found[-1] if found else None)
    return data


def _has_non_string_key(data: Any) -> bool:
    """Whether a mapping anywhere in ``data`` has a key that is not a string: one walk,
    each container's items read once."""
    return _scalars(data, sys.maxsize) is None


def _scalars(data: Any, depth: int = yamlio.MAX_DEPTH) -> tuple[set, set] | None:
    """One walk over yaml-rs's data, each container's items read once: None when a
    mapping has a key that is not a string, else the distinct strings (keys and
    values) and the types of the numbers and nulls (``int``, ``float``, ``NoneType``)
    in it (a null at the root is not counted). None too when the data nests more than
    ``depth`` levels deep (the root: level 1): yaml-rs reads deeper nesting than the
    strict reader's yamlio.MAX_DEPTH, and the strict reader says where the text nests too deep."""
    strs: set = set()
    num_types: set = set()
    add_str, add_num = strs.add, num_types.add
    level = [data]  # the containers one level deep (the root: level 1)
    for _ in range(depth):
        if not level:
            return strs, num_types
        below: list = []
        push = below.append
        for x in level:
            if type(x) is dict:
                for k in x:
                    if type(k) is not str:
                        return None
                    add_str(k)
                x = x.values()
            elif type(x) is not list:
                continue
            for v in x:
                t = type(v)
                if t is str:  # the most common first
                    add_str(v)
                elif t is dict or t is list:
                    push(v)
                elif t is int or t is float or v is None:
                    add_num(t)  # the type: a set of the numbers would keep 1 and drop an equal 1.0
        level = below
    return None if level else (strs, num_types)


_SAME_IN_BOTH = ("tag:yaml.org,2002:null", "tag:yaml.org,2002:str")

# kspread's own reader resolves plain scalars as YAML 1.1 does (as libyaml and the
# YAML Kubernetes reads), yaml-rs as YAML 1.2: they differ on 1.1's booleans yes/no/
# on/off, its octal 017 and base-60 1:20, 1.2's 0o17 octal, exponents without a dot
# or a sign, and a leading underscore. yaml-rs's data is kept only when it cannot
# differ: no string it read would be anything but a string to 1.1 (had it been written
# plain), and no number it read could have been written in a form 1.1 reads otherwise.
_RESOLVERS = {k: [(tag, rx) for tag, rx in v if tag not in _SAME_IN_BOTH]
              for k, v in yamlio.Loader.yaml_implicit_resolvers.items()}
_RESOLVED_FIRST = frozenset(k for k, v in _RESOLVERS.items() if v)
_RESOLVED = re.compile("|".join(f"(?:{rx.pattern})" for v in _RESOLVERS.values() for _tag, rx in v), re.X)
# the strings that begin with a character some resolver starts with, one per line of
# "\n" + "\n".join(strings): a literal "\n" leads, so the scan runs at C speed
_RESOLVED_LINE = re.compile("\n([" + "".join(re.escape(c) for c in sorted(_RESOLVED_FIRST)) + "][^\n]*)")


def _at_scalar_start(lead: str) -> re.Pattern:
    """``lead`` (one character) where a plain scalar begins: first in the text or after
    a space, a line break or a flow indicator, with an optional sign before it. The
    literal leads the pattern, so the scan runs at C speed."""
    sep = r"[ \t\r\n\[{,]"
    return re.compile(f"{lead}(?:(?<={sep}{lead})|(?<={sep}[-+]{lead})|(?<=\\A{lead})|(?<=\\A[-+]{lead}))")


_LEADING_0 = re.compile(_at_scalar_start("0").pattern + "[0-9oO_]")
_LEADING_UNDERSCORE = _at_scalar_start("_")
_EXPONENT = re.compile(r"[0-9.][eE][-+]?[0-9]")
_BOTH_BOOLS = frozenset(("true", "True", "TRUE", "false", "False", "FALSE"))


# Beyond the resolution of plain scalars, yaml-rs reads some texts that libyaml (and so
# kspread's own reader) reads otherwise or refuses. Where they could, the strict reader
# reads the text; the checks err towards it.
#
# In the data yaml-rs gives: a string starting with an indicator. libyaml starts no plain
# scalar with one of ``?:,[]{}#&*!|>@`%`` (``?`` and ``:`` only before a space, and in a
# flow collection never: ``{?k: v}`` is the key ``k``), yaml-rs does now and then
# (``[1, |2]``, ``{?k: v}``, ``[:x]``); a quoted one goes to the strict reader too.
# (An implicit key of 1024 characters or more both refuse alike: no check.)
# A ':' just before ',', ']' or '}' (``[a:]``, ``{a:}``): libyaml refuses it in a flow
# collection, yaml-rs reads a null value; the text is scanned only when the data hold a null.
_EMPTY_FLOW_VALUE = re.compile(r":[,\]}]")
_INDICATOR_LINE = re.compile(r"\n[?:,\[\]{}#&*!|>@`%]")
# In the text (before yaml-rs reads it): NEL, LS and PS are line breaks to YAML 1.1 and
# text to 1.2; a byte order mark (yaml-rs keeps one as text where libyaml drops it); a
# tab (libyaml refuses one that indents, yaml-rs does not always); a tag (yaml-rs drops
# one it does not know, and reads ``!!binary`` as a string); an anchor name given twice
# (the strict reader refuses it, as PyYAML's composer does: "found duplicate anchor";
# yaml-rs lets a name be given again); an anchor or alias name with a character libyaml
# ends a name at; a ``...`` line; a directive; a document that is empty or whose root
# is indented (its first line).
_ODD_TEXT = ("\x85", "\u2028", "\u2029", "\ufeff")
_TAG = re.compile(r"!(?:(?<=[\s\[{,:]!)|(?<=\A!))")
# an anchor or an alias, with its name as yaml-rs reads it (libyaml stops at the first
# character that is not a letter, a digit, '-' or '_': ``&k:- x`` is ``:- x`` anchored k)
_ANCHOR = re.compile(r"&(?:(?<=[\s\[{,:]&)|(?<=\A&))([^\s,\[\]{}]*)")
_ALIAS = re.compile(r"\*(?:(?<=[\s\[{,:]\*)|(?<=\A\*))([^\s,\[\]{}]*)")
_NAME = re.compile(r"[0-9A-Za-z_-]+")
# a ``---``, ``...`` or directive line: after ``...`` libyaml wants ``---`` before more
# content, yaml-rs does not; a ``---`` line followed by no content at column 0 (an empty
# document, or one whose root is indented) starts at a line ``_doc_lines`` does not give;
# libyaml refuses a directive it does not know (``%FOO``) and ``%YAML 2.0``, yaml-rs not
_MARKER_LINE = re.compile(r"\n(?:---|\.\.\.|%)")  # (a literal first: one scan at C speed)
_MARKER_LINE_CR = re.compile(r"\r(?:---|\.\.\.|%)")
_BR = r"(?:\r\n|[\r\n])"
_MARKER_NOT_AT_CONTENT = re.compile(rf"---[ \t]*(?:#[^\r\n]*)?(?:{_BR}[ \t]*(?:#[^\r\n]*)?)*"
                                    rf"(?:{_BR}[ \t]+[^\s#]|\Z|{_BR}(?:---|\.\.\.)(?:\s|\Z))")
# the first document's root indented, when the text does not start with ``---``
_INDENTED_FIRST = re.compile(rf"\ufeff?(?:[ \t]*(?:#[^\r\n]*)?{_BR})*[ \t]+[^\s#]")


def _may_read_otherwise(text: str) -> bool:
    """Whether yaml-rs may read ``text`` otherwise than the strict reader does, by
    constructs the data cannot show: a few scans for characters, each at C speed."""
    if not text.isascii() and any(c in text for c in _ODD_TEXT):
        return True
    if "\t" in text:
        return True
    if "!" in text and _TAG.search(text) is not None:
        return True
    anchors = _ANCHOR.findall(text) if "&" in text else []
    if len(set(anchors)) != len(anchors):
        return True
    names = anchors + _ALIAS.findall(text) if "*" in text else anchors
    if any(_NAME.fullmatch(n) is None for n in names):
        return True
    if text.startswith(("...", "%")) or \
            (_MARKER_NOT_AT_CONTENT if text.startswith("---") else _INDENTED_FIRST).match(text) is not None:
        return True
    for rx in (_MARKER_LINE, _MARKER_LINE_CR) if "\r" in text else (_MARKER_LINE,):
        for m in rx.finditer(text):
            if text[m.end() - 1] != "-" or _MARKER_NOT_AT_CONTENT.match(text, m.start() + 1) is not None:
                return True
    return False


def _plain_in_yaml_1_2(s: str) -> Any:
    try:
        data = yaml_rs.loads("a: " + s, parse_datetime=False)
    except Exception:
        return None
    return data.get("a") if isinstance(data, dict) else None


def _same_in_yaml_1_1(text: str, strs: set, num_types: set) -> bool:
    """Whether kspread's own reader would give the same data as yaml-rs did."""
    joined = "\n" + "\n".join(strs)
    if _INDICATOR_LINE.search(joined) is not None:
        return False  # a string that starts with an indicator: it was quoted, or yaml-rs read it otherwise
    for s in _RESOLVED_LINE.findall(joined):
        # (a line of a string with a line break in it is no string of its own)
        if s in strs and _RESOLVED.match(s) and s not in _BOTH_BOOLS and \
                (len(s) > MAX_INT_DIGITS or _plain_in_yaml_1_2(s) == s):
            # (a long one is not given to yaml-rs again: it converts digits to an integer
            # in time quadratic in their number; the strict reader refuses a long integer)
            return False  # plain, 1.1 reads it as a bool or a number; 1.2 as a string
    if type(None) in num_types and _EMPTY_FLOW_VALUE.search(text) is not None:
        return False  # ``[a:]``: the null of ``a`` to yaml-rs, "found unexpected ':'" to libyaml
    if int not in num_types and float not in num_types:
        return True
    # a number written with a leading 0 (017: octal to 1.1; 0o17: a string to 1.1; 0_1)
    # or a leading underscore (_1: a number to yaml-rs, a string to 1.1)
    if _LEADING_0.search(text) or ("_" in text and _LEADING_UNDERSCORE.search(text)):
        return False
    # 1e3 or 1.0e3: a number to 1.2, a string to 1.1
    return not (float in num_types and _EXPONENT.search(text))


# Bytes as "0" for a digit, " " for anything else (``_long_digit_run``).
_DIGITS_AS_0 = bytes(48 if 48 <= c <= 57 else 32 for c in range(256))
_LONG_RUN = b"0" * (MAX_INT_DIGITS + 1)
def _long_digit_run(text: str) -> bool:
    """Whether a text holds a run of more than MAX_INT_DIGITS digits (about 5 ms per MB).
    yaml-rs converts a plain integer of n digits in time quadratic in n (2.7 s for a
    million) and past Python's limit of 4,300 digits gives an integer nothing can print (a
    pod's device count of 4,301 digits was a ValueError in the DRA filter's message); the
    strict reader refuses one of more than MAX_INT_DIGITS at its line without converting it."""
    return text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_0).find(_LONG_RUN) >= 0


def _read_docs(text: str, path: str) -> list[Document]:
    """The documents of a file's text. A JSON file that cannot be read is one
    CaseError; YAML documents carry their own errors."""
    stripped = text.lstrip()
    if path.endswith(".json") or stripped[:1] in ("{", "["):
        try:
            data = _read_json(text, path)
        except json.JSONDecodeError as e:
            if path.endswith(".json"):
                raise CaseError(f"invalid JSON: {e.msg}", file=path, line=e.lineno) from None
        else:
            many = path.endswith(".json") and isinstance(data, list) and any(claims_case(x) for x in data)
            items = data if many else [data]
            starts = lines.json_item_lines(text) if many else [text.count("\n", 0, len(text) - len(stripped)) + 1]
            return [Document(i, starts[i] if i < len(starts) else 1, x) for i, x in enumerate(items)]
    if yaml_rs is not None and len(text) > FAST_YAML_THRESHOLD and "<<" not in text and \
            not _may_read_otherwise(text) and not _long_digit_run(text):
        # yaml-rs rejects duplicate keys and bounds aliases and nesting itself; on any
        # error, and for non-string keys, kspread's own reader says where
        segments = lines.yaml_segments(text)
        firsts = _doc_lines(text) if segments is not None else []
        read = _read_segments(text, path, segments) if segments is not None and len(firsts) == 1 else None
        if read is _SYNTAX:
            docs = _syntax_error_docs(text, path)
            if docs is not None:
                return docs
        elif read is not None:
            data, err = read
            found = _scalars(data)
            if found is not None and _same_in_yaml_1_1(text, *found):
                return [Document(0, firsts[0], data, True, err)]
            return yamlio.read_documents(text, path)
        try:
            data = yaml_rs.loads(text, parse_datetime=False)
        except Exception as e:
            data = None
            docs = _duplicate_key_docs(text, path, e) or _syntax_error_docs(text, path)
            if docs is not None:
                return docs
        else:
            firsts = _doc_lines(text)
            n_docs = len(firsts)
            items = data if n_docs > 1 and isinstance(data, list) and len(data) == n_docs else \
                [data] if n_docs == 1 else None
            # (the documents in a list: one level more)
            found = _scalars(items, yamlio.MAX_DEPTH + 1) if items is not None else None
            if items is not None and found is not None and _same_in_yaml_1_1(text, *found):
                return [Document(i, firsts[i], x) for i, x in enumerate(items)]
    return yamlio.read_documents(text, path)


def _duplicate_key_docs(text: str, path: str, e: Exception) -> list[Document] | None:
    """A one-document text that yaml-rs refused for a duplicate key: the document (its
    data as the strict reader would give it, the last value of the key kept) with the
    strict reader's error, found by a scan of the text (``yamlio.first_duplicate``)
    rather than by composing the whole file. None: let the strict reader read it."""
    if not str(e).startswith("duplicate mapping key"):
        return None
    firsts = _doc_lines(text)
    err = yamlio.first_duplicate(text, path) if len(firsts) == 1 else None
    if err is None:
        return None
    try:
        data = yaml_rs.loads(text, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.LastWins)
    except Exception:
        return None
    found = _scalars(data)
    if found is None or not _same_in_yaml_1_1(text, *found):
        return None
    return [Document(0, firsts[0], data, True, err)]


# ``_read_segments``: a segment is not YAML to yaml-rs
_SYNTAX: Any = object()
# what a top-level key that a segment starts with cannot start with: flow indicators, a
# tag, an anchor, an alias, a complex key, a block scalar, reserved characters
_NOT_A_KEY = frozenset("[]{},&*!?|>%@`")


def _read_segments(text: str, path: str, segments: list[lines.Segment]) -> Any:
    """yaml-rs's data of a one-document text read segment by segment (``lines.yaml_segments``:
    a top-level key, or a run of the items of a top-level list, each), and the strict
    reader's error when a key is given twice, without a second reading of the text.

    Each segment that yaml-rs reads alone starts where it does in the text (a segment
    that ends inside a flow collection or a quoted scalar is no YAML), so the segments'
    data, put together, are the text's. A duplicate key is met in the order of the text:
    at the top level by comparing the segments' keys, below it in the first segment that
    yaml-rs refuses for one, which is then scanned alone (``yamlio.first_duplicate``),
    as the scan of the whole text would find it, when the strict reader cannot report
    anything else: libyaml must parse each segment alone (and so the whole text), and
    the text hold no tag, anchor, alias, complex key or merge key, nor nest deeply.

    Returns (data, error or None); ``_SYNTAX`` when yaml-rs cannot read a segment for
    another reason than a duplicate key; None when the segments cannot tell (the whole
    text is read again)."""
    data: dict = {}
    top: dict[str, int] = {}  # the line of each top-level key (0: the first key's, found when needed)
    items: list | None = None  # the list of the last top-level key, which the runs of its items extend
    err: CaseError | None = None
    checked = -1  # a key was given twice: the segments up to this one parse alone in libyaml
    for i, s in enumerate(segments):
        if s.start and not s.head and (text[s.start] in _NOT_A_KEY or not lines.continues(text, s)):
            return None  # alone, it may read otherwise than in the text (``{a: 1}``, a plain scalar)
        part = s.text(text)
        twice = False
        try:
            got = yaml_rs.loads(part, parse_datetime=False)
        except Exception as e:
            if not str(e).startswith("duplicate mapping key"):
                return _SYNTAX
            twice = True
            try:
                got = yaml_rs.loads(part, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.LastWins)
            except Exception:
                return None
        if type(got) is not dict or len(got) != 1:
            return None
        [(key, value)] = got.items()
        if type(key) is not str:
            return None
        first_index = 0
        twice_top = not s.head and key in top
        if (twice or twice_top) and checked < 0 and \
                ("<<" in text or yamlio.may_hold_properties(text) or not yamlio.shallow(text)):
            return None
        if twice or twice_top or checked >= 0:
            while checked < i:  # from the first duplicate on, libyaml must parse every segment alone
                checked += 1
                if not lines.parses_alone(segments[checked].text(text)):
                    return None
        if s.head:  # a run of the items of the list of the segment before
            if items is None or type(value) is not list:
                return None
            first_index = len(items)
            items.extend(value)
        else:
            line = s.line if s.start else 0
            if twice_top and err is None:
                first = top[key] or lines.yaml_line(segments[0].text(text), 0, (key,))
                if first is None:
                    return None
                err = CaseError(yamlio.duplicate_message(key, first, line), (), file=path, line=line)
            top.setdefault(key, line)
            data[key] = value
            items = value if type(value) is list else None
        if twice and err is None:
            err = yamlio.first_duplicate(part, path, s.base, first_index)
            if err is None:
                return None
    return data, err


# a ``?`` where a complex key may start (a cheap upper bound, as yamlio's _NODE_PROPERTY)
_COMPLEX_KEY = re.compile(r"\?(?<=[\s\[{,:\ufeff]\?)")


def _syntax_error_docs(text: str, path: str) -> list[Document] | None:
    """A one-document text that yaml-rs could not read: when libyaml cannot parse it either,
    the document with the strict reader's error, found by a scan of the text
    (``yamlio.first_syntax_error``) rather than by composing it twice. None: let the
    strict reader read it."""
    firsts = _doc_lines(text)
    if len(firsts) != 1 or text.startswith("%") or "\n%" in text:
        return None  # several documents (each fails alone), or directives
    if text.startswith("?") or ("?" in text and _COMPLEX_KEY.search(text) is not None):
        return None  # a complex key: the strict reader may stop elsewhere (``? k`` ``: v`` then ``1``)
    err = yamlio.first_syntax_error(text, path)
    return None if err is None else [Document(0, firsts[0], None, False, err, text)]


def _parse(text: str, path: str) -> list[Any]:
    """The data of every document of a file's text; a CaseError for the first that
    cannot be read."""
    docs = _read_docs(text, path)
    for d in docs:
        if d.error is not None:
            raise d.error
    return [d.data for d in docs]


def claims_case(data: Any) -> bool:
    """A document that kspread must read as a case (or reject): its apiVersion is in
    the ``kspread/`` group, or its kind is ``Case``."""
    if not isinstance(data, Mapping):
        return False
    api = data.get("apiVersion")
    return data.get("kind") == "Case" or (isinstance(api, str) and api.startswith("kspread/"))


is_case = claims_case


# A lone surrogate can only come from an escape (JSON ``\ud800``, YAML ``\ud800`` or
# ``\U0000d800``): UTF-8 text cannot hold one. Only a text that has such an escape is walked.
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
                          r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _has_surrogate(s: str) -> bool:
    return not s.isascii() and _SURROGATE.search(s) is not None


def _surrogate_at(data: Any, path: tuple = ()) -> tuple | None:
    """The path of the first key or string in ``data`` holding a lone surrogate."""
    if isinstance(data, str):
        return path if _has_surrogate(data) else None
    if isinstance(data, Mapping):
        for k, v in data.items():
            if isinstance(k, str) and _has_surrogate(k):
                return (*path, k)
            found = _surrogate_at(v, (*path, k))
            if found is not None:
                return found
    elif isinstance(data, list):
        for i, v in enumerate(data):
            found = _surrogate_at(v, (*path, i))
            if found is not None:
                return found
    return None


def surrogate_error(text: str, data: Any, file: str, index: int = 0) -> CaseError | None:
    """A lone surrogate (``"\\ud800"``, legal in JSON) is not text: it cannot be printed
    or written as UTF-8. The error names the field that holds it, at its line."""
    if _SURROGATE_ESCAPE.search(text) is None:
        return None
    at = _surrogate_at(data)
    if at is None:
        return None
    line = locate(file, index, at)
    if line is None:  # JSON: the line of the first escape that is not half of a pair
        lone = _LONE_ESCAPE.search(text)
        line = text.count("\n", 0, lone.start()) + 1 if lone is not None else None
    return CaseError("invalid text: a lone surrogate escape (\\ud800 to \\udfff, not a UTF-16 pair) is not a "
                     "character", at, file=file, line=line)


def _unprintable_what(c: str) -> str:
    if c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029":
        return "a line break"
    if c in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069":
        return "a bidirectional text control"
    return "a control character"


def name_error(data: Any, file: str, index: int = 0) -> CaseError | None:
    """A case name is printed in every report and CI log, at the start of a line in some
    and inside a workflow command's title: one holding a control character, a line break
    or a bidirectional override is refused at its line (the case is then named by its
    file, as a case without a name)."""
    name = data.get("name") if isinstance(data, Mapping) else None
    if not isinstance(name, str):
        return None
    m = UNPRINTABLE_RE.search(name)
    if m is None:
        return None
    c = m.group()
    return CaseError(f"a case name cannot hold {_unprintable_what(c)} (U+{ord(c):04X}, character {m.start() + 1}): "
                     "the name is "
                     "printed in reports and CI logs, where it would break the line, drive the terminal or "
                     "reorder the text", ["name"], file=file, line=locate(file, index, ["name"]))


def read_file(path: str | Path, data: bytes | None = None) -> FileResult:
    """The case documents of a file; ``data``: its bytes, when the caller has read them
    already (the pytest plugin, which reads a file once to tell whether it is a case file)."""
    p = str(path)
    bad = UNPRINTABLE_RE.search(p)
    if bad is not None:
        return FileResult(p, [], CaseError(
            f"the file's path holds {_unprintable_what(bad.group())} (U+{ord(bad.group()):04X}): kspread does not "
            "read it, as its name would be printed in reports and CI logs (rename the file)", file=p))
    try:
        text = read_text(p) if data is None else decode_text(data, p)
    except CaseError as e:
        return FileResult(p, [], e)
    try:
        with gc_paused():
            docs = _read_docs(text, p)
    except CaseError as e:
        return FileResult(p, [], e.located(p, None))
    # a file name that is not UTF-8 (surrogate escapes) gives a default name with U+FFFD
    stem = Path(p).stem.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    multi = len(docs) > 1
    out: list[CaseDoc] = []
    for d in docs:
        default = f"{stem}-{d.index + 1}" if multi else stem
        if d.error is None and d.parsed:
            d.error = surrogate_error(text, d.data, p, d.index) or name_error(d.data, p, d.index)
        if d.error is not None:
            # a document that cannot be read fails alone, if it is (or looks like) a case
            if claims_case(d.data) if d.parsed else mentions_case(d.source):
                out.append(CaseDoc(p, d.index, d.line, d.data, default, error=d.error))
        elif claims_case(d.data):
            out.extend(expand_variants(CaseDoc(p, d.index, d.line, d.data, default)))
    return FileResult(p, out, None)


def _is_json(file: str, text: str) -> bool:
    """Whether ``_read_docs`` read the text as JSON."""
    return file.endswith(".json") or text.lstrip()[:1] in ("{", "[")


def locate(file: str, index: int, path: PathT) -> int | None:
    """The line of ``path`` inside document ``index`` of ``file``, as deep as the path
    can be followed: one scan of the text that stops there (``kspread.format.lines``).
    In a JSON file that is a list of cases, document ``index`` is its item ``index``."""
    try:
        text = read_text(file)
    except CaseError:
        return None
    if _is_json(file, text):
        line = lines.json_line(text, _json_path(text, index, path))
        if line is not None or file.endswith(".json"):
            return line
    return lines.yaml_line(text, index, path)


def locate_keys(file: str, index: int, path: PathT) -> dict[str, int]:
    """The line of each key of the mapping at ``path`` in document ``index`` of ``file``."""
    try:
        text = read_text(file)
    except CaseError:
        return {}
    if _is_json(file, text):
        found = lines.json_key_lines(text, _json_path(text, index, path))
        if found or file.endswith(".json"):
            return found
    return lines.yaml_key_lines(text, index, path)


def _json_path(text: str, index: int, path: PathT) -> list:
    # a list at the top is a list of cases (``_read_docs``): document ``index`` is its item
    return [index, *path] if text.lstrip("\ufeff \t\r\n")[:1] == "[" else list(path)


def _format_error(message: str, path: PathT, **kw: Any) -> CaseError:
    """A CaseError in how the case is written (``CaseError.format_error``)."""
    e = CaseError(message, path, **kw)
    e.format_error = True
    return e


def load_case(doc: CaseDoc, config: str | None = None) -> Case:
    """Validate and build one case; a CaseError names file, line and field. ``config``
    is a KubeSchedulerConfiguration for cases without a ``profile``."""
    if doc.error is not None:
        raise doc.error
    try:
        api, kind = doc.data.get("apiVersion"), doc.data.get("kind")
        if kind is None:
            typo = [k for k in doc.data if isinstance(k, str) and k.lower().startswith("kind")]
            raise _format_error("missing required field 'kind' (kind: Case)"
                                + (f"; unknown field {typo[0]!r}" if typo else ""), [typo[0]] if typo else [])
        if kind != "Case":
            raise _format_error(f"a document with apiVersion {api} must be kind: Case (the only kind of the "
                                "kspread group)", ["kind"], value=kind)
        if api != "kspread/v1":
            raise _format_error("a kind: Case document must have apiVersion: kspread/v1 (the case format this "
                                "kspread reads)", ["apiVersion"], value=api)
        check_expect(doc.data.get("expect"))
        check_sizes(doc.data)  # before the schema validates each entry
        shapes = validate_deduplicated(doc.data)  # (jsonschema makes cyclic garbage)
        with gc_paused():
            case = build_case(doc.data, doc.default_name, str(Path(doc.file).parent), config,
                              pod_shapes=shapes.get("pods"), roots=doc.roots)
        _locate_extenders(case, doc)
        return case
    except CaseError as e:
        raise doc.place(e) from None


def _locate_extenders(case: Case, doc: CaseDoc) -> None:
    """Each HTTP extender of the case gets the URL it is called at (an override given on
    the command line for its name, else its urlPrefix with the allowed environment
    variables expanded, on an allowed host) and knows where it is written (file:line),
    for the errors of its calls."""
    from dataclasses import replace

    from kspread.format.extenders import resolve_url

    exts = case.profile.extenders
    for i, e in enumerate(exts):
        if e.http is not None:
            e = resolve_url(e, doc.extender_access)
            exts[i] = e if e.where else replace(e, where=f"{doc.file}:{doc.locate(e.path)}")


# Fields whose values are free-form names: replaced by their type when deduplicating.
_NAME_FIELDS = ("name", "node", "nominatedNode", "startTime")
_BIG_LISTS = ("nodes", "pods", "owners", "pdbs", "objects", "schedule")


# Fields that are label maps (any key, string values): replaced by the types of their
# values, so pods that differ only in label keys or values share a shape; label syntax
# is checked by the builder for every item.
_LABEL_FIELDS = ("labels",)


_STR_ONLY = {str}


def _label_types(v: Any) -> Any:
    if isinstance(v, dict) or isinstance(v, Mapping):  # noqa: SIM101 - dict first: ABC checks are slow
        types = set(map(type, v.values()))
        if types == _STR_ONLY:
            return "labels:str"
        return "labels:" + ",".join(sorted({t.__name__ for t in types}))
    return v


_NAME_SET = frozenset(_NAME_FIELDS)
# The builder converts a pod's spec once per shape (build_case's pod_shapes): a shape must
# fix every field of a pod but those the builder reads per pod.
assert _NAME_SET | set(_LABEL_FIELDS) == OWN_FIELDS
_TOP = object()


def _shape_key(item: Any) -> Any:
    """Equal for two items exactly when their JSON, with names replaced by their type
    and label maps by the types of their values, is (``shapes.freeze``)."""
    if isinstance(item, dict) or isinstance(item, Mapping):  # noqa: SIM101 - as above
        pairs = []
        for k, v in item.items():
            if k in _NAME_SET:  # its type, and whether it is empty (the schema's minLength)
                pairs.append((k, type(v).__name__ if v != "" else ""))
            elif k in _LABEL_FIELDS:
                pairs.append((k, freeze(_label_types(v))))
            else:
                pairs.append((k, freeze(v)))
        pairs.sort()  # by key: keys differ, so values are never compared
        return tuple(pairs)
    if isinstance(item, str):
        return "str"
    return (_TOP, freeze(item))


def validate_deduplicated(data: Mapping[str, Any]) -> dict[str, list[int]]:
    """Schema-validate a case, checking each distinct shape of a big list's items once.

    Replicated workloads make most pods identical but for name, node and label
    values, so a 150,000-pod case (or a 50,000-pod ``schedule``) validates a few hundred
    distinct pods. An error is the one validating every item reports (the deepest, the
    first of those by path, items by index): the same error at a later item of the shape comes
    after the first item's, and the shape key keeps what the schema checks of names (the
    type, minLength). Returns, for each big list that was
    deduplicated, the shape number of every item (items of one shape differ at most
    in name, node, nominated node, start time and label keys and values: the builder
    converts the rest once per shape)."""
    if not isinstance(data, Mapping):
        validate(data)
        return {}
    slim = dict(data)
    back: dict[str, list[int]] = {}
    shapes: dict[str, list[int]] = {}
    for key in _BIG_LISTS:
        items = data.get(key)
        if not isinstance(items, list) or len(items) < 64:
            continue
        seen: dict[Any, int] = {}
        reps: list[Any] = []
        firsts: list[int] = []
        ids: list[int] = []
        for i, item in enumerate(items):
            k = _shape_key(item)
            n = seen.get(k)
            if n is None:
                n = seen[k] = len(reps)
                reps.append(item)
                firsts.append(i)
            ids.append(n)
        back[key] = firsts
        shapes[key] = ids
        slim[key] = reps
    try:
        validate(slim)
    except CaseError as e:
        if len(e.path) >= 2 and e.path[0] in back and isinstance(e.path[1], int):
            e.path = (e.path[0], back[e.path[0]][e.path[1]], *e.path[2:])
        raise
    return shapes


def expected_error(doc: CaseDoc) -> str | None:
    """The ``expect.error`` text of a document, read without validating it (None when
    it is absent or blank: a blank one is an error, ``check_expect``)."""
    exp = doc.data.get("expect") if isinstance(doc.data, Mapping) else None
    if isinstance(exp, Mapping) and isinstance(exp.get("error"), str) and exp["error"].strip():
        return exp["error"]
    return None


def meets_expected_error(doc: CaseDoc, e: CaseError | str) -> bool:
    """Whether an error met while loading or running ``doc`` (placed: ``CaseDoc.place``),
    or its scheduling error, is the one its ``expect.error`` expects: one that may meet
    it (``expectable``) whose field and message hold the text (not the file name and
    line before them, which every error has)."""
    want = expected_error(doc)
    if want is None:
        return False
    if isinstance(e, str):
        return want in e
    return expectable(doc, e) and want in error_text(e)


def expectable(doc: CaseDoc, e: CaseError) -> bool:
    """Whether ``e`` may meet an ``expect.error`` at all. Only an error in the cluster
    and scheduler the case describes can: an object the API server would refuse,
    priority admission, a version, feature gate, plugin, plugin argument or
    configuration file that kube-scheduler would refuse, a failure while scheduling.
    Never an error in how the case is written: a document that cannot be read or is not
    a case, an unknown field of the format (plugin arguments are decoded strictly as
    kube-scheduler decodes them: theirs count), a variant's overlay key, anything at
    ``expect`` or in the case's own fields (``name``, ``description``, ``source``,
    ``tags``)."""
    if doc.error is not None or e.format_error:
        return False
    if e.file in (None, doc.file):
        path = tuple(e.path)
        if path[:1] == ("variants",):
            path = path[2:]  # a field that a variant's overlay sets
        if path[:1] and path[0] in _ABOUT_THE_CASE:
            return False
    return True


# Top-level fields about the case itself, not the cluster or scheduler it describes.
_ABOUT_THE_CASE = frozenset(("apiVersion", "kind", "name", "description", "source", "tags", "variants", "expect",
                             "skip", "xfail"))


def error_text(e: CaseError) -> str:
    """An error's field and message, without the file and line before them."""
    where = f"{e.file}:{e.line}: " if e.file and e.line else f"{e.file}: " if e.file else ""
    return str(e).removeprefix(where)


# directories pytest does not recurse into by default (norecursedirs), and virtualenvs
_SKIP_DIRS = ("build", "dist", "node_modules", "venv", "CVS", "_darcs", "{arch}", "__pycache__")
_CASE_SUFFIXES = (".yaml", ".yml", ".json")


def _skipped_dir(d: Path) -> bool:
    name = d.name
    return (name.startswith(".") or name in _SKIP_DIRS or name.endswith(".egg")
            or (d / "pyvenv.cfg").is_file() or (d / "conda-meta").is_dir())


def _walk(root: Path) -> list[Path]:
    """The candidate case files under a directory, as pytest collects them: dot
    directories, virtualenvs, node_modules, build output are not entered."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not _skipped_dir(here / d))
        # regular files only (symlinks followed): a FIFO would block, /dev/zero never end
        out += [here / f for f in sorted(filenames) if f.endswith(_CASE_SUFFIXES) and not f.startswith(".")
                and os.path.isfile(here / f)]
    return out


def not_regular_error(path: str, kind: str) -> CaseError:
    """A special file (a FIFO, a device) named as a case file: reading it would block or
    never end."""
    return CaseError(f"not a regular file ({kind}): kspread reads case files from regular files only", file=path)


def collect(paths: list[str]) -> list[FileResult]:
    """The case files of ``paths``. A file named on the command line is always read (a
    FIFO or a device is refused by name); in a directory, only the regular files that
    mention a case (as the pytest plugin collects them), so other YAML and JSON (Helm
    templates, package.json) is not reported as invalid; and only the files that lie inside
    the trees being tested, symlinks followed: a symlink a pull request adds that points
    out of the tree is neither read nor, with --update, written through."""
    from kspread.format.files import inside_trees, special_kind

    out = []
    roots = tested_trees(paths)
    for p in paths:
        pp = Path(p)
        if not pp.is_dir():
            kind = special_kind(pp)
            out.append(read_file(pp) if kind is None else FileResult(p, [], not_regular_error(p, kind)))
        else:
            for f in _walk(pp):
                if not inside_trees(f, roots):
                    continue
                try:
                    head = sniff_text(read_regular(f))
                except OSError:
                    continue
                if mentions_case(head):
                    out.append(read_file(f))
    for fr in out:
        for d in fr.docs:
            d.roots = roots
    return out
