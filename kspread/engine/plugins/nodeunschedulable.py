"""NodeUnschedulable: reject nodes with ``spec.unschedulable`` unless the pod tolerates
the ``node.kubernetes.io/unschedulable:NoSchedule`` taint
(framework/plugins/nodeunschedulable; before 1.18 the CheckNodeUnschedulable
predicate, same check and reason)."""

from __future__ import annotations

from typing import Any

from kspread.engine.corev1helpers import tolerations_tolerate_taint
from kspread.engine.framework.interface import Filtered, FilterPlugin, Plugin, tolerations_signer
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import CycleState, unresolvable
from kspread.engine.model import Node, Pod, Taint
from kspread.engine.plugins.nodematch import NO_SCHEDULE
from kspread.engine.snapshot import NodeSet

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"


@register("NodeUnschedulable")
class NodeUnschedulable(Plugin, FilterPlugin):
    signs_pods = True

    def node_events(self, hints: bool) -> frozenset[str]:
        # Add | UpdateNodeTaint (spec.unschedulable cleared is an UpdateNodeTaint event);
        # UpdateNodeLabel too without hints (issue 109437)
        return frozenset({"Add", "UpdateNodeTaint"} if hints else {"Add", "UpdateNodeTaint", "UpdateNodeLabel"})

    def node_event_hint(self, pod: Pod, old: Node | None, new: Node | None) -> bool:
        """isSchedulableAfterNodeChange (1.35): Queue for a node added schedulable, or
        updated from unschedulable to schedulable."""
        if new is None:
            return False
        if old is None:
            return not new.unschedulable
        return old.unschedulable and not new.unschedulable

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: the tolerations (TolerationsSigner)."""
        return (("Tolerations", tolerations_signer(pod)),)

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return True

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return True

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        snap = nodes.snapshot
        if snap is not None and not any(snap.static_codes("unschedulable", _unschedulable)[1]):
            return Filtered.passing(len(nodes))  # no node of the cluster is unschedulable
        unschedulable = nodes.evaluate("unschedulable", _unschedulable, bool, bool)
        if not unschedulable.any():
            return Filtered.passing(len(nodes))
        if tolerations_tolerate_taint(pod.tolerations, Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)):
            return Filtered.passing(len(nodes))
        return Filtered.where(unschedulable, unresolvable(ERR_REASON_UNSCHEDULABLE))


def _unschedulable(node: Node) -> bool:
    return node.unschedulable
