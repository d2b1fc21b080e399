"""1.36's pod group scheduling cycle with volumes and resource claims (issue 32): each
pod's Reserve in the group's algorithm assumes its volumes (VolumeBinding) and puts its
allocations in flight (DynamicResources), the run's end unreserves them, a schedulable
group's pods reserve them again for their binding cycles; what is not modelled is refused
by name. The golden cases: cases/gangs/pod-groups-136-volumes.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kspread.engine.scheduler import run_case
from kspread.errors import CaseError
from kspread.format.case import build_case

CASES = {d["name"]: d for d in yaml.safe_load_all(
    (Path(__file__).resolve().parent.parent / "cases/gangs/pod-groups-136-volumes.yaml").read_text())}


def _run(name: str, schedule: list | None = None):
    doc = dict(CASES[name])
    if schedule is not None:
        doc["schedule"] = schedule
    doc.pop("expect", None)
    return run_case(build_case(doc, "t"), keep_all=True)


def test_the_group_binds_the_volumes_its_pods_reserved_again():
    sched, results, placements = _run("pod-group-pods-see-the-volumes-the-group-assumed")
    assert placements == {"worker-0": "n2", "worker-1": "n1", "reader": "n2"}
    st = sched.handle.storage
    assert st.pvs["pv-a"].claim_ref == ("default", "data-1") and st.pvs["pv-b"].claim_ref == ("default", "data-0")
    assert st.pvcs["default/data-1"].volume_name == "pv-a" and st.pvcs["default/data-0"].volume_name == "pv-b"
    assert not st.assumptions and not st.assumed_pvs and not st.assumed_pvcs
    # one group cycle for both workers: worker-0's VolumeBinding found pv-a assumed
    by = {r.pod.key: r for r in results}
    assert by["worker-0"].pod_group.cycle == by["worker-1"].pod_group.cycle
    assert by["worker-0"].pod_group.group_status == "Success"


def test_a_group_that_fails_leaves_its_volumes_unbound_and_unassumed():
    doc = CASES["pod-group-that-fails-releases-the-volumes-it-assumed"]
    sched, results, placements = _run(doc["name"], doc["schedule"][:2])
    assert placements == {"worker-0": None, "worker-1": None}
    by = {r.pod.key: r for r in results}
    assert by["worker-0"].pod_group.node == "n1"  # it fit (pv-a assumed) before the group failed
    st = sched.handle.storage
    assert st.pvs["pv-a"].claim_ref is None and st.pvcs["default/data-0"].volume_name == ""
    assert not st.assumptions and not st.assumed_pvs and not st.assumed_pvcs


def test_a_group_that_fails_leaves_no_allocation_in_flight():
    doc = CASES["pod-group-that-fails-releases-the-devices-it-allocated"]
    sched, results, placements = _run(doc["name"], doc["schedule"][:2])
    assert placements == {"worker-0": None, "worker-1": None}
    assert {r.pod.key: r.pod_group.node for r in results} == {"worker-1": None, "worker-0": "n1"}
    assert sched.claims.in_flight == {} and sched.claims.group_pods == frozenset()
    assert sched.claims.get("default", "worker-0-gpu").allocation is None


def test_a_shared_claim_already_allocated_is_reserved_by_both():
    doc = dict(CASES["pod-group-pods-see-the-devices-the-group-allocated"])
    alloc = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                      "device": "gpu-0"}]},
             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}
    doc["objects"] = [*doc["objects"], {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": {"allocation": alloc}}]
    schedule = [{**doc["schedule"][0], "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}]
    sched, _, placements = run_case(build_case({**doc, "schedule": schedule, "expect": {}}, "t"))
    assert placements == {"worker-0": "n1", "worker-1": "n1"}
    assert sorted(sched.claims.get("default", "shared").reserved_for) == ["worker-0", "worker-1"]


def test_a_group_pod_whose_devices_have_binding_conditions_is_refused_by_name():
    doc = dict(CASES["pod-group-pods-see-the-devices-the-group-allocated"])
    objects = [o for o in doc["objects"] if o.get("kind") != "ResourceSlice"]
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "fabric"},
                    "spec": {"driver": "gpu.example.com", "allNodes": True, "pool": {"name": "fabric"},
                             "devices": [{"name": f"fgpu-{i}", "bindingConditions": ["example.com/attached"]}
                                         for i in range(2)]}})
    with pytest.raises(CaseError, match=r"pod worker-1 of pod group 'workers' was allocated devices with binding "
                                        r"conditions \(gpu.example.com/fabric/fgpu-0\), which DynamicResources' "
                                        r"PreBind waits for: kspread does not model it"):
        run_case(build_case({**doc, "objects": objects, "expect": {}}, "t"))
