"""Issue 31's audit: no path every cycle runs loops over all nodes in Python, and what
depends only on labels is computed once per distinct label set (docs/reference/scale.md).

The bench's shapes (``bench/bench.py``'s ``make_real``: identical unowned pods, pods that
differ in requests, owned pods with the system default constraints, 40 mixed owners,
eight spread selectors) run at 1,000 and at 5,000 nodes with the same few label sets,
in the default profile at 1.35, 1.36 and 1.37; then paths the default profile does not
take (issue 32): 1.36 pod groups, OpportunisticBatching, NodeDeclaredFeatures, and
DynamicResources (which grows linearly: its allocator runs per node). After some cycles (what a snapshot computes
once: static codes, memos), the Python lines executed per cycle are counted
(``sys.settrace``: a loop's every iteration is a line event, a comprehension's too).
A Python loop over the nodes on a per-cycle path adds at least one line per node, 4,000
more per cycle at 5,000 nodes; the counts were equal to the line at both sizes on every
shape and version when this was written, and the test allows 20 lines per cycle of
difference. It counts, it does not time."""

from __future__ import annotations

import collections
import importlib.util
import sys
from pathlib import Path

import pytest

from kspread.engine.scheduler import run_case
from kspread.format.case import build_case

ROOT = Path(__file__).resolve().parent.parent
WARM = 30  # cycles before counting (memos and static codes are made once)
COUNTED = 20  # cycles counted
SLACK = 20  # lines per cycle more at 5,000 nodes than at 1,000 (a node loop adds 4,000)


def _bench():
    spec = importlib.util.spec_from_file_location("kspread_bench", ROOT / "bench" / "bench.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


RESTART_ALL = [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]


def _with_gpus(data: dict) -> None:
    """Every 10th node a ResourceSlice of 8 GPUs; every other incoming pod claims one."""
    objects = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
               {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 1}}]}}}}]
    for node in data["nodes"][::10]:
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                        "metadata": {"name": f"{node['name']}-gpu"},
                        "spec": {"driver": "gpu.example.com", "nodeName": node["name"],
                                 "pool": {"name": node["name"], "generation": 1, "resourceSliceCount": 1},
                                 "devices": [{"name": f"gpu-{k}"} for k in range(8)]}})
    data["objects"] = objects
    for pod in data["schedule"][1::2]:
        pod["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
        pod["containers"] = [{"name": "main", "requests": pod.pop("requests"), "resources": {"claims": [{"name": "gpu"}]}}]


def lines_per_cycle(shape: str, nodes: int, version: str, node_pods: int | None = None,
                    features: bool = False, dra: bool = False) -> tuple[float, collections.Counter]:
    """The Python lines executed per cycle over ``COUNTED`` cycles after ``WARM``
    (binding and requeueing included), and where (file:line -> count). ``node_pods``:
    the nodes' allocatable pods (110); ``features``: every other node declares
    RestartAllContainersOnContainerExits and every incoming pod needs it."""
    data = _bench().make_workload(shape, nodes, WARM + COUNTED)
    data["version"] = version
    if node_pods is not None:
        for node in data["nodes"]:
            node["allocatable"] = {**node["allocatable"], "pods": node_pods}
    if dra:
        _with_gpus(data)
    if features:
        for node in data["nodes"][::2]:
            node["declaredFeatures"] = ["RestartAllContainersOnContainerExits"]
        for pod in data["schedule"]:
            pod["containers"] = [{"name": "app", "requests": pod.pop("requests"), "restartPolicyRules": RESTART_ALL}]
    case = build_case(data, f"{shape}-{nodes}")
    where: collections.Counter = collections.Counter()
    cycles = [0]

    def local(frame, event, _arg):
        if event == "line":
            where[(frame.f_code.co_filename, frame.f_lineno)] += 1
        return local

    def tracer(frame, event, _arg):
        return local

    def observe(_sched, _result) -> None:
        cycles[0] += 1
        if cycles[0] == WARM:
            sys.settrace(tracer)
        elif cycles[0] == WARM + COUNTED:
            sys.settrace(None)

    try:
        _, _, placements = run_case(case, observe)
    finally:
        sys.settrace(None)
    assert cycles[0] == WARM + COUNTED and all(v is not None for v in placements.values())
    return sum(where.values()) / (COUNTED - 1), where


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
@pytest.mark.parametrize("shape", ["floor", "requests", "owned", "mixed", "spread8"])
def test_no_python_loop_over_the_nodes_per_cycle(shape, version):
    small, small_where = lines_per_cycle(shape, 1000, version)
    large, large_where = lines_per_cycle(shape, 5000, version)
    if large - small > SLACK:
        grown = sorted(((large_where[k] - small_where.get(k, 0), k) for k in large_where), reverse=True)[:8]
        detail = "\n".join(f"  +{d / (COUNTED - 1):.0f} per cycle  {Path(f).name}:{ln}" for d, (f, ln) in grown)
        pytest.fail(f"{shape} at {version}: {large:.0f} Python lines per cycle at 5,000 nodes against "
                    f"{small:.0f} at 1,000; the lines that grew:\n{detail}")


def _compare(shape: str, version: str, node_pods: int | None = None, features: bool = False) -> None:
    small, small_where = lines_per_cycle(shape, 1000, version, node_pods, features)
    large, large_where = lines_per_cycle(shape, 5000, version, node_pods, features)
    if large - small > SLACK:
        grown = sorted(((large_where[k] - small_where.get(k, 0), k) for k in large_where), reverse=True)[:8]
        detail = "\n".join(f"  +{d / (COUNTED - 1):.0f} per cycle  {Path(f).name}:{ln}" for d, (f, ln) in grown)
        pytest.fail(f"{shape} at {version}: {large:.0f} Python lines per cycle at 5,000 nodes against "
                    f"{small:.0f} at 1,000; the lines that grew:\n{detail}")


def test_no_node_loop_in_a_pod_group_cycle():
    """1.36's pod group cycle (bench's ``groups``: gangs of 8 identical pods): each pod's
    result is compacted before its group binds, with every node tied (was 5,952 lines per
    cycle at 5,000 nodes against 2,875 at 1,000: the tied nodes' names listed)."""
    _compare("groups", "1.36")


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
@pytest.mark.parametrize("node_pods", [None, 3])
def test_no_node_loop_with_opportunistic_batching(version, node_pods):
    """A profile that signs every pod (bench's ``batching``): each cycle keeps its scored
    nodes for the next (was 12,050 lines per cycle at 5,000 nodes against 3,845 at 1,000);
    with nodes of 3 pods the next pod takes the batch's hint, whose tied nodes are
    recorded (was 11,829 against 3,624)."""
    from kspread.engine.scheduler import run_case as run

    data = _bench().make_workload("batching", 50, 4)
    data["version"] = version
    assert run(build_case(data, "batching"))[0].batching  # the shape batches
    _compare("batching", version, node_pods)


def test_no_node_loop_in_node_declared_features():
    """Pods that need a declared feature, on nodes half of which declare it (1.36: the
    filter on by default): NodeDeclaredFeatures' Filter once per distinct feature set."""
    _compare("floor", "1.36", features=True)


def test_dynamic_resources_cycle_grows_with_the_nodes_not_their_square():
    """Pods that claim a GPU, every 10th node with a slice: DynamicResources' Filter runs
    the allocator node by node (upstream's per-node search), but each node reads its own
    slices, not every node's: five times the nodes cost at most about five times the
    lines (was 538,249 and 11,910,967 lines per cycle: x22)."""
    small, _ = lines_per_cycle("floor", 1000, "1.36", dra=True)
    large, _ = lines_per_cycle("floor", 5000, "1.36", dra=True)
    assert large < 5.5 * small, (small, large)


def test_the_audit_sees_a_loop_over_the_nodes(monkeypatch):
    """The count above finds a per-node Python loop: one added to a Score plugin every
    cycle runs (TaintToleration over every node's labels) fails the comparison."""
    from kspread.engine.plugins.tainttoleration import TaintToleration

    original = TaintToleration.score_nodes

    def looping(self, state, pod, nodes):
        sum(len(info.node.labels) for info in nodes.snapshot.node_list)
        return original(self, state, pod, nodes)

    monkeypatch.setattr(TaintToleration, "score_nodes", looping)
    small, _ = lines_per_cycle("floor", 1000, "1.37")
    large, _ = lines_per_cycle("floor", 5000, "1.37")
    assert large - small > 3000
