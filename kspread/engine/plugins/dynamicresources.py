"""DynamicResources (from 1.26; structured parameters as kspread models them from
1.31; in the default profile from 1.34, when the DynamicResourceAllocation gate went
GA, and with the gate on before): a pod's ResourceClaims (kspread/engine/devices.py)
allocated by the structured allocator (kspread/engine/allocator.py), as upstream's
plugin of v1.35.4 does:

* PreFilter: a pod without claims is skipped. Each claim must exist (kspread refuses a
  case where one does not: upstream's PreEnqueue would hold the pod), not be being
  deleted, be the pod's own when made from a template, and, when allocated, have room
  in reservedFor or name the pod; an unallocated claim's device classes must exist.
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

It implements no PreFilter AddPod/RemovePod, as upstream's: the preemption dry run does
not free devices. Deleting a pod (a preemption victim, or a step) releases its claims as
the resource claim controller does: a claim no pod reserves any more is deallocated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kspread.engine.allocator import AllocationError, Allocator, FailedOnNode, Features
from kspread.engine.devices import (
    FIRST_AVAILABLE_MAX_SIZE,
    Allocation,
    ClaimTracker,
    ResourceClaim,
    selector_matches,
)
from kspread.engine.framework.interface import (
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
from kspread.engine.model import Pod
from kspread.engine.plugins.nodematch import default_normalize_scores
from kspread.engine.snapshot import NodeInfo, NodeSet
from kspread.engine.versions import Version

NAME = "DynamicResources"
CLAIM_UPDATE = "ResourceClaimUpdate"  # a PodEvent action: a claim's status changed


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
        admin_marks_own_claim=version.minor >= 34,  # v1.33.3's allocator marks no admin device
        all_rolls_back=version.minor >= 34,  # nor gives back an All request's devices
    )


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


def pod_claims(tracker: ClaimTracker, pod: Pod) -> list[ResourceClaim]:
    out = []
    for pc in pod.resource_claims:
        c = tracker.get(pod.namespace, pc.claim_name)
        assert c is not None  # the case format refuses a pod whose claim does not exist
        out.append(c)
    return out


class DynamicResourcesFilter(Plugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin):
    name = NAME
    signs_pods = True  # SignPod: pods with claims are not signable (sign_pod)
    pod_events = frozenset({CLAIM_UPDATE})

    def sign_pod(self, pod: Pod):
        return None if pod.resource_claims else ()

    @property
    def tracker(self) -> ClaimTracker:
        t = self.handle.claims
        assert t is not None
        return t

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        s = DRAState()
        state.write(NAME, s)
        if not pod.resource_claims:
            return SKIP
        claims = pod_claims(self.tracker, pod)
        for pc, c in zip(pod.resource_claims, claims):
            if c.deleting:
                return _unresolvable(f'resourceclaim "{c.name}" is being deleted')
            if pc.from_template and c.owner_pod != pod.key:
                return _unresolvable(f"ResourceClaim {c.namespace}/{c.name} was not created for pod "
                                     f"{pod.namespace}/{pod.name} (pod is not owner)")
        to_allocate = 0
        for c in claims:
            if c.allocation is not None:
                if len(c.reserved_for) >= reserved_for_max(self.handle.version) and pod.key not in c.reserved_for:
                    return _unresolvable("resourceclaim in use")
                s.available_on.append(c.allocation.node_selector)
                continue
            s.available_on.append(None)
            to_allocate += 1
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
            s.allocator = Allocator(allocator_features(self.handle.version), t.allocated_devices(),
                                    t.objects.classes, t.objects.slices, t.cel_results)
        s.claims = claims
        return SUCCESS

    def _check_class(self, class_name: str, request: str) -> Status | None:
        if class_name not in self.tracker.objects.classes:
            return _unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = state.read(NAME)
        assert isinstance(s, DRAState)
        if not s.claims:
            return SUCCESS
        node = node_info.node
        unavailable = [i for i, sel in enumerate(s.available_on)
                       if s.claims[i].allocation is not None and sel is not None and not selector_matches(sel, node)]
        allocations: list[Allocation] | None = None
        if s.allocator is not None:
            todo = [c for c in s.claims if c.allocation is None]
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
        if unavailable:
            s.unavailable.update(unavailable)
            return _unresolvable("resourceclaim not available on the node")
        if allocations is not None:
            s.node_allocations[node.name] = allocations
        return SUCCESS

    def post_filter(self, state: CycleState, pod: Pod, statuses) -> tuple[None, Status]:
        if not pod.resource_claims and self.handle.version.minor <= 33:
            return None, Status(Code.UNSCHEDULABLE, ())  # up to 1.33: no reason, state unread
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
        return None, Status(Code.UNSCHEDULABLE, ("still not schedulable",))

    def reserve(self, state: CycleState, pod: Pod, node: str) -> list[PodEvent]:
        """Reserve and PreBind: each unallocated claim gets the allocation Filter found
        for the node, and every claim is reserved for the pod. Returns the claim events."""
        s = state.get(NAME)
        if not isinstance(s, DRAState) or not s.claims:
            return []
        allocations = iter(s.node_allocations.get(node, []))
        events = []
        for c in s.claims:
            before = self.tracker.get(c.namespace, c.name)
            assert before is not None
            if c.allocation is None:
                self.tracker.allocate(before, next(allocations), pod.key)
            else:
                self.tracker.reserve(before, pod.key)
            after = self.tracker.get(c.namespace, c.name)
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
        return (old.allocation, old.reserved_for) != (new.allocation, new.reserved_for)


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
            out[j] = compute_score(s.claims, allocs)
        return out

    def normalize_scores(self, state: CycleState, pod: Pod, names, scores: np.ndarray) -> np.ndarray:
        """helper.DefaultNormalizeScore(MaxNodeScore, false)."""
        return default_normalize_scores(self.handle.version.max_node_score, False, scores)


def compute_score(claims: list[ResourceClaim], allocations: list[Allocation]) -> int:
    """computeScore. Upstream indexes the node's allocations (one per claim it had to
    allocate) by the claim's place among all the pod's claims; kspread follows it."""
    score = 0
    for i, c in enumerate(claims):
        if i >= len(allocations):
            raise ScoreFailed(Status.of(Code.ERROR, f"number of allocations {len(allocations)} is smaller than "
                                                    "number of claims"))
        subs = {d.request for d in allocations[i].devices if "/" in d.request}
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
