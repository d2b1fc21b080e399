"""KubeSchedulerConfiguration files read into the Profile upstream would run."""

from __future__ import annotations

import textwrap

import pytest

from kspread.engine.framework.profile import default_profile
from kspread.engine.versions import Version
from kspread.errors import CaseError
from kspread.format.config import accepted_apis, load_config

FILTER_ORDER = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
                "VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits",
                "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity"]


def cfg(tmp_path, body: str, name: str = "sched.yaml") -> str:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body).lstrip())
    return str(p)


def names(refs):
    return [r.name for r in refs]


def weighted(refs):
    return [(r.name, r.weight) for r in refs]


def v(minor: int, **gates) -> Version:
    return Version(minor, gates)


# ---- defaults --------------------------------------------------------------------------

@pytest.mark.parametrize("api,minor", [("v1", 25), ("v1", 30), ("v1", 37), ("v1beta3", 23), ("v1beta3", 28)])
def test_multipoint_defaults_give_default_profile_sets_and_weights(tmp_path, api, minor):
    p = load_config(cfg(tmp_path, f"""
        apiVersion: kubescheduler.config.k8s.io/{api}
        kind: KubeSchedulerConfiguration
    """), v(minor))
    dp = default_profile(v(minor))
    assert set(names(p.filter)) == set(names(dp.filter))
    assert dict(weighted(p.score)) == dict(weighted(dp.score))
    assert names(p.post_filter) == names(dp.post_filter)
    # upstream's MultiPoint order (v1/default_plugins.go)
    order = [n for n in FILTER_ORDER if n in names(dp.filter)]
    assert names(p.filter)[: len(order)] == order
    assert p.pre_filter is None and p.pre_score is None
    assert p.scheduler_name == "default-scheduler"
    assert p.percentage_of_nodes_to_score == 0  # upstream default: adaptive
    assert p.other_extension_points["queueSort"] == ("PrioritySort",)
    assert p.other_extension_points["bind"] == ("DefaultBinder",)
    assert p.extenders == [] and p.plugin_config == {}


def test_v1_default_profile_1_30_exact(tmp_path):
    p = load_config(cfg(tmp_path, """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - schedulerName: default-scheduler
    """), v(30))
    assert names(p.filter) == FILTER_ORDER
    assert weighted(p.score) == [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                                 ("VolumeBinding", 1), ("PodTopologySpread", 2), ("InterPodAffinity", 2),
                                 ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)]
    assert names(p.post_filter) == ["DefaultPreemption"]
    assert p.other_extension_points["preEnqueue"] == ("SchedulingGates",)
    assert p.config_file.endswith("sched.yaml")


def test_v1beta2_defaults_have_v1beta2_weights(tmp_path):
    path = cfg(tmp_path, """
        apiVersion: kubescheduler.config.k8s.io/v1beta2
        kind: KubeSchedulerConfiguration
    """)
    for minor in (22, 23, 27):
        p = load_config(path, v(minor))
        assert weighted(p.score) == [("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1),
                                     ("InterPodAffinity", 1), ("NodeResourcesFit", 1), ("NodeAffinity", 1),
                                     ("PodTopologySpread", 2), ("TaintToleration", 1)], minor
        assert names(p.filter) == FILTER_ORDER
        # v1beta2 lists PreFilter / PreScore separately, in its own order
        assert names(p.pre_score) == ["InterPodAffinity", "PodTopologySpread", "TaintToleration", "NodeAffinity"]
    assert names(load_config(path, v(22)).pre_filter) == [
        "NodeResourcesFit", "NodePorts", "PodTopologySpread", "InterPodAffinity", "VolumeBinding", "NodeAffinity"]


def test_v1beta1_defaults_per_version(tmp_path):
    path = cfg(tmp_path, """
        apiVersion: kubescheduler.config.k8s.io/v1beta1
        kind: KubeSchedulerConfiguration
    """)
    p20 = load_config(path, v(20))
    assert names(p20.filter) == [
        "NodeUnschedulable", "NodeResourcesFit", "NodeName", "NodePorts", "NodeAffinity", "VolumeRestrictions",
        "TaintToleration", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding",
        "VolumeZone", "PodTopologySpread", "InterPodAffinity"]
    assert names(load_config(path, v(21)).filter) == FILTER_ORDER
    p22 = load_config(path, v(22))
    assert weighted(p22.score) == [("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1),
                                   ("InterPodAffinity", 1), ("NodeResourcesLeastAllocated", 1), ("NodeAffinity", 1),
                                   ("NodePreferAvoidPods", 10000), ("PodTopologySpread", 2), ("TaintToleration", 1)]
    # SelectorSpread only while DefaultPodTopologySpread is off
    p20off = load_config(path, v(20, DefaultPodTopologySpread=False))
    assert ("SelectorSpread", 1) in weighted(p20off.score)
    assert "SelectorSpread" not in names(p20.score)


# ---- merging ----------------------------------------------------------------------------

MULTIPOINT = """
    apiVersion: kubescheduler.config.k8s.io/v1beta3
    kind: KubeSchedulerConfiguration
    percentageOfNodesToScore: 50
    profiles:
    - schedulerName: default-scheduler
      plugins:
        multiPoint:
          enabled:
          - name: TaintToleration        # replaces the default in place: weight unset -> 1
          - name: SelectorSpread
            weight: 4
          disabled:
          - name: ImageLocality
        score:
          enabled:
          - name: PodTopologySpread      # explicit Score setting: goes first, its weight wins
            weight: 7
          disabled:
          - name: NodeAffinity           # Score only: NodeAffinity still filters and pre-scores
        preFilter:
          disabled:
          - name: '*'
      pluginConfig:
      - name: PodTopologySpread
        args:
          kind: PodTopologySpreadArgs
          defaultingType: List
          defaultConstraints:
          - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
    - schedulerName: no-filters
      plugins:
        filter:
          disabled: [{name: '*'}]
"""


def test_multipoint_merge_and_precedence(tmp_path):
    p = load_config(cfg(tmp_path, MULTIPOINT), v(24))
    assert names(p.filter) == FILTER_ORDER
    assert weighted(p.score) == [("PodTopologySpread", 7), ("TaintToleration", 1), ("NodeResourcesFit", 1),
                                 ("VolumeBinding", 1), ("InterPodAffinity", 2),
                                 ("NodeResourcesBalancedAllocation", 1), ("SelectorSpread", 4)]
    assert p.pre_filter == []
    assert names(p.pre_score) == ["TaintToleration", "NodeAffinity", "PodTopologySpread", "InterPodAffinity",
                                  "SelectorSpread"]
    assert p.plugin_config == {"PodTopologySpread": {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "ScheduleAnyway"}]}}
    assert p.percentage_of_nodes_to_score == 50
    assert p.score[0].path == ("profiles", 0, "plugins", "score", "enabled", 0)


def test_second_profile_by_scheduler_name(tmp_path):
    p = load_config(cfg(tmp_path, MULTIPOINT), v(24), "no-filters")
    assert p.scheduler_name == "no-filters"
    assert p.filter == []
    assert weighted(p.score) == weighted(default_profile(v(24)).score)
    # PreFilter is still configured (only Filter was disabled)
    assert names(p.pre_filter) == ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions",
                                   "VolumeBinding", "PodTopologySpread", "InterPodAffinity"]
    assert p.plugin_config == {}
    assert p.percentage_of_nodes_to_score == 50


def test_v1_disable_all_scores_and_enable_one(tmp_path):
    p = load_config(cfg(tmp_path, """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins:
            score:
              disabled: [{name: '*'}]
              enabled: [{name: ImageLocality, weight: 5}, {name: PodTopologySpread}]
            filter:
              disabled: [{name: NodePorts}]
              enabled: [{name: NodePorts}]   # disabled for multiPoint, enabled here: goes last
            multiPoint:
              disabled: [{name: InterPodAffinity}]
    """), v(26))
    assert weighted(p.score) == [("ImageLocality", 5), ("PodTopologySpread", 1)]
    assert names(p.filter) == [n for n in FILTER_ORDER if n not in ("NodePorts", "InterPodAffinity")] + ["NodePorts"]
    assert "InterPodAffinity" not in names(p.pre_score)


def test_v1beta2_enabled_default_replaces_weight_in_place(tmp_path):
    p = load_config(cfg(tmp_path, """
        apiVersion: kubescheduler.config.k8s.io/v1beta2
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins:
            score:
              enabled: [{name: ImageLocality, weight: 5}, {name: NodeAffinity, weight: 0}]
            filter:
              disabled: [{name: NodePorts}]
    """), v(23))
    assert weighted(p.score) == [("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 5),
                                 ("InterPodAffinity", 1), ("NodeResourcesFit", 1), ("NodeAffinity", 1),
                                 ("PodTopologySpread", 2), ("TaintToleration", 1)]
    assert "NodePorts" not in names(p.filter)
    assert "NodePorts" in names(p.pre_filter)


def test_v1beta1_reenabling_a_default_is_a_duplicate(tmp_path):
    path = cfg(tmp_path, """
        apiVersion: kubescheduler.config.k8s.io/v1beta1
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins:
            score:
              enabled:
              - name: InterPodAffinity
                weight: 2
    """)
    with pytest.raises(CaseError, match="already registered as 'ScorePlugin'") as e:
        load_config(path, v(21))
    assert e.value.path == ("profiles", 0, "plugins", "score", "enabled", 0)
    assert e.value.line == 7 and e.value.file == path


def test_v1beta1_disable_then_enable_with_weight(tmp_path):
    p = load_config(cfg(tmp_path, """
        apiVersion: kubescheduler.config.k8s.io/v1beta1
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins:
            score:
              disabled: [{name: NodeResourcesLeastAllocated}, {name: InterPodAffinity}]
              enabled: [{name: NodeResourcesMostAllocated, weight: 3}, {name: InterPodAffinity, weight: 2}]
          pluginConfig:
          - name: PodTopologySpread
            args:
              defaultConstraints:
              - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}
    """), v(22))
    assert weighted(p.score) == [("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1),
                                 ("NodeAffinity", 1), ("NodePreferAvoidPods", 10000), ("PodTopologySpread", 2),
                                 ("TaintToleration", 1), ("NodeResourcesMostAllocated", 3),
                                 ("InterPodAffinity", 2)]
    # v1beta1 defaulting: constraints given -> List
    args = p.plugin_args["PodTopologySpread"]
    assert not args["systemDefaulted"] and [c.max_skew for c in args["defaultConstraints"]] == [1]


def test_v1beta1_1_22_nodresourcesfit_conflicts_with_least_allocated(tmp_path):
    path = cfg(tmp_path, """
        apiVersion: kubescheduler.config.k8s.io/v1beta1
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins:
            score:
              enabled: [{name: NodeResourcesFit}]
    """)
    with pytest.raises(CaseError, match="conflicts with"):
        load_config(path, v(22))
    with pytest.raises(CaseError, match="does not extend ScorePlugin"):
        load_config(path, v(21))


def test_per_profile_percentage_from_1_27(tmp_path):
    path = cfg(tmp_path, """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        percentageOfNodesToScore: 30
        profiles:
        - schedulerName: a
          percentageOfNodesToScore: 70
        - schedulerName: b
    """)
    assert load_config(path, v(27), "a").percentage_of_nodes_to_score == 70
    assert load_config(path, v(27), "b").percentage_of_nodes_to_score == 30
    with pytest.raises(CaseError, match='unknown field "percentageOfNodesToScore"'):
        load_config(path, v(26), "a")


# ---- errors ----------------------------------------------------------------------------

def _err(tmp_path, body, version, name=None) -> CaseError:
    path = cfg(tmp_path, body)
    with pytest.raises(CaseError) as e:
        load_config(path, version, name)
    assert e.value.file == path
    return e.value


V1 = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_api_version_not_accepted_names_both(tmp_path):
    e = _err(tmp_path, V1, v(24))
    assert "1.24 does not accept kubescheduler.config.k8s.io/v1" in str(e) and "v1beta2, v1beta3" in str(e)
    e = _err(tmp_path, V1.replace("/v1\n", "/v1beta3\n"), v(29))
    assert "1.29 does not accept kubescheduler.config.k8s.io/v1beta3" in str(e)
    e = _err(tmp_path, V1.replace("/v1\n", "/v1alpha2\n"), v(18))
    assert "kspread reads" in str(e)
    assert accepted_apis(25) == ["v1beta2", "v1beta3", "v1"]


def test_absent_scheduler_name_lists_profiles(tmp_path):
    e = _err(tmp_path, V1 + "profiles:\n- schedulerName: a\n- schedulerName: b\n", v(30))
    assert "'default-scheduler'" in e.message and "a, b" in e.message
    e = _err(tmp_path, V1 + "profiles:\n- schedulerName: a\n- {}\n", v(30), "a")
    assert e.path == ("profiles", 1, "schedulerName")
    e = _err(tmp_path, V1 + "profiles:\n- schedulerName: a\n- schedulerName: a\n", v(30), "a")
    assert "Duplicate" in e.message and e.line == 5


@pytest.mark.parametrize("plugins,message", [
    ("multiPoint: {enabled: [{name: SelectorSpread}, {name: SelectorSpread}]}", "already registered"),
    ("filter: {enabled: [{name: ImageLocality}]}", "does not extend FilterPlugin"),
    # TaintToleration has no PreFilter in any release (upstream 1.35 refuses it the same way)
    ("preFilter: {enabled: [{name: TaintToleration}]}", "'TaintToleration' does not extend PreFilterPlugin"),
    ("score: {enabled: [{name: ImageLocality, weight: 3000000000}]}", "out of the int32 range"),
    ("score: {enabled: [{name: ImageLocality, weight: high}]}", "weight must be an integer"),
    ("score: {enabled: [{name: NoSuchPlugin}]}", "'NoSuchPlugin' does not exist"),
    ("score: {enabled: [{name: NodePreferAvoidPods}]}", "was removed in version"),
    ("filter: {enable: [{name: NodeName}]}", 'unknown field "enable"'),
    ("bind: {disabled: [{name: '*'}]}", "at least one bind plugin"),
    ("queueSort: {disabled: [{name: '*'}]}", "only one queue sort plugin required"),
    ("queueSort: {enabled: [{name: PrioritySort}, {name: PrioritySort}]}", "already registered as 'QueueSortPlugin'"),
])
def test_plugin_errors(tmp_path, plugins, message):
    e = _err(tmp_path, V1 + f"profiles:\n- plugins:\n    {plugins}\n", v(26))
    assert message in str(e)
    assert e.line is not None


def test_other_errors(tmp_path):
    # extenders are read (tests/test_extenders.py); two binders are refused as upstream refuses them
    e = _err(tmp_path, V1 + "extenders:\n- {urlPrefix: 'http://x', bindVerb: bind}\n"
             "- {urlPrefix: 'http://y', bindVerb: bind}\n", v(30))
    assert e.message == ('Invalid value: "found 2 extenders implementing bind": only one extender can implement '
                         'bind') and e.path == ("extenders",) and e.line == 3
    e = _err(tmp_path, V1 + "percentageOfNodesToScore: 120\n", v(30))
    assert "[0-100]" in e.message
    e = _err(tmp_path, V1 + "profiles:\n- pluginConfig:\n  - name: MyPlugin\n    args: {a: 1}\n", v(30))
    assert "'MyPlugin'" in e.message and "not an in-tree plugin" in e.message and e.line == 5
    e = _err(tmp_path, V1 + "profiles:\n- pluginConfig:\n  - {name: NodeName}\n  - {name: NodeName}\n", v(30))
    assert "Duplicate" in e.message
    e = _err(tmp_path, V1 + "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {kind: FooArgs}\n",
             v(30))
    assert "has to match plugin args" in e.message
    e = _err(tmp_path, V1 + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n"
             "    queueSort: {disabled: [{name: '*'}], enabled: [{name: PrioritySort}]}\n", v(30), "a")
    assert "queueSort must be the same for all profiles" in e.message
    e = _err(tmp_path, V1.replace("/v1\n", "/v1beta2\n") + "profiles:\n- plugins:\n    multiPoint: {}\n", v(25))
    assert 'unknown field "multiPoint"' in e.message


def test_error_file_and_line_in_message(tmp_path):
    path = cfg(tmp_path, V1 + "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: Nope\n")
    with pytest.raises(CaseError) as e:
        load_config(path, v(30), path_prefix=("profile", "config"))
    assert str(e.value).startswith(f"{path}:7: profile.config.profiles[0].plugins.score.enabled[0]:")


def test_a_misspelt_kind_is_named_at_its_line(tmp_path):
    path = cfg(tmp_path, """\
        apiVersion: kubescheduler.config.k8s.io/v1
        kindd: KubeSchedulerConfiguration
        """)
    with pytest.raises(CaseError) as e:
        load_config(path, v(30))
    assert e.value.line == 2
    assert "missing required field 'kind' (kind: KubeSchedulerConfiguration); unknown field 'kindd'" in str(e.value)


# ---- the scheduling queue's backoff ---------------------------------------------------------


def test_pod_backoff_seconds_are_read_with_upstream_defaults_and_validation(tmp_path):
    head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    p = load_config(cfg(tmp_path, head), v(35))
    assert (p.pod_initial_backoff_seconds, p.pod_max_backoff_seconds) == (1, 10)
    p = load_config(cfg(tmp_path, head + "podInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 2\n"), v(35))
    assert (p.pod_initial_backoff_seconds, p.pod_max_backoff_seconds) == (2, 2)
    path = cfg(tmp_path, head + "podInitialBackoffSeconds: 0\n")
    with pytest.raises(CaseError, match="podInitialBackoffSeconds: must be greater than 0") as e:
        load_config(path, v(35))
    assert (e.value.file, e.value.line, e.value.path) == (path, 3, ("podInitialBackoffSeconds",))
    path = cfg(tmp_path, head + "podInitialBackoffSeconds: 3\npodMaxBackoffSeconds: 2\n")
    with pytest.raises(CaseError, match="podMaxBackoffSeconds: must be greater than or equal to "
                                        "PodInitialBackoffSeconds") as e:
        load_config(path, v(35))
    assert (e.value.line, e.value.path) == (4, ("podMaxBackoffSeconds",))
    with pytest.raises(CaseError, match="podMaxBackoffSeconds must be an integer"):
        load_config(cfg(tmp_path, head + "podMaxBackoffSeconds: 1.5\n"), v(35))


@pytest.mark.parametrize("minor,scores", [(34, False), (35, True)])
def test_dynamic_resources_scores_zero_in_the_default_profile_from_1_35(tmp_path, minor, scores):
    # v1.35.4: DynamicResources is a Score plugin without PreScore, at weight 2 in the default
    # profile (applyDynamicResources); for a pod without claims its Score is 0 on every node
    from kspread.format.loader import load_case, read_file
    from kspread.workflow.runner import run_loaded
    from tests.helpers import write_case

    assert dict(weighted(default_profile(v(minor)).score)).get("DynamicResources") == (2 if scores else None)
    path = write_case(tmp_path, f"version: '1.{minor}'\nnodes: [n1, n2]\npod: {{name: p}}\nexpect: {{feasible: [n1, n2]}}\n")
    actual = run_loaded(load_case(read_file(path).docs[0])).actual
    assert actual["rawScores"].get("DynamicResources") == ({"n1": 0, "n2": 0} if scores else None)
    assert actual["scores"].get("DynamicResources") == ({"n1": 0, "n2": 0} if scores else None)


@pytest.mark.parametrize("field, value, line, message", [
    ("parallelism", "0", 3, "parallelism: should be an integer value greater than zero (got 0)"),
    ("parallelism", "-4", 3, "parallelism: should be an integer value greater than zero (got -4)"),
    ("parallelism", "2147483648", 3, "parallelism is out of the int32 range (got 2147483648)"),
    ("parallelism", "'16'", 3, "parallelism must be an integer (got '16')"),
    ("clientConnection", "{qps: 50, burst: -1}", 3, "clientConnection.burst: must be non-negative (got -1)"),
    ("percentageOfNodesToScore", "-1", 3, "percentageOfNodesToScore: not in valid range [0-100] (got -1)"),
    ("percentageOfNodesToScore", "101", 3, "percentageOfNodesToScore: not in valid range [0-100] (got 101)"),
    ("podInitialBackoffSeconds", "-1", 3, "podInitialBackoffSeconds: must be greater than 0 (got -1)"),
    ("podMaxBackoffSeconds", "0", 3, ("podMaxBackoffSeconds: must be greater than or equal to "
                                     "PodInitialBackoffSeconds (got 0)")),
])
def test_top_level_numbers_are_validated_as_upstream_validates_them(tmp_path, field, value, line, message):
    # ValidateKubeSchedulerConfiguration (and the component-base client connection's burst)
    head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    path = cfg(tmp_path, head + f"{field}: {value}\n")
    with pytest.raises(CaseError) as e:
        load_config(path, v(35))
    # (the field, then upstream's message, which names it too)
    assert (e.value.line, str(e.value)) == (line, f"{path}:{line}: {field}{'.burst' * (field[0] == 'c')}: {message}")


def test_valid_top_level_numbers_are_read(tmp_path):
    head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    p = load_config(cfg(tmp_path, head + "parallelism: 1\nclientConnection: {burst: 0}\n"
                        "percentageOfNodesToScore: 0\n"), v(35))
    assert (p.pod_initial_backoff_seconds, p.pod_max_backoff_seconds) == (1, 10)
