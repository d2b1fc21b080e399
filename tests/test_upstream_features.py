"""Lt / Gt tolerations, pod-level resources and the known-but-unmodelled feature gates:
the data-level seams (corev1helpers.toleration_tolerates, kspread.engine.resources) and the errors
for input upstream would refuse."""

from __future__ import annotations

import pytest

from kspread.engine.corev1helpers import canonical_int64, find_untolerated_taint
from kspread.engine.model import Container, Pod, Taint, Toleration
from kspread.engine.plugins.nodematch import do_not_schedule_taints
from kspread.engine.resources import node_non_zero_requests, pod_requests, scoring_requests
from kspread.engine.versions import FEATURE_GATES, UNMODELLED_GATES, Version, make_version
from kspread.errors import CaseError
from tests.helpers import verdict

Mi = 1024 * 1024


# ---- Lt / Gt ----------------------------------------------------------------------------


@pytest.mark.parametrize("s, v", [
    ("0", 0), ("5", 5), ("-5", -5), ("950", 950),
    ("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -(2**63)),
    ("9223372036854775808", None), ("0100", None), ("+5", None), ("-0", None), ("-", None), ("", None),
    ("1.5", None), (" 1", None), ("1e3", None), ("٣", None),  # a non-ASCII digit is not a decimal digit to Go
])
def test_canonical_int64(s, v):
    assert canonical_int64(s) == v


def test_model_tolerates_delegates_to_the_one_match():
    assert Toleration("k", "Gt", "1").tolerates(Taint("k", "2", "NoSchedule"))
    assert not Toleration("k", "Lt", "1").tolerates(Taint("k", "2", "NoSchedule"))


def test_untolerated_taint_search_uses_the_comparison():
    taints = [Taint("sla", "950", "NoSchedule"), Taint("zone", "x", "NoExecute")]
    tols = [Toleration("sla", "Gt", "900"), Toleration("zone", "Exists")]
    assert find_untolerated_taint(taints, tols, do_not_schedule_taints) is None
    tols = [Toleration("sla", "Gt", "960"), Toleration("zone", "Exists")]
    assert find_untolerated_taint(taints, tols, do_not_schedule_taints) == taints[0]


BASE = """
name: c
version: "{version}"
{gates}profile: {{filter: [TaintToleration]}}
nodes:
- {{name: n1, taints: [{{key: sla, value: "950", effect: NoSchedule}}]}}
pod:
  name: p
  tolerations:
  - {{key: sla, operator: {op}, value: "{value}"}}
expect: {{filter: {{n1: Success}}}}
"""


def _case(version="1.35", gates="featureGates: {TaintTolerationComparisonOperators: true}\n", op="Gt", value="900"):
    return BASE.format(version=version, gates=gates, op=op, value=value)


def _line_of(body: str, needle: str) -> int:
    """1-based line of ``needle`` in the file that ``verdict`` writes (two header lines)."""
    lines = body.lstrip("\n").splitlines()
    return 2 + next(i for i, ln in enumerate(lines, 1) if needle in ln)


def test_gt_passes_with_the_gate(tmp_path):
    assert verdict(tmp_path, _case()).passed


@pytest.mark.parametrize("kwargs, line, field, text", [
    ({"gates": ""}, 11, "pod.tolerations[0].operator",
     ('unsupported value "Gt": supported values: "Equal", "Exists" (Lt and Gt need featureGates: '
     '{TaintTolerationComparisonOperators: true}; the gate is off by default in 1.35)')),
    ({"version": "1.34", "gates": "", "op": "Lt"}, 11, "pod.tolerations[0].operator",
     ('unsupported value "Lt": supported values: "Equal", "Exists" (Lt and Gt came with the '
     "TaintTolerationComparisonOperators feature gate, alpha in 1.35; version 1.34 does not have them)")),
    ({"value": "0950"}, 12, "pod.tolerations[0].value", "with operator Gt, value must be a decimal integer"),
    ({"value": "+950"}, 12, "pod.tolerations[0].value", "with operator Gt, value must be a decimal integer"),
    ({"value": "high"}, 12, "pod.tolerations[0].value", "with operator Gt, value must be a decimal integer"),
    ({"value": "9223372036854775808"}, 12, "pod.tolerations[0].value", "with operator Gt, value must be a decimal integer in canonical form (no sign '+', no leading zero) that fits in 64 bits (got '9223372036854775808')"),
])
def test_lt_gt_refused_as_the_api_server_refuses(tmp_path, kwargs, line, field, text):
    body = _case(**kwargs)
    # the header adds two lines; operator and value sit on the toleration's line
    assert _line_of(body, "- {key: sla, operator:") == line
    v = verdict(tmp_path, body)
    assert not v.passed
    assert f"case.yaml:{line}: {field}: {text}" in v.message, v.message


def test_lt_gt_need_a_key(tmp_path):
    body = _case().replace("{key: sla, operator: Gt", "{operator: Gt")
    v = verdict(tmp_path, body)
    assert not v.passed
    assert ('case.yaml:12: pod.tolerations[0].operator: operator must be Exists when `key` is empty, '
            'which means "match all values and all keys"') in v.message, v.message


def test_gate_is_alpha_and_off_from_1_35_to_1_37():
    g = FEATURE_GATES["TaintTolerationComparisonOperators"]
    assert g.stage_at(34) is None
    for m in (35, 36, 37):
        assert (g.stage_at(m).stage, g.stage_at(m).default) == ("ALPHA", False)


# ---- pod-level resources ------------------------------------------------------------------


def _pod(containers=(), level=None, overhead=None, inits=()):
    return Pod("p", containers=tuple(containers), init_containers=tuple(inits), level_requests=level or {},
               overhead=overhead or {})


V34 = Version(34)
V34_OFF = Version(34, {"PodLevelResources": False})


def test_pod_level_requests_replace_the_aggregate_then_overhead():
    p = _pod([Container("a", requests={"cpu": 500, "memory": 64 * Mi}), Container("b", requests={"cpu": 500})],
             level={"cpu": 3000}, overhead={"cpu": 100, "memory": Mi})
    assert pod_requests(p, V34) == {"cpu": 3100, "memory": 65 * Mi}
    assert pod_requests(p, V34_OFF) == {"cpu": 1100, "memory": 65 * Mi}
    assert pod_requests(p, Version(33)) == {"cpu": 1100, "memory": 65 * Mi}  # alpha, off by default
    assert pod_requests(p, Version(33, {"PodLevelResources": True}))["cpu"] == 3100


def test_pod_level_request_replaces_the_aggregate_with_sidecars_and_init_containers():
    side = Container("side", requests={"cpu": 200, "memory": 10 * Mi}, restartable=True)
    init = Container("init", requests={"cpu": 1500})
    p = _pod([Container("a", requests={"cpu": 500})], level={"cpu": 2500}, inits=(side, init))
    # aggregate: cpu max(500 + 200, 1500 + 200) = 1700, memory 10Mi; pod level replaces cpu only
    assert pod_requests(p, V34) == {"cpu": 2500, "memory": 10 * Mi}
    assert pod_requests(p, V34_OFF) == {"cpu": 1700, "memory": 10 * Mi}


def test_scorer_defaults_every_container_then_pod_level_overrides():
    p = _pod([Container("a", requests={"memory": 100 * Mi}), Container("b")], level={"cpu": 2000})
    r = scoring_requests(p, V34, non_zero=True, include_init=True)
    assert r == {"cpu": 2000, "memory": 300 * Mi}  # b's memory defaults to 200Mi
    assert scoring_requests(p, V34, non_zero=False, include_init=True) == {"cpu": 2000, "memory": 100 * Mi}
    assert scoring_requests(p, V34_OFF, non_zero=True, include_init=True) == {"cpu": 200, "memory": 300 * Mi}


def test_node_non_zero_defaults_only_what_the_whole_request_lacks():
    # upstream getNonMissingContainerRequests: the pod's whole request has memory (a's
    # 100Mi), so b gets no memory default on the node, unlike in the scorer above.
    p = _pod([Container("a", requests={"memory": 100 * Mi}), Container("b")], level={"cpu": 2000})
    assert node_non_zero_requests(p, V34) == (2000, 100 * Mi)
    # the whole request lacks memory -> every container without memory gets 200Mi
    p = _pod([Container("a"), Container("b")], level={"cpu": 2000})
    assert node_non_zero_requests(p, V34) == (2000, 400 * Mi)
    # overhead counts in the whole request: memory overhead suppresses the default
    p = _pod([Container("a")], level={"cpu": 2000}, overhead={"memory": Mi})
    assert node_non_zero_requests(p, V34) == (2000, Mi)
    # gate off: per-container defaults, as before pod-level resources
    p = _pod([Container("a", requests={"memory": 100 * Mi}), Container("b")], level={"cpu": 2000})
    assert node_non_zero_requests(p, V34_OFF) == (200, 300 * Mi)


PL_BASE = """
name: c
version: "1.34"
profile: {{filter: [NodeResourcesFit]}}
nodes: [n1]
pod:
  name: p
  containers: [{{name: a, resources: {{requests: {{cpu: "1"}}}}}}, {{name: b, resources: {{requests: {{memory: 64Mi}}}}}}]
  resources: {resources}
expect: {{filter: {{n1: Success}}}}
"""


@pytest.mark.parametrize("resources, line, field, text", [
    ('{requests: {cpu: "2", memory: 64Mi}, limits: {cpu: "2"}}', None, None, None),
    ('{requests: {cpu: 500m}}', 10, "pod.resources.requests.cpu",
     "must be greater than or equal to the containers' aggregate cpu request"),
    ('{requests: {cpu: "3"}, limits: {cpu: "2"}}', 10, "pod.resources.requests.cpu",
     "must be less than or equal to the pod-level cpu limit"),
    ('{limits: {cpu: "2"}}', 10, "pod.resources.limits.cpu", "give resources.requests.cpu as well"),
    ('{requests: {cpu: "2"}, limits: {memory: 1Gi}}', 10, "pod.resources.limits",
     "give resources.requests.memory as well"),
    ('{requests: {cpu: "2", memory: 1Gi}, limits: {memory: 1Gi}}', None, None, None),
    ('{requests: {ephemeral-storage: 1Gi}}', 10, "pod.resources.requests.ephemeral-storage",
     "unsupported pod-level resource 'ephemeral-storage': supported values: cpu, memory, hugepages-*"),
    ('{requests: {hugepages-2Mi: 2Mi}}', 10, "pod.resources.requests.hugepages-2Mi",
     "kspread models pod-level cpu and memory only, not hugepages-2Mi"),
    ('{requests: {cpu: lots}}', 10, "pod.resources.requests.cpu", None),
])
def test_pod_level_resources_validated(tmp_path, resources, line, field, text):
    body = PL_BASE.format(resources=resources)
    v = verdict(tmp_path, body)
    if line is None:
        assert v.passed, v.message
        return
    assert _line_of(body, "  resources:") == line
    assert not v.passed
    assert f"case.yaml:{line}: {field}" in v.message, v.message
    if text:
        assert text in v.message, v.message


def test_pod_resources_unknown_key_is_a_schema_error(tmp_path):
    v = verdict(tmp_path, PL_BASE.format(resources='{requests: {cpu: "2"}, claims: []}'))
    assert not v.passed and "claims" in v.message, v.message


# ---- known-but-unmodelled gates --------------------------------------------------------------


GATE_BASE = """
name: c
version: "{version}"
featureGates: {{{gate}: true}}
profile: {{filter: [NodeResourcesFit]}}
nodes: [n1]
pod: {{name: p}}
expect: {{filter: {{n1: Success}}}}
"""


def test_an_unmodelled_gate_is_known_but_refused(tmp_path):
    v = verdict(tmp_path, GATE_BASE.format(version="1.35", gate="DRASchedulerFilterTimeout"))
    assert not v.passed
    assert ("case.yaml:5: featureGates.DRASchedulerFilterTimeout: feature gate DRASchedulerFilterTimeout is known to "
            "1.35 but kspread does not model it: kspread computes the same with it on or off, because kspread's "
            "allocator has no wall clock") in v.message, v.message


def test_unmodelled_gate_the_version_does_not_know(tmp_path):
    v = verdict(tmp_path, GATE_BASE.format(version="1.33", gate="DRASchedulerFilterTimeout"))
    assert "version 1.33 does not know feature gate 'DRASchedulerFilterTimeout'" in v.message, v.message


def test_a_gate_modelled_from_a_later_minor_is_refused_before(tmp_path):
    v = verdict(tmp_path, GATE_BASE.format(version="1.34", gate="DRAExtendedResource"))
    assert "feature gate DRAExtendedResource is modelled by kspread from 1.35: 1.34's" in v.message, v.message


def test_modelled_and_unmodelled_gates_are_disjoint():
    assert not set(FEATURE_GATES) & set(UNMODELLED_GATES)
    g = FEATURE_GATES["DRAExtendedResource"]
    assert [(s.since, s.default, s.stage, s.locked) for s in g.stages] == [
        (34, False, "ALPHA", False), (36, True, "BETA", False), (37, True, "GA", True)]


def test_pod_level_resources_gate_stages():
    g = FEATURE_GATES["PodLevelResources"]
    assert g.stage_at(31) is None
    assert (g.stage_at(32).default, g.stage_at(33).default, g.stage_at(34).default, g.stage_at(37).default) == \
        (False, False, True, True)


def test_readme_lists_every_gate_with_its_stages():
    import re
    from pathlib import Path

    # the table of feature gates, in the documentation (README.md links to it)
    readme = Path(__file__).resolve().parent.parent.joinpath("docs", "reference", "versions.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([A-Za-z]+)` \| ([^|]+) \|", readme, re.MULTILINE))

    def stages(g):
        parts = [f"{s.stage.lower()} {'on' if s.default else 'off'} 1.{s.since}" + (" (locked)" if s.locked else "")
                 for s in g.stages]
        if g.removed:
            parts.append(f"removed 1.{g.removed}")
        return ", ".join(parts)

    gates = {**FEATURE_GATES, **{n: g for n, (g, _) in UNMODELLED_GATES.items()}}
    assert set(gates) <= set(rows), set(gates) - set(rows)
    for name, g in gates.items():
        assert rows[name].strip() == stages(g), name


def test_gate_dependencies_are_checked_on_default_values_too(tmp_path):
    # 1.36: DRADeviceBindingConditions is beta and on by default; turning off what it depends on
    # is refused, as component-base refuses it (every enabled feature is checked, set or not)
    from tests.helpers import verdict

    v = verdict(tmp_path, """\
        name: dep
        version: "1.36"
        featureGates: {DRAResourceClaimDeviceStatus: false}
        nodes: [n1]
        pod: {name: p}
        expect: {feasible: [n1]}
        """)
    assert not v.passed
    assert v.message.endswith("case.yaml:5: featureGates.DRAResourceClaimDeviceStatus: DRADeviceBindingConditions "
                              "is enabled, but depends on features that are disabled: [DRAResourceClaimDeviceStatus]")
    # 1.35: DRADeviceBindingConditions is alpha and off, so nothing depends on it
    assert verdict(tmp_path, """\
        name: dep
        version: "1.35"
        featureGates: {DRAResourceClaimDeviceStatus: false}
        nodes: [n1]
        pod: {name: p}
        expect: {feasible: [n1]}
        """).passed


@pytest.mark.parametrize("version, gate, text", [
    # modelled from issue 32 (podgroupplacement.py): upstream's dependency on GenericWorkload
    ("1.36", "TopologyAwareWorkloadScheduling", ("TopologyAwareWorkloadScheduling is enabled, but depends on "
     "features that are disabled: [GenericWorkload]")),
    ("1.37", "WorkloadAwarePreemption", "version 1.37 does not know feature gate 'WorkloadAwarePreemption'"),
    ("1.35", "DRAWorkloadResourceClaims", "version 1.35 does not know feature gate 'DRAWorkloadResourceClaims'"),
    # modelled (issue 32); features.go: it depends on DynamicResourceAllocation and GenericWorkload
    ("1.36", "DRAWorkloadResourceClaims",
     "DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: [GenericWorkload]"),
])
def test_1_36_gates_refused_by_name(version, gate, text):
    with pytest.raises(CaseError) as e:
        make_version(version, {gate: True})
    assert text in str(e.value)


def test_list_type_device_attribute_with_the_gate_off_is_refused_as_the_api_server_does(tmp_path):
    from tests.helpers import verdict

    v = verdict(tmp_path, """\
        name: list-attr
        version: "1.36"
        nodes: [n1]
        objects:
        - apiVersion: resource.k8s.io/v1
          kind: ResourceSlice
          metadata: {name: n1-gpu}
          spec:
            driver: gpu.example.com
            nodeName: n1
            pool: {name: n1, generation: 1, resourceSliceCount: 1}
            devices:
            - name: gpu-0
              attributes: {numa: {ints: [0, 1]}}
        pod: {name: p}
        expect: {feasible: [n1]}
        """)
    assert "case.yaml:16: objects[0].spec.devices[0].attributes.numa.ints: a list attribute (ints) needs the " \
           "DRAListTypeAttributes feature gate (alpha, off by default in 1.36)" in v.message
