"""SelectorSpread's formulas, pinned to exact integers."""

from kspread.engine.framework.interface import NodeScore
from kspread.engine.model import BETA_ZONE_LABEL, ZONE_LABEL, Node
from kspread.engine.plugins.helper import get_zone_key
from kspread.engine.plugins.selectorspread import spread_normalize
from kspread.engine.versions import Version

V124 = Version(24)
V116 = Version(16)


def _nodes(zones):
    return {n: Node(n, ({ZONE_LABEL: z, BETA_ZONE_LABEL: z} if z else {}), {}) for n, z in zones.items()}


def _norm(counts, zones, version=V124):
    scores = [NodeScore(n, c) for n, c in counts.items()]
    spread_normalize(scores, _nodes(zones), version.max_node_score, version)
    return {s.name: s.score for s in scores}


def test_node_part_only():
    assert _norm({"a": 1, "b": 2}, {"a": "", "b": ""}) == {"a": 50, "b": 0}


def test_all_zero_counts_give_max():
    assert _norm({"a": 0, "b": 0}, {"a": "", "b": ""}) == {"a": 100, "b": 100}
    assert _norm({"a": 0, "b": 0}, {"a": "z", "b": "z"}) == {"a": 100, "b": 100}


def test_zone_blend_truncates_float():
    # node 100, zone 50: 100*(1/3) + (2/3)*50 = 66.666... -> 66 (not 67)
    assert _norm({"a": 0, "b": 1, "c": 2}, {"a": "z1", "b": "z1", "c": "z2"})["a"] == 66


def test_unzoned_node_in_zoned_cluster_keeps_node_part():
    assert _norm({"a": 1, "b": 0, "c": 2}, {"a": "z", "b": "z", "c": ""}) == {"a": 16, "b": 33, "c": 0}


def test_legacy_scale_is_ten():
    assert _norm({"a": 3, "b": 5, "c": 10}, {"a": "", "b": "", "c": ""}, V116) == {"a": 7, "b": 5, "c": 0}


def test_zone_key_forms():
    assert get_zone_key(Node("n", {ZONE_LABEL: "a"}, {}), V124) == ":\x00:a"
    assert get_zone_key(Node("n", {ZONE_LABEL: "a"}, {}), V116) == ""
    assert get_zone_key(Node("n", {"topology.kubernetes.io/region": "r"}, {}), V124) == "r:\x00:"
    # a present but empty beta label blocks the GA fallback
    assert get_zone_key(Node("n", {BETA_ZONE_LABEL: "", ZONE_LABEL: "a"}, {}), V124) == ""
