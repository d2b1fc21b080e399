"""InterPodAffinity: counting, statuses per version, PreFilterExtensions, score
formulas and the snapshot's affinity indexes, pinned to exact values."""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml

from kspread.engine.framework.args import decode_args
from kspread.engine.framework.interface import NodeScore
from kspread.engine.framework.status import Code, CycleState
from kspread.engine.labels import EVERYTHING, LabelSelector, Requirement
from kspread.engine.model import (
    Affinity,
    Node,
    Pod,
    PodAffinityRules,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from kspread.engine.plugins import interpodaffinity as ipa
from kspread.engine.snapshot import NodeInfo, SelectorCache, Snapshot
from kspread.engine.versions import Version
from kspread.format.case import build_case
from kspread.workflow.runner import run_loaded

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _sel(**labels):
    return LabelSelector(tuple(sorted(labels.items())))


def _term(key=HOST, namespaces=(), ns_selector=None, match_keys=(), mismatch_keys=(), **labels):
    return PodAffinityTerm(_sel(**labels), tuple(namespaces), key, ns_selector, tuple(match_keys),
                           tuple(mismatch_keys))


def _anti_pod(name, node=None, ns="default", labels=None, *terms):
    return Pod(name, ns, dict(labels or {}), node_name=node,
               affinity=Affinity(pod_anti_affinity=PodAffinityRules(required=tuple(terms))))


def _run(doc: str):
    case = build_case(yaml.safe_load("apiVersion: kspread/v1\nkind: Case\n" + doc), "t")
    return run_loaded(case)


# ---- terms ---------------------------------------------------------------------------------


def test_term_without_namespaces_covers_owner_namespace():
    owner = Pod("o", "team", {})
    t = ipa.build_term(owner, _term(app="web"), Version(24))
    assert t.namespaces == frozenset({"team"})
    assert t.matches("team", {"app": "web"}, {})
    assert not t.matches("default", {"app": "web"}, {})


def test_nil_label_selector_matches_nothing():
    t = ipa.build_term(Pod("o"), PodAffinityTerm(None, (), HOST), Version(24))
    assert not t.matches("default", {}, {})


@pytest.mark.parametrize("minor, gates, honoured", [(20, {}, False), (21, {}, False),
                                                    (21, {"PodAffinityNamespaceSelector": True}, True),
                                                    (22, {}, True), (30, {}, True)])
def test_namespace_selector_gate(minor, gates, honoured):
    raw = _term(ns_selector=_sel(team="a"), app="web")
    t = ipa.build_term(Pod("o"), raw, Version(minor, gates))
    # the incoming pod's namespace labels decide for an existing pod's term
    assert t.matches("other", {"app": "web"}, {"team": "a"}) is honoured
    # without the selector the term covers the owner's namespace
    assert t.matches("default", {"app": "web"}, {}) is (not honoured)


def test_empty_namespace_selector_matches_every_namespace():
    t = ipa.build_term(Pod("o"), _term(ns_selector=LabelSelector(), app="web"), Version(24))
    assert t.namespace_selector == EVERYTHING
    assert t.matches("anything", {"app": "web"}, {})


@pytest.mark.parametrize("minor, expect_v1, expect_v2", [(30, True, True), (31, False, True)])
def test_match_label_keys_merge_owner_values(minor, expect_v1, expect_v2):
    owner = Pod("o", labels={"app": "web", "version": "v2"})
    t = ipa.build_term(owner, _term(match_keys=("version", "absent"), app="web"), Version(minor))
    assert t.matches("default", {"app": "web", "version": "v1"}, {}) is expect_v1
    assert t.matches("default", {"app": "web", "version": "v2"}, {}) is expect_v2


def test_mismatch_label_keys_add_not_in():
    owner = Pod("o", labels={"track": "canary"})
    t = ipa.build_term(owner, _term(mismatch_keys=("track",), app="c"), Version(33))
    assert t.selector.requirements[-1] == Requirement("track", "NotIn", ("canary",))
    assert not t.matches("default", {"app": "c", "track": "canary"}, {})
    assert t.matches("default", {"app": "c"}, {})


def test_pod_matches_all_terms_is_false_without_terms():
    assert not ipa.pod_matches_all_terms((), "default", {})


# ---- version flags -----------------------------------------------------------------------------


def test_version_flags():
    v = Version
    assert [ipa.generic_reason(v(m)) for m in (17, 20, 21, 22)] == [
        ipa.REASON_AFFINITY_NOT_MATCH, ipa.REASON_AFFINITY_NOT_MATCH, ipa.REASON_AFFINITY_NOT_MATCH_121, None]
    assert ipa.checks_existing_anti_affinity_first(v(18)) and not ipa.checks_existing_anti_affinity_first(v(19))
    assert not ipa.self_affinity_needs_topology_keys(v(18)) and ipa.self_affinity_needs_topology_keys(v(19))
    assert not ipa.pre_filter_skips(v(26)) and ipa.pre_filter_skips(v(27))
    assert not ipa.normalizes_from_observed_range(v(20)) and ipa.normalizes_from_observed_range(v(21))
    assert not ipa.pre_score_skips(v(27)) and ipa.pre_score_skips(v(28))


# ---- formulas -------------------------------------------------------------------------------------


def _scores(**kw):
    return [NodeScore(k, s) for k, s in kw.items()]


def test_normalize_observed_range():
    s = _scores(a=5, b=2, c=7, d=10)
    ipa.normalize_scores(s, 100, True)
    assert [x.score for x in s] == [37, 0, 62, 100]


def test_normalize_range_from_zero_before_1_21():
    s = _scores(a=5, b=2, c=7, d=10)
    ipa.normalize_scores(s, 100, False)
    assert [x.score for x in s] == [50, 20, 70, 100]
    s = _scores(a=5, b=2, c=7, d=10)
    ipa.normalize_scores(s, 10, False)
    assert [x.score for x in s] == [5, 2, 7, 10]


def test_normalize_negative_and_equal():
    s = _scores(a=1, b=1, c=-20, d=0)
    ipa.normalize_scores(s, 100, True)
    assert [x.score for x in s] == [100, 100, 0, 95]
    s = _scores(a=3, b=3)
    ipa.normalize_scores(s, 100, True)
    assert [x.score for x in s] == [0, 0]


@pytest.mark.parametrize("args, minor, err", [
    ({"hardPodAffinityWeight": -1}, 24, "not in valid range [0-100]"),
    ({"hardPodAffinityWeight": 101}, 24, "not in valid range [0-100]"),
    ({"ignorePreferredTermsOfExistingPods": True}, 26, "ignorePreferredTermsOfExistingPods exists in 1.27 on"),
    ({"bogus": 1}, 30, 'unknown field "bogus"'),
])
def test_args_errors(args, minor, err):
    from kspread.errors import CaseError

    with pytest.raises(CaseError, match=err.replace("[", r"\[").replace("]", r"\]")):
        decode_args("InterPodAffinity", args, Version(minor), ())


def test_args_defaults():
    def weights(raw):
        d = decode_args("InterPodAffinity", raw, Version(30), ())
        return d["hardPodAffinityWeight"], d["ignorePreferredTermsOfExistingPods"]

    assert weights({}) == (1, False)
    assert weights({"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": True}) == (0, True)


# ---- snapshot indexes ------------------------------------------------------------------------------


def test_node_info_affinity_indexes_add_remove_clone():
    ni = NodeInfo(Node("n1", {HOST: "n1"}, {}), Version(30), SelectorCache())
    plain = Pod("plain", node_name="n1")
    pref = Pod("pref", node_name="n1", affinity=Affinity(pod_affinity=PodAffinityRules(
        preferred=(WeightedPodAffinityTerm(1, _term(app="x")),))))
    anti = _anti_pod("anti", "n1", "default", {}, _term(app="x"))
    for p in (plain, pref, anti):
        ni.add_pod(p)
    assert set(ni.pods_with_affinity) == {"pref", "anti"}
    assert set(ni.pods_with_required_anti_affinity) == {"anti"}
    c = ni.clone()
    c.remove_pod(anti)
    assert set(c.pods_with_affinity) == {"pref"} and not c.pods_with_required_anti_affinity
    assert set(ni.pods_with_required_anti_affinity) == {"anti"}  # the original is untouched


def test_snapshot_all_group_index_counts_terminating_pods():
    nodes = [Node("n1", {}, {}), Node("n2", {}, {})]
    pods = [Pod("a", labels={"app": "w"}, node_name="n1"),
            Pod("b", labels={"app": "w"}, node_name="n1", terminating=True),
            Pod("c", labels={"app": "w"}, node_name="n2")]
    snap = Snapshot(nodes, pods, Version(30))
    g = ("default", frozenset({("app", "w")}))
    assert snap.all_group_nodes[g] == {"n1": 2, "n2": 1}
    assert snap.group_nodes[g] == {"n1": 1, "n2": 1}
    snap.remove_pod(pods[1])
    snap.remove_pod(pods[2])
    assert snap.all_group_nodes[g] == {"n1": 1}
    snap.remove_pod(pods[0])
    assert g not in snap.all_group_nodes


# ---- the plugin through whole cases --------------------------------------------------------------

CLUSTER = """
zones: {z1: [n1, n2], z2: [n3]}
nodes: [n1, n2, n3, n4]
"""


def _affinity_case(version, pods="[]"):
    return f"""
version: "{version}"
profile: {{filter: [InterPodAffinity]}}
{CLUSTER}
pods: {pods}
pod:
  name: p
  labels: {{app: web}}
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {{labelSelector: {{matchLabels: {{app: web}}}}, topologyKey: {ZONE}}}
"""


def _statuses(outcome):
    return {n: (str(st.code), st.reasons) for n, st in outcome.cycles[-1].statuses.items()}


def test_affinity_status_code_and_reasons_v1_22():
    out = _run(_affinity_case("1.22", "[{name: w, node: n3, labels: {app: web}}]"))
    st = _statuses(out)
    assert st["n3"] == ("Success", ())
    assert st["n1"] == ("UnschedulableAndUnresolvable", (ipa.REASON_AFFINITY_RULES,))
    assert st["n4"] == ("UnschedulableAndUnresolvable", (ipa.REASON_AFFINITY_RULES,))


def test_first_pod_exception_per_version():
    for version, n4 in (("1.18", "Success"), ("1.19", "UnschedulableAndUnresolvable")):
        st = _statuses(_run(_affinity_case(version)))
        assert st["n1"][0] == st["n3"][0] == "Success"
        assert st["n4"][0] == n4


def test_legacy_predicate_status_v1_15():
    out = _run(_affinity_case("1.15", "[{name: w, node: n3, labels: {app: web}}]"))
    assert _statuses(out)["n1"] == ("UnschedulableAndUnresolvable",
                                    (ipa.REASON_AFFINITY_NOT_MATCH, ipa.REASON_AFFINITY_RULES))


def _plugin_and_state(version="1.30", pods="[]", pod_affinity=""):
    case = build_case(yaml.safe_load(f"""
apiVersion: kspread/v1
kind: Case
version: "{version}"
profile: {{filter: [InterPodAffinity]}}
{CLUSTER}
pods: {pods}
pod:
  name: p
  labels: {{app: web}}
  affinity: {pod_affinity or "{}"}
"""), "t")
    from kspread.engine.scheduler import Scheduler

    sched = Scheduler(case)
    plugin = sched.framework.plugin("InterPodAffinity")
    state = CycleState()
    st = plugin.pre_filter(state, case.incoming[0])
    return sched, plugin, state, st, case.incoming[0]


ANTI = "{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: " \
       "[{labelSelector: {matchLabels: {app: web}}, topologyKey: " + ZONE + "}]}}"


def test_pre_filter_counts_and_add_remove_pod():
    sched, plugin, state, st, pod = _plugin_and_state(
        pods="[{name: w, node: n1, labels: {app: web}}]", pod_affinity=ANTI)
    assert st.code == Code.SUCCESS
    s = state.read(ipa.PRE_FILTER_KEY)
    assert s.anti_affinity == {(ZONE, "z1"): 1}
    w = sched.snapshot.get("n1").pods["w"]
    info = sched.snapshot.get("n1").clone()
    info.remove_pod(w)
    cloned = state.clone()
    plugin.remove_pod(cloned, pod, w, info)
    assert cloned.read(ipa.PRE_FILTER_KEY).anti_affinity == {}  # the entry is deleted at 0
    assert s.anti_affinity == {(ZONE, "z1"): 1}  # clone is independent
    assert plugin.filter(cloned, pod, sched.snapshot.get("n2")).code == Code.SUCCESS
    assert plugin.filter(state, pod, sched.snapshot.get("n2")).code == Code.UNSCHEDULABLE
    # a pod with anti-affinity against the incoming one, added on n3 (zone z2)
    guard = _anti_pod("g", "n3", "default", {}, _term(ZONE, app="web"))
    plugin.add_pod(cloned, pod, guard, sched.snapshot.get("n3"))
    assert cloned.read(ipa.PRE_FILTER_KEY).existing == {(ZONE, "z2"): 1}
    assert plugin.filter(cloned, pod, sched.snapshot.get("n3")).reasons == (ipa.REASON_EXISTING_ANTI_AFFINITY,)


def test_pre_filter_skip_from_1_27():
    for version, code in (("1.26", Code.SUCCESS), ("1.27", Code.SKIP)):
        _, _, _, st, _ = _plugin_and_state(version, pods="[{name: w, node: n1, labels: {app: web}}]")
        assert st.code == code
    # an existing pod whose anti-affinity matches the incoming pod prevents the skip
    guard = ("[{name: g, node: n1, affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "[{labelSelector: {matchLabels: {app: web}}, topologyKey: " + HOST + "}]}}}]")
    _, _, state, st, _ = _plugin_and_state("1.30", pods=guard)
    assert st.code == Code.SUCCESS
    assert state.read(ipa.PRE_FILTER_KEY).existing == {(HOST, "n1"): 1}


def test_score_sums_weights_per_topology_pair():
    out = _run(f"""
version: "1.30"
profile: {{score: [InterPodAffinity]}}
{CLUSTER}
pods:
- {{name: a, node: n1, labels: {{app: db}}}}
- {{name: b, node: n2, labels: {{app: db}}, terminating: true}}
- {{name: c, node: n3, labels: {{app: db}}}}
pod:
  name: p
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - {{weight: 7, podAffinityTerm: {{labelSelector: {{matchLabels: {{app: db}}}}, topologyKey: {ZONE}}}}}
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - {{weight: 2, podAffinityTerm: {{labelSelector: {{matchLabels: {{app: db}}}}, topologyKey: {HOST}}}}}
""")
    # z1: a, b (terminating counts) -> 14; z2: c -> 7. hostname: n1, n2, n3 -> -2 each.
    assert out.actual["rawScores"]["InterPodAffinity"] == {"n1": 12, "n2": 12, "n3": 5, "n4": 0}
    # min 0, max 12: n3 int(100*5/12) = 41
    assert out.actual["scores"]["InterPodAffinity"] == {"n1": 100, "n2": 100, "n3": 41, "n4": 0}


def test_existing_pod_terms_use_incoming_namespace_labels():
    out = _run(f"""
version: "1.30"
profile: {{score: [InterPodAffinity]}}
nodes: [n1, n2]
namespaces: [{{name: prod, labels: {{env: prod}}}}]
pods:
- name: a
  namespace: other
  node: n1
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 9
        podAffinityTerm:
          labelSelector: {{matchLabels: {{app: web}}}}
          namespaceSelector: {{matchLabels: {{env: prod}}}}
          topologyKey: {HOST}
pod: {{name: p, namespace: prod, labels: {{app: web}}}}
""")
    assert out.actual["rawScores"]["InterPodAffinity"] == {"n1": 9, "n2": 0}
    assert out.actual["scores"]["InterPodAffinity"] == {"n1": 100, "n2": 0}


def test_unlisted_namespaces_exist_without_labels():
    _, _, state, _, _ = _plugin_and_state(
        pods="[{name: w, namespace: elsewhere, node: n1, labels: {app: web}}]",
        pod_affinity="{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
                     "{matchLabels: {app: web}}, namespaceSelector: {matchExpressions: [{key: team, operator: "
                     "DoesNotExist}]}, topologyKey: " + HOST + "}]}}")
    s = state.read(ipa.PRE_FILTER_KEY)
    # 'elsewhere' (used by a pod, not listed, no labels) and 'default' are selected
    assert {"elsewhere", "default"} <= s.anti_affinity_terms[0].namespaces
    assert s.anti_affinity == {(HOST, "n1"): 1}


def test_preemption_dry_run_uses_remove_pod():
    out = _run(f"""
version: "1.30"
profile: {{filter: [InterPodAffinity], postFilter: [DefaultPreemption]}}
nodes: [n1, n2]
pods:
- {{name: low, node: n1, labels: {{app: web}}, priority: 1}}
- {{name: high, node: n2, labels: {{app: web}}, priority: 1000}}
pod:
  name: p
  priority: 100
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {{labelSelector: {{matchLabels: {{app: web}}}}, topologyKey: {HOST}}}
""")
    assert out.actual["candidates"] == {"n1": ["low"]}
    assert out.actual["preemption"] == {"node": "n1", "victims": ["low"]}


def test_terms_cache_is_per_pod_object():
    _, plugin, _, _, _ = _plugin_and_state()
    p1 = _anti_pod("x", "n1", "default", {}, _term(app="a"))
    p2 = replace(p1, labels={"k": "v"})
    assert plugin._terms_of(p1) is plugin._terms_of(p1)
    assert plugin._terms_of(p2) is not plugin._terms_of(p1)
