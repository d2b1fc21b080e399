"""Malformed cases fail with file, line, field and the offending value, no traceback."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from kspread.format.loader import read_file
from tests.helpers import verdict, write_case

BASE = """
name: c
profile: {score: [SelectorSpread]}
version: "1.24"
nodes: [n1, n2]
pod: {name: p}
expect: {selected: [n1, n2]}
"""


def _fail(tmp_path, body):
    v = verdict(tmp_path, body)
    assert not v.passed
    return v.message


def test_valid_base_case_passes(tmp_path):
    assert verdict(tmp_path, BASE).passed


def test_bad_yaml_names_file_and_line(tmp_path):
    p = write_case(tmp_path, "name: c\nnodes: [n1, n2\npod: {name: p}\n")
    res = read_file(p)
    assert res.error is None and len(res.docs) == 1  # the broken document fails, as a case
    msg = str(res.docs[0].error)
    assert msg == (f"{p}:5: invalid YAML: while parsing a flow sequence that opened at line 4: "
                   "did not find expected ',' or ']' at line 5")


def test_a_tab_in_the_indentation_is_named(tmp_path):
    """libyaml says "found character that cannot start any token" without naming it, and a tab
    looks like spaces in an editor: the error says it is a tab, at its line. A tab that YAML
    takes as white space (inside a flow mapping) is no error."""
    p = write_case(tmp_path, "name: c\nnodes: [n1]\npod:\n\tname: p\nexpect: {selected: n1}\n")
    msg = str(read_file(p).docs[0].error)
    assert msg == (f"{p}:6: invalid YAML: while scanning for the next token: found character that cannot start "
                   "any token (a tab: YAML indents with spaces, never tabs)")
    assert verdict(tmp_path, "name: c\nnodes: [n1]\npod: {name: p,\tlabels: {a: b}}\nexpect: {selected: n1}\n").passed
    # another character that cannot start a token is not called a tab
    p = write_case(tmp_path, "name: c\nnodes: [n1]\npod: {name: p}\n@x: 1\nexpect: {selected: n1}\n")
    msg = str(read_file(p).docs[0].error)
    assert msg.endswith("found character that cannot start any token"), msg


def test_a_case_without_expect_is_told_how_to_fill_it(tmp_path):
    msg = _fail(tmp_path, "name: c\nnodes: [n1]\npod: {name: p}\n")
    assert msg.endswith("case.yaml:1: missing required field 'expect' (write `expect: {}` and let "
                        "`kspread run --update` or `pytest --kspread-update` fill it)"), msg


def test_unknown_key(tmp_path):
    msg = _fail(tmp_path, BASE + "podz: 1\n")
    assert re.search(r"case\.yaml:9: podz: unknown field 'podz'", msg), msg


def test_unknown_key_nested_in_pod(tmp_path):
    msg = _fail(tmp_path, BASE.replace("pod: {name: p}", "pod: {name: p, lables: {a: b}}"))
    assert "case.yaml:7: pod.lables: unknown field 'lables'" in msg, msg


def test_wrong_type(tmp_path):
    msg = _fail(tmp_path, BASE.replace("nodes: [n1, n2]", "nodes: [n1, n2]\npods: {name: x}"))
    assert "case.yaml:7: pods: must be a list (got {'name': 'x'})" in msg, msg


def test_unquoted_version_is_explained(tmp_path):
    msg = _fail(tmp_path, BASE.replace('version: "1.24"', "version: 1.30"))
    assert ('case.yaml:5: version: must be a quoted string: YAML reads the unquoted 1.30 as the number 1.3; '
            'write version: "1.30"') in msg, msg
    msg = _fail(tmp_path, BASE.replace('version: "1.24"', "version: 1.24"))
    assert 'case.yaml:5: version: must be a quoted string: YAML reads an unquoted 1.24 as a number; write version: "1.24"' in msg, msg


def test_unsupported_version(tmp_path):
    msg = _fail(tmp_path, BASE.replace('"1.24"', '"1.11"'))
    assert 'case.yaml:5: version: unsupported version; kspread supports "1.12" to "1.37"' in msg, msg


def test_bad_selector_operator(tmp_path):
    body = BASE + "owners:\n- kind: ReplicaSet\n  name: rs\n  selector:\n    matchExpressions:\n" \
                  "    - {key: app, operator: Contains, values: [a]}\n"
    msg = _fail(tmp_path, body)
    assert "case.yaml:14: owners[0].selector.matchExpressions[0].operator: must be one of" in msg, msg
    assert "(got 'Contains')" in msg


def test_selector_values_for_exists(tmp_path):
    body = BASE + "owners:\n- kind: ReplicaSet\n  name: rs\n  selector:\n    matchExpressions:\n" \
                  "    - {key: app, operator: Exists, values: [a]}\n"
    msg = _fail(tmp_path, body)
    assert "owners[0].selector.matchExpressions[0].values: may not be specified when `operator` is " \
           "'Exists' or 'DoesNotExist'" in msg, msg


def test_selector_in_needs_values(tmp_path):
    body = BASE + "owners:\n- kind: ReplicaSet\n  name: rs\n  selector:\n    matchExpressions:\n" \
                  "    - {key: app, operator: In}\n"
    msg = _fail(tmp_path, body)
    assert "values: must be specified when `operator` is 'In' or 'NotIn'" in msg, msg


def test_bad_label_key(tmp_path):
    msg = _fail(tmp_path, BASE.replace("pod: {name: p}", "pod: {name: p, labels: {'-bad': x}}"))
    assert "case.yaml:7: pod.labels.-bad: a label key's name part must be" in msg, msg


def test_bad_quantity(tmp_path):
    body = BASE.replace("nodes: [n1, n2]", "nodes:\n- {name: n1, allocatable: {cpu: 2cores}}\n- n2")
    msg = _fail(tmp_path, body)
    assert "case.yaml:7: nodes[0].allocatable.cpu: not a Kubernetes quantity" in msg, msg
    assert "(got '2cores')" in msg


def test_pod_on_unknown_node(tmp_path):
    msg = _fail(tmp_path, BASE + "pods:\n- {name: a, node: n9}\n")
    # the message quotes the node: no "(got 'n9')" echo after it
    assert msg.endswith("case.yaml:10: pods[0].node: pod is bound to unknown node 'n9'"), msg


def test_zone_with_unknown_node(tmp_path):
    msg = _fail(tmp_path, BASE + "zones: {z1: [n1, n7]}\n")
    assert msg.endswith("case.yaml:9: zones.z1[1]: node 'n7' is in zones but not in nodes: add it to nodes "
                        "(or leave nodes out, and `zones` names every node)"), msg


def test_zones_name_the_nodes_of_a_case_without_nodes(tmp_path):
    body = BASE.replace("nodes: [n1, n2]\n", "zones: {b: [n2], a: [n1, n3]}\n")
    body = body.replace("expect: {selected: [n1, n2]}", "expect: {feasible: [n1, n2, n3], selected: [n2, n1, n3]}")
    from kspread.format.loader import load_case
    (doc,) = read_file(write_case(tmp_path, body)).docs
    case = load_case(doc)
    assert [(n.name, n.index, n.labels) for n in case.cluster.nodes] == [
        ("n2", 0, {"kubernetes.io/hostname": "n2", "topology.kubernetes.io/zone": "b",
                   "failure-domain.beta.kubernetes.io/zone": "b"}),
        ("n1", 1, {"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "a",
                   "failure-domain.beta.kubernetes.io/zone": "a"}),
        ("n3", 2, {"kubernetes.io/hostname": "n3", "topology.kubernetes.io/zone": "a",
                   "failure-domain.beta.kubernetes.io/zone": "a"})]
    assert verdict(tmp_path, body).passed
    # a name in zones is validated as a node's name, at its place in zones
    msg = _fail(tmp_path, body.replace("[n2]", "[N_2]"))
    assert "case.yaml:6: zones.b[0]: " in msg, msg


def test_duplicate_node(tmp_path):
    msg = _fail(tmp_path, BASE.replace("nodes: [n1, n2]", "nodes: [n1, n1]"))
    assert "node 'n1' is defined twice" in msg, msg


def test_unknown_node_in_expect(tmp_path):
    msg = _fail(tmp_path, BASE.replace("expect: {selected: [n1, n2]}", "expect: {selected: n3}"))
    assert "expect.selected: unknown node 'n3'" in msg, msg


def test_unknown_plugin(tmp_path):
    msg = _fail(tmp_path, BASE.replace("[SelectorSpread]", "[SelectorSpreed]"))
    assert "case.yaml:4: profile.score[0]: unknown plugin 'SelectorSpreed'" in msg, msg


def test_plugin_not_in_version(tmp_path):
    msg = _fail(tmp_path, BASE.replace('"1.24"', '"1.30"'))
    assert "plugin 'SelectorSpread' does not exist in version 1.30 (it exists in 1.12 to 1.28)" in msg, msg


def test_legacy_name_in_framework_version(tmp_path):
    msg = _fail(tmp_path, BASE.replace("[SelectorSpread]", "[SelectorSpreadPriority]"))
    assert "'SelectorSpreadPriority' is a pre-1.18 predicate/priority name; version 1.24 calls it " \
           "'SelectorSpread'" in msg, msg


def test_unknown_feature_gate(tmp_path):
    msg = _fail(tmp_path, BASE + "featureGates: {NoSuchGate: true}\n")
    assert "featureGates.NoSuchGate: feature gate 'NoSuchGate' is unknown to kspread" in msg, msg


def test_gate_version_does_not_know(tmp_path):
    msg = _fail(tmp_path, BASE.replace('"1.24"', '"1.18"') + "featureGates: {MinDomainsInPodTopologySpread: true}\n")
    assert "version 1.18 does not know feature gate 'MinDomainsInPodTopologySpread'" in msg, msg


def test_locked_gate(tmp_path):
    msg = _fail(tmp_path, BASE + "featureGates: {DefaultPodTopologySpread: false}\n")
    assert "cannot set feature gate DefaultPodTopologySpread to false in 1.24: it is GA and locked" in msg, msg


def test_pod_and_schedule_both(tmp_path):
    msg = _fail(tmp_path, BASE + "schedule: [{name: q}]\n")
    assert "give either `pod` or `schedule`, not both" in msg, msg


def test_no_incoming_pod(tmp_path):
    msg = _fail(tmp_path, BASE.replace("pod: {name: p}\n", ""))
    assert "a case needs `pod` (one incoming pod) or `schedule`" in msg, msg


def test_unknown_priority_class(tmp_path):
    msg = _fail(tmp_path, BASE.replace("pod: {name: p}", "pod: {name: p, priorityClassName: gold}"))
    assert "pod.priorityClassName: no PriorityClass with name gold was found" in msg, msg


def test_raw_object_error_points_into_object(tmp_path):
    body = BASE + """objects:
- apiVersion: v1
  kind: Node
  metadata: {name: n3}
  status:
    allocatable: {cpu: lots}
"""
    msg = _fail(tmp_path, body)
    assert "case.yaml:14: objects[0].status.allocatable.cpu: not a Kubernetes quantity" in msg, msg


def test_expected_error_case_passes_only_with_that_error(tmp_path):
    body = BASE.replace("expect: {selected: [n1, n2]}", "expect: {error: unknown node 'n9'}") + \
        "pods:\n- {name: a, node: n9}\n"
    assert verdict(tmp_path, body).passed
    other = BASE.replace("expect: {selected: [n1, n2]}", "expect: {error: something else}")
    v = verdict(tmp_path, other)
    assert not v.passed and "expected an error containing 'something else'" in v.message


@pytest.mark.parametrize("cmd", ["run", "validate"])
def test_cli_reports_without_traceback(tmp_path, cmd):
    p = write_case(tmp_path, BASE + "podz: 1\n")
    r = subprocess.run([sys.executable, "-m", "kspread", cmd, str(p)], capture_output=True, text=True)
    assert r.returncode == 1
    out = r.stdout + r.stderr
    assert "unknown field 'podz'" in out
    assert "Traceback" not in out


def test_loading_never_runs_code(tmp_path):
    p = write_case(tmp_path, BASE + "description: !!python/object/apply:os.system ['touch pwned']\n")
    res = read_file(p)
    assert res.error is None and len(res.docs) == 1
    assert str(res.docs[0].error) == (
        f"{p}:9: invalid YAML: could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object/apply:os.system'")
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("tsc,msg", [
    ("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}",
     "pod.topologySpreadConstraints[0].minDomains: can only use minDomains if whenUnsatisfiable=DoNotSchedule"),
    ("{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}",
     "pod.topologySpreadConstraints[0].maxSkew: 0 is less than the minimum of 1"),
    ("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [app]}",
     "matchLabelKeys: matchLabelKeys cannot be set when labelSelector is nil"),
    (("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [app],"
      " labelSelector: {matchLabels: {app: a}}}"),
     "matchLabelKeys[0]: key 'app' exists in both matchLabelKeys and labelSelector"),
])
def test_topology_spread_constraint_validation(tmp_path, tsc, msg):
    msg_got = _fail(tmp_path, BASE.replace("pod: {name: p}", f"pod: {{name: p, topologySpreadConstraints: [{tsc}]}}"))
    assert msg in msg_got, msg_got


def test_duplicate_topology_spread_constraint(tmp_path):
    c = "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}"
    got = _fail(tmp_path, BASE.replace("pod: {name: p}", f"pod: {{name: p, topologySpreadConstraints: [{c}, {c}]}}"))
    assert "pod.topologySpreadConstraints[1]: duplicate constraint for {topologyKey: zone, " \
           "whenUnsatisfiable: DoNotSchedule}" in got, got


def test_a_mistyped_metadata_key_of_an_object_is_named_at_its_line(tmp_path):
    # a kind the schema does not list fields of (DeviceTaintRule): the object reader names
    # the mistyped key at its own line, not the object's start as a missing name
    obj = "objects:\n- apiVersion: resource.k8s.io/v1alpha3\n  kind: DeviceTaintRule\n  {}: {{name: r}}\n"
    good = _fail(tmp_path, BASE + obj.format("spec: {}\n  other"))
    start = int(re.search(r":(\d+): objects\[0\]\.metadata\.name: a Kubernetes object needs metadata.name", good)[1])
    msg = _fail(tmp_path, BASE + obj.format("metadatx"))
    assert f":{start + 2}: objects[0].metadatx: unknown field 'metadatx' (did you mean 'metadata'?)" in msg, msg
