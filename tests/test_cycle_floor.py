"""The fixed cost of a cycle (issue 19, "The floor"): the shortcuts that cut it give
exactly what the general path gives."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kspread.engine.framework.interface import Filtered
from kspread.engine.framework.status import SUCCESS, CycleState
from kspread.engine.model import (
    Affinity,
    Container,
    ContainerPort,
    Pod,
    PodAffinityRules,
    Toleration,
    replace_pod,
)
from kspread.engine.plugins.podtopologyspread import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY
from kspread.engine.plugins.resource_allocation import (
    UsageColumn,
    balanced_change_row,
    balanced_change_scores,
    balanced_std_row,
    balanced_std_scores,
    least_requested_row,
    least_requested_scores,
    weighted_average_row,
    weighted_averages,
)
from kspread.engine.scheduler import Scheduler, run_case
from kspread.engine.snapshot import ColumnMemo, PodEntry, PodRequestCache
from kspread.engine.versions import Version, resource_scoring
from kspread.format.case import build_case

ZONE = "topology.kubernetes.io/zone"


def test_replace_pod_is_dataclasses_replace():
    pod = Pod("a", "ns", {"x": "y"}, priority=3, nominated_node="n2", tolerations=(Toleration("k"),),
              start_time=1.5)
    for changes in ({"node_name": "n1", "nominated_node": None}, {"nominated_node": "n3"}, {}):
        fast, slow = replace_pod(pod, **changes), dataclasses.replace(pod, **changes)
        assert type(fast) is Pod and fast is not pod
        assert [getattr(fast, f.name) for f in dataclasses.fields(Pod)] == \
            [getattr(slow, f.name) for f in dataclasses.fields(Pod)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        replace_pod(pod).name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        replace_pod(pod, nosuch=1)


def _scheduler(extra: dict | None = None) -> Scheduler:
    data = {"nodes": ["n1", "n2"], "pod": {"name": "p", "requests": {"cpu": "100m"}}, **(extra or {})}
    return Scheduler(build_case(data, "t"))


@pytest.mark.parametrize("bad,shown", [([-1, 50], -1), ([50, 101], 101), ([-(2**62), 0], -(2**62))])
def test_score_out_of_range_is_an_error(bad, shown):
    sched = _scheduler()
    plugin = next(sp.plugin for sp in sched.framework.score_plugins if sp.plugin.name == "NodeResourcesFit")
    plugin.score_nodes = lambda state, pod, nodes: np.array(bad, np.int64)  # type: ignore[method-assign]
    r = sched.schedule_one(sched.case.incoming[0])
    assert r.error == ('applying score defaultWeights on Score plugins: plugin "NodeResourcesFit" returns an '
                       f"invalid score {shown}, it should in the range of [0, 100] after normalizing")


def test_scores_at_the_ends_of_the_range_are_no_error():
    sched = _scheduler()
    plugin = next(sp.plugin for sp in sched.framework.score_plugins if sp.plugin.name == "NodeResourcesFit")
    plugin.score_nodes = lambda state, pod, nodes: np.array([0, 100], np.int64)  # type: ignore[method-assign]
    r = sched.schedule_one(sched.case.incoming[0])
    assert r.error is None and r.scores is not None and r.scores.weighted["NodeResourcesFit"] == {"n1": 0, "n2": 100}


def test_unschedulable_node_is_rejected_unless_tolerated():
    nodes = [{"name": "n1", "unschedulable": True}, "n2"]
    sched = _scheduler({"nodes": nodes})
    r = sched.schedule_one(sched.case.incoming[0])
    assert r.statuses["n1"].reasons == ("node(s) were unschedulable",) and r.statuses["n1"].plugin == "NodeUnschedulable"
    assert r.feasible == ["n2"]
    tol = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    sched = _scheduler({"nodes": nodes, "pod": {"name": "p", "tolerations": tol}})
    assert sched.schedule_one(sched.case.incoming[0]).feasible == ["n1", "n2"]


def _spread(match_label_keys: list[str]) -> tuple[Scheduler, object]:
    default = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
    if match_label_keys:
        default["matchLabelKeys"] = match_label_keys
    data = {
        "version": "1.33",
        "profile": {"filter": ["PodTopologySpread"], "score": ["PodTopologySpread"], "pluginConfig": {"PodTopologySpread": {"defaultingType": "List",
                                                           "defaultConstraints": [default]}}},
        "nodes": ["n1", "n2"], "zones": {"a": ["n1"], "b": ["n2"]},
        "owners": [{"kind": "Service", "name": "s", "selector": {"team": "x"}}],
        "pod": {"name": "p", "labels": {"team": "x", "app": "one"}},
    }
    sched = Scheduler(build_case(data, "t"))
    return sched, sched.framework.plugin("PodTopologySpread")


def test_default_constraints_made_once_without_match_label_keys():
    _, pts = _spread([])
    a = Pod("a", labels={"team": "x", "app": "one"})
    b = Pod("b", labels={"team": "x", "app": "two"})
    first = pts._constraints(a, DO_NOT_SCHEDULE)  # type: ignore[attr-defined]
    assert [str(c.selector) for c in first] == [str(c.selector) for c in pts._constraints(b, DO_NOT_SCHEDULE)]  # type: ignore[attr-defined]
    assert pts._constraints(a, SCHEDULE_ANYWAY) == []  # type: ignore[attr-defined]
    assert set(pts._defaults_by_action) == {DO_NOT_SCHEDULE, SCHEDULE_ANYWAY}  # type: ignore[attr-defined]


def test_default_constraints_with_match_label_keys_are_made_per_pod():
    """(Upstream then replaces each default constraint's selector with the pod's default
    selector, so matchLabelKeys changes nothing; the defaults are still made per pod.)"""
    _, pts = _spread(["app"])
    a = Pod("a", labels={"team": "x", "app": "one"})
    b = Pod("b", labels={"team": "x", "app": "two"})
    for pod in (a, b):
        sel = pts._constraints(pod, DO_NOT_SCHEDULE)[0].selector  # type: ignore[attr-defined]
        assert sel.matches({"team": "x", "app": "one"}) and sel.matches({"team": "x", "app": "two"})
        assert not sel.matches({"team": "y"})
    assert pts._defaults_by_action == {}  # type: ignore[attr-defined]


def test_sequence_binds_and_nominations_keep_the_pods_fields():
    data = {"nodes": [{"name": "n1", "allocatable": {"cpu": "1", "pods": 5}}],
            "pods": [{"name": "low", "node": "n1", "priority": 1, "requests": {"cpu": "800m"}}],
            "schedule": [{"name": "a", "labels": {"k": "v"}, "requests": {"cpu": "100m"}},
                         {"name": "hi", "priority": 10, "requests": {"cpu": "500m"}}]}
    sched, _, placements = run_case(build_case(data, "t"))
    assert placements == {"a": "n1", "hi": "n1"}
    bound = sched.bound["a"]
    assert type(bound) is Pod and bound.node_name == "n1" and bound.labels == {"k": "v"}


# ---- the scores kept across cycles (ColumnMemo): each row's formula against the arrays' ----------

UNLIMITED = 2**62
amount = st.one_of(st.integers(0, 10**6), st.integers(0, 64 << 30), st.just(UNLIMITED), st.just(0))
ROWS = st.integers(1, 4).flatmap(
    lambda k: st.lists(st.lists(st.tuples(amount, amount), min_size=k, max_size=k), min_size=1, max_size=30))


@settings(max_examples=80)
@given(ROWS, st.booleans(), st.data())
def test_rows_match_the_array_formulas(rows, mixed, data):
    k = len(rows[0])
    present = [[data.draw(st.booleans()) if mixed else True for _ in range(k)] for _ in rows]
    added = [data.draw(st.integers(0, 10**6)) for _ in range(k)]
    weights = [data.draw(st.integers(1, 5)) for _ in range(k)]
    cols = []
    for j in range(k):
        before = np.array([row[j][0] for row in rows], np.int64)
        alloc = np.array([row[j][1] for row in rows], np.int64)
        cols.append(UsageColumn(weights[j], alloc, before + added[j], before, np.array([p[j] for p in present], bool)))
    n = len(rows)
    usage = [[(weights[j], row[j][1], row[j][0] + added[j], row[j][0], pres[j]) for j in range(k)]
             for row, pres in zip(rows, present)]
    assert balanced_change_scores(cols, 100, n).tolist() == [balanced_change_row(u, 100) for u in usage]
    std = balanced_std_scores([(c.requested, c.allocatable, c.present) for c in cols], 100, n)
    assert std.tolist() == [balanced_std_row([(r, a, p) for _, a, r, _, p in u], 100) for u in usage]
    for m in (10, 100):
        least = weighted_averages(cols, lambda r, c, m=m: least_requested_scores(r, c, m), n)
        assert least.tolist() == [weighted_average_row([(least_requested_row(r, a, m), w, p) for w, a, r, _, p in u])
                                  for u in usage]


def test_column_memo_refreshes_changed_rows_and_drops_old_keys():
    data = {"nodes": [f"n{i}" for i in range(4)], "pod": {"name": "p"}}
    sched = Scheduler(build_case(data, "t"))
    snap = sched.snapshot
    memo = ColumnMemo()
    calls: list[str] = []

    def whole(nodes):
        calls.append("whole")
        return snap.pod_count[nodes.positions] * 10

    def row(i):
        calls.append(f"row {i}")
        return int(snap.pod_count[i]) * 10

    nodes = snap.nodes(np.array([3, 1, 0, 2], np.intp))
    assert memo.over(nodes, "k", whole, row).tolist() == [0, 0, 0, 0] and calls == ["whole"]
    snap.add_pod(Pod("a", node_name="n1"))
    snap.add_pod(Pod("b", node_name="n1"))
    assert memo.over(nodes, "k", whole, row).tolist() == [0, 20, 0, 0] and calls == ["whole", "row 1"]
    assert memo.over(snap.nodes(np.array([1], np.intp)), "k", whole, row) is None  # under half the nodes
    assert memo.over(nodes, "k", whole, lambda i: None).tolist() == [0, 20, 0, 0]  # nothing changed: no row
    snap.add_pod(Pod("c", node_name="n2"))
    calls.clear()
    assert memo.over(nodes, "k", whole, lambda i: None).tolist() == [0, 20, 0, 10] and calls == ["whole"]
    for k in range(ColumnMemo.KEYS):
        memo.over(nodes, k, whole, row)
    calls.clear()
    assert memo.over(nodes, "k", whole, row).tolist() == [0, 20, 0, 10] and calls == ["whole"]  # "k" was dropped
    # more changed rows than ROWS, or changes no longer logged: every row again
    for j in range(ColumnMemo.ROWS + 1):
        snap.add_pod(Pod(f"x{j}", node_name="n0"))
    calls.clear()
    assert memo.over(nodes, "k", whole, row).tolist() == [0, 20, 650, 10] and calls == ["whole"]
    assert snap.changed_since(snap.column_version - 2) == [0, 0] and snap.changed_since(-1) is None
    assert snap.changed_since(snap.column_version + 1) is None


SCORE_SHAPES = [
    {"requests": {"cpu": "100m", "memory": "500Mi"}},
    {"requests": {"cpu": "1", "ephemeral-storage": "1Gi", "example.com/gpu": 1}},
    {"requests": {"memory": "3Gi"}},
    {},
]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["1.21", "1.22", "1.25", "1.33", "1.36", "1.37"]),
       st.lists(st.sampled_from([{"cpu": "2", "memory": "4Gi", "pods": 4},
                                 {"cpu": "4", "memory": "2Gi", "ephemeral-storage": "3Gi", "example.com/gpu": 2,
                                  "pods": 5},
                                 None]), min_size=1, max_size=5),
       st.lists(st.integers(0, len(SCORE_SHAPES) - 1), min_size=1, max_size=12),
       st.booleans())
def test_sequences_score_as_without_the_column_memo(version, allocs, shapes, weighted):
    """Every cycle's statuses, per-plugin scores and totals, and the placements, with the
    scores kept across cycles and computed afresh; high-priority pods preempt."""
    nodes = [{"name": f"n{i}", **({"allocatable": a} if a else {})} for i, a in enumerate(allocs)]
    schedule = [{"name": f"p{k}", "priority": 10 if k % 5 == 4 else 0, **SCORE_SHAPES[s]}
                for k, s in enumerate(shapes)]
    data: dict = {"version": version, "nodes": nodes, "schedule": schedule}
    if weighted and version >= "1.23":
        res = [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}, {"name": "example.com/gpu", "weight": 2}]
        data["profile"] = {
            "filter": ["NodeResourcesFit"], "score": ["NodeResourcesFit", "NodeResourcesBalancedAllocation"],
            "postFilter": ["DefaultPreemption"], "pluginConfig": {
            "NodeResourcesFit": {"scoringStrategy": {"type": "LeastAllocated", "resources": res}},
            "NodeResourcesBalancedAllocation": {"resources": [{"name": "cpu"}, {"name": "memory"},
                                                              {"name": "example.com/gpu"}]}}}

    def run() -> list:
        out: list = []

        def observe(_sched, r) -> None:
            scores = r.scores.weighted if r.scores is not None else None
            out.append((r.pod.key, r.selected, r.totals, scores, {n: (s.code, s.reasons) for n, s in r.statuses.items()},
                        r.error))

        _, _, placements = run_case(build_case(data, "t"), observe)
        return [out, placements]

    kept = run()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ColumnMemo, "over", lambda self, nodes, key, whole, row, any_size=False: None)
        assert run() == kept


# ---- what a bound pod adds: the entry of the last pod shared by a pod with the same parts ----------

_CONTAINERS = [(), (Container("a", requests={"cpu": 100}),),
               (Container("a", requests={"cpu": 100}, ports=(ContainerPort(80, host_port=8080),)),)]
_AFFINITIES = [None, Affinity(pod_affinity=PodAffinityRules()), Affinity(pod_anti_affinity=PodAffinityRules())]
_LABELS = [{}, {"app": "x"}, {"app": "y"}]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.sampled_from(["default", "b"]),
                          st.booleans(), st.booleans()), min_size=1, max_size=12))
def test_pod_entries_shared_only_between_pods_with_the_same_parts(pods):
    cache = PodRequestCache(Version(37))
    for k, (c, a, lab, ns, copy_labels, overhead) in enumerate(pods):
        labels = dict(_LABELS[lab]) if copy_labels else _LABELS[lab]
        pod = Pod(f"p{k}", ns, labels, containers=_CONTAINERS[c], affinity=_AFFINITIES[a],
                  overhead=_OVERHEAD if overhead else {})
        got, fresh = cache.get(pod), PodEntry(pod, Version(37), {})
        assert cache.get(pod) is got
        assert [getattr(got, f) for f in PodEntry.__slots__] == [getattr(fresh, f) for f in PodEntry.__slots__]


_OVERHEAD = {"cpu": 250}


def test_passing_is_shared_and_read_only():
    a = Filtered.passing(3)
    assert Filtered.passing(3) is a and a.ids.tolist() == [0, 0, 0] and list(a.table) == [SUCCESS]
    with pytest.raises(ValueError, match="read-only"):
        a.ids[0] = 1


@pytest.mark.parametrize("taints", [None, [{"key": "k", "value": "v", "effect": "PreferNoSchedule"}],
                                    [{"key": "k", "value": "v", "effect": "NoSchedule"}]])
def test_taint_toleration_on_untainted_clusters_as_on_any(taints):
    nodes = ["n1", "n2", {"name": "n3", **({"taints": taints} if taints else {})}]
    sched = _scheduler({"nodes": nodes})
    pod = sched.case.incoming[0]
    tt = sched.framework.plugin("TaintToleration")
    state = CycleState()
    tt.pre_score(state, pod, [])  # type: ignore[union-attr]
    all_nodes = sched.snapshot.nodes()
    got = (tt.filter_nodes(state, pod, all_nodes).ids.tolist(), tt.score_nodes(state, pod, all_nodes).tolist())  # type: ignore[union-attr]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("kspread.engine.plugins.tainttoleration._untainted", lambda nodes: False)
        assert got == (tt.filter_nodes(state, pod, all_nodes).ids.tolist(), tt.score_nodes(state, pod, all_nodes).tolist())  # type: ignore[union-attr]
    assert got == {None: ([0, 0, 0], [0, 0, 0]), "PreferNoSchedule": ([0, 0, 0], [0, 0, 1]),
                   "NoSchedule": ([0, 0, 1], [0, 0, 0])}[taints[0]["effect"] if taints else None]


def test_default_selector_follows_each_pods_labels():
    _, pts = _spread([])
    x = Pod("a", labels={"team": "x"})
    y = Pod("b", labels={"team": "y"})
    assert [str(c.selector) for c in pts._constraints(x, DO_NOT_SCHEDULE)] == ["team=x"]  # type: ignore[attr-defined]
    assert pts._constraints(y, DO_NOT_SCHEDULE) == []  # type: ignore[attr-defined]  # no Service selects it
    assert [str(c.selector) for c in pts._constraints(Pod("c", labels={"team": "x"}), DO_NOT_SCHEDULE)] == ["team=x"]  # type: ignore[attr-defined]
    assert pts._constraints(Pod("d", "other", labels={"team": "x"}), DO_NOT_SCHEDULE) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", ["1.26", "1.27", "1.28", "1.37"])
def test_inter_pod_affinity_of_existing_pods_reaches_a_pod_without_terms(version):
    """A pod without pod (anti-)affinity of its own: InterPodAffinity skips only where
    no existing pod has terms (1.27 on for Filter, 1.28 on for Score); else the existing
    pods' required anti-affinity rejects and their preferred affinity scores."""
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
    data = {"version": version, "nodes": ["n1", "n2", "n3"],
            "pods": [{"name": "guard", "node": "n1", "affinity": {"podAntiAffinity": {
                          "requiredDuringSchedulingIgnoredDuringExecution": [term]}}},
                     {"name": "friend", "node": "n2", "affinity": {"podAffinity": {
                          "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10,
                                                                               "podAffinityTerm": term}]}}}],
            "pod": {"name": "p", "labels": {"app": "web"}}}
    sched = Scheduler(build_case(data, "t"))
    r = sched.schedule_one(sched.case.incoming[0])
    assert r.statuses["n1"].reasons == ("node(s) didn't satisfy existing pods anti-affinity rules",)
    assert r.feasible == ["n2", "n3"]
    assert r.scores is not None and r.scores.normalized["InterPodAffinity"] == {"n2": 100, "n3": 0}
    plain = Scheduler(build_case({**data, "pods": []}, "t"))
    r = plain.schedule_one(plain.case.incoming[0])
    skipped = {"1.26": (set(), set()), "1.27": ({"InterPodAffinity"}, set())}.get(
        version, ({"InterPodAffinity"}, {"InterPodAffinity"}))
    assert r.state is not None
    assert ({"InterPodAffinity"} & r.state.skip_filter_plugins, {"InterPodAffinity"} & r.state.skip_score_plugins) \
        == skipped


def test_resource_scoring_flags_one_per_minor():
    assert resource_scoring(Version(30)) is resource_scoring(Version(30, {"SomeGate": True}))
    assert resource_scoring(Version(21)).minor == 21 and not resource_scoring(Version(21)).balanced_std
    assert resource_scoring(Version(22)).balanced_std


@pytest.mark.parametrize("images", [None, [{"names": ["nginx:1"], "sizeBytes": 500_000_000}]])
def test_image_locality_without_node_images_scores_zero(images):
    nodes = ["n1", {"name": "n2", **({"images": images} if images else {})}]
    sched = _scheduler({"nodes": nodes, "pod": {"name": "p", "containers": [{"name": "c", "image": "nginx:1"}]}})
    r = sched.schedule_one(sched.case.incoming[0])
    assert r.scores is not None
    assert r.scores.raw["ImageLocality"] == ({"n1": 0, "n2": 0} if images is None else {"n1": 0, "n2": 22})
