"""The volume plugins: VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits,
EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits (predicates CheckVolumeBinding,
NoDiskConflict, NoVolumeZoneConflict, MaxCSIVolumeCountPred, MaxEBSVolumeCount,
MaxGCEPDVolumeCount, MaxAzureDiskVolumeCount, MaxCinderVolumeCount up to 1.17).

kspread does not model volumes. For a pod without volumes every one of these filters
passes on every node, as upstream's do (from 1.28 their PreFilter returns Skip for such
a pod, with the same result). A pod that uses persistent volumes (a raw Pod object whose
``spec.volumes`` has a persistentVolumeClaim or ephemeral volume) makes the case fail
with an error naming the plugin, instead of a result kspread cannot compute.

VolumeBinding has a Score from 1.21 (storage capacity scoring, behind the alpha gates
VolumeCapacityPriority / StorageCapacityScoring, which kspread leaves off): without a
scorer it returns 0 for every node; from 1.30 its PreScore returns Skip instead
(v1.30.10 has that PreScore, v1.29.14 none), so it is absent from the scores. In the default profile it
scores from 1.23 (MultiPoint, weight 1), where it adds 0 to every total.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kspread.engine.framework.interface import (
    Filtered,
    FilterPlugin,
    Plugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, CycleState, Status
from kspread.engine.model import Node, Pod
from kspread.engine.snapshot import NodeSet
from kspread.engine.versions import Version
from kspread.errors import CaseError


def volume_binding_scores(version: Version) -> bool:
    """VolumeBinding implements Score from 1.21."""
    return version.minor >= 21


def volume_binding_pre_score_skips(version: Version) -> bool:
    """VolumeBinding has a PreScore that returns Skip without a scorer from 1.30
    (PR #115768, CHANGELOG-1.30); before, Score returns 0 for every node."""
    return version.minor >= 30


def reject_volumes(plugin: Plugin, pod: Pod) -> None:
    if pod.uses_persistent_volumes:
        raise CaseError(
            f"pod {pod.key!r} uses persistent volumes: volume scheduling is not supported by kspread "
            f"(plugin {plugin.name} in version {plugin.version})"
        )


class _VolumeFilter(Plugin, PreFilterPlugin, FilterPlugin):
    # SignPod (VolumeRestrictions, VolumeZone, NodeVolumeLimits, VolumeBinding): the
    # volumes (VolumesSigner); kspread pods have none
    signs_pods = True

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        return (("Volumes", ()),)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        reject_volumes(self, pod)
        return SUCCESS

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return True

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return True

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        reject_volumes(self, pod)
        return Filtered.passing(len(nodes))


@register("VolumeRestrictions", first=12)
class VolumeRestrictions(_VolumeFilter):
    pass


@register("VolumeZone", first=12)
class VolumeZone(_VolumeFilter):
    pass


@register("NodeVolumeLimits", first=12)
class NodeVolumeLimits(_VolumeFilter):
    pass


@register("EBSLimits", first=12, last=30)
class EBSLimits(_VolumeFilter):
    pass


@register("GCEPDLimits", first=12, last=30)
class GCEPDLimits(_VolumeFilter):
    pass


@register("AzureDiskLimits", first=12, last=30)
class AzureDiskLimits(_VolumeFilter):
    pass


@register("CinderLimits", first=12, last=25)
class CinderLimits(_VolumeFilter):
    pass


class VolumeBindingFilter(_VolumeFilter):
    """VolumeBinding up to 1.20: filter only."""

    name = "VolumeBinding"


class VolumeBindingScoring(VolumeBindingFilter, PreScorePlugin, ScorePlugin):
    """VolumeBinding from 1.21: its Score has no scorer (gates off)."""

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        return SKIP if volume_binding_pre_score_skips(self.version) else SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        return np.zeros(len(nodes), np.int64)


@register("VolumeBinding", first=12)
def _volume_binding(args, handle, config_path: tuple = ()) -> Plugin:
    if volume_binding_scores(handle.version):
        return VolumeBindingScoring(args, handle, config_path)
    return VolumeBindingFilter(args, handle, config_path)
