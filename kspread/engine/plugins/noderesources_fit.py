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
   "Insufficient <name>". From 1.27 (PR #116408) a zero request of a resource is
   not compared (before, a zero request failed on a node already over-committed);
4. scalar resources (extended ``vendor/name``, ``hugepages-*``,
   ``attachable-volumes-*``): the same comparison, "Insufficient <name>"; from 1.26
   a zero request is skipped (PR #111544; UNVERIFIED whether 1.25 or 1.26). Upstream
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

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from kspread.engine.framework.interface import (
    Filtered,
    FilterPlugin,
    Plugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SUCCESS, Code, CycleState, Status, error
from kspread.engine.model import Pod
from kspread.engine.quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kspread.engine.resources import pod_requests
from kspread.engine.snapshot import NodeInfo, NodeSet
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


def pod_resource_request(pod: Pod, version: Version) -> dict[str, int]:
    """``computePodResourceRequest``: the pod's effective requests (only the resources
    the scheduler tracks: cpu, memory, ephemeral-storage and scalar resources)."""
    return {k: v for k, v in pod_requests(pod, version).items() if k in _BASIC or is_scalar_resource(k)}


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


def fits_request_nodes(
    request: Mapping[str, int],
    nodes: NodeSet,
    version: Version,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
) -> list[ResourceCheck]:
    """``fitsRequest`` over the nodes: the comparisons, in upstream's order (reasons of
    one node are its failed checks in this order). int64 throughout: allocatable is at
    most 2**62 and requests are non-negative, so ``allocatable - requested`` is exact."""
    out: list[ResourceCheck] = []
    count = nodes.pod_count()
    allowed_pods = nodes.allocatable(PODS)
    reason = too_many_pods_reason(version)
    out.append(ResourceCheck(PODS, reason, 1, count, allowed_pods, count + 1 > allowed_pods))
    if all(request.get(r, 0) == 0 for r in _BASIC) and not any(is_scalar_resource(k) for k in request):
        return out
    skip_zero = skips_zero_basic_requests(version)
    for r in _BASIC:
        req = request.get(r, 0)
        if skip_zero and req <= 0:
            continue
        a, u = nodes.allocatable(r), nodes.requested(r)
        out.append(ResourceCheck(r, f"Insufficient {r}", req, u, a, req > a - u, req > a))
    for r in sorted(k for k in request if is_scalar_resource(k)):
        req = request[r]
        if req == 0 and skips_zero_scalar_requests(version):
            continue
        if _is_extended(r) and (r in ignored_resources or r.split("/", 1)[0] in ignored_groups):
            continue
        a, u = nodes.allocatable(r), nodes.requested(r)
        out.append(ResourceCheck(r, f"Insufficient {r}", req, u, a, req > a - u, req > a))
    return out


def fits_request(
    request: Mapping[str, int],
    node_info: NodeInfo,
    version: Version,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """``fitsRequest`` on one node: every resource it lacks for ``request``, in upstream's order."""
    checks = fits_request_nodes(request, NodeSet.of(node_info), version, ignored_resources, ignored_groups)
    return [InsufficientResource(c.resource, c.reason, c.requested, int(c.used[0]), int(c.capacity[0]),
                                 bool(c.unresolvable[0]) if c.unresolvable is not None else False)
            for c in checks if c.failed[0]]


def statuses_of(checks: list[ResourceCheck], n: int, version: Version) -> Filtered:
    """Per node the status of its failed checks (``status_of``), computed once per
    distinct combination."""
    if not checks:
        return Filtered.passing(n)
    mask = np.zeros(n, np.int64)
    unres = np.zeros(n, bool)
    for k, c in enumerate(checks):
        mask |= c.failed.astype(np.int64) << k
        if c.unresolvable is not None:
            unres |= c.failed & c.unresolvable
    keys = mask * 2 + unres
    failing = np.flatnonzero(keys)
    ids = np.zeros(n, np.intp)
    table: list[Status] = [SUCCESS]
    if not len(failing):
        return Filtered(ids, table)
    failing_keys = keys[failing]
    if len(checks) < 16:
        # small bitmasks: the distinct keys (ascending, as np.unique) by counting
        lookup = np.bincount(failing_keys)
        distinct = np.flatnonzero(lookup)
        lookup[distinct] = np.arange(len(distinct))
        inverse = lookup[failing_keys]
    else:
        distinct, inverse = np.unique(failing_keys, return_inverse=True)
    for key in distinct.tolist():
        bits, u = key >> 1, key & 1
        failed = [InsufficientResource(c.resource, c.reason, c.requested, 0, 0, bool(u))
                  for k, c in enumerate(checks) if bits >> k & 1]
        table.append(status_of(failed, version))
    ids[failing] = inverse.reshape(-1) + 1
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
    __slots__ = ("request",)

    def __init__(self, request: dict[str, int]) -> None:
        self.request = request

    def clone(self) -> _PreFilterState:
        return self  # read-only after PreFilter, as upstream's Clone


class NodeResourcesFitFilter(Plugin, PreFilterPlugin, FilterPlugin):
    """Filter of NodeResourcesFit (PodFitsResources up to 1.17)."""

    name = "NodeResourcesFit"

    def _ignored(self) -> tuple[frozenset[str], frozenset[str]]:
        return (frozenset(self.args.get("ignoredResources") or ()),
                frozenset(self.args.get("ignoredResourceGroups") or ()))

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        if rejects_sidecars_when_gate_off(self.version) and any(c.restartable for c in pod.init_containers):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (SIDECAR_DISABLED_REASON,))
        state.write(PRE_FILTER_KEY, _PreFilterState(pod_resource_request(pod, self.version)))
        return SUCCESS

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return True

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        st = state.get(PRE_FILTER_KEY)
        if not isinstance(st, _PreFilterState):
            return Filtered.where(np.ones(len(nodes), bool),
                                  error(f'error reading "{PRE_FILTER_KEY}" from cycleState'))
        ignored, groups = self._ignored()
        checks = fits_request_nodes(st.request, nodes, self.version, ignored, groups)
        return statuses_of(checks, len(nodes), self.version)


class NodeResourcesFit(NodeResourcesFitFilter, PreScorePlugin, ScorePlugin):
    """NodeResourcesFit from 1.22: the filter plus Score with its scoring strategy."""

    def __init__(self, args, handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        from kspread.engine.framework.args import LEAST_ALLOCATED
        from kspread.engine.plugins.noderesources_scoring import ResourceScorer, Strategy
        from kspread.engine.plugins.resource_allocation import DEFAULT_RESOURCES

        self._scorer = ResourceScorer(args, handle, config_path)
        self._scorer.name = self.name
        # NodeResourcesFitArgs.scoringStrategy, decoded and validated by kspread.engine.framework.args
        self._scorer.strategy = args.get("scoringStrategy") or Strategy(LEAST_ALLOCATED, DEFAULT_RESOURCES)
        self._scorer.ignores_overhead = resource_scoring(self.version).fit_score_ignores_overhead
        self._scorer.ignores_pod_level = resource_scoring(self.version).fit_score_ignores_pod_level

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
