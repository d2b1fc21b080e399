"""The scheduling queue of a ``schedule`` sequence (backend/queue/scheduling_queue.go
from 1.34, internal/queue before): activeQ, backoffQ and the unschedulable pods, and
how the cluster events a sequence makes move pods between them.

A sequence's events: a pod bound (AssignedPodAdd), a victim deleted (AssignedPodDelete)
and, from 1.33, a pending pod's nomination changed or cleared (AssignedPodDelete offered
only to pods of its priority or less; in 1.33 and 1.34 a nominated pod's binding too).
Nodes change only at a sequence's steps (below).

* activeQ pops by PrioritySort: priority descending, then the time the pod entered the
  queue (creation, in list order; for a pod that failed, the time it failed).
* A pod that fails goes to backoffQ when an event during its own cycle (its own
  preemption's deletions) may make it schedulable -- decided as for any event below --
  and to the unschedulable pods otherwise.
* An event moves an unschedulable pod to backoffQ when the pod is worth requeuing:
  with SchedulerQueueingHints on, when some plugin that rejected it registered the
  event and its queueing hint answers Queue; with the gate off (from 1.21), when some
  rejecting plugin registered the event, AssignedPodAdd being offered only to the pods
  with a required affinity term it matches or (from 1.31) that PodTopologySpread
  rejected in its namespace (getUnschedulablePodsWithCrossTopologyTerm); before 1.21,
  AssignedPodAdd moves the pods with a required affinity term it matches and
  AssignedPodDelete every pod. A pod no plugin rejected (a failure that names none)
  stays unschedulable here; upstream would retry it after each backoff for ever.
* The clock rule. A sequence has no wall clock: cycles, bindings and events take no
  time, and every event of a cycle is seen before the next pod is popped. Backoff is
  the profile's podInitialBackoffSeconds doubled per failure, at most
  podMaxBackoffSeconds (upstream's defaults 1 and 10), so a pod that failed is still
  backing off when an event moves it. With SchedulerPopFromBackoffQ (beta, on from
  1.33) the scheduler pops backoffQ's head when activeQ is empty: the earliest backoff
  expiry first, then activeQ's order. Without it, the scheduler waits when activeQ is
  empty for flushBackoffQCompleted, which runs once a second and moves every pod whose
  backoff has ended to activeQ. The clock counts those flushes: a pod fails just after
  the flush that released it (or the first one, at the start), so a backoff ends just
  after a flush and the flush a second later moves the pod; the clock jumps to the
  second after the earliest expiry and moves the pods whose backoff ended before it. A
  pod moved by an event after the second its backoff ends goes straight to activeQ;
  in that second too without SchedulerPopFromBackoffQ, whereas with it backoffQ
  compares one-second windows and the pod is still backing off (isPodBackingoff).
  Without it, a step comes half a second into its second, and a pod that fails in the
  run after a step ends its backoff half a second into its last second: an event in
  that second before its steps finds it backing off (``QueuedPod.failed_late``).
* The sequence ends when activeQ and backoffQ are empty: pods left unschedulable stay
  pending (upstream would flush them after podMaxInUnschedulablePodsDuration, 5 min).

A sequence's steps (kspread.engine.steps) add what a cluster's life adds: nodes added,
updated (``NodeEvent``: one per kind of change, NodeSchedulingPropertiesChange) and
deleted; pods created and deleted while the scheduler is idle; scheduling gates (a pod
with one waits apart, PreEnqueue's SchedulingGates, and goes to activeQ when its last
gate is removed); the clock moved by ``wait`` (``flush_leftover``: pods unschedulable for
longer than podMaxInUnschedulablePodsDuration move, on the 30 s ticks of
flushUnschedulablePodsLeftover).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kspread.engine.framework.interface import PodEvent
from kspread.engine.model import Node, Pod
from kspread.engine.plugins.gangscheduling import NAME as GANG
from kspread.engine.plugins.interpodaffinity import pod_terms

if TYPE_CHECKING:  # pragma: no cover
    from kspread.engine.framework.runtime import Framework
    from kspread.engine.versions import Version

INITIAL_BACKOFF_SECONDS = 1  # podInitialBackoffSeconds' default
MAX_BACKOFF_SECONDS = 10  # podMaxBackoffSeconds' default
EXTENDER = "Extender"  # framework.ExtenderName: the rejector when extenders filtered nodes out
PTS = "PodTopologySpread"
PREEMPTION = "DefaultPreemption"  # its PreEnqueue holds a pod whose preemption is running (async)


# podMaxInUnschedulablePodsDuration: 60 s (unschedulableQTimeInterval) from 1.14, 5 min from
# 1.24 (PR #108761); flushUnschedulablePodsLeftover runs every 30 s
LEFTOVER_FLUSH_SECONDS = 30


UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"  # the leftover flush's wildcard event


def max_in_unschedulable_seconds(version: Version) -> int:
    return 300 if version.minor >= 24 else 60


@dataclass(frozen=True, slots=True)
class NodeEvent:
    """A Node event: ``action`` Add, Delete or one UpdateNode* type; ``old`` None for an
    added node, ``new`` None for a deleted one. ``precheck``: preCheckForNode (gate off),
    the pods it refuses are not offered the event."""

    action: str
    old: Node | None
    new: Node | None
    precheck: Callable[[Pod], bool] | None = None


def backoff_seconds(count: int, initial: int = INITIAL_BACKOFF_SECONDS, maximum: int = MAX_BACKOFF_SECONDS) -> int:
    """calculateBackoffDuration: the initial backoff doubled per failure after the first,
    capped at the maximum."""
    if count <= 0:
        return 0
    shift = count - 1
    if maximum >> shift < initial:
        return maximum
    return initial << shift


@dataclass(slots=True)
class QueuedPod:
    """QueuedPodInfo: the pod as the queue holds it."""

    pod: Pod
    timestamp: int  # when it entered the queue or last failed, as a counter
    attempts: int = 0
    unschedulable_count: int = 0
    # ConsecutiveErrorsCount: failures with an Error in a row (a binding cycle's), which
    # set the backoff while not zero
    errors_count: int = 0
    failed_at: int = 0  # the clock (seconds) when it last failed
    # it last failed after a step of that second (half a second into it), not in the run
    # after that second's backoff flush: its backoff ends half a second into its last second
    failed_late: bool = False
    rejectors: frozenset[str] = frozenset()
    where: str = "active"  # active | backoff | unschedulable | gone
    # the PreEnqueue plugin holding the pod among the unschedulable pods (GatingPlugin):
    # GangScheduling; "" when none (scheduling gates are held apart, in ``gated``)
    gating: str = ""
    # InitialAttemptTimestamp, as a counter: when the pod first entered activeQ (a pod
    # group cycle orders its pods by it)
    initial: int | None = None
    # a pod of a pod group (1.36) whose failure named no plugin: it waits in backoffQ's
    # error queue, which the scheduler does not pop while backoff lasts (podErrorBackoffQ)
    error_backoff: bool = False
    # a pod of a pod group (1.36) whose cycle failed at the queue's ``changes``: retrying it
    # before anything changes repeats that cycle (podgroupcycle's rule)
    parked: int = -1
    # the ``changes`` at which kspread counted the one retry of a parked pod group that the
    # oracle runs (``SchedulingQueue._repeat``)
    repeated: int = -1
    # a pod of a pod group (1.36) whose own preemption is running (the executor's goroutine):
    # the victim whose deletion ends it (lastVictimsPendingPreemption); until then
    # DefaultPreemption's PreEnqueue holds the pod
    preempting: str = ""

    @property
    def key(self) -> str:
        return self.pod.key


class SchedulingQueue:
    def __init__(self, version: Version, framework: Framework, pods: Iterable[Pod],
                 nominate: Callable[[Pod], None] | None = None) -> None:
        self.version = version
        # moveToActiveQ for a pod created or updated (UnscheduledPodAdd / UnscheduledPodUpdate;
        # 1.31's PodAdd / PodUpdate) hands the pod to the nominator: a pod created with
        # status.nominatedNodeName counts as nominated there from then on. A pod that
        # PreEnqueue holds (scheduling gates, GangScheduling) is not nominated until a move
        # of that kind lets it into activeQ.
        self.nominate = nominate
        self.framework = framework
        self.hints = version.gate("SchedulerQueueingHints")
        self.pop_from_backoff = version.gate("SchedulerPopFromBackoffQ")
        self.filters_events = version.queue_filters_events_by_plugin
        self.now = 0
        # the second of the last step (kspread.engine.steps): the scheduler's runs after it
        # in that second are half a second into it (the oracle's clock: steps.go)
        self.stepped = -1
        self.initial_backoff = framework.profile.pod_initial_backoff_seconds
        self.max_backoff = framework.profile.pod_max_backoff_seconds
        self._seq = 0
        self.pods: dict[str, QueuedPod] = {}
        # heaps of (order..., timestamp, key); an entry is stale once its pod moved on
        self._active: list[tuple[int, int, str]] = []
        self._backoff: list[tuple[int, int, int, str]] = []
        self._unschedulable: dict[str, QueuedPod] = {}
        # pods held by a scheduling gate (PreEnqueue), apart: no event moves them
        self._gated: dict[str, QueuedPod] = {}
        # 1.36 with GenericWorkload: pods of a pod group are scheduled in pod group cycles,
        # whose failures go to backoffQ (kspread.engine.podgroupcycle)
        self.pod_groups = version.minor >= 36 and version.gate("GenericWorkload")
        self._initial_seq = 0
        # counts what may change a cycle's outcome (pods created, deleted, updated, bound;
        # node events; ...): a parked pod group retries only once it moved on
        self.changes = 0
        # GangScheduling (1.35, its gates on): its PreEnqueue, and the UnscheduledPodAdd
        # event the scheduler sends when a pod is created
        self.gang = framework.handle.gang
        # the pods waiting at GangScheduling's Permit are in flight until their binding
        # cycle ends: the events since (pod and node events, UNSCHEDULABLE_TIMEOUT), which
        # decide where a rejected one goes (determineSchedulingHintForInFlightPod)
        self.in_flight: dict[str, list[PodEvent | NodeEvent | str]] = {}
        for p in pods:
            self.add(p)

    def start_waiting(self, key: str) -> None:
        self.in_flight[key] = []

    def end_waiting(self, key: str) -> list[PodEvent | NodeEvent | str]:
        """The pod's binding cycle ended (bound or rejected): the events it saw in flight."""
        return self.in_flight.pop(key, [])

    def _record(self, ev: PodEvent | NodeEvent | str) -> None:
        for events in self.in_flight.values():
            events.append(ev)

    def add(self, pod: Pod) -> None:
        """A pod created: to activeQ, or held while it has a scheduling gate or while
        GangScheduling's PreEnqueue holds it. With GangScheduling, the workload manager
        records it first, and its creation is an event (UnscheduledPodAdd) for the pods
        GangScheduling holds."""
        # (upstream's Timestamp: the creation, for the leftover flush of a pod held since)
        q = self.pods[pod.key] = QueuedPod(pod, self._next(), failed_at=self.now)
        self.changes += 1
        if self.gang is not None:
            self.gang.add_pod(pod)
        if pod.scheduling_gates:
            self.place(q, "gated")
        elif self._enqueue(q, "active"):
            self._nominate(q)
        if self.gang is not None and getattr(self.gang, "sends_unscheduled_add", True):
            # the pod itself, held by PreEnqueue, is offered the event too (its hint answers
            # Queue, PreEnqueue holds it again): in 1.36 that sets the order in which one event
            # moves a group's pods, which a pod group cycle reads (InitialAttemptTimestamp)
            self.deliver(PodEvent("UnscheduledAdd", pod), skip=None if self.pod_groups else pod.key)

    def _enqueue(self, q: QueuedPod, where: str) -> bool:
        """moveToActiveQ / moveToBackoffQ: PreEnqueue first (DefaultPreemption: the pod's
        own preemption still running; GangScheduling); a pod it rejects waits among the
        unschedulable pods, that plugin its gating plugin (and a rejector)."""
        if q.preempting:
            q.gating = PREEMPTION
            q.rejectors = q.rejectors | {PREEMPTION}
            self.place(q, "unschedulable")
            return False
        if self.gang is not None and self.gang.pre_enqueue(q.pod) is not None:
            q.gating = GANG
            q.rejectors = q.rejectors | {GANG}
            self.place(q, "unschedulable")
            return False
        q.gating = ""
        self.place(q, where)
        return True

    def activate(self, key: str) -> bool:
        """Activate: a pod among the unschedulable ones or in backoffQ moves to activeQ
        (through PreEnqueue, but from backoffQ with SchedulerPopFromBackoffQ, whose
        PreEnqueue ran when it went there). Returns whether it moved."""
        q = self.pods.get(key)
        if q is None or q.where not in ("unschedulable", "backoff"):
            return False
        if q.where == "backoff" and self.pop_from_backoff:
            self.place(q, "active")
            return True
        return self._enqueue(q, "active")

    def remove(self, key: str) -> None:
        """A pending pod deleted: it leaves the queue."""
        q = self.pods.get(key)
        self.changes += 1
        if q is not None:
            self._unschedulable.pop(key, None)
            self._gated.pop(key, None)
            q.where = "gone"

    def gated(self, key: str) -> bool:
        q = self.pods.get(key)
        return q is not None and q.where == "gated"

    def ungate(self, pod: Pod) -> bool:
        """The pod lost a scheduling gate (``pod`` is the updated object); with none left
        it goes to activeQ (it never failed: no backoff), keeping the time it entered the
        queue. Returns whether it moved."""
        q = self.pods[pod.key]
        q.pod = pod
        self.changes += 1
        if pod.scheduling_gates or q.where != "gated":
            return False
        if not self._enqueue(q, "active"):
            return False
        self._nominate(q)
        return True

    def _nominate(self, q: QueuedPod) -> None:
        if self.nominate is not None and q.pod.nominated_node:
            self.nominate(q.pod)

    def _expiry(self, q: QueuedPod) -> int:
        """When the pod's backoff ends (getBackoffTime: its last failure plus the backoff
        of its failure count)."""
        count = q.errors_count or q.unschedulable_count
        return q.failed_at + backoff_seconds(count, self.initial_backoff, self.max_backoff)

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def place(self, q: QueuedPod, where: str) -> None:
        """Put the pod in activeQ, backoffQ, the unschedulable pods or the gated ones."""
        self._unschedulable.pop(q.key, None)
        self._gated.pop(q.key, None)
        q.where = where
        if where == "active":
            if q.initial is None:
                self._initial_seq += 1
                q.initial = self._initial_seq
            heapq.heappush(self._active, (-q.pod.priority, q.timestamp, q.key))
        elif where == "backoff":
            heapq.heappush(self._backoff, (self._expiry(q), -q.pod.priority, q.timestamp, q.key))
        elif where == "unschedulable":
            self._unschedulable[q.key] = q
        elif where == "gated":
            self._gated[q.key] = q

    def _live(self, heap: list, where: str) -> QueuedPod | None:
        """The head of a heap, its stale entries dropped."""
        while heap:
            key, ts = heap[0][-1], heap[0][-2]
            q = self.pods[key]
            if q.where == where and q.timestamp == ts:
                return q
            heapq.heappop(heap)
        return None

    # ---- popping ---------------------------------------------------------------------

    def pop(self) -> QueuedPod | None:
        """The next pod to schedule; None when activeQ and backoffQ are empty."""
        q = self._live(self._active, "active")
        while q is not None and self.pod_groups and q.pod.scheduling_group is not None and q.parked == self.changes:
            # a parked pod group's pod the backoffQ flush moved: its cycle would repeat (podgroupcycle)
            heapq.heappop(self._active)
            self._repeat([q], force=True)
            q = self._live(self._active, "active")
        if q is None and self.pod_groups:
            return self._pop_groups()
        if q is None:
            head = self._live(self._backoff, "backoff")
            if head is None:
                return None
            if self.pop_from_backoff:
                heapq.heappop(self._backoff)
                head.where = "gone"
                return head
            # the scheduler waits for the next backoffQ flush that moves something
            # (flushBackoffQCompleted, once a second): every pod whose backoff has ended
            # by then. A pod fails just after the flush that released it (or after the
            # first flush, at the start), so its backoff ends just after a flush and
            # the flush a second later moves it: the clock jumps to the whole second
            # after the head's expiry, and a pod whose backoff ends at that second stays
            self.now = max(self.now, self._expiry(head) + 1)
            while head is not None and self._expiry(head) < self.now:
                heapq.heappop(self._backoff)
                self.place(head, "active")
                head = self._live(self._backoff, "backoff")
            q = self._live(self._active, "active")
            assert q is not None
        heapq.heappop(self._active)
        q.where = "gone"
        return q

    def _pop_groups(self) -> QueuedPod | None:
        """pop with activeQ empty, in 1.36 with GenericWorkload: backoffQ's head by expiry
        (SchedulerPopFromBackoffQ pops podBackoffQ only; without the gate a pod waits for
        its backoff), leaving out the parked pod groups (podgroupcycle's rule: their retry
        would repeat their last cycle). When only pods of the error queue are left, the
        scheduler waits for the backoffQ flush that moves the first of them, as the module
        docstring says of the gate off. None: nothing to pop."""
        entries = [e for e in self._backoff if self.pods[e[-1]].where == "backoff" and self.pods[e[-1]].timestamp == e[-2]]
        live = [e for e in entries if self.pods[e[-1]].parked != self.changes]
        if not live:
            # upstream pops the parked groups once more (and again, for ever): their pods fail
            # again and go back with a new queue time, after every pod that failed before.
            # podBackoffQ's head first, again and again, until each group there has repeated
            # (``_repeat_backoff_heads``). A group whose pods all wait in the error queue is
            # popped only once the backoff flush moves the first of them: the clock goes there
            # next (the last such group's)
            if self.pop_from_backoff:
                self._repeat_backoff_heads()
            entries = [e for e in self._backoff
                       if self.pods[e[-1]].where == "backoff" and self.pods[e[-1]].timestamp == e[-2]]
            heads = [self.pods[e[-1]] for e in sorted(entries)]
            groups: dict[tuple[str, str | None], list[QueuedPod]] = {}
            for q in heads:
                groups.setdefault((q.pod.namespace, q.pod.scheduling_group), []).append(q)
            flushes = sorted((min(self._expiry(q) for q in members) + 1, i)
                             for i, members in enumerate(groups.values())
                             if all(q.error_backoff for q in members) and members[0].repeated != self.changes)
            for at, _ in flushes:
                if self._leftover_tick(at):
                    return self.pop()
                self.now = max(self.now, at)
            self._repeat(heads)
            return None
        if self.pop_from_backoff:
            entries = self._repeat_parked_heads(entries)
            live = [e for e in entries if self.pods[e[-1]].parked != self.changes]
        poppable = [e for e in live if self.pop_from_backoff and not self.pods[e[-1]].error_backoff]
        if poppable:
            q = self.pods[min(poppable)[-1]]
            q.where = "gone"
            return q
        if self.pop_from_backoff:
            # only the error queue's pods are live: while they wait, upstream pops podBackoffQ's
            # parked groups (their cycles repeat): counted once per change, as above
            self._repeat_backoff_heads()
        first = self.pods[min(live)[-1]]
        if self._leftover_tick(self._expiry(first) + 1):
            return self.pop()
        self.now = max(self.now, self._expiry(first) + 1)
        for e in sorted(live):
            q = self.pods[e[-1]]
            if self._expiry(q) < self.now:
                self.place(q, "active")
        head = self._live(self._active, "active")
        assert head is not None
        heapq.heappop(self._active)
        head.where = "gone"
        return head

    def _leftover_tick(self, target: int) -> bool:
        """The scheduler waits for a backoff flush at ``target`` (1.36, pod groups): the clock
        passes each 30 s tick before it, where flushUnschedulablePodsLeftover runs (the driver's
        tickTo does it second by second, as PriorityQueue.Run's goroutine does). At the first
        tick that moves a pod (``flush_leftover``; then that second's backoff flush) the wait
        ends there: True, the clock at that tick. Else False, the clock unchanged. Before,
        kspread jumped to ``target`` and flushed nothing (issue 32, seed 3612 seq 33: upstream
        scheduled the pods unschedulable since 402 at 720, before the wait that followed)."""
        start = self.now
        tick = (start // LEFTOVER_FLUSH_SECONDS + 1) * LEFTOVER_FLUSH_SECONDS
        while tick <= target:
            self.now = tick
            if self.flush_leftover():
                self.flush_backoff()
                return True
            tick += LEFTOVER_FLUSH_SECONDS
        self.now = start
        return False

    def _repeat_backoff_heads(self) -> None:
        """Every pod left in podBackoffQ is of a parked group (activeQ empty; the error queue
        is not popped): upstream pops podBackoffQ's head, a repeat of its group's cycle
        (``_repeat``: a new queue time, a longer backoff), and again, for ever. The oracle's
        driver goes idle once each of those groups has repeated at this change, so the head
        repeats until then: a group whose backoff stays the shortest repeats again before a
        group behind it repeats once. Before, kspread counted one repeat per group in the
        heads' order; upstream then popped a group that failed later first (issue 32,
        ``--gangs 1 --devices --group-claims 0.7 --seed 3605``, seq 26)."""
        for _ in range(256):
            heads = sorted(e for e in self._backoff
                           if self.pods[e[-1]].where == "backoff" and self.pods[e[-1]].timestamp == e[-2]
                           and not self.pods[e[-1]].error_backoff)
            if all(self.pods[e[-1]].repeated == self.changes for e in heads):
                return
            self._repeat([self.pods[heads[0][-1]]], force=True)

    def _repeat_parked_heads(self, entries: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """podBackoffQ's head is a parked group's pod, ahead of the pods that would be popped:
        upstream pops that group first, and its cycle repeats (podgroupcycle's rule: kspread
        counts it, ``_repeat``), its pods back with a new queue time and a longer backoff;
        again while the group stays at the head. Once its backoff is at the maximum it counts
        from the next second (``_repeat``), behind the pods there. Returns backoffQ's entries
        after the repeats."""
        for _ in range(64):
            heads = sorted(e for e in entries if not self.pods[e[-1]].error_backoff)
            if not heads or self.pods[heads[0][-1]].parked != self.changes:
                return entries
            head = self.pods[heads[0][-1]]
            if not any(self.pods[e[-1]].parked != self.changes for e in heads):
                return entries
            self._repeat([head], force=True)
            entries = [e for e in self._backoff
                       if self.pods[e[-1]].where == "backoff" and self.pods[e[-1]].timestamp == e[-2]]
        return entries

    def flush_backoff(self) -> list[str]:
        """flushBackoffQCompleted at the clock (1.36, pod groups; a ``wait``): the pods whose
        backoff ended move to activeQ, keeping their queue time. Returns them."""
        moved = []
        for e in sorted(self._backoff):
            q = self.pods[e[-1]]
            if q.where == "backoff" and q.timestamp == e[-2] and not self._backing_off(q):
                self.place(q, "active")
                moved.append(q.key)
        return moved

    def _repeat(self, heads: list[QueuedPod], force: bool = False) -> None:
        """The retry of parked pod groups that kspread does not run (podgroupcycle's rule) but
        whose traces it keeps, once per change (``force``: a parked pod popped from activeQ):
        each group, in the order of ``heads``, fails again as it did, its pods (in the cycle's
        order: priority, then InitialAttemptTimestamp) back in backoffQ with a new queue time
        and one more failure counted."""
        done: set[tuple[str, str | None]] = set()
        for head in heads:
            group = (head.pod.namespace, head.pod.scheduling_group)
            if group in done or (head.repeated == self.changes and not force):
                continue
            done.add(group)
            members = [q for q in self.pods.values() if (q.pod.namespace, q.pod.scheduling_group) == group
                       and q.where in ("active", "backoff") and q.parked == self.changes]
            members.sort(key=lambda q: (-q.pod.priority, q.initial if q.initial is not None else 0))
            for q in members:
                if q.error_backoff:
                    q.errors_count += 1
                else:
                    q.unschedulable_count += 1
                q.timestamp = self._next()
                q.failed_at = self.now
                q.failed_late = self.stepped == self.now
                if not q.error_backoff and backoff_seconds(q.unschedulable_count, self.initial_backoff,
                                                           self.max_backoff) >= self.max_backoff > 0:
                    # its backoff no longer grows: upstream pops it again and again while it is
                    # podBackoffQ's head, until the clock passes into the next second (one
                    # ordering window later; the oracle's OracleDemoteSaturated)
                    q.failed_at, q.failed_late = self.now + 1, False
                q.repeated = self.changes
                self.place(q, "backoff")

    def pop_specific(self, key: str) -> QueuedPod | None:
        """PopSpecificPod: the pod activated (from the unschedulable pods or backoffQ,
        through PreEnqueue) and taken out of activeQ; None when it is not there (gated,
        held by PreEnqueue, in flight, gone)."""
        q = self.pods.get(key)
        if q is None:
            return None
        if q.where in ("unschedulable", "backoff"):
            self.activate(key)
        if q.where != "active":
            return None
        q.where = "gone"
        return q

    def group_failed(self, q: QueuedPod, pod: Pod, rejectors: frozenset[str], error: bool) -> None:
        """AddUnschedulableIfNotPresent for a pod of a pod group (1.36): a failure that names
        no plugin counts as an error (ConsecutiveErrorsCount), and whatever the events,
        determineSchedulingHintForInFlightPod queues the pod after its backoff (backoffQ's
        error queue when no plugin rejected it), through PreEnqueue."""
        q.pod = pod
        q.rejectors = rejectors
        if error or not rejectors:
            q.errors_count += 1
        else:
            q.unschedulable_count += 1
            q.errors_count = 0
        q.error_backoff = error or not rejectors
        q.timestamp = self._next()
        q.failed_at = self.now
        q.failed_late = self.stepped == self.now
        self._requeue(q)

    # ---- a cycle's outcome ----------------------------------------------------------------

    def failed(self, q: QueuedPod, pod: Pod, rejectors: frozenset[str],
               in_flight: list[PodEvent] | list[PodEvent | NodeEvent | str]) -> None:
        """AddUnschedulableIfNotPresent for a pod whose cycle failed; ``in_flight``: the
        events its own cycle caused (preemption's deletions and cleared nominations), or
        for a pod rejected while waiting at Permit, the events since it was popped
        (``end_waiting``: pod and node events, and the UnschedulableTimeout wildcard,
        which every pod is worth requeuing for)."""
        q.pod = pod
        q.rejectors = rejectors
        q.unschedulable_count += 1
        q.errors_count = 0
        q.timestamp = self._next()
        q.failed_at = self.now
        q.failed_late = self.stepped == self.now
        if not rejectors:
            self.place(q, "unschedulable")  # see the module docstring
            return
        if self.hints:
            worth = any(ev == UNSCHEDULABLE_TIMEOUT if isinstance(ev, str) else
                        self._worth_node(q, ev) if isinstance(ev, NodeEvent) else self._worth(q, ev)
                        for ev in in_flight)
        elif self.filters_events:
            # a move request came during the cycle (moveRequestCycle >= podSchedulingCycle)
            # (a node event or the leftover flush, seen by a pod waiting at Permit, is one too)
            worth = any(not isinstance(ev, PodEvent) or self._of_interest(ev) for ev in in_flight)
        else:
            worth = bool(in_flight)
        self.place(q, "backoff" if worth else "unschedulable")

    def errored(self, q: QueuedPod, pod: Pod, at: int) -> None:
        """A binding cycle that ended in an Error (no plugin rejected the pod): with no
        rejector, determineSchedulingHintForInFlightPod queues it after its backoff."""
        q.pod = pod
        q.rejectors = frozenset()
        q.errors_count += 1
        q.timestamp = self._next()
        q.failed_at = at
        q.failed_late = at == self.now == self.stepped
        self.place(q, "backoff")

    def update(self, pod: Pod) -> None:
        """The pod changed (a nomination): the queue holds the new object."""
        q = self.pods.get(pod.key)
        self.changes += 1
        if q is not None:
            q.pod = pod

    def deliver(self, ev: PodEvent, skip: str | None = None) -> list[str]:
        """Move the unschedulable pods the event may make schedulable (not ``skip``: the
        pod whose cycle caused it, which saw it in flight); returns the pods moved."""
        moved = []
        self._record(ev)
        self.changes += 1
        if ev.action == "Delete" and ev.max_priority is None:
            for q in self.pods.values():
                if q.preempting == ev.pod.key:
                    q.preempting = ""  # the last victim is gone: isPodRunningPreemption is false
        for q in list(self._unschedulable.values()):
            if q.key == skip:
                continue
            if ev.max_priority is not None and q.pod.priority > ev.max_priority:
                continue
            if self._moves(q, ev):
                self._requeue(q)
                moved.append(q.key)
                if ev.action == "UnscheduledAdd" and q.where == "active":
                    self._nominate(q)
        return moved

    def hintless_event(self, action: str) -> list[str]:
        """A cluster event no pod caused, that the plugins registering it registered
        without a queueing hint (ResourceSlice/Update, DynamicResources): the unschedulable
        pods a plugin that rejected them registered it for move; returns them."""
        moved = []
        self.changes += 1
        for q in list(self._unschedulable.values()):
            if q.gating:
                continue
            if any(action in p.pod_events for p in (self.framework.plugin(n) for n in q.rejectors) if p is not None):
                self._requeue(q)
                moved.append(q.key)
        return moved

    def _requeue(self, q: QueuedPod) -> None:
        """queueAfterBackoff: backoffQ while the pod is backing off, activeQ after."""
        self._enqueue(q, "backoff" if self._backing_off(q) else "active")

    def _backing_off(self, q: QueuedPod) -> bool:
        """isPodBackingoff at the clock (an event's time). With SchedulerPopFromBackoffQ,
        backoffQ aligns both times to its one-second ordering window and a pod whose
        backoff ends in the event's second is still backing off (equal windows count).
        Without it, the exact times: a pod that failed in the run after a backoff flush
        ends its backoff just after the flush of its last second, and an event in that
        second finds it ended (the runs' readings are nanoseconds apart: kspread's rule);
        one that failed after a step (half a second into its second) ends half a second
        into its last second, after the run that follows that second's flush and before
        the steps of that second (a step comes half a second and a millisecond per earlier
        step in)."""
        expiry = self._expiry(q)
        if expiry == q.failed_at:
            return False  # no backoff (no failure counted, or a maximum of 0): getBackoffTime's zero time
        if self.pop_from_backoff:
            return expiry >= self.now
        if expiry != self.now:
            return expiry > self.now
        return q.failed_late and self.stepped != self.now

    def node_event(self, ev: NodeEvent) -> list[str]:
        """MoveAllToActiveOrBackoffQueue for a Node event; returns the pods moved. From
        1.21 a pod moves when a plugin that rejected it registered the event (and, with
        queueing hints, its hint answers Queue); before, every pod moves. Gate off, the
        preCheck comes first."""
        self.changes += 1
        if self.filters_events and not any(self._registers(p, ev.action) for p in self.framework.plugins()):
            return []
        self._record(ev)
        moved = []
        for q in list(self._unschedulable.values()):
            if q.gating:
                continue  # no Node event is one GangScheduling registered
            if ev.precheck is not None and not ev.precheck(q.pod):
                continue
            if self.filters_events and not self._worth_node(q, ev):
                continue
            self._requeue(q)
            moved.append(q.key)
        return moved

    def _registers(self, p: Any, action: str) -> bool | None:
        """Whether plugin ``p`` registered the Node event: True with its own hint, None
        with the default hint (Queue), False not at all. buildQueueingHintMap adds
        UpdateNodeTaint, with the default hint, for every plugin that registers Node/Add
        but not UpdateNodeTaint (issue 109437: the preCheck may hide a Node/Add)."""
        events = p.node_events(self.hints)
        if action in events:
            return True
        if action == "UpdateNodeTaint" and "Add" in events:
            return None
        return False

    def _worth_node(self, q: QueuedPod, ev: NodeEvent) -> bool:
        if not q.rejectors:
            return False  # see the module docstring: a failure that names no plugin
        for name in sorted(q.rejectors):
            p = self.framework.plugin(name)
            if p is None:
                continue
            reg = self._registers(p, ev.action)
            if reg is None:
                return True
            if not reg:
                continue
            if not self.hints or p.node_event_hint(q.pod, ev.old, ev.new):
                return True
        return False

    def flush_leftover(self) -> list[str]:
        """flushUnschedulablePodsLeftover at the last 30 s tick of the clock: the pods that
        failed longer than podMaxInUnschedulablePodsDuration before it move back (the
        UnschedulableTimeout event, a wildcard every pod is worth requeuing for)."""
        tick = self.now // LEFTOVER_FLUSH_SECONDS * LEFTOVER_FLUSH_SECONDS
        limit = max_in_unschedulable_seconds(self.version)
        moved = []
        # upstream's podsToMove holds the pods a PreEnqueue plugin holds too (scheduling
        # gates, GangScheduling), though they stay; any such pod makes the event, which
        # the pods in flight record
        due = any(tick - q.failed_at > limit for q in self._gated.values())
        for q in sorted(self._unschedulable.values(), key=lambda q: q.timestamp):
            if tick - q.failed_at <= limit:
                continue
            due = True
            if q.gating:
                continue  # the wildcard event is none the gating plugin registered
            self._requeue(q)
            moved.append(q.key)
        if due:
            self._record(UNSCHEDULABLE_TIMEOUT)
        return moved

    def _moves(self, q: QueuedPod, ev: PodEvent) -> bool:
        if not self.filters_events:
            if ev.action == "Add":
                return self._affinity_term_matches(q.pod, ev.pod)
            return True
        if not self.hints and ev.action == "Add":
            # AssignedPodAdded: getUnschedulablePodsWithCrossTopologyTerm first (before 1.31
            # getUnschedulablePodsWithMatchingAffinityTerm: affinity terms only)
            spread = self.version.queue_requeues_spread_pods_on_add and PTS in q.rejectors
            cross = (spread and q.pod.namespace == ev.pod.namespace) or self._affinity_term_matches(q.pod, ev.pod)
            if not cross:
                return False
        if not self._of_interest(ev):
            return False
        return self._worth(q, ev)

    def _affinity_term_matches(self, pod: Pod, other: Pod) -> bool:
        """A required pod-affinity term of ``pod`` matches ``other`` (namespace labels of
        the case, as getNamespaceLabelsSnapshot reads them)."""
        terms = pod_terms(pod, self.version).required_affinity
        if not terms:
            return False
        ns_labels = self.framework.handle.cluster.namespace_labels(other.namespace)
        return any(t.matches(other.namespace, other.labels, ns_labels) for t in terms)

    def _of_interest(self, ev: PodEvent) -> bool:
        """isEventOfInterest: some plugin of the profile registered the event
        (GangScheduling: Pod/Add, assigned or unscheduled)."""
        if self.gang is not None and ev.action in ("Add", "UnscheduledAdd"):
            return True
        return any(ev.action in p.pod_events for p in self.framework.plugins())

    def _worth(self, q: QueuedPod, ev: PodEvent) -> bool:
        """isPodWorthRequeuing: a plugin that rejected the pod registered the event and
        (with queueing hints) its hint answers Queue."""
        if q.gating == PREEMPTION and ev.action != "Delete":
            # DefaultPreemption registers Pod/Delete (its hint: Skip; a cleared nomination is
            # one too); an event it registered goes to every plugin that rejected the pod
            return False
        for name in sorted(q.rejectors) if not q.gating or q.gating == PREEMPTION else [q.gating]:
            if name == PREEMPTION:
                continue  # isPodSchedulableAfterPodDeletion: Skip
            if name == GANG:
                # isSchedulableAfterPodAdded: a pod of the same group added (bound or not)
                if self.gang is not None and ev.action in ("Add", "UnscheduledAdd") \
                        and self.gang.pod_added_hint(q.pod, ev.pod):
                    return True
                continue
            p = self.framework.plugin(name)
            if p is None or ev.action not in p.pod_events:
                continue
            if not self.hints or p.pod_event_hint(q.pod, ev):
                return True
        return False
