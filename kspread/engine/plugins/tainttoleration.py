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

from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np

from kspread.engine.corev1helpers import find_untolerated_taint, tolerations_tolerate_taint
from kspread.engine.framework.interface import (
    Filtered,
    FilterPlugin,
    Plugin,
    PreScorePlugin,
    ScorePlugin,
    tolerations_signer,
)
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SUCCESS, CycleState, Status, unresolvable
from kspread.engine.model import Node, Pod, Taint, Toleration
from kspread.engine.plugins.nodematch import (
    PREFER_NO_SCHEDULE,
    default_normalize_scores,
    do_not_schedule_taints,
)
from kspread.engine.snapshot import NodeSet
from kspread.engine.versions import Version


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
    signs_pods = True

    def node_events(self, hints: bool) -> frozenset[str]:
        # Add | UpdateNodeTaint; UpdateNodeLabel too without hints (issue 109437)
        return frozenset({"Add", "UpdateNodeTaint"} if hints else {"Add", "UpdateNodeTaint", "UpdateNodeLabel"})

    def node_event_hint(self, pod: Pod, old: Node | None, new: Node | None) -> bool:
        """isSchedulableAfterNodeChange (1.35): Queue when a NoSchedule/NoExecute taint the
        pod did not tolerate (or the node is new) is gone."""
        if new is None:
            return False
        was = old is None or find_untolerated_taint(old.taints, pod.tolerations, do_not_schedule_taints) is not None
        return was and find_untolerated_taint(new.taints, pod.tolerations, do_not_schedule_taints) is None

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: the tolerations (TolerationsSigner)."""
        return (("Tolerations", tolerations_signer(pod)),)

    has_normalize = True

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        state.write(PRE_SCORE_KEY, prefer_no_schedule_tolerations(pod.tolerations))
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        tolerations = cast("tuple[Toleration, ...]", state.read(PRE_SCORE_KEY))  # pre_score's
        if _untainted(nodes):
            return np.zeros(len(nodes), np.int64)  # (no taint to count)
        return nodes.evaluate("taints", _taints,
                              lambda taints: count_intolerable_prefer_no_schedule(taints, tolerations),
                              np.int64)

    def normalize_scores(self, state: CycleState, pod: Pod, names, scores: np.ndarray) -> np.ndarray:
        return default_normalize_scores(self.version.max_node_score, True, scores)

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return True

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return True

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        """Once per distinct set of node taints."""
        if _untainted(nodes):
            return Filtered.passing(len(nodes))  # (no taint to tolerate)
        table: list[Status] = [SUCCESS]

        def status_id(taints: tuple[Taint, ...]) -> int:
            taint = find_untolerated_taint(taints, pod.tolerations, do_not_schedule_taints)
            if taint is None:
                return 0
            table.append(unresolvable(err_reason(self.version, taint)))
            return len(table) - 1

        return Filtered(nodes.evaluate("taints", _taints, status_id), table)


def _taints(node: Node) -> tuple[Taint, ...]:
    return node.taints


def _untainted(nodes: NodeSet) -> bool:
    """Whether no node of the set's snapshot has a taint (the static codes' one value)."""
    snap = nodes.snapshot
    return snap is not None and snap.static_codes("taints", _taints)[1] == [()]
