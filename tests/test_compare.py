"""expect against actual: deepdiff compares the normalized forms; the rows say where."""

from __future__ import annotations

from kspread.workflow.runner import _MISSING, comparable, compare

ACTUAL = {
    "feasible": ["n1", "n2"],
    "filter": {"n1": {"code": "Success"}, "n2": {"code": "Success"},
               "n3": {"code": "Unschedulable", "reason": "Insufficient cpu, Insufficient memory"}},
    "rawScores": {"P": {"n1": 3, "n2": 7}},
    "scores": {"P": {"n1": 30, "n2": 70}},
    "totals": {"n1": 30, "n2": 70},
    "selected": "n2",
    "unschedulable": False,
}


def rows(expect):
    return [(d.key, d.rows, d.note) for d in compare(expect, ACTUAL)]


def test_equal_where_the_case_passes():
    expect = {"feasible": ["n2", "n1"], "filter": {"n3": {"code": "Unschedulable", "reason": "Insufficient memory"}},
              "scores": {"P": {"n2": 70}}, "selected": ["n2"], "totals": {"n1": 30}}
    want, have, _ = comparable(expect, ACTUAL)
    assert want == have
    assert rows(expect) == []


def test_one_row_per_node_plugin_or_key():
    expect = {"feasible": ["n1"], "filter": {"n1": "Unschedulable", "n3": {"code": "Unschedulable", "reason": "x"}},
              "scores": {"P": {"n1": 31, "n2": 70}, "Q": {"n1": 1}}, "selected": ["n1", "n2"],
              "preemption": {"node": "n1"}}
    assert rows(expect) == [
        ("feasible", [("nodes", ["n1"], ["n1", "n2"])], ""),
        ("filter", [("n1", "Unschedulable", "Success"),
                    ("n3", "Unschedulable: x", "Unschedulable: Insufficient cpu, Insufficient memory")], ""),
        ("scores", [("P n1", 31, 30), ("Q n1", 1, _MISSING)],
         "plugin Q produced no scores (not in the profile, skipped, or scoring did not run)"),
        ("selected", [("selected", ["n1", "n2"], "n2")], ""),
        ("preemption", [("preemption", {"node": "n1"}, "(did not run: a node fits, or no PostFilter plugin)")], ""),
    ]


def test_an_empty_mapping_asserts_nothing_was_scored():
    assert rows({"rawScores": {}}) == [("rawScores", [("rawScores", "(nothing scored)", {"P": {"n1": 3, "n2": 7}})],
                                        "")]
