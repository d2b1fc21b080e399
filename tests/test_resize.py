"""In-place pod resize: a pod's status resources in kspread.engine.resources per version,
the case field that carries them (kspread.format.resize), raw Pods, import, and the
backend input that carries them."""

from __future__ import annotations

import pytest

from kspread.engine.model import Container, ContainerResizeStatus, Pod, ResizeStatus
from kspread.engine.resources import node_non_zero_requests, node_pod_requests, pod_requests
from kspread.engine.versions import FEATURE_GATES, UNMODELLED_GATES, Version, make_version
from kspread.errors import CaseError
from kspread.format.case import build_case
from tests.helpers import verdict

Mi = 1024 * 1024
ON = {"InPlacePodVerticalScaling": True}


def _pod(spec_cpu, *, actual=None, allocated=None, has_resources=True, resize="", reason=None, inits=(),
         init_status=(), containers=None) -> Pod:
    cs = () if actual is None and allocated is None and not has_resources else (
        ContainerResizeStatus("app", has_resources, None if actual is None else {"cpu": actual},
                              None if allocated is None else {"cpu": allocated}),)
    rs = ResizeStatus(resize=resize, pending_reason=reason, containers=cs, inits=tuple(init_status))
    return Pod("p", node_name="n1", containers=containers or (Container("app", requests={"cpu": spec_cpu}),),
               init_containers=tuple(inits), resize=rs)


def _cpu(pod: Pod, version: Version) -> int:
    return node_pod_requests(pod, version)["cpu"]


def test_gates_are_modelled_with_their_stages():
    g = FEATURE_GATES["InPlacePodVerticalScaling"]
    assert [(s.since, s.default, s.stage, s.locked) for s in g.stages] == [
        (27, False, "ALPHA", False), (33, True, "BETA", False), (35, True, "GA", True)]
    assert [(s.since, s.default) for s in FEATURE_GATES["InPlacePodLevelResourcesVerticalScaling"].stages] == [
        (35, False), (36, True)]
    assert "InPlacePodVerticalScaling" not in UNMODELLED_GATES


@pytest.mark.parametrize("minor, gates, expected", [
    (26, {}, 1000),                 # no such gate: the spec
    (27, {}, 1000),                 # alpha, off
    (27, ON, 3000),                 # max(spec, allocated)
    (31, ON, 3000),
    (32, ON, 2000),                 # max(spec, actual): allocated not read
    (33, {}, 3000),                 # on by default: max(spec, actual, allocated)
    (36, {}, 3000),
    (37, {}, 3000),
])
def test_deferred_counts_the_largest_per_version(minor, gates, expected):
    pod = _pod(1000, actual=2000, allocated=3000, reason="Deferred", resize="Deferred")
    assert _cpu(pod, Version(minor, gates)) == expected


def test_prefilter_request_never_reads_the_status():
    pod = _pod(1000, actual=2000, allocated=3000)
    assert pod_requests(pod, Version(35))["cpu"] == 1000
    assert pod_requests(pod, Version(35), use_status=True)["cpu"] == 3000


@pytest.mark.parametrize("minor, gates, expected", [
    (30, ON, 1000),   # status.resize Infeasible: allocatedResources alone
    (32, ON, 2000),   # status.resize Infeasible: the actual requests alone
    (33, {}, 4000),   # the condition is what 1.33+ reads: status.resize is not Infeasible to it
])
def test_status_resize_infeasible_to_1_32(minor, gates, expected):
    pod = _pod(4000, actual=2000, allocated=1000, resize="Infeasible")
    assert _cpu(pod, Version(minor, gates)) == expected


@pytest.mark.parametrize("minor, expected", [(32, 4000), (33, 2000), (35, 2000), (37, 2000)])
def test_condition_infeasible_from_1_33(minor, expected):
    pod = _pod(4000, actual=2000, allocated=1000, reason="Infeasible")
    assert _cpu(pod, Version(minor, ON)) == expected


def test_status_without_resources_from_1_32():
    # to 1.31 a status counts even without resources (its allocatedResources); from 1.32 a
    # container status without ``resources`` leaves the spec (to 1.36)
    pod = _pod(1000, allocated=3000, has_resources=False)
    assert _cpu(pod, Version(31, ON)) == 3000
    assert _cpu(pod, Version(32, ON)) == 1000
    assert _cpu(pod, Version(36)) == 1000
    # 1.37: allocatedResources counts without resources (the actual falls back to it)
    assert _cpu(pod, Version(37)) == 3000


def test_infeasible_1_37_counts_nothing_for_a_container_without_status():
    other = Container("side", requests={"cpu": 500})
    pod = _pod(1000, actual=2000, allocated=2000, reason="Infeasible",
               containers=(Container("app", requests={"cpu": 1000}), other))
    assert _cpu(pod, Version(36)) == 2500  # the one without status keeps its spec
    assert _cpu(pod, Version(37)) == 2000  # neither actual nor allocated: nothing


def test_sidecar_status_from_1_33_and_plain_init_from_1_37():
    sidecar = Container("log", requests={"cpu": 1000}, restartable=True)
    init = Container("setup", requests={"cpu": 500})
    st = (ContainerResizeStatus("log", True, {"cpu": 2000}, {"cpu": 2000}),
          ContainerResizeStatus("setup", True, {"cpu": 4000}, {"cpu": 4000}))
    pod = _pod(1000, actual=1000, allocated=1000, inits=(sidecar, init), init_status=st)
    assert _cpu(pod, Version(32, ON)) == 2000   # sidecar by its spec: 1 + 1, setup 0.5 + 1 below
    assert _cpu(pod, Version(33)) == 3000       # sidecar max(1, 2) = 2, plus app 1; setup by spec
    assert _cpu(pod, Version(37)) == 6000       # setup's status too: 4 + sidecar 2 = 6 > 3


def test_aggregate_max_from_1_37():
    c1, c2 = Container("c1", requests={"cpu": 1000}), Container("c2", requests={"cpu": 2000})
    rs = ResizeStatus(pending_reason="Deferred", containers=(
        ContainerResizeStatus("c1", True, {"cpu": 2000}, {"cpu": 2000}),
        ContainerResizeStatus("c2", True, {"cpu": 1000}, {"cpu": 1000})))
    pod = Pod("p", node_name="n1", containers=(c1, c2), resize=rs)
    assert _cpu(pod, Version(36)) == 4000
    assert _cpu(pod, Version(37)) == 3000


def test_non_zero_defaults_apply_to_the_status_requests():
    # the status says only cpu: memory is missing from spec, actual and allocated, so the
    # non-zero memory default counts; an explicit memory in the allocated list counts instead
    pod = _pod(1000, actual=2000, allocated=None)
    assert node_non_zero_requests(pod, Version(35)) == (2000, 200 * Mi)
    rs = ResizeStatus(containers=(ContainerResizeStatus("app", True, {"cpu": 2000}, {"memory": 64 * Mi}),))
    pod = Pod("p", node_name="n1", containers=(Container("app", requests={"cpu": 1000}),), resize=rs)
    assert node_non_zero_requests(pod, Version(35)) == (2000, 64 * Mi)


def test_pod_level_status():
    rs = ResizeStatus(pending_reason="Deferred", level_has_resources=True, level_requests={"cpu": 3000},
                      level_allocated={"cpu": 2000})
    pod = Pod("p", node_name="n1", containers=(Container("app"),), level_requests={"cpu": 1000}, resize=rs)
    assert _cpu(pod, Version(35)) == 1000  # the pod-level gate is alpha in 1.35
    assert _cpu(pod, Version(35, {"InPlacePodLevelResourcesVerticalScaling": True})) == 3000
    assert _cpu(pod, Version(36)) == 3000
    infeasible = Pod("p", node_name="n1", containers=(Container("app"),), level_requests={"cpu": 4000},
                     resize=ResizeStatus(pending_reason="Infeasible", level_has_resources=True,
                                         level_requests={"cpu": 2000}))
    assert _cpu(infeasible, Version(36)) == 2000


# ---- the case field ------------------------------------------------------------------------


def _case(pod_status: dict, version: str = "1.35", **pod) -> dict:
    return {"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": version,
            "nodes": [{"name": "n1", "allocatable": {"cpu": 4}}],
            "pods": [{"name": "b", "node": "n1", "containers": [{"name": "app", "resources": {"requests": {"cpu": 1}}}],
                      "status": pod_status, **pod}],
            "pod": {"name": "p"}, "expect": {"feasible": ["n1"]}}


def test_case_status_is_read():
    case = build_case(_case({"conditions": [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}],
                             "containerStatuses": [{"name": "app", "allocatedResources": {"cpu": "3"},
                                                    "resources": {"requests": {"cpu": "2"}}}]}), "x")
    rs = case.cluster.pods[0].resize
    assert rs.pending_reason == "Deferred"
    assert (rs.containers[0].requests, rs.containers[0].allocated) == ({"cpu": 2000}, {"cpu": 3000})


@pytest.mark.parametrize("status, version, msg, path", [
    ({"containerStatuses": [{"name": "nope"}]}, "1.35",
     "names no container of the pod (a status reports the containers of the spec)",
     ["pods", 0, "status", "containerStatuses", 0, "name"]),
    ({"containerStatuses": [{"name": "app"}, {"name": "app"}]}, "1.35", "Duplicate value: 'app'",
     ["pods", 0, "status", "containerStatuses", 1, "name"]),
    ({"containerStatuses": [{"name": "app", "allocatedResources": {"cpu": "lots"}}]}, "1.35", "quantity",
     ["pods", 0, "status", "containerStatuses", 0, "allocatedResources", "cpu"]),
    ({"resources": {"requests": {"cpu": "2"}}}, "1.37", "pod-level status resources are not modelled at 1.37",
     ["pods", 0, "status", "resources"]),
])
def test_case_status_errors(status, version, msg, path):
    with pytest.raises(CaseError) as e:
        build_case(_case(status, version), "x")
    assert msg in str(e.value)
    assert list(e.value.path) == path


def test_deferred_resize_keeps_a_pod_off_end_to_end(tmp_path):
    v = verdict(tmp_path, """
        name: c
        version: "1.35"
        nodes: [{name: n1, allocatable: {cpu: 4}}]
        pods:
        - name: b
          node: n1
          containers: [{name: app, resources: {requests: {cpu: 1}}}]
          status:
            conditions: [{type: PodResizePending, status: "True", reason: Deferred}]
            containerStatuses: [{name: app, resources: {requests: {cpu: 3}}}]
        pod: {name: p, requests: {cpu: 2}}
        expect: {feasible: []}
    """)
    assert v.passed, v.message


def test_raw_pod_status_is_read():
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": "1.35",
           "nodes": [{"name": "n1", "allocatable": {"cpu": 4}}],
           "objects": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"},
                        "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "x",
                                                                    "resources": {"requests": {"cpu": "1"}}}]},
                        "status": {"phase": "Running",
                                   "conditions": [{"type": "Ready", "status": "True"},
                                                  {"type": "PodResizePending", "status": "True",
                                                   "reason": "Infeasible"}],
                                   "containerStatuses": [{"name": "app", "image": "x", "ready": True,
                                                          "restartCount": 0, "state": {"running": {}},
                                                          "resources": {"requests": {"cpu": "500m"}},
                                                          "allocatedResources": {"cpu": "500m"}}]}}],
           "pod": {"name": "p"}, "expect": {"feasible": ["n1"]}}
    case = build_case(doc, "x")
    pod = next(p for p in case.cluster.pods if p.name == "b")
    assert pod.resize is not None and pod.resize.pending_reason == "Infeasible"
    assert node_pod_requests(pod, case.version)["cpu"] == 500


def test_a_backend_is_sent_the_resize_status():
    # (it skipped such a case before: "which a backend is not sent")
    from kspread.workflow.backend import Backend, backend_input
    case = build_case(_case({"containerStatuses": [{"name": "app", "allocatedResources": {"cpu": "3"}}]}), "x")
    assert Backend("b", "v1.35.4", (), ()).applicable(case) is None
    assert backend_input(case)["pods"][0]["status"]["containerStatuses"] == [
        {"name": "app", "allocatedResources": {"cpu": "3"}}]


# ---- NodeDeclaredFeatures ------------------------------------------------------------------


def _ndf_case(version: str, pod: dict, **extra) -> dict:
    return {"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": version,
            "nodes": [{"name": "old"}, {"name": "new", "declaredFeatures": ["RestartAllContainersOnContainerExits"]}],
            "pod": pod, "expect": {"feasible": ["new"]}, **extra}


RULE = {"name": "app", "restartPolicyRules": [{"action": "RestartAllContainers"}]}


def test_ndf_default_profile_per_version():
    from kspread.engine.framework.profile import default_plugins
    assert "NodeDeclaredFeatures" not in default_plugins(Version(35))[0]
    assert default_plugins(Version(35, {"NodeDeclaredFeatures": True}))[0][-1] == "NodeDeclaredFeatures"
    assert default_plugins(Version(36))[0][-2:] == ["DynamicResources", "NodeDeclaredFeatures"]
    assert "NodeDeclaredFeatures" in FEATURE_GATES and "NodeDeclaredFeatures" not in UNMODELLED_GATES


def test_ndf_reads_rules_and_declared_features():
    case = build_case(_ndf_case("1.36", {"name": "p", "containers": [RULE]}), "x")
    assert case.incoming[0].restart_all_containers
    assert {n.name: n for n in case.cluster.nodes}["new"].declared_features == frozenset({"RestartAllContainersOnContainerExits"})
    plain = build_case(_ndf_case("1.36", {"name": "p", "containers": [
        {"name": "app", "restartPolicyRules": [{"action": "Restart"}]}]}), "x")
    assert not plain.incoming[0].restart_all_containers


def test_ndf_plugin_is_not_in_1_34():
    doc = _ndf_case("1.34", {"name": "p"}, profile={"filter": ["NodeDeclaredFeatures"]})
    with pytest.raises(CaseError, match=r"does not exist in version 1\.34"):
        build_case(doc, "x")


def test_ndf_refuses_what_1_36_infers_and_kspread_does_not_model():
    mount = {"name": "app", "volumeMounts": [{"name": "v", "mountPath": "/x", "bindMountOptions": {}}]}
    with pytest.raises(CaseError) as e:
        build_case(_ndf_case("1.36", {"name": "p", "containers": [mount]}), "x")
    assert "VolumeBindMountOptions" in str(e.value)
    assert list(e.value.path) == ["pod", "containers", 0, "volumeMounts", 0, "bindMountOptions"]
    # at 1.35 (the registry has no such feature) it loads
    build_case(_ndf_case("1.35", {"name": "p", "containers": [mount]}, featureGates={"NodeDeclaredFeatures": True}),
               "x")
    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "h"},
           "spec": {"nodeName": "old", "hostNetwork": True, "hostUsers": False,
                    "containers": [{"name": "c", "image": "x"}]}}
    with pytest.raises(CaseError) as e:
        build_case(_ndf_case("1.37", {"name": "p"}, objects=[raw]), "x")
    assert "UserNamespacesHostNetworkSupport" in str(e.value)
    assert list(e.value.path) == ["objects", 0, "spec", "hostUsers"]


def test_ndf_raw_node_and_import(tmp_path):
    from tests.test_importer import _import, _load_one
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "pods": "10"}, "declaredFeatures": ["X", "Y"]}}
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "n1", "containers": [
               {"name": "c", "image": "x", "restartPolicy": "Never",
                "restartPolicyRules": [{"action": "RestartAllContainers",
                                        "exitCodes": {"operator": "In", "values": [3]}}]}]},
           "status": {"phase": "Running"}}
    import yaml
    out, _ = _import(tmp_path, yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node, pod]}))
    data = yaml.safe_load(out)
    assert data["nodes"][0]["declaredFeatures"] == ["X", "Y"]
    assert data["pods"][0]["containers"][0]["restartPolicyRules"][0]["action"] == "RestartAllContainers"
    p = tmp_path / "case.yaml"
    p.write_text(out, encoding="utf-8")
    from kspread.format.loader import load_case
    case = load_case(_load_one(p))
    assert {n.name: n for n in case.cluster.nodes}["n1"].declared_features == frozenset({"X", "Y"})
    assert case.cluster.pods[0].restart_all_containers
    doc = _ndf_case("1.36", {"name": "p"}, objects=[node])
    doc["nodes"] = [{"name": "old"}]
    doc["expect"] = {"feasible": ["old", "n1"]}
    assert {n.name: n for n in build_case(doc, "x").cluster.nodes}["n1"].declared_features == frozenset({"X", "Y"})


# ---- nomination timing -------------------------------------------------------------------


@pytest.mark.parametrize("gate, version", [("SchedulerAsyncPreemption", "1.35"), ("SchedulerAsyncPreemption", "1.32"),
                                           ("NominatedNodeNameForExpectation", "1.35"),
                                           ("NominatedNodeNameForExpectation", "1.34")])
def test_nomination_timing_gates_are_accepted_and_change_no_placement(gate, version):
    from kspread.engine.scheduler import run_case
    base = {"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": version,
            "profile": {"filter": ["NodeResourcesFit"], "postFilter": ["DefaultPreemption"]},
            "nodes": [{"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}],
            "pods": [{"name": "v", "node": "n1", "priority": 0, "requests": {"cpu": "3"}}],
            "schedule": [{"name": "h", "priority": 100, "requests": {"cpu": "2"}},
                         {"name": "l", "priority": 50, "requests": {"cpu": "1"}}],
            "expect": {"placements": {"h": "n1", "l": "n1"}}}
    results = []
    for on in (True, False):
        case = build_case({**base, "featureGates": {gate: on}}, "x")
        assert case.version.gate(gate) is on
        _, cycles, placements = run_case(case)
        results.append((placements, [r.pod.key for r in cycles]))
    assert results[0] == results[1] == ({"h": "n1", "l": "n1"}, ["h", "l", "h"])
    assert gate in FEATURE_GATES and gate not in UNMODELLED_GATES


def test_pod_level_resize_gate_needs_its_dependencies():
    """kube_features.go (1.35 and 1.36): InPlacePodLevelResourcesVerticalScaling depends on
    InPlacePodVerticalScaling, PodLevelResources and NodeDeclaredFeatures; component-base refuses
    the configuration naming the disabled ones in that order."""
    with pytest.raises(CaseError) as e:
        make_version("1.35", {"InPlacePodLevelResourcesVerticalScaling": True})
    assert str(e.value).endswith("InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features "
                                 "that are disabled: [NodeDeclaredFeatures]")
    with pytest.raises(CaseError) as e:
        make_version("1.36", {"PodLevelResources": False})
    assert "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are disabled: " \
           "[PodLevelResources]" in str(e.value)
    assert make_version("1.35", {"InPlacePodLevelResourcesVerticalScaling": True, "NodeDeclaredFeatures": True})
    assert make_version("1.36", {})
