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

Extenders in kspread's profile have no ProcessPreemption verb, so the extender step
never changes the candidates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kspread.engine.framework.interface import Plugin, PostFilterPlugin
from kspread.engine.framework.preemption import PickStep, PreemptionOutcome
from kspread.engine.framework.registry import register
from kspread.engine.framework.runtime import raise_error_of
from kspread.engine.framework.status import SUCCESS, Code, CycleState, SchedulingError, Status
from kspread.engine.labels import as_selector
from kspread.engine.model import PREEMPT_NEVER, Pod, PodDisruptionBudget
from kspread.engine.snapshot import NodeInfo, NodeSet
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
    nodes = list(nodes_to_victims)
    steps: list[PickStep] = []
    if not nodes:
        return [], steps
    if picks_zero_victim_node_first(version):
        empty = [n for n in nodes if not nodes_to_victims[n][0]]
        if empty:
            steps.append(PickStep(ZERO_VICTIMS_FIRST, {n: len(nodes_to_victims[n][0]) for n in nodes}, empty))
            return empty, steps

    def highest(n: str) -> int:
        victims = nodes_to_victims[n][0]
        if not victims:
            raise SchedulingError(
                f"kube-scheduler {version} panics here: candidate {n} has no victims and "
                "pickOneNodeForPreemption reads victims[0] (index out of range, issue #101548; "
                "fixed in 1.22 by PR #101560)",
                "DefaultPreemption",
            )
        return victims[0].priority

    # (name, value as reported, True when the smallest value wins)
    criteria: list = [
        (FEWEST_PDB_VIOLATIONS, lambda n: nodes_to_victims[n][1], True),
        (LOWEST_HIGHEST_VICTIM_PRIORITY, highest, True),
        (SMALLEST_PRIORITY_SUM, lambda n: sum(v.priority + MAX_INT32 + 1 for v in nodes_to_victims[n][0]), True),
        (FEWEST_VICTIMS, lambda n: len(nodes_to_victims[n][0]), True),
    ]
    if start_time_orders_victims(version):
        criteria.append((LATEST_START_TIME, lambda n: earliest_start_of_top_victims(nodes_to_victims[n][0]), False))
    for name, value, smallest in criteria:
        values = {n: value(n) for n in nodes}
        best = min(values.values()) if smallest else max(values.values())
        nodes = [n for n in nodes if values[n] == best]
        steps.append(PickStep(name, values, list(nodes)))
        if len(nodes) == 1:
            break
    return nodes, steps


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
        ok, msg = self.pod_eligible_to_preempt_others(pod, statuses)
        if not ok:
            return PreemptionOutcome(None), Status(Code.UNSCHEDULABLE, (msg,))
        potential = [n for n, st in statuses.items() if st.code != Code.UNSCHEDULABLE_AND_UNRESOLVABLE]
        if not potential:
            return (PreemptionOutcome(None, clear_nomination=True),
                    Status(Code.UNSCHEDULABLE, ("Preemption is not helpful for scheduling",)))
        dry_run: dict[str, Status] = {}
        candidates, errors = self.dry_run_preemption(state, pod, potential, dry_run)
        outcome = PreemptionOutcome(None, candidates={n: list(v) for n, (v, _) in candidates.items()},
                                    potential=potential, dry_run=dry_run,
                                    pdb_violations={n: k for n, (_, k) in candidates.items()},
                                    max_candidates=self._limit(len(potential)))
        if not candidates:
            outcome.clear_nomination = clears_nomination_without_candidates(self.version) and not errors
            if errors:
                # upstream returns the aggregated error as an Error status: the pod stays
                # pending and its nomination unchanged
                return outcome, Status(Code.ERROR, tuple(errors))
            return outcome, Status(Code.UNSCHEDULABLE, ("preemption: no preemption candidate",))
        if len(candidates) == 1:
            best = list(candidates)
        else:
            best, outcome.pick_steps = pick_one_node_steps(candidates, self.version)
            last = outcome.pick_steps[-1].criterion
            outcome.decided_by = last if len(best) == 1 or last == ZERO_VICTIMS_FIRST else TIE
        node = best[0]
        outcome.nominated_node = node
        outcome.victims = list(candidates[node][0])
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

    def dry_run_preemption(
        self, state: CycleState, pod: Pod, potential: list[str], not_candidates: dict[str, Status] | None = None
    ) -> tuple[dict[str, tuple[list[Pod], int]], list[str]]:
        """Candidates (node -> (victims, PDB violations)), non-violating ones first, and
        the errors of nodes whose dry run failed with an Error status. ``not_candidates``
        receives the status of every visited node that is not a candidate (Success for
        a node whose victims came after its kind's list was full)."""
        pdbs = self.handle.cluster.pdbs
        fwk = self.handle.framework
        assert fwk is not None
        n = len(potential)
        limit = self._limit(n)
        if not_candidates is None:
            not_candidates = {}
        non_violating: dict[str, tuple[list[Pod], int]] = {}
        violating: dict[str, tuple[list[Pod], int]] = {}
        errors: list[str] = []
        # Nodes are tried in order (offset 0) until enough candidates are found. When no
        # PreFilter state changes as pods are removed or added, a batch of nodes runs
        # SelectVictimsOnNode together (one cycle state for all); otherwise one node at
        # a time, each with its own copy of the state.
        shared = fwk.pre_filter_state_is_shared(state)
        columns = shared and fwk.filters_read_only_columns(state, pod)
        i = 0
        while i < n:
            # as many nodes as candidates are still wanted (at least 16)
            batch = max(limit - len(non_violating) - len(violating), 16) if shared else 1
            names = potential[i:i + batch]
            i += len(names)
            outs = self._select_victims_batch(state.clone(), pod, names, pdbs, columns)
            for name, out in zip(names, outs):
                if isinstance(out, SchedulingError):
                    raise out
                victims, violations, st = out
                if st.is_success() and (victims or not rejects_zero_victim_candidates(self.version)):
                    target = non_violating if violations == 0 else violating
                    if len(target) < limit:
                        target[name] = (victims, violations)
                    else:
                        not_candidates[name] = st
                    if non_violating and len(non_violating) + len(violating) >= limit:
                        return {**non_violating, **violating}, errors
                    continue
                if st.is_success():
                    st = Status(Code.ERROR, (f'expected at least one victim pod on node "{name}"',))
                if st.code == Code.ERROR:
                    errors.append(st.message)
                not_candidates[name] = st
        return {**non_violating, **violating}, errors

    def _select_victims_batch(self, state: CycleState, pod: Pod, names: list[str],
                              pdbs: Sequence[PodDisruptionBudget], columns: bool) -> list:
        """SelectVictimsOnNode for the nodes ``names``: on the snapshot's columns where
        every filter that runs reads only those (``columns``), else on copies of the
        NodeInfos."""
        fwk = self.handle.framework
        assert fwk is not None
        snapshot = self.handle.snapshot
        plain = list(range(len(names))) if columns else []
        out: list = [None] * len(names)
        if plain:
            col = _ColumnNodes(fwk, state, pod, snapshot, [names[k] for k in plain])
            for k, r in zip(plain, self._select_victims(pod, col, pdbs)):
                out[k] = r
        rest = [k for k in range(len(names)) if out[k] is None]
        if rest:
            infos = _InfoNodes(fwk, state, pod, [snapshot.get(names[k]).clone() for k in rest])
            for k, r in zip(rest, self._select_victims(pod, infos, pdbs)):
                out[k] = r
        return out

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
        return self._select_victims(pod, _InfoNodes(fwk, state, pod, infos), pdbs)

    def _select_victims(self, pod: Pod, nodes: _DryRunNodes, pdbs: Sequence[PodDisruptionBudget]
                        ) -> list[tuple[list[Pod], int, Status] | SchedulingError]:
        """``SelectVictimsOnNode`` on a set of nodes, filtered together at each step:
        remove every lower-priority pod, filter; then reprieve the pods one by one in
        order (PDB-violating ones first, each group by importance), each step adding
        back every node's next pod and filtering those nodes at once; a pod whose node
        no longer fits is a victim. ``nodes`` holds the nodes' state (copies of
        NodeInfos, or the snapshot's columns with the changes); more than one node
        shares one cycle state only when no PreFilter state changes as pods are removed
        or added (``Framework.pre_filter_state_is_shared``). A node whose filtering
        raised gets its SchedulingError instead of a result.

        Victims are returned in reprieve order: PDB-violating ones first, each group by
        importance. From 1.29 (PR #128307, see ``resorts_victims_after_reprieve``) they
        are re-sorted by importance when both groups were non-empty, so ``victims[0]``
        is always the highest-priority victim; before, it could be a lower-priority
        violating pod, which pickOneNodeForPreemption's criterion 2 then reads."""
        v = self.version
        out: list = [None] * len(nodes)
        orders: dict[int, list[tuple[Pod, bool]]] = {}
        mixed: dict[int, bool] = {}
        live: list[int] = []
        for k in range(len(nodes)):
            potential = [p for p in nodes.pods(k) if p.priority < pod.priority]
            for p in potential:
                nodes.remove(k, p)
            if not potential and short_circuits_without_potential_victims(v):
                out[k] = ([], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS_REASON,)))
                continue
            potential.sort(key=lambda p: importance_key(p, v))
            violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs, v)
            orders[k] = [(p, True) for p in violating] + [(p, False) for p in non_violating]
            mixed[k] = bool(violating and non_violating)
            live.append(k)
        victims: dict[int, list[Pod]] = {k: [] for k in live}
        num_violating = dict.fromkeys(live, 0)
        if live:
            for k, st in zip(live, nodes.filter(live)):
                if isinstance(st, SchedulingError):
                    out[k] = st
                elif not st.is_success():
                    out[k] = ([], 0, st)
        step = 0
        while True:
            active = [k for k in live if out[k] is None and step < len(orders[k])]
            if not active:
                break
            # add each node's next pod back; where the node no longer fits, it stays out
            for k, st in zip(active, nodes.try_add(active, [orders[k][step][0] for k in active])):
                if isinstance(st, SchedulingError):
                    out[k] = st
                    continue
                if not st.is_success():
                    p, is_violating = orders[k][step]
                    victims[k].append(p)
                    if is_violating:
                        num_violating[k] += 1
            step += 1
        for k in live:
            if out[k] is None:
                if resorts_victims_after_reprieve(v) and mixed[k]:
                    victims[k].sort(key=lambda p: importance_key(p, v))
                out[k] = (victims[k], num_violating[k], SUCCESS)
        return out


# ---- the nodes of a dry run ---------------------------------------------------------------


def _statuses(res, n: int) -> list[Status | SchedulingError]:
    out: list[Status | SchedulingError] = []
    for j in range(n):
        st = res.status(j)
        if st.code == Code.ERROR:
            try:
                raise_error_of(res, j)
            except SchedulingError as e:
                out.append(e)
                continue
        out.append(st)
    return out


class _DryRunNodes:
    """The nodes of a dry run: their pods, removing and adding pods, filtering some."""

    def __len__(self) -> int:
        raise NotImplementedError

    def pods(self, k: int) -> list[Pod]:
        raise NotImplementedError

    def remove(self, k: int, p: Pod) -> None:
        raise NotImplementedError

    def filter(self, ks: list[int]) -> list[Status | SchedulingError]:
        raise NotImplementedError

    def try_add(self, ks: list[int], pods: list[Pod]) -> list[Status | SchedulingError]:
        """Add ``pods[j]`` to node ``ks[j]`` and filter those nodes; a node that does not
        pass (or raised) gets the pod removed again."""
        raise NotImplementedError


class _InfoNodes(_DryRunNodes):
    """Copies of NodeInfos; PreFilter's RemovePod / AddPod run when they change state."""

    def __init__(self, fwk, state: CycleState, pod: Pod, infos: list[NodeInfo]) -> None:
        self.fwk, self.state, self.pod, self.infos = fwk, state, pod, infos
        self.extensions = not fwk.pre_filter_state_is_shared(state)

    def __len__(self) -> int:
        return len(self.infos)

    def pods(self, k: int) -> list[Pod]:
        return list(self.infos[k].pods.values())

    def remove(self, k: int, p: Pod) -> None:
        self.infos[k].remove_pod(p)
        if self.extensions:
            self.fwk.run_pre_filter_remove_pod(self.state, self.pod, p, self.infos[k])

    def filter(self, ks: list[int]) -> list[Status | SchedulingError]:
        nodes = NodeSet.of(*[self.infos[k] for k in ks])
        res = self.fwk.run_filter_plugins_with_nominated_pods_on_nodes(self.state, self.pod, nodes)
        return _statuses(res, len(ks))

    def try_add(self, ks: list[int], pods: list[Pod]) -> list[Status | SchedulingError]:
        for k, p in zip(ks, pods):
            self.infos[k].add_pod(p)
            if self.extensions:
                self.fwk.run_pre_filter_add_pod(self.state, self.pod, p, self.infos[k])
        out = self.filter(ks)
        for k, p, st in zip(ks, pods, out):
            if isinstance(st, SchedulingError) or not st.is_success():
                self.remove(k, p)
        return out


class _ColumnNodes(_DryRunNodes):
    """Nodes of the snapshot with pods removed or added as changes to its columns
    (requested per resource, pod count, non-zero requests), for filters that read only
    columns (``Framework.filters_read_only_columns``, which implies a shared PreFilter
    state). Pods of equal or higher priority nominated to a node are added for a first
    filter pass, and the node must pass both, as RunFilterPluginsWithNominatedPods."""

    def __init__(self, fwk, state: CycleState, pod: Pod, snapshot, names: list[str]) -> None:
        self.fwk, self.state, self.pod, self.snapshot = fwk, state, pod, snapshot
        self.names = names
        self.positions = np.array([snapshot.position[m] for m in names], np.intp)
        self.delta: list[dict[str, int]] = [{} for _ in names]  # resource -> change
        self.count = [0] * len(names)
        self.cpu = [0] * len(names)
        self.memory = [0] * len(names)
        self.resources: set[str] = set()
        nominator = fwk.handle.nominator
        on = nominator.nodes() if nominator.has_any() else set()
        self.nominated: list[list[Pod]] = [fwk.nominated_pods_for(pod, m) if m in on else [] for m in names]

    def __len__(self) -> int:
        return len(self.names)

    def pods(self, k: int) -> list[Pod]:
        return list(self.snapshot.get(self.names[k]).pods.values())

    def _change(self, k: int, p: Pod, sign: int) -> None:
        e = self.snapshot.requests.get(p)
        d = self.delta[k]
        for r, v in e.requests.items():
            d[r] = d.get(r, 0) + sign * v
            self.resources.add(r)
        self.count[k] += sign
        self.cpu[k] += sign * e.cpu
        self.memory[k] += sign * e.memory

    def remove(self, k: int, p: Pod) -> None:
        self._change(k, p, -1)

    def filter(self, ks: list[int], pods: list[Pod] | None = None) -> list[Status | SchedulingError]:
        """Filter the nodes ``ks`` as changed, with ``pods[j]`` on node ``ks[j]`` when
        given: first with their nominated pods added (nodes that have some), then without."""
        with_nominated = [j for j, k in enumerate(ks) if self.nominated[k]]
        plain = self._filter(ks, pods)
        if not with_nominated:
            return plain
        sub = [ks[j] for j in with_nominated]
        extra = [list(self.nominated[k]) + ([pods[j]] if pods is not None else [])
                 for j, k in zip(with_nominated, sub)]
        first = self._filter(sub, None, extra)
        for j, st in zip(with_nominated, first):
            if isinstance(st, SchedulingError) or not st.is_success():
                plain[j] = st
        return plain

    def _filter(self, ks: list[int], pods: list[Pod] | None = None,
                extra: list[list[Pod]] | None = None) -> list[Status | SchedulingError]:
        snap = self.snapshot
        if pods is not None:
            extra = [[p] for p in pods]
        pos = self.positions[ks]
        count = [self.count[k] for k in ks]
        cpu = [self.cpu[k] for k in ks]
        memory = [self.memory[k] for k in ks]
        delta = [self.delta[k] for k in ks]
        if extra is not None:
            for j, added in enumerate(extra):
                for p in added:
                    e = snap.requests.get(p)
                    count[j] += 1
                    cpu[j] += e.cpu
                    memory[j] += e.memory
                    delta[j] = _plus(delta[j], e.requests)
                    self.resources.update(e.requests)
        overrides: dict = {
            ("pod_count",): snap.pod_count[pos] + np.array(count, np.int64),
            ("non_zero", "cpu"): snap.non_zero_requested("cpu")[pos] + np.array(cpu, np.int64),
            ("non_zero", "memory"): snap.non_zero_requested("memory")[pos] + np.array(memory, np.int64),
        }
        for r in self.resources:
            changes = np.array([d.get(r, 0) for d in delta], np.int64)
            overrides[("requested", r)] = snap.requested(r)[pos] + changes
        nodes = NodeSet(snap, pos, overrides=overrides)
        return _statuses(self.fwk.run_filter_plugins_on_nodes(self.state, self.pod, nodes), len(ks))

    def try_add(self, ks: list[int], pods: list[Pod]) -> list[Status | SchedulingError]:
        out = self.filter(ks, pods)
        for k, p, st in zip(ks, pods, out):
            if not isinstance(st, SchedulingError) and st.is_success():
                self._change(k, p, 1)
        return out


def _plus(delta: dict[str, int], requests: Mapping[str, int]) -> dict[str, int]:
    out = dict(delta)
    for r, v in requests.items():
        out[r] = out.get(r, 0) + v
    return out
