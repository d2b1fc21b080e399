import pytest

from kspread.engine.model import ZONE_LABEL, Node
from kspread.engine.scheduler import node_tree_order, num_feasible_nodes_to_find
from kspread.engine.versions import FEATURE_GATES, NEWEST_MINOR, OLDEST_MINOR, Version


def test_scale_and_aggregation_flags():
    assert Version(16).max_node_score == 10 and Version(16).extender_score_scale == 1
    assert Version(17).max_node_score == 100 and Version(17).extender_score_scale == 10
    assert [Version(m).selector_spread_match for m in (13, 14, 16, 17)] == ["any", "all", "all", "merged"]
    assert not Version(21).default_selector_by_owner_ref and Version(22).default_selector_by_owner_ref


def test_gate_defaults_by_version():
    assert not Version(19).gate("DefaultPodTopologySpread")
    assert Version(20).gate("DefaultPodTopologySpread")
    assert Version(30).gate("DefaultPodTopologySpread")  # removed after GA: on
    assert not Version(26).gate("MinDomainsInPodTopologySpread")
    assert Version(27).gate("MinDomainsInPodTopologySpread")
    assert Version(26, {"MinDomainsInPodTopologySpread": True}).gate("MinDomainsInPodTopologySpread")


def test_every_gate_known_in_some_supported_version():
    for g in FEATURE_GATES.values():
        assert any(g.stage_at(m) for m in range(OLDEST_MINOR, NEWEST_MINOR + 1)), g.name


@pytest.mark.parametrize("minor,pct,n,want", [
    (24, None, 5000, 5000),  # kspread default: every node
    (24, 100, 5000, 5000),
    (24, 50, 99, 99),  # fewer than 100 nodes: all
    (24, 10, 500, 100),  # at least 100
    (24, 30, 1000, 300),
    (24, 0, 1000, 420),  # adaptive: 50 - 1000/125 = 42 %
    (24, 0, 6000, 300),  # adaptive floor 5 %
    (13, 0, 1000, 1000),  # 1.13: <= 0 means all
    (13, 30, 1000, 300),
])
def test_num_feasible_nodes_to_find(minor, pct, n, want):
    assert num_feasible_nodes_to_find(Version(minor), pct, n) == want


def test_node_tree_interleaves_zones():
    def node(name, zone):
        return Node(name, {ZONE_LABEL: zone} if zone else {}, {})

    nodes = [node("a1", "a"), node("a2", "a"), node("a3", "a"), node("b1", "b"), node("x", ""), node("b2", "b")]
    assert node_tree_order(nodes, Version(24)) == ["a1", "b1", "x", "a2", "b2", "a3"]
