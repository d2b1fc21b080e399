"""The snapshot's pod table (the preemption dry run's pods as rows) stays equal to the
NodeInfos through adds and removes, compaction included."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from kspread.engine.model import Node, Pod
from kspread.engine.snapshot import Snapshot
from kspread.engine.versions import Version


def _rows_match(snap: Snapshot, positions: np.ndarray) -> None:
    rows = snap.pod_rows(positions)
    expected = [(k, p) for k, i in enumerate(positions.tolist()) for p in snap.node_list[i].pods.values()]
    assert [(int(k), p) for k, p in zip(rows.node.tolist(), rows.pods)] == expected
    assert rows.priority.tolist() == [p.priority for _, p in expected]
    assert rows.start.tolist() == [np.inf if p.start_time is None else p.start_time for _, p in expected]
    for r, col in rows.requests.items():
        assert col.tolist() == [snap.requests.get(p).requests.get(r, 0) for _, p in expected]


def test_pod_table_follows_adds_and_removes():
    rnd = random.Random(7)
    nodes = [Node(f"n{i}", {}, {"cpu": 4000, "memory": 2**30, "pods": 110}, index=i) for i in range(20)]
    pods = [Pod(f"p{i}", node_name=f"n{rnd.randrange(20)}", priority=rnd.randrange(5),
                start_time=float(i) if i % 3 else None) for i in range(300)]
    snap = Snapshot(nodes, pods, Version(30))
    positions = np.array([3, 0, 7, 19], np.intp)
    _rows_match(snap, positions)  # built from the NodeInfos
    bound = {p.key: p for p in pods}
    for step in range(3000):
        if bound and rnd.random() < 0.55:
            victim = bound.pop(rnd.choice(list(bound)))
            snap.remove_pod(victim)
        else:
            p = replace(Pod(f"q{step}", priority=rnd.randrange(5)), node_name=f"n{rnd.randrange(20)}")
            snap.add_pod(p)
            bound[p.key] = p
        if step % 250 == 0:
            _rows_match(snap, np.array(rnd.sample(range(20), 5), np.intp))
    assert snap.pod_table is not None and snap.pod_table.dead < snap.pod_table.size  # compacted on the way
    _rows_match(snap, np.arange(20, dtype=np.intp))
