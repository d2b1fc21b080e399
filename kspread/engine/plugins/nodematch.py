"""Matching a pod against a node: nodeSelector + required node affinity, and which
taints a filter considers. Shared by NodeAffinity, TaintToleration, NodeUnschedulable,
PodTopologySpread (node inclusion policies) and preemption. Whether a toleration
tolerates a taint is ``kspread.engine.corev1helpers``, below the plugins.

Upstream: component-helpers/scheduling/corev1/nodeaffinity (GetRequiredNodeAffinity,
NodeSelector.Match) and plugins/helper (DoNotScheduleTaintsFilterFunc); before the
framework the same logic lived in predicates.PodMatchNodeSelector.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from kspread.engine.labels import DOES_NOT_EXIST, EXISTS, GT, IN, LT, NOT_IN, Requirement, go_int64
from kspread.engine.model import Node, NodeSelectorTerm, Pod, Taint

if TYPE_CHECKING:  # pragma: no cover
    from kspread.engine.snapshot import NodeSet

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"

def _requirement_matches(r: Requirement, labels: Mapping[str, str]) -> bool:
    """A node selector requirement (labels.Requirement semantics, Gt/Lt parse the
    label value as a base-10 int64; a value that does not parse does not match)."""
    op = r.op
    if op == IN:
        return r.key in labels and labels[r.key] in r.values
    if op == NOT_IN:
        return r.key not in labels or labels[r.key] not in r.values
    if op == EXISTS:
        return r.key in labels
    if op == DOES_NOT_EXIST:
        return r.key not in labels
    if op in (GT, LT):
        if r.key not in labels:
            return False
        have = go_int64(labels[r.key])
        want = go_int64(r.values[0]) if len(r.values) == 1 else None
        if have is None or want is None:
            return False
        return have > want if op == GT else have < want
    return False


def term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    """One nodeSelectorTerm: its matchExpressions (on labels) AND its matchFields (on
    metadata.name). A term with neither matches no node."""
    if not term.match_expressions and not term.match_fields:
        return False
    labels = node.labels
    for r in term.match_expressions:
        if not _requirement_matches(r, labels):
            return False
    fields = {"metadata.name": node.name}
    for r in term.match_fields:
        if not _requirement_matches(r, fields):
            return False
    return True


def node_selector_matches(terms: Iterable[NodeSelectorTerm], node: Node) -> bool:
    """The terms are ORed; no terms at all match no node."""
    return any(term_matches(t, node) for t in terms)


_ABSENT = object()


def evaluate_by_selected_labels(
    nodes: NodeSet,
    node_selector: Mapping[str, str],
    term_groups: Iterable[Iterable[NodeSelectorTerm]],
    fn: Callable[[Node], int],
    dtype=np.intp,
) -> np.ndarray:
    """``fn(node)`` for every node, where ``fn`` reads only the labels a nodeSelector and
    node selector terms name (and the node's name when a term has matchFields): it runs
    once per distinct combination of those values, on a node that carries just them."""
    keys: set[str] = set(node_selector)
    by_name = False
    for terms in term_groups:
        for term in terms:
            keys.update(r.key for r in term.match_expressions)
            by_name = by_name or bool(term.match_fields)
    return evaluate_by_label_keys(nodes, keys, by_name, fn, dtype)


def evaluate_by_label_keys(nodes: NodeSet, keys: Iterable[str], by_name: bool, fn: Callable[[Node], int],
                           dtype=np.intp) -> np.ndarray:
    """``fn(node)`` for every node, where ``fn`` reads only the labels ``keys`` (and the
    node's name when ``by_name``): it runs once per distinct combination of their values,
    on a node that carries just them."""
    key_list = tuple(sorted(set(keys)))

    def view_of(node: Node) -> tuple:
        labels = node.labels
        return (tuple(labels.get(k, _ABSENT) for k in key_list), node.name if by_name else None)

    def run(view: tuple) -> int:
        values, name = view
        return fn(Node(name or "", {k: v for k, v in zip(key_list, values) if v is not _ABSENT}, {}))

    return nodes.evaluate(("labels", key_list, by_name), view_of, run, dtype)


def required_node_affinity_matches_nodes(pod: Pod, nodes: NodeSet) -> np.ndarray:
    """``required_node_affinity_matches`` for every node (a bool array)."""
    aff = pod.affinity
    required = aff.node_affinity.required if aff is not None and aff.node_affinity is not None else None
    if required is None and not pod.node_selector:
        return np.ones(len(nodes), bool)
    snap = nodes.snapshot
    if snap is None or nodes.positions is None:
        return evaluate_by_selected_labels(nodes, pod.node_selector, (required or (),),
                                           lambda n: required_node_affinity_matches(pod, n), bool)
    # (over every node of the snapshot, once per nodeSelector and required terms)
    every = snap.static_memo(("required node affinity", tuple(sorted(pod.node_selector.items())), required),
                             lambda: evaluate_by_selected_labels(snap.nodes(), pod.node_selector, (required or (),),
                                                                 lambda n: required_node_affinity_matches(pod, n),
                                                                 bool))
    return every if nodes.positions is snap.all_positions else every[nodes.positions]


def required_node_affinity_matches(pod: Pod, node: Node) -> bool:
    """``GetRequiredNodeAffinity(pod).Match(node)``: the pod's nodeSelector (every
    label equal) AND, when the pod has requiredDuringSchedulingIgnoredDuringExecution,
    one of its terms."""
    labels = node.labels
    for k, v in pod.node_selector.items():
        if k not in labels or labels[k] != v:
            return False
    aff = pod.affinity
    if aff is not None and aff.node_affinity is not None and aff.node_affinity.required is not None:
        return node_selector_matches(aff.node_affinity.required, node)
    return True


def do_not_schedule_taints(taint: Taint) -> bool:
    """``helper.DoNotScheduleTaintsFilterFunc``: NoSchedule and NoExecute taints."""
    return taint.effect in (NO_SCHEDULE, NO_EXECUTE)


def preference_expressions_match(term: NodeSelectorTerm, node: Node) -> bool:
    """A preferred term as the scheduler matched it up to 1.20
    (NodeSelectorRequirementsAsSelector over matchExpressions only): matchFields are
    ignored and a term without expressions matches no node."""
    if not term.match_expressions:
        return False
    return all(_requirement_matches(r, node.labels) for r in term.match_expressions)


def default_normalize_scores(max_priority: int, reverse: bool, scores: np.ndarray) -> np.ndarray:
    """``helper.DefaultNormalizeScore`` (``NormalizeReduce`` before the framework):
    ``max * s // maxCount`` in int64, reversed as ``max - that`` when asked; when every
    score is 0, all become 0 (or ``max`` when reversed)."""
    max_count = max(int(scores.max()), 0) if len(scores) else 0
    if max_count == 0:
        return np.full(len(scores), max_priority, np.int64) if reverse else scores
    s = max_priority * scores // max_count
    return max_priority - s if reverse else s


def default_normalize_score(max_priority: int, reverse: bool, scores) -> None:
    """``default_normalize_scores`` over a list of NodeScores, in place."""
    out = default_normalize_scores(max_priority, reverse, np.array([ns.score for ns in scores], np.int64))
    for ns, v in zip(scores, out.tolist()):
        ns.score = v
