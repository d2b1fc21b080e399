"""Plugin arguments: decoded strictly, shapes checked before use, validated as upstream's
validation_pluginargs.go, in a case's profile.pluginConfig and in a
KubeSchedulerConfiguration alike; errors name the file, the line and the field."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from helpers import write_case
from kspread.engine.framework.args import ARGS_TYPES, decode_args
from kspread.engine.framework.registry import UPSTREAM
from kspread.engine.scheduler import Scheduler
from kspread.engine.versions import Version
from kspread.errors import CaseError
from kspread.format.loader import load_case, read_file
from kspread.workflow.cli import main as cli_main

SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "case.schema.json"


def _case(tmp_path, version: str, plugin: str, args_yaml: str, point: str = "score") -> Path:
    """A case whose profile runs ``plugin`` with ``args_yaml`` (the args mapping, one
    level below ``pluginConfig.<plugin>`` (line 8), from line 9)."""
    args = textwrap.indent(textwrap.dedent(args_yaml).strip("\n"), "      ")
    other = "filter: []" if point == "postFilter" else "postFilter: []"
    text = "\n".join([
        f'version: "{version}"',
        "profile:",
        f"  {point}: [{plugin}]",
        f"  {other}",
        "  pluginConfig:",
        f"    {plugin}:",
        args,
        "nodes: [n1]",
        "pod: {name: p}",
        "expect: {feasible: [n1]}",
        "",
    ])
    return write_case(tmp_path, text)


def _load(path: Path):
    res = read_file(path)
    assert res.error is None, res.error
    case = load_case(res.docs[0])
    Scheduler(case)
    return case


def _error(path: Path) -> str:
    with pytest.raises(CaseError) as e:
        _load(path)
    return str(e.value)


def _config(tmp_path, body: str, name: str = "sched.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
    return p


def _case_with_config(tmp_path, version: str, config_body: str) -> Path:
    _config(tmp_path, config_body)
    return write_case(tmp_path, f"""
        version: "{version}"
        profile: {{config: sched.yaml}}
        nodes: [n1]
        pod: {{name: p}}
        expect: {{feasible: [n1]}}
        """)


# ---- item: no input crashes ------------------------------------------------------------------------


def test_ignored_resources_nested_one_list_too_deep(tmp_path, capsys):
    p = _case(tmp_path, "1.30", "NodeResourcesFit", "ignoredResources: [[example.com/gpu]]", "filter")
    msg = (f"{p}:9: profile.pluginConfig.NodeResourcesFit.ignoredResources[0]: must be a string "
           "(got ['example.com/gpu'])")
    assert _error(p) == msg
    assert cli_main(["validate", str(p)]) == 1
    assert capsys.readouterr().out.strip() == msg


def test_ignored_resources_nested_in_a_configuration_file(tmp_path):
    p = _case_with_config(tmp_path, "1.30", """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
            args:
              ignoredResources: [[example.com/gpu]]
        """)
    assert _error(p) == (f"{tmp_path / 'sched.yaml'}:7: profiles[0].pluginConfig[0].args.ignoredResources[0]: "
                         "must be a string (got ['example.com/gpu'])")


@pytest.mark.parametrize("args, where, message", [
    ("scoringStrategy: LeastAllocated", "scoringStrategy", "must be a mapping (got 'LeastAllocated')"),
    ("scoringStrategy: {resources: {cpu: 1}}", "scoringStrategy.resources", "must be a list (got {'cpu': 1})"),
    ("scoringStrategy: {type: MostAllocated, resources: [cpu]}", "scoringStrategy.resources[0]",
     "must be a mapping (got 'cpu')"),
    ("scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: '2'}]}",
     "scoringStrategy.resources[0].weight", "must be an integer (got '2')"),
    ("scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [[0, 10]]}}",
     "scoringStrategy.requestedToCapacityRatio.shape[0]", "must be a mapping (got [0, 10])"),
])
def test_shapes_are_checked_before_use(tmp_path, args, where, message):
    p = _case(tmp_path, "1.30", "NodeResourcesFit", args)
    assert _error(p) == f"{p}:9: profile.pluginConfig.NodeResourcesFit.{where}: {message}"


# ---- item: strict decoding -------------------------------------------------------------------------


def test_unknown_field_in_a_case(tmp_path):
    p = _case(tmp_path, "1.30", "NodeResourcesFit", "scoringStrategi: {type: MostAllocated}")
    assert _error(p) == (f"{p}:9: profile.pluginConfig.NodeResourcesFit.scoringStrategi: unknown field "
                         "'scoringStrategi' (allowed: ignoredResourceGroups, ignoredResources, scoringStrategy) "
                         "(did you mean 'scoringStrategy'?)")


def test_unknown_field_in_a_configuration_file(tmp_path):
    p = _case_with_config(tmp_path, "1.30", """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
            args:
              scoringStrategi:
                type: MostAllocated
        """)
    assert _error(p) == (
        f"{tmp_path / 'sched.yaml'}:7: profiles[0].pluginConfig[0].args.scoringStrategi: strict decoding error: "
        'unknown field "scoringStrategi" in NodeResourcesFitArgs of 1.30 (config API v1) (known fields: '
        "ignoredResources, ignoredResourceGroups, scoringStrategy) (did you mean 'scoringStrategy'?)")


def test_a_field_of_a_later_version_is_unknown(tmp_path):
    p = _case(tmp_path, "1.26", "InterPodAffinity", "ignorePreferredTermsOfExistingPods: true")
    assert _error(p) == (
        f"{p}:9: profile.pluginConfig.InterPodAffinity.ignorePreferredTermsOfExistingPods: strict decoding error: "
        'unknown field "ignorePreferredTermsOfExistingPods" in InterPodAffinityArgs of 1.26 (known fields: '
        "hardPodAffinityWeight; ignorePreferredTermsOfExistingPods exists in 1.27 on)")


def test_a_field_of_a_later_config_api_is_unknown(tmp_path):
    """scoringStrategy is a v1beta2 field: a v1beta1 configuration of 1.22 does not have it,
    although a case of 1.22 (the v1beta2 types) does."""
    p = _case_with_config(tmp_path, "1.22", """
        apiVersion: kubescheduler.config.k8s.io/v1beta1
        kind: KubeSchedulerConfiguration
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
            args: {scoringStrategy: {type: MostAllocated}}
        """)
    assert _error(p) == (
        f"{tmp_path / 'sched.yaml'}:6: profiles[0].pluginConfig[0].args.scoringStrategy: strict decoding error: "
        'unknown field "scoringStrategy" in NodeResourcesFitArgs of 1.22 (config API v1beta1) (known fields: '
        "ignoredResources, ignoredResourceGroups; scoringStrategy exists in 1.22 on (config API v1beta2, v1beta3, v1))")
    q = _case(tmp_path, "1.22", "NodeResourcesFit", "scoringStrategy: {type: MostAllocated}")
    assert _load(q).profile.plugin_args["NodeResourcesFit"]["scoringStrategy"].kind == "MostAllocated"


def test_a_plugin_without_args_type_takes_no_arguments(tmp_path):
    p = _case(tmp_path, "1.30", "ImageLocality", "foo: 1")
    assert _error(p) == (f'{p}:9: profile.pluginConfig.ImageLocality.foo: strict decoding error: unknown field '
                         '"foo": plugin ImageLocality takes no arguments (upstream has no ImageLocalityArgs type)')


def test_args_type_of_a_later_version(tmp_path):
    p = _case(tmp_path, "1.19", "DefaultPreemption", "minCandidateNodesAbsolute: 5", "postFilter")
    assert _error(p) == f"{p}:8: profile.pluginConfig.DefaultPreemption: DefaultPreemptionArgs do not exist in 1.19 " \
                        "(added in 1.20)"


def test_case_schema_and_table_agree():
    """Every args type of the table has its schema $def, with the same fields."""
    defs = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]
    config = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]["profile"]["properties"]["pluginConfig"]
    for name, t in ARGS_TYPES.items():
        assert set(defs[t.schema]["properties"]) == {f.name for f in t.fields}, name
        assert defs[t.schema]["additionalProperties"] is False
        assert config["properties"][name]["$ref"] == f"#/$defs/{t.schema}"
    # every args type upstream has for a plugin kspread implements is in the table
    in_tree = {k.name for k in UPSTREAM}
    assert set(ARGS_TYPES) <= in_tree


# ---- item: validated as upstream validates ---------------------------------------------------------

# (plugin, version, args, field path below the plugin, message)
INVALID = [
    ("NodeResourcesFit", "1.30", {"scoringStrategy": {"type": "Most"}}, "scoringStrategy.type",
     ('Unsupported value: "Most": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio" '
      "(got 'Most')")),
    ("NodeResourcesFit", "1.30", {"scoringStrategy": {"resources": [{"name": "cpu"}]}}, "scoringStrategy.type",
     ('Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio" '
      "(got '')")),
    ("NodeResourcesFit", "1.30", {"scoringStrategy": {"type": "LeastAllocated",
                                                      "resources": [{"name": "cpu", "weight": 101}]}},
     "scoringStrategy.resources[0].weight", "resource weight of cpu not in valid range (0, 100] (got 101)"),
    ("NodeResourcesFit", "1.30", {"scoringStrategy": {"type": "MostAllocated",
                                                      "resources": [{"name": "cpu", "weight": -3}]}},
     "scoringStrategy.resources[0].weight", "resource weight of cpu not in valid range (0, 100] (got -3)"),
    ("NodeResourcesFit", "1.30", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
     "scoringStrategy.requestedToCapacityRatio",
     "Required value: must be specified when type is RequestedToCapacityRatio"),
    ("NodeResourcesFit", "1.30", {"scoringStrategy": {"type": "LeastAllocated", "requestedToCapacityRatio": {
        "shape": [{"utilization": 0, "score": 10}]}}}, "scoringStrategy.requestedToCapacityRatio",
     "Forbidden: must be nil when type is not RequestedToCapacityRatio"),
    ("NodeResourcesFit", "1.30", {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": 50, "score": 5}, {"utilization": 50, "score": 1}]}}},
     "scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
     "utilization values must be sorted in increasing order (got 50)"),
    ("NodeResourcesFit", "1.30", {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": 0, "score": 10}, {"utilization": 101, "score": 0}]}}},
     "scoringStrategy.requestedToCapacityRatio.shape[1].utilization", "not in valid range [0, 100] (got 101)"),
    ("NodeResourcesFit", "1.30", {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": 0, "score": 11}]}}},
     "scoringStrategy.requestedToCapacityRatio.shape[0].score", "not in valid range [0, 10] (got 11)"),
    ("NodeResourcesFit", "1.30", {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                                      "requestedToCapacityRatio": {"shape": []}}},
     "scoringStrategy.requestedToCapacityRatio.shape", "at least one point must be specified (got [])"),
    ("NodeResourcesFit", "1.30", {"ignoredResources": ["example.com/gpu/x"]}, "ignoredResources[0]",
     "the prefix of a label key must be a DNS-1123 subdomain (got 'example.com/gpu/x')"),
    ("NodeResourcesFit", "1.30", {"ignoredResourceGroups": ["example.com/gpu"]}, "ignoredResourceGroups[0]",
     "resource group name can't contain '/' (got 'example.com/gpu')"),
    ("NodeResourcesBalancedAllocation", "1.30", {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
     "resources[1].name", "Duplicate value: \"cpu\" (got 'cpu')"),
    ("NodeResourcesBalancedAllocation", "1.30", {"resources": [{"name": "cpu", "weight": 2}]},
     "resources[0].weight", "must be 1 (got 2)"),
    ("NodeResourcesLeastAllocated", "1.21", {"resources": [{"name": "cpu", "weight": 0}]},
     "resources[0].weight", "resource weight of cpu not in valid range (0, 100] (got 0)"),
    ("NodeResourcesMostAllocated", "1.21", {"resources": [{"name": "cpu", "weight": 101}]},
     "resources[0].weight", "resource weight of cpu not in valid range (0, 100] (got 101)"),
    ("RequestedToCapacityRatio", "1.21", {"shape": [{"utilization": 0, "score": 10}],
                                          "resources": [{"name": "cpu", "weight": 0}]},
     "resources[0].weight", "resource weight of cpu not in valid range [1, inf) (got 0)"),
    ("RequestedToCapacityRatio", "1.20", {"shape": [{"utilization": 60, "score": 1}, {"utilization": 40, "score": 2}]},
     "shape[1].utilization", "utilization values must be sorted. Utilization[0]==60 >= Utilization[1]==40 (got 40)"),
    ("RequestedToCapacityRatio", "1.21", {"resources": [{"name": "cpu", "weight": 1}]},
     "shape", "at least one point must be specified (got None)"),
    ("PodTopologySpread", "1.30", {"defaultingType": "Lists"}, "defaultingType",
     "supported values: 'System', 'List' (got 'Lists')"),
    ("PodTopologySpread", "1.30", {"defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}, "defaultConstraints",
     'when .defaultingType is "System", .defaultConstraints must be empty'),
    ("PodTopologySpread", "1.30", {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}, "defaultConstraints[0].maxSkew",
     "must be greater than zero (got 0)"),
    ("PodTopologySpread", "1.30", {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}]},
     "defaultConstraints[0].topologyKey", "can not be empty (got '')"),
    ("PodTopologySpread", "1.30", {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"a": "b"}}}]}, "defaultConstraints[0].labelSelector",
     "constraint must not define a selector, as they deduced for each pod"),
    ("PodTopologySpread", "1.30", {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
     "defaultConstraints[1]", "Duplicate value: {'zone', 'DoNotSchedule'}"),
    ("InterPodAffinity", "1.30", {"hardPodAffinityWeight": 101}, "hardPodAffinityWeight",
     "not in valid range [0-100] (got 101)"),
    ("InterPodAffinity", "1.30", {"hardPodAffinityWeight": 2**31}, "hardPodAffinityWeight",
     "2147483648 is greater than the maximum of 2147483647 (got 2147483648)"),
    ("DefaultPreemption", "1.30", {"minCandidateNodesPercentage": 101}, "minCandidateNodesPercentage",
     "not in valid range [0, 100] (got 101)"),
    ("DefaultPreemption", "1.30", {"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute",
     "not in valid range [0, inf) (got -1)"),
    ("DefaultPreemption", "1.30", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     "minCandidateNodesPercentage", "cannot be zero at the same time as minCandidateNodesAbsolute (got 0)"),
    ("NodeAffinity", "1.30", {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": []}}}, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
     "must have at least one node selector term"),
    ("VolumeBinding", "1.30", {"bindTimeoutSeconds": -1}, "bindTimeoutSeconds",
     "invalid BindTimeoutSeconds, should not be a negative value (got -1)"),
    ("VolumeBinding", "1.30", {"shape": [{"utilization": 0, "score": 10}]}, "shape",
     "unexpected field `shape`, remove it or turn on the feature gate VolumeCapacityPriority"),
    ("VolumeBinding", "1.37", {"shape": [{"utilization": 0, "score": 11}]}, "shape[0].score",
     "not in valid range [0, 10] (got 11)"),
    ("DynamicResources", "1.34", {"filterTimeout": "-1s"}, "filterTimeout", "must be zero or positive (got '-1s')"),
    ("DynamicResources", "1.34", {"filterTimeout": "10 seconds"}, "filterTimeout",
     "time: unknown unit \" seconds\" in duration \"10 seconds\" (got '10 seconds')"),
    ("DynamicResources", "1.35", {"bindingTimeout": "1m"}, "bindingTimeout",
     "Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"),
    ("DynamicResources", "1.36", {"bindingTimeout": "500ms"}, "bindingTimeout",
     "must be at least 1 second (got '500ms')"),
]

_POINT = {"DefaultPreemption": "postFilter", "VolumeBinding": "filter", "DynamicResources": "filter"}


@pytest.mark.parametrize("plugin, version, args, where, message", INVALID,
                         ids=[f"{x[0]}-{x[3]}-{i}" for i, x in enumerate(INVALID)])
def test_invalid_args_in_a_case(tmp_path, plugin, version, args, where, message):
    p = _case(tmp_path, version, plugin, json.dumps(args), _POINT.get(plugin, "score"))
    line = 9 if where.split(".")[0].split("[")[0] in args else 8  # a missing field: its parent's line
    assert _error(p) == f"{p}:{line}: profile.pluginConfig.{plugin}.{where}: {message}"


@pytest.mark.parametrize("plugin, version, args, where, message", INVALID[:4] + INVALID[19:21],
                         ids=[f"{x[0]}-{x[3]}" for x in INVALID[:4] + INVALID[19:21]])
def test_invalid_args_in_a_configuration_file(tmp_path, plugin, version, args, where, message):
    p = _case_with_config(tmp_path, version, f"""
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - pluginConfig:
          - name: {plugin}
            args:
              {json.dumps(args)}
        """)
    assert _error(p) == f"{tmp_path / 'sched.yaml'}:7: profiles[0].pluginConfig[0].args.{where}: {message}"


# ---- decoded values reach the plugins --------------------------------------------------------------


def test_defaults_and_decoded_values():
    v30 = Version(30)
    fit = decode_args("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated",
                                                               "resources": [{"name": "cpu", "weight": 0},
                                                                             {"name": "memory", "weight": 3}]}},
                      v30, ())
    s = fit["scoringStrategy"]
    assert s.kind == "MostAllocated" and [(r.name, r.weight) for r in s.resources] == [("cpu", 1), ("memory", 3)]
    assert decode_args("NodeResourcesFit", {}, Version(21), ())["scoringStrategy"] is None  # no Score before 1.22
    assert decode_args("DefaultPreemption", None, v30, ()) == {"minCandidateNodesPercentage": 10,
                                                               "minCandidateNodesAbsolute": 100}
    assert decode_args("VolumeBinding", {}, v30, ()) == {"bindTimeoutSeconds": 600, "shape": None}
    assert decode_args("DynamicResources", {"filterTimeout": "1m30s"}, Version(34), ())["filterTimeout"] == 90.0
    rtcr = decode_args("RequestedToCapacityRatio", {"shape": [{"utilization": 0, "score": 10}]}, Version(22), ())
    assert [(p.utilization, p.score) for p in rtcr["shape"]] == [(0, 100)]  # scaled to 0..100
    legacy = decode_args("RequestedToCapacityRatioPriority", {}, Version(15), ())  # the 1.15 name, default shape
    assert [(p.utilization, p.score) for p in legacy["shape"]] == [(0, 10), (100, 0)]


def test_the_plugin_runs_with_the_decoded_args(tmp_path):
    p = _case(tmp_path, "1.30", "NodeResourcesFit", """
        scoringStrategy:
          type: RequestedToCapacityRatio
          resources: [{name: cpu}]
          requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}
        """)
    case = _load(p)
    fit = Scheduler(case).framework.plugin("NodeResourcesFit")
    assert fit._scorer.strategy == case.profile.plugin_args["NodeResourcesFit"]["scoringStrategy"]
    assert fit._scorer.strategy.kind == "RequestedToCapacityRatio"
    assert [(r.name, r.weight) for r in fit._scorer.strategy.resources] == [("cpu", 1)]


def test_v1beta1_pod_topology_spread_defaulting_in_a_configuration(tmp_path):
    """v1beta1 (1.20-1.22) defaults defaultingType to List when constraints are given."""
    p = _case_with_config(tmp_path, "1.22", """
        apiVersion: kubescheduler.config.k8s.io/v1beta1
        kind: KubeSchedulerConfiguration
        profiles:
        - pluginConfig:
          - name: PodTopologySpread
            args:
              defaultConstraints: [{maxSkew: 3, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]
        """)
    args = _load(p).profile.plugin_args["PodTopologySpread"]
    assert not args["systemDefaulted"] and [c.max_skew for c in args["defaultConstraints"]] == [3]
    # the v1beta2 types of a 1.22 case: omitted means System, which allows no constraints
    q = _case(tmp_path, "1.22", "PodTopologySpread",
              "defaultConstraints: [{maxSkew: 3, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]")
    assert _error(q) == (f'{q}:9: profile.pluginConfig.PodTopologySpread.defaultConstraints: when .defaultingType '
                         'is "System", .defaultConstraints must be empty')


# ---- item: errors inside a KubeSchedulerConfiguration are at that file's line ----------------------


def _both(tmp_path, capsys, version: str, config_body: str) -> str:
    """The error of a case whose profile is a configuration file, from loading (and
    building the framework) and from `kspread validate`, which must agree."""
    p = _case_with_config(tmp_path, version, config_body)
    msg = _error(p)
    assert cli_main(["validate", str(p)]) == 1
    assert capsys.readouterr().out.strip() == msg
    return msg


def test_duplicate_key_in_a_configuration_file(tmp_path, capsys):
    msg = _both(tmp_path, capsys, "1.30", """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins:
            score:
              enabled:
              - name: ImageLocality
                weight: 2
                weight: 3
        """)
    assert msg == (f"{tmp_path / 'sched.yaml'}:9: profiles[0].plugins.score.enabled[0]: duplicate key 'weight' "
                   "(lines 8 and 9)")


def test_negative_weight_in_a_configuration_file(tmp_path, capsys):
    msg = _both(tmp_path, capsys, "1.30", """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins:
            multiPoint:
              enabled:
              - {name: ImageLocality, weight: -2}
        """)
    assert msg == (f"{tmp_path / 'sched.yaml'}:7: profiles[0].plugins.multiPoint.enabled[0].weight: a score weight "
                   "must not be negative (0 or unset means 1) (got -2)")
    # as in a case's own profile
    q = write_case(tmp_path, """
        version: "1.30"
        profile: {score: [{name: ImageLocality, weight: -2}]}
        nodes: [n1]
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "own.yaml")
    assert _error(q) == f"{q}:4: profile.score[0].weight: -2 is less than the minimum of 0 (got -2)"


def test_plugin_kspread_does_not_implement_is_at_the_configuration_line(tmp_path, capsys):
    msg = _both(tmp_path, capsys, "1.21", """
        apiVersion: kubescheduler.config.k8s.io/v1beta1
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins:
            filter:
              enabled:
              - name: NodeLabel
        """)
    assert msg == (f"{tmp_path / 'sched.yaml'}:7: profiles[0].plugins.filter.enabled[0]: plugin 'NodeLabel' is not "
                   "implemented by kspread for version 1.21")


def test_invalid_default_args_of_an_enabled_plugin(tmp_path, capsys):
    """v1beta1 gives RequestedToCapacityRatio empty default args, which fail validation."""
    msg = _both(tmp_path, capsys, "1.21", """
        apiVersion: kubescheduler.config.k8s.io/v1beta1
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins:
            score:
              enabled:
              - name: RequestedToCapacityRatio
        """)
    assert msg == (f"{tmp_path / 'sched.yaml'}:7: profiles[0].plugins.score.enabled[0]: plugin "
                   "'RequestedToCapacityRatio' has no pluginConfig entry, and its default arguments are invalid: "
                   "shape: at least one point must be specified")


def test_args_error_in_a_configuration_given_with_kspread_config(tmp_path):
    """--kspread-config: the configuration of every case without a profile."""
    cfg = _config(tmp_path, """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - pluginConfig:
          - name: InterPodAffinity
            args: {hardPodAffinityWeight: 300}
        """)
    p = write_case(tmp_path, """
        version: "1.30"
        nodes: [n1]
        pod: {name: p}
        expect: {feasible: [n1]}
        """)
    res = read_file(p)
    with pytest.raises(CaseError) as e:
        load_case(res.docs[0], str(cfg))
    assert str(e.value) == (f"{cfg}:6: profiles[0].pluginConfig[0].args.hardPodAffinityWeight: not in valid range "
                            "[0-100] (got 300)")
