"""The scheduling queue of a ``schedule`` sequence (kspread/engine/queue.py): which events
move a pod that failed, per version and SchedulerQueueingHints, the backoff and where a
retried pod runs."""

from __future__ import annotations

from typing import Any

import pytest

from kspread.engine.queue import SchedulingQueue, backoff_seconds
from kspread.engine.scheduler import Scheduler, run_case
from kspread.engine.versions import Version
from kspread.format.case import build_case
from kspread.workflow.runner import run_loaded

FIT = {"filter": ["NodeResourcesFit"], "postFilter": ["DefaultPreemption"]}
AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "topology.kubernetes.io/zone"}]}}


def _case(version: str, schedule: list, **extra: Any):
    doc: dict[str, Any] = {"apiVersion": "kspread/v1", "kind": "Case", "version": version,
                           "nodes": [{"name": "n1", "labels": {"topology.kubernetes.io/zone": "za"}}],
                           "schedule": schedule, **extra}
    return build_case(doc, "t")


def _cycles(results) -> list[str]:
    return [r.pod.key for r in results]


@pytest.mark.parametrize("version", ["1.35", "1.31", "1.20"])
def test_a_binding_retries_a_pod_whose_affinity_it_satisfies(version):
    """Issue 18's first reproducer: web fails (no app=db pod), db's binding moves it back
    (1.35: InterPodAffinity's hint; 1.31: AssignedPodAdded's cross-topology pre-filter and
    the plugin's registration; 1.20: the matching affinity term) and web lands on n1."""
    case = _case(version, [{"name": "web", "priority": 100, "labels": {"app": "web"}, "affinity": AFFINITY},
                           {"name": "db", "labels": {"app": "db"}}])
    sched, results, placements = run_case(case)
    assert _cycles(results) == ["web", "db", "web"]
    assert placements == {"web": "n1", "db": "n1"}
    assert sched.attempts == {"web": 2, "db": 1}
    assert [r.attempt for r in results] == [1, 1, 2]


@pytest.mark.parametrize("version", ["1.35", "1.31", "1.20"])
def test_a_binding_the_affinity_does_not_match_moves_nothing(version):
    case = _case(version, [{"name": "web", "priority": 100, "affinity": AFFINITY},
                           {"name": "other", "labels": {"app": "other"}}])
    sched, results, placements = run_case(case)
    assert _cycles(results) == ["web", "other"]
    assert placements == {"web": None, "other": "n1"}
    assert sched.attempts == {"web": 1, "other": 1}


def test_attempts_are_reported_with_the_placements():
    case = _case("1.35", [{"name": "web", "priority": 100, "affinity": AFFINITY},
                          {"name": "db", "labels": {"app": "db"}}], expect={"placements": {"web": "n1", "db": "n1"}})
    out = run_loaded(case)
    assert out.diffs == []
    assert out.actual["attempts"] == {"web": 2, "db": 1}


def _fit_case(version: str, schedule: list, gates: dict | None = None):
    doc: dict[str, Any] = {
        "apiVersion": "kspread/v1", "kind": "Case", "version": version, "profile": FIT,
        "nodes": [{"name": "n1", "allocatable": {"cpu": "2", "memory": "4Gi", "pods": 110}}],
        "pods": [{"name": "v", "node": "n1", "priority": 10, "requests": {"cpu": "2"}}],
        "schedule": schedule}
    if gates:
        doc["featureGates"] = gates
    return build_case(doc, "t")


@pytest.mark.parametrize("version", ["1.35", "1.31", "1.24", "1.20"])
def test_a_preemptor_runs_again_after_the_pods_not_yet_tried(version):
    """h preempts v and waits in backoffQ (its victim's deletion came during its cycle):
    l, lower but not yet tried, runs first and fits next to h's nomination; h comes back
    once activeQ is empty and fits beside l."""
    case = _fit_case(version, [{"name": "h", "priority": 100, "requests": {"cpu": "1"}},
                               {"name": "l", "priority": 1, "requests": {"cpu": "1"}}])
    sched, results, placements = run_case(case)
    assert _cycles(results) == ["h", "l", "h"]
    assert [r.preemption.nominated_node if r.preemption else None for r in results] == ["n1", None, None]
    assert placements == {"h": "n1", "l": "n1"}
    assert sched.attempts == {"h": 2, "l": 1}


def test_a_binding_does_not_move_a_pod_only_resources_rejected():
    """NodeResourcesFit registers deletions only: a later binding leaves a pod it rejected
    unschedulable, with hints on or off."""
    for version, gates in (("1.35", None), ("1.31", None), ("1.31", {"SchedulerQueueingHints": True})):
        case = _fit_case(version, [{"name": "big", "priority": 100, "preemptionPolicy": "Never",
                                    "requests": {"cpu": "3"}},
                                   {"name": "small", "priority": 1, "preemptionPolicy": "Never"}], gates)
        _, results, placements = run_case(case)
        assert _cycles(results) == ["big", "small"], version
        assert placements == {"big": None, "small": "n1"}


def test_deletion_hint_ignores_a_pod_that_was_neither_bound_nor_nominated():
    sched = Scheduler(_fit_case("1.35", [{"name": "p", "requests": {"cpu": "3"}}]))
    fit = sched.framework.plugin("NodeResourcesFit")
    assert fit is not None
    from kspread.engine.framework.interface import PodEvent

    p = sched.current(sched.case.incoming[0])
    v = sched.snapshot.get("n1").pods["v"]
    assert fit.pod_event_hint(p, PodEvent("Delete", v)) is True
    assert fit.pod_event_hint(p, PodEvent("Delete", p)) is False


def test_backoff_doubles_up_to_ten_seconds():
    assert [backoff_seconds(n) for n in range(7)] == [0, 1, 2, 4, 8, 10, 10]


@pytest.mark.parametrize("version", ["1.35", "1.31"])
def test_backoff_queue_pops_the_shortest_backoff_first(version):
    """Two pods in backoffQ: a (priority 10) failed twice, b (priority 0) once. b's backoff
    ends first: popped first from backoffQ (1.33+), flushed first (before)."""
    case = _case(version, [{"name": "a", "priority": 10}, {"name": "b"}])
    sched = Scheduler(case)
    q = SchedulingQueue(sched.version, sched.framework, case.incoming)
    qa = q.pop()
    qb = q.pop()
    assert qa is not None and qb is not None and (qa.key, qb.key) == ("a", "b")
    rejectors = frozenset({"InterPodAffinity"})
    qa.unschedulable_count = 1  # a failed once before
    q.failed(qa, qa.pod, rejectors, [])
    q.failed(qb, qb.pod, rejectors, [])
    assert (qa.where, qb.where) == ("unschedulable", "unschedulable")
    q.place(qa, "backoff")
    q.place(qb, "backoff")
    assert [q.pop().key, q.pop().key] == ["b", "a"]  # type: ignore[union-attr]
    assert q.pop() is None


def test_before_pop_from_backoffq_a_flush_moves_only_the_pods_whose_backoff_ended_before_it():
    """flushBackoffQCompleted (once a second; 1.31, SchedulerPopFromBackoffQ off) moves a pod
    whose backoff ended before the flush. Every pod fails just after the flush that released
    it, so its backoff ends just after a flush and the next second's flush moves it: z
    (backoff 2 s from 0) at 3; x, moved by z's cycle's deletion (its 1 s from 0 over), fails
    at 3 and backs off 2 s to 5 (flush 6); y (4 s from 0) at 5, alone. Jumping to the
    expiry itself put x's retry at 4 with y's, and x first by priority."""
    from kspread.engine.framework.interface import PodEvent

    case = _fit_case("1.31", [{"name": "x", "priority": 10}, {"name": "z", "priority": 5},
                              {"name": "y", "priority": 0}])
    sched = Scheduler(case)
    q = SchedulingQueue(sched.version, sched.framework, case.incoming)
    qx, qz, qy = q.pop(), q.pop(), q.pop()
    assert qx is not None and qz is not None and qy is not None and (qx.key, qz.key, qy.key) == ("x", "z", "y")
    fit = frozenset({"NodeResourcesFit"})
    qz.unschedulable_count, qy.unschedulable_count = 1, 2  # z failed once before, y twice
    for x in (qx, qz, qy):
        q.failed(x, x.pod, fit, [])
    q.place(qz, "backoff")
    q.place(qy, "backoff")
    assert [q._expiry(x) for x in (qx, qz, qy)] == [1, 2, 4]
    retries = []
    while (nxt := q.pop()) is not None:
        retries.append((nxt.key, q.now))
        if nxt.key == "z":
            q.deliver(PodEvent("Delete", case.cluster.pods[0]), skip="z")  # z's preemption deleted v
            assert qx.where == "active"
        q.failed(nxt, nxt.pod, fit, [])
        if (nxt.key, nxt.unschedulable_count) == ("x", 2):
            q.place(nxt, "backoff")
    assert retries == [("z", 3), ("x", 3), ("y", 5), ("x", 6)]


def test_before_pop_from_backoffq_a_pod_that_failed_after_a_step_backs_off_half_a_second_longer():
    """Issue 32, 1.31 seed 13 seq 4 (--steps 0.5): a step comes half a second into its second.
    a (priority 2000) failed in the run after second 2's flush, b (priority 100) in the run
    after that second's step, each its second failure: a's backoff ends just after the flush
    at 4, b's half a second later. A deletion in the run after that flush (4, before any
    step) moves b to backoffQ, and the flush at 5 moves it with a, a first by priority
    (upstream: a, b). kspread had moved b to activeQ and retried it first. A deletion at a
    step of second 4 comes after b's backoff ended: b to activeQ."""
    from kspread.engine.framework.interface import PodEvent

    for step_at_4, where in ((False, "backoff"), (True, "active")):
        case = _fit_case("1.31", [{"name": "a", "priority": 2000}, {"name": "b", "priority": 100}])
        sched = Scheduler(case)
        q = SchedulingQueue(sched.version, sched.framework, case.incoming)
        qa, qb = q.pop(), q.pop()
        assert qa is not None and qb is not None and (qa.key, qb.key) == ("a", "b")
        fit = frozenset({"NodeResourcesFit"})
        qa.unschedulable_count = qb.unschedulable_count = 1
        q.now = 2
        q.failed(qa, qa.pod, fit, [])
        q.stepped = 2  # a step at 2: b fails in the run after it
        q.failed(qb, qb.pod, fit, [])
        assert [q._expiry(x) for x in (qa, qb)] == [4, 4]
        q.place(qa, "backoff")
        q.now = 4
        if step_at_4:
            q.stepped = 4
        q.deliver(PodEvent("Delete", case.cluster.pods[0]))
        assert qb.where == where, step_at_4
        retries = []
        while (nxt := q.pop()) is not None:
            retries.append((nxt.key, q.now))
        assert retries == ([("b", 4), ("a", 5)] if step_at_4 else [("a", 5), ("b", 5)]), step_at_4


def test_gate_defaults_by_version():
    hints = {m: Version(m).gate("SchedulerQueueingHints") for m in (27, 28, 31, 32, 34, 35)}
    assert hints == {27: False, 28: False, 31: False, 32: True, 34: True, 35: True}
    pop = {m: Version(m).gate("SchedulerPopFromBackoffQ") for m in (32, 33, 35)}
    assert pop == {32: False, 33: True, 35: True}


def test_a_nomination_cleared_moves_pods_of_its_priority_or_less():
    """hasNominatedNodeNameChanged (1.33+): an AssignedPodDelete of the pod as it was (nominated),
    offered to the pods of its priority or less; NodeResourcesFit's hint queues them (the
    deleted pod was nominated)."""
    from dataclasses import replace

    from kspread.engine.framework.interface import PodEvent

    case = _fit_case("1.35", [{"name": "low", "priority": 1, "requests": {"cpu": "3"}},
                              {"name": "high", "priority": 9, "requests": {"cpu": "3"}}])
    sched = Scheduler(case)
    q = SchedulingQueue(sched.version, sched.framework, case.incoming)
    qs = {x.key: x for x in (q.pop(), q.pop()) if x is not None}
    for x in qs.values():
        q.failed(x, x.pod, frozenset({"NodeResourcesFit"}), [])
    was = replace(case.incoming[0], name="n", nominated_node="n1", priority=5)
    q.deliver(PodEvent("Delete", was, max_priority=5))
    assert (qs["low"].where, qs["high"].where) == ("backoff", "unschedulable")
    q.deliver(PodEvent("Delete", replace(was, nominated_node=None), max_priority=9))
    assert qs["high"].where == "unschedulable"  # neither bound nor nominated: Fit's hint skips it
    assert [Version(m).queue_sees_nomination_changes for m in (32, 33)] == [False, True]


@pytest.mark.parametrize("version, cycles", [
    ("1.32", ["k", "h", "m", "k", "h"]),
    ("1.33", ["k", "h", "m", "k", "h", "m"]),
    ("1.34", ["k", "h", "m", "k", "h", "m"]),
    ("1.35", ["k", "h", "m", "k", "h"]),
])
def test_a_nominated_pod_bound_moves_pods_of_its_priority_or_less_in_1_33_and_1_34(version, cycles):
    """1.33/1.34: the unscheduled pods' handler sees h's binding as h's deletion, nominated
    (deletePodFromSchedulingQueue: an AssignedPodDelete for the pods of priority 100 or
    less): m (50) is retried, k (200, which v's deletion had moved) is not. 1.35's
    ``inBinding`` and 1.32's handler move neither."""
    case = _fit_case(version, [{"name": "k", "priority": 200, "preemptionPolicy": "Never", "requests": {"cpu": "3"}},
                               {"name": "m", "priority": 50, "requests": {"cpu": "1"}},
                               {"name": "h", "priority": 100, "requests": {"cpu": "2"}}])
    _, results, placements = run_case(case)
    assert _cycles(results) == cycles
    assert placements == {"k": None, "m": None, "h": "n1"}
    assert [Version(m).queue_sees_bound_nomination for m in (32, 33, 34, 35)] == [False, True, True, False]


def test_before_1_31_a_binding_is_not_offered_to_pods_only_spreading_rejected():
    """With queueing hints off, AssignedPodAdded offers a binding to the pods
    PodTopologySpread rejected only from 1.31 (PR #122627)."""
    spread = [{"maxSkew": 1, "topologyKey": "tier", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "x"}}}]
    for version, cycles in (("1.31", ["s", "t", "s"]), ("1.30", ["s", "t"])):
        case = _case(version, [{"name": "s", "priority": 100, "labels": {"app": "x"},
                                "topologySpreadConstraints": spread},
                               {"name": "t", "labels": {"app": "x"}}])
        _, results, _ = run_case(case)
        assert _cycles(results) == cycles, version


RETRY_ORDER = """
apiVersion: kspread/v1
kind: Case
name: t
version: "1.35"
profile: {config: sched.yaml}
nodes: [{name: n6, allocatable: {cpu: "2", memory: 16Gi, pods: 4}}]
pods: [{name: p8, namespace: ns1, node: n6, requests: {cpu: 1500m, memory: 512Mi}}]
schedule:
- {name: q5, priority: 100, requests: {cpu: "2", memory: 1Gi}}
- {name: q9, priority: 0, requests: {cpu: "2", memory: 512Mi}}
- {name: q11, priority: 1000, preemptionPolicy: Never, requests: {cpu: 1500m, memory: 1Gi}}
expect: {placements: {q5: null, q9: null, q11: n6}}
"""


@pytest.mark.parametrize("max_backoff, cycles", [
    # upstream's default (10 s): q5, failed twice, backs off 2 s, after q9's 1 s
    (None, ["q11", "q5", "q9", "q11", "q5", "q9", "q5"]),
    # podMaxBackoffSeconds 1 (the fullcycle oracle's setting): the same window, q5 first by priority
    (1, ["q11", "q5", "q9", "q11", "q5", "q5", "q9"]),
])
def test_backoff_of_a_configuration_orders_backoffq(tmp_path, max_backoff, cycles):
    """q5 preempts p8; q11 binds; q5 fails again and its nomination is cleared, which
    (1.33+) moves q5 itself and q9 (both rejected by NodeResourcesFit) to backoffQ."""
    from kspread.format.loader import load_case, read_file

    (tmp_path / "sched.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        + (f"podMaxBackoffSeconds: {max_backoff}\n" if max_backoff else ""))
    (tmp_path / "c.yaml").write_text(RETRY_ORDER)
    [doc] = read_file(str(tmp_path / "c.yaml")).docs
    _, results, placements = run_case(load_case(doc))
    assert _cycles(results) == cycles
    assert placements == {"q5": None, "q9": None, "q11": "n6"}


def test_a_sequence_that_would_not_settle_is_a_clear_error(monkeypatch):
    import kspread.engine.scheduler as scheduler
    from kspread.errors import CaseError

    monkeypatch.setattr(scheduler, "CYCLES_PER_POD", 0)
    with pytest.raises(CaseError, match="kspread bug: the schedule sequence did not settle after 0 scheduling cycles"):
        run_case(_case("1.35", [{"name": "a"}]))


def test_a_pod_entering_activeq_on_its_creation_or_ungating_is_handed_to_the_nominator():
    """moveToActiveQ for UnscheduledPodAdd / UnscheduledPodUpdate adds the pod's
    status.nominatedNodeName to the nominator; a pod a scheduling gate holds is not added
    until the gate goes, and a pod without a nomination never."""
    from dataclasses import replace

    case = _fit_case("1.35", [{"name": "a", "nominatedNode": "n1"}, {"name": "b"},
                              {"name": "g", "nominatedNode": "n1", "schedulingGates": [{"name": "x/y"}]}])
    sched = Scheduler(case)
    handed: list[str] = []
    q = SchedulingQueue(sched.version, sched.framework, case.incoming, nominate=lambda p: handed.append(p.key))
    assert handed == ["a"]
    g = q.pods["g"].pod
    assert q.ungate(replace(g, scheduling_gates=()))
    assert handed == ["a", "g"]
