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

Version differences: ``kspread.engine.versions.ResourceScoringFlags``. The arguments'
types (``ResourceSpec``, ``ShapePoint``) and defaults: ``kspread.engine.apis.config``;
their parsing and validation: ``kspread.engine.framework.args``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from kspread.engine.apis.config import MAX_UTILIZATION, ResourceSpec, ShapePoint
from kspread.engine.model import Pod
from kspread.engine.quantity import CPU, EPHEMERAL_STORAGE, MEMORY
from kspread.engine.resources import scoring_requests
from kspread.engine.snapshot import NodeSet
from kspread.engine.versions import Version, resource_scoring


def go_div(a: int, b: int) -> int:
    """Go's int64 division: truncation toward zero."""
    return int(go_divs(np.array([a], object), b)[0])


def go_divs(a: np.ndarray, b: int) -> np.ndarray:
    """``go_div`` over an array of numerators (int64 or exact-integer object arrays)."""
    q = abs(a) // abs(b)
    return np.where((a >= 0) == (b > 0), q, -q)


def go_round(x: float) -> int:
    """Go's math.Round for x >= 0: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def go_rounds(x: np.ndarray) -> np.ndarray:
    """``go_round`` over float64 values >= 0."""
    return np.floor(x + 0.5).astype(np.int64)


# int64 products below stay exact while the factors stay under this; kspread's
# "unlimited" allocatable (2**62) does not, and is computed with Python integers.
_INT64_SAFE = 2**63 // 1024

# what is derived from a read-only array that owns its data (the snapshot's allocatable
# columns: static), per (id, what); the entry keeps the array, so its id stays its own
_DERIVED: dict[tuple[int, str], tuple[np.ndarray, Any]] = {}
_DERIVED_KEPT = 32


def derived(a: np.ndarray, what: str, make: Callable[[np.ndarray], Any]) -> Any:
    """``make(a)``, kept for ``a`` when it cannot change (read only, its own data)."""
    if a.flags.writeable or not a.flags.owndata:
        return make(a)
    key = (id(a), what)
    hit = _DERIVED.get(key)
    if hit is None or hit[0] is not a:
        if len(_DERIVED) >= _DERIVED_KEPT:
            _DERIVED.clear()
        value = make(a)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        hit = _DERIVED[key] = (a, value)
    return hit[1]


def _small(x: np.ndarray) -> bool:
    return not len(x) or (int(x.max()) < _INT64_SAFE and int(x.min()) > -_INT64_SAFE)


def exact(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays as int64 when every value is small enough for the formulas' products
    (factors up to 1024) to stay in int64, else as exact-integer object arrays."""
    if all(derived(x, "small", _small) for x in arrays):
        return arrays
    return tuple(x.astype(object) for x in arrays)


def _one(requested: int, capacity: int) -> tuple[np.ndarray, np.ndarray]:
    return np.array([requested], object), np.array([capacity], object)


def is_scalar_resource(name: str) -> bool:
    """``IsScalarResourceName``: extended (prefixed) resources, hugepages, attachable volumes."""
    return "/" in name or name.startswith("hugepages-") or name.startswith("attachable-volumes-")


# ---- per-resource scores -------------------------------------------------------------------


def least_requested_scores(requested: np.ndarray, capacity: np.ndarray, max_score: int) -> np.ndarray:
    """``leastRequestedScore``: share of the capacity left free, 0..max_score; 0 when
    the capacity is 0 or exceeded."""
    requested, capacity = exact(requested, capacity)
    if not derived(capacity, "any zero", lambda c: bool((c == 0).any())):  # (no division by 0 to avoid)
        s = (capacity - requested) * max_score // capacity
        return np.where(requested > capacity, 0, s).astype(np.int64, copy=False)
    zero = capacity == 0
    safe = np.where(zero, 1, capacity)
    s = (capacity - requested) * max_score // safe
    return np.where(zero | (requested > capacity), 0, s).astype(np.int64, copy=False)


def least_requested_score(requested: int, capacity: int, max_score: int) -> int:
    return int(least_requested_scores(*_one(requested, capacity), max_score)[0])


def most_requested_scores(requested: np.ndarray, capacity: np.ndarray, max_score: int,
                          cap_requested: bool) -> np.ndarray:
    """``mostRequestedScore``: share of the capacity requested. Requested above the
    capacity scores as the capacity from 1.20 (``most_allocated_caps_requested``),
    0 before."""
    requested, capacity = exact(requested, capacity)
    over = requested > capacity
    safe = np.where(capacity == 0, 1, capacity)
    s = np.where(over, capacity, requested) * max_score // safe
    if not cap_requested:
        s = np.where(over, 0, s)
    return np.where(capacity == 0, 0, s).astype(np.int64)


def most_requested_score(requested: int, capacity: int, max_score: int, cap_requested: bool) -> int:
    return int(most_requested_scores(*_one(requested, capacity), max_score, cap_requested)[0])


def broken_linears(shape: Sequence[ShapePoint], p: np.ndarray) -> np.ndarray:
    """``buildBrokenLinearFunction``: the shape's score at utilization ``p``, linear
    between points (Go integer arithmetic), flat before the first and after the last."""
    out = np.full(len(p), shape[-1].score, dtype=p.dtype)
    for i in range(len(shape) - 1, -1, -1):  # the first point with p <= utilization wins
        pt = shape[i]
        if i == 0:
            val = np.full(len(p), shape[0].score, dtype=p.dtype)
        else:
            prev = shape[i - 1]
            val = prev.score + go_divs((pt.score - prev.score) * (p - prev.utilization),
                                       pt.utilization - prev.utilization)
        out = np.where(p <= pt.utilization, val, out)
    return out.astype(np.int64)


def broken_linear(shape: Sequence[ShapePoint], p: int) -> int:
    return int(broken_linears(shape, np.array([p], object))[0])


def rtcr_resource_scores(shape: Sequence[ShapePoint], requested: np.ndarray, capacity: np.ndarray,
                         floor_utilization: bool) -> np.ndarray:
    """RequestedToCapacityRatio's per-resource score: the shape at the utilization in
    percent; a capacity of 0 or exceeded counts as 100 %."""
    requested, capacity = exact(requested, capacity)
    safe = np.where(capacity == 0, 1, capacity)
    if floor_utilization:
        p = requested * MAX_UTILIZATION // safe
    else:
        p = MAX_UTILIZATION - (capacity - requested) * MAX_UTILIZATION // safe
    p = np.where((capacity == 0) | (requested > capacity), MAX_UTILIZATION, p)
    return broken_linears(shape, p)


def rtcr_resource_score(shape: Sequence[ShapePoint], requested: int, capacity: int, floor_utilization: bool) -> int:
    return int(rtcr_resource_scores(shape, *_one(requested, capacity), floor_utilization)[0])


# ---- combining resources ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Usage:
    """One configured resource on one node: weight, allocatable, requested with the pod
    (and without it, for the 1.36+ BalancedAllocation)."""

    weight: int
    allocatable: int
    requested: int
    requested_before: int = 0


@dataclass(frozen=True, slots=True)
class UsageColumn:
    """One configured resource over the nodes: weight, and per node allocatable,
    requested with the pod, requested before it, and whether the resource counts on the
    node (``present``; from 1.22 a node with none of it leaves it out)."""

    weight: int
    allocatable: np.ndarray
    requested: np.ndarray
    before: np.ndarray
    present: np.ndarray


def columns_of(usages: Sequence[Usage]) -> list[UsageColumn]:
    """One node's usages as columns (of one node)."""
    return [UsageColumn(u.weight, np.array([u.allocatable], np.int64), np.array([u.requested], np.int64),
                        np.array([u.requested_before], np.int64), np.ones(1, bool)) for u in usages]


def weighted_averages(cols: Sequence[UsageColumn], per_resource, n: int) -> np.ndarray:
    """``nodeScore / weightSum`` of the per-resource scores (Least / MostAllocated);
    0 when no resource is left to score (from 1.22, see ``usage_columns``)."""
    weight_total = sum(c.weight for c in cols)
    if weight_total > 0 and all(c.present.all() for c in cols):
        # every node scores every resource: one weight sum, no masks (the same integers)
        node_score = np.zeros(n, np.int64)
        for c in cols:
            node_score += per_resource(c.requested, c.allocatable) * c.weight
        return node_score // weight_total
    return masked_weighted_averages(cols, per_resource, n)


def masked_weighted_averages(cols: Sequence[UsageColumn], per_resource, n: int) -> np.ndarray:
    """``weighted_averages`` with each resource counted where it is present."""
    node_score = np.zeros(n, np.int64)
    weight_sum = np.zeros(n, np.int64)
    for c in cols:
        node_score += np.where(c.present, per_resource(c.requested, c.allocatable) * c.weight, 0)
        weight_sum += np.where(c.present, c.weight, 0)
    return np.where(weight_sum == 0, 0, node_score // np.where(weight_sum == 0, 1, weight_sum))


def rtcr_combines(cols: Sequence[UsageColumn], per_resource, weighted: bool, n: int) -> np.ndarray:
    """RequestedToCapacityRatio: weighted mean of the positive per-resource scores,
    rounded (math.Round); up to 1.15 the plain integer mean of cpu and memory."""
    if not weighted:
        total = np.zeros(n, np.int64)
        count = np.zeros(n, np.int64)
        for c in cols:
            total += np.where(c.present, per_resource(c.requested, c.allocatable), 0)
            count += c.present
        return total // np.where(count == 0, 1, count)
    node_score = np.zeros(n, np.int64)
    weight_sum = np.zeros(n, np.int64)
    for c in cols:
        s = per_resource(c.requested, c.allocatable)
        use = c.present & (s > 0)
        node_score += np.where(use, s * c.weight, 0)
        weight_sum += np.where(use, c.weight, 0)
    mean = node_score.astype(np.float64) / np.where(weight_sum == 0, 1, weight_sum).astype(np.float64)
    return np.where(weight_sum == 0, 0, go_rounds(mean))


def _fractions(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """float64(requested) / float64(capacity) (IEEE, as Go); capacity 0 gives 1.0."""
    r = requested.astype(np.float64)
    c = capacity.astype(np.float64)
    return np.where(capacity == 0, 1.0, r / np.where(capacity == 0, 1.0, c))


def balanced_legacies(cpu: UsageColumn, memory: UsageColumn, max_score: int) -> np.ndarray:
    """BalancedResourceAllocation up to 1.21: ``(1 - |cpuFraction - memFraction|) * max``,
    0 when either fraction reaches 1 (a capacity of 0 counts as fraction 1)."""
    cf = _fractions(cpu.requested, cpu.allocatable)
    mf = _fractions(memory.requested, memory.allocatable)
    score = np.trunc((1 - np.fabs(cf - mf)) * float(max_score)).astype(np.int64)
    return np.where((cf >= 1) | (mf >= 1), 0, score)


def balanced_legacy(cpu: Usage, memory: Usage, max_score: int) -> int:
    c, m = columns_of([cpu, memory])
    return int(balanced_legacies(c, m, max_score)[0])


def balanced_std_scores(pairs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], max_score: int,
                        n: int) -> np.ndarray:
    """From 1.22: ``(1 - std) * max`` over the fractions (capped at 1) of the resources
    with allocatable > 0; std is |f1 - f2| / 2 for two, the population standard deviation
    for more, 0 for fewer. ``pairs``: per resource (requested, allocatable, present).
    Sums run over the resources in order, as upstream's loop (adding 0.0 for a resource
    a node leaves out changes no bit)."""
    if _every_node_uses_all(pairs):
        return _std_scores_all_used([r for r, _, _ in pairs], [a.astype(np.float64) for _, a, _ in pairs],
                                    max_score, n)
    count = np.zeros(n, np.int64)
    total = np.zeros(n, np.float64)
    first = np.zeros(n, np.float64)
    second = np.zeros(n, np.float64)
    fracs = []
    for requested, allocatable, present in pairs:
        use = present & (allocatable != 0)
        f = np.minimum(_fractions(requested, allocatable), 1.0)
        total = total + np.where(use, f, 0.0)
        first = np.where(use & (count == 0), f, first)
        second = np.where(use & (count == 1), f, second)
        count += use
        fracs.append((f, use))
    std = np.zeros(n, np.float64)
    two = count == 2
    if two.any():
        std = np.where(two, np.fabs((first - second) / 2), std)
    many = count > 2
    if many.any():
        mean = total / np.where(many, count, 1).astype(np.float64)
        acc = np.zeros(n, np.float64)
        for f, use in fracs:
            acc = acc + np.where(use, (f - mean) * (f - mean), 0.0)
        std = np.where(many, np.sqrt(acc / np.where(many, count, 1).astype(np.float64)), std)
    return np.trunc((1 - std) * float(max_score)).astype(np.int64)


def _every_node_uses_all(pairs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> bool:
    """Whether every node counts every resource (present, allocatable > 0)."""
    return all(derived(allocatable, "all != 0", lambda a: bool((a != 0).all()))
               if present is derived(allocatable, "!= 0", _nonzero) else (present & (allocatable != 0)).all()
               for _, allocatable, present in pairs)


def _nonzero(a: np.ndarray) -> np.ndarray:
    return a != 0


def _as_float(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def _std_scores_all_used(requested: Sequence[np.ndarray], allocatable: Sequence[np.ndarray], max_score: int,
                         n: int, as_float: bool = False) -> np.ndarray:
    """``balanced_std_scores`` where every node counts every resource: the same
    operations without the masks (``allocatable`` as float64); ``as_float``: the
    (integral) scores as float64."""
    fs = []
    for r, a in zip(requested, allocatable):
        f = np.divide(r, a)  # (int64 / float64: as float64(r) / a)
        np.minimum(f, 1.0, out=f)
        fs.append(f)
    if len(fs) == 2:
        std = fs[0]
        std -= fs[1]
        std /= 2
        np.fabs(std, out=std)
    elif len(fs) > 2:
        total = np.zeros(n, np.float64)
        for f in fs:
            total += f
        mean = total / float(len(fs))
        acc = np.zeros(n, np.float64)
        for f in fs:
            f -= mean
            f *= f
            acc += f
        acc /= float(len(fs))
        std = np.sqrt(acc, out=acc)
    else:
        std = np.zeros(n, np.float64)
    np.subtract(1.0, std, out=std)
    std *= float(max_score)
    np.trunc(std, out=std)
    return std if as_float else std.astype(np.int64)


def balanced_std_score(pairs: Sequence[tuple[int, int]], max_score: int) -> int:
    cols = [(np.array([r], np.int64), np.array([a], np.int64), np.ones(1, bool)) for r, a in pairs]
    return int(balanced_std_scores(cols, max_score, 1)[0])


def balanced_change_scores(cols: Sequence[UsageColumn], max_score: int, n: int,
                           without: np.ndarray | None = None) -> np.ndarray:
    """From 1.36 (PR #135573): how the pod changes the node's balance,
    ``max/2 + (max/2 + with_pod - without_pod) / 2``; ``without``: the scores without
    the pod when known (``balanced_without_scores``: they do not depend on the pod)."""
    if _every_node_uses_all([(c.requested, c.allocatable, c.present) for c in cols]):
        # (the presence checked and the allocatable converted once for both)
        alloc = [derived(c.allocatable, "float64", _as_float) for c in cols]
        with_pod = _std_scores_all_used([c.requested for c in cols], alloc, max_score, n)
        if without is None:
            without = _std_scores_all_used([c.before for c in cols], alloc, max_score, n)
    else:
        with_pod = balanced_std_scores([(c.requested, c.allocatable, c.present) for c in cols], max_score, n)
        if without is None:
            without = balanced_without_scores(cols, max_score, n)
    return max_score // 2 + go_divs(max_score // 2 + with_pod - without, 2)


def balanced_without_scores(cols: Sequence[UsageColumn], max_score: int, n: int) -> np.ndarray:
    """``balanced_std_scores`` of the nodes without the pod (the ``before`` columns)."""
    return balanced_std_scores([(c.before, c.allocatable, c.present) for c in cols], max_score, n)


def balanced_change_score(usages: Sequence[Usage], max_score: int) -> int:
    return int(balanced_change_scores(columns_of(usages), max_score, 1)[0])


# ---- every node scoring every resource: the formulas above with no mask and no check left --------

# weight, allocatable, requested with the pod, before, allocatable as float64, the largest
# allocatable of the snapshot's column (a bound for the set's)
PlainColumn = tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]

_FLOAT_EXACT = 2**53  # integers below are exact in float64


def plain_columns(nodes: NodeSet, specs: Sequence[ResourceSpec], pod_requests: Sequence[int], version: Version,
                  use_requested: bool, check_requested: bool = True) -> list[PlainColumn] | None:
    """``usage_columns`` where every resource left in counts on every node (a scored
    resource, allocatable above 0 everywhere) and every allocatable is small enough for
    int64 (``exact``), and so is every requested sum with the pod unless
    ``check_requested`` is false (BalancedAllocation: its general form adds them in int64
    too); None otherwise (the general formulas then apply). What is checked on the
    allocatable is checked once on the snapshot's column (static: once per snapshot,
    ``Snapshot.static_value``), which bounds any set's; the requested sums, over a set of
    the snapshot's own columns, by the bounds of the column (``Snapshot.bounds``) when
    those suffice, else by their least and largest value."""
    skip = resource_scoring(version).skips_unallocatable
    snap = nodes.snapshot
    whole = snap is not None and nodes.positions is snap.all_positions
    bounded = snap is not None and nodes.overrides is None
    out: list[PlainColumn] = []
    for spec, pod_req in zip(specs, pod_requests):
        name = spec.name
        if skip and pod_req == 0 and is_scalar_resource(name):
            continue
        static: tuple[str, np.ndarray, np.ndarray, int] | None
        if snap is not None:
            static = snap.static_value(("plain_columns", name, use_requested),  # type: ignore[assignment]
                                       partial(_plain_static, snap.allocatable, name, use_requested))
        else:
            static = _plain_static(nodes.allocatable, name, use_requested)
        if static is None:
            return None
        src, column, af_all, a_max = static
        if snap is None or whole:
            a, af = column, af_all
        else:
            a = column[nodes.positions]
            af = af_all[nodes.positions]
        before = nodes.requested(name) if src == "requested" else nodes.non_zero_requested(name)
        requested = before + pod_req
        if check_requested:
            if bounded:
                lo, hi = snap.bounds(src, name)  # type: ignore[union-attr]
                fits = lo + pod_req > -_INT64_SAFE and hi + pod_req < _INT64_SAFE
            else:
                fits = False
            if not fits and not _small(requested):
                return None
        out.append((spec.weight, a, requested, before, af, a_max))
    return out


def _plain_static(allocatable: Callable[[str], np.ndarray], name: str,
                  use_requested: bool) -> tuple[str, np.ndarray, np.ndarray, int] | None:
    """What ``plain_columns`` reads of the allocatable column of resource ``name``
    (``allocatable(name)``): (the requested sum it reads, the column, as float64, its
    largest value), or None where the plain formulas do not apply."""
    src = _base_source(name, use_requested)
    if src is None:
        return None
    column = allocatable(name)
    if not len(column) or not derived(column, "all != 0", _all_nonzero) or not derived(column, "small", _small):
        return None
    return src, column, derived(column, "float64", _as_float), derived(column, "max", _largest)


def _all_nonzero(a: np.ndarray) -> bool:
    return bool((a != 0).all())


def _largest(a: np.ndarray) -> int:
    return int(a.max()) if len(a) else 0


def least_allocated_plain(cols: Sequence[PlainColumn], max_score: int) -> np.ndarray | None:
    """``weighted_averages`` of ``least_requested_scores`` over ``plain_columns``
    (None when no resource is left: the general form scores 0).

    Where every allocatable ``a`` keeps ``a * (max_score + 1)`` below 2**53 (cpu in
    millicores, memory in bytes up to 80 TiB), ``(a - r) * max_score // a`` runs in
    float64, with ``a - r`` clipped at 0 (a request above ``a`` scores 0, as one equal to
    it): every operand and product is an integer below 2**53, so exact, and the rounded
    quotient of ``x / a`` cannot reach the next integer (that needs ``(q + 1) * a`` at or
    above 2**53, where ``q + 1 <= max_score + 1`` and ``x < a * max_score``), so its
    floor is the integer quotient. int64's floor division takes several times as long."""
    total: np.ndarray | None = None
    weights = 0
    in_float = all(a_max * (max_score + 1) < _FLOAT_EXACT for _, _, _, _, _, a_max in cols)
    for weight, a, requested, _, af, _ in cols:
        if in_float:
            x = np.subtract(a, requested)
            np.maximum(x, 0, out=x)
            s = x.astype(np.float64)
            s *= max_score
            s /= af
            np.floor(s, out=s)
        else:
            s = (a - requested) * max_score // a
            s[requested > a] = 0
        if weight != 1:
            s *= weight
        if total is None:
            total = s
        else:
            total += s
        weights += weight
    if total is None or weights <= 0:
        return None
    if in_float:  # (integers up to max_score * the weights: exact, as their quotient's floor)
        total /= weights
        np.floor(total, out=total)
        return total.astype(np.int64)
    return total // weights


def balanced_std_plain(cols: Sequence[PlainColumn], max_score: int, n: int) -> np.ndarray:
    """``balanced_std_scores`` over ``plain_columns`` (1.22 to 1.35)."""
    return _std_scores_all_used([r for _, _, r, _, _, _ in cols], [af for _, _, _, _, af, _ in cols],
                                max_score, n)


def balanced_change_plain(cols: Sequence[PlainColumn], max_score: int, n: int,
                          without: np.ndarray | None) -> np.ndarray:
    """``balanced_change_scores`` over ``plain_columns``."""
    alloc = [af for _, _, _, _, af, _ in cols]
    with_pod = _std_scores_all_used([r for _, _, r, _, _, _ in cols], alloc, max_score, n, as_float=True)
    if without is None:
        without = _std_scores_all_used([b for _, _, _, b, _, _ in cols], alloc, max_score, n)
    # max/2 + (max/2 + with - without) / 2 (Go's division: toward zero), on integers below
    # 2**53 held as float64: exact
    d = with_pod
    d += max_score // 2
    d -= without
    d *= 0.5
    np.trunc(d, out=d)
    d += max_score // 2
    return d.astype(np.int64)


# ---- one node on Python numbers (ColumnMemo rows): the formulas above, element by element ----------

_INT64_MAX = 2**63 - 1


def least_requested_row(requested: int, capacity: int, max_score: int) -> int:
    """``least_requested_scores`` of one node (exact integers, as its object path)."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * max_score // capacity


def weighted_average_row(scored: Sequence[tuple[int, int, bool]]) -> int:
    """``weighted_averages`` of one node: (score, weight, present) per resource."""
    total = weight_sum = 0
    for score, weight, present in scored:
        if present:
            total += score * weight
            weight_sum += weight
    return total // weight_sum if weight_sum else 0


def balanced_std_row(pairs: Sequence[tuple[int, int, bool]], max_score: int) -> int:
    """``balanced_std_scores`` of one node: (requested, allocatable, present) per
    resource, the same float64 operations in the same order (a resource the node leaves
    out adds nothing, where the array form adds 0.0)."""
    count = 0
    total = first = second = 0.0
    used: list[float] = []
    for requested, allocatable, present in pairs:
        if not present or allocatable == 0:
            continue
        f = min(float(requested) / float(allocatable), 1.0)
        total = total + f
        if count == 0:
            first = f
        elif count == 1:
            second = f
        count += 1
        used.append(f)
    std = 0.0
    if count == 2:
        std = abs((first - second) / 2)
    elif count > 2:
        mean = total / float(count)
        acc = 0.0
        for f in used:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(count))
    return int(math.trunc((1 - std) * float(max_score)))


def balanced_change_row(cols: Sequence[tuple[int, int, int, int, bool]], max_score: int) -> int:
    """``balanced_change_scores`` of one node: (weight, allocatable, requested, before,
    present) per resource."""
    with_pod = balanced_std_row([(r, a, p) for _, a, r, _, p in cols], max_score)
    without = balanced_without_row(cols, max_score)
    d = max_score // 2 + with_pod - without
    return max_score // 2 + (d // 2 if d >= 0 else -(-d // 2))


def balanced_without_row(cols: Sequence[tuple[int, int, int, int, bool]], max_score: int) -> int:
    """``balanced_without_scores`` of one node (``balanced_change_row``'s columns)."""
    return balanced_std_row([(b, a, p) for _, a, _, b, p in cols], max_score)


UsagePlan = list[tuple[int, "np.ndarray | None", "np.ndarray | None", int, bool]]


def usage_plan(snapshot, specs: Sequence[ResourceSpec], pod_requests: Sequence[int], version: Version,
               use_requested: bool) -> UsagePlan:
    """What ``usage_columns`` reads for each resource it leaves in, as ``usage_row``
    reads it per node: (weight, the snapshot's allocatable column, its requested or
    non-zero requested column (None, None: not a scored resource), the pod's request,
    whether a node without the resource leaves it out). The columns are the snapshot's
    own, kept current in place."""
    skip = resource_scoring(version).skips_unallocatable
    out: UsagePlan = []
    for spec, pod_req in zip(specs, pod_requests):
        name = spec.name
        if skip and pod_req == 0 and is_scalar_resource(name):
            continue
        src = _base_source(name, use_requested)
        if src is None:
            out.append((spec.weight, None, None, 0, skip))
        else:
            before = snapshot.requested(name) if src == "requested" else snapshot.non_zero_requested(name)
            out.append((spec.weight, snapshot.allocatable(name), before, pod_req, skip))
    return out


def usage_row(plan: UsagePlan, i: int) -> list[tuple[int, int, int, int, bool]] | None:
    """``usage_columns`` of the node at snapshot position ``i`` (``usage_plan``):
    (weight, allocatable, requested with the pod, before, present) per resource left in;
    None where the int64 sum with the pod would wrap around (the arrays' arithmetic, not
    Python's)."""
    out: list[tuple[int, int, int, int, bool]] = []
    for weight, allocatable, before_col, pod_req, skip in plan:
        if allocatable is None or before_col is None:
            a = before = 0
        else:
            a = allocatable.item(i)
            before = before_col.item(i)
        requested = before + pod_req
        if requested > _INT64_MAX:
            return None
        out.append((weight, a, requested, before, a != 0 if skip else True))
    return out


# ---- what a scorer sees on a node ----------------------------------------------------------------


def pod_scoring_requests(pod: Pod, version: Version, names: Sequence[str], use_requested: bool) -> list[int]:
    """The pod's request per resource name, non-zero unless ``use_requested``; with its
    status resources while InPlacePodVerticalScaling is on (``calculatePodResourceRequest``'s
    UseStatusResources)."""
    flags = resource_scoring(version)
    include_init = flags.init_containers_in_nonzero
    reqs = scoring_requests(pod, version, non_zero=not use_requested, include_init=include_init,
                            overhead_cpu_in_cores=flags.overhead_cpu_in_cores, use_status=True)
    return [reqs.get(n, 0) for n in names]


def _base_source(name: str, use_requested: bool) -> str | None:
    """Which requested sum a resource reads: "requested" (real requests), "non_zero"
    (NonZeroRequested: cpu / memory with defaults), or None (not a scored resource)."""
    if name in (CPU, MEMORY):
        return "requested" if use_requested else "non_zero"
    if name == EPHEMERAL_STORAGE or is_scalar_resource(name):
        return "requested"
    return None


def usage_columns(
    nodes: NodeSet,
    specs: Sequence[ResourceSpec],
    pod_requests: Sequence[int],
    version: Version,
    use_requested: bool,
) -> list[UsageColumn]:
    """``calculateResourceAllocatableRequest`` for every configured resource over the
    nodes, leaving out (from 1.22) resources a node has none of and extended resources
    the pod does not request."""
    skip = resource_scoring(version).skips_unallocatable
    n = len(nodes)
    out: list[UsageColumn] = []
    for spec, pod_req in zip(specs, pod_requests):
        name = spec.name
        if skip and pod_req == 0 and is_scalar_resource(name):
            continue
        src = _base_source(name, use_requested)
        if src is None:
            a = before = np.zeros(n, np.int64)
            pod_req = 0
        else:
            a = nodes.allocatable(name)
            before = nodes.requested(name) if src == "requested" else nodes.non_zero_requested(name)
        present = derived(a, "!= 0", _nonzero) if skip else np.ones(n, bool)
        out.append(UsageColumn(spec.weight, a, before + pod_req, before, present))
    return out
