"""DRANodeAllocatableResources (1.36 alpha): devices' nodeAllocatableResourceMappings as the
API server validates and drops them, and a pod's node allocatable claim statuses in its
requests (PodRequests with UseDRANodeAllocatableResourceClaimStatus). The scheduling itself:
cases/devices/node-allocatable-resources.yaml."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from kspread.engine.devices import NodeAllocatableClaimStatus
from kspread.engine.model import Container, Pod
from kspread.engine.resources import node_non_zero_requests, node_pod_requests, pod_requests
from kspread.engine.versions import FEATURE_GATES, UNMODELLED_GATES, make_version
from kspread.format.case import build_case
from kspread.format.loader import read_file
from kspread.workflow.explain import explain_cycles
from kspread.workflow.runner import explain_run
from tests.helpers import verdict

CASES = Path(__file__).resolve().parent.parent / "cases" / "devices" / "node-allocatable-resources.yaml"
STATUS_CASES = CASES.parent / "node-allocatable-status.yaml"


def _slice(mappings: str, capacity: str = "") -> str:
    """n1's slice of one device, cpu-0, with these mappings (and capacity)."""
    return f"""\
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {{name: n1-cpus}}
  spec:
    driver: cpu.example.com
    nodeName: n1
    pool: {{name: n1}}
    devices:
    - name: cpu-0{capacity}
      nodeAllocatableResourceMappings: {mappings}
"""


_CORES = '\n      capacity: {cpu.example.com/cores: {value: "4"}}'


def _head(name: str, version: str, gates: str, cpu: str, memory: str) -> str:
    """A case's first lines: the class cpus of cpu.example.com, one node n1, ``objects:``."""
    return f"""\
name: {name}
version: "{version}"
{gates}deviceClasses:
- {{name: cpus, driver: cpu.example.com}}
nodes:
- {{name: n1, allocatable: {{cpu: "{cpu}", memory: {memory}, pods: 110}}}}
objects:
"""


def _case(mappings: str, version: str = "1.36", gate: bool = True) -> str:
    gates = "featureGates: {DRANodeAllocatableResources: true}\n" if gate else ""
    return _head("dnar", version, gates, "2", "4Gi") + f"""\
{_slice(mappings, _CORES)}pod: {{name: p, requests: {{cpu: "1"}}, devices: {{c: {{class: cpus}}}}}}
expect: {{feasible: [n1]}}
"""


def test_the_gate_is_modelled_with_its_dependency():
    assert "DRANodeAllocatableResources" in FEATURE_GATES
    assert "DRANodeAllocatableResources" not in UNMODELLED_GATES
    v = make_version("1.36", {"DRANodeAllocatableResources": True})
    assert v.gate("DRANodeAllocatableResources")
    assert not make_version("1.36", None).gate("DRANodeAllocatableResources")


@pytest.mark.parametrize("mappings, where, text", [
    ("{example.com/foo: {allocationMultiplier: '1'}}", "example.com/foo",
     "'example.com/foo' must be a node allocatable resource name"),
    ("{cpu: {}}", "cpu", "at least one of allocationMultiplier or capacityKey must be set"),
    ("{cpu: {allocationMultiplier: '0'}}", "cpu.allocationMultiplier", "allocationMultiplier must be positive"),
    ("{cpu: {capacityKey: cpu.example.com/threads}}", "cpu.capacityKey",
     "capacityKey 'cpu.example.com/threads' is not one of the device's capacities"),
    ("{cpu: {multiplier: '1'}}", "cpu.multiplier", "unknown field 'multiplier'"),
])
def test_invalid_mappings_name_file_line_and_field(tmp_path, mappings, where, text):
    v = verdict(tmp_path, _case(mappings))
    assert f"case.yaml:21: objects[0].spec.devices[0].nodeAllocatableResourceMappings.{where}: {text}" \
        in v.message, v.message


def test_the_field_is_new_in_1_36(tmp_path):
    v = verdict(tmp_path, _case("{cpu: {allocationMultiplier: '2'}}", version="1.35", gate=False))
    assert ("objects[0].spec.devices[0].nodeAllocatableResourceMappings: 1.35 has no nodeAllocatableResourceMappings "
            "(DRANodeAllocatableResources, from 1.36)") in v.message, v.message


def test_1_37_is_refused_by_name(tmp_path):
    v = verdict(tmp_path, _case("{cpu: {allocationMultiplier: '2'}}", version="1.37"))
    assert ("nodeAllocatableResourceMappings in 1.37 are not modelled by kspread: 1.37's DynamicResources "
            "(upstream main) was not read") in v.message, v.message
    assert verdict(tmp_path, _case("{cpu: {allocationMultiplier: '2'}}", version="1.37", gate=False)).passed


def test_mappings_count_with_the_gate_and_are_dropped_without(tmp_path):
    # 1 cpu + 2 cpu of the device: more than n1's 2 with the gate; dropped without it
    on = verdict(tmp_path, _case("{cpu: {allocationMultiplier: '2'}}"))
    assert not on.passed and "Insufficient cpu" in on.message, on.message
    off = verdict(tmp_path, _case("{cpu: {allocationMultiplier: '2'}}", gate=False))
    assert off.passed, off.message


def test_a_capacity_key_without_consumed_capacity_is_the_filters_error(tmp_path):
    # cpu-0 allows a single allocation: its result has no consumedCapacity, which upstream's
    # buildNodeAllocatableDRAInfo reports as an error
    v = verdict(tmp_path, _case("{cpu: {capacityKey: cpu.example.com/cores}}"))
    assert "ConsumedCapacity is nil, but Capacity key 'cpu.example.com/cores' is set in " \
           "NodeAllocatableResourceMappings for resource cpu" in v.message, v.message


def _pod(*statuses: NodeAllocatableClaimStatus, level: dict | None = None) -> Pod:
    return Pod("p", node_name="n1", containers=(Container("main", requests={"cpu": 500, "memory": 1 << 30}),),
               level_requests=level or {}, node_allocatable_claims=statuses)


def test_pod_requests_add_the_claims_exactly_then_round_up():
    on = make_version("1.36", {"DRANodeAllocatableResources": True})
    third = Fraction(1, 3000)  # a third of a millicore
    p = _pod(NodeAllocatableClaimStatus("a", ("main",), (("cpu", third), ("memory", Fraction(1, 2)))),
             NodeAllocatableClaimStatus("b", ("main",), (("cpu", third),)))
    # 500m + 2/3 m rounds up to 501m; 1Gi + 1/2 byte to 1Gi + 1
    assert pod_requests(p, on, node_allocatable=True) == {"cpu": 501, "memory": (1 << 30) + 1}
    assert node_pod_requests(p, on) == {"cpu": 501, "memory": (1 << 30) + 1}
    assert node_non_zero_requests(p, on) == (501, (1 << 30) + 1)
    # NodeResourcesFit's own request (computePodResourceRequest from PreFilter) does not set
    # UseDRANodeAllocatableResourceClaimStatus: a pending pod's statuses are not its request
    assert pod_requests(p, on) == {"cpu": 500, "memory": 1 << 30}
    off = make_version("1.36", None)
    assert pod_requests(p, off, node_allocatable=True) == {"cpu": 500, "memory": 1 << 30}
    assert node_pod_requests(p, off) == {"cpu": 500, "memory": 1 << 30}
    assert node_non_zero_requests(p, off) == (500, 1 << 30)


def test_pod_level_requests_replace_the_claims_share():
    on = make_version("1.36", {"DRANodeAllocatableResources": True})
    p = _pod(NodeAllocatableClaimStatus("a", ("main",), (("cpu", Fraction(2)),)), level={"cpu": 3000})
    # cpu is requested at pod level: the pod level replaces the containers and the claims
    assert pod_requests(p, on, node_allocatable=True)["cpu"] == 3000
    # a container without a cpu request counts the non-zero default, then the claim's 2 cpu
    q = Pod("q", node_name="n1", containers=(Container("main"),),
            node_allocatable_claims=(NodeAllocatableClaimStatus("a", ("main",), (("cpu", Fraction(2)),)),))
    assert node_non_zero_requests(q, on)[0] == 100 + 2000


_BOUND = """\
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {{name: c}}
  spec:
    devices:
      requests: [{{name: cpu, exactly: {{deviceClassName: cpus}}}}]
- apiVersion: v1
  kind: Pod
  metadata: {{name: old, namespace: default}}
  spec:
    nodeName: n1
    containers: [{{name: main, resources: {{requests: {{cpu: "1"}}, claims: [{{name: cpus}}]}}}}]
    resourceClaims: [{{name: cpus, resourceClaimName: c}}]
  status:
    phase: Running
    nodeAllocatableResourceClaimStatuses:
    - {status}
pod: {{name: p, requests: {{cpu: 1500m}}}}
expect: {{feasible: {feasible}}}
"""
_GATE = "featureGates: {DRANodeAllocatableResources: true}\n"
_GOOD = "{resourceClaimName: c, containers: [main], resources: {cpu: '2'}}"


def _bound(status: str = _GOOD, feasible: str = "[]", version: str = "1.36", gates: str = _GATE) -> str:
    return _head("st", version, gates, "4", "8Gi") + _BOUND.format(status=status, feasible=feasible)


def test_a_bound_pods_claim_statuses_count_with_the_gate_and_are_dropped_without(tmp_path):
    # 1 cpu and the claim's 2: 1 free of 4 for p's 1500m
    v = verdict(tmp_path, _bound())
    assert v.passed, v.message
    v = verdict(tmp_path, _bound(feasible="[n1]", gates=""))
    assert v.passed, v.message


@pytest.mark.parametrize("status, where, text", [
    ("{resourceClaimName: '', containers: [main], resources: {cpu: '2'}}", "resourceClaimName",
     "Required value: must not be empty"),
    ("{resourceClaimName: c, containers: [], resources: {cpu: '2'}}", "containers",
     "Required value: must not be empty"),
    ("{resourceClaimName: c, containers: [main], resources: {}}", "resources", "Required value: must not be empty"),
    ("{resourceClaimName: c, containers: [main], resources: {example.com/cores: '2'}}", "resources.example.com/cores",
     "Invalid value: 'example.com/cores': must be a node allocatable resource name"),
    ("{resourceClaimName: c, containers: [main], resources: {cpu: '-1'}}", "resources.cpu",
     "Invalid value: '-1': must be non-negative"),
    ("{resourceClaimName: d, containers: [main], resources: {cpu: '2'}}", "resourceClaimName",
     "Invalid value: 'd': no mapping found in pod reference"),
    ("{resourceClaimName: c, containers: [main], resource: {cpu: '2'}}", "resource", "unknown field"),
])
def test_invalid_statuses_name_file_line_and_field(tmp_path, status, where, text):
    v = verdict(tmp_path, _bound(status))
    assert f"case.yaml:27: objects[1].status.nodeAllocatableResourceClaimStatuses[0].{where}: {text}" in v.message, \
        v.message


def test_an_invalid_status_is_dropped_unchecked_with_the_gate_off(tmp_path):
    # the API server drops the field before validating it (dropPodNodeAllocatableResourceStatus)
    v = verdict(tmp_path, _bound("{resourceClaimName: d, containers: [], resources: {}}", feasible="[n1]", gates=""))
    assert v.passed, v.message


def test_the_field_is_new_in_1_36_and_1_37s_is_refused_by_name(tmp_path):
    v = verdict(tmp_path, _bound(version="1.35", gates=""))
    assert ("case.yaml:25: objects[1].status.nodeAllocatableResourceClaimStatuses: 1.35 has no "
            "status.nodeAllocatableResourceClaimStatuses (DRANodeAllocatableResources, from 1.36)") in v.message, \
        v.message
    v = verdict(tmp_path, _bound(version="1.37"))
    assert ("objects[1].status.nodeAllocatableResourceClaimStatuses: a pod's nodeAllocatableResourceClaimStatuses "
            "in 1.37 are not modelled by kspread") in v.message, v.message
    assert verdict(tmp_path, _bound(version="1.37", gates="", feasible="[n1]")).passed


def _pending(where: str, expect: str) -> str:
    """The pod p (a claim c on n1's cpu-0, which maps 1 cpu) with a status of 8 cpu for c, as
    ``where`` gives it."""
    return _bound().split("- apiVersion: v1\n")[0] + \
        _slice('{cpu: {allocationMultiplier: "1"}}') + f"""\
{where}
  name: p
  containers: [{{name: main, resources: {{requests: {{cpu: "1"}}, claims: [{{name: cpus}}]}}}}]
  resourceClaims: [{{name: cpus, resourceClaimName: c}}]
  status:
    nodeAllocatableResourceClaimStatuses:
    - {{resourceClaimName: c, containers: [main], resources: {{cpu: "8"}}}}
expect: {{{expect}}}
"""


def test_a_pending_pods_own_status_is_not_its_request(tmp_path):
    """NodeResourcesFit's PreFilter computes the pod's request without
    UseDRANodeAllocatableResourceClaimStatus, and DynamicResources computes the statuses anew
    from its allocation (cpu-0: 1 cpu): 1 + 1 cpu fit n1's 4, the status's 8 are read by
    neither."""
    v = verdict(tmp_path, _pending("pod:", "feasible: [n1]"))
    assert v.passed, v.message


def test_a_pod_a_schedule_creates_has_no_status(tmp_path):
    v = verdict(tmp_path, _pending("schedule:\n-", "placements: {p: n1}"))
    assert ("case.yaml:33: schedule[0].status.nodeAllocatableResourceClaimStatuses: a pod a `schedule` creates "
            "has no status.nodeAllocatableResourceClaimStatuses") in v.message, v.message


def test_explain_names_the_resource_not_devices(tmp_path):
    doc = read_file(CASES).docs[2]  # capacity-key: b lacks memory
    outcome, cycles = explain_run(build_case(doc.data, "t"))
    text = explain_cycles(outcome.scheduler, cycles)
    assert "DynamicResources                  Unschedulable: Insufficient memory\n" in text, text
    assert "matching device" not in text, text
    assert "n1: more free memory for the pod's requests with its claims' node allocatable resources" in text, text


def test_a_pending_pods_status_at_its_binding_and_unreserve():
    """The rules no case reaches (a case's pending pods are held or tried once): the assumed
    pod gets what Reserve found, none included (assume overwrites); the bound pod keeps the
    API server's status when PreBind patched none, else what Reserve found; Unreserve clears
    the pending pod's status when its cycle found some."""
    doc = next(d for d in read_file(STATUS_CASES).docs if d.data["name"] == "devices-node-allocatable-status-nominated")
    case = build_case(doc.data, "t")
    sched = explain_run(case)[0].scheduler
    nom = next(p for p in case.cluster.pods if p.name == "nom")
    own = nom.node_allocatable_claims
    assert own == (NodeAllocatableClaimStatus("held", ("main",), (("cpu", Fraction(2)),)),)
    sched.claim_statuses[nom.key] = ()
    assert sched.claim_statuses_of(nom) == ()
    assert sched.bound_claim_statuses(nom) == own
    assert sched.unreserve_claim_statuses(nom).node_allocatable_claims == own
    found = (NodeAllocatableClaimStatus("held", ("main",), (("cpu", Fraction(1)),)),)
    sched.claim_statuses[nom.key] = found
    assert sched.claim_statuses_of(nom) == found and sched.bound_claim_statuses(nom) == found
    sched.pending[nom.key] = nom
    assert sched.unreserve_claim_statuses(nom).node_allocatable_claims == ()
    assert sched.current(nom).node_allocatable_claims == ()


def test_a_pod_with_statuses_has_no_pending_resize(tmp_path):
    # ValidatePodResize: "pods with node allocatable resource claims cannot be resized"
    text = _bound().replace("    phase: Running\n", "    phase: Running\n    conditions: [{type: PodResizePending, "
                                                    "status: 'True', reason: Deferred}]\n")
    v = verdict(tmp_path, text)
    assert ("objects[1].status.nodeAllocatableResourceClaimStatuses: pods with node allocatable resource claims "
            "cannot be resized") in v.message, v.message
