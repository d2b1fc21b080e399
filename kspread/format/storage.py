"""Storage objects of a case (``objects:`` of kinds PersistentVolume,
PersistentVolumeClaim, StorageClass, CSINode, CSIDriver, CSIStorageCapacity and
VolumeAttachment, as ``kubectl get -o yaml`` prints them) and a pod's ``volumes`` (PodSpec
shape) and ``claims`` (shorthand), turned into ``kspread.engine.storage``'s values.
Only what the scheduler reads is kept; a malformed field is an error naming its path."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kspread.engine.labels import parse_label_selector, parse_labels
from kspread.engine.model import NodeSelectorTerm
from kspread.engine.quantity import QuantityError, parse_quantity, value
from kspread.engine.storage import (
    IMMEDIATE,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimSpec,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    InTreeDisk,
    PersistentVolume,
    PersistentVolumeClaim,
    PodVolume,
    Storage,
    StorageClass,
    VolumeAttachment,
)
from kspread.errors import CaseError, PathT, did_you_mean

STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity", "VolumeAttachment")
_ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
_VOLUME_MODES = ("Filesystem", "Block")
# PodSpec volume sources: the in-tree disks read (and the field naming each disk)
_DISK_IDENT = {"gcePersistentDisk": "pdName", "awsElasticBlockStore": "volumeID", "iscsi": "iqn",
               "rbd": "image", "azureDisk": "diskURI", "cinder": "volumeID", "portworxVolume": "volumeID"}
# the in-tree disk sources a pod's volumes keep (the others the scheduler may read are not modelled)
DISK_SOURCES = tuple(_DISK_IDENT)


def _map(raw: Any, path: PathT) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise CaseError("must be a mapping", path, value=raw)
    return raw


def _list(raw: Any, path: PathT) -> list:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise CaseError("must be a list", path, value=raw)
    return raw


def _str(raw: Any, path: PathT, default: str = "") -> str:
    if raw is None:
        return default
    if not isinstance(raw, str):
        raise CaseError("must be a string", path, value=raw)
    return raw


def _bytes(raw: Any, path: PathT) -> int:
    try:
        return value(parse_quantity(raw))
    except QuantityError as e:
        raise CaseError(str(e), path, value=raw) from None


def _modes(raw: Any, path: PathT) -> tuple[str, ...]:
    out = []
    for i, m in enumerate(_list(raw, path)):
        if m not in _ACCESS_MODES:
            raise CaseError(f'Unsupported value: "{m}": supported values: '
                            + ", ".join(f'"{x}"' for x in _ACCESS_MODES), [*path, i], value=m)
        out.append(m)
    return tuple(out)


def _volume_mode(raw: Any, path: PathT) -> str:
    if raw is None:
        return "Filesystem"
    if raw not in _VOLUME_MODES:
        raise CaseError(f'Unsupported value: "{raw}": supported values: "Block", "Filesystem"', path, value=raw)
    return raw


def _reclaim_policy(raw: Any, path: PathT) -> str:
    """spec.persistentVolumeReclaimPolicy: Retain unless given (the API server's default)."""
    if raw is None:
        return "Retain"
    if raw not in ("Delete", "Recycle", "Retain"):
        raise CaseError(f'Unsupported value: "{raw}": supported values: "Delete", "Recycle", "Retain"', path,
                        value=raw)
    return raw


def _annotations(meta: Mapping[str, Any], path: PathT) -> dict[str, str]:
    ann = _map(meta.get("annotations"), [*path, "annotations"])
    for k, v in ann.items():
        if not isinstance(v, str):
            raise CaseError("an annotation value must be a string", [*path, "annotations", k], value=v)
    return dict(ann)


def claim_spec(raw: Any, path: PathT) -> ClaimSpec:
    """A PersistentVolumeClaimSpec."""
    spec = _map(raw, path)
    _known_fields("PersistentVolumeClaimSpec", spec, path)
    resources = _map(spec.get("resources"), [*path, "resources"])
    _known_fields("resources", resources, [*path, "resources"])
    req = _map(resources.get("requests"), [*path, "resources", "requests"])
    request = _bytes(req["storage"], [*path, "resources", "requests", "storage"]) if "storage" in req else None
    sc = spec.get("storageClassName")
    return ClaimSpec(
        access_modes=_modes(spec.get("accessModes"), [*path, "accessModes"]),
        request=request,
        storage_class=None if sc is None else _str(sc, [*path, "storageClassName"]),
        selector=parse_label_selector(spec["selector"], [*path, "selector"]) if spec.get("selector") is not None
        else None,
        volume_mode=_volume_mode(spec.get("volumeMode"), [*path, "volumeMode"]),
        volume_attributes_class=_str(spec.get("volumeAttributesClassName"), [*path, "volumeAttributesClassName"]),
        volume_name=_str(spec.get("volumeName"), [*path, "volumeName"]),
    )


# the fields of each volume source (k8s.io/api core/v1), as the API server decodes them: another
# is a mistyped key, an error at its line
_SOURCE_FIELDS = {
    "persistentVolumeClaim": ("claimName", "readOnly"),
    "ephemeral": ("volumeClaimTemplate",),
    "local": ("path", "fsType"),  # a PersistentVolume's LocalVolumeSource (not read: checked as the API does)
    "volumeClaimTemplate": ("metadata", "spec"),  # PersistentVolumeClaimTemplate
    "PersistentVolumeClaimSpec": ("accessModes", "selector", "resources", "volumeName", "storageClassName",
                                  "volumeMode", "dataSource", "dataSourceRef", "volumeAttributesClassName"),
    "resources": ("requests", "limits"),  # VolumeResourceRequirements
    "gcePersistentDisk": ("pdName", "fsType", "partition", "readOnly"),
    "awsElasticBlockStore": ("volumeID", "fsType", "partition", "readOnly"),
    "iscsi": ("targetPortal", "iqn", "lun", "iscsiInterface", "fsType", "readOnly", "portals", "chapAuthDiscovery",
              "chapAuthSession", "secretRef", "initiatorName"),
    "rbd": ("monitors", "image", "fsType", "pool", "user", "keyring", "secretRef", "readOnly"),
    "azureDisk": ("diskName", "diskURI", "cachingMode", "fsType", "readOnly", "kind"),
    "cinder": ("volumeID", "fsType", "readOnly", "secretRef"),
    "portworxVolume": ("volumeID", "fsType", "readOnly"),
    # a PersistentVolume's csi (CSIPersistentVolumeSource)
    "csi": ("driver", "volumeHandle", "readOnly", "fsType", "volumeAttributes", "controllerPublishSecretRef",
            "nodeStageSecretRef", "nodePublishSecretRef", "controllerExpandSecretRef", "nodeExpandSecretRef"),
}


def _known_fields(kind: str, src: Mapping[str, Any], path: PathT) -> None:
    allowed = _SOURCE_FIELDS[kind]
    for key in src:
        if key not in allowed:
            raise CaseError(f"unknown field {key!r} in {kind} (allowed: {', '.join(sorted(allowed))})"
                            + did_you_mean(key, allowed), [*path, str(key)])


def _disk(kind: str, raw: Any, path: PathT) -> InTreeDisk:
    src = _map(raw, path)
    _known_fields(kind, src, path)
    ident_key = _DISK_IDENT[kind]
    if kind == "azureDisk" and "diskURI" not in src:
        ident_key = "diskName"
    ident = src.get(ident_key)
    if not isinstance(ident, str) or not ident:
        raise CaseError("Required value", [*path, ident_key])
    ro = src.get("readOnly", False)
    if not isinstance(ro, bool):
        raise CaseError("must be a boolean", [*path, "readOnly"], value=ro)
    monitors: tuple[str, ...] = ()
    pool = ""
    if kind == "rbd":
        monitors = tuple(_str(m, [*path, "monitors", i]) for i, m in enumerate(_list(src.get("monitors"),
                                                                                       [*path, "monitors"])))
        if not monitors:
            raise CaseError("Required value", [*path, "monitors"])
        pool = _str(src.get("pool"), [*path, "pool"], "rbd")  # the API's default
    disk_name = ""
    if kind == "azureDisk":
        disk_name = _str(src.get("diskName"), [*path, "diskName"], "")
    return InTreeDisk(kind, ident, ro, monitors, pool, disk_name)


# core/v1 Volume: its name and the VolumeSource fields (one of them the volume's type)
_VOLUME_FIELDS = frozenset((
    "name", "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
    "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
    "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
    "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image"))


def _volume_name(item: Mapping[str, Any], at: PathT, taken: set[str]) -> str:
    """A volume's (or a `claims:` item's) name: required, and unique among the pod's volumes."""
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise CaseError("Required value", [*at, "name"])
    if name in taken:
        raise CaseError(f'Duplicate value: "{name}"', [*at, "name"], value=name)
    taken.add(name)
    return name


def pod_volumes(raw: Any, path: PathT) -> tuple[PodVolume, ...]:
    """A PodSpec's ``volumes``: those the volume plugins read (claims, ephemeral volumes,
    in-tree disks) and image volumes (ImageLocality); the names of all must be unique."""
    out = []
    seen: set[str] = set()
    for i, v in enumerate(_list(raw, path)):
        at = [*path, i]
        v = _map(v, at)
        name = _volume_name(v, at, seen)
        for key in v:
            if key not in _VOLUME_FIELDS:  # the API server's strict decoding
                raise CaseError(f"unknown field {key!r} in a volume" + did_you_mean(str(key), _VOLUME_FIELDS),
                                [*at, str(key)])
        if v.get("persistentVolumeClaim") is not None:
            pvc = _map(v["persistentVolumeClaim"], [*at, "persistentVolumeClaim"])
            _known_fields("persistentVolumeClaim", pvc, [*at, "persistentVolumeClaim"])
            claim = pvc.get("claimName")
            if not isinstance(claim, str) or not claim:
                raise CaseError("Required value", [*at, "persistentVolumeClaim", "claimName"])
            out.append(PodVolume(name, claim=claim, source=v))
            continue
        if v.get("ephemeral") is not None:
            eph = _map(v["ephemeral"], [*at, "ephemeral"])
            _known_fields("ephemeral", eph, [*at, "ephemeral"])
            tmpl = _map(eph.get("volumeClaimTemplate"), [*at, "ephemeral", "volumeClaimTemplate"])
            if not tmpl:
                raise CaseError("Required value", [*at, "ephemeral", "volumeClaimTemplate"])
            _known_fields("volumeClaimTemplate", tmpl, [*at, "ephemeral", "volumeClaimTemplate"])
            if tmpl.get("spec") is None:  # ValidatePersistentVolumeClaimTemplate: the spec is required
                raise CaseError("Required value", [*at, "ephemeral", "volumeClaimTemplate", "spec"])
            out.append(PodVolume(name, ephemeral=claim_spec(tmpl.get("spec"),
                                                            [*at, "ephemeral", "volumeClaimTemplate", "spec"]),
                                 source=v))
            continue
        disk = next((k for k in _DISK_IDENT if v.get(k) is not None), None)
        if disk is not None:
            out.append(PodVolume(name, disk=_disk(disk, v[disk], [*at, disk]), source=v))
            continue
        if v.get("image") is not None:
            img = _map(v["image"], [*at, "image"])
            for key in img:
                if key not in ("reference", "pullPolicy"):
                    raise CaseError(f"unknown field {key!r} in an image volume", [*at, "image", str(key)])
            ref = img.get("reference")
            if not isinstance(ref, str) or not ref:
                raise CaseError("Required value", [*at, "image", "reference"])
            out.append(PodVolume(name, image=ref, source=v))
            continue
        # emptyDir, configMap, csi inline, ...: no volume plugin reads it, kspread keeps none
    return tuple(out)


def claims_shorthand(raw: Any, path: PathT, taken: set[str]) -> tuple[PodVolume, ...]:
    """The pod shorthand ``claims:`` (a StatefulSet's volumeClaimTemplates): each item
    ``{name, storageClassName, storage, accessModes, volumeMode, selector}`` is a volume
    ``name`` using the claim ``<name>-<pod>`` (set per pod when the pod is made), which
    ``add_pod_claims`` creates from the item unless the case has it. ``accessModes``
    defaults to ``[ReadWriteOnce]``."""
    vols = []
    for i, item in enumerate(_list(raw, path)):
        at = [*path, i]
        item = _map(item, at)
        name = _volume_name(item, at, taken)
        spec: dict[str, Any] = {"accessModes": item.get("accessModes", ["ReadWriteOnce"]),
                                "storageClassName": item.get("storageClassName"),
                                "volumeMode": item.get("volumeMode"), "selector": item.get("selector")}
        if item.get("storage") is not None:
            spec["resources"] = {"requests": {"storage": item["storage"]}}
        vols.append(PodVolume(name, template=claim_spec(spec, at)))
    return tuple(vols)


TermsParser = Callable[[list, PathT], tuple[NodeSelectorTerm, ...]]


def _pv(obj: Mapping[str, Any], meta: Mapping[str, Any], path: PathT, terms: TermsParser) -> PersistentVolume:
    spec = _map(obj.get("spec"), [*path, "spec"])
    sp = [*path, "spec"]
    cap = _map(spec.get("capacity"), [*sp, "capacity"])
    ref = spec.get("claimRef")
    claim_ref = None
    if ref is not None:
        ref = _map(ref, [*sp, "claimRef"])
        claim_ref = (_str(ref.get("namespace"), [*sp, "claimRef", "namespace"], "default"),
                     _str(ref.get("name"), [*sp, "claimRef", "name"]))
    affinity = None
    na = spec.get("nodeAffinity")
    if na is not None:
        req = _map(na, [*sp, "nodeAffinity"]).get("required")
        if req is not None:
            raw = _map(req, [*sp, "nodeAffinity", "required"]).get("nodeSelectorTerms")
            at = [*sp, "nodeAffinity", "required", "nodeSelectorTerms"]
            affinity = terms(_list(raw, at), at)
    csi = None
    if spec.get("csi") is not None:
        c = _map(spec["csi"], [*sp, "csi"])
        _known_fields("csi", c, [*sp, "csi"])
        csi = (_str(c.get("driver"), [*sp, "csi", "driver"]), _str(c.get("volumeHandle"), [*sp, "csi", "volumeHandle"]))
    if spec.get("local") is not None:
        loc = _map(spec["local"], [*sp, "local"])
        _known_fields("local", loc, [*sp, "local"])
        if not isinstance(loc.get("path"), str) or not loc["path"]:
            raise CaseError("Required value", [*sp, "local", "path"])
    disk = None
    for k in _DISK_IDENT:
        if spec.get(k) is not None:
            disk = _disk(k, spec[k], [*sp, k])
    status = _map(obj.get("status"), [*path, "status"])
    return PersistentVolume(
        name=meta["name"], labels=parse_labels(meta.get("labels"), [*path, "metadata", "labels"]),
        annotations=_annotations(meta, [*path, "metadata"]),
        storage_class=_str(spec.get("storageClassName"), [*sp, "storageClassName"]),
        capacity=_bytes(cap["storage"], [*sp, "capacity", "storage"]) if "storage" in cap else 0,
        access_modes=_modes(spec.get("accessModes"), [*sp, "accessModes"]),
        volume_mode=_volume_mode(spec.get("volumeMode"), [*sp, "volumeMode"]),
        volume_attributes_class=_str(spec.get("volumeAttributesClassName"), [*sp, "volumeAttributesClassName"]),
        claim_ref=claim_ref,
        reclaim_policy=_reclaim_policy(spec.get("persistentVolumeReclaimPolicy"), [*sp, "persistentVolumeReclaimPolicy"]),
        # a PV written without status is Available, or Bound when it has a claimRef
        phase=_str(status.get("phase"), [*path, "status", "phase"], "Bound" if claim_ref else "Available"),
        node_affinity=affinity, csi=csi, disk=disk, deleting=bool(meta.get("deletionTimestamp")))


def _pvc(obj: Mapping[str, Any], meta: Mapping[str, Any], path: PathT) -> PersistentVolumeClaim:
    spec = claim_spec(obj.get("spec"), [*path, "spec"])
    status = _map(obj.get("status"), [*path, "status"])
    owner = None
    for ref in _list(meta.get("ownerReferences"), [*path, "metadata", "ownerReferences"]):
        if isinstance(ref, Mapping) and ref.get("kind") == "Pod" and ref.get("controller") is True:
            owner = ref.get("name")
    return PersistentVolumeClaim(
        name=meta["name"], namespace=_str(meta.get("namespace"), [*path, "metadata", "namespace"], "default"),
        spec=spec, annotations=_annotations(meta, [*path, "metadata"]),
        phase=_str(status.get("phase"), [*path, "status", "phase"], "Pending"),
        deleting=bool(meta.get("deletionTimestamp")), owner_pod=owner)


def _class(obj: Mapping[str, Any], meta: Mapping[str, Any], path: PathT) -> StorageClass:
    mode = obj.get("volumeBindingMode", IMMEDIATE)
    if mode not in (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER):
        raise CaseError(f'Unsupported value: "{mode}": supported values: "Immediate", "WaitForFirstConsumer"',
                        [*path, "volumeBindingMode"], value=mode)
    terms = []
    for i, t in enumerate(_list(obj.get("allowedTopologies"), [*path, "allowedTopologies"])):
        at = [*path, "allowedTopologies", i]
        reqs = []
        for j, e in enumerate(_list(_map(t, at).get("matchLabelExpressions"), [*at, "matchLabelExpressions"])):
            e = _map(e, [*at, "matchLabelExpressions", j])
            vals = tuple(_str(v, [*at, "matchLabelExpressions", j, "values", k])
                         for k, v in enumerate(_list(e.get("values"), [*at, "matchLabelExpressions", j, "values"])))
            reqs.append((_str(e.get("key"), [*at, "matchLabelExpressions", j, "key"]), vals))
        terms.append(tuple(reqs))
    return StorageClass(meta["name"], _str(obj.get("provisioner"), [*path, "provisioner"]), mode, tuple(terms))


def _csinode(obj: Mapping[str, Any], meta: Mapping[str, Any], path: PathT) -> CSINode:
    drivers = []
    sp = [*path, "spec"]
    for i, d in enumerate(_list(_map(obj.get("spec"), sp).get("drivers"), [*sp, "drivers"])):
        at = [*sp, "drivers", i]
        d = _map(d, at)
        count = _map(d.get("allocatable"), [*at, "allocatable"]).get("count")
        if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 0):
            raise CaseError("must be greater than or equal to 0", [*at, "allocatable", "count"], value=count)
        keys = tuple(_str(k, [*at, "topologyKeys", j]) for j, k in enumerate(_list(d.get("topologyKeys"),
                                                                                     [*at, "topologyKeys"])))
        drivers.append(CSINodeDriver(_str(d.get("name"), [*at, "name"]), count, keys))
    migrated = _annotations(meta, [*path, "metadata"]).get("storage.alpha.kubernetes.io/migrated-plugins", "")
    return CSINode(meta["name"], tuple(drivers), frozenset(p for p in migrated.split(",") if p))


def _csidriver(obj: Mapping[str, Any], meta: Mapping[str, Any], path: PathT) -> CSIDriver:
    spec = _map(obj.get("spec"), [*path, "spec"])
    flags = []
    for key in ("storageCapacity", "preventPodSchedulingIfMissing"):
        value = spec.get(key, False)
        if value is None:
            value = False
        if not isinstance(value, bool):
            raise CaseError("must be a boolean", [*path, "spec", key], value=value)
        flags.append(value)
    return CSIDriver(meta["name"], flags[0], flags[1])


def _capacity(obj: Mapping[str, Any], meta: Mapping[str, Any], path: PathT) -> CSIStorageCapacity:
    topo = obj.get("nodeTopology")
    return CSIStorageCapacity(
        meta["name"], _str(meta.get("namespace"), [*path, "metadata", "namespace"], "default"),
        _str(obj.get("storageClassName"), [*path, "storageClassName"]),
        _bytes(obj["capacity"], [*path, "capacity"]) if obj.get("capacity") is not None else None,
        _bytes(obj["maximumVolumeSize"], [*path, "maximumVolumeSize"]) if obj.get("maximumVolumeSize") is not None
        else None,
        parse_label_selector(topo, [*path, "nodeTopology"]) if topo is not None else None)


def _attachment(obj: Mapping[str, Any], meta: Mapping[str, Any], path: PathT) -> VolumeAttachment:
    sp = [*path, "spec"]
    spec = _map(obj.get("spec"), sp)
    src = _map(spec.get("source"), [*sp, "source"])
    pv = src.get("persistentVolumeName")
    return VolumeAttachment(meta["name"], _str(spec.get("attacher"), [*sp, "attacher"]),
                            _str(spec.get("nodeName"), [*sp, "nodeName"]),
                            None if pv is None else _str(pv, [*sp, "source", "persistentVolumeName"]))


def add_object(storage: Storage, obj: Mapping[str, Any], path: PathT, terms: TermsParser) -> None:
    """One raw storage object into ``storage``; a name defined twice is an error.
    ``terms`` parses a list of nodeSelectorTerms (``kspread.format.case``'s, which
    imports this module)."""
    kind = obj["kind"]
    meta = obj["metadata"]
    storage.manifests.append(obj)
    if kind == "PersistentVolume":
        pv = _pv(obj, meta, path, terms)
        _unique(storage.pvs, pv.name, pv, kind, path)
    elif kind == "PersistentVolumeClaim":
        pvc = _pvc(obj, meta, path)
        _unique(storage.pvcs, pvc.key, pvc, kind, path)
    elif kind == "StorageClass":
        sc = _class(obj, meta, path)
        _unique(storage.classes, sc.name, sc, kind, path)
    elif kind == "CSINode":
        cn = _csinode(obj, meta, path)
        _unique(storage.csi_nodes, cn.name, cn, kind, path)
    elif kind == "CSIDriver":
        cd = _csidriver(obj, meta, path)
        _unique(storage.csi_drivers, cd.name, cd, kind, path)
    elif kind == "CSIStorageCapacity":
        storage.capacities.append(_capacity(obj, meta, path))
    elif kind == "VolumeAttachment":
        storage.attachments.append(_attachment(obj, meta, path))


def _unique(d: dict, key: str, val: Any, kind: str, path: PathT) -> None:
    if key in d:
        raise CaseError(f"{kind} {key!r} is defined twice", [*path, "metadata", "name"], value=key)
    d[key] = val


def add_pod_claims(storage: Storage, pod_name: str, namespace: str, volumes: tuple[PodVolume, ...]) -> None:
    """The claims the controllers create for a pod: an ephemeral volume's ``<pod>-<volume>``
    (owned by the pod) and a ``claims:`` volume's ``<volume>-<pod>``, unless the case has a
    claim of that name."""
    for v in volumes:
        spec = v.ephemeral if v.ephemeral is not None else v.template
        name = v.claim_name(pod_name)
        if spec is None or name is None or storage.claim(namespace, name) is not None:
            continue
        owner = pod_name if v.ephemeral is not None else None
        storage.pvcs[f"{namespace}/{name}"] = PersistentVolumeClaim(name, namespace, spec, owner_pod=owner)
