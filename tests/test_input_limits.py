"""Issue 26: a case under review is untrusted input. Numbers, strings and lists of any
size end in a clear error naming file, line and field, in time proportional to the
text: never a traceback, a hang or memory without bound."""

from __future__ import annotations

import time
from fractions import Fraction
from pathlib import Path

import pytest

import kspread.format.loader as loader
from kspread.engine.quantity import parse_quantity, resource_amount
from kspread.errors import CaseError, short_repr
from kspread.format.loader import load_case, read_file

HEAD = 'apiVersion: kspread/v1\nkind: Case\nname: c\nversion: "1.30"\n'
TAIL = "pod: {name: new}\nexpect: {selected: n1}\n"
BIG = "9" * 4301  # one digit past what Python converts between text and int


def load_error(path: Path) -> str:
    """The error message of loading the file's one case (read or load)."""
    res = read_file(path)
    if res.error is not None:
        return str(res.error)
    assert len(res.docs) == 1
    with pytest.raises(CaseError) as e:
        load_case(res.docs[0])
    return str(e.value)


def write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


HUGE_INT = "integer out of range: it has 4,301 digits (every integer kspread reads fits in 64 bits; it refuses any " \
           "of more than 100 digits)"


@pytest.mark.parametrize("reader", ["yaml-rs", "strict"])
def test_an_integer_quantity_past_pythons_digit_limit(tmp_path, monkeypatch, reader):
    if reader == "strict":
        monkeypatch.setattr(loader, "yaml_rs", None)
    elif loader.yaml_rs is None:
        pytest.skip("yaml-rs is not installed")
    p = write(tmp_path, HEAD + f"nodes:\n- name: n1\n  allocatable: {{cpu: {BIG}}}\n" + TAIL)
    assert load_error(p) == f"{p}:7: nodes[0].allocatable.cpu: {HUGE_INT}"


@pytest.mark.parametrize("field", ["priority: ", "priority: -", "startTime: "])
def test_an_integer_past_the_limit_where_the_schema_wants_a_bounded_one(tmp_path, field):
    p = write(tmp_path, HEAD + f"nodes: [n1]\npod:\n  name: new\n  {field}{BIG}\nexpect: {{selected: n1}}\n")
    assert load_error(p) == f"{p}:8: pod.{field.split(':')[0]}: {HUGE_INT}"


def test_an_integer_past_the_limit_in_json(tmp_path):
    p = write(tmp_path, '{"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": "1.30",\n'
              f'"nodes": [{{"name": "n1", "allocatable": {{"cpu": {BIG}}}}}],\n'
              '"pod": {"name": "new"}, "expect": {"selected": "n1"}}\n', "c.json")
    assert load_error(p) == f"{p}:2: {HUGE_INT}"


def test_a_plain_integer_of_two_million_digits_is_refused_quickly(tmp_path):
    # yaml-rs converts digits in time quadratic in their number (2.7 s for a million):
    # a text of such a run goes to the strict reader, which refuses it unconverted
    p = write(tmp_path, HEAD + f"nodes:\n- name: n1\n  allocatable: {{cpu: {'9' * 2_000_000}}}\n" + TAIL)
    start = time.process_time()
    assert load_error(p).endswith("nodes[0].allocatable.cpu: integer out of range: it has 2,000,000 digits (every "
                                  "integer kspread reads fits in 64 bits; it refuses any of more than 100 digits)")
    assert time.process_time() - start < 3


@pytest.mark.parametrize("text", [BIG, f"{BIG}e3", f"{BIG}Ki", f"+{BIG}m", "0" * 5000 + BIG])
def test_a_quantity_string_of_many_digits_is_out_of_range(tmp_path, text):
    p = write(tmp_path, HEAD + f"nodes:\n- name: n1\n  allocatable: {{cpu: '{text}'}}\n" + TAIL)
    assert load_error(p) == (f"{p}:7: nodes[0].allocatable.cpu: quantity out of range (4,301 digits before the "
                             f"point): a resource amount is an int64 (got '{text[:76]}...)")


def test_a_negative_quantity_of_many_digits_is_negative():
    with pytest.raises(ValueError, match="must not be negative"):
        parse_quantity("-" + BIG)


def test_many_fraction_digits_round_up_as_upstream_rounds_to_the_nano():
    # upstream rounds a quantity up to the nano once its suffix is applied: any amount
    # above zero is at least 1n, so 1 millicore / 1 byte once read as the scheduler reads it
    tiny = "0." + "0" * 100_000 + "1"
    start = time.process_time()
    assert resource_amount("cpu", tiny) == 1
    assert resource_amount("memory", tiny + "Ei") == 1
    assert resource_amount("cpu", "1." + "0" * 200_000) == 1000
    assert time.process_time() - start < 1
    # the first 70 places are kept exactly; a non-zero digit beyond them rounds up there
    assert parse_quantity("1." + "0" * 69 + "1" + "0" * 500) == 1 + Fraction(1, 10**70)
    assert parse_quantity("1." + "0" * 70 + "1") == 1 + Fraction(1, 10**70)
    assert parse_quantity("1." + "0" * 70 + "0" * 30) == 1
    assert parse_quantity("-1." + "0" * 70 + "1") == -1 - Fraction(1, 10**70)
    # what rounding at 70 places cannot change: the amount at the nano under every suffix
    x = "0." + "0" * 50 + "1" * 300
    for suffix in ("", "m", "Ki", "Ei", "e40", "e-40", "E"):
        exact = Fraction("0." + "0" * 50 + "1" * 300) * parse_quantity("1" + suffix)
        assert resource_amount("cpu", x + suffix) == -((-exact * 1000).numerator // (exact * 1000).denominator)


def test_a_huge_exponent_is_out_of_range(tmp_path):
    p = write(tmp_path, HEAD + "nodes:\n- name: n1\n  allocatable: {cpu: 1e999999}\n" + TAIL)
    assert load_error(p) == (f"{p}:7: nodes[0].allocatable.cpu: quantity out of range (exponent 999999): a resource "
                             "amount is an int64 (got '1e999999')")


@pytest.mark.parametrize("kind, shown", [("[ReplicaSet]", "['ReplicaSet']"), ("{a: 1}", "{'a': 1}")])
def test_a_controller_kind_that_is_not_a_string(tmp_path, kind, shown):
    p = write(tmp_path, HEAD + f"nodes: [n1]\npods:\n- {{name: a, node: n1, controller: {{kind: {kind}, name: x}}}}\n"
              + TAIL)
    assert load_error(p) == (f"{p}:7: pods[0].controller.kind: must be one of 'ReplicationController', 'ReplicaSet', "
                             f"'StatefulSet', 'DaemonSet', 'Job' (got {shown})")


def test_an_error_shows_a_huge_value_by_its_size_and_cuts_a_long_message():
    assert short_repr(10**5000) == "<an integer of about 5,000 digits>"
    assert short_repr([1, {"a": 10**5000}]) == "[1, {'a': <an integer of about 5,000 digits>}]"
    assert short_repr("x" * 10**6) == repr("x" * 77)[:77] + "..."
    e = CaseError("m" * 3000, ["a"], value=10**5000)
    assert str(e) == "a: " + "m" * 2000 + "... (1,000 more characters left out) (got <an integer of about 5,000 digits>)"


# ---- sizes after expansion ---------------------------------------------------------------

import kspread.format.limits as limits  # noqa: E402


def test_fifty_entries_of_a_million_replicas_are_refused_before_expansion(tmp_path):
    pods = "".join(f"- {{name: p{i}, replicas: 1000000}}\n" for i in range(50))
    p = write(tmp_path, HEAD + "nodes: [n1]\npods:\n" + pods + TAIL)
    start = time.process_time()
    assert load_error(p) == (f'{p}:7: pods[0].replicas: too large: with this entry the case has 1,000,000 existing '
                             'pods, more than kspread\'s limit of 300,000 (documentation: reference/workflow.md, "Limits")')
    assert time.process_time() - start < 2


def test_zones_naming_fifty_thousand_nodes_are_refused_before_validation(tmp_path):
    zones = "".join(f"  z{z}:\n" + "".join(f"  - n{z}-{i}\n" for i in range(10_000)) for z in range(5))
    p = write(tmp_path, HEAD + "zones:\n" + zones + "pod: {name: new}\nexpect: {unschedulable: false}\n")
    start = time.process_time()
    # the 20,001st node: the first of z2
    assert load_error(p) == (f'{p}:{5 + 1 + 2 * 10_001 + 1}: zones.z2[0]: too large: with this entry the case has '
                             '20,001 nodes, more than kspread\'s limit of 20,000 (documentation: reference/workflow.md, "Limits")')
    assert time.process_time() - start < 3


@pytest.fixture
def small_limits(monkeypatch):
    monkeypatch.setattr(limits, "MAX_NODES", 3)
    monkeypatch.setattr(limits, "MAX_PODS", 5)
    monkeypatch.setattr(limits, "MAX_INCOMING", 4)
    monkeypatch.setattr(limits, "MAX_DEVICES", 4)


def test_limits_count_every_source_up_to_the_limit(tmp_path, small_limits):
    node = "{apiVersion: v1, kind: Node, metadata: {name: n3}}"
    pod = "{apiVersion: v1, kind: Pod, metadata: {name: o}, spec: {nodeName: n1, containers: [{name: c}]}}"
    at_limit = HEAD + (f"nodes: [n1, n2]\nobjects:\n- {node}\n- {pod}\npods:\n- {{name: a, node: n1, replicas: 3}}\n"
                       "- {name: b, node: n2}\nschedule:\n- {name: s, replicas: 3}\n- {name: t}\n"
                       "expect: {placements: {t: n3}}\n")
    res = read_file(write(tmp_path, at_limit))
    case = load_case(res.docs[0])
    assert (len(case.cluster.nodes), len(case.cluster.pods), len(case.incoming)) == (3, 5, 4)


@pytest.mark.parametrize("body, line, field, what", [
    ("nodes: [n1, n2, n3, n4]\npod: {name: new}\n", 5, "nodes[3]", "4 nodes, more than kspread's limit of 3"),
    ("nodes: [n1, n2, n3]\nobjects:\n- {apiVersion: v1, kind: Node, metadata: {name: n4}}\npod: {name: new}\n",
     7, "objects[0]", "4 nodes, more than kspread's limit of 3"),
    ("zones: {a: [n1, n2], b: [n3, n4]}\npod: {name: new}\n", 5, "zones.b[1]",
     "4 nodes, more than kspread's limit of 3"),
    ("nodes: [n1]\nzones: {a: [n1, n2], b: [n3, n4]}\npod: {name: new}\n", 6, "zones.b[1]",
     "4 nodes named in `zones`, more than kspread's limit of 3"),
    ("nodes: [n1]\npods:\n- {name: a, node: n1}\n- {name: b, node: n1, replicas: 5}\npod: {name: new}\n", 8,
     "pods[1].replicas", "6 existing pods, more than kspread's limit of 5"),
    (("nodes: [n1]\npods:\n- {name: a, node: n1, replicas: 5}\nobjects:\n"
      "- {apiVersion: v1, kind: Pod, metadata: {name: o}, spec: {containers: [{name: c}]}}\npod: {name: new}\n"),
     9, "objects[0]", "6 existing pods, more than kspread's limit of 5"),
    ("nodes: [n1]\nschedule:\n- {name: a}\n- {name: b, replicas: 4}\n", 8, "schedule[1].replicas",
     "5 incoming pods, more than kspread's limit of 4"),
    ("nodes:\n- {name: n1, devices: [{driver: d, count: 3}, {driver: e, count: 2}]}\npod: {name: new}\n", 6,
     "nodes[0].devices[1].count", "5 devices, more than kspread's limit of 4"),
    (("nodes:\n- {name: n1, devices: [{driver: d, count: 3}]}\nschedule:\n- addNode: {name: n2, devices: [{driver: d}, "
     "{driver: d}]}\n"), 8, "schedule[0].addNode.devices[1]", "5 devices, more than kspread's limit of 4"),
    (("nodes:\n- {name: n1, devices: [{driver: d, count: 3}]}\nobjects:\n- {apiVersion: resource.k8s.io/v1, "
     "kind: ResourceSlice, metadata: {name: s}, spec: {devices: [{name: a}, {name: b}]}}\npod: {name: new}\n"), 8,
     "objects[0].spec.devices", "5 devices, more than kspread's limit of 4"),
])
def test_the_entry_that_passes_a_limit_is_named(tmp_path, small_limits, body, line, field, what):
    p = write(tmp_path, HEAD + body + "expect: {unschedulable: false}\n")
    assert load_error(p) == f'{p}:{line}: {field}: too large: with this entry the case has {what} (documentation: reference/workflow.md, "Limits")'


def test_a_node_of_a_hundred_billion_devices_is_refused_before_expansion(tmp_path):
    p = write(tmp_path, HEAD.replace("1.30", "1.35") + "deviceClasses: [{name: gpu, driver: d}]\nnodes:\n"
              "- {name: n1, devices: [{driver: d, count: 100000000000}]}\n"
              "schedule:\n- {name: a, devices: {g: {class: gpu}}}\nexpect: {placements: {a: n1}}\n")
    start = time.process_time()
    assert load_error(p) == (f"{p}:7: nodes[0].devices[0].count: too large: with this entry the case has 100,000,000,000 "
                             "devices, more than kspread's limit of 100,000 (documentation: reference/workflow.md, "
                             '"Limits")')
    assert time.process_time() - start < 3


def test_a_device_count_of_thousands_of_digits_is_the_schemas_error(tmp_path):
    p = write(tmp_path, HEAD.replace("1.30", "1.35") + "deviceClasses: [{name: gpu, driver: d}]\nnodes:\n"
              f"- {{name: n1, devices: [{{driver: d, count: {BIG}}}]}}\npod: {{name: new}}\nexpect: {{selected: n1}}\n")
    assert load_error(p) == f"{p}:7: nodes[0].devices[0].count: {HUGE_INT}"


def test_a_limit_is_no_error_an_expect_error_may_meet(tmp_path, small_limits):
    from kspread.workflow.runner import check

    p = write(tmp_path, HEAD + "nodes: [n1, n2, n3, n4]\npod: {name: new}\nexpect: {error: too large}\n")
    v = check(read_file(p).docs[0])
    assert not v.passed


def test_a_long_key_in_a_field_path_is_cut():
    from kspread.errors import format_path

    assert format_path(["pod", "k" * 1000, 2]) == "pod." + "k" * 77 + "...[2]"


@pytest.mark.parametrize("body, line, field", [
    (f"parallelism: {BIG}\n", 3, "parallelism"),
    (f"profiles:\n- plugins: {{score: {{enabled: [{{name: NodeResourcesFit, weight: {BIG}}}]}}}}\n", 4,
     "profiles[0].plugins.score.enabled[0].weight"),
])
def test_an_integer_past_the_limit_in_a_scheduler_configuration(tmp_path, body, line, field):
    from kspread.engine.versions import Version
    from kspread.format.config import load_config

    p = write(tmp_path, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body)
    with pytest.raises(CaseError) as e:
        load_config(p, Version(30, {}))
    assert str(e.value) == f"{p}:{line}: {field}: {HUGE_INT}"


@pytest.mark.parametrize("replicas, message", [
    (BIG, HUGE_INT),
    ("1000001", "1000001 is greater than the maximum of 1000000"),
    ("'3'", "must be an integer"),
])
def test_a_replicas_the_schema_refuses_is_its_error_not_a_size(tmp_path, replicas, message):
    # the size check runs before the schema: it leaves an entry's invalid count to it
    p = write(tmp_path, HEAD + f"nodes: [n1]\npods:\n- {{name: a, node: n1, replicas: {replicas}}}\n" + TAIL)
    assert load_error(p).startswith(f"{p}:7: pods[0].replicas: {message}")


@pytest.mark.parametrize("source, old, line, field", [
    ("cases/gangs/gang.yaml", "policy: {gang: {minCount: 3}}", 27, "objects[0].spec.podGroups[0].policy.gang.minCount"),
    ("cases/gangs/parked-group-at-backoff-head-136.yaml", "        minCount: 3", 126,
     "objects[0].spec.schedulingPolicy.gang.minCount"),
    ("cases/scenarios/ephemeral-volumes.yaml", "allocatable: {count: 1}", 180,
     "objects[0].spec.drivers[0].allocatable.count"),
])
def test_an_int32_field_of_a_newer_kind_past_int32_is_refused(tmp_path, source, old, line, field):
    # the API decodes minCount and CSINode's count as int32: 3,000,000,000 is no such value
    # (it loaded as a gang that never reached its quorum)
    text = Path(source).read_text(encoding="utf-8")
    assert old in text
    p = write(tmp_path, text.replace(old, old.replace("3", "3000000000").replace("count: 1", "count: 3000000000"), 1))
    errors = []
    for doc in read_file(p).docs:
        try:
            load_case(doc)
        except CaseError as e:
            errors.append(str(e))
    want = f"{p}:{line}: {field}: 3000000000 is greater than the maximum of 2147483647"
    assert [e for e in errors if e.startswith(want)], errors
