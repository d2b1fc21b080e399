"""What a sequence's cycles keep from one pod to the next (issue 19): NodeResourcesFit's
PreFilter state and the resource scorers' PreScore requests are kept for the next pod
with the same requests (``LastRequests``). Sequences of pods of a few shapes, some
written alike (sharing their converted parts), some not, must schedule exactly as
when every cycle computes them afresh, and as when NodeResourcesFit's Filter compares
every node (``Snapshot.least_left`` never lets it skip them)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kspread.engine.resources import LastRequests
from kspread.engine.scheduler import run_case
from kspread.engine.snapshot import Snapshot
from kspread.format.case import build_case

SHAPES = [
    {"requests": {"cpu": "100m", "memory": "500Mi"}},
    {"requests": {"cpu": "100m", "memory": "500Mi"}, "overhead": {"cpu": "250m"}},
    {"requests": {"cpu": "1", "ephemeral-storage": "1Gi"}},
    {"containers": [{"name": "a", "requests": {"cpu": "300m"}}, {"name": "b"}]},
    {"initContainers": [{"name": "i", "requests": {"memory": "3Gi"}}], "requests": {"cpu": "200m"}},
    {},
]


def _case(version: str, nodes: list[tuple[str, str]], shapes: list[int]) -> dict:
    return {
        "version": version,
        "nodes": [{"name": f"n{i}", "allocatable": {"cpu": cpu, "memory": mem, "ephemeral-storage": "3Gi",
                                                     "pods": 6}}
                  for i, (cpu, mem) in enumerate(nodes)],
        "schedule": [{"name": f"p{k}", **SHAPES[s]} for k, s in enumerate(shapes)],
    }


def _run(data: dict) -> list:
    out: list = []

    def observe(_sched, r) -> None:
        statuses = {n: (s.code, s.reasons, s.plugin) for n, s in r.statuses.items()}
        out.append((r.pod.key, r.selected, dict(r.totals) if r.totals else None, statuses, r.error))

    _, _, placements = run_case(build_case(data, "t"), observe)
    return [out, placements]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["1.21", "1.23", "1.25", "1.33", "1.37"]),
       st.lists(st.tuples(st.sampled_from(["1", "2", "4"]), st.sampled_from(["2Gi", "4Gi"])), min_size=1,
                max_size=4),
       st.lists(st.integers(0, len(SHAPES) - 1), min_size=1, max_size=14))
def test_sequences_schedule_as_without_the_memo(version, nodes, shapes):
    data = _case(version, nodes, shapes)
    kept = _run(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LastRequests, "get", lambda self, pod: None)
        assert _run(data) == kept
    with pytest.MonkeyPatch.context() as mp:  # NodeResourcesFit's Filter never skips its comparisons
        mp.setattr(Snapshot, "least_left", lambda self, resource: -2**62)
        assert _run(data) == kept


def test_memo_answers_only_for_the_same_objects():
    case = build_case(_case("1.37", [("1", "2Gi")], [0, 0, 1]), "t")
    a, b, c = case.incoming
    memo = LastRequests()
    assert memo.get(a) is None
    memo.put(a, "value")
    assert a.containers is b.containers and a.overhead is b.overhead  # written alike: shared
    assert memo.get(b) == "value"
    assert memo.get(c) is None
    # the same objects but one: another request
    init = (a.containers[0],)
    for other in (replace(a, overhead={"cpu": 250}), replace(a, level_requests={"cpu": 500}),
                  replace(a, init_containers=init), replace(a, containers=a.containers + init)):
        assert memo.get(other) is None
    assert memo.get(replace(a, name="renamed", labels={"x": "y"})) == "value"
