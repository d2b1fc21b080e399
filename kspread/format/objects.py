"""Raw Kubernetes objects (``objects:``, as ``kubectl get -o yaml`` prints them)
turned into the shorthand forms of the case format, keeping only what the
scheduler reads. Every shorthand field remembers where it came from, so an error
points into the raw object."""

from __future__ import annotations

import difflib
import json
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kspread.errors import CaseError, PathT
from kspread.format.devices import MODELLED_DRA
from kspread.format.labelkeys import written_affinity, written_spread_constraints
from kspread.format.schema import validate

Converted = tuple[str, dict, list, dict]  # (section, shorthand item, path prefix, field -> raw path)

_CONTAINER_FIELDS = ("name", "image", "resources", "ports", "restartPolicy", "restartPolicyRules", "volumeMounts")


def _container(raw: Mapping[str, Any]) -> dict:
    out = {k: raw[k] for k in _CONTAINER_FIELDS if k in raw}
    res = out.get("resources")
    if isinstance(res, Mapping):
        out["resources"] = {k: res[k] for k in ("requests", "limits") if k in res}
    if isinstance(out.get("ports"), list):
        out["ports"] = [
            {k: p[k] for k in ("containerPort", "hostPort", "protocol", "hostIP") if k in p}
            for p in out["ports"]
            if isinstance(p, Mapping)
        ]
    return out


def _meta(obj: Mapping[str, Any], path: PathT) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    if meta is None:
        # a mistyped metadata key is named at its own line, not as a missing name
        near = difflib.get_close_matches("metadata", [str(k) for k in obj], n=1, cutoff=0.75)
        if near:
            raise CaseError(f"unknown field {near[0]!r} (did you mean 'metadata'?): a Kubernetes object needs "
                            "metadata.name", [*path, near[0]])
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
        raise CaseError("a Kubernetes object needs metadata.name", [*path, "metadata", "name"])
    _check_one_controller(meta.get("ownerReferences"), [*path, "metadata", "ownerReferences"])
    return meta


def _check_one_controller(refs: Any, path: list) -> None:
    """ValidateOwnerReferences: at most one owner reference is the controller (a pod's
    ``controller`` is the one that is)."""
    first = None
    for i, ref in enumerate(refs if isinstance(refs, list) else ()):
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            name = f"{ref.get('kind')}/{ref.get('name')}"
            if first is not None:
                raise CaseError('Only one reference can have Controller set to true. Found "true" in references for '
                                f"{first} and {name}", [*path, i, "controller"])
            first = name


# apimachinery's rand.SafeEncodeString alphabet: no vowels, no 0/1/3 (no bad words, no look-alikes)
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
POD_TEMPLATE_HASH = "pod-template-hash"  # apps/v1 DefaultDeploymentUniqueLabelKey


def _fnv32a(data: bytes, h: int = 0x811C9DC5) -> int:
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def pod_template_hash(template: Any, collision_count: int | None) -> str:
    """kspread's pod-template-hash of a Deployment's template, as the deployment
    controller's ``controller.ComputeHash`` builds it (FNV-32a, then the collision count
    as 8 little-endian bytes, the decimal sum encoded by ``rand.SafeEncodeString``) but
    over the template's canonical JSON (sorted keys, no spaces), not the Go struct's
    printed form that upstream hashes: deterministic, and not the hash a cluster shows."""
    text = json.dumps(template, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    h = _fnv32a(text.encode("utf-8"))
    if collision_count is not None:
        h = _fnv32a(struct.pack("<I", collision_count & 0xFFFFFFFF) + bytes(4), h)
    return "".join(_SAFE_ALPHABET[b % len(_SAFE_ALPHABET)] for b in str(h).encode("ascii"))


@dataclass
class _Object:
    """A raw object being turned into a shorthand item: its parts, and ``item`` with,
    for each of its fields, the raw path the value came from (``fmap``)."""

    obj: Mapping[str, Any]
    path: list
    meta: Mapping[str, Any]
    item: dict[str, Any] = field(default_factory=dict)
    fmap: dict[str, list] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.kind = self.obj.get("kind")
        self.spec: Mapping[str, Any] = self.obj.get("spec") or {}
        self.status: Mapping[str, Any] = self.obj.get("status") or {}
        self.mp = [*self.path, "metadata"]
        self.sp = [*self.path, "spec"]
        self.st = [*self.path, "status"]
        self.put("name", self.meta["name"], [*self.mp, "name"])

    def put(self, dst: str, value: Any, where: list) -> None:
        self.item[dst] = value
        self.fmap[dst] = where

    def take(self, src: Mapping[str, Any], key: str, dst: str, where: list) -> None:
        """``src[key]`` (when given) as field ``dst``, from ``where`` + ``key``."""
        if src.get(key) is not None:
            self.put(dst, src[key], [*where, key])


def _node(o: _Object) -> None:
    """A Node: metadata.labels, status.allocatable, spec.unschedulable, spec.taints
    (key, value, effect), status.images (names, sizeBytes) and status.declaredFeatures."""
    o.take(o.meta, "labels", "labels", o.mp)
    o.take(o.status, "allocatable", "allocatable", o.st)
    o.take(o.spec, "unschedulable", "unschedulable", o.sp)
    if o.spec.get("taints"):
        o.put("taints", [{k: t[k] for k in ("key", "value", "effect") if k in t} for t in o.spec["taints"]],
              [*o.sp, "taints"])
    if o.status.get("images"):
        o.put("images", [{"names": im.get("names") or [], "sizeBytes": im.get("sizeBytes", 0)}
                         for im in o.status["images"]], [*o.st, "images"])
    o.take(o.status, "declaredFeatures", "declaredFeatures", o.st)


# The volume sources upstream's volume plugins read (VolumeBinding, VolumeZone and
# VolumeRestrictions: claims; VolumeRestrictions: disk conflicts; NodeVolumeLimits: claims and
# the in-tree sources the CSI translation migrates), none of which kspread models.
SCHEDULER_VOLUME_SOURCES = ("persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore", "rbd",
                            "iscsi", "cinder", "azureDisk", "azureFile", "vsphereVolume", "portworxVolume")


def unmodelled_volumes(volumes: Any) -> tuple[str, ...]:
    """``Pod.unmodelled`` of a pod's ``volumes``: ``volumes[i].<source>`` for each volume of a
    source the scheduler reads."""
    out: list[str] = []
    for i, v in enumerate(volumes or ()):
        if isinstance(v, Mapping):
            out += [f"volumes[{i}].{k}" for k in SCHEDULER_VOLUME_SOURCES if k in v]
    return tuple(out)


def _pod(o: _Object) -> None:
    """A Pod (not a terminated one): namespace, labels, being deleted, the controller
    owner reference, the spec fields the scheduler reads (containers with their
    resources and ports), startTime, nominatedNodeName, a DisruptionTarget condition
    the scheduler's preemption set, and its volumes."""
    meta, spec, status, mp, sp, st = o.meta, o.spec, o.status, o.mp, o.sp, o.st
    o.take(meta, "namespace", "namespace", mp)
    o.take(meta, "labels", "labels", mp)
    if meta.get("deletionTimestamp"):
        o.item["terminating"] = True
    for i, ref in enumerate(meta.get("ownerReferences") or []):
        if isinstance(ref, Mapping) and ref.get("controller"):
            o.put("controller", {"kind": ref.get("kind"), "name": ref.get("name"),
                                 "apiVersion": ref.get("apiVersion", "")}, [*mp, "ownerReferences", i])
            break
    o.take(spec, "nodeName", "node", sp)
    o.take(spec, "priority", "priority", sp)
    o.take(spec, "priorityClassName", "priorityClassName", sp)
    o.take(spec, "preemptionPolicy", "preemptionPolicy", sp)
    o.take(spec, "overhead", "overhead", sp)
    o.take(spec, "resources", "resources", sp)
    o.take(spec, "nodeSelector", "nodeSelector", sp)
    o.take(spec, "affinity", "affinity", sp)
    o.take(spec, "tolerations", "tolerations", sp)
    o.take(spec, "topologySpreadConstraints", "topologySpreadConstraints", sp)
    # the pod as written: without the requirements the API server merged (labelkeys.py)
    if "affinity" in o.item:
        o.item["affinity"] = written_affinity(o.item["affinity"], meta.get("labels"))
    if "topologySpreadConstraints" in o.item:
        o.item["topologySpreadConstraints"] = written_spread_constraints(o.item["topologySpreadConstraints"],
                                                                         meta.get("labels"))
    o.take(spec, "schedulingGates", "schedulingGates", sp)
    o.take(spec, "workloadRef", "workloadRef", sp)
    o.take(spec, "schedulingGroup", "schedulingGroup", sp)
    o.take(spec, "resourceClaims", "resourceClaims", sp)
    for key in ("containers", "initContainers"):
        if spec.get(key):
            o.put(key, [_container(c) for c in spec[key]], [*sp, key])
    if "tolerations" in o.item:
        o.item["tolerations"] = [{k: t[k] for k in ("key", "operator", "value", "effect", "tolerationSeconds")
                                  if k in t}
                                 for t in o.item["tolerations"]]
    o.take(status, "startTime", "startTime", st)
    o.take(status, "nominatedNodeName", "nominatedNode", st)
    for c in status.get("conditions") or []:
        if c.get("type") == "DisruptionTarget" and c.get("status") == "True" and \
                c.get("reason") == "PreemptionByScheduler":
            o.item["_preemptedByScheduler"] = True
    resize = resize_fields(status)
    if resize:
        o.put("status", resize, st)
    if spec.get("hostNetwork") and spec.get("hostUsers") is False:
        # NodeDeclaredFeatures' UserNamespacesHostNetworkSupport (from 1.36): refused there
        o.put("_hostNetworkUserNamespace", True, [*sp, "hostUsers"])
    unmodelled = unmodelled_volumes(spec.get("volumes"))
    if spec.get("resourceClaims"):
        unmodelled += ("resourceClaims",)
    if unmodelled:
        o.item["_unmodelled"] = list(unmodelled)
    o.take(spec, "volumes", "volumes", sp)


def resize_fields(status: Mapping[str, Any]) -> dict[str, Any]:
    """A pod status trimmed to what in-place resize leaves for the scheduler to read (the
    shorthand's ``status``): ``resize``, the PodResizePending / PodResizeInProgress
    conditions, each container status's ``name``, ``resources`` and
    ``allocatedResources`` (a status with neither only beside ``resize``: to 1.31 an
    Infeasible resize counts a container with a status by its allocatedResources, none
    when absent), and the pod-level ``resources`` / ``allocatedResources``; and
    DRANodeAllocatableResources' ``nodeAllocatableResourceClaimStatuses``; empty when there
    is none of it."""
    out: dict[str, Any] = {}
    if status.get("resize"):
        out["resize"] = status["resize"]
    conds = [{k: c[k] for k in ("type", "status", "reason") if c.get(k) is not None}
             for c in status.get("conditions") or []
             if isinstance(c, Mapping) and c.get("type") in ("PodResizePending", "PodResizeInProgress")]
    if conds:
        out["conditions"] = conds
    for key in ("containerStatuses", "initContainerStatuses"):
        cs = [{k: c[k] for k in ("name", "resources", "allocatedResources") if c.get(k) is not None}
              for c in status.get(key) or []
              if isinstance(c, Mapping) and (c.get("resources") is not None or c.get("allocatedResources") is not None
                                             or (out.get("resize") and c.get("name") is not None))]
        if cs:
            out[key] = cs
    for key in ("resources", "allocatedResources"):
        if status.get(key) is not None:
            out[key] = status[key]
    if status.get("nodeAllocatableResourceClaimStatuses"):
        out["nodeAllocatableResourceClaimStatuses"] = status["nodeAllocatableResourceClaimStatuses"]
    return out


def _owner(o: _Object) -> None:
    """A Service, ReplicationController, ReplicaSet or StatefulSet: kind, namespace,
    spec.selector (an RC without one selects its template's labels, as the API
    defaults it) and the controller that owns it (a Deployment's ReplicaSet)."""
    o.item["kind"] = o.kind
    o.take(o.meta, "namespace", "namespace", o.mp)
    sel = o.spec.get("selector")
    if o.kind == "ReplicationController" and sel is None:
        # API defaulting: an RC without a selector selects its template's labels
        sel = ((o.spec.get("template") or {}).get("metadata") or {}).get("labels")
    o.put("selector", sel, [*o.sp, "selector"])
    for ref in o.meta.get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            o.item["_controller"] = (ref.get("kind"), ref.get("name"))


def _deployment(o: _Object) -> None:
    """A Deployment: namespace, selector, template and collisionCount, from which
    ``kspread.format.case`` makes the ReplicaSet it owns (not a section of its own)."""
    o.take(o.meta, "namespace", "namespace", o.mp)
    o.take(o.spec, "selector", "selector", o.sp)
    o.take(o.spec, "template", "template", o.sp)
    o.take(o.status, "collisionCount", "collisionCount", o.st)


def _pdb(o: _Object) -> None:
    """A PodDisruptionBudget: namespace, selector, status.disruptionsAllowed when given
    (else the spec's minAvailable / maxUnavailable) and status.disruptedPods."""
    o.take(o.meta, "namespace", "namespace", o.mp)
    o.take(o.spec, "selector", "selector", o.sp)
    if o.status.get("disruptionsAllowed") is not None:
        o.take(o.status, "disruptionsAllowed", "disruptionsAllowed", o.st)
    else:
        o.take(o.spec, "minAvailable", "minAvailable", o.sp)
        o.take(o.spec, "maxUnavailable", "maxUnavailable", o.sp)
    if o.status.get("disruptedPods"):
        o.item["_disruptedPods"] = list(o.status["disruptedPods"])


def _priority_class(o: _Object) -> None:
    """A PriorityClass: its top-level value, globalDefault, preemptionPolicy and
    description."""
    for k in ("value", "globalDefault", "preemptionPolicy", "description"):
        if o.obj.get(k) is not None:
            o.put(k, o.obj[k], [*o.path, k])


def _device_object(o: _Object) -> None:
    """A DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate or DeviceTaintRule: kept whole
    for kspread.format.devices (``_raw``), which reads it by its API version."""
    o.item["_raw"] = o.obj


_V1ALPHA2 = {
    "ResourceClass": "classic DRA's device class, resource.k8s.io/v1alpha1-v1alpha2 (1.26-1.30)",
    "PodSchedulingContext": "classic DRA's negotiation with a resource driver, resource.k8s.io/v1alpha2-v1alpha3 "
                            "(1.27-1.31)",
    "PodScheduling": "classic DRA's negotiation with a resource driver, resource.k8s.io/v1alpha1 (1.26)",
    "ResourceClaimParameters": "1.30's structured parameters, resource.k8s.io/v1alpha2: the namedResources model",
    "ResourceClassParameters": "1.30's structured parameters, resource.k8s.io/v1alpha2: the namedResources model",
}


def _classic_dra(o: _Object) -> None:
    """A kind of dynamic resource allocation before structured parameters as 1.31 has
    them: refused by name."""
    kind = o.obj.get("kind")
    raise CaseError(f"{kind} ({_V1ALPHA2[str(kind)]}) is not modelled by kspread: {MODELLED_DRA}",
                    [*o.path, "kind"], value=kind)


def _namespace(o: _Object) -> None:
    """A Namespace: its labels (for namespaceSelectors)."""
    o.take(o.meta, "labels", "labels", o.mp)


def _storage(o: _Object) -> None:
    """A storage object (PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode,
    CSIDriver, CSIStorageCapacity, VolumeAttachment): kept whole for
    ``kspread.format.storage``, which reads what the volume plugins read."""
    o.item = dict(o.obj)


def _workload(o: _Object) -> None:
    """A Workload (scheduling.k8s.io/v1alpha1 or v1alpha2) or a PodGroup (v1alpha2), or 1.37's
    workload API (v1beta1, v1alpha3, CompositePodGroup): kept whole for kspread.format.workloads."""
    o.item = dict(o.obj)


_OWNER = ("owners", "owner", _owner)
_STORAGE = ("storage", None, _storage)
# kind -> (section, the schema's $defs name of its shorthand item or None: not validated, converter)
_KINDS: dict[str, tuple[str, str | None, Callable[[_Object], None]]] = {
    "Node": ("nodes", "node", _node),
    "Pod": ("pods", "pod", _pod),
    "Service": _OWNER,
    "ReplicationController": _OWNER,
    "ReplicaSet": _OWNER,
    "StatefulSet": _OWNER,
    "Deployment": ("deployments", None, _deployment),
    "PodDisruptionBudget": ("pdbs", "pdb", _pdb),
    "PriorityClass": ("priorityClasses", "priorityClass", _priority_class),
    "Namespace": ("namespaces", "namespace", _namespace),
    # dynamic resource allocation (kspread.format.devices)
    "DeviceClass": ("devices", None, _device_object),
    "ResourceSlice": ("devices", None, _device_object),
    "ResourceClaim": ("devices", None, _device_object),
    "ResourceClaimTemplate": ("devices", None, _device_object),
    "DeviceTaintRule": ("devices", None, _device_object),
    "ResourceClass": ("devices", None, _classic_dra),
    "PodSchedulingContext": ("devices", None, _classic_dra),
    "PodScheduling": ("devices", None, _classic_dra),
    "ResourceClaimParameters": ("devices", None, _classic_dra),
    "ResourceClassParameters": ("devices", None, _classic_dra),
    "PersistentVolume": _STORAGE,
    "PersistentVolumeClaim": _STORAGE,
    "StorageClass": _STORAGE,
    "CSINode": _STORAGE,
    "CSIDriver": _STORAGE,
    "CSIStorageCapacity": _STORAGE,
    "VolumeAttachment": _STORAGE,
    "Workload": ("workloads", None, _workload),
    "PodGroup": ("workloads", None, _workload),
    "CompositePodGroup": ("workloads", None, _workload),  # 1.37's, refused by kspread.format.workloads
}


def _validated(o: _Object, def_name: str) -> None:
    """Check the shorthand item against the schema's ``$defs/<def_name>``; an error
    names the raw field it came from. Private fields (``_...``) are not the schema's."""
    private = {k: o.item.pop(k) for k in list(o.item) if k.startswith("_")}
    try:
        validate(o.item, def_name)
    except CaseError as e:
        head = e.path[0] if e.path else None
        if isinstance(head, str) and head in o.fmap:
            e.path = (*o.fmap[head], *e.path[1:])
        else:
            e.path = (*o.path, *e.path)
        raise
    o.item.update(private)


def convert_object(obj: Mapping[str, Any], path: list) -> Iterator[Converted]:
    """The shorthand item(s) of one raw object (a List's items in turn): its section,
    the item, the path prefix and the raw path of each field. A terminated pod gives
    none; a Deployment gives a "deployments" item, unvalidated, for
    ``kspread.format.case`` to make its ReplicaSet."""
    kind = obj.get("kind")
    if kind == "List":
        for j, element in enumerate(obj.get("items") or []):
            yield from convert_object(element, [*path, "items", j])
        return
    o = _Object(obj, path, _meta(obj, path))
    if kind not in _KINDS:  # the schema admits only the kinds above
        raise CaseError(f"unsupported object kind {kind!r}", [*path, "kind"], value=kind)
    if kind == "Pod" and o.status.get("phase") in ("Succeeded", "Failed"):
        return  # the scheduler's informer does not see terminated pods
    section, def_name, convert = _KINDS[kind]
    convert(o)
    if def_name is not None:
        _validated(o, def_name)
    yield section, o.item, path, o.fmap
