"""Ties, visibly (issue 18): inside a sequence kspread takes the first tied node in node
order and marks the placement as a tie wherever results are reported; an expectation may
name any of several preemption candidates tied on every criterion."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from kspread.format.case import build_case
from kspread.workflow.explain import explain_cycles
from kspread.workflow.runner import explain_run, run_loaded
from tests.helpers import HEADER, verdict

TWO_NODES = """
name: t
version: "1.35"
profile: {filter: [NodeResourcesFit], score: [NodeResourcesFit]}
nodes: [n1, n2, {name: n3, allocatable: {cpu: "1", memory: 1Gi, pods: 110}}]
schedule: [{name: a}, {name: b, requests: {cpu: "2"}}]
"""


def _doc(text: str) -> dict:
    import yaml

    return yaml.safe_load(text)


def test_a_placement_taken_from_a_tie_is_reported_with_the_tied_nodes():
    out = run_loaded(build_case(_doc(TWO_NODES), "t"))
    # a: n1 and n2 (unlimited) score the same, n3 (1 cpu) less; b fits n1 and n2 only,
    # which still score the same (a's 100m is nothing to an unlimited node)
    assert out.actual["placements"] == {"a": "n1", "b": "n1"}
    assert out.actual["ties"] == {"a": {"count": 2, "nodes": ["n1", "n2"]}, "b": {"count": 2, "nodes": ["n1", "n2"]}}


def test_ties_in_explain_and_in_the_failure_report(tmp_path):
    case = build_case(_doc(TWO_NODES), "t")
    outcome, cycles = explain_run(case)
    text = explain_cycles(outcome.scheduler, cycles, header=True)
    assert ("    (a tie: the sequence binds n1, the first pop of upstream's heap of scores over the nodes in "
            "search order; upstream's filter workers may find them in another order, and pop another)") in text
    at134 = build_case({**_doc(TWO_NODES), "version": "1.34"}, "t")
    outcome, cycles = explain_run(at134)
    text = explain_cycles(outcome.scheduler, cycles, header=True)
    assert "    (a tie: the sequence binds n1, the first in node order; upstream picks any of them)" in text
    v = verdict(tmp_path, TWO_NODES + "expect: {placements: {a: n2}}\n")
    assert not v.passed
    assert ("(placed by a tie, the first tied node in node order taken (from 1.35 the first pop of upstream's heap of "
            "scores; upstream may pick another): a from n1, n2)"
            in v.message)


def test_ties_in_json(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(HEADER + TWO_NODES + "expect: {placements: {a: n1}}\n")
    res = subprocess.run([sys.executable, "-m", "kspread", "run", "--json", str(p)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    [entry] = json.loads(res.stdout)
    assert entry["actual"]["ties"]["a"] == {"count": 2, "nodes": ["n1", "n2"]}
    assert entry["actual"]["attempts"] == {"a": 1, "b": 1}


PREEMPTION_TIE = """
name: t
version: "1.35"
profile: {filter: [NodeResourcesFit], postFilter: [DefaultPreemption]}
nodes:
- {name: n1, allocatable: {cpu: "1", memory: 1Gi, pods: 110}}
- {name: n2, allocatable: {cpu: "1", memory: 1Gi, pods: 110}}
pods:
- {name: v1, node: n1, priority: 1, requests: {cpu: "1"}, startTime: "2024-01-01T00:00:00Z"}
- {name: v2, node: n2, priority: 1, requests: {cpu: "1"}, startTime: "2024-01-01T00:00:00Z"}
pod: {name: p, priority: 10, requests: {cpu: "1"}}
"""


def test_an_expectation_may_name_any_tied_candidate_with_its_victims(tmp_path):
    out = run_loaded(build_case(_doc(PREEMPTION_TIE), "t"))
    assert out.actual["preemption"] == {"node": ["n1", "n2"], "victims": ["v1"]}
    for expect in ("{preemption: {node: n2, victims: [v2]}}", "{preemption: {node: n1, victims: [v1]}}",
                   "{preemption: {victims: [v2]}}", "{preemption: {node: [n1, n2]}}"):
        assert verdict(tmp_path, PREEMPTION_TIE + f"expect: {expect}\n").passed, expect
    for expect in ("{preemption: {node: n2, victims: [v1]}}", "{preemption: {victims: [v1, v2]}}"):
        assert not verdict(tmp_path, PREEMPTION_TIE + f"expect: {expect}\n").passed, expect


def test_a_preemptor_nominated_by_a_tie_keeps_the_mark_when_bound_there():
    doc = _doc(PREEMPTION_TIE)
    doc["schedule"] = [doc.pop("pod")]
    out = run_loaded(build_case(doc, "t"))
    assert out.actual["placements"] == {"p": "n1"}
    assert out.actual["attempts"] == {"p": 2}
    assert out.actual["ties"] == {"p": {"count": 2, "nodes": ["n1", "n2"]}}


def test_a_tie_of_most_nodes_is_kept_as_a_bit_per_node():
    """Issue 19: a pod where most nodes tie keeps a bit per snapshot node until reported,
    not an array of positions (some 30 KB per pod at 5,000 nodes), and is reported in
    node order."""
    nodes = [f"n{i}" for i in range(40)]
    doc = {"name": "t", "version": "1.35", "profile": {"filter": ["NodeResourcesFit"], "score": ["NodeResourcesFit"]},
           "nodes": nodes, "schedule": [{"name": "a"}, {"name": "b"}]}
    out = run_loaded(build_case(doc, "t"))
    sched = out.scheduler
    assert sched.ties["a"].dtype.name == "uint8" and sched.ties["a"].nbytes == 5
    first = {"count": 40, "nodes": [f"n{i}" for i in range(10)]}
    assert out.actual["ties"] == {"a": first, "b": first}
    assert out.actual["placements"] == {"a": "n0", "b": "n0"}
    assert sched.tie_summary("a", None) == {"count": 40, "nodes": [f"n{i}" for i in range(40)]}


def test_reports_name_the_first_tied_nodes_and_their_count_all_on_request(tmp_path):
    """Issue 31: a tie is reported as its count and its first 10 nodes in node order
    (`kspread run`, --json, the note under a failing placements); --all-ties names every
    node. The nodes are listed in reverse so that node order is not name order."""
    nodes = [f"n{i:02d}" for i in range(25)][::-1]
    doc = {"name": "t", "version": "1.35", "profile": {"filter": ["NodeResourcesFit"], "score": ["NodeResourcesFit"]},
           "nodes": nodes, "schedule": [{"name": "a"}], "expect": {"placements": {"a": "n00"}}}
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"apiVersion": "kspread/v1", "kind": "Case", **doc}))
    res = subprocess.run([sys.executable, "-m", "kspread", "run", "--json", str(p)], capture_output=True, text=True)
    [entry] = json.loads(res.stdout)
    assert entry["actual"]["ties"] == {"a": {"count": 25, "nodes": nodes[:10]}}
    assert entry["actual"]["placements"] == {"a": "n24"}
    res = subprocess.run([sys.executable, "-m", "kspread", "run", "--json", "--all-ties", str(p)],
                         capture_output=True, text=True)
    [entry] = json.loads(res.stdout)
    assert entry["actual"]["ties"] == {"a": {"count": 25, "nodes": nodes}}
    res = subprocess.run([sys.executable, "-m", "kspread", "run", str(p)], capture_output=True, text=True)
    assert ("placed by a tie, the first tied node in node order taken (from 1.35 the first pop of upstream's heap "
            "of scores; upstream may pick another): a from "
            + ", ".join(nodes[:10]) + " and 15 more)") in res.stdout


def test_a_golden_update_writes_every_node_of_a_long_tie(tmp_path):
    """Issue 31: reports name a tie's first 10 nodes; the expectation an update writes for
    a tied placement is still the whole tied set (the pod ends on one of them)."""
    import yaml

    nodes = [f"n{i:02d}" for i in range(25)]
    p = tmp_path / "c.yaml"
    p.write_text(HEADER + "name: t\nversion: \"1.35\"\nprofile: {filter: [NodeResourcesFit], score: [NodeResourcesFit]}\n"
                 f"nodes: [{', '.join(nodes)}]\nschedule: [{{name: a}}]\nexpect: {{}}\n")
    res = subprocess.run([sys.executable, "-m", "kspread", "run", "--update", str(p)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert yaml.safe_load(p.read_text())["expect"] == {"placements": {"a": nodes}}


def test_ties_are_kept_in_their_smallest_form_and_give_back_the_same_nodes():
    """Issue 31: a tie is kept as positions, a bit per node or runs of consecutive
    nodes, whichever is smallest (most nodes of a cluster of alike nodes tie in a few
    runs: a 10,000-pod sequence kept 625 bytes per pod at 5,000 nodes as bits), and
    every form gives back exactly the tied positions."""
    from kspread.engine.scheduler import encode_tie, tie_positions

    rng = np.random.default_rng(7)
    for n in (2, 7, 8, 9, 40, 400, 5000):
        for kind in ("few", "most", "runs", "random"):
            if kind == "few":
                at = rng.choice(n, size=min(2, n), replace=False)
            elif kind == "most":
                at = np.setdiff1d(np.arange(n), rng.choice(n, size=n // 10, replace=False))
            elif kind == "runs":
                at = np.concatenate([np.arange(n // 3, n // 2), np.arange(n - n // 4, n)])
            else:
                at = np.flatnonzero(rng.random(n) < 0.5)
            if len(at) < 2:
                continue
            tie = encode_tie(at, n)
            assert tie.nbytes <= min(4 * len(at), n // 8 + 1)
            assert sorted(tie_positions(tie, n).tolist()) == sorted(at.tolist()), (n, kind)
    tie = encode_tie(np.arange(1000, 5000), 5000)
    assert tie.dtype.name == "uint32" and tie.nbytes == 8


def test_a_sequence_of_alike_nodes_keeps_its_ties_as_runs():
    nodes = [{"name": f"n{i:03d}", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 10}} for i in range(400)]
    doc = {"name": "t", "version": "1.35", "profile": {"filter": ["NodeResourcesFit"], "score": ["NodeResourcesFit"]},
           "nodes": nodes, "pods": [{"name": f"e{i}", "node": f"n{i:03d}", "requests": {"cpu": "1"}}
                                    for i in range(100, 150)],
           "schedule": [{"name": "a", "requests": {"cpu": "1"}}]}
    out = run_loaded(build_case(doc, "t"))
    sched = out.scheduler
    assert sched.ties["a"].dtype.name == "uint32" and sched.ties["a"].nbytes == 16
    tied = [f"n{i:03d}" for i in list(range(100)) + list(range(150, 400))]
    assert sched.tie_summary("a", None) == {"count": 350, "nodes": tied}
    assert out.actual["ties"] == {"a": {"count": 350, "nodes": tied[:10]}}
