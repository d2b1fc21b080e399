"""``kspread run -k EXPR``: pytest's keyword expressions, without pytest's private API.

The grammar is pytest's (``pytest -k``, see its documentation of "-k"):

    expr:     and_expr ('or' and_expr)*
    and_expr: not_expr ('and' not_expr)*
    not_expr: 'not' not_expr | '(' expr ')' | ident
    ident:    (\\w|:|+|-|.|[|]|\\\\|/)+

An identifier matches when it is a substring of a word (case-insensitive): for a
case, its name or one of its tags. ``True``, ``False`` and ``None`` are not
identifiers, as in pytest. A malformed expression raises ``KeywordError`` naming
the column, in pytest's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_TOKEN = re.compile(r"\s*(?:(?P<paren>[()])|(?P<ident>(?:\w|:|\+|-|\.|\[|\]|\\|/)+))")
_KEYWORDS = {"and", "or", "not"}
_RESERVED = {"True", "False", "None"}

Node = Callable[[Callable[[str], bool]], bool]


class KeywordError(ValueError):
    """A ``-k`` expression that does not parse."""


class _Parser:
    def __init__(self, expr: str) -> None:
        self.expr = expr
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, column from 1)
        pos = 0
        while pos < len(expr):
            if expr[pos:].strip() == "":
                break
            m = _TOKEN.match(expr, pos)
            if m is None or m.end() == pos:
                col = pos + len(expr[pos:]) - len(expr[pos:].lstrip()) + 1
                raise KeywordError(f"at column {col}: unexpected character {expr[col - 1]!r}")
            start = m.start("paren") if m.group("paren") else m.start("ident")
            text = m.group("paren") or m.group("ident")
            kind = "paren" if m.group("paren") else (text if text in _KEYWORDS else "ident")
            self.tokens.append((kind, text, start + 1))
            pos = m.end()
        self.i = 0

    def _peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("eof", "", len(self.expr) + 1)

    def _fail(self, expected: str) -> KeywordError:
        kind, text, col = self._peek()
        got = "end of input" if kind == "eof" else repr(text)
        return KeywordError(f"at column {col}: expected {expected}; got {got}")

    def parse(self) -> Node:
        if self._peek()[0] == "eof":
            return lambda match: False  # pytest: an empty expression matches nothing
        node = self._or()
        if self._peek()[0] != "eof":
            raise self._fail("end of input")
        return node

    def _or(self) -> Node:
        parts = [self._and()]
        while self._peek()[0] == "or":
            self.i += 1
            parts.append(self._and())
        return parts[0] if len(parts) == 1 else (lambda match: any(p(match) for p in parts))

    def _and(self) -> Node:
        parts = [self._not()]
        while self._peek()[0] == "and":
            self.i += 1
            parts.append(self._not())
        return parts[0] if len(parts) == 1 else (lambda match: all(p(match) for p in parts))

    def _not(self) -> Node:
        kind, text, _ = self._peek()
        if kind == "not":
            self.i += 1
            inner = self._not()
            return lambda match: not inner(match)
        if kind == "paren" and text == "(":
            self.i += 1
            inner = self._or()
            if self._peek()[:2] != ("paren", ")"):
                raise self._fail("right parenthesis")
            self.i += 1
            return inner
        if kind == "ident" and text not in _RESERVED:
            self.i += 1
            return lambda match: match(text)
        raise self._fail("not OR left parenthesis OR identifier")


def compile_keyword(expr: str) -> Callable[[Iterable[str]], bool]:
    """The expression as a predicate over a case's words (name and tags)."""
    node = _Parser(expr).parse()

    def matches(words: Iterable[str]) -> bool:
        low = [w.lower() for w in words]
        return node(lambda sub: any(sub.lower() in w for w in low))

    return matches
