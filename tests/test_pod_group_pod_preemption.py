"""A pod of a 1.36 pod group whose own PostFilter (DefaultPreemption) preempts, with
WorkloadAwarePreemption off (kspread.engine.podgroupcycle): the snapshot the group's later
pods see, the group's status and condition, the nominations, the victims deleted once after
the cycle, and what depends on the executor's timing (refused by name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kspread.engine.diagnosis import verdict
from kspread.engine.plugins.podgroups import PERMIT_WAIT, Condition
from kspread.engine.podgroupcycle import POD_GROUP_WAITING
from kspread.engine.scheduler import run_case
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.format.yamlio import load_strict

GOLDEN = Path(__file__).resolve().parent.parent / "cases" / "gangs" / "pod-group-preemption-136.yaml"
GATES = {"GenericWorkload": True, "GangScheduling": True}
NODE = {"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}


def _golden(name):
    for doc in load_strict(GOLDEN.read_text()):
        if doc["name"] == name:
            return _run_observed(build_case(doc, "t"))
    raise AssertionError(name)


def _run_observed(case):
    conditions: list[dict] = []

    def observe(sched, r):  # the group's condition as each pod's cycle begins
        conditions.append(dict(sched.groups.conditions))

    sched, results, placements = run_case(case, keep_all=True, observe=observe)
    return sched, results, placements, conditions


def _outcomes(results):
    return [(r.pod.key, r.pod_group.node, r.pod_group.nominated, r.bound_node) for r in results]


def test_a_gang_waits_for_its_pods_preemption_then_lands_where_it_was_nominated():
    sched, results, placements, conditions = _golden("pod-group-gang-waits-for-one-pods-preemption")
    assert _outcomes(results) == [("worker-1", "n1", "n1", None), ("worker-0", None, "n2", None),
                                  ("worker-1", "n1", None, "n1"), ("worker-0", "n2", None, "n2")]
    w1, w0 = results[0], results[1]
    # the pod that fit: the group's status; the preemptor: its own FitError
    assert verdict(sched.version, w1) == POD_GROUP_WAITING
    assert verdict(sched.version, w0) == "0/2 nodes are available: 2 Insufficient cpu."
    assert [v.key for v in w0.preemption.victims] == ["low"]
    # the victims, deleted once the cycle is over, are the group's (on its last pod's outcome)
    assert [v.key for v in w0.pod_group.victims] == ["low"] and not w1.pod_group.victims
    assert w0.pod_group.group_status == "Unschedulable"
    key = ("default", "workers")
    # after the first cycle (as the second begins): waiting for preemption; at the end: placed
    assert conditions[2][key] == Condition("False", "Unschedulable", POD_GROUP_WAITING)
    assert sched.groups.conditions[key] == Condition("True", "Scheduled", "")
    assert placements == {"worker-0": "n2", "worker-1": "n1"}


def test_a_preemptor_of_a_group_that_cannot_be_placed_loses_its_nomination_not_its_victims():
    sched, results, placements, _ = _golden("pod-group-preemption-for-a-gang-that-still-cannot-be-placed")
    first = results[:3]
    assert [(r.pod.key, r.pod_group.node, r.pod_group.nominated) for r in first] == \
        [("worker-2", "n1", None), ("worker-0", None, None), ("worker-1", None, None)]
    preemptor = first[1]
    assert preemptor.preemption.nominated_node == "n2"
    # the group's words with its Permit's message, as for a pod that fit
    assert verdict(sched.version, preemptor) == f"pod group is unschedulable, {PERMIT_WAIT}"
    # worker-1 ran after worker-0 was assumed on n2 on top of low: no victim helps it there
    assert first[2].preemption.nominated_node is None
    assert [v.key for v in first[2].pod_group.victims] == ["low"]
    assert sched.groups.conditions[("default", "workers")] == \
        Condition("False", "Unschedulable", "pod group is unschedulable")
    assert sched.current(preemptor.pod).nominated_node is None
    assert placements == {"worker-0": None, "worker-1": None, "worker-2": None}


def test_the_cycles_snapshot_keeps_the_victims_so_two_pods_pick_the_same_one():
    _, results, placements, _ = _golden("pod-group-two-pods-preempt-the-same-victim")
    p0, p1 = results[0], results[1]
    assert [v.key for v in p0.preemption.victims] == ["low"] and [v.key for v in p1.preemption.victims] == ["low"]
    assert [v.key for v in p1.pod_group.victims] == ["low"]  # deleted once
    assert placements == {"pod-0": "n1", "pod-1": "n1"}


def _doc(schedule, pods=(), objects=None):
    return {"version": "1.36", "featureGates": GATES, "nodes": [NODE], "pods": list(pods),
            "objects": objects or [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                    "metadata": {"name": "pair"}, "spec": {"schedulingPolicy": {"basic": {}}}}],
            "schedule": schedule}


def test_a_cleared_nomination_the_groups_later_pods_would_count_is_refused():
    # hi preempts low on n1 and clears nom's nomination there (50 < 100); lo, later in the
    # same cycle, counts nom's nomination (50 >= 10) or not, as the executor's goroutine goes
    doc = _doc([{"name": "hi", "priority": 100, "requests": {"cpu": "3"}, "schedulingGroup": {"podGroupName": "pair"}},
                {"name": "lo", "priority": 10, "requests": {"cpu": "1"}, "schedulingGroup": {"podGroupName": "pair"}}],
               pods=[{"name": "low", "node": "n1", "requests": {"cpu": "3"}},
                     {"name": "nom", "priority": 50, "nominatedNode": "n1", "requests": {"cpu": "1"}}])
    with pytest.raises(CaseError, match=r"pod hi of pod group 'pair' preempts on n1, clearing the nomination of "
                                        r"pod nom while the group's later pods, which it counts for, are scheduled"):
        run_case(build_case(doc, "t"), keep_all=True)
    # nom outranks every later pod of the group: none counts it, the clearing is modelled
    doc["pods"][1]["priority"] = 5
    sched, _, placements = run_case(build_case(doc, "t"), keep_all=True)
    assert sched.current(doc_pod(sched, "nom")).nominated_node is None
    assert placements["hi"] == "n1"


def doc_pod(sched, name):
    return next(p for p in sched.case.cluster.pods if p.name == name)


def test_the_gate_on_leaves_preemption_to_the_group():
    doc = _doc([{"name": "g", "priority": 1000, "requests": {"cpu": "3"}, "schedulingGroup": {"podGroupName": "pair"}}],
               pods=[{"name": "low", "node": "n1", "requests": {"cpu": "3"}}])
    doc["featureGates"] = {**GATES, "WorkloadAwarePreemption": True}
    sched, results, _ = run_case(build_case(doc, "t"), keep_all=True)
    assert results[0].preemption.nominated_node is None
    assert verdict(sched.version, results[0]).endswith(
        "preemption: not eligible due to workload aware preemption enabled")


def test_a_preemptor_of_a_group_that_cannot_be_placed_is_held_until_its_group_is_popped():
    _, results, placements, _ = _golden("pod-group-preemptor-held-until-its-group-is-popped")
    # a preempts and fails with the group; the wait's flush does not retry it (DefaultPreemption's
    # PreEnqueue held it, its Skip hint ignored low's deletion); b's cycle takes it along
    assert [(r.pod.key, r.pod_group.nominated, r.bound_node) for r in results] == \
        [("a", None, None), ("a", None, "n1"), ("b", None, "n1")]
    assert [v.key for v in results[0].pod_group.victims] == ["low"]
    assert placements == {"a": "n1", "b": "n1", "low": None}


def test_the_hold_and_the_deletion_that_ends_it():
    from kspread.engine.scheduler import SequenceRun

    doc = next(d for d in load_strict(GOLDEN.read_text()) if d["name"] == "pod-group-preemptor-held-until-its-group-is-popped")
    doc["schedule"] = doc["schedule"][:2]
    case = build_case(doc, "t")
    run = SequenceRun(case, None, True, list(case.incoming))
    run.until_idle()
    a = run.queue.pods["a"]
    # low's deletion ended the preemption, but the pod stays held: its only rejector skips it
    assert (a.where, a.gating, sorted(a.rejectors), a.preempting) == \
        ("unschedulable", "DefaultPreemption", ["DefaultPreemption"], "")


def test_a_group_pod_in_flight_does_not_count_its_peers_nominations_of_its_priority():
    # upstream's cycle 37 of seqtest seed 3612 sequence 29 (the golden case)
    doc = load_strict((GOLDEN.parent / "pod-group-peers-nominations-in-flight-136.yaml").read_text())[0]
    sched, results, placements, _ = _run_observed(build_case(doc, "t"))
    assert [(r.pod.key, r.pod_group.node if r.pod_group else r.bound_node) for r in results[:7]] == \
        [("hi", None), ("a", None), ("b", None), ("c", None), ("hi", "n1"), ("a", "n1"), ("b", None)]
    assert placements == {"hi": "n1", "a": "n1", "b": None, "c": None}
    assert sched.nominator.on_node("n1") == []


def test_a_group_pod_of_priority_0_counts_its_peers_nominations_as_empty_pods():
    # a and b (priority 0) preempt low (priority -1) and are nominated to n1; x (priority
    # 100, preemptionPolicy Never), moved by low's deletion, takes half of n1 first. In the
    # group's next cycle b is in flight: its nomination reads as a pod of priority 0 that
    # requests nothing, which a's Filter adds (0 >= 0): a fits beside x
    doc = _doc([{"name": "x", "priority": 100, "preemptionPolicy": "Never", "requests": {"cpu": "500m"}}] +
               [{"name": n, "requests": {"cpu": "500m"}, "schedulingGroup": {"podGroupName": "pair"}}
                for n in ("a", "b")],
               pods=[{"name": "low", "node": "n1", "priority": -1, "requests": {"cpu": "1"}}])
    doc["nodes"] = [{"name": "n1", "allocatable": {"cpu": "1", "memory": "8Gi", "pods": 110}}]
    seen = []

    def observe(sched, r):
        seen.append((r.pod.key, {n: [(p.key, p.priority, p.containers) for p in ps]
                                 for n, ps in sched.framework.nominated_pods_by_node(r.pod).items()}))

    _, results, placements = run_case(build_case(doc, "t"), keep_all=True, observe=observe)
    assert [(r.pod.key, r.pod_group.node if r.pod_group else r.bound_node) for r in results[:6]] == \
        [("x", None), ("a", None), ("b", None), ("x", "n1"), ("a", "n1"), ("b", None)]
    assert seen[4] == ("a", {"n1": [("b", 0, ())]})
    assert placements == {"x": "n1", "a": "n1", "b": None}


def test_a_held_pods_nomination_reads_as_its_reference_alone_until_released():
    from kspread.engine.model import Pod
    from kspread.engine.snapshot import Nominator

    nom = Nominator()
    a = Pod(name="a", namespace="ns", labels={"app": "x"}, priority=10, nominated_node="n1")
    b = Pod(name="b", namespace="ns", priority=10, nominated_node="n1")
    nom.add(a)
    nom.add(b)
    v = nom.version
    nom.hold(["ns/a"])
    [(node, pods)] = [(n, list(ps)) for n, ps in nom.by_node()]
    bare = pods[0]
    assert node == "n1" and pods[1] is b  # in its place
    assert (bare.key, bare.priority, bare.labels, bare.containers) == ("ns/a", 0, {}, ())
    assert nom.changes_since(v) == [("n1", a, bare)]
    assert nom.on_node("n1") == [a, b]  # the pods themselves
    # a pod assumed in the cycle, then reverted (unreserveAndForget adds it back): still held
    nom.remove(a)
    nom.add(a)
    assert [p.priority for _, ps in nom.by_node() for p in ps] == [10, 0]
    v = nom.version
    nom.release()
    assert [p for _, ps in nom.by_node() for p in ps] == [b, a]
    assert len(nom.changes_since(v)) == 1
    nom.hold(["ns/b"])
    nom.remove(b)  # bound, or its nomination cleared, while held
    nom.release()
    assert nom.on_node("n1") == [a]
