"""NodeUnschedulable: reject nodes with ``spec.unschedulable`` unless the pod tolerates
the ``node.kubernetes.io/unschedulable:NoSchedule`` taint
(framework/plugins/nodeunschedulable; before 1.18 the CheckNodeUnschedulable
predicate, same check and reason)."""

from __future__ import annotations

from kspread.framework.interface import FilterPlugin, Plugin
from kspread.framework.registry import register
from kspread.framework.status import SUCCESS, CycleState, Status, unresolvable
from kspread.model import Pod, Taint
from kspread.plugins.nodematch import NO_SCHEDULE, tolerations_tolerate_taint
from kspread.snapshot import NodeInfo

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"


@register("NodeUnschedulable")
class NodeUnschedulable(Plugin, FilterPlugin):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not node_info.node.unschedulable:
            return SUCCESS
        if tolerations_tolerate_taint(pod.tolerations, Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)):
            return SUCCESS
        return unresolvable(ERR_REASON_UNSCHEDULABLE)
