"""Resource scoring: formulas, non-zero requests, NodeInfo bookkeeping, version flags,
default profiles, and the smaller plugins (ImageLocality, NodePorts, volumes)."""

from __future__ import annotations

import pytest

from kspread.engine.apis.config import ShapePoint
from kspread.engine.framework.args import parse_shape
from kspread.engine.framework.profile import default_plugins
from kspread.engine.model import Container, ContainerPort, Node, Pod
from kspread.engine.plugins.imagelocality import calculate_priority, normalized_image_name, scaled_image_score
from kspread.engine.plugins.nodeports import check_conflict
from kspread.engine.plugins.resource_allocation import (
    Usage,
    balanced_change_score,
    balanced_legacy,
    balanced_std_score,
    broken_linear,
    go_div,
    go_round,
    least_requested_score,
    most_requested_score,
    rtcr_resource_score,
)
from kspread.engine.plugins.volumes import check_modelled
from kspread.engine.resources import DEFAULT_MEMORY_REQUEST, node_non_zero_requests, scoring_requests
from kspread.engine.snapshot import NodeInfo, SelectorCache
from kspread.engine.versions import Version
from kspread.errors import CaseError

Mi = 1024 * 1024


def _pod(name="p", node=None, containers=(), inits=(), overhead=None):
    return Pod(name, node_name=node, containers=tuple(containers), init_containers=tuple(inits),
               overhead=overhead or {})


def test_least_and_most_requested_scores():
    assert least_requested_score(2000, 4000, 100) == 50
    assert least_requested_score(3 * Mi, 8 * Mi, 100) == 62  # 62.5 truncated
    assert least_requested_score(5000, 4000, 100) == 0
    assert least_requested_score(0, 0, 100) == 0
    assert least_requested_score(3000, 4000, 10) == 2  # 2.5 on the 0..10 scale
    assert most_requested_score(1050, 1000, 100, cap_requested=False) == 0
    assert most_requested_score(1050, 1000, 100, cap_requested=True) == 100
    assert most_requested_score(3 * Mi, 8 * Mi, 100, True) == 37


def test_go_division_and_rounding():
    assert go_div(-380, 100) == -3  # truncation toward zero, not floor (-4)
    assert go_div(380, 100) == 3
    assert go_round(45.5) == 46 and go_round(20.666) == 21 and go_round(2.5) == 3


def test_broken_linear_shape():
    shape = (ShapePoint(0, 100), ShapePoint(100, 0))
    assert broken_linear(shape, 38) == 100 + go_div(-100 * 38, 100) == 62
    stepped = (ShapePoint(20, 10), ShapePoint(60, 90))
    assert broken_linear(stepped, 0) == 10  # flat before the first point
    assert broken_linear(stepped, 40) == 50
    assert broken_linear(stepped, 99) == 90  # flat after the last
    # utilization: floor from 1.22, "100 - free share" (rounds up) before
    up = (ShapePoint(0, 0), ShapePoint(100, 100))
    assert rtcr_resource_score(up, 1000, 3000, floor_utilization=True) == 33
    assert rtcr_resource_score(up, 1000, 3000, floor_utilization=False) == 34
    assert rtcr_resource_score(up, 5000, 3000, True) == 100  # over capacity counts as 100 %


def test_balanced_formulas():
    cpu, mem = Usage(1, 4000, 3000), Usage(1, 8 * Mi, 2 * Mi)
    assert balanced_legacy(cpu, mem, 100) == 50
    assert balanced_legacy(Usage(1, 1000, 1100), mem, 100) == 0
    assert balanced_std_score([(3000, 4000), (2 * Mi, 8 * Mi)], 100) == 75
    assert balanced_std_score([(1000, 4000), (1 * Mi, 8 * Mi)], 100) == 93
    assert balanced_std_score([(1, 1)], 100) == 100  # one resource: std 0
    # three resources: population standard deviation of 0.5, 0.25, 1.0 (capped)
    three = balanced_std_score([(2, 4), (1, 4), (9, 4)], 100)
    assert three == int((1 - 0.3118047822311618) * 100) == 68
    usages = [Usage(1, 4000, 3000, 2000), Usage(1, 8 * Mi, 2 * Mi, 1 * Mi)]
    assert balanced_change_score(usages, 100) == 72


def test_shape_validation_messages():
    with pytest.raises(CaseError, match="at least one point"):
        parse_shape([], ("shape",), True)
    with pytest.raises(CaseError, match=r"Utilization\[0\]==50 >= Utilization\[1\]==40"):
        parse_shape([{"utilization": 50, "score": 1}, {"utilization": 40, "score": 2}], ("s",), False)
    with pytest.raises(CaseError, match=r"not in valid range \[0, 10\]") as e:
        parse_shape([{"utilization": 10, "score": 11}], ("s",), True)
    assert list(e.value.path) == ["s", 0, "score"]


def test_non_zero_requests_per_container_and_version():
    unset = Container("a")
    zero = Container("b", requests={"cpu": 0, "memory": 0})
    init = Container("i", requests={"cpu": 500})
    pod = _pod(containers=[unset, zero], inits=[init])
    # 1.18: containers only: 100m + 0, 200Mi + 0
    assert node_non_zero_requests(pod, Version(18)) == (100, DEFAULT_MEMORY_REQUEST)
    # 1.19+: max with each init container (its unset memory counts 200Mi too)
    assert node_non_zero_requests(pod, Version(19)) == (500, DEFAULT_MEMORY_REQUEST)
    # a pod with no containers at all requests nothing, not even the non-zero defaults
    # (the case builder gives a pod without `requests` and `containers` its one container)
    assert node_non_zero_requests(_pod(), Version(30)) == (0, 0)
    assert node_non_zero_requests(_pod(containers=[unset]), Version(30)) == (100, DEFAULT_MEMORY_REQUEST)


def test_overhead_cpu_in_whole_cores_1_17_to_1_26():
    pod = _pod(containers=[Container("a", requests={"cpu": 200, "memory": 0})], overhead={"cpu": 250})
    for minor, cpu in ((16, 450), (20, 201), (26, 201), (27, 450)):
        v = Version(minor, {"PodOverhead": True})
        r = scoring_requests(pod, v, non_zero=True, include_init=True,
                             overhead_cpu_in_cores=17 <= minor <= 26)
        assert r["cpu"] == cpu, minor


def test_node_info_keeps_non_zero_and_ports_consistent():
    v = Version(24)
    info = NodeInfo(Node("n1", {}, {"cpu": 4000}), v, SelectorCache())
    a = Pod("a", node_name="n1", containers=(Container("c", ports=(ContainerPort(80, 8080),)),))
    b = Pod("b", node_name="n1", containers=(Container("c", requests={"cpu": 300}),))
    info.add_pod(a)
    info.add_pod(b)
    assert info.non_zero_requested == {"cpu": 400, "memory": 2 * DEFAULT_MEMORY_REQUEST}
    assert info.used_ports == {("0.0.0.0", "TCP", 8080): 1}
    c = info.clone()
    c.remove_pod(a)
    assert c.used_ports == {} and c.non_zero_requested == {"cpu": 300, "memory": DEFAULT_MEMORY_REQUEST}
    assert info.used_ports == {("0.0.0.0", "TCP", 8080): 1}  # the original is untouched
    info.remove_pod(a)
    info.remove_pod(b)
    assert info.non_zero_requested == {"cpu": 0, "memory": 0} and info.used_ports == {}


def test_host_port_conflicts():
    used = {("0.0.0.0", "TCP", 80): 1, ("10.0.0.1", "UDP", 53): 1}
    assert check_conflict(used, ("127.0.0.1", "TCP", 80))
    assert not check_conflict(used, ("127.0.0.1", "UDP", 80))
    assert check_conflict(used, ("0.0.0.0", "UDP", 53))
    assert not check_conflict(used, ("10.0.0.2", "UDP", 53))
    assert check_conflict(used, ("10.0.0.1", "UDP", 53))


def test_image_locality_numbers():
    assert normalized_image_name("nginx") == "nginx:latest"
    assert normalized_image_name("localhost:5000/nginx") == "localhost:5000/nginx:latest"
    assert normalized_image_name("nginx@sha256:abc") == "nginx@sha256:abc"
    s = scaled_image_score(524288000, 2, 3)
    assert s == 349525333
    assert calculate_priority(s, 1, Version(24)) == 31
    assert calculate_priority(s, 2, Version(18)) == 31
    assert calculate_priority(s, 2, Version(19)) == 15
    assert calculate_priority(s, 1, Version(16)) == 3
    assert calculate_priority(0, 1, Version(24)) == 0
    assert calculate_priority(10**12, 1, Version(24)) == 100


def test_volumes_before_1_21_are_rejected_with_the_version_and_plugin_named():
    class _P:
        name = "VolumeZone"
        version = Version(20)

    check_modelled(_P(), Pod("p"))  # type: ignore[arg-type]
    with pytest.raises(CaseError, match=r"models volume scheduling from 1.21; version 1.20 is not modelled "
                                        r"\(plugin VolumeZone\)"):
        check_modelled(_P(), Pod("p", uses_persistent_volumes=True))  # type: ignore[arg-type]
    _P.version = Version(21)
    check_modelled(_P(), Pod("p", uses_persistent_volumes=True))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "minor, gates, score",
    [
        (14, {}, {"SelectorSpread": 1, "InterPodAffinity": 1, "NodeResourcesLeastAllocated": 1,
                  "NodeResourcesBalancedAllocation": 1, "NodePreferAvoidPods": 10000, "NodeAffinity": 1,
                  "TaintToleration": 1, "ImageLocality": 1}),
        (18, {}, {"SelectorSpread": 1, "InterPodAffinity": 1, "NodeResourcesLeastAllocated": 1,
                  "NodeResourcesBalancedAllocation": 1, "NodePreferAvoidPods": 10000, "NodeAffinity": 1,
                  "TaintToleration": 1, "ImageLocality": 1, "PodTopologySpread": 1}),
        (21, {}, {"InterPodAffinity": 1, "NodeResourcesLeastAllocated": 1, "NodeResourcesBalancedAllocation": 1,
                  "NodePreferAvoidPods": 10000, "NodeAffinity": 1, "TaintToleration": 1, "ImageLocality": 1,
                  "PodTopologySpread": 2}),
        (22, {}, {"InterPodAffinity": 1, "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1,
                  "NodeAffinity": 1, "TaintToleration": 1, "ImageLocality": 1, "PodTopologySpread": 2}),
        (24, {}, {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
                  "PodTopologySpread": 2, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1,
                  "ImageLocality": 1}),
    ],
)
def test_default_score_plugins(minor, gates, score):
    assert dict(default_plugins(Version(minor, gates))[1]) == score


def test_default_filter_order():
    f21 = default_plugins(Version(21))[0]
    f22 = default_plugins(Version(22))[0]
    assert f21[:3] == ["NodeUnschedulable", "NodeResourcesFit", "NodeName"]
    assert f22[:4] == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"]
    assert "PodTopologySpread" not in default_plugins(Version(16))[0]
    assert "PodTopologySpread" in default_plugins(Version(16, {"EvenPodsSpread": True}))[0]
    assert "EBSLimits" in default_plugins(Version(30))[0] and "EBSLimits" not in default_plugins(Version(31))[0]
    assert default_plugins(Version(34))[0][-1] == "DynamicResources"
