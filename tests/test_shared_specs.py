"""Loading converts each distinct pod spec once and shares label maps: the pods built
are the ones built one by one, errors are still raised at the first pod that has
them, and the validation shape keys group items exactly as their JSON text did."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kspread.format import case as case_module
from kspread.format.loader import _LABEL_FIELDS, _NAME_FIELDS, _label_types, _shape_key, load_case, read_file
from tests.helpers import verdict, write_case


def _json_shape(item):
    """The shape key as it was: the item's JSON text."""
    if isinstance(item, Mapping):
        item = {k: (type(v).__name__ if k in _NAME_FIELDS else _label_types(v) if k in _LABEL_FIELDS else v)
                for k, v in item.items()}
    elif isinstance(item, str):
        return "str"
    return json.dumps(item, sort_keys=True, default=repr)


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.floats(allow_nan=True),
                     st.sampled_from(["a", "str", "1", "true", "null", "labels:str", "0.0", 0.0, -0.0, 1.0]))
_keys = st.sampled_from(["name", "node", "labels", "requests", "cpu", "a", "startTime"])
_values = st.recursive(_scalars, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(_keys, c, max_size=3)),
                       max_leaves=8)
_items = st.one_of(_values, st.dictionaries(_keys, _values, max_size=5))


@settings(max_examples=2000, deadline=None)
@given(_items, _items)
def test_shape_keys_group_items_as_their_json_did(a, b):
    assert (_shape_key(a) == _shape_key(b)) == (_json_shape(a) == _json_shape(b))


def _pods(n: int, special: dict | None = None, at: int = 70) -> str:
    lines = []
    for i in range(n):
        pod = {"name": f"p{i}", "node": "n1" if i % 2 else "n2", "labels": {"app": "a", "hash": f"h{i % 3}"},
               "requests": {"cpu": "100m", "memory": "1Gi"}, "tolerations": [{"key": "k", "operator": "Exists"}]}
        if i == at and special:
            pod.update(special)
        lines.append("- " + json.dumps(pod))
    return "\n".join(lines)


def _case(special: dict | None = None, at: int = 70) -> str:
    return f"""
name: c
version: "1.30"
nodes: [n1, n2]
pods:
{_pods(100, special, at)}
pod: {{name: p, requests: {{cpu: 100m}}}}
expect: {{unschedulable: false}}
"""


@pytest.mark.parametrize("special, where", [
    ({"node": "n9"}, "pods[70].node"),
    ({"startTime": "yesterday"}, "pods[70].startTime"),
    ({"name": "Bad_Name"}, "pods[70].name"),
    ({"requests": {"cpu": "lots"}}, "pods[70].requests.cpu"),
    ({"labels": {"app": "bad value!"}}, "pods[70].labels.app"),
    ({"priorityClassName": "missing"}, "pods[70].priorityClassName"),
])
def test_an_error_in_a_later_pod_of_a_shared_spec_is_at_that_pod(tmp_path, special, where):
    v = verdict(tmp_path, _case(special))
    assert not v.passed
    assert where in v.message
    assert ":77:" in v.message  # pods start on line 7


def test_shared_specs_build_the_pods_built_one_by_one(tmp_path, monkeypatch):
    path = write_case(tmp_path, _case({"labels": {"app": "b"}, "priority": 5}, at=3))
    shared = load_case(read_file(path).docs[0])
    monkeypatch.setattr(case_module, "_CACHE_LIMIT", 0)
    alone = case_module.build_case(read_file(path).docs[0].data, "c")
    assert len(shared.cluster.pods) == len(alone.cluster.pods) == 100
    for a, b in zip(shared.cluster.pods + shared.incoming, alone.cluster.pods + alone.incoming):
        for f in dataclasses.fields(a):
            assert getattr(a, f.name) == getattr(b, f.name), f.name
    # pods written alike share their converted parts
    p0, p3, p6 = shared.cluster.pods[0], shared.cluster.pods[3], shared.cluster.pods[6]
    assert p0.containers is p6.containers and p0.labels is p6.labels
    assert p3.priority == 5 and p3.labels == {"app": "b"} and p3.containers is not p0.containers
