"""DynamicResources (from 1.26; in the default profile from 1.34, when the
DynamicResourceAllocation gate went GA): kspread models no ResourceClaims, so every
pod is a pod without claims, for which upstream's PreFilter returns Skip: the plugin
never rejects a node.

In 1.35 (v1.35.4) it is also a Score plugin, without a PreScore, and in the default
profile at weight 2: for a pod without claims its Score returns 0 on every node
(the PreFilter's state has no claims) and NormalizeScore leaves the zeros, so it is in
the scores and adds 0 to every total. v1.34.7's plugin has no Score and its default
profile enables it without a weight: it scores from 1.35.
"""

from __future__ import annotations

import numpy as np

from kspread.engine.framework.interface import FilterPlugin, Plugin, PreFilterPlugin, ScorePlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, CycleState, Status
from kspread.engine.model import Pod
from kspread.engine.snapshot import NodeInfo, NodeSet
from kspread.engine.versions import Version


def dynamic_resources_scores(version: Version) -> bool:
    """DynamicResources implements Score (no PreScore) in 1.35."""
    return version.minor >= 35


class DynamicResourcesFilter(Plugin, PreFilterPlugin, FilterPlugin):
    name = "DynamicResources"
    signs_pods = True  # SignPod: no fragment for a pod without ResourceClaims (kspread pods have none)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        return SKIP

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS


class DynamicResourcesScoring(DynamicResourcesFilter, ScorePlugin):
    """From 1.35: Score is 0 on every node for a pod without claims."""

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        return np.zeros(len(nodes), np.int64)


@register("DynamicResources", first=26)
def _dynamic_resources(args, handle, config_path: tuple = ()) -> Plugin:
    if dynamic_resources_scores(handle.version):
        return DynamicResourcesScoring(args, handle, config_path)
    return DynamicResourcesFilter(args, handle, config_path)
