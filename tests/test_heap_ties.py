"""1.35's tie-break: the first pop of Go's container/heap over the scored nodes (no Randomizer
without extender scores), for the cycle's node and OpportunisticBatching's hints."""

from __future__ import annotations

import random

import numpy as np

from kspread.engine.scheduler import SortedNodeScores, heap_first
from kspread.format.case import build_case
from kspread.workflow.runner import run_loaded


def _go_heap_order(totals: list[int]) -> list[int]:
    """Go's heap.Init then heap.Pop until empty, Less = greater total, written out."""
    h = list(range(len(totals)))

    def down(i: int, n: int) -> None:
        while 2 * i + 1 < n:
            j = 2 * i + 1
            if j + 1 < n and totals[h[j + 1]] > totals[h[j]]:
                j += 1
            if not totals[h[j]] > totals[h[i]]:
                return
            h[i], h[j] = h[j], h[i]
            i = j

    for i in range(len(h) // 2 - 1, -1, -1):
        down(i, len(h))
    out = []
    while h:
        n = len(h) - 1
        h[0], h[n] = h[n], h[0]
        down(0, n)
        out.append(h.pop())
    return out


def test_heap_first_is_the_heaps_first_pop():
    r = random.Random(35)
    checked = 0
    for _ in range(3000):
        totals = [r.randint(0, 3) for _ in range(r.randint(2, 200))]
        top = np.flatnonzero(np.array(totals) == max(totals))
        if len(top) < 2:
            continue
        assert top[heap_first(top)] == _go_heap_order(totals)[0]
        checked += 1
    assert checked > 1000
    # positions 6 and 7 of 8: 7 is the leftmost leaf, lifted to the root
    assert heap_first(np.array([6, 7])) == 1
    assert heap_first(np.array([5, 6])) == 0


def test_sorted_node_scores_pops_as_the_heap():
    r = random.Random(36)
    for _ in range(500):
        totals = [r.randint(0, 4) for _ in range(r.randint(2, 60))]
        order = _go_heap_order(totals)
        names = [f"n{i}" for i in range(len(totals))]
        s = SortedNodeScores(names, totals, names[order[0]])
        assert len(s) == len(totals) - 1
        got = [s.pop() for _ in range(len(totals) - 1)]
        assert got == [(names[i], totals[i]) for i in order[1:]]
        assert len(s) == 0


def _seq(version: str) -> dict:
    nodes = [{"name": f"n{i}", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}} for i in range(8)]
    pods = [{"name": f"b{i}", "node": f"n{i}", "requests": {"cpu": "1", "memory": "1Gi"}} for i in range(6)]
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "version": version, "nodes": nodes, "pods": pods,
           "schedule": [{"name": "p1", "requests": {"cpu": "1", "memory": "1Gi"}}]}
    return run_loaded(build_case(doc, "t")).actual


def test_the_heap_decides_from_1_35_node_order_before():
    # n6 and n7 tie: 1.35's heap pops n7; up to 1.34 (selectHost at random) kspread takes n6
    a = _seq("1.35")
    assert a["placements"] == {"p1": "n7"}
    assert a["ties"] == {"p1": {"count": 2, "nodes": ["n6", "n7"]}}
    assert _seq("1.34")["placements"] == {"p1": "n6"}


RELABEL = {"apiVersion": "kspread/v1", "kind": "Case",
           "nodes": [{"name": f"n{i}", "labels": {"topology.kubernetes.io/zone": z},
                      "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}
                     for i, z in ((1, "za"), (2, "zb"), (3, "za"), (4, "zb"))],
           "schedule": [{"name": "p0", "requests": {"cpu": "1"}},
                        {"label": {"node": "n2", "labels": {"topology.kubernetes.io/zone": "za"}}},
                        {"name": "p1", "requests": {"cpu": "1"}}]}


def test_a_relabelled_node_keeps_its_list_place_from_1_18():
    from kspread.engine.scheduler import run_case

    _, results, placements = run_case(build_case({**RELABEL, "version": "1.35"}, "t"), keep_all=True)
    assert results[-1].searched == ["n1", "n2", "n3", "n4"]  # the list p0's snapshot took
    assert placements["p1"] == "n2"
    # up to 1.17 every snapshot lists the tree: za n1, n3, n2; zb n4
    _, results, _ = run_case(build_case({**RELABEL, "version": "1.17"}, "t"), keep_all=True)
    assert results[-1].searched == ["n1", "n4", "n3", "n2"]
