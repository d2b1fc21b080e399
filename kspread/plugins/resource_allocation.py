"""Resource scoring shared by NodeResourcesFit's scoring strategies, the 1.18-1.22
plugins NodeResourcesLeastAllocated / NodeResourcesMostAllocated /
RequestedToCapacityRatio, NodeResourcesBalancedAllocation and the priority
functions they replaced (LeastRequestedPriority, MostRequestedPriority,
RequestedToCapacityRatioPriority, BalancedResourceAllocation)
(framework/plugins/noderesources/resource_allocation.go and the scorers next to it;
algorithm/priorities/resource_allocation.go up to 1.17).

A scorer sees, per configured resource, the node's allocatable and what would be
requested with the pod on the node: the node's NonZeroRequested cpu / memory
(unset container requests count 100m / 200Mi) plus the pod's non-zero request, or
the real requests where a plugin uses them (BalancedAllocation from 1.22);
ephemeral-storage and extended resources always use the real requests. All
arithmetic is int64 as upstream: ``//`` on non-negative values is Go's division;
the shape interpolation, where the numerator may be negative, truncates toward
zero (``go_div``). Floats are IEEE doubles in upstream's operation order.

kspread's "unlimited" allocatable (a node without ``allocatable``) is 2**62; upstream
never sees such a node, and kspread computes with exact integers instead of wrapping
int64 on overflow, so such a node scores as a practically empty one (least 99, most 0).

Version differences: ``kspread.versions.ResourceScoringFlags``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from kspread.errors import CaseError
from kspread.model import Pod
from kspread.quantity import CPU, EPHEMERAL_STORAGE, MEMORY
from kspread.resources import scoring_requests
from kspread.snapshot import NodeSet
from kspread.versions import Version, resource_scoring

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10


def go_div(a: int, b: int) -> int:
    """Go's int64 division: truncation toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_round(x: float) -> int:
    """Go's math.Round for x >= 0: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def is_scalar_resource(name: str) -> bool:
    """``IsScalarResourceName``: extended (prefixed) resources, hugepages, attachable volumes."""
    return "/" in name or name.startswith("hugepages-") or name.startswith("attachable-volumes-")


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


@dataclass(frozen=True, slots=True)
class ShapePoint:
    utilization: int
    score: int


# ---- per-resource scores -------------------------------------------------------------------


def least_requested_score(requested: int, capacity: int, max_score: int) -> int:
    """``leastRequestedScore``: share of the capacity left free, 0..max_score; 0 when
    the capacity is 0 or exceeded."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * max_score // capacity


def most_requested_score(requested: int, capacity: int, max_score: int, cap_requested: bool) -> int:
    """``mostRequestedScore``: share of the capacity requested. Requested above the
    capacity scores as the capacity from 1.20 (``most_allocated_caps_requested``),
    0 before."""
    if capacity == 0:
        return 0
    if requested > capacity:
        if not cap_requested:
            return 0
        requested = capacity
    return requested * max_score // capacity


def broken_linear(shape: Sequence[ShapePoint], p: int) -> int:
    """``buildBrokenLinearFunction``: the shape's score at utilization ``p``, linear
    between points (Go integer arithmetic), flat before the first and after the last."""
    for i, pt in enumerate(shape):
        if p <= pt.utilization:
            if i == 0:
                return shape[0].score
            prev = shape[i - 1]
            return prev.score + go_div((pt.score - prev.score) * (p - prev.utilization),
                                       pt.utilization - prev.utilization)
    return shape[-1].score


def rtcr_resource_score(shape: Sequence[ShapePoint], requested: int, capacity: int, floor_utilization: bool) -> int:
    """RequestedToCapacityRatio's per-resource score: the shape at the utilization in
    percent; a capacity of 0 or exceeded counts as 100 %."""
    if capacity == 0 or requested > capacity:
        return broken_linear(shape, MAX_UTILIZATION)
    if floor_utilization:
        return broken_linear(shape, requested * MAX_UTILIZATION // capacity)
    return broken_linear(shape, MAX_UTILIZATION - (capacity - requested) * MAX_UTILIZATION // capacity)


# ---- combining resources ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Usage:
    """One configured resource on one node: weight, allocatable, requested with the pod
    (and without it, for the 1.36+ BalancedAllocation)."""

    weight: int
    allocatable: int
    requested: int
    requested_before: int = 0


def weighted_average(usages: Sequence[Usage], per_resource) -> int:
    """``nodeScore / weightSum`` of the per-resource scores (Least / MostAllocated);
    0 when no resource is left to score (from 1.22, see ``node_usages``)."""
    node_score = weight_sum = 0
    for u in usages:
        node_score += per_resource(u.requested, u.allocatable) * u.weight
        weight_sum += u.weight
    if weight_sum == 0:
        return 0
    return node_score // weight_sum


def rtcr_combine(usages: Sequence[Usage], per_resource, weighted: bool) -> int:
    """RequestedToCapacityRatio: weighted mean of the positive per-resource scores,
    rounded (math.Round); up to 1.15 the plain integer mean of cpu and memory."""
    if not weighted:
        return sum(per_resource(u.requested, u.allocatable) for u in usages) // len(usages)
    node_score = weight_sum = 0
    for u in usages:
        s = per_resource(u.requested, u.allocatable)
        if s > 0:
            node_score += s * u.weight
            weight_sum += u.weight
    if weight_sum == 0:
        return 0
    return go_round(float(node_score) / float(weight_sum))


def fraction_of_capacity(requested: int, capacity: int) -> float:
    if capacity == 0:
        return 1.0
    return float(requested) / float(capacity)


def balanced_legacy(cpu: Usage, memory: Usage, max_score: int) -> int:
    """BalancedResourceAllocation up to 1.21: ``(1 - |cpuFraction - memFraction|) * max``,
    0 when either fraction reaches 1 (a capacity of 0 counts as fraction 1)."""
    cf = fraction_of_capacity(cpu.requested, cpu.allocatable)
    mf = fraction_of_capacity(memory.requested, memory.allocatable)
    if cf >= 1 or mf >= 1:
        return 0
    diff = math.fabs(cf - mf)
    return int((1 - diff) * float(max_score))


def balanced_std_score(pairs: Sequence[tuple[int, int]], max_score: int) -> int:
    """From 1.22: ``(1 - std) * max`` over the fractions (capped at 1) of the resources
    with allocatable > 0; std is |f1 - f2| / 2 for two, the population standard deviation
    for more, 0 for fewer."""
    fractions: list[float] = []
    total = 0.0
    for requested, allocatable in pairs:
        if allocatable == 0:
            continue
        f = float(requested) / float(allocatable)
        if f > 1:
            f = 1.0
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = math.fabs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(len(fractions)))
    return int((1 - std) * float(max_score))


def balanced_change_score(usages: Sequence[Usage], max_score: int) -> int:
    """From 1.36 (PR #135573): how the pod changes the node's balance,
    ``max/2 + (max/2 + with_pod - without_pod) / 2``."""
    with_pod = balanced_std_score([(u.requested, u.allocatable) for u in usages], max_score)
    without = balanced_std_score([(u.requested_before, u.allocatable) for u in usages], max_score)
    return max_score // 2 + go_div(max_score // 2 + with_pod - without, 2)


# ---- what a scorer sees on a node ----------------------------------------------------------------


def pod_scoring_requests(pod: Pod, version: Version, names: Sequence[str], use_requested: bool) -> list[int]:
    """The pod's request per resource name, non-zero unless ``use_requested``."""
    flags = resource_scoring(version)
    include_init = flags.init_containers_in_nonzero
    reqs = scoring_requests(pod, version, non_zero=not use_requested, include_init=include_init,
                            overhead_cpu_in_cores=flags.overhead_cpu_in_cores)
    return [reqs.get(n, 0) for n in names]


def _base_source(name: str, use_requested: bool) -> str | None:
    """Which requested sum a resource reads: "requested" (real requests), "non_zero"
    (NonZeroRequested: cpu / memory with defaults), or None (not a scored resource)."""
    if name in (CPU, MEMORY):
        return "requested" if use_requested else "non_zero"
    if name == EPHEMERAL_STORAGE or is_scalar_resource(name):
        return "requested"
    return None


def usages_of(
    values: Sequence[tuple[int, int]],
    specs: Sequence[ResourceSpec],
    pod_requests: Sequence[int],
    version: Version,
    use_requested: bool,
) -> list[Usage]:
    """``calculateResourceAllocatableRequest`` for every configured resource, from the
    node's (allocatable, requested before the pod) per resource, leaving out (from
    1.22) resources the node has none of and extended resources the pod does not
    request."""
    skip = resource_scoring(version).skips_unallocatable
    out: list[Usage] = []
    for spec, pod_req, (a, before) in zip(specs, pod_requests, values):
        name = spec.name
        if skip and pod_req == 0 and is_scalar_resource(name):
            continue
        if _base_source(name, use_requested) is None:
            pod_req = 0
        if skip and a == 0:
            continue
        out.append(Usage(spec.weight, a, before + pod_req, before))
    return out


def score_by_usage(
    nodes: NodeSet,
    specs: Sequence[ResourceSpec],
    pod_requests: Sequence[int],
    version: Version,
    use_requested: bool,
    score: Callable[[list[Usage]], int],
) -> np.ndarray:
    """``score(usages)`` for every node, from the snapshot's columns; evaluated once per
    distinct (allocatable, requested) row, so nodes in the same state cost one call."""
    n = len(nodes)
    cols: list[np.ndarray] = []
    for spec in specs:
        src = _base_source(spec.name, use_requested)
        if src is None:
            cols += [np.zeros(n, np.int64), np.zeros(n, np.int64)]
            continue
        before = nodes.requested(spec.name) if src == "requested" else nodes.non_zero_requested(spec.name)
        cols += [nodes.allocatable(spec.name), before]
    if not n:
        return np.zeros(0, np.int64)
    codes, first = row_codes(cols)
    k = len(specs)
    out = np.array([score(usages_of([(int(cols[2 * i][j]), int(cols[2 * i + 1][j])) for i in range(k)], specs,
                                    pod_requests, version, use_requested))
                    for j in first.tolist()], np.int64)
    return out[codes]


def row_codes(cols: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per row (position) of the columns a code of its distinct values, and the first
    position of each code."""
    codes = np.zeros(len(cols[0]), np.int64)
    for col in cols:
        _, inv = np.unique(col, return_inverse=True)
        codes = codes * (int(inv.max()) + 1) + inv.reshape(-1)
        _, codes = np.unique(codes, return_inverse=True)  # keep the codes small
        codes = codes.reshape(-1)
    _, first = np.unique(codes, return_index=True)
    return codes, first


# ---- arguments ----------------------------------------------------------------------------------


def parse_resources(raw: Any, path: tuple, *, max_weight: int | None = 100,
                    message_style: str = "range") -> tuple[ResourceSpec, ...]:
    """A ``resources: [{name, weight}]`` list; omitted or empty: cpu and memory, weight 1.
    Weights outside (0, max_weight] are rejected as upstream's validation does."""
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
        if weight <= 0 or (max_weight is not None and weight > max_weight):
            rng = f"(0, {max_weight}]" if max_weight is not None else "(0, inf)"
            raise CaseError(f"resource weight of {item['name']} not in valid range {rng}",
                            (*path, i, "weight"), value=weight)
        out.append(ResourceSpec(item["name"], weight))
    return tuple(out)


def parse_shape(raw: Any, path: tuple, field_style: bool) -> tuple[ShapePoint, ...]:
    """A utilization shape ``[{utilization, score}]`` validated as upstream's
    validateFunctionShape: at least one point, utilization strictly increasing and in
    0..100, score in 0..10. ``field_style``: the field-path messages of 1.22+."""
    if not raw:
        raise CaseError("at least one point must be specified", path, value=raw)
    if not isinstance(raw, list):
        raise CaseError("a shape is a list of {utilization, score}", path, value=raw)
    pts: list[ShapePoint] = []
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


def scale_shape(shape: Sequence[ShapePoint], version: Version) -> tuple[ShapePoint, ...]:
    """Shape scores 0..10 scaled to the version's node score range."""
    k = resource_scoring(version).rtcr_shape_scale
    return tuple(ShapePoint(p.utilization, p.score * k) for p in shape)


# The priority function's shape when a policy gives none (up to 1.17): least-requested like.
LEGACY_DEFAULT_SHAPE = (ShapePoint(0, 10), ShapePoint(100, 0))


def check_args(args: Mapping[str, Any], allowed: Sequence[str], path: tuple, plugin: str) -> None:
    for k in args:
        if k not in allowed:
            raise CaseError(f"unknown argument {k!r} for {plugin} (known: {', '.join(allowed) or 'none'})",
                            (*path, k))
