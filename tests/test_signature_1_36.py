"""NodeResourcesFit's and BalancedAllocation's SignPod with DRAExtendedResource on: 1.35 signs
no pod; 1.36 (the gate on by default) signs every pod but one that requests a resource a
DeviceClass backs (shouldDelegateResourceToDRA without a node)."""

from __future__ import annotations

from typing import Any

import pytest

from kspread.engine.scheduler import Scheduler
from kspread.format.case import build_case

GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
             "spec": {"extendedResourceName": "example.com/gpu"}}


def _sched(version: str, gates: dict[str, bool] | None = None) -> Scheduler:
    doc: dict[str, Any] = {
        "apiVersion": "kspread/v1", "kind": "Case", "version": version,
        "nodes": [{"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110, "example.com/gpu": 2}}],
        "objects": [GPU_CLASS],
        "schedule": [{"name": "plain", "requests": {"cpu": "1"}},
                     {"name": "gpu", "requests": {"cpu": "1", "example.com/gpu": 1}},
                     {"name": "other", "requests": {"example.com/fpga": 1}}]}
    if gates:
        doc["featureGates"] = gates
    return Scheduler(build_case(doc, "t"))


@pytest.mark.parametrize("plugin", ["NodeResourcesFit", "NodeResourcesBalancedAllocation"])
def test_1_36_signs_pods_but_those_asking_for_a_backed_resource(plugin):
    sched = _sched("1.36")
    pl = sched.framework.plugin(plugin)
    assert pl is not None
    plain, gpu, other = (sched.current(p) for p in sched.case.incoming)
    assert pl.signs_no_pod() is False
    assert pl.sign_pod(plain) == (("Resources", (("cpu", 1000),)),)
    assert pl.sign_pod(gpu) is None
    # a scalar resource no DeviceClass backs is signed
    assert pl.sign_pod(other) == (("Resources", (("example.com/fpga", 1),)),)


def test_1_36_gate_off_signs_every_pod():
    sched = _sched("1.36", {"DRAExtendedResource": False})
    pl = sched.framework.plugin("NodeResourcesFit")
    assert pl is not None
    gpu = sched.current(sched.case.incoming[1])
    assert pl.sign_pod(gpu) == (("Resources", (("cpu", 1000), ("example.com/gpu", 1))),)


def test_1_35_with_the_gate_signs_no_pod():
    sched = _sched("1.35", {"DRAExtendedResource": True})
    pl = sched.framework.plugin("NodeResourcesFit")
    assert pl is not None
    assert pl.signs_no_pod() is True
    assert pl.sign_pod(sched.current(sched.case.incoming[0])) is None
    assert sched.batching is False
