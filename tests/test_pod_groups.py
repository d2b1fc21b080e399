"""Pod groups as 1.36 has them (issue 32): PodGroup objects (scheduling.k8s.io/v1alpha2),
pods' schedulingGroup, the pod group scheduling cycle (kspread.engine.podgroupcycle) and
GangScheduling's 1.36 PreEnqueue and Permit; the errors for what is not modelled."""

from __future__ import annotations

import pytest

from kspread.engine.diagnosis import verdict
from kspread.engine.plugins.podgroups import PERMIT_WAIT, WAIT_FOR_QUORUM, Condition, missing_group
from kspread.engine.scheduler import run_case
from kspread.errors import CaseError
from kspread.format.case import build_case

GATES = {"GenericWorkload": True, "GangScheduling": True}
NODES = [{"name": n, "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}} for n in ("n1", "n2")]


def _pg(name="workers", policy=None, **spec):
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": policy if policy is not None else {"gang": {"minCount": 3}}, **spec}}


SG = {"podGroupName": "workers"}


def _case(schedule, version="1.36", gates=GATES, objects=None, **extra):
    doc = {"version": version, "featureGates": gates, "nodes": NODES,
           "objects": list(objects) if objects is not None else [_pg()], "schedule": schedule, **extra}
    return build_case(doc, "t")


def _run(schedule, **kw):
    case = _case(schedule, **kw)
    sched, results, placements = run_case(case, keep_all=True)
    return sched, results, placements


def _cycles(results):
    return [(r.pod.key, r.bound_node, r.pod_group.node if r.pod_group else None) for r in results]


def test_a_gang_that_fits_is_placed_in_one_cycle_and_binds_whole():
    sched, results, _ = _run([{"name": "w", "replicas": 3, "requests": {"cpu": "2"}, "schedulingGroup": SG}])
    # w-2 made the quorum and entered activeQ first (InitialAttemptTimestamp); w-0 and w-1 were
    # moved by its creation (UnscheduledPodAdd) in the order PreEnqueue last held them: w-1's own
    # creation event offered both (w-1 too) and held them again, w-0 first
    assert _cycles(results) == [("w-2", "n1", "n1"), ("w-0", "n2", "n2"), ("w-1", "n1", "n1")]
    assert all(r.pod_group.group_status == "Success" and r.pod_group.bound for r in results)
    assert sched.groups.conditions == {("default", "workers"): Condition("True", "Scheduled", "")}
    # one scheduling cycle for the three (CurrentCycle after the pops): no batch hint inside
    assert sched.cycle_count == 3 and all(r.batch_hint is None for r in results)


def test_a_gang_that_does_not_fit_leaves_every_pod_pending_with_upstreams_statuses():
    sched, results, placements = _run([{"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "schedulingGroup": SG}])
    assert placements == {"w-0": None, "w-1": None, "w-2": None}
    # one cycle: the group is parked (nothing changes, a retry would repeat it)
    assert [r.pod.key for r in results] == ["w-2", "w-0", "w-1"]
    by = {r.pod.key: r for r in results}
    want = f"pod group is unschedulable, {PERMIT_WAIT}"
    assert verdict(sched.version, by["w-2"]) == want and verdict(sched.version, by["w-0"]) == want
    assert by["w-2"].pod_group.node == "n1" and by["w-0"].pod_group.node == "n2"
    assert verdict(sched.version, by["w-1"]) == ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
                                                 "preemption: 0/2 "
                                                 "nodes are available: 2 No preemption victims found for "
                                                 "incoming pod.")
    assert sched.groups.conditions[("default", "workers")] == Condition("False", "Unschedulable",
                                                                        "pod group is unschedulable")


def test_the_failed_pods_go_to_backoff_the_fitting_ones_to_its_error_queue():
    case = _case([{"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "schedulingGroup": SG}])
    from kspread.engine.scheduler import SequenceRun

    run = SequenceRun(case, None, True, list(case.incoming))
    run.until_idle()
    qs = run.queue.pods
    # two failures each: the cycle, and the retry upstream makes at once (counted, not run)
    assert {k: (q.where, q.error_backoff, q.errors_count, q.unschedulable_count, sorted(q.rejectors))
            for k, q in qs.items()} == {
        "w-0": ("backoff", True, 2, 0, []),
        "w-1": ("backoff", False, 0, 2, ["NodeResourcesFit"]),
        "w-2": ("backoff", True, 2, 0, []),
    }
    # parked: nothing to pop until something changes
    assert run.queue.pop() is None
    run.queue.changes += 1
    popped = run.queue.pop()
    assert popped is not None and popped.key == "w-1"  # podBackoffQ pops; the error queue waits


def test_a_node_added_lets_the_parked_gang_land():
    sched, results, placements = _run([{"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "schedulingGroup": SG},
                                       {"addNode": {"name": "n3", "allocatable": {"cpu": "4", "memory": "8Gi",
                                                                                   "pods": 110}}}])
    assert sorted(placements.values()) == ["n1", "n2", "n3"]
    assert len(results) == 6  # the failed cycle (3 pods) and the one after the node came
    assert sched.groups.conditions[("default", "workers")].status == "True"


def test_the_scheduled_condition_does_not_go_back_to_false():
    # two pods of a basic group bind; the third, alone later, fails: the condition stays True
    sched, results, placements = _run(
        [{"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "schedulingGroup": SG}],
        objects=[_pg(policy={"basic": {}})])
    assert sorted(p for p in placements.values() if p) == ["n1", "n2"]
    assert [r.pod_group.group_status for r in results] == ["Success"] * 3 + ["Unschedulable"]
    assert sched.groups.conditions[("default", "workers")] == Condition("True", "Scheduled", "")


def test_preenqueue_holds_pods_until_min_count_and_the_missing_pod_group():
    case = _case([{"name": "a", "requests": {"cpu": "1"}, "schedulingGroup": SG},
                  {"name": "x", "requests": {"cpu": "1"}, "schedulingGroup": {"podGroupName": "nope"}}])
    from kspread.engine.scheduler import SequenceRun

    run = SequenceRun(case, None, True, list(case.incoming))
    run.until_idle()
    assert run.results == []
    groups = run.sched.groups
    assert groups.pre_enqueue(case.incoming[0]) == WAIT_FOR_QUORUM
    assert groups.pre_enqueue(case.incoming[1]) == missing_group("nope") == \
        'waiting for pods\'s pod group "nope" to appear in scheduling queue'
    assert {k: (q.where, q.gating) for k, q in run.queue.pods.items()} == {
        "a": ("unschedulable", "GangScheduling"), "x": ("unschedulable", "GangScheduling")}


def test_pods_sorted_by_priority_then_initial_attempt():
    _, results, placements = _run(
        [{"name": "low", "requests": {"cpu": "2"}, "schedulingGroup": SG},
         {"name": "high", "priority": 1000, "requests": {"cpu": "3"}, "schedulingGroup": SG}],
        objects=[_pg(policy={"basic": {}})], nodes=[
            {"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}},
            {"name": "n2", "allocatable": {"cpu": "1", "memory": "8Gi", "pods": 110}}])
    assert [r.pod.key for r in results][:2] == ["high", "low"]
    assert placements == {"low": None, "high": "n1"}


def test_gangscheduling_off_the_group_is_placed_pod_by_pod_result_but_in_one_cycle():
    sched, results, placements = _run([{"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "schedulingGroup": SG}],
                                      gates={"GenericWorkload": True})
    assert sorted(p for p in placements.values() if p) == ["n1", "n2"]
    assert [r.pod.key for r in results[:3]] == ["w-0", "w-1", "w-2"]  # no PreEnqueue: creation order
    assert sched.gang is None and sched.groups is not None and not sched.groups.gang_on


def test_1_35_is_untouched_no_pod_groups_there():
    case = build_case({"version": "1.35", "featureGates": GATES, "nodes": NODES, "schedule": [{"name": "p"}]}, "t")
    sched, _, _ = run_case(case)
    assert sched.groups is None


@pytest.mark.parametrize("doc, where, text", [
    ({"version": "1.35", "schedule": [{"name": "a"}]}, ("objects", 0, "kind"),
     "PodGroups (scheduling.k8s.io/v1alpha2) and pods' schedulingGroup are 1.36's"),
    ({"version": "1.37", "featureGates": {}, "schedule": [{"name": "a"}]}, ("objects", 0, "apiVersion"),
     "1.37 serves Workloads and PodGroups as scheduling.k8s.io/v1beta1 and scheduling.k8s.io/v1alpha3 only"),
    ({"objects": [{**_pg(), "apiVersion": "scheduling.k8s.io/v1alpha1"}]}, ("objects", 0, "apiVersion"),
     "a PodGroup is served as scheduling.k8s.io/v1alpha2"),
    ({"objects": [_pg(policy={"gang": {"minCount": 0}})]},
     ("objects", 0, "spec", "schedulingPolicy", "gang", "minCount"), "minCount must be an integer of at least 1"),
    ({"objects": [_pg(policy={"basic": {}, "gang": {"minCount": 2}})]}, ("objects", 0, "spec", "schedulingPolicy"),
     "exactly one of basic or gang"),
    ({"objects": [_pg(schedulingConstraints={"topology": [{"key": "zone"}]})]},
     ("objects", 0, "spec", "schedulingConstraints"), "needs the feature gate TopologyAwareWorkloadScheduling"),
    ({"featureGates": {**GATES, "DRAWorkloadResourceClaims": True},
      "objects": [_pg(resourceClaims=[{"name": "c", "resourceClaimName": "c", "resourceClaimTemplateName": "t"}])]},
     ("objects", 0, "spec", "resourceClaims", 0),
     "exactly one of resourceClaimName or resourceClaimTemplateName must be set"),
    ({"featureGates": {**GATES, "DRAWorkloadResourceClaims": True},
      "objects": [_pg(resourceClaims=[{"name": "c", "resourceClaimName": "c"}] * 2)]},
     ("objects", 0, "spec", "resourceClaims", 1, "name"), "Duplicate value: 'c'"),
    ({"featureGates": {**GATES, "DRAWorkloadResourceClaims": True},
      "objects": [_pg(resourceClaims=[{"name": f"c{i}", "resourceClaimName": "c"} for i in range(5)])]},
     ("objects", 0, "spec", "resourceClaims"), "Too many: 5: must have at most 4 items"),
    ({"featureGates": {**GATES, "DRAWorkloadResourceClaims": True}, "objects": [
        _pg(resourceClaims=[{"name": "c", "resourceClaimTemplateName": "t"}]),
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}]},
     ("objects",), "names ResourceClaimTemplate 't' (resourceClaims entry 'c'), which the case does not declare"),
    ({"objects": [_pg(disruptionMode="PodGroup")]}, ("objects", 0, "spec", "disruptionMode"),
     "WorkloadAwarePreemption"),
    ({"objects": [_pg(priority=5)]}, ("objects", 0, "spec", "priority"), "WorkloadAwarePreemption"),
    ({"objects": [_pg(), _pg()]}, ("objects", 1, "metadata", "name"), "PodGroup default/workers is defined twice"),
    ({"objects": [_pg(podGroupTemplateRef={"workload": {"workloadName": "w", "podGroupTemplateName": "Bad_Name"}})]},
     ("objects", 0, "spec", "podGroupTemplateRef", "workload", "podGroupTemplateName"), "Invalid value"),
    ({"objects": [_pg(), {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "w"},
                          "spec": {"podGroupTemplates": [{"name": "a", "schedulingPolicy": {"basic": {}}},
                                                         {"name": "a", "schedulingPolicy": {"basic": {}}}]}}]},
     ("objects", 1, "spec", "podGroupTemplates", 1, "name"), "Duplicate value"),
    ({"objects": [_pg(), {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "w"},
                          "spec": {"podGroupTemplates": [{"name": f"t{i}", "schedulingPolicy": {"basic": {}}}
                                                         for i in range(9)]}}]},
     ("objects", 1, "spec", "podGroupTemplates"), "must have at most 8 items"),
    ({"objects": [_pg(), {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "w"},
                          "spec": {"podGroups": [{"name": "a", "policy": {"basic": {}}}]}}]},
     ("objects", 1, "kind"), "1.36 replaced 1.35's gang API"),
    ({"schedule": [{"name": "p", "schedulingGroup": {"podGroupName": "UPPER"}}]},
     ("schedule", 0, "schedulingGroup", "podGroupName"), "Invalid value"),
    ({"schedule": None, "pod": {"name": "p", "schedulingGroup": SG}}, ("pod", "schedulingGroup"),
     "1.36 schedules it with its group's other pods"),
    ({"schedule": [{"name": "m", "replicas": "max", "schedulingGroup": SG}]}, ("schedule", 0, "replicas"),
     "`replicas: max` of a pod of a pod group"),
    ({"featureGates": {"GenericWorkload": True, "GangScheduling": False, "WorkloadAwarePreemption": True}},
     ("featureGates", "WorkloadAwarePreemption"),
     "WorkloadAwarePreemption is enabled, but depends on features that are disabled: [GangScheduling]"),
])
def test_errors_name_the_field(doc, where, text):
    base = {"version": "1.36", "featureGates": GATES, "nodes": NODES, "objects": [_pg()],
            "schedule": [{"name": "a", "schedulingGroup": SG}]}
    base.update(doc)
    base = {k: v for k, v in base.items() if v is not None}
    with pytest.raises(CaseError) as e:
        build_case(base, "t")
    assert text in str(e.value)
    assert tuple(e.value.path) == where


def test_a_backend_without_pod_groups_skips_the_case_rather_than_place_pods_one_by_one():
    from kspread.workflow.backend import Backend

    case = _case([{"name": "w", "replicas": 3, "requests": {"cpu": "2"}, "schedulingGroup": SG}])
    assert Backend("kb", "v1.36.2", (), (), ("serve", "workloads")).applicable(case) == (
        "the case has PodGroup objects or pods with a schedulingGroup (1.36's pod groups), which the backend kb "
        "does not take (its --info lists no protocol `podGroups`)")
