"""Strict, bounded YAML reading: the one path by which kspread reads YAML it is given
(case files, and the KubeSchedulerConfiguration files that cases and
``--kspread-config`` name).

On top of PyYAML's safe loading (no tags that run code; libyaml's parser):

* a mapping that gives the same key twice is an error naming both lines (YAML
  would keep the last one silently), and so is a key that is not a string;
* alias expansion is bounded: an alias counts as many nodes as it expands to, and
  a document whose aliases expand past a budget (a "billion laughs" bomb) is an
  error, as is an alias inside the collection it names (a cycle). Merge keys
  (``<<``) are expanded once per mapping, duplicates dropped;
* nesting is bounded (``MAX_DEPTH``); libyaml's own composer recurses in C, so a
  text that could nest deeper than the bound is composed by PyYAML's Python
  composer on top of libyaml's parser, which stops at the bound;
* a syntax error names the line where the broken construct opened as well as the
  line where it was detected, and a broken document of a multi-document stream
  fails alone: the documents after it are read again from the next ``---``.

Problems that make a document unusable but leave its data readable (a duplicate
key, an alias bomb) are reported with the document rather than raised, so that a
caller can ignore documents that are not its own (a case file's non-case
documents).

For a large file that yaml-rs refused, ``first_duplicate`` and ``first_syntax_error``
find the error this reader would report by a scan of libyaml's parser events (no node
tree), where the scan cannot disagree with it: over a segment of the text
(``lines.yaml_segments``) when the segments before it parse alone, else over the
whole text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import yaml
from yaml.composer import Composer, ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kspread.errors import CaseError, PathT
from kspread.format.files import read_text
from kspread.format.limits import MAX_INT_DIGITS, huge_int_message
from kspread.format.lines import Segment, column0_root, continues, parses_alone, yaml_line, yaml_segments

try:
    from yaml._yaml import CParser
except ImportError:  # PyYAML without libyaml
    CParser = None  # type: ignore[assignment, misc]

# Deepest nesting of collections (a scalar counts as a level) that kspread reads.
# Kubernetes objects nest about 15 deep.
MAX_DEPTH = 200
# Nodes that alias expansion may add to one document: this many, plus this many per
# character of the text (expansion proportional to the input is no bomb).
ALIAS_BUDGET = 1_000_000
ALIAS_BUDGET_PER_CHAR = 2

_MERGE_TAG = "tag:yaml.org,2002:merge"
_VALUE_TAG = "tag:yaml.org,2002:value"
_STR_TAG = "tag:yaml.org,2002:str"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"

# Lines whose indentation and block indicators could open more nesting levels than
# the C composer can be trusted with.
_DEEP_BLOCK = re.compile(rf"^[ \t?:-]{{{MAX_DEPTH // 4},}}\S", re.MULTILINE)
_DOC_START = re.compile(r"^---(\s|$)")
_DIRECTIVE = re.compile(r"^%")
_CONTENT = re.compile(r"^[^\s#%]")
_DOC_END = re.compile(r"^\.\.\.(\s|$)")
# A line with its break, as YAML breaks lines.
_LINE = re.compile(r"[^\r\n\x85\u2028\u2029]*(?:\r\n|[\r\n\x85\u2028\u2029]|$)")
_NOT_BREAK = re.compile(r"[^\r\n\x85\u2028\u2029]")


class InputError(yaml.MarkedYAMLError):
    """A problem kspread finds in YAML that PyYAML accepts (duplicate keys, alias
    bombs, deep nesting). ``path`` is the field path of the mapping concerned."""

    def __init__(self, problem: str, mark: Any = None, path: tuple = ()) -> None:
        super().__init__(None, None, problem, mark)
        self.path = path


@dataclass
class _Problem:
    line: int
    message: str
    node: Node | None  # the collection concerned, to name its field path
    key: Any = None


class _StrictConstructor(SafeConstructor):
    """SafeConstructor that records duplicate and non-string keys, counts the nodes
    that aliases expand to, and resolves merge keys without multiplying them."""

    budget = ALIAS_BUDGET

    def __init__(self) -> None:
        SafeConstructor.__init__(self)
        self._start_document()

    def _start_document(self) -> None:
        self.problems: list[_Problem] = []
        self._expanded = 0
        self._sizes: dict[Node, int] = {}
        self._merged: dict[Node, int] = {}
        self._stopped = False  # the budget was exceeded or a cycle was found

    def construct_document(self, node: Node) -> Any:
        self._start_document()
        return SafeConstructor.construct_document(self, node)

    def _problem(self, line: int, message: str, node: Node | None, key: Any = None) -> None:
        if len(self.problems) < 100:
            self.problems.append(_Problem(line, message, node, key))

    # ---- aliases ----------------------------------------------------------------------

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        if node in self.constructed_objects:
            # an alias (or a merged value): it stands for a copy of the whole subtree
            if not self._stopped:
                self._charge(self._size(node), node)
            return self.constructed_objects[node]
        return SafeConstructor.construct_object(self, node, deep)

    def _charge(self, n: int, node: Node) -> None:
        self._expanded += n
        if self._expanded > self.budget and not self._stopped:
            self._stopped = True
            self._problem(node.start_mark.line + 1,
                          f"YAML aliases expand this document to more than {self.budget:,} nodes (passed at an "
                          f"alias of the anchor on line {node.start_mark.line + 1}); kspread does not expand "
                          "alias bombs",
                          None)

    def _size(self, root: Node) -> int:
        """How many nodes ``root`` stands for with every alias inside it expanded
        (memoized; iterative). A collection that contains itself is a problem."""
        sizes = self._sizes
        if root in sizes:
            return sizes[root]
        open_: set[Node] = set()
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            n, finished = stack.pop()
            if finished:
                open_.discard(n)
                if isinstance(n, MappingNode):
                    sizes[n] = 1 + sum(sizes[k] + sizes[v] for k, v in n.value)
                else:
                    sizes[n] = 1 + sum(sizes[c] for c in n.value)
                continue
            if n in sizes:
                continue
            if not isinstance(n, (MappingNode, SequenceNode)):
                sizes[n] = 1
                continue
            if n in open_:
                self._stopped = True
                self._problem(n.start_mark.line + 1,
                              f"a YAML alias refers to the collection that contains it (anchor at line "
                              f"{n.start_mark.line + 1}): the data would be infinite", None)
                return 0
            open_.add(n)
            stack.append((n, True))
            children = [c for kv in n.value for c in kv] if isinstance(n, MappingNode) else n.value
            for c in children:
                if c not in sizes:
                    stack.append((c, False))
        return sizes[root]

    # ---- mappings ---------------------------------------------------------------------

    def flatten_mapping(self, node: MappingNode) -> None:  # PyYAML's hook, replaced
        self._flatten(node)

    def _flatten(self, node: MappingNode) -> int:
        """Resolve the merge keys of ``node`` in place: the merged pairs first (an
        earlier source wins over a later one), then the node's own pairs (which win
        over merged ones). Returns how many leading pairs came from merges."""
        done = self._merged.get(node)
        if done is not None:
            return done
        own = []
        sources: list[MappingNode] = []
        merge_lines: list[int] = []
        for k, v in node.value:
            if k.tag != _MERGE_TAG:
                if k.tag == _VALUE_TAG:
                    k.tag = _STR_TAG
                own.append((k, v))
                continue
            merge_lines.append(k.start_mark.line + 1)
            subs = v.value if isinstance(v, SequenceNode) else [v]
            for sub in subs:
                if not isinstance(sub, MappingNode):
                    raise ConstructorError("while constructing a mapping", node.start_mark,
                                           f"expected a mapping or list of mappings for merging, but found {sub.id}",
                                           sub.start_mark)
                sources.append(sub)
        if len(merge_lines) > 1:
            self._problem(merge_lines[1], f"duplicate key '<<' (lines {merge_lines[0]} and {merge_lines[1]})",
                          node, "<<")
        if not sources:
            self._merged[node] = 0
            return 0
        self._merged[node] = 0  # a merge cycle ends here
        seen: set = set()
        merged = []
        for src in sources:
            self._flatten(src)
            if not self._stopped:
                self._charge(len(src.value), src)
            for k, v in src.value:
                ident = (k.tag, k.value) if isinstance(k, ScalarNode) else k
                if ident not in seen:
                    seen.add(ident)
                    merged.append((k, v))
        node.value = merged + own
        self._merged[node] = len(merged)
        return len(merged)

    def construct_yaml_int(self, node: ScalarNode) -> int:
        """An integer, unless it has more than MAX_INT_DIGITS digits (Python converts
        no more than 4,300 from text): then a problem at its line, and 0 in its place."""
        if len(node.value) > MAX_INT_DIGITS:
            digits = len(node.value.lstrip("+-").removeprefix("0x").removeprefix("0b").replace("_", ""))
            if digits > MAX_INT_DIGITS:
                self._problem(node.start_mark.line + 1, huge_int_message(digits), node)
                return 0
        return super().construct_yaml_int(node)

    def construct_mapping(self, node: Node, deep: bool = False) -> dict:
        if not isinstance(node, MappingNode):
            # every concrete node class has its id ('scalar', 'sequence'); yaml.nodes.Node does not
            found = getattr(node, "id", None)
            raise ConstructorError(None, None, f"expected a mapping node, but found {found}", node.start_mark)
        n_merged = self._flatten(node)
        mapping: dict = {}
        lines: dict = {}
        for i, (key_node, value_node) in enumerate(node.value):
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                raise ConstructorError("while constructing a mapping", node.start_mark,
                                       "found unhashable key", key_node.start_mark)
            if i >= n_merged:
                line = key_node.start_mark.line + 1
                if not isinstance(key, str):
                    shown = key_node.value if isinstance(key_node, ScalarNode) else key_node.id
                    self._problem(line, f"mapping key {shown or 'null'!r} is not a string: quote it", node, key)
                elif key in lines:
                    self._problem(line, duplicate_message(key, lines[key], line), node, key)
                else:
                    lines[key] = line
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


# (add_constructor's stubs take loader classes only; the same, by hand: a copy of the table)
_StrictConstructor.yaml_constructors = {**SafeConstructor.yaml_constructors,
                                        "tag:yaml.org,2002:int": _StrictConstructor.construct_yaml_int}


def duplicate_message(key: str, first: int, line: int) -> str:
    where = f"lines {first} and {line}" if first != line else f"twice on line {line}"
    return f"duplicate key {key!r} ({where})"


_Resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != _TIMESTAMP_TAG]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


_N = TypeVar("_N", bound=Node)


class _GuardedComposer(Composer):
    """PyYAML's Python composer with a bound on the nesting of collections."""

    _depth = 0
    # from the parser the loader class mixes in
    peek_event: Callable[[], Any]

    def compose_sequence_node(self, anchor: Any) -> SequenceNode:
        return self._collection(Composer.compose_sequence_node, anchor, "flow sequence")

    def compose_mapping_node(self, anchor: Any) -> MappingNode:
        return self._collection(Composer.compose_mapping_node, anchor, "flow mapping")

    def _collection(self, compose: Callable[[Composer, Any], _N], anchor: Any, what: str) -> _N:
        start = self.peek_event()
        if self._depth >= MAX_DEPTH:
            raise ComposerError(None, None, f"the data nests more than {MAX_DEPTH} levels deep", start.start_mark)
        self._depth += 1
        try:
            return compose(self, anchor)
        except yaml.MarkedYAMLError as e:
            _opened_in(e, start, what)
            raise
        finally:
            self._depth -= 1


def _opened_in(e: yaml.MarkedYAMLError, start: Any, what: str) -> None:
    """Note on a parse error the innermost flow collection it broke (libyaml's own
    context often points at the place of the error only)."""
    if getattr(e, "opened", None) is None and getattr(start, "flow_style", False):
        e.opened = (what, start.start_mark)  # type: ignore[attr-defined]


if CParser is not None:

    class FastLoader(CParser, _StrictConstructor, yaml.resolver.Resolver):
        """libyaml's parser and composer: for texts that cannot nest deeply."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _StrictConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

    class Loader(_GuardedComposer, CParser, _StrictConstructor, yaml.resolver.Resolver):
        """libyaml's parser, PyYAML's composer (bounded depth)."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _GuardedComposer.__init__(self)
            _StrictConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

else:  # pragma: no cover - PyYAML without libyaml

    class Loader(  # type: ignore[no-redef]
        yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, _GuardedComposer, _StrictConstructor,
        yaml.resolver.Resolver,
    ):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            _GuardedComposer.__init__(self)
            _StrictConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

    FastLoader = Loader  # type: ignore[assignment, misc]  # one class or the other, by the branch

Loader.yaml_implicit_resolvers = _Resolvers
FastLoader.yaml_implicit_resolvers = _Resolvers


def shallow(text: str) -> bool:
    """True when ``text`` cannot nest deeper than ``MAX_DEPTH``, by a cheap upper bound:
    no line indented (or block-indicated) deeply, and few flow collections open at once
    (``_flow_reaches``)."""
    if _DEEP_BLOCK.search(text) is not None:
        return False
    half = MAX_DEPTH // 2
    return text.count("[") + text.count("{") < half or not _flow_reaches(text, half)


_FLOW_CHARS = re.compile(r"[\[\]{}\"'#!]")


def _flow_reaches(text: str, limit: int) -> bool:
    """Whether flow collections might nest ``limit`` deep: an upper bound on the open
    brackets. Every opener counts; a closer counts off one only while no quote,
    comment or tag has been seen inside a (possible) flow collection, since such a
    closer might be text. Outside flow collections a closer in text (a plain block
    scalar) only meets the floor of 0."""
    depth = 0
    opaque = False
    for m in _FLOW_CHARS.finditer(text):
        c = m.group()
        if c == "[" or c == "{":
            depth += 1
            if depth >= limit:
                return True
        elif c == "]" or c == "}":
            if depth and not opaque:
                depth -= 1
        elif depth:
            opaque = True
    return False


def loader_for(text: str) -> type:
    return FastLoader if shallow(text) else Loader


# ---- documents ------------------------------------------------------------------------------


@dataclass
class Chunk:
    start: int  # character offset in the text
    line: int  # 1-based first content line (or the ``---`` line of an empty document)


def split_documents(text: str) -> list[Chunk]:
    """Where each YAML document of ``text`` starts, found by scanning for ``---`` and
    directive lines: one chunk per document the parser would see."""
    out: list[Chunk] = []
    start = 0  # offset of the current chunk
    marker: int | None = None  # line of the ``---`` that opened it
    content: int | None = None  # its first content line
    directives = False  # it holds directives and nothing else yet
    offset = 0
    for i, m in enumerate(_LINE.finditer(text), 1):
        line = m.group()
        if not line:
            break
        if _DOC_START.match(line):
            if not directives and (marker is not None or content is not None):
                out.append(Chunk(start, content or marker or i))
                start, content = offset, None
            directives = False
            marker = i
            rest = line[3:].strip()
            if rest and not rest.startswith("#"):
                content = i
        elif _DIRECTIVE.match(line):
            if marker is not None or content is not None:
                out.append(Chunk(start, content or marker or i))
                start, marker, content = offset, None, None
            directives = True
        elif content is None and _CONTENT.match(line) and not _DOC_END.match(line):
            content = i
        offset += len(line)
    if marker is not None or content is not None:
        out.append(Chunk(start, content or marker or 1))
    return out


def _blank(prefix: str) -> str:
    """``prefix`` with every character but line breaks made a space: text placed after
    it keeps its lines, columns and offsets."""
    return _NOT_BREAK.sub(" ", prefix)


def _documents(text: str, budget: int, cls: type | None = None) -> Iterator[tuple[Node, Any, list[_Problem]]]:
    loader = (cls or loader_for(text))(text)
    loader.budget = budget
    try:
        while loader.check_node():
            root = loader.get_node()
            data = loader.construct_document(root)
            yield root, data, loader.problems
    finally:
        loader.dispose()


def _mark_line(mark: Any) -> int | None:
    return mark.line + 1 if mark is not None else None


def yaml_error(e: BaseException, file: str | None, text: str | None = None) -> CaseError:
    """A CaseError for an exception raised while reading YAML: the line where it was
    detected, and the line where the construct it broke opened."""
    if isinstance(e, InputError):
        return CaseError(str(e.problem), e.path, file=file, line=_mark_line(e.problem_mark))
    if isinstance(e, RecursionError):
        return CaseError(f"invalid YAML: the data nests too deeply (more than {MAX_DEPTH} levels, or a chain "
                         "of merge keys)", file=file)
    if not isinstance(e, yaml.YAMLError):
        return CaseError(f"invalid YAML: {type(e).__name__}: {e}", file=file)
    problem = getattr(e, "problem", None)
    context = getattr(e, "context", None)
    pline = _mark_line(getattr(e, "problem_mark", None))
    cline = _mark_line(getattr(e, "context_mark", None))
    if problem is not None and "exceeded maximum nesting depth" in str(problem):
        # libyaml's own depth limit (0.2.5+), met before kspread's composer counts
        return CaseError(f"invalid YAML: the data nests more than {MAX_DEPTH} levels deep", file=file,
                         line=pline or cline)
    if problem is None:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        pos = getattr(e, "position", None)
        if pline is None and text is not None and isinstance(pos, int):
            pline = text.count("\n", 0, pos) + 1
        return CaseError(f"invalid YAML: {msg}", file=file, line=pline or cline)
    opened = getattr(e, "opened", None)
    if context and cline is not None and pline is not None and cline != pline:
        msg = f"{context} that opened at line {cline}: {problem} at line {pline}"
    elif opened is not None and pline is not None and opened[1].line + 1 != pline:
        msg = f"{problem} at line {pline}, in the {opened[0]} that opened at line {opened[1].line + 1}"
    elif context:
        msg = f"{context}: {problem}"
    else:
        msg = str(problem)
    if _tab_at(text, getattr(e, "problem_mark", None)):
        # libyaml's message does not name the character, and a tab is invisible in an editor
        msg += " (a tab: YAML indents with spaces, never tabs)"
    return CaseError(f"invalid YAML: {msg}", file=file, line=pline or cline)


def _tab_at(text: str | None, mark: Any) -> bool:
    """Whether the character a YAML error's mark points at (its line and column) is a tab."""
    if text is None or mark is None or not isinstance(getattr(mark, "line", None), int):
        return False
    lines = text.split("\n", mark.line + 1)
    if mark.line >= len(lines):
        return False
    line, col = lines[mark.line], getattr(mark, "column", None)
    return isinstance(col, int) and 0 <= col < len(line) and line[col] == "\t"


def _path_to(root: Node, target: Node) -> tuple:
    """The field path from ``root`` to ``target`` in a composed document."""
    seen: set[int] = set()
    stack: list[tuple[Node, tuple]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for k, v in reversed(node.value):
                stack.append((v, (*path, k.value if isinstance(k, ScalarNode) else "?")))
        elif isinstance(node, SequenceNode):
            for i in range(len(node.value) - 1, -1, -1):
                stack.append((node.value[i], (*path, i)))
    return ()


def _problem_error(root: Node, problems: list[_Problem], file: str | None) -> CaseError:
    p = min(problems, key=lambda p: p.line)
    path = _path_to(root, p.node) if p.node is not None else ()
    return CaseError(p.message, path, file=file, line=p.line)


@dataclass
class Document:
    """One YAML document of a stream."""

    index: int  # position in the stream
    line: int  # 1-based line where its content starts
    data: Any = None
    parsed: bool = True  # False: it could not be read at all (``data`` is None)
    error: CaseError | None = None  # the first problem found in it
    source: str = field(default="", repr=False)  # its text, when it could not be read


def read_documents(text: str, file: str | None = None) -> list[Document]:
    """Every document of a YAML stream, each with its first problem, if any. A
    document that cannot be parsed does not stop the ones after it."""
    budget = ALIAS_BUDGET + ALIAS_BUDGET_PER_CHAR * len(text)
    docs: list[Document] = []
    chunks: list[Chunk] | None = None
    begin = 0  # where the stream being read starts
    while True:
        stream = text if begin == 0 else _blank(text[:begin]) + text[begin:]
        try:
            for root, data, problems in _documents(stream, budget):
                err = _problem_error(root, problems, file) if problems else None
                docs.append(Document(len(docs), root.start_mark.line + 1, data, True, err))
            return docs
        except Exception as e:  # whatever the input, a located error
            if chunks is None:
                chunks = split_documents(text)
            k = len(docs)
            if k >= len(chunks):
                err = yaml_error(e, file, text)
                docs.append(Document(k, err.line or 1, None, False, err, text[begin:]))
                return docs
            end = chunks[k + 1].start if k + 1 < len(chunks) else len(text)
            err = _chunk_error(text, chunks[k].start, end, budget, file) or yaml_error(e, file, text)
            docs.append(Document(k, chunks[k].line, None, False, err, text[chunks[k].start:end]))
            if k + 1 >= len(chunks):
                return docs
            begin = chunks[k + 1].start


def _chunk_error(text: str, start: int, end: int, budget: int, file: str | None) -> CaseError | None:
    """The error of the document between ``start`` and ``end`` read on its own."""
    try:
        for _ in _documents(_blank(text[:start]) + text[start:end], budget, Loader):
            pass
    except Exception as e:
        return yaml_error(e, file, text)
    return None


def first_duplicate(text: str, file: str | None = None, base: int = 0, first_index: int = 0) -> CaseError | None:
    """The strict reader's error for a one-document text that gives a string key twice in
    a mapping, found by one scan of libyaml's parser events (no node tree: bounded memory),
    for a text that yaml-rs refused for a duplicate key. None when there is none, or when
    the text holds what the strict reader might report first or otherwise (anywhere: an
    anchor or alias, a tag, a merge key, a complex key, a syntax error, deep nesting, a
    second document; before the duplicate: a key that is not a string): the strict reader then
    reads it. The scan reads the whole text: an error the strict reader raises wins over
    a duplicate key, wherever it is.

    ``text`` may be a segment of a larger text (``lines.yaml_segments``): its line n is
    the larger text's line ``base + n``, and the items of the list under its (one) key
    are that list's items from ``first_index`` on."""
    if CParser is None or not shallow(text):
        return None
    p = CParser(text)
    path: list = []
    frames: list[list] = []  # per open collection: [keys and their lines (None: a list), index or key, key next]
    plain_str: dict[str, bool] = {}  # plain keys seen, and whether they read as strings
    documents = 0
    found: CaseError | None = None
    scalar, alias = yaml.ScalarEvent, yaml.AliasEvent
    mapping_start, sequence_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
    mapping_end, sequence_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
    try:
        get = p.get_event
        while True:
            ev: Any = get()
            t = type(ev)
            if t is scalar:
                if ev.tag is not None or ev.anchor is not None:
                    return None
                if not frames:
                    continue  # a scalar document
                top = frames[-1]
                if not top[2]:  # a value: the collection holding it moves on
                    if top[0] is None:
                        top[1] += 1
                    else:
                        top[2] = True
                    continue
                key = ev.value  # a mapping's key
                if not ev.style:
                    is_str = plain_str.get(key)
                    if is_str is None:
                        is_str = plain_str[key] = key != "<<" and _plain_str_key(key)
                    if not is_str and (found is None or key == "<<"):
                        return None
                keys = top[0]
                if key in keys:
                    if found is None:
                        line = base + ev.start_mark.line + 1
                        at = tuple(path)
                        if first_index and len(at) >= 2:
                            at = (at[0], at[1] + first_index, *at[2:])
                        found = CaseError(duplicate_message(key, keys[key], line), at, file=file, line=line)
                else:
                    keys[key] = base + ev.start_mark.line + 1
                top[1], top[2] = key, False
            elif t is mapping_start or t is sequence_start:
                if ev.tag is not None or ev.anchor is not None:
                    return None
                if frames:
                    top = frames[-1]
                    if top[2]:
                        return None  # a complex key
                    path.append(top[1])
                frames.append([{} if t is mapping_start else None, 0, t is mapping_start])
            elif t is mapping_end or t is sequence_end:
                frames.pop()
                if frames:
                    path.pop()
                    top = frames[-1]  # the collection holding it moves on
                    if top[0] is None:
                        top[1] += 1
                    else:
                        top[2] = True
            elif t is alias:
                return None
            elif t is yaml.StreamEndEvent:
                return found
            elif t is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    return None
    except yaml.YAMLError:
        return None
    finally:
        p.dispose()


def first_syntax_error(text: str, file: str | None = None) -> CaseError | None:
    """The strict reader's error for a one-document text that libyaml cannot parse, found
    without a node tree (bounded memory), with the innermost flow collection open at the
    error, as the strict reader's composer notes it. None when the text parses, or holds
    an anchor or alias before the error (the composer might stop there first), or might
    nest deeper than the strict reader reads.

    libyaml's ``raw_parse`` (in C, no event object) finds the error in the whole text;
    the segments of the text (``lines.yaml_segments``) that parse alone before it give
    a place before the error where no flow collection is open, and one scan of the
    parser's events from there finds the flow collections open at the error. Any
    other text is scanned whole."""
    if CParser is None or not shallow(text):
        return None
    segments = yaml_segments(text)
    if segments is not None:
        found = _syntax_error_by_segments(text, segments, file)
        if found is not _UNSETTLED:
            return found
    scanned = _syntax_scan(text)
    if scanned is None:
        return None
    e, start = scanned
    if start is not None:
        e.opened = (_flow_what(start), start.start_mark)  # type: ignore[attr-defined]
    return yaml_error(e, file, text)


_UNSETTLED: Any = object()
# where a tag (!), an anchor (&), an alias (*) or a complex key (?) may start: the
# character before is a space, a line break, a flow indicator or ':' (a value in a flow
# collection); a complex key may also be a flow collection before ':'
_NODE_PROPERTY = re.compile(r"[&*!?](?<=[\s\[{,:\ufeff].)")
_ANCHOR_OR_ALIAS = re.compile(r"[&*](?<=[\s\[{,:\ufeff].)")
_FLOW_KEY = re.compile(r"[\]}][ \t]*:")


def may_hold_properties(text: str) -> bool:
    """Whether ``text`` may hold a tag, an anchor, an alias or a complex key (a cheap
    upper bound: one may be inside a quoted scalar)."""
    return text[:1] in ("&", "*", "!", "?") or _NODE_PROPERTY.search(text) is not None or \
        _FLOW_KEY.search(text) is not None


def _syntax_error_by_segments(text: str, segments: list[Segment], file: str | None) -> Any:
    """``first_syntax_error`` by the segments: ``_UNSETTLED`` when they cannot tell.

    The segments that parse alone (libyaml's ``raw_parse``, in C) start where they do
    in the text; the first that does not is where the scan of the events starts, on the
    text from there: the whole text's error is at it or after it, and the events from
    there are the whole text's but for the collections open across its start (the root
    mapping, and the list of a run of items), which a context mark may name."""
    k = next((i for i, s in enumerate(segments) if not (continues(text, s) and parses_alone(s.text(text)))), None)
    if k is None:
        return None  # every segment parses alone: so does the text
    for at in segments[k:k + 1] + segments[k - 1:k] if k else segments[:1]:  # from it, or else the one before
        if text[:1] in ("&", "*") or _ANCHOR_OR_ALIAS.search(text, 0, at.start) is not None:
            return _UNSETTLED
        firsts: list = []
        scanned = _syntax_scan(at.head + text[at.start:], firsts)
        # the segment must open as it continues the text: with a key of the root mapping
        # (and the first item of the run's list)
        dash = len(text[at.start:at.start + 200]) - len(text[at.start:at.start + 200].lstrip(" "))
        want = [(yaml.MappingStartEvent, 0, 0)] + ([(yaml.SequenceStartEvent, 1, dash)] if at.head else [])
        opened = [(type(ev), ev.start_mark.line, ev.start_mark.column) for ev in firsts[:len(want)]]
        if scanned is not None and (at.start == 0 or (opened == want and not firsts[0].flow_style)):
            break  # (the first segment: the text itself)
    else:
        return _UNSETTLED
    err, start = scanned
    pm, cm = getattr(err, "problem_mark", None), getattr(err, "context_mark", None)
    if pm is None:
        return _UNSETTLED
    err.problem_mark = _moved(pm, at.base)  # type: ignore[attr-defined]
    if cm is not None:
        if (cm.line, cm.column) == (0, 0) and getattr(err, "context", None) == "while parsing a block mapping":
            root = column0_root(text)  # the root mapping, open across the segment's start
            if root is None:
                return _UNSETTLED
            err.context_mark = _moved(root, 0)  # type: ignore[attr-defined]
        elif at.head and (cm.line, cm.column) == (1, dash):
            # the list of the run (its first item here), open across its start
            list_start = _list_start(text, segments, at)
            if list_start is None or getattr(err, "context", None) != "while parsing a block collection":
                return _UNSETTLED
            err.context_mark = list_start  # type: ignore[attr-defined]
        else:
            err.context_mark = _moved(cm, at.base)  # type: ignore[attr-defined]
    if start is not None:
        err.opened = (_flow_what(start), _moved(start.start_mark, at.base))  # type: ignore[attr-defined]
    return yaml_error(err, file, text)


def _list_start(text: str, segments: list[Segment], run: Segment) -> Any:
    """The start mark, in the text, of the list whose items ``run`` holds: the first
    list in the segment of its key."""
    key = next(s for s in reversed(segments[:segments.index(run)]) if not s.head)
    p = CParser(key.text(text))
    try:
        while True:
            ev = p.get_event()
            if type(ev) is yaml.SequenceStartEvent:
                return _moved(ev.start_mark, key.base)
            if type(ev) is yaml.StreamEndEvent:
                return None
    except yaml.YAMLError:
        return None
    finally:
        p.dispose()


def _moved(mark: Any, lines: int) -> yaml.Mark:
    """``mark`` ``lines`` lines further down."""
    return yaml.Mark(mark.name, mark.index, mark.line + lines, mark.column, None, None)  # type: ignore[arg-type]


def _flow_what(start: Any) -> str:
    return "flow sequence" if type(start) is yaml.SequenceStartEvent else "flow mapping"


def _syntax_scan(text: str, firsts: list | None = None) -> tuple[yaml.YAMLError, Any] | None:
    """The error of one scan of libyaml's events over ``text`` and the start event of the
    innermost flow collection open at it (None: none is), when the error is met before
    any anchor or alias and inside the first document's root node; None otherwise.
    ``firsts`` receives the start events of the first two collections."""
    if firsts is None:
        firsts = []
    p = CParser(text)
    open_: list = []  # the start events of the collections not yet ended
    done = False  # the root node has ended: an error now is in a next document
    try:
        get = p.get_event
        while True:
            ev: Any = get()
            t = type(ev)
            if t is yaml.StreamEndEvent or t is yaml.AliasEvent or getattr(ev, "anchor", None) is not None or \
                    (t is yaml.DocumentStartEvent and done):
                return None
            if t is yaml.MappingStartEvent or t is yaml.SequenceStartEvent:
                open_.append(ev)
                if len(firsts) < 2:
                    firsts.append(ev)
            elif t is yaml.MappingEndEvent or t is yaml.SequenceEndEvent:
                open_.pop()
                done = not open_
            elif t is yaml.ScalarEvent:
                done = done or not open_
    except yaml.YAMLError as e:
        if done:
            return None
        if isinstance(e, yaml.MarkedYAMLError):
            for start in reversed(open_):
                if start.flow_style:
                    return e, start
        return e, None
    finally:
        p.dispose()


def _plain_str_key(value: str) -> bool:
    """Whether a plain scalar key reads as a string (not null, a bool, a number, ``<<``)."""
    resolvers = _Resolvers.get(value[:1] if value else "", []) + _Resolvers.get(None, [])
    return not any(rx.match(value) for _tag, rx in resolvers)


def load_strict(text: str, file: str | None = None) -> list[Any]:
    """The data of every document, or a CaseError for the first problem of any."""
    docs = read_documents(text, file)
    for d in docs:
        if d.error is not None:
            raise d.error
    return [d.data for d in docs]


def node_line(node: Any, path: PathT) -> int:
    """The line (1-based) of ``path`` below a composed YAML node, as deep as the path
    can be followed."""
    line = node.start_mark.line + 1
    for part in path:
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == str(part):
                    nxt = v
                    line = k.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            nxt = node.value[part]
            line = nxt.start_mark.line + 1
        if nxt is None:
            break
        node = nxt
    return line


def file_line(file: str, path: PathT, index: int = 0) -> int | None:
    """The line of ``path`` in document ``index`` of the YAML file ``file``, as deep as
    the path can be followed (one scan that stops there: ``kspread.format.lines``); None
    when the file cannot be read or parsed that far."""
    try:
        text = read_text(file)
    except CaseError:  # a line is a courtesy; the error itself stands
        return None
    return yaml_line(text, index, path)
