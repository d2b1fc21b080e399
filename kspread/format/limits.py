"""What kspread refuses as too large, before it costs time or memory.

A case is untrusted input: a few lines can ask for 50 million pods (``replicas``), a
number of a million digits or a list of 50,000 nodes. The limits below are far above
what real clusters reach (upstream's documented scale: 5,000 nodes, 150,000 pods), and
each is checked in time proportional to the text before anything is expanded. README,
"Limits", lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Integers of more digits than this are refused wherever they are: every integer a case
# holds fits in 64 bits (19 digits), and Python converts no more than 4,300 digits to or
# from text.
MAX_INT_DIGITS = 100
_HUGE = 10 ** MAX_INT_DIGITS


def int_digits(x: int) -> int:
    """How many decimal digits ``abs(x)`` has, without converting it to text."""
    x = abs(x)
    d = max(1, int(x.bit_length() * 0.30102999566398120))  # log10(2): at most one too many or few
    while d > 1 and x < 10 ** (d - 1):
        d -= 1
    while x >= 10 ** d:
        d += 1
    return d


def huge_int_message(digits: int) -> str:
    return (f"integer out of range: it has {digits:,} digits (an integer of a case fits in 64 bits; "
            f"kspread refuses any of more than {MAX_INT_DIGITS} digits)")


def huge_int_at(data: Any) -> tuple[list, int] | None:
    """The path of the first integer of more than MAX_INT_DIGITS digits in ``data`` (keys
    in order, list items by index), and its number of digits; None when there is none."""
    stack: list[tuple[Any, list]] = [(data, [])]
    while stack:
        x, at = stack.pop()
        if isinstance(x, int) and not isinstance(x, bool):
            if not -_HUGE < x < _HUGE:
                return at, int_digits(x)
        elif isinstance(x, Mapping):
            stack += [(v, [*at, k]) for k, v in reversed(list(x.items()))]
        elif isinstance(x, list):
            stack += [(v, [*at, i]) for i, v in reversed(list(enumerate(x)))]
    return None
