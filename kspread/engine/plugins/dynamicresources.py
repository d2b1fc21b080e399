"""DynamicResources (from 1.26; in the default profile from 1.34, when the
DynamicResourceAllocation gate went GA): kspread models no ResourceClaims, so every
pod is a pod without claims, for which upstream's PreFilter returns Skip: the plugin
never rejects a node."""

from __future__ import annotations

from kspread.engine.framework.interface import FilterPlugin, Plugin, PreFilterPlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, CycleState, Status
from kspread.engine.model import Pod
from kspread.engine.snapshot import NodeInfo


@register("DynamicResources", first=26)
class DynamicResources(Plugin, PreFilterPlugin, FilterPlugin):
    signs_pods = True  # SignPod: no fragment for a pod without ResourceClaims (kspread pods have none)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        return SKIP

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS
