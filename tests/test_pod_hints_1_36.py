"""1.36's pod-event queueing hints of InterPodAffinity and PodTopologySpread: a pending pod with
a nominated node counts as a bound one (PR #135392), and a deleted pod's own required
anti-affinity requeues the pods it repelled (PR #135325). 1.35 keeps its hints."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kspread.engine.framework.interface import PodEvent
from kspread.engine.scheduler import Scheduler
from kspread.format.case import build_case

HOST = "kubernetes.io/hostname"
ANTI_WEB = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}]}}
SPREAD_WEB = [{"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]


def _sched(version: str, schedule: list[dict[str, Any]]) -> Scheduler:
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "version": version,
           "nodes": [{"name": "n1", "labels": {HOST: "n1"}}], "schedule": schedule}
    return Scheduler(build_case(doc, "t"))


def _pods(sched: Scheduler):
    return [sched.current(p) for p in sched.case.incoming]


@pytest.mark.parametrize(("version", "want"), [("1.36", True), ("1.35", False)])
def test_affinity_hint_deleted_pods_own_anti_affinity(version, want):
    """web (no anti-affinity of its own) was repelled by guard's: guard's deletion requeues
    web from 1.36 only."""
    sched = _sched(version, [{"name": "web", "labels": {"app": "web"}},
                             {"name": "guard", "labels": {"app": "guard"}, "affinity": ANTI_WEB}])
    web, guard = _pods(sched)
    ipa = sched.framework.plugin("InterPodAffinity")
    assert ipa is not None
    assert ipa.pod_event_hint(web, PodEvent("Delete", replace(guard, node_name="n1"))) is want
    # the deleted pod's anti-affinity does not match a pod labelled otherwise
    other = replace(web, labels={"app": "db"})
    assert ipa.pod_event_hint(other, PodEvent("Delete", replace(guard, node_name="n1"))) is False


@pytest.mark.parametrize(("version", "want"), [("1.36", True), ("1.35", False)])
def test_affinity_hint_nominated_pod(version, want):
    """A nomination dropped (an AssignedPodDelete for the pod as it was): the pod, pending on
    a nominated node, matched web's anti-affinity. Without a nomination it changes nothing
    in either version."""
    sched = _sched(version, [{"name": "web", "affinity": ANTI_WEB},
                             {"name": "w2", "labels": {"app": "web"}}])
    web, w2 = _pods(sched)
    ipa = sched.framework.plugin("InterPodAffinity")
    assert ipa is not None
    assert ipa.pod_event_hint(web, PodEvent("Delete", replace(w2, nominated_node="n1"), 0)) is want
    assert ipa.pod_event_hint(web, PodEvent("Delete", w2)) is False
    assert ipa.pod_event_hint(web, PodEvent("Delete", replace(w2, node_name="n1"))) is True


@pytest.mark.parametrize(("version", "want"), [("1.36", True), ("1.35", False)])
def test_spread_hint_nominated_pod(version, want):
    sched = _sched(version, [{"name": "web", "labels": {"app": "web"}, "topologySpreadConstraints": SPREAD_WEB},
                             {"name": "w2", "labels": {"app": "web"}}])
    web, w2 = _pods(sched)
    pts = sched.framework.plugin("PodTopologySpread")
    assert pts is not None
    assert pts.pod_event_hint(web, PodEvent("Delete", replace(w2, nominated_node="n1"), 0)) is want
    assert pts.pod_event_hint(web, PodEvent("Delete", w2)) is False
    assert pts.pod_event_hint(web, PodEvent("Delete", replace(w2, node_name="n1"))) is True
    # another namespace is never involved
    elsewhere = replace(w2, namespace="ns1", nominated_node="n1")
    assert pts.pod_event_hint(web, PodEvent("Delete", elsewhere, 0)) is False
