"""TaintToleration, Filter: reject a node with a NoSchedule or NoExecute taint the pod
does not tolerate (framework/plugins/tainttoleration; before 1.18 the
PodToleratesNodeTaints predicate). The first untolerated taint in the node's order
names the reason. Score (PreferNoSchedule) is not implemented yet.

Reason text by version (``err_reason``):
* up to 1.17: "node(s) had taints that the pod didn't tolerate";
* 1.18-1.24: "node(s) had taint {key: value}, that the pod didn't tolerate" (PR #87250);
* 1.25-1.33: "node(s) had untolerated taint {key: value}" (PR #109119);
* from 1.34: "node(s) had untolerated taint(s)" (PR #134740, backported to 1.34).
"""

from __future__ import annotations

from kspread.framework.interface import FilterPlugin, Plugin
from kspread.framework.registry import register
from kspread.framework.status import SUCCESS, CycleState, Status, unresolvable
from kspread.model import Pod, Taint
from kspread.plugins.nodematch import do_not_schedule_taints, find_untolerated_taint
from kspread.snapshot import NodeInfo
from kspread.versions import Version


def err_reason(version: Version, taint: Taint) -> str:
    m = version.minor
    if m <= 17:
        return "node(s) had taints that the pod didn't tolerate"
    if m <= 24:
        return f"node(s) had taint {{{taint.key}: {taint.value}}}, that the pod didn't tolerate"
    if m <= 33:
        return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
    return "node(s) had untolerated taint(s)"


@register("TaintToleration")
class TaintToleration(Plugin, FilterPlugin):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        taint = find_untolerated_taint(node_info.node.taints, pod.tolerations, do_not_schedule_taints)
        if taint is None:
            return SUCCESS
        return unresolvable(err_reason(self.version, taint))
