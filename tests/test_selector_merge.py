"""matchLabelKeys as the API server merges them (format/labelkeys.py): the 1.34+ validation of a
spread constraint's keys on the merged selector, and pods as the API server stores them (under
`objects:` and in `kspread import`'s dumps) taken back to the form their authors wrote."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from kspread.format import importer
from kspread.format.labelkeys import (
    key_conflicts,
    merge_affinity_keys,
    written_affinity,
    written_spread_constraints,
)
from kspread.format.loader import read_file
from kspread.workflow.runner import check
from tests.helpers import write_case

SEL = {"matchLabels": {"app": "web"}}


def _tsc(selector, keys):
    return {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": selector, "matchLabelKeys": keys}


# ---- taking the merged requirements off ------------------------------------------------------

def test_spread_constraint_loses_exactly_the_merged_tail():
    stored = [_tsc({"matchLabels": {"app": "web"},
                    "matchExpressions": [{"key": "tier", "operator": "Exists"},
                                         {"key": "hash", "operator": "In", "values": ["abc"]},
                                         {"key": "track", "operator": "In", "values": ["canary"]}]},
                   ["hash", "gone", "track"])]
    before = copy.deepcopy(stored)
    out = written_spread_constraints(stored, {"app": "web", "hash": "abc", "track": "canary"})
    assert out[0]["labelSelector"] == {"matchLabels": {"app": "web"},
                                       "matchExpressions": [{"key": "tier", "operator": "Exists"}]}
    assert stored == before  # the dump is not changed


def test_spread_constraint_all_merged_drops_match_expressions():
    stored = [_tsc({"matchLabels": {"app": "web"},
                    "matchExpressions": [{"operator": "In", "values": ["abc"], "key": "hash"}]}, ["hash"])]
    out = written_spread_constraints(stored, {"app": "web", "hash": "abc"})
    assert out[0]["labelSelector"] == {"matchLabels": {"app": "web"}}


@pytest.mark.parametrize("exprs, labels", [
    ([], {"hash": "abc"}),  # created before the merge (gate off, or before 1.34)
    ([{"key": "hash", "operator": "In", "values": ["xyz"]}], {"hash": "abc"}),  # another value
    ([{"key": "hash", "operator": "NotIn", "values": ["abc"]}], {"hash": "abc"}),  # another operator
    ([{"key": "hash", "operator": "In", "values": ["abc"]}], {}),  # the pod has no such label
    ([{"key": "hash", "operator": "In", "values": ["abc"]},
      {"key": "x", "operator": "Exists"}], {"hash": "abc"}),  # not at the end
])
def test_spread_constraint_not_ending_with_the_merge_is_kept(exprs, labels):
    sel = {"matchLabels": {"app": "web"}, "matchExpressions": exprs}
    stored = [_tsc(sel, ["hash"])]
    assert written_spread_constraints(stored, labels)[0]["labelSelector"] == sel


def test_affinity_terms_lose_in_and_not_in_requirements():
    merged = [{"key": "hash", "operator": "In", "values": ["abc"]},
              {"key": "team", "operator": "NotIn", "values": ["red"]}]
    term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"},
                                                                        "matchExpressions": merged},
            "matchLabelKeys": ["hash"], "mismatchLabelKeys": ["team"]}
    stored = {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term],
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": term}]}}
    labels = {"app": "web", "hash": "abc", "team": "red"}
    out = written_affinity(stored, labels)
    written = {**term, "labelSelector": {"matchLabels": {"app": "web"}}}
    assert out["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == [written]
    assert out["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {"weight": 5, "podAffinityTerm": written}]
    # and merging it again, as the backend's API server does, gives the stored pod back
    again = copy.deepcopy(out)
    merge_affinity_keys(again, labels)
    assert again == stored


@pytest.mark.parametrize("junk", [None, 3, "x", [1], {"podAffinity": 7}, {"podAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": [5, {"labelSelector": "x", "matchLabelKeys": ["a"]}]}}])
def test_malformed_input_is_left_for_validation(junk):
    assert written_affinity(junk, {"a": "1"}) == junk
    assert written_spread_constraints(junk, {"a": "1"}) == junk


# ---- the 1.34+ validation on the merged selector ---------------------------------------------

@pytest.mark.parametrize("selector, keys, always, if_labelled", [
    ({"matchLabels": {"hash": "v"}}, ["hash"], [], [(0, "hash")]),
    ({"matchExpressions": [{"key": "hash", "operator": "Exists"}]}, ["hash"], [], [(0, "hash")]),
    ({"matchLabels": {"hash": "v"}, "matchExpressions": [{"key": "hash", "operator": "Exists"}]}, ["hash"],
     [(0, "hash")], []),
    ({"matchExpressions": [{"key": "hash", "operator": "Exists"}] * 2}, ["a", "hash"], [(1, "hash")], []),
    (SEL, ["hash", "hash"], [], [(1, "hash")]),  # the key twice: merged twice
    (SEL, ["hash"], [], []),
    ({"matchLabels": {"hash": "v"}}, ["other"], [], []),
])
def test_key_conflicts(selector, keys, always, if_labelled):
    assert key_conflicts(selector, keys) == (always, if_labelled)


def test_key_conflicts_count_the_mismatch_keys_merged():
    # a key in both lists: In and NotIn are merged, the second is the conflict (if labelled)
    assert key_conflicts(SEL, ["hash"], ["hash"]) == ([], [(0, "hash")])
    assert key_conflicts(SEL, ["hash"], ["other"]) == ([], [])


BODY = """\
name: c
version: "{version}"
profile: {{filter: [PodTopologySpread]}}
nodes: [n1]
pods:
{pods}
pod: {{name: p, labels: {{app: web}}}}
expect: {{filter: {{n1: Success}}}}
"""

SHAPE = ("topologySpreadConstraints: [{{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, "
         "labelSelector: {{matchLabels: {{app: web, hash: v1}}}}, matchLabelKeys: [hash]}}]")


def _run(tmp_path: Path, version: str, labels: list[str]):
    pods = "\n".join(f"- {{name: q{i}, node: n1, labels: {{{lab}}}, {SHAPE}}}" for i, lab in enumerate(labels))
    p = write_case(tmp_path, BODY.format(version=version, pods=pods.replace("{{", "{").replace("}}", "}")))
    res = read_file(p)
    assert res.error is None, res.error
    return check(res.docs[0])


def test_a_pod_of_a_shared_shape_is_refused_at_its_own_line(tmp_path):
    # 40 pods written alike but for their labels: the one with a hash label is refused, at its line
    labels = ["app: web"] * 40
    labels[29] = "app: web, hash: v1"
    v = _run(tmp_path, "1.35", labels)
    assert not v.passed
    assert "case.yaml:37: pods[29].topologySpreadConstraints[0].matchLabelKeys[0]: key 'hash' exists in both " \
           "matchLabelKeys and labelSelector (the API server merges the pod's label hash=v1" in v.message
    # without that label every pod loads (the key in the selector is not merged); up to 1.33 none does
    labels[29] = "app: web"
    assert _run(tmp_path, "1.35", labels).passed
    v = _run(tmp_path, "1.33", labels)
    assert "pods[0].topologySpreadConstraints[0].matchLabelKeys[0]: key 'hash' exists in both matchLabelKeys " \
           "and labelSelector" in v.message


def test_the_gate_needs_match_label_keys(tmp_path):
    p = write_case(tmp_path, BODY.format(version="1.35", pods="- {name: q, node: n1}") + (
        "featureGates: {MatchLabelKeysInPodTopologySpread: false}\n"))
    v = check(read_file(p).docs[0])
    assert "featureGates.MatchLabelKeysInPodTopologySpread: MatchLabelKeysInPodTopologySpreadSelectorMerge " \
           "is enabled, but depends on features that are disabled: [MatchLabelKeysInPodTopologySpread]" in v.message
    # 1.34 has the gate; 1.33 does not know it
    p = write_case(tmp_path, BODY.format(version="1.33", pods="- {name: q, node: n1}") + (
        "featureGates: {MatchLabelKeysInPodTopologySpreadSelectorMerge: true}\n"))
    v = check(read_file(p).docs[0])
    assert "version 1.33 does not know feature gate 'MatchLabelKeysInPodTopologySpreadSelectorMerge'" in v.message


# ---- kspread import of a 1.35 cluster ----------------------------------------------------------

DUMP = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: a}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, nodeInfo: {kubeletVersion: v1.35.2}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: {kubernetes.io/hostname: n2, topology.kubernetes.io/zone: b}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, nodeInfo: {kubeletVersion: v1.35.2}}
"""
POD = """\
- apiVersion: v1
  kind: Pod
  metadata: {{name: {name}, namespace: default, labels: {{app: web, pod-template-hash: {hash}}},
             creationTimestamp: "2026-01-01T00:00:0{i}Z"}}
  spec:
    {node}
    containers: [{{name: c, image: x}}]
    affinity:
      podAntiAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 10
          podAffinityTerm:
            topologyKey: kubernetes.io/hostname
            labelSelector:
              matchLabels: {{app: web}}
              matchExpressions: [{{key: pod-template-hash, operator: In, values: [{hash}]}}]
            matchLabelKeys: [pod-template-hash]
    topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: DoNotSchedule
      labelSelector:
        matchLabels: {{app: web}}
        matchExpressions: [{{key: pod-template-hash, operator: In, values: [{hash}]}}]
      matchLabelKeys: [pod-template-hash]
  status: {{phase: {phase}}}
"""


def test_import_of_a_rollout_keeps_every_pod(tmp_path):
    # a Deployment mid-rollout: two old pods (hash old) on n1, one new on n2, a new one pending
    text = DUMP + "".join(POD.format(name=n, hash=h, i=i, node=f"nodeName: {node}" if node else "",
                                     phase="Running" if node else "Pending")
                          for i, (n, h, node) in enumerate([("old-1", "old", "n1"), ("old-2", "old", "n1"),
                                                            ("new-1", "new", "n2"), ("new-2", "new", None)]))
    dump = tmp_path / "dump.yaml"
    dump.write_text(text, encoding="utf-8")
    warnings: list[str] = []
    out = importer.import_snapshot(str(dump), warn=warnings.append, pod="default/new-2")
    assert not [w for w in warnings if "left out" in w], warnings
    case = yaml.safe_load(out)
    assert [p["name"] for p in case["pods"]] == ["old-1", "old-2", "new-1"]
    for p in [*case["pods"], case["pod"]]:
        assert p["topologySpreadConstraints"][0]["labelSelector"] == {"matchLabels": {"app": "web"}}
        term = p["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
        assert term["podAffinityTerm"]["labelSelector"] == {"matchLabels": {"app": "web"}}
    # new-2 spreads among the new pods only: zone a has 0 of them, zone b 1, so n1 fits and n2 does not
    case["profile"] = {"filter": ["PodTopologySpread"]}
    case["expect"] = {"filter": {"n1": "Success", "n2": "Unschedulable"}}
    p = tmp_path / "case.yaml"
    p.write_text(yaml.safe_dump(case), encoding="utf-8")
    res = read_file(p)
    assert res.error is None, res.error
    v = check(res.docs[0])
    assert v.passed, v.message


AFFINITY = """\
name: a
version: "{version}"
profile: {{filter: [InterPodAffinity]}}
nodes: [n1]
pod:
  name: p
  labels: {labels}
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 5
        podAffinityTerm: {{topologyKey: kubernetes.io/hostname, {term}}}
expect: {{filter: {{n1: Success}}}}
"""
AT = "case.yaml:14: pod.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm."


@pytest.mark.parametrize("version, labels, term, error", [
    # the key names a label its selector has: refused only when the pod carries that label
    ("1.35", "{app: web, hash: v1}", "labelSelector: {matchLabels: {hash: v1}}, matchLabelKeys: [hash]",
     AT + "matchLabelKeys[0]: key 'hash' exists in both matchLabelKeys and labelSelector (the API server merges "
     "the pod's label hash=v1"),
    ("1.35", "{app: web}", "labelSelector: {matchLabels: {hash: v1}}, matchLabelKeys: [hash]", None),
    ("1.35", "{app: web}", ("labelSelector: {matchLabels: {hash: v1}, matchExpressions: [{key: hash, operator: "
     "Exists}]}, matchLabelKeys: [hash]"),
     AT + "matchLabelKeys[0]: key 'hash' exists in both matchLabelKeys and labelSelector"),
    # a mismatchLabelKey may be in the selector
    ("1.35", "{app: web, hash: v1}", "labelSelector: {matchLabels: {hash: v1}}, mismatchLabelKeys: [hash]", None),
    ("1.35", "{app: web}", ("labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [hash], "
     "mismatchLabelKeys: [hash]"),
     AT + "matchLabelKeys[0]: key 'hash' exists in both matchLabelKeys and mismatchLabelKeys"),
    ("1.35", "{app: web}", "mismatchLabelKeys: [hash]",
     AT + "mismatchLabelKeys: must not be specified when labelSelector is not set"),
    ("1.35", "{app: web}", "labelSelector: {}, matchLabelKeys: ['a b']",
     AT + "matchLabelKeys[0]: a label key's name part must be 63 characters or less"),
    # 1.30: the gate is off, the API server drops the fields (and kspread ignores them)
    ("1.30", "{app: web}", "labelSelector: {}, matchLabelKeys: ['a b']", None),
    ("1.31", "{app: web}", "labelSelector: {}, matchLabelKeys: ['a b']",
     AT + "matchLabelKeys[0]: a label key's name part"),
])
def test_affinity_label_keys_validated_as_the_api_server_does(tmp_path, version, labels, term, error):
    p = write_case(tmp_path, AFFINITY.format(version=version, labels=labels, term=term))
    res = read_file(p)
    assert res.error is None, res.error
    v = check(res.docs[0])
    if error is None:
        assert v.passed, v.message
    else:
        assert not v.passed
        assert error in v.message, v.message
