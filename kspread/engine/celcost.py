"""The API server's limits on a DRA CEL selector, checked before kspread runs it.

``pkg/apis/resource/validation`` refuses a selector longer than
CELSelectorExpressionMaxLength (10 KiB) and one whose worst-case cost, as cel-go's
estimator computes it for the DRA environment, passes CELSelectorExpressionMaxCost
(1,000,000); the scheduler's evaluation stops at that cost too. kspread runs selectors
on another CEL library, which has no cost limit: a selector of nested comprehensions
over literal lists (``[0, ..., 999].all(a, [0, ..., 999].all(b, ...))``) ran for hours,
and one of thousands of nested or chained operators overflowed its stack and killed
the process. So a selector is parsed here (CEL's grammar) and refused when:

* it is longer than 10 KiB (UTF-8 bytes), as the API server refuses it;
* its brackets (``(``, ``[``, ``{``) nest deeper than 250: cel-go's parser refuses
  such a selector ("expression recursion limit exceeded: 250");
* its cost, counted as below, passes 1,000,000.

The cost counted is a part of cel-go's estimate (``checker.Cost`` with the DRA size
estimator), never more than it, so what is refused here upstream refuses too: a
comprehension (``all``, ``exists``, ``exists_one``, ``map``, ``filter``) costs its range's
largest size times (its loop's cost per item, at most cel-go's: 3, 4, 2, 3, 3) plus its
body's cost; ``in`` on a list costs the list's size, ``includes`` 48
(ResourceSliceMaxAttributeValuesPerDevice), ``matches`` cel-go's product of the string's
and the pattern's sizes (ceil((size + 1) * 0.1) * ceil(pattern size * 0.25)); everything
else costs nothing here (cel-go adds its own for each operation). Sizes are cel-go's
estimates: a literal list or map has its items, a list from ``map`` / ``filter`` its
range's, ``+`` of lists the sum, ``device.attributes`` / ``device.capacity`` and each
domain's map 32 entries (ResourceSliceMaxAttributesAndCapacitiesPerDevice), a list
attribute 64 items (with DRAListTypeAttributes; cel-go's bound of an attribute), a
string of a device 63 (driver) or 64 (attribute) characters. Each item of a
comprehension costs at least 1 here, so a selector kspread accepts loops at most a
million times.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

MAX_EXPRESSION_BYTES = 10 * 1024  # resourceapi.CELSelectorExpressionMaxLength
MAX_COST = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost
MAX_NESTING = 250  # cel-go's parser: maxRecursionDepth
_MAX_ENTRIES = 32  # resourceapi.ResourceSliceMaxAttributesAndCapacitiesPerDevice
_MAX_VALUES = 48  # resourceapi.ResourceSliceMaxAttributeValuesPerDevice
_ATTRIBUTE_SIZE = 64  # DeviceAttributeMaxValueLength: cel-go's size of an attribute
_DRIVER_SIZE = 63  # a driver's name (a DNS subdomain of at most 63 characters)

# cel-go's cost of a loop's step and condition per item, by macro (with a body costing nothing)
_PER_ITEM = {"all": 3, "exists": 4, "exists_one": 2, "map": 3, "filter": 3}

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\n\r\f]+|//[^\n]*)
  | (?P<str>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"|'''|"|'))
  | (?P<num>0[xX][0-9a-fA-F]+[uU]?|\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?|\d+[uU]?)
  | (?P<id>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[<>+\-*/%!?:.,\[\](){}])
""", re.VERBOSE)
_RESERVED = {"true", "false", "null", "in"}


class SelectorLimit(Exception):
    """A selector the API server refuses (its text is the reason)."""


class _Unparsed(Exception):
    pass


def _tokens(text: str, positions: bool = False) -> list[Any]:
    """(kind, text) of each token; a string token's text is its value's length bound; with
    ``positions``, (kind, text, where it starts)."""
    out: list[Any] = []
    i, n = 0, len(text)
    while i < n:
        m = _TOKEN.match(text, i)
        if m is None:
            raise _Unparsed(f"unexpected character {text[i]!r} at {i}")
        kind = m.lastgroup or ""
        if kind == "str":
            quote = m.group().lstrip("rRbB")
            raw = "r" in m.group().lower().rstrip("\"'")
            j = m.end()
            length = 0
            while True:
                if j >= n:
                    raise _Unparsed("unterminated string")
                if text.startswith(quote, j):
                    j += len(quote)
                    break
                if text[j] == "\n" and len(quote) == 1:
                    raise _Unparsed("newline in a string")
                if text[j] == "\\" and not raw and j + 1 < n:
                    # one character: \uXXXX, \UXXXXXXXX, \xXX, an octal \000 or a letter
                    j += 2 + {"u": 4, "U": 8, "x": 2, "X": 2}.get(text[j + 1], 2 if text[j + 1].isdigit() else 0)
                else:
                    j += 1
                length += 1
            out.append(("str", str(length), i) if positions else ("str", str(length)))
            i = j
            continue
        if kind != "ws":
            tok = m.group()
            kind = "op" if kind == "op" or tok == "in" else "lit" if tok in _RESERVED else kind
            out.append((kind, tok, i) if positions else (kind, tok))
        i = m.end()
    out.append(("end", "", i) if positions else ("end", ""))
    return out


def matches_calls(expression: str) -> list[int]:
    """Where each call of ``matches`` starts in ``expression`` (its name, a method or a
    function, never inside a string); empty when the text is not CEL this tokenizer reads."""
    out = []
    try:
        tokens = _tokens(expression, positions=True)
    except _Unparsed:
        return []
    for i, (kind, text, at) in enumerate(tokens):
        if kind == "id" and text == "matches" and tokens[i + 1][:2] == ("op", "("):
            out.append(at)
    return out


# ---- the AST: tuples, flat where CEL chains (binary operators, member access) --------------------
# ("lit", strlen) | ("id", name) | ("list", [e]) | ("map", [(k, v)]) | ("un", how many, e)
# ("chain", e0, [(op, e1), ...]) | ("cond", [(condition, then), ...], last else)
# ("post", primary, [("sel", name) | ("call", name, [args]) | ("idx", e)])
# ("call", name, [args])  (a global call)

_LEVELS = (("||",), ("&&",), ("<", "<=", ">=", ">", "==", "!=", "in"), ("+", "-"), ("*", "/", "%"))


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.t = tokens
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, str]:
        return self.t[self.i]

    def take(self, text: str | None = None) -> tuple[str, str]:
        tok = self.t[self.i]
        if text is not None and tok != ("op", text):
            raise _Unparsed(f"expected {text!r}, found {tok[1]!r}")
        self.i += 1
        return tok

    def at(self, text: str) -> bool:
        return self.t[self.i] == ("op", text)

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise SelectorLimit(f"CEL compile error: expression recursion limit exceeded: {MAX_NESTING}")

    def expr(self) -> tuple:
        conds: list[tuple] = []
        while True:
            c = self.binary(0)
            if not self.at("?"):
                break
            self.take("?")
            a = self.binary(0)
            self.take(":")
            conds.append((c, a))
        return ("cond", conds, c) if conds else c

    def binary(self, level: int) -> tuple:
        if level == len(_LEVELS):
            return self.unary()
        first = self.binary(level + 1)
        rest = []
        while self.peek()[0] == "op" and self.peek()[1] in _LEVELS[level]:
            op = self.take()[1]
            rest.append((op, self.binary(level + 1)))
        return ("chain", first, rest) if rest else first

    def unary(self) -> tuple:
        ops = []
        while self.at("!") or self.at("-"):
            ops.append(self.take()[1])
        e = self.member()
        return ("un", len(ops), e) if ops else e

    def args(self, close: str) -> list[tuple]:
        self.nest()
        out = []
        while not self.at(close):
            out.append(self.expr())
            if not self.at(close):
                self.take(",")
        self.take(close)
        self.depth -= 1
        return out

    def member(self) -> tuple:
        prim = self.primary()
        ops: list[tuple] = []
        while True:
            if self.at("."):
                self.take(".")
                if self.at("?"):
                    self.take("?")  # optional field selection (.?name)
                kind, name = self.take()
                if kind not in ("id", "lit"):
                    raise _Unparsed(f"expected a field name, found {name!r}")
                if self.at("("):
                    self.take("(")
                    ops.append(("call", name, self.args(")")))
                else:
                    ops.append(("sel", name))
            elif self.at("["):
                self.take("[")
                if self.at("?"):
                    self.take("?")  # optional index ([?key])
                ops.append(("idx", self.args("]")))
            elif self.at("{") and prim[0] == "id" and not ops:
                # a message literal (Name{field: value})
                self.take("{")
                prim = ("map", self.entries())
            else:
                return ("post", prim, ops) if ops else prim

    def entries(self) -> list[tuple]:
        self.nest()
        out = []
        while not self.at("}"):
            if self.at("?"):
                self.take("?")
            k = self.expr()
            self.take(":")
            out.append((k, self.expr()))
            if not self.at("}"):
                self.take(",")
        self.take("}")
        self.depth -= 1
        return out

    def primary(self) -> tuple:
        kind, text = self.take()
        if kind in ("str",):
            return ("lit", int(text))
        if kind in ("num", "lit"):
            return ("lit", 0)
        if kind == "op" and text == ".":  # a leading dot: a name from the root scope
            kind, text = self.take()
        if kind == "id":
            if self.at("("):
                self.take("(")
                return ("call", text, self.args(")"))
            return ("id", text)
        if (kind, text) == ("op", "("):
            self.nest()
            e = self.expr()
            self.take(")")
            self.depth -= 1
            return e
        if (kind, text) == ("op", "["):
            return ("list", self.args("]"))
        if (kind, text) == ("op", "{"):
            return ("map", self.entries())
        raise _Unparsed(f"unexpected {text!r}")


# ---- sizes and cost ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Size:
    """The largest size of a value: ``n`` items (a list, or a map: ``n`` entries whose
    keys are strings), ``item`` the size of each item (a map's values), ``strlen`` a
    string's length; ``device`` for the variable itself."""

    n: int = 0
    item: _Size | None = None
    is_map: bool = False
    strlen: int = 0
    device: bool = False


_SCALAR = _Size()


def _join(a: _Size, b: _Size) -> _Size:
    if a.device or b.device:
        return a if a.device else b
    item = _join(a.item, b.item) if a.item and b.item else a.item or b.item
    return _Size(max(a.n, b.n), item, a.is_map or b.is_map, max(a.strlen, b.strlen))


def _device_fields(list_attributes: bool) -> dict[str, _Size]:
    attribute = _Size(_ATTRIBUTE_SIZE if list_attributes else 0, _Size(strlen=_ATTRIBUTE_SIZE),
                      strlen=_ATTRIBUTE_SIZE)
    return {
        "driver": _Size(strlen=_DRIVER_SIZE),
        "attributes": _Size(_MAX_ENTRIES, _Size(_MAX_ENTRIES, attribute, True), True),
        "capacity": _Size(_MAX_ENTRIES, _Size(_MAX_ENTRIES, _SCALAR, True), True),
        "allowMultipleAllocations": _SCALAR,
    }


def _ceil_times(x: int, num: int, den: int) -> int:
    """ceil(x * num / den): cel-go's MultiplyByCostFactor."""
    return -(-x * num // den)


class _Estimator:
    def __init__(self, list_attributes: bool) -> None:
        self.fields = _device_fields(list_attributes)

    def run(self, e: tuple, scope: dict[str, _Size]) -> tuple[int, _Size]:
        """(cost, size) of ``e``."""
        kind = e[0]
        if kind == "lit":
            return 0, _Size(strlen=e[1])
        if kind == "id":
            if e[1] in scope:
                return 0, scope[e[1]]
            return 0, _Size(device=True) if e[1] == "device" else _SCALAR
        if kind == "list":
            cost, size = 0, None
            for x in e[1]:
                c, s = self.run(x, scope)
                cost += c
                size = s if size is None else _join(size, s)
            return cost, _Size(len(e[1]), size)
        if kind == "map":
            cost, size = 0, None
            for k, v in e[1]:
                ck, _ = self.run(k, scope)
                cv, s = self.run(v, scope)
                cost += ck + cv
                size = s if size is None else _join(size, s)
            return cost, _Size(len(e[1]), size, True)
        if kind == "un":
            return self.run(e[2], scope)
        if kind == "cond":
            # a ? b : c ? d : e: the conditions on the way to each branch, and the branch
            cost, size = self.run(e[2], scope)
            for c, a in reversed(e[1]):
                c0, _ = self.run(c, scope)
                c1, s1 = self.run(a, scope)
                cost, size = c0 + max(c1, cost), _join(s1, size)
            return cost, size
        if kind == "chain":
            cost, size = self.run(e[1], scope)
            for op, x in e[2]:
                c, s = self.run(x, scope)
                cost += c
                if op == "in":
                    cost += 0 if s.is_map else s.n
                    size = _SCALAR
                elif op == "+" and (size.n or s.n) and not (size.is_map or s.is_map):
                    item = _join(size.item, s.item) if size.item and s.item else size.item or s.item
                    size = _Size(size.n + s.n, item)
                elif op == "+":
                    size = _Size(strlen=size.strlen + s.strlen)
                else:
                    size = _SCALAR
            return cost, size
        if kind == "call":
            return self.call(None, _SCALAR, e[1], e[2], scope, 0)
        if kind == "post":
            cost, size = self.run(e[1], scope)
            target = e[1]
            for op in e[2]:
                if op[0] == "sel":
                    size = self.fields.get(op[1], _SCALAR) if size.device else size.item or _SCALAR
                elif op[0] == "idx":
                    for x in op[1]:
                        cost += self.run(x, scope)[0]
                    # (device["attributes"]: the largest of its fields)
                    size = self.fields["attributes"] if size.device else size.item or _SCALAR
                else:
                    cost, size = self.call(target, size, op[1], op[2], scope, cost)
                target = ("done",)
            return cost, size
        return 0, _SCALAR

    def call(self, target: tuple | None, size: _Size, name: str, args: list[tuple], scope: dict[str, _Size],
             cost: int) -> tuple[int, _Size]:
        if target is not None and name in _PER_ITEM and len(args) in (2, 3) and args[0][0] == "id":
            var = args[0][1]
            item = _SCALAR if size.is_map else size.item or _SCALAR
            inner = {**scope, var: item}
            body, out = 0, _SCALAR
            for x in args[1:]:
                c, out = self.run(x, inner)
                body += c
            cost += size.n * (_PER_ITEM[name] + body)
            if name == "map":
                return cost, _Size(size.n, out)
            if name == "filter":
                return cost, _Size(size.n, item)
            return cost, _SCALAR
        if target is None and name == "has" and len(args) == 1:
            return self.run(args[0], scope)[0], _SCALAR
        if target in (None, ("id", "cel")) and name == "bind" and len(args) == 3 and args[0][0] == "id":
            c, s = self.run(args[1], scope)
            cb, sb = self.run(args[2], {**scope, args[0][1]: s})
            return cost + c + cb, sb
        sizes = []
        for x in args:
            c, s = self.run(x, scope)
            cost += c
            sizes.append(s)
        if target is None and name == "dyn" and len(sizes) == 1:
            return cost, sizes[0]
        if name == "includes":
            cost += _MAX_VALUES
        elif name == "matches" and target is not None and len(sizes) == 1:
            cost += _ceil_times(size.strlen + 1, 1, 10) * _ceil_times(sizes[0].strlen, 1, 4)
        elif target is None and name == "matches" and len(sizes) == 2:
            cost += _ceil_times(sizes[0].strlen + 1, 1, 10) * _ceil_times(sizes[1].strlen, 1, 4)
        # (kspread's quantity and semver values are maps of one entry)
        return cost, _Size(1, _SCALAR, True)


def estimate(expression: str, list_attributes: bool = True) -> int:
    """The selector's cost as counted here (the module's docstring); SelectorLimit when it
    nests too deep, ValueError when it is not CEL this parser reads."""
    try:
        tokens = _tokens(expression)
        p = _Parser(tokens)
        old = sys.getrecursionlimit()
        # (the parser and the estimator recurse about ten frames a nesting level)
        sys.setrecursionlimit(max(old, 20 * MAX_NESTING + 2000))
        try:
            tree = p.expr()
            if p.peek()[0] != "end":
                raise _Unparsed(f"unexpected {p.peek()[1]!r}")
            return _Estimator(list_attributes).run(tree, {})[0]
        except RecursionError:
            raise SelectorLimit(f"CEL compile error: expression recursion limit exceeded: {MAX_NESTING}") from None
        finally:
            sys.setrecursionlimit(old)
    except _Unparsed as e:
        raise ValueError(str(e)) from None


def check_selector(expression: str, list_attributes: bool = True) -> None:
    """SelectorLimit when the API server refuses the selector for its length, its nesting
    or its cost (the module's docstring). A selector that is not CEL is left to the
    compiler, unless the compiler reads what this parser cannot (then kspread cannot
    bound its cost and refuses it, saying so)."""
    if len(expression.encode("utf-8", "surrogatepass")) > MAX_EXPRESSION_BYTES:
        raise SelectorLimit(f"Too long: may not be more than {MAX_EXPRESSION_BYTES} bytes")
    try:
        cost = estimate(expression, list_attributes)
    except ValueError as e:
        from kspread.engine.devicecel import CelError, compile_selector

        try:
            compile_selector(expression)
        except CelError:
            return  # not CEL: the compile error of its evaluation
        raise SelectorLimit(f"kspread cannot bound the cost of this selector (not modelled: its parser reads "
                            f"no such CEL: {e})") from None
    if cost > MAX_COST:
        raise SelectorLimit("Forbidden: too complex, exceeds cost limit")
