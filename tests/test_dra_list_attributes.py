"""DRAListTypeAttributes (1.36): list attributes in ResourceSlices, CEL over them, and the
constraints' rules (v1.36.2's scheduler: scalars only; 1.37: value sets)."""

from __future__ import annotations

import pytest

from kspread.engine.allocator import Allocator
from kspread.engine.devicecel import CelError, device_matches
from kspread.engine.devices import Attribute, Device, DeviceClass, ExactRequest, ResourceClaim, ResourceSlice
from kspread.engine.model import Node
from kspread.engine.plugins.dynamicresources import allocator_features
from kspread.engine.versions import make_version
from kspread.errors import CaseError
from tests.helpers import verdict, write_case

GPU = "gpu.example.com"


def _slice_case(attributes: str, version: str = "1.36", gate: bool = True) -> str:
    gates = "featureGates: {DRAListTypeAttributes: true}\n" if gate else ""
    return f"""\
name: list-attr
version: "{version}"
{gates}nodes: [n1]
objects:
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {{name: n1-gpu}}
  spec:
    driver: gpu.example.com
    nodeName: n1
    pool: {{name: n1}}
    devices:
    - name: g0
      attributes: {attributes}
pod: {{name: p}}
expect: {{feasible: [n1]}}
"""


@pytest.mark.parametrize("attributes, where, text", [
    ("{numa: {ints: []}}", "attributes.numa.ints", "must not be empty if specified"),
    ("{numa: {ints: [1, true]}}", "attributes.numa.ints[1]", "a device attribute's int value has the wrong type"),
    ("{numa: {ints: 3}}", "attributes.numa.ints", "a device attribute's ints value is a list of int values"),
    ("{fw: {versions: [1.0.0, v2]}}", "attributes.fw.versions[1]", "must be a semantic version (semver 2.0.0)"),
    ("{m: {strings: [" + "x" * 65 + "]}}", "attributes.m.strings[0]", "Too long: may not be more than 64 bytes"),
    ("{numa: {ints: [1], int: 1}}", "attributes.numa", ("a device attribute has exactly one of int, bool, string, "
                                                         "version, ints, bools, strings, versions")),
    ("{a: {ints: [" + ", ".join(["1"] * 40) + "]}, b: {strings: [" + ", ".join(["x"] * 9) + "]}}", "attributes",
     "the total number of attribute values must not exceed 48"),
])
def test_invalid_list_attributes_name_file_line_and_field(tmp_path, attributes, where, text):
    v = verdict(tmp_path, _slice_case(attributes))
    assert f"case.yaml:17: objects[0].spec.devices[0].{where}: {text}" in v.message, v.message


def test_48_values_per_device_are_allowed(tmp_path):
    v = verdict(tmp_path, _slice_case("{a: {ints: [" + ", ".join(["1"] * 40) + "]}, b: {strings: ["
                                      + ", ".join(["x"] * 8) + "]}}"))
    assert v.passed, v.message


def test_before_1_36_there_are_no_list_attributes(tmp_path):
    v = verdict(tmp_path, _slice_case("{numa: {bools: [true]}}", version="1.35", gate=False))
    assert "case.yaml:16: objects[0].spec.devices[0].attributes.numa.bools: 1.35 has no list attributes (bools): " \
           "they come with 1.36's DRAListTypeAttributes feature gate" in v.message, v.message


def test_with_the_gate_off_the_api_server_drops_the_list_and_keeps_a_scalar_given_with_it(tmp_path):
    # dropDisableDRAListTypeAttributesFields, then validation: one value is left
    body = _slice_case("{numa: {ints: [0, 1], int: 1}}", gate=False).replace(
        "pod: {name: p}", "pod: {name: p, devices: {g: {class: gpu, selector: "
        "'device.attributes[\"gpu.example.com\"].numa == 1'}}}").replace(
        "nodes: [n1]", "deviceClasses: [{name: gpu, driver: gpu.example.com}]\nnodes: [n1]")
    v = verdict(tmp_path, body)
    assert v.passed, v.message


def test_the_node_shorthand_takes_a_plain_list_by_its_items(tmp_path):
    body = """\
        name: shorthand-lists
        version: "1.36"
        featureGates: {DRAListTypeAttributes: true}
        deviceClasses: [{name: gpu, driver: gpu.example.com}]
        nodes:
        - {name: n1, devices: [{driver: gpu.example.com, attributes: {numa: [0, 1], ok: [true], m: [a, b]}}]}
        pod: {name: p, devices: {g: {class: gpu, selector: 'device.attributes["gpu.example.com"].numa.includes(1) &&
          device.attributes["gpu.example.com"].ok.includes(true) && "b" in device.attributes["gpu.example.com"].m'}}}
        expect: {feasible: [n1]}
        """
    v = verdict(tmp_path, body)
    assert v.passed, v.message
    bad = body.replace("numa: [0, 1]", "numa: [0, x]")
    p = write_case(tmp_path, bad, "bad.yaml")
    from kspread.format.loader import read_file
    from kspread.workflow.runner import check

    res = read_file(p)
    msg = check(res.docs[0]).message
    assert "nodes[0].devices[0].attributes.numa: a list attribute's items are all integers, all booleans or all " \
           "strings" in msg, msg


def _device(**attrs: Attribute) -> Device:
    return Device("g0", attrs)


@pytest.mark.parametrize("expression, result", [
    ('device.attributes["gpu.example.com"].numa.includes(1)', True),
    ('device.attributes["gpu.example.com"].numa.includes(3)', False),
    ('device.attributes["gpu.example.com"].numa.includes(1.0)', True),  # cel-go: numbers by value
    ('device.attributes["gpu.example.com"].flags.includes(1)', False),  # a bool is no number
    ('device.attributes["gpu.example.com"].flags.includes(true)', True),
    ('device.attributes["gpu.example.com"].numa.includes(true)', False),
    ('device.attributes["gpu.example.com"].fw.includes(semver("2.0.0+build.7"))', True),  # build ignored
    ('device.attributes["gpu.example.com"].fw.includes("2.0.0")', False),  # a string is no semver
    ('device.attributes["gpu.example.com"].model.includes("a100")', True),  # on a scalar: equality
    ('device.attributes["gpu.example.com"].fw.exists(v, v.isLessThan(semver("1.5.0")))', True),
    ('size(device.attributes["gpu.example.com"].numa) == 3', True),
    ('[' + ", ".join(str(i) for i in range(60)) + '].includes(47)', True),
])
def test_cel_sees_lists_and_includes_with_the_gate(expression, result):
    d = _device(numa=Attribute("ints", (0, 1, 1)), flags=Attribute("bools", (True,)),
                fw=Attribute("versions", ("1.2.0", "2.0.0")), model=Attribute("string", "a100"))
    assert device_matches(expression, d, GPU, list_attributes=True) is result


def test_semver_equality_ignores_build_metadata_with_or_without_the_gate():
    d = _device(v=Attribute("version", "1.0.0+abc"))
    for lists in (False, True):
        assert device_matches('device.attributes["gpu.example.com"].v == semver("1.0.0+xyz")', d, GPU,
                              list_attributes=lists)
        assert not device_matches('device.attributes["gpu.example.com"].v == semver("1.0.0-rc.1")', d, GPU,
                                  list_attributes=lists)


def test_includes_stops_past_48_list_items():
    d = _device(model=Attribute("string", "a100"))
    with pytest.raises(CelError) as e:
        device_matches('[' + ", ".join(str(i) for i in range(60)) + '].includes(48)', d, GPU, list_attributes=True)
    assert "'includes' function cannot be applied to lists longer than 48 values" in str(e.value)


def test_without_the_gate_a_list_attribute_fails_every_selector_and_includes_is_unknown():
    d = _device(numa=Attribute("ints", (0,)))
    with pytest.raises(CelError) as e:
        device_matches('device.driver == "gpu.example.com"', d, GPU)
    assert str(e.value) == "attribute numa: unsupported attribute value"
    with pytest.raises(CelError) as e:
        device_matches('device.attributes["gpu.example.com"].model.includes("a")',
                       _device(model=Attribute("string", "a")), GPU)
    assert "includes" in str(e.value)


def _allocate(version: str, constraint: str, *attrs: Attribute) -> tuple[str, ...] | None:
    from kspread.engine.devices import MatchAttribute

    v = make_version(version, {"DRAListTypeAttributes": True})
    devices = tuple(Device(f"d{i}", {"x": a}) for i, a in enumerate(attrs))
    s = ResourceSlice("n1-gpu", GPU, "n1", 0, 1, node_name="n1", devices=devices)
    from kspread.engine.devices import DeviceRequest

    reqs = tuple(DeviceRequest(n, ExactRequest(n, "gpu")) for n in ("a", "b"))
    claim = ResourceClaim("default", "c", reqs, (MatchAttribute(f"{GPU}/x", (), constraint == "distinct"),))
    alloc = Allocator(allocator_features(v), set(), {"gpu": DeviceClass("gpu", ())}, [s])
    out = alloc.allocate(Node("n1", {"kubernetes.io/hostname": "n1"}, {}), [claim])
    return None if out is None else tuple(d.device for d in out[0].devices)


def test_1_36_constraints_compare_scalars_only_1_37_value_sets():
    ints = [Attribute("ints", (0, 1)), Attribute("ints", (0, 1)), Attribute("int", 1)]
    # v1.36.2: a list is of no kind the scalar rule knows: equal lists do not match
    assert _allocate("1.36", "match", *ints) is None
    assert _allocate("1.37", "match", *ints) == ("d0", "d1")
    # distinct at 1.36: a list after a held value is refused, a scalar compared with scalars only
    assert _allocate("1.36", "distinct", *ints) == ("d0", "d2")
    assert _allocate("1.37", "distinct", *ints) is None
    # kinds apart: an int and a bool never meet (Python's 1 == True does not count)
    mixed = [Attribute("ints", (1,)), Attribute("bools", (True,)), Attribute("int", 1)]
    assert _allocate("1.37", "match", *mixed) == ("d0", "d2")
    assert _allocate("1.37", "distinct", *mixed) == ("d0", "d1")


def test_the_gate_is_modelled():
    assert make_version("1.36", {"DRAListTypeAttributes": True}).gate("DRAListTypeAttributes")
    with pytest.raises(CaseError):
        make_version("1.35", {"DRAListTypeAttributes": True})


def test_import_turns_the_gate_on_for_a_dump_with_list_attributes(tmp_path):
    from kspread.format.importer import import_snapshot

    dump = tmp_path / "dump.yaml"
    dump.write_text("""\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, nodeInfo: {kubeletVersion: v1.36.2}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: n1-gpu}
  spec:
    driver: gpu.example.com
    nodeName: n1
    pool: {name: n1, generation: 1, resourceSliceCount: 1}
    devices:
    - name: g0
      attributes: {numa: {ints: [0, 1]}}
""", encoding="utf-8")
    warnings: list[str] = []
    out = import_snapshot(str(dump), warn=warnings.append)
    assert "featureGates: {DRAListTypeAttributes: true}" in out
    assert "numa: {ints: [0, 1]}" in out
    assert any("the gate is set on here" in w for w in warnings), warnings
    warnings.clear()
    out = import_snapshot(str(dump), version="1.35", warn=warnings.append)
    assert "ResourceSlice" not in out and "featureGates" not in out
    assert any("1.35 has no list attributes (ints)" in w for w in warnings), warnings
