"""Issue 9, the contract: pods with no containers, PDBs with spec and status, nodes
whose allocatable omits pods."""

import yaml

from kspread.case import build_case
from kspread.resources import node_non_zero_requests, pod_requests
from kspread.runner import run_loaded


def _case(doc: str):
    return build_case(yaml.safe_load(doc), "t")


def test_explicit_empty_containers_is_a_pod_without_containers():
    case = _case("""
version: "1.30"
nodes: [n1]
pods:
- {name: none, node: n1, containers: []}
- {name: default, node: n1}
- {name: init-only, node: n1, containers: [], initContainers: [{name: i, resources: {requests: {cpu: 300m}}}]}
pod: {name: p, containers: []}
""")
    pods = {p.name: p for p in case.cluster.pods}
    v = case.version
    assert pods["none"].containers == () and case.incoming[0].containers == ()
    assert node_non_zero_requests(pods["none"], v) == (0, 0)
    assert [c.requests for c in pods["default"].containers] == [{}]
    assert node_non_zero_requests(pods["default"], v) == (100, 200 * 1024 * 1024)
    # init containers still count (max with the, here empty, containers' sum)
    assert pod_requests(pods["init-only"], v) == {"cpu": 300}
    assert node_non_zero_requests(pods["init-only"], v) == (300, 200 * 1024 * 1024)


def test_image_locality_scores_a_pod_without_containers_zero():
    out = run_loaded(_case("""
version: "1.30"
profile: {score: [ImageLocality]}
nodes:
- {name: n1, images: [{names: ["nginx:1.25"], sizeBytes: 500000000}]}
- n2
pod: {name: p, containers: []}
""")).actual
    assert out["scores"] == {"ImageLocality": {"n1": 0, "n2": 0}}
