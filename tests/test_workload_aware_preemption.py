"""Workload-aware preemption of 1.36 (gate WorkloadAwarePreemption; kspread.engine.
podgrouppreemption, run by the pod group cycle): victims, their order and reprieve, PDBs,
preemptionPolicy Never, the statuses, conditions and nominations, and the refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from kspread.engine.diagnosis import verdict
from kspread.engine.plugins.podgroups import Condition
from kspread.engine.podgrouppreemption import NEVER_MESSAGE, NO_VICTIMS, Victim, _more_important
from kspread.engine.scheduler import run_case
from kspread.engine.versions import make_version
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.format.yamlio import load_strict

GATES = {"GenericWorkload": True, "GangScheduling": True, "WorkloadAwarePreemption": True}
NODES = [{"name": n, "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}} for n in ("n1", "n2")]
SG = {"podGroupName": "workers"}
GOLDEN = Path(__file__).resolve().parent.parent / "cases" / "gangs" / "workload-aware-preemption-136.yaml"
NOT_ELIGIBLE = ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: not "
                "eligible due to workload aware preemption enabled")


def _pg(name="workers", policy=None, **spec):
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": policy if policy is not None else {"gang": {"minCount": 2}}, **spec}}


def _run(doc):
    return run_case(build_case(doc, "t"), keep_all=True)


def _golden(name):
    for doc in load_strict(GOLDEN.read_text()):
        if doc["name"] == name:
            return _run(doc)
    raise AssertionError(name)


def _victims(results):
    return [[v.key for v in r.pod_group.victims] for r in results if r.pod_group is not None and r.pod_group.victims]


def test_the_gang_deletes_only_what_the_reprieve_leaves():
    sched, results, placements = _golden("wap-gang-preempts-lower-priority-pods")
    # small, then a (the earlier started) are given back and the group still fits: b alone goes
    assert _victims(results) == [["b"]]
    assert placements == {"worker-0": "n2", "worker-1": "n2"}
    first = results[:2]
    # the group's pods fit nowhere: their own statuses (DefaultPreemption declines a group's pod)
    assert [(r.pod.key, verdict(sched.version, r)) for r in first] == \
        [("worker-1", NOT_ELIGIBLE), ("worker-0", NOT_ELIGIBLE)]
    # preemption's runs: all victims out, then small, a and b given back in turn
    runs = first[-1].pod_group.preemption_runs
    assert [[(c.pod, c.node) for c in one] for one in runs] == [
        [("worker-1", "n1"), ("worker-0", "n2")], [("worker-1", "n2"), ("worker-0", "n1")],
        [("worker-1", "n2"), ("worker-0", "n2")], [("worker-1", None), ("worker-0", None)]]
    assert sched.groups.conditions[("default", "workers")] == Condition("True", "Scheduled", "")


def test_a_pod_group_with_disruption_mode_pod_group_goes_whole():
    _, results, placements = _golden("wap-victim-is-a-whole-pod-group")
    assert _victims(results) == [["batch-0", "batch-1"]]
    assert sorted(placements.values()) == ["n1", "n2"]


def test_disruption_mode_pod_makes_each_pod_its_own_victim():
    doc = {"version": "1.36", "featureGates": GATES, "nodes": NODES,
           "pods": [{"name": "batch-0", "node": "n1", "priority": 10, "requests": {"cpu": "2"},
                     "schedulingGroup": {"podGroupName": "batch"}},
                    {"name": "batch-1", "node": "n2", "priority": 10, "requests": {"cpu": "1"},
                     "schedulingGroup": {"podGroupName": "batch"}}],
           "objects": [_pg("batch", {"basic": {}}, priority=10, disruptionMode="Pod"), _pg(priority=100)],
           "schedule": [{"name": "w", "replicas": 2, "priority": 100, "requests": {"cpu": "3"},
                         "schedulingGroup": SG}]}
    _, results, placements = _run(doc)
    # the pods' own priority counts; batch-1 is given back (a worker fits next to it on n2)
    assert _victims(results) == [["batch-0"]]
    assert sorted(placements.values()) == ["n1", "n2"]


def test_pdb_violating_victims_are_tried_back_first():
    _, results, _ = _golden("wap-pdb-violating-victim-reprieved-first")
    assert _victims(results) == [["job"]]
    _, results, _ = _golden("wap-pdb-violating-victim-not-reprieved")
    # most important first: web (the earlier start) before job
    assert _victims(results) == [["web", "job"]]


def test_preemption_policy_never_of_one_pod_stops_the_group():
    sched, results, placements = _golden("wap-preemption-policy-never")
    assert _victims(results) == [] and placements == {"worker-0": None, "worker-1": None}
    assert sched.groups.conditions[("default", "workers")] == \
        Condition("False", "Unschedulable", f"pod group is unschedulable, {NEVER_MESSAGE}")


def test_no_lower_priority_victim_is_unresolvable():
    doc = {"version": "1.36", "featureGates": GATES, "nodes": NODES,
           "pods": [{"name": "big", "node": n, "priority": 100, "requests": {"cpu": "3"}} for n in ("n1", "n2")],
           "objects": [_pg(priority=100)],
           "schedule": [{"name": "w", "replicas": 2, "priority": 100, "requests": {"cpu": "2"},
                         "schedulingGroup": SG}]}
    # the pods' names must differ
    doc["pods"][1]["name"] = "big2"
    sched, results, placements = _run(doc)
    assert _victims(results) == [] and set(placements.values()) == {None}
    assert sched.groups.conditions[("default", "workers")] == \
        Condition("False", "Unschedulable", f"pod group is unschedulable, {NO_VICTIMS}")


def test_a_pod_that_fit_is_nominated_with_the_groups_status():
    sched, results, placements = _golden("wap-a-pod-that-fit-is-nominated")
    w1, w0 = results[0], results[1]
    assert (w1.pod.key, w1.pod_group.node, w1.pod_group.nominated) == ("worker-1", "n1", "n1")
    assert verdict(sched.version, w1) == "pod group is unschedulable"
    assert verdict(sched.version, w0) == NOT_ELIGIBLE
    assert _victims(results) == [["job"]]
    # the next group cycle: worker-1 on its nominated node, worker-0 where job was
    assert [(r.pod.key, r.pod.nominated_node, r.bound_node) for r in results[2:]] == \
        [("worker-1", "n1", "n1"), ("worker-0", None, "n2")]
    assert placements == {"worker-0": "n2", "worker-1": "n1"}


def test_gate_off_the_group_pods_own_preemption_runs_instead():
    doc = {"version": "1.36", "featureGates": {"GenericWorkload": True, "GangScheduling": True}, "nodes": NODES,
           "pods": [{"name": "job", "node": "n2", "priority": 10, "requests": {"cpu": "3"}}],
           "objects": [_pg()],
           "schedule": [{"name": "w", "replicas": 2, "priority": 100, "requests": {"cpu": "3"},
                         "schedulingGroup": SG}]}
    _, results, placements = _run(doc)
    # DefaultPreemption of the pod that fit nowhere, in the group's cycle: no preemption runs
    # of the group's algorithm, the same victim
    assert [(r.pod.key, r.preemption.nominated_node if r.preemption else None) for r in results[:2]] == \
        [("w-1", None), ("w-0", "n2")]
    assert _victims(results) == [["job"]] and not results[1].pod_group.preemption_runs
    assert placements == {"w-0": "n2", "w-1": "n1"}


def test_more_important_victim_order():
    def v(prio, group, n, start):
        from kspread.engine.model import Pod
        pods = [Pod(name=f"p{i}", start_time=start) for i in range(n)]
        return Victim(pods, prio, group)
    lone_early, lone_late = v(10, False, 1, 1.0), v(10, False, 1, 2.0)
    group_small, group_big = v(10, True, 1, 0.0), v(10, True, 3, 5.0)
    high = v(20, False, 1, 9.0)
    ordered = sorted([lone_late, group_small, lone_early, group_big, high],
                     key=__import__("functools").cmp_to_key(_more_important))
    assert ordered == [high, group_big, group_small, lone_early, lone_late]


@pytest.mark.parametrize("spec, where, text", [
    ({"priorityClassName": "high"}, "priorityClassName", "no PriorityClass with name high was found"),
    ({"disruptionMode": "Everything"}, "disruptionMode", 'supported values: "Pod", "PodGroup"'),
    ({"priority": "high"}, "priority", "priority is a 32-bit integer"),
])
def test_pod_group_fields_are_checked(spec, where, text):
    doc = {"version": "1.36", "featureGates": GATES, "nodes": NODES, "objects": [_pg(**spec)],
           "schedule": [{"name": "a", "schedulingGroup": SG}]}
    with pytest.raises(CaseError) as e:
        build_case(doc, "t")
    assert text in str(e.value) and where in str(e.value)


def test_a_victim_of_the_preempting_group_itself_is_refused():
    doc = {"version": "1.36", "featureGates": GATES, "nodes": NODES,
           "pods": [{"name": "old", "node": "n1", "priority": 0, "requests": {"cpu": "4"}, "schedulingGroup": SG},
                    {"name": "fill", "node": "n2", "priority": 0, "requests": {"cpu": "4"}}],
           "objects": [_pg(policy={"basic": {}}, priority=100)],
           "schedule": [{"name": "w", "priority": 100, "requests": {"cpu": "3"}, "schedulingGroup": SG}]}
    with pytest.raises(CaseError, match="preempting group itself"):
        _run(doc)


def test_the_gate_needs_gang_scheduling_and_ends_at_1_37():
    assert make_version("1.36", {"GenericWorkload": True, "GangScheduling": True,
                                 "WorkloadAwarePreemption": True}).gate("WorkloadAwarePreemption")
    assert not make_version("1.36", {}).gate("WorkloadAwarePreemption")
    with pytest.raises(CaseError, match="depends on features that are disabled"):
        make_version("1.36", {"GenericWorkload": True, "WorkloadAwarePreemption": True})
    with pytest.raises(CaseError, match=r"does not know feature gate 'WorkloadAwarePreemption': upstream merged it "
                       r"into GenericWorkload in 1\.37"):
        make_version("1.37", {"WorkloadAwarePreemption": True})


def test_a_group_victim_keeps_the_start_time_of_its_first_pod_in_node_order():
    from kspread.engine.podgrouppreemption import domain_victims
    from kspread.engine.scheduler import Scheduler

    doc = {"version": "1.36", "featureGates": GATES, "nodes": NODES,
           "pods": [{"name": "b-late", "node": "n1", "priority": 10, "startTime": "2024-01-01T05:00:00Z",
                     "schedulingGroup": {"podGroupName": "batch"}},
                    {"name": "b-early", "node": "n2", "priority": 10, "startTime": "2024-01-01T00:00:00Z",
                     "schedulingGroup": {"podGroupName": "batch"}},
                    {"name": "lone", "node": "n2", "priority": 3}],
           "objects": [_pg("batch", {"basic": {}}, priority=7, disruptionMode="PodGroup"), _pg(priority=100)],
           "schedule": [{"name": "w", "priority": 100, "schedulingGroup": SG}]}
    sched = Scheduler(build_case(doc, "t"))
    victims = domain_victims(sched)
    assert [([p.name for p in v.pods], v.priority, v.in_group) for v in victims] == \
        [(["b-late", "b-early"], 7, True), (["lone"], 3, False)]
    # upstream sets EarliestStartTime from the first pod and does not update it
    assert victims[0].earliest == victims[0].pods[0].start_time
