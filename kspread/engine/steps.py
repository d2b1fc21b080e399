"""A cluster's life in a ``schedule`` sequence: the steps between its pods (drain, cordon,
uncordon, addNode, deleteNode, zoneDown, taint, untaint, label, deletePod, ungate, wait,
addDeviceTaintRule, deleteDeviceTaintRule), the controllers that replace evicted pods,
the taint manager's NoExecute evictions and the device taint eviction controller's
(kspread/engine/devicetaints.py), the eviction API's PodDisruptionBudget check, and
``replicas: max``.

``World`` runs a case's timeline (its pods, steps and ``replicas: max`` entries in list
order) over a ``SequenceRun``: pods listed together are created together; before each
step the scheduler runs until it is idle (``settle``), then the step changes the
cluster and the pods listed after it are created with it, before the scheduler runs
again. The scheduler's snapshot is rebuilt over the new cluster
(``Scheduler.reset_cluster``: upstream takes a new snapshot every cycle) and the queue
receives the step's events as upstream's event handlers send them:

* a node added: Node/Add; a node updated: one event per kind of change, in upstream's
  order (NodeSchedulingPropertiesChange: spec.unschedulable cleared is an UpdateNodeTaint,
  then UpdateNodeAllocatable, UpdateNodeLabel, UpdateNodeTaint); a node deleted:
  Node/Delete (from 1.32). With SchedulerQueueingHints off, the pods that fail preCheckForNode
  (AdmissionCheck on the node -- resources with its pods, required node affinity, host
  ports -- and its NoSchedule/NoExecute taints) are not offered Add and Update events;
* a bound pod deleted: AssignedPodDelete; a pending pod deleted leaves the queue (one
  with a nominated node is, from 1.33, an AssignedPodDelete offered to the pods of its
  priority or less); a pod created: activeQ (or held by its scheduling gates);
* a gate removed: the pod, with no gate left, goes to activeQ.

The rules where a real cluster leaves a choice are the case format's (CASE-FORMAT.md,
"Sequences: pods and events") and these:

* evictions take no time: an evicted pod is gone at once, and a controller's replacement
  is created at once (after the step's node event); deleting a node deletes its pods at
  once (upstream's pod garbage collector does it later);
* the taint manager acts when the scheduler is idle: at a step, at the end of a ``wait``,
  and after a run that bound a pod on a node with a NoExecute taint (its
  ``tolerationSeconds`` count from there); a timer keeps the time it was set
  (processPodOnNode keeps an earlier one); ``untaint`` of the last NoExecute taint
  cancels the node's timers;
* the disruption controller recounts every PodDisruptionBudget after each step (during
  a drain the eviction API decrements the budget it allowed); a budget given as a status
  alone keeps its desired healthy count (the healthy pods at the start less the status);
* ``replicas: max`` creates each replica with preemptionPolicy Never, so that the
  question never evicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kspread.engine.corev1helpers import find_untolerated_taint, toleration_tolerates
from kspread.engine.devices import PodClaim
from kspread.engine.ephemeral import delete_owned_claims
from kspread.engine.framework.interface import PodEvent
from kspread.engine.labels import as_selector
from kspread.engine.model import (
    BETA_ZONE_LABEL,
    PREEMPT_NEVER,
    ZONE_LABEL,
    Cluster,
    Node,
    Pod,
    PodDisruptionBudget,
    Taint,
    replace_pod,
)
from kspread.engine.plugins.dynamicresources import CLAIM_UPDATE, SLICE_UPDATE
from kspread.engine.plugins.gangscheduling import REMOVED
from kspread.engine.plugins.helper import get_zone_key
from kspread.engine.plugins.nodematch import do_not_schedule_taints, required_node_affinity_matches
from kspread.engine.plugins.nodeports import fits_ports
from kspread.engine.queue import LEFTOVER_FLUSH_SECONDS, NodeEvent
from kspread.engine.resources import node_pod_requests, pod_requests
from kspread.engine.snapshot import pod_host_ports
from kspread.engine.storage import PersistentVolumeClaim
from kspread.errors import CaseError

if TYPE_CHECKING:  # pragma: no cover
    from kspread.engine.scheduler import SequenceRun
    from kspread.engine.snapshot import NodeInfo

STEP_KINDS = ("drain", "cordon", "uncordon", "addNode", "deleteNode", "zoneDown", "taint", "untaint", "label",
              "deletePod", "ungate", "wait", "addDeviceTaintRule", "deleteDeviceTaintRule",
              "setDeviceConditions")
NO_EXECUTE = "NoExecute"
# controllers that replace an evicted pod (the others, a DaemonSet's, are not replaced)
REPLACING_KINDS = ("ReplicaSet", "ReplicationController", "StatefulSet")
# bounds: a sequence that would go on for ever is an error naming the step
MAX_EVICTIONS = 10_000
MAX_REPLICAS = 10_000
# deleteNodeFromCache sends the queue a Node/Delete event from 1.32 (PR #127464: "we
# didn't trigger Node/Delete event at all"); before, a node's deletion moves no pod
NODE_DELETE_EVENT_FROM = 32

# the most gang Permit timeouts one `wait` may go through (each 5 minutes of the clock)
MAX_PERMIT_ROUNDS = 100


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a sequence: ``kind`` (STEP_KINDS) and its parsed argument: a node or pod
    name, a Node (addNode), a Taint with its node (taint), a mapping (untaint, label,
    ungate) or seconds (wait). ``path``: where the case writes it."""

    kind: str
    arg: Any
    path: tuple
    text: str  # how reports and errors name it, e.g. "drain n1"


@dataclass(frozen=True, slots=True)
class MaxEntry:
    """A ``schedule`` entry with ``replicas: max``: ``template`` is its pod (named after
    the entry); replicas ``<name>-0``, ``<name>-1``, ... are created one at a time."""

    name: str
    template: Pod
    path: tuple


@dataclass(slots=True)
class Record:
    """What one step (or one batch of created pods) did, for reports: the clock when it
    happened, the pods it evicted, kept (a PodDisruptionBudget refused their eviction),
    created (pods listed after it, controllers' replacements), the pending pods its
    events moved, and the pods bound or nominated while the scheduler ran after it."""

    what: str
    clock: int
    first_cycle: int = 0  # the number of scheduling cycles run before it
    evicted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    placed: dict[str, str | None] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.what, "clock": self.clock}
        for k in ("evicted", "kept", "created", "moved"):
            if getattr(self, k):
                out[k] = list(getattr(self, k))
        if self.placed:
            out["placed"] = dict(self.placed)
        return out


def disruptions_allowed(budget: tuple[str, Any], expected: int, healthy: int) -> int:
    """status.disruptionsAllowed as the disruption controller computes it: healthy pods
    less the desired healthy count, at least 0. ``budget``: ("minAvailable", n or "p%"),
    ("maxUnavailable", n or "p%") -- percentages of the expected pods, rounded up -- or
    ("desired", n)."""
    kind, v = budget

    def amount(x: Any) -> int:
        if isinstance(x, str):
            return -(-int(x[:-1]) * expected // 100)
        return int(x)

    if kind == "minAvailable":
        desired = amount(v)
    elif kind == "maxUnavailable":
        desired = expected - amount(v)
    else:
        desired = int(v)
    return max(0, healthy - desired)


def pdb_matches(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """The budget covers the pod: same namespace, and a selector that is not empty and
    matches its labels (an empty selector covers nothing, as the eviction API reads it)."""
    if pdb.namespace != pod.namespace:
        return False
    sel = as_selector(pdb.selector)
    return not sel.empty() and sel.matches(pod.labels)


def _error(step: Step, message: str, *field_path: Any) -> CaseError:
    return CaseError(f"step {step.path[-1] + 1} (`{step.text}`): {message}", (*step.path, *field_path))


class World:
    """The cluster as a sequence's steps change it, around a ``SequenceRun``."""

    def __init__(self, run: SequenceRun) -> None:
        self.run = run
        sched = run.sched
        self.version = sched.version
        cl = run.case.cluster
        self.nodes: dict[str, Node] = {n.name: n for n in cl.nodes}
        # the node tree: zone key -> node names (zones in the order their first node came)
        self.tree: dict[str, list[str]] = {}
        for n in cl.nodes:
            self.tree.setdefault(get_zone_key(n, self.version), []).append(n.name)
        self.cluster = Cluster(nodes=list(cl.nodes), pods=list(cl.pods), services=cl.services,
                               replication_controllers=cl.replication_controllers, replica_sets=cl.replica_sets,
                               stateful_sets=cl.stateful_sets, pdbs=list(cl.pdbs),
                               priority_classes=cl.priority_classes, namespaces=cl.namespaces,
                               namespace_name_label=cl.namespace_name_label,
                               devices=cl.devices, storage=cl.storage, workloads=cl.workloads,
                               pod_groups=cl.pod_groups)
        # the case's own pods that still exist (case order), as they are now
        self.existing: dict[str, Pod] = {p.key: p for p in cl.pods}
        self.existing_keys = list(self.existing)
        self.created: list[Pod] = []  # pods the sequence created (incoming, replacements, replicas)
        self.evicted: list[str] = []
        self.records: list[Record] = []
        self.capacity: dict[str, int] = {}
        self.timers: dict[str, tuple[int, int]] = {}  # pod key -> (set at, due at): the taint manager's
        self._replacements: dict[tuple[str, str, str], int] = {}
        self._seen_bound: dict[str, Pod] = {}
        self._budgets = self._initial_budgets(cl.pdbs)
        self._current: Step | MaxEntry | None = None
        self._synced = 0  # run.preempted seen by _sync_preempted
        # the device taint eviction controller (DRADeviceTaints, from 1.33): runs with the
        # taint manager; added_at: node -> the clock when an addNode step added it (its
        # slices' taints count from there)
        self.device_evictions = sched.claims is not None and self.version.minor >= 33 and \
            self.version.gate("DRADeviceTaints") and bool(sched.claims.objects)
        self.added_at: dict[str, int] = {}
        self._device_started = False
        if self.device_evictions:
            self._check_time_added()

    # ---- the timeline -------------------------------------------------------------------

    def run_timeline(self, timeline: list[Pod | Step | MaxEntry]) -> None:
        """The pods before a step are created together; the scheduler runs until it is idle;
        the step changes the cluster, and the pods after it are created with it, before the
        scheduler runs again (the queue sees the step's events and the new pods at once)."""
        batch: list[Pod] = []
        step_rec: Record | None = None  # the last step's record, its run still to come
        for item in timeline:
            if isinstance(item, Pod):
                batch.append(item)
                continue
            self._create_batch(batch, step_rec)
            batch, step_rec = [], None
            self._current = item
            if isinstance(item, MaxEntry):
                self._max_entry(item)
            else:
                step_rec = self._step(item)
        self._create_batch(batch, step_rec)

    def _create_batch(self, pods: list[Pod], rec: Record | None) -> None:
        """Create the pods (with the step of ``rec``, when given), then run until idle."""
        if not pods and rec is None:
            return
        if rec is None:
            rec = self._record("create " + ", ".join(p.key for p in pods))
        for p in pods:
            self._create(p)
            rec.created.append(p.key)
        self.settle(rec)

    def _record(self, what: str) -> Record:
        rec = Record(what, self.run.queue.now, len(self.run.results))
        self.records.append(rec)
        return rec

    def _create(self, pod: Pod) -> None:
        self.created.append(pod)
        self.run.create(pod)

    def settle(self, rec: Record) -> None:
        """Run the scheduler until it is idle, then let the taint manager act on what it
        bound (and on timers that came due), and again, until nothing changes. The first
        time, the device taint eviction controller first looks at the case's pods."""
        before = {p.key: self.run.sched.placement(p.key) for p in self.created}
        if not self._device_started:
            self._device_started = True
            if self._due_timers(rec):
                self._recount_budgets()
                self._reset()
        while True:
            self.run.until_idle()
            if not self._taint_manager(rec):
                break
        for p in self.created:
            now = self.run.sched.placement(p.key)
            if before.get(p.key, "?") != now:
                rec.placed[p.key] = now

    # ---- steps ---------------------------------------------------------------------------

    def _step(self, step: Step) -> Record:
        """Apply the step (the scheduler is idle); the run after it is the caller's, once
        the pods listed after it are created."""
        rec = self._record(step.text)
        self._recount_budgets()  # the disruption controller has seen the last run's bindings
        queue = self.run.queue
        queue.stepped = queue.now  # half a second into the clock's second (the queue's backoff)
        getattr(self, "_do_" + step.kind)(step, rec)
        queue.stepped = queue.now  # a wait's: its last second
        self._recount_budgets()
        self._reset()
        return rec

    def _node(self, step: Step, name: str, *field_path: Any) -> Node:
        node = self.nodes.get(name)
        if node is None:
            raise _error(step, f"node {name!r} does not exist at that point", *field_path)
        return node

    def _do_cordon(self, step: Step, rec: Record) -> None:
        node = self._node(step, step.arg, "cordon")
        self._update_node(node, replace(node, unschedulable=True), rec)

    def _do_uncordon(self, step: Step, rec: Record) -> None:
        node = self._node(step, step.arg, "uncordon")
        self._update_node(node, replace(node, unschedulable=False), rec)

    def _do_drain(self, step: Step, rec: Record) -> None:
        node = self._node(step, step.arg, "drain")
        self._update_node(node, replace(node, unschedulable=True), rec)
        for pod in self._pods_on(node.name):
            if pod.controller is not None and pod.controller.kind == "DaemonSet":
                continue  # kubectl drain --ignore-daemonsets
            if pod.terminating or self._eviction_allowed(pod):
                self._evict(pod, rec)
            else:
                rec.kept.append(pod.key)

    def _do_addNode(self, step: Step, rec: Record) -> None:
        node: Node = step.arg
        if node.name in self.nodes:
            raise _error(step, f"node {node.name!r} exists already", "addNode", "name")
        node = replace(node, index=max((n.index for n in self.nodes.values()), default=-1) + 1)
        self.nodes[node.name] = node
        self.added_at[node.name] = self.run.queue.now
        self.tree.setdefault(get_zone_key(node, self.version), []).append(node.name)
        self._reset()
        self._node_event("Add", None, node, rec)

    def _do_deleteNode(self, step: Step, rec: Record) -> None:
        self._delete_node(self._node(step, step.arg, "deleteNode"), rec)

    def _do_zoneDown(self, step: Step, rec: Record) -> None:
        labels = (ZONE_LABEL, BETA_ZONE_LABEL)
        members = [n for n in self.nodes.values() if any(n.labels.get(k) == step.arg for k in labels)]
        if not members:
            raise _error(step, f"no node is in zone {step.arg!r} at that point", "zoneDown")
        for n in sorted(members, key=lambda n: n.index):
            self._delete_node(n, rec)

    def _delete_node(self, node: Node, rec: Record) -> None:
        waiting = sorted(k for k, (_, n) in self.run.sched.prebind_waiting.items() if n == node.name)
        if waiting:
            raise CaseError(f"node {node.name} holds {', '.join(waiting)}, waiting in DynamicResources' PreBind for "
                            "binding conditions: deleting the node of a waiting pod is not modelled",
                            self._current.path if self._current is not None else ("schedule",))
        # a pod waiting at GangScheduling's Permit on the node waits on: it is not bound, so
        # no one deletes it; the cache keeps the node's NodeInfo while it holds the pod, out
        # of the node tree and the snapshot (``Scheduler.reset_cluster``)
        pods = self._pods_on(node.name)
        del self.nodes[node.name]
        zone = get_zone_key(node, self.version)
        self.tree[zone].remove(node.name)
        if not self.tree[zone]:
            del self.tree[zone]
        # the pods go with it (upstream's pod garbage collector deletes them later: the
        # Node/Delete event comes first, which these events follow either way)
        for pod in pods:
            self._evict(pod, rec)
        self._reset()
        if self.version.minor >= NODE_DELETE_EVENT_FROM:
            rec.moved.extend(self.run.queue.node_event(NodeEvent("Delete", node, None)))

    def _do_taint(self, step: Step, rec: Record) -> None:
        name, taint = step.arg
        node = self._node(step, name, "taint", "node")
        if any(t.key == taint.key and t.effect == taint.effect for t in node.taints):
            raise _error(step, f"node {name!r} has a taint {taint.key}:{taint.effect} already", "taint")
        new = replace(node, taints=(*node.taints, taint))
        self._update_node(node, new, rec)
        self._no_execute(new, rec)

    def _do_untaint(self, step: Step, rec: Record) -> None:
        arg = step.arg
        node = self._node(step, arg["node"], "untaint", "node")
        keep = tuple(t for t in node.taints if not (t.key == arg["key"] and arg.get("effect") in (None, t.effect)))
        if len(keep) == len(node.taints):
            what = arg["key"] + (f":{arg['effect']}" if arg.get("effect") else "")
            raise _error(step, f"node {node.name!r} has no taint {what} at that point", "untaint", "key")
        new = replace(node, taints=keep)
        self._update_node(node, new, rec)
        self._no_execute(new, rec)

    def _do_label(self, step: Step, rec: Record) -> None:
        arg = step.arg
        node = self._node(step, arg["node"], "label", "node")
        labels = dict(node.labels)
        for k, v in arg["labels"].items():
            if v is None:
                labels.pop(k, None)
            else:
                labels[k] = v
        new = replace(node, labels=labels)
        old_zone, new_zone = get_zone_key(node, self.version), get_zone_key(new, self.version)
        if old_zone != new_zone:  # the node tree moves it (removeNode, addNode)
            self.tree[old_zone].remove(node.name)
            if not self.tree[old_zone]:
                del self.tree[old_zone]
            self.tree.setdefault(new_zone, []).append(node.name)
        self._update_node(node, new, rec)

    def _do_deletePod(self, step: Step, rec: Record) -> None:
        key = step.arg
        pod = self._find_pod(key)
        if pod is None:
            raise _error(step, f"pod {key!r} does not exist at that point", "deletePod")
        if pod.node_name is not None:
            self._evict(pod, rec)
            return
        sched, queue = self.run.sched, self.run.queue
        if key in sched.prebind_waiting:
            raise _error(step, f"pod {key!r} waits in DynamicResources' PreBind for binding conditions: deleting a "
                         "pod in its binding cycle is not modelled", "deletePod")
        if key in sched.waiting:
            self._delete_waiting(pod, rec)
            return
        if sched.gang is not None:
            sched.gang.delete_pod(pod)
        if sched.groups is not None:
            sched.groups.delete_pod(pod)
        current = sched.current(pod)
        queue.remove(key)
        sched.pending.pop(key, None)
        sched.nominator.remove(current)
        self.existing.pop(key, None)
        self.evicted.append(key)
        rec.evicted.append(key)
        if current.nominated_node and self.version.queue_sees_nomination_changes:
            rec.moved.extend(queue.deliver(PodEvent("Delete", current, current.priority)))
        self._delete_ephemeral_claims(current, rec)  # (a pending pod reserves no ResourceClaim)
        self._replace(current, rec)

    def _delete_waiting(self, pod: Pod, rec: Record) -> None:
        """A pod waiting at GangScheduling's Permit deleted. The scheduler's delete handler
        takes it out of its gang first (the workload manager's DeletePod: no longer counted
        toward minCount, nor in the queue), then finds it assumed and rejects it
        (RejectWaitingPod: "removed", ``REMOVED``), which ends its binding cycle: Unreserve, the cache
        forgets it and its node's room is freed (AssignedPodDelete; the handler sends one
        too, at once). It is not retried: it is gone. GangScheduling's Unreserve runs after
        the DeletePod and marks the pod unscheduled in its group again (``unreserve``), a
        pod the group no longer has: 1.35.4's next Permit wait in that group crashes the
        scheduler (``GangScheduling.dangling``)."""
        sched, run, queue = self.run.sched, self.run, self.run.queue
        key = pod.key
        if sched.gang is not None:
            sched.gang.delete_pod(pod)
        if sched.groups is not None:
            sched.groups.delete_pod(pod)
        assumed, _ = sched.forget(key)  # the nomination it had goes with the pod
        current = sched.current(pod)
        run.waiting_q.pop(key, None)
        run.wait_seconds.pop(key, None)
        run.rejected[key] = REMOVED
        queue.end_waiting(key)
        queue.remove(key)
        sched.pending.pop(key, None)
        sched.nominator.remove(current)
        sched.ties.pop(key, None)
        self.existing.pop(key, None)
        self.evicted.append(key)
        rec.evicted.append(key)
        rec.moved.extend(queue.deliver(PodEvent("Delete", assumed)))
        self._delete_ephemeral_claims(current, rec)
        self._replace(current, rec)

    def _do_ungate(self, step: Step, rec: Record) -> None:
        key, gate = step.arg["pod"], step.arg["gate"]
        sched = self.run.sched
        pod = sched.pending.get(key)
        if pod is None or key not in self.run.queue.pods:
            raise _error(step, f"pod {key!r} is not a pending pod of the sequence at that point", "ungate", "pod")
        if gate not in pod.scheduling_gates:
            raise _error(step, f"pod {key!r} has no scheduling gate {gate!r} at that point", "ungate", "gate")
        new = replace_pod(pod, scheduling_gates=tuple(g for g in pod.scheduling_gates if g != gate))
        sched.pending[key] = new
        if self.run.queue.ungate(new):
            rec.moved.append(key)

    def _do_wait(self, step: Step, rec: Record) -> None:
        queue = self.run.queue
        start = queue.now
        target = start + step.arg
        # a gang waiting at Permit times out at its deadline, and the scheduler goes on from
        # there inside the wait (its pods may wait again, until a deadline past the wait)
        # likewise a pod waiting in DynamicResources' PreBind binds at the poll that sees
        # its binding conditions, or fails (a failure condition, its timeout)
        rounds = 0
        before = {p.key: self.run.sched.placement(p.key) for p in self.created}
        while True:
            deadline = self.run.next_permit_deadline()
            prebind = self.run.next_prebind_event()
            at = min(x for x in (deadline, prebind[0] if prebind else None, target + 1) if x is not None)
            if at > target:
                break
            rounds += 1
            if rounds > MAX_PERMIT_ROUNDS:
                raise _error(step, f"a binding cycle waiting at Permit or PreBind ended {MAX_PERMIT_ROUNDS} times in "
                             "this wait and would go on: wait less", "wait")
            queue.now = max(queue.now, at)
            if deadline is not None and deadline <= queue.now:
                rec.moved.extend(self.run.permit_timeouts())
            rec.moved.extend(self.run.prebind_due())
            self.run.until_idle()
        for p in self.created:
            if before.get(p.key, "?") != (now := self.run.sched.placement(p.key)):
                rec.placed[p.key] = now
        queue.now = max(queue.now, target)  # a backoff inside the wait may have moved it past
        rec.clock = queue.now
        self._due_timers(rec)
        if target // LEFTOVER_FLUSH_SECONDS * LEFTOVER_FLUSH_SECONDS > start:
            # a 30 s tick inside the wait (one before it was flushed already; a second flush at
            # it would be a wildcard event the pods in flight at Permit see, which upstream's
            # flush, once per tick, does not make)
            rec.moved.extend(queue.flush_leftover())
        if queue.pod_groups:
            # the backoffQ flush at the wait's end moves the pods of pod groups whose backoff ended
            # (kspread.engine.podgroupcycle: a group that could not be placed waits in backoffQ)
            rec.moved.extend(queue.flush_backoff())

    def _do_setDeviceConditions(self, step: Step, rec: Record) -> None:
        """A driver sets conditions of an allocated device in its claim's status
        (status.devices[].conditions; a condition of the same type is replaced)."""
        claims = self._tracker(step)
        arg = step.arg
        c = claims.get(arg["namespace"], arg["claim"])
        if c is None:
            raise _error(step, f"ResourceClaim {arg['claim']!r} does not exist", step.kind, "claim")
        if c.allocation is None or not any(str(d) == arg["device"] for d in c.allocation.devices):
            raise _error(step, f"ResourceClaim {arg['claim']!r} has no allocated device {arg['device']!r} at that "
                         "point (status.devices names allocated devices only)", step.kind, "device")
        did = next(d.id for d in c.allocation.devices if str(d) == arg["device"])
        status = dict(c.device_conditions)
        conds = {x.type: x for x in status.get(did, ())}
        for x in arg["conditions"]:
            conds[x.type] = x
        status[did] = tuple(conds.values())
        new = replace(c, device_conditions=tuple(status.items()))
        claims.claims[(c.namespace, c.name)] = new
        self.run.claims_changed(new)
        rec.moved.extend(self.run.queue.deliver(PodEvent(CLAIM_UPDATE, None, claim=(c, new))))  # type: ignore[arg-type]

    # ---- replicas: max --------------------------------------------------------------------

    def _max_entry(self, entry: MaxEntry) -> None:
        rec = self._record(f"{entry.name}: replicas max")
        placed = 0
        while True:
            if placed >= MAX_REPLICAS:
                raise CaseError(f"`replicas: max` of {entry.name!r}: {MAX_REPLICAS} replicas placed and more would "
                                "fit; kspread stops there (give the nodes an allocatable that bounds them)",
                                (*entry.path, "replicas"))
            pod = replace_pod(entry.template, name=f"{entry.template.name}-{placed}", preemption_policy=PREEMPT_NEVER)
            self._create(pod)
            rec.created.append(pod.key)
            self.settle(rec)
            if pod.key not in self.run.sched.bound:
                break
            placed += 1
        self.capacity[entry.template.key] = placed

    # ---- what steps share ---------------------------------------------------------------

    def _pods_on(self, node: str) -> list[Pod]:
        """The pods bound to the node, in the order a step evicts them: the case's pods,
        then the sequence's in the order they were bound."""
        return [p for p in self._bound_pods() if p.node_name == node]

    def _bound_pods(self) -> list[Pod]:
        self._sync_preempted()
        return [p for p in self.existing.values() if p.node_name is not None] + list(self.run.sched.bound.values())

    def _find_pod(self, key: str) -> Pod | None:
        """The pod of that key that exists now: bound, the case's, or pending in the queue."""
        self._sync_preempted()
        sched = self.run.sched
        if key in sched.bound:
            return sched.bound[key]
        if key in self.existing:
            return self.existing[key]
        if key in sched.pending and key in self.run.queue.pods:
            return sched.pending[key]
        return None

    def _sync_preempted(self) -> None:
        """The case's pods that preemption evicted are gone."""
        for v in self.run.preempted[self._synced:]:
            if self.existing.get(v.key) is v:
                del self.existing[v.key]
        self._synced = len(self.run.preempted)

    def _update_node(self, old: Node, new: Node, rec: Record) -> None:
        self.nodes[new.name] = new
        # a change, even one no queue event reports (a node cordoned): a parked pod group is
        # tried again (kspread.engine.podgroupcycle)
        self.run.queue.changes += 1
        self._reset()
        actions = []
        if old.unschedulable and not new.unschedulable:
            actions.append("UpdateNodeTaint")
        if dict(old.allocatable) != dict(new.allocatable):
            actions.append("UpdateNodeAllocatable")
        if dict(old.labels) != dict(new.labels):
            actions.append("UpdateNodeLabel")
        if old.taints != new.taints:
            actions.append("UpdateNodeTaint")
        for action in actions:
            self._node_event(action, old, new, rec)

    def _node_event(self, action: str, old: Node | None, new: Node, rec: Record) -> None:
        queue = self.run.queue
        precheck = None if queue.hints else self._precheck(new)
        rec.moved.extend(queue.node_event(NodeEvent(action, old, new, precheck)))

    def _precheck(self, node: Node) -> Callable[[Pod], bool]:
        """preCheckForNode (SchedulerQueueingHints off): AdmissionCheck on the node with
        its pods (room and resources for the pod, required node affinity, node name, host
        ports), then no NoSchedule/NoExecute taint the pod does not tolerate."""
        info: NodeInfo = self.run.sched.snapshot.get(node.name)
        version = self.version
        used: dict[str, int] = {}
        for p in info.pods.values():
            for name, amount in node_pod_requests(p, version).items():
                used[name] = used.get(name, 0) + amount
        n_pods = len(info.pods)

        def check(pod: Pod) -> bool:
            if n_pods + 1 > node.allocatable.get("pods", 0):
                return False
            # AdmissionCheck sets UseDRANodeAllocatableResourceClaimStatus with the gate: a
            # pending pod's node allocatable claim statuses count here
            for name, amount in pod_requests(pod, version, node_allocatable=True).items():
                if amount > 0 and amount > node.allocatable.get(name, 0) - used.get(name, 0):
                    return False
            if not required_node_affinity_matches(pod, node):
                return False
            if pod.node_name is not None and pod.node_name != node.name:
                return False
            if not fits_ports(pod_host_ports(pod), info):
                return False
            return find_untolerated_taint(node.taints, pod.tolerations, do_not_schedule_taints) is None

        return check

    def _reset(self) -> None:
        """The scheduler's snapshot, framework and node order over the cluster as it is."""
        sched = self.run.sched
        self.cluster.nodes = sorted(self.nodes.values(), key=lambda n: n.index)
        pending = [p for p in self.existing.values() if p.node_name is None]
        self.cluster.pods = self._bound_pods() + pending
        order: list[str] = []
        depth = 0
        lists = list(self.tree.values())
        while len(order) < len(self.nodes):
            order.extend(lst[depth] for lst in lists if depth < len(lst))
            depth += 1
        kept = sched.cycle_order
        if (kept is not None and self.version.snapshot_keeps_node_list and len(kept) == len(self.nodes)
                and set(kept) == set(self.nodes)):
            # UpdateSnapshot lists the node tree afresh only when a node came into the
            # snapshot or left it (updateAllLists): a node the tree moved to another zone
            # (label) keeps its place in the list the cycles search and score in
            order = kept
        sched.reset_cluster(self.cluster, order)
        self.run.queue.framework = sched.framework

    # ---- evictions ------------------------------------------------------------------------

    def _evict(self, pod: Pod, rec: Record) -> None:
        """Delete a bound pod: an AssignedPodDelete for the queue, and a replacement from
        its controller."""
        if len(self.evicted) >= MAX_EVICTIONS:
            cur = self._current
            where = cur.path if cur is not None else ("schedule",)
            text = f"`{cur.text}`" if isinstance(cur, Step) else repr(cur.name) if isinstance(cur, MaxEntry) else ""
            raise CaseError(f"the sequence evicted {MAX_EVICTIONS} pods by {text or 'its start'} and would go on "
                            "(pods evicted and replaced again and again: a NoExecute taint the scheduler does not "
                            "filter on, or tolerationSeconds over a long wait)", where)
        sched = self.run.sched
        if self.existing.get(pod.key) is pod:
            del self.existing[pod.key]
        if sched.gang is not None:
            sched.gang.delete_pod(pod)
        if sched.groups is not None:
            sched.groups.delete_pod(pod)
        sched.bound.pop(pod.key, None)
        sched.ties.pop(pod.key, None)
        self.timers.pop(pod.key, None)
        self._seen_bound.pop(pod.key, None)
        self.evicted.append(pod.key)
        rec.evicted.append(pod.key)
        rec.moved.extend(self.run.queue.deliver(PodEvent("Delete", pod)))
        # the resource claim controller: the pod leaves its claims' reservedFor, a claim no
        # pod reserves is deallocated (as for preemption's victims)
        for ev in sched.release_pod(pod):
            rec.moved.extend(self.run.queue.deliver(ev))
        self._delete_ephemeral_claims(pod, rec)
        self._replace(pod, rec)

    def _delete_ephemeral_claims(self, pod: Pod, rec: Record) -> None:
        """The garbage collector deletes the claims of the pod's generic ephemeral volumes
        and the PV controller releases their volumes (``kspread.engine.ephemeral``); the
        queue sees the claims' and volumes' updates."""
        cur = self._current
        path = cur.path if cur is not None else ("schedule",)
        scheduled = [p for info in self.run.sched.snapshot for p in info.pods.values()]
        for ev in delete_owned_claims(self.run.sched.handle.storage, pod, scheduled, path):
            rec.moved.extend(self.run.queue.deliver(ev))

    def _replace(self, pod: Pod, rec: Record) -> None:
        """The pod's controller (a ReplicaSet, ReplicationController or StatefulSet of the
        case) creates a new pending pod with its spec: a StatefulSet with the same name,
        the others named <controller>-r1, -r2, ... A new pod has no status: none of the
        lost pod's (its start time, in-place resize, node allocatable claims)."""
        ctrl = pod.controller
        if ctrl is None or ctrl.kind not in REPLACING_KINDS:
            return
        by_kind: dict[str, list[Any]] = {"ReplicaSet": list(self.cluster.replica_sets),
                                         "StatefulSet": list(self.cluster.stateful_sets),
                                         "ReplicationController": list(self.cluster.replication_controllers)}
        owners = by_kind[ctrl.kind]
        if not any(o.name == ctrl.name and o.namespace == pod.namespace for o in owners):
            return
        if ctrl.kind == "StatefulSet":
            name = pod.name
        else:
            k = (ctrl.kind, pod.namespace, ctrl.name)
            self._replacements[k] = n = self._replacements.get(k, 0) + 1
            name = f"{ctrl.name}-r{n}"
        new = replace_pod(pod, name=name, node_name=None, nominated_node=None, terminating=False, start_time=None,
                          preempted_by_scheduler=False, resource_claims=self._new_claims(pod, name),
                          node_allocatable_claims=(), resize=None)
        self._new_ephemeral_claims(new)
        self._create(new)
        rec.created.append(new.key)

    def _new_claims(self, pod: Pod, name: str) -> tuple[PodClaim, ...]:
        """The replacement's spec.resourceClaims: a claim named in the spec stays; the
        resource claim controller makes a new claim from the template for a claim made
        from one, ``<pod>-<claim>`` (the old pod's was deallocated with it; a StatefulSet's
        replacement, of the same name, gets a claim of the same name, unallocated)."""
        tracker = self.run.sched.claims
        out = []
        for pc in pod.resource_claims:
            if not pc.from_template:
                out.append(pc)
                continue
            new = replace(pc, claim_name=f"{name}-{pc.name}")
            old = tracker.get(pod.namespace, pc.claim_name)
            if old is not None:
                tracker.claims[(pod.namespace, new.claim_name)] = replace(
                    old, name=new.claim_name, allocation=None, reserved_for=(),
                    owner_pod=name if pod.namespace == "default" else f"{pod.namespace}/{name}")
            out.append(new)
        return tuple(out)

    def _new_ephemeral_claims(self, pod: Pod) -> None:
        """The ephemeral volume controller: a claim ``<pod>-<volume>`` for each generic
        ephemeral volume of the replacement, owned by it."""
        storage = self.run.sched.handle.storage
        if storage is None:
            return
        for v in pod.volumes:
            name = v.claim_name(pod.name)
            if v.ephemeral is None or name is None or storage.claim(pod.namespace, name) is not None:
                continue
            claim = PersistentVolumeClaim(name, pod.namespace, v.ephemeral, owner_pod=pod.name)
            storage.pvcs[claim.key] = claim

    # ---- PodDisruptionBudgets -----------------------------------------------------------------

    def _initial_budgets(self, pdbs: list[PodDisruptionBudget]) -> dict[tuple[str, str], tuple[str, Any]]:
        out = {}
        for pdb in pdbs:
            if pdb.budget is not None:
                out[(pdb.namespace, pdb.name)] = pdb.budget
            else:  # a status alone: the desired healthy count it implies
                healthy = sum(1 for p in self.existing.values()
                              if p.node_name is not None and not p.terminating and pdb_matches(pdb, p))
                out[(pdb.namespace, pdb.name)] = ("desired", healthy - pdb.disruptions_allowed)
        return out

    def _eviction_allowed(self, pod: Pod) -> bool:
        """The eviction API: refused when more than one budget covers the pod, or the one
        that does allows no disruption; allowed, it takes one from that budget."""
        pdbs = self.cluster.pdbs
        covering = [i for i, pdb in enumerate(pdbs) if pdb_matches(pdb, pod)]
        if not covering:
            return True
        if len(covering) > 1:
            return False
        i = covering[0]
        if pdbs[i].disruptions_allowed <= 0:
            return False
        pdbs[i] = replace(pdbs[i], disruptions_allowed=pdbs[i].disruptions_allowed - 1)
        return True

    def _recount_budgets(self) -> None:
        """The disruption controller: every budget over the pods as they are now
        (expected: the matching pods, pending ones too; healthy: the bound ones not
        terminating)."""
        pods = self._bound_pods() + [p for p in self.existing.values() if p.node_name is None] + \
            [self.run.sched.pending[k] for k in self.run.sched.pending if k not in self.existing]
        out = []
        for pdb in self.cluster.pdbs:
            matching = [p for p in pods if pdb_matches(pdb, p)]
            healthy = sum(1 for p in matching if p.node_name is not None and not p.terminating)
            budget = self._budgets[(pdb.namespace, pdb.name)]
            out.append(replace(pdb, disruptions_allowed=disruptions_allowed(budget, len(matching), healthy)))
        self.cluster.pdbs = out

    # ---- the taint manager ------------------------------------------------------------------

    def _no_execute(self, node: Node, rec: Record) -> None:
        """handleNodeUpdate: every pod of the node against its NoExecute taints."""
        for pod in self._pods_on(node.name):
            self._process_pod(pod, node, rec)

    def _process_pod(self, pod: Pod, node: Node, rec: Record) -> None:
        """processPodOnNode: evict now when a NoExecute taint is not tolerated; else set a
        timer at the least tolerationSeconds of the tolerations used (none: no timer),
        keeping one set earlier."""
        taints = [t for t in node.taints if t.effect == NO_EXECUTE]
        if not taints:
            self.timers.pop(pod.key, None)
            return
        used = []
        for t in taints:
            tol = next((x for x in pod.tolerations if toleration_tolerates(x, t)), None)
            if tol is None:
                self._evict(pod, rec)
                return
            used.append(tol)
        seconds = [x.seconds for x in used if x.seconds is not None]
        if not seconds:
            self.timers.pop(pod.key, None)
            return
        wait = max(0, min(seconds))
        now = self.run.queue.now
        if wait == 0:
            self._evict(pod, rec)
            return
        old = self.timers.get(pod.key)
        if old is not None and old[0] < now:
            return
        self.timers[pod.key] = (now, now + wait)

    def _due_timers(self, rec: Record) -> bool:
        """The evictions that came due, in time order: the taint manager's timers, and the
        device taint eviction controller's (at a time, the node timers first, then the
        device evictions in the order of the bound pods)."""
        now = self.run.queue.now
        due: list[tuple[int, int, int, str]] = sorted(
            (at, 0, 0, key) for key, (_, at) in self.timers.items() if at <= now)
        node_due = bool(due)
        if self.device_evictions:
            due = sorted(due + [(at, 1, i, key) for i, (key, at) in enumerate(self._device_times().items())
                                if at <= now])
        done = False
        for _, kind, _, key in due:
            pod = self._find_pod(key)
            if kind == 0:
                self.timers.pop(key, None)
            if pod is not None and pod.node_name is not None:
                self._evict(pod, rec)
                done = True
        return node_due or done

    # ---- the device taint eviction controller --------------------------------------------

    def _device_times(self) -> dict[str, int]:
        """Bound pod -> when the device taint eviction controller evicts it (pods in the
        order a step evicts them)."""
        claims = self.run.sched.claims
        assert claims is not None
        from kspread.engine.devicetaints import pod_eviction_times

        return pod_eviction_times(self._bound_pods(), claims, self.version.minor,
                                  self.version.minor >= 35 and self.version.gate("DRADeviceTaintRules"),
                                  self._slice_time,
                                  self.version.minor >= 36 and self.version.gate("DRAWorkloadResourceClaims"))

    def _slice_time(self, s: Any) -> int:
        """When a slice was published: with its node, for a node an addNode step added;
        else at the start."""
        return self.added_at.get(s.node_name, 0) if s.node_name else 0

    def _check_time_added(self) -> None:
        claims = self.run.sched.claims
        assert claims is not None
        for s in claims.objects.slices:
            for d in s.devices:
                if any(t.effect == NO_EXECUTE and t.time_added_given for t in d.taints):
                    raise CaseError(f"ResourceSlice {s.name!r} device {d.name!r}: a NoExecute taint with timeAdded in a "
                                    "`schedule`: kspread's sequence clock has no date; leave timeAdded out (the API "
                                    "server sets it when it creates the slice: the start, or the node's addNode)",
                                    ("objects",))

    def _tracker(self, step: Step) -> Any:
        claims = self.run.sched.claims
        if claims is None or not claims.objects:
            raise _error(step, "the case has no devices (DeviceClass, ResourceSlice, ResourceClaim)", step.kind)
        return claims

    def _rule_event(self, before: list, rec: Record) -> None:
        """The ResourceSlice tracker sends an update for each slice whose taints changed:
        DynamicResources registered ResourceSlice/Update without a hint."""
        from kspread.engine.devicetaints import scheduler_slices

        claims = self.run.sched.claims
        assert claims is not None
        claims.patched = None
        after = scheduler_slices(claims)
        old = {s.name: [d.taints for d in s.devices] for s in before}
        changed = [s for s in after if old.get(s.name) != [d.taints for d in s.devices]] + \
            [s for s in before if s.name not in {x.name for x in after}]
        if changed:
            rec.moved.extend(self.run.queue.hintless_event(SLICE_UPDATE))

    def _do_addDeviceTaintRule(self, step: Step, rec: Record) -> None:
        from kspread.engine.devicetaints import scheduler_slices

        claims = self._tracker(step)
        rule = step.arg
        if any(r.name == rule.name for r in claims.taint_rules):
            raise _error(step, f"DeviceTaintRule {rule.name!r} exists already", step.kind, "metadata", "name")
        before = scheduler_slices(claims)
        # the API server sets timeAdded when it creates the rule
        claims.taint_rules.append(replace(rule, taint=replace(rule.taint, time_added=self.run.queue.now)))
        self._rule_event(before, rec)
        self._due_timers(rec)

    def _do_deleteDeviceTaintRule(self, step: Step, rec: Record) -> None:
        from kspread.engine.devicetaints import scheduler_slices

        claims = self._tracker(step)
        keep = [r for r in claims.taint_rules if r.name != step.arg]
        if len(keep) == len(claims.taint_rules):
            raise _error(step, f"DeviceTaintRule {step.arg!r} does not exist at that point", step.kind)
        before = scheduler_slices(claims)
        claims.taint_rules[:] = keep
        self._rule_event(before, rec)
        self._due_timers(rec)

    def _taint_manager(self, rec: Record) -> bool:
        """After a run: the pods it bound on nodes with NoExecute taints, and the timers
        that came due. Returns whether it evicted a pod."""
        n = len(self.evicted)
        for key, pod in list(self.run.sched.bound.items()):
            if self._seen_bound.get(key) is pod:
                continue
            self._seen_bound[key] = pod
            node = self.nodes.get(pod.node_name or "")
            if node is not None and any(t.effect == NO_EXECUTE for t in node.taints):
                self._process_pod(pod, node, rec)
        self._due_timers(rec)
        if len(self.evicted) > n:
            self._recount_budgets()
            self._reset()
            return True
        return False

    # ---- results --------------------------------------------------------------------------

    def placements(self) -> dict[str, str | None]:
        """Every pod of the sequence and of the case: the node it ends bound to, else the
        node it ends nominated to, else None (pending, or evicted and not replaced)."""
        sched = self.run.sched
        self._sync_preempted()
        out: dict[str, str | None] = {}
        for p in self.created:
            out[p.key] = sched.placement(p.key)
        for key in self.existing_keys:
            if key in out:
                continue
            pod = self.existing.get(key)
            out[key] = None if pod is None else pod.node_name or sched.placement(key)
        return out

    def evicted_pods(self) -> list[str]:
        """Every pod evicted, by a step or by preemption (each once, in order)."""
        keys = self.evicted + [v.key for v in self.run.preempted]
        return list(dict.fromkeys(keys))

    def timeline(self) -> list[dict[str, Any]]:
        return [r.as_dict() for r in self.records]

    def step_lines(self, before_cycle: int | None) -> list[str]:
        """For an explanation: a line per step recorded just before cycle ``before_cycle``
        (0-based; None: after the last cycle), what it did."""
        last = len(self.run.results)
        out = []
        for r in self.records:
            at = r.first_cycle if r.first_cycle < last else None
            if at != before_cycle or r.what.startswith("create "):
                continue
            parts = [f"{k} {', '.join(getattr(r, k))}" for k in ("evicted", "kept", "created", "moved")
                     if getattr(r, k)]
            out.append(f"step: {r.what} (clock {r.clock} s)" + (": " + "; ".join(parts) if parts else ""))
        return out


def taint_of(raw: Mapping[str, Any]) -> Taint:
    return Taint(raw["key"], raw.get("value", ""), raw["effect"])
