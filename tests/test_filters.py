"""The filter plugins NodeUnschedulable, NodeName, NodeAffinity, TaintToleration and
the shared node matching helpers, pinned per version."""

from __future__ import annotations

import pytest

from kspread.engine.corev1helpers import find_untolerated_taint, toleration_tolerates
from kspread.engine.labels import Requirement
from kspread.engine.model import Affinity, Node, NodeAffinity, NodeSelectorTerm, Pod, Taint, Toleration
from kspread.engine.plugins import nodeaffinity, nodename, tainttoleration
from kspread.engine.plugins.nodematch import (
    do_not_schedule_taints,
    required_node_affinity_matches,
    term_matches,
)
from kspread.engine.versions import Version


def _node(name="n1", labels=None, taints=()):
    return Node(name, dict(labels or {}), {}, tuple(taints))


def _req(*terms):
    return Pod("p", affinity=Affinity(node_affinity=NodeAffinity(required=tuple(terms))))


# ---- node affinity matching ------------------------------------------------------------------


def test_term_without_requirements_matches_nothing():
    assert not term_matches(NodeSelectorTerm(), _node())


def test_empty_required_terms_match_nothing_but_absent_required_matches_all():
    assert not required_node_affinity_matches(_req(), _node())
    assert required_node_affinity_matches(Pod("p", affinity=Affinity(node_affinity=NodeAffinity())), _node())


@pytest.mark.parametrize("value, op, want, expected", [
    ("5", "Gt", "4", True), ("4", "Gt", "4", False), ("3", "Lt", "4", True),
    ("x", "Gt", "4", False), ("+5", "Gt", "4", True), (" 5", "Gt", "4", False), ("1_0", "Gt", "4", False),
])
def test_gt_lt_parse_like_go(value, op, want, expected):
    t = NodeSelectorTerm((Requirement("gen", op, (want,)),))
    assert term_matches(t, _node(labels={"gen": value})) is expected


def test_gt_on_missing_label_does_not_match():
    assert not term_matches(NodeSelectorTerm((Requirement("gen", "Gt", ("1",)),)), _node())


def test_match_fields_metadata_name_and_expressions_are_anded():
    t = NodeSelectorTerm((Requirement("disk", "In", ("ssd",)),), (Requirement("metadata.name", "In", ("n1",)),))
    assert term_matches(t, _node("n1", {"disk": "ssd"}))
    assert not term_matches(t, _node("n2", {"disk": "ssd"}))
    assert not term_matches(t, _node("n1", {"disk": "hdd"}))


def test_not_in_and_does_not_exist_match_missing_keys():
    assert term_matches(NodeSelectorTerm((Requirement("a", "NotIn", ("x",)),)), _node())
    assert term_matches(NodeSelectorTerm((Requirement("a", "DoesNotExist"),)), _node())


def test_node_selector_requires_equal_values_including_empty():
    assert required_node_affinity_matches(Pod("p", node_selector={"a": ""}), _node(labels={"a": ""}))
    assert not required_node_affinity_matches(Pod("p", node_selector={"a": ""}), _node())


def test_name_conflict_set():
    f = lambda *names: NodeSelectorTerm((), tuple(Requirement("metadata.name", "In", (n,)) for n in names))  # noqa: E731
    assert nodeaffinity.required_node_names(_req(f("n1", "n2"))) == set()
    assert nodeaffinity.required_node_names(_req(f("n1"), f("n2"))) == {"n1", "n2"}
    assert nodeaffinity.required_node_names(_req(f("n1"), NodeSelectorTerm((Requirement("a", "Exists"),)))) is None


# ---- tolerations ----------------------------------------------------------------------------------


@pytest.mark.parametrize("tol, taint, expected", [
    (Toleration("k", "Equal", "v", "NoSchedule"), Taint("k", "v", "NoSchedule"), True),
    (Toleration("k", "Equal", "v", "NoExecute"), Taint("k", "v", "NoSchedule"), False),
    (Toleration("k", "Equal", "w", ""), Taint("k", "v", "NoSchedule"), False),
    (Toleration("k", "Exists", "", ""), Taint("k", "v", "NoExecute"), True),
    (Toleration("", "Exists", "", ""), Taint("any", "v", "NoSchedule"), True),
    (Toleration("k", "", "v", ""), Taint("k", "v", "NoSchedule"), True),
    # Lt / Gt (TaintTolerationComparisonOperators): the taint's value against the toleration's, as int64
    (Toleration("k", "Gt", "1", ""), Taint("k", "2", "NoSchedule"), True),
    (Toleration("k", "Gt", "2", ""), Taint("k", "2", "NoSchedule"), False),
    (Toleration("k", "Gt", "950", "NoSchedule"), Taint("k", "800", "NoSchedule"), False),
    (Toleration("k", "Lt", "950", "NoSchedule"), Taint("k", "800", "NoSchedule"), True),
    (Toleration("k", "Lt", "800", "NoSchedule"), Taint("k", "800", "NoSchedule"), False),
    (Toleration("k", "Gt", "-100", ""), Taint("k", "-50", "NoSchedule"), True),
    (Toleration("k", "Lt", "0", ""), Taint("k", "-9223372036854775808", "NoSchedule"), True),
    (Toleration("k", "Gt", "0", ""), Taint("k", "9223372036854775807", "NoSchedule"), True),
    (Toleration("k", "Gt", "0", ""), Taint("k", "9223372036854775808", "NoSchedule"), False),  # over int64
    # a taint value that is not a canonical decimal integer matches neither Lt nor Gt
    (Toleration("k", "Gt", "100", ""), Taint("k", "high", "NoSchedule"), False),
    (Toleration("k", "Lt", "100", ""), Taint("k", "high", "NoSchedule"), False),
    (Toleration("k", "Gt", "100", ""), Taint("k", "0200", "NoSchedule"), False),
    (Toleration("k", "Lt", "300", ""), Taint("k", "+200", "NoSchedule"), False),
    (Toleration("k", "Lt", "1", ""), Taint("k", "-0", "NoSchedule"), False),
    (Toleration("k", "Gt", "1", ""), Taint("k", "2.5", "NoSchedule"), False),
    (Toleration("k", "Gt", "1", ""), Taint("k", "", "NoSchedule"), False),
    (Toleration("k", "Gt", "1", ""), Taint("k", " 2", "NoSchedule"), False),
    (Toleration("k", "Gt", "0100", ""), Taint("k", "200", "NoSchedule"), False),  # refused at load anyway
    # key and effect still gate the comparison; an empty key matches every key
    (Toleration("j", "Gt", "1", ""), Taint("k", "2", "NoSchedule"), False),
    (Toleration("k", "Gt", "1", "NoExecute"), Taint("k", "2", "NoSchedule"), False),
    (Toleration("", "Gt", "1", ""), Taint("k", "2", "NoSchedule"), True),
    # an operator upstream does not know tolerates nothing
    (Toleration("k", "In", "v", ""), Taint("k", "v", "NoSchedule"), False),
])
def test_toleration_tolerates(tol, taint, expected):
    assert toleration_tolerates(tol, taint) is expected


def test_first_untolerated_taint_in_node_order_and_prefer_no_schedule_ignored():
    taints = [Taint("soft", "", "PreferNoSchedule"), Taint("a", "1", "NoSchedule"), Taint("b", "2", "NoExecute")]
    assert find_untolerated_taint(taints, [], do_not_schedule_taints) == taints[1]
    assert find_untolerated_taint(taints, [Toleration("a", "Exists")], do_not_schedule_taints) == taints[2]
    assert find_untolerated_taint(taints[:1], [], do_not_schedule_taints) is None


# ---- reasons per version --------------------------------------------------------------------------


def test_taint_reasons_by_version():
    t = Taint("team", "a", "NoSchedule")
    got = {m: tainttoleration.err_reason(Version(m), t) for m in (17, 18, 23, 24, 25, 33, 34, 37)}
    assert got == {
        17: "node(s) had taints that the pod didn't tolerate",
        18: "node(s) had taint {team: a}, that the pod didn't tolerate",
        23: "node(s) had taint {team: a}, that the pod didn't tolerate",
        24: "node(s) had untolerated taint {team: a}",
        25: "node(s) had untolerated taint {team: a}",
        33: "node(s) had untolerated taint {team: a}",
        34: "node(s) had untolerated taint(s)",
        37: "node(s) had untolerated taint(s)",
    }


def test_node_affinity_reasons_by_version():
    assert nodeaffinity.err_reason(Version(12)) == "node(s) didn't match node selector"
    assert nodeaffinity.err_reason(Version(20)) == "node(s) didn't match node selector"
    assert nodeaffinity.err_reason(Version(21)) == "node(s) didn't match Pod's node affinity"
    assert nodeaffinity.err_reason(Version(22)) == "node(s) didn't match Pod's node affinity/selector"
    assert nodeaffinity.err_reason(Version(37)) == "node(s) didn't match Pod's node affinity/selector"
    assert not nodeaffinity.prefilter_checks_name_conflict(Version(23))
    assert nodeaffinity.prefilter_checks_name_conflict(Version(24))  # v1.24.17's PreFilter has it
    assert nodeaffinity.prefilter_conflict_per_term(Version(26))
    assert not nodeaffinity.prefilter_conflict_per_term(Version(27))


def test_node_name_reasons_and_filter():
    assert nodename.err_reason(Version(20)) == "node(s) didn't match the requested hostname"
    assert nodename.err_reason(Version(21)) == "node(s) didn't match the requested node name"

    class _H:  # the plugin reads only handle.version
        version = Version(21)

    pl = nodename.NodeName({}, _H())
    from kspread.engine.snapshot import NodeInfo, SelectorCache

    info = NodeInfo(_node("n1"), Version(21), SelectorCache())
    st = pl.filter(None, Pod("p", node_name="n2"), info)
    assert (str(st.code), st.message) == ("UnschedulableAndUnresolvable",
                                          "node(s) didn't match the requested node name")
    assert pl.filter(None, Pod("p", node_name="n1"), info).is_success()
    assert pl.filter(None, Pod("p"), info).is_success()


def test_node_unschedulable_plugin():
    from kspread.engine.plugins.nodeunschedulable import NodeUnschedulable
    from kspread.engine.snapshot import NodeInfo, SelectorCache

    class _H:
        version = Version(24)

    pl = NodeUnschedulable({}, _H())
    cordoned = NodeInfo(Node("n1", {}, {}, (), True), Version(24), SelectorCache())
    st = pl.filter(None, Pod("p"), cordoned)
    assert (str(st.code), st.message) == ("UnschedulableAndUnresolvable", "node(s) were unschedulable")
    tol = Pod("p", tolerations=(Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),))
    assert pl.filter(None, tol, cordoned).is_success()
    wrong_effect = Pod("p", tolerations=(Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoExecute"),))
    assert not pl.filter(None, wrong_effect, cordoned).is_success()
