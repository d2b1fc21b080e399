"""NodeName: a pod with ``spec.nodeName`` fits only the node of that name
(framework/plugins/nodename; before 1.18 the HostName predicate).

Reason text by version (``err_reason``): "...requested hostname" up to 1.20,
"...requested node name" from 1.21 (PR #97454). Filter only: upstream's NodeName
has no PreFilter in any released version."""

from __future__ import annotations

from typing import Any

import numpy as np

from kspread.engine.framework.interface import Filtered, FilterPlugin, Plugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import CycleState, unresolvable
from kspread.engine.model import Pod
from kspread.engine.snapshot import NodeSet
from kspread.engine.versions import Version


def err_reason(version: Version) -> str:
    if version.minor <= 20:
        return "node(s) didn't match the requested hostname"
    return "node(s) didn't match the requested node name"


@register("NodeName")
class NodeName(Plugin, FilterPlugin):
    signs_pods = True

    def node_events(self, hints: bool) -> frozenset[str]:
        # Add (no hint: Queue); UpdateNodeTaint | UpdateNodeLabel too without hints (issue 109437)
        return frozenset({"Add"} if hints else {"Add", "UpdateNodeTaint", "UpdateNodeLabel"})

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: spec.nodeName."""
        return (("NodeName", pod.node_name or ""),)

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return True

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return True

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        if not pod.node_name:
            return Filtered.passing(len(nodes))
        other = np.array([name != pod.node_name for name in nodes.names], bool)
        return Filtered.where(other, unresolvable(err_reason(self.version)))
