"""A cluster's life in a ``schedule`` sequence (kspread/engine/steps.py): the steps, the
controllers' replacements, the taint manager, PodDisruptionBudgets through the eviction
API, scheduling gates, ``replicas: max``, the node events the queue receives and the
errors of steps that name what the cluster does not have."""

from __future__ import annotations

from typing import Any

import pytest

from kspread.engine import steps as steps_module
from kspread.engine.model import Node, Taint, Toleration
from kspread.engine.scheduler import run_case
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.workflow.runner import run_loaded
from tests.helpers import verdict

RS = {"kind": "ReplicaSet", "name": "web-rs", "selector": {"matchLabels": {"app": "web"}}}
WEB = {"labels": {"app": "web"}, "controller": {"kind": "ReplicaSet", "name": "web-rs"}}


def _doc(schedule: list, version: str = "1.35", **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "kspread/v1", "kind": "Case", "version": version,
                           "nodes": ["n1", "n2", "n3"], "schedule": schedule}
    doc.update(extra)
    return doc


def _run(schedule: list, version: str = "1.35", **extra: Any):
    case = build_case(_doc(schedule, version, **extra), "t")
    sched, results, placements = run_case(case)
    return sched, results, placements


def _out(schedule: list, version: str = "1.35", **extra: Any) -> dict[str, Any]:
    case = build_case(_doc(schedule, version, **extra), "t")
    return run_loaded(case).actual


# ---- drain and PodDisruptionBudgets ---------------------------------------------------------


def test_drain_evicts_in_case_order_and_a_pdb_keeps_the_rest():
    pods = [{"name": n, "node": "n1", **WEB} for n in ("a", "b", "c")] + [{"name": "d", "node": "n2", **WEB}]
    out = _out([{"drain": "n1"}], owners=[RS], pods=pods,
               pdbs=[{"name": "p", "selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 2}])
    # 4 healthy, maxUnavailable 2: two evictions allowed, a then b; c stays
    assert out["evicted"] == ["a", "b"]
    assert out["placements"]["c"] == "n1"
    assert {k: v for k, v in out["placements"].items() if k.startswith("web-rs-r")} == {
        "web-rs-r1": "n3", "web-rs-r2": "n2"}
    rec = out["timeline"][0]
    assert rec["step"] == "drain n1" and rec["evicted"] == ["a", "b"] and rec["kept"] == ["c"]
    assert rec["created"] == ["web-rs-r1", "web-rs-r2"]


def test_drain_refuses_a_pod_two_budgets_cover_and_keeps_daemonset_pods():
    pods = [{"name": "a", "node": "n1", **WEB},
            {"name": "ds", "node": "n1", "controller": {"kind": "DaemonSet", "name": "logs"}},
            {"name": "gone", "node": "n1", "terminating": True, **WEB}]
    sel = {"matchLabels": {"app": "web"}}
    out = _out([{"drain": "n1"}], owners=[RS], pods=pods,
               pdbs=[{"name": "p1", "selector": sel, "disruptionsAllowed": 5},
                     {"name": "p2", "selector": sel, "disruptionsAllowed": 5}])
    # the eviction API refuses a pod with two budgets; a terminating pod goes without a check
    assert out["evicted"] == ["gone"]
    assert out["placements"]["a"] == "n1" and out["placements"]["ds"] == "n1"


def test_a_status_only_budget_keeps_its_desired_count():
    """disruptionsAllowed 1 over 3 healthy pods: desired 2. After one eviction and its
    replacement's binding, the recount allows one again."""
    pods = [{"name": "a", "node": "n1", **WEB}, {"name": "b", "node": "n1", **WEB}, {"name": "c", "node": "n2", **WEB}]
    out = _out([{"drain": "n1"}, {"uncordon": "n1"}, {"drain": "n1"}], owners=[RS], pods=pods,
               pdbs=[{"name": "p", "selector": {"matchLabels": {"app": "web"}}, "disruptionsAllowed": 1}])
    assert out["evicted"] == ["a", "b"]


def test_disruptions_allowed_formula():
    f = steps_module.disruptions_allowed
    assert f(("minAvailable", 2), 3, 3) == 1
    assert f(("minAvailable", "50%"), 3, 3) == 1  # 1.5 rounded up
    assert f(("maxUnavailable", "34%"), 3, 3) == 2  # 1.02 rounded up: desired 1
    assert f(("desired", 5), 0, 3) == 0


# ---- controllers ------------------------------------------------------------------------------


def test_a_statefulset_recreates_its_pod_under_the_same_name():
    sts = {"kind": "StatefulSet", "name": "db", "selector": {"matchLabels": {"app": "db"}}}
    pods = [{"name": "db-0", "node": "n1", "labels": {"app": "db"}, "controller": {"kind": "StatefulSet", "name": "db"}}]
    out = _out([{"cordon": "n1"}, {"deletePod": "db-0"}], owners=[sts], pods=pods)
    assert out["evicted"] == ["db-0"]
    assert out["placements"]["db-0"] == "n2"
    assert out["timeline"][1]["created"] == ["db-0"]


def test_a_controller_the_case_does_not_have_replaces_nothing():
    pods = [{"name": "a", "node": "n1", **WEB}]
    out = _out([{"deletePod": "a"}], pods=pods)  # no ReplicaSet web-rs among the owners
    assert out["evicted"] == ["a"] and out["placements"] == {"a": None}


def test_preemption_victims_count_as_evicted_and_are_not_replaced():
    pods = [{"name": "low", "node": "n1", "priority": 0, "requests": {"cpu": "1"}, **WEB}]
    nodes = [{"name": "n1", "allocatable": {"cpu": "1", "memory": "1Gi", "pods": 10}}]
    out = _out([{"cordon": "n1"}, {"uncordon": "n1"},
                {"name": "high", "priority": 100, "requests": {"cpu": "1"}}], owners=[RS], pods=pods, nodes=nodes)
    assert out["evicted"] == ["low"]
    assert out["placements"] == {"high": "n1", "low": None}


# ---- the taint manager ------------------------------------------------------------------------


def test_a_timer_keeps_the_time_it_was_set():
    """processPodOnNode keeps an earlier timer: a second NoExecute taint, tolerated as long,
    does not push the eviction back."""
    tol = [{"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300} for k in ("k1", "k2")]
    pods = [{"name": "p", "node": "n1", "tolerations": tol}]
    base = [{"taint": {"node": "n1", "key": "k1", "effect": "NoExecute"}}, {"wait": 100},
            {"taint": {"node": "n1", "key": "k2", "effect": "NoExecute"}}]
    assert _out([*base, {"wait": 199}], pods=pods)["evicted"] == []
    assert _out([*base, {"wait": 200}], pods=pods)["evicted"] == ["p"]


def test_the_least_toleration_seconds_of_the_tolerations_used_decides():
    tol = [{"key": "k1", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 50},
           {"key": "k2", "operator": "Exists", "effect": "NoExecute"}]
    pods = [{"name": "p", "node": "n1", "tolerations": tol}]
    sched = [{"taint": {"node": "n1", "key": "k2", "effect": "NoExecute"}}, {"wait": 1000}]
    assert _out(sched, pods=pods)["evicted"] == []  # k2 tolerated for ever
    sched = [{"taint": {"node": "n1", "key": "k1", "effect": "NoExecute"}}, {"wait": 49}]
    assert _out(sched, pods=pods)["evicted"] == []
    sched = [{"taint": {"node": "n1", "key": "k1", "effect": "NoExecute"}}, {"wait": 50}]
    assert _out(sched, pods=pods)["evicted"] == ["p"]


def test_a_pod_bound_on_a_tainted_node_gets_its_own_timer():
    tol = [{"key": "m", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]
    nodes = [{"name": "n1", "taints": [{"key": "m", "effect": "NoExecute"}]}]
    out = _out([{"name": "p", "tolerations": tol}, {"wait": 59}, {"name": "q", "tolerations": tol}, {"wait": 1}],
               nodes=nodes)
    assert out["evicted"] == ["p"]  # q, bound at 59, has until 119
    assert out["placements"] == {"p": None, "q": "n1"}


def test_evictions_that_would_go_on_for_ever_are_an_error_naming_the_step(monkeypatch):
    """Without TaintToleration the scheduler puts the replacement back on the NoExecute
    node, the taint manager evicts it, and so on."""
    monkeypatch.setattr(steps_module, "MAX_EVICTIONS", 50)
    doc = _doc([{"taint": {"node": "n1", "key": "m", "effect": "NoExecute"}}], owners=[RS],
               nodes=["n1"], pods=[{"name": "a", "node": "n1", **WEB}], profile={"filter": ["NodeName"]})
    with pytest.raises(CaseError) as e:
        run_case(build_case(doc, "t"))
    assert "evicted 50 pods by `taint n1 m:NoExecute`" in str(e.value)
    assert e.value.path == ("schedule", 0)


# ---- gates, capacity, the clock ------------------------------------------------------------------


def test_a_gated_pod_is_never_tried_until_its_last_gate_goes():
    gates = [{"name": "g1"}, {"name": "g2"}]
    _sched, results, placements = _run([{"name": "p", "schedulingGates": gates},
                                       {"ungate": {"pod": "p", "gate": "g1"}}])
    assert results == [] and placements == {"p": None}
    _sched, results, placements = _run([{"name": "p", "schedulingGates": gates},
                                       {"ungate": {"pod": "p", "gate": "g2"}}, {"ungate": {"pod": "p", "gate": "g1"}}])
    assert [r.pod.key for r in results] == ["p"] and placements["p"] == "n1"


def test_gates_without_steps_hold_the_pod_for_good():
    _sched, _results, placements = _run([{"name": "p", "schedulingGates": [{"name": "g"}]}, {"name": "q"}])
    assert placements == {"p": None, "q": "n1"}


def test_capacity_stops_at_the_first_replica_that_does_not_fit_and_never_preempts():
    nodes = [{"name": "n1", "allocatable": {"cpu": "3", "memory": "8Gi", "pods": 110}}]
    pods = [{"name": "low", "node": "n1", "priority": -5, "requests": {"cpu": "1"}}]
    out = _out([{"name": "w", "priority": 1000, "replicas": "max", "requests": {"cpu": "1"}}], nodes=nodes, pods=pods)
    assert out["capacity"] == {"w": 2}
    assert out["placements"] == {"w-0": "n1", "w-1": "n1", "w-2": None, "low": "n1"}
    assert out["evicted"] == []


def test_capacity_is_bounded(monkeypatch):
    monkeypatch.setattr(steps_module, "MAX_REPLICAS", 5)
    with pytest.raises(CaseError) as e:
        _run([{"name": "w", "replicas": "max"}])
    assert "5 replicas placed and more would fit" in str(e.value)
    assert e.value.path == ("schedule", 0, "replicas")


@pytest.mark.parametrize(("version", "wait", "retried"),
                         [("1.31", 300, False), ("1.31", 330, True), ("1.23", 60, False), ("1.23", 90, True)])
def test_unschedulable_pods_are_flushed_after_the_limit(version, wait, retried):
    """podMaxInUnschedulablePodsDuration: 5 min from 1.24, 60 s before; checked on the 30 s
    ticks, strictly longer."""
    nodes = [{"name": "n1", "allocatable": {"cpu": "1", "memory": "1Gi", "pods": 10}}]
    sched, _results, _ = _run([{"name": "p", "requests": {"cpu": "2"}}, {"wait": wait}], version, nodes=nodes)
    assert sched.attempts["p"] == (2 if retried else 1)


# ---- the queue's node events -------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.35", "1.31"])
def test_a_node_added_moves_only_the_pods_that_fit_it(version):
    """1.35: NodeResourcesFit's hint answers QueueSkip for big; 1.31: preCheckForNode
    refuses it. Either way big is not retried."""
    nodes = [{"name": "n1", "allocatable": {"cpu": "1", "memory": "1Gi", "pods": 10}}]
    sched, _results, placements = _run(
        [{"name": "a", "requests": {"cpu": "1"}}, {"name": "b", "requests": {"cpu": "1"}},
         {"name": "big", "requests": {"cpu": "8"}},
         {"addNode": {"name": "n9", "allocatable": {"cpu": "2", "memory": "1Gi", "pods": 10}}}], version, nodes=nodes)
    assert placements == {"a": "n1", "b": "n9", "big": None}
    assert sched.attempts == {"a": 1, "b": 2, "big": 1}


def test_a_label_event_moves_a_pod_the_cordon_rejected_only_without_hints():
    """1.35: NodeUnschedulable registers Add and UpdateNodeTaint (with hints): a label on
    the cordoned node moves nothing. 1.31 (gate off) it registers UpdateNodeLabel too and
    preCheckForNode passes (it does not read spec.unschedulable): the pod is retried, and
    fails again."""
    sched = [{"cordon": "n1"}, {"name": "p"}, {"label": {"node": "n1", "labels": {"x": "y"}}}]
    assert _run(sched, "1.35", nodes=["n1"])[0].attempts == {"p": 1}
    assert _run(sched, "1.31", nodes=["n1"])[0].attempts == {"p": 2}


def test_precheck_keeps_a_node_event_from_pods_that_do_not_fit_the_node():
    """1.31: the label event on n1 is not offered to p, which does not fit n1's CPU."""
    nodes = [{"name": "n1", "allocatable": {"cpu": "1", "memory": "1Gi", "pods": 10}}]
    sched = [{"name": "p", "requests": {"cpu": "2"}}, {"label": {"node": "n1", "labels": {"x": "y"}}}]
    assert _run(sched, "1.31", nodes=nodes)[0].attempts == {"p": 1}


def test_node_event_hints():
    from kspread.engine.framework.handle import Handle
    from kspread.engine.listers import Listers
    from kspread.engine.model import Cluster, Pod
    from kspread.engine.plugins.nodeunschedulable import NodeUnschedulable
    from kspread.engine.plugins.tainttoleration import TaintToleration
    from kspread.engine.snapshot import Snapshot
    from kspread.engine.versions import make_version

    v = make_version("1.35", None)
    cl = Cluster(nodes=[], pods=[])
    h = Handle(v, cl, Snapshot([], [], v), Listers(cl))
    n = Node("n", {}, {"pods": 10})
    tainted = Node("n", {}, {"pods": 10}, taints=(Taint("k", "", "NoSchedule"),))
    pod = Pod("p")
    tt = TaintToleration({}, h)
    assert tt.node_event_hint(pod, tainted, n) is True
    assert tt.node_event_hint(pod, n, tainted) is False
    assert tt.node_event_hint(pod, None, tainted) is False
    assert tt.node_event_hint(Pod("p", tolerations=(Toleration("k", "Exists"),)), None, tainted) is True
    nu = NodeUnschedulable({}, h)
    cordoned = Node("n", {}, {"pods": 10}, unschedulable=True)
    assert nu.node_event_hint(pod, cordoned, n) is True
    assert nu.node_event_hint(pod, n, cordoned) is False
    assert nu.node_event_hint(pod, None, cordoned) is False
    assert nu.node_events(True) == frozenset({"Add", "UpdateNodeTaint"})
    assert nu.node_events(False) == frozenset({"Add", "UpdateNodeTaint", "UpdateNodeLabel"})


# ---- the node tree ----------------------------------------------------------------------------


def test_the_node_tree_keeps_a_zone_in_place_when_its_first_node_goes():
    """a1 b1 a2: zones za, zb. Deleting a1 leaves za first (upstream's node tree); a node
    moved to another zone by a label joins the end of that zone."""
    nodes = [{"name": "a1", "labels": {"topology.kubernetes.io/zone": "za"}},
             {"name": "b1", "labels": {"topology.kubernetes.io/zone": "zb"}},
             {"name": "a2", "labels": {"topology.kubernetes.io/zone": "za"}}]
    sched, _, _ = _run([{"deleteNode": "a1"}], nodes=nodes)
    assert sched.order == ["a2", "b1"]
    sched, _, _ = _run([{"label": {"node": "a1", "labels": {"topology.kubernetes.io/zone": "zb"}}}], nodes=nodes)
    assert sched.order == ["a2", "b1", "a1"]
    sched, _, _ = _run([{"addNode": {"name": "c1", "labels": {"topology.kubernetes.io/zone": "zc"}}}], nodes=nodes)
    assert sched.order == ["a1", "b1", "c1", "a2"]


# ---- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("schedule", "message", "path"), [
    ([{"drain": "n7"}], "step 1 (`drain n7`): node 'n7' does not exist at that point", ("schedule", 0, "drain")),
    ([{"deleteNode": "n1"}, {"cordon": "n1"}], "step 2 (`cordon n1`): node 'n1' does not exist",
     ("schedule", 1, "cordon")),
    ([{"deletePod": "ghost"}], "pod 'ghost' does not exist at that point", ("schedule", 0, "deletePod")),
    ([{"untaint": {"node": "n1", "key": "k"}}], "node 'n1' has no taint k at that point",
     ("schedule", 0, "untaint", "key")),
    ([{"taint": {"node": "n1", "key": "k", "effect": "NoSchedule"}},
      {"taint": {"node": "n1", "key": "k", "effect": "NoSchedule"}}], "has a taint k:NoSchedule already",
     ("schedule", 1, "taint")),
    ([{"name": "p", "schedulingGates": [{"name": "g"}]}, {"ungate": {"pod": "p", "gate": "h"}}],
     "pod 'p' has no scheduling gate 'h' at that point", ("schedule", 1, "ungate", "gate")),
    ([{"name": "p"}, {"ungate": {"pod": "p", "gate": "h"}}], "pod 'p' is not a pending pod",
     ("schedule", 1, "ungate", "pod")),
    ([{"addNode": "n1"}], "node 'n1' exists already", ("schedule", 0, "addNode", "name")),
    ([{"zoneDown": "zz"}], "no node is in zone 'zz'", ("schedule", 0, "zoneDown")),
])
def test_a_step_naming_what_the_cluster_lacks_is_an_error_naming_it(schedule, message, path):
    with pytest.raises(CaseError) as e:
        _run(schedule)
    assert message in str(e.value)
    assert e.value.path == path


def test_errors_name_the_file_and_line(tmp_path):
    v = verdict(tmp_path, """
        name: c
        nodes: [n1]
        schedule:
        - {name: p}
        - drain: n9
        expect: {placements: {p: n1}}
        """)
    assert not v.passed
    assert "case.yaml:7: schedule[1].drain: step 2 (`drain n9`): node 'n9' does not exist" in v.message


@pytest.mark.parametrize(("doc", "message"), [
    ({"schedule": [{"drain": "n1", "cordon": "n1"}]},
     "schedule[0].cordon: a step has one key (drain, cordon given: write them as separate steps"),
    ({"schedule": [{"name": "p"}], "pods": [{"name": "e", "replicas": "max"}]}, "`replicas: max` is for entries"),
    ({"pod": {"name": "p", "schedulingGates": [{"name": "g"}]}}, "the incoming pod has scheduling gates"),
    ({"schedule": [{"name": "p", "schedulingGates": [{"name": "g"}]}], "version": "1.25"},
     "schedulingGates need the PodSchedulingReadiness feature gate"),
    ({"schedule": [{"name": "p", "schedulingGates": [{"name": "g"}, {"name": "g"}]}]}, "Duplicate value: 'g'"),
    ({"schedule": [{"name": "p"}], "expect": {"placements": {"web-rs-r1": "n1"}}}, "unknown pod 'web-rs-r1'"),
    ({"schedule": [{"name": "p"}, {"cordon": "n1"}], "expect": {"capacity": {"p": 1}}},
     "'p' is not a `replicas: max` entry of `schedule` (it has none)"),
    ({"pod": {"name": "p"}, "expect": {"evicted": []}}, "evicted is for a `schedule` sequence"),
    ({"schedule": [{"label": {"node": "n1", "labels": {"bad key!": "x"}}}]}, "schedule[0].label.labels"),
])
def test_invalid_steps_and_expectations(doc, message):
    d = _doc([], expect={"placements": {"x": None}})
    d.update(doc)
    if "pod" in doc:
        del d["schedule"]
    from kspread.format.schema import validate

    with pytest.raises(CaseError) as e:
        validate(d)
        build_case(d, "t")
    from kspread.errors import format_path

    assert message in f"{format_path(e.value.path)}: {e.value}"


def test_replacements_and_added_nodes_may_be_named_in_expectations():
    d = _doc([{"drain": "n1"}, {"addNode": "n9"}], owners=[RS], pods=[{"name": "a", "node": "n1", **WEB}],
             expect={"placements": {"web-rs-r1": "n2", "a": None}, "evicted": ["a"]})
    out = run_loaded(build_case(d, "t"))
    assert out.diffs == []


def test_objects_carry_gates_and_toleration_seconds():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c"}], "schedulingGates": [{"name": "g"}],
                    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                                     "tolerationSeconds": 30}]}}
    case = build_case(_doc([{"name": "q"}], objects=[pod]), "t")
    p = next(p for p in case.cluster.pods if p.name == "p")
    assert p.scheduling_gates == ("g",)
    assert p.tolerations[0].seconds == 30


# ---- reports ----------------------------------------------------------------------------------


def test_the_timeline_records_each_step():
    pods = [{"name": "a", "node": "n1", **WEB}, {"name": "b", "node": "n1", **WEB}]
    out = _out([{"name": "p", "requests": {"cpu": "1"}}, {"drain": "n1"}, {"wait": 30}], owners=[RS], pods=pods,
               pdbs=[{"name": "x", "selector": {"matchLabels": {"app": "web"}}, "minAvailable": 1}])
    assert out["timeline"] == [
        {"step": "create p", "clock": 0, "created": ["p"], "placed": {"p": "n1"}},
        {"step": "drain n1", "clock": 0, "evicted": ["a", "p"], "kept": ["b"], "created": ["web-rs-r1"],
         "placed": {"web-rs-r1": "n2"}},
        {"step": "wait 30", "clock": 30},
    ]


def _explain(tmp_path, capsys, body: str, *flags: str) -> str:
    """`kspread explain` of a case (apiVersion, kind, name and version 1.35 added)."""
    from kspread.workflow.cli import main

    p = tmp_path / "c.yaml"
    p.write_text('apiVersion: kspread/v1\nkind: Case\nname: c\nversion: "1.35"\n' + body, encoding="utf-8")
    assert main(["explain", *flags, str(p)]) == 0
    return capsys.readouterr().out


def test_explain_shows_the_steps_between_the_cycles(tmp_path, capsys):
    out = _explain(tmp_path, capsys, """nodes: [n1, n2]
owners: [{kind: ReplicaSet, name: web-rs, selector: {matchLabels: {app: web}}}]
pods: [{name: a, node: n1, labels: {app: web}, controller: {kind: ReplicaSet, name: web-rs}}]
schedule:
- {name: p}
- drain: n1
- uncordon: n1
expect: {placements: {web-rs-r1: n2}}
""")
    lines = [ln.strip() for ln in out.splitlines() if ln.strip().startswith(("cycle", "step"))]
    # the case's pods, then the sequence's in the order they were bound; p has no controller
    assert lines == ["cycle 1: pod p", "step: drain n1 (clock 0 s): evicted a, p; created web-rs-r1",
                     "cycle 2: pod web-rs-r1", "step: uncordon n1 (clock 0 s)"]


def test_a_backend_skips_sequences_with_steps_or_gates():
    from kspread.workflow.backend import Backend

    # a backend without the protocol `steps` (issue 32) skips steps and gates; one with it runs them
    b = Backend("kb", "v1.35.4", (), ())
    stepped = build_case(_doc([{"name": "p"}, {"cordon": "n1"}]), "t")
    assert "the sequence has steps, which the backend kb does not apply" in (b.applicable(stepped) or "")
    gated = build_case(_doc([{"name": "p", "schedulingGates": [{"name": "g"}]}]), "t")
    assert "scheduling gates" in (b.applicable(gated) or "")
    assert b.applicable(build_case(_doc([{"name": "p"}]), "t")) is None
    with_steps = Backend("kb", "v1.35.4", (), (), ("serve", "steps"))
    assert with_steps.applicable(stepped) is None and with_steps.applicable(gated) is None


@pytest.mark.parametrize(("version", "placed"), [("1.32", "a1"), ("1.31", None)])
def test_node_delete_is_an_event_from_1_32(version, placed):
    """PodTopologySpread rejected web (zone zb, with no room, counts 0); deleting b1 lifts
    the domain. From 1.32 the Node/Delete event moves web; 1.31 sends none."""
    nodes = [{"name": "a1", "labels": {"topology.kubernetes.io/zone": "za"}},
             {"name": "b1", "labels": {"topology.kubernetes.io/zone": "zb"},
              "allocatable": {"cpu": "0", "memory": "1Gi", "pods": 10}}]
    tsc = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}}]
    _, _, placements = _run([{"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "100m"},
                              "topologySpreadConstraints": tsc}, {"deleteNode": "b1"}], version, nodes=nodes,
                            pods=[{"name": "w0", "node": "a1", "labels": {"app": "web"}}])
    assert placements["web"] == placed


def test_explain_knows_the_nodes_steps_add(tmp_path, capsys):
    body = """nodes: [{name: n1, allocatable: {cpu: "1", memory: 1Gi, pods: 10}}]
schedule:
- {name: a, requests: {cpu: "1"}}
- {name: b, requests: {cpu: "1"}}
- addNode: {name: n9, allocatable: {cpu: "1", memory: 1Gi, pods: 10}}
expect: {placements: {b: n9}}
"""
    out = _explain(tmp_path, capsys, body)
    assert "step: addNode n9 (clock 0 s): moved b" in out
    assert out.rstrip().endswith("selected: n9")
    assert '"n9"' in _explain(tmp_path, capsys, body, "--json")


def test_the_pods_after_a_step_are_created_with_it():
    """p fails (n1 is full); deleting old moves p to backoffQ (still backing off), and
    late, listed after the step, is created with it in activeQ: late runs first and takes
    n1, then p fails again."""
    nodes = [{"name": "n1", "allocatable": {"cpu": "1", "memory": "1Gi", "pods": 10}}]
    pods = [{"name": "old", "node": "n1", "priority": 1000, "requests": {"cpu": "1"}}]
    _, results, placements = _run([{"name": "p", "requests": {"cpu": "1"}}, {"deletePod": "old"},
                                   {"name": "late", "requests": {"cpu": "1"}}], nodes=nodes, pods=pods)
    assert [r.pod.key for r in results] == ["p", "late", "p"]
    assert placements == {"p": None, "late": "n1", "old": None}


def test_any_taint_change_moves_pods_a_plugin_registering_node_add_rejected():
    """buildQueueingHintMap registers UpdateNodeTaint, with the default hint (Queue), for
    each plugin that registers Node/Add but not UpdateNodeTaint: with hints on, a pod only
    NodeResourcesFit rejected is retried after a PreferNoSchedule taint (upstream v1.35.4's
    whole scheduler does so), not after a label."""
    nodes = [{"name": "n1", "allocatable": {"cpu": "1", "memory": "1Gi", "pods": 10}}]
    base = [{"name": "a", "requests": {"cpu": "1"}}, {"name": "b", "requests": {"cpu": "1"}}]
    taint = {"taint": {"node": "n1", "key": "m", "value": "x", "effect": "PreferNoSchedule"}}
    assert _run([*base, taint], nodes=nodes)[0].attempts == {"a": 1, "b": 2}
    assert _run([*base, {"label": {"node": "n1", "labels": {"x": "y"}}}], nodes=nodes)[0].attempts == {"a": 1, "b": 1}


def test_a_wait_before_a_step_ends_the_backoff_of_the_pods_it_moves():
    """As above with `wait: 10` first: p's backoff has ended when the deletion moves it, so
    it goes to activeQ, where its failure time puts it before late."""
    nodes = [{"name": "n1", "allocatable": {"cpu": "1", "memory": "1Gi", "pods": 10}}]
    pods = [{"name": "old", "node": "n1", "priority": 1000, "requests": {"cpu": "1"}}]
    _, results, placements = _run([{"name": "p", "requests": {"cpu": "1"}}, {"wait": 10}, {"deletePod": "old"},
                                   {"name": "late", "requests": {"cpu": "1"}}], nodes=nodes, pods=pods)
    assert [r.pod.key for r in results] == ["p", "p", "late"]
    assert placements == {"p": "n1", "late": None, "old": None}


# ---- steps with devices and storage ---------------------------------------------------------

GPU_NODES = [{"name": n, "devices": [{"driver": "gpu.example.com", "name": "gpu", "count": 1}]} for n in ("n1", "n2")]
GPU_CLASS = [{"name": "gpu", "driver": "gpu.example.com"}]


def test_a_replicaset_replacement_gets_a_new_claim_from_the_template():
    # the evicted pod's claim a-gpu is deallocated; web-rs-r1 gets its own claim web-rs-r1-gpu
    # (a claim owned by a would stop it: "not created for pod")
    out = _out([{"name": "a", **WEB, "devices": {"gpu": {"class": "gpu"}}}, {"drain": "n1"}], owners=[RS],
               nodes=GPU_NODES, deviceClasses=GPU_CLASS)
    assert out["evicted"] == ["a"]
    assert out["placements"] == {"a": None, "web-rs-r1": "n2"}
    assert out["allocations"] == {"a-gpu": None, "web-rs-r1-gpu": ["gpu.example.com/n2/gpu-0"]}


def test_a_statefulset_replacement_keeps_its_claim_name_and_is_allocated_again():
    sts = {"kind": "StatefulSet", "name": "db", "selector": {"matchLabels": {"app": "db"}}}
    pod = {"name": "db-0", "labels": {"app": "db"}, "controller": {"kind": "StatefulSet", "name": "db"},
           "devices": {"gpu": {"class": "gpu"}}}
    case = build_case(_doc([pod, {"drain": "n1"}], owners=[sts], nodes=GPU_NODES, deviceClasses=GPU_CLASS), "t")
    sched, _, placements = run_case(case)
    assert placements == {"db-0": "n2"}
    claim = sched.claims.get("default", "db-0-gpu")
    assert [str(d) for d in claim.allocation.devices] == ["gpu.example.com/n2/gpu-0"]
    assert claim.reserved_for == ("db-0",)


def test_a_deleted_pod_releases_its_claim_and_the_claim_event_moves_the_waiting_pod():
    out = _out([{"name": "a", "devices": {"gpu": {"class": "gpu"}}},
                {"name": "b", "devices": {"gpu": {"class": "gpu"}}, "nodeSelector": {"kubernetes.io/hostname": "n1"}},
                {"deletePod": "a"}], nodes=GPU_NODES, deviceClasses=GPU_CLASS)
    assert out["placements"] == {"a": None, "b": "n1"}
    assert out["timeline"][1]["moved"] == ["b"]
    assert out["allocations"] == {"a-gpu": None, "b-gpu": ["gpu.example.com/n1/gpu-0"]}


WFFC_CLASS = {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": "fast"},
              "provisioner": "x.csi.io", "volumeBindingMode": "WaitForFirstConsumer"}
SCRATCH = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
    "storageClassName": "fast", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]


def test_an_evicted_pods_ephemeral_claim_goes_and_its_replacement_gets_its_own():
    case = build_case(_doc([{"name": "a", **WEB, "volumes": SCRATCH}, {"drain": "n1"}], owners=[RS],
                           objects=[WFFC_CLASS], profile={"filter": ["VolumeBinding", "NodeUnschedulable"]}), "t")
    sched, _, placements = run_case(case)
    assert placements == {"a": None, "web-rs-r1": "n2"}
    st = sched.handle.storage
    assert "default/a-scratch" not in st.pvcs  # the garbage collector deleted it with its pod
    assert not any(pv.claim_ref == ("default", "a-scratch") for pv in st.pvs.values())
    claim = st.pvcs["default/web-rs-r1-scratch"]
    assert claim.owner_pod == "web-rs-r1" and claim.volume_name in st.pvs


def test_a_statefulset_replacement_with_an_ephemeral_volume_gets_a_new_claim_of_the_same_name():
    # the old claim's volume (provisioned on n1) must not be taken as the new claim's
    sts = {"kind": "StatefulSet", "name": "db", "selector": {"matchLabels": {"app": "db"}}}
    pod = {"name": "db-0", "labels": {"app": "db"}, "controller": {"kind": "StatefulSet", "name": "db"},
           "volumes": SCRATCH}
    case = build_case(_doc([pod, {"drain": "n1"}], owners=[sts], objects=[WFFC_CLASS],
                           profile={"filter": ["VolumeBinding", "NodeUnschedulable"]}), "t")
    sched, _, placements = run_case(case)
    assert placements == {"db-0": "n2"}
    st = sched.handle.storage
    pv = st.pvs[st.pvcs["default/db-0-scratch"].volume_name]
    assert [r.values for r in pv.node_affinity[0].match_expressions] == [("n2",)]
    assert len(st.pvs) == 1


def test_deleting_a_pending_pod_deletes_its_ephemeral_claim():
    case = build_case(_doc([{"name": "a", "volumes": SCRATCH, "nodeSelector": {"zone": "none"}}, {"deletePod": "a"}],
                           objects=[WFFC_CLASS]), "t")
    sched, _, placements = run_case(case)
    assert placements == {"a": None}
    assert case.cluster.storage.claim("default", "a-scratch") is not None
    assert sched.handle.storage.claim("default", "a-scratch") is None


LOCAL_CLASS = {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": "local"},
               "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}


def _local_pv(name: str, node: str, claim: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                            "local": {"path": "/d"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [{
                                "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                      "values": [node]}]}]}}}
    if claim is not None:
        spec["claimRef"] = {"namespace": "default", "name": claim}
    return {"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": name}, "spec": spec}


def _owned_claim(pod: str, volume: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"storageClassName": "local", "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}}}
    meta: dict[str, Any] = {"name": f"{pod}-scratch", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": "x", "controller": True}]}
    if volume is not None:
        spec["volumeName"] = volume
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    return {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "metadata": meta, "spec": spec}


LOCAL_SCRATCH = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
    "storageClassName": "local", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]


def test_a_released_volume_moves_the_pods_volumebinding_rejected():
    # the PV controller's update (Released) of a's volume is a PersistentVolume/Update, which
    # VolumeBinding registers without a hint: b, which it rejected, is moved (and fails again:
    # a Released volume binds no claim)
    out = _out([{"name": "b", "volumes": LOCAL_SCRATCH}, {"deletePod": "a"}],
               pods=[{"name": "a", "node": "n1", "volumes": LOCAL_SCRATCH}],
               objects=[LOCAL_CLASS, _local_pv("pv1", "n1", "a-scratch"), _owned_claim("a", "pv1")],
               profile={"filter": ["VolumeBinding"]})
    assert out["placements"] == {"a": None, "b": None}
    rec = out["timeline"][1]
    assert rec["step"] == "deletePod a" and rec["moved"] == ["b"]


def test_a_preemption_victims_ephemeral_claim_goes_with_it():
    # the garbage collector deletes a victim's claims as a step's deletion's (kspread.engine.ephemeral)
    case = build_case(_doc([{"name": "hi", "priority": 10, "requests": {"cpu": "2"},
                             "nodeSelector": {"kubernetes.io/hostname": "n1"}}],
                           nodes=[{"name": "n1", "allocatable": {"cpu": "2", "pods": 10}}],
                           pods=[{"name": "a", "node": "n1", "requests": {"cpu": "2"}, "volumes": LOCAL_SCRATCH}],
                           objects=[LOCAL_CLASS, _local_pv("pv1", "n1", "a-scratch"), _owned_claim("a", "pv1")],
                           profile={"filter": ["NodeResourcesFit", "NodeName"], "postFilter": ["DefaultPreemption"]}),
                      "t")
    sched, _, placements = run_case(case)
    assert placements == {"hi": "n1"}
    st = sched.handle.storage
    assert st.claim("default", "a-scratch") is None and "pv1" not in st.pvs
    assert case.cluster.storage.claim("default", "a-scratch") is not None  # the case's objects stay


def test_a_volume_prebound_to_a_deleted_claims_name_stays_for_the_next_claim_of_that_name():
    # pv1's claimRef names db-0-scratch without a UID and the claim (unbound) never took it: the
    # PV controller leaves a pre-bound volume alone, and the replacement's new claim of that name
    # binds it (a volume the claim was bound to is Released: the statefulset test above)
    sts = {"kind": "StatefulSet", "name": "db", "selector": {"matchLabels": {"app": "db"}}}
    pod = {"name": "db-0", "labels": {"app": "db"}, "controller": {"kind": "StatefulSet", "name": "db"},
           "volumes": LOCAL_SCRATCH, "nodeSelector": {"zone": "none"}}
    sched, _, placements = _run([pod, {"deletePod": "db-0"}], owners=[sts],
                                objects=[LOCAL_CLASS, _local_pv("pv1", "n3", "db-0-scratch"),
                                         _owned_claim("db-0", None)])
    assert placements == {"db-0": None}
    assert "pv1" in sched.handle.storage.pvs and sched.handle.storage.claim("default", "db-0-scratch") is not None


def test_a_claim_another_pod_uses_is_kept_by_the_pvc_protection_finalizer_which_is_not_modelled():
    with pytest.raises(CaseError) as e:
        _run([{"deletePod": "a"}],
             pods=[{"name": "a", "node": "n1", "volumes": LOCAL_SCRATCH},
                   {"name": "b", "node": "n1", "volumes": [{"name": "d", "persistentVolumeClaim": {
                       "claimName": "a-scratch"}}]}],
             objects=[LOCAL_CLASS, _local_pv("pv1", "n1", "a-scratch"), _owned_claim("a", "pv1")])
    assert list(e.value.path) == ["schedule", 0]
    assert str(e.value).endswith(
        "pod a is deleted and the garbage collector deletes the claim 'a-scratch' of its ephemeral volume "
        "'scratch', which pod b uses as a persistentVolumeClaim: the PVC protection finalizer keeps that "
        "claim, being deleted, until no scheduled pod uses it, which kspread does not model")


def test_a_recycled_volume_of_a_deleted_ephemeral_claim_is_not_modelled():
    pv = _local_pv("pv1", "n1", "a-scratch")
    pv["spec"]["persistentVolumeReclaimPolicy"] = "Recycle"
    with pytest.raises(CaseError) as e:
        _run([{"deletePod": "a"}], pods=[{"name": "a", "node": "n1", "volumes": LOCAL_SCRATCH}],
             objects=[LOCAL_CLASS, pv, _owned_claim("a", "pv1")])
    assert list(e.value.path) == ["schedule", 0]
    assert str(e.value).endswith(
        "pod a is deleted, and the claim 'a-scratch' of its ephemeral volume with it: its volume 'pv1' has reclaim "
        "policy Recycle, whose recycler (a pod scrubbing the volume, which is then Available again) kspread does "
        "not model")
    pv["spec"]["persistentVolumeReclaimPolicy"] = "Sometimes"
    with pytest.raises(CaseError) as e:
        _run([{"deletePod": "a"}], pods=[{"name": "a", "node": "n1", "volumes": LOCAL_SCRATCH}],
             objects=[LOCAL_CLASS, pv, _owned_claim("a", "pv1")])
    assert list(e.value.path)[-2:] == ["spec", "persistentVolumeReclaimPolicy"]
    assert 'Unsupported value: "Sometimes": supported values: "Delete", "Recycle", "Retain"' in str(e.value)


def test_a_node_added_with_devices_publishes_them():
    out = _out([{"addNode": {"name": "n4", "devices": [{"driver": "gpu.example.com", "name": "gpu", "count": 1}]}},
                {"name": "p", "devices": {"gpu": {"class": "gpu"}}}], deviceClasses=GPU_CLASS)
    assert out["placements"] == {"p": "n4"}
    assert out["allocations"] == {"p-gpu": ["gpu.example.com/n4/gpu-0"]}


@pytest.mark.parametrize(("extra", "key"), [
    ({"devices": {"gpu": {"class": "gpu"}}}, "devices"),
    ({"resourceClaims": [{"name": "c", "resourceClaimTemplateName": "t"}]}, "resourceClaims"),
    ({"claims": [{"name": "data", "storageClassName": "fast", "storage": "1Gi"}]}, "claims"),
    ({"volumes": SCRATCH}, "volumes"),
])
def test_replicas_max_with_claims_is_refused_by_name(extra, key):
    with pytest.raises(CaseError) as e:
        build_case(_doc([{"name": "w", "replicas": "max", **extra}], deviceClasses=GPU_CLASS,
                        objects=[WFFC_CLASS]), "t")
    assert list(e.value.path) == ["schedule", 0, key]
    assert f"`replicas: max` with {key}: kspread does not model the claims" in str(e.value)
