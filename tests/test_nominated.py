"""The nominated pods a pod's filters make room for (``Framework.nominated_pods_by_node``)
while many preemptors wait nominated: the pod's own nomination left out, without
copying every outstanding nomination per cycle (issue 19)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

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


def _dry_run_case(rnd: random.Random) -> Any:
    n = rnd.randrange(3, 9)
    nodes = [{"name": f"n{i}", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}} for i in range(n)]
    pods: list[dict[str, Any]] = []
    for i in range(n):
        for j in range(rnd.randrange(0, 5)):
            pods.append({"name": f"b{i}-{j}", "node": f"n{i}", "priority": rnd.choice([1, 5, 20]),
                         "requests": {"cpu": f"{rnd.choice([500, 900, 1500])}m"}})
        if rnd.random() < 0.6:  # a pod waiting nominated to the node, above or below the preemptor
            pods.append({"name": f"w{i}", "priority": rnd.choice([5, 10, 50]), "nominatedNode": f"n{i}",
                         "requests": {"cpu": f"{rnd.choice([500, 1000, 3000])}m"}})
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "version": "1.35", "profile": FIT, "nodes": nodes,
           "pods": pods, "pod": {"name": "p", "priority": 10, "requests": {"cpu": "3"}}}
    return build_case(doc, "t")


def _outcome(case, monkeypatch, columns: bool):
    from kspread.engine.framework.runtime import Framework
    from kspread.engine.scheduler import Scheduler

    with monkeypatch.context() as m:
        if not columns:
            m.setattr(Framework, "filters_read_only_columns", lambda self, state, pod: False)
        r = Scheduler(case).schedule_one(case.incoming[0])
    out = r.preemption
    if out is None:
        return None
    return (out.nominated_node, [v.key for v in out.victims], {n: [v.key for v in vs] for n, vs in out.candidates.items()},
            {n: (str(st.code), st.reasons, st.plugin) for n, st in out.dry_run.items()}, list(out.potential))


def test_the_dry_run_on_columns_agrees_with_copies_of_the_nodes_with_nominated_pods(monkeypatch):
    """The column dry run (nominated pods as column changes, a node failing with them not
    filtered again) gives the candidates, victims and statuses of the NodeInfo copies."""
    rnd = random.Random(1919)
    for _ in range(60):
        case = _dry_run_case(rnd)
        assert _outcome(case, monkeypatch, True) == _outcome(case, monkeypatch, False)


def test_a_node_failing_with_its_nominated_pods_is_not_filtered_again(monkeypatch):
    """RunFilterPluginsWithNominatedPods returns the first pass's failure: the dry run's
    first filter runs the plain pass only on the nodes that passed with their nominated
    pods (issue 19: a sequence's waiting preemptors made it a second pass per node)."""
    from kspread.engine.plugins import defaultpreemption as dp

    nodes = [{"name": f"n{i}", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}} for i in range(4)]
    pods = [{"name": f"b{i}", "node": f"n{i}", "priority": 1, "requests": {"cpu": "2"}} for i in range(4)]
    pods += [{"name": f"w{i}", "priority": 20, "nominatedNode": f"n{i}", "requests": {"cpu": "2"}} for i in (0, 2)]
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "version": "1.35", "profile": FIT, "nodes": nodes,
           "pods": pods, "pod": {"name": "p", "priority": 10, "requests": {"cpu": "3"}}}
    calls: list[tuple[list[int], bool]] = []
    real = dp._ColumnNodes._filter

    def spy(self, ks, rows=None, extra=None):
        if rows is None:
            calls.append((ks.tolist(), extra is not None))
        return real(self, ks, rows, extra)

    monkeypatch.setattr(dp._ColumnNodes, "_filter", spy)
    _, results, placements = run_case(build_case(doc, "t"))
    assert calls == [([0, 2], True), ([1, 3], False)]
    out = results[0].preemption
    assert out is not None and out.nominated_node == "n3" and placements == {"p": "n3"}
    assert {n: st.reasons for n, st in out.dry_run.items()} == {"n0": ("Insufficient cpu",),
                                                               "n2": ("Insufficient cpu",)}


def _decided_case(rnd: random.Random, preemptors: int = 1) -> Any:
    """Nodes with lower- and higher-priority pods (cpu, memory, pod count) and pods
    nominated to them: many fail SelectVictimsOnNode's filter with every lower-priority
    pod removed, each for its own set of resources."""
    n = rnd.randrange(3, 10)
    nodes = [{"name": f"n{i}", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": rnd.choice([3, 5, 110])}}
             for i in range(n)]
    pods: list[dict[str, Any]] = []
    for i in range(n):
        for j in range(rnd.randrange(0, 5)):
            pods.append({"name": f"b{i}-{j}", "node": f"n{i}", "priority": rnd.choice([1, 5, 20]),
                         "requests": {"cpu": f"{rnd.choice([0, 500, 900, 1500])}m",
                                      "memory": f"{rnd.choice([0, 1, 3, 5])}Gi"}})
        for j in range(rnd.choice([0, 0, 1, 2])):
            pods.append({"name": f"w{i}-{j}", "priority": rnd.choice([5, 10, 50]), "nominatedNode": f"n{i}",
                         "requests": {"cpu": f"{rnd.choice([500, 1000, 3000])}m",
                                      "memory": f"{rnd.choice([0, 2, 6])}Gi"}})
    schedule = [{"name": f"p{k}", "priority": rnd.choice([10, 10, 30]),
                 "requests": {"cpu": f"{rnd.choice([1, 2, 3])}", "memory": f"{rnd.choice([1, 4])}Gi"}}
                for k in range(preemptors)]
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "version": "1.35", "profile": FIT, "nodes": nodes,
           "pods": pods}
    if preemptors == 1:
        doc["pod"] = schedule[0]
    else:
        doc["schedule"] = schedule
    return build_case(doc, "t")


def _record(p) -> Any:
    if p is None:
        return None
    return (p.nominated_node, [v.key for v in p.victims], {n: [v.key for v in vs] for n, vs in p.candidates.items()},
            {n: (str(st.code), st.reasons, st.plugin) for n, st in p.dry_run.items()}, list(p.potential))


def _dry_runs(case, monkeypatch, how: str) -> tuple[list, dict]:
    """Every cycle's preemption (node, victims, candidates, the statuses of the nodes
    that are not candidates, the potential nodes) and the placements: ``how`` is
    "decided" (as the engine runs), "full" (the column dry run with no node decided
    before its rows) or "infos" (the dry run on NodeInfo copies)."""
    from kspread.engine.framework.interface import Filtered
    from kspread.engine.framework.runtime import Framework
    from kspread.engine.plugins import defaultpreemption as dp

    def none(self):
        empty = np.zeros(0, np.intp)
        return empty, Filtered.passing(0), empty

    records: list = []
    with monkeypatch.context() as m:
        if how == "full":
            m.setattr(dp._ColumnNodes, "_fail_with_nominated", none)
        if how == "infos":
            m.setattr(Framework, "filters_read_only_columns", lambda self, state, pod: False)
        _, _, placements = run_case(case, lambda _s, r: records.append(_record(r.preemption)))
    return records, placements


def test_nodes_decided_without_rows_keep_the_full_dry_runs_statuses(monkeypatch):
    """A node with pods nominated to it that fails even with every lower-priority pod
    removed (and its nominated pods of >= priority added) is decided from its column
    sums, without its pods as rows (issue 19): the candidates, victims, placements and
    every visited node's status are those of the full column dry run and of the dry
    run on NodeInfo copies, over random clusters and sequences (the sums of the
    lower-priority pods kept per priority as pods are evicted and bound)."""
    from kspread.engine.plugins import defaultpreemption as dp

    rnd = random.Random(2019)
    decided = 0
    real = dp._ColumnNodes._fail_with_nominated

    def count(self):
        nonlocal decided
        out = real(self)
        decided += len(out[2])
        return out

    for trial in range(80):
        case = _decided_case(rnd, 1 if trial % 2 else rnd.randrange(2, 7))
        with monkeypatch.context() as m:
            m.setattr(dp._ColumnNodes, "_fail_with_nominated", count)
            got = _dry_runs(case, monkeypatch, "decided")
        assert got == _dry_runs(case, monkeypatch, "full") == _dry_runs(case, monkeypatch, "infos")
    assert decided > 50  # the property is not vacuous


def test_a_node_decided_without_rows_has_the_statuses_of_its_first_pass(monkeypatch):
    """The nodes that fail with their nominated pods after the lower-priority pods go
    are decided without rows, with the first pass's reasons (here cpu, and cpu and
    memory); the others get rows."""
    from kspread.engine.plugins import defaultpreemption as dp

    nodes = [{"name": f"n{i}", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}} for i in range(4)]
    pods = [{"name": f"b{i}", "node": f"n{i}", "priority": 1, "requests": {"cpu": "2", "memory": "2Gi"}}
            for i in range(4)]
    pods += [{"name": "w0", "priority": 20, "nominatedNode": "n0", "requests": {"cpu": "2"}},
             {"name": "w2", "priority": 20, "nominatedNode": "n2", "requests": {"cpu": "2", "memory": "6Gi"}}]
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "version": "1.35", "profile": FIT, "nodes": nodes,
           "pods": pods, "pod": {"name": "p", "priority": 10, "requests": {"cpu": "3", "memory": "4Gi"}}}
    rows: list[list[str]] = []
    real = dp._ColumnNodes.rows

    def spy(self):
        out = real(self)
        rows.append(sorted({p.node_name for p in out.pods}))
        return out

    monkeypatch.setattr(dp._ColumnNodes, "rows", spy)
    _, results, placements = run_case(build_case(doc, "t"))
    assert rows == [["n1", "n3"]]
    out = results[0].preemption
    assert out is not None and out.nominated_node == "n3" and placements == {"p": "n3"}
    assert {n: st.reasons for n, st in out.dry_run.items()} == {
        "n0": ("Insufficient cpu",), "n2": ("Insufficient cpu", "Insufficient memory")}
