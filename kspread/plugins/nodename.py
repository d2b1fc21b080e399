"""NodeName: a pod with ``spec.nodeName`` fits only the node of that name
(framework/plugins/nodename; before 1.18 the HostName predicate).

Reason text by version (``err_reason``): "...requested hostname" up to 1.20,
"...requested node name" from 1.21 (PR #97454). Filter only: upstream's NodeName
has no PreFilter in any released version."""

from __future__ import annotations

from kspread.framework.interface import FilterPlugin, Plugin
from kspread.framework.registry import register
from kspread.framework.status import SUCCESS, CycleState, Status, unresolvable
from kspread.model import Pod
from kspread.snapshot import NodeInfo
from kspread.versions import Version


def err_reason(version: Version) -> str:
    if version.minor <= 20:
        return "node(s) didn't match the requested hostname"
    return "node(s) didn't match the requested node name"


@register("NodeName")
class NodeName(Plugin, FilterPlugin):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.node_name or pod.node_name == node_info.name:
            return SUCCESS
        return unresolvable(err_reason(self.version))
