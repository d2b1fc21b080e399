"""Storage objects as the volume plugins read them: PersistentVolumes, claims, classes,
CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments, and a pod's volumes.

Built once by ``kspread.format.storage`` from a case's ``objects``; a ``schedule``
sequence works on a copy (``Storage.copy``) that binding changes as the PV controller
and an external provisioner would (``Storage.bind_pod_claims``), so later pods see it.

Upstream: k8s.io/api core/v1 and storage/v1, component-helpers/storage/volume
(pv_helpers.go: FindMatchingVolume, CheckNodeAffinity, the class and bind-completed
helpers) and component-helpers/storage/ephemeral (the claim name of an ephemeral volume).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kspread.engine.labels import IN, LabelSelector, Requirement, as_selector
from kspread.engine.model import Node, NodeSelectorTerm
from kspread.engine.plugins.nodematch import node_selector_matches

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
IMMEDIATE = "Immediate"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
FILESYSTEM = "Filesystem"

# In-tree volume sources the scheduler reads -> (in-tree plugin name, CSI driver it
# migrates to). VolumeRestrictions reads gcePersistentDisk, awsElasticBlockStore, iscsi
# and rbd; NodeVolumeLimits counts the migrated ones (csi-translation-lib).
IN_TREE_PLUGINS = {
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
    "iscsi": ("kubernetes.io/iscsi", ""),
    "rbd": ("kubernetes.io/rbd", ""),
    "portworxVolume": ("kubernetes.io/portworx-volume", "pxd.portworx.com"),
}
# in-tree provisioner name (a StorageClass's provisioner) -> CSI driver
MIGRATED_PROVISIONERS = {name: drv for name, drv in IN_TREE_PLUGINS.values() if drv}
# the first minor whose CSI migration gates (CSIMigration and CSIMigration<plugin>) are on
# by default for the in-tree source: AWS, GCE and Azure Disk beta on from 1.23, OpenStack
# (Cinder) at every version kspread models; iSCSI and RBD (alpha) never
_MIGRATION_GATES_ON = {"awsElasticBlockStore": 23, "gcePersistentDisk": 23, "azureDisk": 23, "cinder": 0,
                       "portworxVolume": 0}


def migration_gate_on(kind: str, minor: int) -> bool:
    """The in-tree source's migration gates at their defaults (kspread does not let a case
    set them)."""
    first = _MIGRATION_GATES_ON.get(kind)
    return first is not None and minor >= first


@dataclass(frozen=True, slots=True)
class InTreeDisk:
    """An in-tree volume source (inline in a pod, or a PV's): ``kind`` is the PodSpec
    field, ``ident`` what names the disk (pdName, volumeID, iqn, image, diskURI)."""

    kind: str
    ident: str
    read_only: bool = False
    monitors: tuple[str, ...] = ()  # rbd
    pool: str = ""  # rbd
    disk_name: str = ""  # azureDisk's diskName (the per-cloud AzureDiskLimits counts by it)

    def csi_handle(self) -> tuple[str, str] | None:
        """(driver, volume handle) of the migrated CSI volume, as csi-translation-lib
        translates the source; None for a source that does not migrate. An EBS volume ID
        ``aws://<zone>/<id>`` translates to ``<id>``."""
        drv = IN_TREE_PLUGINS[self.kind][1]
        if not drv:
            return None
        ident = self.ident
        if self.kind == "awsElasticBlockStore" and ident.startswith("aws://"):
            ident = ident.rsplit("/", 1)[-1]
        if self.kind == "gcePersistentDisk":
            ident = f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{ident}"
        return drv, ident


@dataclass(frozen=True, slots=True)
class ClaimSpec:
    """The parts of a PersistentVolumeClaimSpec the scheduler reads."""

    access_modes: tuple[str, ...] = ()
    request: int | None = None  # resources.requests.storage in bytes
    storage_class: str | None = None  # spec.storageClassName; None: not set
    selector: LabelSelector | None = None
    volume_mode: str = FILESYSTEM
    volume_attributes_class: str = ""
    volume_name: str = ""


@dataclass(frozen=True, slots=True)
class PodVolume:
    """One entry of a pod's ``spec.volumes`` as the volume plugins see it."""

    name: str
    claim: str | None = None  # persistentVolumeClaim.claimName
    ephemeral: ClaimSpec | None = None  # ephemeral.volumeClaimTemplate.spec
    disk: InTreeDisk | None = None
    # a `claims:` shorthand volume: the claim <name>-<pod> is made from this spec
    template: ClaimSpec | None = None
    # an image volume's image.reference (ImageLocality from 1.36; kept from 1.36 only)
    image: str | None = None
    # the volume as the case wrote it (PodSpec shape), for a backend; None: a `claims:` item
    source: Mapping[str, Any] | None = field(default=None, compare=False)

    def claim_name(self, pod_name: str) -> str | None:
        """The claim the volume uses: its claimName, or ``<pod>-<volume>`` for a generic
        ephemeral volume (ephemeral.VolumeClaimName)."""
        if self.claim is not None:
            return self.claim
        if self.ephemeral is not None:
            return f"{pod_name}-{self.name}"
        return None


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    name: str
    namespace: str
    spec: ClaimSpec
    annotations: Mapping[str, str] = field(default_factory=dict)
    phase: str = "Pending"
    deleting: bool = False
    owner_pod: str | None = None  # the Pod that controls it (an ephemeral volume's claim)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def class_name(self) -> str:
        """GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName."""
        if ANN_BETA_STORAGE_CLASS in self.annotations:
            return self.annotations[ANN_BETA_STORAGE_CLASS]
        return self.spec.storage_class or ""

    @property
    def volume_name(self) -> str:
        return self.spec.volume_name

    def fully_bound(self) -> bool:
        """isPVCFullyBound: spec.volumeName set and the bind-completed annotation."""
        return bool(self.spec.volume_name) and ANN_BIND_COMPLETED in self.annotations


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    storage_class: str = ""
    capacity: int = 0  # spec.capacity.storage in bytes
    access_modes: tuple[str, ...] = ()
    volume_mode: str = FILESYSTEM
    volume_attributes_class: str = ""
    claim_ref: tuple[str, str] | None = None  # (namespace, name)
    reclaim_policy: str = "Retain"  # spec.persistentVolumeReclaimPolicy (read when its claim is deleted)
    phase: str = "Available"
    # required node affinity terms (ORed); None: no constraint
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    csi: tuple[str, str] | None = None  # (driver, volumeHandle)
    disk: InTreeDisk | None = None
    deleting: bool = False

    @property
    def class_name(self) -> str:
        """GetPersistentVolumeClass: the beta annotation, else spec.storageClassName."""
        return self.annotations.get(ANN_BETA_STORAGE_CLASS, self.storage_class)

    def node_affinity_matches(self, node: Node) -> bool:
        """CheckNodeAffinity: the terms against the node's labels only (upstream builds
        a Node with nothing but the labels, so a matchFields term sees no name)."""
        if self.node_affinity is None:
            return True
        return node_selector_matches(self.node_affinity, Node("", node.labels, {}))

    def bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """IsVolumeBoundToClaim (kspread's objects have no UIDs)."""
        return self.claim_ref == (claim.namespace, claim.name)


@dataclass(frozen=True, slots=True)
class StorageClass:
    name: str
    provisioner: str = ""
    binding_mode: str | None = IMMEDIATE  # None: not set (an error where it is read)
    # allowedTopologies: terms ORed, each a tuple of (key, values) ANDed
    allowed_topologies: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...] = ()

    def topology_matches(self, labels: Mapping[str, str]) -> bool:
        """MatchTopologySelectorTerms: no terms match every node."""
        if not self.allowed_topologies:
            return True
        return any(all(labels.get(k) in vals for k, vals in term) for term in self.allowed_topologies)


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    name: str
    count: int | None = None  # allocatable.count
    topology_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CSINode:
    name: str
    drivers: tuple[CSINodeDriver, ...] = ()
    migrated_plugins: frozenset[str] = frozenset()

    def driver(self, name: str) -> CSINodeDriver | None:
        for d in self.drivers:
            if d.name == name:
                return d
        return None


@dataclass(frozen=True, slots=True)
class CSIDriver:
    name: str
    storage_capacity: bool = False
    # spec.preventPodSchedulingIfMissing (1.36): NodeVolumeLimits' driver check (the
    # VolumeLimitScaling gate) applies only to a driver that opts in
    prevent_if_missing: bool = False


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity:
    name: str
    namespace: str
    storage_class: str
    capacity: int | None = None
    maximum_volume_size: int | None = None
    node_topology: LabelSelector | None = None

    def limit(self) -> int | None:
        """volumeLimit: maximumVolumeSize when set, else capacity."""
        return self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity

    def node_has_access(self, node: Node) -> bool:
        """nodeHasAccess: a nil nodeTopology gives no node access."""
        if self.node_topology is None:
            return False
        return as_selector(self.node_topology).matches(node.labels)


@dataclass(frozen=True, slots=True)
class VolumeAttachment:
    name: str
    attacher: str
    node_name: str
    pv_name: str | None = None


@dataclass(slots=True)
class VolumeAssumption:
    """What a pod's VolumeBinding Reserve assumed on ``node``: (claim key, volume name, the
    volume's API object then) per static binding, (claim key, its API object then) per
    claim to provision."""

    node: str
    static: list[tuple[str, str, PersistentVolume]] = field(default_factory=list)
    provision: list[tuple[str, PersistentVolumeClaim]] = field(default_factory=list)


@dataclass(slots=True)
class Storage:
    """Every storage object of a case, by name (claims and capacities by namespace/name)."""

    pvs: dict[str, PersistentVolume] = field(default_factory=dict)
    pvcs: dict[str, PersistentVolumeClaim] = field(default_factory=dict)
    classes: dict[str, StorageClass] = field(default_factory=dict)
    csi_nodes: dict[str, CSINode] = field(default_factory=dict)
    csi_drivers: dict[str, CSIDriver] = field(default_factory=dict)
    capacities: list[CSIStorageCapacity] = field(default_factory=list)
    attachments: list[VolumeAttachment] = field(default_factory=list)
    # provisioned volumes so far (names pvc-<n>), for deterministic names
    provisioned: int = 0
    # the objects as the case wrote them, in order (what a backend is sent)
    manifests: list[Mapping[str, Any]] = field(default_factory=list)
    # VolumeBinding's assume caches (pvCache, pvcCache): name -> (the API object assumed
    # over, the assumed object); an entry holds while the API object is the one it was
    # assumed over (an informer update of the object replaces what was assumed)
    assumed_pvs: dict[str, tuple[PersistentVolume, PersistentVolume]] = field(default_factory=dict)
    assumed_pvcs: dict[str, tuple[PersistentVolumeClaim, PersistentVolumeClaim]] = field(default_factory=dict)
    # the pods whose Reserve assumed volumes, not yet written by PreBind nor reverted
    assumptions: dict[str, VolumeAssumption] = field(default_factory=dict)

    def copy(self) -> Storage:
        return Storage(dict(self.pvs), dict(self.pvcs), dict(self.classes), dict(self.csi_nodes),
                       dict(self.csi_drivers), list(self.capacities), list(self.attachments), self.provisioned,
                       self.manifests, dict(self.assumed_pvs), dict(self.assumed_pvcs), dict(self.assumptions))

    def binder_view(self) -> Storage:
        """The objects as VolumeBinding's binder reads them: its assume caches over the
        API objects (the other volume plugins read the API objects: ``self``)."""
        pvs = {n: a for n, (base, a) in self.assumed_pvs.items() if self.pvs.get(n) is base}
        pvcs = {k: a for k, (base, a) in self.assumed_pvcs.items() if self.pvcs.get(k) is base}
        if not pvs and not pvcs:
            return self
        view = Storage(self.pvs | pvs, self.pvcs | pvcs, self.classes, self.csi_nodes, self.csi_drivers,
                       self.capacities, self.attachments, self.provisioned, self.manifests)
        return view

    # ---- VolumeBinding's Reserve, PreBind and Unreserve ----------------------------------

    def assume_pod_volumes(self, pod_key: str, node_name: str,
                           static: list[tuple[PersistentVolumeClaim, PersistentVolume]],
                           provision: list[PersistentVolumeClaim]) -> None:
        """AssumePodVolumes: each chosen volume prebound to its claim (GetBindVolumeToClaim:
        claimRef, and bound-by-controller unless it was bound to the claim) and each claim
        to provision annotated with the selected node, in the assume caches."""
        record = VolumeAssumption(node_name)
        for claim, pv in static:
            new = pv
            if not pv.bound_to(claim):
                new = replace(pv, claim_ref=(claim.namespace, claim.name))
                if ANN_BOUND_BY_CONTROLLER not in pv.annotations:
                    new = replace(new, annotations={**pv.annotations, ANN_BOUND_BY_CONTROLLER: "yes"})
            base = self.pvs[pv.name]
            if new is not pv:
                self.assumed_pvs[pv.name] = (base, new)
            record.static.append((claim.key, pv.name, base))
        for claim in provision:
            base_claim = self.pvcs[claim.key]
            clone = replace(claim, annotations={**claim.annotations, ANN_SELECTED_NODE: node_name})
            self.assumed_pvcs[claim.key] = (base_claim, clone)
            record.provision.append((claim.key, base_claim))
        self.assumptions[pod_key] = record

    def revert_pod_volumes(self, pod_key: str) -> None:
        """RevertAssumedPodVolumes (Unreserve): the assume caches restore the API objects of
        what the pod assumed (whoever assumed them last)."""
        record = self.assumptions.pop(pod_key, None)
        if record is None:
            return
        for _, name, _ in record.static:
            self.assumed_pvs.pop(name, None)
        for key, _ in record.provision:
            self.assumed_pvcs.pop(key, None)

    def empty(self) -> bool:
        return not (self.pvs or self.pvcs or self.classes or self.csi_nodes or self.csi_drivers
                    or self.capacities or self.attachments)

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get(f"{namespace}/{name}")

    def pvs_of_class(self, class_name: str) -> list[PersistentVolume]:
        """pvCache.ListPVs: the volumes of a class (GetPersistentVolumeClass), by name."""
        return [pv for _, pv in sorted(self.pvs.items()) if pv.class_name == class_name]

    def is_delay_binding(self, claim: PersistentVolumeClaim) -> bool | str:
        """IsDelayBindingMode: True / False, or the error text (a class without a mode)."""
        name = claim.class_name
        if not name:
            return False
        cls = self.classes.get(name)
        if cls is None:
            return False
        if cls.binding_mode is None:
            return f'VolumeBindingMode not set for StorageClass "{name}"'
        return cls.binding_mode == WAIT_FOR_FIRST_CONSUMER

    # ---- binding (PV controller / provisioner emulation in a sequence) ----------------

    def bind_claim_to_volume(self, claim: PersistentVolumeClaim, pv: PersistentVolume) -> None:
        """The PV controller binds a chosen volume: both sides, bind-completed."""
        self.pvs[pv.name] = replace(pv, claim_ref=(claim.namespace, claim.name), phase="Bound",
                                    annotations={**pv.annotations, ANN_BOUND_BY_CONTROLLER: "yes"})
        self.pvcs[claim.key] = replace(
            claim, spec=replace(claim.spec, volume_name=pv.name), phase="Bound",
            annotations={**claim.annotations, ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes"})

    def provision(self, claim: PersistentVolumeClaim, node: Node) -> PersistentVolume:
        """An external provisioner creates a volume for the claim on ``node`` and the PV
        controller binds them. Its node affinity: the node's values of the topology keys
        the class's CSI driver reports in the node's CSINode; else of the keys of the
        class's allowedTopologies; else the node's hostname (see the case format)."""
        cls = self.classes[claim.class_name]
        keys: tuple[str, ...] = ()
        csi_node = self.csi_nodes.get(node.name)
        drv = csi_node.driver(cls.provisioner) if csi_node is not None else None
        if drv is not None and drv.topology_keys:
            keys = drv.topology_keys
        elif cls.allowed_topologies:
            keys = tuple(dict.fromkeys(k for term in cls.allowed_topologies for k, _ in term))
        else:
            keys = ("kubernetes.io/hostname",)
        reqs = tuple(Requirement(k, IN, (node.labels[k],)) for k in keys if k in node.labels)
        self.provisioned += 1
        name = f"pvc-{claim.namespace}-{claim.name}"
        while name in self.pvs:
            name = f"{name}-{self.provisioned}"
        pv = PersistentVolume(
            name=name, annotations={ANN_PROVISIONED_BY: cls.provisioner}, storage_class=cls.name,
            capacity=claim.spec.request or 0, access_modes=claim.spec.access_modes,
            volume_mode=claim.spec.volume_mode, volume_attributes_class=claim.spec.volume_attributes_class,
            phase="Available", node_affinity=(NodeSelectorTerm(reqs),) if reqs else None,
            csi=(cls.provisioner, name) if not cls.provisioner.startswith("kubernetes.io/") else None)
        self.pvs[name] = pv
        self.bind_claim_to_volume(claim, pv)
        return self.pvs[name]
