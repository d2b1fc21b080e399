"""PodTopologySpread: spread matching pods evenly over topology domains
(framework/plugins/podtopologyspread: common.go, filtering.go, scoring.go, plugin.go).

Hard constraints (``whenUnsatisfiable: DoNotSchedule``) are Filter; soft ones
(``ScheduleAnyway``) are Score. A pod without constraints of its own gets the
profile's default constraints when it belongs to a Service / RC / ReplicaSet /
StatefulSet (selector from ``helper.default_selector``).

Counting uses the snapshot's per-selector count columns (``Snapshot.count_column``,
kept current as pods come and go) once per constraint, so a cycle costs time in
nodes x constraints, not in pods.

Version differences are ``Version.pts_*`` flags (kspread/engine/versions.py) plus the
feature gates MinDomainsInPodTopologySpread, NodeInclusionPolicyInPodTopologySpread
and MatchLabelKeysInPodTopologySpread. Versions 1.16-1.17 (the EvenPodsSpread
predicate and priority) are not implemented: the registry rejects them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kspread.engine.corev1helpers import find_untolerated_taint
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
from kspread.engine.labels import Selector, as_selector, selector_from_set
from kspread.engine.model import HOSTNAME_LABEL, Node, Pod, TopologySpreadConstraint
from kspread.engine.plugins.helper import default_selector
from kspread.engine.plugins.nodematch import (
    do_not_schedule_taints,
    required_node_affinity_matches,
    required_node_affinity_matches_nodes,
)
from kspread.engine.snapshot import NodeInfo, NodeSet
from kspread.engine.versions import Version

NAME = "PodTopologySpread"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
MAX_INT32 = 2**31 - 1
MAX_NODE_SCORE = 100

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

GATE_MIN_DOMAINS = "MinDomainsInPodTopologySpread"
GATE_NODE_INCLUSION = "NodeInclusionPolicyInPodTopologySpread"
GATE_MATCH_LABEL_KEYS = "MatchLabelKeysInPodTopologySpread"

PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME

# ---- constraints -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Constraint:
    """The internal form of a constraint, with its selector parsed (common.go)."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def merge_label_set_with_selector(match_labels: Mapping[str, str], sel: Selector) -> Selector:
    """``mergeLabelSetWithSelector``: the pod's values of matchLabelKeys as equality
    requirements, AND the selector's requirements; a Nothing selector stays Nothing."""
    if sel.nothing:
        return sel
    return Selector(selector_from_set(match_labels).requirements + sel.requirements)


def filter_constraints(
    raw: Sequence[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str, version: Version
) -> list[Constraint]:
    """``filterTopologySpreadConstraints``: the constraints with ``whenUnsatisfiable ==
    action``, with matchLabelKeys, minDomains and the inclusion policies applied as the
    version's feature gates allow (a disabled gate ignores the field)."""
    out: list[Constraint] = []
    for c in raw:
        if c.when_unsatisfiable != action:
            continue
        sel = as_selector(c.label_selector)
        if c.match_label_keys and version.gate(GATE_MATCH_LABEL_KEYS):
            ml = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if ml:
                sel = merge_label_set_with_selector(ml, sel)
        min_domains = 1
        if c.min_domains is not None and version.gate(GATE_MIN_DOMAINS):
            min_domains = c.min_domains
        aff, taints = HONOR, IGNORE
        if version.gate(GATE_NODE_INCLUSION):
            aff = c.node_affinity_policy or HONOR
            taints = c.node_taints_policy or IGNORE
        out.append(Constraint(c.max_skew, c.topology_key, sel, min_domains, aff, taints))
    return out


def node_labels_match_spread_constraints(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``: the node carries every topology key."""
    return all(c.topology_key in labels for c in constraints)


def match_node_inclusion_policies(c: Constraint, pod: Pod, node: Node, affinity_ok: bool) -> bool:
    """``matchNodeInclusionPolicies``: Honor affinity -> the node matches the pod's
    nodeSelector / required affinity; Honor taints -> no untolerated NoSchedule /
    NoExecute taint."""
    if c.node_affinity_policy == HONOR and not affinity_ok:
        return False
    if c.node_taints_policy == HONOR:
        if find_untolerated_taint(node.taints, pod.tolerations, do_not_schedule_taints) is not None:
            return False
    return True


def topology_codes(nodes: NodeSet, key: str) -> tuple[np.ndarray, list]:
    """Per node the code of its value of label ``key`` (None: no such label)."""
    return nodes.codes(("label", key), lambda n: n.labels.get(key))


def has_key(nodes: NodeSet, key: str) -> np.ndarray:
    """Per node whether it has label ``key`` (once per snapshot and key: a key whose
    values are all distinct, the hostname, lists no values per cycle). Read only."""
    snap = nodes.snapshot

    def every(ns: NodeSet) -> np.ndarray:
        codes, values = ns.codes(("has-label", key), lambda n: key in n.labels)
        return np.asarray(values, bool)[codes] if values else np.zeros(0, bool)

    if snap is None or nodes.positions is None:
        return every(nodes)
    col = snap.static_memo(("has-label", key), lambda: every(snap.nodes()))
    return col if nodes.positions is snap.all_positions else col[nodes.positions]


def every_node_has_key(snap: Any, key: str) -> bool:
    """Whether every node of the snapshot has label ``key`` (so any set of its nodes
    does: ``has_key`` is true throughout; once per snapshot and key)."""
    return bool(snap.static_value(("every node has label", key), lambda: bool(has_key(snap.nodes(), key).all())))


def value_codes(nodes: NodeSet, key: str) -> tuple[np.ndarray, list]:
    """Per node the code of its value of label ``key``, a missing label read as ""
    (``node.Labels[key]`` in Go), and the distinct values."""
    return nodes.codes(("label-or-empty", key), lambda n: n.labels.get(key, ""))


def snapshot_positions(snap: Any, nodes: Any) -> np.ndarray:
    """The positions in ``snap`` of ``nodes``: a NodeSet, or a sequence of Nodes or of
    names (the scheduler's lazy lists carry their NodeSet: its positions, no listing)."""
    src = nodes if isinstance(nodes, NodeSet) else getattr(nodes, "source", None)
    if isinstance(src, NodeSet):
        if src.snapshot is snap and src.positions is not None:
            return src.positions
        nodes = src.infos
    position = snap.position
    return np.array([position[n if isinstance(n, str) else n.name] for n in nodes], np.intp)


def _taints(node: Node) -> tuple:
    return node.taints


def _first_appearance(codes: np.ndarray, n_codes: int) -> list[int]:
    """The distinct codes (of ``n_codes``) in the order they first appear."""
    n = len(codes)
    if not n:
        return []
    first = np.full(n_codes, n, np.intp)
    first[codes[::-1]] = np.arange(n - 1, -1, -1, dtype=np.intp)  # (a repeated index keeps the last value)
    present = np.flatnonzero(first < n)
    at = first[present]
    if len(at) > 1 and not (at[1:] > at[:-1]).all():  # (codes given in node order mostly appear in code order)
        present = present[np.argsort(at, kind="stable")]
    return present.tolist()


def _sum_by_code(codes: np.ndarray, counts: np.ndarray, n_codes: int) -> np.ndarray:
    """Per code the sum of ``counts`` (pod counts: exact in float64)."""
    return np.bincount(codes, weights=counts, minlength=n_codes).astype(np.int64)


# ---- PreFilter state -------------------------------------------------------------------


class CriticalPaths:
    """The two smallest domain counts of a constraint (``criticalPaths``). Exact
    after PreFilter; after AddPod/RemovePod slot 1 is only an upper bound, as
    upstream's."""

    __slots__ = ("values", "nums")

    def __init__(self) -> None:
        self.values = ["", ""]
        self.nums = [MAX_INT32, MAX_INT32]

    def clone(self) -> CriticalPaths:
        c = CriticalPaths()
        c.values = list(self.values)
        c.nums = list(self.nums)
        return c

    def update(self, value: str, num: int) -> None:
        if value == self.values[0]:
            i = 0
        elif value == self.values[1]:
            i = 1
        else:
            i = -1
        if i >= 0:
            self.nums[i] = num
            if self.nums[0] > self.nums[1]:
                self.values.reverse()
                self.nums.reverse()
        elif num < self.nums[0]:
            self.values[1], self.nums[1] = self.values[0], self.nums[0]
            self.values[0], self.nums[0] = value, num
        elif num < self.nums[1]:
            self.values[1], self.nums[1] = value, num

    @property
    def min(self) -> int:
        return self.nums[0]


class Domains:
    """One constraint's domains after PreFilter as arrays: their codes (``values``: the
    snapshot's values of the key, ``topology_codes``) in the order of their first node,
    and their matching pods."""

    __slots__ = ("codes", "counts", "values")

    def __init__(self, codes: np.ndarray, counts: np.ndarray, values: list) -> None:
        self.codes = codes
        self.counts = counts
        self.values = values


class PreFilterState:
    """Per constraint its domains (``match_num``: topology value -> matching pods, in the
    order of their first node; kept as ``Domains`` arrays until a mapping is asked for,
    which AddPod / RemovePod and explain do), the critical paths, and the domains
    counted in PreFilter (TpKeyToDomainsNum, before 1.33; None when the MinDomains gate
    is off)."""

    __slots__ = ("constraints", "_match_num", "_domains", "paths", "domains_at_prefilter")

    def __init__(self, constraints: list[Constraint] | None = None,
                 match_num: list[dict[str, int] | None] | None = None, paths: list[CriticalPaths] | None = None,
                 domains_at_prefilter: list[int | None] | None = None,
                 domains: list[Domains | None] | None = None) -> None:
        self.constraints = constraints if constraints is not None else []
        self._match_num: list[dict[str, int] | None] = match_num if match_num is not None else []
        self._domains: list[Domains | None] = domains if domains is not None else [None] * len(self._match_num)
        self.paths = paths if paths is not None else []
        self.domains_at_prefilter = domains_at_prefilter if domains_at_prefilter is not None else []

    @property
    def match_num(self) -> list[dict[str, int]]:
        out = self._match_num
        for i, m in enumerate(out):
            if m is None:
                d = self._domains[i]
                assert d is not None
                out[i] = {d.values[k]: n for k, n in zip(d.codes.tolist(), d.counts.tolist())}
                self._domains[i] = None  # (the mapping is the state from now on)
        return out  # type: ignore[return-value]

    def domain_count(self, i: int) -> int:
        m = self._match_num[i]
        if m is not None:
            return len(m)
        d = self._domains[i]
        assert d is not None
        return len(d.codes)

    def domains(self, i: int) -> Domains | None:
        """Constraint ``i``'s domains as arrays, None once they are a mapping."""
        return self._domains[i] if self._match_num[i] is None else None

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.constraints,
            [None if m is None else dict(m) for m in self._match_num],
            [p.clone() for p in self.paths],
            list(self.domains_at_prefilter),
            list(self._domains),  # (arrays: never changed)
        )

    def min_match_num(self, i: int, version: Version) -> int | None:
        """The global minimum for constraint ``i`` with minDomains applied; None when
        Filter skips the constraint (pre-1.33 with MinDomains on and no domain)."""
        c = self.constraints[i]
        m = self.paths[i].min
        if version.pts_domains_counted_live:
            if self.domain_count(i) < c.min_domains:
                m = 0
            return m
        domains = self.domains_at_prefilter[i]
        if domains is None:
            return m
        if domains == 0:
            return None  # TpKeyToDomainsNum has no entry for the key: the constraint is skipped
        if domains < c.min_domains:
            m = 0
        return m


def _paths_of(m: Mapping[str, int]) -> CriticalPaths:
    """The critical paths of domains given in order (``CriticalPaths.update`` each)."""
    p = CriticalPaths()
    for value, num in m.items():
        p.update(value, num)
    return p


def _paths_of_domains(d: Domains, nodes: NodeSet, key: str) -> CriticalPaths:
    """``_paths_of`` the domains' arrays: updating in order keeps the two smallest counts,
    the earlier of equal ones first (a stable sort's first two); a domain "" meets the
    paths' initial "" values, so that case updates one by one."""
    empty = nodes.snapshot.static_memo(  # type: ignore[union-attr]
        ("code of the empty value", key), lambda: np.array([d.values.index("") if "" in d.values else -1]))
    if empty[0] >= 0 and (d.codes == empty[0]).any():
        return _paths_of({d.values[k]: n for k, n in zip(d.codes.tolist(), d.counts.tolist())})
    p = CriticalPaths()
    first = np.argsort(d.counts, kind="stable")[:2].tolist()
    for slot, j in enumerate(first):
        p.values[slot] = d.values[int(d.codes[j])]
        p.nums[slot] = int(d.counts[j])
    return p


# ---- PreScore state ----------------------------------------------------------------------


@dataclass
class PreScoreState:
    constraints: list[Constraint] = field(default_factory=list)
    # IgnoredNodes: per snapshot position (None: no node ignored)
    ignored: np.ndarray | None = None
    # per constraint (None for hostname): per code of ``value_codes`` (a missing label
    # read as "") the matching pods of the domain, -1 where the value is no domain
    # of the candidate nodes (TopologyValueToPodCounts has no entry)
    value_counts: list[np.ndarray | None] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    # 1.18 only: nodes that carry every key, and counts by (key, value)
    # (as arrays: per snapshot position whether the node is in NodeNameSet; per topology
    # key, per code of ``topology_codes``, the count of the pair (key, value), -1 where
    # the pair is not counted)
    in_name_set: np.ndarray | None = None
    pair_counts: dict[str, np.ndarray] = field(default_factory=dict)


# ---- formulas (scoring.go) ----------------------------------------------------------------


def topology_normalizing_weight(size: int) -> float:
    """``topologyNormalizingWeight``: ln(size + 2) (1.19+)."""
    return math.log(float(size + 2))


def score_for_count(cnt: int, max_skew: int, tp_weight: float) -> float:
    """``scoreForCount``: cnt * weight + (maxSkew - 1) (1.19+)."""
    return float(cnt) * tp_weight + float(max_skew - 1)


def go_rounds(x: np.ndarray) -> np.ndarray:
    """Go ``math.Round`` for x >= 0: half away from zero."""
    f = np.floor(x)
    return (f + (x - f >= 0.5)).astype(np.int64)


def go_round(x: float) -> int:
    return int(go_rounds(np.array([x], np.float64))[0])


def normalize_score_array(scores: np.ndarray, ignored: np.ndarray | None) -> np.ndarray:
    """NormalizeScore 1.19+: ignored nodes 0; all 100 when the max is 0; else
    100 * (max + min - s) // max in int64 arithmetic."""
    counted = scores if ignored is None else scores[~ignored]
    if not len(counted):
        return np.zeros(len(scores), np.int64)
    min_score = int(counted.min())
    max_score = max(int(counted.max()), 0)
    if max_score == 0:
        out = np.full(len(scores), MAX_NODE_SCORE, np.int64)
    else:
        out = MAX_NODE_SCORE * (max_score + min_score - scores) // max_score
    if ignored is not None:
        out[ignored] = 0
    return out


def normalize_scores(scores: list[NodeScore], ignored: set[str]) -> None:
    """``normalize_score_array`` over NodeScores, in place."""
    out = normalize_score_array(np.array([ns.score for ns in scores], np.int64),
                                np.array([ns.name in ignored for ns in scores], bool))
    for ns, v in zip(scores, out.tolist()):
        ns.score = v


def normalize_score_array_v18(scores: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """NormalizeScore 1.18: total and min over NodeNameSet; every node 100 when
    total == min; nodes outside NodeNameSet 0; else int(100 * ((total - s) / (total - min)))."""
    inside = scores[~outside]
    min_score = int(inside.min()) if len(inside) else 2**63 - 1
    total = int(inside.sum()) if len(inside) else 0
    diff = total - min_score
    if diff == 0:
        return np.full(len(scores), MAX_NODE_SCORE, np.int64)
    f = float(MAX_NODE_SCORE) * ((total - scores).astype(np.float64) / float(diff))
    return np.where(outside, 0, np.trunc(f)).astype(np.int64)


def normalize_scores_v18(scores: list[NodeScore], node_name_set: set[str]) -> None:
    """``normalize_score_array_v18`` over NodeScores, in place."""
    out = normalize_score_array_v18(np.array([ns.score for ns in scores], np.int64),
                                    np.array([ns.name not in node_name_set for ns in scores], bool))
    for ns, v in zip(scores, out.tolist()):
        ns.score = v


# ---- args ------------------------------------------------------------------------------------


# PodTopologySpreadArgs (defaultConstraints, defaultingType) are decoded, defaulted and
# validated by kspread.engine.framework.args.


# ---- the plugin -----------------------------------------------------------------------------


@register(NAME, first=18)
class PodTopologySpread(Plugin, PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    has_pre_filter_extensions = True
    has_normalize = True
    # EventsToRegister: Pod/Add|UpdatePodLabel|Delete (and UpdatePodToleration with hints)
    pod_events = frozenset({"Add", "Delete"})
    signs_pods = True

    def node_events(self, hints: bool) -> frozenset[str]:
        return frozenset({"Add", "Delete", "UpdateNodeLabel", "UpdateNodeTaint"})

    def node_event_hint(self, pod: Pod, old: Node | None, new: Node | None) -> bool:
        """isSchedulableAfterNodeChange (1.35): a node that has every topology key of the
        pod's hard constraints added or deleted; updated into or out of having them, or,
        having them, with another value of a key or other taints."""
        cons = self._constraints(pod, DO_NOT_SCHEDULE)

        def has_keys(n: Node | None) -> bool:
            return n is not None and all(c.topology_key in n.labels for c in cons)

        if old is not None and new is not None:
            if has_keys(old) != has_keys(new):
                return True
            return has_keys(new) and (
                any(old.labels.get(c.topology_key) != new.labels.get(c.topology_key) for c in cons)
                or old.taints != new.taints)
        return has_keys(new if new is not None else old)

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: a pod with constraints, or any pod when the plugin has default
        constraints (System defaulting has), cannot be signed."""
        if pod.topology_spread_constraints or self.default_constraints:
            return None
        return ()

    def signs_no_pod(self) -> bool:
        return bool(self.default_constraints)

    def pod_event_hint(self, pod: Pod, event: PodEvent) -> bool:
        """isSchedulableAfterPodChange: only a bound pod of the pod's namespace (from 1.36 a
        pending one with a nominated node too), or the pod itself, is involved; it may
        change the spreading when its labels match one of the pod's hard constraints
        (getConstraints: DoNotSchedule, defaults included)."""
        other = event.pod
        placed = other.node_name is not None or (self.version.pod_hints_see_nominated_pods
                                                  and bool(other.nominated_node))
        if not (other.key == pod.key or (placed and other.namespace == pod.namespace)):
            return False
        return any(c.selector.matches(other.labels) for c in self._constraints(pod, DO_NOT_SCHEDULE))

    def __init__(self, args: Mapping[str, Any], handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        self.default_constraints = tuple(args.get("defaultConstraints", ()))
        self.system_defaulted = bool(args.get("systemDefaulted", False))
        # the default constraints of each action (filter_constraints), when they do not
        # depend on the pod's labels (no matchLabelKeys): made once
        self._defaults_by_action: dict[str, list[Constraint]] = {}
        # the constraints of pods, read only: (action, namespace, labels, controller) ->
        # the defaults with their selector; (action, id of the pod's own constraints,
        # labels when they have matchLabelKeys) -> (those constraints, the filtered ones)
        self._made: dict[tuple, Any] = {}

    MADE = 256  # constraint lists kept (then it starts over)

    # -- constraints of a pod

    def _constraints(self, pod: Pod, action: str) -> list[Constraint]:
        v = self.version
        made = self._made
        if len(made) >= self.MADE:
            made.clear()
        own = pod.topology_spread_constraints
        if own:
            # pods written alike share their constraints (never mutated): made once per object
            labels = tuple(sorted(pod.labels.items())) if any(c.match_label_keys for c in own) else None
            hit = made.get((action, id(own), labels))
            if hit is None or hit[0] is not own:
                hit = made[(action, id(own), labels)] = (own, filter_constraints(own, pod.labels, action, v))
            return hit[1]
        cons = self._defaults_by_action.get(action)
        if cons is None:
            cons = filter_constraints(self.default_constraints, pod.labels, action, v)
            if not any(c.match_label_keys for c in self.default_constraints):
                self._defaults_by_action[action] = cons  # (read only)
            else:
                return self._with_default_selector(pod, cons)
        if not cons:
            return []
        # the listers do not change in a case: the selector depends on the pod's
        # namespace, labels and controller only
        key = (action, pod.namespace, tuple(sorted(pod.labels.items())), pod.controller)
        out = made.get(key)
        if out is None:
            out = made[key] = self._with_default_selector(pod, cons)
        return out

    def _with_default_selector(self, pod: Pod, cons: list[Constraint]) -> list[Constraint]:
        if not cons:
            return []
        sel = default_selector(pod, self.handle.listers, self.version)
        if sel.empty():
            return []
        return [replace(c, selector=sel) for c in cons]

    def _count_on(self, pod: Pod, c: Constraint, node_info: NodeInfo) -> int:
        if self.version.pts_empty_selector_counts_zero and c.selector.empty():
            return 0
        return node_info.count_matching(pod.namespace, c.selector)

    # -- PreFilter / Filter

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        v = self.version
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            if v.pts_skip_without_constraints:
                return SKIP
            state.write(PRE_FILTER_KEY, PreFilterState())
            return SUCCESS
        state.write(PRE_FILTER_KEY, self._pre_filter_state(pod, constraints))
        return SUCCESS

    def _pre_filter_state(self, pod: Pod, constraints: list[Constraint]) -> PreFilterState:
        """Per constraint the matching pods per topology value over the nodes that
        count (the pod's node affinity, every topology key, the inclusion policies),
        values in the order of their first such node, from the snapshot's columns."""
        v = self.version
        snap = self.handle.snapshot
        nodes = snap.nodes()
        counts = self._count_columns(pod, constraints)
        inclusion = v.gate(GATE_NODE_INCLUSION)
        affinity_ok = required_node_affinity_matches_nodes(pod, nodes)
        keys = [topology_codes(nodes, c.topology_key) for c in constraints]
        has_all = np.ones(len(nodes), bool)
        for con in constraints:
            has_all &= has_key(nodes, con.topology_key)
        match_num: list[dict[str, int] | None] = []
        arrays: list[Domains | None] = []
        paths: list[CriticalPaths] = []
        if v.pts_counts_pods_off_affinity:
            domain_nodes = affinity_ok & has_all
            for con, count in zip(constraints, counts):
                # a node without the key counts under "" (a missing label read as "")
                codes, values = value_codes(nodes, con.topology_key)
                per_code = _sum_by_code(codes, count, len(values))
                m = {values[k]: int(per_code[k]) for k in _first_appearance(codes[domain_nodes], len(values))}
                match_num.append(m)
                arrays.append(None)
                paths.append(_paths_of(m))
        else:
            base = has_all if inclusion else has_all & affinity_ok
            untolerated = None
            for con, (codes, values), count in zip(constraints, keys, counts):
                mask = base
                if inclusion:
                    if con.node_affinity_policy == HONOR:
                        mask = mask & affinity_ok
                    if con.node_taints_policy == HONOR:
                        if untolerated is None:
                            untolerated = self._untolerated(pod, nodes)
                        mask = mask & ~untolerated
                if mask.all():  # (static codes are numbered in node order: they first appear in code order)
                    per_code = _sum_by_code(codes, count, len(values))
                    order = np.arange(len(values), dtype=np.intp)  # (every node has the keys: each code is used)
                else:
                    per_code = _sum_by_code(codes[mask], count[mask], len(values))
                    order = np.array(_first_appearance(codes[mask], len(values)), np.intp)
                d = Domains(order, per_code[order], values)
                match_num.append(None)
                arrays.append(d)
                paths.append(_paths_of_domains(d, nodes, con.topology_key))
        state = PreFilterState(constraints, match_num, paths, [], arrays)
        state.domains_at_prefilter = [state.domain_count(i) if v.gate(GATE_MIN_DOMAINS) else None
                                      for i in range(len(constraints))]
        return state

    def _count_columns(self, pod: Pod, constraints: Sequence[Constraint]) -> list[np.ndarray]:
        """Per constraint: per node (snapshot order) the matching pods (countPodsMatchSelector)."""
        snap = self.handle.snapshot
        out: list[np.ndarray] = []
        for c in constraints:
            if self.version.pts_empty_selector_counts_zero and c.selector.empty():
                out.append(np.zeros(len(snap), np.int64))
            else:
                out.append(snap.count_column(pod.namespace, c.selector))
        return out

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        v = self.version
        s = state.read(PRE_FILTER_KEY)
        assert isinstance(s, PreFilterState)
        n = len(nodes)
        if not s.constraints:
            return Filtered.passing(n)
        if v.pts_filter_passes_without_domains and not any(s.domain_count(i) for i in range(len(s.constraints))):
            return Filtered.passing(n)
        missing = (unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH) if v.pts_missing_label_unresolvable
                   else unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH))
        table = [SUCCESS, missing, unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)]
        ids = np.zeros(n, np.intp)
        decided = np.zeros(n, bool)
        for i, c in enumerate(s.constraints):  # the first constraint a node fails decides
            codes, values = topology_codes(nodes, c.topology_key)
            lacks = ~has_key(nodes, c.topology_key) & ~decided
            ids[lacks] = 1
            decided |= lacks
            min_match = s.min_match_num(i, v)
            if min_match is None:
                continue
            self_match = 1 if c.selector.matches(pod.labels) else 0
            d = s.domains(i)
            if d is not None and d.values is values:  # (a value that is no domain counts 0)
                per_value = np.zeros(len(values), np.int64)
                per_value[d.codes] = d.counts
            else:
                m = s.match_num[i]
                per_value = np.array([m.get(x, 0) if x is not None else 0 for x in values], np.int64)
            skewed = (per_value[codes] + self_match - min_match > c.max_skew) & ~decided
            ids[skewed] = 2
            decided |= skewed
        return Filtered(ids, table)

    # -- PreFilterExtensions

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, node_info: NodeInfo) -> Status | None:
        self._update_with_pod(state, pod, added, node_info, 1)
        return SUCCESS

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, node_info: NodeInfo) -> Status | None:
        self._update_with_pod(state, pod, removed, node_info, -1)
        return SUCCESS

    def _update_with_pod(self, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo, delta: int) -> None:
        v = self.version
        s = state.get(PRE_FILTER_KEY)
        if not isinstance(s, PreFilterState) or other.namespace != pod.namespace:
            return
        node = node_info.node
        if not node_labels_match_spread_constraints(node.labels, s.constraints):
            return
        inclusion = v.pts_add_remove_respect_affinity and v.gate(GATE_NODE_INCLUSION)
        affinity_ok = True
        if v.pts_add_remove_respect_affinity:
            affinity_ok = required_node_affinity_matches(pod, node)
            if not inclusion and not affinity_ok:
                return
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(other.labels):
                continue
            if inclusion and not match_node_inclusion_policies(c, pod, node, affinity_ok):
                continue
            value = node.labels[c.topology_key]
            n = s.match_num[i].get(value, 0) + delta
            s.match_num[i][value] = n
            s.paths[i].update(value, n)

    # -- PreScore / Score / NormalizeScore

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        v = self.version
        constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            if v.pts_skip_without_constraints:
                return SKIP
            state.write(PRE_SCORE_KEY, PreScoreState())
            return SUCCESS
        if v.pts_weighted_scoring:
            state.write(PRE_SCORE_KEY, self._pre_score_state(pod, constraints, nodes))
        else:
            state.write(PRE_SCORE_KEY, self._pre_score_state_v18(pod, constraints, nodes))
        return SUCCESS

    def _pre_score_state(self, pod: Pod, constraints: list[Constraint], nodes: Sequence[Node]) -> PreScoreState:
        """initPreScoreState and PreScore's count over all nodes, as arrays over the
        snapshot: the domains of each constraint are the values of its key on the
        candidate nodes that are not ignored; the counting nodes match the pod's
        required node affinity (with the inclusion policies: per constraint, as they
        say), carry every key (when all are required), and count under their value
        when it is a domain. Every per-node test is of labels or taints, evaluated once
        per distinct value (``pre_score_reference`` is the per-node form)."""
        v = self.version
        snap = self.handle.snapshot
        alln = snap.nodes()
        n = len(alln)
        require_all = (bool(pod.topology_spread_constraints) or not self.system_defaulted
                       or not v.pts_system_defaults_relax_topologies)
        candidates = snapshot_positions(snap, nodes)
        has_all = np.ones(n, bool)
        if require_all:
            for c in constraints:
                has_all &= has_key(alln, c.topology_key)
        if require_all and not has_all.all():
            scored = candidates[has_all[candidates]]
            ignored = np.zeros(n, bool)
            ignored[candidates] = True
            ignored[scored] = False
            s = PreScoreState(constraints, ignored if len(scored) < len(candidates) else None)
        else:
            scored = candidates
            s = PreScoreState(constraints)
        counts = self._count_columns(pod, constraints)
        inclusion = v.gate(GATE_NODE_INCLUSION)
        affinity_ok = required_node_affinity_matches_nodes(pod, alln)
        base = has_all if inclusion else has_all & affinity_ok
        untolerated: np.ndarray | None = None
        for c, count in zip(constraints, counts):
            if c.topology_key == HOSTNAME_LABEL:
                s.value_counts.append(None)
                s.weights.append(topology_normalizing_weight(len(scored)))
                continue
            codes, values = value_codes(alln, c.topology_key)
            domain = np.zeros(len(values), bool)
            domain[codes[scored]] = True
            s.weights.append(topology_normalizing_weight(int(domain.sum())))
            mask = base
            if inclusion:
                if c.node_affinity_policy == HONOR:
                    mask = mask & affinity_ok
                if c.node_taints_policy == HONOR:
                    if untolerated is None:
                        untolerated = self._untolerated(pod, alln)
                    mask = mask & ~untolerated
            if mask.all():  # (every node counts: the same sums, in the same order, without the gathers)
                summed = np.bincount(codes, weights=count, minlength=len(values))
            else:
                summed = np.bincount(codes[mask], weights=count[mask], minlength=len(values))
            s.value_counts.append(np.where(domain, summed.astype(np.int64), -1))
        return s

    def _untolerated(self, pod: Pod, nodes: NodeSet) -> np.ndarray:
        """Per node of the snapshot whether it has a NoSchedule / NoExecute taint the pod
        does not tolerate (once per tolerations)."""
        return self.handle.snapshot.static_memo(("untolerated", pod.tolerations), lambda: nodes.evaluate(
            "taints", _taints, lambda t: find_untolerated_taint(t, pod.tolerations, do_not_schedule_taints) is not None,
            bool))

    def _pre_score_state_v18(self, pod: Pod, constraints: list[Constraint], nodes: Sequence[Node]) -> PreScoreState:
        """1.18: NodeNameSet, the candidate nodes that carry every key; a pair (key,
        value) per such node and constraint; each pair's count summed, per constraint of
        its key, over the nodes that match the pod's required affinity and carry every
        key (arrays over the snapshot, per key)."""
        snap = self.handle.snapshot
        alln = snap.nodes()
        has_all = np.ones(len(alln), bool)
        for c in constraints:
            has_all &= has_key(alln, c.topology_key)
        candidates = snapshot_positions(snap, nodes)
        in_set = np.zeros(len(alln), bool)
        in_set[candidates[has_all[candidates]]] = True
        counting = has_all & required_node_affinity_matches_nodes(pod, alln)
        s = PreScoreState(constraints, in_name_set=in_set)
        for c, count in zip(constraints, self._count_columns(pod, constraints)):
            codes, values = topology_codes(alln, c.topology_key)
            pairs = s.pair_counts.get(c.topology_key)
            if pairs is None:
                pairs = np.full(len(values), -1, np.int64)
                pairs[codes[in_set]] = 0
                s.pair_counts[c.topology_key] = pairs
            summed = _sum_by_code(codes[counting], count[counting], len(values))
            pairs += np.where(pairs >= 0, summed, 0)
        return s

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        v = self.version
        s = state.read(PRE_SCORE_KEY)
        assert isinstance(s, PreScoreState)
        if not v.pts_weighted_scoring:
            return self._scores_v18(s, nodes)
        n = len(nodes)
        score: np.ndarray | None = None
        snap = self.handle.snapshot
        for i, c in enumerate(s.constraints):  # float sums in constraint order, as upstream
            # (a key every node of the snapshot has is present on every node of the set)
            present = None if snap is not None and nodes.snapshot is snap and every_node_has_key(snap, c.topology_key) \
                else has_key(nodes, c.topology_key)
            per_value = s.value_counts[i]
            if per_value is None:
                cnt = self._counts_on(pod, c, nodes)
            else:  # (the codes of the snapshot's values, for detached nodes too)
                codes = value_codes(snap.nodes(), c.topology_key)[0]
                cnt = np.maximum(per_value, 0)[codes if nodes.positions is snap.all_positions
                                               else codes[snapshot_positions(snap, nodes)]]
            term = cnt.astype(np.float64) * s.weights[i] + float(c.max_skew - 1)  # scoreForCount
            if present is not None and not present.all():
                term = np.where(present, term, 0.0)
            score = term if score is None else score + term  # (0.0 + term is term: the same bits)
        if score is None:
            score = np.zeros(n, np.float64)
        out = go_rounds(score) if v.pts_score_rounds else np.trunc(score).astype(np.int64)
        if s.ignored is not None:
            out[s.ignored[snapshot_positions(self.handle.snapshot, nodes)]] = 0
        return out

    def _counts_on(self, pod: Pod, c: Constraint, nodes: NodeSet) -> np.ndarray:
        """Per node the matching pods on the node itself."""
        if self.version.pts_empty_selector_counts_zero and c.selector.empty():
            return np.zeros(len(nodes), np.int64)
        if nodes.snapshot is not None:
            return nodes.snapshot.count_column(pod.namespace, c.selector)[nodes.positions]
        return np.array([self._count_on(pod, c, info) for info in nodes.infos], np.int64)

    def _scores_v18(self, s: PreScoreState, nodes: NodeSet) -> np.ndarray:
        """1.18's Score: 0 outside NodeNameSet, else the counts of the node's pairs, one
        per constraint."""
        if s.in_name_set is None:  # (no constraint: NodeNameSet is empty)
            return np.zeros(len(nodes), np.int64)
        snap = self.handle.snapshot
        positions = snapshot_positions(snap, nodes)
        inside = s.in_name_set[positions]
        total = np.zeros(len(nodes), np.int64)
        for c in s.constraints:
            codes = topology_codes(snap.nodes(), c.topology_key)[0][positions]
            total += np.maximum(s.pair_counts[c.topology_key], 0)[codes]
        return np.where(inside, total, 0)

    def normalize_scores(self, state: CycleState, pod: Pod, names: Sequence[str],
                         scores: np.ndarray) -> np.ndarray:
        s = state.read(PRE_SCORE_KEY)
        assert isinstance(s, PreScoreState)
        if self.version.pts_weighted_scoring:
            ignored = None if s.ignored is None else s.ignored[snapshot_positions(self.handle.snapshot, names)]
            return normalize_score_array(scores, ignored)
        if s.in_name_set is None:
            return normalize_score_array_v18(scores, np.ones(len(scores), bool))
        return normalize_score_array_v18(scores, ~s.in_name_set[snapshot_positions(self.handle.snapshot, names)])


__all__ = [
    "PodTopologySpread",
    "Constraint",
    "CriticalPaths",
    "filter_constraints",
    "normalize_scores",
    "normalize_scores_v18",
    "score_for_count",
    "topology_normalizing_weight",
    "go_round",
]
