"""PodTopologySpread: formulas and per-version behaviour pinned to exact numbers."""

from __future__ import annotations

import math

import pytest
import yaml

from kspread.engine.apis.config import SYSTEM_DEFAULT_CONSTRAINTS
from kspread.engine.framework.args import decode_args
from kspread.engine.framework.interface import NodeScore
from kspread.engine.labels import EVERYTHING, NOTHING, Requirement, Selector
from kspread.engine.model import TopologySpreadConstraint
from kspread.engine.plugins.podtopologyspread import (
    CriticalPaths,
    filter_constraints,
    go_round,
    merge_label_set_with_selector,
    normalize_scores,
    normalize_scores_v18,
    score_for_count,
    topology_normalizing_weight,
)
from kspread.engine.versions import Version
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.workflow.runner import run_loaded

ZONE = "topology.kubernetes.io/zone"


# ---- formulas ------------------------------------------------------------------------


def test_topology_normalizing_weight_is_ln_size_plus_2():
    assert topology_normalizing_weight(2) == math.log(4)
    assert topology_normalizing_weight(0) == math.log(2)


def test_score_for_count_adds_max_skew_minus_one():
    assert score_for_count(0, 1, 1.5) == 0.0
    assert score_for_count(2, 3, math.log(4)) == 2 * math.log(4) + 2.0


def test_go_round_half_away_from_zero():
    assert go_round(2.5) == 3  # Python's round() gives 2
    assert go_round(3.5) == 4
    assert go_round(2.4999999) == 2
    assert go_round(0.0) == 0


def _norm(raw, ignored=()):
    scores = [NodeScore(n, s) for n, s in raw.items()]
    normalize_scores(scores, set(ignored))
    return {s.name: s.score for s in scores}


def test_normalize_uses_integer_division():
    # 100 * (7 + 4 - 7) // 7 = 400 // 7 = 57 (not 57.14 rounded or 58)
    assert _norm({"a": 7, "b": 4, "c": 4}) == {"a": 57, "b": 100, "c": 100}


def test_normalize_all_zero_gives_100_and_ignored_gives_0():
    assert _norm({"a": 0, "b": 0, "c": 5}, ignored={"c"}) == {"a": 100, "b": 100, "c": 0}


def test_normalize_all_equal_nonzero_gives_100():
    assert _norm({"a": 3, "b": 3}) == {"a": 100, "b": 100}


def test_normalize_min_and_max_ignore_ignored_nodes():
    # ignored c would otherwise be the max
    assert _norm({"a": 2, "b": 4, "c": 40}, ignored={"c"}) == {"a": 100, "b": 50, "c": 0}


def test_normalize_v18():
    scores = [NodeScore("a", 4), NodeScore("b", 2), NodeScore("c", 2), NodeScore("d", 0)]
    normalize_scores_v18(scores, {"a", "b", "c"})
    assert [s.score for s in scores] == [66, 100, 100, 0]


def test_normalize_v18_all_equal_gives_100_even_outside_node_name_set():
    scores = [NodeScore("a", 0), NodeScore("b", 0)]
    normalize_scores_v18(scores, {"a"})
    assert [s.score for s in scores] == [100, 100]


def test_normalize_v18_without_constraints_gives_0():
    scores = [NodeScore("a", 0), NodeScore("b", 0)]
    normalize_scores_v18(scores, set())
    assert [s.score for s in scores] == [0, 0]


# ---- critical paths ----------------------------------------------------------------------


def _paths(*updates):
    p = CriticalPaths()
    for v, n in updates:
        p.update(v, n)
    return list(zip(p.values, p.nums))


def test_critical_paths_keep_two_smallest_after_inserts():
    assert _paths(("a", 3), ("b", 1), ("c", 2), ("d", 5)) == [("b", 1), ("c", 2)]


def test_critical_paths_update_existing_swaps():
    assert _paths(("a", 1), ("b", 2), ("a", 3)) == [("b", 2), ("a", 3)]


def test_critical_paths_increment_outside_slots_is_lost():
    # a=0, b=0 in the slots, c=0 never entered; raising a and then b leaves the
    # structure at min 1 although c is still 0 (upstream's documented caveat).
    p = CriticalPaths()
    for v, n in (("a", 0), ("b", 0), ("c", 0)):
        p.update(v, n)
    p.update("a", 1)
    p.update("b", 1)
    assert p.min == 1


def test_critical_paths_decrement_outside_slots_becomes_min():
    assert _paths(("a", 2), ("b", 3), ("c", 4), ("c", 1)) == [("c", 1), ("a", 2)]


def test_critical_paths_initial_empty_value_matches_slot_zero():
    # the slots start with TopologyValue "" as upstream's zero value
    assert _paths(("", 5)) == [("", 5), ("", 2**31 - 1)]


# ---- constraints ---------------------------------------------------------------------------


def _tsc(**kw):
    base = dict(max_skew=1, topology_key=ZONE, when_unsatisfiable="DoNotSchedule")
    base.update(kw)
    return TopologySpreadConstraint(**base)


def test_match_label_keys_gate():
    from kspread.engine.labels import LabelSelector

    c = _tsc(label_selector=LabelSelector((("app", "web"),)), match_label_keys=("hash", "missing"))
    on = filter_constraints([c], {"app": "web", "hash": "v2"}, "DoNotSchedule", Version(27))[0]
    off = filter_constraints([c], {"app": "web", "hash": "v2"}, "DoNotSchedule", Version(26))[0]
    assert on.selector.matches({"app": "web", "hash": "v2"})
    assert not on.selector.matches({"app": "web", "hash": "v1"})
    assert off.selector.matches({"app": "web", "hash": "v1"})


def test_merge_keeps_nothing_selector():
    assert merge_label_set_with_selector({"a": "b"}, NOTHING) is NOTHING
    merged = merge_label_set_with_selector({"a": "b"}, EVERYTHING)
    assert merged.requirements == (Requirement("a", "=", ("b",)),)


def test_min_domains_and_policies_follow_gates():
    c = _tsc(label_selector=None, min_domains=3, node_affinity_policy="Ignore", node_taints_policy="Honor")
    old = filter_constraints([c], {}, "DoNotSchedule", Version(25))[0]
    assert (old.min_domains, old.node_affinity_policy, old.node_taints_policy) == (1, "Honor", "Ignore")
    new = filter_constraints([c], {}, "DoNotSchedule", Version(27))[0]
    assert (new.min_domains, new.node_affinity_policy, new.node_taints_policy) == (3, "Ignore", "Honor")
    gated = filter_constraints([c], {}, "DoNotSchedule", Version(25, {"MinDomainsInPodTopologySpread": True}))[0]
    assert gated.min_domains == 3


def test_nil_label_selector_matches_nothing():
    c = filter_constraints([_tsc()], {}, "DoNotSchedule", Version(24))[0]
    assert c.selector == Selector(nothing=True)


# ---- args ------------------------------------------------------------------------------------


def parse_args(raw, version, path):
    """PodTopologySpreadArgs decoded: (default constraints, systemDefaulted)."""
    d = decode_args("PodTopologySpread", raw, version, path)
    return d["defaultConstraints"], d["systemDefaulted"]


def test_args_defaulting_by_version():
    path = ("profile", "pluginConfig", "PodTopologySpread")
    assert parse_args({}, Version(18), path) == ((), False)
    assert parse_args({}, Version(19), path) == ((), False)  # gate alpha, off
    assert parse_args({}, Version(19, {"DefaultPodTopologySpread": True}), path) == (SYSTEM_DEFAULT_CONSTRAINTS, True)
    assert parse_args({"defaultConstraints": []}, Version(19, {"DefaultPodTopologySpread": True}), path) == ((), False)
    assert parse_args({}, Version(20), path) == (SYSTEM_DEFAULT_CONSTRAINTS, True)
    one = {"defaultConstraints": [{"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}]}
    cons, system = parse_args(one, Version(21), path)  # v1beta1: List when constraints are given
    assert not system and cons[0].max_skew == 2
    assert parse_args({}, Version(21, {"DefaultPodTopologySpread": False}), path) == ((), False)
    with pytest.raises(CaseError, match="must be empty"):
        parse_args(one, Version(22), path)  # v1beta2+: omitted means System
    assert parse_args({}, Version(37), path) == (SYSTEM_DEFAULT_CONSTRAINTS, True)


def test_args_error_names_field_path():
    path = ("profile", "pluginConfig", "PodTopologySpread")
    bad = {"defaultingType": "List",
           "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "Sometimes"}]}
    with pytest.raises(CaseError) as ei:
        parse_args(bad, Version(24), path)
    assert ei.value.path == (*path, "defaultConstraints", 0, "whenUnsatisfiable")
    with pytest.raises(CaseError) as ei:
        parse_args({"defaultingType": "List"}, Version(18), path)
    assert ei.value.path == (*path, "defaultingType")


# ---- version flags -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flag, true_from, true_to",
    [
        ("pts_missing_label_unresolvable", 19, 37),
        ("pts_filter_passes_without_domains", 18, 18),
        ("pts_counts_pods_off_affinity", 19, 23),
        ("pts_weighted_scoring", 19, 37),
        ("pts_score_rounds", 24, 37),
        ("pts_system_defaults_relax_topologies", 23, 37),
        ("pts_add_remove_respect_affinity", 25, 37),
        ("pts_empty_selector_counts_zero", 27, 36),
        ("pts_skip_without_constraints", 28, 37),
        ("pts_domains_counted_live", 33, 37),
    ],
)
def test_flag_spans(flag, true_from, true_to):
    on = [m for m in range(18, 38) if getattr(Version(m), flag)]
    assert on == list(range(true_from, true_to + 1))


def test_feature_gate_defaults():
    g = lambda m, name: Version(m).gate(name)  # noqa: E731
    assert [g(m, "MinDomainsInPodTopologySpread") for m in (24, 25, 26, 27, 30, 32, 37)] == [
        False, False, False, True, True, True, True]
    assert [g(m, "NodeInclusionPolicyInPodTopologySpread") for m in (24, 25, 26, 33, 37)] == [
        False, False, True, True, True]
    assert [g(m, "MatchLabelKeysInPodTopologySpread") for m in (24, 25, 26, 27, 37)] == [
        False, False, False, True, True]


def test_node_inclusion_gate_is_still_known_in_newest():
    from kspread.engine.versions import make_version

    with pytest.raises(CaseError, match="locked"):
        make_version("1.37", {"NodeInclusionPolicyInPodTopologySpread": False})


# ---- whole cycles -----------------------------------------------------------------------------------


def _run(doc: str):
    case = build_case(yaml.safe_load(doc), "t")
    return run_loaded(case).actual


CLUSTER = """
nodes: [n1, n2, n3]
zones: {zoneA: [n1], zoneB: [n2], zoneC: [n3]}
"""


def _hard(version: str, pods: str, extra: str = "", constraint_extra: str = "") -> str:
    return f"""
version: "{version}"
profile: {{filter: [PodTopologySpread]}}
{CLUSTER}
pods:
{pods}
pod:
  name: p
  priority: 100
  labels: {{foo: bar}}
  {extra}
  topologySpreadConstraints:
  - {{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {{matchLabels: {{foo: bar}}}}{constraint_extra}}}
"""


def test_empty_domain_is_the_global_minimum():
    """zoneA 2 pods, zoneB 1, zoneC none: zoneC is a domain with count 0, so min 0;
    zoneA 2+1-0 and zoneB 1+1-0 exceed maxSkew 1, only n3 fits."""
    pods = """
- {name: a1, node: n1, labels: {foo: bar}}
- {name: a2, node: n1, labels: {foo: bar}}
- {name: b1, node: n2, labels: {foo: bar}}
"""
    out = _run(_hard("1.24", pods))
    assert out["feasible"] == ["n3"]


def test_filter_reports_skew_boundaries():
    pods = """
- {name: a1, node: n1, labels: {foo: bar}}
- {name: b1, node: n2, labels: {foo: bar}}
- {name: c1, node: n3, labels: {foo: bar}}
- {name: c2, node: n3, labels: {foo: bar}}
"""
    # counts A=1, B=1, C=2, min 1: A,B 1+1-1=1 pass; C 2+1-1=2 fail
    out = _run(_hard("1.24", pods))
    assert out["feasible"] == ["n1", "n2"]
    assert out["filter"]["n3"] == {"code": "Unschedulable",
                                   "reason": "node(s) didn't match pod topology spread constraints"}


def test_add_pod_ignores_other_namespace():
    doc = f"""
version: "1.24"
profile: {{filter: [PodTopologySpread]}}
nodes: [n1, n2]
zones: {{zoneA: [n1], zoneB: [n2]}}
pods:
- {{name: q, namespace: other, labels: {{foo: bar}}, priority: 10, nominatedNode: n1}}
pod:
  name: p
  labels: {{foo: bar}}
  topologySpreadConstraints:
  - {{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {{matchLabels: {{foo: bar}}}}}}
"""
    assert _run(doc)["feasible"] == ["n1", "n2"]


def test_add_pod_respects_affinity_from_1_25():
    """q (foo=bar) is nominated to n1, which fails the incoming pod's nodeSelector.
    Filter on n1 is not reached by NodeAffinity here (PTS only), so AddPod decides:
    1.24 counts q in zoneA (1 + 1 - 0 = 2 > 1, fail); 1.25 skips it (pass)."""
    tmpl = """
version: "{v}"
profile: {{filter: [PodTopologySpread]}}
nodes: [n1, {{name: n2, labels: {{disk: ssd}}}}, {{name: n3, labels: {{disk: ssd}}}}]
zones: {{zoneA: [n1, n2], zoneB: [n3]}}
pods:
- {{name: q, labels: {{foo: bar}}, priority: 10, nominatedNode: n1}}
pod:
  name: p
  labels: {{foo: bar}}
  nodeSelector: {{disk: ssd}}
  topologySpreadConstraints:
  - {{maxSkew: 1, topologyKey: {zone}, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {{matchLabels: {{foo: bar}}}}}}
"""
    old = _run(tmpl.format(v="1.24", zone=ZONE))
    new = _run(tmpl.format(v="1.25", zone=ZONE))
    assert old["filter"]["n1"]["code"] == "Unschedulable"
    assert new["filter"]["n1"]["code"] == "Success"


def test_hostname_constraint_counts_on_the_node_itself():
    doc = """
version: "1.24"
profile: {score: [PodTopologySpread]}
nodes: [n1, n2, n3]
pods:
- {name: a, node: n1, labels: {foo: bar}}
- {name: b, node: n1, labels: {foo: bar}}
- {name: c, node: n2, labels: {foo: bar}}
pod:
  name: p
  labels: {foo: bar}
  topologySpreadConstraints:
  - {maxSkew: 3, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway,
     labelSelector: {matchLabels: {foo: bar}}}
"""
    w = math.log(5)  # 3 scored nodes
    expect = {"n1": go_round(2 * w + 2), "n2": go_round(w + 2), "n3": 2}
    assert expect == {"n1": 5, "n2": 4, "n3": 2}
    assert _run(doc)["rawScores"]["PodTopologySpread"] == expect


def test_remove_and_add_pod_update_counts_and_min():
    """PreFilterExtensions on a cloned state, as the preemption dry run uses them."""
    from kspread.engine.framework.status import CycleState
    from kspread.engine.scheduler import Scheduler

    doc = f"""
version: "1.24"
profile: {{filter: [PodTopologySpread]}}
nodes: [n1, n2, n3]
zones: {{zoneA: [n1], zoneB: [n2], zoneC: [n3]}}
pods:
- {{name: a1, node: n1, labels: {{foo: bar}}}}
- {{name: b1, node: n2, labels: {{foo: bar}}}}
- {{name: b2, node: n2, labels: {{foo: bar}}}}
- {{name: c1, node: n3, labels: {{foo: bar}}}}
- {{name: x, node: n1, labels: {{foo: baz}}}}
pod:
  name: p
  labels: {{foo: bar}}
  topologySpreadConstraints:
  - {{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {{matchLabels: {{foo: bar}}}}}}
"""
    case = build_case(yaml.safe_load(doc), "t")
    sched = Scheduler(case)
    pl = sched.framework.plugin("PodTopologySpread")
    state = CycleState()
    pod = case.incoming[0]
    assert pl.pre_filter(state, pod).is_success()
    s = state.read("PreFilterPodTopologySpread")
    assert s.match_num[0] == {"zoneA": 1, "zoneB": 2, "zoneC": 1}
    assert s.paths[0].min == 1
    clone = state.clone()
    n1 = sched.snapshot.get("n1")
    pods = {p.name: p for p in case.cluster.pods}
    pl.remove_pod(clone, pod, pods["a1"], n1)
    pl.remove_pod(clone, pod, pods["x"], n1)  # selector does not match: no change
    c = clone.read("PreFilterPodTopologySpread")
    assert c.match_num[0]["zoneA"] == 0 and c.paths[0].min == 0
    assert s.match_num[0]["zoneA"] == 1 and s.paths[0].min == 1  # original untouched
    pl.add_pod(clone, pod, pods["a1"], n1)
    assert c.match_num[0]["zoneA"] == 1 and c.paths[0].min == 1
