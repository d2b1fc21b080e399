"""DeviceTaintRules (issue 29): the ResourceSlice tracker's patches per version and gate,
and the errors for what a version does not serve."""

from __future__ import annotations

import pytest
import yaml

from kspread.engine.devices import Device, DeviceClass, DeviceTaint, DeviceTaintRule, ResourceSlice
from kspread.engine.devicetaints import patched_slices
from kspread.errors import CaseError
from kspread.format.case import build_case

GPU = "gpu.example.com"
T = DeviceTaint("example.com/t", "v", "NoExecute")


def _slice(name: str, pool: str, *devices: str, driver: str = GPU) -> ResourceSlice:
    return ResourceSlice(name, driver, pool, 1, node_name=pool, devices=tuple(Device(d) for d in devices))


def _tainted(slices: list[ResourceSlice]) -> list[str]:
    return [f"{s.driver}/{s.pool}/{d.name}:{','.join(t.key for t in d.taints)}"
            for s in slices for d in s.devices if d.taints]


SLICES = [_slice("a", "n1", "g0", "g1"), _slice("b", "n2", "g0"), _slice("c", "n1", "f0", driver="fpga.example.com")]


@pytest.mark.parametrize("rule, want", [
    (DeviceTaintRule("r", T), [f"{GPU}/n1/g0:example.com/t", f"{GPU}/n1/g1:example.com/t", f"{GPU}/n2/g0:example.com/t",
                               "fpga.example.com/n1/f0:example.com/t"]),
    (DeviceTaintRule("r", T, driver=GPU), [f"{GPU}/n1/g0:example.com/t", f"{GPU}/n1/g1:example.com/t",
                                           f"{GPU}/n2/g0:example.com/t"]),
    (DeviceTaintRule("r", T, pool="n1"), [f"{GPU}/n1/g0:example.com/t", f"{GPU}/n1/g1:example.com/t",
                                          "fpga.example.com/n1/f0:example.com/t"]),
    (DeviceTaintRule("r", T, device="g0"), [f"{GPU}/n1/g0:example.com/t", f"{GPU}/n2/g0:example.com/t"]),
    (DeviceTaintRule("r", T, driver=GPU, pool="n2", device="g0"), [f"{GPU}/n2/g0:example.com/t"]),
    (DeviceTaintRule("r", T, device_class="none"), []),
    (DeviceTaintRule("r", T, device_class="fpga"), ["fpga.example.com/n1/f0:example.com/t"]),
    (DeviceTaintRule("r", T, selectors=('device.driver == "fpga.example.com"',)),
     ["fpga.example.com/n1/f0:example.com/t"]),
])
def test_a_rule_taints_the_devices_its_selector_matches(rule, want):
    classes = {"fpga": DeviceClass("fpga", ('device.driver == "fpga.example.com"',))}
    out = patched_slices(SLICES, [rule], classes)
    assert _tainted(out) == want
    assert _tainted(SLICES) == []  # the case's slices are not changed


def test_rules_add_to_the_devices_own_taints_and_an_unmatched_slice_is_the_same_object():
    own = DeviceTaint("own", "", "NoSchedule")
    s = ResourceSlice("a", GPU, "n1", 1, node_name="n1", devices=(Device("g0", taints=(own,)),))
    other = _slice("b", "n2", "g0")
    out = patched_slices([s, other], [DeviceTaintRule("r1", T, pool="n1"), DeviceTaintRule("r2", T, pool="n1")], {})
    assert out[0].devices[0].taints == (own, T, T)
    assert out[1] is other


def test_a_class_selector_that_does_not_compile_drops_only_the_slices_that_get_that_far():
    classes = {"bad": DeviceClass("bad", ("device.driver ==",))}
    out = patched_slices(SLICES, [DeviceTaintRule("r", T, driver=GPU, device_class="bad", device="g1")], classes)
    assert [s.name for s in out] == ["b", "c"]  # b has no g1, c another driver


CASE = """
apiVersion: kspread/v1
kind: Case
name: t
version: "{version}"
featureGates: {gates}
nodes: [n1]
objects:
- apiVersion: {api}
  kind: DeviceTaintRule
  metadata: {{name: r}}
  spec: {spec}
pod: {{name: p}}
"""
SPEC = "{deviceSelector: {driver: gpu.example.com}, taint: {key: k, effect: NoSchedule}}"


def _build(version="1.35", gates="{DRADeviceTaints: true, DRADeviceTaintRules: true}",
           api="resource.k8s.io/v1alpha3", spec=SPEC):
    return build_case(yaml.safe_load(CASE.format(version=version, gates=gates, api=api, spec=spec)), "t")


def test_a_rule_is_read_into_the_case():
    case = _build(spec="{deviceSelector: {driver: d, pool: p, device: x}, taint: {key: k, value: v, effect: None, "
                  "timeAdded: '2026-01-01T00:00:00Z'}}")
    assert case.cluster.devices.taint_rules == [DeviceTaintRule("r", DeviceTaint("k", "v", "None"), "d", "p", "x")]
    case = _build("1.34", "{DRADeviceTaints: true}",
                  spec="{deviceSelector: {deviceClassName: c, selectors: [{cel: {expression: 'true'}}]}, "
                  "taint: {key: k, effect: NoExecute}}")
    assert case.cluster.devices.taint_rules == [
        DeviceTaintRule("r", DeviceTaint("k", "", "NoExecute"), device_class="c", selectors=("true",))]


@pytest.mark.parametrize("kw, want", [
    ({"gates": "{DRADeviceTaints: true}"},
     (r"DeviceTaintRule needs the DRADeviceTaintRules feature gate, off by default in 1\.35 .*"
     r"set featureGates: \{DRADeviceTaintRules: true\} with DRADeviceTaints")),
    ({"gates": "{DRADeviceTaintRules: true}"},
     r"DRADeviceTaintRules is enabled, but depends on features that are disabled: \[DRADeviceTaints\]"),
    ({"version": "1.34", "gates": "{}"},
     r"DeviceTaintRule needs the DRADeviceTaints feature gate, off by default in 1\.34"),
    ({"version": "1.32", "gates": "{DynamicResourceAllocation: true}"},
     r"1\.32 has no DeviceTaintRule \(DRADeviceTaints, from 1\.33\)"),
    ({"version": "1.36", "gates": "{DRADeviceTaintRules: true}"},
     (r"DeviceTaintRule in 1\.36 with DRADeviceTaintRules on crashes kube-scheduler v1\.36\.2, .* it panics when "
      r"it syncs a ResourceSlice .*kubernetes/kubernetes #139651, fixed in v1\.36\.3")),
    ({"version": "1.36", "gates": "{DRADeviceTaintRules: true}", "api": "resource.k8s.io/v1beta2"},
     r"DeviceTaintRule in 1\.36 with DRADeviceTaintRules on crashes kube-scheduler v1\.36\.2"),
    ({"version": "1.36", "gates": "{}", "api": "resource.k8s.io/v1beta2"},
     r"DeviceTaintRule needs the DRADeviceTaintRules feature gate, off by default in 1\.36"),
    ({"version": "1.36", "gates": "{DRADeviceTaintRules: true}", "api": "resource.k8s.io/v1"},
     r"DeviceTaintRule in 1\.36 is served as resource\.k8s\.io/v1alpha3 and resource\.k8s\.io/v1beta2"),
    ({"version": "1.37", "gates": "{}", "api": "resource.k8s.io/v1"},
     r"DeviceTaintRule in 1\.37 is not modelled by kspread: 1\.37's ResourceSlice tracker \(upstream main"),
    ({"api": "resource.k8s.io/v1"}, r"DeviceTaintRule in 1\.35 is served as resource\.k8s\.io/v1alpha3"),
    ({"spec": "{deviceSelector: {deviceClassName: gpu}, taint: {key: k, effect: NoSchedule}}"},
     r"spec\.deviceSelector\.deviceClassName: 1\.35's DeviceTaintSelector has no deviceClassName"),
    ({"spec": "{deviceSelector: {driver: d}}"}, r"spec\.taint: a DeviceTaintRule has a taint"),
    ({"spec": "{taint: {key: k, effect: Evict}}"}, (r"spec\.taint\.effect: a device taint's effect is one of "
                                                   r"NoSchedule, NoExecute, None in 1\.35")),
    ({"version": "1.34", "gates": "{DRADeviceTaints: true}",
      "spec": "{deviceSelector: {selectors: [{cel: {expression: 'device.driver =='}}]}, "
              "taint: {key: k, effect: NoSchedule}}"},
     r"spec\.deviceSelector\.selectors\[0\]\.cel\.expression: CEL compile error"),
])
def test_what_a_version_does_not_serve_is_an_error_naming_the_field(kw, want):
    with pytest.raises(CaseError, match=want):
        _build(**kw)


def test_a_slice_the_tracker_fails_to_patch_keeps_its_stored_version():
    classes = {"bad": DeviceClass("bad", ("device.driver ==",))}
    stored = patched_slices(SLICES, [DeviceTaintRule("ok", T, pool="n2")], {})
    out = patched_slices(SLICES, [DeviceTaintRule("ok", T, pool="n2"),
                                  DeviceTaintRule("r", T, device_class="bad", pool="n2")], classes, stored)
    assert [s.name for s in out] == ["a", "b", "c"]
    assert out[1] is stored[1] and _tainted([out[1]]) == [f"{GPU}/n2/g0:example.com/t"]
