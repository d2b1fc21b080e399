"""InterPodAffinity: required pod affinity / anti-affinity as a filter, preferred terms as
a score (framework/plugins/interpodaffinity: filtering.go, scoring.go, plugin.go; up to
1.17 the MatchInterPodAffinity predicate and the InterPodAffinityPriority function).

Filter. PreFilter counts, per topology pair (key, value):

* existing: pods whose required anti-affinity terms match the incoming pod, at the
  pair of the node they run on (read from ``NodeInfo.pods_with_required_anti_affinity``);
* affinity: pods that match every required affinity term of the incoming pod, for each
  term's pair;
* anti-affinity: pods that match a required anti-affinity term of the incoming pod.

The incoming pod's counts come from the snapshot's (namespace, labels) group index over
every bound pod, terminating ones included (upstream's NodeInfo.Pods holds them too),
so PreFilter costs time in groups, terms and nodes, not pods. Filter then looks the
node's pairs up. A node fails the pod's affinity when a term's key is missing or its
pair has no matching pod, unless no pod anywhere matches (the affinity map is empty)
and the pod matches its own terms: the first pod of a group with affinity to itself.

Score. Every existing pod matching a preferred term of the incoming pod adds (affinity)
or subtracts (anti-affinity) the term's weight at its node's pair; every existing pod
with affinity adds ``hardPodAffinityWeight`` for each of its required affinity terms and
its preferred weights for each preferred term that matches the incoming pod. A node
scores the sum over its pairs; NormalizeScore maps min..max to 0..MaxNodeScore.

Namespaces. A term covers its ``namespaces``, or the owning pod's namespace when it
names none and has no namespaceSelector. For the incoming pod's terms the selector is
resolved against the cluster's namespaces (listed ones, plus those pods use, which
carry only the API server's ``kubernetes.io/metadata.name`` label from 1.21); an existing
pod's term is matched against the incoming pod's namespace labels.

Version differences are the small functions below (and the gates
PodAffinityNamespaceSelector, MatchLabelKeysInPodAffinity in kspread/engine/versions.py).

Hostname fast path (gate InterPodAffinityHostnameFastPath, alpha off in 1.37; read from
upstream main's filtering.go, see dev/README.md). Terms whose topologyKey is
``kubernetes.io/hostname`` leave the maps: an existing pod's such anti-affinity term, and
the incoming pod's such anti-affinity terms, are checked against the pods of the node being
filtered (which must carry the hostname label); the incoming pod's affinity terms too when
every one of them is host-scoped, and then the first-pod exception holds when no pod
anywhere (on any node, labelled or not) matches them all. The result is the maps' whenever
every node's hostname label is its own value; it differs when two nodes share a value (a
pod on one no longer counts on the other), when the only pods matching host-scoped affinity
terms run on nodes without the label (they now count against the first-pod exception), and
in PreFilter's Skip: with the gate on, any pod anywhere with a host-scoped required
anti-affinity term keeps Filter running, so that a nominated pod's such term is seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kspread.engine.apis.config import DEFAULT_HARD_POD_AFFINITY_WEIGHT
from kspread.engine.framework.interface import (
    Filtered,
    FilterPlugin,
    NodeScore,
    Plugin,
    PodEvent,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, CycleState, Status, unresolvable, unschedulable
from kspread.engine.labels import IN, NOT_IN, NOTHING, Requirement, Selector, as_selector
from kspread.engine.model import HOSTNAME_LABEL, Node, Pod, PodAffinityTerm
from kspread.engine.plugins.nodematch import evaluate_by_label_keys
from kspread.engine.snapshot import NodeInfo, NodeSet, has_pod_affinity
from kspread.engine.versions import Version

NAME = "InterPodAffinity"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME

REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
REASON_AFFINITY_RULES = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules"
# The generic reason that preceded the specific one.
REASON_AFFINITY_NOT_MATCH = "node(s) didn't match pod affinity/anti-affinity"
REASON_AFFINITY_NOT_MATCH_121 = "node(s) didn't match pod affinity/anti-affinity rules"

GATE_NAMESPACE_SELECTOR = "PodAffinityNamespaceSelector"
GATE_MATCH_LABEL_KEYS = "MatchLabelKeysInPodAffinity"
GATE_HOSTNAME_FAST_PATH = "InterPodAffinityHostnameFastPath"

Pair = tuple[str, str]
_NO_VALUE = object()  # a label the node does not have


# ---- version differences ------------------------------------------------------------------


def checks_existing_anti_affinity_first(version: Version) -> bool:
    """Up to 1.18 (the predicate, then the first plugin) the existing pods' anti-affinity
    is checked before the pod's own terms; from 1.19 the order is affinity,
    anti-affinity, existing pods' anti-affinity. The order picks the reason and code."""
    return version.minor <= 18


def self_affinity_needs_topology_keys(version: Version) -> bool:
    """The first-pod exception (no pod matches, the pod matches its own terms): from 1.19
    only on a node carrying every term's topology key; up to 1.18 on any node."""
    return version.minor >= 19


def generic_reason(version: Version) -> str | None:
    """The generic reason put before the specific one: "...pod affinity/anti-affinity" up
    to 1.20, "... rules" in 1.21, none from 1.22 (PR #102518)."""
    if version.minor <= 20:
        return REASON_AFFINITY_NOT_MATCH
    if version.minor == 21:
        return REASON_AFFINITY_NOT_MATCH_121
    return None


def pre_filter_skips(version: Version) -> bool:
    """From 1.27 (PR #114889) PreFilter returns Skip when the pod has no required terms
    and no existing pod's required anti-affinity matches it: Filter does not run, and
    nominated pods are not added to the plugin's state."""
    return version.minor >= 27


def normalizes_from_observed_range(version: Version) -> bool:
    """NormalizeScore takes min and max from the scores from 1.21 (PR #98096); before,
    both start at 0, so the lowest node gets 0 only when some score is <= 0."""
    return version.minor >= 21


def has_ignore_preferred_terms_arg(version: Version) -> bool:
    """InterPodAffinityArgs.ignorePreferredTermsOfExistingPods exists from 1.27 (PR #114393)."""
    return version.minor >= 27


def pre_score_skips(version: Version) -> bool:
    """From 1.28 (PR #117794) PreScore returns Skip when the option above applies, and when
    no term matched any pod: the plugin then scores nothing at all. Before, every node
    scores 0."""
    return version.minor >= 28


def namespace_selector_enabled(version: Version) -> bool:
    """namespaceSelector in terms: gate PodAffinityNamespaceSelector (alpha 1.21, beta and
    on 1.22, GA 1.24). With the gate off the API server drops the field."""
    return version.gate(GATE_NAMESPACE_SELECTOR)


def match_label_keys_enabled(version: Version) -> bool:
    """matchLabelKeys / mismatchLabelKeys: gate MatchLabelKeysInPodAffinity (alpha 1.29,
    beta and on 1.31, GA 1.33). Off: the fields are dropped."""
    return version.gate(GATE_MATCH_LABEL_KEYS)


def hostname_fast_path(version: Version) -> bool:
    """Host-scoped terms checked on the node's own pods: gate
    InterPodAffinityHostnameFastPath (alpha off 1.37)."""
    return version.gate(GATE_HOSTNAME_FAST_PATH)


# ---- terms ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A parsed PodAffinityTerm (framework.AffinityTerm)."""

    namespaces: frozenset[str]
    namespace_selector: Selector
    selector: Selector
    topology_key: str

    def matches(self, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str]) -> bool:
        """``AffinityTerm.Matches``: the pod's namespace is covered (listed, or its labels
        match the namespace selector) and its labels match the selector."""
        if namespace in self.namespaces or self.namespace_selector.matches(ns_labels):
            return self.selector.matches(labels)
        return False


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    weight: int
    term: AffinityTerm


def build_term(owner: Pod, raw: PodAffinityTerm, version: Version) -> AffinityTerm:
    """The term as the scheduler sees it: matchLabelKeys (``key in (value)``) and
    mismatchLabelKeys (``key notin (value)``) merged into the selector with the owner's
    label values when the gate is on and a labelSelector is set (keys the owner lacks
    are ignored); the namespaces of getNamespacesFromPodAffinityTerm."""
    sel = as_selector(raw.label_selector)
    if raw.label_selector is not None and match_label_keys_enabled(version):
        extra = [Requirement(k, IN, (owner.labels[k],)) for k in raw.match_label_keys if k in owner.labels]
        extra += [Requirement(k, NOT_IN, (owner.labels[k],)) for k in raw.mismatch_label_keys if k in owner.labels]
        if extra:
            sel = sel.add(*extra)
    ns_sel_raw = raw.namespace_selector if namespace_selector_enabled(version) else None
    if not raw.namespaces and ns_sel_raw is None:
        namespaces = frozenset((owner.namespace,))
    else:
        namespaces = frozenset(raw.namespaces)
    return AffinityTerm(namespaces, as_selector(ns_sel_raw), sel, raw.topology_key)


@dataclass(frozen=True, slots=True)
class PodTerms:
    """The four term lists of a pod (framework.PodInfo)."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()


NO_TERMS = PodTerms()


def pod_terms(pod: Pod, version: Version) -> PodTerms:
    a = pod.affinity
    if a is None or (a.pod_affinity is None and a.pod_anti_affinity is None):
        return NO_TERMS
    aff, anti = a.pod_affinity, a.pod_anti_affinity
    return PodTerms(
        tuple(build_term(pod, t, version) for t in aff.required) if aff else (),
        tuple(build_term(pod, t, version) for t in anti.required) if anti else (),
        tuple(WeightedTerm(w.weight, build_term(pod, w.term, version)) for w in aff.preferred) if aff else (),
        tuple(WeightedTerm(w.weight, build_term(pod, w.term, version)) for w in anti.preferred) if anti else (),
    )


def pod_matches_all_terms(terms: Sequence[AffinityTerm], namespace: str, labels: Mapping[str, str]) -> bool:
    """``podMatchesAllAffinityTerms``: false for no terms. The incoming pod's terms have
    their namespace selector merged into ``namespaces``, so no namespace labels."""
    if not terms:
        return False
    return all(t.matches(namespace, labels, {}) for t in terms)


def _bump(counts: dict[Pair, int], key: str, node: Node, delta: int) -> None:
    """Add ``delta`` at the node's pair for ``key``; an entry that reaches 0 is deleted,
    as upstream's map (its emptiness decides the first-pod exception)."""
    value = node.labels.get(key)
    if value is None:
        return
    pair = (key, value)
    n = counts.get(pair, 0) + delta
    if n:
        counts[pair] = n
    else:
        counts.pop(pair, None)


# ---- states --------------------------------------------------------------------------------


@dataclass
class PreFilterState:
    # the terms counted in the maps: every required term, or with the hostname fast path
    # the cluster-wide ones (upstream's clusterWideAffinityTerms / ...AntiAffinityTerms)
    affinity_terms: tuple[AffinityTerm, ...]
    anti_affinity_terms: tuple[AffinityTerm, ...]
    ns_labels: Mapping[str, str]
    self_match: bool  # the incoming pod matches all its own required affinity terms
    existing: dict[Pair, int] = field(default_factory=dict)
    affinity: dict[Pair, int] = field(default_factory=dict)
    anti_affinity: dict[Pair, int] = field(default_factory=dict)
    # the hostname fast path: the incoming pod, its affinity terms when all are host-scoped,
    # its host-scoped anti-affinity terms, and the pods anywhere matching the former
    # (hostScopedAffinityTerms, hostScopedAntiAffinityTerms,
    # matchingHostScopedAffinityPodsCount)
    fast_path: Pod | None = None
    host_affinity_terms: tuple[AffinityTerm, ...] = ()
    host_anti_affinity_terms: tuple[AffinityTerm, ...] = ()
    host_affinity_pods: int = 0

    def clone(self) -> PreFilterState:
        return PreFilterState(self.affinity_terms, self.anti_affinity_terms, self.ns_labels, self.self_match,
                              dict(self.existing), dict(self.affinity), dict(self.anti_affinity),
                              self.fast_path, self.host_affinity_terms, self.host_anti_affinity_terms,
                              self.host_affinity_pods)


@dataclass
class PreScoreState:
    # topology key -> value -> summed weight (an entry exists once a term matched there)
    topology_score: dict[str, dict[str, int]] = field(default_factory=dict)

    def clone(self) -> PreScoreState:
        return self


# ---- formulas -------------------------------------------------------------------------------


def normalize_score_array(scores: np.ndarray, max_score: int, observed_range: bool) -> np.ndarray:
    """NormalizeScore: ``int(max * ((s - min) / (max - min)))`` in float64, 0 when all are
    equal. Before 1.21 min and max start at 0 instead of at the scores."""
    if not len(scores):
        return scores
    lo = int(scores.min())
    hi = int(scores.max())
    if not observed_range:
        lo, hi = min(lo, 0), max(hi, 0)
    diff = hi - lo
    if diff <= 0:
        return np.zeros(len(scores), np.int64)
    f = float(max_score) * ((scores - lo).astype(np.float64) / float(diff))
    return np.trunc(f).astype(np.int64)


def normalize_scores(scores: list[NodeScore], max_score: int, observed_range: bool) -> None:
    """``normalize_score_array`` over NodeScores, in place."""
    out = normalize_score_array(np.array([ns.score for ns in scores], np.int64), max_score, observed_range)
    for ns, v in zip(scores, out.tolist()):
        ns.score = v


# ---- the plugin -------------------------------------------------------------------------------


@register(NAME, first=12)
class InterPodAffinity(Plugin, PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    has_pre_filter_extensions = True
    has_normalize = True
    # EventsToRegister: Pod/Add|UpdatePodLabel|Delete (Pod/All before 1.29)
    pod_events = frozenset({"Add", "Delete"})
    signs_pods = True

    def node_events(self, hints: bool) -> frozenset[str]:
        # Add | UpdateNodeLabel; UpdateNodeTaint too without hints (issue 109437)
        return frozenset({"Add", "UpdateNodeLabel"} if hints else {"Add", "UpdateNodeLabel", "UpdateNodeTaint"})

    def node_event_hint(self, pod: Pod, old: Node | None, new: Node | None) -> bool:
        """isSchedulableAfterNodeChange (1.35): for a required affinity term, a node added
        with its topology key, or updated to have it or another value of it; for a required
        anti-affinity term, any node added, or one updated to lose its key or change its
        value."""
        if new is None:
            return False
        terms = pod_terms(pod, self.version)
        for t in terms.required_affinity:
            if old is None:
                if t.topology_key in new.labels:
                    return True
                continue
            if t.topology_key in new.labels and old.labels.get(t.topology_key) != new.labels[t.topology_key]:
                return True
        for t in terms.required_anti_affinity:
            if old is None:
                return True
            if t.topology_key in old.labels and old.labels[t.topology_key] != new.labels.get(t.topology_key):
                return True
        return False

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: a pod with pod affinity or anti-affinity cannot be signed; the labels
        otherwise (none with ignorePreferredTermsOfExistingPods)."""
        a = pod.affinity
        if a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None):
            return None
        if self.ignore_preferred_terms:
            return ()
        return (("Labels", tuple(sorted(pod.labels.items()))),)

    def pod_event_hint(self, pod: Pod, event: PodEvent) -> bool:
        """isSchedulableAfterPodChange: an unbound pod changes nothing (from 1.36 one with a
        nominated node counts as bound); a bound pod added may satisfy the pod's required
        affinity (it must match every term), one deleted may lift its required
        anti-affinity (it matched every term), and from 1.36 its own required
        anti-affinity (the pod matched every term of it)."""
        other = event.pod
        v = self.version
        if other.node_name is None and not (v.pod_hints_see_nominated_pods and other.nominated_node):
            return False
        terms = pod_terms(pod, v)
        if event.action == "Add":
            return pod_matches_all_terms(terms.required_affinity, other.namespace, other.labels)
        if pod_matches_all_terms(terms.required_anti_affinity, other.namespace, other.labels):
            return True
        if not v.affinity_hint_sees_deleted_anti_affinity:
            return False
        return pod_matches_all_terms(pod_terms(other, v).required_anti_affinity, pod.namespace, pod.labels)

    def __init__(self, args: Mapping[str, Any], handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        # InterPodAffinityArgs, decoded and validated by kspread.engine.framework.args
        self.hard_pod_affinity_weight = args.get("hardPodAffinityWeight", DEFAULT_HARD_POD_AFFINITY_WEIGHT)
        self.ignore_preferred_terms = args.get("ignorePreferredTermsOfExistingPods", False)
        # terms of existing pods, by pod object (pods are immutable values)
        self._terms: dict[Pod, PodTerms] = {}

    # -- helpers

    def _terms_of(self, pod: Pod) -> PodTerms:
        t = self._terms.get(pod)
        if t is None:
            t = pod_terms(pod, self.version)
            self._terms[pod] = t
        return t

    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """GetNamespaceLabelsSnapshot: the namespace's labels (``Cluster.namespace_labels``)."""
        return dict(self.handle.cluster.namespace_labels(namespace))

    def _merge_namespaces(self, term: AffinityTerm, pod: Pod) -> AffinityTerm:
        """``mergeAffinityTermNamespacesIfNotEmpty`` for the incoming pod's terms: a
        non-empty namespace selector becomes the namespaces it selects (listed ones, and
        those pods use, which have only the API server's kubernetes.io/metadata.name label
        from 1.21); an empty one (all namespaces) stays."""
        if term.namespace_selector.empty():
            return term
        cluster = self.handle.cluster
        names = set(cluster.namespaces) | {p.namespace for p in cluster.pods} | {pod.namespace}
        selected = {n for n in names if term.namespace_selector.matches(self._namespace_labels(n))}
        return AffinityTerm(term.namespaces | selected, NOTHING, term.selector, term.topology_key)

    def _incoming_terms(self, pod: Pod) -> PodTerms:
        t = pod_terms(pod, self.version)
        if t is NO_TERMS:
            return t
        m = self._merge_namespaces
        return PodTerms(
            tuple(m(x, pod) for x in t.required_affinity),
            tuple(m(x, pod) for x in t.required_anti_affinity),
            tuple(WeightedTerm(w.weight, m(w.term, pod)) for w in t.preferred_affinity),
            tuple(WeightedTerm(w.weight, m(w.term, pod)) for w in t.preferred_anti_affinity),
        )

    # -- PreFilter / Filter

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        if (pre_filter_skips(self.version) and not has_pod_affinity(pod)
                and not self.handle.snapshot.has_affinity_pods(required_anti_affinity=True)):
            return SKIP  # (no term of its own, no existing pod's required anti-affinity: as below)
        terms = self._incoming_terms(pod)
        ns_labels = self._namespace_labels(pod.namespace)
        fast = hostname_fast_path(self.version)
        affinity_terms, anti_terms = terms.required_affinity, terms.required_anti_affinity
        s = PreFilterState(affinity_terms, anti_terms, ns_labels,
                           pod_matches_all_terms(affinity_terms, pod.namespace, pod.labels))
        if fast:  # classifyTermsBasedOnScope
            s.fast_path = pod
            if all(t.topology_key == HOSTNAME_LABEL for t in affinity_terms):
                s.host_affinity_terms, s.affinity_terms = affinity_terms, ()
            s.host_anti_affinity_terms = tuple(t for t in anti_terms if t.topology_key == HOSTNAME_LABEL)
            s.anti_affinity_terms = tuple(t for t in anti_terms if t.topology_key != HOSTNAME_LABEL)
        host_scoped_existing = False  # an existing pod has a host-scoped required anti-affinity term
        snap = self.handle.snapshot
        for ni in snap.infos_with_affinity_pods(required_anti_affinity=True):
            for existing in ni.pods_with_required_anti_affinity.values():
                for t in self._terms_of(existing).required_anti_affinity:
                    if fast and t.topology_key == HOSTNAME_LABEL:
                        host_scoped_existing = True
                    elif t.matches(pod.namespace, pod.labels, ns_labels):
                        _bump(s.existing, t.topology_key, ni.node, 1)
        if s.affinity_terms or s.anti_affinity_terms or s.host_affinity_terms:
            infos = snap.node_infos
            for (namespace, label_items), per_node in snap.all_group_nodes.items():
                labels = dict(label_items)
                if pod_matches_all_terms(s.host_affinity_terms, namespace, labels):
                    s.host_affinity_pods += sum(per_node.values())
                all_affinity = pod_matches_all_terms(s.affinity_terms, namespace, labels)
                anti = [t for t in s.anti_affinity_terms if t.matches(namespace, labels, {})]
                if not all_affinity and not anti:
                    continue
                for node_name, n in per_node.items():
                    node = infos[node_name].node
                    if all_affinity:
                        for t in s.affinity_terms:
                            _bump(s.affinity, t.topology_key, node, n)
                    for t in anti:
                        _bump(s.anti_affinity, t.topology_key, node, n)
        if (pre_filter_skips(self.version) and not s.existing and not affinity_terms
                and not anti_terms and not host_scoped_existing):
            return SKIP
        state.write(PRE_FILTER_KEY, s)
        return SUCCESS

    def _reasons(self, specific: str) -> tuple[str, ...]:
        g = generic_reason(self.version)
        return (g, specific) if g else (specific,)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        """Once per distinct combination of the node's values of the topology keys the
        terms and the existing pods' anti-affinity count under."""
        s = state.read(PRE_FILTER_KEY)
        assert isinstance(s, PreFilterState)
        keys = {t.topology_key for t in (*s.affinity_terms, *s.anti_affinity_terms)}
        keys.update(k for k, _ in s.existing)
        table: list[Status] = [SUCCESS]
        index: dict[Status, int] = {SUCCESS: 0}

        def status_id(st: Status) -> int:
            k = index.get(st)
            if k is None:
                k = index[st] = len(table)
                table.append(st)
            return k

        if s.fast_path is None:
            return Filtered(evaluate_by_label_keys(nodes, keys, False,
                                                   lambda node: status_id(self._status(s, node.labels))), table)
        return Filtered(self._fast_path_codes(s, nodes, tuple(sorted(keys)), status_id), table)

    def _fast_path_codes(self, s: PreFilterState, nodes: NodeSet, keys: tuple[str, ...], status_id) -> np.ndarray:
        """The hostname fast path's Filter: once per distinct combination of the maps' keys'
        values and the presence of the hostname label, as on a node without pods; then again,
        with its pods, on each node whose pods can change that (one holding a pod that
        matches the host-scoped terms, or a pod with a host-scoped anti-affinity term)."""

        def view_of(node: Node) -> tuple:
            labels = node.labels
            return tuple(labels.get(k, _NO_VALUE) for k in keys), HOSTNAME_LABEL in labels

        def run(view: tuple) -> int:
            values, has_host = view
            labels = {k: v for k, v in zip(keys, values) if v is not _NO_VALUE}
            return status_id(self._fast_status(s, labels, has_host, None))

        codes = nodes.evaluate(("InterPodAffinity fast path", keys), view_of, run)
        snap = nodes.snapshot
        if snap is None or nodes.positions is None:  # (detached NodeInfos: nominated pods, few nodes)
            for i, info in enumerate(nodes.infos):
                if info.pods:
                    labels = info.node.labels
                    codes[i] = status_id(self._fast_status(s, labels, HOSTNAME_LABEL in labels, info))
            return codes
        for i, name in nodes.find(self._fast_path_nodes(s, snap)):
            info = snap.get(name)
            labels = info.node.labels
            codes[i] = status_id(self._fast_status(s, labels, HOSTNAME_LABEL in labels, info))
        return codes

    def _fast_path_nodes(self, s: PreFilterState, snap) -> set[str]:
        """The snapshot's nodes whose pods can change the fast path's status."""
        names: set[str] = set()
        if s.host_affinity_terms or s.host_anti_affinity_terms:
            for (namespace, label_items), per_node in snap.all_group_nodes.items():
                labels = dict(label_items)
                if (pod_matches_all_terms(s.host_affinity_terms, namespace, labels)
                        or any(t.matches(namespace, labels, {}) for t in s.host_anti_affinity_terms)):
                    names.update(per_node)
        for ni in snap.infos_with_affinity_pods(required_anti_affinity=True):
            names.add(ni.name)
        return names

    def _fast_status(self, s: PreFilterState, labels: Mapping[str, str], has_host: bool,
                     info: NodeInfo | None) -> Status:
        """Filter with the hostname fast path (1.37: no generic reason, existing pods'
        anti-affinity last). ``info``: the node's pods, None for a node without any."""
        pod = s.fast_path
        assert pod is not None
        pods = info.pods.values() if info is not None else ()
        if s.host_affinity_terms:  # nodePodsSatisfyAffinity
            if not has_host or not (any(pod_matches_all_terms(s.host_affinity_terms, p.namespace, p.labels)
                                        for p in pods) or (s.host_affinity_pods <= 0 and s.self_match)):
                return unresolvable(REASON_AFFINITY_RULES)
        else:
            st = self._affinity_status(s, labels)
            if st is not None:
                return st
        st = self._anti_affinity_status(s, labels)
        if st is not None:
            return st
        if has_host and any(t.matches(p.namespace, p.labels, {}) for p in pods  # nodePodsConflictWithAntiAffinity
                            for t in s.host_anti_affinity_terms):
            return unschedulable(REASON_ANTI_AFFINITY_RULES)
        st = self._existing_status(s, labels)
        if st is not None:
            return st
        if has_host and info is not None:  # satisfyExistingPodsAntiAffinity's local check
            for existing in info.pods_with_required_anti_affinity.values():
                for t in self._terms_of(existing).required_anti_affinity:
                    if t.topology_key == HOSTNAME_LABEL and t.matches(pod.namespace, pod.labels, s.ns_labels):
                        return unschedulable(REASON_EXISTING_ANTI_AFFINITY)
        return SUCCESS

    def _status(self, s: PreFilterState, labels: Mapping[str, str]) -> Status:
        if checks_existing_anti_affinity_first(self.version):
            checks = (self._existing_status, self._affinity_status, self._anti_affinity_status)
        else:
            checks = (self._affinity_status, self._anti_affinity_status, self._existing_status)
        for check in checks:
            st = check(s, labels)
            if st is not None:
                return st
        return SUCCESS

    def _affinity_status(self, s: PreFilterState, labels: Mapping[str, str]) -> Status | None:
        if not s.affinity_terms:
            return None
        pods_exist = True
        for t in s.affinity_terms:
            value = labels.get(t.topology_key)
            if value is None:
                if self_affinity_needs_topology_keys(self.version):
                    return unresolvable(*self._reasons(REASON_AFFINITY_RULES))
                pods_exist = False
            elif s.affinity.get((t.topology_key, value), 0) <= 0:
                pods_exist = False
        if pods_exist or (not s.affinity and s.self_match):
            return None
        return unresolvable(*self._reasons(REASON_AFFINITY_RULES))

    def _anti_affinity_status(self, s: PreFilterState, labels: Mapping[str, str]) -> Status | None:
        for t in s.anti_affinity_terms:
            value = labels.get(t.topology_key)
            if value is not None and s.anti_affinity.get((t.topology_key, value), 0) > 0:
                return unschedulable(*self._reasons(REASON_ANTI_AFFINITY_RULES))
        return None

    def _existing_status(self, s: PreFilterState, labels: Mapping[str, str]) -> Status | None:
        if s.existing:
            for pair in labels.items():
                if s.existing.get(pair, 0) > 0:
                    return unschedulable(*self._reasons(REASON_EXISTING_ANTI_AFFINITY))
        return None

    # -- PreFilterExtensions

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, node_info: NodeInfo) -> Status | None:
        self._update_with_pod(state, pod, added, node_info, 1)
        return SUCCESS

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, node_info: NodeInfo) -> Status | None:
        self._update_with_pod(state, pod, removed, node_info, -1)
        return SUCCESS

    def _update_with_pod(self, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo, delta: int) -> None:
        s = state.get(PRE_FILTER_KEY)
        if not isinstance(s, PreFilterState):
            return
        node = node_info.node
        for t in self._terms_of(other).required_anti_affinity:
            if s.fast_path is not None and t.topology_key == HOSTNAME_LABEL:
                continue  # (checked on the node's pods)
            if t.matches(pod.namespace, pod.labels, s.ns_labels):
                _bump(s.existing, t.topology_key, node, delta)
        if pod_matches_all_terms(s.host_affinity_terms, other.namespace, other.labels):
            s.host_affinity_pods += delta
        if pod_matches_all_terms(s.affinity_terms, other.namespace, other.labels):
            for t in s.affinity_terms:
                _bump(s.affinity, t.topology_key, node, delta)
        for t in s.anti_affinity_terms:
            if t.matches(other.namespace, other.labels, {}):
                _bump(s.anti_affinity, t.topology_key, node, delta)

    # -- PreScore / Score / NormalizeScore

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        v = self.version
        a = pod.affinity
        has_preferred = a is not None and (
            (a.pod_affinity is not None and bool(a.pod_affinity.preferred))
            or (a.pod_anti_affinity is not None and bool(a.pod_anti_affinity.preferred)))
        if self.ignore_preferred_terms and not has_preferred:
            if pre_score_skips(v):
                return SKIP
            state.write(PRE_SCORE_KEY, PreScoreState())
            return SUCCESS
        snap = self.handle.snapshot
        if not has_preferred and pre_score_skips(v) and not snap.has_affinity_pods():
            return SKIP  # (no term of its own, no existing pod's: nothing to score, as below)
        topo: dict[str, dict[str, int]] = {}

        def add(key: str, node: Node, amount: int) -> None:
            value = node.labels.get(key)
            if value is not None:
                per_value = topo.setdefault(key, {})
                per_value[value] = per_value.get(value, 0) + amount

        if has_preferred:
            terms = self._incoming_terms(pod)
            weighted = [(w.term, w.weight) for w in terms.preferred_affinity]
            weighted += [(w.term, -w.weight) for w in terms.preferred_anti_affinity]
            infos = snap.node_infos
            for (namespace, label_items), per_node in snap.all_group_nodes.items():
                labels = dict(label_items)
                hits = [(t, w) for t, w in weighted if t.matches(namespace, labels, {})]
                for node_name, n in (per_node.items() if hits else ()):
                    node = infos[node_name].node
                    for t, weight in hits:
                        add(t.topology_key, node, weight * n)
        ns_labels = self._namespace_labels(pod.namespace)
        hard = self.hard_pod_affinity_weight
        for ni in snap.infos_with_affinity_pods():
            for existing in ni.pods_with_affinity.values():
                et = self._terms_of(existing)
                if hard > 0:
                    for t in et.required_affinity:
                        if t.matches(pod.namespace, pod.labels, ns_labels):
                            add(t.topology_key, ni.node, hard)
                for w in et.preferred_affinity:
                    if w.term.matches(pod.namespace, pod.labels, ns_labels):
                        add(w.term.topology_key, ni.node, w.weight)
                for w in et.preferred_anti_affinity:
                    if w.term.matches(pod.namespace, pod.labels, ns_labels):
                        add(w.term.topology_key, ni.node, -w.weight)
        if pre_score_skips(v) and not topo:
            return SKIP
        state.write(PRE_SCORE_KEY, PreScoreState(topo))
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        s = state.read(PRE_SCORE_KEY)
        assert isinstance(s, PreScoreState)

        def score(node: Node) -> int:
            labels = node.labels
            total = 0
            for key, per_value in s.topology_score.items():
                value = labels.get(key)
                if value is not None:
                    total += per_value.get(value, 0)
            return total

        return evaluate_by_label_keys(nodes, s.topology_score, False, score, np.int64)

    def normalize_scores(self, state: CycleState, pod: Pod, names, scores: np.ndarray) -> np.ndarray:
        s = state.read(PRE_SCORE_KEY)
        assert isinstance(s, PreScoreState)
        if not s.topology_score:
            return scores
        observed = normalizes_from_observed_range(self.version)
        return normalize_score_array(scores, self.version.max_node_score, observed)


__all__ = [
    "AffinityTerm",
    "InterPodAffinity",
    "build_term",
    "normalize_scores",
    "pod_terms",
]
