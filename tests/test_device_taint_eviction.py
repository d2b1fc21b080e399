"""The device taint eviction controller (issue 29b): eviction times per claim and pod,
and the DeviceTaintRule steps' errors."""

from __future__ import annotations

import pytest
import yaml

from kspread.engine.devices import (
    AllocatedDevice,
    Allocation,
    ClaimTracker,
    Device,
    DeviceObjects,
    DeviceTaint,
    DeviceTaintRule,
    DeviceToleration,
    PodClaim,
    ResourceClaim,
    ResourceSlice,
)
from kspread.engine.devicetaints import claim_eviction_time, pod_eviction_times
from kspread.engine.model import Pod
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.workflow.runner import run_loaded

GPU = "gpu.example.com"
FAULT = DeviceTaint("fault", "", "NoExecute", time_added=100)


def _claim(*tolerations: DeviceToleration, device: str = "g0") -> ResourceClaim:
    return ResourceClaim("default", "c", (), allocation=Allocation(
        (AllocatedDevice("r", GPU, "n1", device, tolerations=tolerations),)), reserved_for=("p",))


def _devices(*taints: DeviceTaint, generation: int = 1):
    s = ResourceSlice("s", GPU, "n1", generation, node_name="n1", devices=(Device("g0", taints=taints), Device("g1")))
    return {(GPU, "n1", d.name): (s, d) for d in s.devices}


def _when(claim, devices, rules=()):
    return claim_eviction_time(claim, devices, rules, lambda s: 7)


def ntol(key="fault", seconds=None, effect="NoExecute"):
    return DeviceToleration(key, "Exists", "", effect, seconds)


@pytest.mark.parametrize("tolerations, want", [
    ((), 100),                                   # not tolerated: at the taint's timeAdded
    ((ntol(seconds=30),), 130),
    ((ntol(seconds=30), ntol(seconds=10)), 110),  # the least seconds
    ((ntol(seconds=-5),), 100),                   # negative: 0
    ((ntol(seconds=30), ntol()), None),           # one without seconds: for ever
    ((ntol(effect=""),), 100),                    # no effect: does not count
    ((ntol(key="other"),), 100),
])
def test_a_claims_eviction_time_follows_its_results_tolerations(tolerations, want):
    assert _when(_claim(*tolerations), _devices(FAULT)) == want


def test_only_noexecute_taints_count_and_a_taint_without_time_counts_from_its_slice():
    assert _when(_claim(), _devices(DeviceTaint("x", "", "NoSchedule", time_added=0))) is None
    assert _when(_claim(), _devices(DeviceTaint("x", "", "NoExecute"))) == 7
    assert _when(_claim(device="g1"), _devices(FAULT)) is None


def test_only_the_pools_newest_generation_is_read():
    old = ResourceSlice("old", GPU, "n1", 1, node_name="n1", devices=(Device("g0", taints=(FAULT,)),))
    new = ResourceSlice("new", GPU, "n1", 2, node_name="n1", devices=(Device("g0"),))
    t = ClaimTracker(DeviceObjects(slices=[old, new], claims={("default", "c"): _claim()}))
    pod = Pod("p", node_name="n1", resource_claims=(PodClaim("gpu", "c"),))
    assert pod_eviction_times([pod], t, 35, False, lambda s: 0) == {}
    t = ClaimTracker(DeviceObjects(slices=[old], claims={("default", "c"): _claim()}))
    assert pod_eviction_times([pod], t, 35, False, lambda s: 0) == {"p": 100}


@pytest.mark.parametrize("minor, rules_gate, rule, want", [
    (35, True, DeviceTaintRule("r", FAULT, driver=GPU), {"p": 100}),
    (35, False, DeviceTaintRule("r", FAULT, driver=GPU), {}),         # DRADeviceTaintRules off
    (35, True, DeviceTaintRule("r", FAULT, selector_given=False), {}),  # no deviceSelector: no device
    (34, False, DeviceTaintRule("r", FAULT, selector_given=False), {"p": 100}),  # the tracker's: every device
    (35, True, DeviceTaintRule("r", FAULT, device="g1"), {}),
])
def test_rules_per_version(minor, rules_gate, rule, want):
    s = ResourceSlice("s", GPU, "n1", 1, node_name="n1", devices=(Device("g0"), Device("g1")))
    t = ClaimTracker(DeviceObjects(slices=[s], claims={("default", "c"): _claim()}, taint_rules=[rule]))
    pods = [Pod("p", node_name="n1", resource_claims=(PodClaim("gpu", "c"),)),
            Pod("q", node_name="n1", resource_claims=(PodClaim("gpu", "c"),)),  # not reserved for q
            Pod("pending", resource_claims=(PodClaim("gpu", "c"),))]
    assert pod_eviction_times(pods, t, minor, rules_gate, lambda s: 0) == want


CASE = """
apiVersion: kspread/v1
kind: Case
name: t
version: "1.35"
featureGates: {DRADeviceTaints: true, DRADeviceTaintRules: true}
deviceClasses: [{name: gpu, driver: gpu.example.com}]
nodes:
- name: n1
  devices: [{driver: gpu.example.com, count: 1, name: gpu, taints: TAINTS}]
schedule:
- {name: p, devices: {gpus: {class: gpu, count: 1}}}
- STEP
"""
RULE = ("{addDeviceTaintRule: {apiVersion: resource.k8s.io/v1alpha3, kind: DeviceTaintRule, metadata: {name: r}, "
        "spec: {deviceSelector: {pool: n1}, taint: {key: k, effect: NoExecute}}}}")


def _run(step: str, taints: str = "[]") -> dict:
    doc = yaml.safe_load(CASE.replace("STEP", step).replace("TAINTS", taints))
    return run_loaded(build_case(doc, "t")).actual


def test_a_rule_step_evicts_at_once_and_says_so_in_the_steps_record():
    out = _run(RULE)
    assert out["evicted"] == ["p"]
    assert out["placements"] == {"p": None}
    assert next(r for r in out["timeline"] if r["step"] == "addDeviceTaintRule r")["evicted"] == ["p"]
    assert _run("{wait: 1}")["evicted"] == []


@pytest.mark.parametrize("step, taints, want", [
    ("{deleteDeviceTaintRule: nope}", "[]", (r"schedule\[1\]\.deleteDeviceTaintRule: .*DeviceTaintRule 'nope' does not "
                                            r"exist at that point")),
    (RULE.replace("effect: NoExecute", "effect: NoExecute, timeAdded: '2026-01-01T00:00:00Z'"), "[]",
     r"schedule\[1\]\.addDeviceTaintRule\.spec\.taint\.timeAdded: a step's DeviceTaintRule has no timeAdded"),
    ("{addDeviceTaintRule: {kind: Pod}}", "[]", r"addDeviceTaintRule takes a DeviceTaintRule manifest"),
    ("{wait: 1}", "[{key: k, effect: NoExecute, timeAdded: '2026-01-01T00:00:00Z'}]",
     r"ResourceSlice 'n1-gpu.example.com-n1' device 'gpu-0': a NoExecute taint with timeAdded in a `schedule`"),
])
def test_step_errors_name_the_step(step, taints, want):
    with pytest.raises(CaseError, match=want):
        _run(step, taints)


def test_a_rule_step_at_1_36_is_refused_naming_the_schedulers_crash():
    # v1.36.2's tracker panics when a slice is synced while a rule exists: a rule created by a
    # step is refused as one in `objects` (issue 32)
    doc = yaml.safe_load(CASE.replace("STEP", RULE.replace("v1alpha3", "v1beta2")).replace("TAINTS", "[]")
                         .replace('"1.35"', '"1.36"'))
    with pytest.raises(CaseError, match=(r"schedule\[1\]\.addDeviceTaintRule\.kind: DeviceTaintRule in 1\.36 with "
                                         r"DRADeviceTaintRules on crashes kube-scheduler v1\.36\.2")):
        run_loaded(build_case(doc, "t"))
