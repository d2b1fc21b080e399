"""The text a plugin's Error status ends the cycle with, as kube-scheduler of the case's
version words it (frameworkImpl in framework/runtime/framework.go: the plugin's name
quoted as Go's %q), which becomes the pod's message in placements, explain and reports."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from kspread.engine.framework.interface import Filtered, ScoreFailed
from kspread.engine.framework.runtime import plugin_error
from kspread.engine.framework.status import SUCCESS, Code, Status, go_quote
from kspread.engine.scheduler import Scheduler, run_case
from kspread.format.case import build_case

OLD = (" (kspread words this as kube-scheduler 1.21 and later do; 1.20's wording of a plugin error "
       "is not modelled)")


def _scheduler(version: str) -> Scheduler:
    data = {"version": version, "nodes": ["n1", "n2"], "pod": {"name": "p", "requests": {"cpu": "100m"}}}
    return Scheduler(build_case(data, "t"))


def _plugin(sched: Scheduler, group: str, name: str):
    if group == "score":
        return next(sp.plugin for sp in sched.framework.score_plugins if sp.plugin.name == name)
    return next(p for p in getattr(sched.framework, f"{group}_plugins") if p.name == name)


def _error(sched: Scheduler) -> str:
    return sched.schedule_one(sched.case.incoming[0]).error


@pytest.mark.parametrize("version,tail", [("1.20", OLD), ("1.23", ""), ("1.35", "")])
def test_filter_error(version, tail):
    sched = _scheduler(version)
    p = _plugin(sched, "filter", "NodeResourcesFit")
    p.filter_nodes = lambda state, pod, nodes: Filtered(  # type: ignore[method-assign]
        np.ones(len(nodes), np.intp), [SUCCESS, Status(Code.ERROR, ("disk on fire", "twice"))])
    assert _error(sched) == 'running "NodeResourcesFit" filter plugin: disk on fire, twice' + tail


@pytest.mark.parametrize("version,tail", [("1.20", OLD), ("1.23", ""), ("1.35", "")])
def test_prefilter_error(version, tail):
    sched = _scheduler(version)
    p = _plugin(sched, "pre_filter", "NodeResourcesFit")
    p.pre_filter = lambda state, pod: Status(Code.ERROR, ("bad state",))  # type: ignore[method-assign]
    assert _error(sched) == 'running PreFilter plugin "NodeResourcesFit": bad state' + tail


@pytest.mark.parametrize("version,tail", [("1.20", OLD), ("1.23", ""), ("1.35", "")])
def test_score_error(version, tail):
    sched = _scheduler(version)
    p = _plugin(sched, "score", "NodeResourcesBalancedAllocation")

    def fail(state, pod, nodes):
        raise ScoreFailed(Status(Code.ERROR, ("no metrics",)))
    p.score_nodes = fail  # type: ignore[method-assign]
    assert _error(sched) == ('running Score plugins: plugin "NodeResourcesBalancedAllocation" failed with: '
                             "no metrics" + tail)


@pytest.mark.parametrize("version,tail", [("1.20", OLD), ("1.23", ""), ("1.35", "")])
def test_normalize_score_error(version, tail):
    sched = _scheduler(version)
    p = _plugin(sched, "score", "TaintToleration")
    assert p.has_normalize

    def fail(state, pod, names, scores):
        raise ScoreFailed(Status(Code.ERROR, ("cannot normalize",)))
    p.normalize_scores = fail  # type: ignore[method-assign]
    assert _error(sched) == ('running Normalize on Score plugins: plugin "TaintToleration" failed with: '
                             "cannot normalize" + tail)


@pytest.mark.parametrize("version", ["1.23", "1.28"])
def test_filter_error_from_a_case(version):
    doc = f"""
version: "{version}"
profile: {{filter: [NodeVolumeLimits]}}
nodes: [n1]
objects:
- {{kind: CSINode, apiVersion: storage.k8s.io/v1, metadata: {{name: n1}},
   spec: {{drivers: [{{name: x.csi.io, nodeID: i, allocatable: {{count: 1}}}}]}}}}
pod: {{name: p, volumes: [{{name: d, persistentVolumeClaim: {{claimName: gone}}}}]}}
"""
    _, results, _ = run_case(build_case(yaml.safe_load(doc), "t"), keep_all=True)
    assert results[-1].error == ('running "NodeVolumeLimits" filter plugin: looking up PVC default/gone: '
                                 'persistentvolumeclaim "gone" not found')


def test_every_point_and_go_quoting():
    name = 'we"ird\\\n'
    q = r'"we\"ird\\\n"'
    assert go_quote(name) == q
    assert go_quote("\x01é\u200b") == r'"\x01é\u200b"'
    want = {
        "PreFilter": f"running PreFilter plugin {q}: m",
        "AddPod": f"running AddPod on PreFilter plugin {q}: m",
        "RemovePod": f"running RemovePod on PreFilter plugin {q}: m",
        "Filter": f"running {q} filter plugin: m",
        "PostFilter": "m",
        "PreScore": f"running PreScore plugin {q}: m",
        "Score": f"running Score plugins: plugin {q} failed with: m",
        "NormalizeScore": f"running Normalize on Score plugins: plugin {q} failed with: m",
        "ScoreRange": "applying score defaultWeights on Score plugins: m",
    }
    for minor in (21, 28, 35, 37):
        assert {k: plugin_error(minor, k, name, "m") for k in want} == want
    assert plugin_error(17, "Filter", "X", "m") == ('running "X" filter plugin: m (kspread words this as '
                                                     "kube-scheduler 1.21 and later do; 1.17's wording of a "
                                                     "plugin error is not modelled)")
