"""The snapshot's group index agrees with counting pod by pod, under any sequence
of additions and removals."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kspread.engine.labels import Requirement, Selector
from kspread.engine.model import Node, Pod
from kspread.engine.snapshot import Snapshot
from kspread.engine.versions import Version

NODES = ["n1", "n2", "n3"]
label_sets = st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["a", "b"]), max_size=2)
pods = st.lists(
    st.tuples(st.sampled_from(NODES), st.sampled_from(["default", "other"]), label_sets, st.booleans()),
    max_size=25,
)
selectors = st.lists(
    st.tuples(st.sampled_from(["app", "tier"]), st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
              st.sampled_from(["a", "b"])),
    max_size=2,
).map(lambda reqs: Selector(tuple(Requirement(k, op, (v,) if op in ("In", "NotIn") else ()) for k, op, v in reqs)))


def brute(pod_list, ns, sel):
    out = {}
    for p in pod_list:
        if p.namespace == ns and not p.terminating and sel.matches(p.labels):
            out[p.node_name] = out.get(p.node_name, 0) + 1
    return out


@settings(max_examples=150, deadline=None)
@given(pods, st.lists(st.integers(min_value=0, max_value=24), max_size=10), selectors,
       st.sampled_from(["default", "other"]))
def test_counts_match_brute_force_after_updates(spec, removals, sel, ns):
    v = Version(24)
    all_pods = [Pod(f"p{i}", namespace=pns, labels=lbl, node_name=n, terminating=term)
                for i, (n, pns, lbl, term) in enumerate(spec)]
    snap = Snapshot([Node(n, {}, {}) for n in NODES], all_pods, v)
    live = list(all_pods)
    for r in removals:
        if r < len(live):
            snap.remove_pod(live.pop(r))
    assert dict(snap.counts_by_node(ns, sel)) == brute(live, ns, sel)
    for n in NODES:
        assert snap.get(n).count_matching(ns, sel) == brute(live, ns, sel).get(n, 0)
    rebuilt = Snapshot([Node(n, {}, {}) for n in NODES], live, v)
    assert rebuilt.group_nodes == snap.group_nodes


resource_pods = st.lists(
    st.tuples(st.sampled_from(NODES), st.sampled_from([1, 5, 10, 20]), st.sampled_from([0, 100, 900]),
              st.sampled_from([0, 2**30, 3 * 2**30]), st.sampled_from([0, 2])),
    max_size=20,
)


def _sums(snap, priority):
    s = snap.pod_sums_below(np.arange(len(NODES)), priority)
    return (s.count.tolist(), s.cpu.tolist(), s.memory.tolist(),
            {r: col.tolist() for r, col in s.requests.items() if col.any()})


@settings(max_examples=120, deadline=None)
@given(resource_pods, resource_pods, st.lists(st.integers(min_value=0, max_value=39), max_size=12))
def test_sums_below_kept_as_pods_come_and_go_match_a_fresh_snapshot(first, later, removals):
    """The per-priority sums of the lower-priority pods (``pod_sums_below``, the dry
    run's nodes decided without rows), kept as pods are bound and removed (a new
    resource among them too), are those of a snapshot built from the pods left."""
    from kspread.engine.model import Container

    v = Version(35)

    def pod(i, spec):
        n, prio, cpu, mem, gpu = spec
        req = {"cpu": cpu, "memory": mem} | ({"example.com/gpu": gpu} if gpu else {})
        return Pod(f"p{i}", node_name=n, priority=prio, containers=(Container("c", requests=req),))

    live = [pod(i, spec) for i, spec in enumerate(first)]
    snap = Snapshot([Node(n, {}, {}) for n in NODES], live, v)
    for prio in (5, 10, 20):
        _sums(snap, prio)  # kept from here on
    for i, spec in enumerate(later):
        p = pod(100 + i, spec)
        snap.add_pod(p)
        live.append(p)
    for r in removals:
        if r < len(live):
            snap.remove_pod(live.pop(r))
    fresh = Snapshot([Node(n, {}, {}) for n in NODES], live, v)
    for prio in (5, 10, 20, 30):
        assert _sums(snap, prio) == _sums(fresh, prio)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(NODES), max_size=20), st.lists(st.sampled_from(NODES), max_size=10),
       st.lists(st.integers(min_value=0, max_value=29), max_size=14), st.booleans())
def test_each_nodes_pod_order_is_upstreams_slice_after_removals(first, later, removals, rows_early):
    """NodeInfo.RemovePod (removeFromSlice) moves the node's last pod into the removed
    one's place; preemption reads that order (victims tied on priority and start time).
    The NodeInfo's pods and the pod table's rows (built before or after the changes)
    follow a Go slice's swap-removal."""
    v = Version(35)
    live = [Pod(f"p{i}", node_name=n) for i, n in enumerate(first)]
    snap = Snapshot([Node(n, {}, {}) for n in NODES], live, v)
    want = {n: [p.key for p in live if p.node_name == n] for n in NODES}
    if rows_early:
        snap.pod_rows(np.arange(len(NODES)))  # the table exists while pods come and go
    for i, n in enumerate(later):
        p = Pod(f"q{i}", node_name=n)
        snap.add_pod(p)
        live.append(p)
        want[n].append(p.key)
    for r in removals:
        if r < len(live):
            p = live.pop(r)
            snap.remove_pod(p)
            s = want[p.node_name]
            j = s.index(p.key)
            s[j] = s[-1]
            s.pop()
    assert {n: list(snap.get(n).pods) for n in NODES} == want
    rows = snap.pod_rows(np.arange(len(NODES)))
    got: dict[str, list[str]] = {n: [] for n in NODES}
    for k, p in zip(rows.node.tolist(), rows.pods):
        got[NODES[k]].append(p.key)
    assert got == want


@settings(max_examples=120, deadline=None)
@given(resource_pods, st.lists(st.tuples(st.booleans(), st.integers(min_value=0, max_value=39)), max_size=30),
       st.sampled_from([1, 3, 100]))
def test_least_left_bounds_every_nodes_left_as_pods_come_and_go(first, steps, read_every):
    """``least_left`` (NodeResourcesFit's "fits every node" test) is never above what a
    node has left of each resource (and the pod count), and ``bounds`` (the resource
    scorers' int64 check) hold every value of the requested and non-zero columns, read
    after every ``read_every`` binding or removal, over the change log and through a
    recomputation; computed afresh they are the least and the largest."""
    from kspread.engine.model import Container

    v = Version(35)
    nodes = [Node(n, {"cpu": 2000, "memory": 4 * 2**30, "pods": 6, "example.com/gpu": 4}, {}) for n in NODES]

    def pod(i, spec):
        n, _, cpu, mem, gpu = spec
        req = {"cpu": cpu, "memory": mem} | ({"example.com/gpu": gpu} if gpu else {})
        return Pod(f"p{i}", node_name=n, containers=(Container("c", requests=req),))

    live = [pod(i, spec) for i, spec in enumerate(first)]
    snap = Snapshot(nodes, live, v)
    resources = ["pods", "cpu", "memory", "example.com/gpu"]

    def left(r):
        used = snap.pod_count if r == "pods" else snap.requested(r)
        return (snap.allocatable(r) - used).tolist()

    columns = [("requested", "cpu"), ("requested", "memory"), ("requested", "example.com/gpu"),
               ("non_zero", "cpu"), ("non_zero", "memory")]

    def column(kind, r):
        return (snap.requested(r) if kind == "requested" else snap.non_zero_requested(r)).tolist()

    for r in resources:
        assert snap.least_left(r) == min(left(r))
    for kind, r in columns:
        assert snap.bounds(kind, r) == (min(column(kind, r)), max(column(kind, r)))
    for k, (add, j) in enumerate(steps):
        if add:
            p = pod(200 + k, first[j % len(first)] if first else ("n1", 0, 900, 2**30, 2))
            snap.add_pod(p)
            live.append(p)
        elif j < len(live):
            snap.remove_pod(live.pop(j))
        if k % read_every == 0:
            for r in resources:
                assert snap.least_left(r) <= min(left(r))
            for kind, r in columns:
                lo, hi = snap.bounds(kind, r)
                assert lo <= min(column(kind, r)) and hi >= max(column(kind, r))
    snap.LEAST_LEFT_ROWS = -1  # (every node read again: the least, the bounds tight)
    for r in resources:
        assert snap.least_left(r) == min(left(r))
    for kind, r in columns:
        assert snap.bounds(kind, r) == (min(column(kind, r)), max(column(kind, r)))
