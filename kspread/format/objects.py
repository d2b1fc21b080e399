"""Raw Kubernetes objects (``objects:``, as ``kubectl get -o yaml`` prints them)
turned into the shorthand forms of the case format, keeping only what the
scheduler reads. Every shorthand field remembers where it came from, so an error
points into the raw object."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator, Mapping
from typing import Any

from kspread.errors import CaseError, PathT
from kspread.format.schema import validate

Converted = tuple[str, dict, list, dict]  # (section, shorthand item, path prefix, field -> raw path)

_CONTAINER_FIELDS = ("name", "image", "resources", "ports", "restartPolicy")


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


def convert_object(obj: Mapping[str, Any], path: list) -> Iterator[Converted]:
    kind = obj.get("kind")
    if kind == "List":
        for j, element in enumerate(obj.get("items") or []):
            yield from convert_object(element, [*path, "items", j])
        return
    meta = _meta(obj, path)
    mp = [*path, "metadata"]
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    sp = [*path, "spec"]
    st = [*path, "status"]
    item: dict[str, Any] = {"name": meta["name"]}
    fmap: dict[str, list] = {"name": [*mp, "name"]}

    def take(src: Mapping[str, Any], key: str, dst: str, where: list) -> None:
        if src.get(key) is not None:
            item[dst] = src[key]
            fmap[dst] = [*where, key]

    if kind == "Node":
        section, def_name = "nodes", "node"
        take(meta, "labels", "labels", mp)
        take(status, "allocatable", "allocatable", st)
        take(spec, "unschedulable", "unschedulable", sp)
        if spec.get("taints"):
            item["taints"] = [{k: t[k] for k in ("key", "value", "effect") if k in t} for t in spec["taints"]]
            fmap["taints"] = [*sp, "taints"]
        if status.get("images"):
            item["images"] = [{"names": im.get("names") or [], "sizeBytes": im.get("sizeBytes", 0)}
                              for im in status["images"]]
            fmap["images"] = [*st, "images"]
    elif kind == "Pod":
        if status.get("phase") in ("Succeeded", "Failed"):
            return  # the scheduler's informer does not see terminated pods
        section, def_name = "pods", "pod"
        take(meta, "namespace", "namespace", mp)
        take(meta, "labels", "labels", mp)
        if meta.get("deletionTimestamp"):
            item["terminating"] = True
        for i, ref in enumerate(meta.get("ownerReferences") or []):
            if isinstance(ref, Mapping) and ref.get("controller"):
                item["controller"] = {"kind": ref.get("kind"), "name": ref.get("name"),
                                      "apiVersion": ref.get("apiVersion", "")}
                fmap["controller"] = [*mp, "ownerReferences", i]
                break
        take(spec, "nodeName", "node", sp)
        take(spec, "priority", "priority", sp)
        take(spec, "priorityClassName", "priorityClassName", sp)
        take(spec, "preemptionPolicy", "preemptionPolicy", sp)
        take(spec, "overhead", "overhead", sp)
        take(spec, "resources", "resources", sp)
        take(spec, "nodeSelector", "nodeSelector", sp)
        take(spec, "affinity", "affinity", sp)
        take(spec, "tolerations", "tolerations", sp)
        take(spec, "topologySpreadConstraints", "topologySpreadConstraints", sp)
        for key in ("containers", "initContainers"):
            if spec.get(key):
                item[key] = [_container(c) for c in spec[key]]
                fmap[key] = [*sp, key]
        if "tolerations" in item:
            item["tolerations"] = [{k: t[k] for k in ("key", "operator", "value", "effect") if k in t}
                                   for t in item["tolerations"]]
        take(status, "startTime", "startTime", st)
        take(status, "nominatedNodeName", "nominatedNode", st)
        for c in status.get("conditions") or []:
            if c.get("type") == "DisruptionTarget" and c.get("status") == "True" and \
                    c.get("reason") == "PreemptionByScheduler":
                item["_preemptedByScheduler"] = True
        if any(isinstance(v, Mapping) and ("persistentVolumeClaim" in v or "ephemeral" in v)
               for v in spec.get("volumes") or []):
            item["_usesPersistentVolumes"] = True
    elif kind in ("Service", "ReplicationController", "ReplicaSet", "StatefulSet"):
        section, def_name = "owners", "owner"
        item["kind"] = kind
        take(meta, "namespace", "namespace", mp)
        sel = spec.get("selector")
        if kind == "ReplicationController" and sel is None:
            # API defaulting: an RC without a selector selects its template's labels
            sel = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
        item["selector"] = sel
        fmap["selector"] = [*sp, "selector"]
        for ref in meta.get("ownerReferences") or []:
            if isinstance(ref, Mapping) and ref.get("controller") is True:
                item["_controller"] = (ref.get("kind"), ref.get("name"))
    elif kind == "Deployment":
        # not a section of its own: ``kspread.format.case`` adds the ReplicaSet it owns
        take(meta, "namespace", "namespace", mp)
        take(spec, "selector", "selector", sp)
        take(spec, "template", "template", sp)
        take(status, "collisionCount", "collisionCount", st)
        yield "deployments", item, path, fmap
        return
    elif kind == "PodDisruptionBudget":
        section, def_name = "pdbs", "pdb"
        take(meta, "namespace", "namespace", mp)
        take(spec, "selector", "selector", sp)
        if status.get("disruptionsAllowed") is not None:
            take(status, "disruptionsAllowed", "disruptionsAllowed", st)
        else:
            take(spec, "minAvailable", "minAvailable", sp)
            take(spec, "maxUnavailable", "maxUnavailable", sp)
        if status.get("disruptedPods"):
            item["_disruptedPods"] = list(status["disruptedPods"])
    elif kind == "PriorityClass":
        section, def_name = "priorityClasses", "priorityClass"
        for k in ("value", "globalDefault", "preemptionPolicy", "description"):
            if obj.get(k) is not None:
                item[k] = obj[k]
                fmap[k] = [*path, k]
    elif kind == "Namespace":
        section, def_name = "namespaces", "namespace"
        take(meta, "labels", "labels", mp)
    else:  # the schema admits only the kinds above
        raise CaseError(f"unsupported object kind {kind!r}", [*path, "kind"], value=kind)
    private = {k: item.pop(k) for k in list(item) if k.startswith("_")}
    try:
        validate(item, def_name)
    except CaseError as e:
        head = e.path[0] if e.path else None
        if isinstance(head, str) and head in fmap:
            e.path = (*fmap[head], *e.path[1:])
        else:
            e.path = (*path, *e.path)
        raise
    item.update(private)
    yield section, item, path, fmap
