"""Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource).

A quantity is parsed exactly (``fractions.Fraction``) and converted the way the
scheduler reads it: ``MilliValue()`` for cpu and ``Value()`` for everything else,
both rounding up to the next integer as upstream does.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<bin>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exp>[eE][+-]?[0-9]+)|(?P<dec>[numkMGTPE]?))$"
)

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"


class QuantityError(ValueError):
    pass


MAX_INT64 = (1 << 63) - 1
# 10**40 is far beyond int64 already; bounding the exponent keeps "1e999999999" from
# computing a number of a billion digits
_MAX_EXPONENT = 40
# Beyond this many significant digits before the point a quantity is far past int64 even
# at its smallest scale (10**60 * 1e-40 = 1e20), so it is refused without being converted
# (Python converts at most 4,300 digits of text to an integer).
_MAX_INT_DIGITS = 60
# Digits after the point past this many cannot change the amount: upstream rounds a
# quantity up to the nano after its suffix is applied, and every multiple of 1e-9 divided
# by the largest suffix (2**60 = Ei) or multiplied by the smallest scale (1e-40) has at
# most 69 decimal places; the fraction is rounded up (away from zero) at 70 places first.
_MAX_FRACTION_DIGITS = 70


def parse_quantity(value: object) -> Fraction:
    """Parse a quantity given as a YAML string or number into an exact Fraction."""
    if isinstance(value, bool):
        raise QuantityError("a quantity must be a number or a string like '500m' or '2Gi'")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError("a quantity must be finite")
        return Fraction(repr(value))
    if not isinstance(value, str):
        raise QuantityError("a quantity must be a number or a string like '500m' or '2Gi'")
    m = _QUANTITY.match(value.strip())
    if not m:
        raise QuantityError(
            "not a Kubernetes quantity (expected e.g. '500m', '1.5', '8Gi', '1e3')"
        )
    num = _number(m.group("num"))
    if m.group("bin"):
        return num * _BINARY[m.group("bin")]
    if m.group("exp"):
        exp = int(m.group("exp")[1:])
        if abs(exp) > _MAX_EXPONENT:
            raise QuantityError(f"quantity out of range (exponent {exp}): a resource amount is an int64")
        return num * Fraction(10) ** exp
    return num * _DECIMAL[m.group("dec") or ""]


def _number(text: str) -> Fraction:
    """The number part of a quantity, exactly; a fraction of more than
    _MAX_FRACTION_DIGITS places rounded up (away from zero) at that place."""
    if len(text) <= _MAX_INT_DIGITS:
        return Fraction(text)
    sign = -1 if text.startswith("-") else 1
    whole, _, frac = text.lstrip("+-").partition(".")
    whole = whole.lstrip("0")
    if len(whole) > _MAX_INT_DIGITS:
        if sign < 0:
            raise QuantityError("a resource quantity must not be negative")
        raise QuantityError(f"quantity out of range ({len(whole):,} digits before the point): a resource "
                            "amount is an int64")
    up = len(frac) > _MAX_FRACTION_DIGITS and frac[_MAX_FRACTION_DIGITS:].strip("0") != ""
    frac = frac[:_MAX_FRACTION_DIGITS]
    q = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0") + up, 10 ** len(frac))
    return sign * q


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


def milli_value(q: Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up."""
    return _ceil(q * 1000)


def value(q: Fraction) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return _ceil(q)


def resource_amount(name: str, raw: object) -> int:
    if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
        return _resource_amount_cached(name, raw)
    return _resource_amount(name, raw)


@lru_cache(maxsize=4096)
def _resource_amount_cached(name: str, raw: object) -> int:
    return _resource_amount(name, raw)


def _resource_amount(name: str, raw: object) -> int:
    """The integer amount the scheduler uses for resource ``name``: millicores for cpu,
    whole units (bytes, pods, devices) for everything else."""
    q = parse_quantity(raw)
    if q < 0:
        raise QuantityError("a resource quantity must not be negative")
    amount = milli_value(q) if name == CPU else value(q)
    if amount > MAX_INT64:
        unit = "millicores" if name == CPU else "units"
        raise QuantityError(f"quantity too large: the scheduler reads it as an int64 (at most {MAX_INT64} {unit})")
    return amount


def show_quantity(resource: str, amount: int) -> str:
    """An amount as a quantity of ``resource`` for people: cpu in millicores (``1500m``,
    ``4``), bytes (memory, ephemeral-storage, hugepages, a volume's ``storage``) with the
    largest binary suffix that divides them (``8Gi``), others as they are."""
    if resource == CPU:
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if resource in (MEMORY, EPHEMERAL_STORAGE, "storage") or resource.startswith("hugepages-"):
        for suffix, size in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20),
                             ("Ki", 2**10)):
            if amount and amount % size == 0:
                return f"{amount // size}{suffix}"
    return str(amount)
