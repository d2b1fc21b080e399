"""DynamicResources' PreBind waiting for binding conditions in a `schedule`
(DRADeviceBindingConditions): the setDeviceConditions step, the poll, failure and timeout."""

from __future__ import annotations

import pytest
import yaml

from kspread.engine.scheduler import run_case
from kspread.errors import CaseError
from kspread.format.case import build_case

BASE = """
apiVersion: kspread/v1
kind: Case
version: "{version}"
featureGates: {gates}
nodes: [n1, n2]
objects:
- {{apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {{name: gpu}}}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {{name: fabric}}
  spec:
    driver: gpu.example.com
    allNodes: true
    pool: {{name: fabric}}
    devices:
    - {{name: fgpu-0, bindingConditions: [example.com/attached, example.com/ready],
       bindingFailureConditions: [example.com/failed]}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {{name: one}}
  spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: gpu}}}}]}}}}
schedule: {schedule}
expect: {{}}
"""

P = "{name: p, resourceClaims: [{name: gpu, resourceClaimName: one}]}"


def _set(*conds: tuple[str, str], claim: str = "one", device: str = "gpu.example.com/fabric/fgpu-0") -> dict:
    return {"setDeviceConditions": {"claim": claim, "device": device, "conditions": [
        {"type": t, "status": s, "reason": "Driver", "message": f"{t} is {s}"} for t, s in conds]}}


def _run(schedule: list, version: str = "1.36", gates: str = "{}"):
    doc = yaml.safe_load(BASE.format(version=version, gates=gates, schedule="[]"))
    doc["schedule"] = [yaml.safe_load(P), *schedule]
    sched, results, placements = run_case(build_case(doc, "t"), keep_all=True)
    return sched, results, placements


def test_the_pod_waits_assumed_until_every_binding_condition_is_true_at_a_poll():
    sched, results, placements = _run([_set(("example.com/attached", "True")), {"wait": 30}])
    assert placements == {"p": None}  # example.com/ready is not set: still waiting
    assert results[0].waiting_on == "n1" and results[0].waiting_prebind and results[0].bound_node is None
    assert "p" in sched.prebind_waiting and list(sched.snapshot.get("n1").pods) == ["p"]
    claim = sched.claims.get("default", "one")
    assert claim.reserved_for == ("p",) and claim.allocated_at == 0
    # the other condition at clock 30 (a poll tick): seen at the poll after, 35
    sched, _, placements = _run([_set(("example.com/attached", "True")), {"wait": 30},
                                 _set(("example.com/ready", "True")), {"wait": 4}])
    assert placements == {"p": None}
    sched, _, placements = _run([_set(("example.com/attached", "True")), {"wait": 30},
                                 _set(("example.com/ready", "True")), {"wait": 5}])
    assert placements == {"p": "n1"}
    assert sched.bound["p"].start_time == sched.sequence.run.start_epoch + 35
    assert not sched.prebind_waiting


def test_a_condition_set_false_again_before_the_poll_keeps_the_pod_waiting():
    _, _, placements = _run([_set(("example.com/attached", "True"), ("example.com/ready", "True")),
                             _set(("example.com/ready", "False")), {"wait": 20}])
    assert placements == {"p": None}


def test_a_failure_condition_fails_the_binding_cycle_and_the_retry_deallocates():
    sched, results, placements = _run([_set(("example.com/failed", "True")), {"wait": 5}])
    run = sched.sequence.run
    assert run.rejected == {"p": 'claim one binding failed: reason=Driver, message="example.com/failed '
                                         'is True"'}
    # retry at 5: Filter finds the claim failed, PostFilter deallocates it; the next
    # attempt allocates fgpu-0 afresh (its status gone) and waits again from clock 5
    assert [r.attempt for r in results] == [1, 2, 3]
    assert "deallocation of ResourceClaim completed" in results[1].post_filter_reasons
    assert results[1].statuses["n1"].reasons == ("resourceclaim not available on the node",)
    claim = sched.claims.get("default", "one")
    assert claim.allocated_at == 5 and claim.device_conditions == () and claim.reserved_for == ("p",)
    assert placements == {"p": None} and run.prebind["p"].start == 5


def test_the_timeout_is_the_allocation_time_plus_binding_timeout():
    sched, results, _ = _run([{"wait": 599}])
    assert len(results) == 1 and "p" in sched.prebind_waiting
    sched, results, _ = _run([{"wait": 600}])
    assert sched.sequence.run.rejected == {"p": "device binding timeout"}
    assert len(results) == 3 and sched.claims.get("default", "one").allocated_at == 600
    # conditions met at the timeout's second come too late for the poll: the timeout
    # wins; the retry finds the claim ready (so not unavailable), reserves it again and
    # PreBind's first poll binds the pod
    sched, results, placements = _run([{"wait": 595}, _set(("example.com/attached", "True"),
                                                           ("example.com/ready", "True")), {"wait": 5}])
    assert sched.sequence.run.rejected == {"p": "device binding timeout"}
    assert placements == {"p": "n1"} and len(results) == 2 and sched.claims.get("default", "one").allocated_at == 0
    _, _, placements = _run([{"wait": 594}, _set(("example.com/attached", "True"), ("example.com/ready", "True")),
                             {"wait": 1}])
    assert placements == {"p": "n1"}


def test_setting_conditions_is_checked():
    with pytest.raises(CaseError, match=r"has no allocated device 'gpu.example.com/fabric/nope'"):
        _run([_set(("example.com/attached", "True"), device="gpu.example.com/fabric/nope")])
    with pytest.raises(CaseError, match=r"ResourceClaim 'two' does not exist"):
        _run([_set(("example.com/attached", "True"), claim="two")])
    doc = yaml.safe_load(BASE.format(version="1.36", gates="{}", schedule="[]"))
    doc["schedule"] = [yaml.safe_load(P), {"setDeviceConditions": {
        "claim": "one", "device": "gpu.example.com/fabric/fgpu-0",
        "conditions": [{"type": "example.com/attached", "status": "True", "reason": "bad reason"}]}}]
    with pytest.raises(CaseError, match=r"a condition's reason must start with a letter"):
        build_case(doc, "t")
    doc["version"] = "1.32"
    doc["featureGates"] = {"DynamicResourceAllocation": True}
    doc["schedule"][1]["setDeviceConditions"]["conditions"][0]["reason"] = "Ok"
    with pytest.raises(CaseError, match=r"needs the feature gate DRAResourceClaimDeviceStatus \(from 1.32\), off"):
        build_case(doc, "t")


def test_with_the_gate_off_the_device_is_never_allocated_and_nothing_waits():
    # 1.35's default: DRADeviceBindingConditions off, DRAResourceClaimDeviceStatus on
    sched, _, placements = _run([{"wait": 700}], version="1.35")
    assert placements == {"p": None} and not sched.prebind_waiting
    assert sched.claims.get("default", "one").allocation is None
    # turned on in 1.35 (alpha): the same wait as 1.36
    sched, _, placements = _run([_set(("example.com/attached", "True"), ("example.com/ready", "True")),
                                 {"wait": 5}], version="1.35", gates="{DRADeviceBindingConditions: true}")
    assert placements == {"p": "n1"}


def test_deleting_a_waiting_pod_or_its_node_is_refused():
    with pytest.raises(CaseError, match=r"pod 'p' waits in DynamicResources' PreBind for binding conditions: "
                                        r"deleting a pod in its binding cycle is not modelled"):
        _run([{"deletePod": "p"}])
    with pytest.raises(CaseError, match=r"node n1 holds p, waiting in DynamicResources' PreBind"):
        _run([{"deleteNode": "n1"}])


def test_the_error_backoff_counts_consecutive_errors():
    # without SchedulerPopFromBackoffQ the scheduler waits for the backoff flush: the
    # Error at 5 (ConsecutiveErrorsCount 1: 1 s) retries at 7, whose PostFilter
    # deallocates (UnschedulableCount 1, the error count reset: 1 s again), and the
    # attempt at 9 allocates afresh (counting the Error as unschedulable: 2 s, at 10)
    sched, results, _ = _run([_set(("example.com/failed", "True")), {"wait": 5}],
                             gates="{SchedulerPopFromBackoffQ: false}")
    assert [r.attempt for r in results] == [1, 2, 3]
    assert sched.claims.get("default", "one").allocated_at == 9
    assert sched.sequence.run.queue.now == 9


def test_a_gang_pod_with_binding_conditions_is_refused():
    doc = yaml.safe_load(BASE.format(version="1.35", schedule="[]",
                                     gates="{GenericWorkload: true, GangScheduling: true, "
                                           "DRADeviceBindingConditions: true}"))
    doc["objects"].append({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                           "metadata": {"name": "w"},
                           "spec": {"podGroups": [{"name": "g", "policy": {"gang": {"minCount": 1}}}]}})
    doc["schedule"] = [{"name": "p", "resourceClaims": [{"name": "gpu", "resourceClaimName": "one"}],
                        "workloadRef": {"name": "w", "podGroup": "g"}}]
    # minCount 1: the pod is its own quorum, so Permit allows it; its PreBind would wait
    with pytest.raises(CaseError, match=r"pod p of a gang would wait in DynamicResources' PreBind for binding "
                                        r"conditions: kspread does not model a gang pod's PreBind wait"):
        run_case(build_case(doc, "t"))


def test_a_shared_claim_or_a_pod_with_volumes_is_refused():
    doc = yaml.safe_load(BASE.format(version="1.36", gates="{}", schedule="[]"))
    doc["schedule"] = [yaml.safe_load(P), {"name": "p2", "resourceClaims": [{"name": "gpu",
                                                                              "resourceClaimName": "one"}]}]
    with pytest.raises(CaseError, match=r"pod p2 was allocated devices with binding conditions \(gpu.example.com/fabric/fgpu-0\): "
                                        r".*which kspread does not model in a sequence for a claim another pod "
                                        r"reserves, its conditions not met"):
        run_case(build_case(doc, "t"))
    # once p is bound, p2 finds the claim ready: PreBind's first poll binds it at once
    doc["schedule"][1:1] = [_set(("example.com/attached", "True"), ("example.com/ready", "True")), {"wait": 5}]
    sched, _, placements = run_case(build_case(doc, "t"))
    assert placements == {"p": "n1", "p2": "n1"}
    assert sched.claims.get("default", "one").reserved_for == ("p", "p2")
    doc = yaml.safe_load(BASE.format(version="1.36", gates="{}", schedule="[]"))
    doc["objects"] += yaml.safe_load("""
- kind: PersistentVolume
  apiVersion: v1
  metadata: {name: pv}
  spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], claimRef: {namespace: default, name: data}}
- kind: PersistentVolumeClaim
  apiVersion: v1
  metadata: {name: data, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
  spec: {storageClassName: "", accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeName: pv}
""")
    pod = yaml.safe_load(P)
    pod["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    doc["schedule"] = [pod]
    with pytest.raises(CaseError, match=r"pod p was allocated devices with binding conditions "
                                        r"\(gpu.example.com/fabric/fgpu-0\): .* for a pod with volumes"):
        run_case(build_case(doc, "t"))


def test_the_timeline_and_explain_show_the_wait():
    from kspread.workflow.explain import waiting_line

    sched, results, _ = _run([_set(("example.com/attached", "True"), ("example.com/ready", "True")), {"wait": 5}])
    assert sched.sequence.timeline()[-1] == {"step": "wait 5", "clock": 5, "placed": {"p": "n1"}}
    assert sched.sequence.timeline()[1]["step"] == ("setDeviceConditions one gpu.example.com/fabric/fgpu-0 "
                                                    "example.com/attached=True, example.com/ready=True")
    assert waiting_line(results[0]) == ("waits in DynamicResources' PreBind on n1 for its devices' binding "
                                        "conditions")


def test_a_poll_passed_by_a_backoff_flush_is_refused():
    # r preempts v (its own deletion in flight: backoffQ); without SchedulerPopFromBackoffQ
    # the scheduler waits for the flush to clock 5, past p's poll at 5
    doc = yaml.safe_load(BASE.format(version="1.36", gates="{SchedulerPopFromBackoffQ: false}", schedule="[]"))
    doc["nodes"] = [{"name": n, "allocatable": {"cpu": "2", "memory": "8Gi", "pods": 110}} for n in ("n1", "n2")]
    doc["pods"] = [{"name": "v", "node": "n2", "priority": 0, "requests": {"cpu": "2"}}]
    doc["schedule"] = [yaml.safe_load(P), {"wait": 3},
                       _set(("example.com/attached", "True"), ("example.com/ready", "True")),
                       {"name": "r", "priority": 100, "requests": {"cpu": "2"},
                        "nodeSelector": {"kubernetes.io/hostname": "n2"}}]
    with pytest.raises(CaseError, match=r"pod p waits in DynamicResources' PreBind, whose poll or timeout at clock 5 "
                                        r"comes while the scheduler waits for a backoff to end \(clock 5\)"):
        run_case(build_case(doc, "t"))
    doc["schedule"][1] = {"wait": 1}  # the flush at 3, before the poll: r binds, then p at 5
    doc["schedule"].append({"wait": 4})
    _, _, placements = run_case(build_case(doc, "t"))
    assert placements == {"p": "n1", "r": "n2", "v": None}


def test_extended_resources_on_devices_with_binding_conditions_are_refused():
    doc = yaml.safe_load(BASE.format(version="1.36", gates="{}", schedule="[]"))
    doc["objects"][0]["spec"] = {"extendedResourceName": "example.com/gpu"}
    doc["schedule"] = [{"name": "x", "requests": {"example.com/gpu": 1}}]
    with pytest.raises(CaseError, match=r"pod x was allocated devices with binding conditions "
                                        r"\(gpu.example.com/fabric/fgpu-0\): .* for a pod's extended resources "
                                        r"backed by devices"):
        run_case(build_case(doc, "t"))


def test_a_pod_failing_in_prebind_keeps_the_nomination_the_binding_cycle_wrote():
    # NominatedNodeNameForExpectation: the binding cycle nominates the pod to its node
    # before PreBind (DynamicResources' PreBindPreFlight succeeds for a pod with claims);
    # the failure's status patch clears nominatedNodeName only for a pod popped with one
    _, results, _ = _run([_set(("example.com/failed", "True")), {"wait": 5}])
    assert [r.pod.nominated_node for r in results] == [None, "n1", None]
    _, results, _ = _run([_set(("example.com/failed", "True")), {"wait": 5}],
                         gates="{NominatedNodeNameForExpectation: false}")
    assert [r.pod.nominated_node for r in results] == [None, None, None]
