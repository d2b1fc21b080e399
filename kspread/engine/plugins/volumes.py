"""What the volume plugins share: VolumeBinding, VolumeRestrictions, VolumeZone,
NodeVolumeLimits and the per-cloud limit plugins EBSLimits, GCEPDLimits, AzureDiskLimits,
CinderLimits (predicates CheckVolumeBinding, NoDiskConflict, NoVolumeZoneConflict,
MaxCSIVolumeCountPred, MaxEBSVolumeCount, MaxGCEPDVolumeCount, MaxAzureDiskVolumeCount,
MaxCinderVolumeCount up to 1.17). Each plugin is its own module.

kspread models volume scheduling from 1.21, each minor as its release's source has it (the
differences by version are named in the modules). For an earlier version a pod that uses
volumes the plugins read (a claim, an ephemeral volume, an in-tree disk) is an error naming
the version: kspread does not model those releases' plugins and predicates. A pod without
such volumes passes every volume filter at every version, as upstream's do.
"""

from __future__ import annotations

from typing import Any

from kspread.engine.framework.interface import Plugin
from kspread.engine.model import Pod
from kspread.engine.storage import PersistentVolumeClaim, PodVolume, Storage
from kspread.errors import CaseError

FIRST_MODELLED_MINOR = 21


def volume_binding_scores(version) -> bool:
    """VolumeBinding implements Score from 1.21."""
    return version.minor >= 21


def volume_binding_pre_score_skips(version) -> bool:
    """VolumeBinding has a PreScore that returns Skip without a scorer from 1.30
    (PR #115768, CHANGELOG-1.30); before, Score returns 0 for every node."""
    return version.minor >= 30


def pod_volumes(pod: Pod) -> tuple[PodVolume, ...]:
    return pod.volumes


def uses_storage(pod: Pod) -> bool:
    """The pod has a volume some volume plugin reads: a claim, an ephemeral volume or
    an in-tree disk."""
    return pod.uses_persistent_volumes or any(
        v.claim is not None or v.ephemeral is not None or v.disk is not None for v in pod.volumes)


def check_modelled(plugin: Plugin, pod: Pod) -> None:
    """A pod with volumes in a version kspread does not model: an error naming the version."""
    if plugin.version.minor < FIRST_MODELLED_MINOR and uses_storage(pod):
        raise CaseError(
            f"pod {pod.key!r} uses volumes: kspread models volume scheduling from 1.{FIRST_MODELLED_MINOR}; "
            f"version {plugin.version} is not modelled (plugin {plugin.name})")


def storage_of(plugin: Plugin) -> Storage:
    st = plugin.handle.storage
    return st if st is not None else _EMPTY


_EMPTY = Storage()


def volumes_signer(pod: Pod) -> tuple[tuple[str, Any], ...]:
    """VolumesSigner: the pod's volume sources (not their names), sorted (an image volume
    by its reference: kept from 1.36)."""
    return (("Volumes", tuple(sorted(repr((v.claim, v.ephemeral, v.disk) if v.image is None else ("image", v.image))
                                     for v in pod.volumes))),)


def not_found(resource: str, name: str) -> str:
    """apierrors.NewNotFound's message."""
    return f'{resource} "{name}" not found'


def ephemeral_owner_error(pod: Pod, claim: PersistentVolumeClaim) -> str | None:
    """ephemeral.VolumeIsForPod: the claim must be controlled by the pod."""
    if claim.owner_pod != pod.name:
        return (f"PVC {claim.namespace}/{claim.name} was not created for pod {pod.namespace}/{pod.name} "
                "(pod is not owner)")
    return None
