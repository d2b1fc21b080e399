"""TopologyAwareWorkloadScheduling (1.36, alpha; issue 32): PodGroups'
spec.schedulingConstraints, the pod group cycle's placement algorithm
(kspread.engine.podgroupplacement, podgroupcycle), the preemption refusals for a
constrained group, and the KubeSchedulerConfiguration's placement extension points."""

from __future__ import annotations

import textwrap

import pytest

from kspread.engine.diagnosis import verdict
from kspread.engine.framework.profile import placement_plugins
from kspread.engine.plugins.podgroups import Condition
from kspread.engine.scheduler import run_case
from kspread.engine.versions import Version, make_version
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.format.config import load_config
from kspread.workflow.runner import run_loaded

GATES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
ZONE = "topology.kubernetes.io/zone"
SG = {"podGroupName": "workers"}
KEY = ("default", "workers")
TOPOLOGY = {"topology": [{"key": ZONE}]}


def _node(name, zone, cpu="4"):
    labels = {ZONE: zone} if zone else {}
    return {"name": name, "labels": labels, "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": 110}}


def _pg(min_count=2, constraints=TOPOLOGY, **spec):
    s = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}, **spec}
    if constraints is not None:
        s["schedulingConstraints"] = constraints
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "workers"},
            "spec": s}


def _run(nodes, schedule, pg=None, gates=GATES, pods=(), base_dir=None, **extra):
    doc = {"version": "1.36", "featureGates": gates, "nodes": nodes, "pods": list(pods),
           "objects": [pg if pg is not None else _pg()], "schedule": schedule, **extra}
    case = build_case(doc, "t", base_dir=base_dir)
    return run_case(case, keep_all=True)


def _workers(n, cpu="3", **kw):
    return [{"name": "w", "replicas": n, "requests": {"cpu": cpu}, "schedulingGroup": SG, **kw}]


TWO_ZONES = [_node("a1", "za"), _node("a2", "za"), _node("b1", "zb"), _node("b2", "zb")]


# ---- the API -----------------------------------------------------------------------------------

def test_the_constraint_is_read_with_the_gate_on():
    case = build_case({"version": "1.36", "featureGates": GATES, "nodes": TWO_ZONES, "objects": [_pg()],
                       "schedule": _workers(2)}, "t")
    pg = case.cluster.pod_groups[KEY]
    assert (pg.constrained, pg.topology_key) == (True, ZONE)
    # an empty constraint is set (DefaultPreemption reads that) without a topology key
    case = build_case({"version": "1.36", "featureGates": GATES, "nodes": TWO_ZONES,
                       "objects": [_pg(constraints={})], "schedule": _workers(2)}, "t")
    pg = case.cluster.pod_groups[KEY]
    assert (pg.constrained, pg.topology_key) == (True, None)


@pytest.mark.parametrize("constraints, where, text", [
    ({"topology": [{"key": ZONE}, {"key": "rack"}]}, ("topology",), "Too many: 2: must have at most 1 item"),
    ({"topology": [{}]}, ("topology", 0, "key"), "Required value"),
    ({"topology": [{"key": "-bad-"}]}, ("topology", 0, "key"), "Invalid value: '-bad-'"),
    ({"topology": [{"key": ZONE, "values": ["za"]}]}, ("topology", 0, "values"), "unknown field 'values'"),
    ({"rack": 1}, ("rack",), "unknown field 'rack'"),
])
def test_the_constraint_is_checked_as_the_api_server_does(constraints, where, text):
    with pytest.raises(CaseError) as e:
        build_case({"version": "1.36", "featureGates": GATES, "nodes": TWO_ZONES,
                    "objects": [_pg(constraints=constraints)], "schedule": _workers(2)}, "t")
    assert text in e.value.message
    assert tuple(e.value.path) == ("objects", 0, "spec", "schedulingConstraints", *where)


def test_the_constraint_needs_the_gate_and_the_gate_needs_generic_workload():
    with pytest.raises(CaseError) as e:
        build_case({"version": "1.36", "featureGates": {"GenericWorkload": True}, "nodes": TWO_ZONES,
                    "objects": [_pg()], "schedule": _workers(2)}, "t")
    assert "schedulingConstraints needs the feature gate TopologyAwareWorkloadScheduling" in e.value.message
    assert "set featureGates: {TopologyAwareWorkloadScheduling: true}" in e.value.message
    with pytest.raises(CaseError) as e:
        make_version("1.36", {"TopologyAwareWorkloadScheduling": True})
    assert "depends on features that are disabled: [GenericWorkload]" in e.value.message
    with pytest.raises(CaseError):
        make_version("1.35", {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})


# ---- the placement algorithm ------------------------------------------------------------------

def test_a_gang_that_fits_no_zone_fails_with_the_placements_status():
    sched, results, placements = _run(TWO_ZONES, _workers(4), _pg(4))
    assert placements == {f"w-{i}": None for i in range(4)}
    # upstream's group status: the count of placements, then the first's (the default
    # algorithm's) status
    assert sched.groups.conditions[KEY] == Condition(
        "False", "Unschedulable", "0/2 placements are available, first placement status: pod group is unschedulable")
    # the pods' statuses are the first placement's (za, whose nodes are a1 and a2): two fit,
    # two fit nowhere in za, where DefaultPreemption does not run for a constrained group
    by = {r.pod.key: r for r in results}
    fit = [k for k, r in by.items() if r.pod_group.node is not None]
    assert sorted(by[k].pod_group.node for k in fit) == ["a1", "a2"]
    for k, r in by.items():
        if k in fit:
            assert verdict(sched.version, r) == "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled"
        else:
            # (DynamicResources' PostFilter first: the plugins' reasons joined)
            assert verdict(sched.version, r) == ("0/2 nodes are available: 2 Insufficient cpu. no new claims to "
                                                 "deallocate, preemption: not eligible due to placement-based pod "
                                                 "group scheduling limitation")
    # every placement's run is kept, in the order tried (za first: its first node comes first)
    last = results[-1].pod_group
    assert len(last.placement_runs) == 2 and last.chosen == 0
    assert {c.node for c in last.placement_runs[1]} == {"b1", "b2", None}


def test_placements_whose_pods_end_differently_are_reported():
    # za's single node holds one 3-CPU worker, zb's two nodes two: which placement upstream
    # reports first is a Go map's order; kspread takes za's and reports the order it took
    nodes = [_node("a1", "za"), _node("b1", "zb"), _node("b2", "zb")]
    doc = {"version": "1.36", "featureGates": GATES, "nodes": nodes, "objects": [_pg(3)], "schedule": _workers(3),
           "expect": {"placements": {"w-0": None, "w-1": None, "w-2": None}}}
    outcome = run_loaded(build_case(doc, "t"))
    assert outcome.actual["placementOrder"] == {f"w-{i}": ["za", "zb"] for i in range(3)}
    assert [r.pod_group.node for r in outcome.cycles if r.pod_group.node] == ["a1"]
    # alike zones give every pod the same status: nothing to report
    doc = {**doc, "nodes": TWO_ZONES, "objects": [_pg(4)], "schedule": _workers(4),
           "expect": {"placements": {f"w-{i}": None for i in range(4)}}}
    assert "placementOrder" not in run_loaded(build_case(doc, "t")).actual


def test_no_node_with_the_topology_label_gives_no_placement():
    nodes = [_node("n1", None), _node("n2", None)]
    sched, results, placements = _run(nodes, _workers(2, cpu="1"))
    assert placements == {"w-0": None, "w-1": None}
    assert sched.groups.conditions[KEY] == Condition("False", "Unschedulable", "no feasible placements found")
    # no pod ran a scheduling cycle (upstream's schedulePod neither), each counted its pop
    assert results == [] and sched.attempts == {"w-0": 1, "w-1": 1}


def test_a_group_without_constraints_has_one_placement_of_every_node():
    sched, _, placements = _run(TWO_ZONES, _workers(5), _pg(5, constraints=None))
    assert all(n is None for n in placements.values())
    assert sched.groups.conditions[KEY].message == ("0/1 placements are available, first placement status: pod "
                                                    "group is unschedulable")
    # ... where it lands across zones when it fits
    sched, _, placements = _run(TWO_ZONES, _workers(4), _pg(4, constraints=None))
    assert sorted(placements.values()) == ["a1", "a2", "b1", "b2"]


def test_node_resources_fit_scores_the_fuller_placement_higher():
    # both zones hold the pair (PodGroupPodsCount: 100 each); za's node already has 2 CPUs
    # requested, so MostAllocated over za is higher (cpu 4000/4000 against 2000/4000)
    nodes = [_node("a1", "za"), _node("b1", "zb")]
    existing = [{"name": "busy", "node": "a1", "requests": {"cpu": "2"}}]
    _, _, placements = _run(nodes, _workers(2, cpu="1"), _pg(2), pods=existing)
    assert placements == {"w-0": "a1", "w-1": "a1"}


def test_equal_placements_are_a_tie_marked_on_every_pod(monkeypatch):
    from kspread.engine.scheduler import Scheduler

    nodes = [_node("a1", "za"), _node("b1", "zb")]
    sched, _, placements = _run(nodes, _workers(2, cpu="1"), _pg(2))
    # kspread takes the first in its order; upstream one at random
    assert placements == {"w-0": "a1", "w-1": "a1"}
    assert sched.tied_nodes("w-0") == ["a1", "b1"] and sched.tied_nodes("w-1") == ["a1", "b1"]
    # the tie broken the other way (tests/test_tie_robustness.py does so)
    seen = []
    monkeypatch.setattr(Scheduler, "pick_placement", lambda self, tied: seen.append(tied) or len(tied) - 1)
    _, _, placements = _run(nodes, _workers(2, cpu="1"), _pg(2))
    assert seen == [["za", "zb"]] and placements == {"w-0": "b1", "w-1": "b1"}


def test_a_partly_scheduled_group_is_pinned_and_a_bound_pod_without_the_label_is_an_error():
    nodes = [_node("a1", "za", cpu="8"), _node("b1", "zb"), _node("x1", None)]
    first = {"name": "first", "node": "b1", "requests": {"cpu": "1"}, "schedulingGroup": SG}
    _, _, placements = _run(nodes, _workers(2, cpu="1"), _pg(0), pods=[first])
    assert placements == {"w-0": "b1", "w-1": "b1"}
    first["node"] = "x1"
    sched, results, placements = _run(nodes, _workers(2, cpu="1"), _pg(0), pods=[first])
    assert placements == {"w-0": None, "w-1": None}
    msg = "cannot determine domain for already scheduled pods: no topology domain found for pod default/first"
    assert sched.groups.conditions[KEY] == Condition("False", "SchedulerError", msg)
    assert results == [] and sched.attempts == {"w-0": 1, "w-1": 1}


def test_scheduled_pods_in_two_domains_are_refused():
    nodes = [_node("a1", "za"), _node("b1", "zb")]
    pods = [{"name": f"p{i}", "node": n, "requests": {"cpu": "1"}, "schedulingGroup": SG}
            for i, n in enumerate(("a1", "b1"))]
    with pytest.raises(CaseError) as e:
        _run(nodes, _workers(1, cpu="1"), _pg(0), pods=pods)
    assert "scheduled pods are in several domains" in e.value.message


def test_workload_aware_preemption_is_refused_for_a_constrained_group():
    gates = {**GATES, "WorkloadAwarePreemption": True}
    nodes = [_node("a1", "za"), _node("b1", "zb")]
    low = [{"name": f"low-{n}", "node": n, "priority": 0, "requests": {"cpu": "3"}} for n in ("a1", "b1")]
    pg = _pg(2, priority=1000)
    sched, results, placements = _run(nodes, _workers(2), pg, gates=gates, pods=low)
    assert placements == {"w-0": None, "w-1": None}
    assert sched.groups.conditions[KEY].message == (
        "0/2 placements are available, first placement status: pod group is unschedulable, workload aware "
        "preemption is not supported for pod groups with scheduling constraints")
    assert not results[-1].pod_group.victims
    # the same group without the constraint preempts for itself
    _, results, placements = _run(nodes, _workers(2), _pg(2, constraints=None, priority=1000), gates=gates,
                                  pods=low)
    assert sorted(v.key for r in results for v in r.pod_group.victims) == ["low-a1", "low-b1"]
    assert sorted(placements.values()) == ["a1", "b1"]


# ---- the configuration -----------------------------------------------------------------------

def _cfg(tmp_path, plugins: str = "") -> str:
    p = tmp_path / "sched.yaml"
    body = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    if plugins:
        body += "profiles:\n- schedulerName: default-scheduler\n  plugins:\n" + textwrap.indent(
            textwrap.dedent(plugins).strip(), "    ") + "\n"
    p.write_text(body)
    return str(p)


def test_the_configuration_has_the_placement_plugins_with_the_gate_on(tmp_path):
    on = Version(36, GATES)
    prof = load_config(_cfg(tmp_path), on)
    assert placement_plugins(prof, on) == (("TopologyPlacementGenerator",),
                                           (("NodeResourcesFit", 1), ("PodGroupPodsCount", 1)))
    off = Version(36, {"GenericWorkload": True})
    assert placement_plugins(load_config(_cfg(tmp_path), off), off) == ((), (("NodeResourcesFit", 1),))
    prof = load_config(_cfg(tmp_path, """
        placementGenerate: {disabled: [{name: TopologyPlacementGenerator}]}
        placementScore: {enabled: [{name: PodGroupPodsCount, weight: 3}]}
    """), on)
    assert placement_plugins(prof, on) == ((), (("PodGroupPodsCount", 3), ("NodeResourcesFit", 1)))


def test_the_configuration_refuses_what_upstream_refuses(tmp_path):
    with pytest.raises(CaseError) as e:
        load_config(_cfg(tmp_path, "placementGenerate: {enabled: [{name: TopologyPlacementGenerator}]}"),
                    Version(35, {}))
    assert "placementGenerate" in e.value.message
    with pytest.raises(CaseError) as e:
        load_config(_cfg(tmp_path, "placementScore: {enabled: [{name: TopologyPlacementGenerator}]}"),
                    Version(36, GATES))
    assert "does not extend PlacementScorePlugin plugin" in e.value.message


def test_a_configuration_without_the_generator_tries_one_placement(tmp_path):
    _cfg(tmp_path, "placementGenerate: {disabled: [{name: TopologyPlacementGenerator}]}")
    # the gang of four fits the cluster, not a zone: without the generator it lands across zones
    _, _, placements = _run(TWO_ZONES, _workers(4), _pg(4), profile={"config": "sched.yaml"},
                            base_dir=str(tmp_path))
    assert sorted(placements.values()) == ["a1", "a2", "b1", "b2"]


def test_a_nominated_node_outside_the_placement_is_not_tried_first():
    # w-0 is nominated to b1 (zb). In za's run the nominated node is in the cluster but not
    # in the placement: the search covers a1 and a2 only, and the pair fits there; in zb's
    # run w-1 finds no room. Trying b1 first in za's run would have put w-0 in zb.
    nodes = [_node("a1", "za"), _node("a2", "za"), _node("b1", "zb")]
    schedule = [{"name": "w-0", "requests": {"cpu": "3"}, "schedulingGroup": SG, "nominatedNode": "b1"},
                {"name": "w-1", "requests": {"cpu": "3"}, "schedulingGroup": SG}]
    _, results, placements = _run(nodes, schedule, _pg(2))
    assert sorted(placements.values()) == ["a1", "a2"]
    # (zb's run: b1 holds one of them, the other finds no room)
    assert sorted(str(c.node) for c in results[-1].pod_group.placement_runs[1]) == ["None", "b1"]


def test_the_backend_is_sent_the_constraint():
    from kspread.workflow.backend import _pod_group

    case = build_case({"version": "1.36", "featureGates": GATES, "nodes": TWO_ZONES,
                       "objects": [_pg(), {**_pg(constraints={}), "metadata": {"name": "other"}}],
                       "schedule": _workers(2)}, "t")
    assert _pod_group(case.cluster.pod_groups[KEY])["spec"]["schedulingConstraints"] == TOPOLOGY
    assert _pod_group(case.cluster.pod_groups[("default", "other")])["spec"]["schedulingConstraints"] == {}
    case = build_case({"version": "1.36", "featureGates": GATES, "nodes": TWO_ZONES,
                       "objects": [_pg(constraints=None)], "schedule": _workers(2)}, "t")
    assert "schedulingConstraints" not in _pod_group(case.cluster.pod_groups[KEY])["spec"]


def test_the_placement_scores_follow_upstreams_formulas():
    from kspread.engine import podgroupplacement as pgp
    from kspread.engine.scheduler import Scheduler

    # za: a1 (4 CPU, 8Gi) runs a 2-CPU pod (no memory request: 200Mi non-zero); zb: b1, b2
    # (4 CPU, 8Gi each), empty. Two 1-CPU, 1Gi pods proposed in each.
    nodes = [_node("a1", "za"), _node("b1", "zb"), _node("b2", "zb")]
    case = build_case({"version": "1.36", "featureGates": GATES, "nodes": nodes, "objects": [_pg()],
                       "pods": [{"name": "busy", "node": "a1", "requests": {"cpu": "2"}}],
                       "schedule": [{"name": "w", "replicas": 2, "requests": {"cpu": "1", "memory": "1Gi"},
                                     "schedulingGroup": SG}]}, "t")
    sched = Scheduler(case)
    pods = list(case.incoming)
    za, zb = pgp.Placement("za", ("a1",)), pgp.Placement("zb", ("b1", "b2"))
    fit = sched.framework.plugin("NodeResourcesFit")
    mi = 1024 * 1024
    # MostAllocated: cpu min(2000 + 2000, 4000) * 100 // 4000 = 100; memory (2Gi + 200Mi) * 100 // 8Gi = 27
    assert pgp._fit_placement_score(sched, fit, za, pods) == (100 + (2048 + 200) * mi * 100 // (8192 * mi)) // 2
    # zb: cpu 2000 * 100 // 8000 = 25; memory 2Gi * 100 // 16Gi = 12
    assert pgp._fit_placement_score(sched, fit, zb, pods) == (25 + 12) // 2
    # PodGroupPodsCount: 2 of 2 proposed in za, 1 in zb: 100 and 50; plus the Fit score
    totals = pgp.score(sched, None, [(za, pods), (zb, pods[:1])])
    one = pgp._fit_placement_score(sched, fit, zb, pods[:1])
    assert totals == [63 + 100, one + 50]


# ---- a placement's run that errs (podGroupSchedulingPlacementAlgorithm returns it at once) ----

A100 = 'device.attributes["gpu.example.com"].model == "a100"'


def _gpus(good: str, bad: str, good_devices: int = 2) -> list[dict]:
    """A DeviceClass, a template asking for an a100, ``good``'s node with a100s and ``bad``'s
    with a device lacking the ``model`` attribute: the claims' selector errs there (CEL
    runtime error: no such key), which DynamicResources' Filter returns as an Error."""
    def slice_(node, devices):
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
                "spec": {"driver": "gpu.example.com", "nodeName": node, "pool": {"name": node, "resourceSliceCount": 1},
                         "devices": devices}}
    return [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}},
        slice_(good, [{"name": f"gpu-{i}", "attributes": {"model": {"string": "a100"}}} for i in range(good_devices)]),
        slice_(bad, [{"name": "gpu-0"}]),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "a100"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
             "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
             "selectors": [{"cel": {"expression": A100}}]}}]}}}},
    ]


CLAIM = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "a100"}]}


def _erring(nodes, schedule, pg, objects):
    """The case run with every cycle the scheduler observes kept (``run_case``'s hook: what
    ``kspread explain`` sees): (scheduler, results, placements, observed (pod, error))."""
    doc = {"version": "1.36", "featureGates": GATES, "nodes": nodes, "objects": [*objects, pg], "schedule": schedule}
    seen: list[tuple[str, str | None]] = []
    sched, results, placements = run_case(build_case(doc, "t"), lambda s, r: seen.append((r.pod.key, r.error)),
                                          keep_all=True)
    return sched, results, placements, seen


def test_a_placement_run_that_errs_is_the_groups_run():
    # za (a1: two a100s) holds the gang; b1's device makes DynamicResources' Filter err in zb.
    # kspread tries za first (its node comes first): that run fits, zb's errs, and zb's is the
    # group's run (upstream: at once when zb comes first, after za otherwise; cases/gangs/
    # pod-group-placement-run-errs-136.yaml, through the 1.36 backend)
    nodes = [_node("a1", "za"), _node("b1", "zb")]
    lone = {"name": "lone", "requests": {"cpu": "1"}, "nodeSelector": {ZONE: "zb"}}
    sched, results, placements, seen = _erring(
        nodes, [lone, *_workers(2, cpu="1", **CLAIM)], _pg(2), _gpus("a1", "b1"))
    err = ('running "DynamicResources" filter plugin: claim default/w-1-gpu: selector #0: CEL runtime error: '
           'no such key: model')
    assert placements == {"lone": "b1", "w-0": None, "w-1": None}
    assert sched.claims.allocations() == {"w-0-gpu": None, "w-1-gpu": None}
    assert sched.groups.conditions[KEY] == Condition(
        "False", "SchedulerError", f"failed to schedule other pod from a pod group: {err}")
    # the group's pods run in the order they entered activeQ: w-1's creation let the gang in
    # (PreEnqueue), and moved w-0 after it. The cycles observed and kept are zb's run, w-1's
    # try alone (the Error stopped it): za's tries are not the group's
    assert seen == [("lone", None), ("w-1", err)]
    assert [(r.pod.key, r.error) for r in results] == seen
    last = results[-1]
    assert last.searched_count() == 0 and last.pod_group.node is None
    # every run is kept for the oracle's log, on the last pod that ran (w-0 ran in no
    # cycle of zb's run): za's, where both fit on a1, then zb's, the one returned
    pg = last.pod_group
    assert pg.chosen == 1
    assert [[(c.pod, c.node, c.error) for c in one] for one in pg.placement_runs] == [
        [("w-1", "a1", ""), ("w-0", "a1", "")], [("w-1", None, err)]]


def test_a_placement_run_that_errs_ends_the_placements():
    # the erring zone first: its run is returned without trying zb, where both pods fit; the
    # pod that fit before the Error (lead, on a1) binds nowhere
    nodes = [_node("a1", "za"), _node("b1", "zb")]
    schedule = [{"name": "lead", "requests": {"cpu": "1"}, "schedulingGroup": SG},
                {"name": "worker", "requests": {"cpu": "1"}, "schedulingGroup": SG, **CLAIM}]
    sched, results, placements, seen = _erring(nodes, schedule, _pg(0), _gpus("b1", "a1", good_devices=1))
    err = ('running "DynamicResources" filter plugin: claim default/worker-gpu: selector #0: CEL runtime error: '
           'no such key: model')
    assert placements == {"lead": None, "worker": None}
    assert sched.groups.conditions[KEY].reason == "SchedulerError"
    assert seen == [("lead", None), ("worker", err)]
    pg = results[-1].pod_group
    assert pg.chosen == 0
    assert [[(c.pod, c.node, c.error) for c in one] for one in pg.placement_runs] == [
        [("lead", "a1", ""), ("worker", None, err)]]
    # lead fit on a1 in the run returned: the group's Error fails it all the same, with the
    # group's status
    lead = results[0].pod_group
    assert (lead.node, lead.bound, lead.group_status) == ("a1", False, "Error")
    assert lead.message == f"failed to schedule other pod from a pod group: {err}"
