"""The allocator's gated features (issue 29): device taints and tolerations,
partitionable devices, consumable capacity, each per version and gate."""

from __future__ import annotations

from fractions import Fraction

import pytest
import yaml

from kspread.engine.allocator import Allocator, Features
from kspread.engine.devices import (
    ALL,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceTaint,
    DeviceToleration,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)
from kspread.engine.model import Node
from kspread.engine.plugins.dynamicresources import allocator_features
from kspread.engine.versions import make_version
from kspread.errors import CaseError
from kspread.format.case import build_case

GPU = "gpu.example.com"
CLS = {"gpu": DeviceClass("gpu", (f'device.driver == "{GPU}"',))}
N1 = Node("n1", {"kubernetes.io/hostname": "n1"}, {})


def _slice(*devices: Device, **kw) -> ResourceSlice:
    return ResourceSlice("n1-s", GPU, "n1", 1, node_name="n1", devices=devices, **kw)


def _claim(*requests: ExactRequest) -> ResourceClaim:
    return ResourceClaim("default", "c", tuple(DeviceRequest(r.name, r) for r in requests))


def _ids(allocs) -> list[list[str]] | None:
    return None if allocs is None else [[str(d) for d in a.devices] for a in allocs]


# ---- device taints -------------------------------------------------------------------------

BROKEN = DeviceTaint("example.com/broken", "ecc", "NoSchedule")


def test_an_untolerated_taint_keeps_a_request_off_the_device_only_with_the_feature():
    s = _slice(Device("g0", taints=(BROKEN,)), Device("g1"))
    c = _claim(ExactRequest("r", "gpu"))
    assert _ids(Allocator(Features(device_taints=True), set(), CLS, [s]).allocate(N1, [c])) == [[f"{GPU}/n1/g1"]]
    assert _ids(Allocator(Features(), set(), CLS, [s]).allocate(N1, [c])) == [[f"{GPU}/n1/g0"]]


@pytest.mark.parametrize("tol,tolerated", [
    (DeviceToleration("example.com/broken", "Exists"), True),
    (DeviceToleration("example.com/broken", "Equal", "ecc"), True),
    (DeviceToleration("example.com/broken", "Equal", "other"), False),
    (DeviceToleration("example.com/broken", "", "ecc"), True),  # empty operator: Equal
    (DeviceToleration("", "Exists"), True),  # every key
    (DeviceToleration("example.com/broken", "Exists", effect="NoExecute"), False),
    (DeviceToleration("example.com/broken", "Exists", effect="NoSchedule"), True),
    (DeviceToleration("other", "Exists"), False),
])
def test_toleration_matching(tol, tolerated):
    assert tol.tolerates(BROKEN) is tolerated
    s = _slice(Device("g0", taints=(BROKEN,)))
    out = Allocator(Features(device_taints=True), set(), CLS, [s]).allocate(
        N1, [_claim(ExactRequest("r", "gpu", tolerations=(tol,)))])
    assert _ids(out) == ([[f"{GPU}/n1/g0"]] if tolerated else None)


def test_which_effects_count_per_version():
    """1.33-1.34 (allTaintsTolerated): every taint; from 1.35 only NoSchedule and NoExecute."""
    s = _slice(Device("g0", taints=(DeviceTaint("note", "", "None"),)))
    c = _claim(ExactRequest("r", "gpu"))
    assert _ids(Allocator(Features(device_taints=True), set(), CLS, [s]).allocate(N1, [c])) == [[f"{GPU}/n1/g0"]]
    assert Allocator(Features(device_taints=True, every_taint_effect=True), set(), CLS, [s]).allocate(N1, [c]) is None
    on = {"DRADeviceTaints": True}
    assert allocator_features(make_version("1.34", on)).every_taint_effect is True
    assert allocator_features(make_version("1.35", on)).every_taint_effect is False
    assert allocator_features(make_version("1.35", None)).device_taints is False
    assert allocator_features(make_version("1.36", None)).device_taints is True


def test_all_mode_fails_when_a_matching_device_is_tainted():
    s = _slice(Device("g0"), Device("g1", taints=(BROKEN,)))
    c = _claim(ExactRequest("r", "gpu", mode=ALL, count=0))
    assert Allocator(Features(device_taints=True), set(), CLS, [s]).allocate(N1, [c]) is None


SLICE_CASE = """
apiVersion: kspread/v1
kind: Case
version: "{version}"
featureGates: {gates}
nodes: [n1]
objects:
- apiVersion: resource.k8s.io/{api}
  kind: ResourceSlice
  metadata: {{name: s}}
  spec:
    driver: gpu.example.com
    nodeName: n1
    pool: {{name: n1}}
    devices: [{device}]
pod: {{name: p}}
"""


def _build(version: str, api: str, device: str, gates: str = "{}"):
    return build_case(yaml.safe_load(SLICE_CASE.format(version=version, api=api, device=device, gates=gates)), "t")


def test_taints_are_read_per_version_and_dropped_with_the_gate_off():
    on = "{DRADeviceTaints: true}"
    case = _build("1.35", "v1", "{name: g0, taints: [{key: k, effect: NoExecute}]}", on)
    assert case.cluster.devices.slices[0].devices[0].taints == (DeviceTaint("k", "", "NoExecute"),)
    case = _build("1.35", "v1", "{name: g0, taints: [{key: k, effect: NoExecute}]}")
    assert case.cluster.devices.slices[0].devices[0].taints == ()
    case = _build("1.33", "v1beta1", "{name: g0, basic: {taints: [{key: k, value: v, effect: NoSchedule}]}}",
                  "{DRADeviceTaints: true, DynamicResourceAllocation: true}")
    assert case.cluster.devices.slices[0].devices[0].taints == (DeviceTaint("k", "v", "NoSchedule"),)
    with pytest.raises(CaseError, match=r"1\.32 has no device taints \(DRADeviceTaints, from 1\.33\)"):
        _build("1.32", "v1beta1", "{name: g0, basic: {taints: [{key: k, effect: NoSchedule}]}}",
               "{DynamicResourceAllocation: true}")
    with pytest.raises(CaseError, match=r"effect is one of NoSchedule, NoExecute in 1\.34"):
        _build("1.34", "v1", "{name: g0, taints: [{key: k, effect: None}]}", on)


# ---- partitionable devices -----------------------------------------------------------------

G = 2**30


def _consumes(cs: str, **counters: int) -> tuple:
    return ((cs, {k: Fraction(v) for k, v in counters.items()}),)


def _counters_slice(name: str = "n1-counters", **sets: dict) -> ResourceSlice:
    return ResourceSlice(name, GPU, "n1", 1, 2, node_name="n1",
                         shared_counters=tuple((k, {c: Fraction(v) for c, v in cs.items()}) for k, cs in sets.items()))


WHOLE = Device("whole", consumes_counters=_consumes("mem", memory=40 * G))
HALF0 = Device("half-0", consumes_counters=_consumes("mem", memory=20 * G))
HALF1 = Device("half-1", consumes_counters=_consumes("mem", memory=20 * G))
PART = Features(partitionable_devices=True)


def test_counters_limit_devices_of_a_pool_and_the_search_backtracks():
    slices = [_counters_slice(mem={"memory": 40 * G}), _slice(WHOLE, HALF0, HALF1, slice_count=2)]
    two = _claim(ExactRequest("r", "gpu", count=2))
    assert _ids(Allocator(PART, set(), CLS, slices).allocate(N1, [two])) == [[f"{GPU}/n1/half-0", f"{GPU}/n1/half-1"]]
    one = _claim(ExactRequest("r", "gpu"))
    busy = {(GPU, "n1", "half-0")}
    assert _ids(Allocator(PART, busy, CLS, slices).allocate(N1, [one])) == [[f"{GPU}/n1/half-1"]]
    # without the feature the counter slice is not part of any pool and a device that
    # consumes counters is never taken
    assert Allocator(Features(), set(), CLS, slices).allocate(N1, [one]) is None


def test_a_counter_set_named_twice_or_missing_makes_the_pool_invalid():
    from kspread.engine.allocator import FailedOnNode

    slices = [_counters_slice(mem={"memory": 40 * G}), _slice(Device("x", consumes_counters=_consumes("nope", a=1)),
                                                              slice_count=2)]
    with pytest.raises(FailedOnNode, match="invalid resource pools were encountered"):
        Allocator(PART, set(), CLS, slices).allocate(N1, [_claim(ExactRequest("r", "gpu"))])


def test_counters_a_failed_taint_check_took_stay_taken_from_1_34():
    """Upstream checks (and counts) a device's counters before its taints and gives them
    back only in the undo of a device it took: a tainted device's counters stay consumed
    for the rest of the search on that node."""
    tainted = Device("t", taints=(BROKEN,), consumes_counters=_consumes("mem", memory=40 * G))
    clean = Device("c", consumes_counters=_consumes("mem", memory=40 * G))
    slices = [_counters_slice(mem={"memory": 40 * G}), _slice(tainted, clean, slice_count=2)]
    one = _claim(ExactRequest("r", "gpu"))
    f = Features(partitionable_devices=True, device_taints=True)
    assert Allocator(f, set(), CLS, slices).allocate(N1, [one]) is None
    assert _ids(Allocator(PART, set(), CLS, slices).allocate(N1, [one])) == [[f"{GPU}/n1/t"]]
    # 1.33 counts only devices allocated or being allocated: the clean device is taken
    same = _slice(tainted, clean, shared_counters=(("mem", {"memory": Fraction(40 * G)}),))
    f133 = Features(partitionable_devices=True, device_taints=True, counters_version=33)
    assert _ids(Allocator(f133, set(), CLS, [same]).allocate(N1, [one])) == [[f"{GPU}/n1/c"]]


def test_per_slice_counters_1_33_checks_only_what_the_device_consumes_1_34_every_counter():
    over = Device("over", consumes_counters=_consumes("a", x=2))
    dev = Device("d", consumes_counters=_consumes("b", y=1))
    s = _slice(over, dev, shared_counters=(("a", {"x": Fraction(1)}), ("b", {"y": Fraction(1)})))
    one = _claim(ExactRequest("r", "gpu"))
    busy = {(GPU, "n1", "over")}
    f33 = Features(partitionable_devices=True, counters_version=33)
    f34 = Features(partitionable_devices=True, counters_version=34)
    assert _ids(Allocator(f33, busy, CLS, [s]).allocate(N1, [one])) == [[f"{GPU}/n1/d"]]
    assert Allocator(f34, busy, CLS, [s]).allocate(N1, [one]) is None


def test_per_device_node_selection_and_the_allocations_node_selector():
    a = Device("a", node_name="n1", consumes_counters=_consumes("rack", slots=1))
    b = Device("b", all_nodes=True, consumes_counters=_consumes("rack", slots=1))
    counters = ResourceSlice("c", GPU, "rack", 1, 2, shared_counters=(("rack", {"slots": Fraction(2)}),))
    devs = ResourceSlice("d", GPU, "rack", 1, 2, per_device_node_selection=True, devices=(a, b))
    n2 = Node("n2", {}, {}, index=1)
    out = Allocator(PART, set(), CLS, [counters, devs]).allocate(n2, [_claim(ExactRequest("r", "gpu"))])
    assert _ids(out) == [[f"{GPU}/rack/b"]] and out[0].node_selector is None
    out = Allocator(PART, set(), CLS, [counters, devs]).allocate(N1, [_claim(ExactRequest("r", "gpu"))])
    assert _ids(out) == [[f"{GPU}/rack/a"]] and out[0].node_selector[0].match_fields[0].values == ("n1",)


def test_all_mode_over_counter_devices_is_refused_from_1_35():
    slices = [_counters_slice(mem={"memory": 40 * G}), _slice(HALF0, slice_count=2)]
    with pytest.raises(CaseError, match="allocationMode All over a device that consumes counters"):
        Allocator(PART, set(), CLS, slices).allocate(N1, [_claim(ExactRequest("r", "gpu", mode=ALL, count=0))])


def test_partitionable_fields_per_version_and_gate():
    dev = "{name: g0, consumesCounters: [{counterSet: s, counters: {c: {value: '1'}}}]}"
    with pytest.raises(CaseError, match=r"needs the DRAPartitionableDevices feature gate, off by default in 1\.35"):
        _build("1.35", "v1", dev)
    with pytest.raises(CaseError, match=r"1\.32 has no partitionable devices"):
        _build("1.32", "v1beta1", "{name: g0, basic: {consumesCounters: []}}", "{DynamicResourceAllocation: true}")
    with pytest.raises(CaseError, match="counter set 's' is not among this slice's sharedCounters"):
        _build("1.34", "v1", dev, "{DRAPartitionableDevices: true}")
    case = _build("1.36", "v1", dev)
    assert case.cluster.devices.slices[0].devices[0].consumes_counters == (("s", {"c": Fraction(1)}),)


# ---- consumable capacity -------------------------------------------------------------------


def test_request_policies_round_up_and_reject():
    from kspread.engine.allocator import _consumed, _violates
    from kspread.engine.devices import RequestPolicy

    q = Fraction
    rng = RequestPolicy(default=q(1), range_min=q(1), range_max=q(8), range_step=q(2))
    assert [_consumed({"x": q(v)}, "x", q(10), rng) for v in (0, 1, 2, 4, 7)] == [1, 1, 3, 5, 7]
    assert _consumed(None, "x", q(10), rng) == 1 and _consumed({}, "x", q(10), None) == 10
    assert _violates(q(9), rng) and not _violates(q(7), rng)
    vals = RequestPolicy(valid_values=(q(2), q(4)))
    assert [_consumed({"x": q(v)}, "x", q(10), vals) for v in (1, 3, 5)] == [2, 4, 5]
    assert _violates(q(5), vals) and not _violates(q(4), vals)


def test_shared_device_capacity_counts_allocated_shares_and_skips_counters_once_shared():
    from kspread.engine.devices import RequestPolicy

    nic = Device("nic", capacity={"bw": Fraction(10)}, allow_multiple_allocations=True,
                 capacity_policies={"bw": RequestPolicy()})
    s = _slice(nic)
    c = _claim(ExactRequest("r", "gpu", capacity_requests={"bw": Fraction(4)}))
    f = Features(consumable_capacity=True)
    out = Allocator(f, set(), CLS, [s], aggregated_capacity={(GPU, "n1", "nic"): {"bw": Fraction(6)}}).allocate(
        N1, [c])
    assert _ids(out) == [[f"{GPU}/n1/nic"]] and out[0].devices[0].consumed_capacity == {"bw": 4}
    assert out[0].devices[0].share_id is not None
    full = Allocator(f, set(), CLS, [s], aggregated_capacity={(GPU, "n1", "nic"): {"bw": Fraction(7)}})
    assert full.allocate(N1, [c]) is None
    # a capacity the device does not have: the device is skipped
    assert Allocator(f, set(), CLS, [s]).allocate(
        N1, [_claim(ExactRequest("r", "gpu", capacity_requests={"nope": Fraction(1)}))]) is None
    # without the feature the device is an ordinary one, taken once
    two = ResourceClaim("default", "c", (DeviceRequest("a", ExactRequest("a", "gpu")),
                                         DeviceRequest("b", ExactRequest("b", "gpu"))))
    assert Allocator(Features(), set(), CLS, [s]).allocate(N1, [two]) is None
    assert _ids(Allocator(f, set(), CLS, [s]).allocate(N1, [two])) is None  # 10 + 10 > 10
    half = RequestPolicy(default=Fraction(5))
    s5 = _slice(Device("nic", capacity={"bw": Fraction(10)}, allow_multiple_allocations=True,
                       capacity_policies={"bw": half}))
    assert _ids(Allocator(f, set(), CLS, [s5]).allocate(N1, [two])) == [[f"{GPU}/n1/nic", f"{GPU}/n1/nic"]]


def test_a_shared_device_consumes_its_counters_once():
    dev = Device("nic", capacity={"bw": Fraction(10)}, allow_multiple_allocations=True,
                 consumes_counters=_consumes("mem", memory=40 * G))
    slices = [_counters_slice(mem={"memory": 40 * G}), _slice(dev, slice_count=2)]
    two = ResourceClaim("default", "c", (DeviceRequest("a", ExactRequest("a", "gpu",
                                                                         capacity_requests={"bw": Fraction(1)})),
                                         DeviceRequest("b", ExactRequest("b", "gpu",
                                                                         capacity_requests={"bw": Fraction(1)}))))
    f = Features(consumable_capacity=True, partitionable_devices=True)
    assert _ids(Allocator(f, set(), CLS, slices).allocate(N1, [two])) == [[f"{GPU}/n1/nic", f"{GPU}/n1/nic"]]


def test_cel_sees_allow_multiple_allocations_only_with_the_feature():
    from kspread.engine.devicecel import CelError, device_matches

    d = Device("nic", allow_multiple_allocations=True)
    assert device_matches("device.allowMultipleAllocations", d, GPU, True) is True
    with pytest.raises(CelError):
        device_matches("device.allowMultipleAllocations", d, GPU)


def test_consumable_capacity_per_version_and_gate():
    dev = "{name: n, allowMultipleAllocations: true}"
    with pytest.raises(CaseError, match=r"needs the DRAConsumableCapacity feature gate, off by default in 1\.35"):
        _build("1.35", "v1", dev)
    with pytest.raises(CaseError, match=r"feature gate DRAConsumableCapacity is modelled by kspread from 1\.35"):
        _build("1.34", "v1", dev, "{DRAConsumableCapacity: true}")
    with pytest.raises(CaseError, match=r"1\.33 has no consumable capacity"):
        _build("1.33", "v1beta2", dev, "{DynamicResourceAllocation: true}")
    case = _build("1.36", "v1", "{name: n, allowMultipleAllocations: true, capacity: {bw: {value: 10G, "
                  "requestPolicy: {validValues: [1G, 2G]}}}}")
    d = case.cluster.devices.slices[0].devices[0]
    assert d.allow_multiple_allocations is True and d.capacity_policies["bw"].valid_values == (10**9, 2 * 10**9)


def test_an_allocated_share_in_a_case_reduces_what_is_left():
    text = SLICE_CASE.format(version="1.36", api="v1", gates="{}",
                             device="{name: n, allowMultipleAllocations: true, capacity: {bw: {value: 10G}}}")
    doc = yaml.safe_load(text)
    doc["objects"] += [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "old"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
         "status": {"allocation": {"devices": {"results": [
             {"request": "r", "driver": "gpu.example.com", "pool": "n1", "device": "n", "shareID": "u1",
              "consumedCapacity": {"bw": "7G"}}]}}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "new"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu",
                                                                      "capacity": {"requests": {"bw": "4G"}}}}]}}},
    ]
    doc["pod"] = {"name": "p", "resourceClaims": [{"name": "r", "resourceClaimName": "new"}]}
    doc["expect"] = {"unschedulable": True}
    from kspread.workflow.runner import run_loaded

    out = run_loaded(build_case(doc, "t"))
    assert not out.diffs, out.diffs
    doc["objects"][-1]["spec"]["devices"]["requests"][0]["exactly"]["capacity"]["requests"]["bw"] = "3G"
    doc["expect"] = {"selected": "n1", "allocations": {"new": ["gpu.example.com/n1/n"]}}
    assert not run_loaded(build_case(doc, "t")).diffs


# ---- extended resources backed by devices --------------------------------------------------


def test_extended_resource_classes_prefer_the_newer_class_and_the_loser_names_nothing():
    from kspread.engine.devices import extended_resource_classes

    a = DeviceClass("a", extended_resource_name="example.com/gpu", created="2025-01-01T00:00:00Z")
    b = DeviceClass("b", extended_resource_name="example.com/gpu", created="2025-02-01T00:00:00Z")
    m = extended_resource_classes({"a": a, "b": b})
    assert m["example.com/gpu"] is b and "deviceclass.resource.kubernetes.io/a" in m
    m = extended_resource_classes({"b": b, "a": a})
    assert m["example.com/gpu"] is b and "deviceclass.resource.kubernetes.io/a" not in m
    x = DeviceClass("x", extended_resource_name="example.com/gpu")
    y = DeviceClass("y", extended_resource_name="example.com/gpu")
    assert extended_resource_classes({"y": y, "x": x})["example.com/gpu"] is x


def test_extended_requests_one_per_long_lived_container_and_the_largest_init_remainder():
    from kspread.engine.model import Container, Pod
    from kspread.engine.plugins.dynamicresources import extended_requests

    r = "example.com/gpu"
    pod = Pod("p", init_containers=(Container("i0", requests={r: 3, "cpu": 100}), Container("i1", requests={r: 1}),
                                    Container("side", requests={r: 1}, restartable=True)),
              containers=(Container("main", requests={"a/b": 1, r: 1}),))
    out = extended_requests(pod, {r: 4}, {r: DeviceClass("gpu")})
    # long-lived: side (index 2) 1, main (index 3) 1; i0 needs 3 less the 2 of later long-lived
    # containers: 1 more; i1's 1 is covered
    assert [(x.name, x.exactly.count, x.exactly.class_name) for x in out] == [
        ("container-0-request-1", 1, "gpu"), ("container-2-request-0", 1, "gpu"), ("container-3-request-1", 1, "gpu")]


EXT_CASE = """
apiVersion: kspread/v1
kind: Case
version: "{version}"
featureGates: {gates}
nodes:
- {{name: n1, allocatable: {{cpu: "4", memory: 8Gi, pods: 110, example.com/gpu: 1}}}}
- {{name: n2, allocatable: {{cpu: "4", memory: 8Gi, pods: 110}}}}
objects:
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {{name: gpu}}
  spec: {{extendedResourceName: example.com/gpu}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {{name: s}}
  spec: {{driver: gpu.example.com, nodeName: n2, pool: {{name: n2}}, devices: [{{name: g0}}, {{name: g1}}]}}
pod: {{name: p, requests: {{example.com/gpu: 2}}}}
"""


def test_node_resources_fit_leaves_backed_resources_to_devices_only_with_the_gate():
    from kspread.workflow.runner import run_loaded

    on = build_case(yaml.safe_load(EXT_CASE.format(version="1.36", gates="{}")), "t")
    r = run_loaded(on, keep_all=True).cycles[0]
    assert r.statuses["n1"].message == "Insufficient example.com/gpu" and r.statuses["n2"].is_success()
    off = build_case(yaml.safe_load(EXT_CASE.format(version="1.35", gates="{}")), "t")
    assert off.cluster.devices.classes["gpu"].extended_resource_name is None  # dropped with the gate off
    r = run_loaded(off, keep_all=True).cycles[0]
    assert r.statuses["n2"].message == "Insufficient example.com/gpu"


def test_claims_and_extended_resources_served_by_a_device_plugin_are_refused():
    from kspread.workflow.runner import run_loaded

    doc = yaml.safe_load(EXT_CASE.format(version="1.36", gates="{}"))
    doc["objects"].append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
                           "spec": {"devices": {"requests": []}}})
    doc["nodes"][0]["allocatable"]["example.com/gpu"] = 2
    doc["pod"]["resourceClaims"] = [{"name": "c", "resourceClaimName": "c"}]
    doc["profile"] = {"filter": ["NodeResourcesFit", "DynamicResources"], "score": [], "bind": True}
    with pytest.raises(CaseError, match=r"upstream.s PreBind creates an extended resources claim with no request"):
        run_loaded(build_case(doc, "t"))


def test_scoring_an_extended_resource_backed_by_devices_is_refused():
    from kspread.workflow.runner import run_loaded

    doc = yaml.safe_load(EXT_CASE.format(version="1.36", gates="{}"))
    doc["profile"] = {"filter": ["NodeResourcesFit", "DynamicResources"], "score": ["NodeResourcesFit"],
                      "pluginConfig": {"NodeResourcesFit": {"scoringStrategy": {
                          "type": "MostAllocated", "resources": [{"name": "example.com/gpu", "weight": 1}]}}}}
    doc["nodes"][0]["allocatable"]["example.com/gpu"] = 2
    with pytest.raises(CaseError, match=r"NodeResourcesFit scores example\.com/gpu, an extended resource backed by "
                                        r"devices"):
        run_loaded(build_case(doc, "t"))
    # BalancedAllocation's refusal says that upstream's plugin panics there (no CEL cache)
    doc["profile"] = {"filter": ["NodeResourcesFit", "DynamicResources"], "score": ["NodeResourcesBalancedAllocation"],
                      "pluginConfig": {"NodeResourcesBalancedAllocation": {
                          "resources": [{"name": "example.com/gpu", "weight": 1}, {"name": "cpu", "weight": 1}]}}}
    with pytest.raises(CaseError, match=r"NodeResourcesBalancedAllocation scores example\.com/gpu, .* not modelled by "
                                        r"kspread \(upstream's BalancedAllocation has no CEL cache"):
        run_loaded(build_case(doc, "t"))


# ---- binding conditions ----------------------------------------------------------------------


FABRIC = ResourceSlice("fabric", GPU, "fabric", 1, all_nodes=True, devices=(
    Device("fgpu-0", binding_conditions=("example.com/attached",), binds_to_node=True),))
LOCAL = _slice(Device("gpu-0"))


def test_pools_with_binding_conditions_come_last_and_bind_to_the_node():
    two = _claim(ExactRequest("r", "gpu", count=2))
    f = Features(binding_conditions=True)
    out = Allocator(f, set(), CLS, [FABRIC, LOCAL]).allocate(N1, [two])
    assert _ids(out) == [[f"{GPU}/n1/gpu-0", f"{GPU}/fabric/fgpu-0"]]
    assert out[0].devices[1].binding_conditions == ("example.com/attached",)
    one = _claim(ExactRequest("r", "gpu"))
    n2 = Node("n2", {}, {}, index=1)
    out = Allocator(f, set(), CLS, [FABRIC, LOCAL]).allocate(n2, [one])
    assert _ids(out) == [[f"{GPU}/fabric/fgpu-0"]] and out[0].node_selector[0].match_fields[0].values == ("n2",)
    # without the feature a device with binding conditions is never selected
    assert Allocator(Features(), set(), CLS, [FABRIC, LOCAL]).allocate(n2, [one]) is None


def test_binding_conditions_gates():
    with pytest.raises(CaseError, match=r"DRADeviceBindingConditions is enabled, but depends on features that are "
                                        r"disabled: \[DRAResourceClaimDeviceStatus\]"):
        make_version("1.35", {"DRADeviceBindingConditions": True, "DRAResourceClaimDeviceStatus": False})
    with pytest.raises(CaseError, match=r"modelled by kspread from 1\.35"):
        make_version("1.34", {"DRADeviceBindingConditions": True})
    assert allocator_features(make_version("1.36", None)).binding_conditions is True
    assert allocator_features(make_version("1.35", None)).binding_conditions is False


def test_a_sequence_waits_in_prebind_for_binding_conditions_a_gang_is_refused():
    from kspread.workflow.runner import run_loaded

    doc = yaml.safe_load("""
apiVersion: kspread/v1
kind: Case
version: "1.36"
nodes: [n1]
objects:
- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: fabric}
  spec:
    driver: gpu.example.com
    allNodes: true
    pool: {name: fabric}
    devices: [{name: fgpu-0, bindingConditions: [example.com/attached]}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: t}
  spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}}
schedule:
- {name: a, resourceClaims: [{name: g, resourceClaimTemplateName: t}]}
expect: {placements: {a: null}, allocations: {a-g: [gpu.example.com/fabric/fgpu-0]}}
""")
    assert not run_loaded(build_case(doc, "t")).diffs  # a waits in PreBind: assumed, not bound
    doc["expect"]["placements"]["a"] = "n1"
    assert run_loaded(build_case(doc, "t")).diffs
    doc.pop("schedule")
    doc["pod"] = {"name": "a", "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "t"}]}
    doc["expect"] = {"selected": "n1", "allocations": {"a-g": ["gpu.example.com/fabric/fgpu-0"]}}
    assert not run_loaded(build_case(doc, "t")).diffs


def test_an_allocated_claim_with_binding_conditions_is_refused():
    text = SLICE_CASE.format(version="1.36", api="v1", gates="{}", device="{name: n}")
    doc = yaml.safe_load(text)
    doc["objects"].append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "old"},
                           "spec": {"devices": {"requests": []}},
                           "status": {"allocation": {"devices": {"results": [
                               {"request": "r", "driver": "gpu.example.com", "pool": "n1", "device": "n",
                                "bindingConditions": ["example.com/attached"]}]}}}})
    with pytest.raises(CaseError, match="an allocated device with bindingConditions"):
        build_case(doc, "t")


def test_binding_timeout_follows_the_case_gates():
    doc = yaml.safe_load(SLICE_CASE.format(version="1.35", api="v1", gates="{}", device="{name: n}"))
    doc["profile"] = {"filter": ["DynamicResources"], "pluginConfig": {"DynamicResources": {"bindingTimeout": "30s"}}}
    with pytest.raises(CaseError, match="Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus"):
        build_case(doc, "t")
    doc["featureGates"] = {"DRADeviceBindingConditions": True}
    build_case(doc, "t")


@pytest.mark.parametrize("path, name, want", [
    ("cases/devices/device-taints.yaml", "devices-taints-skip-untolerated",
     ("claim one-gpu request gpu: needs 1, 1 matching device(s) on the node, 0 free, 1 with a taint the request "
     "does not tolerate")),
    ("cases/devices/extended-resources.yaml", "devices-extended-resource-implicit-init-container",
     "claim p-extended-resources request container-1-request-0: needs 2, 1 matching device(s) on the node, 1 free"),
])
def test_explain_names_taints_and_the_extended_resources_claim(path, name, want):
    from kspread.format.loader import collect, load_case
    from kspread.workflow.explain import capture, explain_cycles
    from kspread.workflow.runner import run_loaded

    doc = next(d for d in collect([path])[0].docs if d.data.get("name") == name)
    seen = []
    out = run_loaded(load_case(doc), observe=lambda sched, r: seen.append(capture(sched, r)), keep_all=True)
    assert want in " ".join(explain_cycles(out.scheduler, seen).split())
