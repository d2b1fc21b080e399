"""Workloads and pod groups in ``objects:`` and a pod's group, read into
``kspread.engine.plugins.gangscheduling`` (1.35) and ``kspread.engine.plugins.podgroups``
(1.36). The API is served only with GenericWorkload on.

1.35: a Workload (scheduling.k8s.io/v1alpha1) as ``kubectl get -o yaml`` prints it::

    apiVersion: scheduling.k8s.io/v1alpha1
    kind: Workload
    metadata: {name: training, namespace: default}
    spec:
      controllerRef: {apiGroup: batch, kind: Job, name: training}   # optional, not read
      podGroups:
      - name: workers
        policy: {gang: {minCount: 4}}    # or {basic: {}}

and a pod's ``workloadRef: {name: training, podGroup: workers}`` (``podGroupReplicaKey``
optional).

1.36: a Workload (scheduling.k8s.io/v1alpha2) holds ``podGroupTemplates`` (name,
``schedulingPolicy``), which the scheduler does not read; a PodGroup
(scheduling.k8s.io/v1alpha2) is what a pod names with ``schedulingGroup: {podGroupName:
workers-0}``::

    apiVersion: scheduling.k8s.io/v1alpha2
    kind: PodGroup
    metadata: {name: workers-0}
    spec:
      podGroupTemplateRef: {workload: {workloadName: training, podGroupTemplateName: workers}}  # optional
      schedulingPolicy: {gang: {minCount: 4}}    # or {basic: {}}

kspread checks what it reads as the API server's validation does: the names, one policy
per group, minCount at least 1, unique template names (at most 8). The fields behind
alpha gates are refused by name while their gate is off (schedulingConstraints:
TopologyAwareWorkloadScheduling; disruptionMode, priorityClassName, priority:
WorkloadAwarePreemption). A PodGroup's resourceClaims (DRAWorkloadResourceClaims, 1.36) are
read with the gate on and dropped with it off, as the API server does. With
TopologyAwareWorkloadScheduling on, ``schedulingConstraints: {topology: [{key: <node
label>}]}`` (at most one, a label key) is read. With WorkloadAwarePreemption on, a PodGroup's
priority is what the Priority admission (admitPodGroup) sets: its priorityClassName's value,
else, without a priority given, the globalDefault class's. 1.37's workload API
(scheduling.k8s.io/v1beta1 and v1alpha3 Workloads and PodGroups, v1alpha3 CompositePodGroups)
is refused by name at every version, and 1.35's and 1.36's at 1.37, which no longer serves
them (docs: Gangs, "1.37: not modelled")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kspread.engine.labels import qualified_name_error
from kspread.engine.model import PriorityClass
from kspread.engine.plugins.gangscheduling import Workload, WorkloadRef
from kspread.engine.plugins.podgroups import PodGroup, PodGroupClaim
from kspread.engine.versions import GANGS_1_37, Version
from kspread.errors import CaseError, PathT, did_you_mean
from kspread.format import apivalidation

API_VERSION = "scheduling.k8s.io/v1alpha1"
API_VERSION_1_36 = "scheduling.k8s.io/v1alpha2"
# what k8s.io/api at upstream main (1.37) has of the workload API: Workload and PodGroup in
# v1beta1 and v1alpha3, CompositePodGroup in v1alpha3 only; v1alpha1 and v1alpha2 are gone
API_VERSIONS_1_37 = ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3")

# (the importer's note on a dump of another version's gang API)
POD_GROUPS_1_36 = ("kspread models 1.35's gangs (v1alpha1 Workloads, pods' workloadRef) and 1.36's pod groups "
                   "(v1alpha2 PodGroups, pods' schedulingGroup)")
GATED_FIELDS = {
    "schedulingConstraints": "TopologyAwareWorkloadScheduling",
    "resourceClaims": "DRAWorkloadResourceClaims",
    "disruptionMode": "WorkloadAwarePreemption",
    "priorityClassName": "WorkloadAwarePreemption",
    "priority": "WorkloadAwarePreemption",
}


def _needs_gate(version: Version, what: str, path: PathT, api: int = 35) -> None:
    """The gang API of ``api`` (35: v1alpha1 Workloads, workloadRef; 36: v1alpha2 PodGroups,
    schedulingGroup) in the case's version, with GenericWorkload on."""
    if api == 37 or (version.minor >= 37 and api != 35):
        _refuse_1_37(version, what, path)
    if api == 35 and version.minor >= 36:
        # 1.36 serves no v1alpha1 Workload and tombstoned spec.workloadRef (k8s.io/api v0.36)
        raise CaseError(f"{what} in {version}: 1.36 replaced 1.35's gang API (v1alpha1 Workloads, pods' "
                        "workloadRef) with v1alpha2 Workloads (podGroupTemplates), PodGroup objects and pods' "
                        "spec.schedulingGroup", path)
    if api == 36 and version.minor < 36:
        raise CaseError(f"{what} in {version}: PodGroups (scheduling.k8s.io/v1alpha2) and pods' schedulingGroup "
                        "are 1.36's; 1.35 has v1alpha1 Workloads with podGroups and pods' workloadRef", path)
    if not version.gate("GenericWorkload"):
        raise CaseError(f"{what} needs the GenericWorkload feature gate (alpha, off by default: set "
                        f"featureGates: {{GenericWorkload: true}}); version {version} does not have it on", path)


def _refuse_1_37(version: Version, what: str, path: PathT) -> None:
    """1.37's workload API (and a 1.36 one at 1.37, which 1.37 no longer serves): refused,
    naming what kspread does not model."""
    if version.minor < 37:
        raise CaseError(f"{what} in {version}: scheduling.k8s.io/v1beta1 and v1alpha3 Workloads and PodGroups, and "
                        "CompositePodGroups, are 1.37's (upstream main); " + POD_GROUPS_1_36, path)
    raise CaseError(f"{what} in {version}: {GANGS_1_37}", path)


def composite_pod_groups(items: list[tuple[Mapping[str, Any], list]], version: Version) -> None:
    """CompositePodGroups (scheduling.k8s.io/v1alpha3, 1.37's CompositePodGroup gate): refused."""
    for _obj, path in items:
        _refuse_1_37(version, "a CompositePodGroup object", [*path, "kind"])


def _api_1_37(obj: Mapping[str, Any], path: list, version: Version, kind: str) -> None:
    """A Workload or PodGroup of 1.37's API versions, or any at 1.37: refused by name."""
    av = obj.get("apiVersion")
    if av in API_VERSIONS_1_37:
        _refuse_1_37(version, f"a {kind} object ({av})", [*path, "apiVersion"])
    if version.minor >= 37:
        raise CaseError(f"a {kind} object ({av}) in {version}: 1.37 serves Workloads and PodGroups as "
                        f"{' and '.join(API_VERSIONS_1_37)} only (k8s.io/api at upstream main has no v1alpha1 or "
                        f"v1alpha2 scheduling API); and {GANGS_1_37}", [*path, "apiVersion"], value=av)


def _name_error(check: Any, name: Any, path: list) -> None:
    if not isinstance(name, str) or not name:
        raise CaseError("Required value", path)
    err = check(name)
    if err:
        raise CaseError(f"Invalid value: {name!r}: {err}", path, value=name)


def workloads(items: list[tuple[Mapping[str, Any], list]], version: Version) -> dict[tuple[str, str], Workload]:
    """The Workloads of ``objects``: (namespace, name) -> Workload."""
    out: dict[tuple[str, str], Workload] = {}
    seen: set[tuple[str, str]] = set()
    for obj, path in items:
        _api_1_37(obj, path, version, "Workload")
        if version.minor >= 36 and obj.get("apiVersion") == API_VERSION_1_36:
            _needs_gate(version, "a Workload object", [*path, "kind"], 36)
            _workload_1_36(obj, path, seen, version)
            continue
        _needs_gate(version, "a Workload object", [*path, "kind"])
        if obj.get("apiVersion") != API_VERSION:
            raise CaseError(f"a Workload is served as {API_VERSION} (1.35); got {obj.get('apiVersion')!r}",
                            [*path, "apiVersion"], value=obj.get("apiVersion"))
        meta = obj.get("metadata") or {}
        _name_error(apivalidation.subdomain_error, meta.get("name"), [*path, "metadata", "name"])
        name: str = meta["name"]
        ns: str = meta.get("namespace") or "default"
        if (ns, name) in out:
            raise CaseError(f"Workload {ns}/{name} is defined twice", [*path, "metadata", "name"], value=name)
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            raise CaseError("Required value", [*path, "spec"])
        groups_raw = spec.get("podGroups")
        gp = [*path, "spec", "podGroups"]
        if not isinstance(groups_raw, list) or not groups_raw:
            raise CaseError("Required value: a Workload has at least one pod group", gp)
        groups: dict[str, int | None] = {}
        for i, g in enumerate(groups_raw):
            at = [*gp, i]
            if not isinstance(g, Mapping):
                raise CaseError("a pod group is an object with name and policy", at)
            _name_error(apivalidation.subdomain_error, g.get("name"), [*at, "name"])
            if g["name"] in groups:
                raise CaseError(f"Duplicate value: {g['name']!r}", [*at, "name"], value=g["name"])
            policy = g.get("policy")
            if not isinstance(policy, Mapping) or len([k for k in ("basic", "gang") if policy.get(k) is not None]) != 1:
                raise CaseError("Invalid value: exactly one of basic or gang must be set", [*at, "policy"])
            _no_unknown(policy, ("basic", "gang"), [*at, "policy"], " (a policy is basic or gang)")
            if policy.get("gang") is not None:
                gang = policy["gang"]
                mc = gang.get("minCount") if isinstance(gang, Mapping) else None
                if isinstance(mc, bool) or not isinstance(mc, int) or mc < 1:
                    raise CaseError("Invalid value: minCount must be an integer of at least 1",
                                    [*at, "policy", "gang", "minCount"], value=mc)
                groups[g["name"]] = mc
            else:
                groups[g["name"]] = None
        out[(ns, name)] = Workload(ns, name, groups)
    return out


def workload_ref(raw: Any, at: Any, version: Version) -> WorkloadRef | None:
    """A pod's ``workloadRef`` (spec.workloadRef)."""
    if raw is None:
        return None
    _needs_gate(version, "a pod's workloadRef", at("workloadRef"))
    if not isinstance(raw, Mapping):
        raise CaseError("workloadRef is an object with name and podGroup", at("workloadRef"))
    _name_error(apivalidation.subdomain_error, raw.get("name"), at("workloadRef", "name"))
    _name_error(apivalidation.subdomain_error, raw.get("podGroup"), at("workloadRef", "podGroup"))
    key = raw.get("podGroupReplicaKey") or ""
    if key:
        _name_error(apivalidation.subdomain_error, key, at("workloadRef", "podGroupReplicaKey"))
    return WorkloadRef(raw["name"], raw["podGroup"], key)


def _meta_name(obj: Mapping[str, Any], path: list, seen: set[tuple[str, str]], kind: str) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    _name_error(apivalidation.subdomain_error, meta.get("name"), [*path, "metadata", "name"])
    key = (meta.get("namespace") or "default", meta["name"])
    if key in seen:
        raise CaseError(f"{kind} {key[0]}/{key[1]} is defined twice", [*path, "metadata", "name"], value=key[1])
    seen.add(key)
    return key


def _no_unknown(raw: Mapping[str, Any], known: tuple[str, ...], at: list, hint: str = "") -> None:
    """The first field of ``raw`` (in name order) that is not one of ``known`` is an error at
    ``at`` + that field ("unknown field 'x'" and ``hint``)."""
    unknown = sorted(k for k in raw if k not in known)
    if unknown:
        raise CaseError(f"unknown field {unknown[0]!r}{hint}", [*at, unknown[0]])


def _gated_fields(spec: Mapping[str, Any], at: list, version: Version, template: bool = False) -> None:
    wap = not template and version.gate("WorkloadAwarePreemption")
    taws = version.gate("TopologyAwareWorkloadScheduling")
    for name, gate in GATED_FIELDS.items():
        if wap and name in ("priority", "disruptionMode", "priorityClassName"):
            continue  # read by the PodGroup (workload-aware preemption; its Priority admission)
        if taws and name == "schedulingConstraints":
            continue  # read by the pod group cycle's placements
        if name == "resourceClaims" and version.minor == 36:
            continue  # DRAWorkloadResourceClaims: read with the gate on, dropped with it off (pod_groups)
        if spec.get(name) not in (None, "", [], {}):
            if gate == "DRAWorkloadResourceClaims":
                raise CaseError(f"{name} needs the feature gate {gate} (alpha in 1.36, off by default), which "
                                "kspread does not model", [*at, name])
            raise CaseError(f"{name} needs the feature gate {gate} (alpha in 1.36, off by default: set "
                            f"featureGates: {{{gate}: true}})", [*at, name])


def resource_claims(raw: Any, at: list) -> tuple[PodGroupClaim, ...]:
    """A PodGroup's (or a Workload template's) spec.resourceClaims (DRAWorkloadResourceClaims),
    checked as the API server validates them: at most 4, each with a unique DNS-label name and
    exactly one of resourceClaimName and resourceClaimTemplateName."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise CaseError("resourceClaims is a list", at)
    if len(raw) > 4:
        raise CaseError(f"Too many: {len(raw)}: must have at most 4 items", at)
    out: list[PodGroupClaim] = []
    for i, c in enumerate(raw):
        cp = [*at, i]
        if not isinstance(c, Mapping):
            raise CaseError("a resource claim is an object with name and resourceClaimName or "
                            "resourceClaimTemplateName", cp)
        _no_unknown(c, ("name", "resourceClaimName", "resourceClaimTemplateName"), cp)
        _name_error(apivalidation.label_name_error, c.get("name"), [*cp, "name"])
        if any(x.name == c["name"] for x in out):
            raise CaseError(f"Duplicate value: {c['name']!r}", [*cp, "name"], value=c["name"])
        given = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if c.get(k) is not None]
        if len(given) != 1:
            raise CaseError("Invalid value: exactly one of resourceClaimName or resourceClaimTemplateName must be set",
                            cp)
        _name_error(apivalidation.subdomain_error, c[given[0]], [*cp, given[0]])
        out.append(PodGroupClaim(c["name"], c.get("resourceClaimName"), c.get("resourceClaimTemplateName")))
    return tuple(out)


def _policy(raw: Any, at: list) -> int | None:
    """PodGroupSchedulingPolicy: the gang's minCount, None for basic."""
    if not isinstance(raw, Mapping):
        raise CaseError("Required value: a schedulingPolicy (basic or gang)", at)
    _no_unknown(raw, ("basic", "gang"), at, " (a policy is basic or gang)")
    if len([k for k in ("basic", "gang") if raw.get(k) is not None]) != 1:
        raise CaseError("Invalid value: exactly one of basic or gang must be set", at)
    if raw.get("gang") is None:
        return None
    gang = raw["gang"]
    mc = gang.get("minCount") if isinstance(gang, Mapping) else None
    if isinstance(mc, bool) or not isinstance(mc, int) or mc < 1:
        raise CaseError("Invalid value: minCount must be an integer of at least 1", [*at, "gang", "minCount"], value=mc)
    return mc


def _constraints(spec: Mapping[str, Any], at: list) -> tuple[bool, str | None]:
    """spec.schedulingConstraints (TopologyAwareWorkloadScheduling): whether it is set (not
    null: DefaultPreemption reads only that) and its topology key (``topology[0].key``,
    None when the list is empty), checked as the API server's declarative validation does
    (at most one topology constraint; its key required, a label key)."""
    raw = spec.get("schedulingConstraints")
    if raw is None:
        return False, None
    cp = [*at, "schedulingConstraints"]
    if not isinstance(raw, Mapping):
        raise CaseError("schedulingConstraints is an object with topology", cp, value=raw)
    _no_unknown(raw, ("topology",), cp, " (schedulingConstraints has topology)")
    topology = raw.get("topology")
    if topology is None:
        return True, None
    tp = [*cp, "topology"]
    if not isinstance(topology, list):
        raise CaseError("topology is a list of {key}", tp, value=topology)
    if len(topology) > 1:
        raise CaseError(f"Too many: {len(topology)}: must have at most 1 item", tp)
    if not topology:
        return True, None
    t = topology[0]
    if not isinstance(t, Mapping):
        raise CaseError("a topology constraint is an object with key", [*tp, 0])
    _no_unknown(t, ("key",), [*tp, 0], " (a topology constraint has key)")
    key = t.get("key")
    if not isinstance(key, str) or not key:
        raise CaseError("Required value", [*tp, 0, "key"])
    err = qualified_name_error(key)
    if err:
        raise CaseError(f"Invalid value: {key!r}: {err}", [*tp, 0, "key"], value=key)
    return True, key


def _workload_1_36(obj: Mapping[str, Any], path: list, seen: set[tuple[str, str]], version: Version) -> None:
    """A v1alpha2 Workload: checked, not kept (the scheduler reads PodGroups only)."""
    _meta_name(obj, path, seen, "Workload")
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise CaseError("Required value", [*path, "spec"])
    ref = spec.get("controllerRef")
    if ref is not None:
        if isinstance(ref, Mapping):
            for k in ref:
                if k not in ("apiGroup", "kind", "name"):
                    raise CaseError(f"unknown field {k!r} in controllerRef (allowed: apiGroup, kind, name)"
                                    + did_you_mean(str(k), ("apiGroup", "kind", "name")),
                                    [*path, "spec", "controllerRef", str(k)])
        for k in ("kind", "name"):
            if not isinstance(ref, Mapping) or not isinstance(ref.get(k), str) or not ref.get(k):
                raise CaseError("Required value", [*path, "spec", "controllerRef", k])
    tp = [*path, "spec", "podGroupTemplates"]
    templates = spec.get("podGroupTemplates")
    if not isinstance(templates, list) or not templates:
        raise CaseError("Required value: a Workload has at least one pod group template", tp)
    if len(templates) > 8:
        raise CaseError(f"Too many: {len(templates)}: must have at most 8 items", tp)
    names: set[str] = set()
    for i, t in enumerate(templates):
        at = [*tp, i]
        if not isinstance(t, Mapping):
            raise CaseError("a pod group template is an object with name and schedulingPolicy", at)
        _name_error(apivalidation.label_name_error, t.get("name"), [*at, "name"])
        if t["name"] in names:
            raise CaseError(f"Duplicate value: {t['name']!r}", [*at, "name"], value=t["name"])
        names.add(t["name"])
        _gated_fields(t, at, version, template=True)
        if version.gate("DRAWorkloadResourceClaims"):
            resource_claims(t.get("resourceClaims"), [*at, "resourceClaims"])  # checked, not read
        _policy(t.get("schedulingPolicy"), [*at, "schedulingPolicy"])
        _constraints(t, at)


def _admit_priority(spec: Mapping[str, Any], sp: list, classes: Mapping[str, PriorityClass]) -> int:
    """The Priority admission of a new PodGroup (admitPodGroup, WorkloadAwarePreemption on):
    a named class must exist (``classes``: the case's and the system ones), and a priority
    given must be its value; no class name: the globalDefault class of the lowest value
    (its name is set), else 0. A ``priority`` given without a class is taken as the admitted
    value, as for pods (the case states the outcome of admission)."""
    name = spec.get("priorityClassName")
    if name is not None and not isinstance(name, str):
        raise CaseError("priorityClassName is a string", [*sp, "priorityClassName"], value=name)
    explicit = spec.get("priority")
    if name:
        pc = classes.get(name)
        if pc is None:
            raise CaseError(f"no PriorityClass with name {name} was found", [*sp, "priorityClassName"], value=name)
        if explicit is not None and explicit != pc.value:
            raise CaseError(f"priority set in the pod group ({explicit}) must match the priority computed "
                            f"({pc.value}) based on the priority class set in the spec", [*sp, "priority"],
                            value=explicit)
        return pc.value
    if explicit is not None:
        value: int = explicit
        return value
    defaults = [c for c in classes.values() if c.global_default]
    return min(defaults, key=lambda c: c.value).value if defaults else 0


def pod_groups(items: list[tuple[Mapping[str, Any], list]], version: Version,
               classes: Mapping[str, PriorityClass] | None = None) -> dict[tuple[str, str], PodGroup]:
    """The PodGroups of ``objects`` (1.36): (namespace, name) -> PodGroup. ``classes``: the
    priority classes a PodGroup's Priority admission reads (with WorkloadAwarePreemption)."""
    out: dict[tuple[str, str], PodGroup] = {}
    seen: set[tuple[str, str]] = set()
    for obj, path in items:
        _api_1_37(obj, path, version, "PodGroup")
        _needs_gate(version, "a PodGroup object", [*path, "kind"], 36)
        if obj.get("apiVersion") != API_VERSION_1_36:
            raise CaseError(f"a PodGroup is served as {API_VERSION_1_36} (1.36); got {obj.get('apiVersion')!r}",
                            [*path, "apiVersion"], value=obj.get("apiVersion"))
        ns, name = _meta_name(obj, path, seen, "PodGroup")
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            raise CaseError("Required value", [*path, "spec"])
        sp = [*path, "spec"]
        template: tuple[str, str] | None = None
        ref = spec.get("podGroupTemplateRef")
        if ref is not None:
            wl = ref.get("workload") if isinstance(ref, Mapping) else None
            if not isinstance(wl, Mapping):
                raise CaseError("Required value: podGroupTemplateRef names a workload", [*sp, "podGroupTemplateRef"])
            wp = [*sp, "podGroupTemplateRef", "workload"]
            _name_error(apivalidation.subdomain_error, wl.get("workloadName"), [*wp, "workloadName"])
            _name_error(apivalidation.label_name_error, wl.get("podGroupTemplateName"), [*wp, "podGroupTemplateName"])
            template = (wl["workloadName"], wl["podGroupTemplateName"])
        _gated_fields(spec, sp, version)
        priority = spec.get("priority")
        if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)
                                     or not -(2**31) <= priority < 2**31):
            raise CaseError("Invalid value: priority is a 32-bit integer", [*sp, "priority"], value=priority)
        mode = spec.get("disruptionMode")
        if mode is not None and mode not in ("Pod", "PodGroup"):
            raise CaseError(f'Unsupported value: {mode!r}: supported values: "Pod", "PodGroup"',
                            [*sp, "disruptionMode"], value=mode)
        if version.gate("WorkloadAwarePreemption"):
            priority = _admit_priority(spec, sp, classes or {})
        constrained, topology_key = _constraints(spec, sp)
        # DRAWorkloadResourceClaims off: the API server drops the field (dropDisabled...Fields)
        claims = resource_claims(spec.get("resourceClaims"), [*sp, "resourceClaims"]) \
            if version.gate("DRAWorkloadResourceClaims") else ()
        uid = (obj.get("metadata") or {}).get("uid")
        out[(ns, name)] = PodGroup(ns, name, _policy(spec.get("schedulingPolicy"), [*sp, "schedulingPolicy"]), template,
                                   priority or 0, mode, constrained, topology_key, claims,
                                   str(uid) if uid else "")
    return out


def scheduling_group(raw: Any, at: Any, version: Version) -> str | None:
    """A pod's ``schedulingGroup`` (spec.schedulingGroup, 1.36): its PodGroup's name."""
    if raw is None:
        return None
    _needs_gate(version, "a pod's schedulingGroup", at("schedulingGroup"), 36)
    if not isinstance(raw, Mapping):
        raise CaseError("schedulingGroup is an object with podGroupName", at("schedulingGroup"))
    unknown = sorted(k for k in raw if k != "podGroupName")
    if unknown:
        raise CaseError(f"unknown field {unknown[0]!r}", at("schedulingGroup", unknown[0]))
    _name_error(apivalidation.subdomain_error, raw.get("podGroupName"), at("schedulingGroup", "podGroupName"))
    name: str = raw["podGroupName"]
    return name
