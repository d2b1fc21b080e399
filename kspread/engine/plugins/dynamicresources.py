"""DynamicResources (from 1.26; structured parameters as kspread models them from
1.31; in the default profile from 1.34, when the DynamicResourceAllocation gate went
GA, and with the gate on before): a pod's ResourceClaims (kspread/engine/devices.py)
allocated by the structured allocator (kspread/engine/allocator.py), as upstream's
plugin of v1.35.4 does:

* PreFilter: a pod without claims is skipped. Each claim must exist (kspread refuses a
  case where one does not: upstream's PreEnqueue would hold the pod), not be being
  deleted, be the pod's own when made from a template, and, when allocated, have room
  in reservedFor or name the pod (to 1.35; v1.36.2's CanBeReserved has no limit); an
  unallocated claim's device classes must exist.
  Every rejection is UnschedulableAndUnresolvable (upstream's statusUnschedulable).
* Filter: an allocated claim's node selector must match the node ("resourceclaim not
  available on the node"); the unallocated claims must be allocatable on the node
  ("cannot allocate all claims"); the allocation found is kept for Reserve.
* PostFilter: Error "not found" when its PreFilter did not run (an earlier
  PreFilter rejected the pod: no state), which ends PostFilter before preemption;
  a claim allocated for no other pod that was not available on some node
  is deallocated ("deallocation of ResourceClaim completed"), so a later attempt may
  allocate it elsewhere. Upstream picks that claim from a Go map at random; kspread
  takes the first in the pod's order.
* Score (1.35+, weight 2 in the default profile): per claim, for each request with
  ``firstAvailable`` whose n-th subrequest (0-based) was allocated, 8 - n; default
  normalization (the best node 100).
* Reserve / PreBind: the allocation stays with its claim and the claim is reserved for
  the pod (kspread's ClaimTracker), so later pods of a sequence see the devices as taken.
  With binding conditions (1.35+) the claim gets its allocation time, and in a sequence
  PreBind waits for them (SequenceRun: ``claim_ready``, ``claim_timed_out``); Filter
  makes an allocated claim that failed, or is not ready and timed out, unavailable.

1.36, in a pod group's cycle: an unallocated claim another pod of the cycle allocated in
its Reserve (in flight) is not "in the process of being allocated": the pod reuses that
pending allocation (not checked against the node; Filter lists it after the allocator's
new ones and Reserve gives them out in the claims' order, as upstream's does), shares the
in-flight entry, and PreBind writes it from the claim as PreFilter read it: when another
sharer wrote it first, that fails (``prebind_conflict``; kspread/engine/podgroupcycle.py).

With DRAWorkloadResourceClaims (1.36): a pod's entry that its PodGroup's resourceClaims
names alike is bound to the PodGroup (``binding``: PreBind reserves the claim for the
PodGroup), a claim reserved for the pod's PodGroup counts as the pod's, a claim the pod's
PodGroup owns passes the owner check, a missing PodGroup fails PreFilter, and PostFilter
may take the PodGroup's reservation away (``_unreserve_pod_group_claims``).

It implements no PreFilter AddPod/RemovePod, as upstream's: the preemption dry run does
not free devices. Deleting a pod (a preemption victim, or a step) releases its claims as
the resource claim controller does: a claim no pod reserves any more is deallocated.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np

from kspread.engine.allocator import AllocationError, Allocator, FailedOnNode, Features
from kspread.engine.devices import (
    FIRST_AVAILABLE_MAX_SIZE,
    Allocation,
    ClaimTracker,
    Device,
    DeviceClass,
    DeviceRequest,
    ExactRequest,
    NodeAllocatableClaimStatus,
    ResourceClaim,
    extended_claim_name,
    is_dra_extended_resource_name,
    selector_matches,
)
from kspread.engine.devicetaints import scheduler_slices
from kspread.engine.framework.interface import (
    Filtered,
    FilterPlugin,
    Plugin,
    PodEvent,
    PostFilterPlugin,
    PreFilterPlugin,
    ScoreFailed,
    ScorePlugin,
)
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, Code, CycleState, Status
from kspread.engine.model import Container, Pod, replace_pod
from kspread.engine.plugins.nodematch import default_normalize_scores
from kspread.engine.plugins.noderesources_fit import is_scalar_resource
from kspread.engine.plugins.podgroups import POD_GROUP_REF
from kspread.engine.resources import (
    node_allocatable_claims_on,
    pod_level_requests,
    pod_requests,
)
from kspread.engine.snapshot import NodeInfo, NodeSet
from kspread.engine.versions import Version
from kspread.errors import CaseError

NAME = "DynamicResources"
CLAIM_UPDATE = "ResourceClaimUpdate"  # a PodEvent action: a claim's status changed
# a ResourceSlice changed as the scheduler's tracker sees it (a DeviceTaintRule added or
# deleted): registered without a queueing hint (SchedulingQueue.hintless_event)
SLICE_UPDATE = "ResourceSliceUpdate"


def dynamic_resources_scores(version: Version) -> bool:
    """DynamicResources implements Score (no PreScore) in 1.35."""
    return version.minor >= 35


def reserved_for_max(version: Version) -> int:
    """ResourceClaimReservedForMaxSize: 32 in 1.31's v1alpha3 and 1.32, 256 from 1.33
    (the v1beta1/v1beta2/v1 API docs say 256; the release that raised it is taken as 1.33
    from the API reference of each release, not from the 1.33 source)."""
    return 256 if version.minor >= 33 else 32


def allocator_features(version: Version) -> Features:
    return Features(
        admin_access=version.minor == 31 or (version.minor >= 32 and version.gate("DRAAdminAccess")),
        prioritized_list=version.minor >= 33 and version.gate("DRAPrioritizedList"),
        device_taints=version.minor >= 33 and version.gate("DRADeviceTaints"),
        every_taint_effect=version.minor < 35,
        result_tolerations=version.minor >= 35 and version.gate("DRADeviceTaints"),
        partitionable_devices=version.minor >= 33 and version.gate("DRAPartitionableDevices"),
        counters_version=min(max(version.minor, 33), 35),
        consumable_capacity=version.minor >= 35 and version.gate("DRAConsumableCapacity"),
        binding_conditions=binding_conditions_enabled(version),
        admin_marks_own_claim=version.minor >= 34,  # v1.33.3's allocator marks no admin device
        all_rolls_back=version.minor >= 34,  # nor gives back an All request's devices
        all_needs_a_device=version.minor >= 33,  # up to 1.32 an All request may get no device
        all_v131=version.minor == 31,
        all_unavailable_stops=version.minor == 32,
        subrequest_index_kept=version.minor >= 36,  # v1.36.2 keeps a subrequest's index
        # v1.36.2 gives DRAListTypeAttributes to CEL only; upstream main (1.37) to the
        # allocator too (kubernetes/kubernetes#139332)
        cel_list_attributes=version.minor >= 36 and version.gate("DRAListTypeAttributes"),
        list_type_attributes=version.minor >= 37 and version.gate("DRAListTypeAttributes"),
        device_combinations=version.minor >= 36,  # startLocation, in v1.36.2's non-stable allocators
    )


SPECIAL_CLAIM_NAME = "<extended-resources>"  # the in-memory claim before PreBind names it


def binding_conditions_enabled(version: Version) -> bool:
    """DeviceBindingAndStatus: DRADeviceBindingConditions and DRAResourceClaimDeviceStatus,
    modelled from 1.35."""
    return version.minor >= 35 and version.gate("DRADeviceBindingConditions") and \
        version.gate("DRAResourceClaimDeviceStatus")


def waits_for_binding_conditions(state: CycleState, node: str) -> list[str]:
    """The devices with binding conditions that Reserve allocated for the pod on the node:
    PreBind waits until a driver sets those conditions in the claims' status."""
    s = state.get(NAME)
    if not isinstance(s, DRAState):
        return []
    return [str(d) for a in s.node_allocations.get(node, []) for d in a.devices if d.binding_conditions]


def claim_ready(c: ResourceClaim) -> tuple[bool, str | None]:
    """isClaimReadyForBinding: every binding condition of each allocated device is True in
    the claim's device status, and no binding failure condition is (else the error)."""
    if c.allocation is None:
        return False, None
    status = dict(c.device_conditions)
    for d in c.allocation.devices:
        if not d.binding_conditions:
            continue
        conds = status.get(d.id)
        if conds is None:
            return False, None
        by_type = {x.type: x for x in conds}
        for t in d.binding_failure_conditions:
            x = by_type.get(t)
            if x is not None and x.status == "True":
                return False, f'claim {c.name} binding failed: reason={x.reason}, message="{x.message}"'
        if any(getattr(by_type.get(t), "status", None) != "True" for t in d.binding_conditions):
            return False, None
    return True, None


def claim_timed_out(c: ResourceClaim, now: int, timeout: float) -> bool:
    """isClaimTimeout: a device with binding conditions, allocated more than the binding
    timeout before ``now`` (the clock has whole seconds: what runs at the deadline's
    second runs after it, as PreBind's timeout came first)."""
    if c.allocation is None or c.allocated_at is None:
        return False
    return any(d.binding_conditions for d in c.allocation.devices) and c.allocated_at + timeout <= now


def extended_resources_enabled(version: Version) -> bool:
    """DRAExtendedResource, modelled from 1.35."""
    return version.minor >= 35 and version.gate("DRAExtendedResource")


def extended_requests(pod: Pod, needed: dict[str, int], backed: dict[str, DeviceClass]) -> tuple[DeviceRequest, ...]:
    """createRequestsAndMappings' requests: per resource (in name order), one request
    ``container-<i>-request-<j>`` for each long-lived container asking for it (i over the
    init containers then the containers, j the resource's place among the container's
    requests in name order), and for the init containers that are not sidecars the
    largest of their requests less what later long-lived containers' requests cover;
    sorted by name."""
    containers: list[Container] = [*pod.init_containers, *pod.containers]
    n_init = len(pod.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= n_init or c.restartable]
    short_lived = [i for i, c in enumerate(containers) if i < n_init and not c.restartable]
    out: list[DeviceRequest] = []
    for r in sorted(needed):
        cls = backed.get(r)
        if cls is None:
            continue
        long_reqs: list[DeviceRequest | None] = [None] * len(containers)
        for i in long_lived:
            long_reqs[i] = _container_request(i, containers[i], r, cls.name, [])
        biggest: DeviceRequest | None = None
        for i in short_lived:
            req = _container_request(i, containers[i], r, cls.name, long_reqs[i:])
            if req is not None:
                assert req.exactly is not None and (biggest is None or biggest.exactly is not None)
                if biggest is None or biggest.exactly.count < req.exactly.count:  # type: ignore[union-attr]
                    biggest = req
        if biggest is not None:
            out.append(biggest)
        out.extend(x for x in long_reqs if x is not None)
    return tuple(sorted(out, key=lambda x: x.name))


def _container_request(i: int, c: Container, r: str, cls: str,
                       reusable: list[DeviceRequest | None]) -> DeviceRequest | None:
    """createResourceRequestAndMappings' request: the container's count of ``r`` less
    what the reusable requests (of later long-lived containers) already ask."""
    want = c.requests.get(r)
    if not want:
        return None
    total = 0
    for x in reusable:
        if x is not None and x.exactly is not None:
            total += x.exactly.count
            if total >= want:
                return None
    name = f"container-{i}-request-{sorted(c.requests).index(r)}"
    return DeviceRequest(name, ExactRequest(name, cls, count=want - total))


def _unresolvable(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))


@dataclass
class DRAState:
    claims: list[ResourceClaim] = field(default_factory=list)
    allocator: Allocator | None = None
    # per claim: the node selector of an allocated claim (None: everywhere)
    available_on: list = field(default_factory=list)
    node_allocations: dict[str, list[Allocation]] = field(default_factory=dict)
    unavailable: set[int] = field(default_factory=set)
    # node -> why the unallocated claims could not be allocated there (explain)
    failures: dict[str, str] = field(default_factory=dict)
    # DRAExtendedResource: how many of ``claims`` are the pod's own (the extended
    # resources' claim follows them), the pod's scalar requests, each node's variant of
    # the extended resources' claim (named as Reserve will name it: ``to_allocate``)
    user_claims: int = 0
    pod_scalar: dict[str, int] = field(default_factory=dict)
    node_extended: dict[str, ResourceClaim] = field(default_factory=dict)
    # 1.36: claim index -> the pending allocation of an unallocated claim that a pod of the
    # same pod group cycle put in flight (its Reserve), which this pod reuses
    pending: dict[int, Allocation] = field(default_factory=dict)
    # DRANodeAllocatableResources: node -> the pod's node allocatable claim statuses there
    # (what the assumed pod's status gets: ``node_allocatable_statuses``)
    node_allocatable: dict[str, tuple[NodeAllocatableClaimStatus, ...]] = field(default_factory=dict)


def to_allocate(s: DRAState, pod: Pod, node: str) -> list[ResourceClaim]:
    """The claims Reserve gives the node's allocations to, in order (those the node's
    Filter allocated, then the pending allocations reused, ``DRAState.pending``: Reserve
    takes them in the claims' order, as upstream's), the extended resources' claim as the
    node's variant named as Reserve names it (for explain)."""
    out = []
    for i, c in enumerate(s.claims):
        if c.allocation is not None:
            continue
        if i == s.user_claims and c.name == SPECIAL_CLAIM_NAME:
            c = replace(s.node_extended.get(node, c), name=extended_claim_name(pod.name))
        out.append(c)
    return out


def pod_claims(tracker: ClaimTracker, pod: Pod) -> list[ResourceClaim]:
    out = []
    for pc in pod.resource_claims:
        c = tracker.get(pod.namespace, pc.claim_name)
        assert c is not None  # the case format refuses a pod whose claim does not exist
        out.append(c)
    return out


def node_allocatable_statuses(state: CycleState | None, node: str) -> tuple[NodeAllocatableClaimStatus, ...]:
    """ExtractPodNodeAllocatableResourceClaimStatus: what the pod's Filter found on the node
    (the assumed pod's status.nodeAllocatableResourceClaimStatuses)."""
    s = state.get(NAME) if state is not None else None
    return s.node_allocatable.get(node, ()) if isinstance(s, DRAState) else ()


def _claim_sharing(pod: Pod, node_info: NodeInfo, c: ResourceClaim) -> Status | None:
    """validateNodeAllocatableDRAClaimSharing: an allocated claim whose node allocatable
    resources a pod on the node already uses (NodeInfo's NodeAllocatableDRAClaimStates: the
    pods whose status names the claim, in the pod's namespace) serves no other pod."""
    users = [p.key for p in node_info.pods.values() if p.namespace == pod.namespace
             and any(st.claim == c.name for st in p.node_allocatable_claims)]
    if len(users) > 1:
        return _unresolvable(f"node allocatable resource claim {c.name} shared by multiple pods")
    if len(users) == 1 and users[0] != pod.key:
        return _unresolvable(f"node allocatable resource claim {c.name} is already used by another pod")
    return None


def _fits(node_info: NodeInfo, demand: dict[str, int]) -> Status | None:
    """DynamicResources' nodeFitsResources: the pod's demand (its requests with its claims'
    node allocatable resources) against the node's allocatable less its requested, for cpu,
    memory, ephemeral-storage (when requested) and each hugepages size (upstream's map order;
    kspread's: sorted); UnschedulableAndUnresolvable when a demand exceeds the allocatable
    itself."""
    alloc, used = node_info.node.allocatable, node_info.requested
    reasons, unresolvable = [], False
    names = ["cpu", "memory", "ephemeral-storage",
             *sorted(k for k in demand if k.startswith("hugepages-"))]
    for name in names:
        want = demand.get(name, 0)
        if name in ("cpu", "memory", "ephemeral-storage") and want <= 0:
            continue
        cap, have = alloc.get(name, 0), used.get(name, 0)
        if want > cap - have:
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or want > cap
    if not reasons:
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, tuple(reasons))


class DynamicResourcesFilter(Plugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin):
    name = NAME
    signs_pods = True  # SignPod: pods with claims are not signable (sign_pod)
    pod_events = frozenset({CLAIM_UPDATE, SLICE_UPDATE})

    def pre_bind_pre_flight(self, state: CycleState) -> bool:
        """PreBindPreFlight (1.34+): PreBind has work when the pod has claims (its own, or
        the extended resources' claim)."""
        s = state.get(NAME)
        return isinstance(s, DRAState) and bool(s.claims)

    def sign_pod(self, pod: Pod):
        return None if pod.resource_claims else ()

    def node_events(self, hints: bool) -> frozenset[str]:
        """EventsToRegister's Node actions, without a hint (Queue): slices select nodes by
        label. 1.31: Add | UpdateNodeLabel | UpdateNodeTaint; from 1.32 UpdateNodeTaint
        only without queueing hints (issue 109437); from 1.34 also UpdateNodeAllocatable."""
        v = self.version.minor
        if v <= 31:
            return frozenset({"Add", "UpdateNodeLabel", "UpdateNodeTaint"})
        events = {"Add", "UpdateNodeLabel"} | ({"UpdateNodeAllocatable"} if v >= 34 else set())
        return frozenset(events if hints else events | {"UpdateNodeTaint"})

    @property
    def tracker(self) -> ClaimTracker:
        t = self.handle.claims
        assert t is not None
        return t

    @property
    def workload_claims(self) -> bool:
        """DRAWorkloadResourceClaims (1.36): PodGroup claims, reserved for the PodGroup."""
        return self.handle.version.minor >= 36 and self.handle.version.gate("DRAWorkloadResourceClaims")

    def _pod_group_missing(self, pod: Pod) -> Status | None:
        """podResourceClaimBindings' getPodGroup (DRAWorkloadResourceClaims): the lister's
        error for a pod whose PodGroup does not exist, even without claims."""
        if not self.workload_claims or not pod.scheduling_group:
            return None
        groups = getattr(self.handle.gang, "pod_groups", None)
        if groups is not None and (pod.namespace, pod.scheduling_group) in groups:
            return None
        return _unresolvable(f'podgroup.scheduling.k8s.io "{pod.scheduling_group}" not found')

    def _owner_error(self, pod: Pod, c: ResourceClaim) -> str | None:
        """resourceclaim.IsForPod for a claim made from a template: the pod owns it, or (with
        DRAWorkloadResourceClaims) the pod's PodGroup does (isForPodGroupByPod)."""
        if c.owner_pod == pod.key:
            return None
        v = self.handle.version
        if v.minor < 36:
            return (f"ResourceClaim {c.namespace}/{c.name} was not created for pod {pod.namespace}/{pod.name} "
                    "(pod is not owner)")
        if not self.workload_claims:
            return (f"ResourceClaim {c.namespace}/{c.name} was not created for Pod {pod.namespace}/{pod.name} "
                    "(Pod is not owner)")
        if c.owner_pod_group is not None and c.owner_pod_group == pod.scheduling_group:
            return None
        if not pod.scheduling_group:
            # upstream's message dereferences the pod's schedulingGroup, which is nil: a crash
            raise CaseError(f"pod {pod.key} (no schedulingGroup) uses claim {c.namespace}/{c.name}, made from a "
                            "template but not owned by the pod: with DRAWorkloadResourceClaims upstream's "
                            "resourceclaim.IsForPod dereferences the pod's missing schedulingGroup (v1.36.2), "
                            "which kspread does not model", ["schedule"])
        return (f"ResourceClaim {c.namespace}/{c.name} was not created for Pod {pod.namespace}/{pod.name} "
                f"(neither Pod nor PodGroup {pod.scheduling_group} is the owner)")

    def is_reserved_for_pod(self, pod: Pod, c: ResourceClaim, accept_group: bool = True) -> bool:
        """resourceclaim.IsReservedForPod: the pod, or (with DRAWorkloadResourceClaims and
        ``accept_group``) its PodGroup, is in the claim's reservedFor."""
        if pod.key in c.reserved_for:
            return True
        return accept_group and self.workload_claims and bool(pod.scheduling_group) and \
            f"{POD_GROUP_REF}{pod.scheduling_group}" in c.reserved_for

    def binding(self, pod: Pod, i: int) -> str:
        """claimStore.getBinding: the object the pod's i-th claim is reserved for (BindTo):
        its PodGroup for a PodGroup's claim (DRAWorkloadResourceClaims), else the pod."""
        if i < len(pod.resource_claims) and pod.resource_claims[i].pod_group and self.workload_claims:
            return f"{POD_GROUP_REF}{pod.resource_claims[i].pod_group}"
        return pod.key

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        s = DRAState()
        state.write(NAME, s)
        ext = self._pre_filter_extended_resources(pod, s)
        if not pod.resource_claims and ext is None:
            missing = self._pod_group_missing(pod)
            return missing if missing is not None else SKIP
        claims = pod_claims(self.tracker, pod)
        for pc, c in zip(pod.resource_claims, claims):
            if c.deleting:
                return _unresolvable(f'resourceclaim "{c.name}" is being deleted')
            if pc.from_template and (why := self._owner_error(pod, c)) is not None:
                return _unresolvable(why)
        missing = self._pod_group_missing(pod)
        if missing is not None:
            return missing
        s.user_claims = len(claims)
        if ext is not None:
            claims.append(ext)
        to_allocate = 0
        for i, c in enumerate(claims):
            if c.allocation is None and c is ext:
                s.available_on.append(None)
                to_allocate += 1
                continue  # its requests are made per node by Filter
            if c.allocation is not None:
                # resourceclaim.CanBeReserved: room in reservedFor up to 1.35; from 1.36 always
                # (the API server still refuses a 257th entry: ``reserve``)
                if self.handle.version.minor < 36 and len(c.reserved_for) >= reserved_for_max(self.handle.version) \
                        and pod.key not in c.reserved_for:
                    return _unresolvable("resourceclaim in use")
                s.available_on.append(c.allocation.node_selector)
                continue
            s.available_on.append(None)
            to_allocate += 1
            flight = self.tracker.in_flight.get((c.namespace, c.name))
            if flight is not None:  # another pod's Reserve allocated it
                if all(h in self.tracker.group_pods for h in flight[1]):
                    # 1.36: a pod of this pod group cycle did (the group's pendingAllocations):
                    # the pod reuses that allocation, not checked against the node (no
                    # availableOnNodes: the claim is unallocated) nor given to the allocator
                    assert flight[0].allocation is not None
                    s.pending[i] = flight[0].allocation
                    continue
                return _unresolvable(f"resource claim {c.namespace}/{c.name} is in the process of being allocated")
            for r in c.requests:
                if r.exactly is not None:
                    st = self._check_class(r.exactly.class_name, r.name)
                    if st is not None:
                        return st
                elif r.first_available:
                    if not allocator_features(self.handle.version).prioritized_list:
                        return _unresolvable(f"resource claim {c.namespace}/{c.name}, request {r.name}: has "
                                             "subrequests, but the DRAPrioritizedList feature is disabled")
                    for sub in r.first_available:
                        st = self._check_class(sub.class_name, f"{r.name}/{sub.name}")
                        if st is not None:
                            return st
        if to_allocate:
            t = self.tracker
            f = allocator_features(self.handle.version)
            s.allocator = Allocator(f, t.allocated_devices(f.consumable_capacity), t.objects.classes,
                                    scheduler_slices(t), t.cel_results,
                                    t.aggregated_capacity() if f.consumable_capacity else None)
        s.claims = claims
        return SUCCESS

    def _pre_filter_extended_resources(self, pod: Pod, s: DRAState) -> ResourceClaim | None:
        """preFilterExtendedResources (DRAExtendedResource, 1.35+): a pod requesting an
        extended resource a DeviceClass backs gets the in-memory claim "<extended-resources>"
        (no requests yet), or the claim made for it in an earlier cycle."""
        t = self.handle.claims
        if t is None or not extended_resources_enabled(self.handle.version):
            return None
        backed = t.objects.extended_resources
        reqs = pod_requests(pod, self.handle.version)
        if not any(q and is_dra_extended_resource_name(r) and r in backed for r, q in reqs.items()):
            return None
        s.pod_scalar = {r: q for r, q in reqs.items() if is_scalar_resource(r)}
        for c in t:
            if c.extended_resources and c.owner_pod == pod.key:
                return c
        return ResourceClaim(pod.namespace, SPECIAL_CLAIM_NAME, owner_pod=pod.key, extended_resources=True)

    def _filter_extended_resources(self, s: DRAState, pod: Pod, node) -> tuple[ResourceClaim | None, Status | None]:
        """filterExtendedResources: the node's variant of the extended resources' claim,
        with a request per container for each resource the node has none of (its devices
        serve it); None when the node's allocatable serves them all."""
        ext = s.claims[s.user_claims] if len(s.claims) > s.user_claims else None
        if ext is None:
            return None, None
        backed = self.tracker.objects.extended_resources
        needed: dict[str, int] = {}
        for r, q in s.pod_scalar.items():
            if not is_dra_extended_resource_name(r) or q == 0:
                continue
            allocatable = node.allocatable.get(r)
            if r in backed and not allocatable:
                needed[r] = q
            elif allocatable is None:
                return None, _unresolvable("cannot fit resource")
        if not s.user_claims and not needed:
            return None, None
        if ext.allocation is not None:
            return None, None
        return replace(ext, requests=extended_requests(pod, needed, backed)), None

    def _check_class(self, class_name: str, request: str) -> Status | None:
        if class_name not in self.tracker.objects.classes:
            return _unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        """``filter`` per node; but when only the allocator decides (the pod's own claims,
        none allocated yet) the nodes with no slice to gather take the first such node's
        failure at once (``Allocator.bare_positions``: the allocator fails the same way on
        each); the nodes with slices are filtered one by one, in order."""
        s = state.get(NAME)
        snap, positions = nodes.snapshot, nodes.positions
        if not (isinstance(s, DRAState) and s.allocator is not None and s.claims and s.user_claims == len(s.claims)
                and not s.pending and all(c.allocation is None for c in s.claims) and snap is not None and positions is not None
                and len(nodes) > 1):
            return super().filter_nodes(state, pod, nodes)
        bare_at = s.allocator.bare_positions(snap)
        if bare_at is None:
            return super().filter_nodes(state, pod, nodes)
        is_bare = bare_at[positions]
        bare = np.flatnonzero(is_bare)
        if len(bare) < 2:
            return super().filter_nodes(state, pod, nodes)
        infos = snap.node_list
        statuses: dict[int, Status] = {}  # index in the set -> status, for those filtered one by one
        first = int(bare[0])
        name = infos[int(positions[first])].node.name
        shared = statuses[first] = self.filter(state, pod, infos[int(positions[first])])
        one_by_one = np.flatnonzero(~is_bare).tolist()
        if shared.code != Code.UNSCHEDULABLE_AND_UNRESOLVABLE or name not in s.failures:
            one_by_one = sorted([*one_by_one, *bare[1:].tolist()])  # (allocated: no device needed; an Error)
            shared_at = np.zeros(0, np.intp)
        else:
            shared_at = bare[1:]
            s.failures.update(dict.fromkeys(snap.name_array()[positions[shared_at]].tolist(), s.failures[name]))
        for i in one_by_one:
            statuses[i] = self.filter(state, pod, infos[int(positions[i])])
        # the table and ids ``statuses_to_filtered`` makes of every node's status in order
        ids = np.zeros(len(nodes), np.intp)
        index: dict[Status, int] = {SUCCESS: 0}
        table: list[Status] = [SUCCESS]
        for i in sorted([first, *one_by_one]):  # (the shared status's first node is ``first``)
            st = statuses[i]
            k = index.get(st)
            if k is None:
                k = index[st] = len(table)
                table.append(st)
            ids[i] = k
        ids[shared_at] = ids[first]
        return Filtered(ids, table)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = state.read(NAME)
        assert isinstance(s, DRAState)
        if not s.claims:
            return SUCCESS
        node = node_info.node
        node_ext, st = self._filter_extended_resources(s, pod, node)
        if st is not None:
            return st
        if node_ext is None and not s.user_claims:
            return SUCCESS  # the extended resources are the node's allocatable, NodeResourcesFit's
        unavailable = []
        for i, sel in enumerate(s.available_on):
            c = s.claims[i]
            if c.allocation is None:
                continue
            if sel is not None and not selector_matches(sel, node):
                unavailable.append(i)
            elif binding_conditions_enabled(self.handle.version):
                # not ready and timed out, or failed: PostFilter may deallocate it
                ready, failed = claim_ready(c)
                if failed or (not ready and claim_timed_out(c, self.tracker.now, self.args["bindingTimeout"])):
                    unavailable.append(i)
        allocations: list[Allocation] | None = None
        if node_ext is not None:
            s.node_extended[node.name] = node_ext
        if node_allocatable_claims_on(self.handle.version):
            for i, c in enumerate(s.claims):
                if c.allocation is not None and (i >= len(s.available_on) or s.available_on[i] is None
                                                 or selector_matches(s.available_on[i], node)):
                    st = _claim_sharing(pod, node_info, c)
                    if st is not None:
                        return st
        if s.allocator is not None:
            # the claims to allocate, the node's variant of the extended resources' claim in
            # its place; not those with a pending allocation reused (pendingResult)
            todo = [node_ext if node_ext is not None and i == s.user_claims else c
                    for i, c in enumerate(s.claims) if c.allocation is None and i not in s.pending]
            try:
                allocations = s.allocator.allocate(node, todo)
            except FailedOnNode as e:
                s.failures[node.name] = str(e)
                return _unresolvable(str(e))
            except AllocationError as e:
                return Status(Code.ERROR, (str(e),))
            if allocations is None:
                s.failures[node.name] = "cannot allocate all claims"
                return _unresolvable("cannot allocate all claims")
            if node_allocatable_claims_on(self.handle.version):
                by_claim = {id(c): a for c, a in zip(todo, allocations)}
                by_claim.update({id(s.claims[i]): a for i, a in s.pending.items()})
                statuses, st = self._node_allocatable(s, pod, node_info, by_claim, node_ext)
                if st is not None:
                    return st
                s.node_allocatable[node.name] = statuses
            # the reused pending allocations follow the new ones, in the claims' order (Reserve
            # gives them out in the claims' order all the same, as upstream's)
            allocations = [*allocations, *(s.pending[i] for i in sorted(s.pending))]
        if unavailable:
            s.unavailable.update(unavailable)
            return _unresolvable("resourceclaim not available on the node")
        if allocations is not None:
            s.node_allocations[node.name] = allocations
        return SUCCESS

    def _device(self, pool: str, name: str) -> Device | None:
        """getDeviceFromManager: the first device of that name in a slice of that pool (of
        any driver), in the scheduler's slices (case order; upstream: its lister's)."""
        for sl in scheduler_slices(self.tracker):
            if sl.pool == pool:
                for d in sl.devices:
                    if d.name == name:
                        return d
        return None

    def _node_allocatable(self, s: DRAState, pod: Pod, node_info: NodeInfo, by_claim: dict[int, Allocation],
                          node_ext: ResourceClaim | None) -> tuple[tuple[NodeAllocatableClaimStatus, ...], Status | None]:
        """calculateAndCheckNodeAllocatableResources (DRANodeAllocatableResources): the claims
        the node's allocation gives a device with nodeAllocatableResourceMappings; their node
        allocatable resources (each device result's mapping: its consumed capacity of the key, or
        the multiplier per device, times the multiplier), each claim's status naming the
        containers that use it (init containers first), sorted by claim name; a claim no container
        uses is refused; then the pod's requests with them (``pod_requests`` of the pod with that
        status; pod-level requests must cover them) must fit the node's free cpu, memory,
        ephemeral-storage and hugepages (``_fits``)."""
        claims: list[tuple[ResourceClaim, Allocation]] = []
        for i, c in enumerate(s.claims):
            a = by_claim.get(id(node_ext if node_ext is not None and i == s.user_claims else c))
            if a is None:
                continue
            if any((d := self._device(r.pool, r.device)) is not None and d.node_allocatable for r in a.devices):
                claims.append((c if not (node_ext is not None and i == s.user_claims) else node_ext, a))
        if not claims:
            return (), None
        by_name = {pc.name: pc.claim_name for pc in pod.resource_claims}
        statuses = []
        for c, a in claims:
            resources: dict[str, Fraction] = {}
            for r in a.devices:
                d = self._device(r.pool, r.device)
                if d is None:
                    return (), Status(Code.ERROR, ((f"claim {c.namespace}/{c.name}, device {r.device}: device "
                                                    f"{r.device} not found in pool {r.pool}"),))
                for res, m in d.node_allocatable.items():
                    if m.capacity_key is not None:
                        if r.consumed_capacity is None:
                            return (), Status(Code.ERROR, ((
                                f"claim {c.namespace}/{c.name}, device {r.device}: ConsumedCapacity is nil, but "
                                f"Capacity key '{m.capacity_key}' is set in NodeAllocatableResourceMappings for "
                                f"resource {res}"),))
                        if m.capacity_key not in r.consumed_capacity:
                            continue
                        q = r.consumed_capacity[m.capacity_key] * m.multiplier
                    else:
                        q = m.multiplier
                    resources[res] = resources.get(res, Fraction(0)) + q
            if not resources:
                continue
            containers = tuple(ct.name for ct in (*pod.init_containers, *pod.containers)
                               for n in ct.claims if by_name.get(n) == c.name)
            statuses.append(NodeAllocatableClaimStatus(c.name, containers, tuple(sorted(resources.items()))))
        statuses.sort(key=lambda st: st.claim)
        for st in statuses:
            if not st.containers:
                return (), _unresolvable(f"claim {st.claim}: node-allocatable resource claim not referenced by any "
                                         "container within the pod")
        v = self.handle.version
        with_status = replace_pod(pod, node_allocatable_claims=tuple(statuses))
        demand = pod_requests(with_status, v, node_allocatable=True)
        level = pod_level_requests(pod, v)
        if level is not None:
            without_level = pod_requests(replace_pod(with_status, level_requests={}), v, node_allocatable=True)
            for name, want in demand.items():
                if name in without_level and without_level[name] > want:
                    return (), _unresolvable(f"pod level request for {name} is insufficient to cover the "
                                             "aggregated container and node-allocatable DRA requests")
        return tuple(statuses), _fits(node_info, demand)

    def post_filter(self, state: CycleState, pod: Pod, statuses) -> tuple[None, Status]:
        if not pod.resource_claims and self.handle.version.minor == 33:
            return None, Status(Code.UNSCHEDULABLE, ())  # 1.33's fast path: no reason, state unread
        s = state.get(NAME)
        if s is None:
            # its PreFilter never ran (an earlier PreFilter rejected the pod as
            # unresolvable): upstream's getStateData fails, the PostFilter plugins stop
            # with that Error and preemption does not run
            return None, Status(Code.ERROR, ("not found",))
        if not isinstance(s, DRAState) or not s.claims:
            return None, Status(Code.UNSCHEDULABLE, ("no new claims to deallocate",))
        for i in sorted(s.unavailable):
            c = s.claims[i]
            if not c.reserved_for or c.reserved_for == (pod.key,):
                self.tracker.deallocate(c)
                self.handle.dra_events.append(PodEvent(CLAIM_UPDATE, pod, claim=(c, self.tracker.get(
                    c.namespace, c.name))))
                return None, Status(Code.UNSCHEDULABLE, ("deallocation of ResourceClaim completed",))
        if self.workload_claims:
            st = self._unreserve_pod_group_claims(pod)
            if st is not None:
                return None, st
        return None, Status(Code.UNSCHEDULABLE, ("still not schedulable",))

    def _unreserve_pod_group_claims(self, pod: Pod) -> Status | None:
        """unreservePodGroupClaims (DRAWorkloadResourceClaims): when none of the group's pods
        is assumed or bound in the cache (not counting this cycle's assumptions), the first
        of its PodGroup's claims that is allocated and reserved for the pod or its PodGroup
        loses the PodGroup's reservation (a patch: the allocation stays), so a later cycle's
        PostFilter may deallocate it. None: nothing done."""
        if not pod.scheduling_group:
            return None
        key = (pod.namespace, pod.scheduling_group)
        cache = getattr(self.handle.gang, "groups", {}).get(key)
        if cache is not None and cache.scheduled_count() > 0:
            return None
        pg = getattr(self.handle.gang, "pod_groups", {}).get(key)
        if pg is None:
            return Status(Code.ERROR, (f'podgroup.scheduling.k8s.io "{pod.scheduling_group}" not found',))
        for gc in pg.resource_claims:
            name = gc.claim_name if gc.claim_name is not None else gc.generated_name(pg.name)
            c = self.tracker.get(pg.namespace, name)
            if c is None:
                return Status(Code.ERROR, (f'resourceclaim.resource.k8s.io "{name}" not found',))
            if gc.template is not None and c.owner_pod_group != pg.name:
                continue  # IsForPodGroup fails: not the PodGroup's claim
            if c.allocation is not None and self.is_reserved_for_pod(pod, c):
                ref = f"{POD_GROUP_REF}{pg.name}"
                if ref in c.reserved_for:
                    self.tracker.unreserve(c, ref)
                    self.handle.dra_events.append(PodEvent(CLAIM_UPDATE, pod, claim=(c, self.tracker.get(
                        c.namespace, c.name))))
                return _unresolvable("ResourceClaim unreserved for PodGroup")
        return None

    def reserve_in_flight(self, state: CycleState, pod: Pod, node: str) -> list[str]:
        """Reserve of a pod that waits at Permit before its PreBind: each claim to allocate
        gets its allocation in flight (other pods' filters count its devices; a pod that
        shares the claim finds it in the process of being allocated); nothing is written.
        ``reserve`` writes them at PreBind. Returns what kspread does not model of it: the
        pod's extended resources' claim (empty: modelled)."""
        s = state.get(NAME)
        if not isinstance(s, DRAState) or not s.claims:
            return []
        if len(s.claims) > s.user_claims and node in s.node_allocations:
            return [extended_claim_name(pod.name)]
        found = s.node_allocations.get(node) or []
        if not found:
            # as upstream's Reserve: the only claim left to allocate is the extended resources'
            # one, and the node's device plugin serves them (a claim of the pod's own to
            # allocate has its allocation on every node its Filter passed): nothing in flight
            return []
        allocations = iter(found)
        for c in s.claims:
            if c.allocation is None:
                # a claim in flight already (the group's pendingAllocations) gains a sharer and
                # keeps its allocation: the one given here is dropped
                self.tracker.signal_in_flight(replace(c, allocation=next(allocations)), pod.key)
        return []

    def prebind_conflict(self, state: CycleState, pod: Pod) -> tuple[str, int] | None:
        """bindClaim's failure at PreBind for a claim the pod allocates (its own allocation,
        or a pending one it reused) that another pod's PreBind allocated since the pod's
        PreFilter read it (1.36: two pods of one pod group cycle sharing a claim): the
        update from that old copy conflicts, the refreshed claim is allocated, and PreBind
        fails; or (DRAWorkloadResourceClaims) for an allocated claim both reserve for their
        PodGroup: the refreshed claim gets the PodGroup twice, which the API server refuses.
        Returns the PreBind error and the failing claim's index in the pod's order (PreBind
        wrote the claims before it), or None."""
        s = state.get(NAME)
        if not isinstance(s, DRAState):
            return None
        for i, c in enumerate(s.claims[:s.user_claims]):
            now = self.tracker.get(c.namespace, c.name)
            if c.allocation is None and now is not None and now.allocation is not None:
                return f"claim {c.namespace}/{c.name} got allocated elsewhere in the meantime", i
            ref = self.binding(pod, i)
            if c.allocation is not None and not self.is_reserved_for_pod(pod, c) and ref != pod.key and \
                    now is not None and ref in now.reserved_for:
                # another pod of the group cycle reserved it for the PodGroup since this pod's
                # PreFilter: the update from the old copy conflicts, and bindClaim appends the
                # PodGroup again to the refreshed claim, a duplicate uid the API server refuses
                pg = getattr(self.handle.gang, "pod_groups", {}).get((pod.namespace, pod.scheduling_group))
                uid = pg.uid_or_default if pg is not None else ""
                return (f'add reservation to claim {c.namespace}/{c.name}: ResourceClaim.resource.k8s.io "{c.name}" '
                        f'is invalid: status.reservedFor[{len(now.reserved_for)}]: Duplicate value: "{uid}"'), i
        return None

    def claim_keys(self, state: CycleState) -> list[str]:
        """The keys of the pod's own claims in the order PreBind writes them (none without
        DynamicResources' state)."""
        s = state.get(NAME)
        return [c.key for c in s.claims[:s.user_claims]] if isinstance(s, DRAState) else []

    def unreserve_written(self, state: CycleState, pod: Pod, upto: int) -> list[PodEvent]:
        """Unreserve after a PreBind that failed at claim ``upto``: the claims before it that
        PreBind reserved for the pod lose the reservation (a strategic-merge patch; the
        allocation stays). Returns the claim events."""
        s = state.get(NAME)
        if not isinstance(s, DRAState):
            return []
        events = []
        for c in s.claims[:upto]:
            before = self.tracker.get(c.namespace, c.name)
            if before is None or before.allocation is None or pod.key not in before.reserved_for:
                continue
            self.tracker.unreserve(before, pod.key)
            events.append(PodEvent(CLAIM_UPDATE, pod, claim=(before, self.tracker.get(c.namespace, c.name))))
        return events

    def changed_since_reserve(self, state: CycleState, pod: Pod) -> list[str]:
        """The pod's claims written since its Reserve as bindClaim finds them at PreBind:
        one it allocated now allocated (elsewhere), or one that was allocated now not."""
        s = state.get(NAME)
        if not isinstance(s, DRAState):
            return []
        out = []
        for c in s.claims[:s.user_claims]:
            now = self.tracker.get(c.namespace, c.name)
            if now is None or (now.allocation is None) != (c.allocation is None):
                out.append(f"{c.namespace}/{c.name}")
        return out

    def reserve(self, state: CycleState, pod: Pod, node: str, upto: int | None = None) -> list[PodEvent]:
        """Reserve and PreBind: each unallocated claim gets the allocation Filter found
        for the node, and every claim is reserved for the pod (``upto``: the claims before
        that index only, PreBind failing there). Returns the claim events."""
        s = state.get(NAME)
        if not isinstance(s, DRAState) or not s.claims:
            return []
        allocations = iter(s.node_allocations.get(node, []))
        events = []
        for i, c in enumerate(s.claims):
            if upto is not None and i >= upto:
                break
            if i == s.user_claims and c.name == SPECIAL_CLAIM_NAME:
                # PreBind creates the claim for the extended resources, allocated and reserved
                if node not in s.node_allocations:
                    continue  # no claim of the pod's to allocate: the node's allocatable serves them
                made = replace(s.node_extended.get(node, c), name=extended_claim_name(pod.name))
                alloc = next(allocations)
                if not made.requests:
                    # the node's allocatable serves them: upstream's Filter gives the node a variant
                    # of the claim with no requests, Reserve signals it with an allocation of no
                    # device (the v1.36.2 single-cycle oracle) and PreBind creates it (the v1.35.4
                    # and v1.36.2 backends bind the pod and keep the claim, unallocated)
                    raise CaseError(
                        f"pod {pod.key} has resource claims and extended resources backed by devices that node "
                        f"{node}'s allocatable serves: upstream's PreBind creates an extended resources claim "
                        "with no request for it, which kspread does not model", ["pod"])
                self.tracker.claims[(made.namespace, made.name)] = made
                self.tracker.allocate(made, alloc, pod.key)
                events.append(PodEvent(CLAIM_UPDATE, pod, claim=(None, self.tracker.get(made.namespace, made.name))))
                continue
            before = self.tracker.get(c.namespace, c.name)
            assert before is not None
            if c.allocation is not None and self.is_reserved_for_pod(pod, c):
                continue  # PreBind: reserved for the pod (or its PodGroup) when PreFilter read it
            ref = self.binding(pod, i)
            if self.handle.version.minor >= 36 and ref not in before.reserved_for and \
                    len(before.reserved_for) >= reserved_for_max(self.handle.version):
                raise CaseError(f"pod {pod.key}'s PreBind reserves claim {c.namespace}/{c.name}, which has "
                                f"{len(before.reserved_for)} reservedFor entries: the API server refuses more, and "
                                "the PreBind fails, which kspread does not model", ["schedule"])
            if c.allocation is None:
                self.tracker.allocate(before, next(allocations), ref)
            else:
                self.tracker.reserve(before, ref)
            after = self.tracker.get(c.namespace, c.name)
            if binding_conditions_enabled(self.handle.version) and after is not None and after.allocated_at is None:
                # bindClaim sets the allocation timestamp of a claim it reserves, when unset
                after = replace(after, allocated_at=self.tracker.now)
                self.tracker.claims[(c.namespace, c.name)] = after
            if after != before:
                events.append(PodEvent(CLAIM_UPDATE, pod, claim=(before, after)))
        return events

    def pod_event_hint(self, pod: Pod, event: PodEvent) -> bool:
        """isSchedulableAfterClaimChange: a claim deallocated may free devices; else only
        a change of a claim the pod uses, and of its status."""
        if event.claim is None:
            return True
        old, new = event.claim
        if old is not None and old.allocation is not None and new.allocation is None:
            return True
        uses = any(pc.claim_name == new.name for pc in pod.resource_claims) and pod.namespace == new.namespace
        if not uses:
            return False
        if old is None:
            return True
        return (old.allocation, old.reserved_for, old.allocated_at, old.device_conditions) != \
            (new.allocation, new.reserved_for, new.allocated_at, new.device_conditions)


class DynamicResourcesScoring(DynamicResourcesFilter, ScorePlugin):
    """From 1.35: Score from the subrequests allocated, default normalization."""

    has_normalize = True

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        out = np.zeros(len(nodes), np.int64)
        s = state.get(NAME)
        if not isinstance(s, DRAState) or not s.claims:
            return out
        for j, name in enumerate(nodes.names):
            allocs = s.node_allocations.get(name)
            if allocs is None:
                continue
            out[j] = compute_score(s.claims, allocs, self.handle.version.minor >= 36)
        return out

    def normalize_scores(self, state: CycleState, pod: Pod, names, scores: np.ndarray) -> np.ndarray:
        """helper.DefaultNormalizeScore(MaxNodeScore, false)."""
        return default_normalize_scores(self.handle.version.max_node_score, False, scores)


def compute_score(claims: list[ResourceClaim], allocations: list[Allocation], own_allocations: bool = False) -> int:
    """computeScore. 1.35 indexes the node's allocations (one per claim it had to
    allocate) by the claim's place among all the pod's claims, which fails (an Error) when
    an allocated claim comes before an unallocated one; kspread follows it. From 1.36
    (``own_allocations``) an allocated claim scores its own allocation and the others take
    the node's allocations in turn."""
    score = 0
    taken = 0
    for i, c in enumerate(claims):
        if own_allocations and c.allocation is not None:
            allocation = c.allocation
        else:
            k = taken if own_allocations else i
            if k >= len(allocations):
                raise ScoreFailed(Status.of(Code.ERROR, f"number of allocations {len(allocations)} is smaller than "
                                                        "number of claims" + (" needing allocation" if own_allocations
                                                                              else "")))
            allocation = allocations[k]
            taken += 1
        subs = {d.request for d in allocation.devices if "/" in d.request}
        for r in c.requests:
            if r.exactly is not None:
                continue
            for n, sub in enumerate(r.first_available):
                if f"{r.name}/{sub.name}" in subs:
                    score += FIRST_AVAILABLE_MAX_SIZE - n
    return score


@register("DynamicResources", first=26)
def _dynamic_resources(args, handle, config_path: tuple = ()) -> Plugin:
    if dynamic_resources_scores(handle.version):
        return DynamicResourcesScoring(args, handle, config_path)
    return DynamicResourcesFilter(args, handle, config_path)
