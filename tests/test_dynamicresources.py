"""DynamicResources and the structured allocator: exact allocations and statuses."""

from __future__ import annotations

from fractions import Fraction

import pytest
import yaml

from kspread.engine.allocator import AllocationError, Allocator, Features, gather_pools
from kspread.engine.devicecel import CelError, device_matches
from kspread.engine.devices import (
    ALL,
    AllocatedDevice,
    Allocation,
    Attribute,
    ClaimTracker,
    Device,
    DeviceClass,
    DeviceObjects,
    DeviceRequest,
    ExactRequest,
    MatchAttribute,
    ResourceClaim,
    ResourceSlice,
)
from kspread.engine.framework.status import Code
from kspread.engine.model import Node
from kspread.errors import CaseError
from kspread.format.case import build_case
from kspread.workflow.runner import run_loaded

GPU = "gpu.example.com"
CLS = {"gpu": DeviceClass("gpu", (f'device.driver == "{GPU}"',))}
N1, N2 = Node("n1", {"kubernetes.io/hostname": "n1", "rack": "a"}, {}), Node("n2", {"rack": "b"}, {}, index=1)


def gpus(node: str, *specs: tuple[str, int], pool: str | None = None, **kw) -> ResourceSlice:
    devs = tuple(Device(n, {"numa": Attribute("int", numa)}) for n, numa in specs)
    return ResourceSlice(f"{node}-s", GPU, pool or node, generation=kw.pop("generation", 1),
                         node_name=node, devices=devs, **kw)


def claim(name: str, *requests: DeviceRequest, constraints=()) -> ResourceClaim:
    return ResourceClaim("default", name, requests, constraints)


def req(name: str, count: int = 1, mode: str = "ExactCount", selectors=(), admin=None) -> DeviceRequest:
    return DeviceRequest(name, ExactRequest(name, "gpu", selectors, mode, count, admin))


def ids(allocs) -> list[list[str]]:
    return [[str(d) for d in a.devices] for a in allocs]


def test_exact_count_takes_devices_in_slice_order_and_skips_allocated():
    a = Allocator(Features(), {(GPU, "n1", "g0")}, CLS, [gpus("n1", ("g0", 0), ("g1", 0), ("g2", 1))])
    out = a.allocate(N1, [claim("c", req("r", 2))])
    assert ids(out) == [[f"{GPU}/n1/g1", f"{GPU}/n1/g2"]]
    assert out[0].node_selector is not None and out[0].node_selector[0].match_fields[0].values == ("n1",)
    assert a.allocate(N1, [claim("c", req("r", 3))]) is None


def test_match_attribute_backtracks_to_a_pair_on_one_numa_node():
    a = Allocator(Features(), set(), CLS, [gpus("n1", ("g0", 0), ("g1", 1), ("g2", 1))])
    c = claim("c", req("r", 2), constraints=(MatchAttribute(f"{GPU}/numa"),))
    assert ids(a.allocate(N1, [c])) == [[f"{GPU}/n1/g1", f"{GPU}/n1/g2"]]


def test_two_claims_of_one_pod_do_not_share_a_device():
    a = Allocator(Features(), set(), CLS, [gpus("n1", ("g0", 0), ("g1", 0))])
    assert ids(a.allocate(N1, [claim("a", req("r")), claim("b", req("r"))])) == [[f"{GPU}/n1/g0"], [f"{GPU}/n1/g1"]]
    assert a.allocate(N1, [claim("a", req("r")), claim("b", req("r", 2))]) is None


def test_all_mode_fails_on_an_incomplete_pool_and_takes_every_match():
    s = gpus("n1", ("g0", 0), ("g1", 1))
    assert ids(Allocator(Features(), set(), CLS, [s]).allocate(N1, [claim("c", req("r", mode=ALL))])) == \
        [[f"{GPU}/n1/g0", f"{GPU}/n1/g1"]]
    part = ResourceSlice("p", GPU, "n1", 1, 2, node_name="n1", devices=s.devices)
    with pytest.raises(AllocationError, match=r"asks for all devices, but resource pool gpu\.example\.com/n1 is "
                                              "currently being updated"):
        Allocator(Features(), set(), CLS, [part]).allocate(N1, [claim("c", req("r", mode=ALL))])


def test_pools_keep_the_newest_generation_and_selector_slices():
    old = gpus("n1", ("old", 0), generation=1)
    new = gpus("n1", ("new", 0), generation=2)
    net = ResourceSlice("rack", GPU, "rack-a", 1, 1, node_selector=None, all_nodes=True, devices=(Device("x"),))
    pools = gather_pools([old, new, net], N1)
    assert [(p.pool, [d.name for s in p.slices for d in s.devices]) for p in pools] == \
        [("n1", ["new"]), ("rack-a", ["x"])]
    assert gather_pools([old], N2) == []


def test_first_available_and_admin_access_need_their_features():
    sub = DeviceRequest("r", None, (ExactRequest("big", "gpu", ('device.attributes["gpu.example.com"].numa == 7',)),
                                    ExactRequest("any", "gpu")))
    a = Allocator(Features(prioritized_list=True), set(), CLS, [gpus("n1", ("g0", 0))])
    out = a.allocate(N1, [claim("c", sub)])
    assert out[0].devices == (AllocatedDevice("r/any", GPU, "n1", "g0"),)
    with pytest.raises(AllocationError, match="has subrequests, but the DRAPrioritizedList feature is disabled"):
        Allocator(Features(), set(), CLS, [gpus("n1", ("g0", 0))]).allocate(N1, [claim("c", sub)])
    busy = Allocator(Features(admin_access=True), {(GPU, "n1", "g0")}, CLS, [gpus("n1", ("g0", 0))])
    assert busy.allocate(N1, [claim("c", req("r", admin=True))])[0].devices[0].admin_access is True
    with pytest.raises(AllocationError, match="admin access is requested, but the feature is disabled"):
        Allocator(Features(), set(), CLS, [gpus("n1", ("g0", 0))]).allocate(N1, [claim("c", req("r", admin=True))])


def test_cel_runtime_error_is_fatal_with_upstreams_framing():
    a = Allocator(Features(), set(), CLS, [gpus("n1", ("g0", 0))])
    with pytest.raises(AllocationError, match=r"^claim default/c: selector #0: CEL runtime error: no such key: nope"):
        a.allocate(N1, [claim("c", req("r", selectors=('device.attributes["gpu.example.com"].nope == 1',)))])


def test_cel_unknown_capacity_domain_of_a_known_attribute_domain_is_an_empty_map():
    """A NIC with an attribute of the GPU driver's domain and no capacity of it: the
    capacity map gives an empty map for that domain, so the missing key is the capacity's
    name (as v1.31.8 words it, an All request's selector there running on every device)."""
    nic = Device("eth0", {"gpu.example.com/numa": Attribute("int", 0)}, {"bandwidth": Fraction(10**10)})
    with pytest.raises(CelError, match=r"^no such key: memory$"):
        device_matches('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("1"))', nic,
                       "nic.example.com")
    assert device_matches('device.capacity["gpu.example.com"].size() == 0', nic, "nic.example.com") is True


@pytest.mark.parametrize("expr,want", [
    ('device.attributes["gpu.example.com"].numa == 1', True),
    ('device.attributes["numa"] == 1', False),  # a bare name is the driver's domain: an empty map here
    ('device.attributes["other.io"].size() == 0', True),  # an unknown domain is an empty map
    ('"other.io" in device.attributes', False),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("16Gi")) == 0', True),
    ('device.capacity["gpu.example.com"].memory == quantity("16384Mi")', True),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("1G"))', False),
    ('device.attributes["gpu.example.com"].v.isLessThan(semver("1.10.0"))', True),
    ('device.attributes["gpu.example.com"].v.major() == 1', True),
    ('semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', True),
])
def test_cel_environment_agrees_with_kubernetes(expr, want):
    d = Device("g", {"numa": Attribute("int", 1), "v": Attribute("version", "1.9.0")}, {"memory": Fraction(16 * 2**30)})
    if want is None:
        with pytest.raises(CelError):
            device_matches(expr, d, GPU)
    else:
        assert device_matches(expr, d, GPU) is want


def test_claim_tracker_frees_a_claim_when_its_last_pod_goes():
    c = ResourceClaim("default", "c", allocation=Allocation((AllocatedDevice("r", GPU, "n1", "g0"),)),
                      reserved_for=("a", "b"))
    t = ClaimTracker(DeviceObjects(claims={("default", "c"): c}))
    # a leaves c's reservedFor: a status update (an event), c stays allocated
    assert [(x.name, x.reserved_for) for x in t.pod_gone("a")] == [("c", ("a", "b"))]
    assert t.allocated_devices() == {(GPU, "n1", "g0")} and t.get("default", "c").reserved_for == ("b",)
    assert [x.name for x in t.pod_gone("b")] == ["c"]
    assert t.pod_gone("b") == []
    assert t.allocated_devices() == set() and t.allocations() == {"c": None}


BASE = """
apiVersion: kspread/v1
kind: Case
version: "1.35"
nodes: [n1, n2]
profile: {filter: [DynamicResources], postFilter: [DynamicResources]}
objects:
- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: s1}
  spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1}, devices: [{name: g0}]}
"""


def _run(extra: str, expect: str):
    text = BASE + extra + "expect:\n" + expect
    case = build_case(yaml.safe_load(text), "t")
    return run_loaded(case)


def test_statuses_of_prefilter_and_postfilter_deallocation():
    out = _run("""- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: c}
  spec: {devices: {requests: [{name: r, exactly: {deviceClassName: nope}}]}}
pod: {name: p, resourceClaims: [{name: r, resourceClaimName: c}]}
""", "  unschedulable: true\n")
    st = out.cycles[0].pre_filter_status
    assert (str(st.code), st.message) == ("UnschedulableAndUnresolvable", "request r: device class nope does not exist")
    # a claim allocated on n9 (gone) and reserved for no pod: not available on any node;
    # PostFilter deallocates it
    out = _run("""- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: c}
  spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
  status:
    allocation:
      devices: {results: [{request: r, driver: gpu.example.com, pool: n9, device: g9}]}
      nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n9]}]}]}
pod: {name: p, resourceClaims: [{name: r, resourceClaimName: c}]}
""", "  allocations: {c: null}\n")
    r = out.cycles[0]
    assert r.statuses["n1"].message == "resourceclaim not available on the node"
    assert r.post_filter_status.message == "deallocation of ResourceClaim completed"
    assert not out.diffs


def test_a_shorthand_selector_that_does_not_parse_is_refused_at_its_line():
    """The shorthand creates its claim or class, and the API server refuses to create one whose
    selector does not compile (validateCELSelector: "compilation failed"): an error at the
    selector, not a scheduling error at every node. A manifest's selector is read as stored
    (cases/devices/device-taint-rules.yaml has a class that does not compile)."""
    head = 'apiVersion: kspread/v1\nkind: Case\nversion: "1.35"\nnodes: [n1]\n'
    pod = ("deviceClasses: [{name: gpu, driver: gpu.example.com}]\n"
           "pod: {name: p, devices: {g: {class: gpu, selector: 'device.driver =='}}}\nexpect: {selected: n1}\n")
    with pytest.raises(CaseError) as e:
        build_case(yaml.safe_load(head + pod), "t")
    assert str(e.value).startswith("pod.devices.g.selector: Invalid value: 'device.driver ==': compilation failed: "
                                   "ERROR: <input>:1:17: Syntax error")
    cls = ("deviceClasses: [{name: gpu, driver: gpu.example.com, selector: 'device.attributes['}]\n"
           "pod: {name: p}\nexpect: {selected: n1}\n")
    with pytest.raises(CaseError, match=r"^deviceClasses\[0\]\.selector: Invalid value: .*compilation failed"):
        build_case(yaml.safe_load(head + cls), "t")
    # one that parses is taken as before
    build_case(yaml.safe_load(head + pod.replace("'device.driver =='", "'device.driver == \"x\"'")), "t")


def test_expect_allocations_names_a_known_claim():
    with pytest.raises(CaseError, match="no ResourceClaim 'nope' in the case"):
        build_case(yaml.safe_load(BASE + "pod: {name: p}\nexpect:\n  allocations: {nope: null}\n"), "t")


def test_explain_names_each_request_and_reports_the_allocation():
    from kspread.workflow.explain import capture, explain_cycle_outcome, explain_cycles

    path = "cases/devices/training-job.yaml"
    from kspread.format.loader import collect, load_case

    doc = collect([path])[0].docs[0]
    case = load_case(doc)
    seen = []
    out = run_loaded(case, observe=lambda sched, r: seen.append(capture(sched, r)), keep_all=True)
    text = explain_cycles(out.scheduler, seen)
    assert ("claim worker-1-gpus request gpus: needs 2, 4 matching device(s) on the node, 1 free") in \
        " ".join(text.split())
    outcome = explain_cycle_outcome(out.scheduler, seen[0].result, seen[0])
    assert outcome.splitlines()[1:] == ["devices allocated on n1:",
                                        ("  worker-0-gpus: gpu.example.com/n1/gpu-2 (gpus), gpu.example.com/n1/gpu-3 "
                                        "(gpus)")]


def test_a_deleted_pod_frees_its_claim_and_requeues_pods_the_hint_selects():
    case = build_case(yaml.safe_load(BASE + """- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: t}
  spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}}
schedule:
- {name: a, resourceClaims: [{name: g, resourceClaimTemplateName: t}]}
- {name: b, resourceClaims: [{name: g, resourceClaimTemplateName: t}]}
expect:
  placements: {a: n1, b: null}
"""), "t")
    out = run_loaded(case)
    assert not out.diffs
    sched = out.scheduler
    events = sched.release_pod(sched.bound["a"])
    assert [(e.action, e.claim[0].name, e.claim[1].allocation) for e in events] == \
        [("ResourceClaimUpdate", "a-g", None)]
    dra = sched.framework.plugin("DynamicResources")
    pending_b = sched.pending["b"]
    assert dra.pod_event_hint(pending_b, events[0]) is True  # a deallocation may free devices
    bound_claim = sched.claims.get("default", "a-g")
    assert sched.claims.allocations()["a-g"] is None and bound_claim.reserved_for == ()


DUMP = """
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}},
   status: {allocatable: {pods: "110", cpu: "8"}, nodeInfo: {kubeletVersion: v1.35.1}}}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu, uid: u1, resourceVersion: "7", managedFields: [{manager: x}]}
  spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: n1-gpu-x7k2p}
  spec:
    driver: gpu.example.com
    nodeName: n1
    pool: {name: n1, generation: 3, resourceSliceCount: 1}
    devices: [{name: gpu-0}, {name: gpu-1}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: one-gpu, namespace: default}
  spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata:
    name: train-0-gpu-q9z4m
    namespace: default
    ownerReferences: [{apiVersion: v1, kind: Pod, name: train-0, uid: p1, controller: true}]
  spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}
  status:
    allocation:
      devices: {results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]}
      nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]}
    reservedFor: [{resource: pods, name: train-0, uid: p1}]
- apiVersion: v1
  kind: Pod
  metadata: {name: train-0, namespace: default}
  spec:
    nodeName: n1
    containers: [{name: c, resources: {claims: [{name: gpu}]}}]
    resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  status:
    phase: Running
    resourceClaimStatuses: [{name: gpu, resourceClaimName: train-0-gpu-q9z4m}]
- apiVersion: v1
  kind: Pod
  metadata: {name: train-1, namespace: default}
  spec:
    schedulerName: default-scheduler
    containers: [{name: c}]
    resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  status: {phase: Pending}
"""


def test_import_keeps_device_objects_and_allocations(tmp_path):
    from kspread.format import importer
    from kspread.format.loader import load_case, read_file

    p = tmp_path / "dump.yaml"
    p.write_text(DUMP, encoding="utf-8")
    out = importer.import_snapshot(str(p), warn=lambda m: None, pending=True)
    data = yaml.safe_load(out)
    kinds = [o["kind"] for o in data["objects"]]
    assert kinds == ["DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"]
    claim_obj = data["objects"][2]
    assert claim_obj["status"] == {
        "allocation": {"devices": {"results": [{"request": "gpu", "driver": GPU, "pool": "n1", "device": "gpu-0"}]},
                       "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                           {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
        "reservedFor": [{"resource": "pods", "name": "train-0"}]}
    assert data["objects"][0]["metadata"] == {"name": "gpu"}
    # the bound pod names its generated claim; the pending one keeps its template
    assert data["pods"][0]["resourceClaims"] == [{"name": "gpu", "resourceClaimName": "train-0-gpu-q9z4m"}]
    assert data["pod"]["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    case_path = tmp_path / "case.yaml"
    case_path.write_text(out.replace("expect: {}", "expect: {allocations: {train-1-gpu: [gpu.example.com/n1/gpu-1]}}"),
                         encoding="utf-8")
    case = load_case(read_file(case_path).docs[0])
    res = run_loaded(case)
    assert not res.diffs
    assert res.actual["allocations"] == {"train-0-gpu-q9z4m": [f"{GPU}/n1/gpu-0"], "train-1-gpu": [f"{GPU}/n1/gpu-1"]}


@pytest.mark.parametrize("version,want", [
    # 1.34+: DynamicResources' PostFilter runs before DefaultPreemption in the default
    # profile, and RunPostFilterPlugins joins both reasons (as real clusters' events read)
    ("1.35", ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are "
             "available: 1 No preemption victims found for incoming pod.")),
    ("1.33", ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
             "victims found for incoming pod.")),
])
def test_verdict_joins_the_postfilter_reasons(version, want):
    from kspread.engine.diagnosis import verdict

    case = build_case(yaml.safe_load(f"""
apiVersion: kspread/v1
kind: Case
version: "{version}"
nodes: [{{name: n1, allocatable: {{cpu: "2", pods: 10}}}}]
pods: [{{name: big, node: n1, priority: 100, requests: {{cpu: "1"}}}}]
pod: {{name: p, requests: {{cpu: "2"}}}}
expect: {{unschedulable: true}}
"""), "t")
    out = run_loaded(case)
    assert verdict(case.version, out.cycles[-1]) == want


@pytest.mark.parametrize("version,reasons", [("1.31", ("no new claims to deallocate",)),
                                              ("1.32", ("no new claims to deallocate",)), ("1.33", ()),
                                              ("1.34", ("no new claims to deallocate",))])
def test_postfilter_without_claims_gives_no_reason_in_1_33(version, reasons):
    """v1.33.3's PostFilter answers a pod without claims Unschedulable with no reason
    (a fast path before reading its state); 1.31-1.32 and from 1.34 it reads the state
    its PreFilter left and answers "no new claims to deallocate" (seen with the
    single-cycle oracles)."""
    case = build_case(yaml.safe_load(f"""
apiVersion: kspread/v1
kind: Case
version: "{version}"
featureGates: {{DynamicResourceAllocation: true}}
nodes: [{{name: n1, allocatable: {{cpu: "1", pods: 10}}}}]
pod: {{name: p, requests: {{cpu: "2"}}}}
profile: {{filter: [NodeResourcesFit, DynamicResources], postFilter: [DynamicResources, DefaultPreemption]}}
expect: {{unschedulable: true}}
"""), "t")
    r = run_loaded(case).cycles[-1]
    assert r.post_filter_reasons == reasons
    assert r.post_filter_status.plugin == "DefaultPreemption"


def test_postfilter_errs_when_an_earlier_prefilter_rejected():
    """NodeAffinity's PreFilter rejects the pod (a term naming two nodes) before
    DynamicResources' PreFilter runs: upstream's PostFilter finds no state ("not
    found"), RunPostFilterPlugins stops with that Error and DefaultPreemption never
    runs, so the event has no PostFilter part (seen with the single-cycle oracle,
    dev/README.md)."""
    from kspread.engine.diagnosis import verdict

    case = build_case(yaml.safe_load("""
apiVersion: kspread/v1
kind: Case
version: "1.35"
nodes: [n1]
pod:
  name: p
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [n1]}, {key: metadata.name, operator: In, values: [n2]}]
expect: {unschedulable: true}
"""), "t")
    out = run_loaded(case)
    r = out.cycles[-1]
    assert (r.post_filter_status.code, r.post_filter_status.plugin, r.post_filter_status.reasons) == (
        Code.ERROR, "DynamicResources", ("not found",))
    assert verdict(case.version, r) == "0/1 nodes are available: pod affinity terms conflict."


@pytest.mark.parametrize("version,reserved,in_use", [("1.32", 32, True), ("1.32", 31, False), ("1.35", 255, False),
                                                     ("1.35", 256, True)])
def test_a_claim_reserved_by_the_most_pods_is_in_use(version, reserved, in_use):
    ver = "v1beta1" if version == "1.32" else "v1"
    spec = ("{devices: {requests: [{name: r, deviceClassName: gpu}]}}" if ver == "v1beta1"
            else "{devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}")
    pods = ", ".join(f"{{resource: pods, name: q{i}}}" for i in range(reserved))
    gates = "featureGates: {DynamicResourceAllocation: true}\n" if version == "1.32" else ""
    case = build_case(yaml.safe_load(f"""
apiVersion: kspread/v1
kind: Case
version: "{version}"
{gates}nodes: [n1]
profile: {{filter: [DynamicResources]}}
objects:
- {{apiVersion: resource.k8s.io/{ver}, kind: DeviceClass, metadata: {{name: gpu}}}}
- apiVersion: resource.k8s.io/{ver}
  kind: ResourceClaim
  metadata: {{name: c}}
  spec: {spec}
  status:
    allocation: {{devices: {{results: [{{request: r, driver: d.io, pool: n1, device: g0}}]}}}}
    reservedFor: [{pods}]
pod: {{name: p, resourceClaims: [{{name: r, resourceClaimName: c}}]}}
expect: {{feasible: [n1]}}
"""), "t")
    st = run_loaded(case).cycles[0].pre_filter_status
    if in_use:
        assert (str(st.code), st.message) == ("UnschedulableAndUnresolvable", "resourceclaim in use")
    else:
        assert st is None or st.is_success()


def test_shorthand_builds_slices_classes_and_claims():
    case = build_case(yaml.safe_load("""
apiVersion: kspread/v1
kind: Case
version: "1.34"
deviceClasses: [{name: gpu, driver: gpu.example.com, selector: 'device.attributes["gpu.example.com"].ok'}]
nodes:
- name: n1
  devices:
  - {driver: gpu.example.com, name: gpu, count: 2, attributes: {ok: true, v: {version: 1.0.0}}, capacity: {mem: 1Gi}}
  - {driver: gpu.example.com, name: gpu, attributes: {ok: false}}
pod: {name: p, devices: {g: {class: gpu, all: true}}}
expect: {allocations: {p-g: [gpu.example.com/n1/gpu-0, gpu.example.com/n1/gpu-1]}}
"""), "t")
    objs = case.cluster.devices
    (s,) = objs.slices
    assert (s.name, s.pool, s.node_name, [d.name for d in s.devices]) == \
        ("n1-gpu.example.com-n1", "n1", "n1", ["gpu-0", "gpu-1", "gpu-2"])
    assert s.devices[0].attributes["v"] == Attribute("version", "1.0.0")
    assert objs.classes["gpu"].selectors == ('device.driver == "gpu.example.com"', 'device.attributes["gpu.example.com"].ok')
    claim_ = objs.claims[("default", "p-g")]
    assert (claim_.owner_pod, claim_.requests[0].exactly.mode) == ("p", ALL)
    assert not run_loaded(case).diffs
    with pytest.raises(CaseError, match="count must be a positive integer"):
        build_case(yaml.safe_load("""
apiVersion: kspread/v1
kind: Case
version: "1.34"
nodes: [n1]
pod: {name: p, devices: {g: {class: gpu, count: 0}}}
expect: {feasible: [n1]}
"""), "t")


def test_update_writes_allocations():
    from kspread.workflow.update import new_expect_values

    actual = {"allocations": {"a": ["d/p/x"], "b": None}, "placements": {"p": "n1"}}
    assert new_expect_values({}, actual)[0] == {"allocations": {"a": ["d/p/x"], "b": None}, "placements": {"p": "n1"}}
    assert new_expect_values({"allocations": {"b": ["d/p/y"]}}, actual)[0] == {"allocations": {"b": None}}


def test_a_backend_takes_a_case_with_devices_when_it_lists_the_protocol():
    from kspread.workflow.backend import Backend

    case = build_case(yaml.safe_load(BASE + "pod: {name: p}\nexpect: {feasible: [n1]}\n"), "t")
    assert Backend("kb", "v1.35.4", (), (), ("serve", "devices")).applicable(case) is None
    assert Backend("kb", "v1.35.4", (), ()).applicable(case) == (
        "the case has device objects or pod resourceClaims (dynamic resource allocation), which the backend kb "
        "does not take (its --info lists no protocol `devices`)")
