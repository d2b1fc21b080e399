"""A case's device objects (dynamic resource allocation) as a backend reads them: DeviceClasses,
ResourceSlices, ResourceClaims and ResourceClaimTemplates in ``resource.k8s.io/v1``, the version
the scheduler's informers watch from 1.34, whatever version the case wrote (kspread's model is
the v1 shape: ``kspread.engine.devices``; a field the API server drops while its gate is off is
dropped there too). DeviceTaintRules go in ``resource.k8s.io/v1alpha3`` (1.33-1.35's; kspread
refuses them from 1.36). A claim made for a pod (a template's, the shorthand's ``devices``) is not
sent: the pod names its template (the shorthand's as a template of its own) and the backend's
emulated resource claim controller makes ``<pod>-<name>``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kspread.engine import apiobjects as api
from kspread.engine.devices import (
    Allocation,
    Device,
    DeviceObjects,
    DeviceTaintRule,
    DeviceToleration,
    ExactRequest,
    MatchAttribute,
    PodClaim,
    RequestPolicy,
    ResourceClaim,
    ResourceSlice,
)

_API = "resource.k8s.io/v1"


def quantity(q: Fraction) -> str:
    """A quantity as the API writes it: an integer, else milli- or nano-units (finer rounded up
    to a nano-unit, as resource.Quantity rounds)."""
    for scale, suffix in ((1, ""), (1000, "m")):
        v = q * scale
        if v.denominator == 1:
            return f"{v.numerator}{suffix}"
    return f"{math.ceil(q * 10**9)}n"


def _key(ns: str, name: str) -> str:
    return name if ns == "default" else f"{ns}/{name}"


def _pod_ref(key: str) -> tuple[str, str]:
    ns, _, name = key.rpartition("/")
    return ns or "default", name


def shorthand_template(pod_name: str, claim: str) -> str:
    """The template the shorthand's ``devices: {<claim>: ...}`` entry of a pod is sent as."""
    return f"kspread-devices-{pod_name}-{claim}"


def pod_resource_claims(pod_name: str, claims: tuple[PodClaim, ...]) -> list[dict[str, Any]]:
    """A pod's spec.resourceClaims: a claim by name, or a template (the shorthand's own)."""
    out = []
    for pc in claims:
        if pc.template:
            out.append({"name": pc.name, "resourceClaimTemplateName": pc.template})
        elif pc.inline is not None:
            out.append({"name": pc.name, "resourceClaimTemplateName": shorthand_template(pod_name, pc.name)})
        else:
            out.append({"name": pc.name, "resourceClaimName": pc.claim_name})
    return out


def _terms(terms) -> dict[str, Any]:
    return {"nodeSelectorTerms": [api.node_selector_term(t) for t in terms]}


def _counters(m: Mapping[str, Fraction]) -> dict[str, Any]:
    return {k: {"value": quantity(v)} for k, v in m.items()}


def _policy(p: RequestPolicy) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if p.default is not None:
        out["default"] = quantity(p.default)
    if p.valid_values:
        out["validValues"] = [quantity(v) for v in p.valid_values]
    if p.range_min is not None:
        r: dict[str, Any] = {"min": quantity(p.range_min)}
        if p.range_max is not None:
            r["max"] = quantity(p.range_max)
        if p.range_step is not None:
            r["step"] = quantity(p.range_step)
        out["validRange"] = r
    return out


def _device(d: Device) -> dict[str, Any]:
    out: dict[str, Any] = {"name": d.name}
    if d.attributes:
        out["attributes"] = {k: {a.kind: a.value} for k, a in d.attributes.items()}
    if d.capacity:
        caps: dict[str, Any] = {}
        for k, v in d.capacity.items():
            caps[k] = {"value": quantity(v)}
            if k in d.capacity_policies:
                caps[k]["requestPolicy"] = _policy(d.capacity_policies[k])
        out["capacity"] = caps
    if d.taints:
        out["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in d.taints]
    if d.consumes_counters:
        out["consumesCounters"] = [{"counterSet": s, "counters": _counters(c)} for s, c in d.consumes_counters]
    if d.node_name is not None:
        out["nodeName"] = d.node_name
    if d.node_selector is not None:
        out["nodeSelector"] = _terms(d.node_selector)
    if d.all_nodes:
        out["allNodes"] = True
    if d.allow_multiple_allocations is not None:
        out["allowMultipleAllocations"] = d.allow_multiple_allocations
    if d.binding_conditions is not None:
        out["bindingConditions"] = list(d.binding_conditions)
    if d.binding_failure_conditions:
        out["bindingFailureConditions"] = list(d.binding_failure_conditions)
    if d.binds_to_node:
        out["bindsToNode"] = True
    if d.node_allocatable:
        out["nodeAllocatableResourceMappings"] = {
            k: {**({"capacityKey": m.capacity_key} if m.capacity_key is not None else {}),
                "allocationMultiplier": quantity(m.multiplier)} for k, m in d.node_allocatable.items()}
    return out


def _slice(s: ResourceSlice) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": s.driver,
                            "pool": {"name": s.pool, "generation": s.generation, "resourceSliceCount": s.slice_count}}
    if s.node_name is not None:
        spec["nodeName"] = s.node_name
    if s.node_selector is not None:
        spec["nodeSelector"] = _terms(s.node_selector)
    if s.all_nodes:
        spec["allNodes"] = True
    if s.per_device_node_selection:
        spec["perDeviceNodeSelection"] = True
    if s.shared_counters:
        spec["sharedCounters"] = [{"name": n, "counters": _counters(c)} for n, c in s.shared_counters]
    spec["devices"] = [_device(d) for d in s.devices]
    return {"apiVersion": _API, "kind": "ResourceSlice", "metadata": {"name": s.name}, "spec": spec}


def _exact(r: ExactRequest, name: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": r.name} if name else {}
    out["deviceClassName"] = r.class_name
    if r.selectors:
        out["selectors"] = [{"cel": {"expression": e}} for e in r.selectors]
    out["allocationMode"] = r.mode
    if r.mode == "ExactCount":
        out["count"] = r.count
    if r.admin_access is not None:
        out["adminAccess"] = r.admin_access
    if r.tolerations:
        out["tolerations"] = _tolerations(r.tolerations)
    if r.capacity_requests is not None:
        out["capacity"] = {"requests": {k: quantity(v) for k, v in r.capacity_requests.items()}}
    return out


def _tolerations(ts: tuple[DeviceToleration, ...]) -> list[dict[str, Any]]:
    return [{k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value), ("effect", t.effect),
                               ("tolerationSeconds", t.toleration_seconds)) if v not in ("", None)} for t in ts]


def _constraint(c: MatchAttribute) -> dict[str, Any]:
    out: dict[str, Any] = {"distinctAttribute" if c.distinct else "matchAttribute": c.attribute}
    if c.requests:
        out["requests"] = list(c.requests)
    return out


def claim_spec(requests: tuple, constraints: tuple) -> dict[str, Any]:
    reqs = []
    for r in requests:
        if r.exactly is not None:
            reqs.append({"name": r.name, "exactly": _exact(r.exactly, False)})
        else:
            reqs.append({"name": r.name, "firstAvailable": [_exact(s, True) for s in r.first_available]})
    devices: dict[str, Any] = {"requests": reqs}
    if constraints:
        devices["constraints"] = [_constraint(c) for c in constraints]
    return {"devices": devices}


def _allocation(a: Allocation) -> dict[str, Any]:
    results = []
    for d in a.devices:
        r: dict[str, Any] = {"request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device}
        if d.admin_access is not None:
            r["adminAccess"] = d.admin_access
        if d.share_id is not None:
            r["shareID"] = d.share_id
        if d.consumed_capacity is not None:
            r["consumedCapacity"] = {k: quantity(v) for k, v in d.consumed_capacity.items()}
        if d.binding_conditions:
            r["bindingConditions"] = list(d.binding_conditions)
        if d.tolerations:
            # (the device taint eviction controller reads them)
            r["tolerations"] = _tolerations(d.tolerations)
        results.append(r)
    out: dict[str, Any] = {"devices": {"results": results}}
    if a.node_selector is not None:
        out["nodeSelector"] = _terms(a.node_selector)
    return out


def _claim(c: ResourceClaim) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": c.name, "namespace": c.namespace}
    if c.owner_pod is not None:
        ns, name = _pod_ref(c.owner_pod)
        # the uid the backend gives the pod (kspread.workflow.backend._pod)
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": f"{ns}/{name}",
                                    "controller": True, "blockOwnerDeletion": True}]
    if c.owner_pod_group is not None:
        meta["ownerReferences"] = [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                    "name": c.owner_pod_group, "uid": f"podgroup/{c.namespace}/{c.owner_pod_group}",
                                    "controller": True, "blockOwnerDeletion": True}]
    if c.deleting:
        meta["deletionTimestamp"] = "2023-11-14T22:13:20Z"
        meta["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    if c.extended_resources:
        meta["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
    status: dict[str, Any] = {}
    if c.allocation is not None:
        status["allocation"] = _allocation(c.allocation)
    if c.reserved_for:
        status["reservedFor"] = [
            # a PodGroup (DRAWorkloadResourceClaims), with the uid the 1.36 oracle gives it
            {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": k.removeprefix("PodGroup:"),
             "uid": f"podgroup/{c.namespace}/{k.removeprefix('PodGroup:')}"} if k.startswith("PodGroup:")
            else {"resource": "pods", "name": _pod_ref(k)[1], "uid": "/".join(_pod_ref(k))}
            for k in c.reserved_for]
    return {"apiVersion": _API, "kind": "ResourceClaim", "metadata": meta,
            "spec": claim_spec(c.requests, c.constraints), "status": status}


def _template(ns: str, name: str, requests: tuple, constraints: tuple) -> dict[str, Any]:
    return {"apiVersion": _API, "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": ns},
            "spec": {"spec": claim_spec(requests, constraints)}}


def device_taint_rule(r: DeviceTaintRule) -> dict[str, Any]:
    """A DeviceTaintRule as 1.33-1.35 serve it (resource.k8s.io/v1alpha3), its deviceSelector
    left out where the case had none (the scheduler's tracker then taints every device);
    timeAdded left to the API server (the scheduler does not read it)."""
    spec: dict[str, Any] = {"taint": {"key": r.taint.key, "value": r.taint.value, "effect": r.taint.effect}}
    if r.selector_given:
        sel: dict[str, Any] = {k: v for k, v in (("deviceClassName", r.device_class), ("driver", r.driver),
                                                ("pool", r.pool), ("device", r.device)) if v is not None}
        if r.selectors:
            sel["selectors"] = [{"cel": {"expression": e}} for e in r.selectors]
        spec["deviceSelector"] = sel
    return {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule", "metadata": {"name": r.name},
            "spec": spec}


def device_objects(objs: DeviceObjects | None, pods) -> list[dict[str, Any]]:
    """The objects a backend creates before the nodes: classes, slices, the claims the case
    wrote, its templates and one template for each shorthand ``devices`` entry of a pod."""
    if objs is None:
        return []
    out: list[dict[str, Any]] = []
    for dc in objs.classes.values():
        meta: dict[str, Any] = {"name": dc.name}
        if dc.created:
            meta["creationTimestamp"] = dc.created
        spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in dc.selectors]}
        if dc.extended_resource_name is not None:
            spec["extendedResourceName"] = dc.extended_resource_name
        out.append({"apiVersion": _API, "kind": "DeviceClass", "metadata": meta, "spec": spec})
    # the rules before the slices: the backend lets its scheduler's tracker see them first
    out += [device_taint_rule(r) for r in objs.taint_rules]
    out += [_slice(s) for s in objs.slices]
    out += [_claim(c) for key, c in objs.claims.items() if key in objs.declared]
    out += [_template(ns, name, *spec) for (ns, name), spec in objs.templates.items()]
    for p in pods:
        for pc in p.resource_claims:
            if pc.inline is not None:
                out.append(_template(p.namespace, shorthand_template(p.name, pc.name), pc.inline, ()))
    return out
