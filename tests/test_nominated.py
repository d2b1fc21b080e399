"""The nominated pods a pod's filters make room for (``Framework.nominated_pods_by_node``)
while many preemptors wait nominated: the pod's own nomination left out, without
copying every outstanding nomination per cycle (issue 19)."""

from __future__ import annotations

import random
from typing import Any

from kspread.engine.framework.runtime import _Changed
from kspread.engine.model import Pod
from kspread.engine.scheduler import run_case
from kspread.format.case import build_case

FIT = {"filter": ["NodeResourcesFit"], "postFilter": ["DefaultPreemption"]}


def test_a_nominated_pods_retry_sees_the_other_nominations_through_a_view():
    nodes = [{"name": f"n{i}", "allocatable": {"cpu": "2", "memory": "4Gi", "pods": 110}} for i in range(3)]
    pods = [{"name": f"v{i}", "node": f"n{i}", "priority": 1, "startTime": f"2024-01-01T00:00:0{i}Z",
             "requests": {"cpu": "2"}} for i in range(3)]
    schedule = [{"name": f"h{i}", "priority": 10, "requests": {"cpu": "2"}} for i in range(3)]
    doc: dict[str, Any] = {"apiVersion": "kspread/v1", "kind": "Case", "version": "1.35", "profile": FIT,
                           "nodes": nodes, "pods": pods, "schedule": schedule}
    seen: list[tuple[str, int, dict[str, list[str]], bool]] = []

    def observe(sched, r) -> None:
        by_node = sched.framework.nominated_pods_by_node(r.pod)
        seen.append((r.pod.key, r.attempt, {n: [p.key for p in ps] for n, ps in by_node.items()},
                     isinstance(by_node, _Changed)))

    _, _, placements = run_case(build_case(doc, "t"), observe=observe)
    assert placements == {"h0": "n2", "h1": "n1", "h2": "n0"}
    assert seen == [
        ("h0", 1, {}, False),
        ("h1", 1, {"n2": ["h0"]}, False),
        ("h2", 1, {"n2": ["h0"], "n1": ["h1"]}, False),
        # retries: the pod's own nomination is left out of a view of the others
        ("h0", 2, {"n1": ["h1"], "n0": ["h2"]}, True),
        ("h1", 2, {"n0": ["h2"]}, True),
        ("h2", 2, {}, True),
    ]


def test_changed_view_reads_as_the_changed_copy():
    rnd = random.Random(19)
    for _ in range(300):
        base = {f"n{i}": [Pod(f"p{i}")] for i in rnd.sample(range(12), rnd.randrange(8))}
        changed: dict[str, list[Pod] | None] = {
            f"n{i}": None if rnd.random() < 0.5 else [Pod(f"q{i}")] for i in rnd.sample(range(12), rnd.randrange(5))}
        copy = dict(base)
        for k, v in changed.items():
            if v is None:
                copy.pop(k, None)
            else:
                copy[k] = v
        view = _Changed(base, changed)
        assert len(view) == len(copy) and bool(view) == bool(copy)
        assert dict(view) == copy and sorted(view) == sorted(copy)
        for i in range(12):
            assert view.get(f"n{i}") == copy.get(f"n{i}") and (f"n{i}" in view) == (f"n{i}" in copy)
