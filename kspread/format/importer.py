"""``kspread import``: turn a kubectl dump of a cluster into a case.

The dump is the output of::

    kubectl get nodes,namespaces,pods,services,replicationcontrollers,replicasets,statefulsets,\\
        poddisruptionbudgets,priorityclasses,persistentvolumes,persistentvolumeclaims,\\
        storageclasses,csinodes,csidrivers,csistoragecapacities,volumeattachments,\\
        deviceclasses,resourceslices,resourceclaims,resourceclaimtemplates -A -o yaml

(a ``kind: List`` with ``items``; several YAML documents, or JSON, are accepted too).
The case keeps only what the scheduler reads, in the shorthand sections of the case
format, read the way :mod:`kspread.format.objects` reads the same raw objects:

* nodes: name, labels (``kubernetes.io/hostname`` only when it differs from the
  name, since kspread adds it), allocatable (zero amounts left out: a resource a
  node does not list is 0; but an extended resource's, which DynamicResources tells
  from one not listed), taints, unschedulable, images, declaredFeatures;
* pods that are bound or nominated and not Succeeded/Failed (the scheduler sees no
  other pod): name, namespace, node, labels, controller, priority and
  priorityClassName, preemptionPolicy, startTime, terminating, nominatedNode,
  nodeSelector, tolerations, affinity, topologySpreadConstraints, overhead, pod-level
  resources (spec.resources requests and limits), and
  per container its name, image (for ImageLocality), requests, resources.claims, host
  ports, (init containers) restartPolicy, restartPolicyRules RestartAllContainers and the
  volume mounts with bindMountOptions, and the volumes the scheduler reads (claims,
  ephemeral volumes' claim templates, in-tree disks, image volumes). Runs of pods named ``x-0 .. x-(N-1)``, adjacent
  and identical otherwise, become one entry with ``replicas: N``;
* Services (with a selector: one without selects no pod), ReplicationControllers,
  ReplicaSets and StatefulSets with their selectors; PDBs with their selector and
  ``status.disruptionsAllowed``; PriorityClasses but the two built-in system
  classes; Namespaces when the dump has them;
* the storage objects (PersistentVolumes, PersistentVolumeClaims, StorageClasses,
  CSINodes, CSIDrivers, CSIStorageCapacities, VolumeAttachments), raw in ``objects:``,
  trimmed to the fields the volume plugins read (``kspread.format.storage``);
* the device objects (DeviceClasses, ResourceSlices, ResourceClaims,
  ResourceClaimTemplates, DeviceTaintRules) and the gang objects (Workloads, PodGroups),
  raw in ``objects:``, trimmed to what kspread reads.

Of the annotations, which kubectl's YAML is cut of before it is parsed, those kspread
reads stay (``READ_ANNOTATIONS``). What the shorthand cannot say stays a raw object in
``objects:``, trimmed to what kspread reads: a pod with a DisruptionTarget condition set by
the scheduler or (from 1.36) with hostNetwork and hostUsers: false, a PDB with
``status.disruptedPods``. dev/README.md ("What the import keeps") lists each field kspread
reads, kind by kind, and what the import does with it.

The case gets a placeholder ``pod:`` and ``expect: {}``: the user writes the pod to
schedule and runs ``kspread run --update`` to fill ``expect``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from kspread.engine.devices import is_dra_extended_resource_name
from kspread.engine.model import LABEL_METADATA_NAME
from kspread.errors import UNPRINTABLE_RE, CaseError
from kspread.format.devices import KINDS as DEVICE_KINDS
from kspread.format.labelkeys import affinity_terms, written_affinity, written_spread_constraints
from kspread.format.objects import resize_fields
from kspread.format.workloads import API_VERSION as WORKLOAD_API
from kspread.format.workloads import API_VERSION_1_36, GATED_FIELDS, POD_GROUPS_1_36
from kspread.format.yamlwrite import comment_text, double_quoted

SYSTEM_CLASSES = ("system-cluster-critical", "system-node-critical")
HOSTNAME_LABEL = "kubernetes.io/hostname"
PREEMPT_LOWER = "PreemptLowerPriority"

# kinds whose objects the importer reads, in the order their sections are built
_STORAGE_KINDS = ("StorageClass", "CSIDriver", "CSINode", "PersistentVolume", "PersistentVolumeClaim",
                  "CSIStorageCapacity", "VolumeAttachment")
# DeviceTaintRules are read too (kubectl's command does not ask for them: a cluster that does not
# serve them would fail it; add devicetaintrules when yours does)
_DEVICE_KINDS = (*DEVICE_KINDS, "DeviceTaintRule")
_READ_KINDS = ("PriorityClass", "Namespace", "Node", "Pod", "Service", "ReplicationController", "ReplicaSet",
               "StatefulSet", "PodDisruptionBudget", *_DEVICE_KINDS, *_STORAGE_KINDS, "Workload", "PodGroup")
# Gangs: 1.35's Workloads (scheduling.k8s.io/v1alpha1) and pods' spec.workloadRef, and 1.36's
# PodGroups and Workloads (v1alpha2) and pods' spec.schedulingGroup are kept, with the gates
# they need; another version's (1.37's v1beta1 and v1alpha3) are not modelled (kspread.format.workloads): a
# bound pod keeps its place without them, a pod to schedule that has one is refused.
GANG_GATES = {"GenericWorkload": True, "GangScheduling": True}
GANG_NOTE = ("The dump's pods name Workloads (spec.workloadRef) or PodGroups (spec.schedulingGroup), which the "
             "API server serves only with GenericWorkload on; GangScheduling is kube-scheduler's own gate, which "
             "a dump cannot show: both are set on here. Set GangScheduling: false if your scheduler runs without "
             "it.")
NODE_ALLOC_GATES = {"DRANodeAllocatableResources": True}
NODE_ALLOC_NOTE = ("The dump's pods have status.nodeAllocatableResourceClaimStatuses or its ResourceSlices "
                   "nodeAllocatableResourceMappings, which the API server stores only with "
                   "DRANodeAllocatableResources on; the gate is set on here (kube-scheduler's own value a dump "
                   "cannot show: set it false if your scheduler runs without it).")
TAINT_RULE_NOTE = ("The dump has DeviceTaintRules, which the API server serves only with DRADeviceTaints on "
                   "(and DRADeviceTaintRules, from 1.35); the gates are set on here (kube-scheduler's own values a "
                   "dump cannot show: set them false if your scheduler runs without them).")
LIST_GATES = {"DRAListTypeAttributes": True}
LIST_NOTE = ("The dump's ResourceSlices have list attributes (ints, bools, strings, versions), which the API "
             "server stores only with DRAListTypeAttributes on; the gate is set on here (kube-scheduler's own "
             "value a dump cannot show: set it false if your scheduler runs without it).")
# controller kinds the case format accepts in a pod's `controller`
# the kinds a pod's controller may be (the case format's controller.kind)
_CONTROLLER_KINDS = ("ReplicationController", "ReplicaSet", "StatefulSet", "DaemonSet", "Job")
_CONTROLLER_API = {"ReplicationController": "v1", "Job": "batch/v1"}
# the annotations kspread reads: the PV controller's and the provisioner's on claims and volumes
# (kspread.engine.storage), the CSI migration's on CSINodes, and DynamicResources' on the claim it
# makes for extended resources (DRAExtendedResource)
STORAGE_ANNOTATIONS = ("pv.kubernetes.io/bind-completed", "volume.kubernetes.io/selected-node",
                       "volume.beta.kubernetes.io/storage-class", "storage.alpha.kubernetes.io/migrated-plugins")
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
READ_ANNOTATIONS = (*STORAGE_ANNOTATIONS, EXTENDED_CLAIM_ANNOTATION)
_KUBECTL = ("kubectl get nodes,namespaces,pods,services,replicationcontrollers,replicasets,statefulsets,"
            "poddisruptionbudgets,priorityclasses,persistentvolumes,persistentvolumeclaims,storageclasses,"
            "csinodes,csidrivers,csistoragecapacities,volumeattachments,deviceclasses,resourceslices,resourceclaims,"
            "resourceclaimtemplates -A -o yaml")
_SECTIONS = ("nodes", "pods", "owners", "pdbs", "priorityClasses", "namespaces", "objects")
# The controllers default topology spreading reads a pod's siblings through (SelectorSpread,
# PodTopologySpread's system default constraints: DefaultSelector); a case imported without
# some that its pods name is tagged so, and its description and first comment say so.
_SPREAD_OWNER_KINDS = ("ReplicationController", "ReplicaSet", "StatefulSet")
MISSING_OWNERS_TAG = "imported-without-owners"
_SHOWN_OWNERS = 10
_KUBELET_VERSION = re.compile(r"v?1\.(\d+)(?:\.\d+)?(?:[-+].*)?")
_FLOW_WIDTH = 100  # mappings and lists whose flow form fits in this many characters are written on one line

Warn = Callable[[str], None]


class ImportFailed(Exception):
    """The dump cannot be imported; the message says why."""


# ---- reading the dump ---------------------------------------------------------------------


def read_dump(dump_path: str) -> list[Any]:
    """The YAML (or JSON) documents of the dump; ``-`` reads standard input."""
    from kspread.format.files import NotRegularFile, decode_utf8, special_kind
    from kspread.format.loader import _parse, surrogate_error

    try:
        if dump_path == "-":
            text = sys.stdin.read()
        else:
            kind = special_kind(dump_path)
            if kind is not None and kind != "a FIFO":  # a pipe (<(kubectl ...)) ends; /dev/zero does not
                raise NotRegularFile(dump_path, kind)
            text = decode_utf8(Path(dump_path).read_bytes(), dump_path, "the dump")
    except OSError as e:
        raise ImportFailed(f"{dump_path}: cannot read the file: {e}") from None
    except CaseError as e:
        raise ImportFailed(str(e)) from None
    if text.lstrip()[:1] not in ("{", "[") and not dump_path.endswith(".json"):
        text = strip_noise(text)
    try:
        docs = _parse(text, dump_path)
        for i, doc in enumerate(docs):
            err = surrogate_error(text, doc, dump_path, i)
            if err is not None:
                raise err
        return docs
    except CaseError as e:
        raise ImportFailed(str(e.located(dump_path, None))) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        parts = (getattr(e, "context", None), getattr(e, "problem", None))
        msg = " ".join(str(x) for x in parts if x) or str(e)
        raise ImportFailed(f"{dump_path}{where}: invalid YAML: {msg}") from None
    except json.JSONDecodeError as e:
        raise ImportFailed(f"{dump_path}:{e.lineno}: invalid JSON: {e.msg}") from None


_NOISE_KEY = re.compile(r"^( *)(managedFields|annotations):[ \t\r]*$")
# an entry of an annotations block whose key is one kspread reads (kubectl writes keys plain)
_READ_ANNOTATION = re.compile(r"^ *([\"']?)(?:" + "|".join(re.escape(k) for k in READ_ANNOTATIONS) + r")\1:(?:[ \t\r\n]|$)")


def strip_noise(text: str) -> str:
    """``metadata.managedFields`` and ``annotations`` blocks cut out of kubectl's YAML
    before it is parsed (they are often half the dump), but for the entries of the
    annotations kspread reads (``READ_ANNOTATIONS``: a PVC's selected node, a claim made
    for extended resources, ...), which stay under their ``annotations:`` key. kubectl
    writes a block's content indented deeper than its key, or as ``- `` items at the
    key's indentation; anything else ends the block. An entry of an annotations block
    starts at the indentation of its first line, and goes on with the lines deeper."""
    if "managedFields:" not in text and "annotations:" not in text:
        return text
    out: list[str] = []
    skip_indent = -1
    header = ""  # the annotations key line of the block being cut
    entry_indent = -1  # the indentation of the block's entries
    keeping = False  # the lines are those of an entry kept
    kept: list[str] = []
    for line in text.splitlines(keepends=True):
        if skip_indent >= 0:
            body = line.lstrip(" ")
            ind = len(line) - len(body)
            if not body.strip() or ind > skip_indent or (ind == skip_indent and body.startswith("- ")) or \
                    (ind == skip_indent and body.rstrip("\r\n") == "-"):
                if header and body.strip():
                    if entry_indent < 0:
                        entry_indent = ind
                    if ind <= entry_indent:
                        keeping = ind == entry_indent and _READ_ANNOTATION.match(line) is not None
                if keeping:
                    kept.append(line)
                continue
            if kept:
                out += [header, *kept]
            skip_indent, header, entry_indent, keeping, kept = -1, "", -1, False, []
        m = _NOISE_KEY.match(line)
        if m is not None:
            skip_indent = len(m.group(1))
            header = line if m.group(2) == "annotations" else ""
            continue
        out.append(line)
    if kept:
        out += [header, *kept]
    return "".join(out)


def iter_objects(docs: list[Any], dump_path: str) -> Iterator[Mapping[str, Any]]:
    """Every Kubernetes object of the dump, ``List`` items flattened."""
    not_dump = (f"{dump_path} is not a kubectl dump: expected a `kind: List` with `items`, "
                f"as `{_KUBECTL}` prints it")

    def walk(obj: Any, where: str) -> Iterator[Mapping[str, Any]]:
        if not isinstance(obj, dict):
            raise ImportFailed(f"{not_dump} ({where} is not a mapping)")
        kind = obj.get("kind")
        if kind == "Case" and str(obj.get("apiVersion", "")).startswith("kspread/"):
            raise ImportFailed(f"{dump_path} is a kspread case, not a kubectl dump")
        if not isinstance(kind, str) or not kind:
            raise ImportFailed(f"{not_dump} ({where} has no `kind`)")
        if kind == "List" or (kind.endswith("List") and "items" in obj):
            items = obj.get("items")
            if items is None:
                return
            if not isinstance(items, list):
                raise ImportFailed(f"{not_dump} ({where}: `items` is not a list)")
            for i, item in enumerate(items):
                yield from walk(item, f"{where}.items[{i}]")
            return
        yield obj

    docs = [d for d in docs if d is not None]
    if not docs:
        raise ImportFailed(f"{dump_path} is empty: expected the output of `{_KUBECTL}`")
    for n, doc in enumerate(docs):
        where = f"document {n + 1}" if len(docs) > 1 else "the document"
        if isinstance(doc, list):  # a JSON array or YAML sequence of objects
            for i, item in enumerate(doc):
                yield from walk(item, f"{where}[{i}]")
        else:
            yield from walk(doc, where)


# ---- converting objects -----------------------------------------------------------------


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _is_zero(name: str, amount: Any) -> bool:
    from kspread.engine.quantity import QuantityError, resource_amount

    try:
        return resource_amount(name, amount) == 0
    except (QuantityError, TypeError, ValueError):
        return False


def _node(obj: Mapping[str, Any], warn: Warn) -> dict:
    meta, spec, status = _meta(obj), _m(obj.get("spec")), _m(obj.get("status"))
    name = meta["name"]
    item: dict[str, Any] = {"name": name}
    labels = dict(_m(meta.get("labels")))
    if labels.get(HOSTNAME_LABEL) == name:
        del labels[HOSTNAME_LABEL]  # kspread adds it
    if labels:
        item["labels"] = labels
    alloc = status.get("allocatable")
    if isinstance(alloc, dict):
        # a zero amount is left out (a resource a node does not list is 0) but for an extended
        # resource's: DynamicResources (DRAExtendedResource) tells a resource the node lists
        # as 0 (left to NodeResourcesFit) from one it does not list ("cannot fit resource")
        item["allocatable"] = {k: v for k, v in alloc.items() if not _is_zero(k, v) or is_dra_extended_resource_name(k)}
    else:
        # A node without status.allocatable offers nothing to the scheduler (an
        # omitted `allocatable` would mean unlimited in a case).
        warn(f"node {name} has no status.allocatable: imported with none (nothing fits on it)")
        item["allocatable"] = {}
    taints = [t for t in spec.get("taints") or [] if isinstance(t, dict)]
    if taints:
        item["taints"] = [{k: t[k] for k in ("key", "value", "effect") if t.get(k) not in (None, "")}
                          for t in taints]
    if spec.get("unschedulable"):
        item["unschedulable"] = True
    images = [im for im in status.get("images") or [] if isinstance(im, dict)]
    if images:
        item["images"] = [{"names": list(im.get("names") or []), "sizeBytes": im.get("sizeBytes", 0)}
                          for im in images]
    if status.get("declaredFeatures"):
        item["declaredFeatures"] = list(status["declaredFeatures"])  # NodeDeclaredFeatures
    return item


def _container(raw: Mapping[str, Any], init: bool) -> dict:
    out: dict[str, Any] = {"name": raw.get("name", "")}
    if raw.get("image"):
        out["image"] = raw["image"]
    res = _m(raw.get("resources"))
    requests = _m(res.get("requests"))
    if requests:
        out["resources"] = {"requests": dict(requests)}
    claims = [{"name": c["name"]} for c in res.get("claims") or [] if isinstance(c, dict) and "name" in c]
    if claims:  # the pod's resourceClaims the container uses (DRANodeAllocatableResources reads them)
        out.setdefault("resources", {})["claims"] = claims
    ports = []
    for p in raw.get("ports") or []:
        if isinstance(p, dict) and (p.get("hostPort") or 0) > 0:  # NodePorts reads host ports only
            port = {"containerPort": p.get("containerPort"), "hostPort": p["hostPort"]}
            if p.get("protocol") not in (None, "TCP"):
                port["protocol"] = p["protocol"]
            if p.get("hostIP"):
                port["hostIP"] = p["hostIP"]
            ports.append(port)
    if ports:
        out["ports"] = ports
    if init and raw.get("restartPolicy") == "Always":  # a sidecar
        out["restartPolicy"] = "Always"
    rules = [r for r in raw.get("restartPolicyRules") or []
             if isinstance(r, dict) and r.get("action") == "RestartAllContainers"]
    if rules:  # what NodeDeclaredFeatures infers a required feature from
        out["restartPolicyRules"] = rules
    mounts = [{k: m[k] for k in ("name", "mountPath", "bindMountOptions") if k in m}
              for m in raw.get("volumeMounts") or [] if isinstance(m, dict) and m.get("bindMountOptions") is not None]
    if mounts:  # a feature NodeDeclaredFeatures infers from 1.36, which a case refuses by name
        out["volumeMounts"] = mounts
    return out


# In-tree disk sources the volume plugins read, and the fields of each they read
_DISK_FIELDS = {"gcePersistentDisk": ("pdName", "readOnly"), "awsElasticBlockStore": ("volumeID", "readOnly"),
                "iscsi": ("iqn", "readOnly"), "rbd": ("monitors", "pool", "image", "readOnly"),
                "azureDisk": ("diskURI", "diskName", "readOnly"), "cinder": ("volumeID", "readOnly"),
                "portworxVolume": ("volumeID", "readOnly")}
_CLAIM_SPEC_FIELDS = ("accessModes", "selector", "volumeName", "storageClassName", "volumeMode",
                      "volumeAttributesClassName")


def _claim_spec(spec: Mapping[str, Any]) -> dict:
    """A PersistentVolumeClaimSpec trimmed to what the volume plugins read."""
    out = {k: spec[k] for k in _CLAIM_SPEC_FIELDS if spec.get(k) is not None}
    storage = _m(_m(spec.get("resources")).get("requests")).get("storage")
    if storage is not None:
        out["resources"] = {"requests": {"storage": storage}}
    return out


def _disks(src: Mapping[str, Any]) -> dict:
    """The in-tree disk sources of a volume or PV spec, trimmed."""
    return {k: {f: _m(src[k])[f] for f in fields if f in _m(src[k])}
            for k, fields in _DISK_FIELDS.items() if isinstance(src.get(k), dict)}


def _volumes(spec: Mapping[str, Any]) -> list[dict]:
    """A pod's volumes that the scheduler reads (the volume plugins: claims, ephemeral
    volumes, in-tree disks; ImageLocality: image volumes), trimmed."""
    out = []
    for v in spec.get("volumes") or []:
        if not isinstance(v, dict):
            continue
        if isinstance(v.get("persistentVolumeClaim"), dict):
            out.append({"name": v.get("name", ""),
                        "persistentVolumeClaim": {"claimName": v["persistentVolumeClaim"].get("claimName", "")}})
        elif isinstance(v.get("ephemeral"), dict):
            tmpl = _m(v["ephemeral"].get("volumeClaimTemplate"))
            out.append({"name": v.get("name", ""),
                        "ephemeral": {"volumeClaimTemplate": {"spec": _claim_spec(_m(tmpl.get("spec")))}}})
        elif _disks(v):
            out.append({"name": v.get("name", ""), **_disks(v)})
        elif isinstance(v.get("image"), dict) and v["image"].get("reference"):
            # ImageLocality counts an image volume's image from 1.36
            out.append({"name": v.get("name", ""), "image": {"reference": v["image"]["reference"]}})
    return out


def storage_object(obj: Mapping[str, Any]) -> dict:
    """A storage object trimmed to what the volume plugins read (see kspread.format.storage)."""
    meta, spec, kind = _meta(obj), _m(obj.get("spec")), obj["kind"]
    rmeta: dict[str, Any] = {"name": meta["name"]}
    if kind in ("PersistentVolumeClaim", "CSIStorageCapacity"):
        rmeta["namespace"] = meta.get("namespace") or "default"
    if kind == "PersistentVolume" and meta.get("labels"):
        rmeta["labels"] = dict(meta["labels"])
    ann = {k: v for k, v in _m(meta.get("annotations")).items() if k in STORAGE_ANNOTATIONS}
    if ann:
        rmeta["annotations"] = ann
    if kind == "PersistentVolumeClaim":
        refs = [{k: r[k] for k in ("apiVersion", "kind", "name", "uid", "controller") if k in r}
                for r in meta.get("ownerReferences") or [] if isinstance(r, dict) and r.get("kind") == "Pod"
                and r.get("controller") is True]
        if refs:
            rmeta["ownerReferences"] = refs
    if meta.get("deletionTimestamp") and kind in ("PersistentVolume", "PersistentVolumeClaim"):
        rmeta["deletionTimestamp"] = str(meta["deletionTimestamp"])
    out: dict[str, Any] = {"apiVersion": obj.get("apiVersion", ""), "kind": kind, "metadata": rmeta}
    if kind == "PersistentVolume":
        rspec = {k: spec[k] for k in ("accessModes", "storageClassName", "volumeMode", "volumeAttributesClassName",
                                      "persistentVolumeReclaimPolicy", "nodeAffinity") if spec.get(k) is not None}
        storage = _m(spec.get("capacity")).get("storage")
        if storage is not None:
            rspec["capacity"] = {"storage": storage}
        if isinstance(spec.get("claimRef"), dict):
            rspec["claimRef"] = {k: spec["claimRef"][k] for k in ("namespace", "name") if k in spec["claimRef"]}
        if isinstance(spec.get("csi"), dict):
            rspec["csi"] = {k: spec["csi"][k] for k in ("driver", "volumeHandle") if k in spec["csi"]}
        rspec.update(_disks(spec))
        out["spec"] = rspec
    elif kind == "PersistentVolumeClaim":
        out["spec"] = _claim_spec(spec)
    elif kind == "StorageClass":
        for k in ("provisioner", "volumeBindingMode", "allowedTopologies"):
            if obj.get(k) is not None:
                out[k] = obj[k]
    elif kind == "CSINode":
        out["spec"] = {"drivers": [{k: d[k] for k in ("name", "nodeID", "topologyKeys", "allocatable") if k in d}
                                   for d in spec.get("drivers") or [] if isinstance(d, dict)]}
    elif kind == "CSIDriver":
        out["spec"] = {k: spec[k] for k in ("storageCapacity", "preventPodSchedulingIfMissing") if k in spec}
    elif kind == "CSIStorageCapacity":
        for k in ("storageClassName", "capacity", "maximumVolumeSize", "nodeTopology"):
            if obj.get(k) is not None:
                out[k] = obj[k]
    elif kind == "VolumeAttachment":
        src = _m(spec.get("source"))
        out["spec"] = {k: spec[k] for k in ("attacher", "nodeName") if k in spec}
        if "persistentVolumeName" in src:
            out["spec"]["source"] = {"persistentVolumeName": src["persistentVolumeName"]}
    phase = _m(obj.get("status")).get("phase")
    if phase and kind in ("PersistentVolume", "PersistentVolumeClaim"):
        out["status"] = {"phase": phase}
    return out


def _host_network_user_namespace(spec: Mapping[str, Any]) -> bool:
    """spec.hostNetwork with hostUsers: false, from which NodeDeclaredFeatures infers
    UserNamespacesHostNetworkSupport from 1.36 (a case refuses such a pod there, by name)."""
    return bool(spec.get("hostNetwork")) and spec.get("hostUsers") is False


def _needs_raw_pod(spec: Mapping[str, Any], status: Mapping[str, Any], minor: int) -> bool:
    """What kspread reads from a raw pod that the shorthand cannot say."""
    return any(isinstance(c, dict) and c.get("type") == "DisruptionTarget" and c.get("status") == "True"
               and c.get("reason") == "PreemptionByScheduler" for c in status.get("conditions") or []) or \
        (minor >= 36 and _host_network_user_namespace(spec))


class _Converter:
    def __init__(self, minor: int, warn: Warn) -> None:
        self.minor = minor
        self.warn = warn
        self.classes: dict[str, tuple[int, str]] = {}  # name -> (value, preemptionPolicy)
        self.node_names: set[str] = set()
        self.counts: dict[str, int] = {}
        self.has_global_default = False
        # DRAWorkloadResourceClaims: (namespace, PodGroup) -> {entry name: (template, the claim
        # the resource claim controller made from it)}, from the PodGroups' status
        self.group_claims: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    # -- priority admission, as kspread's builder redoes it --------------------------------

    def _class_of(self, name: str, ns: str) -> tuple[int, str] | None:
        if name in self.classes:
            return self.classes[name]
        if name in ("system-cluster-critical", "system-node-critical"):
            if self.minor <= 16 and ns != "kube-system":
                return None  # not admitted outside kube-system up to 1.16
            return (2_000_000_000 if name == "system-cluster-critical" else 2_000_001_000, PREEMPT_LOWER)
        return None

    def _priority(self, spec: Mapping[str, Any], ns: str, label: str, item: dict) -> None:
        """priority, priorityClassName and preemptionPolicy such that kspread's priority
        admission gives the pod the values the dump shows."""
        prio = spec.get("priority")
        cls = spec.get("priorityClassName") or ""
        policy = spec.get("preemptionPolicy") or PREEMPT_LOWER
        if cls:
            pc = self._class_of(cls, ns)
            if pc is not None and (prio is None or prio == pc[0]) and policy == pc[1]:
                if prio is not None:
                    item["priority"] = prio
                item["priorityClassName"] = cls
                return
            # The class is gone or changed since the pod was admitted: the scheduler
            # reads the pod's own priority and policy, so keep those without the class.
            self.warn(f"pod {label}: priorityClassName {cls} left out (the dump has no such class, or it "
                      f"disagrees with the pod); the pod keeps its priority {prio or 0}")
            item["priority"] = prio or 0
        elif prio or self.has_global_default:
            # (with a globalDefault class, a case pod without priority would get that class's)
            item["priority"] = prio or 0
        if policy != PREEMPT_LOWER:
            item["preemptionPolicy"] = policy

    # -- kinds ------------------------------------------------------------------------------

    def priority_class(self, obj: Mapping[str, Any]) -> dict | None:
        name = _meta(obj)["name"]
        if name in SYSTEM_CLASSES:
            return None  # kspread knows them
        value = obj.get("value", 0)
        policy = obj.get("preemptionPolicy") or PREEMPT_LOWER
        self.classes[name] = (value, policy)
        item: dict[str, Any] = {"name": name, "value": value}
        if obj.get("globalDefault"):
            item["globalDefault"] = True
            self.has_global_default = True
        if policy != PREEMPT_LOWER:
            item["preemptionPolicy"] = policy
        return item

    def namespace(self, obj: Mapping[str, Any]) -> dict:
        meta = _meta(obj)
        item: dict[str, Any] = {"name": meta["name"]}
        if meta.get("labels"):
            item["labels"] = dict(meta["labels"])
        return item

    def node(self, obj: Mapping[str, Any]) -> dict:
        item = _node(obj, self.warn)
        self.node_names.add(item["name"])
        return item

    def pod(self, obj: Mapping[str, Any], incoming: bool = False) -> tuple[str, dict] | None:
        """("pods", shorthand item) or ("objects", trimmed raw pod); None: not read.
        ``incoming``: a pending pod to schedule, ("incoming", shorthand item)."""
        meta, spec, status = _meta(obj), _m(obj.get("spec")), _m(obj.get("status"))
        name, ns = meta["name"], meta.get("namespace") or "default"
        label = f"{ns}/{name}"
        if status.get("phase") in ("Succeeded", "Failed"):
            self.count("finished pod(s) (Succeeded or Failed)")
            return None
        node = spec.get("nodeName") or None
        nominated = status.get("nominatedNodeName") or None
        if nominated is not None and nominated not in self.node_names:
            if node is None and not incoming:
                self.warn(f"pod {label} is nominated to node {nominated}, which the dump lacks: left out")
                return None
            nominated = None
        if node is None and nominated is None and not incoming:
            self.count("pending pod(s) neither bound nor nominated")
            return None
        if node is not None and node not in self.node_names:
            self.warn(f"pod {label} is bound to node {node}, which the dump lacks: left out")
            return None
        item: dict[str, Any] = {"name": name}
        if ns != "default":
            item["namespace"] = ns
        if node is not None:
            item["node"] = node
        if meta.get("labels"):
            item["labels"] = dict(meta["labels"])
        for ref in meta.get("ownerReferences") or []:
            if isinstance(ref, dict) and ref.get("controller"):
                kind = ref.get("kind")
                if kind in _CONTROLLER_KINDS:  # others (Node for mirror pods, custom kinds) have no effect
                    ctrl = {"kind": kind, "name": ref.get("name")}
                    api = ref.get("apiVersion")
                    if api and api != _CONTROLLER_API.get(kind, "apps/v1"):
                        ctrl["apiVersion"] = api
                    item["controller"] = ctrl
                break
        self._priority(spec, ns, label, item)
        if status.get("startTime") is not None:
            item["startTime"] = str(status["startTime"])
        if meta.get("deletionTimestamp"):
            item["terminating"] = True
        if nominated is not None:
            item["nominatedNode"] = nominated
        if spec.get("nodeSelector"):
            item["nodeSelector"] = dict(spec["nodeSelector"])
        tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
        if tolerations:
            item["tolerations"] = [{k: t[k] for k in ("key", "operator", "value", "effect", "tolerationSeconds")
                                    if k in t} for t in tolerations]
        for key in ("affinity", "topologySpreadConstraints", "overhead", "schedulingGates"):
            if spec.get(key):
                item[key] = spec[key]
        # the pod as written: without the requirements the API server merged (labelkeys.py)
        if "affinity" in item:
            item["affinity"] = written_affinity(item["affinity"], meta.get("labels"))
        if "topologySpreadConstraints" in item:
            item["topologySpreadConstraints"] = written_spread_constraints(item["topologySpreadConstraints"],
                                                                           meta.get("labels"))
        level = {k: dict(v) for k, v in _m(spec.get("resources")).items() if k in ("requests", "limits") and v}
        if level:
            item["resources"] = level  # pod-level resources (spec.resources)
        for key, init in (("initContainers", True), ("containers", False)):
            cs = [c for c in spec.get(key) or [] if isinstance(c, dict)]
            if cs:
                item[key] = [_container(c, init) for c in cs]
        if spec.get("resourceClaims"):
            item["resourceClaims"] = pod_resource_claims(spec, status)
            group = _m(spec.get("schedulingGroup")).get("podGroupName")
            made = self.group_claims.get((ns, group)) if isinstance(group, str) else None
            if made:
                # an entry its PodGroup's names alike: the PodGroup's claim made from the template
                item["resourceClaims"] = [
                    {"name": e["name"], "resourceClaimName": made[e["name"]][1]}
                    if e.get("resourceClaimTemplateName") and made.get(e["name"], ("",))[0] == e["resourceClaimTemplateName"]
                    else e for e in item["resourceClaims"]]
        if not self._gang(spec, label, incoming, item):
            return None
        vols = _volumes(spec)
        if vols:
            item["volumes"] = vols
        resize = resize_fields(status)
        if self.minor != 36 and resize.pop("nodeAllocatableResourceClaimStatuses", None) is not None:
            self.count(f"pod status.nodeAllocatableResourceClaimStatuses of 1.{self.minor} (kspread models "
                       "DRANodeAllocatableResources' of 1.36 only): the pods are kept without them")
        elif incoming and resize.pop("nodeAllocatableResourceClaimStatuses", None) is not None:
            self.count("status.nodeAllocatableResourceClaimStatuses of pod(s) to schedule, left out: a pod's own "
                       "scheduling cycle does not read it, and a pod a case's `schedule` creates has none")
        if resize:
            # an in-place resize's status (kspread.format.resize), and the node allocatable
            # resources of the pod's claims (DRANodeAllocatableResources)
            item["status"] = resize
        if _needs_raw_pod(spec, status, self.minor):
            if incoming:
                what = ("a DisruptionTarget condition" if not _host_network_user_namespace(spec) else
                        "spec.hostNetwork with hostUsers: false (NodeDeclaredFeatures' "
                        "UserNamespacesHostNetworkSupport from 1.36, which kspread does not model)")
                self.warn(f"pod {label}: it has {what}, which the case shorthand of an incoming pod cannot say: "
                          "left out")
                return None
            return "objects", _raw_pod(obj, item)
        return ("incoming" if incoming else "pods"), item

    def _gang(self, spec: Mapping[str, Any], label: str, incoming: bool, item: dict) -> bool:
        """A pod's gang: 1.35's workloadRef and 1.36's schedulingGroup are kept (the case then
        turns the gates on). Another version's (1.37: v1beta1 and v1alpha3; a workloadRef at 1.36), which
        kspread does not model: a pod to schedule is refused, a bound or nominated one is kept
        without it (where it is does not depend on it)."""
        ref = spec.get("workloadRef")
        group = spec.get("schedulingGroup")
        if ref is None and group is None:
            return True
        if self.minor == 35 and group is None:
            if isinstance(ref, Mapping):
                item["workloadRef"] = {k: ref[k] for k in ("name", "podGroup", "podGroupReplicaKey") if ref.get(k)}
            return True
        if self.minor == 36 and ref is None:
            if isinstance(group, Mapping) and group.get("podGroupName"):
                item["schedulingGroup"] = {"podGroupName": group["podGroupName"]}
            return True
        field = "spec.schedulingGroup" if group is not None else "spec.workloadRef"
        if incoming:
            raise ImportFailed(f"pod {label} names a pod group ({field}): {POD_GROUPS_1_36}")
        self.count(f"pod group reference(s) ({field}) of bound or nominated pods, which kspread does not model "
                   f"in 1.{self.minor}: the pods are kept without them")
        return True

    def owner(self, obj: Mapping[str, Any]) -> dict | None:
        kind = obj["kind"]
        meta, spec = _meta(obj), _m(obj.get("spec"))
        sel = spec.get("selector")
        if kind == "ReplicationController" and sel is None:
            # API defaulting: an RC without a selector selects its template's labels
            sel = _m(_m(spec.get("template")).get("metadata")).get("labels")
        if kind == "Service" and not sel:
            self.count("Service(s) without a selector (they select no pod)")
            return None
        item: dict[str, Any] = {"kind": kind, "name": meta["name"]}
        if (meta.get("namespace") or "default") != "default":
            item["namespace"] = meta["namespace"]
        item["selector"] = sel
        return item

    def pdb(self, obj: Mapping[str, Any]) -> tuple[str, dict]:
        meta, spec, status = _meta(obj), _m(obj.get("spec")), _m(obj.get("status"))
        item: dict[str, Any] = {"name": meta["name"]}
        ns = meta.get("namespace") or "default"
        if ns != "default":
            item["namespace"] = ns
        if spec.get("selector") is not None:
            item["selector"] = spec["selector"]
        allowed = status.get("disruptionsAllowed")
        if allowed is None:
            # what the scheduler reads of a PDB the disruption controller has not processed
            self.warn(f"PodDisruptionBudget {ns}/{meta['name']} has no status.disruptionsAllowed: "
                      "imported as 0")
            allowed = 0
        item["disruptionsAllowed"] = allowed
        if status.get("disruptedPods"):
            raw_meta = {"name": meta["name"], "namespace": ns}
            raw: dict[str, Any] = {"apiVersion": obj.get("apiVersion", "policy/v1"),
                                   "kind": "PodDisruptionBudget", "metadata": raw_meta}
            if "selector" in item:
                raw["spec"] = {"selector": item["selector"]}
            raw["status"] = {"disruptionsAllowed": allowed,
                             "disruptedPods": {k: str(v) for k, v in dict(status["disruptedPods"]).items()}}
            return "objects", raw
        return "pdbs", item


def _raw_pod(obj: Mapping[str, Any], item: Mapping[str, Any]) -> dict:
    """A pod as a raw object trimmed to what kspread reads (see kspread.format.objects)."""
    meta, status = _meta(obj), _m(obj.get("status"))
    rmeta: dict[str, Any] = {"name": meta["name"], "namespace": meta.get("namespace") or "default"}
    if meta.get("labels"):
        rmeta["labels"] = dict(meta["labels"])
    if "controller" in item:
        c = item["controller"]
        api = c.get("apiVersion") or _CONTROLLER_API.get(c["kind"], "apps/v1")
        rmeta["ownerReferences"] = [{"apiVersion": api, "kind": c["kind"], "name": c["name"],
                                     "controller": True}]
    if meta.get("deletionTimestamp"):
        rmeta["deletionTimestamp"] = str(meta["deletionTimestamp"])
    rspec: dict[str, Any] = {}
    if "node" in item:
        rspec["nodeName"] = item["node"]
    if _host_network_user_namespace(_m(obj.get("spec"))):
        rspec.update(hostNetwork=True, hostUsers=False)  # refused from 1.36 by name: the import leaves it out
    for key in ("priority", "priorityClassName", "preemptionPolicy", "nodeSelector", "tolerations",
                "affinity", "topologySpreadConstraints", "overhead", "resources", "initContainers", "containers",
                "resourceClaims", "volumes", "schedulingGates", "workloadRef", "schedulingGroup"):
        if key in item:
            rspec[key] = item[key]
    rstatus: dict[str, Any] = {}
    if status.get("phase"):
        rstatus["phase"] = status["phase"]
    if "startTime" in item:
        rstatus["startTime"] = item["startTime"]
    if "nominatedNode" in item:
        rstatus["nominatedNodeName"] = item["nominatedNode"]
    conds = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
             for c in status.get("conditions") or []
             if isinstance(c, dict) and c.get("type") == "DisruptionTarget" and c.get("status") == "True"
             and c.get("reason") == "PreemptionByScheduler"][:1]
    resize = dict(item.get("status") or {})
    conds += resize.pop("conditions", [])
    if conds:
        rstatus["conditions"] = conds
    rstatus.update(resize)
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": rmeta, "spec": rspec}
    if rstatus:
        out["status"] = rstatus
    return out


def pod_resource_claims(spec: Mapping[str, Any], status: Mapping[str, Any]) -> list[dict]:
    """A pod's spec.resourceClaims. A claim the resource claim controller made from a
    template has a generated name (status.resourceClaimStatuses), not the case format's
    ``<pod>-<name>``: the entry then names that claim (resourceClaimName), which the
    dump holds with its allocation."""
    made = {st.get("name"): st.get("resourceClaimName") for st in status.get("resourceClaimStatuses") or []
            if isinstance(st, dict) and st.get("resourceClaimName")}
    out = []
    for e in spec.get("resourceClaims") or []:
        if not isinstance(e, dict):
            continue
        if e.get("resourceClaimTemplateName") and e.get("name") in made:
            out.append({"name": e["name"], "resourceClaimName": made[e["name"]]})
        else:
            out.append({k: e[k] for k in ("name", "resourceClaimName", "resourceClaimTemplateName") if k in e})
    return out


def _short_meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = _meta(obj)
    m: dict[str, Any] = {"name": meta["name"]}
    if meta.get("namespace") and meta["namespace"] != "default":
        m["namespace"] = meta["namespace"]
    return m


def workload_object(obj: Mapping[str, Any], minor: int) -> dict | None:
    """A 1.35 Workload as the case keeps it (its name and pod groups), a 1.36 one (its name
    and pod group templates: their names and policies), or None: another version's or API's
    (not modelled)."""
    if minor == 36 and obj.get("apiVersion") == API_VERSION_1_36:
        templates = [{k: t[k] for k in ("name", "schedulingPolicy") if k in t}
                     for t in _m(obj.get("spec")).get("podGroupTemplates") or [] if isinstance(t, Mapping)]
        return {"apiVersion": API_VERSION_1_36, "kind": "Workload", "metadata": _short_meta(obj),
                "spec": {"podGroupTemplates": templates}}
    if minor != 35 or obj.get("apiVersion") != WORKLOAD_API:
        return None
    groups = [{k: g[k] for k in ("name", "policy") if k in g} for g in _m(obj.get("spec")).get("podGroups") or []
              if isinstance(g, Mapping)]
    return {"apiVersion": WORKLOAD_API, "kind": "Workload", "metadata": _short_meta(obj), "spec": {"podGroups": groups}}


# a PodGroup's fields the case keeps; those behind alpha gates (schedulingConstraints,
# resourceClaims; priorityClassName, priority, disruptionMode) the API server serves only with
# their gate on, which the case then turns on (gang_gates)
_POD_GROUP_KEPT = ("podGroupTemplateRef", "schedulingPolicy", "schedulingConstraints", "resourceClaims",
                   "priorityClassName", "priority", "disruptionMode")
_PREEMPTION_FIELDS = tuple(k for k, gate in GATED_FIELDS.items() if gate == "WorkloadAwarePreemption")


def pod_group_object(obj: Mapping[str, Any], minor: int) -> tuple[dict | None, list[str]]:
    """A 1.36 PodGroup as the case keeps it (name, schedulingPolicy, podGroupTemplateRef,
    schedulingConstraints, resourceClaims, priorityClassName, priority, disruptionMode) and
    the fields behind alpha gates kspread does not model that it had (left out); None:
    another version's (not modelled)."""
    if minor != 36 or obj.get("apiVersion") != API_VERSION_1_36:
        return None, []
    spec = dict(_m(obj.get("spec")))
    gated = [k for k in GATED_FIELDS if k not in _POD_GROUP_KEPT and spec.get(k) not in (None, "", [], {})]
    made = pod_group_claims_made(obj)
    if made and isinstance(spec.get("resourceClaims"), list):
        # a template's claim by the name the resource claim controller gave it (as a pod's)
        spec["resourceClaims"] = [{"name": e["name"], "resourceClaimName": made[e["name"]][1]}
                                  if isinstance(e, Mapping) and e.get("name") in made
                                  and e.get("resourceClaimTemplateName") == made[e["name"]][0] else e
                                  for e in spec["resourceClaims"]]
    return ({"apiVersion": API_VERSION_1_36, "kind": "PodGroup", "metadata": _short_meta(obj),
             "spec": {k: spec[k] for k in _POD_GROUP_KEPT if k in spec and spec[k] not in (None, [])}}, gated)


def pod_group_claims_made(obj: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """A PodGroup's claims made from templates (DRAWorkloadResourceClaims): entry name ->
    (template, the claim's name in status.resourceClaimStatuses)."""
    made: dict[str, str] = {str(st.get("name")): str(st["resourceClaimName"])
                            for st in _m(obj.get("status")).get("resourceClaimStatuses") or []
                            if isinstance(st, Mapping) and st.get("resourceClaimName")}
    return {e["name"]: (e["resourceClaimTemplateName"], made[e["name"]])
            for e in _m(obj.get("spec")).get("resourceClaims") or []
            if isinstance(e, Mapping) and e.get("resourceClaimTemplateName") and e.get("name") in made}


_ALLOCATED_DEVICE_KEPT = ("request", "driver", "pool", "device", "adminAccess", "tolerations", "bindingConditions",
                          "bindingFailureConditions", "shareID", "consumedCapacity")


def device_object(obj: Mapping[str, Any]) -> dict:
    """A DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate or DeviceTaintRule trimmed to
    what kspread reads: its spec as it is, and a claim's allocation (every field of its
    results that kspread reads), reservedFor (pods and PodGroups), owners (a Pod or a
    PodGroup) and the annotation of a claim made for extended resources."""
    meta, kind = _meta(obj), obj["kind"]
    rmeta: dict[str, Any] = {"name": meta["name"]}
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        rmeta["namespace"] = meta.get("namespace") or "default"
    # the owners kspread reads: the pod (or, DRAWorkloadResourceClaims, the PodGroup) whose
    # template the resource claim controller made the claim from
    refs = [{k: r[k] for k in ("apiVersion", "kind", "name", "controller") if k in r}
            for r in meta.get("ownerReferences") or [] if isinstance(r, dict) and r.get("kind") in ("Pod", "PodGroup")]
    if refs:
        rmeta["ownerReferences"] = refs
    if meta.get("deletionTimestamp"):
        rmeta["deletionTimestamp"] = str(meta["deletionTimestamp"])
    if kind == "ResourceClaim" and _m(meta.get("annotations")).get(EXTENDED_CLAIM_ANNOTATION) == "true":
        rmeta["annotations"] = {EXTENDED_CLAIM_ANNOTATION: "true"}  # made by DynamicResources (DRAExtendedResource)
    out: dict[str, Any] = {"apiVersion": obj.get("apiVersion", "resource.k8s.io/v1"), "kind": kind, "metadata": rmeta}
    if obj.get("spec"):
        out["spec"] = obj["spec"]
    status = _m(obj.get("status"))
    if kind == "ResourceClaim" and (status.get("allocation") or status.get("reservedFor")):
        rstatus: dict[str, Any] = {}
        alloc = _m(status.get("allocation"))
        if alloc:
            # every field of a result kspread reads, binding conditions too: a case refuses
            # those by name (the import leaves such a claim out with that reason), where
            # dropping them would make a claim still waiting for its device look ready
            results = [{k: r[k] for k in _ALLOCATED_DEVICE_KEPT if k in r}
                       for r in _m(alloc.get("devices")).get("results") or [] if isinstance(r, dict)]
            ra: dict[str, Any] = {"devices": {"results": results}}
            if alloc.get("nodeSelector"):
                ra["nodeSelector"] = alloc["nodeSelector"]
            rstatus["allocation"] = ra
        reserved = [{k: r[k] for k in ("apiGroup", "resource", "name") if k in r}
                    for r in status.get("reservedFor") or [] if isinstance(r, dict)]
        if reserved:
            rstatus["reservedFor"] = reserved
        out["status"] = rstatus
    return out


_REPLICA_NAME = re.compile(r"^(.+)-(0|[1-9][0-9]*)$")


def collapse_replicas(pods: list[dict]) -> list[dict]:
    """Adjacent pods named ``x-0 .. x-(N-1)``, identical but for the name, as one
    entry with ``replicas: N`` (exactly what the shorthand expands to)."""
    out: list[dict] = []
    i = 0
    while i < len(pods):
        m = _REPLICA_NAME.match(pods[i]["name"])
        if m is None or m.group(2) != "0" or "replicas" in pods[i]:
            out.append(pods[i])
            i += 1
            continue
        base = m.group(1)
        rest = {k: v for k, v in pods[i].items() if k != "name"}
        j = i + 1
        while j < len(pods) and pods[j]["name"] == f"{base}-{j - i}" and \
                {k: v for k, v in pods[j].items() if k != "name"} == rest:
            j += 1
        if j - i >= 2:
            out.append({"name": base, "replicas": j - i, **rest})
        else:
            out.append(pods[i])
        i = j
    return out


PENDING = "pending"  # `incoming`: every pending pod of the dump


def _pending_reason(obj: Mapping[str, Any]) -> str | None:
    """Why default-scheduler would not schedule this pod now; None: it is pending and it would."""
    meta, spec, status = _meta(obj), _m(obj.get("spec")), _m(obj.get("status"))
    if spec.get("nodeName"):
        return f"bound to node {spec['nodeName']}"
    if status.get("phase") in ("Succeeded", "Failed"):
        return f"{status['phase']}"
    if meta.get("deletionTimestamp"):
        return "being deleted"
    if (spec.get("schedulerName") or "default-scheduler") != "default-scheduler":
        return f"for scheduler {spec['schedulerName']}"
    return None


def convert(objs: Iterable[Mapping[str, Any]], minor: int, warn: Warn,
            incoming: tuple[str, str] | str | None = None) -> tuple[dict[str, list], dict[str, int]]:
    """The case sections for the dump's objects, and counts of what was left out.

    ``incoming`` picks the pods to schedule: a ``(namespace, name)`` pair (that pending pod)
    or ``PENDING`` (every pending pod, in creation order); they come back as the section
    ``incoming`` and no longer in ``pods``."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {k: [] for k in _READ_KINDS}
    skipped: dict[str, int] = {}
    seen: set[tuple[str, str, str]] = set()
    for obj in objs:
        kind = obj["kind"]
        if kind not in by_kind:
            skipped[kind] = skipped.get(kind, 0) + 1
            continue
        meta = _meta(obj)
        if not isinstance(meta.get("name"), str) or not meta["name"]:
            warn(f"a {kind} without metadata.name: left out")
            continue
        ns = "" if kind in ("Node", "PriorityClass", "Namespace", "DeviceClass", "ResourceSlice", "DeviceTaintRule") \
            else (meta.get("namespace") or "default")
        key = (kind, ns, meta["name"])
        if key in seen:
            shown = f"{ns}/{meta['name']}" if ns else meta["name"]
            warn(f"{kind} {shown} appears twice in the dump: the first is kept")
            continue
        seen.add(key)
        by_kind[kind].append(obj)
    for kind, n in skipped.items():
        reason = ("the scheduler reads the ReplicaSets a Deployment owns, from the dump" if kind == "Deployment"
                  else "1.37's (scheduling.k8s.io/v1alpha3, gate CompositePodGroup), which kspread does not model: "
                  + POD_GROUPS_1_36 if kind == "CompositePodGroup"
                  else "kspread does not read this kind")
        warn(f"skipped {n} {kind} object(s): {reason}")

    cv = _Converter(minor, warn)
    sections: dict[str, list] = {k: [] for k in _SECTIONS}
    for obj in by_kind["PriorityClass"]:
        pc = cv.priority_class(obj)
        if pc is not None:
            sections["priorityClasses"].append(pc)
    sections["namespaces"] = [cv.namespace(o) for o in by_kind["Namespace"]]
    sections["nodes"] = [cv.node(o) for o in by_kind["Node"]]
    if minor == 36:
        for obj in by_kind["PodGroup"]:
            if obj.get("apiVersion") == API_VERSION_1_36 and (made := pod_group_claims_made(obj)):
                cv.group_claims[(_meta(obj).get("namespace") or "default", _meta(obj)["name"])] = made
    chosen: list[tuple[str, int, dict]] = []  # (creationTimestamp, dump order, item)
    for i, obj in enumerate(by_kind["Pod"]):
        meta = _meta(obj)
        pod_key = (meta.get("namespace") or "default", meta["name"])
        if incoming == pod_key or (incoming == PENDING and _pending_reason(obj) is None):
            why = _pending_reason(obj)
            if why is not None:
                raise ImportFailed(f"pod {pod_key[0]}/{pod_key[1]} is not a pending pod of default-scheduler ({why})")
            r = cv.pod(obj, incoming=True)
            if r is not None:
                chosen.append((str(meta.get("creationTimestamp") or ""), i, r[1]))
            elif incoming == pod_key:
                raise ImportFailed(f"pod {pod_key[0]}/{pod_key[1]} could not be imported (see the warnings)")
            continue
        r = cv.pod(obj)
        if r is not None:
            sections[r[0]].append(r[1])
    if isinstance(incoming, tuple) and not chosen:
        # a name without its namespace (--pod NAME means default/NAME): name the pods it may be
        elsewhere = sorted(f"{_meta(o).get('namespace') or 'default'}/{_meta(o)['name']}" for o in by_kind["Pod"]
                           if _meta(o)["name"] == incoming[1])
        hint = f" (the dump has {', '.join(elsewhere[:5])}: give --pod NAMESPACE/NAME)" if elsewhere else ""
        raise ImportFailed(f"the dump has no pod {incoming[0]}/{incoming[1]}{hint}")
    if incoming == PENDING and not chosen:
        raise ImportFailed("the dump has no pending pod for default-scheduler")
    sections["incoming"] = [item for _, _, item in sorted(chosen, key=lambda c: (c[0], c[1]))]
    sections["pods"] = collapse_replicas(sections["pods"])
    for kind in ("Service", "ReplicationController", "ReplicaSet", "StatefulSet"):
        for obj in by_kind[kind]:
            o = cv.owner(obj)
            if o is not None:
                sections["owners"].append(o)
    for obj in by_kind["PodDisruptionBudget"]:
        section, item = cv.pdb(obj)
        sections[section].append(item)
    for kind in _DEVICE_KINDS:
        sections["objects"].extend(device_object(obj) for obj in by_kind[kind])
    for kind in _STORAGE_KINDS:
        sections["objects"] += [storage_object(o) for o in by_kind[kind]]
    for obj in by_kind["Workload"]:
        w = workload_object(obj, minor)
        if w is None:
            cv.count(f"Workload(s) not of 1.35's {WORKLOAD_API} or 1.36's {API_VERSION_1_36} ({POD_GROUPS_1_36})")
        else:
            sections["objects"].append(w)
    for obj in by_kind["PodGroup"]:
        pg, gated = pod_group_object(obj, minor)
        if pg is None:
            cv.count(f"PodGroup(s) not of 1.36's {API_VERSION_1_36} ({POD_GROUPS_1_36})")
            continue
        for k in gated:
            cv.count(f"PodGroup field(s) {k}, which needs the alpha gate {GATED_FIELDS[k]} kspread does not model")
        sections["objects"].append(pg)
    return sections, cv.counts


def gang_gates(sections: Mapping[str, list]) -> dict[str, bool]:
    """The feature gates a case of these sections needs: GANG_GATES when it has Workloads or
    pods with a workloadRef (1.35), PodGroups or pods with a schedulingGroup (1.36), with
    TopologyAwareWorkloadScheduling when a PodGroup has schedulingConstraints,
    DRAWorkloadResourceClaims when one has resourceClaims and WorkloadAwarePreemption when
    one has a priority, priorityClassName or disruptionMode; else none."""
    items = [*sections.get("pods", ()), *sections.get("incoming", ()), *sections.get("objects", ())]
    if any(o.get("kind") in ("Workload", "PodGroup") or any(k in o or k in _m(o.get("spec"))
                                                            for k in ("workloadRef", "schedulingGroup"))
           for o in items):
        gates = dict(GANG_GATES)
        if any(o.get("kind") == "PodGroup" and _m(o.get("spec")).get("schedulingConstraints") is not None
               for o in items):
            # the API server served the field: TopologyAwareWorkloadScheduling was on
            gates["TopologyAwareWorkloadScheduling"] = True
        if any(o.get("kind") == "PodGroup" and _m(o.get("spec")).get("resourceClaims") for o in items):
            # the API server served the field: DRAWorkloadResourceClaims was on
            gates["DRAWorkloadResourceClaims"] = True
        if any(o.get("kind") == "PodGroup" and any(_m(o.get("spec")).get(k) not in (None, "")
                                                   for k in _PREEMPTION_FIELDS) for o in items):
            # the API server served a priority or disruption mode: WorkloadAwarePreemption was on
            gates["WorkloadAwarePreemption"] = True
        return gates
    return {}


def node_allocatable_gates(sections: Mapping[str, list], minor: int) -> dict[str, bool]:
    """NODE_ALLOC_GATES at 1.36 when a pod of these sections has
    status.nodeAllocatableResourceClaimStatuses or a ResourceSlice's device has
    nodeAllocatableResourceMappings (the API server drops both with the gate off), else none."""
    if minor != 36:
        return {}
    for o in (*sections.get("pods", ()), *sections.get("incoming", ()), *sections.get("objects", ())):
        if _m(o.get("status")).get("nodeAllocatableResourceClaimStatuses"):
            return dict(NODE_ALLOC_GATES)
        if o.get("kind") == "ResourceSlice":
            for d in _m(o.get("spec")).get("devices") or ():
                if isinstance(d, dict) and d.get("nodeAllocatableResourceMappings"):
                    return dict(NODE_ALLOC_GATES)
    return {}


def taint_rule_gates(sections: Mapping[str, list], minor: int) -> dict[str, bool]:
    """The gates the API server serves DeviceTaintRules with, when the sections have one:
    DRADeviceTaints (1.33-1.36), with DRADeviceTaintRules from 1.35; else none (before 1.33
    and from 1.37 the case refuses the rule by name, and the import leaves it out)."""
    if not 33 <= minor <= 36 or not any(o.get("kind") == "DeviceTaintRule" for o in sections.get("objects", ())):
        return {}
    return {"DRADeviceTaints": True, **({"DRADeviceTaintRules": True} if minor >= 35 else {})}


def list_attribute_gates(sections: Mapping[str, list], minor: int) -> dict[str, bool]:
    """LIST_GATES when a ResourceSlice of these sections has a list attribute (from 1.36;
    before, the field does not exist and kspread's check leaves the slice out), else none."""
    if minor < 36:
        return {}
    for o in sections.get("objects", ()):
        if o.get("kind") != "ResourceSlice":
            continue
        for d in _m(o.get("spec")).get("devices") or ():
            body = _m(d.get("basic")) if isinstance(d, dict) and "basic" in d else _m(d)
            for a in _m(body.get("attributes")).values():
                if isinstance(a, dict) and any(k in a for k in ("ints", "bools", "strings", "versions")):
                    return dict(LIST_GATES)
    return {}


# ---- writing the case ---------------------------------------------------------------------
#
# A small YAML writer: PyYAML's representer costs most of the time on large clusters, and
# the case only holds mappings, lists, strings, numbers and booleans. Strings are plain
# when that reads back as the same string, else JSON-quoted (a JSON string is a valid YAML
# double-quoted scalar). Mappings and lists whose flow form fits in _FLOW_WIDTH columns
# are written on one line.

_PLAIN_BLOCK = re.compile(r"^[A-Za-z0-9_/.][A-Za-z0-9_/.+@=-]*(:[A-Za-z0-9_/.+@=-]+)*$")
_PLAIN_FLOW = re.compile(r"^[A-Za-z0-9_/.][A-Za-z0-9_/.+@=-]*$")
_STR_TAG = "tag:yaml.org,2002:str"
_resolver = yaml.resolver.Resolver()


@lru_cache(maxsize=65536)
def _str(s: str, flow: bool) -> str:
    if (_PLAIN_FLOW if flow else _PLAIN_BLOCK).match(s) and \
            _resolver.resolve(yaml.ScalarNode, s, (True, False)) == _STR_TAG:
        return s
    return double_quoted(s)


def _scalar(v: Any, flow: bool) -> str:
    if isinstance(v, str):
        return _str(v, flow)
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return json.dumps(v)
    return _str(str(v), flow)


def _flow(v: Any, budget: int) -> str | None:
    """``v`` in flow style, or None when it is longer than ``budget``."""
    if isinstance(v, dict):
        parts = []
        for k, x in v.items():
            key = _scalar(k, True)
            budget -= len(key) + 4
            if budget < 0:
                return None
            inner = _flow(x, budget)
            if inner is None:
                return None
            budget -= len(inner)
            parts.append(f"{key}: {inner}")
        return "{" + ", ".join(parts) + "}"
    if isinstance(v, list):
        parts = []
        for x in v:
            budget -= 2
            inner = _flow(x, budget)
            if inner is None:
                return None
            budget -= len(inner)
            parts.append(inner)
        return "[" + ", ".join(parts) + "]"
    out = _scalar(v, True)
    return out if len(out) <= budget else None


def _block(v: Any, indent: int, out: list[str], top: bool = False) -> None:
    """Lines of a mapping or list in block style, each starting at column ``indent``."""
    pad = " " * indent
    if isinstance(v, dict):
        for k, x in v.items():
            key = _scalar(k, False)
            if not isinstance(x, (dict, list)):
                out.append(f"{pad}{key}: {_scalar(x, False)}\n")
                continue
            inline = None if top and x else _flow(x, _FLOW_WIDTH - indent - len(key) - 2)
            if inline is not None:
                out.append(f"{pad}{key}: {inline}\n")
            else:
                out.append(f"{pad}{key}:\n")
                _block(x, indent if isinstance(x, list) else indent + 2, out)
        return
    for x in v:
        if not isinstance(x, (dict, list)):
            out.append(f"{pad}- {_scalar(x, False)}\n")
            continue
        inline = _flow(x, _FLOW_WIDTH - indent - 2)
        if inline is not None:
            out.append(f"{pad}- {inline}\n")
            continue
        start = len(out)
        _block(x, indent + 2, out)
        out[start] = f"{pad}- {out[start][indent + 2:]}"


def _dump(data: Mapping[str, Any], top: bool = False) -> str:
    out: list[str] = []
    _block(data, 0, out, top)
    return "".join(out)


def _parts(sections: Mapping[str, list], name: str, source: str, version: str,
           incoming: str | list[dict], missing: int = 0,
           gates: Mapping[str, bool] | None = None) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The case's data as ``render`` writes it, in three parts: the head, the cluster, and
    the incoming pod(s) with an empty ``expect``. ``missing``: how many owners its pods
    name the dump lacks (the case is then tagged and described so)."""
    head: dict[str, Any] = {"apiVersion": "kspread/v1", "kind": "Case", "name": name, "source": source}
    if missing:
        head["description"] = (f"Imported without {missing} owner(s) its pods name as their controller: "
                               "default topology spreading may place pods otherwise than the cluster does.")
        head["tags"] = [MISSING_OWNERS_TAG]
    head["version"] = version
    if gates:
        head["featureGates"] = dict(gates)
    body = {k: v for k, v in sections.items() if v and k in _SECTIONS}
    if isinstance(incoming, str):
        tail: dict[str, Any] = {"pod": {"name": incoming}, "expect": {}}
    elif len(incoming) == 1:
        tail = {"pod": incoming[0], "expect": {}}
    else:
        tail = {"schedule": incoming, "expect": {}}
    return head, body, tail


def render(sections: Mapping[str, list], name: str, source: str, version: str, incoming: str | list[dict],
           summary: str, left_out: str = "", search: str = "",
           missing: list[tuple[str, str, str]] | None = None, gates: Mapping[str, bool] | None = None) -> str:
    """The case text. ``incoming``: the placeholder pod's name, or the dump's pending pods
    to schedule (one: ``pod``; several: a ``schedule`` sequence). Comment text (the dump's
    file name) has its line breaks escaped: it stays comment. ``missing``: the owners its
    pods name that the dump lacks (``missing_owners``), said first."""
    head, body, tail = _parts(sections, name, source, version, incoming, len(missing or ()), gates)
    intro = comment_text(f"Imported by `kspread import` from {source}: {summary}.")
    warning = comment_text(f"WARNING: {missing_owners_note(missing).removesuffix(_KUBECTL)}") if missing else ""
    out = [*[f"# {line}\n" for line in textwrap.wrap(warning, 96, break_on_hyphens=False)],
           *([f"#   {_KUBECTL}\n"] if missing else []),
           *[f"# {line}\n" for line in textwrap.wrap(intro, 96)],
           *[f"# {line}\n" for line in textwrap.wrap(comment_text(f"Left out: {left_out}."), 96) if left_out],
           *[f"# {line}\n" for line in textwrap.wrap(comment_text(f"Search: {search}."), 96) if search],
           *[f"# {line}\n" for line in textwrap.wrap(GANG_NOTE, 96) if gates and set(GANG_GATES) <= set(gates)],
           *[f"# {line}\n" for line in textwrap.wrap(TAINT_RULE_NOTE, 96) if gates and "DRADeviceTaints" in gates],
           *[f"# {line}\n" for line in textwrap.wrap(LIST_NOTE, 96) if gates and set(LIST_GATES) <= set(gates)],
           *[f"# {line}\n" for line in textwrap.wrap(NODE_ALLOC_NOTE, 96)
             if gates and set(NODE_ALLOC_GATES) <= set(gates)]]
    if isinstance(incoming, str):
        out.append("# Only what kube-scheduler reads is kept. Replace the placeholder `pod` below with the pod\n"
                   "# to schedule, then fill `expect` with: kspread run --update THIS_FILE\n")
    else:
        out.append("# Only what kube-scheduler reads is kept. Fill `expect` with: kspread run --update THIS_FILE\n")
    out += [_dump(head), _dump(body, top=True)]
    if isinstance(incoming, str):
        out += [("# PLACEHOLDER: replace with the pod to schedule (any pod shorthand: labels, requests,\n"
                 "# affinity, tolerations, ...), and add a `profile` to test other plugins than the\n"
                 "# version's default profile. `kspread run --update` then fills `expect`.\n"),
                _dump(tail)]
    elif len(incoming) == 1:
        out += [("# The pending pod to schedule. `kspread run --update` fills `expect`; `kspread explain`\n"
                 "# shows why each node fits or not.\n"),
                _dump(tail, top=True)]
    else:
        out += [("# The pending pods, in creation order, scheduled one after another (queue order: priority,\n"
                 "# then this order). `kspread run --update` fills `expect` with their placements.\n"),
                _dump(tail, top=True)]
    return "".join(out)


def _read_back(text: str, data: dict[str, Any], where: str) -> None:
    """The rendered text read as kspread will read the file: it must be one document
    holding exactly ``data`` (nothing a name or a comment carried may have become a key)."""
    from kspread.format.loader import _parse

    try:
        docs = _parse(text, where)
    except CaseError as e:
        raise ImportFailed(f"the written case would not read back (a kspread bug): {e}") from None
    if docs != [data]:
        got = sorted(docs[0]) if len(docs) == 1 and isinstance(docs[0], dict) else f"{len(docs)} document(s)"
        raise ImportFailed(f"the written case would not read back as imported (a kspread bug): read {got}, "
                           f"wrote {sorted(data)}")


# ---- checking the result --------------------------------------------------------------------


def _check(doc: dict, warn: Warn, max_drops: int = 100) -> None:
    """Load the case as kspread will; an item it rejects is left out with a warning."""
    from kspread.errors import format_path
    from kspread.format.case import build_case
    from kspread.format.loader import validate_deduplicated

    for _ in range(max_drops + 1):
        try:
            # the schema sees every pod's startTime as a string: shapes that differ only
            # there are checked once (build_case reads the times themselves)
            slim = dict(doc)
            if doc.get("pods"):
                slim["pods"] = [{**q, "startTime": ""} if "startTime" in q else q for q in doc["pods"]]
            validate_deduplicated(slim)
            build_case(doc, doc.get("name", "imported"))
            return
        except CaseError as e:
            p = e.path
            at = p[1] if len(p) >= 2 and p[0] in _SECTIONS else None
            if isinstance(at, int) and at < len(doc.get(p[0]) or []):
                item = doc[p[0]].pop(at)
                what = item.get("name") if isinstance(item, dict) else item
                if isinstance(item, dict) and p[0] == "objects":
                    what = f"{item.get('kind')} {_meta(item).get('name')}"
                field = format_path(p[2:]) if len(p) > 2 else "item"
                warn(f"{p[0]} {what}: left out, kspread rejects it: {field}: {e.message}")
                if p[0] == "nodes":  # its pods go with it
                    gone = what if isinstance(what, str) else None
                    doc["pods"] = [q for q in doc.get("pods") or [] if q.get("node") != gone
                                   and q.get("nominatedNode") != gone]
                for k in _SECTIONS:
                    if k in doc and not doc[k]:
                        del doc[k]
                continue
            raise ImportFailed(f"the imported case does not load: {e}") from None
    raise ImportFailed("the imported case does not load: too many objects rejected")


# ---- owners the dump lacks --------------------------------------------------------------------


def missing_owners(sections: Mapping[str, list], incoming: str | list[dict]) -> list[tuple[str, str, str]]:
    """The (kind, namespace, name) of each ReplicationController, ReplicaSet and StatefulSet
    that a pod of the case names as its controller and the case's owners lack, in the order
    first named."""
    have = {(o.get("kind"), o.get("namespace") or "default", o.get("name")) for o in sections.get("owners") or []}
    out: dict[tuple[str, str, str], None] = {}
    pods = [*(sections.get("pods") or []), *([] if isinstance(incoming, str) else incoming)]
    for p in pods:
        c = p.get("controller")
        if isinstance(c, dict) and c.get("kind") in _SPREAD_OWNER_KINDS:
            key = (str(c["kind"]), str(p.get("namespace") or "default"), str(c.get("name")))
            if key not in have:
                out[key] = None
    for o in sections.get("objects") or []:
        if o.get("kind") != "Pod":
            continue
        meta = _meta(o)
        for ref in meta.get("ownerReferences") or []:
            if isinstance(ref, dict) and ref.get("controller") and ref.get("kind") in _SPREAD_OWNER_KINDS:
                key = (str(ref["kind"]), str(meta.get("namespace") or "default"), str(ref.get("name")))
                if key not in have:
                    out[key] = None
    return list(out)


def namespace_label_selectors(sections: Mapping[str, list], incoming: str | list[dict]) -> int:
    """How many pod affinity terms of the case's pods select namespaces by a label other
    than ``kubernetes.io/metadata.name`` (the one label every namespace has without being
    listed): with no Namespace in the dump, such a selector matches no namespace."""
    def by_label(sel: Any) -> bool:
        if not isinstance(sel, Mapping):
            return False
        keys = [*(sel.get("matchLabels") or {}),
                *(e.get("key") for e in sel.get("matchExpressions") or [] if isinstance(e, Mapping))]
        return any(k != LABEL_METADATA_NAME for k in keys)

    pods = [*(sections.get("pods") or []), *([] if isinstance(incoming, str) else incoming)]
    affinities = [p.get("affinity") for p in pods]
    affinities += [_m(o.get("spec")).get("affinity") for o in sections.get("objects") or [] if o.get("kind") == "Pod"]
    return sum(by_label(t.get("namespaceSelector")) for a in affinities for _, t in affinity_terms(a))


def missing_owners_note(missing: list[tuple[str, str, str]]) -> str:
    """What the warning and the case's first comment say of the owners the dump lacks."""
    shown = ", ".join(f"{kind} {ns}/{name}" for kind, ns, name in missing[:_SHOWN_OWNERS])
    more = f", and {len(missing) - _SHOWN_OWNERS} more" if len(missing) > _SHOWN_OWNERS else ""
    return (f"the dump lacks {len(missing)} owner(s) that its pods name as their controller ({shown}{more}): "
            "default topology spreading (SelectorSpread, PodTopologySpread's system defaults) finds a pod's "
            "siblings through them, so where a new replica lands may differ from the cluster. The case is "
            f"tagged {MISSING_OWNERS_TAG}; import a dump that has them: {_KUBECTL}")


# ---- claims the dump lacks --------------------------------------------------------------------


def missing_claims(sections: Mapping[str, list], incoming: str | list[dict]) -> list[tuple[str, str]]:
    """The (namespace, name) of each PersistentVolumeClaim that a pod of the case uses (a
    volume's ``persistentVolumeClaim.claimName``) and the dump lacks, in the order first named:
    a dump of `kubectl get nodes,pods` has none, and a pod to schedule that uses one is then
    rejected for the missing claim where the cluster may place it. (A ResourceClaim the dump
    lacks fails the import: the case does not load, naming it.)"""
    have = {(str(_meta(o).get("namespace") or "default"), str(_meta(o).get("name")))
            for o in sections.get("objects") or [] if o.get("kind") == "PersistentVolumeClaim"}
    out: dict[tuple[str, str], None] = {}

    def named(ns: str, volumes: Any) -> None:
        for v in volumes if isinstance(volumes, list) else ():
            name = _m(_m(v).get("persistentVolumeClaim")).get("claimName")
            if isinstance(name, str) and (ns, name) not in have:
                out[(ns, name)] = None

    for p in [*(sections.get("pods") or []), *([] if isinstance(incoming, str) else incoming)]:
        named(str(p.get("namespace") or "default"), p.get("volumes"))
    for o in sections.get("objects") or []:
        if o.get("kind") == "Pod":
            named(str(_meta(o).get("namespace") or "default"), _m(o.get("spec")).get("volumes"))
    return list(out)


def missing_claims_note(missing: list[tuple[str, str]]) -> str:
    """The warning on the PersistentVolumeClaims the dump lacks."""
    shown = ", ".join(f"{ns}/{name}" for ns, name in missing[:_SHOWN_OWNERS])
    more = f", and {len(missing) - _SHOWN_OWNERS} more" if len(missing) > _SHOWN_OWNERS else ""
    return (f"the dump lacks {len(missing)} PersistentVolumeClaim(s) that its pods use ({shown}{more}): the "
            "volume plugins do not decide for those pods as the cluster's scheduler does (a pod to schedule "
            f"that uses one is rejected for the missing claim); import a dump that has them: {_KUBECTL}")


# ---- entry points ------------------------------------------------------------------------------


def _stderr_warn(msg: str) -> None:
    print(f"kspread import: warning: {msg}", file=sys.stderr)


def kubelet_minor(objs: Iterable[Mapping[str, Any]], warn: Warn) -> int | None:
    """The minor version of the nodes' kubelets (status.nodeInfo.kubeletVersion) when they
    agree. When they differ, the newest: the control plane (and so the scheduler) is never
    older than a kubelet. None: no node says."""
    from kspread.engine.versions import NEWEST_MINOR, OLDEST_MINOR

    minors: set[int] = set()
    for obj in objs:
        if obj.get("kind") != "Node":
            continue
        raw = _m(_m(obj.get("status")).get("nodeInfo")).get("kubeletVersion")
        m = _KUBELET_VERSION.fullmatch(raw.strip()) if isinstance(raw, str) else None
        if m is not None:
            minors.add(int(m.group(1)))
    if not minors:
        return None
    minor = max(minors)
    if len(minors) > 1:
        warn(f"the nodes' kubelets run different versions ({', '.join(f'1.{m}' for m in sorted(minors))}): "
             f"the case takes the newest, 1.{minor}; give --version for the control plane's")
    if not OLDEST_MINOR <= minor <= NEWEST_MINOR:
        clamped = min(max(minor, OLDEST_MINOR), NEWEST_MINOR)
        warn(f"the nodes' kubelets run 1.{minor}, which kspread does not model: the case takes 1.{clamped}")
        minor = clamped
    return minor


def _text(name: str) -> str:
    """A file name as text: bytes that were not UTF-8 (surrogate escapes) become U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def parse_pod_ref(ref: str) -> tuple[str, str]:
    """``ns/name`` or ``name`` (namespace default)."""
    ns, _, name = ref.rpartition("/")
    if not name or "/" in ns:
        raise ImportFailed(f"--pod {ref!r}: expected NAMESPACE/NAME or NAME")
    return (ns or "default", name)


@dataclass
class Imported:
    text: str
    summary: str  # what the case holds, as its first comment says
    search: str = ""  # how the case searches the nodes, beside a default kube-scheduler (search_note)


def search_note(minor: int, n_nodes: int) -> str:
    """The search the case makes (it has no ``profile``: every node, as
    ``percentageOfNodesToScore: 100``) beside the one a default kube-scheduler of the
    version makes on ``n_nodes`` nodes (the adaptive share from 1.14, 50% before; every
    node under 100 nodes)."""
    from kspread.engine.scheduler import DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE, num_feasible_nodes_to_find
    from kspread.engine.versions import make_version

    version = make_version(f"1.{minor}", None)
    default = 0 if version.adaptive_percentage_of_nodes else DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
    found = num_feasible_nodes_to_find(version, default, n_nodes)
    out = "the case has no `profile`, so kspread searches every node (percentageOfNodesToScore: 100)"
    if found >= n_nodes:
        return out + f"; a default kube-scheduler 1.{minor} does too on {n_nodes} node(s)"
    return (out + f"; a default kube-scheduler 1.{minor} stops its search at {found} feasible nodes of these "
            f"{n_nodes} and may select another node: to test that search, give a `profile` with "
            f"percentageOfNodesToScore: {default}")


def import_dump(dump_path: str, out_path: str | None = None, version: str | None = None, *,
                force: bool = False, warn: Warn | None = None, check: bool = True,
                pod: str | None = None, pending: bool = False) -> Imported:
    """Read a kubectl dump and return the case; write it to ``out_path`` when given
    (atomically; an existing file only with ``force``). ``pod`` (``ns/name``) makes that
    pending pod of the dump the incoming pod; ``pending`` makes every pending pod a
    ``schedule`` sequence. Raises ImportFailed."""
    from kspread.engine.versions import NEWEST_MINOR, parse_version
    from kspread.format.files import write_atomic

    warn = warn or _stderr_warn
    if pod is not None and pending:
        raise ImportFailed("--pod and --pending exclude each other")
    incoming_ref: tuple[str, str] | str | None = parse_pod_ref(pod) if pod is not None else (
        PENDING if pending else None)
    if version is not None:  # also as `kubectl version` prints it: v1.30.2
        m = re.fullmatch(r"v?(\d+\.\d+)(\.\d+)?", version.strip())
        version = m.group(1) if m else version
    if out_path is not None and os.path.exists(out_path) and not force:
        raise ImportFailed(f"{out_path} exists; use --force to overwrite it")
    docs = read_dump(dump_path)
    objs = list(iter_objects(docs, dump_path))
    if not any(o.get("kind") == "Node" for o in objs):
        # `kubectl get pods -o yaml`: a case without a node, where every pod is unschedulable
        warn(f"the dump has no Node: the case has no node, and no pod fits anywhere; import a dump that has "
             f"them: {_KUBECTL}")
    if version is None:
        found = kubelet_minor(objs, warn)
        version = f"1.{found if found is not None else NEWEST_MINOR}"
    try:
        minor = parse_version(version, ("--version",))
    except CaseError as e:
        raise ImportFailed(str(e)) from None
    sections, counts = convert(objs, minor, warn, incoming_ref)
    gates = gang_gates(sections)
    if gates:
        warn(GANG_NOTE)
    rules = taint_rule_gates(sections, minor)
    if rules:
        warn(TAINT_RULE_NOTE)
        gates = {**gates, **rules}
    lists = list_attribute_gates(sections, minor)
    if lists:
        warn(LIST_NOTE)
        gates = {**gates, **lists}
    node_alloc = node_allocatable_gates(sections, minor)
    if node_alloc:
        warn(NODE_ALLOC_NOTE)
        gates = {**gates, **node_alloc}
    # a file name is any bytes: one that is not UTF-8 is shown with U+FFFD, never written as a lone surrogate
    stem = "stdin" if dump_path == "-" else _text(Path(dump_path).stem)
    # the case's name: a control character, line break or bidi control of the file name
    # written as \uXXXX (a case name cannot hold one; ``source`` keeps the file name)
    stem = UNPRINTABLE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", stem)
    chosen = sections.pop("incoming", [])
    incoming: str | list[dict] = chosen
    if incoming_ref is None:
        default_keys = {p["name"] for p in sections["pods"] if "namespace" not in p}
        name = "incoming"
        k = 2
        while name in default_keys or any(name == f"{p['name']}-{i}" for p in sections["pods"]
                                          if "namespace" not in p and "replicas" in p
                                          for i in range(p["replicas"])):
            name, k = f"incoming-{k}", k + 1
        incoming = name
    elif not chosen:
        raise ImportFailed("no pending pod could be imported (see the warnings)")
    vstr = f"1.{minor}"
    if check:
        doc: dict[str, Any] = {"apiVersion": "kspread/v1", "kind": "Case", "name": stem, "version": vstr,
                               **({"featureGates": gates} if gates else {}),
                               **{k: v for k, v in sections.items() if v}}
        if isinstance(incoming, str):
            doc["pod"] = {"name": incoming}
        elif len(incoming) == 1:
            doc["pod"] = incoming[0]
        else:
            doc["schedule"] = incoming
        doc["expect"] = {"unschedulable": False}  # any key: the check loads the case, it does not run it
        _check(doc, warn)
        sections = {k: doc.get(k) or [] for k in _SECTIONS}
    raw_kinds = [o.get("kind") for o in sections["objects"]]
    n_pods = sum(p.get("replicas", 1) for p in sections["pods"]) + raw_kinds.count("Pod")
    n_pdbs = len(sections["pdbs"]) + raw_kinds.count("PodDisruptionBudget")
    parts = [f"{len(sections['nodes'])} node(s)", f"{n_pods} pod(s)", f"{len(sections['owners'])} owner(s)",
             f"{n_pdbs} PDB(s)", f"{len(sections['priorityClasses'])} priority class(es)"]
    if sections["namespaces"]:
        parts.append(f"{len(sections['namespaces'])} namespace(s)")
    if not isinstance(incoming, str):
        parts.append(f"{len(incoming)} pending pod(s) to schedule")
    summary = ", ".join(parts)
    left_out = ", ".join(f"{n} {what}" for what, n in counts.items())
    source = "stdin" if dump_path == "-" else _text(Path(dump_path).name)
    search = search_note(minor, len(sections["nodes"]) + raw_kinds.count("Node"))
    missing = missing_owners(sections, incoming)
    if missing:
        warn(missing_owners_note(missing))
    if not sections["namespaces"] and not raw_kinds.count("Namespace"):
        selecting = namespace_label_selectors(sections, incoming)
        if selecting:
            warn(f"the dump has no Namespaces, and {selecting} pod affinity term(s) select namespaces by their "
                 "labels: such a selector matches no namespace but by kubernetes.io/metadata.name, which may "
                 f"differ from the cluster; import a dump that has them: {_KUBECTL}")
    claims = missing_claims(sections, incoming)
    if claims:
        warn(missing_claims_note(claims))
    text = render(sections, stem, source, vstr, incoming, summary, left_out, search, missing, gates)
    if check:
        head, body, tail = _parts(sections, stem, source, vstr, incoming, len(missing), gates)
        _read_back(text, {**head, **body, **tail}, out_path or "the imported case")
    if out_path is not None:
        try:
            write_atomic(out_path, text)
        except OSError as e:
            raise ImportFailed(f"cannot write {out_path}: {e}") from None
    return Imported(text, summary, search)


def import_snapshot(dump_path: str, out_path: str | None = None, version: str | None = None, *,
                    force: bool = False, warn: Warn | None = None, check: bool = True,
                    pod: str | None = None, pending: bool = False) -> str:
    """The case text of :func:`import_dump`."""
    return import_dump(dump_path, out_path, version, force=force, warn=warn, check=check, pod=pod,
                       pending=pending).text


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dump", help=f"output of `{_KUBECTL}` (or -o json); - for standard input")
    p.add_argument("-o", "--output", metavar="OUT.yaml",
                   help="write the case here (default: standard output)")
    p.add_argument("--version",
                   help='kube-scheduler minor version of the case, e.g. "1.30" (default: the nodes\' '
                        'kubelet version, else the newest)')
    p.add_argument("--pod", metavar="NAMESPACE/NAME",
                   help="make this pending pod of the dump the incoming pod (why is it pending?)")
    p.add_argument("--pending", action="store_true",
                   help="make every pending pod of the dump a `schedule` sequence, in creation order")
    p.add_argument("--force", action="store_true", help="overwrite OUT.yaml if it exists")


def cmd_import(args: argparse.Namespace) -> int:
    try:
        result = import_dump(args.dump, args.output, args.version, force=args.force, pod=args.pod,
                             pending=args.pending)
    except ImportFailed as e:
        print(f"kspread import: error: {e}", file=sys.stderr)
        return 1
    if args.output is None:
        try:
            sys.stdout.write(result.text)
            sys.stdout.flush()
        except BrokenPipeError:
            return 1
    else:
        print(f"kspread import: wrote {args.output} ({result.summary})", file=sys.stderr)
    print(f"kspread import: note: {result.search}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="kspread import",
                                 description="write a case from a kubectl dump of a cluster")
    add_arguments(ap)
    return cmd_import(ap.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
