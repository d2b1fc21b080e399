"""A pod of a 1.36 pod group with volumes or resource claims whose own PostFilter
(DefaultPreemption) nominates a node (WorkloadAwarePreemption off): the group cycle reserves
it there with what the preemption dry run's Filter found for that node (VolumeBinding's and
DynamicResources' states are shared by the dry run's copies of the cycle state), the group's
later pods see it, and the run's end reverts it (kspread.engine.podgroupcycle)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kspread.engine.scheduler import run_case
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.format.yamlio import load_strict

GOLDEN = Path(__file__).resolve().parent.parent / "cases" / "gangs" / "pod-group-volumes-preemption-136.yaml"
GATES = {"GenericWorkload": True, "GangScheduling": True}


def _golden(name):
    """The golden case run with every cycle kept, and, as each pod's cycle ends its
    algorithm (before its own Reserve), the volumes assumed and the allocations in flight."""
    doc = next(d for d in load_strict(GOLDEN.read_text()) if d["name"] == name)
    seen: list[tuple[dict, dict]] = []

    def observe(sched, r):
        storage = sched.handle.storage
        assumed = {} if storage is None else {
            k: [(c, v) for c, v, _ in a.static] for k, a in storage.assumptions.items()}
        flight = {} if sched.claims is None else {
            f"{ns}/{n}": (pods[0], [d.device for d in claim.allocation.devices])
            for (ns, n), (claim, pods) in sched.claims.in_flight.items()}
        seen.append((assumed, flight))

    sched, results, placements = run_case(build_case(doc, "t"), keep_all=True, observe=observe)
    return sched, results, placements, seen


def _cycles(results):
    return [(r.pod.key, r.pod_group.node, r.pod_group.nominated, r.bound_node,
             [v.key for v in r.preemption.victims] if r.preemption is not None else None) for r in results]


FIRST_CYCLES = [("worker-1", None, "n2", None, ["low-2"]), ("worker-0", None, "n1", None, ["low-1"]),
                ("worker-1", "n2", None, "n2", None), ("worker-0", "n1", None, "n1", None)]


def test_a_preemptors_reserve_assumes_the_volumes_the_dry_run_found_on_its_node():
    sched, results, placements, seen = _golden("pod-group-preemptor-assumes-its-volumes-on-the-nominated-node")
    assert _cycles(results) == FIRST_CYCLES
    w1, w0 = results[0], results[1]
    # worker-1 failed NodeResourcesFit everywhere: its VolumeBinding Filter ran on n2 only in
    # the dry run, on a copy of the cycle state that shares VolumeBinding's state
    assert w1.statuses["n2"].plugin == "NodeResourcesFit"
    st = w1.state.read("VolumeBinding")
    assert sorted(st.by_node) == ["n1", "n2"]  # both nodes were candidates
    assert [(c.name, v.name) for c, v in st.by_node["n2"].static] == [("data-1", "pv-2")]
    # worker-0's cycle saw pv-2 assumed for data-1 by worker-1's Reserve on n2 ...
    assert seen[1][0] == {"worker-1": [("default/data-1", "pv-2")]}
    # ... so its dry run could not use n2 (VolumeBinding), and it preempted low-1 on n1
    assert w0.preemption.dry_run["n2"].plugin == "VolumeBinding"
    assert sorted(w0.preemption.candidates) == ["n1"]
    # the run's end reverted the assumption: the next group cycle starts with nothing assumed
    assert seen[2][0] == {}
    assert placements == {"worker-0": "n1", "worker-1": "n2"}
    pvcs = sched.handle.storage.pvcs
    assert (pvcs["default/data-0"].volume_name, pvcs["default/data-1"].volume_name) == ("pv-1", "pv-2")


def test_a_preemptors_reserve_puts_the_devices_the_dry_run_found_on_its_node_in_flight():
    sched, results, placements, seen = _golden("pod-group-preemptor-puts-its-devices-in-flight-on-the-nominated-node")
    assert _cycles(results) == FIRST_CYCLES
    w1, w0 = results[0], results[1]
    assert w1.statuses["n2"].plugin == "NodeResourcesFit"
    # the dry run's Filter found a GPU on both candidates
    allocations = w1.state.read("DynamicResources").node_allocations
    assert sorted(allocations) == ["n1", "n2"]
    assert seen[1][1] == {"default/worker-1-gpu": ("worker-1", ["gpu-0"])}
    assert w0.preemption.dry_run["n2"].plugin == "DynamicResources"
    assert sorted(w0.preemption.candidates) == ["n1"]
    assert seen[2][1] == {}
    assert placements == {"worker-0": "n1", "worker-1": "n2"}
    claims = {c.name: [d.pool for d in c.allocation.devices] for c in sched.claims if c.allocation is not None}
    assert claims == {"worker-0-gpu": ["n1"], "worker-1-gpu": ["n2"]}


def test_a_preemptor_with_a_volume_that_is_no_claim_is_reserved_with_nothing_to_assume():
    # VolumeBinding's PreFilter skips a pod without claims: Reserve finds no entry (allBound)
    doc = {"version": "1.36", "featureGates": GATES,
           "nodes": [{"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}],
           "pods": [{"name": "low", "node": "n1", "requests": {"cpu": "3"}}],
           "objects": [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "workers"},
                        "spec": {"schedulingPolicy": {"basic": {}}}}],
           "schedule": [{"name": "g", "priority": 1000, "requests": {"cpu": "3"},
                         "schedulingGroup": {"podGroupName": "workers"},
                         "volumes": [{"name": "v", "gcePersistentDisk": {"pdName": "d"}}]}]}
    _, results, placements = run_case(build_case(doc, "t"), keep_all=True)
    assert [(r.pod.key, r.pod_group.nominated, r.bound_node) for r in results] == \
        [("g", "n1", None), ("g", None, "n1")]
    assert [v.key for v in results[0].preemption.victims] == ["low"]
    assert placements == {"g": "n1"}


def test_a_preemptor_rejected_after_volumebinding_assumes_what_its_filter_found():
    _, results, placements, seen = _golden("pod-group-preemptor-rejected-after-volumebinding-assumes-its-volumes")
    assert _cycles(results) == [("worker-1", None, "n1", None, ["low-1"]), ("worker-0", None, "n2", None, ["low-2"]),
                                ("worker-1", "n1", None, "n1", None), ("worker-0", "n2", None, "n2", None)]
    w1, w0 = results[0], results[1]
    # on n1 VolumeBinding's Filter passed (pv-1) before InterPodAffinity rejected worker-1
    assert w1.statuses["n1"].plugin == "InterPodAffinity"
    st = w1.state.read("VolumeBinding")
    assert [(c.name, v.name) for c, v in st.by_node["n1"].static] == [("data-1", "pv-1")]
    assert seen[1][0] == {"worker-1": [("default/data-1", "pv-1")]}
    # worker-0 had room on n1, but not pv-1
    assert w0.statuses["n1"].plugin == "VolumeBinding"
    assert sorted(w0.preemption.candidates) == ["n2"]
    assert seen[2][0] == {}
    assert placements == {"worker-0": "n2", "worker-1": "n1"}


def test_a_claim_deallocated_by_postfilter_while_later_group_pods_read_claims_is_refused():
    # a's claim alloc0 is allocated on n1, where a may not go: DynamicResources' PostFilter
    # deallocates it (an API write) and b, later in the same group cycle, reads claims
    gpu = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
    slices = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpus"},
               "spec": {"driver": "gpu.example.com", "nodeName": n, "pool": {"name": n, "resourceSliceCount": 1},
                        "devices": [{"name": "gpu-0"}]}} for n in ("n1", "n2")]
    alloc0 = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "alloc0", "namespace": "default"},
              "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}},
              "status": {"allocation": {
                  "devices": {"results": [{"request": "r", "driver": "gpu.example.com", "pool": "n1",
                                           "device": "gpu-0"}]},
                  "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                      {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}}
    tmpl = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "gpu-tmpl"},
            "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}}}
    pg = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "workers"},
          "spec": {"schedulingPolicy": {"basic": {}}}}
    sg = {"podGroupName": "workers"}
    doc = {"version": "1.36", "featureGates": GATES,
           "nodes": [{"name": n, "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}} for n in ("n1", "n2")],
           "objects": [gpu, *slices, alloc0, tmpl, pg],
           "schedule": [{"name": "a", "priority": 10, "schedulingGroup": sg, "nodeSelector": {"kubernetes.io/hostname": "n2"},
                         "resourceClaims": [{"name": "c", "resourceClaimName": "alloc0"}]},
                        {"name": "b", "schedulingGroup": sg,
                         "resourceClaims": [{"name": "c", "resourceClaimTemplateName": "gpu-tmpl"}]}]}
    with pytest.raises(CaseError, match=r"pod a of pod group 'workers' has DynamicResources' PostFilter deallocate "
                                        r"default/alloc0 while pod b, later in the group's cycle, reads claims"):
        run_case(build_case(doc, "t"), keep_all=True)
    # b without claims reads none: the cycle runs; the next one (the write delivered) places a on n2
    del doc["schedule"][1]["resourceClaims"]
    _, _, placements = run_case(build_case(doc, "t"), keep_all=True)
    assert placements == {"a": "n2", "b": "n1"}
