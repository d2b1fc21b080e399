"""OpportunisticBatching (1.35, framework/runtime/batch.go): signatures, when a pod gets
the previous cycle's next node as a hint, and when the batch is dropped."""

from __future__ import annotations

from typing import Any

import pytest

from kspread.engine.scheduler import Scheduler, run_case
from kspread.format.case import build_case

PROFILE = {"filter": ["NodeResourcesFit", "TaintToleration"],
           "score": [{"name": "TaintToleration", "weight": 1}, {"name": "NodeResourcesFit", "weight": 5}]}
NODES = [
    {"name": "a", "allocatable": {"cpu": "100", "memory": "100Gi", "pods": 1},
     "taints": [{"key": "k1", "effect": "PreferNoSchedule"}, {"key": "k2", "effect": "PreferNoSchedule"}]},
    {"name": "b", "allocatable": {"cpu": "2", "memory": "100Gi", "pods": 110}},
    {"name": "c", "allocatable": {"cpu": "4", "memory": "100Gi", "pods": 110},
     "taints": [{"key": "k1", "effect": "PreferNoSchedule"}]},
]
POD = {"requests": {"cpu": "1", "memory": "1Gi"}}


def _case(schedule: list, version: str = "1.35", profile: Any = None, nodes: list | None = None, **extra: Any):
    doc: dict[str, Any] = {"apiVersion": "kspread/v1", "kind": "Case", "version": version,
                           "profile": PROFILE if profile is None else profile, "nodes": nodes or NODES,
                           "schedule": schedule, **extra}
    return build_case(doc, "t")


def test_same_signature_takes_the_next_node_unscored():
    _, results, placements = run_case(_case([{"name": "p1", **POD}, {"name": "p2", **POD}]), keep_all=True)
    assert placements == {"p1": "a", "p2": "c"}
    assert results[0].searched == ["a", "b", "c"] and results[0].batch_hint is None
    assert (results[1].batch_hint, results[1].searched, results[1].scores) == ("c", ["c"], None)


@pytest.mark.parametrize("version, gates", [("1.35", {"OpportunisticBatching": False}), ("1.34", None)])
def test_without_the_gate_every_cycle_scores(version, gates):
    extra = {"featureGates": gates} if gates else {}
    _, results, placements = run_case(_case([{"name": "p1", **POD}, {"name": "p2", **POD}], version, **extra))
    assert placements == {"p1": "a", "p2": "b"}
    assert results[1].batch_hint is None


def test_another_signature_scores_afresh():
    other = {"requests": {"cpu": "1", "memory": "2Gi"}}
    _, results, placements = run_case(_case([{"name": "p1", **POD}, {"name": "p2", **other}]))
    assert placements == {"p1": "a", "p2": "b"}
    assert results[1].batch_hint is None


def test_no_hint_when_the_pod_still_fits_the_node_just_chosen():
    """a takes two pods: p2 fits there too, so the batch cannot say where it goes."""
    nodes = [dict(NODES[0], allocatable={"cpu": "100", "memory": "100Gi", "pods": 2}), *NODES[1:]]
    _, results, _ = run_case(_case([{"name": "p1", **POD}, {"name": "p2", **POD}], nodes=nodes), keep_all=True)
    assert results[1].batch_hint is None
    assert results[1].searched == ["a", "b", "c"]


def test_a_hint_is_used_for_the_next_pod_too_and_the_list_runs_down():
    """Every node holds one pod: p2 takes c (p1's next node), p3 finds c full and takes the
    node after it, b, without a cycle being scored in between."""
    nodes = [dict(n, allocatable=dict(n["allocatable"], pods=1)) for n in NODES]
    _, results, placements = run_case(
        _case([{"name": "p1", **POD}, {"name": "p2", **POD}, {"name": "p3", **POD}], nodes=nodes), keep_all=True)
    assert [r.batch_hint for r in results] == [None, "c", "b"]
    assert placements == {"p1": "a", "p2": "c", "p3": "b"}


def test_default_profile_signs_no_pod():
    """Every default plugin signs pods, but PodTopologySpread's system default constraints
    make every pod unsignable: no batch in the default profile."""
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "version": "1.35", "nodes": NODES,
           "schedule": [{"name": "p1", **POD}, {"name": "p2", **POD}]}
    case = build_case(doc, "t")
    sched = Scheduler(case)
    assert sched._sign(case.incoming[0]) is None
    assert sched.batching is False  # known without signing each pod
    _, results, _ = run_case(case)
    assert results[1].batch_hint is None


def test_a_profile_with_an_extender_does_not_batch():
    profile = dict(PROFILE, extenders=[{"name": "e", "filter": ["a", "b", "c"]}])
    sched = Scheduler(_case([{"name": "p1", **POD}], profile=profile))
    assert sched.batching is False


def test_pod_affinity_cannot_be_signed():
    aff = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"x": "y"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    profile = {"filter": ["NodeResourcesFit", "InterPodAffinity"], "score": ["NodeResourcesFit"]}
    case = _case([{"name": "p1", **POD, "affinity": aff}, {"name": "p2", **POD}], profile=profile)
    sched = Scheduler(case)
    assert sched.batching is True
    assert sched._sign(case.incoming[0]) is None
    assert sched._sign(case.incoming[1]) == sched._sign(case.incoming[1])


def test_explain_says_where_the_hint_came_from():
    from kspread.workflow.explain import explain_cycles
    from kspread.workflow.runner import explain_run

    case = _case([{"name": "p1", **POD}, {"name": "p2", **POD}])
    outcome, cycles = explain_run(case)
    text = explain_cycles(outcome.scheduler, cycles, header=True)
    tail = text[text.index("cycle 2: pod p2"):].split("\n")
    assert ("  b: feasible (not reached by the search: OpportunisticBatching's hint c was filtered first and fits; "
            "not scored)") in tail
    assert tail[-2:] == ["  selected: c", ("    (OpportunisticBatching: c is the previous cycle's next-best node, "
                                           "taken unscored because it passes the filters)")]


def test_a_hint_among_equal_totals_is_marked_as_a_tie():
    from kspread.workflow.runner import run_loaded

    nodes = [{"name": "a", "allocatable": {"cpu": "100", "memory": "100Gi", "pods": 1}},
             {"name": "b", "allocatable": {"cpu": "4", "memory": "100Gi", "pods": 110}},
             {"name": "c", "allocatable": {"cpu": "4", "memory": "100Gi", "pods": 110}}]
    out = run_loaded(_case([{"name": "p1", **POD}, {"name": "p2", **POD}], nodes=nodes))
    # the hint is the heap's next pop: c, moved to the root by p1's Pop (node order: b)
    assert out.actual["placements"] == {"p1": "a", "p2": "c"}
    assert out.actual["searched"] == ["c"]
    assert out.actual["ties"] == {"p2": {"count": 2, "nodes": ["b", "c"]}}
