"""VolumeZone (predicate NoVolumeZoneConflict up to 1.17): the zone and region labels of
the PersistentVolumes a pod's claims are bound to, as upstream's plugins/volumezone.

PreFilter reads each persistentVolumeClaim volume's claim and bound volume: a claim with
no volume yet is skipped when its class binds WaitForFirstConsumer, and rejects the pod
otherwise ("PersistentVolume had no name"; "PersistentVolumeClaim had no pv name and
storageClass name" without a class); a missing claim, class or volume rejects it with
the API's not-found text, all UnschedulableAndUnresolvable. A volume's topology: its
labels ``failure-domain.beta.kubernetes.io/zone``, ``.../region``,
``topology.kubernetes.io/zone`` and ``.../region``, a value holding several zones
separated by ``__``. No topology: Skip. Filter: a node with none of the four labels
passes; otherwise each topology needs the node's value of the key (from 1.29, or of
its GA equivalent for a beta key) among the volume's values, else "node(s) had no available volume zone".
To 1.26 there is no PreFilter: Filter passes a node without the labels before reading any
claim, and reads the claims per node, in order (a lookup error on a later volume comes
after an earlier volume's conflict).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kspread.engine.framework.interface import FilterPlugin, Plugin, PodEvent, PreFilterPlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, CycleState, Status, unresolvable
from kspread.engine.model import BETA_REGION_LABEL, BETA_ZONE_LABEL, REGION_LABEL, ZONE_LABEL, Pod
from kspread.engine.plugins.volumes import check_modelled, not_found, storage_of, volumes_signer
from kspread.engine.snapshot import NodeInfo
from kspread.engine.storage import WAIT_FOR_FIRST_CONSUMER, PersistentVolume

ERR_CONFLICT = "node(s) had no available volume zone"
_STATE = "PreFilterVolumeZone"
TOPOLOGY_LABELS = (BETA_ZONE_LABEL, BETA_REGION_LABEL, ZONE_LABEL, REGION_LABEL)
_GA = {BETA_ZONE_LABEL: ZONE_LABEL, BETA_REGION_LABEL: REGION_LABEL}


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv: str
    key: str
    values: frozenset[str]


def label_zones(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: zones separated by ``__``; None when one is empty."""
    if value == "":
        return frozenset()
    out = set()
    for z in value.split("__"):
        z = z.strip()
        if not z:
            return None
        out.add(z)
    return frozenset(out)


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    out = []
    for key in TOPOLOGY_LABELS:
        if key in pv.labels:
            zones = label_zones(pv.labels[key])
            if zones is not None:
                out.append(PVTopology(pv.name, key, zones))
    return out


@register("VolumeZone", first=12)
class VolumeZone(Plugin, PreFilterPlugin, FilterPlugin):
    signs_pods = True
    pod_events = frozenset({"PVCUpdate", "PVAdd", "PVUpdate"})

    def node_events(self, hints: bool) -> frozenset[str]:
        # Add | UpdateNodeLabel (no hint: Queue); UpdateNodeTaint too without hints (issue
        # 109437); with hints the queue adds UpdateNodeTaint for a Node/Add (queue.py)
        return frozenset({"Add", "UpdateNodeLabel"} if hints else {"Add", "UpdateNodeLabel", "UpdateNodeTaint"})

    def pod_event_hint(self, pod: Pod, event: PodEvent) -> bool:
        """isSchedulableAfterPersistentVolumeClaimChange (a persistentVolumeClaim of the
        pod) and isSchedulableAfterPersistentVolumeChange (a new volume: Queue; a changed
        one when its topology labels changed, which binding never does)."""
        if event.action == "PVCUpdate":
            claim = event.obj
            return claim.namespace == pod.namespace and any(v.claim == claim.name for v in pod.volumes)
        return event.action == "PVAdd"

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        return volumes_signer(pod)

    def _volume(self, pod: Pod, claim_name: str) -> PersistentVolume | Status | None:
        """A persistentVolumeClaim volume's bound volume; None for a claim that waits for
        its first consumer; a Status when the lookups reject the pod."""
        storage = storage_of(self)
        if claim_name == "":
            return unresolvable("PersistentVolumeClaim had no name")
        claim = storage.claim(pod.namespace, claim_name)
        if claim is None:
            return unresolvable(not_found("persistentvolumeclaim", claim_name))
        if not claim.volume_name:
            cls_name = claim.class_name
            if not cls_name:
                return unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
            cls = storage.classes.get(cls_name)
            if cls is None:
                return unresolvable(not_found("storageclass.storage.k8s.io", cls_name))
            if cls.binding_mode is None:
                return unresolvable(f'VolumeBindingMode not set for StorageClass "{cls_name}"')
            if cls.binding_mode == WAIT_FOR_FIRST_CONSUMER:
                return None
            return unresolvable("PersistentVolume had no name")
        pv = storage.pvs.get(claim.volume_name)
        if pv is None:
            return unresolvable(not_found("persistentvolume", claim.volume_name))
        return pv

    def _bound_volumes(self, pod: Pod) -> Iterator[tuple[str, PersistentVolume | Status]]:
        """The persistentVolumeClaim volumes in order: (claim name, its bound volume or
        the Status its lookup rejects the pod with); claims waiting for their first
        consumer left out."""
        for v in pod.volumes:
            if v.claim is not None and (pv := self._volume(pod, v.claim)) is not None:
                yield v.claim, pv

    def topologies(self, pod: Pod) -> list[PVTopology] | Status:
        out: list[PVTopology] = []
        for _, pv in self._bound_volumes(pod):
            if isinstance(pv, Status):
                return pv
            out.extend(pv_topologies(pv))
        return out

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        check_modelled(self, pod)
        if self.version.minor < 27:
            return SUCCESS  # no PreFilter to 1.26: Filter reads the volumes per node
        tops = self.topologies(pod)
        if isinstance(tops, Status):
            return tops
        if not tops:
            return SKIP
        state.write(_STATE, tops)
        return SUCCESS

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return True

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return True

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.volumes:
            return SUCCESS
        if self.version.minor < 27:
            return self._filter_126(pod, node_info)
        tops = state.get(_STATE)
        if tops is None:
            got = self.topologies(pod)
            if isinstance(got, Status):
                return got
            tops = got
        labels = node_info.node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return SUCCESS
        assert isinstance(tops, list)
        for t in tops:
            v = labels.get(t.key)
            if v is None and self.version.minor >= 29:  # translateToGALabel, from 1.29
                v = labels.get(_GA.get(t.key, t.key))
            if v is None or v not in t.values:
                return unresolvable(ERR_CONFLICT)
        return SUCCESS

    def _filter_126(self, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter to 1.26: a node without the four labels passes before any lookup; else
        the persistentVolumeClaim volumes in order, each looked up as PreFilter does from
        1.27 (the same texts), and each topology label of its bound volume checked against
        the node's value of that key (no GA fallback)."""
        labels = node_info.node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return SUCCESS
        for _, pv in self._bound_volumes(pod):
            if isinstance(pv, Status):
                return pv
            for t in pv_topologies(pv):
                if labels.get(t.key, "") not in t.values:
                    return unresolvable(ERR_CONFLICT)
        return SUCCESS

    def volume_lacks(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> list[tuple[str, str]]:
        """explain: each bound volume's topology label the node does not match, with both
        values."""
        labels = node_info.node.labels
        out = []
        for claim, pv in self._bound_volumes(pod):
            if isinstance(pv, Status):
                continue
            for t in pv_topologies(pv):
                key = t.key
                if key not in labels and self.version.minor >= 29 and _GA.get(key, key) in labels:
                    key = _GA[key]
                have = labels.get(key)
                if have is not None and have in t.values:
                    continue
                wanted = ", ".join(sorted(t.values))
                node_has = f"the node has {key}={have}" if have is not None else f"the node has no {key} label"
                out.append((f"claim {claim}: volume {pv.name} is in {t.key}={wanted}; {node_has}",
                            f"a node with {t.key} in ({wanted})"))
        return out
