"""Workloads (scheduling.k8s.io/v1alpha1, GenericWorkload) in ``objects:`` and a pod's
``workloadRef``, read into ``kspread.engine.plugins.gangscheduling``.

A Workload as ``kubectl get -o yaml`` prints it::

    apiVersion: scheduling.k8s.io/v1alpha1
    kind: Workload
    metadata: {name: training, namespace: default}
    spec:
      controllerRef: {apiGroup: batch, kind: Job, name: training}   # optional, not read
      podGroups:
      - name: workers
        policy: {gang: {minCount: 4}}    # or {basic: {}}

and a pod's ``workloadRef: {name: training, podGroup: workers}`` (``podGroupReplicaKey``
optional). kspread checks what it reads: the names, one policy per group, minCount at
least 1, unique group names. The API is served only with GenericWorkload on, and kspread
models it as 1.35 has it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kspread.engine.plugins.gangscheduling import Workload, WorkloadRef
from kspread.engine.versions import Version
from kspread.errors import CaseError, PathT
from kspread.format import apivalidation

API_VERSION = "scheduling.k8s.io/v1alpha1"

# 1.36 moved gangs to PodGroup objects (scheduling.k8s.io/v1alpha2) named by a pod's
# spec.schedulingGroup, scheduled whole in a workload scheduling cycle. kspread does not
# model that cycle, so it refuses both by name rather than schedule the pods one by one.
POD_GROUPS_1_36 = ("1.36 schedules a PodGroup's pods together in a workload scheduling cycle, which kspread does "
                   "not model (it models gangs as 1.35 has them: a Workload's pod groups and pods' workloadRef)")


def refuse_pod_group(path: PathT) -> None:
    """A PodGroup object (1.36+): refused by name."""
    raise CaseError(f"PodGroup (scheduling.k8s.io/v1alpha2) is not modelled by kspread: {POD_GROUPS_1_36}", path,
                    value="PodGroup")


def refuse_scheduling_group(raw: Any, path: PathT) -> None:
    """A pod's spec.schedulingGroup (1.36+): refused by name."""
    if raw is not None:
        raise CaseError(f"a pod's schedulingGroup is not modelled by kspread: {POD_GROUPS_1_36}", path)


def _needs_gate(version: Version, what: str, path: PathT) -> None:
    if version.minor >= 36:
        # 1.36 serves no v1alpha1 Workload and tombstoned spec.workloadRef (k8s.io/api v0.36)
        raise CaseError(f"{what} in {version}: 1.36 replaced 1.35's gang API (v1alpha1 Workloads, pods' "
                        "workloadRef) with v1alpha2 Workloads (podGroupTemplates), PodGroup objects and pods' "
                        f"schedulingGroup; {POD_GROUPS_1_36}", path)
    if not version.gate("GenericWorkload"):
        raise CaseError(f"{what} needs the GenericWorkload feature gate (alpha in 1.35, off by default: set "
                        f"featureGates: {{GenericWorkload: true}}); version {version} does not have it on", path)


def _name_error(check: Any, name: Any, path: list) -> None:
    if not isinstance(name, str) or not name:
        raise CaseError("Required value", path)
    err = check(name)
    if err:
        raise CaseError(f"Invalid value: {name!r}: {err}", path, value=name)


def workloads(items: list[tuple[Mapping[str, Any], list]], version: Version) -> dict[tuple[str, str], Workload]:
    """The Workloads of ``objects``: (namespace, name) -> Workload."""
    out: dict[tuple[str, str], Workload] = {}
    for obj, path in items:
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
            unknown = sorted(k for k in policy if k not in ("basic", "gang"))
            if unknown:
                raise CaseError(f"unknown field {unknown[0]!r} (a policy is basic or gang)", [*at, "policy", unknown[0]])
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
