"""1.36: an unallocated ResourceClaim shared by pods of one pod group cycle (issue 37).
A later pod reuses the pending allocation an earlier pod's Reserve put in flight; at binding
the first PreBind writes the claim, the other fails ("got allocated elsewhere in the
meantime") and retries. Golden cases: cases/gangs/pod-group-shared-claims-136.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kspread.engine.devices import ClaimTracker, ResourceClaim
from kspread.engine.scheduler import run_case
from kspread.errors import CaseError
from kspread.format.case import build_case

CASES = {d["name"]: d for d in yaml.safe_load_all(
    (Path(__file__).resolve().parent.parent / "cases/gangs/pod-group-shared-claims-136.yaml").read_text())}
PREBIND = 'running PreBind plugin "DynamicResources": claim default/shared got allocated elsewhere in the meantime'


def _run(name: str, **changes):
    doc = {**CASES[name], **changes}
    doc.pop("expect", None)
    return run_case(build_case(doc, "t"), keep_all=True)


def test_the_second_sharer_fails_prebind_and_retries():
    sched, results, placements = _run("pod-group-pods-share-an-unallocated-claim")
    assert placements == {"worker-0": "n1", "worker-1": "n1"}
    assert [(r.pod.key, r.pod_group.node, r.pod_group.bound, r.pod_group.message) for r in results] == [
        ("worker-1", "n1", True, None), ("worker-0", "n1", False, PREBIND), ("worker-0", "n1", True, None)]
    shared = sched.claims.get("default", "shared")
    assert shared.reserved_for == ("worker-1", "worker-0")
    assert [str(d) for d in shared.allocation.devices] == ["gpu.example.com/n1/gpu-0"]
    assert sched.claims.in_flight == {}
    # the group cycle's two pods, then worker-0's retry after its error backoff
    assert results[1].pod_group.cycle == results[0].pod_group.cycle < results[2].pod_group.cycle


def test_the_reused_allocation_is_not_checked_against_the_node():
    sched, results, placements = _run("pod-group-pod-reusing-a-pending-allocation-may-go-elsewhere")
    assert placements == {"worker-0": None, "worker-1": "n1"}
    assert [(r.pod.key, r.pod_group.node) for r in results[:2]] == [("worker-1", "n1"), ("worker-0", "n2")]
    assert results[1].pod_group.message == PREBIND
    assert sched.claims.get("default", "shared").reserved_for == ("worker-1",)


def test_reserve_gives_the_reused_allocation_in_claim_order():
    sched, results, placements = _run("pod-group-reserve-gives-allocations-in-claim-order")
    assert placements == {"a": "n1", "b": None, "c": "n1"}
    by = {r.pod.key: r for r in results[:3]}
    assert {k: r.pod_group.node for k, r in by.items()} == {"a": "n1", "b": "n1", "c": "n1"}
    # b's Filter: its own claim's new allocation (gpu-2) first, the reused one (gpu-0) after
    s = by["b"].state.get("DynamicResources")
    assert [[str(d) for d in a.devices] for a in s.node_allocations["n1"]] == [
        ["gpu.example.com/n1/gpu-2"], ["gpu.example.com/n1/gpu-0"]]
    allocs = sched.claims.allocations()
    assert allocs["shared"] == ["gpu.example.com/n1/gpu-0"] and allocs["c-own"] == ["gpu.example.com/n1/gpu-2"]
    assert allocs["b-own"] is None


def test_claims_written_before_the_failure_stay_allocated_unreserved():
    sched, results, placements = _run("pod-group-prebind-writes-claims-before-the-shared-one")
    assert placements == {"a": "n1", "b": "n1"}
    assert [r.pod.key for r in results] == ["a", "b", "b"] and results[1].pod_group.message == PREBIND
    assert sched.claims.get("default", "b-own").reserved_for == ("b",)
    assert sched.claims.get("default", "shared").reserved_for == ("a", "b")


def test_claims_written_before_the_failure_are_seen_by_the_retry(monkeypatch):
    # between b's failed binding and its retry the claim is allocated and reserved for no pod
    from kspread.engine import podgroupcycle

    seen = []
    real = podgroupcycle._prebind_failed

    def spy(run, q, r, pod, node, state, error, at):
        real(run, q, r, pod, node, state, error, at)
        c = run.sched.claims.get("default", "b-own")
        seen.append(([str(d) for d in c.allocation.devices], c.reserved_for, at))

    monkeypatch.setattr(podgroupcycle, "_prebind_failed", spy)
    _run("pod-group-prebind-writes-claims-before-the-shared-one")
    assert seen == [(["gpu.example.com/n1/gpu-1"], (), 1)]


def test_a_sharer_outside_the_group_cycle_waits_for_the_allocation():
    tracker = ClaimTracker(None)
    c = ResourceClaim("default", "shared")
    tracker.signal_in_flight(c, "default/a")
    tracker.signal_in_flight(c, "default/b")
    assert tracker.in_flight[("default", "shared")][1] == ("default/a", "default/b")
    # the same pod's Reserve again (kspread's): its allocation replaces the entry's, no new sharer
    again = ResourceClaim("default", "shared", requests=c.requests, owner_pod="x")
    tracker.signal_in_flight(again, "default/b")
    assert tracker.in_flight[("default", "shared")] == (again, ("default/a", "default/b"))
    tracker.drop_in_flight("default/a")
    assert tracker.in_flight[("default", "shared")][1] == ("default/b",)
    tracker.drop_in_flight("default/b")
    assert tracker.in_flight == {}


def test_a_loser_with_volumes_to_bind_is_refused_by_name():
    doc = CASES["pod-group-pods-share-an-unallocated-claim"]
    objects = [*doc["objects"],
               {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
                "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
               {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-a"},
                "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                         "local": {"path": "/d"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [{
                             "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                   "values": ["n1"]}]}]}}}}]
    schedule = [{**doc["schedule"][0], "replicas": 1, "name": "w1"},
                {**doc["schedule"][0], "replicas": 1, "name": "w0", "claims": [{"name": "data",
                                                                              "storageClassName": "local"}]}]
    with pytest.raises(CaseError, match=r"has VolumeBinding's PreBind bind its volumes before DynamicResources' "
                                        r"PreBind fails"):
        _run("pod-group-pods-share-an-unallocated-claim", objects=objects, schedule=schedule)


def _outcome(name: str, **changes):
    from kspread.workflow.runner import run_loaded

    return run_loaded(build_case({**CASES[name], **changes}, "t"))


def test_the_binding_race_is_reported_on_both_pods():
    out = _outcome("pod-group-reserve-gives-allocations-in-claim-order")
    race = [{"claim": "shared", "pods": ["a", "b"]}]
    # c shares no claim with them: its outcome is not the race's
    assert out.actual["races"] == {"a": race, "b": race}


def test_a_failed_expectation_resting_on_the_race_says_so():
    out = _outcome("pod-group-reserve-gives-allocations-in-claim-order",
                   expect={"placements": {"a": "n1", "b": "n1", "c": "n1"},
                           "allocations": {"shared": ["gpu.example.com/n1/gpu-2"]}})
    notes = {d.key: d.note for d in out.diffs}
    assert set(notes) == {"placements", "allocations"}
    for key in ("placements", "allocations"):
        assert notes[key].startswith("decided by a race of a pod group's binding cycles")
        assert notes[key].endswith("claim shared written by the PreBinds of a, b")


def test_a_group_without_a_shared_claim_reports_no_race():
    doc = CASES["pod-group-reserve-gives-allocations-in-claim-order"]
    schedule = [{**p, "resourceClaims": [c for c in p["resourceClaims"] if c["name"] != "s"]}
                for p in doc["schedule"]]
    out = _outcome("pod-group-reserve-gives-allocations-in-claim-order", schedule=schedule,
                   expect={"placements": {"a": "n1", "b": "n1", "c": "n1"}})
    assert out.diffs == [] and "races" not in out.actual
