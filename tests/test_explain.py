"""Explain tells the cycle as it ran: filter statuses as the cycle saw the cluster
(before its binding or preemption changed it), then the preemption: candidates,
victims, PDB violations, why other nodes are not candidates, and the criterion of
pickOneNodeForPreemption that decided."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from kspread.engine.framework.status import Code, Status
from kspread.engine.model import Pod
from kspread.engine.plugins.defaultpreemption import pick_one_node_steps
from kspread.engine.scheduler import CycleResult, run_case
from kspread.engine.versions import Version
from kspread.format.case import build_case
from kspread.workflow.explain import CycleExplanation, explain_cycle, explain_cycles
from kspread.workflow.runner import explain_run
from tests.helpers import verdict, write_case

FIT = {"filter": ["NodeResourcesFit"], "postFilter": ["DefaultPreemption"]}


def _node(name: str, cpu: str) -> dict:
    return {"name": name, "allocatable": {"cpu": cpu, "memory": "4Gi", "pods": 110}}


def _case(version: str, nodes: list, pods: list, pod: dict | None = None, schedule: list | None = None,
          profile: dict | None = None, **extra: Any):
    doc: dict[str, Any] = {"apiVersion": "kspread/v1", "kind": "Case", "version": version,
                           "profile": profile or FIT, "nodes": nodes, "pods": pods, **extra}
    if schedule is not None:
        doc["schedule"] = schedule
    else:
        doc["pod"] = pod
    return build_case(doc, "t")


def _explain(case) -> str:
    outcome, cycles = explain_run(case)
    return explain_cycles(outcome.scheduler, cycles, header=case.is_sequence)


# ---- explain never contradicts run -------------------------------------------------------


def test_node_run_finds_feasible_is_explained_feasible_with_success():
    # cpu 2 holding 500m, the pod asks 1: it fits. The run binds the pod there, after
    # which the node holds 1500m; explain must show the cycle, not the cluster after it.
    case = _case("1.24", [_node("n1", "2")], [{"name": "a", "node": "n1", "requests": {"cpu": "500m"}}],
                 {"name": "new", "requests": {"cpu": "1"}}, profile={"filter": ["NodeResourcesFit"]})
    _, [r], _ = run_case(case)
    assert r.feasible == ["n1"]
    text = _explain(case)
    assert text.splitlines()[:2] == ["n1: feasible", "  filter NodeResourcesFit                  Success"]
    assert "Insufficient" not in text



def test_filters_after_the_first_rejection_are_shown_as_not_run():
    # RunFilterPlugins stops at the first rejecting plugin: TaintToleration rejects, so
    # NodeResourcesFit (which would reject too) and NodeAffinity (which would pass) never ran
    node = dict(_node("n1", "2"), taints=[{"key": "k", "effect": "NoSchedule"}])
    profile = {"filter": ["NodeUnschedulable", "TaintToleration", "NodeResourcesFit", "NodeAffinity"]}
    case = _case("1.30", [node], [], {"name": "new", "requests": {"cpu": "3"}}, profile=profile)
    assert _explain(case).splitlines()[:5] == [
        "n1: not feasible",
        "  filter NodeUnschedulable                 Success",
        ("         TaintToleration                   UnschedulableAndUnresolvable: "
        "node(s) had untolerated taint {k: } (untolerated: k:NoSchedule)"),
        ("         NodeResourcesFit                  not run (after TaintToleration); alone: "
        "Unschedulable: Insufficient cpu (requests 3; 2 of 2 free)"),
        "                                           (not run after TaintToleration: 1 more filter, passing alone)",
    ]

def test_each_cycle_of_a_sequence_is_explained_as_it_ran():
    # three pods of cpu 1 on a cpu 2 node: the third finds the node full only because
    # the first two were bound before it
    case = _case("1.24", [_node("n1", "2")], [], schedule=[
        {"name": f"p{i}", "requests": {"cpu": "1"}} for i in (1, 2, 3)], profile={"filter": ["NodeResourcesFit"]})
    text = _explain(case)
    assert text.split("\n") == [
        "cycle 1: pod p1",
        "  n1: feasible",
        "    filter NodeResourcesFit                  Success",
        "  selected: n1",
        "cycle 2: pod p2",
        "  n1: feasible",
        "    filter NodeResourcesFit                  Success",
        "  selected: n1",
        "cycle 3: pod p3",
        "  n1: not feasible",
        "    filter NodeResourcesFit                  Unschedulable: Insufficient cpu (requests 1; 0 of 2 free)",
        "  unschedulable",
        "  scheduler's verdict: 0/1 nodes are available: 1 Insufficient cpu.",
        "  what would it take (the nodes closest to fitting first):",
        "    n1: 1 more cpu",
    ]


def test_filter_statuses_are_those_before_any_victim_is_removed():
    case = _case("1.24", [_node("n1", "2"), _node("n2", "2")], [
        {"name": "a", "node": "n1", "priority": 10, "requests": {"cpu": "1500m"}},
        {"name": "b", "node": "n2", "priority": 5, "requests": {"cpu": "1500m"}},
    ], {"name": "new", "priority": 100, "requests": {"cpu": "1"}})
    text = _explain(case)
    assert text.split("\n") == [
        "n1: not feasible",
        "  filter NodeResourcesFit                  Unschedulable: Insufficient cpu (requests 1; 500m of 2 free)",
        "n2: not feasible",
        "  filter NodeResourcesFit                  Unschedulable: Insufficient cpu (requests 1; 500m of 2 free)",
        "preemption (DefaultPreemption): Success",
        "  potential nodes (filter status not UnschedulableAndUnresolvable): 2; candidates found: 2",
        "  n1: candidate, victims [a (priority 10)], PDB violations 0",
        "  n2: candidate, victims [b (priority 5)], PDB violations 0",
        "  node choice (pickOneNodeForPreemption), each criterion keeps the best:",
        "    1. fewest PDB violations: n1 0, n2 0 -> n1, n2",
        "    2. lowest highest-victim priority (victims[0]): n1 10, n2 5 -> n2",
        "  decided by: lowest highest-victim priority (victims[0])",
        "preemption: nominated n2, victims [b]",
    ]


def test_preemptor_retry_in_a_sequence_sees_the_victims_gone():
    case = _case("1.24", [_node("n1", "2")], [{"name": "v", "node": "n1", "priority": 10, "requests": {"cpu": "2"}}],
                 schedule=[{"name": "h", "priority": 100, "requests": {"cpu": "1"}}])
    lines = _explain(case).split("\n")
    assert lines[:3] == ["cycle 1: pod h", "  n1: not feasible",
                         ("    filter NodeResourcesFit                  Unschedulable: Insufficient cpu "
                         "(requests 1; 0 of 2 free)")]
    assert "    n1: candidate, victims [v (priority 10)], PDB violations 0" in lines
    assert "    node choice: n1 is the only candidate" in lines
    i = lines.index("cycle 2: pod h (attempt 2)")
    assert lines[i:] == ["cycle 2: pod h (attempt 2)", "  n1: feasible",
                         "    filter NodeResourcesFit                  Success", "  selected: n1"]


def test_filters_run_with_nominated_pods_as_the_cycle_did():
    # r (priority 200) is nominated to n1 and holds cpu 1 of its 2: with it the pod (cpu 2)
    # does not fit, without it it would
    case = _case("1.29", [_node("n1", "2")], [
        {"name": "r", "priority": 200, "nominatedNode": "n1", "requests": {"cpu": "1"}}],
        {"name": "p", "priority": 100, "requests": {"cpu": "2"}}, profile={"filter": ["NodeResourcesFit"]})
    lines = _explain(case).split("\n")
    assert lines[:3] == ["n1: not feasible",
                         ("  filter NodeResourcesFit                  Unschedulable: Insufficient cpu "
                          "(requests 2; 1 of 2 free)"),
                         "         (filters ran with the pods nominated here: r)"]


def test_a_recomputed_status_that_disagrees_with_the_record_is_reported():
    case = _case("1.24", [_node("n1", "2")], [], {"name": "p", "requests": {"cpu": "1"}},
                 profile={"filter": ["NodeResourcesFit"]})
    outcome, [cx] = explain_run(case)
    forged = CycleExplanation(cx.result, {"n1": [("NodeResourcesFit", Status(Code.UNSCHEDULABLE, ("Insufficient cpu",),
                                                                              "NodeResourcesFit"))]})
    lines = explain_cycle(outcome.scheduler, forged).split("\n")
    assert lines[2].split() == ["kspread", "bug", "the", "cycle", "recorded", "Success", "for", "this", "node,",
                                "but", "NodeResourcesFit", "now", "says", "Unschedulable:", "Insufficient", "cpu"]
    r = CycleResult(cx.result.pod)
    r.statuses = {"n1": Status(Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit")}
    forged = CycleExplanation(r, {"n1": [("NodeResourcesFit", Status(plugin="NodeResourcesFit"))]})
    assert "the cycle recorded NodeResourcesFit Unschedulable: Insufficient cpu, but it now says Success" in \
        explain_cycle(outcome.scheduler, forged)


# ---- preemption: candidates, victims, PDB violations, the deciding criterion --------------

# One cluster per criterion of pickOneNodeForPreemption; each is decided by that criterion.
CRITERIA = {
    "fewest PDB violations": {
        "pods": [{"name": "w", "node": "n1", "labels": {"app": "web"}, "priority": 10, "requests": {"cpu": "2"}},
              {"name": "o", "node": "n2", "priority": 50, "requests": {"cpu": "2"}}],
        "pdbs": [{"name": "web-pdb", "selector": {"matchLabels": {"app": "web"}}, "disruptionsAllowed": 0}],
        "node": "n2",
        "lines": ["  n1: candidate, victims [w (priority 10)], PDB violations 1",
               "  n2: candidate, victims [o (priority 50)], PDB violations 0",
               "    1. fewest PDB violations: n1 1, n2 0 -> n2"]},
    "lowest highest-victim priority (victims[0])": {
        "pods": [{"name": "a", "node": "n1", "priority": 30, "requests": {"cpu": "1"}},
              {"name": "b", "node": "n1", "priority": 30, "requests": {"cpu": "1"}},
              {"name": "c", "node": "n2", "priority": 40, "requests": {"cpu": "2"}}],
        "node": "n1",
        "lines": ["  n1: candidate, victims [a (priority 30), b (priority 30)], PDB violations 0",
               "    2. lowest highest-victim priority (victims[0]): n1 30, n2 40 -> n1"]},
    "smallest sum of victim priorities": {
        "pods": [{"name": "a", "node": "n1", "priority": 30, "requests": {"cpu": "1"}},
              {"name": "b", "node": "n1", "priority": 10, "requests": {"cpu": "1"}},
              {"name": "c", "node": "n2", "priority": 30, "requests": {"cpu": "1"}},
              {"name": "d", "node": "n2", "priority": 20, "requests": {"cpu": "1"}}],
        "node": "n1",
        "lines": ["    2. lowest highest-victim priority (victims[0]): n1 30, n2 30 -> n1, n2",
               "    3. smallest sum of victim priorities: n1 40 + 2x2^31, n2 50 + 2x2^31 -> n1"]},
    "fewest victims": {
        # n2's victims b (10) and c (-2^31) have the int64 sum of n1's single a (10):
        # 10 + 2^31 either way, so the sums tie and the number of victims decides
        "pods": [{"name": "a", "node": "n1", "priority": 10, "requests": {"cpu": "2"}},
              {"name": "b", "node": "n2", "priority": 10, "requests": {"cpu": "1"}},
              {"name": "c", "node": "n2", "priority": -2147483648, "requests": {"cpu": "1"}}],
        "node": "n1",
        "lines": ["    3. smallest sum of victim priorities: n1 10 + 1x2^31, n2 -2147483638 + 2x2^31 -> n1, n2",
               "    4. fewest victims: n1 1, n2 2 -> n1"]},
    "latest start time": {
        "pods": [{"name": "a", "node": "n1", "priority": 10, "startTime": "2024-01-01T01:00:00Z",
               "requests": {"cpu": "2"}},
              {"name": "b", "node": "n2", "priority": 10, "startTime": "2024-01-01T02:00:00Z",
               "requests": {"cpu": "2"}}],
        "node": "n2",
        "lines": ["    4. fewest victims: n1 1, n2 1 -> n1, n2",
               "    5. latest start time: n1 2024-01-01T01:00:00Z, n2 2024-01-01T02:00:00Z -> n2"]},
}


@pytest.mark.parametrize("criterion", list(CRITERIA))
def test_explain_names_the_deciding_criterion(criterion):
    spec = CRITERIA[criterion]
    case = _case("1.29", [_node("n1", "2"), _node("n2", "2")], spec["pods"],
                 {"name": "p", "priority": 100, "requests": {"cpu": "2"}}, pdbs=spec.get("pdbs", []))
    outcome, [cx] = explain_run(case)
    pre = cx.result.preemption
    assert pre.nominated_node == spec["node"] and pre.tied_nodes == [spec["node"]]
    assert pre.decided_by == criterion
    assert [s.criterion for s in pre.pick_steps][-1] == criterion
    lines = explain_cycle(outcome.scheduler, cx).split("\n")
    for line in spec["lines"]:
        assert line in lines
    assert f"  decided by: {criterion}" in lines
    assert lines[-1].startswith(f"preemption: nominated {spec['node']}, victims [")


def test_start_time_criterion_does_not_exist_before_1_15():
    spec = CRITERIA["latest start time"]
    case = _case("1.14", [_node("n1", "2"), _node("n2", "2")], spec["pods"],
                 {"name": "p", "priority": 100, "requests": {"cpu": "2"}})
    outcome, [cx] = explain_run(case)
    lines = explain_cycle(outcome.scheduler, cx).split("\n")
    assert "    4. fewest victims: n1 1, n2 1 -> n1, n2" in lines
    assert not any("latest start time" in line for line in lines)
    assert ("  decided by: none, a tie on every criterion between n1, n2 (upstream takes any; kspread nominates "
            "the first)") in lines


def test_victims_are_shown_in_the_order_criterion_2_reads_them():
    # 1.28: w (PDB-violating, priority 5) is evicted first, so victims[0] is w although
    # h (50) is the highest-priority victim; from 1.29 they are re-sorted
    pods = [{"name": "w", "node": "n1", "labels": {"app": "web"}, "priority": 5, "requests": {"cpu": "1"}},
            {"name": "h", "node": "n1", "priority": 50, "requests": {"cpu": "1"}},
            {"name": "v", "node": "n2", "labels": {"app": "web"}, "priority": 20, "requests": {"cpu": "2"}}]
    pdbs = [{"name": "pdb", "selector": {"matchLabels": {"app": "web"}}, "disruptionsAllowed": 0}]
    for version, shown, value, node in (("1.28", "w (priority 5), h (priority 50)", 5, "n1"),
                                         ("1.29", "h (priority 50), w (priority 5)", 50, "n2")):
        case = _case(version, [_node("n1", "2"), _node("n2", "2")], pods,
                     {"name": "p", "priority": 100, "requests": {"cpu": "2"}}, pdbs=pdbs)
        lines = _explain(case).split("\n")
        assert f"  n1: candidate, victims [{shown}], PDB violations 1" in lines
        assert f"    2. lowest highest-victim priority (victims[0]): n1 {value}, n2 20 -> {node}" in lines


def test_zero_victim_candidate_taken_first_up_to_1_18():
    # the extender keeps only n3 (full with hi); n1's low pod is reprieved, so n1 is a
    # candidate without victims, which 1.18 takes before comparing anything
    profile = {"filter": ["NodeResourcesFit"], "extenders": [{"name": "ext1", "filter": ["n3"]}],
               "postFilter": ["DefaultPreemption"]}
    case = _case("1.18", [_node("n1", "2"), _node("n2", "2"), _node("n3", "2")], [
        {"name": "l1", "node": "n1", "priority": 10, "requests": {"cpu": "1"}},
        {"name": "l2", "node": "n2", "priority": 10, "requests": {"cpu": "2"}},
        {"name": "hi", "node": "n3", "priority": 1000, "requests": {"cpu": "2"}},
    ], {"name": "p", "priority": 100, "requests": {"cpu": "1"}}, profile=profile)
    lines = _explain(case).split("\n")
    assert "  n1: candidate, victims [], PDB violations 0" in lines
    assert "  n2: candidate, victims [l2 (priority 10)], PDB violations 0" in lines
    assert "  n3: not a candidate: Unschedulable: Insufficient cpu" in lines
    assert "    1. a candidate without victims: n1 0, n2 1 -> n1" in lines
    assert "  decided by: a candidate without victims" in lines


def test_why_other_nodes_are_not_candidates():
    profile = {"filter": ["NodeResourcesFit", "NodeUnschedulable"], "postFilter": ["DefaultPreemption"]}
    nodes = [_node("n1", "2"), _node("n2", "2"), {**_node("n3", "2"), "unschedulable": True}]
    case = _case("1.24", nodes, [
        {"name": "v", "node": "n1", "priority": 10, "requests": {"cpu": "2"}},
        {"name": "u", "node": "n2", "priority": 500, "requests": {"cpu": "2"}},
    ], {"name": "p", "priority": 100, "requests": {"cpu": "1"}}, profile=profile)
    lines = _explain(case).split("\n")
    assert lines[lines.index("preemption (DefaultPreemption): Success"):] == [
        "preemption (DefaultPreemption): Success",
        "  potential nodes (filter status not UnschedulableAndUnresolvable): 2; candidates found: 1",
        "  n1: candidate, victims [v (priority 10)], PDB violations 0",
        "  n2: not a candidate: UnschedulableAndUnresolvable: No preemption victims found for incoming pod",
        "  n3: preemption cannot help (UnschedulableAndUnresolvable)",
        "  node choice: n1 is the only candidate",
        "preemption: nominated n1, victims [v]",
    ]


def test_nodes_the_dry_run_did_not_try():
    # minCandidateNodesAbsolute 1: the dry run stops at the first non-violating candidate
    profile = {**FIT, "pluginConfig": {"DefaultPreemption": {"minCandidateNodesPercentage": 0,
                                                              "minCandidateNodesAbsolute": 1}}}
    case = _case("1.24", [_node("n1", "2"), _node("n2", "2")], [
        {"name": "v1", "node": "n1", "priority": 10, "requests": {"cpu": "2"}},
        {"name": "v2", "node": "n2", "priority": 10, "requests": {"cpu": "2"}},
    ], {"name": "p", "priority": 100, "requests": {"cpu": "1"}}, profile=profile)
    lines = _explain(case).split("\n")
    assert ("  potential nodes (filter status not UnschedulableAndUnresolvable): 2; candidates found: 1 "
            "(the dry run keeps up to 1 of each kind)") in lines
    assert "  n2: not tried: the dry run stopped once it held enough candidates" in lines


def test_not_eligible_preemption_says_why():
    case = _case("1.24", [_node("n1", "2")], [{"name": "v", "node": "n1", "priority": 10, "requests": {"cpu": "2"}}],
                 {"name": "p", "priority": 100, "preemptionPolicy": "Never", "requests": {"cpu": "1"}})
    lines = _explain(case).split("\n")
    assert lines[-5:] == ["preemption (DefaultPreemption): Unschedulable: not eligible due to preemptionPolicy=Never.",
                          "unschedulable",
                          ("scheduler's verdict: 0/1 nodes are available: 1 Insufficient cpu. "
                           "preemption: not eligible due to preemptionPolicy=Never."),
                          "what would it take (the nodes closest to fitting first):",
                          "  n1: 1 more cpu"]


def test_pick_steps_do_not_change_the_choice():
    def pods(*prios: int) -> list[Pod]:
        return [Pod(f"x{i}", priority=pr, start_time=float(i)) for i, pr in enumerate(prios)]

    nodes, steps = pick_one_node_steps({"a": (pods(30, 10), 0), "b": (pods(30, 20), 0), "c": (pods(5), 1)},
                                       Version(29))
    assert nodes == ["a"]
    assert [(s.criterion, s.kept) for s in steps] == [
        ("fewest PDB violations", ["a", "b"]),
        ("lowest highest-victim priority (victims[0])", ["a", "b"]),
        ("smallest sum of victim priorities", ["a"]),
    ]
    assert steps[0].values == {"a": 0, "b": 0, "c": 1}
    assert steps[2].values == {"a": 40 + 2 * 2**31, "b": 50 + 2 * 2**31}


# ---- the CLI and the failure report ---------------------------------------------------------

FAILING = """
name: wrong-node
version: "1.24"
profile: {filter: [NodeResourcesFit], postFilter: [DefaultPreemption]}
nodes:
- {name: n1, allocatable: {cpu: "2", memory: 4Gi, pods: 10}}
- {name: n2, allocatable: {cpu: "2", memory: 4Gi, pods: 10}}
pods:
- {name: a, node: n1, requests: {cpu: 1500m}, priority: 10}
- {name: b, node: n2, requests: {cpu: 1500m}, priority: 5}
pod: {name: new, requests: {cpu: "1"}, priority: 100}
expect:
  preemption: {node: n1, victims: [a]}
"""


def test_failure_report_explains_the_preemption(tmp_path):
    v = verdict(tmp_path, FAILING, explain="full")
    assert not v.passed
    report = v.message.split("\n")
    # the difference table's header says what its rows are
    assert report[1:5] == ["preemption:", "  field    expected  actual", "  node     n1        n2",
                           "  victims  [a]       [b]"]
    i = report.index("explain (nodes that differ):")
    assert report[i:] == [
        "explain (nodes that differ):",
        "n1: not feasible",
        "  filter NodeResourcesFit                  Unschedulable: Insufficient cpu (requests 1; 500m of 2 free)",
        "n2: not feasible",
        "  filter NodeResourcesFit                  Unschedulable: Insufficient cpu (requests 1; 500m of 2 free)",
        "preemption (DefaultPreemption): Success",
        "  potential nodes (filter status not UnschedulableAndUnresolvable): 2; candidates found: 2",
        "  n1: candidate, victims [a (priority 10)], PDB violations 0",
        "  n2: candidate, victims [b (priority 5)], PDB violations 0",
        "  node choice (pickOneNodeForPreemption), each criterion keeps the best:",
        "    1. fewest PDB violations: n1 0, n2 0 -> n1, n2",
        "    2. lowest highest-victim priority (victims[0]): n1 10, n2 5 -> n2",
        "  decided by: lowest highest-victim priority (victims[0])",
        "preemption: nominated n2, victims [b]",
    ]


def test_failure_report_of_a_feasible_node_says_success(tmp_path):
    v = verdict(tmp_path, """
        version: "1.24"
        profile: {filter: [NodeResourcesFit]}
        nodes:
        - {name: n1, allocatable: {cpu: "2", memory: 4Gi, pods: 10}}
        pods:
        - {name: a, node: n1, requests: {cpu: 500m}}
        pod: {name: new, requests: {cpu: "1"}}
        expect:
          filter: {n1: Unschedulable}
        """, explain="full")
    assert not v.passed
    tail = v.message.split("explain (nodes that differ):\n")[1].split("\n")
    assert tail == ["n1: feasible", "  filter NodeResourcesFit                  Success", "selected: n1"]


def test_failure_report_of_a_sequence_explains_each_cycle(tmp_path):
    v = verdict(tmp_path, """
        version: "1.24"
        profile: {filter: [NodeResourcesFit], postFilter: [DefaultPreemption]}
        nodes:
        - {name: n1, allocatable: {cpu: "2", memory: 4Gi, pods: 10}}
        pods:
        - {name: v, node: n1, requests: {cpu: "2"}, priority: 10}
        schedule:
        - {name: h, priority: 100, requests: {cpu: "1"}}
        expect:
          placements: {h: null}
        """, explain="full")
    assert not v.passed
    tail = v.message.split("explain (nodes that differ):\n")[1].split("\n")
    assert tail[0] == "cycle 1: pod h"
    assert "  preemption: nominated n1, victims [v]" in tail
    assert tail[tail.index("cycle 2: pod h (attempt 2)"):] == [
        "cycle 2: pod h (attempt 2)", "  n1: feasible", "    filter NodeResourcesFit                  Success", "  selected: n1"]


def test_explain_command_shows_the_preemption(tmp_path):
    p = write_case(tmp_path, FAILING)
    r = subprocess.run([sys.executable, "-m", "kspread", "explain", "--verbose", str(p)], capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "    n2: candidate, victims [b (priority 5)], PDB violations 0\n" in r.stdout
    assert "    decided by: lowest highest-victim priority (victims[0])\n" in r.stdout
    assert ("  n1: not feasible\n    filter NodeResourcesFit                  Unschedulable: Insufficient cpu "
            "(requests 1; 500m of 2 free)\n") in r.stdout


def test_pytest_failure_report_explains_the_preemption(pytester):
    pytester.makefile(".yaml", cases="apiVersion: kspread/v1\nkind: Case\n" + FAILING.lstrip("\n"))
    result = pytester.runpytest("-q", "--kspread-explain=full")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "explain (nodes that differ):",
        "n1: not feasible",
        "  filter NodeResourcesFit                  Unschedulable: Insufficient cpu (requests 1; 500m of 2 free)",
        "preemption (DefaultPreemption): Success",
        "  n1: candidate, victims [a (priority 10)], PDB violations 0",
        "  n2: candidate, victims [b (priority 5)], PDB violations 0",
        "  decided by: lowest highest-victim priority (victims[0])",
        "preemption: nominated n2, victims [b]",
    ])


def test_failure_report_says_when_the_rerun_differs(tmp_path):
    from kspread.workflow.runner import failure_explanation

    v = verdict(tmp_path, FAILING)
    outcome = v.outcome
    outcome.actual = {**outcome.actual, "preemption": {"node": "n1", "victims": ["a"]}}
    outcome.explained = None  # as for a sequence: the report re-runs the case
    text = failure_explanation(v.case, outcome, ["n1"])
    assert text.split("\n")[1] == ("kspread bug: re-running the case for explain gave other results than the run; "
                                   "the explanation below is of the re-run")
    assert "kspread bug" not in failure_explanation(v.case, verdict(tmp_path, FAILING).outcome, ["n1"])


# ---- a failure report of a big cluster: from the run itself, bounded ----------------------------------


def _count_runs(monkeypatch) -> list[int]:
    import kspread.workflow.runner as runner

    runs: list[int] = []
    real = runner.run_case

    def counting(*a: Any, **kw: Any):
        runs.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(runner, "run_case", counting)
    return runs


def test_failure_report_of_one_pod_explains_the_run_without_running_it_again(tmp_path, monkeypatch):
    runs = _count_runs(monkeypatch)
    v = verdict(tmp_path, FAILING, explain="full")
    assert not v.passed and len(runs) == 1
    assert v.outcome.explained is not None and [cx.result for cx in v.outcome.explained] == v.outcome.cycles
    # the filters as the cycle saw the cluster (before the preemption removed b from n2)
    assert ("n2: not feasible\n  filter NodeResourcesFit                  Unschedulable: Insufficient cpu "
            "(requests 1; 500m of 2 free)\n") in v.message
    assert "kspread bug" not in v.message


def test_failure_report_of_a_sequence_runs_it_again(tmp_path, monkeypatch):
    runs = _count_runs(monkeypatch)
    v = verdict(tmp_path, """
        version: "1.24"
        profile: {filter: [NodeResourcesFit]}
        nodes: [{name: n1, allocatable: {cpu: "2", memory: 4Gi, pods: 10}}]
        schedule: [{name: h, requests: {cpu: "1"}}]
        expect:
          placements: {h: null}
        """, explain="full")
    assert not v.passed and len(runs) == 2 and v.outcome.explained is None
    assert v.message.split("explain (nodes that differ):\n")[1].split("\n") == [
        "cycle 1: pod h", "  n1: feasible", "    filter NodeResourcesFit                  Success", "  selected: n1"]


def _wide(tmp_path, n: int, expect: str, explain: str = "short"):
    nodes = "\n".join(f"- {{name: n{i}, allocatable: {{cpu: \"{1 + i % 2}\", memory: 4Gi, pods: 10}}}}"
                      for i in range(n))
    return verdict(tmp_path, f"""
version: "1.24"
profile: {{filter: [NodeResourcesFit], score: [NodeResourcesFit]}}
nodes:
{nodes}
pod: {{name: new, requests: {{cpu: 500m, memory: 1Gi}}}}
expect:
{expect}
""", explain=explain)


def test_failure_report_of_many_differing_nodes_is_bounded_and_counts_them(tmp_path):
    totals = "\n".join(f"    n{i}: 0" for i in range(25))
    v = _wide(tmp_path, 25, f"  totals:\n{totals}")
    lines = v.message.split("\n")
    assert lines[1:4] == ["totals:", "  node  expected  actual", "  n0    0         62"]
    assert lines[3 + 19] == "  n19   0         75"
    assert lines[3 + 20] == "  ... and 5 more nodes (25 differ)"
    assert "in all: 25 values changed" in lines
    i = lines.index("explain (nodes that differ: the first 10 of 25):")
    # (cpu 50 + memory 75) / 2 = 62 on 1 cpu, 75 on 2; the 12 nodes with 2 cpus tie for the top total: the first
    # 10 are named, the rest counted; of those 12, the 5 explained are marked
    assert lines[i + 1:] == [
        "   node  NodeResourcesFit  total",
        *(f"{'*' if k % 2 else ' '}  n{k}                  {75 if k % 2 else 62}     {75 if k % 2 else 62}"
          for k in range(10)),
        "(* selected)",
        "selected: n1, n3, n5, n7, n9, n11, n13, n15, n17, n19, ... (2 more)",
    ]
    # --verbose (full): the same nodes, each in detail
    lines = _wide(tmp_path, 25, f"  totals:\n{totals}", explain="full").message.split("\n")
    i = lines.index("explain (nodes that differ: the first 10 of 25):")
    explained = [line.split(":")[0] for line in lines[i + 1:] if line and not line.startswith(" ")]
    assert explained == [f"n{k}" for k in range(10)] + ["selected"]


def test_failure_report_shows_a_long_list_in_a_cell_bounded(tmp_path):
    v = _wide(tmp_path, 50, "  selected: n0")
    ties = ", ".join(f"n{i}" for i in range(1, 40, 2))
    # the cell folds to keep the table within 80 columns
    assert v.message.split("\n")[1:5] == [
        "selected:",
        "  expected  actual",
        "  n0        [n1, n3, n5, n7, n9, n11, n13, n15, n17, n19, n21, n23, n25, n27,",
        "            n29, n31, n33, n35, n37, n39, ... and 5 more (25 in all)]",
    ]
    assert ties in v.message.replace(",\n            ", ", ")
    assert "explain (nodes that differ: the first 10 of 26):" in v.message


def test_compare_gives_deepdiff_only_the_rows_that_differ(monkeypatch):
    import deepdiff

    from kspread.workflow.runner import compare, deepdiff_summary

    seen: list[tuple] = []
    real = deepdiff.DeepDiff

    def recording(a: Any, b: Any, **kw: Any):
        seen.append((a, b))
        return real(a, b, **kw)

    monkeypatch.setattr(deepdiff, "DeepDiff", recording)
    totals = {f"n{i}": i for i in range(1000)}
    expect = {"totals": {**totals, "n7": 8, "n9": 9.0}, "scores": {"P": {"n1": 1, "n2": 5}}, "selected": "n1"}
    actual = {"totals": totals, "scores": {"P": {"n1": 1, "n2": 2}}, "selected": "n1"}
    [scores, tot] = compare(expect, actual)
    assert (scores.key, scores.rows) == ("scores", [("P n2", 5, 2)])
    # 9.0 is not 9: a type change, as deepdiff reports it over the whole mapping
    assert (tot.key, tot.rows) == ("totals", [("n7", 8, 7), ("n9", 9.0, 9)])
    assert seen[-1] == ({"totals": {"n7": 8, "n9": 9.0}, "scores": {"P": {"n2": 5}}},
                        {"totals": {"n7": 7, "n9": 9}, "scores": {"P": {"n2": 2}}})
    assert deepdiff_summary(expect, actual) == "1 value changed type, 2 values changed"
    assert seen[-1][0] == {"totals": {"n7": 8, "n9": 9.0}, "scores": {"P": {"n2": 5}}}


# ---- the score table ----------------------------------------------------------------------------------


def test_score_table_mappings_are_made_once():
    import numpy as np

    from kspread.engine.framework.runtime import ScoreTable

    t = ScoreTable(["n1", "n2"])
    t.add("A", np.array([1, 2]), np.array([10, 20]), np.array([20, 40]))
    assert t.raw is t.raw and t.weighted == {"A": {"n1": 20, "n2": 40}}
    t.add("B", np.array([3, 4]), np.array([30, 40]), np.array([30, 40]))
    assert t.normalized == {"A": {"n1": 10, "n2": 20}, "B": {"n1": 30, "n2": 40}}


MANY = """
version: "1.30"
nodes:
- {name: node-a, allocatable: {cpu: "2", memory: 4Gi, pods: 10}}
- {name: node-b, allocatable: {cpu: "4", memory: 8Gi, pods: 10}}
- {name: node-c, allocatable: {cpu: "1", memory: 4Gi, pods: 10}, taints: [{key: k, value: v, effect: NoSchedule}]}
- {name: node-d, allocatable: {cpu: "500m", memory: 4Gi, pods: 10}}
pod: {name: new, requests: {cpu: "1", memory: 1Gi}}
expect:
  filter: {node-d: Success}
"""


def test_compact_explain_is_one_row_per_node_within_80_columns(tmp_path):
    """The default: the scored nodes with each plugin's weighted score and the total
    (the names abbreviated, with a legend, where they would not fit), then the others
    with the first plugin that rejected them; the node that differs first."""
    from kspread.format.loader import load_case, read_file
    from kspread.workflow.explain import explain_compact

    case = load_case(read_file(write_case(tmp_path, MANY)).docs[0])
    outcome, cycles = explain_run(case)
    text = explain_compact(outcome.scheduler, cycles, first=["node-d"], width=80)
    assert text.split("\n") == [
        "   node     TT  NRF  NRBA  IL  total",
        "*  node-b  300   81    93   0    474",
        "   node-a  300   62    87   0    449",
        "(TT: TaintToleration, NRF: NodeResourcesFit, NRBA:",
        "NodeResourcesBalancedAllocation, IL: ImageLocality)",
        "   node    not scored",
        "   node-d  NodeResourcesFit: Unschedulable: Insufficient cpu (requests 1; 500m",
        "           of 500m free)",
        "   node-c  TaintToleration: UnschedulableAndUnresolvable: node(s) had",
        "           untolerated taint {k: v} (untolerated: k=v:NoSchedule)",
        "(* selected)",
        "selected: node-b",
    ]
    assert max(len(line) for line in text.split("\n")) <= 80
    # wide enough for the full names: no legend
    wide = explain_compact(outcome.scheduler, cycles, width=120).split("\n")
    assert wide[0] == ("   node    TaintToleration  NodeResourcesFit  NodeResourcesBalancedAllocation  ImageLocality  "
                       "total")
    assert not any(line.startswith("(TT") for line in wide)


def test_explain_command_is_compact_by_default_and_detailed_with_verbose(tmp_path):
    p = write_case(tmp_path, MANY)
    r = subprocess.run([sys.executable, "-m", "kspread", "explain", str(p)], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    # the node the expectation names (filter: node-d) first among the unscored
    assert lines[6:11] == [
        "     node    not scored",
        "     node-d  NodeResourcesFit: Unschedulable: Insufficient cpu (requests 1; 500m",
        "             of 500m free)",
        "     node-c  TaintToleration: UnschedulableAndUnresolvable: node(s) had",
        "             untolerated taint {k: v} (untolerated: k=v:NoSchedule)",
    ]
    assert max(len(line) for line in lines[1:]) <= 80  # (the first names the case file)
    r = subprocess.run([sys.executable, "-m", "kspread", "explain", "--verbose", str(p)], capture_output=True,
                       text=True, check=False)
    assert "  node-d: not feasible\n    filter NodeUnschedulable                 Success\n" in r.stdout
    assert ("           NodeResourcesFit                  Unschedulable: Insufficient cpu (requests 1; 500m of "
            "500m free)\n") in r.stdout


def test_compact_data_gives_the_compact_rows_as_data(tmp_path):
    # the rows the compact table is drawn from (explain --json gives the full record: see
    # test_explain_json_has_run_json_shape_and_each_cycle)
    from kspread.format.loader import load_case, read_file
    from kspread.workflow.explain import compact_data

    case = load_case(read_file(write_case(tmp_path, MANY)).docs[0])
    outcome, cycles = explain_run(case)
    [cx] = cycles
    cycle = compact_data(outcome.scheduler, cx, first=["node-d"])
    assert cycle["scores"] == ["TaintToleration", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality"]
    # the node that differs from the expectation (filter: node-d) first
    assert cycle["nodes"] == [
        {"node": "node-d", "marked": False,
         "reason": "NodeResourcesFit: Unschedulable: Insufficient cpu (requests 1; 500m of 500m free)"},
        # then the scored nodes, highest total first
        {"node": "node-b", "marked": True, "total": 474,
         "scores": {"TaintToleration": 300, "NodeResourcesFit": 81, "NodeResourcesBalancedAllocation": 93,
                    "ImageLocality": 0}},
        {"node": "node-a", "marked": False, "total": 449,
         "scores": {"TaintToleration": 300, "NodeResourcesFit": 62, "NodeResourcesBalancedAllocation": 87,
                    "ImageLocality": 0}},
        {"node": "node-c", "marked": False,
         "reason": ("TaintToleration: UnschedulableAndUnresolvable: node(s) had untolerated taint {k: v} "
                    "(untolerated: k=v:NoSchedule)")},
    ]
    assert {k: cycle[k] for k in ("pod", "attempt", "marked", "selected", "preemption", "error")} == {
        "pod": "new", "attempt": 1, "marked": "selected", "selected": ["node-b"], "preemption": None, "error": None}


def test_explain_sorts_by_total_and_takes_top_and_node_filters(tmp_path):
    """50 nodes with long names: the winners first, --top N rows each and the rest counted,
    --node picks nodes, and a node's name is never folded."""
    long = "node-with-a-rather-long-name-{:02d}.eu-west-1.compute.internal"
    nodes = "\n".join(f"- {{name: {long.format(i)}, allocatable: {{cpu: '{2 + i % 5}', memory: 8Gi, pods: 110}}}}"
                      for i in range(50))
    p = tmp_path / "big.yaml"
    p.write_text(f"apiVersion: kspread/v1\nkind: Case\nname: big\nversion: \"1.35\"\nnodes:\n{nodes}\n"
                 f"pod: {{name: p, requests: {{cpu: '3'}}}}\nexpect: {{selected: {long.format(4)}}}\n")

    def explain(*args):
        r = subprocess.run([sys.executable, "-m", "kspread", "explain", str(p), *args], capture_output=True,
                           text=True, check=False)
        return r.returncode, r.stdout + r.stderr

    rc, out = explain("--top", "3")
    assert rc == 0, out
    lines = out.split("\n")
    rows = [line for line in lines if "compute.internal  " in line]
    # the scored nodes: highest total first (node 4, 9, 14, ... have 7 cpu free of 7), three of them
    assert [r.split()[1] for r in rows[:3]] == [long.format(i) for i in (4, 9, 14)]
    assert all(r.startswith("  *  ") for r in rows[:3])
    assert "     ... and 37 more scored node(s)" in lines
    assert "     ... and 7 more node(s) not scored" in lines
    assert all(long.format(i) in out for i in (0, 5, 10))  # unscored rows, whole
    rc, out = explain("--node", long.format(0), "--node", long.format(9))
    assert rc == 0 and long.format(9) in out and long.format(0) in out and long.format(4) + "  " not in out
    rc, out = explain("--node", "nope")
    assert rc == 4 and "case 'big' has no node 'nope' (--node)" in out  # a usage error
    rc, out = explain("--top", "0")
    assert rc == 4 and "not a positive whole number: '0'" in out


ERROR_CASE = """apiVersion: kspread/v1
kind: Case
name: cel-runtime-error
version: "1.35"
deviceClasses: [{name: gpu, driver: gpu.example.com}]
nodes:
- {name: n1, devices: [{driver: gpu.example.com, name: gpu, count: 1}]}
- {name: n2, devices: [{driver: gpu.example.com, name: gpu, count: 1, capacity: {memory: 40Gi}}]}
pod:
  name: p
  devices: {g: {class: gpu, selector: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'}}
expect: {selected: n2}
"""


def test_a_node_the_cycles_error_kept_from_filtering_is_not_called_infeasible(tmp_path, capsys, monkeypatch):
    """n1's device has no memory capacity: the selector's runtime error is DynamicResources'
    Error status at n1, which ends the cycle before n2 (which every filter would pass) is
    filtered. Explain says so of n2 in each form, rather than "not feasible"."""
    import json

    from kspread.workflow.cli import main as cli_main
    from kspread.workflow.explain import NOT_FILTERED

    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "c.yaml").write_text(ERROR_CASE, encoding="utf-8")
    assert cli_main(["explain", str(tmp_path / "c.yaml")]) == 0
    out = capsys.readouterr().out
    assert f"n2    {NOT_FILTERED}\n" in out and "n1    DynamicResources: Error: " in out
    assert cli_main(["explain", "-v", str(tmp_path / "c.yaml")]) == 0
    out = capsys.readouterr().out
    assert "  n1: not feasible\n" in out and f"  n2: {NOT_FILTERED}\n" in out
    assert cli_main(["explain", "--json", str(tmp_path / "c.yaml")]) == 0
    nodes = json.loads(capsys.readouterr().out)[0]["cycles"][0]["nodes"]
    assert [(n["node"], n["verdict"]) for n in nodes] == [("n1", "not feasible"), ("n2", NOT_FILTERED)]
    # n1's filters ran up to its Error; none ran on n2
    assert [f["ran"] for f in nodes[0]["filters"]] == [True] * len(nodes[0]["filters"])
    assert nodes[1]["filters"] and not any(f["ran"] for f in nodes[1]["filters"])
