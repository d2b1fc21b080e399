"""1.36's alpha gate DRAWorkloadResourceClaims (issue 37): a PodGroup's spec.resourceClaims,
claims made for the PodGroup from its templates, reserved for the PodGroup, and
DynamicResources' PostFilter taking the PodGroup's reservation away. Golden cases:
cases/gangs/pod-group-resource-claims-136.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kspread.engine.scheduler import run_case
from kspread.errors import CaseError
from kspread.format.case import build_case

CASES = {d["name"]: d for d in yaml.safe_load_all(
    (Path(__file__).resolve().parent.parent / "cases/gangs/pod-group-resource-claims-136.yaml").read_text())}


def _run(name: str, **changes):
    doc = {**CASES[name], **changes}
    doc.pop("expect", None)
    return run_case(build_case(doc, "t"), keep_all=True)


def test_the_groups_template_claim_is_made_once_for_the_podgroup():
    case = build_case({**CASES["pod-group-claim-from-a-template-is-reserved-for-the-group"], "expect": {}}, "t")
    claims = case.cluster.devices.claims
    assert ("default", "worker-0-gpu") not in claims and ("default", "worker-1-gpu") not in claims
    made = claims[("default", "workers-gpu")]
    assert made.owner_pod_group == "workers" and made.owner_pod is None
    assert {pc.claim_name for p in case.incoming for pc in p.resource_claims} == {"workers-gpu"}
    assert {pc.pod_group for p in case.incoming for pc in p.resource_claims} == {"workers"}


def test_the_claim_is_reserved_for_the_podgroup_and_the_retry_writes_nothing():
    sched, results, placements = _run("pod-group-claim-from-a-template-is-reserved-for-the-group")
    assert placements == {"worker-0": "n1", "worker-1": "n1"}
    claim = sched.claims.get("default", "workers-gpu")
    assert claim.reserved_for == ("PodGroup:workers",)
    assert [(r.pod.key, r.pod_group.bound) for r in results] == [("worker-1", True), ("worker-0", False),
                                                                 ("worker-0", True)]
    assert results[1].pod_group.message == ('running PreBind plugin "DynamicResources": claim default/workers-gpu got '
                                            "allocated elsewhere in the meantime")


def test_with_the_gate_off_the_podgroups_claims_are_dropped():
    sched, results, placements = _run("pod-group-claims-dropped-with-the-gate-off")
    assert placements == {"worker-0": None, "worker-1": None}
    assert sched.claims.get("default", "workers-gpu") is None
    assert {r.pod.key: r.pod_group.node for r in results} == {"worker-1": "n1", "worker-0": None}


def test_an_entry_named_otherwise_or_a_pod_of_no_group_reserves_for_itself():
    sched, _, placements = _run("pod-group-claim-entry-that-differs-is-the-pods-own")
    assert placements == {"worker-0": "n1", "lone": "n1"}
    assert sched.claims.get("default", "shared").reserved_for == ("PodGroup:workers", "lone")
    assert sched.claims.get("default", "worker-0-own").reserved_for == ("worker-0",)


def test_postfilter_unreserves_the_podgroup_then_deallocates():
    sched, results, placements = _run("pod-group-postfilter-unreserves-then-deallocates-the-group-claim")
    assert placements == {"worker": "n2"}
    assert len(results) == 3 and results[2].bound_node == "n2"
    # UnschedulableAndUnresolvable: the PostFilter loop ends (DefaultPreemption does not run)
    st = results[0].post_filter_status
    assert (st.plugin, st.code.value, st.message) == ("DynamicResources", "UnschedulableAndUnresolvable",
                                                      "ResourceClaim unreserved for PodGroup")
    assert "deallocation of ResourceClaim completed" in results[1].post_filter_reasons
    assert sched.claims.get("default", "shared").reserved_for == ("PodGroup:workers",)


def test_postfilter_leaves_the_reservation_while_a_pod_of_the_group_is_bound():
    doc = CASES["pod-group-postfilter-unreserves-then-deallocates-the-group-claim"]
    pods = [*doc["pods"], {"name": "done", "node": "n1", "requests": {"cpu": "0"},
                           "schedulingGroup": {"podGroupName": "workers"}}]
    sched, results, placements = _run(doc["name"], pods=pods)
    assert placements == {"worker": None}
    assert "still not schedulable" in results[0].post_filter_reasons
    assert sched.claims.get("default", "shared").reserved_for == ("PodGroup:workers",)


def test_a_pod_whose_podgroup_is_missing_fails_dynamicresources_prefilter():
    doc = CASES["pod-group-claim-entry-that-differs-is-the-pods-own"]
    schedule = [{**doc["schedule"][0], "schedulingGroup": {"podGroupName": "gone"}}]
    _, results, _ = _run(doc["name"], schedule=schedule,
                         featureGates={"GenericWorkload": True, "DRAWorkloadResourceClaims": True})
    st = results[0].pre_filter_status
    assert st.plugin == "DynamicResources" and st.message == 'podgroup.scheduling.k8s.io "gone" not found'


def test_a_template_claim_the_pods_podgroup_does_not_own_is_rejected_with_upstreams_words():
    from kspread.engine.devices import ResourceClaim
    from kspread.engine.plugins.dynamicresources import DynamicResourcesFilter

    sched, results, _ = _run("pod-group-claim-from-a-template-is-reserved-for-the-group")
    dra = sched.framework.plugin("DynamicResources")
    assert isinstance(dra, DynamicResourcesFilter)
    pod = results[0].pod
    claim = ResourceClaim("default", "workers-gpu", owner_pod_group="workers")
    assert dra._owner_error(pod, claim) is None
    assert dra._owner_error(pod, ResourceClaim("default", "x", owner_pod_group="other")) == (
        "ResourceClaim default/x was not created for Pod default/worker-1 (neither Pod nor PodGroup workers is the "
        "owner)")


def test_the_gate_needs_generic_workload():
    doc = CASES["pod-group-claim-from-a-template-is-reserved-for-the-group"]
    with pytest.raises(CaseError, match=r"DRAWorkloadResourceClaims is enabled, but depends on features that are "
                                        r"disabled: \[GenericWorkload\]"):
        build_case({**doc, "featureGates": {"DRAWorkloadResourceClaims": True}}, "t")


def _full_claim_case(version: str) -> dict:
    alloc = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}}
    return {"version": version, "nodes": [{"name": "n1", "allocatable": {"cpu": "4", "pods": 300}}],
            "objects": [
                {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
                {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "full"},
                 "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
                 "status": {"allocation": alloc, "reservedFor": [
                     {"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(256)]}}],
            "schedule": [{"name": "x", "requests": {"cpu": "1"},
                          "resourceClaims": [{"name": "c", "resourceClaimName": "full"}]}],
            "expect": {}}


def test_1_35_refuses_a_257th_reservation_at_prefilter():
    _, results, placements = run_case(build_case(_full_claim_case("1.35"), "t"))
    assert placements == {"x": None} and results[0].pre_filter_status.message == "resourceclaim in use"


def test_1_36_prefilter_has_no_reservation_limit_and_the_prebind_write_is_refused_by_name():
    # v1.36.2's resourceclaim.CanBeReserved is always true; the API server refuses the write
    with pytest.raises(CaseError, match=r"pod x's PreBind reserves claim default/full, which has 256 reservedFor "
                                        r"entries: the API server refuses more"):
        run_case(build_case(_full_claim_case("1.36"), "t"))


@pytest.mark.parametrize("gate, reserved", [(True, ("PodGroup:workers",)), (False, ("PodGroup:workers", "w"))])
def test_device_taint_eviction_counts_the_podgroups_reservation(gate, reserved):
    # 1.36's device taint eviction controller: IsReservedForPod with the gate (a claim
    # reserved for the pod's PodGroup is the pod's); without it the claim controller
    # reserves the allocated claim for the bound pod itself (syncPod), which is evicted so
    alloc = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                      "device": "gpu-0"}]}}
    doc = {"version": "1.36", "featureGates": {"GenericWorkload": True, "DRAWorkloadResourceClaims": gate},
           "deviceClasses": [{"name": "gpu", "driver": "gpu.example.com"}],
           "nodes": [{"name": "n1", "devices": [{"driver": "gpu.example.com", "count": 1, "name": "gpu",
                                                 "taints": [{"key": "fault", "effect": "NoExecute"}]}]}],
           "pods": [{"name": "w", "node": "n1", "schedulingGroup": {"podGroupName": "workers"},
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}],
           "objects": [
               {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "workers"},
                "spec": {"schedulingPolicy": {"basic": {}},
                         "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}},
               {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
                "status": {"allocation": alloc, "reservedFor": [
                    {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "workers", "uid": "u"}]}}],
           "schedule": [{"wait": 10}], "expect": {}}
    case = build_case(doc, "t")
    assert case.cluster.devices.claims[("default", "shared")].reserved_for == reserved
    sched, _, _ = run_case(case)
    assert sorted(sched.sequence.evicted_pods()) == ["w"]


def test_a_second_reservation_for_the_podgroup_is_a_duplicate_the_api_server_refuses():
    sched, results, placements = _run("pod-group-claim-allocated-is-reserved-twice-in-one-cycle")
    assert placements == {"worker-0": "n1", "worker-1": "n1"}
    assert [(r.pod.key, r.pod_group.bound) for r in results] == [("worker-1", True), ("worker-0", False),
                                                                 ("worker-0", True)]
    assert results[1].pod_group.message == (
        'running PreBind plugin "DynamicResources": add reservation to claim default/shared: '
        'ResourceClaim.resource.k8s.io "shared" is invalid: status.reservedFor[1]: Duplicate value: '
        '"podgroup/default/workers"')
    assert sched.claims.get("default", "shared").reserved_for == ("PodGroup:workers",)
