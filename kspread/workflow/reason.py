"""One line that says why a case failed, the reason before the place: what pytest's
short test summary shows (``FAILED cases.yaml::wrong - selected: expected n1, actual n2
(and 1 more difference) (cases.yaml:18)``), where the failure report itself begins with
the place."""

from __future__ import annotations

import re
from typing import Any

from kspread.workflow.runner import Verdict, _fmt

_PLACE = re.compile(r"^(?P<place>\S.*?:\d+): (?P<rest>.+)$")


def short_reason(v: Verdict, file: str, line: int) -> str:
    """The reason of a failed verdict in one line, then where (``file:line``)."""
    diffs = v.outcome.diffs if v.outcome is not None else []
    if diffs:
        d = diffs[0]
        what, want, have = d.rows[0]
        label = d.key if str(what) in (d.key, "nodes") else f"{d.key} {what}"
        more = sum(len(x.rows) for x in diffs) - 1
        text = f"{label}: expected {_cell(want)}, actual {_cell(have)}"
        if more:
            text += f" (and {more} more difference{'s' if more > 1 else ''})"
        return f"{text} ({file}:{line})"
    return message_reason(v.message, file, line)


def message_reason(message: str, file: str, line: int) -> str:
    """An error's first line with its leading ``file:line:`` moved to the end."""
    first = (message or "").strip().split("\n", 1)[0]
    m = _PLACE.match(first)
    if m:
        return f"{m.group('rest')} ({m.group('place')})"
    return f"{first} ({file}:{line})" if first else f"failed ({file}:{line})"


def _cell(v: Any) -> str:
    return _fmt(v)
