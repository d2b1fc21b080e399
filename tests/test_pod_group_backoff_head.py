"""1.36, pod groups: a parked pod group at the head of podBackoffQ is popped (and repeats its
cycle, which kspread counts without running) before the pods behind it
(kspread.engine.queue._repeat_parked_heads)."""

from __future__ import annotations

from pathlib import Path

from kspread.engine.scheduler import run_case
from kspread.format.case import build_case
from kspread.format.yamlio import load_strict

CASE = Path(__file__).resolve().parent.parent / "cases" / "gangs" / "parked-group-at-backoff-head-136.yaml"


def test_the_parked_group_at_the_head_repeats_and_the_pods_behind_it_come_first():
    doc = next(iter(load_strict(CASE.read_text())))
    _, results, _ = run_case(build_case(doc, "t"), keep_all=True)
    order = [r.pod.key for r in results]
    group = ["wl0-pg0-3", "wl0-pg0-2", "wl0-pg0-1", "wl0-pg0-4"]
    # after the preemptions and the group's second cycle: q21 and q22 bind, then the group
    # (before: the group, parked but at podBackoffQ's head, ran between them)
    tail = order[order.index("ns1/q25", 6):]
    assert tail == ["ns1/q25", *group, "q21", "q22", *group]
    assert [r.bound_node for r in results if r.pod.key in ("q21", "q22") and r.bound_node] == ["n4", "n4"]


def test_a_group_waiting_in_the_error_queue_repeats_at_its_backoff_flush():
    from kspread.engine.scheduler import SequenceRun

    # a gang of three of which two pods exist, both fit: the group cannot be placed, and both
    # pods wait in backoffQ's error queue (no plugin rejected them), which is not popped
    doc = {"version": "1.36", "featureGates": {"GenericWorkload": True, "GangScheduling": True},
           "nodes": [{"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}],
           "objects": [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g"},
                        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}}],
           "schedule": [{"name": "w", "replicas": 2, "requests": {"cpu": "1"}, "schedulingGroup": {"podGroupName": "g"}},
                        {"name": "late", "requests": {"cpu": "1"}, "schedulingGroup": {"podGroupName": "g"},
                         "schedulingGates": [{"name": "x"}]}]}
    case = build_case(doc, "t")
    run = SequenceRun(case, None, True, list(case.incoming))
    run.until_idle()
    qs = run.queue.pods
    # the repeat kspread counts without running it comes when the flush moves the first of
    # them (backoff 1 s from 0: the flush of second 2), so the clock is there when idle
    assert run.queue.now == 2
    assert [(qs[k].errors_count, qs[k].failed_at) for k in ("w-0", "w-1")] == [(2, 2), (2, 2)]


def test_a_parked_group_repeats_while_only_the_error_queue_has_live_pods():
    """While the pods that could be popped all wait in backoffQ's error queue (a group pod
    whose PreBind lost a shared claim), upstream pops podBackoffQ's parked group and its
    cycle repeats: counted once per change (_pop_groups). Found with dev/seqtest.py
    --gangs 1 --devices --group-claims (issue 37): without it kspread popped that group
    before pods upstream popped first."""
    import copy

    from kspread.engine.scheduler import SequenceRun

    shared = Path(__file__).resolve().parent.parent / "cases" / "gangs" / "pod-group-shared-claims-136.yaml"
    doc = copy.deepcopy(next(d for d in load_strict(shared.read_text())
                             if d["name"] == "pod-group-pods-share-an-unallocated-claim"))
    doc.pop("expect")
    doc["objects"].append({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "big"},
                           "spec": {"schedulingPolicy": {"basic": {}}}})
    doc["schedule"] = [{"name": "huge", "requests": {"cpu": "100"}, "schedulingGroup": {"podGroupName": "big"}},
                       *doc["schedule"]]
    case = build_case(doc, "t")
    order: list[str] = []
    run = SequenceRun(case, lambda s, r: order.append(r.pod.key), True, list(case.incoming))
    run.until_idle()
    assert order == ["huge", "worker-1", "worker-0", "huge", "worker-0", "huge"]
    # its three cycles and the repeats kspread counts; one of them while worker-0 waits out
    # its error backoff (without it: 4)
    assert run.queue.pods["huge"].unschedulable_count == 5


def test_parked_groups_repeat_from_the_head_of_backoffq_until_each_has_repeated():
    """activeQ empty and every pod in podBackoffQ of a parked group: upstream pops the head again
    and again (_repeat_backoff_heads), so x0, whose 1 s backoff is the shortest, repeats three
    times before y0 repeats once, and once more before w0; after the wait the groups come back in
    the order of their last repeats (y, x, w), and y0 takes the node added. kspread counted one
    repeat per group in the heads' order (x, y, w) and gave n2 to x0. Found with dev/seqtest.py
    --gangs 1 --devices --group-claims 0.7, seed 3605, sequence 26 (issue 32)."""
    case = Path(__file__).resolve().parent.parent / "cases" / "gangs" / "parked-groups-repeat-from-backoffq-head-136.yaml"
    doc = next(iter(load_strict(case.read_text())))
    sched, results, placements = run_case(build_case(doc, "t"), keep_all=True)
    assert [r.pod.key for r in results] == ["w0", "w0", "y0", "y0", "w0", "x0", "y0", "x0", "w0"]
    assert placements == {"w0": None, "y0": "n2", "x0": None}
    # x0: its cycle at 33, four repeats then, one after the wait, its cycle after n2's addition
    # and the repeat of that one
    assert sched.sequence.run.queue.pods["x0"].unschedulable_count == 8


def test_a_wait_for_the_error_queue_passes_the_leftover_flush_tick():
    """While the scheduler waits for the error queue's backoff flush (a gang's fitting pods,
    the group not placeable), the clock passes the 30 s tick of flushUnschedulablePodsLeftover:
    p, unschedulable since 0, moves back at 330 and is retried before the group's next cycle
    (_leftover_tick). kspread jumped to the flush and left p out; the oracle logs p, w-0, w-1,
    p. Found with dev/seqtest.py --gangs 1 --devices --group-priorities, seed 3612, sequence 33
    (issue 32)."""
    doc = {"version": "1.36", "featureGates": {"GenericWorkload": True, "GangScheduling": True},
           "nodes": [{"name": "n1", "allocatable": {"cpu": "4", "memory": "4Gi", "pods": 110}}],
           "objects": [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g"},
                        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}}],
           "schedule": [{"name": "p", "requests": {"cpu": "8"}},
                        {"wait": 329},
                        {"name": "w", "replicas": 2, "requests": {"cpu": "1"}, "schedulingGroup": {"podGroupName": "g"}},
                        {"name": "late", "requests": {"cpu": "1"}, "schedulingGroup": {"podGroupName": "g"},
                         "schedulingGates": [{"name": "x"}]}]}
    sched, results, _ = run_case(build_case(doc, "t"), keep_all=True)
    assert [r.pod.key for r in results] == ["p", "w-0", "w-1", "p"]
    assert sched.sequence.run.queue.pods["p"].failed_at == 330
