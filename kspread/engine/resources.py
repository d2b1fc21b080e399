"""Pod resource requests as the scheduler computes them (resourcehelper.PodRequests)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction

from kspread.engine.model import Container, ContainerResizeStatus, Pod, ResizeStatus
from kspread.engine.versions import Version


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def _max_into(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        if v > into.get(k, 0):
            into[k] = v


def requests_key(pod: Pod) -> tuple:
    """Every field of the pod that ``node_pod_requests``, ``pod_requests`` and
    ``scoring_requests`` read, as a hashable value: pods with equal keys have equal
    requests (the snapshot computes them once per key). A new field those functions
    read must be added here."""
    return (tuple((tuple(c.requests.items()), c.restartable) for c in pod.containers),
            tuple((tuple(c.requests.items()), c.restartable) for c in pod.init_containers),
            tuple(pod.overhead.items()),
            tuple(pod.level_requests.items()),
            pod.resize,
            pod.node_allocatable_claims)


class LastRequests:
    """A one-entry memo of a value computed from a pod's requests (the fields
    ``requests_key`` reads), for a sequence's cycles of pods written alike: those share
    their converted containers, overhead, pod-level requests, resize status and node
    allocatable claim statuses (the same objects, never mutated), so a pod whose six fields are the objects of the pod memoized gets its
    value without recomputing it (their resize status too). The memo holds those objects: they cannot be freed and
    their identities reused while it does."""

    __slots__ = ("_fields", "_value")

    def __init__(self) -> None:
        self._fields: tuple | None = None
        self._value: object = None

    def get(self, pod: Pod) -> object:
        """The value memoized for ``pod``'s requests, else None."""
        f = self._fields
        if (f is not None and f[0] is pod.containers and f[1] is pod.init_containers and f[2] is pod.overhead
                and f[3] is pod.level_requests and f[4] is pod.resize and f[5] is pod.node_allocatable_claims):
            return self._value
        return None

    def put(self, pod: Pod, value: object) -> None:
        self._fields = (pod.containers, pod.init_containers, pod.overhead, pod.level_requests, pod.resize,
                        pod.node_allocatable_claims)
        self._value = value


# ---- in-place pod resize (InPlacePodVerticalScaling) --------------------------------------

Views = tuple[tuple[tuple[Container, ...], tuple[Container, ...]], ...]


def uses_status(version: Version) -> bool:
    """``UseStatusResources`` (``InPlacePodVerticalScalingEnabled`` to 1.31): NodeInfo and
    the resource scorers read a pod's status resources while InPlacePodVerticalScaling is
    on (alpha 1.27, on from 1.33); NodeResourcesFit's PreFilter never does (the pod it
    filters is not running)."""
    return version.minor >= 27 and version.gate("InPlacePodVerticalScaling")


def resize_infeasible(rs: ResizeStatus, version: Version) -> bool:
    """The pod's resize cannot be granted: status.resize Infeasible to 1.32, from 1.33 the
    reason of its first PodResizePending condition (``IsPodResizeInfeasible``)."""
    if version.minor <= 32:
        return rs.resize == "Infeasible"
    return rs.pending_reason == "Infeasible"


def _max_of(*lists: Mapping[str, int] | None) -> dict[str, int]:
    """Per resource, the largest of the lists that are given (a resource one list lacks is
    not 0 but absent: the max is over the lists that have it)."""
    out: dict[str, int] = {}
    for lst in lists:
        if lst:
            _max_into(out, lst)
    return out


def _with(c: Container, requests: Mapping[str, int]) -> Container:
    return replace(c, requests=requests)


def status_views(pod: Pod, version: Version) -> Views | None:
    """The container lists whose aggregate requests (per resource, the largest) are the
    pod's, when its status resources count (``uses_status``); None: the spec's alone.

    To 1.36 (``AggregateContainerRequests``) one list, each container's requests replaced
    when its status counts: 1.27-1.31, a regular container with a containerStatus counts
    the larger of its spec and allocatedResources, or with an Infeasible resize its
    allocatedResources alone; 1.32, one whose status has ``resources``, the larger of spec
    and actual (resources.requests), Infeasible the actual alone; 1.33-1.36, regular
    containers and sidecars (their status in containerStatuses or initContainerStatuses)
    whose status has ``resources``, the largest of spec, actual and allocated, Infeasible
    the larger of actual and allocated.

    From 1.37 (PR 140047) the largest is taken of the aggregates rather than per container:
    the spec's, the allocated (each container's allocatedResources, else its spec) and the
    actual (resources.requests, else allocatedResources, else spec), every container and
    init container by its own status; with an Infeasible resize only the actual and the
    allocated, a container without the status counting nothing."""
    rs = pod.resize
    if rs is None or not uses_status(version):
        return None
    infeasible = resize_infeasible(rs, version)
    if version.minor >= 37:
        return _aggregate_views(pod, rs, infeasible)
    if version.minor <= 32:
        found = {c.name: c for c in rs.containers}
        inits = pod.init_containers
    else:
        found = {c.name: c for c in rs.containers}
        found.update((c.name, c) for c in rs.inits)
        inits = tuple(_one_status(c, found.get(c.name), infeasible, version) if c.restartable else c
                      for c in pod.init_containers)
    containers = tuple(_one_status(c, found.get(c.name), infeasible, version) for c in pod.containers)
    return ((containers, inits),)


def _one_status(c: Container, cs: ContainerResizeStatus | None, infeasible: bool, version: Version) -> Container:
    """A container's requests as its status makes them, to 1.36 (``status_views``)."""
    if cs is None:
        return c
    if version.minor <= 31:
        return _with(c, dict(cs.allocated or {}) if infeasible else _max_of(c.requests, cs.allocated))
    if not cs.has_resources:
        return c
    if version.minor == 32:
        return _with(c, dict(cs.requests or {}) if infeasible else _max_of(c.requests, cs.requests))
    if infeasible:
        return _with(c, _max_of(cs.requests, cs.allocated))
    return _with(c, _max_of(c.requests, cs.requests, cs.allocated))


def _aggregate_views(pod: Pod, rs: ResizeStatus, infeasible: bool) -> Views:
    """From 1.37: the allocated and actual views of every container (``status_views``)."""
    def find(name: str) -> ContainerResizeStatus | None:
        for cs in rs.containers:
            if cs.name == name:
                return cs
        for cs in rs.inits:
            if cs.name == name:
                return cs
        return None

    def allocated(c: Container) -> Container:
        cs = find(c.name)
        if cs is not None and cs.allocated is not None:
            return _with(c, cs.allocated)
        return _with(c, {}) if infeasible else c

    def actual(c: Container) -> Container:
        cs = find(c.name)
        if cs is not None and cs.has_resources and cs.requests is not None:
            return _with(c, cs.requests)
        if cs is not None and cs.allocated is not None:
            return _with(c, cs.allocated)
        return _with(c, {}) if infeasible else c

    views = [(tuple(actual(c) for c in pod.containers), tuple(actual(c) for c in pod.init_containers)),
             (tuple(allocated(c) for c in pod.containers), tuple(allocated(c) for c in pod.init_containers))]
    if not infeasible:
        views.insert(0, (pod.containers, pod.init_containers))
    return tuple(views)


def _effective_level(pod: Pod, version: Version, level: Mapping[str, int], use_status: bool) -> Mapping[str, int]:
    """The pod-level requests in effect: with InPlacePodLevelResourcesVerticalScaling (alpha
    1.35, on from 1.36) and a status.resources, the largest of spec, actual (its requests)
    and allocated (status.allocatedResources), Infeasible without the spec; each resource
    the spec requests at pod level takes that value (0 when none has it). 1.37 is refused
    when the case is loaded (kspread.format.resize)."""
    rs = pod.resize
    if (not use_status or rs is None or not rs.level_has_resources or version.minor < 35
            or not uses_status(version) or not version.gate("InPlacePodLevelResourcesVerticalScaling")):
        return level
    if resize_infeasible(rs, version):
        eff = _max_of(rs.level_requests, rs.level_allocated)
    else:
        eff = _max_of(level, rs.level_requests, rs.level_allocated)
    return {k: eff.get(k, 0) for k in level}


def node_pod_requests(pod: Pod, version: Version) -> dict[str, int]:
    """What a pod on a node adds to NodeInfo.Requested: ``pod_requests`` from 1.19
    (PR #89222), with its status resources (``status_views``); before, the containers' sum plus the overhead, init containers
    ignored (calculateResource)."""
    if version.minor >= 19:
        return pod_requests(pod, version, use_status=True, node_allocatable=True)
    reqs: dict[str, int] = {}
    for c in pod.containers:
        _add(reqs, c.requests)
    if pod.overhead and version.minor >= 16 and version.gate("PodOverhead"):
        _add(reqs, pod.overhead)
    return reqs


def aggregate_container_requests(containers, init_containers, version: Version) -> dict[str, int]:
    """``AggregateContainerRequests``: the containers' sum; then, per resource, the max
    with each init container (sidecars, i.e. restartable init containers, count in the
    running sum from 1.28 with SidecarContainers)."""
    reqs: dict[str, int] = {}
    for c in containers:
        _add(reqs, c.requests)
    sidecars_on = version.minor >= 28 and version.gate("SidecarContainers")
    init_max: dict[str, int] = {}
    sidecar_sum: dict[str, int] = {}
    for c in init_containers:
        if sidecars_on and c.restartable:
            _add(sidecar_sum, c.requests)
            _max_into(init_max, sidecar_sum)
        else:
            step = dict(c.requests)
            _add(step, sidecar_sum)
            _max_into(init_max, step)
    _add(reqs, sidecar_sum)
    _max_into(reqs, init_max)
    return reqs


def pod_level_requests(pod: Pod, version: Version) -> Mapping[str, int] | None:
    """The pod-level requests (spec.resources.requests) the scheduler applies: with the
    PodLevelResources gate on (from 1.32) and a supported resource (cpu, memory)
    requested at pod level (``IsPodLevelRequestsSet``); None otherwise."""
    if not pod.level_requests or version.minor < 32 or not version.gate("PodLevelResources"):
        return None
    return pod.level_requests


def pod_requests(pod: Pod, version: Version, use_status: bool = False, node_allocatable: bool = False) -> dict[str, int]:
    """``resourcehelper.PodRequests``: the containers' aggregate requests
    (``aggregate_container_requests``; with ``use_status``, as the pod's status makes them,
    ``status_views``); with ``node_allocatable`` (UseDRANodeAllocatableResourceClaimStatus)
    plus the pod's node allocatable claim statuses (``_add_node_allocatable_claims``); then
    each resource requested at pod level replaces the aggregate (PodLevelResources,
    ``pod_level_requests``; ``_effective_level``); then plus the pod overhead (PodOverhead).

    Upstream sets UseDRANodeAllocatableResourceClaimStatus (with the gate) for NodeInfo's
    sums (``node_pod_requests``), DynamicResources' node allocatable check and the queue's
    AdmissionCheck; never for NodeResourcesFit's own PreFilter, its queueing hints or the
    scorers, which so do not read a pending pod's status."""
    views = status_views(pod, version) if use_status else None
    if views is None:
        reqs = aggregate_container_requests(pod.containers, pod.init_containers, version)
    else:
        reqs = _max_of(*(aggregate_container_requests(cs, ins, version) for cs, ins in views))
    if node_allocatable:
        _add_node_allocatable_claims(reqs, pod, version)
    level = pod_level_requests(pod, version)
    if level is not None:
        reqs.update(_effective_level(pod, version, level, use_status))
    if pod.overhead and version.minor >= 16 and version.gate("PodOverhead"):
        _add(reqs, pod.overhead)
    return reqs


def node_allocatable_claims_on(version: Version) -> bool:
    """DRANodeAllocatableResources (alpha, off by default, from 1.36)."""
    return version.minor >= 36 and version.gate("DRANodeAllocatableResources")


def quantity_units(name: str, q: Fraction) -> int:
    """An exact quantity in kspread's units of the resource, as NodeInfo's Resource.Add
    converts it: cpu in millicores (MilliValue), anything else in units (Value), both
    rounded up."""
    return math.ceil(q * 1000) if name == "cpu" else math.ceil(q)


def node_allocatable_claim_total(claims: tuple) -> dict[str, Fraction]:
    """The node allocatable resources a pod's status.nodeAllocatableResourceClaimStatuses
    adds up to (exact quantities)."""
    total: dict[str, Fraction] = {}
    for st in claims:
        for k, q in st.resources:
            total[k] = total.get(k, Fraction(0)) + q
    return total


def _add_node_allocatable_claims(reqs: dict[str, int], pod: Pod, version: Version) -> None:
    """AggregateContainerRequests' last step with UseDRANodeAllocatableResourceClaimStatus
    (DRANodeAllocatableResources): the resources of the pod's
    status.nodeAllocatableResourceClaimStatuses are added to the containers' aggregate,
    before the pod-level requests replace it. The pod's quantities are exact, as upstream's
    Quantities: the sum is rounded up in kspread's units (``quantity_units``)."""
    if not pod.node_allocatable_claims or not node_allocatable_claims_on(version):
        return
    for k, q in node_allocatable_claim_total(pod.node_allocatable_claims).items():
        reqs[k] = quantity_units(k, Fraction(reqs.get(k, 0), 1000 if k == "cpu" else 1) + q)


# ---- non-zero requests (used by the resource scoring plugins) ----------------------------

# schedutil.DefaultMilliCPURequest / DefaultMemoryRequest: what a container that does not
# set a cpu / memory request counts as when nodes are scored (an explicit 0 stays 0).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
NON_ZERO_DEFAULTS = {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST}


def effective_containers(pod: Pod) -> tuple:
    """The pod's containers. A case pod given without ``requests`` and ``containers``
    already has one container that requests nothing (kspread.format.case); one given
    ``containers: []`` has none, and then requests nothing, not even the non-zero
    defaults."""
    return pod.containers


def _with_defaults(requests: Mapping[str, int], defaults: Mapping[str, int] = NON_ZERO_DEFAULTS) -> dict[str, int]:
    out = dict(requests)
    for k, v in defaults.items():
        if k not in out:
            out[k] = v
    return out


def scoring_requests(
    pod: Pod, version: Version, *, non_zero: bool, include_init: bool, overhead_cpu_in_cores: bool = False,
    defaults: Mapping[str, int] = NON_ZERO_DEFAULTS, use_status: bool = False, node_allocatable: bool = False,
) -> dict[str, int]:
    """The pod's requests as the resource scorers and NodeInfo's non-zero sums see
    them: with ``non_zero`` every container (and init container) that does not set
    a resource of ``defaults`` (cpu / memory, above) counts the default (an explicit 0
    stays 0); init containers only with ``include_init`` (from 1.19; before, the
    containers' sum alone); sidecars as ``pod_requests``; with ``use_status`` the
    containers as the pod's status makes them (``status_views``, the defaults applied to
    each view's containers); with ``node_allocatable`` plus the pod's node allocatable
    claim statuses (``_add_node_allocatable_claims``: NodeInfo's sums read them, the
    scorers' own requests do not); then the pod-level requests replace the aggregate
    (PodLevelResources, from 1.32); then the overhead (PodOverhead), whose cpu counts in
    whole cores when ``overhead_cpu_in_cores`` (the 1.17-1.26 scorer's ``quantity.Value()``)."""
    views = status_views(pod, version) if use_status else None
    if views is None:
        reqs = _scoring_aggregate(effective_containers(pod), pod.init_containers, version, non_zero, include_init,
                                  defaults)
    else:
        reqs = _max_of(*(_scoring_aggregate(cs, ins, version, non_zero, include_init, defaults)
                         for cs, ins in views))
    if node_allocatable:
        _add_node_allocatable_claims(reqs, pod, version)
    level = pod_level_requests(pod, version)
    if level is not None:
        reqs.update(_effective_level(pod, version, level, use_status))
    if pod.overhead and version.minor >= 16 and version.gate("PodOverhead"):
        for k, v in pod.overhead.items():
            if k == "cpu" and overhead_cpu_in_cores:
                v = -(-v // 1000)  # Value() of the quantity: whole cores, rounded up
            reqs[k] = reqs.get(k, 0) + v
    return reqs


def _scoring_aggregate(containers, init_containers, version: Version, non_zero: bool, include_init: bool,
                       defaults: Mapping[str, int]) -> dict[str, int]:
    """The containers' part of ``scoring_requests``."""
    reqs: dict[str, int] = {}
    for c in containers:
        _add(reqs, _with_defaults(c.requests, defaults) if non_zero else c.requests)
    if include_init:
        sidecars_on = version.minor >= 28 and version.gate("SidecarContainers")
        init_max: dict[str, int] = {}
        sidecar_sum: dict[str, int] = {}
        for c in init_containers:
            r = _with_defaults(c.requests, defaults) if non_zero else dict(c.requests)
            if sidecars_on and c.restartable:
                _add(sidecar_sum, r)
                _max_into(init_max, sidecar_sum)
            else:
                _add(r, sidecar_sum)
                _max_into(init_max, r)
        _add(reqs, sidecar_sum)
        _max_into(reqs, init_max)
    return reqs


def node_non_zero_requests(pod: Pod, version: Version) -> tuple[int, int]:
    """(cpu millicores, memory bytes) a pod adds to NodeInfo's NonZeroRequested
    (``calculateResource`` / resourcehelper.PodRequests with NonMissingContainerRequests).

    For a pod with pod-level requests (PodLevelResources on), upstream's
    ``getNonMissingContainerRequests`` defaults a container's cpu / memory only when
    the pod's whole request (pod level, containers and overhead) lacks that resource;
    otherwise every container without a cpu / memory request counts the default."""
    if 28 <= version.minor <= 31 and version.gate("SidecarContainers") and \
            any(c.restartable for c in pod.init_containers):
        views = status_views(pod, version)
        containers = pod.containers if views is None else views[0][0]
        return _container_fn_non_zero(pod, containers)
    defaults: Mapping[str, int] = NON_ZERO_DEFAULTS
    if pod_level_requests(pod, version) is not None:
        whole = pod_requests(pod, version, use_status=True, node_allocatable=True)
        defaults = {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in whole}
    r = scoring_requests(pod, version, non_zero=True, include_init=version.minor >= 19, defaults=defaults,
                         use_status=True, node_allocatable=True)
    return r.get("cpu", 0), r.get("memory", 0)


def _container_fn_non_zero(pod: Pod, containers: tuple[Container, ...]) -> tuple[int, int]:
    """NonZeroRequested as 1.28-1.31's ``calculateResource`` computes it with sidecars:
    through PodRequests' ContainerFn callback (without NonMissingContainerRequests), which
    sees each regular container's own requests and, for each init container, the
    requests in effect while it runs (its own plus the sidecars before it; for a sidecar,
    the sidecars up to it). The non-zero defaults apply to what the callback sees: the
    regular containers' non-zero requests are summed, the init containers' maxed, and the
    result is the larger of the two per resource, plus the overhead. So a sidecar is not
    in the sum, unlike PodRequests (and unlike 1.32+, which sums the sidecars' non-zero
    requests)."""
    cpu = mem = 0
    for c in containers:
        r = _with_defaults(c.requests)
        cpu += r["cpu"]
        mem += r["memory"]
    init_cpu = init_mem = 0
    sidecar_sum: dict[str, int] = {}
    for c in pod.init_containers:
        if c.restartable:
            _add(sidecar_sum, c.requests)
            running = dict(sidecar_sum)
        else:
            running = dict(c.requests)
            _add(running, sidecar_sum)
        r = _with_defaults(running)
        init_cpu = max(init_cpu, r["cpu"])
        init_mem = max(init_mem, r["memory"])
    cpu, mem = max(cpu, init_cpu), max(mem, init_mem)
    if pod.overhead:
        cpu += pod.overhead.get("cpu", 0)
        mem += pod.overhead.get("memory", 0)
    return cpu, mem
