"""1.36, pod groups: a parked pod group at the head of podBackoffQ is popped (and repeats its
cycle, which kspread counts without running) before the pods behind it
(kspread.engine.queue._repeat_parked_heads)."""

from __future__ import annotations

from pathlib import Path

from kspread.engine.scheduler import run_case
from kspread.format.case import build_case
from kspread.format.yamlio import load_strict

CASE = Path(__file__).resolve().parent.parent / "cases" / "gangs" / "parked-group-at-backoff-head-136.yaml"


def test_the_parked_group_at_the_head_repeats_and_the_pods_behind_it_come_first():
    doc = next(iter(load_strict(CASE.read_text())))
    _, results, _ = run_case(build_case(doc, "t"), keep_all=True)
    order = [r.pod.key for r in results]
    group = ["wl0-pg0-3", "wl0-pg0-2", "wl0-pg0-1", "wl0-pg0-4"]
    # after the preemptions and the group's second cycle: q21 and q22 bind, then the group
    # (before: the group, parked but at podBackoffQ's head, ran between them)
    tail = order[order.index("ns1/q25", 6):]
    assert tail == ["ns1/q25", *group, "q21", "q22", *group]
    assert [r.bound_node for r in results if r.pod.key in ("q21", "q22") and r.bound_node] == ["n4", "n4"]
