"""NodePreferAvoidPods (NodePreferAvoidPodsPriority up to 1.17; plugin up to 1.23,
weight 10000 in the default profiles up to 1.22).

Upstream scores 0 on a node whose ``scheduler.alpha.kubernetes.io/preferAvoidPods``
annotation names the pod's controller, and MaxNodeScore otherwise; a pod whose
controller is not a ReplicationController or ReplicaSet (or that has none) always gets
MaxNodeScore. Nodes in a kspread case carry no annotations, so every node scores
MaxNodeScore (10 up to 1.16, 100 from 1.17) for every pod: the plugin adds the same
amount to every node's total and never changes the selection. No NormalizeScore.
"""

from __future__ import annotations

from kspread.engine.framework.interface import Plugin, ScorePlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SUCCESS, CycleState, Status
from kspread.engine.model import Pod


@register("NodePreferAvoidPods", first=12, last=23)
class NodePreferAvoidPods(Plugin, ScorePlugin):
    def score(self, state: CycleState, pod: Pod, node_name: str) -> tuple[int, Status]:
        # the controller kind only matters when a node has the annotation, which none has
        return self.version.max_node_score, SUCCESS
