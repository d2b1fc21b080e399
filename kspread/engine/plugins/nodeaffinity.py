"""NodeAffinity, Filter: the node must match the pod's nodeSelector and required node
affinity (framework/plugins/nodeaffinity; before 1.18 the MatchNodeSelector predicate).

Score: the sum of the weights of the pod's preferred terms that the node matches (plus
those of the ``addedAffinity`` arg), NormalizeScore ``max * s // maxScore`` (0..10 up to
1.16, 0..100 from 1.17; NodeAffinityPriority up to 1.17). By version:

* up to 1.20 a preferred term is matched on its matchExpressions only (matchFields
  ignored, a term without expressions matches nothing); from 1.21 (component-helpers
  nodeaffinity) as a whole node selector term (``preference_matches_whole_term``);
* ``addedAffinity`` (NodeAffinityArgs) exists from 1.21 (``has_added_affinity``): its
  required terms are a filter with the reason "node(s) didn't match scheduler-enforced
  node affinity", checked before the pod's own, and its preferred terms add to the score;
* from 1.30 PreScore returns Skip when the pod has no preferred terms and the arg adds
  none (``pre_score_skips``): the plugin then scores nothing (v1.28.4's and v1.29.14's
  PreScore always writes its state: every node scores 0).

Reason text by version (``err_reason``): "node(s) didn't match node selector" up to
1.20, "node(s) didn't match Pod's node affinity" in 1.21, "node(s) didn't match Pod's
node affinity/selector" from 1.22.

From 1.24 (``prefilter_checks_name_conflict``; 1.24.17, the patch kspread models)
PreFilter rejects with "pod affinity terms conflict" for every node: from 1.27 a pod
whose required terms all select nodes by metadata.name and together name no node; in
1.24-1.26 (``prefilter_conflict_per_term``) a pod whose terms, in order, reach one
whose names intersect to nothing before any term that does not select by name. The PreFilterResult that restricts the
search to the named nodes is not modelled: it changes only which reason the other
nodes report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from kspread.engine.framework.interface import (
    Filtered,
    FilterPlugin,
    Plugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, CycleState, Status, unresolvable
from kspread.engine.labels import IN
from kspread.engine.model import Node, NodeSelectorTerm, Pod, PreferredSchedulingTerm
from kspread.engine.plugins.nodematch import (
    default_normalize_scores,
    evaluate_by_selected_labels,
    node_selector_matches,
    preference_expressions_match,
    required_node_affinity_matches,
    term_matches,
)
from kspread.engine.snapshot import NodeSet
from kspread.engine.versions import Version

ERR_REASON_CONFLICT = "pod affinity terms conflict"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
PRE_SCORE_KEY = "PreScoreNodeAffinity"


def err_reason(version: Version) -> str:
    m = version.minor
    if m <= 20:
        return "node(s) didn't match node selector"
    if m == 21:
        return "node(s) didn't match Pod's node affinity"
    return "node(s) didn't match Pod's node affinity/selector"


def prefilter_checks_name_conflict(version: Version) -> bool:
    return version.minor >= 24


def prefilter_conflict_per_term(version: Version) -> bool:
    """1.24-1.26: PreFilter walks the required terms in order and answers the conflict
    at the first term whose metadata.name requirements intersect to nothing (unless an
    earlier term selects no name, which ends the walk with every node eligible); from
    1.27 only when every term selects by name and their union is empty.
    Checked against the vendored plugins (1.24.17, 1.25.16, 1.26.15, 1.27.16)."""
    return version.minor <= 26


def term_node_names(term) -> set[str] | None:
    """The node names a term's matchFields metadata.name In requirements allow (their
    intersection); None when it has none."""
    names: set[str] | None = None
    for r in term.match_fields:
        if r.key == "metadata.name" and r.op == IN:
            vals = set(r.values)
            names = vals if names is None else names & vals
    return names


def first_term_conflicts(pod: Pod) -> bool:
    """1.24-1.26's walk (``prefilter_conflict_per_term``): True when a term naming no
    node comes before any term that does not select by name."""
    aff = pod.affinity
    if aff is None or aff.node_affinity is None or not aff.node_affinity.required:
        return False
    for term in aff.node_affinity.required:
        names = term_node_names(term)
        if names is None:
            return False
        if not names:
            return True
    return False


def preference_matches_whole_term(version: Version) -> bool:
    """Preferred terms match on expressions and fields from 1.21; on matchExpressions
    only up to 1.20."""
    return version.minor >= 21


def has_added_affinity(version: Version) -> bool:
    """NodeAffinityArgs.addedAffinity exists from 1.21."""
    return version.minor >= 21


def pre_score_skips(version: Version) -> bool:
    """From 1.30 (PR #117024; not in v1.28.4 or v1.29.14) PreScore returns Skip when
    nothing can score."""
    return version.minor >= 30


def preferred_score(terms, node: Node, whole_term: bool) -> int:
    """``PreferredSchedulingTerms.Score``: the summed weight of the matching terms;
    terms of weight 0 never count."""
    total = 0
    for t in terms:
        if t.weight == 0:
            continue
        ok = term_matches(t.preference, node) if whole_term else preference_expressions_match(t.preference, node)
        if ok:
            total += t.weight
    return total


def required_node_names(pod: Pod) -> set[str] | None:
    """The node names the required terms restrict the pod to through matchFields
    metadata.name In (intersection within a term, union over terms); None when
    some term does not restrict by name (every node stays eligible)."""
    aff = pod.affinity
    if aff is None or aff.node_affinity is None or not aff.node_affinity.required:
        return None
    names: set[str] = set()
    for term in aff.node_affinity.required:
        term_names = term_node_names(term)
        if term_names is None:
            return None
        names |= term_names
    return names


@register("NodeAffinity")
class NodeAffinity(Plugin, PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    has_normalize = True
    signs_pods = True

    def node_events(self, hints: bool) -> frozenset[str]:
        # Add | UpdateNodeLabel; UpdateNodeTaint too without hints (issue 109437)
        return frozenset({"Add", "UpdateNodeLabel"} if hints else {"Add", "UpdateNodeLabel", "UpdateNodeTaint"})

    def node_event_hint(self, pod: Pod, old: Node | None, new: Node | None) -> bool:
        """isSchedulableAfterNodeChange (1.35): Queue when the node (added, or updated from
        not matching) matches the added affinity and the pod's required node affinity."""
        if new is None:
            return False
        if self.added_required is not None and not node_selector_matches(self.added_required, new):
            return False
        if not required_node_affinity_matches(pod, new):
            return False
        return old is None or not required_node_affinity_matches(pod, old)

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: the node affinity (NodeAffinitySigner) and the nodeSelector."""
        aff = pod.affinity.node_affinity if pod.affinity is not None else None
        return (("NodeAffinity", repr(aff)), ("NodeSelector", tuple(sorted(pod.node_selector.items()))))

    def __init__(self, args: Mapping[str, Any], handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        self.added_required: tuple[NodeSelectorTerm, ...] | None = None
        self.added_preferred: tuple[PreferredSchedulingTerm, ...] = ()
        # NodeAffinityArgs.addedAffinity, parsed by kspread.engine.framework.args (parse_added_affinity)
        if args.get("addedAffinity") is not None:
            self.added_required, self.added_preferred = args["addedAffinity"]

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        if prefilter_checks_name_conflict(self.version):
            if prefilter_conflict_per_term(self.version):
                if first_term_conflicts(pod):
                    return unresolvable(ERR_REASON_CONFLICT)
            else:
                names = required_node_names(pod)
                if names is not None and not names:
                    return unresolvable(ERR_REASON_CONFLICT)
        return SUCCESS

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return True

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return True

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        """Evaluated once per distinct combination of the node's values of the label
        keys the pod's (and the added) required affinity reads (and its name, when a
        term selects by field)."""
        aff = pod.affinity
        required = aff.node_affinity.required if aff is not None and aff.node_affinity is not None else None
        if self.added_required is None and required is None and not pod.node_selector:
            return Filtered.passing(len(nodes))
        table = [SUCCESS, unresolvable(ERR_REASON_ENFORCED), unresolvable(err_reason(self.version))]

        def status_id(node: Node) -> int:
            if self.added_required is not None and not node_selector_matches(self.added_required, node):
                return 1
            return 0 if required_node_affinity_matches(pod, node) else 2

        terms = (self.added_required or (), required or ())
        return Filtered(evaluate_by_selected_labels(nodes, pod.node_selector, terms, status_id), table)

    # -- PreScore / Score / NormalizeScore

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        aff = pod.affinity
        preferred = aff.node_affinity.preferred if aff is not None and aff.node_affinity is not None else ()
        if pre_score_skips(self.version) and not preferred and not self.added_preferred:
            return SKIP
        state.write(PRE_SCORE_KEY, preferred)
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        """Once per distinct combination of the labels the preferred terms read."""
        preferred = cast("tuple[PreferredSchedulingTerm, ...]", state.read(PRE_SCORE_KEY))  # pre_score's
        whole = preference_matches_whole_term(self.version)

        def score(node: Node) -> int:
            added = preferred_score(self.added_preferred, node, whole)
            return added + preferred_score(preferred, node, whole)

        terms = [t.preference for t in (*self.added_preferred, *preferred)]
        return evaluate_by_selected_labels(nodes, {}, (terms,), score, np.int64)

    def normalize_scores(self, state: CycleState, pod: Pod, names, scores: np.ndarray) -> np.ndarray:
        return default_normalize_scores(self.version.max_node_score, False, scores)
