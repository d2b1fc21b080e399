"""Plugin arguments, decoded strictly and validated in one place.

Every plugin argument kspread accepts, whether from a case's ``profile.pluginConfig``
or from the ``args`` of a KubeSchedulerConfiguration's ``pluginConfig``, goes through
``decode_args``. It does what kube-scheduler does with an args object:

1. strict decoding (the scheme's strict codec): a field the args type of the case's
   version (and, in a configuration file, of its config API version) does not have is
   an error naming it; the shape of every value is checked against the JSON Schema
   (``schemas/case.schema.json``, ``$defs/<type>Args``, checked by the case format's
  ``check_shape``) before anything reads it;
2. the config API version's defaulting (``SetDefaults_<Type>Args``);
3. upstream's validation (pkg/scheduler/apis/config/validation/validation_pluginargs.go,
   with the messages of its field errors).

The fields of each args type per version are the table ``ARGS_TYPES``. The types the
values decode into and their defaults are ``kspread.engine.apis.config`` (upstream's
apis/config), below both this module and the plugins, so the framework imports no
plugin. A plugin receives the decoded values (``Decoded``), never the raw mapping: the
factories in ``kspread.engine.plugins`` only pick what they need from it.

A plugin without an args type upstream (ImageLocality, TaintToleration, ...) takes no
arguments: upstream ignores whatever is given for it, kspread refuses it, so that a
setting never silently does nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kspread.engine.apis.config import (
    DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    DEFAULT_RESOURCES,
    LEAST_ALLOCATED,
    LEGACY_DEFAULT_SHAPE,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_HARD_POD_AFFINITY_WEIGHT,
    MAX_UTILIZATION,
    REQUESTED_TO_CAPACITY_RATIO,
    STRATEGIES,
    SYSTEM_DEFAULT_CONSTRAINTS,
    ResourceSpec,
    ShapePoint,
    Strategy,
    scale_shape,
)
from kspread.engine.labels import GT, LABEL_SELECTOR_OPERATORS, LT, parse_selector_requirement
from kspread.engine.model import NodeSelectorTerm, PreferredSchedulingTerm
from kspread.engine.versions import Version
from kspread.errors import CaseError, PathT, did_you_mean

# Config API versions, oldest first. A case's own pluginConfig has no API version:
# only the minor version decides which fields exist (api None).
APIS = ("v1beta1", "v1beta2", "v1beta3", "v1")
_FROM_V1BETA2 = ("v1beta2", "v1beta3", "v1")

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

Decoded = dict  # field name -> decoded value (see each decoder for the value types)


@dataclass(frozen=True)
class Field:
    """A field of an args type: the minors whose type has it, and (for configuration
    files) the config API versions that have it; None means every one."""

    name: str
    first: int = 12
    last: int | None = None
    apis: tuple[str, ...] | None = None

    def exists(self, minor: int, api: str | None) -> bool:
        if minor < self.first or (self.last is not None and minor > self.last):
            return False
        return api is None or self.apis is None or api in self.apis


@dataclass(frozen=True)
class ArgsType:
    kind: str  # upstream's type name, e.g. NodeResourcesFitArgs
    schema: str  # $defs name in the case schema
    fields: tuple[Field, ...]
    decode: Callable[[_Ctx, Mapping[str, Any]], Decoded]
    first: int = 12  # first minor with this args type
    apis: tuple[str, ...] | None = None

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True)
class _Ctx:
    version: Version
    api: str | None
    path: tuple

    @property
    def minor(self) -> int:
        return self.version.minor

    def at(self, *rest) -> tuple:
        return (*self.path, *rest)


# ---- shared value checks ---------------------------------------------------------------------


def _label_name(value: str, path: tuple) -> None:
    """metav1validation.ValidateLabelName: a qualified name."""
    from kspread.engine.labels import qualified_name_error

    err = qualified_name_error(value)
    if err:
        raise CaseError(err, path, value=value)


def parse_resources(raw: Any, path: tuple, *, max_weight: int | None = 100, zero_means_one: bool = False):
    """A ``resources: [{name, weight}]`` list (shape already checked); omitted or empty:
    cpu and memory, weight 1. ``zero_means_one``: the defaulting of the v1beta2+ types
    (an unset or 0 weight is 1). Weights outside [1, max_weight] are rejected as
    validateResources / validateResourcesNoMax do."""
    if not raw:
        return DEFAULT_RESOURCES
    if not isinstance(raw, list):
        raise CaseError("resources must be a list of {name, weight}", path, value=raw)
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise CaseError("a resource is {name, weight}", (*path, i), value=item)
        weight = item.get("weight", 0)
        if not isinstance(weight, int) or isinstance(weight, bool):
            raise CaseError("a resource weight is an integer", (*path, i, "weight"), value=weight)
        if weight == 0 and zero_means_one:
            weight = 1
        if max_weight is None:
            if weight < 1:
                raise CaseError(f"resource weight of {item['name']} not in valid range [1, inf)",
                                (*path, i, "weight"), value=weight)
        elif not 0 < weight <= max_weight:
            raise CaseError(f"resource weight of {item['name']} not in valid range (0, {max_weight}]",
                            (*path, i, "weight"), value=weight)
        out.append(ResourceSpec(item["name"], weight))
    return tuple(out)


def parse_shape(raw: Any, path: tuple, field_style: bool):
    """A utilization shape ``[{utilization, score}]`` validated as validateFunctionShape:
    at least one point, utilization strictly increasing and in 0..100, score in 0..10.
    ``field_style``: the field-path messages of 1.21+."""
    if not raw:
        raise CaseError("at least one point must be specified", path, value=raw)
    if not isinstance(raw, list):
        raise CaseError("a shape is a list of {utilization, score}", path, value=raw)
    pts = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise CaseError("a shape point is {utilization, score}", (*path, i), value=item)
        u, s = item.get("utilization", 0), item.get("score", 0)
        for k, v in (("utilization", u), ("score", s)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise CaseError(f"{k} is an integer", (*path, i, k), value=v)
        pts.append(ShapePoint(u, s))
    for i in range(1, len(pts)):
        if pts[i - 1].utilization >= pts[i].utilization:
            msg = ("utilization values must be sorted in increasing order" if field_style else
                   f"utilization values must be sorted. Utilization[{i - 1}]=={pts[i - 1].utilization} >= "
                   f"Utilization[{i}]=={pts[i].utilization}")
            raise CaseError(msg, (*path, i, "utilization"), value=pts[i].utilization)
    for i, p in enumerate(pts):
        if not 0 <= p.utilization <= MAX_UTILIZATION:
            raise CaseError(f"not in valid range [0, {MAX_UTILIZATION}]", (*path, i, "utilization"),
                            value=p.utilization)
        if not 0 <= p.score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise CaseError(f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]", (*path, i, "score"),
                            value=p.score)
    return tuple(pts)


_DURATION_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
                   "h": 3600 * 10**9}
_DIGITS = re.compile(r"[0-9]*")
_UNIT_CHARS = re.compile(r"[^.0-9]*")
_NS_LIMIT = 1 << 63


def _go_quote(s: str) -> str:
    """Go's time.quote: double quotes, a backslash before ``"`` and ``\\``, the bytes of a
    control or non-ASCII character as ``\\xNN``."""
    out = []
    for c in s:
        if c < " " or ord(c) >= 0x80:
            out.append("".join(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass")))
        else:
            out.append("\\" + c if c in '"\\' else c)
    return '"' + "".join(out) + '"'


def go_duration_ns(raw: str) -> int:
    """Go's time.ParseDuration, in nanoseconds, overflow included (a duration beyond
    int64 nanoseconds, about 2562047h, is "invalid duration"); a ValueError with Go's
    message otherwise."""
    s = raw
    neg = False
    if s[:1] in ("-", "+") and s:
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    bad = ValueError(f"time: invalid duration {_go_quote(raw)}")
    if not s:
        raise bad
    d = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise bad
        digits = _DIGITS.match(s).group()  # type: ignore[union-attr]
        s = s[len(digits):]
        v = 0
        for c in digits:  # leadingInt: overflow past 1<<63 is an error
            if v > _NS_LIMIT // 10:
                raise bad
            v = v * 10 + ord(c) - 48
            if v > _NS_LIMIT:
                raise bad
        f, scale, post = 0, 1.0, False
        if s[:1] == ".":
            frac = _DIGITS.match(s, 1).group()  # type: ignore[union-attr]
            s, post = s[1 + len(frac):], bool(frac)
            for c in frac:  # leadingFraction: digits past int64's precision are dropped
                if f > (_NS_LIMIT - 1) // 10 or f * 10 + ord(c) - 48 > _NS_LIMIT:
                    break
                f, scale = f * 10 + ord(c) - 48, scale * 10
        if not digits and not post:
            raise bad
        unit_text = _UNIT_CHARS.match(s).group()  # type: ignore[union-attr]
        if not unit_text:
            raise ValueError(f"time: missing unit in duration {_go_quote(raw)}")
        s = s[len(unit_text):]
        unit = _DURATION_UNITS.get(unit_text)
        if unit is None:
            raise ValueError(f"time: unknown unit {_go_quote(unit_text)} in duration {_go_quote(raw)}")
        if v > _NS_LIMIT // unit:
            raise bad
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > _NS_LIMIT:
                raise bad
        d += v
        if d > _NS_LIMIT:
            raise bad
    if neg:
        return -d
    if d > _NS_LIMIT - 1:
        raise bad
    return d


def parse_duration(raw: Any, path: tuple) -> float:
    """A metav1.Duration (Go's time.ParseDuration: ``1h2m3.5s``, ``500ms``, ``0``) in seconds."""
    if not isinstance(raw, str):
        raise CaseError("a duration is a string like 10s or 1m30s", path, value=raw)
    try:
        return go_duration_ns(raw) / 1e9
    except ValueError as e:
        raise CaseError(str(e), path, value=raw) from None


def _unmodelled_gate(version: Version, name: str) -> bool:
    """A gate's value: a modelled gate as the case sets it, else the default of a gate
    kspread does not let a case set (versions.UNMODELLED_GATES)."""
    from kspread.engine.versions import FEATURE_GATES, UNMODELLED_GATES

    if name in FEATURE_GATES:
        return version.gate(name)
    g = UNMODELLED_GATES.get(name)
    if g is None:
        return False
    st = g[0].stage_at(version.minor)
    return bool(st is not None and st.default)


def _parse_term(raw: Any, path: tuple) -> NodeSelectorTerm:
    if not isinstance(raw, Mapping):
        raise CaseError("a node selector term must be a mapping with matchExpressions/matchFields", path, value=raw)
    for k in raw:
        if k not in ("matchExpressions", "matchFields"):
            raise CaseError(f"unknown field {k!r} in a node selector term"
                            + did_you_mean(k, ("matchExpressions", "matchFields")), (*path, str(k)))
    ops = (*LABEL_SELECTOR_OPERATORS, GT, LT)
    exprs = tuple(parse_selector_requirement(e, [*path, "matchExpressions", i], ops)
                  for i, e in enumerate(raw.get("matchExpressions") or []))
    fields = tuple(parse_selector_requirement(e, [*path, "matchFields", i], ops)
                   for i, e in enumerate(raw.get("matchFields") or []))
    for i, f in enumerate(fields):
        if f.key != "metadata.name":
            raise CaseError("only metadata.name is supported in matchFields", (*path, "matchFields", i, "key"),
                            value=f.key)
    return NodeSelectorTerm(exprs, fields)


def parse_added_affinity(raw: Any, path: tuple) -> tuple[tuple[NodeSelectorTerm, ...] | None,
                                                         tuple[PreferredSchedulingTerm, ...]]:
    """NodeAffinityArgs.addedAffinity, validated as ValidateNodeAffinityArgs does:
    (required terms or None, preferred terms)."""
    if not isinstance(raw, Mapping):
        raise CaseError("addedAffinity must be a NodeAffinity mapping", path, value=raw)
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    for k in raw:
        if k not in (req_key, pref_key):
            raise CaseError(f"unknown field {k!r} in addedAffinity" + did_you_mean(k, (req_key, pref_key)),
                            (*path, str(k)))
    required = None
    if raw.get(req_key) is not None:
        ns = raw[req_key]
        if not isinstance(ns, Mapping) or set(ns) - {"nodeSelectorTerms"}:
            raise CaseError("must be a node selector with nodeSelectorTerms", (*path, req_key), value=ns)
        terms = ns.get("nodeSelectorTerms") or []
        if not terms:
            raise CaseError("must have at least one node selector term", (*path, req_key, "nodeSelectorTerms"))
        required = tuple(_parse_term(t, (*path, req_key, "nodeSelectorTerms", i)) for i, t in enumerate(terms))
    preferred = []
    for i, p in enumerate(raw.get(pref_key) or []):
        at = (*path, pref_key, i)
        if not isinstance(p, Mapping) or set(p) - {"weight", "preference"}:
            raise CaseError("a preferred term is {weight, preference}", at, value=p)
        w = p.get("weight")
        if not isinstance(w, int) or isinstance(w, bool) or not 1 <= w <= 100:
            raise CaseError("must be in the range 1-100", (*at, "weight"), value=w)
        preferred.append(PreferredSchedulingTerm(w, _parse_term(p.get("preference") or {}, (*at, "preference"))))
    return required, tuple(preferred)


# ---- the decoders, one per args type ---------------------------------------------------------


def _default_preemption(c: _Ctx, raw: Mapping[str, Any]) -> Decoded:
    pct = raw.get("minCandidateNodesPercentage", 10)
    absolute = raw.get("minCandidateNodesAbsolute", 100)
    if not 0 <= pct <= 100:
        raise CaseError("not in valid range [0, 100]", c.at("minCandidateNodesPercentage"), value=pct)
    if absolute < 0:
        raise CaseError("not in valid range [0, inf)", c.at("minCandidateNodesAbsolute"), value=absolute)
    if pct == 0 and absolute == 0:
        raise CaseError("cannot be zero at the same time as minCandidateNodesAbsolute",
                        c.at("minCandidateNodesPercentage"), value=pct)
    return {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}


def _inter_pod_affinity(c: _Ctx, raw: Mapping[str, Any]) -> Decoded:
    w = raw.get("hardPodAffinityWeight", DEFAULT_HARD_POD_AFFINITY_WEIGHT)
    if not 0 <= w <= MAX_HARD_POD_AFFINITY_WEIGHT:
        raise CaseError(f"not in valid range [0-{MAX_HARD_POD_AFFINITY_WEIGHT}]", c.at("hardPodAffinityWeight"),
                        value=w)
    return {"hardPodAffinityWeight": w,
            "ignorePreferredTermsOfExistingPods": bool(raw.get("ignorePreferredTermsOfExistingPods", False))}


def _node_affinity(c: _Ctx, raw: Mapping[str, Any]) -> Decoded:
    """addedAffinity as (required terms or None, preferred terms)."""
    added = raw.get("addedAffinity")
    if added is None:
        return {"addedAffinity": None}
    return {"addedAffinity": parse_added_affinity(added, c.at("addedAffinity"))}


def _scoring_strategy(c: _Ctx, raw: Mapping[str, Any] | None):
    """NodeResourcesFitArgs.scoringStrategy after SetDefaults_NodeResourcesFitArgs (nil:
    LeastAllocated over cpu and memory; no resources: cpu and memory; weight 0: 1) and
    ValidateNodeResourcesFitArgs, as a scoring ``Strategy`` (shape scaled to the
    version's node score range)."""
    if raw is None:
        return Strategy(LEAST_ALLOCATED, DEFAULT_RESOURCES)
    spath = c.at("scoringStrategy")
    kind = raw.get("type", "")
    if kind not in STRATEGIES:
        raise CaseError(f'Unsupported value: "{kind}": supported values: ' + ", ".join(f'"{s}"' for s in STRATEGIES),
                        (*spath, "type"), value=kind)
    resources = parse_resources(raw.get("resources"), (*spath, "resources"), max_weight=100, zero_means_one=True)
    rtcr = raw.get("requestedToCapacityRatio")
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        if rtcr is None:
            raise CaseError("Required value: must be specified when type is RequestedToCapacityRatio",
                            (*spath, "requestedToCapacityRatio"))
        shape = parse_shape(rtcr.get("shape"), (*spath, "requestedToCapacityRatio", "shape"), True)
        return Strategy(kind, resources, scale_shape(shape, c.version))
    if rtcr is not None:
        raise CaseError("Forbidden: must be nil when type is not RequestedToCapacityRatio",
                        (*spath, "requestedToCapacityRatio"))
    return Strategy(kind, resources)


def _node_resources_fit(c: _Ctx, raw: Mapping[str, Any]) -> Decoded:
    """ignoredResources / ignoredResourceGroups as frozensets (validated as label names;
    a group has no '/'), scoringStrategy as a Strategy where the plugin scores (1.22+;
    None before)."""
    from kspread.engine.versions import resource_scoring

    ignored = raw.get("ignoredResources") or []
    for i, r in enumerate(ignored):
        _label_name(r, c.at("ignoredResources", i))
    groups = raw.get("ignoredResourceGroups") or []
    for i, g in enumerate(groups):
        if "/" in g:
            raise CaseError("resource group name can't contain '/'", c.at("ignoredResourceGroups", i), value=g)
        _label_name(g, c.at("ignoredResourceGroups", i))
    strategy = None
    if resource_scoring(c.version).fit_scores:
        strategy = _scoring_strategy(c, raw.get("scoringStrategy"))
    return {"ignoredResources": frozenset(ignored), "ignoredResourceGroups": frozenset(groups),
            "scoringStrategy": strategy}


def _balanced_allocation(c: _Ctx, raw: Mapping[str, Any]) -> Decoded:
    """resources (1.22+): no duplicates, every weight 1 (an unset or 0 weight is 1)."""
    items = raw.get("resources")
    if not items:
        return {"resources": DEFAULT_RESOURCES}
    seen: set[str] = set()
    out = []
    for i, item in enumerate(items):
        name = item.get("name", "")
        if name in seen:
            raise CaseError(f'Duplicate value: "{name}"', c.at("resources", i, "name"), value=name)
        seen.add(name)
        weight = item.get("weight", 0) or 1
        if weight != 1:
            raise CaseError("must be 1", c.at("resources", i, "weight"), value=weight)
        out.append(ResourceSpec(name, 1))
    return {"resources": tuple(out)}


def _allocated(c: _Ctx, raw: Mapping[str, Any]) -> Decoded:
    """NodeResourcesLeastAllocatedArgs / NodeResourcesMostAllocatedArgs (1.19-1.22):
    resources with weights in (0, 100]; before 1.19 the priorities' cpu and memory."""
    if c.minor < 19:
        return {"resources": DEFAULT_RESOURCES}
    return {"resources": parse_resources(raw.get("resources"), c.at("resources"), max_weight=100)}


def _rtcr(c: _Ctx, raw: Mapping[str, Any]) -> Decoded:
    """RequestedToCapacityRatioArgs: shape (required; up to 1.17 the priority's default
    {0: 10, 100: 0} when omitted), resources from 1.16 (weights >= 1). The shape is
    returned scaled to the version's node score range."""
    raw_shape = raw.get("shape")
    if raw_shape is None and c.version.legacy_priorities:
        shape = LEGACY_DEFAULT_SHAPE
    else:
        shape = parse_shape(raw_shape, c.at("shape"), c.minor >= 21)
    resources = DEFAULT_RESOURCES
    if c.minor >= 16:
        resources = parse_resources(raw.get("resources"), c.at("resources"), max_weight=None)
    return {"shape": scale_shape(shape, c.version), "resources": resources}


def _default_constraint(raw: Mapping[str, Any], path: tuple):
    from kspread.engine.labels import qualified_name_error
    from kspread.engine.model import TopologySpreadConstraint

    do_not, anyway = "DoNotSchedule", "ScheduleAnyway"
    if raw.get("labelSelector") is not None:
        raise CaseError("constraint must not define a selector, as they deduced for each pod",
                        (*path, "labelSelector"))
    skew = raw.get("maxSkew", 0)
    if skew <= 0:
        raise CaseError("must be greater than zero", (*path, "maxSkew"), value=skew)
    key = raw.get("topologyKey", "")
    if not key:
        raise CaseError("can not be empty", (*path, "topologyKey"), value=key)
    err = qualified_name_error(key)
    if err:
        raise CaseError(err, (*path, "topologyKey"), value=key)
    when = raw.get("whenUnsatisfiable")
    if when not in (do_not, anyway):
        raise CaseError(f"supported values: {do_not!r}, {anyway!r}", (*path, "whenUnsatisfiable"), value=when)
    md = raw.get("minDomains")
    if md is not None:
        if md <= 0:
            raise CaseError("must be greater than 0", (*path, "minDomains"), value=md)
        if when != do_not:
            raise CaseError(f"can only use minDomains if whenUnsatisfiable={do_not}", (*path, "minDomains"),
                            value=md)
    for pk in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        pv = raw.get(pk)
        if pv is not None and pv not in ("Honor", "Ignore"):
            raise CaseError("supported values: 'Honor', 'Ignore'", (*path, pk), value=pv)
    keys = raw.get("matchLabelKeys") or []
    for i, k in enumerate(keys):
        err = qualified_name_error(k)
        if err:
            raise CaseError(err, (*path, "matchLabelKeys", i), value=k)
    return TopologySpreadConstraint(
        max_skew=skew, topology_key=key, when_unsatisfiable=when, label_selector=None, min_domains=md,
        node_affinity_policy=raw.get("nodeAffinityPolicy"), node_taints_policy=raw.get("nodeTaintsPolicy"),
        match_label_keys=tuple(keys),
    )


def _pod_topology_spread(c: _Ctx, raw: Mapping[str, Any]) -> Decoded:
    """PodTopologySpreadArgs as the version's config API defaults and validates them:
    ``defaultConstraints`` (the constraints that apply to a pod without its own) and
    ``systemDefaulted``.

    * 1.18: defaultConstraints only;
    * 1.19: an omitted defaultConstraints means the system defaults when the
      DefaultPodTopologySpread gate (alpha) is on;
    * v1beta1 (1.20-1.22): an omitted defaultingType is List when defaultConstraints
      are given, else System, with the gate on; List with it off;
    * v1beta2+ (1.22 on): omitted means System, which allows no defaultConstraints."""
    mode = c.version.pts_defaulting
    if c.api == "v1beta1" and mode == "system":
        mode = "v1beta1"
    raw_list = raw.get("defaultConstraints")
    given = tuple(_default_constraint(x, c.at("defaultConstraints", i)) for i, x in enumerate(raw_list or []))
    seen: set[tuple[str, str]] = set()
    for i, con in enumerate(given):
        pair = (con.topology_key, con.when_unsatisfiable)
        if pair in seen:
            raise CaseError(f"Duplicate value: {{{con.topology_key!r}, {con.when_unsatisfiable!r}}}",
                            c.at("defaultConstraints", i))
        seen.add(pair)
    dt = raw.get("defaultingType")
    if dt is not None and dt not in ("System", "List"):
        raise CaseError("supported values: 'System', 'List'", c.at("defaultingType"), value=dt)

    def result(cons, system):
        return {"defaultConstraints": cons, "systemDefaulted": system}

    if mode == "list":
        return result(given, False)
    gate_on = c.version.gate("DefaultPodTopologySpread")
    if mode == "gate":
        if raw_list is None and gate_on:
            return result(SYSTEM_DEFAULT_CONSTRAINTS, True)
        return result(given, False)
    if dt is None:
        if mode == "v1beta1":
            dt = ("List" if given else "System") if gate_on else "List"
        else:
            dt = "System"
    if dt == "System":
        if given:
            raise CaseError('when .defaultingType is "System", .defaultConstraints must be empty',
                            c.at("defaultConstraints"))
        return result(SYSTEM_DEFAULT_CONSTRAINTS, True)
    return result(given, False)


def _volume_binding(c: _Ctx, raw: Mapping[str, Any]) -> Decoded:
    """bindTimeoutSeconds (>= 0, default 600); shape only with the storage capacity
    scoring gate on (VolumeCapacityPriority 1.22-1.32, alpha and off; StorageCapacityScoring
    from 1.33), validated as validateFunctionShape; None: the gate's default shape
    (``kspread.engine.plugins.volumebinding.default_shape``)."""
    timeout = raw.get("bindTimeoutSeconds", 600)
    if timeout < 0:
        raise CaseError("invalid BindTimeoutSeconds, should not be a negative value", c.at("bindTimeoutSeconds"),
                        value=timeout)
    shape = raw.get("shape")
    if shape is not None:
        gate = "StorageCapacityScoring" if c.minor >= 33 else "VolumeCapacityPriority"
        if not c.version.gate(gate):
            raise CaseError(f"unexpected field `shape`, remove it or turn on the feature gate {gate}", c.at("shape"))
        shape = parse_shape(shape, c.at("shape"), True)
    return {"bindTimeoutSeconds": timeout, "shape": shape}


def _dynamic_resources(c: _Ctx, raw: Mapping[str, Any]) -> Decoded:
    """filterTimeout (default 10s; >= 0; only with DRASchedulerFilterTimeout on) and
    bindingTimeout (default 600s; >= 1s; only with DRADeviceBindingConditions and
    DRAResourceClaimDeviceStatus on), in seconds. filterTimeout is unused (kspread's
    allocator has no wall clock); bindingTimeout ends PreBind's wait for binding
    conditions on a sequence's clock."""
    out: Decoded = {"filterTimeout": 10.0, "bindingTimeout": 600.0}
    if raw.get("filterTimeout") is not None:
        if not _unmodelled_gate(c.version, "DRASchedulerFilterTimeout"):
            raise CaseError("Forbidden: DRASchedulerFilterTimeout feature gate is disabled", c.at("filterTimeout"))
        t = parse_duration(raw["filterTimeout"], c.at("filterTimeout"))
        if t < 0:
            raise CaseError("must be zero or positive", c.at("filterTimeout"), value=raw["filterTimeout"])
        out["filterTimeout"] = t
    if raw.get("bindingTimeout") is not None:
        if not (_unmodelled_gate(c.version, "DRADeviceBindingConditions")
                and _unmodelled_gate(c.version, "DRAResourceClaimDeviceStatus")):
            raise CaseError("Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is "
                            "disabled", c.at("bindingTimeout"))
        t = parse_duration(raw["bindingTimeout"], c.at("bindingTimeout"))
        if t < 1:
            raise CaseError("must be at least 1 second", c.at("bindingTimeout"), value=raw["bindingTimeout"])
        out["bindingTimeout"] = t
    return out


# ---- the table -------------------------------------------------------------------------------

_ALLOCATED_FIELDS = (Field("resources", 19, None, ("v1beta1",)),)

ARGS_TYPES: dict[str, ArgsType] = {
    "DefaultPreemption": ArgsType("DefaultPreemptionArgs", "defaultPreemptionArgs", (
        Field("minCandidateNodesPercentage", 20),
        Field("minCandidateNodesAbsolute", 20),
    ), _default_preemption, first=20),
    "InterPodAffinity": ArgsType("InterPodAffinityArgs", "interPodAffinityArgs", (
        # HardPodAffinitySymmetricWeight of the scheduler policy up to 1.17
        Field("hardPodAffinityWeight"),
        Field("ignorePreferredTermsOfExistingPods", 27),  # PR #114393
    ), _inter_pod_affinity),
    "NodeAffinity": ArgsType("NodeAffinityArgs", "nodeAffinityArgs", (
        Field("addedAffinity", 21),
    ), _node_affinity),
    "NodeResourcesFit": ArgsType("NodeResourcesFitArgs", "nodeResourcesFitArgs", (
        Field("ignoredResources", 18),
        Field("ignoredResourceGroups", 19),
        Field("scoringStrategy", 22, None, _FROM_V1BETA2),
    ), _node_resources_fit),
    "NodeResourcesBalancedAllocation": ArgsType("NodeResourcesBalancedAllocationArgs",
                                                "nodeResourcesBalancedAllocationArgs", (
        Field("resources", 22, None, _FROM_V1BETA2),
    ), _balanced_allocation),
    "NodeResourcesLeastAllocated": ArgsType("NodeResourcesLeastAllocatedArgs", "nodeResourcesAllocatedArgs",
                                            _ALLOCATED_FIELDS, _allocated),
    "NodeResourcesMostAllocated": ArgsType("NodeResourcesMostAllocatedArgs", "nodeResourcesAllocatedArgs",
                                           _ALLOCATED_FIELDS, _allocated),
    "RequestedToCapacityRatio": ArgsType("RequestedToCapacityRatioArgs", "requestedToCapacityRatioArgs", (
        Field("shape"),
        Field("resources", 16),
    ), _rtcr),
    "PodTopologySpread": ArgsType("PodTopologySpreadArgs", "podTopologySpreadArgs", (
        Field("defaultConstraints", 18),
        Field("defaultingType", 20),
    ), _pod_topology_spread, first=18),
    "VolumeBinding": ArgsType("VolumeBindingArgs", "volumeBindingArgs", (
        Field("bindTimeoutSeconds", 19),
        Field("shape", 22, None, _FROM_V1BETA2),
    ), _volume_binding),
    "DynamicResources": ArgsType("DynamicResourcesArgs", "dynamicResourcesArgs", (
        Field("filterTimeout", 34),
        Field("bindingTimeout", 35),  # (u) first minor
    ), _dynamic_resources),
}


def canonical_name(name: str, minor: int) -> str | None:
    """The upstream plugin a pluginConfig key names (a pre-1.18 predicate / priority
    name up to 1.17 included), or None for a name that is no in-tree plugin."""
    from kspread.engine.framework.registry import UPSTREAM

    for k in UPSTREAM:
        if name == k.name or (minor <= 17 and name in k.legacy_names):
            return k.name
    return None


def _span(first: int, last: int | None) -> str:
    return f"1.{first}" + (f" to 1.{last}" if last is not None else " on")


ShapeCheck = Callable[[Mapping[str, Any], str, tuple], None]


def decode_args(name: str, raw: Any, version: Version, path: PathT, api: str | None = None,
                check_shape: ShapeCheck | None = None) -> Decoded:
    """The decoded, defaulted and validated arguments of plugin ``name`` for
    ``version`` (``api``: the config API version of a configuration file; None for a
    case's own pluginConfig). ``raw`` None or {} gives the defaults. A CaseError names
    the field's path (below ``path``).

    ``check_shape(raw, schema_def, path)`` checks the shape of the values against the
    case schema's ``$defs/<schema_def>`` (the case format passes
    ``kspread.format.schema.validate``; the engine does not read the schema). Without
    it, the values are expected to have their documented types."""
    path = tuple(path)
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise CaseError("plugin arguments must be a mapping", path, value=raw)
    canon = canonical_name(name, version.minor)
    if canon is None:
        # not a plugin kspread knows: the profile reports it (it is never enabled)
        return dict(raw)
    t = ARGS_TYPES.get(canon)
    if t is None:
        if raw:
            key = next(iter(raw))
            raise CaseError(f'strict decoding error: unknown field "{key}": plugin {name} takes no arguments '
                            f"(upstream has no {canon}Args type)", (*path, str(key)))
        return {}
    if raw and version.minor < t.first:
        raise CaseError(f"{t.kind} do not exist in {version} (added in 1.{t.first})", path)
    if raw and api is not None and t.apis is not None and api not in t.apis:
        raise CaseError(f"{t.kind} do not exist in config API {api}", path)
    for key in raw:
        f = t.field(key) if isinstance(key, str) else None
        if f is None or not f.exists(version.minor, api):
            known = [x.name for x in t.fields if x.exists(version.minor, api)]
            hint = ""
            if f is not None:
                hint = f"; {key} exists in {_span(f.first, f.last)}" + (
                    f" (config API {', '.join(f.apis)})" if f.apis and api is not None else "")
            raise CaseError(f'strict decoding error: unknown field "{key}" in {t.kind} of {version}'
                            + (f" (config API {api})" if api else "")
                            + f" (known fields: {', '.join(known) or 'none'}{hint})"
                            + ("" if f is not None else did_you_mean(key, known)), (*path, str(key)))
    if check_shape is not None:
        check_shape(raw, t.schema, path)
    return t.decode(_Ctx(version, api, path), raw)


def decode_profile_args(plugin_config: Mapping[str, Any], version: Version, path: PathT,
                        api: str | None = None, check_shape: ShapeCheck | None = None) -> dict[str, Decoded]:
    """``decode_args`` for every entry of a pluginConfig mapping (name -> raw args)."""
    return {name: decode_args(name, raw, version, (*path, name), api, check_shape)
            for name, raw in plugin_config.items()}
