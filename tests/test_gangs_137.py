"""1.37 (upstream main) workload-aware scheduling: what kspread knows of it and refuses by name.

Upstream main merged GangScheduling and WorkloadAwarePreemption into GenericWorkload
(kubernetes/kubernetes#139520), serves Workloads and PodGroups as scheduling.k8s.io/v1beta1 and
v1alpha3 (CompositePodGroups v1alpha3 only) and schedules a pod group as one queued entity with
its own algorithm; kspread models none of that (docs: Gangs, "1.37: not modelled")."""

from __future__ import annotations

import pytest
import yaml

from kspread.engine.versions import FEATURE_GATES, GANGS_1_37, UNMODELLED_GATES, make_version
from kspread.errors import CaseError
from kspread.format.case import build_case
from tests.test_importer import _gang_dump, _gang_pod, _import

NODES = [{"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}]


@pytest.mark.parametrize("gate", ["GangScheduling", "WorkloadAwarePreemption"])
def test_gates_merged_into_generic_workload_are_unknown_at_1_37_and_say_so(gate):
    with pytest.raises(CaseError) as e:
        make_version("1.37", {gate: True})
    assert str(e.value) == (f"featureGates.{gate}: version 1.37 does not know feature gate {gate!r}: upstream merged "
                            "it into GenericWorkload in 1.37 (kubernetes/kubernetes#139520)")
    # and what they enabled follows GenericWorkload there (off by default: beta, off)
    assert make_version("1.37", {}).gate(gate) is False


def test_gang_scheduling_keeps_its_own_value_before_1_37():
    v = make_version("1.36", {"GenericWorkload": True})
    assert v.gate("GenericWorkload") and not v.gate("GangScheduling")
    assert make_version("1.35", {"GenericWorkload": True, "GangScheduling": True}).gate("GangScheduling")


def test_1_37_gate_stages():
    assert [(s.since, s.default, s.stage) for s in FEATURE_GATES["GenericWorkload"].stages] == [
        (35, False, "ALPHA"), (37, False, "BETA")]
    assert FEATURE_GATES["GangScheduling"].removed == 37
    assert FEATURE_GATES["WorkloadAwarePreemption"].removed == 37
    assert [(s.since, s.default, s.stage) for s in FEATURE_GATES["DRAWorkloadResourceClaims"].stages] == [
        (36, False, "ALPHA"), (37, False, "BETA")]
    for name in ("CompositePodGroup", "PodGroupPreemptionPolicy"):
        g, why = UNMODELLED_GATES[name]
        assert [(s.since, s.default, s.stage) for s in g.stages] == [(37, False, "ALPHA")]
        assert "which kspread refuses at 1.37" in why


def test_generic_workload_on_at_1_37_names_what_is_not_modelled():
    with pytest.raises(CaseError) as e:
        make_version("1.37", {"GenericWorkload": True})
    assert str(e.value) == f"featureGates.GenericWorkload: feature gate GenericWorkload in 1.37: {GANGS_1_37}"
    for part in ("scheduling.k8s.io/v1beta1 and v1alpha3", "queued and popped as one entity",
                 "PodGroupPostFilter", "validatePodGroup", "PodGroupInitiallyScheduled"):
        assert part in GANGS_1_37


@pytest.mark.parametrize("gate", ["CompositePodGroup", "PodGroupPreemptionPolicy"])
def test_1_37_workload_gates_are_refused_by_name(gate):
    with pytest.raises(CaseError, match=f"feature gate {gate} is known to 1.37 but kspread does not model it: .*"
                                        "it acts only on pod groups, which kspread refuses at 1.37"):
        make_version("1.37", {gate: True})
    with pytest.raises(CaseError, match=f"version 1.36 does not know feature gate '{gate}'"):
        make_version("1.36", {gate: True})


def _obj(api, kind, spec=None):
    return {"apiVersion": f"scheduling.k8s.io/{api}", "kind": kind, "metadata": {"name": "g"},
            "spec": spec if spec is not None else {"schedulingPolicy": {"gang": {"minCount": 2}}}}


@pytest.mark.parametrize("api, kind, where", [
    ("v1beta1", "PodGroup", "apiVersion"),
    ("v1alpha3", "PodGroup", "apiVersion"),
    ("v1beta1", "Workload", "apiVersion"),
    ("v1alpha3", "Workload", "apiVersion"),
    ("v1alpha3", "CompositePodGroup", "kind"),
])
@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_1_37_workload_objects_are_refused_by_name_at_any_version(api, kind, where, version):
    # 1.37's own fields (workloadRef, disruptionMode {single: {}}, preemptionPolicy,
    # parentCompositePodGroupName) reach the refusal, not a schema error on a field
    spec = {"workloadRef": {"workloadName": "w", "templateName": "t"}, "schedulingPolicy": {"basic": {}},
            "disruptionMode": {"all": {}}, "preemptionPolicy": "Never", "parentCompositePodGroupName": "c"}
    doc = {"version": version, "nodes": NODES, "objects": [_obj(api, kind, spec)], "pod": {"name": "p"}}
    with pytest.raises(CaseError) as e:
        build_case(doc, "t")
    assert tuple(e.value.path) == ("objects", 0, where)
    if version == "1.37":
        assert str(e.value).endswith(GANGS_1_37)
    else:
        assert "are 1.37's (upstream main); kspread models 1.35's gangs" in str(e.value)


@pytest.mark.parametrize("api, kind", [("v1alpha2", "PodGroup"), ("v1alpha2", "Workload"), ("v1alpha1", "Workload")])
def test_earlier_workload_apis_are_not_served_at_1_37(api, kind):
    doc = {"version": "1.37", "nodes": NODES, "objects": [_obj(api, kind, {})], "pod": {"name": "p"}}
    with pytest.raises(CaseError) as e:
        build_case(doc, "t")
    assert tuple(e.value.path) == ("objects", 0, "apiVersion")
    assert (f"a {kind} object (scheduling.k8s.io/{api}) in 1.37: 1.37 serves Workloads and PodGroups as "
            "scheduling.k8s.io/v1beta1 and scheduling.k8s.io/v1alpha3 only") in str(e.value)


def test_a_pods_scheduling_group_at_1_37_is_refused_with_what_1_37_does():
    doc = {"version": "1.37", "nodes": NODES, "schedule": [{"name": "p", "schedulingGroup": {"podGroupName": "g"}}]}
    with pytest.raises(CaseError) as e:
        build_case(doc, "t")
    assert tuple(e.value.path) == ("schedule", 0, "schedulingGroup")
    assert str(e.value).endswith(f"a pod's schedulingGroup in 1.37: {GANGS_1_37}")


def test_a_1_37_dump_leaves_its_workload_api_out(tmp_path):
    """A 1.37 dump: v1beta1 PodGroups counted under Left out, CompositePodGroups skipped with
    the reason, bound pods kept without their schedulingGroup, no gates turned on."""
    pg = _obj("v1beta1", "PodGroup")
    cpg = _obj("v1alpha3", "CompositePodGroup", {"schedulingPolicy": {"basic": {}}})
    dump = _gang_dump(pg, cpg, _gang_pod("a-1", node="n1", schedulingGroup={"podGroupName": "g"}))
    out, warnings = _import(tmp_path, dump, version="1.37")
    assert "featureGates" not in out
    assert [sorted(p) for p in yaml.safe_load(out)["pods"]] == [["containers", "name", "node"]]
    flat = out.replace("\n# ", " ")
    assert "PodGroup(s) not of 1.36's scheduling.k8s.io/v1alpha2" in flat
    assert any(w.startswith("skipped 1 CompositePodGroup object(s): 1.37's (scheduling.k8s.io/v1alpha3, gate "
                            "CompositePodGroup), which kspread does not model") for w in warnings), warnings
