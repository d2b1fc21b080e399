"""DefaultPreemption: when no node fits, find lower-priority pods whose eviction
lets the pod in, pick one node, and nominate it (framework/preemption/preemption.go
and framework/plugins/defaultpreemption; up to 1.18 ``genericScheduler.Preempt``).

The steps, as upstream runs them:

1. ``pod_eligible_to_preempt_others``: preemptionPolicy Never is never eligible; a pod
   nominated to a node that still holds a terminating lower-priority pod waits for it
   instead of preempting again (from 1.27 only when that pod carries the
   DisruptionTarget condition set by the scheduler's preemption, PR #114623), unless
   the nominated node now fails with UnschedulableAndUnresolvable (from 1.19, PR #92604).
2. The potential nodes are those whose filter status is not UnschedulableAndUnresolvable,
   in the scheduler's node order. None: the pod's own nomination is cleared.
3. From 1.20 (PR #94814) the dry run stops early: ``num = max(n * 10 / 100, 100)``
   capped at n (``minCandidateNodesPercentage`` / ``minCandidateNodesAbsolute`` of the
   plugin's args), and it stops once it holds a candidate without PDB violations and
   ``num`` candidates in all. Upstream starts at a random offset and runs in parallel;
   kspread starts at offset 0 and visits the potential nodes one by one, so the
   candidates found are deterministic. With 100 potential nodes or fewer every node
   is visited, exactly as upstream.
4. ``select_victims_on_node`` on a copy of the node and of the cycle state: remove every
   lower-priority pod (running the PreFilter extensions' RemovePod), check the filters
   with nominated pods; sort the removed pods by importance, split them into PDB
   violating and non-violating, and add back (reprieve) as many as still fit, violating
   ones first. See the function for the version differences.
5. ``pick_one_node_for_preemption`` among the candidates; every node still tied after
   the last criterion is reported in ``PreemptionOutcome.tied_nodes``.
6. The scheduler applies the outcome (``Scheduler.apply_preemption``): victims deleted,
   lower-priority pods nominated to that node lose their nomination, the pod is
   nominated.

HTTP extenders with a preemptVerb then see the candidates and their victims
(callExtenders, kspread.engine.extender): the node is picked among those they keep.
Static extenders have no ProcessPreemption verb.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kspread.engine.framework.interface import Filtered, Plugin, PostFilterPlugin, StatusView
from kspread.engine.framework.preemption import LazyMap, PickStep, PreemptionOutcome
from kspread.engine.framework.registry import register
from kspread.engine.framework.runtime import raise_error_of
from kspread.engine.framework.status import SUCCESS, Code, CycleState, SchedulingError, Status
from kspread.engine.labels import as_selector
from kspread.engine.model import PREEMPT_NEVER, Pod, PodDisruptionBudget
from kspread.engine.snapshot import NodeInfo, NodeSet, PodRows, PodSums
from kspread.engine.versions import Version

MAX_INT32 = 2**31 - 1
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
NO_VICTIMS_REASON = "No preemption victims found for incoming pod"


# ---- version behaviour --------------------------------------------------------------
# Each function names one upstream change; the module docstring and README list them.


def unresolvable_nominated_node_allows_preemption(v: Version) -> bool:
    """A nominated node that fails with UnschedulableAndUnresolvable lets the pod
    preempt again (PR #92604, 1.19)."""
    return v.minor >= 19


def terminating_victim_needs_disruption_target(v: Version) -> bool:
    """Only a terminating pod with DisruptionTarget/PreemptionByScheduler blocks a new
    preemption (PR #114623, 1.27)."""
    return v.minor >= 27


def limits_candidates(v: Version) -> bool:
    """Dry run stops after max(10 %, 100) candidates (PR #94814, 1.20)."""
    return v.minor >= 20


def short_circuits_without_potential_victims(v: Version) -> bool:
    """A node without lower-priority pods fails the dry run at once with
    UnschedulableAndUnresolvable "No preemption victims found..." (1.19); before, its
    filters were run and, if they passed, it was a candidate with no victims."""
    return v.minor >= 19


def rejects_zero_victim_candidates(v: Version) -> bool:
    """A dry run that succeeds with no victim is an error for that node (PR #101560, 1.22)."""
    return v.minor >= 22


def picks_zero_victim_node_first(v: Version) -> bool:
    """pickOneNodeForPreemption returned a candidate with no victims at once (legacy
    generic_scheduler, up to 1.18). 1.19-1.21 had neither this nor the 1.22 rejection:
    reaching criterion 2 with such a candidate panicked (issue #101548)."""
    return v.minor <= 18


def decrements_pdb_budget(v: Version) -> bool:
    """filterPodsWithPDBViolation spends disruptionsAllowed per matched pod and honours
    status.disruptedPods (1.19, PR #91986); before, a pod is violating when a matching
    PDB has disruptionsAllowed <= 0."""
    return v.minor >= 19


def start_time_orders_victims(v: Version) -> bool:
    """MoreImportantPod breaks priority ties by earlier start time (PR #75510), and
    pickOneNodeForPreemption has criterion 5, latest start time (PR #74974): 1.15."""
    return v.minor >= 15


def resorts_victims_after_reprieve(v: Version) -> bool:
    """Victims re-sorted by importance when both PDB groups were non-empty (PR #128307,
    merged in 1.32 and cherry-picked to the 1.29, 1.30 and 1.31 release branches;
    kspread models each minor as its latest patch release, hence from 1.29)."""
    return v.minor >= 29


def clears_nomination_without_candidates(v: Version) -> bool:
    """When the dry run finds no candidate, PostFilter returns an empty nominated node,
    which clears the pod's nomination (PostFilterResult with NominatingInfo, 1.22)."""
    return v.minor >= 22


# ---- small pure functions -------------------------------------------------------------


def start_key(pod: Pod) -> float:
    """``GetPodStartTime``: status.startTime, or "now" when unset; kspread takes "now"
    to be later than every start time in the case."""
    return math.inf if pod.start_time is None else pod.start_time


def importance_key(pod: Pod, version: Version) -> tuple:
    """Sort key for ``MoreImportantPod`` (most important first): priority descending,
    then (from 1.15) the earlier start time. Python's sort is stable, so pods that tie
    keep the node's pod order; upstream's sort.Slice leaves their order unspecified."""
    if start_time_orders_victims(version):
        return (-pod.priority, start_key(pod))
    return (-pod.priority,)


def num_candidates(num_nodes: int, percentage: int, absolute: int) -> int:
    """``calculateNumCandidates``."""
    n = num_nodes * percentage // 100
    if n < absolute:
        n = absolute
    if n > num_nodes:
        n = num_nodes
    return n


def _pdb_matches(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    if pdb.namespace != pod.namespace:
        return False
    sel = as_selector(pdb.selector)
    # a PDB with a nil or empty selector matches nothing
    return not sel.empty() and sel.matches(pod.labels)


def filter_pods_with_pdb_violation(
    pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget], version: Version
) -> tuple[list[Pod], list[Pod]]:
    """``filterPodsWithPDBViolation``: (violating, non-violating), each keeping the
    input order."""
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    allowed = [p.disruptions_allowed for p in pdbs]
    decrement = decrements_pdb_budget(version)
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if not _pdb_matches(pdb, pod):
                    continue
                if not decrement:
                    if pdb.disruptions_allowed <= 0:
                        violated = True
                        break
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def earliest_start_of_top_victims(victims: Sequence[Pod]) -> float:
    """``GetEarliestPodStartTime``: the earliest start among the victims of the highest
    priority (whatever their order)."""
    top = max(v.priority for v in victims)
    return min(start_key(v) for v in victims if v.priority == top)


WAP_POST_FILTER = "not eligible due to workload aware preemption enabled"  # diagnosis adds "preemption: "
# TopologyAwareWorkloadScheduling (1.36): a pod of a PodGroup with schedulingConstraints
TAWS_POST_FILTER = "not eligible due to placement-based pod group scheduling limitation"
TAWS_NO_POD_GROUP = "pod group for pod not found"

# The names explain reports for pickOneNodeForPreemption's criteria.
FEWEST_PDB_VIOLATIONS = "fewest PDB violations"
LOWEST_HIGHEST_VICTIM_PRIORITY = "lowest highest-victim priority (victims[0])"
SMALLEST_PRIORITY_SUM = "smallest sum of victim priorities"
FEWEST_VICTIMS = "fewest victims"
LATEST_START_TIME = "latest start time"
ZERO_VICTIMS_FIRST = "a candidate without victims"  # up to 1.18: taken at once
TIE = "tie"


def pick_one_node_for_preemption(
    nodes_to_victims: Mapping[str, tuple[list[Pod], int]], version: Version
) -> list[str]:
    """``pickOneNodeForPreemption``: the nodes left after the criteria, in order:

    1. fewest PDB violations;
    2. lowest priority of ``victims[0]`` (the highest-priority victim once victims are
       ordered by importance; see ``select_victims_on_node`` for when they are not);
    3. smallest sum of (priority + MaxInt32 + 1), in int64;
    4. fewest victims;
    5. (from 1.15) latest start time of the earliest-started highest-priority victim.

    Upstream then takes the first node of a Go map: any of the returned nodes.
    Up to 1.18 a candidate with no victims is taken at once."""
    return pick_one_node_steps(nodes_to_victims, version)[0]


def pick_one_node_steps(
    nodes_to_victims: Mapping[str, tuple[list[Pod], int]], version: Version
) -> tuple[list[str], list[PickStep]]:
    """``pick_one_node_for_preemption`` with its trace: the nodes left and, for each
    criterion that ran, every remaining node's value as upstream compares it
    (PDB violations; victims[0]'s priority; the int64 sum of priority + MaxInt32 + 1;
    the number of victims; the start time, seconds since the epoch or inf for "now")
    and the nodes it kept. The criteria stop as soon as one node is left."""
    names = list(nodes_to_victims)
    victims = [nodes_to_victims[n][0] for n in names]
    metrics = VictimMetrics(
        np.array([nodes_to_victims[n][1] for n in names], np.int64),
        np.array([len(v) for v in victims], np.int64),
        np.array([v[0].priority if v else 0 for v in victims], np.int64),
        np.array([sum(p.priority + MAX_INT32 + 1 for p in v) for v in victims], np.int64),
        np.array([earliest_start_of_top_victims(v) if v else math.inf for v in victims], np.float64),
    )
    kept, steps = pick_steps(names, metrics, version)
    return [names[j] for j in kept], steps


class VictimMetrics:
    """What pickOneNodeForPreemption reads of each candidate's victims, one array entry
    per candidate: PDB violations, number of victims, victims[0]'s priority, the int64
    sum of (priority + MaxInt32 + 1), the earliest start time among the victims of the
    highest priority (``earliest_start_of_top_victims``)."""

    __slots__ = ("violations", "count", "first_priority", "priority_sum", "earliest_start")

    def __init__(self, violations: np.ndarray, count: np.ndarray, first_priority: np.ndarray,
                 priority_sum: np.ndarray, earliest_start: np.ndarray) -> None:
        self.violations, self.count, self.first_priority = violations, count, first_priority
        self.priority_sum, self.earliest_start = priority_sum, earliest_start

    def take(self, idx: np.ndarray) -> VictimMetrics:
        return VictimMetrics(self.violations[idx], self.count[idx], self.first_priority[idx],
                             self.priority_sum[idx], self.earliest_start[idx])

    @staticmethod
    def concat(parts: Sequence[VictimMetrics]) -> VictimMetrics:
        return VictimMetrics(*(np.concatenate([getattr(p, a) for p in parts]) for a in VictimMetrics.__slots__))


def _values(names: list[str], idx: np.ndarray, values: np.ndarray) -> LazyMap:
    return LazyMap(lambda: dict(zip([names[j] for j in idx.tolist()], values.tolist())))


def pick_steps(names: list[str], m: VictimMetrics, version: Version) -> tuple[list[int], list[PickStep]]:
    """pickOneNodeForPreemption over the candidates ``names`` (``m`` their victims'
    metrics, see ``pick_one_node_steps``): the indexes of the nodes left, and the steps."""
    steps: list[PickStep] = []
    if not names:
        return [], steps
    idx = np.arange(len(names), dtype=np.intp)
    kept = list(names)  # the names at ``idx``: one list while the criteria keep every node
    if picks_zero_victim_node_first(version):
        empty = np.flatnonzero(m.count == 0)
        if len(empty):
            steps.append(PickStep(ZERO_VICTIMS_FIRST, _values(names, idx, m.count), [names[j] for j in empty.tolist()]))
            return empty.tolist(), steps
    # (name, values, True when the smallest value wins)
    criteria: list = [
        (FEWEST_PDB_VIOLATIONS, m.violations, True),
        (LOWEST_HIGHEST_VICTIM_PRIORITY, m.first_priority, True),
        (SMALLEST_PRIORITY_SUM, m.priority_sum, True),
        (FEWEST_VICTIMS, m.count, True),
    ]
    if start_time_orders_victims(version):
        criteria.append((LATEST_START_TIME, m.earliest_start, False))
    for name, column, smallest in criteria:
        if column is m.first_priority:
            empty = np.flatnonzero(m.count[idx] == 0)
            if len(empty):
                n = names[int(idx[empty[0]])]
                raise SchedulingError(
                    f"kube-scheduler {version} panics here: candidate {n} has no victims and "
                    "pickOneNodeForPreemption reads victims[0] (index out of range, issue #101548; "
                    "fixed in 1.22 by PR #101560)",
                    "DefaultPreemption",
                )
        values = column[idx]
        best = values.min() if smallest else values.max()
        before = idx
        same = values == best
        if not same.all():
            idx = idx[same]
            kept = [names[j] for j in idx.tolist()]
        steps.append(PickStep(name, _values(names, before, values), kept))
        if len(idx) == 1:
            break
    return idx.tolist(), steps

# ---- the plugin -------------------------------------------------------------------------


@register("DefaultPreemption", first=12)
class DefaultPreemption(Plugin, PostFilterPlugin):
    """PostFilter DefaultPreemption (the scheduler's built-in preemption before 1.19)."""

    def __init__(self, args: Mapping[str, Any], handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        # DefaultPreemptionArgs, decoded and validated by kspread.engine.framework.args
        self.percentage = args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
        self.absolute = args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)

    # ---- PostFilter ---------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]) -> tuple[Any, Status]:
        if pod.scheduling_group is not None and self.version.gate("TopologyAwareWorkloadScheduling"):
            # placements are tried one after another: preemption is not run for a constrained
            # group's pods (checked before workload-aware preemption's branch)
            groups = self.handle.gang
            pg = groups.pod_group(pod) if groups is not None and hasattr(groups, "pod_group") else None
            if pg is None:
                return PreemptionOutcome(None), Status(Code.UNSCHEDULABLE, (TAWS_NO_POD_GROUP,))
            if pg.constrained:
                return PreemptionOutcome(None), Status(Code.UNSCHEDULABLE, (TAWS_POST_FILTER,))
        if pod.scheduling_group is not None and self.version.gate("WorkloadAwarePreemption"):
            # the pod group cycle preempts for the whole group (kspread.engine.podgrouppreemption)
            return PreemptionOutcome(None), Status(Code.UNSCHEDULABLE, (WAP_POST_FILTER,))
        ok, msg = self.pod_eligible_to_preempt_others(pod, statuses)
        if not ok:
            return PreemptionOutcome(None), Status(Code.UNSCHEDULABLE, (msg,))
        positions = None  # the snapshot positions of ``potential``, when known
        if isinstance(statuses, StatusView):
            potential = statuses.names_without_code(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
            positions = statuses.positions_without_code(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        else:
            potential = [n for n, st in statuses.items() if st.code != Code.UNSCHEDULABLE_AND_UNRESOLVABLE]
        if not potential:
            return (PreemptionOutcome(None, clear_nomination=True),
                    Status(Code.UNSCHEDULABLE, ("Preemption is not helpful for scheduling",)))
        dry = self.dry_run_preemption(state, pod, potential, positions)
        outcome = PreemptionOutcome(None, candidates=LazyMap(dry.candidates), potential=potential,
                                    dry_run=LazyMap(dry.not_candidates),
                                    pdb_violations=LazyMap(dry.violations),
                                    max_candidates=self._limit(len(potential)))
        names = dry.names
        if not names:
            outcome.clear_nomination = clears_nomination_without_candidates(self.version) and not dry.errors
            if dry.errors:
                # upstream returns the aggregated error as an Error status: the pod stays
                # pending and its nomination unchanged; the aggregate (utilerrors) says each
                # message once (so it has in every tree checked, 1.23 to 1.36)
                return outcome, Status(Code.ERROR, tuple(dict.fromkeys(dry.errors)))
            return outcome, Status(Code.UNSCHEDULABLE, ("preemption: no preemption candidate",))
        ext = self.handle.extenders
        if ext is not None and ext.preempts(pod):
            return self._select_with_extenders(pod, ext, dry, outcome)
        if len(names) == 1:
            best = [0]
        else:
            best, outcome.pick_steps = pick_steps(names, dry.metrics, self.version)
            last = outcome.pick_steps[-1].criterion
            outcome.decided_by = last if len(best) == 1 or last == ZERO_VICTIMS_FIRST else TIE
        outcome.nominated_node = names[best[0]]
        outcome.victims = dry.victims(best[0])
        outcome.tied_nodes = [names[j] for j in best]
        return outcome, SUCCESS

    def _select_with_extenders(self, pod: Pod, ext: Any, dry: Any, outcome: PreemptionOutcome
                               ) -> tuple[PreemptionOutcome, Status]:
        """callExtenders, then SelectCandidate among the candidates the preempting
        extenders kept (with the victims and PDB violations they give). A non-ignorable
        extender's error is the PostFilter's Error status; no candidate left:
        Unschedulable."""
        violations = dry.violations()
        candidates = {n: (dry.victims(j), violations[n]) for j, n in enumerate(dry.names)}
        try:
            kept = ext.process_preemption(pod, candidates)
        except SchedulingError as e:
            return outcome, Status(Code.ERROR, (str(e),))
        if not kept:
            return outcome, Status(Code.UNSCHEDULABLE, ("no candidate node for preemption",))
        if len(kept) == 1:
            best = list(kept)
        else:
            best, outcome.pick_steps = pick_one_node_steps(kept, self.version)
            last = outcome.pick_steps[-1].criterion
            outcome.decided_by = last if len(best) == 1 or last == ZERO_VICTIMS_FIRST else TIE
        outcome.nominated_node = best[0]
        outcome.victims = kept[best[0]][0]
        outcome.tied_nodes = best
        return outcome, SUCCESS

    def pod_eligible_to_preempt_others(self, pod: Pod, statuses: Mapping[str, Status]) -> tuple[bool, str]:
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, "not eligible due to preemptionPolicy=Never."
        nominated = pod.nominated_node
        if nominated:
            st = statuses.get(nominated)
            if (unresolvable_nominated_node_allows_preemption(self.version) and st is not None
                    and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
                return True, ""
            info = self.handle.snapshot.node_infos.get(nominated)
            if info is not None:
                need_target = terminating_victim_needs_disruption_target(self.version)
                for p in info.pods.values():
                    if p.terminating and p.priority < pod.priority and (
                            not need_target or p.preempted_by_scheduler):
                        return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    # ---- dry run -------------------------------------------------------------------

    def _limit(self, n: int) -> int:
        """How many candidates the dry run keeps of each kind (non-violating, violating)."""
        return num_candidates(n, self.percentage, self.absolute) if limits_candidates(self.version) else n

    def dry_run_preemption(self, state: CycleState, pod: Pod, potential: list[str],
                           positions: np.ndarray | None = None) -> DryRun:
        """The candidates (non-violating ones first, each kind in the order visited), the
        errors of nodes whose dry run failed with an Error status, and the status of
        every visited node that is not a candidate (Success for a node whose victims
        came after its kind's list was full): see ``DryRun``. A node whose filters
        give an Error with every lower-priority pod removed is no candidate and its
        error is kept (DryRunPreemption aggregates them: PostFilter's Error status
        when no node is a candidate; the cycle stays Unschedulable).
        ``positions``: the snapshot positions of ``potential``, when known."""
        pdbs = self.handle.cluster.pdbs
        fwk = self.handle.framework
        assert fwk is not None
        n = len(potential)
        limit = self._limit(n)
        rejects_zero = rejects_zero_victim_candidates(self.version)
        dry = DryRun()
        found = [0, 0]  # candidates kept: non-violating, violating
        # Nodes are tried in order (offset 0) until enough candidates are found. When no
        # PreFilter state changes as pods are removed or added, a batch of nodes runs
        # SelectVictimsOnNode together (one cycle state for all); otherwise one node at
        # a time, each with its own copy of the state.
        shared = fwk.pre_filter_state_is_shared(state)
        columns = shared and fwk.filters_read_only_columns(state, pod)
        i = 0
        floor = 64
        while i < n:
            # as many nodes as candidates are still wanted at the rate found so far, and
            # at least 64, 256, 1024... (the batch size changes only the work done past the
            # stop, never the result)
            wanted = limit - found[0] - found[1]
            if i and found[0] + found[1]:
                wanted = -(-wanted * i // (found[0] + found[1]))
            if not i and fwk.handle.nominator.has_any():
                # nodes with pods nominated to them often fail: look at as many more
                wanted += len(fwk.nominated_pods_by_node(pod))
            batch = max(wanted, floor) if shared else 1
            if i:
                floor *= 4
            names = potential[i:i + batch]
            at = None if positions is None else positions[i:i + batch]
            i += len(names)
            res = self._select_victims_batch(state.clone(), pod, names, pdbs, columns, at)
            m = len(names)
            success = res.ids == 0
            if res.errors:
                success[list(res.errors)] = False
            zero = success & (res.metrics.count == 0) if rejects_zero else np.zeros(m, bool)
            ok = success & ~zero
            violating = res.metrics.violations > 0
            # a kind's candidates are kept while it holds fewer than ``limit``
            accepted = np.zeros(m, bool)
            totals = []
            for kind, mask in ((0, ok & ~violating), (1, ok & violating)):
                before = found[kind] + np.cumsum(mask) - mask
                accepted |= mask & (before < limit)
                totals.append(np.minimum(found[kind] + np.cumsum(mask), limit))
            # the dry run stops at the first kept candidate after which it holds a
            # non-violating one and ``limit`` in all
            stops = (accepted & (totals[0] >= 1) & (totals[0] + totals[1] >= limit)).nonzero()[0]
            end = int(stops[0]) + 1 if len(stops) else m
            found = [int(totals[0][end - 1]), int(totals[1][end - 1])]
            dry.add(names[:end], res, accepted[:end], zero[:end], ok[:end])
            if len(stops):
                break
        dry.finish()
        return dry

    def _select_victims_batch(self, state: CycleState, pod: Pod, names: list[str],
                              pdbs: Sequence[PodDisruptionBudget], columns: bool,
                              positions: np.ndarray | None = None) -> Victims:
        """SelectVictimsOnNode for the nodes ``names`` (at snapshot ``positions``, when
        known): on the snapshot's columns where every filter that runs reads only those
        (``columns``), else on copies of the NodeInfos."""
        fwk = self.handle.framework
        assert fwk is not None
        snapshot = self.handle.snapshot
        if columns:
            return self._select_victims(pod, _ColumnNodes(fwk, state, pod, snapshot, names, positions), pdbs)
        return self._select_victims(pod, _InfoNodes(fwk, state, pod, [snapshot.get(m).clone() for m in names]), pdbs)

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status]:
        """``SelectVictimsOnNode`` on one node (a copy of it and of the cycle state)."""
        out = self.select_victims_on_nodes(state, pod, [node_info], pdbs)[0]
        if isinstance(out, SchedulingError):
            raise out
        return out

    def select_victims_on_nodes(
        self, state: CycleState, pod: Pod, infos: list[NodeInfo], pdbs: Sequence[PodDisruptionBudget]
    ) -> list[tuple[list[Pod], int, Status] | SchedulingError]:
        """``SelectVictimsOnNode`` on copies of nodes (``_select_victims`` on NodeInfos)."""
        fwk = self.handle.framework
        assert fwk is not None
        res = self._select_victims(pod, _InfoNodes(fwk, state, pod, infos), pdbs)
        return [res.node(k) for k in range(len(infos))]

    def _select_victims(self, pod: Pod, nodes: _DryRunNodes, pdbs: Sequence[PodDisruptionBudget]) -> Victims:
        """``SelectVictimsOnNode`` on a set of nodes, filtered together at each step:
        remove every lower-priority pod, filter; then reprieve the pods one by one in
        order (PDB-violating ones first, each group by importance), each step adding
        back every node's next pod and filtering those nodes at once; a pod whose node
        no longer fits is a victim. ``nodes`` holds the nodes' state (copies of
        NodeInfos, or the snapshot's columns with the changes); more than one node
        shares one cycle state only when no PreFilter state changes as pods are removed
        or added (``Framework.pre_filter_state_is_shared``). The pods of all the nodes
        are rows of arrays (``PodRows``), ordered and counted as arrays. A node whose
        filtering raised gets its SchedulingError instead of a result.

        Victims are returned in reprieve order: PDB-violating ones first, each group by
        importance. From 1.29 (PR #128307, see ``resorts_victims_after_reprieve``) they
        are re-sorted by importance when both groups were non-empty, so ``victims[0]``
        is always the highest-priority victim; before, it could be a lower-priority
        violating pod, which pickOneNodeForPreemption's criterion 2 then reads."""
        v = self.version
        n = len(nodes)
        rows = nodes.rows()
        out = Victims(n, rows, self.version.minor)
        lower = (rows.priority < pod.priority).nonzero()[0]  # node-major, each node's pod order
        # each node's lower-priority pods by importance (``importance_key``: priority
        # descending, then from 1.15 the earlier start; ties keep the node's pod order)
        order = lower[_stable_order(rows.node[lower], -rows.priority[lower],
                                    rows.start[lower] if start_time_orders_victims(v) else None)]
        counts = np.bincount(rows.node[order], minlength=n)
        first = np.cumsum(counts) - counts
        violating = np.zeros(len(order), bool)
        if pdbs:
            for k in np.flatnonzero(counts).tolist():
                seg = slice(int(first[k]), int(first[k] + counts[k]))
                pods = [rows.pods[r] for r in order[seg].tolist()]
                viol = {id(p) for p in filter_pods_with_pdb_violation(pods, pdbs, v)[0]}
                violating[seg] = [id(p) in viol for p in pods]
        # reprieve order: PDB-violating pods first, each group by importance
        if violating.any():
            reprieve = _stable_order(rows.node[order], ~violating)
            order, violating = order[reprieve], violating[reprieve]
        num_violating = np.bincount(rows.node[order][violating], minlength=n)
        mixed = (num_violating > 0) & (num_violating < counts)
        nodes.remove(lower)
        done = np.zeros(n, bool)
        decided = nodes.decided_nodes()
        if decided is not None:
            # nodes that fail with every lower-priority pod removed, found without rows
            ks, res, failed = decided
            out.put(ks, res, failed)
            done[ks[failed]] = True
        if short_circuits_without_potential_victims(v):
            empty = ((counts == 0) & ~done).nonzero()[0]
            if len(empty):
                out.set(empty, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS_REASON,)))
                done[empty] = True
        live = (~done).nonzero()[0]
        if len(live):
            res = nodes.filter(live)
            failed = res.ids.nonzero()[0]
            out.put(live, res, failed)
            done[live[failed]] = True
        is_victim = np.zeros(len(order), bool)
        step = 0
        while True:
            active = (~done & (counts > step)).nonzero()[0]
            if not len(active):
                break
            # add each node's next pod back; where the node no longer fits, it stays out
            at = first[active] + step
            res = nodes.try_add(active, order[at])
            failed = res.ids.nonzero()[0]
            # a node that no longer fits keeps the pod out: a filter's Error status too
            # (reprievePod reads only status.IsSuccess())
            is_victim[at[failed]] = True
            step += 1
        keep = is_victim & ~done[rows.node[order]]
        victims, victim_violating = order[keep], violating[keep]
        vnode = rows.node[victims]
        if resorts_victims_after_reprieve(v) and mixed.any():
            # by importance where both groups were non-empty (stable: ties keep reprieve order)
            resort = mixed[vnode]
            prio = np.where(resort, -rows.priority[victims], 0)
            start = np.where(resort, rows.start[victims], 0.0)
            again = np.lexsort((np.arange(len(victims)), start, prio, vnode))
            victims, victim_violating, vnode = victims[again], victim_violating[again], vnode[again]
        out.finish(victims, vnode, victim_violating)
        return out


def _stable_order(*keys: np.ndarray | None) -> np.ndarray:
    """The indexes that sort by ``keys`` (the first the primary key; None skipped),
    equal keys keeping their index order: ``np.lexsort`` with the index as the last
    key, or the identity when the keys are already in order (checked pairwise)."""
    ks = [k for k in keys if k is not None]
    n = len(ks[0])
    if n > 1:
        # pair j (index j, j + 1) is in order when some key is less and every key
        # before it equal, or every key is equal
        less = np.zeros(n - 1, bool)
        equal = np.ones(n - 1, bool)
        for k in ks:
            a, b = k[:-1], k[1:]
            less |= equal & (a < b)
            equal &= a == b
        if not (less | equal).all():
            return np.lexsort((np.arange(n), *reversed(ks)))
    return np.arange(n)


# ---- the results of a dry run -------------------------------------------------------------


class Victims:
    """SelectVictimsOnNode's results for a set of nodes: per node a status (``ids``
    into ``table``; 0 is Success) or the SchedulingError its filtering raised
    (``errors``), and for the nodes that succeed the victims (rows of ``rows``,
    node-major, each node's in the order returned) and their ``metrics``."""

    def __init__(self, n: int, rows: PodRows, minor: int) -> None:
        self.n = n
        self.minor = minor  # the version whose words an Error takes
        self.rows = rows
        self.ids = np.zeros(n, np.intp)
        self.table: list[Status] = [SUCCESS]
        self.errors: dict[int, SchedulingError] = {}
        self.victims = np.zeros(0, np.intp)
        self.first = np.zeros(n, np.intp)
        self.metrics: VictimMetrics = None  # type: ignore[assignment]  # set before it is read

    def set(self, nodes: np.ndarray, status: Status) -> None:
        self.ids[nodes] = len(self.table)
        self.table.append(status)

    def put(self, nodes: np.ndarray, res: Filtered, failed: np.ndarray, keep_status: bool = True) -> list[int]:
        """Record the statuses ``res`` gave the nodes ``nodes[failed]``: an Error as the
        node's SchedulingError (always), any other status when ``keep_status``. Returns
        the nodes with an Error."""
        errs = [j for j, st in enumerate(res.table) if st.code == Code.ERROR]
        errors: list[int] = []
        if errs:
            for j in failed[np.isin(res.ids[failed], errs)].tolist():
                k = int(nodes[j])
                try:
                    raise_error_of(res, j, self.minor)
                except SchedulingError as e:
                    self.errors[k] = e
                errors.append(k)
        if keep_status:
            offset = len(self.table) - 1
            self.table.extend(res.table[1:])
            self.ids[nodes[failed]] = res.ids[failed] + offset
        return errors

    def finish(self, victims: np.ndarray, vnode: np.ndarray, violating: np.ndarray) -> None:
        rows = self.rows
        n = self.n
        self.victims = victims
        count = np.bincount(vnode, minlength=n).astype(np.int64)
        self.first = np.cumsum(count) - count
        prio = rows.priority[victims]
        first_priority = np.zeros(n, np.int64)
        priority_sum = np.zeros(n, np.int64)
        earliest = np.full(n, np.inf, np.float64)
        has = count > 0
        if len(victims):
            # each node's victims are one run (node-major): reduced per run, in int64
            starts = self.first[has]
            first_priority[has] = prio[starts]
            priority_sum[has] = np.add.reduceat(prio + (MAX_INT32 + 1), starts)
            top = np.maximum.reduceat(prio, starts)
            at_top = prio == np.repeat(top, count[has])
            earliest[has] = np.minimum.reduceat(np.where(at_top, rows.start[victims], np.inf), starts)
        self.metrics = VictimMetrics(np.bincount(vnode[violating], minlength=n).astype(np.int64), count,
                                     first_priority, priority_sum, earliest)

    def victims_of(self, k: int) -> list[Pod]:
        start = int(self.first[k])
        pods = self.rows.pods
        return [pods[r] for r in self.victims[start:start + int(self.metrics.count[k])].tolist()]

    def node(self, k: int) -> tuple[list[Pod], int, Status] | SchedulingError:
        if k in self.errors:
            return self.errors[k]
        st = self.table[int(self.ids[k])]
        if not st.is_success():
            return [], 0, st
        return self.victims_of(k), int(self.metrics.violations[k]), st


class DryRun:
    """What DryRunPreemption found: the candidates ``names`` (non-violating ones first,
    each kind in the order visited) with their victims' ``metrics``; ``errors``, the
    messages of the visited nodes that ended with an Error status; and, made when
    asked, the candidates' victims and PDB violations and the statuses of the visited
    nodes that are not candidates. It keeps only those (the outcome of every cycle of
    a sequence keeps it), not the batches' pods."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.errors: list[str] = []
        self.metrics: VictimMetrics = None  # type: ignore[assignment]  # set before it is read
        # per kind, per batch: (names, victims flat, offsets, metrics) of its candidates
        self._kinds: list[list] = [[], []]
        # per batch: the visited nodes that are not candidates (their names, whether
        # each had no victims, their status ids, the batch's status table)
        self._rest: list = []

    def add(self, names: list[str], res: Victims, accepted: np.ndarray, zero: np.ndarray, ok: np.ndarray) -> None:
        m = len(names)
        violating = res.metrics.violations[:m] > 0
        for kind, mask in ((0, accepted & ~violating), (1, accepted & violating)):
            idx = mask.nonzero()[0]
            if not len(idx):
                continue
            counts = res.metrics.count[idx]
            ends = np.cumsum(counts)
            at = np.repeat(res.first[idx] - (ends - counts), counts) + np.arange(int(ends[-1]) if len(ends) else 0)
            self._kinds[kind].append(([names[j] for j in idx.tolist()], res.rows.pods[res.victims[at]],
                                      ends - counts, res.metrics.take(idx)))
        for k in zero.nonzero()[0].tolist():
            self.errors.append(f'expected at least one victim pod on node "{names[k]}"')
        table = res.table
        errs = [j for j, st in enumerate(table) if st.code == Code.ERROR]
        if errs:
            for k in (~ok & ~zero & np.isin(res.ids[:m], errs)).nonzero()[0].tolist():
                self.errors.append(table[int(res.ids[k])].message)
        rest = (~accepted[:m]).nonzero()[0]
        if len(rest):
            # their names and statuses made when asked (``not_candidates``)
            self._rest.append((names, rest, zero[rest], res.ids[rest], table))

    def finish(self) -> None:
        parts = self._kinds[0] + self._kinds[1]
        self._parts = parts
        self.names = [n for part in parts for n in part[0]] if len(parts) > 1 else (list(parts[0][0]) if parts else [])
        self.metrics = VictimMetrics.concat([part[3] for part in parts]) if parts else None  # type: ignore[assignment]  # no candidate: never read
        sizes = np.array([len(part[0]) for part in parts], np.intp)
        self._starts = np.cumsum(sizes) - sizes

    def victims(self, j: int) -> list[Pod]:
        """The victims of the ``j``-th candidate."""
        b = int(np.searchsorted(self._starts, j, side="right")) - 1
        _, pods, offsets, metrics = self._parts[b]
        k = j - int(self._starts[b])
        start = int(offsets[k])
        return pods[start:start + int(metrics.count[k])].tolist()

    def candidates(self) -> dict[str, list[Pod]]:
        return {n: self.victims(j) for j, n in enumerate(self.names)}

    def violations(self) -> dict[str, int]:
        return dict(zip(self.names, self.metrics.violations.tolist())) if self.names else {}

    def not_candidates(self) -> dict[str, Status]:
        out: dict[str, Status] = {}
        for names, rest, zero, ids, table in self._rest:
            for name, z, i in zip([names[j] for j in rest.tolist()], zero.tolist(), ids.tolist()):
                out[name] = (Status(Code.ERROR, (f'expected at least one victim pod on node "{name}"',))
                             if z else table[i])
        return out


# ---- the nodes of a dry run ---------------------------------------------------------------


class _DryRunNodes:
    """The nodes of a dry run: their pods as rows, removing and adding pods, filtering
    some. Nodes are indexes into the set, pods rows of ``rows()``."""

    def __len__(self) -> int:
        raise NotImplementedError

    def rows(self) -> PodRows:
        raise NotImplementedError

    def decided_nodes(self) -> tuple[np.ndarray, Filtered, np.ndarray] | None:
        """Nodes whose result is known without their pods as rows (none are rows of
        ``rows()``): the nodes, the filter's result for them, and which of them failed
        (those are decided, with that status), or None."""
        return None

    def remove(self, rows: np.ndarray) -> None:
        """Remove the pods ``rows`` (in that order) from their nodes."""
        raise NotImplementedError

    def filter(self, ks: np.ndarray) -> Filtered:
        raise NotImplementedError

    def try_add(self, ks: np.ndarray, rows: np.ndarray) -> Filtered:
        """Add pod ``rows[j]`` to node ``ks[j]`` and filter those nodes; a node that does
        not pass keeps the pod removed."""
        raise NotImplementedError


class _InfoNodes(_DryRunNodes):
    """Copies of NodeInfos; PreFilter's RemovePod / AddPod run when they change state."""

    def __init__(self, fwk, state: CycleState, pod: Pod, infos: list[NodeInfo]) -> None:
        self.fwk, self.state, self.pod, self.infos = fwk, state, pod, infos
        self.extensions = not fwk.pre_filter_state_is_shared(state)
        cache = fwk.handle.snapshot.requests
        self._rows = PodRows.concat([PodRows.of(list(info.pods.values()), cache) for info in infos])

    def __len__(self) -> int:
        return len(self.infos)

    def rows(self) -> PodRows:
        return self._rows

    def _remove(self, k: int, p: Pod) -> None:
        self.infos[k].remove_pod(p)
        if self.extensions:
            self.fwk.run_pre_filter_remove_pod(self.state, self.pod, p, self.infos[k])

    def remove(self, rows: np.ndarray) -> None:
        pods, node = self._rows.pods, self._rows.node
        for r in rows.tolist():
            self._remove(int(node[r]), pods[r])

    def filter(self, ks: np.ndarray) -> Filtered:
        nodes = NodeSet.of(*[self.infos[k] for k in ks.tolist()])
        return self.fwk.run_filter_plugins_with_nominated_pods_on_nodes(self.state, self.pod, nodes)

    def try_add(self, ks: np.ndarray, rows: np.ndarray) -> Filtered:
        pods = self._rows.pods
        for k, r in zip(ks.tolist(), rows.tolist()):
            self.infos[k].add_pod(pods[r])
            if self.extensions:
                self.fwk.run_pre_filter_add_pod(self.state, self.pod, pods[r], self.infos[k])
        out = self.filter(ks)
        for j in np.flatnonzero(out.ids).tolist():
            self._remove(int(ks[j]), pods[int(rows[j])])
        return out


class _ColumnNodes(_DryRunNodes):
    """Nodes of the snapshot with pods removed or added as changes to its columns
    (requested per resource, pod count, non-zero requests), for filters that read only
    columns (``Framework.filters_read_only_columns``, which implies a shared PreFilter
    state). Pods of equal or higher priority nominated to a node are added for a first
    filter pass, and the node must pass both, as RunFilterPluginsWithNominatedPods."""

    def __init__(self, fwk, state: CycleState, pod: Pod, snapshot, names: list[str],
                 positions: np.ndarray | None = None) -> None:
        self.fwk, self.state, self.pod, self.snapshot = fwk, state, pod, snapshot
        self.names = names
        if positions is None:
            position = snapshot.position
            positions = np.array([position[m] for m in names], np.intp)
        self.positions = pos = positions
        # the nodes' columns as changed: pod count, non-zero cpu / memory, requested per
        # resource of the pods' requests
        self.count = snapshot.pod_count[pos]
        self.cpu = snapshot.non_zero_requested("cpu")[pos]
        self.memory = snapshot.non_zero_requested("memory")[pos]
        self.requested = {r: snapshot.requested(r)[pos] for r in snapshot.pod_requests()}
        # the nodes with pods nominated to them that the filters make room for
        self.has_nominated = fwk.has_nominated(pod, self.positions)
        self.nominated = bool(self.has_nominated.any())
        self.decided, self.decided_status, self.decided_failed = self._fail_with_nominated()
        if len(self.decided):
            # the decided nodes' pods are not rows: ``rows()`` has only the others'
            rest = np.ones(len(pos), bool)
            rest[self.decided[self.decided_failed]] = False
            kept = rest.nonzero()[0]
            rows = snapshot.pod_rows(pos[kept])
            rows.node = kept[rows.node]
            self._rows = rows
        else:
            self._rows = snapshot.pod_rows(pos)

    def _fail_with_nominated(self) -> tuple[np.ndarray, Filtered, np.ndarray]:
        """The nodes that fail SelectVictimsOnNode's filter (every lower-priority pod
        removed, RunFilterPluginsWithNominatedPods' first pass: the nominated pods of
        equal or higher priority added), found from the columns and each node's sums of
        its lower-priority pods, without their pods as rows: the nodes with such pods
        and pods nominated to them that the filter tried (their columns now without the
        lower-priority pods), its result, and which of them failed (not with an Error,
        which the ordinary path reports). Their status is the one the ordinary path
        would record (its first filter pass); a sequence's nominated preemptors' nodes,
        which no longer fit, cost no rows, removal or reprieve."""
        none = np.zeros(0, np.intp)
        if not self.nominated:
            return none, Filtered.passing(0), none
        sub = self.has_nominated.nonzero()[0]
        below = self.snapshot.pod_sums_below(self.positions[sub], self.pod.priority)
        has = below.count > 0
        if not has.any():
            # no lower-priority pods: no victims (the ordinary path's short-circuit)
            return none, Filtered.passing(0), none
        ks = sub[has]
        below = below.take(has.nonzero()[0])
        self.count[ks] -= below.count
        self.cpu[ks] -= below.cpu
        self.memory[ks] -= below.memory
        for res, col in below.requests.items():
            self.requested[res][ks] -= col
        first = self._filter(ks, None, self.fwk.nominated_sums(self.pod, self.positions[ks]))[0]
        errs = [j for j, st in enumerate(first.table) if st.code == Code.ERROR]
        failed = first.ids != 0
        if errs:
            failed &= ~np.isin(first.ids, errs)
        # the nodes that passed (or raised) go the ordinary way: their lower-priority
        # pods back on the columns, as ``remove`` takes them off again
        back = ~failed
        if back.any():
            self.count[ks[back]] += below.count[back]
            self.cpu[ks[back]] += below.cpu[back]
            self.memory[ks[back]] += below.memory[back]
            for res, col in below.requests.items():
                self.requested[res][ks[back]] += col[back]
        return ks, first, failed.nonzero()[0]

    def __len__(self) -> int:
        return len(self.names)

    def decided_nodes(self) -> tuple[np.ndarray, Filtered, np.ndarray] | None:
        return (self.decided, self.decided_status, self.decided_failed) if len(self.decided_failed) else None

    def rows(self) -> PodRows:
        return self._rows

    def _change(self, ks: np.ndarray, rows: np.ndarray, sign: int) -> None:
        """Add (sign 1) or remove (-1) the pods ``rows`` on the nodes ``ks``: distinct
        nodes, or (repeats) in non-decreasing order, each node's pods summed in int64
        (``try_add`` keeps the columns it filtered instead)."""
        r = self._rows
        if len(ks) > 1 and not (ks[1:] != ks[:-1]).all():
            starts = np.concatenate(([0], (ks[1:] != ks[:-1]).nonzero()[0] + 1))
            counts = np.diff(np.append(starts, len(ks)))
            ks = ks[starts]
            self.count[ks] += sign * counts
            self.cpu[ks] += sign * np.add.reduceat(r.cpu[rows], starts)
            self.memory[ks] += sign * np.add.reduceat(r.memory[rows], starts)
            for res, col in r.requests.items():
                self.requested[res][ks] += sign * np.add.reduceat(col[rows], starts)
            return
        self.count[ks] += sign
        self.cpu[ks] += sign * r.cpu[rows]
        self.memory[ks] += sign * r.memory[rows]
        for res, col in r.requests.items():
            self.requested[res][ks] += sign * col[rows]

    def remove(self, rows: np.ndarray) -> None:
        """``rows`` in row order (node-major)."""
        self._change(self._rows.node[rows], rows, -1)

    def filter(self, ks: np.ndarray, rows: np.ndarray | None = None) -> Filtered:
        """Filter the nodes ``ks`` as changed, with pod ``rows[j]`` on node ``ks[j]`` when
        given: first with their nominated pods added (nodes that have some), then without.
        With ``rows`` (a reprieve step) the nodes passed every plugin before, with their
        pods removed: the plugins that ignore a node's pods are not run again."""
        return self._filter_with_nominated(ks, rows)[0]

    def _filter_with_nominated(self, ks: np.ndarray, rows: np.ndarray | None = None) -> tuple[Filtered, dict]:
        """``filter``, and the nodes' columns it filtered without nominated pods (with
        ``rows``; empty without)."""
        sub = self.has_nominated[ks].nonzero()[0] if self.nominated else ks[:0]
        if not len(sub):
            return self._filter(ks, rows)
        first = self._filter(ks[sub], None if rows is None else rows[sub],
                             self.fwk.nominated_sums(self.pod, self.positions[ks[sub]]))[0]
        failed = first.ids.nonzero()[0]
        if rows is None and len(failed):
            # the first filter of the dry run: a node that fails with its nominated pods
            # is not filtered again without them (RunFilterPluginsWithNominatedPods
            # returns the first pass's status), which spares the nodes of a sequence's
            # waiting preemptors a second pass
            rest = np.ones(len(ks), bool)
            rest[sub[failed]] = False
            at = rest.nonzero()[0]
            plain = self._filter(ks[at])[0] if len(at) else Filtered.passing(0)
            ids = np.zeros(len(ks), np.intp)
            ids[at] = plain.ids
            columns: dict = {}
        else:
            plain, columns = self._filter(ks, rows)
            if not len(failed):
                return plain, columns
            ids = plain.ids.copy()
        table = list(plain.table)
        offset = len(table) - 1
        table.extend(first.table[1:])
        ids[sub[failed]] = first.ids[failed] + offset
        raised = dict(plain.raised)
        raised.update({k + offset: e for k, e in first.raised.items()})
        return Filtered(ids, table, raised), columns

    def _filter(self, ks: np.ndarray, rows: np.ndarray | None = None,
                extra: PodSums | None = None) -> tuple[Filtered, dict]:
        """Filter the nodes ``ks`` (with pod ``rows[j]`` on node ``ks[j]``, and ``extra``
        added, when given); with the columns filtered, but ``extra``."""
        snap = self.snapshot
        pos = self.positions[ks]
        count = self.count[ks]
        cpu = self.cpu[ks]
        memory = self.memory[ks]
        requested = {res: col[ks] for res, col in self.requested.items()}
        if rows is not None:
            r = self._rows
            count = count + 1
            cpu = cpu + r.cpu[rows]
            memory = memory + r.memory[rows]
            for res, col in r.requests.items():
                requested[res] = requested[res] + col[rows]
        overrides: dict = {("pod_count",): count, ("non_zero", "cpu"): cpu, ("non_zero", "memory"): memory}
        for res, col in requested.items():
            overrides[("requested", res)] = col
        nodes = NodeSet(snap, pos, overrides=overrides)
        if extra is not None:
            nodes = nodes.with_sums(extra)
        return (self.fwk.run_filter_plugins_on_nodes(self.state, self.pod, nodes, passed_once=rows is not None),
                overrides)

    def try_add(self, ks: np.ndarray, rows: np.ndarray) -> Filtered:
        out, columns = self._filter_with_nominated(ks, rows)
        # the nodes that pass keep the pod: their columns as filtered
        ok = (out.ids == 0).nonzero()[0]
        k = ks[ok]
        self.count[k] = columns[("pod_count",)][ok]
        self.cpu[k] = columns[("non_zero", "cpu")][ok]
        self.memory[k] = columns[("non_zero", "memory")][ok]
        for res, col in self.requested.items():
            col[k] = columns[("requested", res)][ok]
        return out
