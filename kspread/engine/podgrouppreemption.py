"""Workload-aware preemption of 1.36 (gate WorkloadAwarePreemption, alpha, needs
GangScheduling): framework/preemption/podgrouppreemption.go's PodGroupEvaluator, run by
the pod group cycle (``kspread.engine.podgroupcycle``) when its default algorithm finds
the group Unschedulable. What kspread models, by upstream's functions:

* DefaultPreemption's PostFilter does not preempt for a pod of a pod group ("preemption:
  not eligible due to workload aware preemption enabled", Unschedulable).
* ``preemptorEligibleToPreemptOthers``: a group any of whose unscheduled pods has
  preemptionPolicy Never does not preempt ("not eligible due to preemptionPolicy=Never.").
* The domain is the whole cluster ("cluster-domain"): every bound pod is a victim of its
  own, but the pods of a PodGroup with ``disruptionMode: PodGroup`` are one victim with the
  group's priority (``spec.priority``, 0 unset) and the start time of its first pod in
  node tree order (upstream does not update it as it adds the group's other pods). ``isPreemptionAllowed``: a victim's
  priority below the preemptor group's. None: "No preemption victims found for incoming
  preemptor" (UnschedulableAndUnresolvable).
* Every potential victim is removed from the snapshot and the group's algorithm runs again
  without post filters; failing, its status is the preemption's. The victims are sorted
  by ``moreImportantVictim`` (priority; a pod of a pod group before a lone pod; lone pods by
  start time; groups by size, then earliest start), split by PDB violation
  (filterVictimsWithPDBViolation: a unit violates when any of its pods does), and each is
  added back in turn (violating ones first) and kept when the group still fits (the
  reprieve); the others are the victims, deleted at once, most important first.
* ``actuatePodGroupPreemption`` clears the nominations of lower-priority pods nominated to
  the candidate's "node", which is named "cluster" (so none unless a node is so named).

Refused by name: a potential victim of the preempting group itself (a bound pod of its own
group whose priority is below the group's), and a victim waiting in its binding cycle.

Upstream's victims come from a Go map and are sorted with sort.Slice: victims the order
ties are reprieved in no fixed order; kspread takes node order, then each node's pod order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import TYPE_CHECKING

from kspread.engine.model import PREEMPT_NEVER, Pod, PodDisruptionBudget
from kspread.engine.plugins.defaultpreemption import _pdb_matches, start_key
from kspread.engine.plugins.podgroups import PodGroup
from kspread.errors import CaseError

if TYPE_CHECKING:  # pragma: no cover
    from kspread.engine.scheduler import Scheduler

NEVER_MESSAGE = "not eligible due to preemptionPolicy=Never."
NO_VICTIMS = "No preemption victims found for incoming preemptor"
CANDIDATE_NAME = "cluster"
# runWorkloadAwarePreemption with TopologyAwareWorkloadScheduling on, for a PodGroup with a
# topology constraint
TAWS_REFUSED = "workload aware preemption is not supported for pod groups with scheduling constraints"  # actuatePodGroupPreemption's candidate

SUCCESS, UNSCHEDULABLE, UNRESOLVABLE, ERROR = "Success", "Unschedulable", "UnschedulableAndUnresolvable", "Error"


@dataclass(slots=True)
class Victim:
    """A victim: one pod, or the bound pods of a PodGroup with disruptionMode PodGroup."""

    pods: list[Pod]
    priority: int
    in_group: bool  # IsPodGroup: its first pod names a scheduling group (whatever its mode)
    # EarliestStartTime: set from the pods the victim is made with (one); pods of its group
    # found later do not change it (upstream appends them without)
    earliest: float = field(init=False)

    def __post_init__(self) -> None:
        self.earliest = min(start_key(p) for p in self.pods)


@dataclass(slots=True)
class Outcome:
    code: str
    message: str = ""
    victims: list[Pod] = field(default_factory=list)


def _more_important(a: Victim, b: Victim) -> int:
    """moreImportantVictim as a comparison (-1: a first)."""
    if a.priority != b.priority:
        return -1 if a.priority > b.priority else 1
    if a.in_group != b.in_group:
        return -1 if a.in_group else 1
    if a.in_group and len(a.pods) != len(b.pods):
        return -1 if len(a.pods) > len(b.pods) else 1
    if a.earliest != b.earliest:
        return -1 if a.earliest < b.earliest else 1
    return 0


def domain_victims(sched: Scheduler) -> list[Victim]:
    """newDomainForWorkloadPreemption: the cluster's bound pods as victims."""
    groups = sched.groups
    by_group: dict[tuple[str, str], Victim] = {}
    out: list[Victim] = []
    for name in sched.order:  # the snapshot's list: node tree order
        for p in sched.snapshot.get(name).pods.values():
            pg = groups.pod_group(p) if groups is not None and p.scheduling_group else None
            if pg is None or pg.disruption_mode != "PodGroup":
                out.append(Victim([p], p.priority, p.scheduling_group is not None))
                continue
            key = (pg.namespace, pg.name)
            if key in by_group:
                by_group[key].pods.append(p)
                continue
            v = Victim([p], pg.priority, True)
            by_group[key] = v
            out.append(v)
    return out


def _violating(victims: Sequence[Victim], pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Victim], list[Victim]]:
    """filterVictimsWithPDBViolation over victims in their sorted order."""
    allowed = [p.disruptions_allowed for p in pdbs]
    bad: list[Victim] = []
    good: list[Victim] = []
    for v in victims:
        hit = False
        for pod in v.pods:
            if not pod.labels:
                continue
            for i, pdb in enumerate(pdbs):
                if not _pdb_matches(pdb, pod) or pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    hit = True
                    break
            if hit:
                break
        (bad if hit else good).append(v)
    return bad, good


def preempt(sched: Scheduler, pg: PodGroup, pods: Sequence[Pod],
            fits: Callable[[], tuple[str, str]]) -> Outcome:
    """PodGroupEvaluator.Preempt up to the victims (the caller deletes them). ``fits`` runs
    the group's algorithm without post filters on the current snapshot: (code, message)."""
    if any(p.preemption_policy == PREEMPT_NEVER for p in pods):
        return Outcome(UNSCHEDULABLE, NEVER_MESSAGE)
    potential = [v for v in domain_victims(sched) if v.priority < pg.priority]
    own = [p for v in potential for p in v.pods if p.namespace == pg.namespace and p.scheduling_group == pg.name]
    if own:
        # upstream's Permit then counts the group's scheduled pods in a snapshot without them
        raise CaseError(f"pod {own[0].key} of pod group {pg.name!r} is of lower priority than its group: "
                        "kspread does not model workload-aware preemption that would evict a pod of the "
                        "preempting group itself", ["schedule"])
    if not potential:
        return Outcome(UNRESOLVABLE, NO_VICTIMS)
    snap = sched.snapshot
    removed: dict[str, Pod] = {}  # by key, in the order removed (a list's remove was quadratic)
    try:
        for v in potential:
            for p in v.pods:
                snap.remove_pod(p)
                removed[p.key] = p
        code, msg = fits()
        if code != SUCCESS:
            return Outcome(code, msg)
        potential.sort(key=cmp_to_key(_more_important))
        bad, good = _violating(potential, sched.handle.cluster.pdbs)
        chosen: list[Victim] = []
        for v in [*bad, *good]:
            for p in v.pods:
                snap.add_pod(p)
                del removed[p.key]
            code, _ = fits()
            if code != SUCCESS:
                for p in v.pods:
                    snap.remove_pod(p)
                    removed[p.key] = p
                chosen.append(v)
        chosen.sort(key=cmp_to_key(_more_important))
        return Outcome(SUCCESS, "", [p for v in chosen for p in v.pods])
    finally:
        for p in removed.values():  # restore the snapshot (BackupSnapshot's restore)
            snap.add_pod(p)
