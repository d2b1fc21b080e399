"""The claim events of a sequence's pod deletions (issue 29): every claim the resource
claim controller writes is an event, a reservedFor update of a claim other pods still
reserve included."""

from __future__ import annotations

from pathlib import Path

import yaml

from kspread.engine.scheduler import run_case
from kspread.format.case import build_case

CASE = Path(__file__).resolve().parent.parent / "cases" / "devices" / "shared-claim-release.yaml"


def test_a_claim_left_reserved_by_other_pods_requeues_its_users():
    case = build_case(yaml.safe_load(CASE.read_text()), str(CASE))
    sched, _results, placements = run_case(case)
    assert placements["w"] is None
    # upstream v1.35.4: b's removal from `shared`'s reservedFor is a ResourceClaim update
    # whose hint queues w (the claim's status changed), so w runs twice
    assert sched.attempts["w"] == 2
    assert sched.claims.get("default", "shared").reserved_for == ("a",)
