"""CEL selectors of DeviceClasses and requests, evaluated as Kubernetes's DRA CEL
environment does (k8s.io/dynamic-resource-allocation/cel): the variable ``device``
with ``driver``, ``attributes`` (domain -> name -> value) and ``capacity`` (domain ->
name -> quantity); a name without a domain is the driver's; looking up a domain the
device does not have gives an empty map (``device.attributes["x"].y`` is then a
"no such key" error, ``"x" in device.attributes`` is false); version attributes are
semver values. Kubernetes's ``quantity()`` / ``semver()`` libraries are here as the
functions and methods their docs list. With DRAListTypeAttributes (1.36) a list attribute
is a CEL list (versions: of semver values) and ``<target>.includes(<value>)`` is defined
(compile.go's includesFunc); with the gate off a device with a list attribute fails every
selector ("attribute <name>: unsupported attribute value", as upstream's getAttributeValue).

The expressions run on the ``common-expression-language`` package (CEL in Rust). Its
standard library covers CEL's own (macros, ``matches``, ``startsWith``, ``size``, ...;
``matches`` reads its pattern as Go's regexp: go_pattern);
Kubernetes's extension libraries beyond quantity and semver (strings, lists, ``cel.bind``,
ip/cidr, urls) are not there: an expression that calls one fails with an error naming
the function, as a runtime error does. Error texts are the library's, not cel-go's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

from kspread.engine.celcost import matches_calls
from kspread.engine.devices import BOOL, INT, LIST_KINDS, STRING, VERSION, VERSIONS, Device
from kspread.engine.quantity import QuantityError, parse_quantity

_Q = "__kspread_quantity__"
_V = "__kspread_semver__"
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
# expressions that look at the set of domains itself: an unknown domain must stay unknown
_DOMAIN_SET = re.compile(
    r"\bin\s+device\s*\.\s*(attributes|capacity)\b(?!\s*\[)"
    r"|device\s*\.\s*(attributes|capacity)\s*\.\s*\w+\s*\("
    r"|size\s*\(\s*device\s*\.\s*(attributes|capacity)\s*\)"
)


class CelError(Exception):
    """A selector that does not compile or fails at run time (upstream: "CEL compile
    error" / "CEL runtime error")."""

    def __init__(self, message: str, compile_error: bool) -> None:
        super().__init__(message)
        self.compile_error = compile_error


def _quantity_value(q: Any) -> Fraction:
    if isinstance(q, dict) and _Q in q:
        return Fraction(q[_Q])
    if isinstance(q, int) and not isinstance(q, bool):
        return Fraction(q)
    raise CelError(f"no such overload: expected a quantity, got {type(q).__name__}", False)


def _q(v: Fraction) -> dict:
    return {_Q: str(v)}


def _parse_semver(s: str) -> tuple:
    m = _SEMVER.match(s)
    if m is None:
        raise ValueError(f"invalid semver {s!r}")
    pre = m.group(4)
    ids: tuple = ()
    if pre:
        ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), ids


def _semver_key(v: dict) -> tuple:
    major, minor, patch, pre = _parse_semver(v[_V])
    # a version without prerelease ranks above one with (semver 2.0.0, blang/semver)
    return (major, minor, patch, 1 if not pre else 0, pre)


def _cmp(a: Any, b: Any) -> int:
    if isinstance(a, dict) and _V in a:
        if not (isinstance(b, dict) and _V in b):
            raise CelError("no such overload: compareTo(semver, ...) needs a semver", False)
        ka, kb = _semver_key(a), _semver_key(b)
    else:
        ka, kb = _quantity_value(a), _quantity_value(b)  # type: ignore[assignment]
    return (ka > kb) - (ka < kb)


def _quantity(s: Any) -> dict:
    try:
        return _q(parse_quantity(s))
    except QuantityError as e:
        raise CelError(f"quantities must match the regular expression: {e}", False) from None


def _is_quantity(s: Any) -> bool:
    try:
        parse_quantity(s)
        return True
    except QuantityError:
        return False


def _semver(s: Any) -> dict:
    try:
        _parse_semver(str(s))
    except ValueError as e:
        raise CelError(str(e), False) from None
    return _sv(str(s))


def _sv(s: str) -> dict:
    """A semver value; its build metadata left out, which no function reads and cel-go's
    equality ignores (blang/semver's EQ), so that ``==`` and ``in`` compare as upstream."""
    return {_V: s.partition("+")[0]}


def _is_semver(s: Any) -> bool:
    try:
        _parse_semver(str(s))
        return True
    except ValueError:
        return False


def _as_integer(q: Any) -> int:
    v = _quantity_value(q)
    if v.denominator != 1 or not -(2**63) <= v.numerator < 2**63:
        raise CelError("cannot convert value to integer", False)
    return v.numerator


def _part(i: int) -> Callable[[Any], int]:
    def f(v: Any) -> int:
        return _parse_semver(v[_V])[i]
    return f


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "compareTo": _cmp,
    "isLessThan": lambda a, b: _cmp(a, b) < 0,
    "isGreaterThan": lambda a, b: _cmp(a, b) > 0,
    "asInteger": _as_integer,
    "isInteger": lambda q: _quantity_value(q).denominator == 1 and -(2**63) <= _quantity_value(q) < 2**63,
    "asApproximateFloat": lambda q: float(_quantity_value(q)),
    "sign": lambda q: (_quantity_value(q) > 0) - (_quantity_value(q) < 0),
    "add": lambda a, b: _q(_quantity_value(a) + _quantity_value(b)),
    "sub": lambda a, b: _q(_quantity_value(a) - _quantity_value(b)),
    "major": _part(0),
    "minor": _part(1),
    "patch": _part(2),
}


# resourceapi.ResourceSliceMaxAttributeValuesPerDevice: includes() looks at no more of a list
MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48


def _cel_equal(a: Any, b: Any) -> bool:
    """cel-go's ``Equal`` as includes() uses it (``== types.True``): heterogeneous numbers
    compare by value, a bool equals only a bool, semver values compare as versions (build
    metadata ignored: blang/semver's EQ); values of other kinds differ (a semver against
    another kind is an error there, not True)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    sa, sb = isinstance(a, dict) and _V in a, isinstance(b, dict) and _V in b
    if sa or sb:
        return sa and sb and _semver_key(a) == _semver_key(b)
    qa, qb = isinstance(a, dict) and _Q in a, isinstance(b, dict) and _Q in b
    if qa or qb:
        return qa and qb and Fraction(a[_Q]) == Fraction(b[_Q])
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_cel_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_cel_equal(a[k], b[k]) for k in a)
    if a is None or b is None:
        return a is None and b is None
    return type(a) is type(b) and a == b


def _includes(target: Any, arg: Any) -> bool:
    """includesFunc: whether a list holds the value (a runtime error past the first 48
    items without it), or a scalar equals it."""
    if isinstance(target, list):
        for i, item in enumerate(target):
            if i >= MAX_ATTRIBUTE_VALUES_PER_DEVICE:
                raise CelError(f"'includes' function cannot be applied to lists longer than "
                               f"{MAX_ATTRIBUTE_VALUES_PER_DEVICE} values", False)
            if _cel_equal(item, arg):
                return True
        return False
    return _cel_equal(target, arg)


# Go's regexp (RE2 syntax), which cel-go's matches() runs: \d, \w, \s and \b are ASCII there
# and Unicode in the library's regex; written out as ASCII classes for it
_PERL_OUTSIDE = {"d": "[0-9]", "D": "[^0-9]", "w": "[0-9A-Za-z_]", "W": "[^0-9A-Za-z_]",
                 "s": "[\\t\\n\\f\\r ]", "S": "[^\\t\\n\\f\\r ]", "b": "(?-u:\\b)", "B": "(?-u:\\B)"}
_PERL_INSIDE = {"d": "0-9", "D": "[^0-9]", "w": "0-9A-Za-z_", "W": "[^0-9A-Za-z_]",
                "s": "\\t\\n\\f\\r ", "S": "[^\\t\\n\\f\\r ]"}


def go_pattern(pattern: str) -> str:
    """``pattern`` (Go's regexp syntax) for the library's regex: its Perl classes ASCII as
    Go's, and in a bracketed class a ``[``, ``&`` or ``~`` escaped (literal in Go; a nested
    class or a set operation in the library)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            d = pattern[i + 1]
            if d == "Q":  # literal text up to \E (the library has no \Q: each character escaped)
                end = pattern.find("\\E", i + 2)
                text = pattern[i + 2:n if end < 0 else end]
                out.append("".join("\\" + x if x in _META else x for x in text))
                i = n if end < 0 else end + 2
                continue
            rep = (_PERL_INSIDE if in_class else _PERL_OUTSIDE).get(d)
            out.append(rep if rep is not None else pattern[i:i + 2])
            i += 2
            continue
        if not in_class and c == "[":
            in_class = True
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":  # a ] first is literal
                j += 1
            out.append(pattern[i:j].replace("]", "\\]") if j > i + 1 and pattern[j - 1] == "]" else pattern[i:j])
            i = j
            continue
        if in_class:
            if c == "]":
                in_class = False
            elif c == "[" and pattern.startswith("[:", i):
                end = pattern.find(":]", i + 2)
                if end >= 0:  # a POSIX class ([:alpha:]): ASCII in both
                    out.append(pattern[i:end + 2])
                    i = end + 2
                    continue
                c = "\\["
            elif c in "[&~":
                c = "\\" + c
        out.append(c)
        i += 1
    return "".join(out)


_META = set("\\.+*?()|[]{}^$#&-~")
_MATCHES = "kspreadMatches"


@lru_cache(maxsize=4096)
def _go_matches_cached(s: str, pattern: str) -> bool | str:
    import cel

    ctx = cel.Context()
    ctx.add_variable("s", s)
    ctx.add_variable("p", go_pattern(pattern))
    try:
        return bool(_matches_program().execute(ctx))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:
        # (the library's message shows the pattern it was given: shown as written)
        return _panic_text(e).replace("'" + go_pattern(pattern) + "'", "'" + pattern + "'")


@lru_cache(maxsize=1)
def _matches_program() -> Any:
    import cel

    return cel.compile("s.matches(p)")


def _go_matches(s: Any, pattern: Any) -> bool:
    """``s.matches(pattern)`` as Go's regexp reads the pattern (go_pattern); the result
    of each string and pattern is kept (the library compiles the pattern at each call)."""
    if not isinstance(s, str) or not isinstance(pattern, str):
        raise CelError("no such overload: matches(string, string)", False)
    got = _go_matches_cached(s, pattern)
    if isinstance(got, str):
        raise CelError(got, False)
    return got


@lru_cache(maxsize=512)
def compile_selector(expression: str) -> Any:
    """The compiled program; CelError (compile) when it does not parse. Its calls of
    ``matches`` call _go_matches."""
    try:
        import cel  # on the first selector: the library takes a third of a second to import

        program = cel.compile(expression)
        calls = matches_calls(expression)
        if not calls:
            return program
        text = expression
        for at in reversed(calls):
            text = text[:at] + _MATCHES + text[at + len("matches"):]
        return cel.compile(text)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # (the library's panics are pyo3's PanicException, a BaseException)
        raise CelError(_panic_text(e), True) from None


def _panic_text(e: BaseException) -> str:
    return str(e) if isinstance(e, Exception) else f"the CEL library failed ({type(e).__name__}: {e})"


def _domain_maps(device: Device, driver: str, list_attributes: bool) -> tuple[dict, dict]:
    attrs: dict[str, dict] = {}
    for name, a in device.attributes.items():
        domain, _, ident = name.rpartition("/")
        value: Any = a.value
        if a.kind == VERSION:
            value = _sv(str(a.value))
        elif list_attributes and a.kind in LIST_KINDS:
            assert isinstance(a.value, tuple)
            value = [_sv(str(v)) for v in a.value] if a.kind == VERSIONS else list(a.value)
        elif a.kind not in (INT, BOOL, STRING):
            # a list attribute with the gate off (the loader refuses it, as the API server does)
            raise CelError(f"attribute {name}: unsupported attribute value", False)
        attrs.setdefault(domain or driver, {})[ident] = value
    caps: dict[str, dict] = {}
    for name, q in device.capacity.items():
        domain, _, ident = name.rpartition("/")
        caps.setdefault(domain or driver, {})[ident] = _q(q)
    return attrs, caps


def device_matches(expression: str, device: Device, driver: str, consumable_capacity: bool = False,
                   list_attributes: bool = False) -> bool:
    """DeviceMatches: the selector's result for the device (CelError on failure); with
    consumable capacity the device also has ``allowMultipleAllocations``; with list
    attributes (DRAListTypeAttributes) its list attributes are lists and ``includes`` is
    defined."""
    program = compile_selector(expression)
    attrs, caps = _domain_maps(device, driver, list_attributes)
    added: set[str] = set()
    while True:
        import cel

        ctx = cel.Context()
        for name, fn in _FUNCTIONS.items():
            ctx.add_function(name, fn)
        ctx.add_function(_MATCHES, _go_matches)
        if list_attributes:
            ctx.add_function("includes", _includes)
        var: dict[str, Any] = {"driver": driver, "attributes": attrs, "capacity": caps}
        if consumable_capacity:
            var["allowMultipleAllocations"] = bool(device.allow_multiple_allocations)
        ctx.add_variable("device", var)
        try:
            result = program.execute(ctx)
        except CelError:
            raise
        except KeyError as e:
            key = e.args[0] if e.args else None
            if isinstance(key, str) and key not in added and (key not in attrs or key not in caps):
                # an unknown domain (of the attributes, the capacities or both: a device may
                # have attributes of a domain and no capacity of it): upstream's map gives an
                # empty map for it
                if _DOMAIN_SET.search(expression):
                    raise CelError(
                        f"kspread cannot evaluate this selector as Kubernetes does: it looks up the unknown "
                        f"key {key!r} and also looks at device.attributes / device.capacity as a whole", False,
                    ) from None
                attrs = attrs if key in attrs else {**attrs, key: {}}
                caps = caps if key in caps else {**caps, key: {}}
                added.add(key)
                continue
            raise CelError(f"no such key: {key}", False) from None
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # (a panic of the library is a BaseException)
            cause = e.__cause__ if isinstance(e.__cause__, CelError) else None
            if cause is not None:
                raise cause from None
            raise CelError(_panic_text(e), False) from None
        if not isinstance(result, bool):
            raise CelError(f"CEL result of type {type(result).__name__} could not be converted to bool", False)
        return result
