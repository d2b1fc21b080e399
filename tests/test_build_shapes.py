"""A big list's pods are built by shape: validation numbers the distinct shapes, the
first pod of a shape is built the general way, and the rest take its converted spec
and go through the checks every pod gets (``_Builder.quick_pod``). Built with and
without the shape numbers, a case gives the same pods, field for field, or the same
error at the same pod."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from kspread.engine.model import Pod
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.format.loader import validate_deduplicated

# the fields of a pod's spec: pods with the same ones share a shape
_SPEC = {
    "requests": st.sampled_from([{"cpu": "100m"}, {"cpu": "1", "memory": "1Gi"}]),
    "replicas": st.sampled_from([1, 2]),
    "terminating": st.booleans(),
    "namespace": st.sampled_from(["default", "team"]),
}
# a pod's own fields: any value in any pod of a shape
_OWN = {
    "node": st.sampled_from(["n1", "n2"]),
    "labels": st.one_of(
        st.sampled_from([{}, {"app": "a"}, {"app": "a", "tier": "web"}]),
        st.integers(0, 3).map(lambda i: {"app": "a", "hash": f"h{i}"}),
    ),
    "startTime": st.just("2024-01-01T00:00:00Z"),
    "nominatedNode": st.just("n2"),
}
# what the builder (not the schema) rejects, put in one pod of some examples
_BAD = [("name", "Bad_Name"), ("name", "x" * 254), ("name", "p3"), ("node", "nx"), ("nominatedNode", "nx"),
        ("labels", {"app": "bad value!"}), ("labels", {"-bad": "a"}), ("labels", {"app": "a", "x": "-"}),
        ("startTime", "yesterday")]


def _fields(table: dict, max_size: int):
    return st.sets(st.sampled_from(sorted(table)), max_size=max_size).flatmap(
        lambda keys: st.fixed_dictionaries({k: table[k] for k in sorted(keys)}))


_ABSENT = object()


@st.composite
def _pods(draw):
    templates = draw(st.lists(_fields(_SPEC, 2), min_size=1, max_size=3))
    pods = []
    for i in range(draw(st.integers(64, 72))):
        pod = {"name": f"p{i}", **draw(st.sampled_from(templates))}
        for key, strategy in _OWN.items():
            # node and labels in most pods, a start time or a nominated node in few
            common = key in ("node", "labels")
            if draw(st.integers(0, 9)) < (8 if common else 1):
                pod[key] = draw(strategy)
        pods.append(pod)
    if draw(st.integers(0, 2)):  # in the second half, where most pods are not the first of their shape
        key, value = draw(st.sampled_from(_BAD))
        pods[draw(st.integers(len(pods) // 2, len(pods) - 1))][key] = value
    return pods


def _build(doc: dict, shapes: list[int] | None):
    try:
        case = build_case(doc, "c", pod_shapes=shapes)
    except CaseError as e:
        return ("error", str(e), tuple(e.path))
    return [tuple(getattr(p, f.name) for f in dataclasses.fields(Pod)) for p in case.cluster.pods]


@settings(max_examples=150, deadline=None)
@given(_pods())
def test_pods_built_by_shape_are_the_pods_built_one_by_one(pods):
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": "1.30", "nodes": ["n1", "n2"],
           "pods": pods, "pod": {"name": "incoming"}, "expect": {"unschedulable": False}}
    try:
        shapes = validate_deduplicated(doc)
    except CaseError:
        return  # the schema said what is wrong before the builder ran
    assert len(shapes["pods"]) == len(pods)
    assert _build(doc, shapes["pods"]) == _build(doc, None)


def test_pods_of_one_shape_share_the_first_pods_spec():
    pods = [{"name": f"p{i}", "node": "n1", "labels": {"app": "a", "hash": f"h{i}"}, "requests": {"cpu": "1"}}
            for i in range(100)]
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": "1.30", "nodes": ["n1"],
           "pods": pods, "pod": {"name": "incoming"}, "expect": {"unschedulable": False}}
    shapes = validate_deduplicated(doc)["pods"]
    assert set(shapes) == {0}
    built = build_case(doc, "c", pod_shapes=shapes).cluster.pods
    assert all(p.containers is built[0].containers for p in built)
    assert [p.labels["hash"] for p in built] == [f"h{i}" for i in range(100)]
    assert [p.start_time for p in built] == [946_684_800.0 + i for i in range(100)]
