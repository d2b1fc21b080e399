"""NodeDeclaredFeatures (framework/plugins/nodedeclaredfeatures, KEP-5328; alpha 1.35, on
from 1.36, GA 1.37): a node must declare (status.declaredFeatures) every feature the
pod's spec needs.

What a pod needs is inferred from its spec by upstream's feature registry
(component-helpers/nodedeclaredfeatures/features); the one feature a kspread pod can
need is RestartAllContainersOnContainerExits: a container or init container with a
restartPolicyRules rule whose action is RestartAllContainers (every version that has
the plugin). The registry of 1.36+ also infers features from fields kspread does not
model; the case loader refuses a pod with one (kspread.format.case).

PreFilter skips a pod that needs nothing (and every pod while the gate is off, when the
plugin is registered but disabled); Filter rejects a node that lacks a needed feature,
UnschedulableAndUnresolvable, with the reason "node declared features check failed -
unsatisfied requirements: <features>" in 1.35 and "node(s) didn't match Pod's required
features" from 1.36 (the bitmap feature sets of PR 136185, milestone 1.36). NodeInfo
reads the node's declared features only while the gate is on."""

from __future__ import annotations

from typing import Any

import numpy as np

from kspread.engine.framework.interface import Filtered, FilterPlugin, Plugin, PreFilterPlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, CycleState, Status, unresolvable
from kspread.engine.model import Node, Pod
from kspread.engine.snapshot import NodeSet
from kspread.engine.versions import Version

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
ERR_REASON_1_35 = "node declared features check failed - unsatisfied requirements: "
ERR_REASON = "node(s) didn't match Pod's required features"
_KEY = "PreFilterNodeDeclaredFeatures"


def enabled(version: Version) -> bool:
    return version.minor >= 35 and version.gate("NodeDeclaredFeatures")


def pod_requirements(pod: Pod) -> tuple[str, ...]:
    """InferForPodScheduling: the features the pod's spec needs, sorted."""
    return (RESTART_ALL_CONTAINERS,) if pod.restart_all_containers else ()


@register("NodeDeclaredFeatures", first=35)
class NodeDeclaredFeatures(Plugin, PreFilterPlugin, FilterPlugin):
    signs_pods = True

    def node_events(self, hints: bool) -> frozenset[str]:
        # Node/Add | UpdateNodeDeclaredFeature (no sequence step changes a node's declared features)
        return frozenset({"Add", "UpdateNodeDeclaredFeature"}) if enabled(self.version) else frozenset()

    def node_event_hint(self, pod: Pod, old: Node | None, new: Node | None) -> bool:
        """isSchedulableAfterNodeChange: Queue for a node added, or one whose declared
        features changed."""
        if new is None:
            return False
        return old is None or old.declared_features != new.declared_features

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: the features the pod needs."""
        return (("Features", pod_requirements(pod)),)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        if not enabled(self.version):
            return SKIP
        reqs = pod_requirements(pod)
        if not reqs:
            return SKIP
        state.write(_KEY, reqs)
        return SUCCESS

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return True

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return True

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        reqs = state.get(_KEY)
        if not enabled(self.version) or not isinstance(reqs, tuple) or not reqs:
            return Filtered.passing(len(nodes))
        # 1.35 names the unsatisfied features in its reason (MatchNodeFeatureSet), 1.36+ not
        table: list[Status] = [SUCCESS]
        index: dict[tuple[str, ...], int] = {}

        def status_id(declared: frozenset[str]) -> int:
            missing = tuple(r for r in reqs if r not in declared)
            if not missing:
                return 0
            key = missing if self.version.minor == 35 else ()
            if key not in index:
                index[key] = len(table)
                table.append(unresolvable(ERR_REASON_1_35 + ", ".join(missing) if key else ERR_REASON))
            return index[key]

        snap = nodes.snapshot
        if snap is not None and nodes.positions is not None:
            # once per distinct declared feature set (static node data), then gathered
            codes, sets = snap.static_codes("declared features", _declared)
            return Filtered(np.array([status_id(f) for f in sets], np.intp)[codes[nodes.positions]], table)
        return Filtered(np.array([status_id(info.node.declared_features) for info in nodes.infos], np.intp), table)


def _declared(node: Node) -> frozenset[str]:
    return node.declared_features
