"""Schema validation checks each distinct shape of a big list's items once; pods that
differ only in their label keys and values share a shape, and a bad label is still
reported at its own pod and line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import verdict


def _case(bad_label: str) -> str:
    pods = "\n".join(
        f"- {{name: p{i}, node: n1, labels: {{app: a, hash: h{i}}}}}" if i != 70 else f"- {{name: p{i}, node: n1, "
        f"labels: {{app: a, {bad_label}}}}}"
        for i in range(100)
    )
    return f"""
name: c
version: "1.30"
profile: {{score: [NodeResourcesBalancedAllocation]}}
nodes: [n1, n2]
pods:
{pods}
pod: {{name: p}}
expect: {{unschedulable: false}}
"""


def test_label_syntax_error_in_a_deduplicated_shape_names_its_pod_and_line(tmp_path):
    v = verdict(tmp_path, _case("hash: 'bad value!'"))
    assert not v.passed
    assert "pods[70].labels" in v.message and "bad value!" in v.message
    assert ":78:" in v.message  # the pods start on line 8 (after the 2-line header and 5 lines)


def test_label_type_error_is_a_schema_error_at_its_pod(tmp_path):
    v = verdict(tmp_path, _case("hash: 7"))
    assert not v.passed
    assert "pods[70].labels" in v.message and ":78:" in v.message


def test_pods_differing_only_in_labels_pass(tmp_path):
    assert verdict(tmp_path, _case("hash: h70")).passed


# ---- schedule: incoming pods are validated by shape too -------------------------------------------

def _schedule_case(entries: list[str]) -> str:
    return 'name: c\nversion: "1.30"\nnodes: [n1, n2]\nschedule:\n' + "\n".join(f"- {e}" for e in entries) + \
        "\nexpect: {unschedulable: false}\n"


def test_schedule_entries_are_validated_once_per_shape(tmp_path, monkeypatch):
    from kspread.format import loader

    seen: list[int] = []
    real = loader.validate

    def spy(doc, *a, **kw):
        seen.append(len(doc["schedule"]))
        return real(doc, *a, **kw)

    monkeypatch.setattr(loader, "validate", spy)
    entries = [f"{{name: p{i}, labels: {{hash: h{i}}}, requests: {{cpu: {i % 3 + 1}00m}}}}" for i in range(100)]
    assert verdict(tmp_path, _schedule_case(entries)).passed
    assert seen == [3]  # three shapes: one validation of three incoming pods


def test_schedule_error_is_at_the_first_offending_entry_and_its_line(tmp_path):
    for n in (20, 100):  # validated entry by entry (below 64 entries) and by shape
        entries = [f"{{name: p{i}, priority: x}}" if i in (9, 10) else f"{{name: p{i}}}" for i in range(n)]
        v = verdict(tmp_path, _schedule_case(entries))
        assert v.message == f"{tmp_path / 'case.yaml'}:16: schedule[9].priority: must be an integer (got 'x')"


def test_empty_name_in_a_schedule_by_shape_is_the_schema_error(tmp_path):
    for n in (20, 100):
        entries = ["{name: ''}" if i == 12 else f"{{name: p{i}}}" for i in range(n)]
        v = verdict(tmp_path, _schedule_case(entries))
        assert v.message == f"{tmp_path / 'case.yaml'}:19: schedule[12].name: '' should be non-empty"


# entries that share a shape with the plain ones or fail the schema each their own way
_ENTRIES = [
    {}, {"labels": {"app": "a"}}, {"requests": {"cpu": "100m"}}, {"priority": 5},
    {"priority": "x"}, {"node": "n1"}, {"replicas": 2}, {"labels": {"app": 7}}, {"requests": {"cpu": "lots"}},
    {"requests": {"cpu": "1"}, "containers": []}, {"bogus": 1}, {"name": ""}, {"name": 5}, {"startTime": 3},
    {"containers": [{"name": "c", "resources": {"requests": {"memory": "1Qi"}}}]},
]


@st.composite
def _schedules(draw):
    # a few kinds of entry per example, mostly plain ones: an error is rare in a sequence
    kinds = draw(st.lists(st.integers(0, len(_ENTRIES) - 1), min_size=1, max_size=3))
    n = draw(st.integers(64, 80))
    return [{"name": f"p{i}", "labels": {"hash": f"h{i}"},
             **_ENTRIES[draw(st.sampled_from(kinds)) if draw(st.integers(0, 5)) == 0 else 0]} for i in range(n)]


@settings(max_examples=150, deadline=None)
@given(_schedules())
def test_schedule_validated_by_shape_reports_what_validating_every_entry_does(schedule):
    from kspread.errors import CaseError
    from kspread.format.loader import validate_deduplicated
    from kspread.format.schema import validate

    data = {"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "nodes": ["n1"], "schedule": schedule,
            "expect": {}}

    def error(f):
        try:
            f(data)
        except CaseError as e:
            return str(e), tuple(e.path)
        return None

    assert error(validate_deduplicated) == error(validate)
