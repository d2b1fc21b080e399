"""InterPodAffinityHostnameFastPath (1.37, alpha off): host-scoped terms checked on the
filtered node's pods. With every node's hostname label its own value and no pod nominated
before the sequence the results are the maps' (every status, score, victim and placement,
compared here with the gate on and off); where two nodes share a value, or a nominated
pod's host-scoped anti-affinity meets PreFilter's Skip with the gate off, they differ, and
the golden cases in cases/filters/interpodaffinity-hostname-fast-path.yaml pin both."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from kspread.engine.scheduler import run_case
from kspread.engine.versions import FEATURE_GATES, UNMODELLED_GATES, make_version
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.workflow.runner import cycle_actual

GATE = "InterPodAffinityHostnameFastPath"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
ROOT = Path(__file__).resolve().parent.parent


def _results(doc: dict, on: bool):
    case = build_case({**doc, "featureGates": {**doc.get("featureGates", {}), GATE: on}}, "x")
    assert case.version.gate(GATE) is on
    _, cycles, placements = run_case(case, keep_all=True)
    return [(r.pod.key, cycle_actual(r)) for r in cycles], placements


def _terms(rng: random.Random, n: int) -> list[dict]:
    return [{"labelSelector": {"matchLabels": {"app": rng.choice("abc")}},
             "topologyKey": rng.choice((HOST, HOST, ZONE))} for _ in range(n)]


def _affinity(rng: random.Random) -> dict | None:
    out: dict = {}
    if rng.random() < 0.5:
        out["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": _terms(rng, rng.randint(1, 2))}
    if rng.random() < 0.5:
        out["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": _terms(rng, rng.randint(1, 2))}
    if rng.random() < 0.3:
        out.setdefault("podAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "podAffinityTerm": t} for t in _terms(rng, 1)]
    return out or None


def _random_case(seed: int) -> dict:
    """A sequence at 1.37 in the default profile: nodes with their own hostname values (some
    without a zone), bound pods with host-scoped and zone terms, pods that preempt (and are
    nominated for a cycle or more)."""
    rng = random.Random(seed)
    nodes = []
    for i in range(rng.randint(3, 6)):
        labels = {ZONE: rng.choice(("z1", "z2"))} if rng.random() < 0.8 else {}
        nodes.append({"name": f"n{i}", "labels": labels, "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}})
    pods = []
    for i in range(rng.randint(0, 8)):
        pod = {"name": f"e{i}", "labels": {"app": rng.choice("abc")}, "priority": rng.choice((0, 10)),
               "requests": {"cpu": f"{rng.randint(1, 2)}"}}
        pod["node"] = rng.choice(nodes)["name"]
        aff = _affinity(rng)
        if aff:
            pod["affinity"] = aff
        pods.append(pod)
    schedule = []
    for i in range(rng.randint(2, 5)):
        pod = {"name": f"s{i}", "labels": {"app": rng.choice("abc")}, "priority": rng.choice((0, 100)),
               "requests": {"cpu": f"{rng.randint(1, 3)}"}}
        aff = _affinity(rng)
        if aff:
            pod["affinity"] = aff
        schedule.append(pod)
    return {"apiVersion": "kspread/v1", "kind": "Case", "name": f"r{seed}", "version": "1.37",
            "nodes": nodes, "pods": pods, "schedule": schedule}


@pytest.mark.parametrize("seed", range(60))
def test_unique_hostnames_give_the_same_results_on_and_off(seed):
    doc = _random_case(seed)
    assert _results(doc, True) == _results(doc, False)


def _corpus_docs():
    """The golden cases with pod (anti-)affinity, moved to 1.37 (those 1.37 refuses left out)."""
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if "podAffinity" not in text and "podAntiAffinity" not in text:
            continue
        for doc in yaml.safe_load_all(text):
            if not isinstance(doc, dict) or doc.get("kind") != "Case" or "fast-path" in doc.get("name", ""):
                continue
            nodes = doc.get("nodes") or []
            values = [n.get("labels", {}).get(HOST, n.get("name")) if isinstance(n, dict) else n for n in nodes]
            pending = [p for p in doc.get("pods") or () if isinstance(p, dict) and p.get("nominatedNode")]
            if len(set(values)) != len(values) or "objects" in doc or pending:
                continue
            yield {**{k: v for k, v in doc.items() if k not in ("featureGates", "expect")}, "version": "1.37"}


def test_the_golden_affinity_cases_give_the_same_results_on_and_off():
    compared = 0
    for doc in _corpus_docs():
        try:
            on = _results(doc, True)
        except CaseError:
            continue
        assert on == _results(doc, False), doc["name"]
        compared += 1
    assert compared >= 45  # (51 of 56 when this was written)


def test_shared_hostname_value_differs():
    nodes = [{"name": "n1", "labels": {HOST: "h"}}, {"name": "n2", "labels": {HOST: "h"}}]
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": "1.37",
           "profile": {"filter": ["InterPodAffinity"]}, "nodes": nodes,
           "pods": [{"name": "db", "node": "n1", "labels": {"app": "db"}}],
           "pod": {"name": "p", "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
               {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOST}]}}}}
    [(_, on)], _ = _results(doc, True)
    [(_, off)], _ = _results(doc, False)
    assert on["feasible"] == ["n1"]
    assert off["feasible"] == ["n1", "n2"]


def test_gate_is_modelled_from_1_37():
    assert GATE in FEATURE_GATES and GATE not in UNMODELLED_GATES
    st = FEATURE_GATES[GATE].stage_at(37)
    assert st is not None and (st.stage, st.default, st.locked) == ("ALPHA", False, False)
    assert make_version("1.37", {GATE: True}).gate(GATE)
    assert not make_version("1.37", {}).gate(GATE)
    with pytest.raises(CaseError):
        make_version("1.36", {GATE: True})
