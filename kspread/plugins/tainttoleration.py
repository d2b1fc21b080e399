"""TaintToleration, Filter: reject a node with a NoSchedule or NoExecute taint the pod
does not tolerate (framework/plugins/tainttoleration; before 1.18 the
PodToleratesNodeTaints predicate). The first untolerated taint in the node's order
names the reason.

Score (TaintTolerationPriority up to 1.17): the number of the node's PreferNoSchedule
taints that the pod's tolerations with effect PreferNoSchedule or empty do not
tolerate; NormalizeScore reverses it, ``max - max * s // maxCount`` (every node max when
no node has such a taint). The same in every version, on 0..10 up to 1.16.

Reason text by version (``err_reason``):
* up to 1.17: "node(s) had taints that the pod didn't tolerate";
* 1.18-1.23: "node(s) had taint {key: value}, that the pod didn't tolerate" (PR #87250);
* 1.24-1.33: "node(s) had untolerated taint {key: value}" (PR #109119; checked against
  the vendored plugins: 1.23.9 has the older text, 1.24.3, 1.24.9 and 1.24.17 this one);
* from 1.34: "node(s) had untolerated taint(s)" (PR #134740, backported to 1.34).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from kspread.framework.interface import FilterPlugin, NodeScore, Plugin, PreScorePlugin, ScorePlugin
from kspread.framework.registry import register
from kspread.framework.status import SUCCESS, CycleState, Status, unresolvable
from kspread.model import Node, Pod, Taint, Toleration
from kspread.plugins.nodematch import (
    PREFER_NO_SCHEDULE,
    default_normalize_score,
    do_not_schedule_taints,
    find_untolerated_taint,
    tolerations_tolerate_taint,
)
from kspread.snapshot import NodeInfo
from kspread.versions import Version


def err_reason(version: Version, taint: Taint) -> str:
    m = version.minor
    if m <= 17:
        return "node(s) had taints that the pod didn't tolerate"
    if m <= 23:
        return f"node(s) had taint {{{taint.key}: {taint.value}}}, that the pod didn't tolerate"
    if m <= 33:
        return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
    return "node(s) had untolerated taint(s)"


PRE_SCORE_KEY = "PreScoreTaintToleration"


def prefer_no_schedule_tolerations(tolerations: Iterable[Toleration]) -> tuple[Toleration, ...]:
    """``getAllTolerationPreferNoSchedule``: tolerations with effect PreferNoSchedule or
    empty (an empty effect tolerates every effect)."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def count_intolerable_prefer_no_schedule(taints: Iterable[Taint], tolerations: Sequence[Toleration]) -> int:
    """``countIntolerableTaintsPreferNoSchedule``."""
    return sum(1 for t in taints if t.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tolerations, t))


@register("TaintToleration")
class TaintToleration(Plugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    has_normalize = True

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        state.write(PRE_SCORE_KEY, prefer_no_schedule_tolerations(pod.tolerations))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_name: str) -> tuple[int, Status]:
        tolerations = state.read(PRE_SCORE_KEY)
        node = self.handle.snapshot.get(node_name).node
        return count_intolerable_prefer_no_schedule(node.taints, tolerations), SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        default_normalize_score(self.version.max_node_score, True, scores)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        taint = find_untolerated_taint(node_info.node.taints, pod.tolerations, do_not_schedule_taints)
        if taint is None:
            return SUCCESS
        return unresolvable(err_reason(self.version, taint))
