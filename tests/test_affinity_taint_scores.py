"""NodeAffinity and TaintToleration scores, pinned per version to exact numbers."""

from __future__ import annotations

import pytest
import yaml

from kspread.engine.framework.args import parse_added_affinity
from kspread.engine.framework.interface import NodeScore
from kspread.engine.labels import Requirement
from kspread.engine.model import Node, NodeSelectorTerm, PreferredSchedulingTerm, Taint, Toleration
from kspread.engine.plugins import nodeaffinity, tainttoleration
from kspread.engine.plugins.nodematch import default_normalize_score, preference_expressions_match
from kspread.engine.versions import Version
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.workflow.runner import run_loaded


def _run(doc: str):
    case = build_case(yaml.safe_load("apiVersion: kspread/v1\nkind: Case\n" + doc), "t")
    return run_loaded(case).actual


def _scores(*vals):
    return [NodeScore(f"n{i}", v) for i, v in enumerate(vals)]


# ---- DefaultNormalizeScore -----------------------------------------------------------------


def test_default_normalize_integer_division():
    s = _scores(5, 2, 5, 0)
    default_normalize_score(100, False, s)
    assert [x.score for x in s] == [100, 40, 100, 0]
    s = _scores(7, 0, 8, 1)
    default_normalize_score(100, False, s)
    assert [x.score for x in s] == [87, 0, 100, 12]


def test_default_normalize_reverse():
    s = _scores(0, 1, 2, 0)
    default_normalize_score(100, True, s)
    assert [x.score for x in s] == [100, 50, 0, 100]
    s = _scores(0, 1, 2, 0)
    default_normalize_score(10, True, s)
    assert [x.score for x in s] == [10, 5, 0, 10]
    s = _scores(1, 2, 3)  # 100 - 100*1//3 = 67, 100 - 66 = 34 (66.67 truncated first)
    default_normalize_score(100, True, s)
    assert [x.score for x in s] == [67, 34, 0]


def test_default_normalize_all_zero():
    s = _scores(0, 0)
    default_normalize_score(100, False, s)
    assert [x.score for x in s] == [0, 0]
    s = _scores(0, 0)
    default_normalize_score(100, True, s)
    assert [x.score for x in s] == [100, 100]


# ---- NodeAffinity preferred terms ---------------------------------------------------------------

N1 = Node("n1", {"disk": "ssd"}, {})
BY_NAME = NodeSelectorTerm((), (Requirement("metadata.name", "In", ("n1",)),))
SSD = NodeSelectorTerm((Requirement("disk", "In", ("ssd",)),))


def test_preferred_score_whole_term_from_1_21():
    terms = (PreferredSchedulingTerm(3, SSD), PreferredSchedulingTerm(5, BY_NAME))
    assert nodeaffinity.preferred_score(terms, N1, whole_term=True) == 8
    assert nodeaffinity.preferred_score(terms, N1, whole_term=False) == 3
    assert not nodeaffinity.preference_matches_whole_term(Version(20))
    assert nodeaffinity.preference_matches_whole_term(Version(21))


def test_preferred_score_skips_weight_zero_and_empty_terms():
    terms = (PreferredSchedulingTerm(0, SSD), PreferredSchedulingTerm(4, NodeSelectorTerm()))
    assert nodeaffinity.preferred_score(terms, N1, True) == 0
    assert not preference_expressions_match(NodeSelectorTerm(), N1)


def _na_case(version, extra_profile=""):
    return f"""
version: "{version}"
profile:
  score: [NodeAffinity]
{extra_profile}
nodes:
- {{name: n1, labels: {{disk: ssd}}}}
- {{name: n2, labels: {{disk: hdd}}}}
pod:
  name: p
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - {{weight: 30, preference: {{matchExpressions: [{{key: disk, operator: In, values: [ssd]}}]}}}}
      - {{weight: 10, preference: {{matchFields: [{{key: metadata.name, operator: In, values: [n2]}}]}}}}
"""


@pytest.mark.parametrize("version, raw, normalized", [
    ("1.30", {"n1": 30, "n2": 10}, {"n1": 100, "n2": 33}),
    ("1.20", {"n1": 30, "n2": 0}, {"n1": 100, "n2": 0}),
    ("1.17", {"n1": 30, "n2": 0}, {"n1": 100, "n2": 0}),
    ("1.14", {"n1": 30, "n2": 0}, {"n1": 10, "n2": 0}),
])
def test_node_affinity_score_by_version(version, raw, normalized):
    out = _run(_na_case(version))
    assert out["rawScores"]["NodeAffinity"] == raw
    assert out["scores"]["NodeAffinity"] == normalized


def test_added_affinity_preferred_only_scores_and_prevents_skip():
    extra = """  pluginConfig:
    NodeAffinity:
      addedAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - {weight: 20, preference: {matchExpressions: [{key: disk, operator: In, values: [hdd]}]}}"""
    out = _run(_na_case("1.30", extra))
    # n1 30; n2 10 (by name) + 20 (added) = 30
    assert out["rawScores"]["NodeAffinity"] == {"n1": 30, "n2": 30}
    doc = f"""
version: "1.30"
profile:
  score: [NodeAffinity]
{extra}
nodes: [n1, n2]
pod: {{name: p}}
"""
    out = _run(doc)  # the pod has no preferences, the arg does: no Skip
    assert out["rawScores"]["NodeAffinity"] == {"n1": 0, "n2": 0}


@pytest.mark.parametrize("raw, err", [
    ({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}},
     "must have at least one node selector term"),
    ({"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]},
     "must be in the range 1-100"),
    ({"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchFields": [{"key": "x", "operator": "In", "values": ["a"]}]}}]},
     "only metadata.name"),
])
def test_added_affinity_validation(raw, err):
    with pytest.raises(CaseError, match=err):
        parse_added_affinity(raw, ())


def test_node_affinity_skip_from_1_30():
    doc = """
version: "{v}"
profile: {{score: [NodeAffinity]}}
nodes: [n1, n2]
pod: {{name: p}}
"""
    for v in ("1.27", "1.28", "1.29"):  # v1.28.4's and v1.29.14's PreScore writes its state
        assert _run(doc.format(v=v))["rawScores"] == {"NodeAffinity": {"n1": 0, "n2": 0}}, v
    assert _run(doc.format(v="1.30"))["rawScores"] == {}


# ---- TaintToleration --------------------------------------------------------------------------


def test_prefer_no_schedule_tolerations_keep_empty_effect():
    tols = (Toleration("a", "Exists"), Toleration("b", "Exists", "", "NoSchedule"),
            Toleration("c", "Exists", "", "PreferNoSchedule"))
    assert tainttoleration.prefer_no_schedule_tolerations(tols) == (tols[0], tols[2])


def test_count_intolerable_prefer_no_schedule():
    taints = (Taint("a", "1", "PreferNoSchedule"), Taint("b", "2", "PreferNoSchedule"),
              Taint("c", "3", "NoSchedule"), Taint("d", "4", "NoExecute"))
    tols = tainttoleration.prefer_no_schedule_tolerations((Toleration("a", "Equal", "1"),))
    assert tainttoleration.count_intolerable_prefer_no_schedule(taints, tols) == 1
    assert tainttoleration.count_intolerable_prefer_no_schedule(taints, ()) == 2
    wrong_value = (Toleration("a", "Equal", "9", "PreferNoSchedule"),)
    assert tainttoleration.count_intolerable_prefer_no_schedule(taints, wrong_value) == 2


@pytest.mark.parametrize("version, name, normalized", [
    ("1.30", "TaintToleration", {"n1": 100, "n2": 67, "n3": 34, "n4": 0}),
    ("1.16", "TaintTolerationPriority", {"n1": 10, "n2": 7, "n3": 4, "n4": 0}),
])
def test_taint_toleration_score(version, name, normalized):
    out = _run(f"""
version: "{version}"
profile: {{score: [{name}]}}
nodes:
- n1
- {{name: n2, taints: [{{key: a, value: "1", effect: PreferNoSchedule}}]}}
- name: n3
  taints: [{{key: a, value: "1", effect: PreferNoSchedule}}, {{key: b, value: "1", effect: PreferNoSchedule}}]
- name: n4
  taints:
  - {{key: a, value: "1", effect: PreferNoSchedule}}
  - {{key: b, value: "1", effect: PreferNoSchedule}}
  - {{key: c, value: "1", effect: PreferNoSchedule}}
pod: {{name: p}}
""")
    # raw 0, 1, 2, 3; max 3: 100 - 100*1//3 = 67, 100 - 100*2//3 = 34; 10 - 3 = 7, 10 - 6 = 4
    assert out["rawScores"][name] == {"n1": 0, "n2": 1, "n3": 2, "n4": 3}
    assert out["scores"][name] == normalized
