"""SelectorSpread: spread the pods of a Service / RC / ReplicaSet / StatefulSet over
nodes and zones (framework/plugins/selectorspread; before 1.18 the priority
functions SelectorSpreadPriority and ServiceSpreadingPriority).

Score (the map function) counts the matching pods on a node; NormalizeScore (the
reduce function) turns counts into 0..MaxNodeScore, blending in zone counts with
weight 2/3 when any scored node has a zone. What changed by version:

* up to 1.13 a pod counts when it matches ANY of the owners' selectors; 1.14-1.16
  when it matches ALL of them; from 1.17 the selectors are merged into one
  (``selector_spread_match``);
* from 1.18 a pod with topologySpreadConstraints gets 0 everywhere;
* from 1.22 the owning RC/RS/StatefulSet is found through the controller
  ownerReference (``default_selector_by_owner_ref``, in ``helper.default_selector``);
* the scale is 0..10 before 1.17 and 0..100 from 1.17.
"""

from __future__ import annotations

from collections.abc import Sequence

from kspread.engine.framework.interface import NodeScore, Plugin, PreScorePlugin, ScorePlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SUCCESS, CycleState, Status
from kspread.engine.labels import EVERYTHING, Selector, merge_sets, selector_from_set
from kspread.engine.model import Node, Pod
from kspread.engine.plugins.helper import default_selector, get_zone_key, legacy_selectors
from kspread.engine.snapshot import NodeInfo

ZONE_WEIGHTING = 2.0 / 3.0


class _State:
    __slots__ = ("selectors", "mode", "skip")

    def __init__(self, selectors: list[Selector], mode: str, skip: bool) -> None:
        self.selectors = selectors
        self.mode = mode  # 'any', 'all' or 'merged' (one selector)
        self.skip = skip


def count_matching_pods(namespace: str, state: _State, node_info: NodeInfo) -> int:
    """``countMatchingPods``: pods on the node in ``namespace``, not terminating,
    matching the selector(s) as the version does."""
    if not node_info.pods:
        return 0
    if state.mode == "merged":
        sel = state.selectors[0]
        if sel.empty():
            return 0
        return node_info.count_matching(namespace, sel)
    if not state.selectors:
        return 0
    matcher = node_info._matcher
    combine = any if state.mode == "any" else all
    total = 0
    for g, n in node_info.groups.items():
        if g[0] == namespace and combine(matcher.matches(s, namespace, g) for s in state.selectors):
            total += n
    return total


def spread_normalize(scores: list[NodeScore], nodes: dict[str, Node], max_score: int, version) -> None:
    """The reduce step: node part ``max*(maxCount-count)/maxCount``, blended with the
    zone part by 2/3 for nodes with a zone key when any scored node has one;
    float64 arithmetic in upstream's operation order, truncated."""
    counts_by_zone: dict[str, int] = {}
    max_by_node = 0
    zone_of: dict[str, str] = {}
    for ns in scores:
        if ns.score > max_by_node:
            max_by_node = ns.score
        z = get_zone_key(nodes[ns.name], version)
        zone_of[ns.name] = z
        if z == "":
            continue
        counts_by_zone[z] = counts_by_zone.get(z, 0) + ns.score
    max_by_zone = 0
    for c in counts_by_zone.values():
        if c > max_by_zone:
            max_by_zone = c
    have_zones = len(counts_by_zone) != 0
    fmax = float(max_score)
    for ns in scores:
        f = fmax
        if max_by_node > 0:
            f = fmax * (float(max_by_node - ns.score) / float(max_by_node))
        if have_zones:
            z = zone_of[ns.name]
            if z != "":
                zone_score = fmax
                if max_by_zone > 0:
                    zone_score = fmax * (float(max_by_zone - counts_by_zone[z]) / float(max_by_zone))
                f = (f * (1.0 - ZONE_WEIGHTING)) + (ZONE_WEIGHTING * zone_score)
        ns.score = int(f)


class _SpreadBase(Plugin, PreScorePlugin, ScorePlugin):
    has_normalize = True
    services_only = False
    _KEY = "PreScoreSelectorSpread"

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        v = self.version
        skip = v.selector_spread_skips_topology_spread_pods and bool(pod.topology_spread_constraints)
        listers = self.handle.listers
        if v.selector_spread_match == "merged":
            if self.services_only:
                label_set: dict[str, str] = {}
                for svc in listers.pod_services(pod):
                    label_set = merge_sets(label_set, svc.selector or {})
                sel = selector_from_set(label_set) if label_set else EVERYTHING
            else:
                sel = default_selector(pod, listers, v)
            st = _State([sel], "merged", skip)
        else:
            st = _State(legacy_selectors(pod, listers, self.services_only), v.selector_spread_match, skip)
        state.write(self._KEY + self.name, st)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_name: str) -> tuple[int, Status]:
        st = state.read(self._KEY + self.name)
        assert isinstance(st, _State)
        if st.skip:
            return 0, SUCCESS
        return count_matching_pods(pod.namespace, st, self.handle.snapshot.get(node_name)), SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        st = state.read(self._KEY + self.name)
        assert isinstance(st, _State)
        if st.skip:
            return SUCCESS
        infos = self.handle.snapshot.node_infos
        spread_normalize(scores, {s.name: infos[s.name].node for s in scores}, self.version.max_node_score,
                         self.version)
        return SUCCESS


@register("SelectorSpread", first=12, last=28)
class SelectorSpread(_SpreadBase):
    pass


@register("ServiceSpreadingPriority", first=12, last=17)
class ServiceSpreadingPriority(_SpreadBase):
    """The pre-1.18 priority that spreads by Services only (RC/RS/SS listers empty)."""

    services_only = True
