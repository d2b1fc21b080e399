"""DefaultPreemption: eligibility, victims, PDB accounting, node choice, sequences."""

from __future__ import annotations

from typing import Any

import pytest

from kspread.engine.framework.status import Code
from kspread.engine.labels import LabelSelector
from kspread.engine.model import Pod, PodDisruptionBudget
from kspread.engine.plugins.defaultpreemption import (
    filter_pods_with_pdb_violation,
    num_candidates,
    pick_one_node_for_preemption,
)
from kspread.engine.scheduler import run_case
from kspread.engine.versions import Version
from kspread.format.case import build_case

FIT = {"filter": ["NodeResourcesFit"], "postFilter": ["DefaultPreemption"]}


def _node(name: str, cpu: str) -> dict:
    return {"name": name, "allocatable": {"cpu": cpu, "memory": "4Gi", "pods": 110}}


def _run(version: str, nodes: list, pods: list, pod: dict | None = None, schedule: list | None = None, **extra: Any):
    doc: dict[str, Any] = {"apiVersion": "kspread/v1", "kind": "Case", "version": version, "profile": FIT,
                           "nodes": nodes, "pods": pods, **extra}
    if schedule is not None:
        doc["schedule"] = schedule
    else:
        doc["pod"] = pod
    sched, results, placements = run_case(build_case(doc, "t"))
    return sched, results, placements


def _victims(result) -> list[str]:
    return [p.key for p in result.preemption.victims]


def test_reprieve_keeps_most_important_and_evicts_in_reprieve_order():
    _, [r], _ = _run("1.29", [_node("n1", "4")], [
        {"name": "a", "node": "n1", "priority": 10, "requests": {"cpu": "1"}},
        {"name": "b", "node": "n1", "priority": 20, "requests": {"cpu": "1"}},
        {"name": "c", "node": "n1", "priority": 30, "requests": {"cpu": "2"}},
    ], {"name": "p", "priority": 100, "requests": {"cpu": "2"}})
    assert r.preemption.nominated_node == "n1"
    assert _victims(r) == ["b", "a"]  # c reprieved; b then a evicted, most important first
    assert r.post_filter_status.code == Code.SUCCESS


def _resort_cluster(version: str):
    return _run(version, [_node("n1", "2"), _node("n2", "2")], [
        {"name": "w", "node": "n1", "labels": {"app": "web"}, "priority": 5, "requests": {"cpu": "1"}},
        {"name": "h", "node": "n1", "priority": 50, "requests": {"cpu": "1"}},
        {"name": "v", "node": "n2", "labels": {"app": "web"}, "priority": 20, "requests": {"cpu": "2"}},
    ], {"name": "p", "priority": 100, "requests": {"cpu": "2"}},
        pdbs=[{"name": "pdb", "selector": {"matchLabels": {"app": "web"}}, "disruptionsAllowed": 0}])


@pytest.mark.parametrize("version,order,node", [("1.28", ["w", "h"], "n1"), ("1.29", ["h", "w"], "n2")])
def test_victims_resorted_after_reprieve_from_1_29(version, order, node):
    _, [r], _ = _resort_cluster(version)
    assert [p.key for p in r.preemption.candidates["n1"]] == order
    assert r.preemption.nominated_node == node


def test_pdb_budget_decrement_and_disrupted_pods():
    sel = LabelSelector((("app", "web"),))
    pods = [Pod(f"w{i}", labels={"app": "web"}, priority=10) for i in (1, 2, 3)]
    pdb = PodDisruptionBudget("pdb", "default", sel, 1)
    viol, ok = filter_pods_with_pdb_violation(pods, [pdb], Version(19))
    assert ([p.name for p in viol], [p.name for p in ok]) == (["w2", "w3"], ["w1"])
    viol, ok = filter_pods_with_pdb_violation(pods, [pdb], Version(18))
    assert viol == [] and [p.name for p in ok] == ["w1", "w2", "w3"]
    zero = PodDisruptionBudget("pdb", "default", sel, 0, frozenset({"w1"}))
    viol, ok = filter_pods_with_pdb_violation(pods, [zero], Version(19))
    assert [p.name for p in ok] == ["w1"]
    assert filter_pods_with_pdb_violation(pods, [zero], Version(18))[0] == pods
    empty_selector = PodDisruptionBudget("pdb", "default", LabelSelector(), 0)
    assert filter_pods_with_pdb_violation(pods, [empty_selector], Version(19))[0] == []


def _pods(*prios: int, start: float = 0.0) -> list[Pod]:
    return [Pod(f"p{i}", priority=pr, start_time=start + i) for i, pr in enumerate(prios)]


def test_pick_one_node_each_criterion():
    v = Version(29)
    assert pick_one_node_for_preemption({"a": (_pods(1), 1), "b": (_pods(50), 0)}, v) == ["b"]
    assert pick_one_node_for_preemption({"a": (_pods(30, 30), 0), "b": (_pods(40), 0)}, v) == ["a"]
    assert pick_one_node_for_preemption({"a": (_pods(30, 10), 0), "b": (_pods(30, 20), 0)}, v) == ["a"]
    assert pick_one_node_for_preemption(
        {"a": (_pods(10), 0), "b": (_pods(10, -2**31), 0)}, v) == ["a"]
    later = {"a": (_pods(10, 5, start=100), 0), "b": (_pods(10, 5, start=200), 0)}
    assert pick_one_node_for_preemption(later, v) == ["b"]
    assert pick_one_node_for_preemption(later, Version(14)) == ["a", "b"]
    tie = {"a": (_pods(10), 0), "b": (_pods(10), 0)}
    assert pick_one_node_for_preemption(tie, v) == ["a", "b"]


def test_pick_zero_victims_by_version():
    cands = {"a": (_pods(10), 0), "b": ([], 0), "c": ([], 0)}
    assert pick_one_node_for_preemption(cands, Version(18)) == ["b", "c"]
    from kspread.engine.framework.status import SchedulingError
    with pytest.raises(SchedulingError, match="index out of range"):
        pick_one_node_for_preemption(cands, Version(20))


def test_num_candidates():
    assert num_candidates(120, 10, 100) == 100
    assert num_candidates(50, 10, 100) == 50
    assert num_candidates(5000, 10, 100) == 500


def test_preemption_policy_never_not_eligible():
    _, [r], _ = _run("1.24", [_node("n1", "2")], [
        {"name": "v", "node": "n1", "priority": 10, "requests": {"cpu": "2"}},
    ], {"name": "p", "priority": 1000, "preemptionPolicy": "Never", "requests": {"cpu": "1"}})
    assert r.preemption.nominated_node is None and r.preemption.candidates == {}
    assert r.post_filter_status.reasons == ("not eligible due to preemptionPolicy=Never.",)


def test_terminating_pod_on_nominated_node_by_version():
    nodes = [_node("n1", "2"), _node("n2", "2")]
    pods = [{"name": "v", "node": "n1", "priority": 10, "terminating": True, "requests": {"cpu": "2"}},
            {"name": "w", "node": "n2", "priority": 10, "requests": {"cpu": "2"}}]
    pod = {"name": "p", "priority": 100, "nominatedNode": "n1", "requests": {"cpu": "2"}}
    _, [r], _ = _run("1.26", nodes, pods, pod)
    assert r.post_filter_status.reasons == ("not eligible due to a terminating pod on the nominated node.",)
    _, [r], _ = _run("1.27", nodes, pods, pod)
    assert r.preemption.nominated_node == "n2" and _victims(r) == ["w"]


def test_no_victims_short_circuit_status():
    _, [r], _ = _run("1.24", [_node("n1", "2")], [
        {"name": "u", "node": "n1", "priority": 500, "requests": {"cpu": "2"}},
    ], {"name": "p", "priority": 100, "requests": {"cpu": "1"}})
    assert r.preemption.nominated_node is None and r.preemption.clear_nomination


def test_sequence_evicts_nominates_retries_and_clears_lower_nominations():
    sched, results, placements = _run("1.24", [_node("n1", "2")], [
        {"name": "v", "node": "n1", "priority": 10, "requests": {"cpu": "2"}},
        {"name": "l", "priority": 50, "nominatedNode": "n1", "requests": {"cpu": "1"}},
    ], schedule=[{"name": "h", "priority": 100, "requests": {"cpu": "2"}}])
    assert [r.pod.key for r in results] == ["h", "h"]  # preempted, then retried
    assert _victims(results[0]) == ["v"]
    assert "v" not in sched.snapshot.get("n1").pods
    assert sched.pending["l"].nominated_node is None
    assert sched.nominator.on_node("n1") == []
    assert results[1].selected == ["n1"] and placements == {"h": "n1"}


def test_a_compacted_cycle_keeps_the_decision_not_the_dry_run():
    """Issue 19: an earlier cycle of a sequence keeps what preemption decided (node,
    victims, ties, the deciding criterion), not the dry run's records, which held about
    180 KB per preemptor at 5,000 nodes."""
    nodes = [_node("n1", "2"), _node("n2", "2")]
    pods = [{"name": "v1", "node": "n1", "priority": 10, "requests": {"cpu": "2"}},
            {"name": "v2", "node": "n2", "priority": 10, "requests": {"cpu": "2"}}]
    h = {"priority": 100, "requests": {"cpu": "2"}}
    _, results, placements = _run("1.35", nodes, pods, schedule=[{"name": "h1", **h}, {"name": "h2", **h}])
    assert [(r.pod.key, r.attempt) for r in results] == [("h1", 1), ("h2", 1), ("h1", 2), ("h2", 2)]
    first = results[0].preemption
    assert first is not None and results[0].compacted
    assert (first.nominated_node, _victims(results[0]), first.tied_nodes, first.decided_by) == (
        "n2", ["v2"], ["n2"], "latest start time")
    assert (first.candidates, first.potential, first.dry_run, first.pdb_violations, first.pick_steps) == (
        {}, [], {}, {}, [])
    second = results[1].preemption
    assert second is not None and (second.nominated_node, _victims(results[1]), second.potential) == ("n1", ["v1"], [])
    assert placements == {"h1": "n2", "h2": "n1"}
    # kept whole (explain), the same cycle has the dry run's records
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "version": "1.35", "profile": FIT, "nodes": nodes,
           "pods": pods, "schedule": [{"name": "h1", **h}, {"name": "h2", **h}]}
    whole = run_case(build_case(doc, "t"), keep_all=True)[1][0].preemption
    assert whole is not None and whole.potential == ["n1", "n2"] and sorted(whole.candidates) == ["n1", "n2"]
