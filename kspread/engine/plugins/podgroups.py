"""Pod groups as 1.36 has them (GenericWorkload and GangScheduling, alpha): PodGroup
objects (scheduling.k8s.io/v1alpha2), the cache's pod group states
(backend/cache/podgroupstate.go) and the GangScheduling plugin
(framework/plugins/gangscheduling) of 1.36. The pod group scheduling cycle that reads
them is ``kspread.engine.podgroupcycle``.

A pod names its PodGroup (same namespace) with ``spec.schedulingGroup.podGroupName``. The
PodGroup's ``schedulingPolicy`` is ``basic`` or ``gang`` with ``minCount``.

* The cache keeps, per group (namespace, PodGroup name), every pod with that
  schedulingGroup that the scheduler's informer has seen (bound ones too; the PodGroup
  object need not exist), split into unscheduled, assumed and assigned
  (podGroupStateData: addPod, updatePod on a binding, deletePod, assumePod, forgetPod).
  ``AllPodsCount``: all of them; ``ScheduledPodsCount``: assumed and assigned.
* PreEnqueue (GangScheduling): a pod whose PodGroup does not exist waits outside the
  queue ("waiting for pods's pod group %q to appear in scheduling queue",
  UnschedulableAndUnresolvable); a gang pod waits until its group has ``minCount`` pods
  ("waiting for minCount pods from a gang to appear in scheduling queue"). A basic
  group's pods pass.
* Events: Pod/Add (an unscheduled pod created: the scheduler sends UnscheduledPodAdd when
  the GangScheduling gate is on; a bound pod added) requeues the held pods of the same
  group (isSchedulableAfterPodAdded: helper.MatchingSchedulingGroup, namespace and
  podGroupName); PodGroup/Add requeues the pods naming it (kspread's PodGroups exist from
  the start, so it never comes).
* Permit: a gang pod whose group has fewer than ``minCount`` scheduled (assumed or
  assigned) pods waits ("waiting for minCount pods from a gang to be scheduled", five
  minutes), activating the group's unscheduled pods; the pod that reaches ``minCount``
  allows the group's assumed pods. In the pod group cycle Permit counts in the cycle's
  snapshot, where the pods of the group placed before it are assumed; in the binding
  cycle, in the cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kspread.engine.framework.status import go_quote
from kspread.engine.model import Pod
from kspread.engine.plugins.helper import GroupMembers

NAME = "GangScheduling"
WAIT_FOR_QUORUM = "waiting for minCount pods from a gang to appear in scheduling queue"
PERMIT_WAIT = "waiting for minCount pods from a gang to be scheduled"  # Permit's Wait (1.36)
# errPodGroupUnschedulable: the error of a pod group that cannot be placed (its status's
# message leads with it)
POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"


def missing_group(name: str) -> str:
    """PreEnqueue's reason when the pod's PodGroup does not exist."""
    return f"waiting for pods's pod group {go_quote(name)} to appear in scheduling queue"


@dataclass(frozen=True, slots=True)
class PodGroup:
    """A PodGroup (scheduling.k8s.io/v1alpha2): its gang minCount, or None for the basic
    policy. ``template``: spec.podGroupTemplateRef.workload (workload, template), not read
    by the scheduler. ``priority``: spec.priority (util.PodGroupPriority: 0 when unset);
    ``disruption_mode``: spec.disruptionMode ("Pod", "PodGroup" or None), both read by
    workload-aware preemption (kspread.engine.podgrouppreemption). ``constrained``:
    spec.schedulingConstraints is set (DefaultPreemption's TopologyAwareWorkloadScheduling
    branch reads only that); ``topology_key``: its topology[0].key, None without one
    (kspread.engine.podgroupplacement)."""

    namespace: str
    name: str
    min_count: int | None
    template: tuple[str, str] | None = None
    priority: int = 0
    disruption_mode: str | None = None
    constrained: bool = False
    topology_key: str | None = None
    # spec.resourceClaims (DRAWorkloadResourceClaims): claims the group's pods share
    resource_claims: tuple[PodGroupClaim, ...] = ()
    uid: str = ""  # metadata.uid ("": not given)

    @property
    def uid_or_default(self) -> str:
        """metadata.uid, else kspread's stand-in ``podgroup/<namespace>/<name>`` (the 1.36
        oracle's; the API server's uid is random)."""
        return self.uid or f"podgroup/{self.namespace}/{self.name}"

    def claim_for(self, name: str, claim_name: str | None, template: str | None) -> PodGroupClaim | None:
        """resourceclaim.BindTo's match: the PodGroup's claim of that name naming the same
        ResourceClaim or ResourceClaimTemplate as the pod's entry."""
        for c in self.resource_claims:
            if c.name == name and c.claim_name == claim_name and c.template == template:
                return c
        return None

    @property
    def reference(self) -> str:
        """The PodGroup as a claim's status.reservedFor names it (ResourceClaim.reserved_for)."""
        return pod_group_reference(self.name)


GroupKey = tuple[str, str]  # namespace, PodGroup name

# a reservedFor entry naming a PodGroup (no pod key has a colon: a namespace is a DNS label)
POD_GROUP_REF = "PodGroup:"


def pod_group_reference(name: str) -> str:
    return POD_GROUP_REF + name


@dataclass(frozen=True, slots=True)
class PodGroupClaim:
    """One of a PodGroup's spec.resourceClaims: its name and the ResourceClaim or the
    ResourceClaimTemplate it names."""

    name: str
    claim_name: str | None
    template: str | None

    def generated_name(self, pod_group: str) -> str:
        """The claim the resource claim controller makes from the template (kspread's name,
        without the controller's random suffix)."""
        return f"{pod_group}-{self.name}"


@dataclass(slots=True)
class PodGroupState:
    """podGroupStateData: the group's pods (key -> pod, in the order the informer saw them)."""

    all: dict[str, Pod] = field(default_factory=dict)
    unscheduled: dict[str, None] = field(default_factory=dict)
    assumed: dict[str, None] = field(default_factory=dict)
    assigned: dict[str, None] = field(default_factory=dict)

    def scheduled_count(self) -> int:
        return len(self.assumed) + len(self.assigned)


@dataclass(slots=True)
class Condition:
    """A PodGroup's PodGroupScheduled condition as the scheduler last patched it."""

    status: str  # "True" | "False"
    reason: str  # Scheduled | Unschedulable | SchedulerError
    message: str


def group_key(pod: Pod) -> GroupKey | None:
    return None if pod.scheduling_group is None else (pod.namespace, pod.scheduling_group)


class PodGroups(GroupMembers):
    """The cache's pod group states, the PodGroup lister and, with its gate on, the
    GangScheduling plugin (1.36) of one run. The queue reads it as its ``gang``
    (PreEnqueue, the Pod/Add hint); the 1.35 Permit path never runs (``min_count`` is
    None for every pod)."""

    name = NAME

    def __init__(self, pod_groups: dict[GroupKey, PodGroup], pods: list[Pod], gang_on: bool) -> None:
        self.pod_groups = pod_groups
        self.gang_on = gang_on
        # the scheduler sends UnscheduledPodAdd only with the GangScheduling gate on
        self.sends_unscheduled_add = gang_on
        self.groups: dict[GroupKey, PodGroupState] = {}
        # PodGroupScheduled conditions the pod group cycles patched
        self.conditions: dict[GroupKey, Condition] = {}
        for p in pods:
            self.add_pod(p)

    # ---- the cache (the scheduler's pod event handlers: helper.GroupMembers) -----------

    _key = staticmethod(group_key)

    def _new_state(self) -> PodGroupState:
        return PodGroupState()

    def state(self, pod: Pod) -> PodGroupState | None:
        return self._state_of(pod)

    def unscheduled(self, pod: Pod) -> list[str]:
        """UnscheduledPods of the pod's group (the cache's), in the order they joined."""
        g = self.state(pod)
        return [] if g is None else list(g.unscheduled)

    def pod_group(self, pod: Pod) -> PodGroup | None:
        key = group_key(pod)
        return self.pod_groups.get(key) if key is not None else None

    # ---- the 1.35 interface the scheduler and queue call (none of it applies) ------------

    def min_count(self, pod: Pod) -> int | None:
        """1.35's Permit path: no pod takes it in 1.36 (a group's pods take the pod group
        cycle, the others are in no gang)."""
        return None

    # ---- GangScheduling (1.36) ------------------------------------------------------------

    def gang_min_count(self, pod: Pod) -> int | None:
        """The gang minCount GangScheduling enforces for the pod; None: the plugin is off,
        the pod is in no group, its PodGroup is missing or basic."""
        if not self.gang_on:
            return None
        pg = self.pod_group(pod)
        return None if pg is None else pg.min_count

    def pre_enqueue(self, pod: Pod) -> str | None:
        """PreEnqueue: None when the pod may enter activeQ, else why it waits
        (UnschedulableAndUnresolvable)."""
        if not self.gang_on or pod.scheduling_group is None:
            return None
        pg = self.pod_group(pod)
        if pg is None:
            return missing_group(pod.scheduling_group)
        if pg.min_count is None:
            return None
        g = self.state(pod)
        if g is None or len(g.all) < pg.min_count:
            return WAIT_FOR_QUORUM
        return None

    def pod_added_hint(self, pod: Pod, added: Pod) -> bool:
        """isSchedulableAfterPodAdded: Queue when the added pod names the same group."""
        return (pod.scheduling_group is not None and added.scheduling_group == pod.scheduling_group
                and added.namespace == pod.namespace)

    def permit(self, pod: Pod, scheduled: int) -> str | None:
        """Permit with ``scheduled`` assumed and assigned pods in the group (the cycle's
        snapshot or the cache, this pod counted): None (Success) or the Wait message."""
        need = self.gang_min_count(pod)
        if need is None or scheduled >= need:
            return None
        return PERMIT_WAIT

    def set_condition(self, key: GroupKey, cond: Condition) -> None:
        """updatePodGroupCondition: a PodGroup scheduled once keeps its True condition; a
        missing PodGroup gets none."""
        if key not in self.pod_groups:
            return
        old = self.conditions.get(key)
        if old is not None and old.status == "True" and cond.status != "True":
            return
        self.conditions[key] = cond
