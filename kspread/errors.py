"""Errors that point at the place in a case file that caused them."""

from __future__ import annotations

import difflib
import json
import re
import reprlib
from collections.abc import Iterable, Sequence
from typing import Any

PathT = Sequence[str | int]

# Characters that would break a line of a log, drive a terminal or reorder text when
# printed: C0 (tab, line feed and carriage return too), DEL, C1, the Unicode line and
# paragraph separators, the bidirectional marks, embeddings, overrides and isolates. A
# case name holding one is refused; kspread.workflow.safetext shows them escaped.
UNPRINTABLE = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
UNPRINTABLE_RE = re.compile(f"[{UNPRINTABLE}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def escape_unprintable(text: str, pattern: re.Pattern[str] = UNPRINTABLE_RE) -> str:
    """``text`` with each character of ``UNPRINTABLE`` (or of ``pattern``) written as an
    escape: ``\\n``, ``\\x1b``, ``\\u202e``."""
    return pattern.sub(_escaped, text)


def format_path(path: PathT) -> str:
    """Render a field path the way users write it: ``pods[2].requests.cpu``."""
    out = ""
    for part in path:
        if isinstance(part, str) and len(part) > 80:  # a key of any length: cut, as values are
            part = part[:77] + "..."
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part or not part.isprintable() or any(c.isspace() for c in part):
            out += f"[{json.dumps(part)}]"  # a key that would not read back: quoted, as JSON
        elif out:
            out += f".{part}"
        else:
            out = str(part)
    return out or "(document)"


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """`` (did you mean 'priority'?)`` for the choice closest to a mistyped ``word``
    (difflib's ratio of at least 0.6; a choice that differs only in case is always
    close), else ``""``: appended to an "unknown field" or "unknown plugin" message."""
    if not isinstance(word, str):
        return ""
    choices = [c for c in choices if c != word]
    folded = [c for c in choices if c.lower() == word.lower()]
    close = folded or difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def described(value: Any) -> str:
    """What ``value`` is, never what it says: "a string of 312 characters", "a list of 3
    items". For errors about a file that is not what kspread expected (a credentials
    file named as a configuration), whose content must not reach a log."""
    if isinstance(value, str):
        return f"a string of {len(value)} character{'s' if len(value) != 1 else ''}"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return f"a mapping of {len(value)} key{'s' if len(value) != 1 else ''}"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


# A message longer than this is cut (a name or value of a case quoted in it may be of any
# length): the rest is dropped with a note saying how much.
MAX_MESSAGE = 2000


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters. A long string is not written out
    whole first, and an integer too long for Python to write (over 4,300 digits) is
    described by its size, also inside a list or mapping."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 3 * limit:
        return f"<an integer of about {int(value.bit_length() * 0.30103):,} digits>"
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]
    try:
        shown = repr(value)
    except ValueError:  # an integer too long to write, inside a container
        shown = _bounded.repr(value)
    return shown if len(shown) <= limit else shown[:limit - 3] + "..."


class _Bounded(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        return short_repr(x)


_bounded = _Bounded()


class CaseError(Exception):
    """A case is invalid or cannot be run.

    ``path`` is the field path inside the case document; the loader fills in
    ``file`` and ``line`` (1-based) when it knows them.
    """

    # An error in how the case is written (an unknown field of the format, a document
    # that is not a case), not in the cluster or scheduler it describes: it never
    # satisfies ``expect.error`` (``kspread.format.loader.meets_expected_error``).
    format_error: bool = False

    def __init__(
        self,
        message: str,
        path: PathT = (),
        *,
        value: Any = ...,
        file: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = tuple(path)
        self.value = value
        self.file = file
        self.line = line

    def located(self, file: str | None, line: int | None) -> CaseError:
        if self.file is None:
            self.file = file
        if self.line is None:
            self.line = line
        return self

    def __str__(self) -> str:
        where = ""
        if self.file:
            # a file name holding a line break or an escape is shown escaped
            where = escape_unprintable(self.file) + (f":{self.line}" if self.line else "") + ": "
        field = f"{format_path(self.path)}: " if self.path else ""
        got = ""
        # the value, unless the message already quotes it ("unknown node 'n1'", not "... (got 'n1')")
        if self.value is not ... and not (isinstance(self.value, str) and repr(self.value) in self.message):
            got = f" (got {short_repr(self.value)})"
        message = self.message
        if len(message) > MAX_MESSAGE:
            message = f"{message[:MAX_MESSAGE]}... ({len(message) - MAX_MESSAGE:,} more characters left out)"
        return f"{where}{field}{message}{got}"
