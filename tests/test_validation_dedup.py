"""Schema validation checks each distinct shape of a big list's items once; pods that
differ only in their label keys and values share a shape, and a bad label is still
reported at its own pod and line."""

from __future__ import annotations

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
