"""The snapshot's group index agrees with counting pod by pod, under any sequence
of additions and removals."""

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
