"""Label selectors (k8s.io/apimachinery/pkg/labels and metav1.LabelSelector).

``Selector`` is the internal, set-based form the scheduler matches with; a
``LabelSelector`` is the API form (matchLabels + matchExpressions) that objects
carry. Conversion and validation follow upstream.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kspread.errors import CaseError, PathT, did_you_mean

# Selector operators as upstream's selection.Operator.
IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
EQUALS = "="
NOT_EQUALS = "!="
GT = "Gt"
LT = "Lt"

LABEL_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)

# \Z, not $: Go's regexp `$` ends the text, Python's also matches before a final newline
_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)\Z")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")


def qualified_name_error(key: object) -> str | None:
    """Why ``key`` is not a valid label key (IsQualifiedName), or None."""
    if not isinstance(key, str):
        return "a label key must be a string"
    return _qualified_name_error(key)


@lru_cache(maxsize=8192)
def _qualified_name_error(key: str) -> str | None:
    prefix, sep, name = key.rpartition("/")
    if sep and (not prefix or len(prefix) > 253 or not DNS1123_SUBDOMAIN.match(prefix)):
        return "the prefix of a label key must be a DNS-1123 subdomain"
    if not name or len(name) > 63 or not _NAME.match(name):
        return (
            "a label key's name part must be 63 characters or less, begin and end with an "
            "alphanumeric character, and contain only alphanumerics, '-', '_' or '.'"
        )
    return None


def label_value_error(value: object) -> str | None:
    """Why ``value`` is not a valid label value (IsValidLabelValue), or None."""
    if not isinstance(value, str):
        return "a label value must be a string (quote numbers and booleans)"
    return _label_value_error(value)


@lru_cache(maxsize=8192)
def _label_value_error(value: str) -> str | None:
    if value and (len(value) > 63 or not _NAME.match(value)):
        return (
            "a label value must be 63 characters or less, empty or begin and end with an "
            "alphanumeric character, and contain only alphanumerics, '-', '_' or '.'"
        )
    return None


# Go's strconv.ParseInt(s, 10, 64): an optional sign and ASCII digits, within int64.
_GO_INT = re.compile(r"[+-]?[0-9]+")


def go_int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``, None where it fails (not Python's ``int``,
    which takes spaces, underscores and other digits)."""
    if not _GO_INT.fullmatch(s):
        return None
    v = int(s)
    return v if -(2**63) <= v < 2**63 else None


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == IN or op == EQUALS:
            return self.key in labels and labels[self.key] in self.values
        if op == NOT_IN or op == NOT_EQUALS:
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op == GT or op == LT:
            if self.key not in labels:
                return False
            try:
                have = int(labels[self.key])
                want = int(self.values[0])
            except ValueError:
                return False
            return have > want if op == GT else have < want
        raise AssertionError(f"unknown selector operator {op!r}")

    def __str__(self) -> str:
        if self.op == EXISTS:
            return self.key
        if self.op == DOES_NOT_EXIST:
            return "!" + self.key
        if self.op in (EQUALS, NOT_EQUALS):
            return f"{self.key}{self.op}{self.values[0]}"
        if self.op in (GT, LT):
            return f"{self.key}{'>' if self.op == GT else '<'}{self.values[0]}"
        return f"{self.key} {self.op.lower()} ({','.join(self.values)})"


@dataclass(frozen=True, slots=True)
class Selector:
    """A conjunction of requirements. ``nothing`` is upstream's labels.Nothing()."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    def empty(self) -> bool:
        """``Selector.Empty()``: true for Everything, false for Nothing."""
        return not self.nothing and not self.requirements

    def add(self, *reqs: Requirement) -> Selector:
        if self.nothing:
            return self
        return Selector(self.requirements + tuple(reqs))

    def __str__(self) -> str:
        if self.nothing:
            return "<nothing>"
        return ",".join(str(r) for r in self.requirements) or "<everything>"


EVERYTHING = Selector()
NOTHING = Selector(nothing=True)


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """``labels.SelectorFromSet`` / ``Set.AsSelector``: equality requirements, sorted by key."""
    return Selector(tuple(Requirement(k, EQUALS, (labels[k],)) for k in sorted(labels)))


def merge_sets(base: Mapping[str, str], more: Mapping[str, str]) -> dict[str, str]:
    """``labels.Merge``: the union, values of ``more`` winning."""
    out = dict(base)
    out.update(more)
    return out


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """metav1.LabelSelector, validated."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    def as_selector(self) -> Selector:
        """``metav1.LabelSelectorAsSelector`` for a non-nil selector."""
        if not self.match_labels and not self.match_expressions:
            return EVERYTHING
        reqs = [Requirement(k, EQUALS, (v,)) for k, v in self.match_labels]
        reqs.extend(self.match_expressions)
        reqs.sort(key=lambda r: r.key)
        return Selector(tuple(reqs))


def as_selector(ls: LabelSelector | None) -> Selector:
    """``LabelSelectorAsSelector``: nil matches nothing, empty matches everything."""
    return NOTHING if ls is None else ls.as_selector()


# A whole label value at once: empty, or _NAME in at most 63 characters.
_LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?").fullmatch
# Tuples of label keys found valid (a case's pods repeat a few key sets).
_VALID_KEYS: set[tuple] = set()


def valid_labels_dict(raw: dict) -> bool:
    """Whether every key and value of ``raw`` is valid: the keys once per tuple of
    keys, the values without a Python call each. False: the full check says why."""
    keys = tuple(raw)
    if keys not in _VALID_KEYS:
        if not all(type(k) is str and _qualified_name_error(k) is None for k in keys):
            return False
        if len(_VALID_KEYS) < 8192:
            _VALID_KEYS.add(keys)
    try:
        return all(map(_LABEL_VALUE, raw.values()))
    except TypeError:  # a value that is not a string
        return False


def _check_labels_map(raw: Any, path: PathT) -> dict[str, str]:
    if type(raw) is dict and valid_labels_dict(raw):
        return dict(raw)
    if type(raw) is not dict and not isinstance(raw, Mapping):  # dict first: ABC checks are slow
        raise CaseError("must be a mapping of label key to value", path, value=raw)
    for k, v in raw.items():
        err = _qualified_name_error(k) if type(k) is str else qualified_name_error(k)
        if err:
            raise CaseError(err, [*path, str(k)], value=k)
        err = _label_value_error(v) if type(v) is str else label_value_error(v)
        if err:
            raise CaseError(err, [*path, k], value=v)
    return dict(raw)


def parse_labels(raw: Any, path: PathT) -> dict[str, str]:
    """A plain label map (metadata.labels, a Service or RC selector, nodeSelector)."""
    if raw is None:
        return {}
    return _check_labels_map(raw, path)


def parse_label_selector(raw: Any, path: PathT) -> LabelSelector | None:
    """A metav1.LabelSelector, validated as upstream's ValidateLabelSelector does."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise CaseError("a label selector must be a mapping with matchLabels/matchExpressions", path, value=raw)
    for k in raw:
        if k not in ("matchLabels", "matchExpressions"):
            raise CaseError(
                f"unknown field {k!r} in a label selector (allowed: matchLabels, matchExpressions)"
                + did_you_mean(k, ("matchLabels", "matchExpressions")),
                [*path, str(k)],
            )
    labels = _check_labels_map(raw.get("matchLabels") or {}, [*path, "matchLabels"])
    exprs = raw.get("matchExpressions") or []
    if not isinstance(exprs, list):
        raise CaseError("must be a list", [*path, "matchExpressions"], value=exprs)
    reqs = [
        parse_selector_requirement(e, [*path, "matchExpressions", i], LABEL_SELECTOR_OPERATORS)
        for i, e in enumerate(exprs)
    ]
    return LabelSelector(tuple(sorted(labels.items())), tuple(reqs))


def parse_selector_requirement(raw: Any, path: PathT, operators: Iterable[str]) -> Requirement:
    """One matchExpressions entry. ``operators`` is LABEL_SELECTOR_OPERATORS for label
    selectors and adds Gt/Lt for node selector terms."""
    operators = tuple(operators)
    if not isinstance(raw, Mapping):
        raise CaseError("a selector requirement must be a mapping with key, operator, values", path, value=raw)
    for k in raw:
        if k not in ("key", "operator", "values"):
            raise CaseError(f"unknown field {k!r} in a selector requirement"
                            + did_you_mean(k, ("key", "operator", "values")), [*path, str(k)])
    key = raw.get("key")
    if key is None:
        raise CaseError("key is required", [*path, "key"], value=key)
    err = qualified_name_error(key)
    if err:
        raise CaseError(err, [*path, "key"], value=key)
    op = raw.get("operator")
    if op not in operators:
        raise CaseError(
            f"{op!r} is not a valid selector operator (allowed: {', '.join(operators)})",
            [*path, "operator"],
            value=op,
        )
    values = raw.get("values") or []
    if not isinstance(values, list):
        raise CaseError("must be a list of strings", [*path, "values"], value=values)
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise CaseError("values must be strings (quote numbers and booleans)", [*path, "values", i], value=v)
    if op in (IN, NOT_IN) and not values:
        raise CaseError("must be specified when `operator` is 'In' or 'NotIn'", [*path, "values"])
    if op in (EXISTS, DOES_NOT_EXIST) and values:
        raise CaseError(
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'", [*path, "values"], value=values
        )
    if op in (GT, LT):
        if len(values) != 1:
            raise CaseError("must be specified single value when `operator` is 'Lt' or 'Gt'", [*path, "values"])
        if go_int64(values[0]) is None:
            # the scheduler cannot parse it (labels.NewRequirement): kspread refuses it
            raise CaseError("must be an integer when `operator` is 'Lt' or 'Gt'", [*path, "values", 0],
                            value=values[0])
    if op in (IN, NOT_IN, GT, LT):
        for i, v in enumerate(values):
            err = label_value_error(v)
            if err:
                raise CaseError(err, [*path, "values", i], value=v)
    return Requirement(key, op, tuple(values))
