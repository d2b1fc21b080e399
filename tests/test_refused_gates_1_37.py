"""The two 1.37 single-feature gates kspread refuses (versions.UNMODELLED_GATES): setting
one on is an error that says what upstream does with it and what kspread computes instead,
not that kspread computes the same (setting one off is refused too, as every unmodelled
gate is; leaving it out is its default, off)."""

from __future__ import annotations

import pytest

from kspread.engine.versions import UNMODELLED_GATES, make_version
from kspread.errors import CaseError


@pytest.mark.parametrize("gate, parts", [
    ("InPlacePodVerticalScalingSchedulerPreemption",
     ["bound pod whose resize is Deferred", "DeferredPodScheduling", "disableResizePreemption",
      "Permit always rejects", "kspread's queue takes no bound pod", "nothing is preempted on a resize's behalf"]),
    ("SchedulerPreQueueingHints",
     ["PreQueueingHintFn", "not among the upstream sources kspread could read",
      "every pod for a deallocation or a deletion", "as with the gate off"]),
])
def test_refused_with_what_is_not_modelled(gate, parts):
    g, _ = UNMODELLED_GATES[gate]
    assert [(s.since, s.default, s.stage, s.locked) for s in g.stages] == [(37, False, "ALPHA", False)]
    with pytest.raises(CaseError) as e:
        make_version("1.37", {gate: True})
    msg = str(e.value)
    assert msg.startswith(f"featureGates.{gate}: feature gate {gate} is known to 1.37 but kspread does not model it: ")
    assert "computes the same with it on or off" not in msg
    for part in parts:
        assert part in msg, part
    with pytest.raises(CaseError):
        make_version("1.37", {gate: False})
    with pytest.raises(CaseError, match=f"version 1.36 does not know feature gate '{gate}'"):
        make_version("1.36", {gate: False})


def test_the_other_unmodelled_gates_still_say_kspread_computes_the_same():
    for gate in ("DRASchedulerFilterTimeout", "SchedulerAsyncAPICalls", "CompositePodGroup"):
        assert UNMODELLED_GATES[gate][1].startswith("kspread computes the same with it on or off, because ")
