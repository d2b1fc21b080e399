"""NodeResourcesFit: does the node have room for the pod's resource requests?
(framework/plugins/noderesources/fit.go; up to 1.17 the PodFitsResources predicate.)

From 1.22 the plugin also scores (PreScore / Score, no NormalizeScore) with the
strategy of its ``scoringStrategy`` args: LeastAllocated (default), MostAllocated
or RequestedToCapacityRatio over ``resources`` (default cpu and memory, weight 1),
from the non-zero requests (``kspread.engine.plugins.noderesources_scoring``). Up to 1.21
it has no Score extension point: the registered factory builds the filter-only
class there, so a profile scoring with it is rejected as upstream rejects it.

What the filter checks, in this order (every failure is kept as a reason):

1. pod count: ``len(node pods) + 1 > allocatable pods`` -> "Too many pods" (from 1.18;
   the PodFitsResources predicate said "Insufficient pods"). Checked even for a pod
   that requests nothing;
2. if the pod requests no cpu, memory, ephemeral-storage and names no scalar
   resource, nothing else is checked;
3. cpu, memory, ephemeral-storage: ``request > allocatable - requested`` ->
   "Insufficient <name>". From 1.28 (PR #116408) a zero request of a resource is
   not compared (before, a zero request failed on a node already over-committed);
4. scalar resources (extended ``vendor/name``, ``hugepages-*``,
   ``attachable-volumes-*``): the same comparison, "Insufficient <name>"; from 1.26
   a zero request is skipped (PR #111544: in v1.26.15, not in v1.25.16). Upstream
   walks a Go map here, so the order of several scalar reasons is unspecified;
   kspread sorts them by name.

The status is Unschedulable, and from 1.34 (PR #131345) UnschedulableAndUnresolvable
when any failing request exceeds the node's whole allocatable (preemption cannot
help there; the pod count never makes it unresolvable).

PreFilter computes the request once (``kspread.engine.resources.pod_requests``: containers,
init containers, sidecars, overhead). From 1.28, with the SidecarContainers gate
off, a pod with a restartable init container is rejected by PreFilter
("Pod has a restartable init container and the SidecarContainers feature is
disabled", UnschedulableAndUnresolvable).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kspread.engine.framework.interface import (
    Filtered,
    FilterPlugin,
    Plugin,
    PodEvent,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SUCCESS, Code, CycleState, Status, error
from kspread.engine.model import Node, Pod
from kspread.engine.plugins.resource_allocation import derived
from kspread.engine.quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kspread.engine.resources import LastRequests, pod_requests
from kspread.engine.snapshot import ColumnMemo, NodeInfo, NodeSet, Snapshot
from kspread.engine.versions import Version, resource_scoring

PRE_FILTER_KEY = "PreFilterNodeResourcesFit"
SIDECAR_DISABLED_REASON = "Pod has a restartable init container and the SidecarContainers feature is disabled"
_BASIC = (CPU, MEMORY, EPHEMERAL_STORAGE)


# ---- version behaviour --------------------------------------------------------------


def too_many_pods_reason(version: Version) -> str:
    """The pod-count reason: the predicate's InsufficientResourceError up to 1.17,
    the plugin's own text from 1.18."""
    return "Insufficient pods" if version.minor <= 17 else "Too many pods"


def skips_zero_basic_requests(version: Version) -> bool:
    """cpu / memory / ephemeral-storage compared only when requested (> 0), from 1.28
    (PR #116408; checked against the vendored plugins: 1.27.16 still compares a zero
    request, 1.28.4 does not)."""
    return version.minor >= 28


def skips_zero_scalar_requests(version: Version) -> bool:
    """Scalar resources requested with quantity 0 are skipped, from 1.26."""
    return version.minor >= 26


def unresolvable_when_larger_than_node(version: Version) -> bool:
    """UnschedulableAndUnresolvable when a request exceeds the node's allocatable, from 1.34."""
    return version.minor >= 34


def rejects_sidecars_when_gate_off(version: Version) -> bool:
    """PreFilter rejects restartable init containers when SidecarContainers is off (1.28+)."""
    return version.minor >= 28 and not version.gate("SidecarContainers")


# ---- the request and the check --------------------------------------------------------


def is_scalar_resource(name: str) -> bool:
    """``IsScalarResourceName``: extended (``domain/name``) and other prefixed
    resources, hugepages and attachable volumes. Other bare names are not tracked."""
    return "/" in name or name.startswith("hugepages-") or name.startswith("attachable-volumes-")


def dra_extended_resource(version: Version) -> bool:
    """DRAExtendedResource (modelled from 1.35): NodeResourcesFit leaves an extended
    resource backed by a DeviceClass to DynamicResources on a node that has none of it;
    NodeResourcesFit and BalancedAllocation sign no pod while it is on (1.34-1.35), or
    from 1.36 no pod that requests a resource a DeviceClass backs (unsigned_for_dra)."""
    return version.minor >= 34 and version.gate("DRAExtendedResource")


def signs_no_pod_for_dra(version: Version) -> bool:
    """1.34-1.35: with DRAExtendedResource on, SignPod answers Unschedulable for every pod."""
    return dra_extended_resource(version) and version.minor < 36


def resources_signature(pod: Pod, version: Version, handle) -> tuple[tuple[str, Any], ...] | None:
    """SignPod of NodeResourcesFit and BalancedAllocation: the pod's requests
    (computePodResourceRequest); None (not signable) while DRAExtendedResource is on in
    1.34-1.35, and from 1.36 when the pod requests a scalar resource (a non-zero amount)
    that a DeviceClass backs (shouldDelegateResourceToDRA without a node: the DRA
    manager's DeviceClassResolver)."""
    if signs_no_pod_for_dra(version):
        return None
    request = pod_resource_request(pod, version)
    if dra_extended_resource(version):
        backed = dra_backed_resources(handle, version)
        if any(amount and is_scalar_resource(name) and name in backed for name, amount in request.items()):
            return None
    return (("Resources", tuple(sorted(request.items()))),)


class DraBacked(str):
    """A resource of ``comparisons`` that a DeviceClass backs (DRAExtendedResource):
    shouldDelegateResourceToDRA leaves it to DynamicResources on a node whose
    allocatable has none of it, so the comparison fails only where the node has some."""

    __slots__ = ()


def dra_backed_resources(handle, version: Version) -> frozenset[str]:
    """The resource names a DeviceClass backs (the ExtendedResourceCache), when the gate is on."""
    claims = getattr(handle, "claims", None)
    if not dra_extended_resource(version) or claims is None:
        return frozenset()
    return frozenset(claims.objects.extended_resources)


def pod_resource_request(pod: Pod, version: Version) -> dict[str, int]:
    """``computePodResourceRequest``: the pod's effective requests (only the resources
    the scheduler tracks: cpu, memory, ephemeral-storage and scalar resources)."""
    return {k: v for k, v in pod_requests(pod, version).items() if k in _BASIC or is_scalar_resource(k)}


def fits_empty_node(pod: Pod, node: Node, version: Version, dra_backed: frozenset[str] = frozenset()) -> bool:
    """isFit: the pod fits the node with no pod on it (room for one pod, each resource it
    requests within the node's allocatable; a resource a DeviceClass backs is left to
    DynamicResources where the node has none)."""
    if node.allocatable.get("pods", 0) < 1:
        return False
    return all(amount <= node.allocatable.get(name, 0) or (name in dra_backed and node.allocatable.get(name, 0) <= 0)
               for name, amount in pod_requests(pod, version).items() if amount > 0)


def requested_resources_increased(pod: Pod, old: Node, new: Node, version: Version) -> bool:
    """haveAnyRequestedResourcesIncreased: more pods allowed, or more of a resource the pod
    requests."""
    if new.allocatable.get("pods", 0) > old.allocatable.get("pods", 0):
        return True
    return any(amount > 0 and new.allocatable.get(name, 0) > old.allocatable.get(name, 0)
               for name, amount in pod_requests(pod, version).items())


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    resource: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


@dataclass(slots=True)
class ResourceCheck:
    """One of fitsRequest's comparisons over a set of nodes: ``failed`` per node (and
    ``unresolvable``: the request exceeds the node's whole allocatable)."""

    resource: str
    reason: str
    requested: int
    used: np.ndarray
    capacity: np.ndarray
    failed: np.ndarray
    unresolvable: np.ndarray | None = None


def comparisons(
    request: Mapping[str, int],
    version: Version,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
    dra_backed: frozenset[str] = frozenset(),
) -> list[tuple[str, str, int]]:
    """``fitsRequest``'s comparisons for a request, in upstream's order (reasons of one
    node are its failed comparisons in this order): (resource, reason, requested), the
    pod count (requested 1) first."""
    out = [(PODS, too_many_pods_reason(version), 1)]
    if all(request.get(r, 0) == 0 for r in _BASIC) and not any(is_scalar_resource(k) for k in request):
        return out
    skip_zero = skips_zero_basic_requests(version)
    for r in _BASIC:
        req = request.get(r, 0)
        if skip_zero and req <= 0:
            continue
        out.append((r, f"Insufficient {r}", req))
    for r in sorted(k for k in request if is_scalar_resource(k)):
        req = request[r]
        if req == 0 and skips_zero_scalar_requests(version):
            continue
        if _is_extended(r) and (r in ignored_resources or r.split("/", 1)[0] in ignored_groups):
            continue
        out.append((DraBacked(r) if r in dra_backed else r, f"Insufficient {r}", req))
    return out


class _Whole:
    """Every node of a snapshot, in its order: the snapshot's own columns (read only)."""

    __slots__ = ("snapshot",)

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def pod_count(self) -> np.ndarray:
        return self.snapshot.pod_count

    def allocatable(self, resource: str) -> np.ndarray:
        return self.snapshot.allocatable(resource)

    def requested(self, resource: str) -> np.ndarray:
        return self.snapshot.requested(resource)


def _failed(resource: str, req: int, nodes: NodeSet | _Whole) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One comparison over the nodes: (failed, used, capacity). The pod count fails
    where ``pods + 1 > allowed``, a resource where ``request > allocatable - requested``;
    int64 throughout: allocatable is at most 2**62 and requests are non-negative, so
    ``allocatable - requested`` is exact."""
    if resource == PODS:
        used, capacity = nodes.pod_count(), nodes.allocatable(PODS)
        return used + req > capacity, used, capacity
    capacity, used = nodes.allocatable(resource), nodes.requested(resource)
    if isinstance(resource, DraBacked):
        return (req > capacity - used) & (capacity > 0), used, capacity
    return req > capacity - used, used, capacity


def fits_request_nodes(
    request: Mapping[str, int],
    nodes: NodeSet,
    version: Version,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
    dra_backed: frozenset[str] = frozenset(),
) -> list[ResourceCheck]:
    """``fitsRequest`` over the nodes: every comparison (``comparisons``) with its
    per-node result, in upstream's order."""
    out: list[ResourceCheck] = []
    for r, reason, req in comparisons(request, version, ignored_resources, ignored_groups, dra_backed):
        failed, used, capacity = _failed(r, req, nodes)
        out.append(ResourceCheck(r, reason, req, used, capacity, failed, None if r == PODS else req > capacity))
    return out


def fits_request(
    request: Mapping[str, int],
    node_info: NodeInfo,
    version: Version,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
    dra_backed: frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """``fitsRequest`` on one node: every resource it lacks for ``request``, in upstream's order."""
    checks = fits_request_nodes(request, NodeSet.of(node_info), version, ignored_resources, ignored_groups,
                                dra_backed)
    return [InsufficientResource(c.resource, c.reason, c.requested, int(c.used[0]), int(c.capacity[0]),
                                 bool(c.unresolvable[0]) if c.unresolvable is not None else False)
            for c in checks if c.failed[0]]


def failure_keys(plan: Sequence[tuple[str, str, int]], nodes: NodeSet | _Whole, version: Version) -> np.ndarray:
    """Per node which comparisons of ``plan`` fail, as one key: bit ``k + 1`` for the
    k-th comparison, bit 0 when a failing request exceeds the node's whole allocatable
    (only from 1.34, where that makes the status unresolvable; never the pod count);
    0 where the node fits. uint8 for up to 7 comparisons (int64 up to 62, else Python
    integers). Over most of a snapshot's nodes (its own columns), the comparisons run
    over all its nodes and the keys are gathered."""
    if isinstance(nodes, NodeSet) and nodes.snapshot is not None and nodes.overrides is None:
        snap, positions = nodes.snapshot, nodes.positions
        if positions is not None and 2 * len(positions) >= len(snap.node_list):
            every = failure_keys(plan, _Whole(snap), version)
            return every if positions is snap.all_positions else every.take(positions)
    dtype = np.uint8 if len(plan) <= 7 else np.int64 if len(plan) <= 62 else object
    unres_matters = unresolvable_when_larger_than_node(version)
    keys: np.ndarray | None = None
    unres: np.ndarray | None = None
    for k, (r, _, req) in enumerate(plan):
        if r == PODS:
            used, capacity = nodes.pod_count(), nodes.allocatable(PODS)
        else:
            capacity, used = nodes.allocatable(r), nodes.requested(r)
        # what is left per node (exact: see ``_failed``); a request within the least of
        # it fails nowhere (``req > left`` is ``_failed``'s comparison, the pod count's too)
        left = capacity - used
        if not len(left) or req <= int(left.min()):
            continue
        failed = req > left
        if isinstance(r, DraBacked):  # (``_failed``: a node without it leaves it to DynamicResources)
            failed &= capacity > 0
        # (a request no node's allocatable is below exceeds none: nothing to mark)
        if unres_matters and r != PODS and req > derived(capacity, "min", _least):
            over = failed & (req > capacity)
            unres = over if unres is None else unres | over
        bits = (failed.view(np.uint8) if dtype is np.uint8 else failed.astype(dtype)) << (k + 1)
        if keys is None:
            keys = bits
        else:
            keys |= bits
    if keys is None:  # (no comparison fails on any node)
        return np.zeros(len(nodes.pod_count()), dtype)
    if unres is not None:
        keys |= unres.view(np.uint8) if dtype is np.uint8 else unres.astype(dtype)
    return keys


def _least(a: np.ndarray) -> int:
    return int(a.min()) if len(a) else 0


def failure_key_row(plan: Sequence[tuple[str, str, int]], snapshot: Snapshot, i: int, version: Version) -> int:
    """``failure_keys`` of the node at snapshot position ``i``, on Python integers (the
    int64 comparisons there are exact: see ``_failed``)."""
    unres_matters = unresolvable_when_larger_than_node(version)
    key = 0
    for k, (r, _, req) in enumerate(plan):
        if r == PODS:
            failed = snapshot.pod_count.item(i) + req > snapshot.allocatable(PODS).item(i)
        else:
            capacity = snapshot.allocatable(r).item(i)
            failed = req > capacity - snapshot.requested(r).item(i) and not (isinstance(r, DraBacked)
                                                                                and capacity <= 0)
            if unres_matters and failed and req > capacity:
                key |= 1
        if failed:
            key |= 1 << (k + 1)
    return key


def statuses_of(plan: Sequence[tuple[str, str, int]], keys: np.ndarray, version: Version,
                cache: dict | None = None) -> Filtered:
    """Per node the status of its failed comparisons (``failure_keys``), made once per
    distinct key (and kept in ``cache``, key -> status, when given)."""
    n = len(keys)
    if not keys.any():
        return Filtered.passing(n)
    if keys.dtype == np.uint8:
        # the distinct keys (ascending) by counting
        present = np.bincount(keys)
        present[0] = 0
        distinct = present.nonzero()[0]
        if len(distinct) == 1:
            ids = (keys != 0).astype(np.intp)
        else:
            lookup = np.zeros(len(present), np.intp)
            lookup[distinct] = np.arange(1, len(distinct) + 1)
            ids = lookup.take(keys)
        found = distinct.tolist()
    else:
        failing = keys.nonzero()[0]
        values, inverse = np.unique(keys[failing], return_inverse=True)
        ids = np.zeros(n, np.intp)
        ids[failing] = inverse.reshape(-1) + 1
        found = [int(x) for x in values]
    table: list[Status] = [SUCCESS]
    for key in found:
        st = None if cache is None else cache.get(key)
        if st is None:
            bits, u = key >> 1, key & 1
            st = status_of([InsufficientResource(r, reason, req, 0, 0, bool(u))
                            for k, (r, reason, req) in enumerate(plan) if bits >> k & 1], version)
            if cache is not None:
                cache[key] = st
        table.append(st)
    return Filtered(ids, table)


def _is_extended(name: str) -> bool:
    """``IsExtendedResourceName``: a prefixed name outside kubernetes.io, not hugepages/requests."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def status_of(insufficient: list[InsufficientResource], version: Version) -> Status:
    if not insufficient:
        return SUCCESS
    code = Code.UNSCHEDULABLE
    if unresolvable_when_larger_than_node(version) and any(i.unresolvable for i in insufficient):
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    return Status(code, tuple(i.reason for i in insufficient))


# ---- the plugin -------------------------------------------------------------------------


class _PreFilterState:
    __slots__ = ("request", "plan", "plan_key", "statuses")

    def __init__(self, request: dict[str, int]) -> None:
        self.request = request
        # the Filter's comparisons and the statuses made of their failures (failure
        # key -> status), made on first use: they depend only on the request
        self.plan: list[tuple[str, str, int]] | None = None
        self.plan_key: tuple = ()  # the plan as a tuple (the failure keys' memo key)
        self.statuses: dict = {}

    def clone(self) -> _PreFilterState:
        return self  # read-only after PreFilter, as upstream's Clone


class NodeResourcesFitFilter(Plugin, PreFilterPlugin, FilterPlugin):
    """Filter of NodeResourcesFit (PodFitsResources up to 1.17)."""

    name = "NodeResourcesFit"
    # EventsToRegister: Pod/Delete (UpdatePodScaleDown too from 1.27 with
    # InPlacePodVerticalScaling; a sequence resizes no pod)
    pod_events = frozenset({"Delete"})
    signs_pods = True

    def __init__(self, args, handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        self._last_request = LastRequests()  # PreFilter's state of the last pod's requests
        self._memo = ColumnMemo()  # the failure keys over the snapshot's nodes, per plan

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: resources_signature."""
        return resources_signature(pod, self.version, self.handle)

    def signs_no_pod(self) -> bool:
        return signs_no_pod_for_dra(self.version)

    def node_events(self, hints: bool) -> frozenset[str]:
        # Add | UpdateNodeAllocatable; UpdateNodeTaint | UpdateNodeLabel too without hints
        # (the preCheck may hide a Node/Add: issue 109437)
        if hints:
            return frozenset({"Add", "UpdateNodeAllocatable"})
        return frozenset({"Add", "UpdateNodeAllocatable", "UpdateNodeTaint", "UpdateNodeLabel"})

    def node_event_hint(self, pod: Pod, old: Node | None, new: Node | None) -> bool:
        """isSchedulableAfterNodeChange (1.35): Queue when the pod fits the node when it is
        empty (isFit) and the node was added (a sequence changes no allocatable)."""
        if new is None or not fits_empty_node(pod, new, self.version, dra_backed_resources(self.handle, self.version)):
            return False
        return old is None or requested_resources_increased(pod, old, new, self.version)

    def pod_event_hint(self, pod: Pod, event: PodEvent) -> bool:
        """isSchedulableAfterPodEvent (1.35): the deletion of a pod that was neither bound
        nor nominated frees nothing; any other deletion may."""
        return not (event.pod.node_name is None and not event.pod.nominated_node)

    def _ignored(self) -> tuple[frozenset[str], frozenset[str]]:
        return (frozenset(self.args.get("ignoredResources") or ()),
                frozenset(self.args.get("ignoredResourceGroups") or ()))

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        if rejects_sidecars_when_gate_off(self.version) and any(c.restartable for c in pod.init_containers):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (SIDECAR_DISABLED_REASON,))
        # read-only after PreFilter (its plan and statuses depend only on the request):
        # kept for the next pod with the same requests
        st = self._last_request.get(pod)
        if not isinstance(st, _PreFilterState):
            st = _PreFilterState(pod_resource_request(pod, self.version))
            self._last_request.put(pod, st)
        state.write(PRE_FILTER_KEY, st)
        return SUCCESS

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return True

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        st = state.get(PRE_FILTER_KEY)
        if not isinstance(st, _PreFilterState):
            return Filtered.where(np.ones(len(nodes), bool),
                                  error(f'error reading "{PRE_FILTER_KEY}" from cycleState'))
        if st.plan is None:
            st.plan = comparisons(st.request, self.version, *self._ignored(),
                                  dra_backed_resources(self.handle, self.version))
            st.plan_key = tuple(st.plan)
        plan, v, snap = st.plan, self.version, nodes.snapshot
        if snap is not None and nodes.overrides is None and all(req <= snap.least_left(r) for r, _, req in plan):
            # every request within what every node of the snapshot has left: no comparison
            # fails anywhere (``failure_keys`` would give 0 on every node)
            return Filtered.passing(len(nodes))
        # kept across cycles for the plan (the comparisons: resources and requests)
        keys = self._memo.over(nodes, st.plan_key, lambda ns: failure_keys(plan, ns, v),
                               lambda i: failure_key_row(plan, snap, i, v))  # type: ignore[arg-type]
        if keys is None:
            keys = failure_keys(plan, nodes, v)
        return statuses_of(plan, keys, v, st.statuses)


class NodeResourcesFit(NodeResourcesFitFilter, PreScorePlugin, ScorePlugin):
    """NodeResourcesFit from 1.22: the filter plus Score with its scoring strategy."""

    def __init__(self, args, handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        from kspread.engine.apis.config import DEFAULT_RESOURCES, LEAST_ALLOCATED, Strategy
        from kspread.engine.plugins.noderesources_scoring import ResourceScorer

        self._scorer = ResourceScorer(args, handle, config_path)
        self._scorer.name = self.name
        # NodeResourcesFitArgs.scoringStrategy, decoded and validated by kspread.engine.framework.args
        self._scorer.strategy = args.get("scoringStrategy") or Strategy(LEAST_ALLOCATED, DEFAULT_RESOURCES)
        self._scorer.ignores_overhead = resource_scoring(self.version).fit_score_ignores_overhead
        self._scorer.ignores_pod_level = resource_scoring(self.version).fit_score_ignores_pod_level
        self._scorer.ignores_status = resource_scoring(self.version).fit_score_ignores_status

    def pre_score(self, state: CycleState, pod: Pod, nodes) -> Status:
        return self._scorer.pre_score(state, pod, nodes)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet):
        return self._scorer.score_nodes(state, pod, nodes)


@register("NodeResourcesFit", first=12)
def _node_resources_fit(args, handle, config_path: tuple = ()) -> Plugin:
    """The NodeResourcesFit the version has: with Score from 1.22, filter-only before."""
    if resource_scoring(handle.version).fit_scores:
        return NodeResourcesFit(args, handle, config_path)
    return NodeResourcesFitFilter(args, handle, config_path)
