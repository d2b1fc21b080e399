"""Gang scheduling as 1.35 has it (GenericWorkload, GangScheduling; issue 32): the
workload manager, PreEnqueue, Permit's wait and its timeout on the sequence clock, the
queue events, preemption of a waiting pod, and the errors for what is not modelled."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kspread.engine.framework.status import Code
from kspread.engine.plugins.gangscheduling import TIMEOUT_REASON, WAIT_FOR_QUORUM
from kspread.engine.scheduler import run_case
from kspread.errors import CaseError
from kspread.format.case import build_case

GATES = {"GenericWorkload": True, "GangScheduling": True}
WORKLOAD = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "job"},
            "spec": {"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 3}}}]}}
NODES = [{"name": n, "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}} for n in ("n1", "n2")]
REF = {"name": "job", "podGroup": "w"}


def _case(schedule, version="1.35", gates=GATES, objects=(WORKLOAD,), **extra):
    doc = {"version": version, "featureGates": gates, "nodes": NODES, "objects": list(objects),
           "schedule": schedule, **extra}
    return build_case(doc, "t")


def _run(schedule, **kw):
    sched, results, placements = run_case(_case(schedule, **kw))
    return sched, results, placements


def test_preenqueue_holds_the_gang_until_min_count_pods_exist():
    sched, results, placements = _run([
        {"name": "a", "requests": {"cpu": "1"}, "workloadRef": REF},
        {"name": "b", "requests": {"cpu": "1"}, "workloadRef": REF},
        {"wait": 60},
        {"name": "c", "requests": {"cpu": "1"}, "workloadRef": REF},
    ])
    # a and b never ran a cycle before c existed; then a, b, c in creation order
    assert [r.pod.key for r in results] == ["a", "b", "c"]
    assert sched.attempts == {"a": 1, "b": 1, "c": 1}
    assert placements == {"a": "n1", "b": "n2", "c": "n1"}


def test_held_pods_wait_with_the_preenqueue_reason():
    case = _case([{"name": "a", "requests": {"cpu": "1"}, "workloadRef": REF}])
    sched, results, placements = run_case(case)
    assert results == [] and placements == {"a": None}
    q = sched.sequence.run.queue if sched.sequence is not None else None
    gang = sched.gang
    assert gang.pre_enqueue(case.incoming[0]) == WAIT_FOR_QUORUM
    assert q is None or q.pods["a"].gating == "GangScheduling"


def test_waiting_pods_hold_their_nodes_and_bind_together():
    sched, results, placements = _run([{"name": "w", "replicas": 3, "requests": {"cpu": "2"}, "workloadRef": REF}])
    assert [(r.pod.key, r.waiting_on, r.bound_node) for r in results] == [
        ("w-0", "n1", None), ("w-1", "n2", None), ("w-2", None, "n1")]
    assert placements == {"w-0": "n1", "w-1": "n2", "w-2": "n1"}
    assert sched.waiting == {}
    assert sorted(sched.snapshot.get("n1").pods) == ["w-0", "w-2"]


def test_a_gang_that_cannot_fit_binds_nothing_and_its_waiting_pods_count():
    sched, results, placements = _run([
        {"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "workloadRef": REF},
        {"name": "batch", "requests": {"cpu": "2"}}])
    assert placements == {"w-0": None, "w-1": None, "w-2": None, "batch": None}
    assert sorted(sched.waiting) == ["w-0", "w-1"]
    # the waiting pods' 3 CPUs are in the snapshot: batch is rejected for cpu on both nodes
    batch = [r for r in results if r.pod.key == "batch"][-1]
    assert {n: s.reasons for n, s in batch.statuses.items()} == {"n1": ("Insufficient cpu",),
                                                                 "n2": ("Insufficient cpu",)}


def test_the_deadline_rejects_the_waiting_pods_which_stay_nominated_to_their_nodes():
    sched, results, placements = _run([
        {"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "workloadRef": REF}, {"wait": 299}])
    assert sorted(sched.waiting) == ["w-0", "w-1"]  # 299 s: not yet
    sched, results, placements = _run([
        {"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "workloadRef": REF}, {"wait": 300}])
    run = sched.sequence.run
    assert run.rejected == {"w-0": TIMEOUT_REASON, "w-1": TIMEOUT_REASON}
    assert sched.waiting == {}
    # NominatedNodeNameForExpectation (on in 1.35) wrote each waiting pod's node as its
    # nominatedNodeName, which the rejection leaves: w-0 and w-1 stay nominated to n1 and
    # n2 and keep their room from w-2 (equal priority), which the rejections moved
    # (AssignedPodDelete) and which fails again (upstream's driver agrees, dev/README.md)
    assert [(r.pod.key, r.waiting_on) for r in results[3:]] == [("w-2", None)]
    assert {n: s.reasons for n, s in results[3].statuses.items()} == {"n1": ("Insufficient cpu",),
                                                                      "n2": ("Insufficient cpu",)}
    assert [p.key for p in sched.nominator.on_node("n1")] == ["w-0"]
    assert [p.key for p in sched.nominator.on_node("n2")] == ["w-1"]
    assert placements == {"w-0": "n1", "w-1": "n2", "w-2": None}
    assert run.queue.pods["w-0"].rejectors == frozenset({"GangScheduling"})


NO_EXPECTATION = {**GATES, "NominatedNodeNameForExpectation": False}


def test_without_the_expectation_nomination_the_freed_nodes_go_to_the_gang_again():
    sched, results, placements = _run([
        {"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "workloadRef": REF}, {"wait": 300}],
        gates=NO_EXPECTATION)
    run = sched.sequence.run
    assert run.rejected == {"w-0": TIMEOUT_REASON, "w-1": TIMEOUT_REASON}
    # w-2 moved by the rejections (AssignedPodDelete), waits on n1, activates w-0 and w-1:
    # w-0 waits on n2, w-1 fits nowhere; the new deadline is five minutes on
    assert [(r.pod.key, r.waiting_on) for r in results[3:]] == [("w-2", "n1"), ("w-0", "n2"), ("w-1", None)]
    assert sorted(sched.waiting) == ["w-0", "w-2"]
    assert sched.gang.deadline(sched.waiting["w-2"][0]) == 600
    assert placements == {"w-0": None, "w-1": None, "w-2": None}
    assert run.queue.pods["w-1"].rejectors == frozenset({"NodeResourcesFit"})


def test_a_long_wait_goes_through_each_deadline():
    sched, results, _ = _run([{"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "workloadRef": REF},
                              {"wait": 900}], gates=NO_EXPECTATION)
    # timeouts at 300, 600 and 900, each followed by the same three cycles
    assert len(results) == 3 + 3 * 3
    assert sched.gang.deadline(next(iter(sched.waiting.values()))[0]) == 1200


def test_the_timeout_message_gives_each_pods_own_wait():
    # a gang of 4: a and b wait at 0 (deadline 300), d never fits; c fits the node added at
    # 100 and waits then: Permit gave it the 200 s left
    four = {**WORKLOAD, "spec": {"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 4}}}]}}
    pod = {"requests": {"cpu": "3"}, "workloadRef": REF}
    sched, _, _ = _run([{"name": "a", **pod}, {"name": "b", **pod}, {"name": "c", **pod},
                        {"name": "d", "nodeSelector": {"disk": "ssd"}, **pod}, {"wait": 100},
                        {"addNode": {"name": "n3", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}},
                        {"wait": 200}], objects=(four,))
    assert sched.sequence.run.rejected == {
        "a": "rejected due to timeout after waiting 5m0s at plugin GangScheduling",
        "b": "rejected due to timeout after waiting 5m0s at plugin GangScheduling",
        "c": "rejected due to timeout after waiting 3m20s at plugin GangScheduling"}


def test_a_scale_up_completes_the_gang():
    _, _, placements = _run([{"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "workloadRef": REF},
                             {"addNode": {"name": "n3", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}}])
    assert placements == {"w-0": "n1", "w-1": "n2", "w-2": "n3"}


def test_gang_off_ignores_nothing_silently_but_schedules_pods_alone():
    # GenericWorkload on, GangScheduling off: the field and the object exist, no plugin enforces
    _, _, placements = _run([{"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "workloadRef": REF}],
                            gates={"GenericWorkload": True})
    assert placements == {"w-0": "n1", "w-1": "n2", "w-2": None}


@pytest.mark.parametrize("doc, where, text", [
    ({"featureGates": {"GangScheduling": True}}, ("featureGates", "GangScheduling"), "depends on GenericWorkload"),
    ({"version": "1.37"}, ("featureGates", "GenericWorkload"), ("not 1.37's: Workloads and PodGroups served as "
     "scheduling.k8s.io/v1beta1 and v1alpha3")),
    ({"featureGates": {}, "schedule": [{"name": "a"}]}, ("objects", 0, "kind"),
     "a Workload object needs the GenericWorkload feature gate"),
    ({"featureGates": {}, "objects": []}, ("schedule", 0, "workloadRef"),
     "a pod's workloadRef needs the GenericWorkload feature gate"),
    ({"pod": {"name": "p", "workloadRef": REF}, "schedule": None}, ("pod", "workloadRef"), "in a `schedule`"),
    ({"schedule": [{"name": "m", "replicas": "max", "workloadRef": REF}]}, ("schedule", 0, "replicas"),
     "`replicas: max` of a gang pod"),
    ({"objects": [{**WORKLOAD, "apiVersion": "scheduling.k8s.io/v1"}]}, ("objects", 0, "apiVersion"),
     "scheduling.k8s.io/v1alpha1"),
    ({"objects": [{**WORKLOAD, "spec": {"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 0}}}]}}]},
     ("objects", 0, "spec", "podGroups", 0, "policy", "gang", "minCount"), "minCount must be"),
    ({"objects": [{**WORKLOAD, "spec": {"podGroups": [{"name": "w", "policy": {"basic": {}}},
                                                      {"name": "w", "policy": {"basic": {}}}]}}]},
     ("objects", 0, "spec", "podGroups", 1, "name"), "Duplicate value"),
    ({"objects": [{**WORKLOAD, "spec": {"podGroups": [{"name": "w", "policy": {"basic": {}, "gang": {
        "minCount": 2}}}]}}]}, ("objects", 0, "spec", "podGroups", 0, "policy"), "exactly one of basic or gang"),
])
def test_errors_name_the_field(doc, where, text):
    base = {"version": "1.35", "featureGates": GATES, "nodes": NODES, "objects": [WORKLOAD],
            "schedule": [{"name": "a", "workloadRef": REF}]}
    base.update(doc)
    base = {k: v for k, v in base.items() if v is not None}
    if doc.get("version") == "1.37":
        base["featureGates"] = {"GenericWorkload": True}
    with pytest.raises(CaseError) as e:
        build_case(base, "t")
    assert text in str(e.value)
    assert tuple(e.value.path) == where


POD_GROUP = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "pg"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
RAW_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"},
           "spec": {"nodeName": "n1", "schedulingGroup": {"podGroupName": "pg"}, "containers": [{"name": "c"}]}}


@pytest.mark.parametrize("version, text", [
    ("1.35", "in 1.35: PodGroups (scheduling.k8s.io/v1alpha2) and pods' schedulingGroup are 1.36's"),
    ("1.36", "needs the GenericWorkload feature gate"),
    ("1.37", "in 1.37: "),
])
@pytest.mark.parametrize("doc, where", [
    ({"objects": [POD_GROUP]}, ("objects", 0, "kind")),
    ({"objects": [RAW_POD]}, ("objects", 0, "spec", "schedulingGroup")),
    ({"pod": {"name": "p", "schedulingGroup": {"podGroupName": "pg"}}}, ("pod", "schedulingGroup")),
    ({"schedule": [{"name": "p", "schedulingGroup": {"podGroupName": "pg"}}]}, ("schedule", 0, "schedulingGroup")),
])
def test_1_36_pod_groups_elsewhere_are_refused_by_name_not_scheduled_pod_by_pod(version, text, doc, where):
    """1.36's PodGroup objects and pods' schedulingGroup in 1.35, in 1.36 without
    GenericWorkload, in 1.37 (which serves v1beta1 and v1alpha3 only): refused at the field,
    never run as if the pods were on their own."""
    if version == "1.37" and where == ("objects", 0, "kind"):
        where = ("objects", 0, "apiVersion")
    base = {"version": version, "nodes": NODES, **doc}
    if "pod" not in doc and "schedule" not in doc:
        base["pod"] = {"name": "p"}
    with pytest.raises(CaseError) as e:
        build_case(base, "t")
    assert tuple(e.value.path) == where
    assert text in str(e.value)


@pytest.mark.parametrize("version", ["1.36"])
@pytest.mark.parametrize("doc, where", [
    ({"objects": [WORKLOAD], "pod": {"name": "p"}}, ("objects", 0, "kind")),
    ({"objects": [], "schedule": [{"name": "p", "workloadRef": REF}]}, ("schedule", 0, "workloadRef")),
])
def test_1_35_gang_api_in_1_36_names_what_replaced_it(version, doc, where):
    """k8s.io/api v0.36 serves no v1alpha1 Workload and tombstones spec.workloadRef: the
    error says so whatever the gates (before, with them off, it asked for GenericWorkload)."""
    with pytest.raises(CaseError) as e:
        build_case({"version": version, "nodes": NODES, **doc}, "t")
    assert tuple(e.value.path) == where
    assert f"in {version}: 1.36 replaced 1.35's gang API" in str(e.value)


def test_a_statefulset_replacement_of_the_deleted_waiting_pod_does_not_hide_the_stale_mark():
    # the replacement has the pod's name, not its UID: upstream still crashes at the next wait
    owners = [{"kind": "StatefulSet", "name": "ss", "selector": {"matchLabels": {"app": "w"}}}]
    pod = {"requests": {"cpu": "3"}, "workloadRef": REF, "labels": {"app": "w"},
           "controller": {"kind": "StatefulSet", "name": "ss"}}
    with pytest.raises(CaseError, match=r"pod w-0 waits at GangScheduling's Permit in the group of w-0, deleted"):
        _run([{"name": "w-0", **pod}, {"name": "w-1", **pod, "requests": {"cpu": "5"}},
              {"deletePod": "w-0"}], objects=(GANG2,), owners=owners)


def test_a_pod_waiting_on_a_deleted_node_waits_on_out_of_the_snapshot_until_its_deadline():
    sched, _, placements = _run([
        {"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "workloadRef": REF}, {"deleteNode": "n1"},
        {"name": "late", "requests": {"cpu": "1"}}])
    assert list(sched.waiting) == ["w-0", "w-1"] and sched.waiting["w-0"][1] == "n1"
    assert list(sched.snapshot.node_infos) == ["n2"]  # n1 out of sight; its assumed pod not evicted
    assert sched.sequence.evicted == [] and placements["late"] == "n2"
    sched, _, placements = _run([
        {"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "workloadRef": REF}, {"deleteNode": "n1"},
        {"wait": 300}])
    assert sched.sequence.run.rejected == {"w-0": TIMEOUT_REASON, "w-1": TIMEOUT_REASON}
    assert sched.waiting == {} and [p.key for p in sched.nominator.on_node("n1")] == ["w-0"]
    assert placements == {"w-0": "n1", "w-1": "n2", "w-2": None}


def test_a_node_added_again_of_a_deleted_nodes_name_holds_the_pod_waiting_there():
    # the cache kept n1's NodeInfo with w-0 assumed on it; AddNode gives it the new node
    sched, _, placements = _run([
        {"name": "w", "replicas": 3, "requests": {"cpu": "3"}, "workloadRef": REF}, {"deleteNode": "n1"},
        {"addNode": {"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}},
        {"name": "late", "requests": {"cpu": "2"}}])
    assert [p.key for p in sched.snapshot.get("n1").pods.values()] == ["w-0"]
    assert placements["late"] is None and list(sched.waiting) == ["w-0", "w-1"]


def test_a_gang_completed_while_a_pod_waits_on_a_deleted_node_is_refused():
    gang = dict(WORKLOAD, spec={"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 2}}}]})
    with pytest.raises(CaseError, match="pod w-1 completes its gang, whose w-0 waited at Permit on a node deleted "
                                        "meanwhile: upstream binds the pod to the missing node"):
        _run([{"name": "w-0", "requests": {"cpu": "3"}, "workloadRef": REF},
              {"name": "w-1", "requests": {"cpu": "3"}, "workloadRef": REF,
               "schedulingGates": [{"name": "x/hold"}]},
              {"deleteNode": "n1"}, {"ungate": {"pod": "w-1", "gate": "x/hold"}}], objects=(gang,))


GANG2 = {**WORKLOAD, "spec": {"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 2}}}]}}


def test_deleting_a_waiting_pod_rejects_it_frees_its_node_and_empties_its_group():
    # w-0 waits on n1 (3 of 4 cpu); w-1 (5 cpu) fits nowhere; other takes n2 and other-2
    # finds no room. Deleting w-1, then w-0: w-0 leaves its group (now empty, gone), is
    # rejected and forgotten, and its node's AssignedPodDelete moves other-2 there
    sched, results, placements = _run([
        {"name": "w-0", "requests": {"cpu": "3"}, "workloadRef": REF},
        {"name": "w-1", "requests": {"cpu": "5"}, "workloadRef": REF},
        {"name": "other", "requests": {"cpu": "3"}}, {"name": "other-2", "requests": {"cpu": "3"}},
        {"deletePod": "w-1"}, {"deletePod": "w-0"}], objects=(GANG2,))
    run = sched.sequence.run
    assert [(r.pod.key, r.waiting_on, r.bound_node) for r in results] == [
        ("w-0", "n1", None), ("w-1", None, None), ("other", None, "n2"), ("other-2", None, None),
        ("other-2", None, "n1")]
    assert sched.waiting == {} and run.waiting_q == {} and run.rejected == {"w-0": "removed"}
    assert sched.gang.groups == {}
    assert "w-0" not in run.queue.in_flight and run.queue.pods["w-0"].where == "gone"
    assert sched.nominator.on_node("n1") == [] and "w-0" not in sched.pending
    assert [p.key for p in sched.snapshot.get("n1").pods.values()] == ["other-2"]
    assert placements == {"w-0": None, "w-1": None, "other": "n2", "other-2": "n1"}
    assert sched.sequence.evicted == ["w-1", "w-0"]


def test_a_deleted_waiting_pod_no_longer_counts_and_the_rest_wait_to_the_groups_deadline():
    gang = dict(GANG2, spec={"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 3}}}]})
    sched, _, placements = _run([
        {"name": "w-0", "requests": {"cpu": "3"}, "workloadRef": REF},
        {"name": "w-1", "requests": {"cpu": "3"}, "workloadRef": REF, "schedulingGates": [{"name": "x/hold"}]},
        {"name": "w-2", "requests": {"cpu": "3"}, "workloadRef": REF},
        {"wait": 100}, {"deletePod": "w-0"}, {"wait": 199}], objects=(gang,))
    g = next(iter(sched.gang.groups.values()))
    assert sorted(g.all) == ["w-1", "w-2"] and list(g.assumed) == ["w-2"] and g.deadline == 300
    assert list(sched.waiting) == ["w-2"]
    # Unreserve marked the deleted pod unscheduled again, in a group that no longer has it
    assert sched.gang.dangling(g.all["w-2"]) == ["w-0"]
    sched, _, placements = _run([
        {"name": "w-0", "requests": {"cpu": "3"}, "workloadRef": REF},
        {"name": "w-1", "requests": {"cpu": "3"}, "workloadRef": REF, "schedulingGates": [{"name": "x/hold"}]},
        {"name": "w-2", "requests": {"cpu": "3"}, "workloadRef": REF},
        {"wait": 100}, {"deletePod": "w-0"}, {"wait": 200}], objects=(gang,))
    assert sched.sequence.run.rejected == {"w-0": "removed", "w-2": TIMEOUT_REASON}
    assert placements["w-2"] == "n2" and placements["w-0"] is None


def test_the_groups_next_permit_wait_after_a_waiting_pod_was_deleted_is_refused_as_upstream_crashes():
    # 1.35.4: GangScheduling's Unreserve puts the deleted w-0 back among the group's
    # unscheduled pods, and w-2's Permit wait reads its object (nil): a crash
    with pytest.raises(CaseError, match=r"pod w-2 waits at GangScheduling's Permit in the group of w-0, deleted "
                                        r"while it waited there: 1.35.4's scheduler crashes here"):
        _run([{"name": "w-0", "requests": {"cpu": "3"}, "workloadRef": REF},
              {"name": "w-1", "requests": {"cpu": "5"}, "workloadRef": REF},
              {"deletePod": "w-0"}, {"name": "w-2", "requests": {"cpu": "3"}, "workloadRef": REF}],
             objects=(GANG2,))


def _claims_case() -> dict:
    with open(Path(__file__).resolve().parent.parent / "cases" / "gangs" / "gang-pods-with-claims-to-bind.yaml",
              encoding="utf-8") as f:
        return list(yaml.safe_load_all(f))[2]


def test_a_waiting_gang_pods_reserve_assumes_its_claim_which_prebind_writes_or_unreserve_reverts():
    from kspread.engine.storage import ANN_SELECTED_NODE

    doc = _claims_case()
    doc["schedule"][2]["requests"]["cpu"] = "9"  # worker-1 fits no node: worker-0 waits on n1
    doc.pop("expect")
    sched, results, _ = run_case(build_case(doc, "t"), keep_all=True)
    storage = sched.handle.storage
    assert sched.waiting.keys() == {"worker-0"}
    # the API object is as written; VolumeBinding's cache has it selected for n1
    assert ANN_SELECTED_NODE not in storage.pvcs["default/shared"].annotations
    assert storage.binder_view().pvcs["default/shared"].annotations[ANN_SELECTED_NODE] == "n1"
    assert storage.assumptions["worker-0"].node == "n1"
    assert results[1].statuses["n2"].reasons == ("node(s) didn't find available persistent volumes to bind",)
    # rejected at the deadline: Unreserve reverts the assumption
    doc["schedule"].append({"wait": 300})
    sched, _, _ = run_case(build_case(doc, "t"))
    storage = sched.handle.storage
    assert sched.waiting == {} and storage.assumptions == {} and storage.assumed_pvcs == {}
    assert storage.binder_view() is storage
    # the gang completes: PreBind writes it (provisioned in n1's zone, bound)
    sched, _, placements = run_case(build_case(_claims_case(), "t"))
    storage = sched.handle.storage
    assert placements == {"worker-0": "n1", "reader": None, "worker-1": "n2"}
    assert storage.pvcs["default/shared"].volume_name == "pvc-default-shared" and storage.assumed_pvcs == {}


def test_a_claim_another_binding_wrote_while_a_gang_pod_waited_with_it_assumed_is_refused_at_prebind():
    doc = _claims_case()
    doc["nodes"][0]["allocatable"]["cpu"] = "4"  # reader fits n1 and binds the shared claim there
    with pytest.raises(CaseError, match=r"pod worker-0's VolumeBinding PreBind writes default/shared as its "
                                        r"Reserve assumed them, and they changed since"):
        run_case(build_case(doc, "t"))


def test_a_gang_pod_with_bound_claims_and_the_quorum_pod_with_a_claim_to_bind():
    storage = [
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "wffc"},
         "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "scratch", "namespace": "default"},
         "spec": {"storageClassName": "wffc", "accessModes": ["ReadWriteOnce"],
                  "resources": {"requests": {"storage": "1Gi"}}}}]
    vol = [{"name": "d", "persistentVolumeClaim": {"claimName": "scratch"}}]
    # the pod that makes the quorum does not wait: its claim is bound at once, as for any pod
    sched, _, placements = _run([
        {"name": "w-0", "requests": {"cpu": "1"}, "workloadRef": REF},
        {"name": "w-1", "requests": {"cpu": "1"}, "workloadRef": REF},
        {"name": "w-2", "requests": {"cpu": "1"}, "workloadRef": REF, "volumes": vol}], objects=(WORKLOAD, *storage))
    assert placements == {"w-0": "n1", "w-1": "n2", "w-2": "n1"}
    assert sched.handle.storage.pvcs["default/scratch"].volume_name == "pvc-default-scratch"


def test_a_wait_that_crosses_no_tick_flushes_nothing_a_waiting_pod_could_see():
    # the golden case: the tick at 330 was flushed by the first wait; the 1 s wait after it
    # crosses none, so worker-0 sees no UnschedulableTimeout while it waits and, rejected at
    # its deadline, stays with the unschedulable pods (upstream: one cycle of worker-0)
    with open(Path(__file__).resolve().parent.parent / "cases" / "gangs" / "no-second-flush-at-a-tick.yaml",
              encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    sched, results, _ = run_case(build_case(doc, "t"))
    run = sched.sequence.run
    assert [(r.pod.key, r.waiting_on) for r in results] == [("worker-0", "n1")]
    assert run.rejected == {"worker-0": TIMEOUT_REASON} and sched.waiting == {}
    assert run.queue.pods["worker-0"].where == "unschedulable"


def _in_flight_case(i: int) -> dict:
    with open(Path(__file__).resolve().parent.parent / "cases" / "gangs" / "gang-pods-with-claims-in-flight.yaml",
              encoding="utf-8") as f:
        return list(yaml.safe_load_all(f))[i]


def test_a_waiting_gang_pods_claim_allocation_is_in_flight_until_prebind_writes_or_unreserve_drops_it():
    doc = _in_flight_case(0)
    doc["schedule"][2]["requests"]["cpu"] = "9"  # worker-1 fits no node: worker-0 waits on n2
    doc.pop("expect")
    sched, results, _ = run_case(build_case(doc, "t"), keep_all=True)
    tracker = sched.claims
    assert sched.waiting.keys() == {"worker-0"}
    # nothing written; the allocation in flight counts for other pods' filters
    assert tracker.get("default", "worker-0-gpu").allocation is None
    flying, owner = tracker.in_flight[("default", "worker-0-gpu")]
    assert owner == ("worker-0",) and [str(d) for d in flying.allocation.devices] == ["gpu.example.com/n2/gpu-0"]
    assert ("gpu.example.com", "n2", "gpu-0") in tracker.allocated_devices()
    assert results[1].pod.key == "other" and not results[1].selected
    # rejected at the deadline: Unreserve drops it
    doc["schedule"].append({"wait": 300})
    sched, _, _ = run_case(build_case(doc, "t"))
    assert sched.waiting == {} and sched.claims.in_flight == {} and sched.waiting_states == {}
    assert sched.claims.get("default", "worker-0-gpu").allocation is None
    # the gang completes: PreBind writes it
    sched, _, _ = run_case(build_case(_in_flight_case(0), "t"))
    claim = sched.claims.get("default", "worker-0-gpu")
    assert sched.claims.in_flight == {} and claim.reserved_for == ("worker-0",)
    assert [str(d) for d in claim.allocation.devices] == ["gpu.example.com/n2/gpu-0"]


def test_a_claim_in_flight_is_in_the_process_of_being_allocated_for_a_pod_sharing_it():
    sched, results, _ = run_case(build_case(_in_flight_case(2), "t"), keep_all=True)
    assert results[1].pod.key == "reader"
    st = results[1].pre_filter_status
    # (DynamicResources' statusUnschedulable is UnschedulableAndUnresolvable: no preemption)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.plugin == "DynamicResources"
    assert results[1].preemption is None or results[1].preemption.nominated_node is None
    assert st.reasons == ("resource claim default/shared-gpu is in the process of being allocated",)
    assert sched.claims.get("default", "shared-gpu").reserved_for == ("worker-0", "reader")


def test_a_waiting_gang_pod_with_devices_with_binding_conditions_is_refused():
    doc = _in_flight_case(0)
    doc["featureGates"].update(DRADeviceBindingConditions=True, DRAResourceClaimDeviceStatus=True)
    slice_ = next(o for o in doc["objects"] if o["kind"] == "ResourceSlice")
    slice_["spec"]["devices"] = [{"name": "gpu-0", "bindingConditions": ["ready"],
                                  "bindingFailureConditions": ["failed"]}]
    with pytest.raises(CaseError, match=r"pod worker-0 of a gang would wait at GangScheduling's Permit, then in "
                                        r"DynamicResources' PreBind for the binding conditions of "
                                        r"gpu.example.com/n2/gpu-0"):
        run_case(build_case(doc, "t"))

def test_the_golden_cases_run_through_the_cli(tmp_path):
    from kspread.workflow.cli import main

    gangs = Path(__file__).resolve().parent.parent / "cases" / "gangs"
    assert main(["run", "-q", str(gangs)]) == 0
    with open(gangs / "gang.yaml", encoding="utf-8") as f:
        assert len(list(yaml.safe_load_all(f))) >= 7


def test_a_waiting_gang_pod_with_an_extended_resources_claim_is_refused():
    doc = _in_flight_case(0)
    doc["featureGates"]["DRAExtendedResource"] = True
    doc["objects"][0]["spec"]["extendedResourceName"] = "example.com/gpu"
    worker = doc["schedule"][0]
    del worker["resourceClaims"]
    worker["requests"]["example.com/gpu"] = 1
    doc["schedule"] = [worker, {**doc["schedule"][2], "requests": {"cpu": "9"}}]
    doc.pop("expect")
    with pytest.raises(CaseError, match=r"pod worker-0 would wait at GangScheduling's Permit holding "
                                        r"DynamicResources' in-flight allocation of its extended resources' claim "
                                        r"\(worker-0-extended-resources\)"):
        run_case(build_case(doc, "t"))


def test_a_claim_deallocated_while_a_gang_pod_waited_with_it_is_refused_at_prebind():
    doc = _in_flight_case(2)
    holder = {"name": "holder", "requests": {"cpu": "1"}, "resourceClaims": doc["schedule"][1]["resourceClaims"]}
    # holder allocates shared-gpu; worker-0 waits with it (allocated: nothing in flight); holder's
    # deletion deallocates it (the resource claim controller: no pod reserves it)
    late = {**doc["schedule"][2], "requests": {"cpu": "9"}}  # fits no node: worker-0 waits
    doc["schedule"] = [holder, doc["schedule"][0], late, {"deletePod": "holder"},
                       {**doc["schedule"][2], "name": "worker-2"}]
    doc.pop("expect")
    with pytest.raises(CaseError, match=r"pod worker-0's DynamicResources PreBind finds default/shared-gpu allocated "
                                        r"or deallocated since its Reserve"):
        run_case(build_case(doc, "t"))


def test_a_waiting_gang_pods_extended_resources_served_by_its_nodes_device_plugin_put_nothing_in_flight():
    # DRAExtendedResource: the pod's extended resource is backed by a DeviceClass, but n1's own
    # allocatable has it (a device plugin): Filter allocates nothing there, and Reserve, the pod
    # waiting at Permit, has nothing to put in flight (upstream returns at once; kspread raised
    # StopIteration)
    doc = yaml.safe_load("""
name: t
version: "1.35"
featureGates: {GenericWorkload: true, GangScheduling: true, DRAExtendedResource: true}
nodes:
- {name: n1, allocatable: {cpu: "4", memory: 8Gi, pods: 110, example.com/gpu: "1"}}
objects:
- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu},
   spec: {extendedResourceName: example.com/gpu, selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]}}
- {apiVersion: scheduling.k8s.io/v1alpha1, kind: Workload, metadata: {name: training},
   spec: {podGroups: [{name: workers, policy: {gang: {minCount: 2}}}]}}
schedule:
- {name: worker-0, requests: {cpu: "1", example.com/gpu: "1"}, workloadRef: {name: training, podGroup: workers}}
- {name: worker-1, requests: {cpu: "9"}, workloadRef: {name: training, podGroup: workers}}
""")
    sched, results, placements = run_case(build_case(doc, "t"), keep_all=True)
    assert sched.waiting.keys() == {"worker-0"} and results[0].waiting_on == "n1"
    assert sched.claims.in_flight == {}
    assert placements == {"worker-0": None, "worker-1": None}
