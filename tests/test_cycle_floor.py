"""The fixed cost of a cycle (issue 19, "The floor"): the shortcuts that cut it give
exactly what the general path gives."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kspread.engine.model import Pod, Toleration, replace_pod
from kspread.engine.plugins.podtopologyspread import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY
from kspread.engine.scheduler import Scheduler, run_case
from kspread.format.case import build_case

ZONE = "topology.kubernetes.io/zone"


def test_replace_pod_is_dataclasses_replace():
    pod = Pod("a", "ns", {"x": "y"}, priority=3, nominated_node="n2", tolerations=(Toleration("k"),),
              start_time=1.5)
    for changes in ({"node_name": "n1", "nominated_node": None}, {"nominated_node": "n3"}, {}):
        fast, slow = replace_pod(pod, **changes), dataclasses.replace(pod, **changes)
        assert type(fast) is Pod and fast is not pod
        assert [getattr(fast, f.name) for f in dataclasses.fields(Pod)] == \
            [getattr(slow, f.name) for f in dataclasses.fields(Pod)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        replace_pod(pod).name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        replace_pod(pod, nosuch=1)


def _scheduler(extra: dict | None = None) -> Scheduler:
    data = {"nodes": ["n1", "n2"], "pod": {"name": "p", "requests": {"cpu": "100m"}}, **(extra or {})}
    return Scheduler(build_case(data, "t"))


@pytest.mark.parametrize("bad,shown", [([-1, 50], -1), ([50, 101], 101), ([-(2**62), 0], -(2**62))])
def test_score_out_of_range_is_an_error(bad, shown):
    sched = _scheduler()
    plugin = next(sp.plugin for sp in sched.framework.score_plugins if sp.plugin.name == "NodeResourcesFit")
    plugin.score_nodes = lambda state, pod, nodes: np.array(bad, np.int64)  # type: ignore[method-assign]
    r = sched.schedule_one(sched.case.incoming[0])
    assert r.error == (f"plugin 'NodeResourcesFit' returns an invalid score {shown}, it should in the range of "
                       "[0, 100] after normalizing")


def test_scores_at_the_ends_of_the_range_are_no_error():
    sched = _scheduler()
    plugin = next(sp.plugin for sp in sched.framework.score_plugins if sp.plugin.name == "NodeResourcesFit")
    plugin.score_nodes = lambda state, pod, nodes: np.array([0, 100], np.int64)  # type: ignore[method-assign]
    r = sched.schedule_one(sched.case.incoming[0])
    assert r.error is None and r.scores is not None and r.scores.weighted["NodeResourcesFit"] == {"n1": 0, "n2": 100}


def test_unschedulable_node_is_rejected_unless_tolerated():
    nodes = [{"name": "n1", "unschedulable": True}, "n2"]
    sched = _scheduler({"nodes": nodes})
    r = sched.schedule_one(sched.case.incoming[0])
    assert r.statuses["n1"].reasons == ("node(s) were unschedulable",) and r.statuses["n1"].plugin == "NodeUnschedulable"
    assert r.feasible == ["n2"]
    tol = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    sched = _scheduler({"nodes": nodes, "pod": {"name": "p", "tolerations": tol}})
    assert sched.schedule_one(sched.case.incoming[0]).feasible == ["n1", "n2"]


def _spread(match_label_keys: list[str]) -> tuple[Scheduler, object]:
    default = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
    if match_label_keys:
        default["matchLabelKeys"] = match_label_keys
    data = {
        "version": "1.33",
        "profile": {"filter": ["PodTopologySpread"], "score": ["PodTopologySpread"], "pluginConfig": {"PodTopologySpread": {"defaultingType": "List",
                                                           "defaultConstraints": [default]}}},
        "nodes": ["n1", "n2"], "zones": {"a": ["n1"], "b": ["n2"]},
        "owners": [{"kind": "Service", "name": "s", "selector": {"team": "x"}}],
        "pod": {"name": "p", "labels": {"team": "x", "app": "one"}},
    }
    sched = Scheduler(build_case(data, "t"))
    return sched, sched.framework.plugin("PodTopologySpread")


def test_default_constraints_made_once_without_match_label_keys():
    _, pts = _spread([])
    a = Pod("a", labels={"team": "x", "app": "one"})
    b = Pod("b", labels={"team": "x", "app": "two"})
    first = pts._constraints(a, DO_NOT_SCHEDULE)  # type: ignore[attr-defined]
    assert [str(c.selector) for c in first] == [str(c.selector) for c in pts._constraints(b, DO_NOT_SCHEDULE)]  # type: ignore[attr-defined]
    assert pts._constraints(a, SCHEDULE_ANYWAY) == []  # type: ignore[attr-defined]
    assert set(pts._defaults_by_action) == {DO_NOT_SCHEDULE, SCHEDULE_ANYWAY}  # type: ignore[attr-defined]


def test_default_constraints_with_match_label_keys_are_made_per_pod():
    """(Upstream then replaces each default constraint's selector with the pod's default
    selector, so matchLabelKeys changes nothing; the defaults are still made per pod.)"""
    _, pts = _spread(["app"])
    a = Pod("a", labels={"team": "x", "app": "one"})
    b = Pod("b", labels={"team": "x", "app": "two"})
    for pod in (a, b):
        sel = pts._constraints(pod, DO_NOT_SCHEDULE)[0].selector  # type: ignore[attr-defined]
        assert sel.matches({"team": "x", "app": "one"}) and sel.matches({"team": "x", "app": "two"})
        assert not sel.matches({"team": "y"})
    assert pts._defaults_by_action == {}  # type: ignore[attr-defined]


def test_sequence_binds_and_nominations_keep_the_pods_fields():
    data = {"nodes": [{"name": "n1", "allocatable": {"cpu": "1", "pods": 5}}],
            "pods": [{"name": "low", "node": "n1", "priority": 1, "requests": {"cpu": "800m"}}],
            "schedule": [{"name": "a", "labels": {"k": "v"}, "requests": {"cpu": "100m"}},
                         {"name": "hi", "priority": 10, "requests": {"cpu": "500m"}}]}
    sched, _, placements = run_case(build_case(data, "t"))
    assert placements == {"a": "n1", "hi": "n1"}
    bound = sched.bound["a"]
    assert type(bound) is Pod and bound.node_name == "n1" and bound.labels == {"k": "v"}
