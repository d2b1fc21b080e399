"""The allocator's gated features (issue 29): device taints and tolerations,
partitionable devices, consumable capacity, each per version and gate."""

from __future__ import annotations

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
