"""Resource scoring plugins: NodeResourcesLeastAllocated, NodeResourcesMostAllocated,
RequestedToCapacityRatio (plugins 1.18-1.22, priority functions LeastRequestedPriority,
MostRequestedPriority, RequestedToCapacityRatioPriority up to 1.17) and
NodeResourcesBalancedAllocation (BalancedResourceAllocation up to 1.17), plus the
scoring strategies NodeResourcesFit uses from 1.22 (``ScoringStrategy``).

None has a NormalizeScore: the Score result is the final 0..MaxNodeScore score
(0..10 before 1.17). The formulas and what each resource contributes are in
``kspread.engine.plugins.resource_allocation``; what changed by version in
``kspread.engine.versions.ResourceScoringFlags``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

# the strategy names and types: kspread.engine.apis.config (validated by kspread.engine.framework.args)
from kspread.engine.apis.config import (
    DEFAULT_RESOURCES,
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    ResourceSpec,
    Strategy,
)
from kspread.engine.framework.interface import Plugin, PreScorePlugin, ScorePlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, CycleState, Status
from kspread.engine.model import Node, Pod
from kspread.engine.plugins.resource_allocation import (
    UsageColumn,
    balanced_change_plain,
    balanced_change_row,
    balanced_change_scores,
    balanced_legacies,
    balanced_std_plain,
    balanced_std_row,
    balanced_std_scores,
    balanced_without_row,
    balanced_without_scores,
    is_scalar_resource,
    least_allocated_plain,
    least_requested_row,
    least_requested_scores,
    most_requested_scores,
    plain_columns,
    pod_scoring_requests,
    rtcr_combines,
    rtcr_resource_scores,
    usage_columns,
    usage_plan,
    usage_row,
    weighted_average_row,
    weighted_averages,
)
from kspread.engine.resources import LastRequests
from kspread.engine.snapshot import ColumnMemo, NodeSet
from kspread.engine.versions import Version, resource_scoring
from kspread.errors import CaseError


def rtcr_weighted(version: Version) -> bool:
    """RequestedToCapacityRatio takes per-resource weights (and drops resources scoring
    0 from the mean, rounded) from 1.16; before, ``(cpu + memory) / 2``."""
    return version.minor >= 16


def shape_messages_field_style(version: Version) -> bool:
    """Shape validation reports field paths ("utilization values must be sorted in
    increasing order") from 1.21; before, "Utilization[i]==x >= Utilization[j]==y"."""
    return version.minor >= 21


def score_columns(strategy: Strategy, cols: Sequence[UsageColumn], version: Version, n: int) -> np.ndarray:
    """The scores of ``strategy`` (a ``ScoringStrategy``) over the nodes' usage columns."""
    max_score = version.max_node_score
    flags = resource_scoring(version)
    if strategy.kind == LEAST_ALLOCATED:
        return weighted_averages(cols, lambda r, c: least_requested_scores(r, c, max_score), n)
    if strategy.kind == MOST_ALLOCATED:
        cap = flags.most_allocated_caps_requested
        return weighted_averages(cols, lambda r, c: most_requested_scores(r, c, max_score, cap), n)
    floor = flags.rtcr_utilization_floor
    return rtcr_combines(cols, lambda r, c: rtcr_resource_scores(strategy.shape, r, c, floor),
                         rtcr_weighted(version), n)


class _State:
    __slots__ = ("requests", "key", "none")

    def __init__(self, requests: list[int]) -> None:
        self.requests = requests
        self.key = tuple(requests)  # (the scores' memo key)
        self.none = all(r == 0 for r in requests)  # the pod requests none of the resources

    def clone(self) -> _State:
        return self


class ResourceScorer(Plugin, PreScorePlugin, ScorePlugin):
    """Score = ``strategy`` over the node's usage of ``strategy.resources`` with the pod,
    from the non-zero requests. PreScore computes the pod's requests once."""

    strategy: Strategy
    ignores_overhead = False  # NodeResourcesFit in 1.22-1.23 (fit_score_ignores_overhead)
    ignores_pod_level = False  # NodeResourcesFit from 1.33 (fit_score_ignores_pod_level)
    ignores_status = False  # NodeResourcesFit from 1.33 (fit_score_ignores_status)

    def __init__(self, args: Mapping[str, Any], handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        self._last_requests = LastRequests()  # PreScore's state of the last pod's requests
        self._memo = ColumnMemo()  # the scores over the snapshot's nodes, per pod requests
        self._plan: tuple | None = None  # (snapshot, requests, usage_plan) of the memo's rows

    def _state_key(self) -> str:
        return "PreScore" + self.name

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        _refuse_dra_backed(self, [r.name for r in self.strategy.resources])
        st = self._last_requests.get(pod)
        if not isinstance(st, _State):  # (read-only: kept for the next pod with the same requests)
            st = _State(self._requests(pod))
            self._last_requests.put(pod, st)
        state.write(self._state_key(), st)
        return SUCCESS

    def _requests(self, pod: Pod) -> list[int]:
        names = [r.name for r in self.strategy.resources]
        if self.ignores_overhead and pod.overhead:
            pod = dataclasses.replace(pod, overhead={})
        if self.ignores_pod_level and pod.level_requests:
            pod = dataclasses.replace(pod, level_requests={})
        if self.ignores_status and pod.resize is not None:
            pod = dataclasses.replace(pod, resize=None)
        return pod_scoring_requests(pod, self.version, names, False)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        st = state.get(self._state_key())
        assert isinstance(st, _State)
        requests = st.requests
        if self.strategy.kind == LEAST_ALLOCATED:
            # kept across cycles for the pod's requests (the strategy and version are the plugin's)
            snap = nodes.snapshot
            out = self._memo.over(nodes, st.key, lambda ns: self._scores(ns, requests),
                                  lambda i: self._least_row(snap, i, requests))
            if out is not None:
                return out
        return self._scores(nodes, requests)

    def _scores(self, nodes: NodeSet, requests: list[int]) -> np.ndarray:
        if self.strategy.kind == LEAST_ALLOCATED:  # (every node scoring every resource: fewer steps)
            plain = plain_columns(nodes, self.strategy.resources, requests, self.version, False)
            out = None if plain is None else least_allocated_plain(plain, self.version.max_node_score)
            if out is not None:
                return out
        cols = usage_columns(nodes, self.strategy.resources, requests, self.version, False)
        return score_columns(self.strategy, cols, self.version, len(nodes))

    def _least_row(self, snapshot, i: int, requests: list[int]) -> int | None:
        """LeastAllocated's score of the node at snapshot position ``i`` (``_scores``)."""
        plan = self._plan
        if plan is None or plan[0] is not snapshot or plan[1] != requests:
            plan = self._plan = (snapshot, list(requests),
                                 usage_plan(snapshot, self.strategy.resources, requests, self.version, False))
        usage = usage_row(plan[2], i)
        if usage is None:
            return None
        m = self.version.max_node_score
        return weighted_average_row([(least_requested_row(r, a, m), w, p) for w, a, r, _, p in usage])


def _refuse_dra_backed(plugin: Plugin, names: Sequence[str]) -> None:
    """Scoring a resource a DeviceClass backs (DRAExtendedResource: getDRAPreScoredParams
    counts the node's devices) is not modelled."""
    from kspread.engine.plugins.noderesources_fit import dra_backed_resources

    backed = dra_backed_resources(plugin.handle, plugin.handle.version)
    scored = [n for n in names if n in backed]
    if scored:
        # BalancedAllocation (v1.35.4, v1.36.2) makes no CEL cache for the classes' selectors
        # (NewFit alone does): upstream's Score dereferences it where a node's allocatable lacks
        # the resource and the class has a CEL selector (the v1.36.2 single-cycle oracle panics)
        crash = (" (upstream's BalancedAllocation has no CEL cache for the class's selectors and panics where a "
                 "node's allocatable lacks the resource)") if plugin.name == "NodeResourcesBalancedAllocation" else ""
        raise CaseError(f"{plugin.name} scores {', '.join(scored)}, an extended resource backed by devices "
                        "(DRAExtendedResource): its scoring from the node's devices is not modelled by kspread"
                        + crash, ["profile"])


def _resources_arg(plugin: Plugin) -> tuple[ResourceSpec, ...]:
    """The ``resources`` of the decoded args (kspread.engine.framework.args); cpu and
    memory when a profile built in code gives none."""
    return plugin.args.get("resources") or DEFAULT_RESOURCES


@register("NodeResourcesLeastAllocated", first=12, last=22)
class NodeResourcesLeastAllocated(ResourceScorer):
    """LeastRequestedPriority up to 1.17. Resources (``resources`` args) from 1.19."""

    def __init__(self, args: Mapping[str, Any], handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        self.strategy = Strategy(LEAST_ALLOCATED, _resources_arg(self))


@register("NodeResourcesMostAllocated", first=12, last=22)
class NodeResourcesMostAllocated(ResourceScorer):
    """MostRequestedPriority up to 1.17. Resources (``resources`` args) from 1.19."""

    def __init__(self, args: Mapping[str, Any], handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        self.strategy = Strategy(MOST_ALLOCATED, _resources_arg(self))


@register("RequestedToCapacityRatio", first=12, last=22)
class RequestedToCapacityRatio(ResourceScorer):
    """RequestedToCapacityRatioPriority up to 1.17 (``shape`` optional there: the
    priority's default shape {0: 10, 100: 0}; ``resources`` from 1.16); the plugin's
    RequestedToCapacityRatioArgs ``shape`` (required) and ``resources`` from 1.18.
    Decoded, validated and the shape scaled by kspread.engine.framework.args."""

    def __init__(self, args: Mapping[str, Any], handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        self.strategy = Strategy(REQUESTED_TO_CAPACITY_RATIO, _resources_arg(self), tuple(args["shape"]))


@register("NodeResourcesBalancedAllocation", first=12)
class NodeResourcesBalancedAllocation(Plugin, PreScorePlugin, ScorePlugin):
    """BalancedResourceAllocation up to 1.17. Favors nodes whose requested fractions of
    the resources are close to each other:

    * up to 1.21: cpu and memory from the non-zero requests, ``(1 - |f_cpu - f_mem|) * max``,
      0 when either fraction reaches 1;
    * 1.22-1.35: the configured resources (``resources``, weights must be 1; default cpu
      and memory) from the real requests, ``(1 - std) * 100`` with fractions capped at 1;
    * from 1.33 a pod requesting none of them is not scored (Skip);
    * from 1.36 ``50 + (50 + score_with_pod - score_without_pod) / 2``.
    """

    signs_pods = True

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: as NodeResourcesFit's."""
        from kspread.engine.plugins.noderesources_fit import resources_signature

        return resources_signature(pod, self.version, self.handle)

    def signs_no_pod(self) -> bool:
        from kspread.engine.plugins.noderesources_fit import signs_no_pod_for_dra

        return signs_no_pod_for_dra(self.version)

    def __init__(self, args: Mapping[str, Any], handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        self.flags = resource_scoring(self.version)
        # NodeResourcesBalancedAllocationArgs.resources (1.22+), decoded by kspread.engine.framework.args
        self.resources = _resources_arg(self) if self.flags.balanced_std else DEFAULT_RESOURCES
        self._last_requests = LastRequests()  # PreScore's state of the last pod's requests
        self._memo = ColumnMemo()  # the scores over the snapshot's nodes, per pod requests
        self._plan: tuple | None = None  # (snapshot, requests, usage_plan) of the memo's rows
        # from 1.36 the scores without the pod, per set of resources left in (any pod's)
        self._without = ColumnMemo()

    _KEY = "PreScoreNodeResourcesBalancedAllocation"

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        _refuse_dra_backed(self, [r.name for r in self.resources])
        st = self._last_requests.get(pod)
        if not isinstance(st, _State):  # (read-only: kept for the next pod with the same requests)
            use_requested = self.flags.balanced_uses_requested
            st = _State(pod_scoring_requests(pod, self.version, [r.name for r in self.resources], use_requested))
            self._last_requests.put(pod, st)
        if self.flags.balanced_skips_best_effort and st.none:
            return SKIP
        state.write(self._KEY, st)
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        st = state.get(self._KEY)
        assert isinstance(st, _State)
        requests = st.requests
        if self.flags.balanced_std:  # (1.22 on; kept across cycles for the pod's requests)
            snap = nodes.snapshot
            out = self._memo.over(nodes, st.key, lambda ns: self._scores(ns, requests),
                                  lambda i: self._row(snap, i, requests))
            if out is not None:
                return out
        return self._scores(nodes, requests)

    def _usage_plan(self, snapshot, requests: list[int]):
        """``usage_plan`` of the pod's requests (kept for the last requests: the rows of
        both memos read it)."""
        plan = self._plan
        if plan is None or plan[0] is not snapshot or plan[1] != requests:
            plan = self._plan = (snapshot, list(requests), usage_plan(snapshot, self.resources, requests, self.version,
                                                                      self.flags.balanced_uses_requested))
        return plan[2]

    def _row(self, snapshot, i: int, requests: list[int]) -> int | None:
        """The score of the node at snapshot position ``i`` (``_scores``), from 1.22."""
        usage = usage_row(self._usage_plan(snapshot, requests), i)
        if usage is None:
            return None
        max_score = self.version.max_node_score
        if self.flags.balanced_scores_change:
            return balanced_change_row(usage, max_score)
        return balanced_std_row([(r, a, p) for _, a, r, _, p in usage], max_score)

    def _without_row(self, snapshot, i: int, requests: list[int]) -> int | None:
        """``balanced_without_scores`` of the node at snapshot position ``i``."""
        usage = usage_row(self._usage_plan(snapshot, requests), i)
        return None if usage is None else balanced_without_row(usage, self.version.max_node_score)

    def _scores(self, nodes: NodeSet, requests: list[int]) -> np.ndarray:
        max_score = self.version.max_node_score
        flags = self.flags
        n = len(nodes)
        # (every node scoring every resource: fewer steps; the general form adds the
        # requests in int64 as these do, so they need no check)
        plain = (plain_columns(nodes, self.resources, requests, self.version, flags.balanced_uses_requested, False)
                 if flags.balanced_std else None)
        cols = [] if plain is not None else usage_columns(nodes, self.resources, requests, self.version,
                                                          flags.balanced_uses_requested)
        if flags.balanced_scores_change:
            # what the nodes score without the pod depends on the resources left in, not
            # on the pod's requests: kept across cycles over every node, as the scores
            # are (and read for any set of them: the scores' own memo asks for a node of
            # each group of nodes with equal columns)
            left_in = tuple(requests[k] != 0 or not is_scalar_resource(r.name) for k, r in enumerate(self.resources))
            snap = nodes.snapshot
            without = self._without.over(nodes, left_in, lambda ns: balanced_without_scores(
                usage_columns(ns, self.resources, requests, self.version, flags.balanced_uses_requested),
                max_score, len(ns)), lambda i: self._without_row(snap, i, requests), any_size=True)
            if plain is not None:
                return balanced_change_plain(plain, max_score, n, without)
            return balanced_change_scores(cols, max_score, n, without)
        if plain is not None:
            return balanced_std_plain(plain, max_score, n)
        if flags.balanced_std:
            return balanced_std_scores([(c.requested, c.allocatable, c.present) for c in cols], max_score, n)
        return balanced_legacies(cols[0], cols[1], max_score)
