"""`feasible` is every node that passes every filter and extender filter; `searched`
is what upstream's search found (first fit, percentageOfNodesToScore, the nominated
node first). The search itself is kept exactly: it decides scoring, selection and
where the next cycle starts."""

import yaml

from kspread.engine.scheduler import Scheduler, run_case
from kspread.format.case import build_case
from kspread.workflow.runner import run_loaded

NODES_120 = "[" + ", ".join(f"n{i}" for i in range(1, 121)) + "]"


def _case(doc: str):
    return build_case(yaml.safe_load(doc), "t")


def test_percentage_search_stops_but_feasible_is_every_node():
    case = _case(f"""
version: "1.24"
profile: {{filter: [NodeUnschedulable], percentageOfNodesToScore: 10}}
nodes: {NODES_120}
pod: {{name: p}}
""")
    sched = Scheduler(case)
    r = sched.schedule_one(case.incoming[0])
    assert r.searched == [f"n{i}" for i in range(1, 101)]  # max(12, 100) nodes to find
    assert len(r.feasible) == 120
    assert sched.next_start_node_index == 100  # the search's own count, not the full pass
    # EqualPriority over the searched nodes only
    assert set(r.totals) == set(r.searched)


def test_sequence_resumes_where_the_search_stopped():
    """Two pods, 120 nodes, percentage 10: the first cycle searches n1..n100, the
    second starts at n101 and wraps around to n1..n81."""
    case = _case(f"""
version: "1.24"
profile: {{filter: [NodeUnschedulable], percentageOfNodesToScore: 10}}
nodes: {NODES_120}
schedule: [{{name: a}}, {{name: b}}]
""")
    _, results, placements = run_case(case)
    assert results[1].searched == [f"n{i}" for i in range(101, 121)] + [f"n{i}" for i in range(1, 81)]
    assert len(results[1].feasible) == 120
    assert placements == {"a": "n1", "b": "n1"}


def test_extender_filter_applies_to_nodes_the_search_did_not_reach():
    case = _case(f"""
version: "1.24"
profile:
  filter: [NodeUnschedulable]
  percentageOfNodesToScore: 10
  extenders: [{{name: ext, filter: [{", ".join(f"n{i}" for i in range(1, 120))}]}}]
nodes: {NODES_120}
pod: {{name: p}}
""")
    out = run_loaded(case).actual
    assert "n120" not in out["feasible"] and len(out["feasible"]) == 119
    assert out["filter"]["n120"] == {"code": "Unschedulable",
                                     "reason": "node(s) were filtered out by extender ext"}
    assert len(out["searched"]) == 100


def test_first_fit_from_1_30_keeps_feasible_whole():
    doc = """
version: "{v}"
profile: {{filter: [NodeUnschedulable]}}
nodes: [{{name: n1, unschedulable: true}}, n2, n3]
pod: {{name: p}}
"""
    new = run_loaded(_case(doc.format(v="1.30"))).actual
    assert (new["feasible"], new["searched"]) == (["n2", "n3"], ["n2"])
    assert (new["totals"], new["selected"]) == ({}, "n2")
    old = run_loaded(_case(doc.format(v="1.29"))).actual
    assert (old["feasible"], old["searched"], old["selected"]) == (["n2", "n3"], ["n2", "n3"], ["n2", "n3"])


def test_nominated_node_fast_path_reports_every_feasible_node():
    case = _case("""
version: "1.24"
profile: {filter: [NodeUnschedulable], score: [TaintToleration]}
nodes: [n1, {name: n2, unschedulable: true}, n3]
pod: {name: p, nominatedNode: n3}
""")
    sched = Scheduler(case)
    r = sched.schedule_one(case.incoming[0])
    assert r.searched == ["n3"] and r.selected == ["n3"]
    assert r.feasible == ["n1", "n3"]
    assert r.scores is None
    assert str(r.statuses["n2"].code) == "UnschedulableAndUnresolvable"
    assert sched.next_start_node_index == 0  # upstream returns before moving the start index


def test_searched_is_compared_and_its_nodes_checked(tmp_path):
    from tests.helpers import verdict

    body = """
name: c
version: "1.30"
profile: {filter: [NodeUnschedulable]}
nodes: [n1, n2]
pod: {name: p}
expect:
  searched: [n1, n2]
"""
    v = verdict(tmp_path, body)
    assert not v.passed
    assert "searched:" in v.message and "[n1, n2]" in v.message and "[n1]" in v.message
    assert v.message.split("explain (nodes that differ):\n")[1].split("\n") == [
        "   node  verdict",
        "*  n1    feasible",
        "   n2    feasible (not reached by the search: it stopped once it had found",
        "         enough feasible nodes (percentageOfNodesToScore, or first fit without",
        "         scoring); not scored)",
        "(* selected)",
        "selected: n1",
    ]
    v = verdict(tmp_path, body, explain="full")
    assert "n2: feasible (not reached by the search: it stopped once it had found enough feasible nodes" in v.message
    v = verdict(tmp_path, body.replace("searched: [n1, n2]", "searched: [n1, n9]"))
    assert not v.passed and "unknown node 'n9'" in v.message and "expect.searched" in v.message


def test_explain_says_why_a_feasible_node_was_not_searched(capsys):
    from pathlib import Path

    from kspread.workflow.cli import main as cli_main

    case_file = Path(__file__).resolve().parent.parent / "cases" / "profiles" / "search.yaml"
    assert cli_main(["explain", str(case_file), "--case", "search-nominated-node-first"]) == 0
    assert capsys.readouterr().out.split("\n")[1:7] == [
        "     node  verdict",
        "     n1    feasible (not reached by the search: the nominated node n2 was",
        "           filtered first and fits (PreferNominatedNode); not scored)",
        "  *  n2    feasible",
        "  (* selected)",
        "  selected: n2",
    ]
    assert cli_main(["explain", "--verbose", str(case_file), "--case", "search-nominated-node-first"]) == 0
    out = capsys.readouterr().out
    assert ("  n1: feasible (not reached by the search: the nominated node n2 was filtered first and fits "
            "(PreferNominatedNode); not scored)\n") in out
    assert "  n2: feasible\n" in out


def test_start_index_counts_the_infeasible_nodes_before_the_extra_feasible_one():
    """Upstream's walk (one filter worker) stops at the feasible node after the 100 it
    needs and drops it: the infeasible n100 it passed counts, so the next search starts at
    n101 (issue 18, reproducer 2)."""
    nodes = ", ".join(f"n{i}" if i != 100 else "{name: n100, unschedulable: true}" for i in range(102))
    case = _case(f"""
version: "1.35"
profile: {{filter: [NodeUnschedulable], score: [NodeResourcesBalancedAllocation], percentageOfNodesToScore: 50}}
nodes: [{nodes}]
schedule: [{{name: a}}, {{name: b}}]
""")
    sched = Scheduler(case)
    r = sched.schedule_one(case.incoming[0])
    assert r.searched == [f"n{i}" for i in range(100)]
    assert sched.next_start_node_index == 101
    _, results, _ = run_case(case, keep_all=True)
    assert results[1].searched == ["n101"] + [f"n{i}" for i in range(99)]


def test_start_index_after_a_search_that_found_exactly_what_it_needed_is_the_whole_walk():
    """100 feasible nodes of 101, all needed: the walk goes on past n99 looking for one
    more, through the infeasible n100, so every node is processed and the start index
    comes back to 0 (not 100)."""
    nodes = ", ".join(f"n{i}" if i != 100 else "{name: n100, unschedulable: true}" for i in range(101))
    case = _case(f"""
version: "1.35"
profile: {{filter: [NodeUnschedulable], score: [NodeResourcesBalancedAllocation], percentageOfNodesToScore: 50}}
nodes: [{nodes}]
pod: {{name: a}}
""")
    sched = Scheduler(case)
    r = sched.schedule_one(case.incoming[0])
    assert len(r.searched) == 100
    assert sched.next_start_node_index == 0


def test_a_nominated_node_that_failed_counts_towards_the_start_index():
    """evaluateNominatedNode records the nominated node's status in the diagnosis the
    search shares: processedNodes counts it once even when the walk stops before it."""
    nodes = ", ".join(f"n{i}" if i != 101 else "{name: n101, unschedulable: true}" for i in range(102))
    case = _case(f"""
version: "1.35"
profile: {{filter: [NodeUnschedulable], score: [NodeResourcesBalancedAllocation], percentageOfNodesToScore: 50}}
nodes: [{nodes}]
pod: {{name: a, nominatedNode: n101}}
""")
    sched = Scheduler(case)
    r = sched.schedule_one(case.incoming[0])
    assert r.searched == [f"n{i}" for i in range(100)]
    assert sched.next_start_node_index == 101  # 100 found + n101's status


def test_up_to_1_16_the_dropped_node_moved_the_node_tree_iterator_too():
    """NodeTree().Next() was called for every node checked, the dropped 101st feasible
    node included: after n0..n99 found, n100 infeasible and n101 dropped, the next
    search starts at n0 (1.16), at n101 from 1.17 (nextStartNodeIndex)."""
    nodes = ", ".join(f"n{i}" if i != 100 else "{name: n100, unschedulable: true}" for i in range(102))
    for version, start in (("1.16", 0), ("1.17", 101)):
        case = _case(f"""
version: "{version}"
profile: {{filter: [NodeUnschedulable], score: [NodeResourcesLeastAllocated], percentageOfNodesToScore: 50}}
nodes: [{nodes}]
pod: {{name: a}}
""")
        sched = Scheduler(case)
        sched.schedule_one(case.incoming[0])
        assert sched.next_start_node_index == start, version
