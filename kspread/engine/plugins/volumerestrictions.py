"""VolumeRestrictions (predicate NoDiskConflict up to 1.17): the same in-tree disk on one
node, and ReadWriteOncePod claims in use by another pod (from 1.22; as upstream's
plugins/volumerestrictions).

PreFilter looks up the pod's persistentVolumeClaim volumes (a missing claim:
UnschedulableAndUnresolvable, the API's not-found text) and counts how many of its
ReadWriteOncePod claims a pod in the cluster already uses; with no in-tree disk to check
and no such conflict it returns Skip. AddPod / RemovePod keep the count right for
nominated pods and preemption's dry run, so evicting the pod that holds the claim
resolves the conflict. Filter: a gcePersistentDisk (same pdName, not both read-only),
awsElasticBlockStore (same volumeID), iscsi (same IQN, not both read-only) or rbd
(overlapping monitors, same pool and image, not both read-only) of a pod on the node
rejects it, "node(s) had no available disk"; then a conflicting claim rejects every node,
"node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access
mode" ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode
already in-use by another pod" from 1.34; both Unschedulable). With the ReadWriteOncePod
gate off (alpha, off, to 1.26; beta, on, 1.27-1.28) claims are not looked up nor checked.
From 1.22 (the gate's alpha) to 1.26 the check is PreFilter's: a ReadWriteOncePod claim in
use rejects the pod (UnschedulableAndUnresolvable, every node; preemption cannot resolve it);
a missing claim is NotFound, in 1.25-1.26 only when it comes before the conflicting claim
(to 1.24 every claim is looked up first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kspread.engine.framework.interface import FilterPlugin, Plugin, PodEvent, PreFilterPlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, CycleState, Status, unresolvable, unschedulable
from kspread.engine.model import Pod
from kspread.engine.plugins.volumes import check_modelled, not_found, storage_of, volumes_signer
from kspread.engine.snapshot import NodeInfo
from kspread.engine.storage import READ_WRITE_ONCE_POD, InTreeDisk

ERR_DISK_CONFLICT = "node(s) had no available disk"
def err_rwop_conflict(version) -> str:
    """ErrReasonReadWriteOncePodConflict: reworded in 1.34."""
    if version.minor >= 34:
        return ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
                "in-use by another pod")
    return "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"


def rwop_enabled(version) -> bool:
    """The ReadWriteOncePod gate (beta, on, in 1.27-1.28; GA from 1.29, removed in 1.31)."""
    return version.gate("ReadWriteOncePod")
_STATE = "PreFilterVolumeRestrictions"
_CHECKED = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def disks_conflict(a: InTreeDisk, b: InTreeDisk) -> bool:
    """isVolumeConflict for one pair of volumes."""
    if a.kind != b.kind:
        return False
    both_ro = a.read_only and b.read_only
    if a.kind == "gcePersistentDisk":
        return a.ident == b.ident and not both_ro
    if a.kind == "awsElasticBlockStore":
        return a.ident == b.ident
    if a.kind == "iscsi":
        return a.ident == b.ident and not both_ro
    if a.kind == "rbd":
        return bool(set(a.monitors) & set(b.monitors)) and a.pool == b.pool and a.ident == b.ident and not both_ro
    return False


def pod_disks(pod: Pod) -> list[InTreeDisk]:
    return [v.disk for v in pod.volumes if v.disk is not None and v.disk.kind in _CHECKED]


def conflicts_with(pod: Pod, other: Pod) -> bool:
    """Some in-tree disk of ``pod`` conflicts with one of ``other``'s."""
    theirs = pod_disks(other)
    return any(disks_conflict(d, e) for d in pod_disks(pod) for e in theirs)


def claim_names(pod: Pod) -> list[str]:
    """The pod's persistentVolumeClaim volumes (ephemeral volumes are not counted here)."""
    return [v.claim for v in pod.volumes if v.claim is not None]


@dataclass(slots=True)
class _State:
    rwop: frozenset[str]
    conflicts: int

    def clone(self) -> _State:
        return _State(self.rwop, self.conflicts)

    def update(self, pod: Pod, sign: int) -> None:
        self.conflicts += sign * sum(1 for c in claim_names(pod) if c in self.rwop)


@register("VolumeRestrictions", first=12)
class VolumeRestrictions(Plugin, PreFilterPlugin, FilterPlugin):
    signs_pods = True
    pod_events = frozenset({"Delete"})
    has_pre_filter_extensions = True

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        return volumes_signer(pod)

    def node_events(self, hints: bool) -> frozenset[str]:
        # Add (no hint: Queue); UpdateNodeTaint | UpdateNodeLabel too without hints (issue
        # 109437); with hints the queue adds UpdateNodeTaint for a Node/Add (queue.py)
        return frozenset({"Add"} if hints else {"Add", "UpdateNodeTaint", "UpdateNodeLabel"})

    def pod_event_hint(self, pod: Pod, event: PodEvent) -> bool:
        """isSchedulableAfterPodDeleted: a pod of the namespace with a conflicting disk or
        one of the pod's claims."""
        deleted = event.pod
        if deleted.namespace != pod.namespace:
            return False
        if conflicts_with(pod, deleted):
            return True
        return bool(set(claim_names(pod)) & set(claim_names(deleted)))

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        check_modelled(self, pod)
        needs_check = bool(pod_disks(pod))
        if self.version.minor < 27:
            return self._pre_filter_rejects(pod)
        if not rwop_enabled(self.version):
            return SUCCESS if needs_check else SKIP
        storage = storage_of(self)
        rwop: set[str] = set()
        for name in claim_names(pod):
            claim = storage.claim(pod.namespace, name)
            if claim is None:
                return unresolvable(not_found("persistentvolumeclaim", name))
            if READ_WRITE_ONCE_POD in claim.spec.access_modes:
                rwop.add(name)
        used = self._claims_in_use(pod.namespace) if rwop else set()
        s = _State(frozenset(rwop), sum(1 for c in rwop if c in used))
        if not needs_check and s.conflicts == 0:
            return SKIP
        state.write(_STATE, s)
        return SUCCESS

    def _pre_filter_rejects(self, pod: Pod) -> Status:
        """PreFilter to 1.26 (isReadWriteOncePodAccessModeConflict, with the gate on): the
        persistentVolumeClaim volumes in order, each looked up (missing: NotFound); a
        ReadWriteOncePod claim a pod already uses rejects the pod (1.25-1.26: the first, at
        once; to 1.24 after every lookup), UnschedulableAndUnresolvable (preemption cannot
        help; no AddPod / RemovePod)."""
        if not rwop_enabled(self.version):
            return SUCCESS
        storage = storage_of(self)
        used: set[str] | None = None
        rwop: list[str] = []
        for name in claim_names(pod):
            claim = storage.claim(pod.namespace, name)
            if claim is None:
                return unresolvable(not_found("persistentvolumeclaim", name))
            if READ_WRITE_ONCE_POD not in claim.spec.access_modes:
                continue
            if self.version.minor <= 24:  # to 1.24 every claim is looked up before any is checked
                rwop.append(name)
                continue
            if used is None:
                used = self._claims_in_use(pod.namespace)
            if name in used:
                return unresolvable(err_rwop_conflict(self.version))
        if rwop and set(rwop) & self._claims_in_use(pod.namespace):
            return unresolvable(err_rwop_conflict(self.version))
        return SUCCESS

    def _claims_in_use(self, namespace: str) -> set[str]:
        """StorageInfos().IsPVCUsedByPods: the claims of the pods on the nodes, but those a
        pod group cycle assumed (its usedPVCSet is the snapshot's as taken: a group's pods
        do not see each other's ReadWriteOncePod claims in use)."""
        out: set[str] = set()
        skip = self.handle.snapshot.group_assumed
        for info in self.handle.snapshot:
            for p in info.pods.values():
                if p.namespace == namespace and p.key not in skip:
                    out.update(claim_names(p))
        return out

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(_STATE)
        if isinstance(s, _State):
            s.update(added, 1)
        return SUCCESS

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(_STATE)
        if isinstance(s, _State):
            s.update(removed, -1)
        return SUCCESS

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return self.ignores_node_pods(state, pod)

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return not pod_disks(pod) and not isinstance(state.get(_STATE), _State)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        check_modelled(self, pod)
        mine = pod_disks(pod)
        if mine:
            for other in node_info.pods.values():
                theirs = pod_disks(other)
                if any(disks_conflict(d, e) for d in mine for e in theirs):
                    return unschedulable(ERR_DISK_CONFLICT)
        s = state.get(_STATE)
        if isinstance(s, _State) and s.conflicts > 0:
            return unschedulable(err_rwop_conflict(self.version))
        return SUCCESS

    def volume_lacks(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> list[tuple[str, str]]:
        """explain: the pods on the node whose in-tree disks conflict, and the pods that
        use the pod's ReadWriteOncePod claims."""
        out = []
        mine = pod_disks(pod)
        for other in node_info.pods.values():
            for d in mine:
                if any(disks_conflict(d, e) for e in pod_disks(other)):
                    out.append((f"{d.kind} {d.ident} is in use by pod {other.key}",
                                f"pod {other.key} gone, or a node without it"))
        storage = storage_of(self)
        if not rwop_enabled(self.version):
            return out
        rwop = {n for n in claim_names(pod) if (c := storage.claim(pod.namespace, n)) is not None
                and READ_WRITE_ONCE_POD in c.spec.access_modes}
        for info in self.handle.snapshot:
            for p in info.pods.values():
                if p.namespace != pod.namespace:
                    continue
                for name in sorted(rwop & set(claim_names(p))):
                    out.append((f"claim {name} (ReadWriteOncePod) is in use by pod {p.key} on node {info.name}",
                                f"pod {p.key} gone"))
        return out
