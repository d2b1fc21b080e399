"""GangScheduling (framework/plugins/gangscheduling, alpha in 1.35 behind the gates
GenericWorkload and GangScheduling) and the scheduler's workload manager
(backend/workloadmanager) it reads.

A pod names its group with ``spec.workloadRef`` (workload name, pod group, replica
key); the group's policy is in the Workload object (scheduling.k8s.io/v1alpha1):
``basic`` (nothing to enforce) or ``gang`` with ``minCount``. The manager keeps, per
group (namespace, workload, pod group, replica key), every pod the scheduler's informer
has seen -- bound ones too -- split into unscheduled, assumed (reserved, waiting at
Permit) and assigned (bound).

* PreEnqueue: a gang pod enters activeQ only once the group has ``minCount`` pods;
  before, it waits outside the queue ("waiting for minCount pods from a gang to appear
  in scheduling queue"). The Workload missing: "waiting for pods's workload %q to
  appear in scheduling queue"; its pod group missing: "pod group %q doesn't exist for a
  workload %q" (both UnschedulableAndUnresolvable).
* Events: an unscheduled pod added (the scheduler sends UnscheduledPodAdd to the queue
  when the GangScheduling gate is on) moves the waiting pods of the same group (the
  hint compares the whole workloadRef and the namespace); a Workload added moves its
  pods (kspread's workloads exist from the start).
* Reserve marks the pod assumed; Unreserve forgets it (unscheduled again). A pod
  deleted while it waits at Permit leaves its group first, and its Unreserve marks it
  unscheduled again all the same: the group's next Permit wait crashes 1.35.4's
  scheduler (``dangling``), which kspread refuses to go past.
* Permit: while the group's assumed and assigned pods number fewer than ``minCount``
  the pod waits ("waiting for minCount pods from a gang to be waiting on permit"),
  holding its node, and the group's unscheduled pods are activated (moved to activeQ
  from the unschedulable pods or backoffQ). The pod that makes the quorum is allowed,
  with every waiting pod of the group: they bind together.
* The wait ends at the group's deadline: five minutes (DefaultSchedulingTimeoutDuration)
  after the first wait, renewed when a wait starts after it passed. Every pod still
  waiting then is rejected ("rejected due to timeout after waiting 5m0s at plugin
  GangScheduling", Unschedulable), unreserved, and goes to the unschedulable pods with
  GangScheduling as its rejector; its node is freed (an AssignedPodDelete event for
  the other pods).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kspread.engine.framework.status import go_quote
from kspread.engine.model import Pod
from kspread.engine.plugins.helper import GroupMembers

NAME = "GangScheduling"
SCHEDULING_TIMEOUT_SECONDS = 300  # workloadmanager.DefaultSchedulingTimeoutDuration (5 min)
WAIT_FOR_QUORUM = "waiting for minCount pods from a gang to appear in scheduling queue"
WAIT_ON_PERMIT = "waiting for minCount pods from a gang to be waiting on permit"
REMOVED = "removed"  # RejectWaitingPod's message: a waiting pod deleted


def timeout_reason(seconds: int) -> str:
    """newWaitingPod's timer message: the pod's own wait, Permit's duration (the group's
    deadline less the time the pod began to wait), as Go prints a time.Duration (whole
    seconds on the sequence clock: "5m0s" for the pod that set the deadline)."""
    h, rest = divmod(seconds, 3600)
    m, sec = divmod(rest, 60)
    text = f"{h}h{m}m{sec}s" if h else f"{m}m{sec}s" if m else f"{sec}s"
    return f"rejected due to timeout after waiting {text} at plugin GangScheduling"


TIMEOUT_REASON = timeout_reason(SCHEDULING_TIMEOUT_SECONDS)


@dataclass(frozen=True, slots=True)
class WorkloadRef:
    """core/v1 WorkloadReference: a pod's spec.workloadRef."""

    name: str
    pod_group: str
    replica_key: str = ""


@dataclass(frozen=True, slots=True)
class Workload:
    """A Workload (scheduling.k8s.io/v1alpha1): pod group name -> its gang minCount,
    or None for the basic policy."""

    namespace: str
    name: str
    pod_groups: dict[str, int | None]


GroupKey = tuple[str, str, str, str]  # namespace, workload, pod group, replica key


@dataclass(slots=True)
class PodGroupInfo:
    """podGroupInfo: the group's pods (key -> pod, in the order the informer saw them)."""

    all: dict[str, Pod] = field(default_factory=dict)
    unscheduled: dict[str, None] = field(default_factory=dict)
    assumed: dict[str, None] = field(default_factory=dict)
    assigned: dict[str, None] = field(default_factory=dict)
    deadline: int | None = None  # the sequence clock's second the waiting pods time out
    # pods deleted while they waited at Permit, which Unreserve then marked unscheduled
    # (upstream keeps their UIDs among the group's unscheduled pods: ``dangling``)
    stale: dict[str, None] = field(default_factory=dict)

    def timeout(self, now: int) -> int:
        """SchedulingTimeout: the deadline, set five minutes on when none is set or it has
        passed."""
        # a wait that starts at the second the last deadline passed starts after it
        if self.deadline is None or self.deadline <= now:
            self.deadline = now + SCHEDULING_TIMEOUT_SECONDS
        return self.deadline


def group_key(pod: Pod) -> GroupKey | None:
    ref = pod.workload_ref
    if ref is None:
        return None
    return (pod.namespace, ref.name, ref.pod_group, ref.replica_key)


class GangScheduling(GroupMembers):
    """The plugin and the workload manager of one run."""

    name = NAME

    def __init__(self, workloads: dict[tuple[str, str], Workload], pods: list[Pod]) -> None:
        self.workloads = workloads
        self.groups: dict[GroupKey, PodGroupInfo] = {}
        for p in pods:
            self.add_pod(p)

    # ---- the workload manager (the scheduler's pod event handlers: helper.GroupMembers) ---

    _key = staticmethod(group_key)

    def _new_state(self) -> PodGroupInfo:
        return PodGroupInfo()

    def _group(self, pod: Pod) -> PodGroupInfo | None:
        return self._state_of(pod)

    # ---- the plugin -------------------------------------------------------------------------

    def min_count(self, pod: Pod) -> int | None:
        """The gang minCount of the pod's group; None when the pod is in no gang (no
        workloadRef, or a basic group). The Workload and its group exist (PreEnqueue
        holds the pod otherwise)."""
        ref = pod.workload_ref
        if ref is None:
            return None
        wl = self.workloads.get((pod.namespace, ref.name))
        return None if wl is None else wl.pod_groups.get(ref.pod_group)

    def pre_enqueue(self, pod: Pod) -> str | None:
        """PreEnqueue: None when the pod may enter activeQ, else the reason it waits
        (UnschedulableAndUnresolvable)."""
        ref = pod.workload_ref
        if ref is None:
            return None
        wl = self.workloads.get((pod.namespace, ref.name))
        if wl is None:
            return f"waiting for pods's workload {go_quote(ref.name)} to appear in scheduling queue"
        if ref.pod_group not in wl.pod_groups:
            return f"pod group {go_quote(ref.pod_group)} doesn't exist for a workload {go_quote(wl.name)}"
        need = wl.pod_groups[ref.pod_group]
        if need is None:
            return None
        g = self._group(pod)
        if g is None or len(g.all) < need:
            return WAIT_FOR_QUORUM
        return None

    def pod_added_hint(self, pod: Pod, added: Pod) -> bool:
        """isSchedulableAfterPodAdded: Queue when the added pod is of the same group."""
        return (pod.workload_ref is not None and added.workload_ref == pod.workload_ref
                and added.namespace == pod.namespace)

    def reserve(self, pod: Pod) -> None:
        """Reserve: the pod is assumed."""
        g = self._group(pod)
        if g is not None:
            g.assumed[pod.key] = None
            g.unscheduled.pop(pod.key, None)

    def unreserve(self, pod: Pod) -> None:
        """Unreserve (podGroupInfo.ForgetPod): the pod is unscheduled again, when its group
        still exists, even after the pod was deleted from it (``dangling``)."""
        g = self._group(pod)
        if g is None:
            return
        if g.all.get(pod.key) is None:
            g.stale[pod.key] = None  # deleted: its UID, not a pod of that name created since
        else:
            g.unscheduled[pod.key] = None
        g.assumed.pop(pod.key, None)

    def permit(self, pod: Pod, now: int) -> tuple[bool, list[str], list[str]]:
        """Permit for a reserved gang pod: (whether it waits, the group's unscheduled pods
        to activate when it does, the waiting pods it allows when it does not)."""
        need = self.min_count(pod)
        g = self._group(pod)
        if need is None or g is None:
            return False, [], []
        if len({**g.assumed, **g.assigned}) < need:
            g.timeout(now)
            return True, list(g.unscheduled), []
        return False, [], [k for k in g.assumed if k != pod.key]

    def dangling(self, pod: Pod) -> list[str]:
        """The pods of the pod's group marked unscheduled that the group no longer has: a
        waiting pod deleted (DeletePod) and then unreserved (ForgetPod marks it unscheduled
        again). Permit's wait lists the group's unscheduled pods to activate them
        (UnscheduledPods), which reads such a pod's object: none, a nil pointer
        dereference in 1.35.4, and the scheduler crashes."""
        g = self._group(pod)
        return [] if g is None else list(g.stale)

    def deadline(self, pod: Pod) -> int | None:
        g = self._group(pod)
        return None if g is None else g.deadline
