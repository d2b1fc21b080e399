"""Issue 9, the contract: pods with no containers, PDBs with spec and status, nodes
whose allocatable omits pods."""

import yaml

from kspread.engine.resources import node_non_zero_requests, pod_requests
from kspread.format.case import build_case
from kspread.workflow.runner import run_loaded


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


PDB_CASE = """
name: c
version: "1.29"
profile: {filter: [NodeResourcesFit], postFilter: [DefaultPreemption]}
pdbs:
- {name: web-pdb, selector: {matchLabels: {app: web}}, PDB_FIELDS}
nodes: [{name: n1, allocatable: {cpu: "1", memory: 1Gi, pods: 110}}]
pods:
- {name: w, node: n1, labels: {app: web}, requests: {cpu: "1"}}
pod: {name: p, priority: 100, requests: {cpu: "1"}}
expect:
  preemption: {node: n1, victims: [w]}
"""


def _pdb_verdict(tmp_path, fields):
    from tests.helpers import verdict

    return verdict(tmp_path, PDB_CASE.replace("PDB_FIELDS", fields))


def test_pdb_spec_and_status_together_is_accepted(tmp_path):
    assert _pdb_verdict(tmp_path, "minAvailable: 1, disruptionsAllowed: 0").passed
    assert _pdb_verdict(tmp_path, "maxUnavailable: 50%, disruptionsAllowed: 3").passed


def test_pdb_status_decides():
    case = _case(PDB_CASE.replace("PDB_FIELDS", "minAvailable: 0, disruptionsAllowed: 0"))
    assert case.cluster.pdbs[0].disruptions_allowed == 0
    case = _case(PDB_CASE.replace("PDB_FIELDS", "minAvailable: 1, disruptionsAllowed: 5"))
    assert case.cluster.pdbs[0].disruptions_allowed == 5
    case = _case(PDB_CASE.replace("PDB_FIELDS", "maxUnavailable: 1"))
    assert case.cluster.pdbs[0].disruptions_allowed == 1


def test_pdb_spec_errors_with_lines(tmp_path):
    v = _pdb_verdict(tmp_path, "minAvailable: 1, maxUnavailable: 1, disruptionsAllowed: 0")
    assert not v.passed
    assert v.message == (f"{tmp_path / 'case.yaml'}:7: pdbs[0].maxUnavailable: "
                         "minAvailable and maxUnavailable cannot be both set")
    # the spec is validated even when the status decides
    v = _pdb_verdict(tmp_path, "minAvailable: -1, disruptionsAllowed: 0")
    assert not v.passed and "case.yaml:7: pdbs[0].minAvailable: must be greater than or equal to 0" in v.message


FULL_CASE = """
name: c
version: "VERSION"
profile: {filter: [NodeResourcesFit]}
nodes:
- {name: n1, allocatable: {cpu: "4", memory: 8Gi}}
- {name: n2, allocatable: {cpu: "4", memory: 8Gi}}
- {name: n3, allocatable: {cpu: "4", memory: 8Gi, pods: 0}}
pod: {name: p, requests: {cpu: "1"}}
expect:
  selected: n1
"""


def _full_verdict(tmp_path, version="1.30", edit=lambda s: s):
    from tests.helpers import verdict

    return verdict(tmp_path, edit(FULL_CASE.replace("VERSION", version)))


NOTE = ('note: every node failed with "Too many pods": nodes n1, n2 give `allocatable` without `pods`, '
        'so they allow 0 pods (add e.g. `pods: 110`)')


def test_allocatable_without_pods_allows_no_pod(tmp_path):
    case = _case(FULL_CASE.replace("VERSION", "1.30"))
    assert [n.allocatable["pods"] for n in case.cluster.nodes] == [0, 0, 0]
    assert case.nodes_without_pods == {"n1", "n2"}
    out = run_loaded(case).actual
    assert out["feasible"] == [] and out["unschedulable"] is True
    reasons = {n: s["reason"] for n, s in out["filter"].items()}
    assert reasons == {n: "Too many pods" for n in ("n1", "n2", "n3")}


def test_failure_report_names_nodes_without_pods_in_one_line(tmp_path):
    v = _full_verdict(tmp_path)
    assert not v.passed
    lines = v.message.splitlines()
    assert lines[1] == NOTE
    assert sum("Too many pods\": " in line for line in lines) == 1
    # before 1.18 the reason is "Insufficient pods"
    v = _full_verdict(tmp_path, "1.17")
    assert not v.passed and v.message.splitlines()[1] == NOTE


def test_no_note_when_pod_count_is_not_why(tmp_path):
    # n2 fails for cpu only: not every node is full by pod count
    n2_cpu_only = '{name: n2, allocatable: {cpu: "0", memory: 8Gi, pods: 5}}'
    v = _full_verdict(tmp_path, edit=lambda s: s.replace('{name: n2, allocatable: {cpu: "4", memory: 8Gi}}',
                                                         n2_cpu_only))
    assert not v.passed and "note:" not in v.message
    # every node gives pods: 0 explicitly: nothing to point out
    v = _full_verdict(tmp_path, edit=lambda s: s.replace("8Gi}}", "8Gi, pods: 0}}"))
    assert not v.passed and "note:" not in v.message
    # the case passes: no report at all
    v = _full_verdict(tmp_path, edit=lambda s: s.replace("selected: n1", "unschedulable: true"))
    assert v.passed and v.message == ""


def test_note_in_the_pytest_report(pytester):
    from tests.helpers import HEADER

    pytester.makefile(".yaml", cases=HEADER + FULL_CASE.replace("VERSION", "1.30"))
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*" + NOTE.replace("[", "[[]") + "*"])


def test_pod_capacity_note_singular(tmp_path):
    # one node without `pods`: the note speaks of it in the singular
    v = _full_verdict(tmp_path, edit=lambda s: s.replace(
        '{name: n2, allocatable: {cpu: "4", memory: 8Gi}}', '{name: n2, allocatable: {cpu: "4", memory: 8Gi, pods: 0}}'))
    assert not v.passed
    assert v.message.splitlines()[1] == (
        'note: every node failed with "Too many pods": node n1 gives `allocatable` without `pods`, '
        'so it allows 0 pods (add e.g. `pods: 110`)')
