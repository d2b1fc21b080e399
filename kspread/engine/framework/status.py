"""Status codes of the scheduling framework (framework/interface.go)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Code(str, Enum):
    SUCCESS = "Success"
    ERROR = "Error"
    UNSCHEDULABLE = "Unschedulable"
    UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"
    WAIT = "Wait"
    SKIP = "Skip"
    PENDING = "Pending"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @staticmethod
    def of(code: Code, *reasons: str, plugin: str = "") -> Status:
        return Status(code, tuple(reasons), plugin)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def error(*reasons: str) -> Status:
    return Status(Code.ERROR, reasons)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(s: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote): double quotes; backslash, the quote and
    the C control escapes escaped; other unprintable characters as \\xNN (below 0x80),
    \\uNNNN or \\UNNNNNNNN; printable Unicode kept."""
    out = ['"']
    for ch in s:
        esc = _GO_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


class SchedulingError(Exception):
    """A plugin returned an Error status: upstream aborts the cycle with it."""

    def __init__(self, message: str, plugin: str = "") -> None:
        super().__init__(message)
        self.plugin = plugin


@dataclass(slots=True)
class CycleState:
    """Per-cycle data plugins write in PreFilter/PreScore and read later."""

    data: dict[str, object] = field(default_factory=dict)
    skip_filter_plugins: set[str] = field(default_factory=set)
    skip_score_plugins: set[str] = field(default_factory=set)

    def write(self, key: str, value: object) -> None:
        self.data[key] = value

    def read(self, key: str) -> object:
        return self.data[key]

    def get(self, key: str, default: object = None) -> object:
        return self.data.get(key, default)

    def clone(self) -> CycleState:
        data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self.data.items()}
        return CycleState(data, set(self.skip_filter_plugins), set(self.skip_score_plugins))
