"""The scheduler's own verdict line (FitError.Error(), the FailedScheduling message) per
version, in ``kspread run --json`` (``actual.verdict``), the failure report and explain."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kspread.engine.diagnosis import fit_error_message, reason_histogram
from kspread.engine.framework.status import Code, Status
from kspread.engine.versions import Version
from kspread.format.case import build_case
from kspread.format.loader import read_file
from kspread.workflow.cli import main as cli_main
from kspread.workflow.explain import explain_cycles
from kspread.workflow.runner import check, explain_run, run_loaded


def _nodes() -> list[dict[str, Any]]:
    taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    return [
        {"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}},
        {"name": "n2", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}},
        {"name": "n3", "allocatable": {"cpu": "8", "memory": "8Gi", "pods": 110}, "taints": taint},
        {"name": "n4", "allocatable": {"cpu": "8", "memory": "8Gi", "pods": 110}, "taints": taint},
    ]


def _case(version: str, pod: dict[str, Any] | None = None, **extra: Any):
    doc: dict[str, Any] = {
        "apiVersion": "kspread/v1", "kind": "Case", "name": "four", "version": version, "nodes": _nodes(),
        "pods": [{"name": "a", "node": "n1", "requests": {"cpu": "2680m"}},
                 {"name": "b", "node": "n2", "requests": {"cpu": "3"}}],
        "pod": pod or {"name": "p", "requests": {"cpu": "1500m"}}, **extra}
    return build_case(doc, "t")


CPU_AND_TAINT = {
    "1.16": "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had taints that the pod didn't tolerate.",
    "1.23": "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had taint {dedicated: gpu}, that the pod "
            "didn't tolerate.",
    "1.24": "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}. "
            "preemption: 0/4 nodes are available: 2 No preemption victims found for incoming "
            "pod, 2 Preemption is not helpful for scheduling.",
    "1.27": "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}. "
            "preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, 2 Preemption "
            "is not helpful for scheduling..",
    "1.30": "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}. "
            "preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, 2 Preemption "
            "is not helpful for scheduling.",
}


@pytest.mark.parametrize("version", sorted(CPU_AND_TAINT))
def test_verdict_line_as_each_version_words_it(version):
    actual = run_loaded(_case(version)).actual
    assert actual["verdict"] == CPU_AND_TAINT[version]


def test_not_eligible_to_preempt_is_the_preemption_part():
    pod = {"name": "p", "requests": {"cpu": "1500m"}, "preemptionPolicy": "Never"}
    assert run_loaded(_case("1.24", pod)).actual["verdict"] == (
        "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}. "
        "preemption: not eligible due to preemptionPolicy=Never.")
    assert run_loaded(_case("1.28", pod)).actual["verdict"] == (
        "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}. "
        "preemption: not eligible due to preemptionPolicy=Never..")


def test_a_pod_that_fits_or_preempts():
    assert "verdict" not in run_loaded(_case("1.30", {"name": "p", "requests": {"cpu": "1"}})).actual
    # preemption nominates a node: the FitError is still the event, without a PostFilter message
    case = _case("1.30", {"name": "p", "requests": {"cpu": "1500m"}, "priority": 100})
    actual = run_loaded(case).actual
    assert actual["preemption"] is not None
    assert actual["verdict"] == ("0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint "
                                 "{dedicated: gpu}.")


def _conflict(version: str):
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]},
                              {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]
    return build_case({"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": version,
                       "profile": {"filter": ["NodeAffinity"]}, "nodes": ["n1", "n2"],
                       "pod": {"name": "p", "affinity": {"nodeAffinity": {
                           "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}},
                      "t")


def test_a_pre_filter_rejection_counted_per_node_then_said_once():
    assert run_loaded(_conflict("1.24")).actual["verdict"] == "0/2 nodes are available: 2 pod affinity terms conflict."
    assert run_loaded(_conflict("1.26")).actual["verdict"] == "0/2 nodes are available: pod affinity terms conflict."


def test_histogram_sorts_as_strings_and_counts_every_reason():
    st = {f"n{i}": Status(Code.UNSCHEDULABLE, ("Insufficient memory",)) for i in range(10)}
    st["x"] = Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"))
    st["y"] = Status(Code.UNSCHEDULABLE, ("Insufficient cpu",))
    assert reason_histogram(st) == ["11 Insufficient memory", "2 Insufficient cpu"]
    assert fit_error_message(Version(30), 12, st) == (
        "0/12 nodes are available: 11 Insufficient memory, 2 Insufficient cpu.")


def test_run_json_report_and_explain_carry_the_verdict(tmp_path, capsys):
    p = tmp_path / "c.yaml"
    p.write_text(
        "apiVersion: kspread/v1\nkind: Case\nname: c\nversion: '1.30'\nprofile: {filter: [NodeUnschedulable]}\n"
        "nodes: [{name: n1, unschedulable: true}]\npod: {name: p}\nexpect: {feasible: [n1]}\n", encoding="utf-8")
    assert cli_main(["run", "--json", str(p)]) == 1
    entry = json.loads(capsys.readouterr().out)[0]
    line = "0/1 nodes are available: 1 node(s) were unschedulable."
    assert entry["actual"]["verdict"] == line
    assert f"\nscheduler's verdict: {line}\n" in check(read_file(p).docs[0]).message
    case = build_case({"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": "1.30",
                       "profile": {"filter": ["NodeUnschedulable"]}, "nodes": [{"name": "n1", "unschedulable": True}],
                       "pod": {"name": "p"}}, "t")
    outcome, cycles = explain_run(case)
    assert explain_cycles(outcome.scheduler, cycles).splitlines()[-4:] == [
        "unschedulable", f"scheduler's verdict: {line}", "what would it take (the nodes closest to fitting first):",
        "  n1: uncordoning, or a toleration of node.kubernetes.io/unschedulable:NoSchedule"]


# ---- reasons with numbers, and what would it take -----------------------------------------

LACKS = """apiVersion: kspread/v1
kind: Case
name: lacks
version: "1.22"
nodes:
- {name: n1, labels: {disktype: hdd}, allocatable: {cpu: "2", memory: 1Gi, pods: 1}}
- {name: n2, labels: {disktype: ssd}, unschedulable: true}
- {name: n3, labels: {disktype: ssd, zone: c}}
- {name: n4, labels: {disktype: ssd, zone: a}}
pods:
- {name: a, node: n1, requests: {memory: 768Mi}}
- {name: w, node: n4, containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}]}]}
pod:
  name: p
  nodeSelector: {disktype: ssd}
  containers:
  - {name: c, resources: {requests: {memory: 512Mi}}, ports: [{containerPort: 80, hostPort: 8080}]}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: zone, operator: In, values: [a, b]}]
  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoExecute}]
expect:
  selected: n1
"""


def _explain_text(tmp_path, text: str) -> str:
    p = tmp_path / "c.yaml"
    p.write_text(text, encoding="utf-8")
    return check(read_file(p).docs[0]).message


def test_rows_carry_the_numbers_and_each_node_what_it_lacks(tmp_path):
    case = build_case(__import__("yaml").safe_load(LACKS), "t")
    outcome, cycles = explain_run(case)
    text = explain_cycles(outcome.scheduler, cycles)
    assert ("NodeResourcesFit                  not run (after NodeAffinity); alone: Unschedulable: Too many pods, "
            "Insufficient memory (1 of 1 pods on the node; requests 512Mi; 256Mi of 1Gi free)") in text
    assert ("NodeAffinity                      UnschedulableAndUnresolvable: node(s) didn't match Pod's node "
            "affinity/selector (nodeSelector disktype=ssd: the node has disktype=hdd; required node affinity not "
            "matched: term 1: zone in (a,b) (the node has no zone label))") in text
    assert "node(s) didn't have free ports for the requested pod ports (host port 8080/TCP in use)" in text
    assert "UnschedulableAndUnresolvable: node(s) were unschedulable (spec.unschedulable is true)" in text
    assert text.split("\n")[-5:] == [
        "what would it take (the nodes closest to fitting first):",
        "  n3: labels matching zone in (a,b) (required node affinity)",
        "  n4: host port 8080/TCP free",
        ("  n2: uncordoning, or a toleration of node.kubernetes.io/unschedulable:NoSchedule, labels matching "
        "zone in (a,b) (required node affinity)"),
        ("  n1: the label disktype=ssd, labels matching zone in (a,b) (required node affinity), room for 1 more "
        "pod, 256Mi more memory"),
    ]


def test_failure_report_says_what_it_would_take_bounded(tmp_path):
    nodes = "\n".join(f"- {{name: n{i}, allocatable: {{cpu: '1', memory: 1Gi, pods: 110}}, "
                      f"taints: [{{key: k, value: v{i}, effect: NoSchedule}}]}}" for i in range(1, 8))
    text = _explain_text(tmp_path, "apiVersion: kspread/v1\nkind: Case\nname: c\nversion: '1.30'\n"
                                   f"nodes:\n{nodes}\npod: {{name: p, requests: {{cpu: 1500m}}}}\n"
                                   "expect: {selected: n1}\n")
    lines = text.split("\n")
    i = lines.index("what would it take (the nodes closest to fitting first):")
    assert lines[i + 1:i + 7] == [
        "  n1: a toleration of k=v1:NoSchedule, 500m more cpu",
        "  n2: a toleration of k=v2:NoSchedule, 500m more cpu",
        "  n3: a toleration of k=v3:NoSchedule, 500m more cpu",
        "  n4: a toleration of k=v4:NoSchedule, 500m more cpu",
        "  n5: a toleration of k=v5:NoSchedule, 500m more cpu",
        "  (2 more node(s) not shown)",
    ]


def test_explain_json_has_run_json_shape_and_each_cycle(tmp_path, capsys):
    p = tmp_path / "c.yaml"
    p.write_text(
        "apiVersion: kspread/v1\nkind: Case\nname: c\nversion: '1.30'\n"
        "profile: {filter: [NodeUnschedulable, NodeResourcesFit]}\n"
        "nodes: [{name: n1, allocatable: {cpu: '2', memory: 1Gi, pods: 10}}, {name: n2, unschedulable: true}]\n"
        "pods: [{name: a, node: n1, requests: {cpu: 1500m}}]\n"
        "pod: {name: p, requests: {cpu: '1'}}\nexpect: {feasible: []}\n", encoding="utf-8")
    assert cli_main(["run", "--json", str(p)]) == 0
    run = json.loads(capsys.readouterr().out)[0]
    assert cli_main(["explain", "--json", str(p)]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert {k: entry[k] for k in ("file", "line", "name", "version", "actual")} == {
        k: run[k] for k in ("file", "line", "name", "version", "actual")}
    [cycle] = entry["cycles"]
    assert cycle["pod"] == "p" and cycle["attempt"] == 1
    assert cycle["nodes"] == [
        {"node": "n1", "verdict": "not feasible", "filters": [
            {"plugin": "NodeUnschedulable", "code": "Success", "ran": True},
            {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reason": "Insufficient cpu",
             "detail": "requests 1; 500m of 2 free", "ran": True}]},
        {"node": "n2", "verdict": "not feasible", "filters": [
            {"plugin": "NodeUnschedulable", "code": "UnschedulableAndUnresolvable",
             "reason": "node(s) were unschedulable", "detail": "spec.unschedulable is true", "ran": True},
            {"plugin": "NodeResourcesFit", "code": "Success", "ran": False}]},
    ]
    assert cycle["verdict"] == entry["actual"]["verdict"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable.")
    assert cycle["whatItTakes"] == [
        {"node": "n1", "needs": ["500m more cpu"]},
        {"node": "n2", "needs": ["uncordoning, or a toleration of node.kubernetes.io/unschedulable:NoSchedule"]}]


def test_spread_constraint_skew_and_missing_label_are_given():
    case = build_case({
        "apiVersion": "kspread/v1", "kind": "Case", "name": "s", "version": "1.30",
        "profile": {"filter": ["PodTopologySpread"]},
        "nodes": [{"name": "n1", "labels": {"zone": "a"}}, {"name": "n2", "labels": {"zone": "b"}}, "n3"],
        "pods": [{"name": "a1", "node": "n1", "labels": {"app": "web"}},
                 {"name": "a2", "node": "n1", "labels": {"app": "web"}}],
        "pod": {"name": "p", "labels": {"app": "web"}, "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "web"}}}]}}, "t")
    _, cycles = explain_run(case)
    assert [(lk.detail, lk.need) for lk in cycles[0].lacks["n1"]] == [
        ("zone=a: 2 matching pod(s), the minimum 0, skew 3 > maxSkew 1", "2 fewer matching pod(s) in zone=a")]
    assert [(lk.detail, lk.need) for lk in cycles[0].lacks["n3"]] == [("no zone label", "the label zone")]
    assert cycles[0].lacks["n2"] == []
