"""NodeVolumeLimits (predicate MaxCSIVolumeCountPred up to 1.17) and the per-cloud limit
plugins EBSLimits, GCEPDLimits, AzureDiskLimits (to 1.30) and CinderLimits (to 1.25), as
upstream's plugins/nodevolumelimits.

NodeVolumeLimits counts attachable volumes per CSI driver against the node's CSINode
(``spec.drivers[].allocatable.count``; to 1.31 also the node's allocatable
``attachable-volumes-csi-<driver>``, which the CSINode's count overrides). A pod's volumes: each claim's bound volume (its
CSI driver and volume handle; an in-tree awsElasticBlockStore, gcePersistentDisk,
azureDisk or cinder volume counts under its migrated CSI driver when the node has a
CSINode), a claim not bound yet under its class's provisioner (its own handle), and the
pod's inline in-tree disks of those kinds (translated the same way). The incoming pod's
volumes that a pod on the node already uses count once. From 1.32 the VolumeAttachments
of the node's CSI volumes count too, and (1.35+) with the
VolumeLimitScaling gate a volume whose CSIDriver exists (from 1.36: and sets
preventPodSchedulingIfMissing) but is not in the node's CSINode rejects the node ("<driver>
CSI driver is not installed on the node"). Over the limit:
"node(s) exceed max volume count", Unschedulable. A missing claim of the incoming pod:
UnschedulableAndUnresolvable with the lookup's text (an Error before 1.30).

The per-cloud plugins defer to NodeVolumeLimits on a node whose CSINode migrates their
plugin (``migration_on``); elsewhere they count their own disks against the node's limit
(``_CloudLimits``). Inline in-tree volumes count under NodeVolumeLimits from 1.25 only.
"""

from __future__ import annotations

import re
from typing import Any

from kspread.engine.framework.interface import FilterPlugin, Plugin, PodEvent, PreFilterPlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import (
    SKIP,
    SUCCESS,
    CycleState,
    Status,
    error,
    unresolvable,
    unschedulable,
)
from kspread.engine.model import Pod
from kspread.engine.plugins.volumes import (
    check_modelled,
    ephemeral_owner_error,
    not_found,
    storage_of,
    volumes_signer,
)
from kspread.engine.snapshot import NodeInfo
from kspread.engine.storage import (
    IN_TREE_PLUGINS,
    MIGRATED_PROVISIONERS,
    CSINode,
    InTreeDisk,
    PodVolume,
    Storage,
    migration_gate_on,
)
from kspread.engine.versions import Version
from kspread.errors import CaseError

ERR_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
# stands for upstream's randomVolumeIDPrefix (rand.String(32), one per scheduler)
_RANDOM_PREFIX = "kspread"


def _migratable(v: PodVolume) -> bool:
    """IsInlineMigratable: an inline in-tree disk with a CSI driver to migrate to."""
    return v.disk is not None and bool(IN_TREE_PLUGINS[v.disk.kind][1])


# the first minor whose isCSIMigrationOn no longer needs the CSINode's migrated-plugins
# annotation for the in-tree plugin (its gate GA and removed)
_MIGRATED_WITHOUT_ANNOTATION = {"awsElasticBlockStore": 27, "azureDisk": 27, "cinder": 24, "gcePersistentDisk": 28}


def migration_on(csi_node: CSINode | None, kind: str, version: Version) -> bool:
    """isCSIMigrationOn for an in-tree source: the migration gates on (EBS, GCE PD and Azure
    Disk from 1.23, ``migration_gate_on``), the node needs a CSINode, and the CSINode's
    migrated-plugins annotation must list the plugin until its migration gate is removed
    (Cinder from 1.24, EBS and Azure Disk from 1.27, GCE PD from 1.28; the gates, on by
    default from 1.23, are not settable in kspread)."""
    if csi_node is None:
        return False
    if kind == "portworxVolume":
        raise CaseError("portworxVolume volumes (CSIMigrationPortworx) are not modelled by kspread's "
                        "NodeVolumeLimits")
    if not IN_TREE_PLUGINS[kind][1] or not migration_gate_on(kind, version.minor):
        return False
    if version.minor < _MIGRATED_WITHOUT_ANNOTATION[kind]:
        return IN_TREE_PLUGINS[kind][0] in csi_node.migrated_plugins
    return True


class _LookupError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def attachable_volumes(storage: Storage, pod: Pod, csi_node: CSINode | None, new_pod: bool,
                       out: dict[str, str], version: Version) -> None:
    """filterAttachableVolumes: unique volume name -> driver, into ``out``."""
    for v in pod.volumes:
        name = v.claim_name(pod.name)
        if name is None:
            # inline in-tree volumes count from 1.25 (checkAttachableInlineVolume)
            if version.minor >= 25 and _migratable(v) and v.disk is not None and migration_on(
                    csi_node, v.disk.kind, version):
                h = v.disk.csi_handle()
                if h is not None:
                    out[f"{h[0]}/{h[1]}"] = h[0]
            continue
        if v.ephemeral is not None and version.minor < 23:
            continue  # ephemeral volumes are read from 1.23
        if name == "":
            raise _LookupError(error("PersistentVolumeClaim had no name"))
        claim = storage.claim(pod.namespace, name)
        if claim is None:
            if new_pod and version.minor >= 23:  # before, a missing claim is not counted
                # UnschedulableAndUnresolvable from 1.30 (the lookup's NotFound wrapped); before, an Error
                text = f"looking up PVC {pod.namespace}/{name}: {not_found('persistentvolumeclaim', name)}"
                raise _LookupError(unresolvable(text) if version.minor >= 30 else error(text))
            continue
        if v.ephemeral is not None:
            err = ephemeral_owner_error(pod, claim)
            if err:
                raise _LookupError(error(err))
        driver, handle = _driver_info(storage, csi_node, claim, version)
        if driver and handle:
            out[f"{driver}/{handle}"] = driver


def _driver_info(storage: Storage, csi_node: CSINode | None, claim, version: Version) -> tuple[str, str]:
    """getCSIDriverInfo: the bound volume's CSI source (an in-tree one translated when
    the node has a CSINode), else getCSIDriverInfoFromSC."""
    pv = storage.pvs.get(claim.volume_name) if claim.volume_name else None
    if pv is not None:
        if pv.csi is not None:
            return pv.csi
        if pv.disk is not None and IN_TREE_PLUGINS[pv.disk.kind][1] and migration_on(csi_node, pv.disk.kind,
                                                                                       version):
            h = pv.disk.csi_handle()
            if h is not None:
                return h
        return "", ""
    cls_name = claim.class_name
    if not cls_name:
        return "", ""
    cls = storage.classes.get(cls_name)
    if cls is None:
        return "", ""
    handle = f"{_RANDOM_PREFIX}-{claim.namespace}/{claim.name}"
    if cls.provisioner in MIGRATED_PROVISIONERS:
        kind = next(k for k, (name, _) in IN_TREE_PLUGINS.items() if name == cls.provisioner)
        if not migration_on(csi_node, kind, version):
            return "", ""
        return MIGRATED_PROVISIONERS[cls.provisioner], handle
    return cls.provisioner, handle


@register("NodeVolumeLimits", first=12)
class NodeVolumeLimits(Plugin, PreFilterPlugin, FilterPlugin):
    signs_pods = True
    pod_events = frozenset({"Delete"})

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        return volumes_signer(pod)

    def pod_event_hint(self, pod: Pod, event: PodEvent) -> bool:
        """isSchedulableAfterPodDeleted: a deleted pod on a node (or nominated) with a
        claim, an ephemeral volume or a migratable inline disk."""
        d = event.pod
        if not d.volumes or (d.node_name is None and d.nominated_node is None):
            return False
        return any(v.claim is not None or v.ephemeral is not None or _migratable(v) for v in d.volumes)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        check_modelled(self, pod)
        if any(v.claim is not None or v.ephemeral is not None or _migratable(v) for v in pod.volumes):
            return SUCCESS
        return SKIP

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return not pod.volumes

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return not pod.volumes

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        got = self.usage(pod, node_info)
        if isinstance(got, Status):
            return got
        if got:
            return unschedulable(ERR_MAX_VOLUME_COUNT)
        return SUCCESS

    def _checks_driver(self, driver: Any) -> bool:
        """checkCSIDriverOnNode applies to a driver that has a CSIDriver object, from 1.36
        only when it sets spec.preventPodSchedulingIfMissing."""
        if driver is None:
            return False
        return driver.prevent_if_missing or not self.version.csi_driver_check_needs_opt_in

    def usage(self, pod: Pod, node_info: NodeInfo) -> Status | list[tuple[str, int, int, int]]:
        """The drivers over their limit on the node, each (driver, attached, new, limit):
        the volumes attached (of the pods on the node; from 1.32 the VolumeAttachments too),
        the pod's volumes not already attached, the limit; or the Status when the filter
        fails otherwise (or passes: SUCCESS)."""
        if not pod.volumes:
            return SUCCESS
        storage = storage_of(self)
        node = node_info.node
        csi_node = storage.csi_nodes.get(node.name)
        new: dict[str, str] = {}
        try:
            attachable_volumes(storage, pod, csi_node, True, new, self.version)
        except _LookupError as e:
            return e.status
        if not new:
            return SUCCESS
        if self.version.gate("VolumeLimitScaling"):
            for driver in new.values():
                if not self._checks_driver(storage.csi_drivers.get(driver)):
                    continue
                if csi_node is None or csi_node.driver(driver) is None:
                    return unschedulable(f"{driver} CSI driver is not installed on the node")
        limits = self._limits(node_info.node, csi_node, list(new.values()))
        if not limits:
            return SUCCESS
        attached: dict[str, str] = {}
        for other in node_info.pods.values():
            try:
                attachable_volumes(storage, other, csi_node, False, attached, self.version)
            except _LookupError as e:
                return error(e.status.message)
        count: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)
            count[driver] = count.get(driver, 0) + 1
        for unique, driver in self._attachments(storage, node.name).items():
            if unique not in attached:
                count[driver] = count.get(driver, 0) + 1
        want: dict[str, int] = {}
        for driver in new.values():
            want[driver] = want.get(driver, 0) + 1
        over = []
        for driver, n in want.items():
            limit = limits.get(self._key(driver))
            if limit is not None and count.get(driver, 0) + n > limit:
                over.append((driver, count.get(driver, 0), n, limit))
        return over

    def volume_lacks(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> list[tuple[str, str]]:
        """explain: per driver over its limit, the counts behind "exceed max volume count"."""
        got = self.usage(pod, node_info)
        if isinstance(got, Status):
            return []
        return [(f"{attached} of {limit} attached (driver {driver}), the pod adds {n}",
                 f"room for {attached + n - limit} more {driver} volume(s)") for driver, attached, n, limit in got]

    def _key(self, driver: str) -> str:
        """The limit's key: the driver (1.32+), or its attachable-volumes-csi-<driver>
        resource name (to 1.31)."""
        return driver if self.version.minor >= 32 else ATTACH_LIMIT_PREFIX + driver

    def _limits(self, node, csi_node: CSINode | None, drivers: list[str]) -> dict[str, int]:
        """getVolumeLimits: the CSINode's allocatable counts; to 1.31 over the node's
        allocatable attachable-volumes-* resources."""
        out: dict[str, int] = {}
        if self.version.minor <= 31:
            out = {k: v for k, v in node.allocatable.items() if k.startswith("attachable-volumes-")}
            for d in drivers:
                if len(ATTACH_LIMIT_PREFIX + d) >= 63 and any(k.startswith(ATTACH_LIMIT_PREFIX) for k in out):
                    raise CaseError(f"CSI driver {d!r}: its attachable-volumes-csi- resource name is hashed "
                                    "(GetCSIAttachLimitKey), which kspread does not model")
        for drv in csi_node.drivers if csi_node is not None else ():
            if drv.count is not None:
                out[self._key(drv.name)] = drv.count
        return out

    def _attachments(self, storage: Storage, node_name: str) -> dict[str, str]:
        """getNodeVolumeAttachmentInfo (from 1.32): the node's VolumeAttachments of CSI
        volumes."""
        if self.version.minor < 32:
            return {}
        vas = [va for va in storage.attachments if va.node_name == node_name]
        out: dict[str, str] = {}
        for va in vas:
            if not va.attacher or va.pv_name is None:
                continue
            pv = storage.pvs.get(va.pv_name)
            if pv is None or pv.csi is None:
                continue
            out[f"{va.attacher}/{pv.csi[1]}"] = va.attacher
        return out


# the per-cloud plugins: in-tree source -> the node's allocatable resource that overrides
# the default limit
_NON_CSI_LIMIT_KEYS = {"awsElasticBlockStore": "attachable-volumes-aws-ebs",
                       "gcePersistentDisk": "attachable-volumes-gce-pd",
                       "azureDisk": "attachable-volumes-azure-disk",
                       "cinder": "attachable-volumes-cinder"}
_DEFAULT_LIMITS = {"gcePersistentDisk": 16, "azureDisk": 16, "cinder": 256}
_EBS_DEFAULT, _EBS_NITRO = 39, 25
_EBS_NITRO_RE = re.compile(r"^[cmr]5.*|t3|z1d")  # volumeutil.EBSNitroLimitRegex, matched unanchored
_INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def _disk_id(disk: InTreeDisk | None, kind: str) -> str | None:
    """FilterVolume / FilterPersistentVolume: the disk's ID for the plugin's kind."""
    if disk is None or disk.kind != kind:
        return None
    return disk.disk_name if kind == "azureDisk" else disk.ident


class _CloudLimits(Plugin, PreFilterPlugin, FilterPlugin):
    """A per-cloud in-tree limit plugin (non_csi.go): ``kind`` is the in-tree source it
    counts. A node whose CSINode migrates the plugin defers to NodeVolumeLimits; else the
    unique disks of the kind of the pods on the node and of the incoming pod (inline, a
    claim's bound volume; an unbound claim, or one whose volume is missing, of a class
    whose provisioner is the in-tree plugin counts as ``<prefix>-<namespace>/<claim>``)
    must not exceed the node's allocatable ``attachable-volumes-<cloud>``, else the default:
    EBS 39 (25 on an instance type matching ``^[cmr]5.*|t3|z1d``), GCE PD 16, Azure Disk 16,
    Cinder 256 ("node(s) exceed max volume count", Unschedulable). The scheduler's
    KUBE_MAX_PD_VOLS environment variable is taken as unset."""

    kind = ""
    signs_pods = True
    # EventsToRegister: Pod Delete and Node Add, no hints (Queue)
    pod_events = frozenset({"Delete"})

    def node_events(self, hints: bool) -> frozenset[str]:
        return frozenset({"Add"})

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        return volumes_signer(pod)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        """PreFilter from 1.28 (Skip for a pod without a disk of the kind, a claim or an
        ephemeral volume); before, Filter's fast path (no volumes) does the same."""
        check_modelled(self, pod)
        if any(_disk_id(v.disk, self.kind) is not None or v.claim is not None or v.ephemeral is not None
               for v in pod.volumes):
            return SUCCESS
        return SKIP

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return not pod.volumes

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return not pod.volumes

    def _volumes(self, storage: Storage, pod: Pod, new_pod: bool, out: set[str]) -> None:
        """filterVolumes: the IDs of the pod's volumes of the kind, into ``out``."""
        plugin = IN_TREE_PLUGINS[self.kind][0]
        for v in pod.volumes:
            ident = _disk_id(v.disk, self.kind)
            if ident is not None:
                out.add(ident)
                continue
            name = v.claim_name(pod.name)
            if name is None or (v.ephemeral is not None and self.version.minor < 23):
                continue  # ephemeral volumes are read from 1.23
            if name == "":
                raise _LookupError(error("PersistentVolumeClaim had no name"))
            pv_id = f"{_RANDOM_PREFIX}-{pod.namespace}/{name}"
            claim = storage.claim(pod.namespace, name)
            if claim is None:
                if new_pod and self.version.minor >= 23:  # before, a missing claim is not counted
                    text = f"looking up PVC {pod.namespace}/{name}: {not_found('persistentvolumeclaim', name)}"
                    raise _LookupError(unresolvable(text) if self.version.minor >= 30 else error(text))
                continue
            if v.ephemeral is not None:
                err = ephemeral_owner_error(pod, claim)
                if err:
                    raise _LookupError(error(err))
            cls = storage.classes.get(claim.spec.storage_class) if claim.spec.storage_class else None
            provisioner_matches = cls is not None and cls.provisioner == plugin
            pv = storage.pvs.get(claim.volume_name) if claim.volume_name else None
            if pv is None:
                if provisioner_matches:
                    out.add(pv_id)
                continue
            ident = _disk_id(pv.disk, self.kind)
            if ident is not None:
                out.add(ident)

    def max_volumes(self, node) -> int:
        """maxVolumeFunc, overridden by the node's allocatable limit resource."""
        key = _NON_CSI_LIMIT_KEYS[self.kind]
        if key in node.allocatable:
            return int(node.allocatable[key])
        if self.kind != "awsElasticBlockStore":
            return _DEFAULT_LIMITS[self.kind]
        types = {node.labels[k] for k in _INSTANCE_TYPE_LABELS if k in node.labels}
        if len(types) > 1:
            raise CaseError(f"node {node.name!r} has different values for {' and '.join(_INSTANCE_TYPE_LABELS)}: "
                            "EBSLimits reads whichever its map iteration meets first, which kspread does not model")
        itype = next(iter(types), "")
        return _EBS_NITRO if _EBS_NITRO_RE.search(itype) else _EBS_DEFAULT

    def count(self, pod: Pod, node_info: NodeInfo) -> tuple[int, int, int] | Status | None:
        """(attached, new, limit) on the node, a Status for a lookup error, or None when the
        filter passes before counting (no volume of the kind, or the plugin migrated)."""
        if not pod.volumes:
            return None
        storage = storage_of(self)
        new: set[str] = set()
        try:
            self._volumes(storage, pod, True, new)
        except _LookupError as e:
            return e.status
        if not new:
            return None
        if migration_on(storage.csi_nodes.get(node_info.name), self.kind, self.version):
            return None  # IsMigrated: NodeVolumeLimits counts them
        attached: set[str] = set()
        for other in node_info.pods.values():
            try:
                self._volumes(storage, other, False, attached)
            except _LookupError as e:
                return error(e.status.message)
        return len(attached), len(new - attached), self.max_volumes(node_info.node)

    def volume_lacks(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> list[tuple[str, str]]:
        """explain: the counts behind "exceed max volume count"."""
        got = self.count(pod, node_info)
        if got is None or isinstance(got, Status) or got[0] + got[1] <= got[2]:
            return []
        attached, new, limit = got
        key = _NON_CSI_LIMIT_KEYS[self.kind]
        source = (f"the node's allocatable {key}" if key in node_info.node.allocatable
                  else f"{self.name}'s default")
        return [(f"{attached} of {limit} attached ({self.kind}; limit: {source}), the pod adds {new}",
                 f"room for {attached + new - limit} more {self.kind} volume(s)")]

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        got = self.count(pod, node_info)
        if got is None:
            return SUCCESS
        if isinstance(got, Status):
            return got
        attached, new, limit = got
        if attached + new > limit:
            return unschedulable(ERR_MAX_VOLUME_COUNT)
        return SUCCESS


@register("EBSLimits", first=12, last=30)
class EBSLimits(_CloudLimits):
    kind = "awsElasticBlockStore"


@register("GCEPDLimits", first=12, last=30)
class GCEPDLimits(_CloudLimits):
    kind = "gcePersistentDisk"


@register("AzureDiskLimits", first=12, last=30)
class AzureDiskLimits(_CloudLimits):
    kind = "azureDisk"


@register("CinderLimits", first=12, last=25)
class CinderLimits(_CloudLimits):
    kind = "cinder"
