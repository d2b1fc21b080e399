"""One scheduling cycle (schedule_one.go; generic_scheduler.go before 1.25), and
``schedule`` sequences of cycles.

``Scheduler`` owns the snapshot, the nominator and the framework built from the
case's profile, and runs ``schedule_one`` for each incoming pod: PreFilter, the
nominated node first where the version does so, Filter over the nodes in the
node tree's order (stopping early as percentageOfNodesToScore and first-fit
say), extender filters, PostFilter when nothing fits, and otherwise PreScore,
Score, NormalizeScore, weights and extenders, then the top-scoring nodes.
The search is upstream's: what it finds (``searched``) is what is scored and
selected from. Every other node is filtered too, so that ``feasible`` and the
statuses cover the whole cluster, without moving the search's start index.

Sequences (``schedule``). The incoming pods go through upstream's scheduling queue as
``kspread.engine.queue`` models it (activeQ, backoffQ, the unschedulable pods, the events
that move them, and the clock rule). Each cycle sees the cluster as the cycles before it
left it; the snapshot is updated in place (``Snapshot.add_pod`` / ``remove_pod``), never
rebuilt:

* a pod whose cycle selects a node is bound there (with several top-scoring nodes,
  the first in node order): an AssignedPodAdd for the queue;
* a pod that preempts: its victims are deleted at once (kspread does not model the
  graceful termination period: the victims are gone before the next cycle), pods of
  lower priority nominated to that node lose their nomination, and the pod is
  nominated to the node. The deletions (and, from 1.33, the cleared nominations) are
  the queue's events; the pod waits until one moves it, and is then tried on its
  nominated node first where the version does so (PreferNominatedNode, beta and on
  from 1.22);
* a pod that stays unschedulable waits in the queue for an event that may make it
  schedulable; its nomination, if it has one, is kept, except where PostFilter clears
  it (no node where preemption might help; from 1.22 also no preemption candidate).

``placements`` reports, for every pod of the sequence, the node it ends bound to;
for a pod that is not bound, the node it ends nominated to; null when it ends with
neither (including a pod bound earlier in the sequence and later evicted by a
preemption).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from kspread.engine.devices import ClaimTracker
from kspread.engine.ephemeral import delete_owned_claims
from kspread.engine.extender import ExtenderCall, Extenders
from kspread.engine.framework.handle import Handle
from kspread.engine.framework.interface import PodEvent, StatusView
from kspread.engine.framework.preemption import PreemptionOutcome
from kspread.engine.framework.profile import Extender, Profile
from kspread.engine.framework.runtime import Framework, ScoreTable, first_error, raise_error_of
from kspread.engine.framework.status import Code, CycleState, SchedulingError, Status
from kspread.engine.listers import Listers
from kspread.engine.model import Cluster, Node, Pod, replace_pod
from kspread.engine.plugins import register_in_tree
from kspread.engine.plugins.dynamicresources import node_allocatable_statuses
from kspread.engine.plugins.gangscheduling import NAME as GANG
from kspread.engine.plugins.gangscheduling import GangScheduling, timeout_reason
from kspread.engine.plugins.helper import get_zone_key
from kspread.engine.plugins.podgroups import PodGroups
from kspread.engine.podgroupcycle import pod_group_cycle
from kspread.engine.queue import EXTENDER, SchedulingQueue
from kspread.engine.resources import node_allocatable_claims_on
from kspread.engine.snapshot import NodeSet, Nominator, Snapshot, swap_remove
from kspread.engine.steps import World
from kspread.engine.versions import Version
from kspread.errors import CaseError

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 50  # 1.12/1.13 only



def wrap_int64(x: int) -> int:
    """``x`` as Go's int64 arithmetic leaves it (two's complement wrap-around)."""
    return ((x + (1 << 63)) % (1 << 64)) - (1 << 63)

class SchedulingInput(Protocol):
    """What the scheduler reads of a case (the case format's ``Case`` has these)."""

    version: Version
    profile: Profile
    cluster: Cluster
    incoming: list[Pod]
    is_sequence: bool


_FilterView = StatusView


@dataclass(slots=True)
class _LazyTotals:
    nodes: Any  # NodeSet
    totals: np.ndarray


@dataclass(slots=True)
class CycleResult:
    """One cycle's result. Per-node data (statuses, scores, totals) is kept as arrays
    and given as mappings when asked; ``compact`` drops it (and the cycle state) once a
    sequence no longer needs it."""

    pod: Pod
    state: CycleState | None = None  # the cycle's state, for explaining it afterwards
    pre_filter_status: Status | None = None  # PreFilter's status (not Success: no filter ran)
    scores: ScoreTable | None = None
    _selected: Any = None  # list[str], or None with selected_positions set
    post_filter_ran: bool = False
    post_filter_status: Status | None = None
    # the reasons of the PostFilter plugins that said Unschedulable before the last one
    # (RunPostFilterPlugins joins them all into the status it returns)
    post_filter_reasons: tuple[str, ...] = ()
    preemption: PreemptionOutcome | None = None
    error: str | None = None
    _statuses: Any = None  # dict[str, Status] or _FilterView
    _totals: Any = None  # dict[str, int] or _LazyTotals
    _searched: Any = None  # list[str] or (snapshot node list, positions array)
    # snapshot positions of ``selected`` (when the cycle scored), for sequences
    selected_positions: Any = None
    _names: Any = None  # the snapshot's node names (Snapshot.name_array), read by selected_positions
    bound_node: str | None = None  # the node a sequence bound the pod to
    # GangScheduling's Permit: the node the pod waits on, assumed, for its gang (None: it
    # did not wait); it binds there when the gang is complete
    waiting_on: str | None = None
    # DynamicResources' PreBind: the pod waits on ``waiting_on`` for its devices' binding
    # conditions (rather than at GangScheduling's Permit)
    waiting_prebind: bool = False
    # a pod group cycle's verdict on the pod (kspread.engine.podgroupcycle.PodOutcome);
    # None: the pod was scheduled alone
    pod_group: Any = None
    attempt: int = 1  # the pod's scheduling cycle this is (a sequence retries pods)
    signature: Any = None  # OpportunisticBatching: the pod's signature (None: not signed)
    batch_hint: str | None = None  # the node the batch offered this cycle
    batch_ties: list[str] = field(default_factory=list)  # nodes of the hint's total in the batch
    batch_tie_positions: Any = None  # their snapshot positions (None: not known)
    # from 1.35, without extender scores: the tied node upstream's heap pops first (heap_first)
    heap_pick: str | None = None
    compacted: bool = False
    # every call of an HTTP extender in the cycle (and its binding), in order
    extender_calls: list[ExtenderCall] = field(default_factory=list)

    @property
    def selected(self) -> list[str]:
        """The top-scoring nodes (feasible order)."""
        if self._selected is None:
            if self.selected_positions is None or self._names is None:
                return []
            self._selected = self._names[self.selected_positions].tolist()
        return self._selected

    @selected.setter
    def selected(self, value: list[str]) -> None:
        self._selected = value
        self.selected_positions = None

    @property
    def feasible(self) -> list[str]:
        """Every node that passes every filter plugin and extender filter (node tree
        order), whatever the search reached: the `feasible` expectation."""
        st = self._statuses
        if st is None:
            return []
        if isinstance(st, _FilterView):
            names = st.names
            ok = [k for k, s in enumerate(st.table) if s.is_success()]
            return [names[j] for j in np.flatnonzero(np.isin(st.ids, ok)).tolist() if names[j] not in st.overrides]
        return [n for n, s in st.items() if s.is_success()]

    @property
    def searched(self) -> list[str]:
        """The feasible nodes the cycle's search found, in search order: the nodes scored
        and selected from (percentageOfNodesToScore, first fit, the nominated node first)."""
        f = self._searched
        if f is None:
            return []
        if isinstance(f, tuple):
            names, positions = f
            f = self._searched = names[positions].tolist()
        return f

    @searched.setter
    def searched(self, value: list[str]) -> None:
        self._searched = value

    def searched_count(self) -> int:
        f = self._searched
        return 0 if f is None else len(f[1]) if isinstance(f, tuple) else len(f)

    def searched_positions(self, position: dict[str, int]) -> np.ndarray:
        f = self._searched
        if isinstance(f, tuple):
            return f[1]
        return np.array([position[n] for n in (f or [])], np.intp)

    @property
    def statuses(self) -> dict[str, Status]:
        """Every node's filter status (node tree order)."""
        st = self._statuses
        if st is None:
            return {}
        if isinstance(st, _FilterView):
            st = self._statuses = st.as_dict()
        return st

    @statuses.setter
    def statuses(self, value: dict[str, Status]) -> None:
        self._statuses = value

    @property
    def totals(self) -> dict[str, int]:
        t = self._totals
        if t is None:
            return {}
        if isinstance(t, _LazyTotals):
            t = self._totals = dict(zip(t.nodes.names, t.totals.tolist()))
        return t

    @totals.setter
    def totals(self, value: dict[str, int]) -> None:
        self._totals = value

    @property
    def unschedulable(self) -> bool:
        has_selected = bool(self._selected) or (self.selected_positions is not None and len(self.selected_positions))
        return not has_selected and (self.preemption is None or self.preemption.nominated_node is None)

    def compact(self) -> None:
        """Keep only what a later report of a sequence reads of an earlier cycle: the
        pod, the node it was bound to (``selected`` becomes that node alone), the
        preemption outcome's decision (``PreemptionOutcome.decision``), the error."""
        self.state = None
        if self.preemption is not None:
            self.preemption = self.preemption.decision()
        self._searched = None
        if self.bound_node is not None:
            # of several top-scoring nodes, only the one the pod was bound to
            self._selected = [self.bound_node]
        elif self._selected is None and self.selected_positions is not None and self._names is not None:
            # kept as positions, the names read when asked (a pod group cycle compacts each
            # pod's result before the group binds; the snapshot's names never change)
            self.selected_positions = self.selected_positions.astype(np.int32)
        else:
            _ = self.selected
        if self._selected is not None:
            self.selected_positions = None
            self._names = None
        self.scores = None
        self._statuses = None
        self._totals = None
        self.compacted = True


def num_feasible_nodes_to_find(version: Version, percentage: int | None, num_all: int) -> int:
    """``numFeasibleNodesToFind``: how many feasible nodes the search looks for."""
    if percentage is None:
        return num_all
    if not version.adaptive_percentage_of_nodes:
        if num_all < MIN_FEASIBLE_NODES_TO_FIND or percentage <= 0 or percentage >= 100:
            return num_all
        return max(num_all * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)
    if num_all < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return num_all
    pct = percentage
    if pct == 0:
        pct = 50 - num_all // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def node_tree_zones(nodes: list[Node], version: Version) -> dict[str, list[str]]:
    """The node tree: zone -> its nodes, zones in the order their first node was added."""
    zones: dict[str, list[str]] = {}
    for n in nodes:
        zones.setdefault(get_zone_key(n, version), []).append(n.name)
    return zones


def interleave(lists: list[list[str]]) -> list[str]:
    """The node tree's list(): one node of each zone in turn."""
    out: list[str] = []
    depth = 0
    total = sum(len(lst) for lst in lists)
    while len(out) < total:
        for lst in lists:
            if depth < len(lst):
                out.append(lst[depth])
        depth += 1
    return out


def node_tree_order(nodes: list[Node], version: Version) -> list[str]:
    """The order the scheduler walks nodes in: the node tree interleaves zones
    (zones in the order their first node was added, one node of each in turn)."""
    return interleave(list(node_tree_zones(nodes, version).values()))


def _binding_conditions(sched: Scheduler, state: CycleState, pod: Pod, node: str) -> list[str]:
    """The devices with binding conditions the pod's PreBind would wait for (hasBindingConditions):
    those Filter allocated on the node, else those of its claims allocated before."""
    from kspread.engine.plugins.dynamicresources import waits_for_binding_conditions

    waiting = waits_for_binding_conditions(state, node)
    if not waiting:
        claims = [sched.claims.get(pod.namespace, pc.claim_name) for pc in pod.resource_claims]
        waiting = [str(d) for c in claims if c is not None and c.allocation is not None
                   for d in c.allocation.devices if d.binding_conditions]
    return waiting


def _binding_wait(sched: Scheduler, state: CycleState, pod: Pod, node: str) -> bool:
    """Whether DynamicResources' PreBind waits for binding conditions (hasBindingConditions
    over the pod's claims). Refused by name where kspread does not model the wait: a claim
    another pod reserves, and a pod whose volumes VolumeBinding binds (a gang pod that
    waits at Permit is refused before)."""
    from kspread.engine.plugins.dynamicresources import claim_ready

    waiting = _binding_conditions(sched, state, pod, node)
    if not waiting:
        return False
    what = ""
    assert sched.claims is not None
    if any(c is not None and c.allocation is not None and any(d.binding_conditions for d in c.allocation.devices)
           and set(c.reserved_for) - {pod.key} and not claim_ready(c)[0]
           for c in (sched.claims.get(pod.namespace, pc.claim_name) for pc in pod.resource_claims)):
        what = "a claim another pod reserves, its conditions not met"
    elif any(c.extended_resources and c.owner_pod == pod.key and c.allocation is not None
             and any(d.binding_conditions for d in c.allocation.devices) for c in sched.claims):
        what = "a pod's extended resources backed by devices"
    elif sched.handle.storage is not None and pod.volumes:
        what = "a pod with volumes (VolumeBinding's PreBind)"
    if what:
        raise CaseError(f"pod {pod.key} was allocated devices with binding conditions ({', '.join(waiting)}): "
                        f"DynamicResources' PreBind waits for a driver to set them (DRADeviceBindingConditions), "
                        f"which kspread does not model in a sequence for {what}", ["schedule"])
    return True


@dataclass
class PreBindWait:
    """A pod waiting in DynamicResources' PreBind: its queue entry, its node, and the
    clock its wait began (its polls: every POLL_SECONDS from there) and the clock of the
    last change of its claims' status (a poll after it sees the change)."""

    q: Any
    node: str
    start: int
    since: int


POLL_SECONDS = 5  # PreBind polls the claims' status every 5 s (wait.PollUntilContextTimeout)


class Scheduler:
    def __init__(self, case: SchedulingInput) -> None:
        self.case = case
        self.version = case.version
        cluster = case.cluster
        self.snapshot = Snapshot(cluster.nodes, cluster.pods, self.version)
        self.nominator = Nominator()
        for p in cluster.pods:
            if p.node_name is None and p.nominated_node:
                self.nominator.add(p)
        self.handle = Handle(self.version, cluster, self.snapshot, Listers(cluster), self.nominator)
        self.claims = ClaimTracker(cluster.devices)
        self.handle.claims = self.claims
        # the storage objects; a sequence's bindings change this copy, never the case's
        self.handle.storage = cluster.storage.copy() if cluster.storage is not None else None
        register_in_tree()
        self.framework = Framework(case.profile, self.handle)
        self.extenders: list[Extender] = case.profile.extenders
        # (the snapshot as it is when called: a step replaces it)
        self.ext = Extenders(self.extenders, self.version, lambda n: self.snapshot.get(n).node,
                             lambda n: list(self.snapshot.get(n).pods.values()))
        self.handle.extenders = self.ext
        # the whole node order while a placement narrows ``order`` (set_placement)
        self._full_order: list[str] | None = None
        # pod -> the placements its pod group's last cycle tried (kspread's order) when none
        # fit and they gave its pods different statuses: upstream reports the first in a Go
        # map's order, kspread the first of these (TopologyAwareWorkloadScheduling)
        self.placement_order: dict[str, tuple[str, ...]] = {}
        # pod -> the binding races of its pod group cycles it took part in (1.36: two pods of a
        # cycle whose PreBinds write one shared claim): each the claim and the pods in the
        # order kspread bound them, the first the winner; upstream's binding cycles are
        # goroutines, which may run in another order
        self.binding_races: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        self._set_order(node_tree_order(cluster.nodes, self.version))
        self.next_start_node_index = 0
        # every node the run has known, in node order: the case's, then those steps added
        self.node_names: list[str] = [n.name for n in cluster.nodes]
        # pods not bound (the case's pending pods and the incoming ones), as they are now
        self.pending: dict[str, Pod] = {p.key: p for p in cluster.pods if p.node_name is None}
        # incoming pods bound by this run
        self.bound: dict[str, Pod] = {}
        # scheduling cycles each incoming pod took
        self.attempts: dict[str, int] = {}
        # OpportunisticBatching: on with the gate when every PreFilter, Filter, PreScore
        # and Score plugin signs pods and there is no extender (computeBatchablePlugins)
        fwk = self.framework
        self._signers: list[Any] = []
        for pl in [*fwk.pre_filter_plugins, *fwk.filter_plugins, *fwk.pre_score_plugins,
                   *(sp.plugin for sp in fwk.score_plugins)]:
            if pl not in self._signers:
                self._signers.append(pl)
        self.batching = (self.version.gate("OpportunisticBatching") and not self.extenders
                         and all(pl.signs_pods for pl in self._signers)
                         and not any(pl.signs_no_pod() for pl in self._signers))
        # (signature, the scored nodes left, in upstream's heap)
        self._batch: tuple[tuple, SortedNodeScores] | None = None
        self._last_cycle: tuple[int, str] | None = None  # (cycle, chosen node) of the last Store
        self.cycle_count = 0
        self.skip_post_filters = False  # SetSkipAllPostFilterPlugins (workload-aware preemption's runs)
        # the node order the last cycle's snapshot listed (None: no cycle yet), which the next
        # UpdateSnapshot keeps unless a node came or went (steps.py, _reset)
        self.cycle_order: list[str] | None = None
        self._hint_ties: list[str] = []
        self._hint_tie_positions: np.ndarray | None = None
        # pod -> the tied nodes its placement was taken from (snapshot positions, as
        # mark_tie keeps them): tied_nodes
        self.ties: dict[str, np.ndarray] = {}
        # the storage events of the last binding (VolumeBinding's PreBind)
        self.storage_events: list[PodEvent] = []
        # a sequence with steps: its World (the steps' record), set by run_case
        self.sequence: Any = None
        # GangScheduling and the workload manager (1.35, gates GenericWorkload and
        # GangScheduling on); the pods waiting at its Permit: key -> (assumed pod, node)
        self.gang = GangScheduling(cluster.workloads, cluster.pods) \
            if self.version.gate("GangScheduling") and self.version.minor < 36 else None
        # 1.36's pod groups (GenericWorkload; GangScheduling with its gate): the queue reads
        # them as its ``gang`` (kspread.engine.podgroupcycle schedules them)
        self.groups = PodGroups(cluster.pod_groups, cluster.pods, self.version.gate("GangScheduling")) \
            if self.version.minor >= 36 and self.version.gate("GenericWorkload") else None
        self.handle.gang = self.gang if self.groups is None else self.groups
        self.waiting: dict[str, tuple[Pod, str]] = {}
        self.waiting_states: dict[str, CycleState] = {}  # their cycles' states (PreBind after the wait)
        # DRANodeAllocatableResources: the node allocatable claim statuses of each pod's last
        # Reserve (``note_claim_statuses``), which its assumed pod gets
        self.claim_statuses: dict[str, tuple] = {}
        # the pods waiting in DynamicResources' PreBind for binding conditions (assumed)
        self.prebind_waiting: dict[str, tuple[Pod, str]] = {}

    def set_placement(self, nodes: list[str] | None) -> None:
        """Snapshot.AssumePlacement (``nodes``: the placement's, in node tree order) or
        ForgetPlacement (None), 1.36's TopologyAwareWorkloadScheduling: the search
        (ListNodesInPlacement, NumNodesInPlacement, nextStartNodeIndex's modulus, the
        nominated node) covers only the placement's nodes; plugins still list them all."""
        full = self._full_order
        if nodes is None:
            if full is not None:
                self._full_order = None
                self._set_order(full)
            return
        if full is None:
            self._full_order = self.order
        self._set_order(nodes)

    def in_placement(self, name: str) -> bool:
        """GetNodeInPlacement finds the node (always, with no placement assumed)."""
        return self._full_order is None or name in self._tree_index

    def pick_placement(self, tied: list[str]) -> int:
        """Of pod group placements tied on the best total score (their names, in kspread's
        order), the one taken: the first (upstream: at random, findBestPlacement's
        Randomizer)."""
        return 0

    def mark_placement_tie(self, key: str, nodes: list[str]) -> None:
        """The pod's placement came from placements of equal total score, which upstream
        breaks at random (findBestPlacement's Randomizer): its node in each, with the nodes
        its own cycle tied on."""
        pos = self.snapshot.position
        at = [pos[n] for n in dict.fromkeys(nodes) if n in pos]
        old = self.ties.get(key)
        if old is not None:
            at = sorted({*at, *tie_positions(old, len(self.node_index)).tolist()})
        if len(at) > 1:
            self.ties[key] = encode_tie(np.array(at, np.intp), len(self.node_index))

    def _set_order(self, order: list[str]) -> None:
        self.order = order
        # snapshot positions of the nodes in node tree order
        self.order_positions = np.array([self.snapshot.position[n] for n in self.order], np.intp)
        self.node_index = np.array([info.node.index for info in self.snapshot.node_list], np.int64)
        self._tree_index = {n: j for j, n in enumerate(self.order)}

    def reset_cluster(self, cluster: Cluster, order: list[str]) -> None:
        """The cluster changed while the scheduler was idle (a sequence's step): a new
        snapshot of its nodes and bound pods (as upstream's next cycle takes one), the
        framework built over it, the node tree's new ``order``. The nominator, the
        placements, the ties (by node name), nextStartNodeIndex, the claims
        (``claims``) and the storage objects as bindings changed them carry over; the
        OpportunisticBatching batch does not (kspread's rule: a step ends it)."""
        ties = {k: self.tied_nodes(k) or [] for k in list(self.ties)}
        known = set(self.node_names)
        self.node_names.extend(n.name for n in cluster.nodes if n.name not in known)
        storage = self.handle.storage  # the sequence's copy, as its bindings changed it
        # the cache keeps the pods waiting at Permit, and each node's pod order; a pod
        # waiting on a deleted node is in no snapshot (RemoveNode keeps the node's NodeInfo
        # while it has pods, out of the node tree; a node added again of that name takes it)
        live = {n.name for n in cluster.nodes}
        pods = _cache_order(self.snapshot, [*cluster.pods, *(a for a, n in self.waiting.values() if n in live),
                                            *(a for a, _ in self.prebind_waiting.values())])
        self.snapshot = Snapshot(cluster.nodes, pods, self.version)
        self.handle = Handle(self.version, cluster, self.snapshot, Listers(cluster), self.nominator)
        self.handle.claims = self.claims
        self.handle.storage = storage
        self.handle.gang = self.gang if self.groups is None else self.groups
        self.framework = Framework(self.case.profile, self.handle)
        self.handle.extenders = self.ext
        self._set_order(order)
        pos = self.snapshot.position
        self.ties = {}
        for k, names in ties.items():
            at = [pos[n] for n in names if n in pos]
            if at:
                self.ties[k] = np.array(at, np.int32)
        self._batch = None
        self._last_cycle = None

    # ---- the cycle ------------------------------------------------------------------

    def schedule_one(self, pod: Pod) -> CycleResult:
        self.cycle_count += 1
        self.cycle_order = self.order
        res = CycleResult(pod)
        state = CycleState()
        res.state = state
        self.ext.start_cycle(res.extender_calls)
        fwk = self.framework
        try:
            pre = fwk.run_pre_filter_plugins(state, pod)
            res.pre_filter_status = pre
            if not pre.is_success():
                # every node is rejected with the PreFilter status
                res.statuses = _FilterView(self.order, np.zeros(len(self.order), np.intp), (pre,),  # type: ignore[assignment]
                                           positions=self.order_positions)
                return self._post_filter(state, pod, res)
            if self.batching:
                res.signature = self._sign(pod)
                self._hint_ties, self._hint_tie_positions = [], None
                res.batch_hint = self._node_hint(state, pod, res.signature)
                res.batch_ties = self._hint_ties
                res.batch_tie_positions = self._hint_tie_positions
            # the nominated node first; else the batch's hint (evaluateNominatedNode)
            first = pod.nominated_node if pod.nominated_node and self._prefers_nominated_node() else res.batch_hint
            first_failed: tuple[str, bool] | None = None
            if first:
                node = self.snapshot.node_infos.get(first)
                if node is not None and not self.in_placement(first):
                    node = None  # in the cluster, not in the placement: not tried first
                if node is not None:
                    st = fwk.run_filter_plugins_with_nominated_pods(state, pod, node)
                    kept, dropped = self.ext.filter(pod, [node.name]) if st.is_success() else ([], {})
                    if kept:
                        self._set_statuses(res, self._all_statuses(state, pod), pod, done=([node.name], dropped))
                        res.searched = [node.name]
                        res.selected = [node.name]
                        return res
                    first_failed = (node.name, st.is_success())
            self._find_feasible(state, pod, res, first_failed)
            if not res.searched_count():
                return self._post_filter(state, pod, res)
            if res.searched_count() == 1:
                res.selected = list(res.searched)
                return res
            self._prioritize(state, pod, res)
        except SchedulingError as e:
            res.error = str(e)
        return res

    # ---- OpportunisticBatching (framework/runtime/batch.go) ------------------------------

    def _sign(self, pod: Pod) -> tuple | None:
        """SignPod: every signing plugin's fragments (a later one overwrites a signer an
        earlier one wrote, as upstream's map); None when one cannot sign the pod."""
        parts: dict[str, Any] = {}
        for p in self._signers:
            frag = p.sign_pod(pod)
            if frag is None:
                return None
            parts.update(frag)
        return tuple(sorted(parts.items()))

    def _node_hint(self, state: CycleState, pod: Pod, signature: tuple | None) -> str | None:
        """GetNodeHint: the next node of the last cycle's sorted list, when that cycle was
        the one just before (and bound its pod), the pod's signature is the same, and the
        pod does not pass the filters (without nominated pods) on the node that cycle
        chose. No batch expires: a sequence has no wall clock (maxBatchAge is 500 ms)."""
        b = self._batch
        if b is None or not b[1] or self._last_cycle is None:
            return None
        if self.cycle_count != self._last_cycle[0] + 1 or signature is None or signature != b[0]:
            return None
        info = self.snapshot.node_infos.get(self._last_cycle[1])
        if info is None:
            return None
        try:
            st = self.framework.run_filter_plugins(state, pod, info)
        except SchedulingError:
            return None  # an Error is not a rejection
        if not st.is_rejected():
            return None
        node, total = b[1].pop()
        # the filter workers' order of the scored nodes decides among equal totals too
        self._hint_ties, self._hint_tie_positions = b[1].popped_ties(total)
        return node

    def store_schedule_results(self, r: CycleResult, chosen: str) -> None:
        """StoreScheduleResults after a cycle that chose ``chosen``: the batch is kept when
        the cycle took its hint; otherwise it becomes the cycle's other scored nodes, in
        the heap ``chosen`` was popped from (SortedNodeScores), when the pod could be
        signed; none when nothing else was scored."""
        if not self.batching:
            return
        self._last_cycle = (self.cycle_count, chosen)
        if r.batch_hint is not None and r.batch_hint == chosen:
            return
        if r.signature is None or r._totals is None:  # not signed, or nothing was scored
            self._batch = None
            return
        lt = r._totals
        positions = None
        names: Sequence[str] | None
        values: Sequence[int] | np.ndarray
        all_names = None
        if isinstance(lt, _LazyTotals):
            nodes = lt.nodes
            if nodes.snapshot is self.snapshot and nodes.positions is not None:
                # positions and arrays, made lists only when the batch is asked for a hint
                positions, all_names = nodes.positions, self.snapshot.name_array()
                names, values = None, lt.totals
            else:
                names, values = nodes.names, lt.totals.tolist()
        else:
            names, values = list(lt), list(lt.values())
        # batching runs without extenders: no Randomizer, the heap's structure orders ties
        self._batch = ((r.signature, SortedNodeScores(names, values, chosen, positions, all_names))
                       if len(values) > 1 else None)

    def pick_host(self, r: CycleResult) -> str:
        """A sequence's node among the cycle's selected ones: the heap's first pop where
        upstream's heap decides (1.35, no extender scores), else the first in node order."""
        return r.heap_pick if r.heap_pick is not None else self.first_in_node_order(r)

    def first_in_node_order(self, r: CycleResult) -> str:
        """The first of the cycle's selected nodes in the case's node order."""
        snap = self.snapshot
        if r.selected_positions is not None and len(r.selected_positions) > 1:
            pos = r.selected_positions[self.node_index[r.selected_positions].argmin()]
            return snap.node_list[int(pos)].node.name
        return min(r.selected, key=lambda n: snap.get(n).node.index)

    def _prefers_nominated_node(self) -> bool:
        """PreferNominatedNode: alpha (off) in 1.21, beta (on) 1.22, GA 1.24."""
        return self.version.gate("PreferNominatedNode")

    def _all_statuses(self, state: CycleState, pod: Pod) -> _FilterView:
        """Every node's filter status, in node tree order (an Error raises, the first in
        that order)."""
        nodes = self.snapshot.nodes(self.order_positions)
        res = self.framework.run_filter_plugins_with_nominated_pods_on_nodes(state, pod, nodes)
        err = first_error(res)
        if err is not None:
            raise_error_of(res, err, self.version.minor)
        return _FilterView(self.order, res.ids, res.table, positions=self.order_positions)

    def _advance_start(self, start: int, processed: int, first_failed: tuple[str, bool] | None) -> None:
        """nextStartNodeIndex after a walk from ``start`` that processed that many nodes;
        processedNodes = feasible found + the diagnosis' statuses (distinct nodes), so
        the nominated node (or batch hint) tried first and failed counts once more when
        the walk did not reach it (always when only an extender refused it)."""
        n_all = len(self.order)
        if first_failed is not None:
            name, by_extender = first_failed
            if by_extender or (self._tree_index[name] - start) % n_all >= processed:
                processed += 1
        self.next_start_node_index = (start + processed) % n_all

    def _find_feasible(self, state: CycleState, pod: Pod, res: CycleResult,
                       first_failed: tuple[str, bool] | None = None) -> None:
        """findNodesThatPassFilters: the nodes are filtered all at once; the search
        (from ``next_start_node_index``, stopping after ``to_find`` feasible nodes) is
        then read off the statuses, in node tree order from the start index, exactly as
        a one-by-one walk would find it. Statuses are reported for every node.
        ``first_failed``: the nominated node (or batch hint) tried first that did not fit
        (and whether only an extender refused it): its status is in the diagnosis the
        start index counts, once, whether or not the walk reaches it."""
        fwk = self.framework
        n_all = len(self.order)
        to_find = num_feasible_nodes_to_find(self.version, self.case.profile.percentage_of_nodes_to_score, n_all)
        if self.version.first_fit_without_scoring and not self.ext.has_filters() and not self._has_scoring():
            to_find = 1
        start = self.next_start_node_index
        rotated = np.roll(self.order_positions, -start) if start else self.order_positions
        nodes = self.snapshot.nodes(rotated)
        filtered = fwk.run_filter_plugins_with_nominated_pods_on_nodes(state, pod, nodes)
        passing = (filtered.ids == 0).nonzero()[0]
        if len(passing) > to_find:
            # upstream's walk stops only at the feasible node after the last it needs,
            # which it drops: the infeasible nodes before that one count as processed
            # (processedNodes = feasible found + statuses recorded)
            found = passing[:to_find]
            processed = int(passing[to_find]) + (1 if self.version.search_counts_dropped_node else 0)
        else:
            found = passing
            processed = n_all
        # an Error aborts the cycle: the first in the search's walk, then in node tree
        # order among the nodes the search did not reach
        err = first_error(filtered, np.arange(processed) if processed < n_all else None)
        if err is not None and n_all:
            # findNodesThatFitPod moves nextStartNodeIndex whether or not the search
            # failed: by the nodes the walk processed before the one that erred
            self._advance_start(start, err, first_failed)
        if err is None and processed < n_all:
            tree_to_rotated = (np.arange(n_all) - start) % n_all
            err = first_error(filtered, tree_to_rotated[tree_to_rotated >= processed])
        if err is not None:
            raise_error_of(filtered, err, self.version.minor)
        if n_all:
            self._advance_start(start, processed, first_failed)
        node_list = self.snapshot.node_list
        searched_positions = rotated[found]
        # statuses in node tree order: the tree's j-th node is the rotated set's (j - start) % n
        ids_in_order = np.roll(filtered.ids, start) if start else filtered.ids
        view = _FilterView(self.order, ids_in_order, filtered.table, positions=self.order_positions)
        # the extenders filter the nodes the search found, as upstream; then, for
        # `feasible`, the other nodes that pass the filter plugins
        searched = [node_list[i].node.name for i in searched_positions.tolist()] if self.ext.has_filters() else None
        self._set_statuses(res, view, pod, searched)
        if view.overrides:
            res.searched = [name for name in (node_list[i].node.name for i in searched_positions.tolist())
                            if name not in view.overrides]
        else:
            res._searched = (self.snapshot.name_array(), searched_positions)

    def _set_statuses(self, res: CycleResult, view: _FilterView, pod: Pod, searched: list[str] | None = None,
                      done: tuple[list[str], dict[str, Status]] | None = None) -> None:
        """Record every node's status, the extender filters applied (findNodesThatPassExtenders)
        to the nodes the search found (``searched``; all that pass the filter plugins when
        None), or already applied to ``done`` (the nodes sent, the statuses they made); then
        to the other nodes that pass the filter plugins, so that `feasible` covers them
        (kspread's own call, marked as such)."""
        if self.ext.has_filters():
            passing = [view.names[j] for j in np.flatnonzero(view.ids == 0).tolist()]
            if done is not None:
                sent, overrides = done
            else:
                sent = searched if searched is not None else passing
                _, overrides = self.ext.filter(pod, sent)
            sent_set = set(sent)
            rest = [n for n in passing if n not in sent_set]
            if rest:
                overrides = {**overrides, **self.ext.filter(pod, rest, for_feasible=True)[1]}
            view.overrides.update(overrides)
        res.statuses = view  # type: ignore[assignment]

    def _has_scoring(self) -> bool:
        return self.framework.has_score_plugins or self.ext.has_prioritizers()

    def _prioritize(self, state: CycleState, pod: Pod, res: CycleResult) -> None:
        fwk = self.framework
        positions = res.searched_positions(self.snapshot.position)
        nodes = self.snapshot.nodes(positions)
        if self.ext.podless:
            nodes = NodeSet.of(*(info.without_pods() if info.node.name in self.ext.podless else info
                                 for info in nodes.infos))
        if not fwk.has_score_plugins and not self.ext.any:
            # EqualPriority: every node scores 1 (no score plugin and no extender)
            totals = np.ones(len(positions), np.int64)
        else:
            fwk.run_pre_score_plugins(state, pod, nodes.lazy_node_objects())
            table = fwk.run_score_plugins(state, pod, nodes)
            res.scores = table
            totals = table.total()
            if self.ext.has_prioritizers():
                # int64 arithmetic as upstream's (a weight near the int64 limit wraps around)
                totals += np.array(self.ext.prioritize(pod, list(nodes.names)), np.int64)
        res.totals = _LazyTotals(nodes, totals)  # type: ignore[assignment]
        best = totals.max()
        top = (totals == best).nonzero()[0]
        res._selected = None
        res.selected_positions = positions[top]
        res._names = self.snapshot.name_array()  # (names read by positions, when asked)
        if len(top) > 1 and self.version.heap_breaks_ties:
            res.heap_pick = self._heap_pick(pod, positions, top)

    def _heap_pick(self, pod: Pod, positions: np.ndarray, top: np.ndarray) -> str | None:
        """The tied node upstream's heap pops first (1.35): by the heap's structure when no
        tied node has a Randomizer; None (a random pick: kspread takes the first in node
        order) when every one has; else the first in node order of those that have one
        (upstream: one of them at random, each beating every node without)."""
        node_list = self.snapshot.node_list
        if not self.ext.any:
            return node_list[int(positions[top[heap_first(top)]])].node.name
        names = [node_list[int(positions[i])].node.name for i in top.tolist()]
        rnd = self.ext.randomized(pod, names) & set(names)
        if not rnd:
            return node_list[int(positions[top[heap_first(top)]])].node.name
        if len(rnd) == len(names):
            return None
        return min(rnd, key=lambda n: self.snapshot.get(n).node.index)

    def _post_filter(self, state: CycleState, pod: Pod, res: CycleResult) -> CycleResult:
        """RunPostFilterPlugins: the first plugin that succeeds (or says
        UnschedulableAndUnresolvable) ends the loop. An Error status is not a failed
        cycle here: upstream logs it and the pod stays unschedulable."""
        plugins = self.framework.post_filter_plugins
        if not plugins or self.skip_post_filters:
            return res
        res.post_filter_ran = True
        outcome: Any = None
        before: list[str] = []
        for p in plugins:
            statuses = res._statuses if isinstance(res._statuses, StatusView) else res.statuses
            outcome, st = p.post_filter(state, pod, statuses)
            res.post_filter_status = st.with_plugin(p.name)
            if st.is_success() or not st.is_rejected():
                break
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                break
            res.post_filter_reasons = tuple(before)
            before.extend(st.reasons)
        assert res.post_filter_status is not None  # plugins is not empty: the loop ran
        if isinstance(outcome, PreemptionOutcome):
            if not res.post_filter_status.is_success():
                outcome.nominated_node = None
            res.preemption = outcome
        else:
            res.preemption = PreemptionOutcome(None)
        return res

    # ---- sequences -------------------------------------------------------------------

    def bind(self, pod: Pod, node: str, start_time: float | None = None) -> Pod:
        """Assume and bind: the pod joins the node (its nomination ends); ``start_time``: the
        status.startTime its kubelet then writes (a sequence's clock). A pod that waited at
        Permit is already assumed there."""
        waited = self.waiting.pop(pod.key, None) or self.prebind_waiting.pop(pod.key, None)
        bound = replace_pod(pod, node_name=node, nominated_node=None,
                            start_time=pod.start_time if start_time is None else start_time,
                            node_allocatable_claims=self.bound_claim_statuses(pod))
        self.nominator.remove(pod)
        self.pending.pop(pod.key, None)
        if waited is not None:
            self.snapshot.remove_pod(waited[0])
        self.snapshot.add_pod(bound)
        self.bound[pod.key] = bound
        self.storage_events = self._bind_volumes(bound, node)
        if self.gang is not None:
            self.gang.bound(bound)
        if self.groups is not None:
            self.groups.bound(bound)
        return bound

    def pre_bind_pre_flight(self, state: CycleState) -> bool:
        """RunPreBindPreFlights (1.34+): whether some PreBind plugin has work for the pod."""
        return any(f(state) for p in self.framework.plugins()
                   if (f := getattr(p, "pre_bind_pre_flight", None)) is not None)

    def assume(self, pod: Pod, node: str, prebind: bool = False, state: CycleState | None = None) -> None:
        """A pod waiting at Permit (or in DynamicResources' PreBind): assumed on the node
        (the cache counts it there), not bound, still pending. ``state``: its cycle's, for
        its PreBind after the wait."""
        if state is not None:
            self.waiting_states[pod.key] = state
        assumed = replace_pod(pod, node_name=node, nominated_node=None,
                              node_allocatable_claims=self.claim_statuses_of(pod))
        self.nominator.remove(pod)
        self.snapshot.add_pod(assumed)
        (self.prebind_waiting if prebind else self.waiting)[pod.key] = (assumed, node)

    def forget(self, key: str) -> tuple[Pod, list[PodEvent]]:
        """A waiting pod rejected: the cache forgets it (ForgetPod) and Unreserve runs.
        Returns the assumed pod (for the AssignedPodDelete event its forgetting is) and
        the events of its nomination's change, which reach the queue after its failure.

        handleSchedulingFailure's status patch clears status.nominatedNodeName only when
        the pod as it was popped had one. With NominatedNodeNameForExpectation (on from
        1.35) the binding cycle wrote the node as the pod's nominatedNodeName when it
        began to wait: a pod popped without a nomination keeps that one (its next update
        event nominates it there again, and it keeps the node's room from pods of lower or
        equal priority); a pod popped with a nomination loses it, a nomination change
        (from the node it waited on) that moves pods of lower or equal priority. Gate off,
        a pod popped with a nomination loses it the same way."""
        assumed, node = self.waiting.pop(key) if key in self.waiting else self.prebind_waiting.pop(key)
        info = self.snapshot.node_infos.get(node)
        if info is not None and key in info.pods:  # (not when its node was deleted)
            self.snapshot.remove_pod(assumed)
        if self.handle.storage is not None:  # VolumeBinding's Unreserve
            self.handle.storage.revert_pod_volumes(key)
        self.claims.drop_in_flight(key)  # DynamicResources' Unreserve (nothing was written)
        self.waiting_states.pop(key, None)
        if self.gang is not None:
            self.gang.unreserve(assumed)
        pending = self.unreserve_claim_statuses(assumed)
        expectation = self.version.gate("NominatedNodeNameForExpectation")
        events: list[PodEvent] = []
        if pending.nominated_node is None:
            if expectation:
                nominated = replace_pod(pending, nominated_node=node)
                self.nominator.remove(pending)
                self.nominator.add(nominated)
                self.pending[key] = nominated
        else:
            old = replace_pod(pending, nominated_node=node) if expectation else pending
            events.append(PodEvent("Delete", old, pending.priority))
            self.clear_nomination(pending)
        return assumed, events

    def note_claim_statuses(self, pod: Pod, state: CycleState | None, node: str) -> None:
        """DRANodeAllocatableResources: the node allocatable claim statuses DynamicResources'
        Filter found for the pod on ``node``, which assume copies into the assumed pod's status
        (schedule_one.go's assume; an earlier attempt's are overwritten)."""
        if node_allocatable_claims_on(self.version):
            self.claim_statuses[pod.key] = node_allocatable_statuses(state, node)

    def claim_statuses_of(self, pod: Pod) -> tuple:
        """The assumed pod's status.nodeAllocatableResourceClaimStatuses: with the gate, what its
        last Reserve found (schedule_one.go's assume overwrites whatever the pod had, with none
        when DynamicResources found none); without, the pod's own (which nothing reads)."""
        if not node_allocatable_claims_on(self.version):
            return pod.node_allocatable_claims
        return self.claim_statuses.get(pod.key, ())

    def bound_claim_statuses(self, pod: Pod) -> tuple:
        """The bound pod's statuses, once the informer's pod replaces the assumed one in the
        cache: DynamicResources' PreBind patched in what its Reserve found when it found some;
        else the API server's pod keeps its own (a pending pod's given status counts then)."""
        if not node_allocatable_claims_on(self.version):
            return pod.node_allocatable_claims
        return self.claim_statuses.get(pod.key) or pod.node_allocatable_claims

    def unreserve_claim_statuses(self, pod: Pod) -> Pod:
        """DynamicResources' Unreserve with the gate on: when the pod's cycle found node
        allocatable claim statuses on the node, clearNodeAllocatableResourceClaimStatus patches
        the pod's status to none, whatever it had (a status the case gave the pending pod
        included); else the pod keeps its own. Returns the pending pod as it is now."""
        pod = self.current(pod)
        if not (node_allocatable_claims_on(self.version) and self.claim_statuses.get(pod.key)
                and pod.node_allocatable_claims):
            return pod
        cleared = replace_pod(pod, node_allocatable_claims=())
        if pod.key in self.pending:
            self.pending[pod.key] = cleared
        return cleared

    def reserve(self, state: CycleState, pod: Pod, node: str, in_flight: bool = False,
                holds: str = "would wait at GangScheduling's Permit") -> list[PodEvent]:
        """RunReservePluginsReserve (and DynamicResources' PreBind): the plugins that
        keep state with the cluster record the pod's placement. Returns the events.
        ``in_flight``: the pod waits at Permit (``holds``: or what else keeps its PreBind
        from following); DynamicResources' Reserve puts its allocations in flight, written
        by ``pre_bind_claims`` after the wait."""
        self.note_claim_statuses(pod, state, node)
        events: list[PodEvent] = []
        for p in self.framework.plugins():
            if in_flight and (hold := getattr(p, "reserve_in_flight", None)) is not None:
                if unmodelled := hold(state, pod, node):
                    raise CaseError(
                        f"pod {pod.key} {holds} holding DynamicResources' in-flight "
                        f"allocation of its extended resources' claim ({', '.join(unmodelled)}), which PreBind "
                        "creates after the wait: kspread does not model that claim in flight", ["schedule"])
                continue
            reserve = getattr(p, "reserve", None)
            if reserve is not None:
                events.extend(reserve(state, pod, node))
        return events

    def pre_bind_claims(self, pod: Pod, node: str) -> list[PodEvent]:
        """DynamicResources' PreBind of a pod that waited at Permit: its in-flight
        allocations leave the tracker and its claims are written (allocation, reservedFor)
        as its Reserve found them. Returns the claim events."""
        state = self.waiting_states.pop(pod.key, None)
        from kspread.engine.plugins.dynamicresources import DynamicResourcesFilter

        dra = self.framework.plugin("DynamicResources")
        if state is None or not isinstance(dra, DynamicResourcesFilter):
            return []
        if changed := dra.changed_since_reserve(state, pod):
            raise CaseError(f"pod {pod.key}'s DynamicResources PreBind finds {', '.join(changed)} allocated or "
                            "deallocated since its Reserve (while it waited at Permit): upstream's bindClaim then "
                            "fails or writes a reservation without an allocation, which kspread does not model",
                            ["schedule"])
        self.claims.drop_in_flight(pod.key)
        return dra.reserve(state, pod, node)

    def release_pod(self, pod: Pod) -> list[PodEvent]:
        """A pod deleted (a preemption victim, or a step of a sequence): the resource
        claim controller takes it out of its claims' reservedFor and deallocates a
        claim no pod reserves any more. Returns the claim events the queue sees: one
        per claim written, a claim other pods still reserve included (its status
        changed: DynamicResources' hint queues the pods that use it)."""
        return [PodEvent("ResourceClaimUpdate", pod, claim=(old, self.claims.get(old.namespace, old.name)))
                for old in self.claims.pod_gone(pod.key)]

    def _bind_volumes(self, pod: Pod, node: str) -> list[PodEvent]:
        """VolumeBinding's PreBind, with the PV controller and provisioner acting at once:
        what the pod's Reserve assumed on the node is written (``VolumeBindingFilter.
        bind_volumes``). Returns the storage events."""
        if self.handle.storage is None or not pod.volumes:
            return []
        vb = self.framework.plugin("VolumeBinding")
        bind = getattr(vb, "bind_volumes", None)
        if bind is None:
            return []
        events: list[PodEvent] = bind(pod, self.snapshot.get(node).node)
        return events

    def apply_preemption(self, pod: Pod, outcome: PreemptionOutcome) -> tuple[Pod, list[PodEvent]]:
        """prepareCandidate and the nomination: delete the victims (at once; see the
        module docstring), clear the nominations of lower-priority pods nominated to
        the node, and nominate the preemptor. Returns the nominated pod and the events
        the queue sees: each victim's deletion, each cleared nomination."""
        events = self.delete_victims(outcome.victims)
        node = outcome.nominated_node
        assert node is not None
        for other in self.nominator.on_node(node):
            if other.priority < pod.priority and other.key != pod.key:
                events.append(PodEvent("Delete", self.current(other), other.priority))
                self.clear_nomination(other)
        nominated = replace_pod(pod, nominated_node=node)
        self.nominator.remove(pod)
        self.nominator.add(nominated)
        self.pending[pod.key] = nominated
        return nominated, events

    def delete_victims(self, victims: list[Pod]) -> list[PodEvent]:
        """PreemptPod for each victim: deleted at once, with the claims it owns. Returns the
        queue's events."""
        events: list[PodEvent] = []
        for v in victims:
            if v.node_name is not None and v.key in self.snapshot.get(v.node_name).pods:
                self.snapshot.remove_pod(v)
            if self.gang is not None:
                self.gang.delete_pod(v)
            if self.groups is not None:
                self.groups.delete_pod(v)
            self.bound.pop(v.key, None)
            self.ties.pop(v.key, None)
            events.append(PodEvent("Delete", v))
            events.extend(self.release_pod(v))
            # the garbage collector: the victim's ephemeral volumes' claims go (kspread.engine.ephemeral)
            events.extend(delete_owned_claims(self.handle.storage, v, (p for info in self.snapshot
                                                                      for p in info.pods.values()), ["schedule"]))
        return events

    def rejectors(self, r: CycleResult) -> frozenset[str]:
        """Diagnosis.UnschedulablePlugins of a failed cycle: the PreFilter plugin that
        rejected the pod, or the plugins that rejected a node (Extender when an extender
        filtered nodes out)."""
        pre = r.pre_filter_status
        if pre is not None and not pre.is_success():
            return frozenset({pre.plugin}) if pre.plugin else frozenset()
        st = r._statuses
        if st is None:
            return frozenset()
        if isinstance(st, _FilterView):
            table = st.table
            out = {table[k].plugin for k in np.unique(st.ids).tolist() if table[k].is_rejected()}
            if st.overrides:
                out.add(EXTENDER)
        else:
            out = {s.plugin if not s.plugin.startswith("extender:") else EXTENDER
                   for s in st.values() if s.is_rejected()}
        out.discard("")
        return frozenset(out)

    def mark_tie(self, pod: Pod, r: CycleResult) -> None:
        """Record whether the pod's placement came from a tie upstream breaks at random:
        several top-scoring nodes, several preemption candidates tied on every criterion,
        or a batch hint among nodes of equal total. A pod bound on its nominated node
        keeps the mark of the preemption that nominated it."""
        pos = self.snapshot.position
        tied: list[str] | np.ndarray = []
        n_selected = len(r.selected_positions) if r.selected_positions is not None else len(r.selected)
        if r.preemption is not None and r.preemption.nominated_node is not None and not n_selected:
            tied = list(r.preemption.tied_nodes)
        elif r.batch_hint is not None and n_selected == 1 and r.selected == [r.batch_hint]:
            tied = r.batch_tie_positions if r.batch_tie_positions is not None else list(r.batch_ties)
        elif n_selected > 1:
            tied = r.selected_positions if r.selected_positions is not None else list(r.selected)
        elif pod.nominated_node and r.selected == [pod.nominated_node] and r.searched == [pod.nominated_node]:
            return
        if len(tied) > 1:
            at = tied if isinstance(tied, np.ndarray) else np.array([pos[n] for n in tied], np.intp)
            self.ties[pod.key] = encode_tie(at, len(self.node_index))
        else:
            self.ties.pop(pod.key, None)

    def tied_nodes(self, key: str) -> list[str] | None:
        """The nodes the pod's placement was taken from, in node order; None: no tie."""
        at = self.ties.get(key)
        if at is None:
            return None
        at = tie_positions(at, len(self.node_index))
        at = at[np.argsort(self.node_index[at], kind="stable")]
        return [self.snapshot.node_list[i].node.name for i in at.tolist()]

    def tie_summary(self, key: str, limit: int | None) -> dict[str, Any] | None:
        """The pod's tie as a report gives it: ``count`` (the tied nodes) and ``nodes``
        (the first ``limit`` of them in node order; every one when None); None: no tie."""
        at = self.ties.get(key)
        if at is None:
            return None
        if limit is None:
            names = self.tied_nodes(key) or []
            return {"count": len(names), "nodes": names}
        at = tie_positions(at, len(self.node_index))
        rank = self.node_index[at]
        first = at if len(at) <= limit else at[np.argpartition(rank, limit - 1)[:limit]]
        first = first[np.argsort(self.node_index[first], kind="stable")]
        return {"count": len(at), "nodes": [self.snapshot.node_list[i].node.name for i in first.tolist()]}

    def nominate(self, pod: Pod, node: str) -> Pod:
        """The failure handler's ModeOverride nomination (status.nominatedNodeName)."""
        nominated = replace_pod(self.pending.get(pod.key, pod), nominated_node=node)
        self.nominator.remove(pod)
        self.nominator.add(nominated)
        self.pending[pod.key] = nominated
        return nominated

    def clear_nomination(self, pod: Pod) -> Pod:
        cleared = replace_pod(self.pending.get(pod.key, pod), nominated_node=None)
        self.nominator.remove(pod)
        self.ties.pop(pod.key, None)
        if pod.key in self.pending:
            self.pending[pod.key] = cleared
        return cleared

    def current(self, pod: Pod) -> Pod:
        """The pod as it is now (a nomination may have been set or cleared since)."""
        return self.pending.get(pod.key, pod)

    def placement(self, key: str) -> str | None:
        if key in self.bound:
            return self.bound[key].node_name
        p = self.pending.get(key)
        return p.nominated_node if p is not None else None


# a safety bound on a sequence's cycles per pod: every retry needs an event (a binding, a
# deletion, a nomination changed), and a sequence makes finitely many
CYCLES_PER_POD = 100


class SequenceRun:
    """A run of a case's incoming pod(s) through the scheduling queue: ``until_idle``
    schedules until the queue holds no pod it would pop. A sequence's steps
    (``kspread.engine.steps``) change the cluster between such runs."""

    def __init__(self, case: SchedulingInput, observe: Callable[[Scheduler, CycleResult], None] | None,
                 keep_all: bool, initial: list[Pod]) -> None:
        self.case = case
        self.observe = observe
        self.keep_all = keep_all
        self.sched = sched = Scheduler(case)
        self.results: list[CycleResult] = []
        for p in initial:
            sched.pending[p.key] = p
        self.queue = SchedulingQueue(sched.version, sched.framework, initial, nominate=sched.nominator.add)
        self.created = len(initial)  # pods created so far (the bound on cycles)
        # a pod bound in a sequence starts (status.startTime, which MoreImportantPod and the
        # choice among preemption candidates read) at the sequence's clock, in whole seconds
        # as the API stores a time, counted from the second after the latest start time of
        # the case's pods: later than all of them, as "now" is (GetPodStartTime)
        starts = [p.start_time for p in case.cluster.pods if p.start_time is not None]
        self.start_epoch = float(math.floor(max(starts, default=0.0)) + 1)
        self.preempted: list[Pod] = []  # the victims of preemption, in order
        self.waiting_q: dict[str, Any] = {}  # the queue entries of the pods waiting at Permit
        self.rejected: dict[str, str] = {}  # pods rejected while waiting at Permit: the reason
        self.wait_seconds: dict[str, int] = {}  # the pods waiting at Permit: Permit's duration
        self.prebind: dict[str, PreBindWait] = {}  # the pods waiting in DynamicResources' PreBind
        # DynamicResources' bindingTimeout (seconds)
        dra = self.sched.framework.plugin("DynamicResources")
        self.binding_timeout: float = dra.args.get("bindingTimeout", 600.0) if dra is not None else 600.0

    def _bind(self, pod: Pod, node: str, claim_events: list[PodEvent], preflight: bool = False) -> None:
        """Bind the pod and deliver the events its binding makes (a sequence's queue).
        ``preflight``: PreBindPreFlight found work for PreBind (VolumeBinding, DynamicResources)."""
        sched, queue = self.sched, self.queue
        bound = sched.bind(pod, node, self.start_epoch + queue.now if self.case.is_sequence else None)
        if self.case.is_sequence:
            for ev in sched.storage_events:  # the claims its binding bound (PreBind, before the Add)
                queue.deliver(ev)
            queue.deliver(PodEvent("Add", bound))
            if sched.version.queue_sees_bound_nomination:
                # the pod as the unscheduled pods' handler last saw it: nominated by an earlier
                # cycle, or (NominatedNodeNameForExpectation) by this binding cycle before PreBind
                was = pod.nominated_node
                if preflight and sched.version.gate("NominatedNodeNameForExpectation"):
                    was = node
                if was:
                    queue.deliver(PodEvent("Delete", replace_pod(pod, nominated_node=was), pod.priority))
            for ev in claim_events:
                queue.deliver(ev)

    def next_permit_deadline(self) -> int | None:
        """The earliest deadline of a gang waiting at Permit; None when no pod waits."""
        gang = self.sched.gang
        if gang is None or not self.sched.waiting:
            return None
        return min(gang.deadline(a) or 0 for a, _ in self.sched.waiting.values())

    def permit_timeouts(self) -> list[str]:
        """The gangs' Permit waits that ended by the clock (``queue.now``): each pod still
        waiting at its group's deadline is rejected, in the order the pods began to wait
        ("rejected due to timeout ..."): Unreserve, the cache forgets it (an
        AssignedPodDelete event for the others), and it goes to the unschedulable pods with
        GangScheduling as its rejector. Returns the pods the events moved."""
        sched, queue, gang = self.sched, self.queue, self.sched.gang
        moved: list[str] = []
        if gang is None:
            return moved
        due = [(gang.deadline(a) or 0, k) for k, (a, _) in sched.waiting.items()
               if (gang.deadline(a) or 0) <= queue.now]
        for at, key in sorted(due, key=lambda d: d[0]):
            assumed, nomination = sched.forget(key)
            q = self.waiting_q.pop(key)
            self.rejected[key] = timeout_reason(self.wait_seconds.pop(key, 0))
            queue.failed(q, sched.current(assumed), frozenset({GANG}), queue.end_waiting(key))
            q.failed_at = at
            moved.extend(queue.deliver(PodEvent("Delete", assumed), skip=key))
            for ev in nomination:
                moved.extend(queue.deliver(ev))
        return moved

    # ---- DynamicResources' PreBind waiting for binding conditions ---------------------

    def _prebind_check(self, key: str) -> tuple[bool, str | None]:
        """isPodReadyForBinding over the waiting pod's claims, in its order: ready, or the
        error of a failed claim (a claim not ready ends the check)."""
        from kspread.engine.plugins.dynamicresources import claim_ready

        pod = self.sched.prebind_waiting[key][0]
        assert self.sched.claims is not None
        for pc in pod.resource_claims:
            c = self.sched.claims.get(pod.namespace, pc.claim_name)
            if c is None:
                continue
            ready, failed = claim_ready(c)
            if failed:
                return False, failed
            if not ready:
                return False, None
        return True, None

    def next_prebind_event(self) -> tuple[int, str] | None:
        """The earliest clock at which a pod waiting in PreBind binds or fails (a poll that
        sees its claims ready or failed, else the timeout); None when no pod waits."""
        out: tuple[int, str] | None = None
        for key, w in self.prebind.items():
            deadline = w.start + self.binding_timeout
            ready, failed = self._prebind_check(key)
            at = float(deadline)
            if ready or failed:
                poll = w.start + POLL_SECONDS * ((w.since - w.start) // POLL_SECONDS + 1)
                at = min(at, poll)
            t = math.ceil(at)
            if out is None or t < out[0]:
                out = (t, key)
        return out

    def prebind_due(self) -> list[str]:
        """The PreBind waits that end at the clock (``queue.now``), in the order they end:
        a poll that sees every binding condition true binds the pod; a failure condition
        or the timeout fails the binding cycle (Error): Unreserve takes the pod out of its
        claims' reservedFor (their allocation stays), the cache forgets it, and it goes to
        backoffQ. Returns the pods the events moved."""
        moved: list[str] = []
        while (ev := self.next_prebind_event()) is not None and ev[0] <= self.queue.now:
            moved.extend(self._end_prebind(ev[1], ev[0]))
        return moved

    def _end_prebind(self, key: str, at: int) -> list[str]:
        from kspread.engine.plugins.dynamicresources import CLAIM_UPDATE

        sched, queue = self.sched, self.queue
        w = self.prebind.pop(key)
        ready, failed = self._prebind_check(key)
        deadline = w.start + self.binding_timeout
        if ready and at < deadline:
            self._bind(sched.current(sched.prebind_waiting[key][0]), w.node, [], preflight=True)
            return []
        error = failed if failed and at < deadline else "device binding timeout"
        assumed, nomination = sched.forget(key)
        claims = sched.claims
        assert claims is not None
        events = []
        for pc in assumed.resource_claims:  # Unreserve
            before = claims.get(assumed.namespace, pc.claim_name)
            if before is None or assumed.key not in before.reserved_for:
                continue
            claims.unreserve(before, assumed.key)
            events.append(PodEvent(CLAIM_UPDATE, assumed, claim=(before, claims.get(before.namespace, before.name))))
        self.rejected[key] = error
        queue.errored(w.q, sched.current(assumed), at)
        moved: list[str] = []
        moved.extend(queue.deliver(PodEvent("Delete", assumed), skip=key))
        for e in events:
            moved.extend(queue.deliver(e, skip=key))
        for e in nomination:
            moved.extend(queue.deliver(e))
        return moved

    def _wait_prebind(self, q: Any, pod: Pod, node: str) -> bool:
        """PreBind's first poll (at once): whether the pod waits (assumed) for its binding
        conditions; False: they are met, the pod binds."""
        sched = self.sched
        sched.assume(pod, node, prebind=True)
        self.prebind[pod.key] = PreBindWait(q, node, self.queue.now, self.queue.now)
        ready, failed = self._prebind_check(pod.key)
        if ready:
            self.prebind.pop(pod.key)
            return False
        if failed:
            self._end_prebind(pod.key, self.queue.now)
        return True

    def claims_changed(self, claim: Any) -> None:
        """A claim's status changed (a driver's conditions): the pods waiting in PreBind
        with it see the change at their next poll."""
        for key, w in self.prebind.items():
            pod = self.sched.prebind_waiting[key][0]
            if any(pc.claim_name == claim.name for pc in pod.resource_claims) and pod.namespace == claim.namespace:
                w.since = self.queue.now

    def create(self, pod: Pod) -> None:
        """A pod created while the scheduler is idle: pending, in the queue."""
        self.sched.pending[pod.key] = pod
        self.queue.add(pod)
        self.created += 1

    def until_idle(self) -> None:
        case, sched, queue, results = self.case, self.sched, self.queue, self.results
        while True:
            was = queue.now
            q = queue.pop()
            if q is None:
                break
            if queue.now > was and (due := self.next_prebind_event()) is not None and due[0] <= queue.now:
                # the scheduler waited for a backoff flush past a PreBind poll or timeout
                raise CaseError(f"pod {due[1]} waits in DynamicResources' PreBind, whose poll or timeout at clock "
                                f"{due[0]} comes while the scheduler waits for a backoff to end (clock {queue.now}): "
                                "kspread does not model the two together (SchedulerPopFromBackoffQ off)",
                                ["schedule"])
            limit = CYCLES_PER_POD * (self.created + 1)
            if len(results) >= limit:  # every retry needs an event; a sequence makes finitely many
                raise CaseError(f"kspread bug: the schedule sequence did not settle after {limit} scheduling cycles "
                                "(every retry needs a binding, a deletion or a nomination change)", ("schedule",))
            pod = sched.current(q.pod)
            if sched.claims is not None:
                sched.claims.now = queue.now
            if sched.groups is not None and pod.scheduling_group is not None:
                pod_group_cycle(self, q)
                continue
            q.attempts += 1
            sched.attempts[pod.key] = q.attempts
            r = sched.schedule_one(pod)
            r.attempt = q.attempts
            if results and not self.keep_all:
                results[-1].compact()
            results.append(r)
            if self.observe is not None:
                self.observe(sched, r)
            if r.error:
                continue  # an Error ends the pod's part in the run
            if r.selected_positions is not None or r.selected:
                node = sched.pick_host(r) if case.is_sequence else r.heap_pick or r.selected[0]
                _, bind_error = sched.ext.bind(pod, node)  # an extender that binds takes over
                if bind_error is not None:
                    r.error = bind_error  # the binding failed: the pod stays pending
                    continue
                r.bound_node = node
                wait, activate, allowed = False, list[str](), list[str]()
                if sched.gang is not None and sched.gang.min_count(pod) is not None:
                    sched.gang.reserve(pod)
                    wait, activate, allowed = sched.gang.permit(pod, queue.now)
                # Reserve: a pod that waits at Permit holds DynamicResources' allocations in flight
                # (PreBind writes them after the wait); VolumeBinding assumes either way
                claim_events = sched.reserve(r.state, pod, node, in_flight=wait) if r.state is not None else []
                if wait and r.state is not None and (waits := _binding_conditions(sched, r.state, pod, node)):
                    raise CaseError(f"pod {pod.key} of a gang would wait at GangScheduling's Permit, then in "
                                    f"DynamicResources' PreBind for the binding conditions of {', '.join(waits)}: "
                                    "kspread does not model a gang pod's PreBind wait", ["schedule"])
                prebind = (not wait and case.is_sequence and r.state is not None
                           and _binding_wait(sched, r.state, pod, node))
                preflight = r.state is not None and sched.pre_bind_pre_flight(r.state)
                sched.store_schedule_results(r, node)
                sched.mark_tie(pod, r)
                if sched.gang is not None and sched.gang.min_count(pod) is not None:
                    if wait and (gone := sched.gang.dangling(pod)):
                        raise CaseError(
                            f"pod {pod.key} waits at GangScheduling's Permit in the group of {', '.join(gone)}, "
                            "deleted while it waited there: 1.35.4's scheduler crashes here (GangScheduling's "
                            "Unreserve marked the deleted pod unscheduled in its group again, and Permit's "
                            "UnscheduledPods dereferences its missing object), which kspread does not model",
                            ["schedule"])
                    if wait:  # Permit: Wait, holding the node (the binding cycle waits)
                        r.bound_node, r.waiting_on = None, node
                        sched.assume(pod, node, state=r.state)
                        self.waiting_q[pod.key] = q
                        self.wait_seconds[pod.key] = (sched.gang.deadline(pod) or queue.now) - queue.now
                        queue.start_waiting(pod.key)
                        for key in activate:  # handle.Activate: the group's unscheduled pods
                            queue.activate(key)
                        continue
                if allowed:
                    # the pod that makes the quorum was assumed on its node (the node's last
                    # pod) before Permit: each binding's confirmation below takes its pod out
                    # (the node's last pod into its place) and appends it after this one
                    sched.assume(pod, node)
                gone = sorted(k for k in allowed if sched.waiting[k][1] not in sched.snapshot.node_infos)
                if gone:
                    raise CaseError(
                        f"pod {pod.key} completes its gang, whose {', '.join(gone)} waited at Permit on a node deleted "
                        "meanwhile: upstream binds the pod to the missing node (the API server does not check it) and "
                        "the pod garbage collector deletes it later, which kspread does not model", ["schedule"])
                for key in allowed:  # the quorum: every waiting pod of the gang is allowed
                    self.waiting_q.pop(key, None)
                    self.wait_seconds.pop(key, None)
                    queue.end_waiting(key)
                    waited, on = sched.current(sched.waiting[key][0]), sched.waiting[key][1]
                    self._bind(waited, on, sched.pre_bind_claims(waited, on))
                if prebind and sched.gang is not None and sched.gang.min_count(pod) is not None:
                    raise CaseError(f"pod {pod.key} of a gang would wait in DynamicResources' PreBind for binding "
                                    "conditions: kspread does not model a gang pod's PreBind wait", ["schedule"])
                if prebind:
                    # PreBind wrote the claims (allocation, reservedFor) before it waits
                    for ev in claim_events:
                        queue.deliver(ev)
                    if self._wait_prebind(q, pod, node):
                        r.bound_node, r.waiting_on, r.waiting_prebind = None, node, True
                        continue
                    claim_events = []
                self._bind(pod, node, claim_events, preflight)
                continue
            in_flight: list[PodEvent] = []
            after: list[PodEvent] = []
            if r.preemption is not None and r.preemption.nominated_node is not None:
                before = pod
                sched.mark_tie(pod, r)
                # prepareCandidate rejects a victim waiting at Permit instead of deleting it
                outcome, rejected = r.preemption, [v for v in r.preemption.victims if v.key in sched.waiting]
                if any(v.key in sched.prebind_waiting for v in outcome.victims):
                    raise CaseError(f"pod {pod.key}'s preemption picks a victim waiting in DynamicResources' PreBind "
                                    "for binding conditions: deleting a pod in its binding cycle is not modelled",
                                    ["schedule"])
                if rejected:
                    outcome = replace(outcome, victims=[v for v in outcome.victims if v.key not in sched.waiting])
                self.preempted.extend(outcome.victims)
                pod, in_flight = sched.apply_preemption(pod, outcome)
                for v in rejected:
                    assumed, nomination = sched.forget(v.key)
                    vq = self.waiting_q.pop(v.key)
                    self.wait_seconds.pop(v.key, None)
                    self.rejected[v.key] = "preempted"
                    queue.failed(vq, sched.current(assumed), frozenset({"DefaultPreemption"}),
                                 queue.end_waiting(v.key))
                    after.append(PodEvent("Delete", assumed))
                    after.extend(nomination)
                if before.nominated_node and before.nominated_node != pod.nominated_node:
                    after.append(PodEvent("Delete", before, pod.priority))
            elif r.preemption is not None and r.preemption.clear_nomination:
                if pod.nominated_node:
                    after.append(PodEvent("Delete", pod, pod.priority))
                pod = sched.clear_nomination(pod)
            if not case.is_sequence:
                break
            if not sched.version.queue_sees_nomination_changes:
                in_flight = [ev for ev in in_flight if ev.max_priority is None]
                after = []
            in_flight.extend(sched.handle.dra_events)  # DynamicResources' PostFilter deallocated a claim
            sched.handle.dra_events.clear()
            queue.failed(q, pod, sched.rejectors(r), in_flight)
            for ev in in_flight:
                queue.deliver(ev, skip=pod.key)
                if ev.max_priority is not None:
                    queue.update(sched.current(ev.pod))
            for ev in after:
                queue.deliver(ev)


def _cache_order(old: Snapshot, pods: list[Pod]) -> list[Pod]:
    """The bound (and assumed) pods after a step, in the order upstream's cache keeps each
    node's pods: the old snapshot's order, with the pods the step removed taken out as
    NodeInfo.RemovePod does (``swap_remove``; in the node's order: the order of a step's
    own evictions is not kept), then pods it does not know in the given order."""
    where = {(p.node_name, p.key): p for p in pods if p.node_name is not None}
    out: list[Pod] = []
    for info in old.node_list:
        name = info.node.name
        keys = dict(info.pods)
        for k in [k for k in keys if (name, k) not in where]:
            swap_remove(keys, k)
        out.extend(where.pop((name, k)) for k in keys)
    out.extend(p for p in pods if (p.node_name, p.key) in where)
    return out


class SortedNodeScores:
    """Upstream's sortedNodeScores after the cycle's own Pop (1.35): Go's container/heap
    over the scored nodes in search order, greater totals first, every Randomizer 0 (no
    extender), so equal totals pop in the order the heap's structure gives them. Built at
    the first ``pop`` (most batches are never asked for a hint)."""

    __slots__ = ("_names", "_totals", "_chosen", "_heap", "positions", "_name_array", "_total_array", "_popped",
                 "_all_names")

    def __init__(self, names: Sequence[str] | None, totals: Sequence[int] | np.ndarray, chosen: str,
                 positions: np.ndarray | None = None, all_names: np.ndarray | None = None) -> None:
        # lists; or None and the snapshot's names (``all_names``) at ``positions``, and an
        # array of totals: made lists at the first ``pop`` (most batches are never asked)
        self._names: Any = names
        self._totals: Any = totals
        self._all_names = all_names
        self._chosen = chosen
        self._heap: list[int] | None = None
        # the scored nodes' snapshot positions (None: not known), for ``popped_ties``
        self.positions = positions
        self._name_array: np.ndarray | None = None
        self._total_array: np.ndarray | None = None
        self._popped: int | None = None  # the index ``pop`` gave last

    def __len__(self) -> int:
        return len(self._totals) - 1 if self._heap is None else len(self._heap)

    def _down(self, h: list[int], i: int, n: int) -> None:
        t = self._totals
        while True:
            j = 2 * i + 1
            if j >= n:
                return
            if j + 1 < n and t[h[j + 1]] > t[h[j]]:
                j += 1
            if not t[h[j]] > t[h[i]]:
                return
            h[i], h[j] = h[j], h[i]
            i = j

    def _pop(self, h: list[int]) -> int:
        n = len(h) - 1
        h[0], h[n] = h[n], h[0]
        self._down(h, 0, n)
        return h.pop()

    def _built(self) -> list[int]:
        if self._heap is None:
            if self._names is None:
                assert self._all_names is not None and self.positions is not None
                self._name_array = self._all_names[self.positions]
                self._names = self._name_array.tolist()
            if isinstance(self._totals, np.ndarray):
                self._total_array, self._totals = self._totals, self._totals.tolist()
            h = list(range(len(self._names)))
            for i in range(len(h) // 2 - 1, -1, -1):
                self._down(h, i, len(h))
            first = self._names[self._pop(h)]
            if first != self._chosen:  # the cycle's node is the heap's first pop (pick_host)
                raise AssertionError(f"heap popped {first}, the cycle chose {self._chosen}")
            self._heap = h
        return self._heap

    def pop(self) -> tuple[str, int]:
        """The next node and its total (GetNodeHint's Pop)."""
        i = self._popped = self._pop(self._built())
        return self._names[i], self._totals[i]

    def _left_with(self, total: int) -> np.ndarray:
        """The indices of the nodes left with that total, in node tree order of the search
        (arrays: in the identical-pods shape most nodes tie)."""
        if self._total_array is None:
            self._total_array = np.asarray(self._totals, np.int64)
        left = np.fromiter(self._built(), np.intp)
        return np.sort(left[self._total_array[left] == total])

    def with_total(self, total: int) -> list[str]:
        """The nodes left with that total, in node tree order of the search."""
        return self._names_at(self._left_with(total))

    def _names_at(self, at: np.ndarray) -> list[str]:
        if self._name_array is None:
            self._name_array = np.array(self._names, dtype=object)
        return self._name_array[at].tolist()

    def popped_ties(self, total: int) -> tuple[list[str], np.ndarray | None]:
        """The node ``pop`` gave last and the nodes left with its ``total`` (``with_total``'s),
        as names and as snapshot positions (None when the positions are not known)."""
        assert self._popped is not None
        at = np.concatenate(([self._popped], self._left_with(total)))
        return self._names_at(at), None if self.positions is None else self.positions[at]


def heap_first(top: np.ndarray) -> int:
    """The index (into ``top``) of the element Go's container/heap pops first when the
    elements at list indices ``top`` share the greatest key and every other is smaller
    (nodeScoreHeap with no Randomizer). heap.Init sifts a parent down only below a child
    strictly greater, preferring the left child on a tie, so the root ends as the first of
    the greatest in a preorder walk of the implicit tree (children of i: 2i+1, 2i+2). In
    1-based numbering the node k's subtree at depth D starts at k << (D - depth(k)): the
    least such start wins, an ancestor (shallower) first on a tie. One pass, no sort: the
    identical-pods shape ties on most nodes every cycle."""
    k = np.asarray(top, np.int64) + 1
    # depth(k) = floor(log2 k), exact: frexp's exponent is exact for integers below 2**53
    depth = (np.frexp(k)[1] - 1).astype(np.int64)
    start = np.left_shift(k, depth.max() - depth)
    return int(np.argmin(np.left_shift(start, 6) | depth))


def encode_tie(at: np.ndarray, n: int) -> np.ndarray:
    """The tied snapshot positions ``at`` (of ``n`` nodes; names when reported,
    ``Scheduler.tied_nodes``) in the smallest of three forms, kept until the end of the
    run: int32 positions; a bit per node (uint8); runs of consecutive positions (uint32,
    start and end of each in turn). Where most nodes tie, positions would keep some 20 KB
    per pod at 5,000 nodes and bits 625 bytes; in a cluster of alike nodes the tied ones
    are a few runs (every node not yet given a pod, say): a few bytes."""
    if 4 * len(at) <= n // 8 + 1:
        return np.asarray(at, np.int32)
    padded = np.zeros(n + 2, np.int8)  # (a 0 either side: every run has a start and an end)
    padded[at + 1] = 1
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    if 4 * len(edges) < min(4 * len(at), n // 8 + 1):
        return edges.astype(np.uint32)
    return np.packbits(padded[1:-1].view(bool))


def tie_positions(tie: np.ndarray, n: int) -> np.ndarray:
    """The snapshot positions an ``encode_tie`` form holds (ascending unless int32)."""
    if tie.dtype == np.uint8:
        return np.flatnonzero(np.unpackbits(tie, count=n))
    if tie.dtype == np.uint32:
        step = np.zeros(n + 1, np.int32)
        step[tie[0::2]] += 1
        step[tie[1::2]] -= 1
        return np.flatnonzero(np.cumsum(step[:n]))
    return tie


def run_case(
    case: SchedulingInput, observe: Callable[[Scheduler, CycleResult], None] | None = None, keep_all: bool = False
) -> tuple[Scheduler, list[CycleResult], dict[str, Any]]:
    """Run a case's incoming pod(s); returns the scheduler, each cycle's result (in
    the order they ran) and the final placements (pod -> node or None). Every cycle
    but the last is compacted (``CycleResult.compact``) unless ``keep_all``: a long
    sequence runs in flat memory.

    ``observe(sched, result)`` is called after each cycle, before its outcome
    (binding, preemption) changes the cluster: the snapshot, the nominator and
    ``result.state`` are then exactly as the cycle saw them (explain reads them).

    A sequence with steps (``case.timeline``) runs them (``kspread.engine.steps``); its
    scheduler then carries ``sequence`` (the steps' record)."""
    timeline = getattr(case, "timeline", None)
    if timeline:
        run = SequenceRun(case, observe, keep_all, [])
        world = World(run)
        world.run_timeline(timeline)
        run.sched.sequence = world
        return run.sched, run.results, world.placements()
    run = SequenceRun(case, observe, keep_all, list(case.incoming))
    run.until_idle()
    sched = run.sched
    placements = {p.key: sched.placement(p.key) for p in case.incoming}
    return sched, run.results, placements
