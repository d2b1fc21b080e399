"""Issue 31: PodTopologySpread's PreScore runs as arrays over the snapshot (label and
taint tests once per distinct value). On random clusters (labels present, missing and
empty, taints, existing pods, node affinity, tolerations, inclusion policies, owned pods
with the system default constraints, random candidate nodes) its state, and the scores
and normalized scores it gives, equal a per-node evaluation written the way upstream
writes it (initPreScoreState, then PreScore's count over every node). The snapshot's
column groups (nodes with equal columns computed once) stay equal to groups made
afresh as pods come and go, and sequences schedule alike with and without them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kspread.engine.framework.status import CycleState
from kspread.engine.model import HOSTNAME_LABEL, Pod
from kspread.engine.plugins.nodematch import required_node_affinity_matches
from kspread.engine.plugins.podtopologyspread import (
    DO_NOT_SCHEDULE,
    GATE_NODE_INCLUSION,
    PRE_FILTER_KEY,
    PRE_SCORE_KEY,
    SCHEDULE_ANYWAY,
    CriticalPaths,
    _first_appearance,
    match_node_inclusion_policies,
    node_labels_match_spread_constraints,
    normalize_score_array_v18,
    topology_normalizing_weight,
    value_codes,
)
from kspread.engine.scheduler import Scheduler, run_case
from kspread.engine.snapshot import NodeSet, Snapshot, _ColumnGroups
from kspread.format.case import build_case

ZONE = "topology.kubernetes.io/zone"
RACK = "rack"
KEYS = [ZONE, RACK, HOSTNAME_LABEL]
VERSIONS = ["1.18", "1.19", "1.21", "1.24", "1.25", "1.26", "1.27", "1.33", "1.37"]


def reference(pl, pod: Pod, constraints, nodes) -> tuple[set[str], list[float], list[dict[str, int] | None]]:
    """initPreScoreState and PreScore's counting, node by node: (IgnoredNodes, weights,
    per constraint the domains' counts; None for hostname)."""
    v = pl.version
    snap = pl.handle.snapshot
    require_all = (bool(pod.topology_spread_constraints) or not pl.system_defaulted
                   or not v.pts_system_defaults_relax_topologies)
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for node in nodes:
        if require_all and not node_labels_match_spread_constraints(node.labels, constraints):
            ignored.add(node.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != HOSTNAME_LABEL:
                counts[i].setdefault(node.labels.get(c.topology_key, ""), 0)
    weights = [topology_normalizing_weight(len(nodes) - len(ignored) if c.topology_key == HOSTNAME_LABEL
                                           else len(counts[i])) for i, c in enumerate(constraints)]
    inclusion = v.gate(GATE_NODE_INCLUSION)
    for info in snap.node_list:
        node = info.node
        affinity_ok = required_node_affinity_matches(pod, node)
        if not inclusion and not affinity_ok:
            continue
        if require_all and not node_labels_match_spread_constraints(node.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if inclusion and not match_node_inclusion_policies(c, pod, node, affinity_ok):
                continue
            value = node.labels.get(c.topology_key, "")
            if value in counts[i]:
                counts[i][value] += pl._count_on(pod, c, info)
    return ignored, weights, [None if c.topology_key == HOSTNAME_LABEL else counts[i]
                              for i, c in enumerate(constraints)]


def reference_scores(pl, pod: Pod, constraints, ignored, weights, counts, infos) -> list[int]:
    """Score per node (scoring.go): the constraints' scoreForCount summed in order, rounded."""
    out = []
    for info in infos:
        node = info.node
        if node.name in ignored:
            out.append(0)
            continue
        score = 0.0
        for i, c in enumerate(constraints):
            if c.topology_key not in node.labels:
                continue
            if c.topology_key == HOSTNAME_LABEL:
                cnt = pl._count_on(pod, c, info)
            else:
                cnt = counts[i].get(node.labels[c.topology_key], 0)
            score += float(cnt) * weights[i] + float(c.max_skew - 1)
        out.append(int(np.floor(score + 0.5)) if pl.version.pts_score_rounds else int(score))
    return out


def reference_v18(pl, pod: Pod, constraints, nodes, infos) -> list[int]:
    """1.18 (its PreScore and Score, node by node): NodeNameSet, pair counts, the sum of
    a node's pairs."""
    names: set[str] = set()
    pairs: dict[tuple[str, str], int] = {}
    for node in nodes:
        if node_labels_match_spread_constraints(node.labels, constraints):
            for c in constraints:
                pairs.setdefault((c.topology_key, node.labels[c.topology_key]), 0)
            names.add(node.name)
    for info in pl.handle.snapshot.node_list:
        node = info.node
        if not required_node_affinity_matches(pod, node) or not node_labels_match_spread_constraints(node.labels,
                                                                                                     constraints):
            continue
        for c in constraints:
            pair = (c.topology_key, node.labels[c.topology_key])
            if pair in pairs:
                pairs[pair] += pl._count_on(pod, c, info)
    return [sum(pairs[(c.topology_key, info.node.labels[c.topology_key])] for c in constraints)
            if info.node.name in names else 0 for info in infos]


label_value = st.sampled_from([None, "", "a", "b", "c"])  # ("": a domain of its own, as upstream reads it)
taint = st.sampled_from([None, {"key": "k", "value": "v", "effect": "NoSchedule"},
                         {"key": "j", "effect": "NoExecute"}, {"key": "k", "value": "v", "effect": "PreferNoSchedule"}])
selector = st.sampled_from([{"matchLabels": {"app": "x"}}, {"matchLabels": {"app": "y"}},
                            {"matchExpressions": [{"key": "app", "operator": "Exists"}]}, {}])
constraint = st.fixed_dictionaries({
    "maxSkew": st.integers(1, 3), "topologyKey": st.sampled_from(KEYS),
    "whenUnsatisfiable": st.sampled_from(["ScheduleAnyway", "ScheduleAnyway", "DoNotSchedule"]),
    "labelSelector": selector,
}, optional={"nodeAffinityPolicy": st.sampled_from(["Honor", "Ignore"]),
             "nodeTaintsPolicy": st.sampled_from(["Honor", "Ignore"])})


@st.composite
def clusters(draw):
    n = draw(st.integers(1, 9))
    nodes = []
    for i in range(n):
        labels = {}
        for key in (ZONE, RACK, "disk"):
            value = draw(label_value)
            if value is not None:
                labels[key] = value
        node: dict = {"name": f"n{i}", "labels": labels}
        t = draw(taint)
        if t is not None:
            node["taints"] = [t]
        nodes.append(node)
    pods = [{"name": f"e{k}", "node": f"n{draw(st.integers(0, n - 1))}",
             "labels": draw(st.sampled_from([{}, {"app": "x"}, {"app": "y"}]))}
            for k in range(draw(st.integers(0, 12)))]
    pod: dict = {"name": "p", "labels": {"app": "x"}}
    owned = draw(st.booleans())
    if owned:
        pod["controller"] = {"kind": "ReplicaSet", "name": "rs"}
    else:
        pod["topologySpreadConstraints"] = draw(st.lists(
            constraint, min_size=1, max_size=3, unique_by=lambda c: (c["topologyKey"], c["whenUnsatisfiable"])))
    if draw(st.booleans()):
        pod["nodeSelector"] = {"disk": draw(st.sampled_from(["a", "b"]))}
    if draw(st.booleans()):
        pod["tolerations"] = [{"key": "k", "operator": "Exists"}]
    data = {"version": draw(st.sampled_from(VERSIONS)), "nodes": nodes, "pods": pods, "pod": pod}
    if owned:
        data["owners"] = [{"kind": "ReplicaSet", "name": "rs", "selector": {"matchLabels": {"app": "x"}}}]
    candidates = draw(st.lists(st.integers(0, n - 1), unique=True))
    return data, sorted(candidates) if draw(st.booleans()) else candidates


@settings(max_examples=300, deadline=None)
@given(clusters(), st.booleans())
def test_pre_score_arrays_equal_the_per_node_evaluation(cluster, as_list):
    data, picked = cluster
    case = build_case(data, "t")
    sched = Scheduler(case)
    pl = sched.framework.plugin("PodTopologySpread")
    pod = case.incoming[0]
    snap = sched.snapshot
    constraints = pl._constraints(pod, SCHEDULE_ANYWAY)
    if not constraints:
        return
    candidates = snap.nodes(np.array(picked, np.intp))
    nodes = candidates.node_objects if as_list else candidates.lazy_node_objects()
    state = CycleState()
    assert pl.pre_score(state, pod, nodes).is_success()
    s = state.read(PRE_SCORE_KEY)
    if not pl.version.pts_weighted_scoring:
        want_raw = reference_v18(pl, pod, constraints, candidates.node_objects, candidates.infos)
        raw = pl.score_nodes(state, pod, candidates)
        assert raw.tolist() == want_raw
        assert [int(pl.score_nodes(state, pod, NodeSet.of(info))[0]) for info in candidates.infos] == want_raw
        if want_raw:
            names = candidates.names if as_list else candidates.lazy_names()
            inside = np.array([node_labels_match_spread_constraints(n.labels, constraints)
                               for n in candidates.node_objects], bool)
            assert pl.normalize_scores(state, pod, names, raw.copy()).tolist() == \
                normalize_score_array_v18(raw, ~inside).tolist()
        return
    ignored, weights, counts = reference(pl, pod, constraints, candidates.node_objects)
    got_ignored = set() if s.ignored is None else {snap.node_list[i].name for i in np.flatnonzero(s.ignored)}
    assert got_ignored == ignored
    assert s.weights == weights
    for c, arr, want in zip(constraints, s.value_counts, counts):
        if want is None:
            assert arr is None
            continue
        _, values = value_codes(snap.nodes(), c.topology_key)
        assert {values[k]: int(arr[k]) for k in np.flatnonzero(arr >= 0)} == want
    if not picked:
        return
    raw = pl.score_nodes(state, pod, candidates)
    want_raw = reference_scores(pl, pod, constraints, ignored, weights, counts, candidates.infos)
    assert raw.tolist() == want_raw
    # one node at a time, as explain scores it (a NodeSet of detached NodeInfos)
    assert [int(pl.score_nodes(state, pod, NodeSet.of(info))[0]) for info in candidates.infos] == want_raw
    names = candidates.names if as_list else candidates.lazy_names()
    normalized = pl.normalize_scores(state, pod, names, raw.copy())
    mask = np.array([name in ignored for name in candidates.names], bool)
    counted = raw[~mask]
    if len(counted):
        lo, hi = int(counted.min()), max(int(counted.max()), 0)
        want = [0 if m else 100 if hi == 0 else 100 * (hi + lo - r) // hi for r, m in zip(raw.tolist(), mask)]
    else:
        want = [0] * len(raw)
    assert normalized.tolist() == want


def reference_pre_filter(pl, pod: Pod, constraints) -> list[dict[str, int]]:
    """calPreFilterState from 1.26 on, node by node: per constraint the matching pods per
    value over the nodes that carry every key and pass the inclusion policies, values
    in the order of their first such node."""
    inclusion = pl.version.gate(GATE_NODE_INCLUSION)
    out: list[dict[str, int]] = [{} for _ in constraints]
    for info in pl.handle.snapshot.node_list:
        node = info.node
        if not node_labels_match_spread_constraints(node.labels, constraints):
            continue
        affinity_ok = required_node_affinity_matches(pod, node)
        if not inclusion and not affinity_ok:
            continue
        for i, c in enumerate(constraints):
            if inclusion and not match_node_inclusion_policies(c, pod, node, affinity_ok):
                continue
            value = node.labels[c.topology_key]
            out[i][value] = out[i].get(value, 0) + pl._count_on(pod, c, info)
    return out


def reference_pre_filter_off_affinity(pl, pod: Pod, constraints) -> list[dict[str, int]]:
    """calPreFilterState before 1.26 (``pts_counts_pods_off_affinity``): the domains are
    the values on the nodes that match the pod's affinity and carry every key (in the
    order of their first such node); every node's matching pods count under its value,
    a missing label under ""."""
    out: list[dict[str, int]] = [{} for _ in constraints]
    nodes = pl.handle.snapshot.node_list
    for info in nodes:
        node = info.node
        if required_node_affinity_matches(pod, node) and node_labels_match_spread_constraints(node.labels,
                                                                                              constraints):
            for i, c in enumerate(constraints):
                out[i].setdefault(node.labels[c.topology_key], 0)
    for info in nodes:
        for i, c in enumerate(constraints):
            value = info.node.labels.get(c.topology_key, "")
            if value in out[i]:
                out[i][value] += pl._count_on(pod, c, info)
    return out


@settings(max_examples=200, deadline=None)
@given(clusters())
def test_pre_filter_counts_equal_the_per_node_evaluation(cluster):
    data, _ = cluster
    case = build_case(data, "t")
    sched = Scheduler(case)
    pl = sched.framework.plugin("PodTopologySpread")
    pod = case.incoming[0]
    constraints = pl._constraints(pod, DO_NOT_SCHEDULE)
    if not constraints:
        return
    state = CycleState()
    assert pl.pre_filter(state, pod).is_success()
    s = state.read(PRE_FILTER_KEY)
    paths = [(list(p.values), list(p.nums)) for p in s.paths]
    filtered = pl.filter_nodes(state, pod, sched.snapshot.nodes())
    got = s.match_num  # (the mapping made of the arrays)
    want = (reference_pre_filter_off_affinity if pl.version.pts_counts_pods_off_affinity
            else reference_pre_filter)(pl, pod, constraints)
    assert [list(m.items()) for m in got] == [list(m.items()) for m in want]  # the order too
    # the critical paths as updating them domain by domain gives them
    want_paths = []
    for m in want:
        p = CriticalPaths()
        for value, num in m.items():
            p.update(value, num)
        want_paths.append((p.values, p.nums))
    assert paths == want_paths
    # Filter from the arrays and from the mapping alike
    again = pl.filter_nodes(state, pod, sched.snapshot.nodes())
    assert filtered.ids.tolist() == again.ids.tolist()
    assert [st.reasons for st in filtered.table] == [st.reasons for st in again.table]


@settings(max_examples=200)
@given(st.lists(st.integers(0, 6), max_size=30))
def test_first_appearance(codes):
    want: list[int] = []
    for c in codes:
        if c not in want:
            want.append(c)
    assert _first_appearance(np.array(codes, np.intp), 7) == want


# ---- column groups ----------------------------------------------------------------------------------


def _fresh_partition(snap: Snapshot) -> list[int]:
    keys: dict = {}
    return [keys.setdefault(snap.column_key(i), len(keys)) for i in range(len(snap.node_list))]


def _partition(codes) -> list[int]:
    seen: dict = {}
    return [seen.setdefault(int(c), len(seen)) for c in codes]


REQUESTS = [{"cpu": "100m", "memory": "500Mi"}, {"cpu": "1"}, {"memory": "1Gi", "ephemeral-storage": "1Gi"}, {}]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.lists(st.tuples(st.booleans(), st.integers(0, 11), st.integers(0, 3)), max_size=60),
       st.sampled_from([0, 2, 64]))
def test_column_groups_stay_the_groups_made_afresh(n, steps, slack):
    data = {"nodes": [{"name": f"n{i}", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 20 + i % 2}}
                      for i in range(n)], "pod": {"name": "p"}}
    snap = Scheduler(build_case(data, "t")).snapshot
    snap._groups = None
    snap.column_groups()
    with pytest.MonkeyPatch.context() as mp:  # (slack 0: renumbered as soon as unused codes outnumber used ones)
        mp.setattr(_ColumnGroups, "SLACK", slack)
        _steps(snap, n, steps, slack)


def _steps(snap: Snapshot, n: int, steps: list, slack: int) -> None:
    bound: list[Pod] = []
    for k, (add, node, req) in enumerate(steps):
        if add or not bound:
            p = build_case({"nodes": ["x"], "pod": {"name": f"q{k}", "requests": REQUESTS[req]}}, "t").incoming[0]
            pod = Pod(p.name, containers=p.containers, node_name=f"n{node % n}")
            snap.add_pod(pod)
            bound.append(pod)
        else:
            snap.remove_pod(bound.pop(node % len(bound)))
        g = snap._groups
        assert g is not None
        assert _partition(g.codes) == _fresh_partition(snap)
        assert all(int(g.codes[g.reps[c]]) == c for c in range(len(g.reps)) if g.members[c])
        assert g.representatives().tolist() == g.reps
        assert len(g.reps) <= 2 * g.live + slack


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["1.21", "1.25", "1.33", "1.37"]), st.integers(4, 24),
       st.lists(st.integers(0, len(REQUESTS) - 1), min_size=1, max_size=30))
def test_sequences_schedule_alike_without_column_groups(version, n, shapes):
    nodes = [{"name": f"n{i}", "allocatable": {"cpu": "2", "memory": "4Gi", "ephemeral-storage": "2Gi", "pods": 4}}
             for i in range(n)]
    schedule = [{"name": f"p{k}", "priority": 10 if k % 7 == 6 else 0, "requests": REQUESTS[s]}
                for k, s in enumerate(shapes)]
    data = {"version": version, "nodes": nodes, "schedule": schedule}

    def run() -> list:
        out: list = []

        def observe(_sched, r) -> None:
            scores = r.scores.weighted if r.scores is not None else None
            out.append((r.pod.key, r.selected, r.totals, scores,
                        {name: (s.code, s.reasons) for name, s in r.statuses.items()}, r.error))

        _, _, placements = run_case(build_case(data, "t"), observe)
        return [out, placements]

    grouped = run()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Snapshot, "column_groups", lambda self: None)
        assert run() == grouped


# ---- resource scores where every node scores every resource ----------------------------------------

ALLOCS = st.sampled_from([{"cpu": "4", "memory": "32Gi", "pods": 110}, {"cpu": "2", "memory": "1Gi", "pods": 5},
                          {"cpu": "8", "memory": "16Gi", "ephemeral-storage": "10Gi", "example.com/gpu": 2,
                           "pods": 20},
                          {"cpu": "0", "memory": "4Gi", "pods": 3}, None])


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["1.21", "1.22", "1.25", "1.33", "1.36", "1.37"]), st.lists(ALLOCS, min_size=1, max_size=6),
       st.lists(st.tuples(st.integers(0, 5), st.sampled_from(REQUESTS)), max_size=12),
       st.tuples(st.integers(0, 5000), st.integers(0, 40 << 30), st.integers(0, 3)), st.booleans())
def test_plain_resource_scores_equal_the_general_formulas(version, allocs, bound, pod, subset):
    from kspread.engine.apis.config import LEAST_ALLOCATED, ResourceSpec, Strategy
    from kspread.engine.plugins.noderesources_scoring import score_columns
    from kspread.engine.plugins.resource_allocation import (
        balanced_change_plain,
        balanced_change_scores,
        balanced_std_plain,
        balanced_std_scores,
        least_allocated_plain,
        plain_columns,
        usage_columns,
    )

    nodes = [{"name": f"n{i}", **({"allocatable": a} if a else {})} for i, a in enumerate(allocs)]
    pods = [{"name": f"e{k}", "node": f"n{i % len(allocs)}", "requests": r} for k, (i, r) in enumerate(bound)]
    case = build_case({"version": version, "nodes": nodes, "pods": pods, "pod": {"name": "p"}}, "t")
    sched = Scheduler(case)
    snap = sched.snapshot
    ns = snap.nodes(np.arange(0, len(allocs), 2, dtype=np.intp)) if subset else snap.nodes()
    v = sched.version
    specs = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    weighted = (ResourceSpec("cpu", 3), ResourceSpec("memory", 1), ResourceSpec("example.com/gpu", 2))
    requests = [pod[0], pod[1], pod[2]]
    for res in (specs, weighted):
        reqs = requests[:len(res)]
        plain = plain_columns(ns, res, reqs, v, False)
        general = score_columns(Strategy(LEAST_ALLOCATED, res), usage_columns(ns, res, reqs, v, False), v, len(ns))
        if plain is not None:
            got = least_allocated_plain(plain, v.max_node_score)
            assert got is None or got.tolist() == general.tolist()
        for use_requested in (False, True):
            plain = plain_columns(ns, res, reqs, v, use_requested)
            if plain is not None:
                cols = usage_columns(ns, res, reqs, v, use_requested)
                assert balanced_change_plain(plain, 100, len(ns), None).tolist() == \
                    balanced_change_scores(cols, 100, len(ns)).tolist()
                assert balanced_std_plain(plain, 100, len(ns)).tolist() == balanced_std_scores(
                    [(c.requested, c.allocatable, c.present) for c in cols], 100, len(ns)).tolist()


# around the bound below which LeastAllocated divides in float64 (a * (max + 1) < 2**53), and
# above it (int64); a request equal to, above and far above the allocatable
_BOUND = 2**53 // 101
_ALLOC = st.one_of(st.integers(1, 4000), st.integers(1, 2**40), st.integers(_BOUND - 1000, _BOUND + 1000),
                   st.integers(_BOUND, 2**53))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_ALLOC, st.integers(0, 2**20), st.integers(1, 3)), min_size=1, max_size=3), st.data())
def test_least_allocated_in_float_equals_the_integer_formula(resources, data):
    """``least_allocated_plain`` (float64 where every allocatable allows it) gives
    ``weighted_averages`` of ``least_requested_scores`` (int64 / exact integers) exactly,
    on requests below, at, just above and far above each allocatable."""
    from kspread.engine.plugins.resource_allocation import (
        UsageColumn,
        least_allocated_plain,
        least_requested_scores,
        weighted_averages,
    )

    n = 6
    cols, plain = [], []
    for alloc, spread, weight in resources:
        a = np.full(n, alloc, np.int64)
        offsets = data.draw(st.lists(st.integers(-spread, spread), min_size=n, max_size=n))
        r = np.array([max(alloc + o, 0) for o in offsets[:3]] + [0, alloc, alloc * 3], np.int64)
        cols.append(UsageColumn(weight, a, r, r, np.ones(n, bool)))
        plain.append((weight, a, r, r, a.astype(np.float64), alloc))
    for max_score in (10, 100):
        want = weighted_averages(cols, lambda req, cap, m=max_score: least_requested_scores(req, cap, m), n)
        got = least_allocated_plain(plain, max_score)
        assert got is not None and got.dtype == np.int64
        assert got.tolist() == want.tolist()


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["1.25", "1.33", "1.34", "1.37"]), st.lists(ALLOCS, min_size=1, max_size=6),
       st.lists(st.tuples(st.integers(0, 5), st.sampled_from(REQUESTS)), max_size=14),
       st.tuples(st.integers(0, 9000), st.integers(0, 40 << 30), st.integers(0, 12 << 30), st.integers(0, 3)),
       st.booleans())
def test_failure_keys_equal_the_per_node_comparisons(version, allocs, bound, pod, subset):
    """NodeResourcesFit's per-node failure keys (which comparisons fail; comparisons that
    fail on no node are skipped by their least room) equal ``failure_key_row``'s
    per-node comparisons on Python integers, over every node and over a subset."""
    from kspread.engine.plugins.noderesources_fit import comparisons, failure_key_row, failure_keys

    nodes = [{"name": f"n{i}", **({"allocatable": a} if a else {})} for i, a in enumerate(allocs)]
    pods = [{"name": f"e{k}", "node": f"n{i % len(allocs)}", "requests": r} for k, (i, r) in enumerate(bound)]
    case = build_case({"version": version, "nodes": nodes, "pods": pods, "pod": {"name": "p"}}, "t")
    sched = Scheduler(case)
    snap = sched.snapshot
    positions = np.arange(0, len(allocs), 2, dtype=np.intp) if subset else snap.all_positions
    request = {"cpu": pod[0], "memory": pod[1], "ephemeral-storage": pod[2], "example.com/gpu": pod[3]}
    plan = comparisons({k: v for k, v in request.items() if v}, sched.version)
    got = failure_keys(plan, snap.nodes(positions), sched.version).tolist()
    assert got == [failure_key_row(plan, snap, int(i), sched.version) for i in positions]
