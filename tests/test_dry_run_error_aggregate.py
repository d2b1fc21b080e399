"""DefaultPreemption's dry run when DynamicResources' Filter errs on several nodes alike:
upstream aggregates the errors (utilerrors.NewAggregate), which says each message once, and
PostFilter's Error carries that one message (seen with the v1.36.2 single-cycle oracle,
difftest --devices --taint-rules, seed 2036, case 73)."""

from __future__ import annotations

from kspread.engine.framework.status import Code
from kspread.engine.scheduler import run_case
from kspread.format.case import build_case

NUMA = "example.com/numa"


def _doc(version: str) -> dict:
    def node(name: str) -> dict:
        return {"name": name, "allocatable": {"cpu": "1", "memory": "4Gi", "pods": 110}}

    gpu_slices = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpu"},
                   "spec": {"driver": "gpu.example.com", "nodeName": n, "pool": {"name": n},
                            "devices": [{"name": "gpu-0", "attributes": {NUMA: {"int": 0}}}]}} for n in ("n1", "n2")]
    return {
        "apiVersion": "kspread/v1", "kind": "Case", "version": version,
        "profile": {"filter": ["NodeResourcesFit", "DynamicResources"], "postFilter": ["DefaultPreemption"]},
        "nodes": [node("n1"), node("n2")],
        "objects": [
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nic"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "nic.example.com"'}}]}},
            *gpu_slices,
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "net"},
             "spec": {"driver": "nic.example.com", "allNodes": True, "pool": {"name": "net"},
                      "devices": [{"name": "nic-0", "attributes": {NUMA: {"int": 1}}}]}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": {"devices": {
                 "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}},
                              {"name": "nics", "exactly": {"deviceClassName": "nic", "allocationMode": "All"}}],
                 "constraints": [{"matchAttribute": NUMA}]}}},
        ],
        "pods": [{"name": f"v{n}", "node": f"n{n}", "priority": 0, "requests": {"cpu": "1"}} for n in (1, 2)],
        "pod": {"name": "p", "priority": 100, "requests": {"cpu": "1"},
                "resourceClaims": [{"name": "dev", "resourceClaimName": "c"}]},
    }


def test_dry_run_errors_alike_are_said_once():
    msg = ("claim default/c, request nics: cannot add device nic.example.com/net/nic-0 because a claim "
           "constraint would not be satisfied")
    for version in ("1.36", "1.35"):
        _, results, _ = run_case(build_case(_doc(version), "t"))
        r = results[0]
        assert r.preemption is not None
        assert sorted(r.preemption.dry_run) == ["n1", "n2"]
        assert all(st.code == Code.ERROR and st.reasons == (msg,) for st in r.preemption.dry_run.values())
        pf = r.post_filter_status
        assert pf is not None and pf.code == Code.ERROR
        assert pf.reasons == (msg,), version
