"""NodeResourcesFit Filter: reasons, their order, status codes by version."""

from __future__ import annotations

from kspread.engine.framework.status import Code, CycleState
from kspread.engine.model import Container, Node, Pod
from kspread.engine.plugins.noderesources_fit import fits_request, pod_resource_request, status_of
from kspread.engine.scheduler import Scheduler
from kspread.engine.snapshot import NodeInfo, SelectorCache
from kspread.engine.versions import Version
from kspread.format.case import build_case


def _node(**alloc) -> Node:
    return Node("n1", {}, alloc)


def _info(node: Node, version: Version, *pods: Pod) -> NodeInfo:
    info = NodeInfo(node, version, SelectorCache())
    for p in pods:
        info.add_pod(p)
    return info


def _pod(name: str, node: str | None = None, **req) -> Pod:
    return Pod(name, node_name=node, containers=(Container("c", requests=req),))


def test_all_reasons_in_upstream_order():
    v = Version(24)
    node = _node(cpu=2000, memory=4 << 30, pods=2, **{"example.com/gpu": 1})
    info = _info(node, v, _pod("a", "n1", cpu=1000, memory=1 << 30), _pod("b", "n1", cpu=500))
    req = pod_resource_request(_pod("p", cpu=1000, memory=4 << 30, **{"example.com/gpu": 2}), v)
    st = status_of(fits_request(req, info, v), v)
    assert st.code == Code.UNSCHEDULABLE
    assert st.reasons == ("Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient example.com/gpu")


def test_pod_count_reason_before_1_18():
    node = _node(cpu=2000, memory=1 << 30, pods=1)
    for minor, reason in ((17, "Insufficient pods"), (18, "Too many pods")):
        v = Version(minor)
        st = status_of(fits_request({}, _info(node, v, _pod("a", "n1")), v), v)
        assert st.reasons == (reason,)


def test_unresolvable_from_1_34_only_when_larger_than_node():
    node = _node(cpu=2000, memory=1 << 30, pods=110)
    for minor, code in ((33, Code.UNSCHEDULABLE), (34, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)):
        v = Version(minor)
        st = status_of(fits_request({"cpu": 3000}, _info(node, v), v), v)
        assert (st.code, st.reasons) == (code, ("Insufficient cpu",))
    v = Version(34)
    busy = _info(node, v, _pod("a", "n1", cpu=1500))
    assert status_of(fits_request({"cpu": 1000}, busy, v), v).code == Code.UNSCHEDULABLE


def test_zero_request_on_overcommitted_node_by_version():
    node = _node(cpu=2000, memory=1 << 30, pods=110)
    for minor, reasons in ((26, ("Insufficient memory",)), (27, ("Insufficient memory",)), (28, ())):
        v = Version(minor)
        info = _info(node, v, _pod("w", "n1", memory=2 << 30))
        assert status_of(fits_request({"cpu": 500}, info, v), v).reasons == reasons


def test_zero_request_pod_checks_only_count():
    v = Version(30)
    node = _node(cpu=1000, memory=1 << 30, pods=110)
    info = _info(node, v, _pod("w", "n1", cpu=5000))
    assert fits_request({}, info, v) == []


def test_filter_through_the_framework_uses_prefilter_request():
    case = build_case({
        "apiVersion": "kspread/v1", "kind": "Case", "version": "1.29",
        "profile": {"filter": ["NodeResourcesFit"]},
        "nodes": [{"name": "n1", "allocatable": {"cpu": "2500m", "memory": "1Gi", "pods": 110}}],
        "pod": {"name": "p", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                "initContainers": [{"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
                                   {"name": "i", "resources": {"requests": {"cpu": "2"}}}]},
    }, "t")
    sched = Scheduler(case)
    state = CycleState()
    pod = case.incoming[0]
    assert sched.framework.run_pre_filter_plugins(state, pod).is_success()
    st = sched.framework.run_filter_plugins(state, pod, sched.snapshot.get("n1"))
    assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit")
