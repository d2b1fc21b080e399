"""The pod group scheduling cycle of 1.36 (pkg/scheduler/schedule_one_podgroup.go), with
GenericWorkload on: a pod popped from the queue that names a PodGroup
(spec.schedulingGroup) is scheduled with the rest of its group, in one cycle over one
snapshot. What kspread models, by upstream's functions:

* ``podGroupInfoForPod``: the popped pod, then every other unscheduled pod of its group in
  the cache (UnscheduledPods) that ``PopSpecificPod`` can take: a pod among the
  unschedulable ones or in backoffQ is activated first (through PreEnqueue; from backoffQ
  not, SchedulerPopFromBackoffQ being on); a pod held by PreEnqueue or a scheduling gate
  stays. Each popped pod counts an attempt and a scheduling cycle. The pods are sorted by
  priority (highest first), then InitialAttemptTimestamp (when each first entered activeQ).
  Upstream lists the unscheduled pods from a Go map and sorts with sort.Slice: pods that
  entered activeQ at the same moment (moved by one event) are in no fixed order; kspread
  takes the order in which its queue moved them. Popped, the group's pods are in no queue
  until the cycle submits its result: NominatedPodsForNode (nominatedPodToInfo) gives each
  one's nomination as a pod of the nominator's reference alone, of priority 0 and requesting
  nothing, so a pod's Filter counts its peers' nominations only when its own priority is 0
  or less, and then as empty pods (``Nominator.hold``).
* ``podGroupSchedulingAlgorithm``: with TopologyAwareWorkloadScheduling on,
  ``podGroupSchedulingPlacementAlgorithm`` (``_placement_algorithm``, the placements and
  their scores in ``kspread.engine.podgroupplacement``) runs the default algorithm below in
  each placement, the search narrowed to its nodes, and keeps the best; with the gate off,
  the default algorithm alone.
* ``podGroupSchedulingDefaultAlgorithm`` (``_default_algorithm``): each pod in that order runs the whole scheduling algorithm (PreFilter
  to Score, and PostFilter when no node fits) on the snapshot in which the group's pods
  placed before it are assumed. The scheduling cycle is the same for all of them
  (``sched.CurrentCycle()``), so OpportunisticBatching gives no hint inside a group. A pod
  that fits is assumed on the node it would take, reserved (VolumeBinding assumes the
  volumes its Filter chose there in the binder's assume caches; DynamicResources puts the
  allocations its Filter found there in flight: the group's later pods see both), and runs
  Permit:
  GangScheduling waits while the snapshot's scheduled pods of the group (assigned, and
  assumed in this cycle) are fewer than ``minCount``; with a basic group, or GangScheduling
  off, Permit allows. The group is schedulable as soon as one pod's Permit allows. A pod
  that does not fit does not stop the others; an Error does ("failed to schedule other
  pod from a pod group: ..."). At the end every assumed pod is unreserved (its assumed
  volumes reverted, its in-flight allocations dropped: nothing was written) and forgotten
  (in reverse order).
* ``submitPodGroupAlgorithmResult``, pod by pod in that order. Group schedulable: each pod
  that fit is assumed in the cache and runs Permit again (the cache's count: a gang pod
  before the quorum waits, activating the group's unscheduled pods, then the quorum pod
  allows them), is reserved again with its cycle's state (the same volumes and
  allocations) and binds, PreBind writing them; a pod that did not fit fails with its own
  status. Group not
  schedulable: a pod that fit fails with "pod group is unschedulable, <its Permit
  message>" (Unschedulable, naming no plugin: an error count); a pod that did not fit
  fails with its own status. Error: every pod fails with the error.
* Every failure (handleSchedulingFailure, AddUnschedulableIfNotPresent) sends the pod to
  backoffQ whatever happened meanwhile: determineSchedulingHintForInFlightPod queues a pod
  of a pod group after its backoff (event-based requeueing is not implemented for groups
  in 1.36). A pod no plugin rejected waits in backoffQ's error queue, which the scheduler
  does not pop while its backoff lasts (``SchedulingQueue._pop_groups``).
* ``updatePodGroupCondition``: the PodGroup's PodGroupScheduled condition, True
  ("Scheduled") or False ("Unschedulable", "pod group is unschedulable"; "SchedulerError"
  with the error); a condition once True is not set back to False.

kspread's rule for a group that cannot be placed: upstream pops it again as soon as
activeQ is empty (its pods that no node fits are in podBackoffQ, which
SchedulerPopFromBackoffQ pops at once), and again, for ever. While nothing changes each
retry repeats the cycle. kspread runs the cycle once per change (a pod created, deleted,
updated or bound; a node event; ...): until then the group is parked and the sequence is
idle. The retries it does not run would only have raised the pods' attempt and backoff
counts and moved nextStartNodeIndex; kspread counts them where upstream makes them before
other pods (``SchedulingQueue._pop_groups``: activeQ empty, or the group at backoffQ's head).

With WorkloadAwarePreemption on, a group the algorithm finds Unschedulable preempts for
itself (``kspread.engine.podgrouppreemption``): on success its pods that fit go back to the
queue nominated to their node, with the group's status ("pod group is unschedulable").

With WorkloadAwarePreemption off, a pod that fits nowhere runs its own PostFilter
(DefaultPreemption) in the group's cycle. When it nominates a node, the executor starts
deleting the victims at once (prepareCandidateAsync), and the pod is assumed on that node
as if it fit (podGroupPodSchedulingAlgorithm: requiresPreemption), on the cycle's snapshot,
where the victims stay: the group's later pods see the node holding both, and may pick the
same victims again (deleted once). Its Reserve there uses what its Filter found for that
node in the preemption's dry run: VolumeBinding's and DynamicResources' states are shared by
the dry run's copies of the cycle state (their Clone returns the same object), and the
nominated node, a candidate, passed every filter there. So VolumeBinding assumes those
volumes and DynamicResources puts those allocations in flight, as for a pod that fit.
Permit runs as for a pod that fit; a Permit that allows with any preemption required so far
makes the group Unschedulable, waiting on preemption
("pod group is waiting for preemption to complete"): each pod that fit goes back nominated
to its node with that status, a preemptor nominated to its node with its own FitError. A
group that cannot be placed fails as without preemption (a preemptor as a pod that fit,
its nomination cleared), and the victims are gone all the same. The deletions, and the
lower-priority pods nominated to the node losing their nomination, reach the queue after
the group's failures (kspread's rule: the executor's goroutine still runs when the group's
pods go back to the queue, through PreEnqueue, where DefaultPreemption holds a preemptor
until its last victim's deletion: ``QueuedPod.preempting``). Refused by name, as they
depend on that goroutine's timing: a cleared nomination of a pod of the
group, or of a pod that one of the group's later pods would count (its priority at least
theirs); a victim in its binding cycle.

An unallocated resource claim two pods of the group share: the later pod's DynamicResources
reuses the pending allocation the earlier pod's Reserve put in flight (the group's
pendingAllocations), and both PreBinds write the claim from the copy their PreFilter read.
The first write wins; the other PreBind conflicts, finds the claim allocated, and its pod's
binding cycle fails (``_prebind_failed``). kspread's rule: the group's pods bind in the
cycle's order (upstream's binding cycles race).

Not modelled, refused by name: a pod whose DynamicResources PostFilter deallocates a claim
while a later pod of the group with claims is still to run in the cycle (whether it reads
the write depends on the claim informer); a pod whose devices have binding conditions (its
PreBind waits); a pod with extended resources backed by devices whose claim would be
allocated in the cycle; a pod whose DynamicResources PreBind fails after VolumeBinding's
PreBind bound its volumes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kspread.engine import podgroupplacement, podgrouppreemption
from kspread.engine.framework.interface import PodEvent
from kspread.engine.model import Pod, replace_pod
from kspread.engine.plugins.podgroups import POD_GROUP_UNSCHEDULABLE, Condition, GroupKey
from kspread.errors import CaseError

if TYPE_CHECKING:  # pragma: no cover
    from kspread.engine.framework.status import CycleState
    from kspread.engine.queue import QueuedPod
    from kspread.engine.scheduler import CycleResult, SequenceRun

SUCCESS, UNSCHEDULABLE, ERROR = "Success", "Unschedulable", "Error"
# the status of a group that can be placed once its pods' preemptions are done
POD_GROUP_WAITING = f"{POD_GROUP_UNSCHEDULABLE}, pod group is waiting for preemption to complete"


@dataclass(frozen=True, slots=True)
class PreemptionRun:
    """One pod's cycle in a run of workload-aware preemption's algorithm: the nodes it
    searched (``searched``, by name), the node it was assumed on (None: none fit), its
    error. The searched nodes are kept as their snapshot positions in ``encode_tie``'s
    form (a few bytes when most nodes are searched: the reprieve runs the algorithm once
    per victim) and named when read."""

    pod: str
    searched_at: np.ndarray
    names: np.ndarray  # the snapshot's node names (Snapshot.name_array)
    node: str | None
    error: str

    @property
    def searched(self) -> tuple[str, ...]:
        """The searched nodes' names, sorted."""
        from kspread.engine.scheduler import tie_positions

        return tuple(sorted(self.names[tie_positions(self.searched_at, len(self.names))].tolist()))


@dataclass(slots=True)
class PodOutcome:
    """What a pod group cycle did with one pod (``CycleResult.pod_group``). ``message``:
    its FailedScheduling message when the group decided it (group not schedulable, or an
    Error); None when the pod bound, or failed with its own cycle's status."""

    group: GroupKey
    group_status: str  # Success | Unschedulable | Error
    node: str | None  # the node the pod fit on in the cycle (None: none fit)
    bound: bool
    message: str | None = None
    nominated: str | None = None  # workload-aware preemption nominated the pod to ``node``
    cycle: int = 0  # the group cycle's scheduling cycle (sched.CurrentCycle())
    # on the outcome of the group's last pod: the victims workload-aware preemption deleted
    # in this cycle, and its runs of the algorithm without post filters, in order, each a
    # list of the pods' cycles
    victims: tuple[Pod, ...] = ()
    preemption_runs: tuple[tuple[PreemptionRun, ...], ...] = ()
    # TopologyAwareWorkloadScheduling, on the outcome of the group's last pod: every
    # placement's run of the default algorithm in the order tried (each a list of the pods'
    # cycles), and which of them the pods' results are (``chosen``)
    placement_runs: tuple[tuple[PreemptionRun, ...], ...] = ()
    chosen: int = 0


def _refuse(pod: Pod, what: str) -> CaseError:
    return CaseError(f"pod {pod.key} of pod group {pod.scheduling_group!r} {what}: kspread does not model it in "
                     "1.36's pod group scheduling cycle", ["schedule"])


def pod_group_cycle(run: SequenceRun, first: QueuedPod) -> None:
    """ScheduleOne for a popped pod of a pod group: podGroupInfoForPod, the default
    algorithm, submitPodGroupAlgorithmResult (see the module docstring)."""
    sched, queue = run.sched, run.queue
    groups = sched.groups
    assert groups is not None
    changes_at_start = queue.changes
    head = sched.current(first.pod)
    key: GroupKey = (head.namespace, head.scheduling_group or "")
    members = [first]
    for k in groups.unscheduled(head):
        if k == head.key:
            continue
        q = queue.pop_specific(k)
        if q is not None:
            members.append(q)
    members.sort(key=lambda q: (-q.pod.priority, q.initial if q.initial is not None else 0))
    # every pop counted a scheduling cycle; the group's pods all run in the last one
    cycle = sched.cycle_count + len(members)

    pg_state = groups.groups.get(key)
    if sched.claims is not None:
        sched.claims.group_pods = frozenset(q.key for q in members)
    # every popped pod counts an attempt (the activeQ's pop, PopSpecificPod's too), whether
    # or not the algorithm reaches it
    for q in members:
        q.attempts += 1
        sched.attempts[q.key] = q.attempts
    # the group's pods are in flight until submitPodGroupAlgorithmResult: none is in the
    # queue, so NominatedPodsForNode gives their nominations as pods of the nominator's
    # reference alone (priority 0, nothing requested), which Filter counts only for a pod of
    # priority 0 or less (addGENominatedPods)
    sched.nominator.hold(q.key for q in members)
    # ---- podGroupSchedulingAlgorithm -----------------------------------------------------------
    if podgroupplacement.placements_apply(sched):
        alg = _placement_algorithm(run, members, cycle, key)
    else:
        alg = _default_algorithm(run, members, cycle, key)
    for r in alg.results:
        if run.results and not run.keep_all:
            run.results[-1].compact()
        run.results.append(r)
    status, error, waiting_on_preemption = alg.status, alg.error, alg.waiting
    placed, pod_victims, cleared, states = alg.placed, alg.pod_victims, alg.cleared, alg.states
    victims: list[Pod] = []
    runs: list[list[PreemptionRun]] = []
    group_message = POD_GROUP_WAITING if waiting_on_preemption else (alg.message or POD_GROUP_UNSCHEDULABLE)
    # a group-level status (no placement generated): every pod fails with it
    group_level = alg.message is not None and not placed
    # what DynamicResources' PostFilter wrote (a claim deallocated) reaches the queue after the cycle
    after: list[PodEvent] = list(sched.handle.dra_events)
    sched.handle.dra_events.clear()
    if pod_victims:
        # the executor's deletions reach the cache once the cycle is over (its snapshot kept
        # the victims): the queue sees them with the group's failures
        victims = _dedup(pod_victims)
        run.preempted.extend(victims)
        after.extend(sched.delete_victims(victims))
        for other in cleared:
            after.append(PodEvent("Delete", sched.current(other), other.priority))
            sched.clear_nomination(other)
    # ---- runWorkloadAwarePreemption --------------------------------------------------------
    if status == UNSCHEDULABLE and not waiting_on_preemption and sched.version.gate("WorkloadAwarePreemption"):
        pg = groups.pod_groups.get(key)
        assert pg is not None  # PreEnqueue holds the pods of a missing PodGroup
        pods = [sched.current(q.pod) for q in members]
        if podgroupplacement.placements_apply(sched) and pg.topology_key is not None:
            out = podgrouppreemption.Outcome(UNSCHEDULABLE, podgrouppreemption.TAWS_REFUSED)
        else:
            out = podgrouppreemption.preempt(sched, pg, pods, lambda: _fits(run, members, cycle, key, runs))
        if out.code == podgrouppreemption.SUCCESS:
            waiting_on_preemption = True
            _refuse_waiting_victims(sched, head, out.victims)
            victims = out.victims
            run.preempted.extend(victims)
            after.extend(sched.delete_victims(out.victims))
            # actuatePodGroupPreemption: lower-priority pods nominated to its candidate "cluster"
            for other in sched.nominator.on_node(podgrouppreemption.CANDIDATE_NAME):
                if other.priority < pg.priority:
                    after.append(PodEvent("Delete", sched.current(other), other.priority))
                    sched.clear_nomination(other)
        elif out.code == ERROR:
            status, error = ERROR, out.message
        else:
            group_message = f"{group_message}, {out.message}"
    reached = {q.key for q, _, _, _, _ in placed}
    for q in members:
        if q.key not in reached:
            placed.append((q, _unreached(run, q), None, None, None))

    # ---- submitPodGroupAlgorithmResult --------------------------------------------------------
    # (each pod goes back to the queue, or is assumed: no Filter runs meanwhile)
    sched.nominator.release()
    from kspread.engine.scheduler import _binding_conditions as binding_conditions

    to_bind: list[tuple[QueuedPod, CycleResult, Pod, str]] = []
    failed: list[QueuedPod] = []
    cache_scheduled = pg_state.scheduled_count() if pg_state is not None else 0
    taken: set[str] = set()
    for q, r, fit, wait, nominated in placed:
        pod = sched.current(q.pod)
        if nominated is not None and r.preemption is not None and r.preemption.victims:
            # the executor's goroutine still runs (kspread's rule): DefaultPreemption's
            # PreEnqueue holds the pod until its last victim's deletion
            q.preempting = r.preemption.victims[-1].key
        if status == ERROR:
            # (a pod that fit before the Error keeps the node it fit on: it binds nowhere)
            r.pod_group = PodOutcome(key, status, fit, False, r.error if r.error else error)
            _fail(run, q, pod, frozenset(), True, after)
            failed.append(q)
            continue
        if fit is not None and status == SUCCESS:
            r.pod_group = PodOutcome(key, status, fit, True)
            state = states.get(pod.key)
            if state is not None and (waits := binding_conditions(sched, state, pod, fit)):
                raise _refuse(pod, f"was allocated devices with binding conditions ({', '.join(waits)}), which "
                                   "DynamicResources' PreBind waits for")
            taken.add(pod.key)
            cache_scheduled += 1
            if groups.permit(pod, cache_scheduled) is not None:
                # the binding cycle's Permit waits: Activate the group's unscheduled pods
                for k in groups.unscheduled(pod):
                    if k not in taken:
                        queue.activate(k)
            to_bind.append((q, r, pod, fit))
            continue
        if (fit is not None or nominated is not None) and waiting_on_preemption:
            # back to the queue nominated to the node it fit on, with the group's status; a
            # pod that preempts, to the node its PostFilter nominated, with its own status
            at = fit if fit is not None else nominated
            assert at is not None
            if fit is not None:
                r.pod_group = PodOutcome(key, status, fit, False, group_message, nominated=fit)
                rejectors: frozenset[str] = frozenset()
            else:
                r.pod_group = PodOutcome(key, status, None, False, nominated=nominated)
                rejectors = sched.rejectors(r)
            r.bound_node = None
            if pod.nominated_node and pod.nominated_node != at and sched.version.queue_sees_nomination_changes:
                after.append(PodEvent("Delete", pod, pod.priority))
            pod = sched.nominate(pod, at)
            run.queue.group_failed(q, pod, rejectors, False)
            failed.append(q)
            continue
        if group_level:
            # the placement generator's status, cloned for each pod (no FitError: no rejector)
            r.pod_group = PodOutcome(key, status, None, False, group_message)
            _fail(run, q, pod, frozenset(), False, after)
            failed.append(q)
            continue
        if fit is not None or nominated is not None:
            # the group cannot be placed: Permit's message, the nomination cleared (a pod
            # that preempted too: its victims are gone all the same)
            r.pod_group = PodOutcome(key, status, fit, False, f"{POD_GROUP_UNSCHEDULABLE}, {wait}")
            r.bound_node = None
            _fail(run, q, pod, frozenset(), False, after)
            failed.append(q)
            continue
        r.pod_group = PodOutcome(key, status, None, False)
        _fail(run, q, pod, sched.rejectors(r), False, after, r)
        failed.append(q)
    for _, r, _, _, _ in placed:
        if r.pod_group is not None:
            r.pod_group.cycle = cycle
    # the group's last outcome that a kept cycle carries: the last pod the returned run tried
    # (a run that erred leaves the pods after it unreached, with no cycle kept)
    last = (alg.results[-1] if alg.results else placed[-1][1]).pod_group
    if last is not None:
        last.victims = tuple(victims)
        last.preemption_runs = tuple(tuple(one) for one in runs)
        last.placement_runs, last.chosen = tuple(alg.runs), alg.chosen
    for q in failed:
        q.parked = changes_at_start
    if sched.claims is not None:
        sched.claims.group_pods = frozenset()
    if status == SUCCESS:
        groups.set_condition(key, Condition("True", "Scheduled", ""))
    elif status == UNSCHEDULABLE:
        groups.set_condition(key, Condition("False", "Unschedulable", group_message))
    else:
        groups.set_condition(key, Condition("False", "SchedulerError", error or ""))
    for ev in after:
        queue.deliver(ev)
    # prepareForBindingCycle (Reserve again: VolumeBinding assumes what the pod's Filter chose
    # on the node, DynamicResources the allocations it found there), then the binding cycles
    # (after the submission: they run on their own; PreBind writes what Reserve assumed). A
    # pod whose VolumeBinding PreBind binds claims polls for the PV controller (the first
    # check after a second): the group's other pods are bound (and confirmed in the cache,
    # the node's order of pods) before it
    vb = sched.framework.plugin("VolumeBinding")
    flight = getattr(vb, "pre_bind_pre_flight", None)
    to_bind.sort(key=lambda t: bool(flight is not None and (st := states.get(t[2].key)) is not None and flight(st)))
    to_bind = binding_order(to_bind)
    dra = sched.framework.plugin("DynamicResources")
    conflict = getattr(dra, "prebind_conflict", None)
    claim_keys = getattr(dra, "claim_keys", None)
    wrote: list[tuple[str, list[str]]] = []  # the pods bound so far, each with its claims
    for q, r, pod, node in to_bind:
        st = states.get(pod.key)
        if conflict is not None and st is not None and (failure := conflict(st, pod)) is not None:
            assert claim_keys is not None
            _note_race(sched, pod.key, claim_keys(st)[failure[1]], wrote)
            _prebind_failed(run, q, r, pod, node, st, *failure)
            continue
        if st is not None and claim_keys is not None:
            wrote.append((pod.key, claim_keys(st)))
        _, bind_error = sched.ext.bind(pod, node)
        if bind_error is not None:
            r.error = bind_error
            continue
        r.bound_node = node
        state = states.get(pod.key)
        claim_events = sched.reserve(state, pod, node) if state is not None else []
        preflight = state is not None and sched.pre_bind_pre_flight(state)
        run._bind(pod, node, claim_events, preflight)


def binding_order(to_bind: list) -> list:
    """The order the group's binding cycles run in: the cycle's (kspread's rule for
    upstream's race of goroutines; tests/test_tie_robustness.py runs the other order)."""
    return to_bind


def _note_race(sched: Any, loser: str, claim: str, wrote: list[tuple[str, list[str]]]) -> None:
    """Marks the pods of a group cycle whose PreBinds wrote ``claim``, the first (bound
    before) the winner and ``loser`` last: which of them wins is upstream's race of binding
    goroutines, kspread's the cycle's order (``Scheduler.binding_races``)."""
    pods = (*(k for k, claims in wrote if claim in claims), loser)
    for k in pods:
        races = sched.binding_races.setdefault(k, [])
        same = next((i for i, (c, ps) in enumerate(races) if c == claim and ps[0] == pods[0]), None)
        if same is None:
            races.append((claim, pods))
        else:
            races[same] = (claim, tuple(dict.fromkeys((*races[same][1], *pods))))


@dataclass(slots=True)
class _Algorithm:
    """One run of podGroupSchedulingDefaultAlgorithm (a placement's, with
    TopologyAwareWorkloadScheduling): its status, each pod's cycle (``placed``: the queued
    pod, its result, the node it fit on, Permit's wait, the node its own preemption
    nominated), what its pods' preemptions did, their cycle states, their results in order.
    ``message``: the group's status message when it is not the default's."""

    status: str = UNSCHEDULABLE
    error: str | None = None
    waiting: bool = False
    placed: list[tuple[QueuedPod, CycleResult, str | None, str | None, str | None]] = field(default_factory=list)
    pod_victims: list[Pod] = field(default_factory=list)
    cleared: list[Pod] = field(default_factory=list)
    states: dict[str, CycleState | None] = field(default_factory=dict)
    results: list[CycleResult] = field(default_factory=list)
    message: str | None = None
    # of several placements: each one's run (its pods' cycles), in the order tried, and the
    # one returned; its results are observed once it is chosen
    runs: list[tuple[PreemptionRun, ...]] = field(default_factory=list)
    chosen: int = 0


def _default_algorithm(run: SequenceRun, members: list[QueuedPod], cycle: int, key: GroupKey,
                       multi: bool = False) -> _Algorithm:
    """podGroupSchedulingDefaultAlgorithm on the snapshot (over the nodes of the placement
    the scheduler's node order is narrowed to, with TopologyAwareWorkloadScheduling).
    ``multi``: one of several placements' runs (a claim a PostFilter deallocates is then
    refused)."""
    sched = run.sched
    groups = sched.groups
    assert groups is not None
    alg = _Algorithm()
    placed = alg.placed
    assumed: list[tuple[Pod, Pod]] = []  # (the pod as popped, assumed on its node)
    pg_state = groups.groups.get(key)
    scheduled = pg_state.scheduled_count() if pg_state is not None else 0
    requires_preemption = False
    for i, q in enumerate(members):
        pod = sched.current(q.pod)
        sched.cycle_count = cycle - 1
        written = len(sched.handle.dra_events)
        r = sched.schedule_one(pod)
        alg.states[pod.key] = r.state
        r.attempt = q.attempts
        if multi and sched.handle.dra_events[written:]:
            raise _refuse(pod, "has DynamicResources' PostFilter deallocate a claim in one of several placements' "
                               "runs (TopologyAwareWorkloadScheduling)")
        _refuse_stale_claims(sched, pod, sched.handle.dra_events[written:], members[i + 1:])
        alg.results.append(r)
        if run.observe is not None and not multi:
            run.observe(sched, r)
        if r.error:
            alg.error = f"failed to schedule other pod from a pod group: {r.error}"
            alg.status, alg.waiting = ERROR, False
            placed.append((q, r, None, None, None))
            break
        nominated: str | None = None
        if r.selected_positions is not None or r.selected:
            node = sched.pick_host(r)
            sched.store_schedule_results(r, node)
        elif r.preemption is not None and r.preemption.nominated_node is not None:
            # PostFilter nominated a node: its victims' deletion started (the executor's
            # goroutine); the pod is assumed there as if it fit, on the cycle's snapshot,
            # where the victims stay; its Reserve reads what the dry run's Filter found there
            node = nominated = r.preemption.nominated_node
            requires_preemption = True
            _actuate(sched, pod, r, members[i + 1:], alg.pod_victims, alg.cleared)
        else:
            placed.append((q, r, None, None, None))
            continue
        sched.mark_tie(pod, r)
        _assume_and_reserve(sched, pod, r.state, node, assumed)
        scheduled += 1
        wait = groups.permit(pod, scheduled)
        if wait is None:
            # the group can be placed; if a pod needs preemption, once its victims are gone
            alg.status = UNSCHEDULABLE if requires_preemption else SUCCESS
            alg.waiting = requires_preemption
        placed.append((q, r, None if nominated else node, wait, nominated))
    # unreserveAndForget, deferred: the last assumed first
    _revert(sched, assumed)
    return alg


def _placement_algorithm(run: SequenceRun, members: list[QueuedPod], cycle: int, key: GroupKey) -> _Algorithm:
    """podGroupSchedulingPlacementAlgorithm (TopologyAwareWorkloadScheduling): the default
    algorithm in each placement (the scheduler's node order narrowed to its nodes, as
    AssumePlacement narrows the snapshot's ListNodesInPlacement; plugins still list every
    node), then the best of those where the group can be placed (or waits on
    preemption). None: "0/N placements are available, first placement status: pod group is
    unschedulable", with the pods' statuses of the first placement (upstream's first is a
    Go map's: kspread takes its own and lists ``placementOrder`` when the placements gave
    the pods different outcomes). A run that errs is returned at once. The run returned
    (``_chosen``) is the one whose cycles are observed, so the per-cycle keys describe its
    last pod: the best run, the run that erred, or the first placement's; a backend reports
    the same run (backend/kspreadbackend/grouptries.go)."""
    sched = run.sched
    groups = sched.groups
    assert groups is not None
    pg = groups.pod_groups.get(key)
    pg_state = groups.groups.get(key)
    for q in members:
        sched.placement_order.pop(q.key, None)
    assumed_nodes = {k: n for k, (_, n) in [*sched.waiting.items(), *sched.prebind_waiting.items()]}
    placements, code, message = podgroupplacement.generate(sched, key, pg, pg_state, assumed_nodes)
    if not placements:
        out = _Algorithm(status=ERROR if code == ERROR else UNSCHEDULABLE, message=message)
        if code == ERROR:
            out.error = message
        return out
    full_order = sched.order
    runs: list[tuple[podgroupplacement.Placement, _Algorithm]] = []
    multi = len(placements) > 1
    try:
        for pl in placements:
            sched.set_placement(list(pl.nodes) if len(pl.nodes) != len(full_order) else None)
            alg = _default_algorithm(run, members, cycle, key, multi)
            runs.append((pl, alg))
            if alg.status == ERROR:
                break
    finally:
        sched.set_placement(None)
        sched.cycle_order = full_order
    if runs[-1][1].status == ERROR:
        # upstream returns the run that erred at once: its cycles are the group's
        return _chosen(run, runs, runs[-1][1], multi)
    ok = [(pl, alg) for pl, alg in runs if alg.status == SUCCESS or alg.waiting]
    if not ok:
        first = _chosen(run, runs, runs[0][1], multi)
        first.message = f"0/{len(placements)} placements are available, first placement status: {POD_GROUP_UNSCHEDULABLE}"
        if multi and _differing_failures(sched, runs):
            # upstream's first placement is a Go map's: kspread takes its own first and says so
            for q, _, _, _, _ in first.placed:
                sched.placement_order[q.key] = tuple(pl.name for pl, _ in runs)
        return first
    if len(ok) == 1:
        return _chosen(run, runs, ok[0][1], multi)
    assignments = [(pl, [sched.current(q.pod) for q, _, fit, _, nom in alg.placed if fit or nom]) for pl, alg in ok]
    totals = podgroupplacement.score(sched, pg_state, assignments)
    best = max(totals)
    tied = [i for i, t in enumerate(totals) if t == best]
    chosen = _chosen(run, runs, ok[tied[sched.pick_placement([ok[i][0].name for i in tied])]][1], multi)
    if len(tied) > 1:
        # findBestPlacement breaks equal totals with rand.Int(): each pod's node in every
        # tied placement
        for q, _, fit, _, nom in chosen.placed:
            nodes: list[str] = []
            for i in tied:
                for q2, _, fit2, _, nom2 in ok[i][1].placed:
                    if q2.key == q.key and (fit2 or nom2):
                        nodes.append(fit2 or nom2 or "")
            if (fit or nom) and len(set(nodes)) > 1:
                sched.mark_placement_tie(q.key, nodes)
    return chosen


def _chosen(run: SequenceRun, runs: list, alg: _Algorithm, multi: bool) -> _Algorithm:
    """The run the placement algorithm returns: its pods' ties marked again (each
    placement's run marked its own), its cycles observed (of several placements), and
    every run's cycles kept for a comparison with upstream's log (``_Algorithm.runs``)."""
    sched = run.sched
    for _, r, fit, _, nom in alg.placed:
        sched.placement_order.pop(r.pod.key, None)
        if fit or nom:
            sched.mark_tie(r.pod, r)
        else:
            sched.ties.pop(r.pod.key, None)
    if multi:
        if run.observe is not None:
            for r in alg.results:
                run.observe(sched, r)
        alg.runs = [tuple(_preemption_run(sched, r, fit or nom, r.error or "") for _, r, fit, _, nom in a.placed)
                    for _, a in runs]
        alg.chosen = next(i for i, (_, a) in enumerate(runs) if a is alg)
    return alg


def _differing_failures(sched: Any, runs: list) -> bool:
    """Every placement failed: upstream reports each pod with the first placement's status,
    the first in a Go map's order. Whether the placements' pods did not all end the same
    way (fit or not, the same FailedScheduling message, the same rejecting plugins)."""
    from kspread.engine.diagnosis import verdict

    def outcome(alg: _Algorithm) -> list[tuple]:
        out: list[tuple] = []
        for q, r, fit, wait, nom in alg.placed:
            if fit or nom:
                out.append((q.key, True, wait))
            else:
                out.append((q.key, False, verdict(sched.version, r), sched.rejectors(r)))
        return out

    first = outcome(runs[0][1])
    return any(outcome(alg) != first for _, alg in runs[1:])

def _prebind_failed(run: SequenceRun, q: QueuedPod, r: CycleResult, pod: Pod, node: str, state: CycleState,
                    error: str, at: int) -> None:
    """A pod of the group whose DynamicResources PreBind fails: it shares a claim with a pod
    of its group cycle whose PreBind wrote it first, and writes the claim from the copy its
    PreFilter read (bindClaim: "got allocated elsewhere in the meantime"; or, reserving an
    allocated claim for its PodGroup again, the API server's "Duplicate value"). kspread's
    rule: the group's binding cycles run in ``to_bind`` order (upstream's race), so the
    first of the sharers wins. PreBind wrote the pod's claims before that one (``at``):
    allocated as Reserve gave them out, reserved for the pod. handleBindingCycleError:
    Unreserve takes the pod out of those claims' reservedFor (their allocation stays),
    the cache forgets the pod (an AssignedPodDelete event, at once: the status is an
    Error), and the pod goes back to the queue with the Error (backoffQ's error queue).
    Refused: VolumeBinding's PreBind binds the pod's volumes first."""
    sched = run.sched
    vb = sched.framework.plugin("VolumeBinding")
    flight = getattr(vb, "pre_bind_pre_flight", None)
    if flight is not None and flight(state):
        raise _refuse(pod, f"has VolumeBinding's PreBind bind its volumes before DynamicResources' PreBind fails "
                           f"({error})")
    from kspread.engine.plugins.dynamicresources import DynamicResourcesFilter

    dra = sched.framework.plugin("DynamicResources")
    assert isinstance(dra, DynamicResourcesFilter)
    written = dra.reserve(state, pod, node, upto=at)
    written += dra.unreserve_written(state, pod, at)
    for ev in written:
        run.queue.deliver(ev)
    message = f'running PreBind plugin "DynamicResources": {error}'
    r.bound_node = None
    if r.pod_group is not None:
        r.pod_group.bound = False
        r.pod_group.message = message
    run.rejected[pod.key] = message
    assumed = replace_pod(pod, node_name=node, nominated_node=None)
    run.queue.deliver(PodEvent("Delete", assumed), skip=pod.key)
    after: list[PodEvent] = []
    if sched.version.queue_sees_bound_nomination and sched.version.gate("NominatedNodeNameForExpectation"):
        # the binding cycle nominated the pod to the node before PreBind (PreBindPreFlight
        # found work); the failure clears it
        after.append(PodEvent("Delete", replace_pod(pod, nominated_node=node), pod.priority))
    _fail(run, q, sched.current(pod), frozenset(), True, after)
    for ev in after:
        run.queue.deliver(ev)


def _actuate(sched: Any, pod: Pod, r: CycleResult, later: list[QueuedPod], pod_victims: list[Pod],
             cleared: list[Pod]) -> None:
    """DefaultPreemption's executor for a pod of the group (prepareCandidateAsync): its
    victims, deleted once the cycle is over, and the lower-priority pods nominated to its
    node, whose nomination it clears. Refused: what depends on when the executor's
    goroutine runs against the group's later pods."""
    pre = r.preemption
    assert pre is not None and pre.nominated_node is not None
    _refuse_waiting_victims(sched, pod, pre.victims)
    pod_victims.extend(pre.victims)
    later_keys = {q.key for q in later}
    for other in sched.nominator.on_node(pre.nominated_node):
        if other.priority >= pod.priority or other.key == pod.key or any(c.key == other.key for c in cleared):
            continue
        if other.key in later_keys or any(q.pod.priority <= other.priority for q in later):
            raise _refuse(pod, f"preempts on {pre.nominated_node}, clearing the nomination of pod {other.key} "
                               "while the group's later pods, which it counts for, are scheduled")
        cleared.append(other)


def _refuse_stale_claims(sched: Any, pod: Pod, written: list[PodEvent], later: list[QueuedPod]) -> None:
    """Refused: the pod's DynamicResources PostFilter deallocated a claim (an API write)
    while a later pod of the group, with claims of its own, is still to run in the same
    cycle. Whether that pod's PreFilter reads the claim as deallocated (its own claim
    allocatable elsewhere, the devices free for its allocator) depends on when the claim
    informer delivers the write; the oracle's run found it not yet delivered."""
    if not written:
        return
    readers = [q.key for q in later if sched.current(q.pod).resource_claims]
    if readers:
        claims = ", ".join(f"{e.claim[0].namespace}/{e.claim[0].name}" for e in written)
        raise _refuse(pod, f"has DynamicResources' PostFilter deallocate {claims} while pod {readers[0]}, later in "
                           "the group's cycle, reads claims: whether it sees the write depends on when the claim "
                           "informer delivers it")


def _refuse_waiting_victims(sched: Any, pod: Pod, victims: list[Pod]) -> None:
    waiting = [v.key for v in victims if v.key in sched.waiting or v.key in sched.prebind_waiting]
    if waiting:
        raise _refuse(pod, f"preempts pod {waiting[0]}, which waits in its binding cycle")


def _dedup(pods: list[Pod]) -> list[Pod]:
    """Each pod once, in order (two pods of a group may pick the same victim: the cycle's
    snapshot keeps it; the second deletion finds it gone)."""
    seen: set[str] = set()
    out = []
    for p in pods:
        if p.key not in seen:
            seen.add(p.key)
            out.append(p)
    return out


def _assume_and_reserve(sched: Any, pod: Pod, state: CycleState | None, node: str,
                        assumed: list[tuple[Pod, Pod]]) -> None:
    """assumeAndReserve in a run of the group's algorithm: the pod assumed on the snapshot's
    node (a nominated pod leaves the nominator meanwhile; ``assumed`` records it for
    ``_revert``), then Reserve."""
    sched.note_claim_statuses(pod, state, node)
    on = replace_pod(pod, node_name=node, nominated_node=None, node_allocatable_claims=sched.claim_statuses_of(pod))
    sched.nominator.remove(pod)
    sched.snapshot.add_pod(on)
    sched.snapshot.group_assumed.add(pod.key)
    assumed.append((pod, on))
    _reserve(sched, state, pod, node)


def _reserve(sched: Any, state: CycleState | None, pod: Pod, node: str) -> None:
    """assumeAndReserve's Reserve in a run of the group's algorithm: VolumeBinding assumes
    the volumes the pod's Filter chose on the node (AssumePodVolumes: the binder's assume
    caches, which the group's later pods read); DynamicResources puts the allocations its
    Filter found there in flight (SignalClaimPendingAllocation: the group's
    pendingAllocations; the later pods' allocators count their devices). Nothing is
    written: the run's end unreserves it (``_revert``)."""
    if state is not None:
        sched.reserve(state, pod, node, in_flight=True, holds="of a pod group would go through its group cycle's Reserve and Unreserve")


def _revert(sched: Any, assumed: list[tuple[Pod, Pod]]) -> None:
    """unreserveAndForget of the pods a run of the algorithm assumed, the last first:
    Unreserve (VolumeBinding's RevertAssumedPodVolumes; DynamicResources drops the pod's
    in-flight allocations, MaybeRemoveClaimPendingAllocation: nothing was written), then
    the snapshot forgets the pod."""
    for p, on in reversed(assumed):
        if sched.handle.storage is not None:
            sched.handle.storage.revert_pod_volumes(p.key)
        if sched.claims is not None:
            sched.claims.drop_in_flight(p.key)
        sched.snapshot.remove_pod(on)
        sched.snapshot.group_assumed.discard(p.key)
        p = sched.unreserve_claim_statuses(p)  # DynamicResources' Unreserve clears what it found
        if p.nominated_node:
            sched.nominator.add(p)


def _fits(run: SequenceRun, members: list[QueuedPod], cycle: int, key: GroupKey,
          runs: list[list[PreemptionRun]]) -> tuple[str, str]:
    """The group's default algorithm without post filters (workload-aware preemption's
    podGroupSchedulingFunc) on the current snapshot: its code and message. Each pod runs
    the scheduling algorithm (nextStartNodeIndex and the batch move as upstream's do)."""
    sched, groups = run.sched, run.sched.groups
    assert groups is not None
    pg_state = groups.groups.get(key)
    scheduled = pg_state.scheduled_count() if pg_state is not None else 0
    assumed: list[tuple[Pod, Pod]] = []
    code, message = UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE
    sched.skip_post_filters = True
    this: list[PreemptionRun] = []
    runs.append(this)
    try:
        for q in members:
            pod = sched.current(q.pod)
            sched.cycle_count = cycle - 1
            r = sched.schedule_one(pod)
            if r.error:
                this.append(_preemption_run(sched, r, None, r.error))
                return ERROR, f"failed to schedule other pod from a pod group: {r.error}"
            if r.selected_positions is None and not r.selected:
                this.append(_preemption_run(sched, r, None, ""))
                continue
            node = sched.pick_host(r)
            this.append(_preemption_run(sched, r, node, ""))
            sched.store_schedule_results(r, node)
            _assume_and_reserve(sched, pod, r.state, node, assumed)
            scheduled += 1
            if groups.permit(pod, scheduled) is None:
                code, message = SUCCESS, ""
        if code != SUCCESS and podgroupplacement.placements_apply(sched):
            # the placement algorithm's one placement, every node (a group without a
            # topology constraint: workload-aware preemption refuses the others)
            message = f"0/1 placements are available, first placement status: {POD_GROUP_UNSCHEDULABLE}"
        return code, message
    finally:
        sched.skip_post_filters = False
        sched.cycle_count = cycle
        _revert(sched, assumed)


def _preemption_run(sched: Any, r: CycleResult, node: str | None, error: str) -> PreemptionRun:
    from kspread.engine.scheduler import encode_tie

    names = sched.snapshot.name_array()
    at = encode_tie(r.searched_positions(sched.snapshot.position), len(names))
    return PreemptionRun(r.pod.key, at, names, node, error)


def _unreached(run: SequenceRun, q: QueuedPod) -> CycleResult:
    """A pod the algorithm did not reach (an Error stopped it): no cycle of its own."""
    from kspread.engine.scheduler import CycleResult

    pod = run.sched.current(q.pod)
    r = CycleResult(pod)
    r.attempt = q.attempts
    return r


def _fail(run: SequenceRun, q: QueuedPod, pod: Pod, rejectors: frozenset[str], error: bool,
          after: list[PodEvent], r: Any = None) -> None:
    """handleSchedulingFailure for a pod of the group: its nomination cleared (the group
    decided, or its own PostFilter cleared it), then the queue (``group_failed``)."""
    sched = run.sched
    clear = r is None or (r.preemption is not None and r.preemption.clear_nomination)
    if clear and pod.nominated_node:
        if sched.version.queue_sees_nomination_changes:
            after.append(PodEvent("Delete", pod, pod.priority))
        pod = sched.clear_nomination(pod)
    run.queue.group_failed(q, pod, rejectors, error)
