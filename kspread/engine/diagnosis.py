"""The scheduler's own verdict on a pod that fits no node: ``FitError.Error()``, the
message of its FailedScheduling event and PodScheduled condition, as the case's version
words it (framework/types.go; core/generic_scheduler.go before 1.21). A function of the
cycle's records (each node's filter status, PreFilter's, PostFilter's and the
preemption's outcome): reporting only, never an expectation.

How the wording changed:

* up to 1.23: ``0/N nodes are available: <histogram>.``, the histogram being
  ``"<count> <reason>"`` for every reason of every node's status, sorted as strings
  (so "10 x" before "2 y"), joined by ", ". From 1.19 (PR #92797) a PreFilter
  rejection is a FitError whose every node carries PreFilter's status.
* 1.24 (PR #107775): PostFilter's message is appended after a space; DefaultPreemption
  prefixes its own with ``preemption: `` (``preemption: 0/N nodes are available: 2 No
  preemption victims found for incoming pod, 2 Preemption is not helpful for
  scheduling.``).
* 1.25 (PR #110894): ``0/N nodes are available:`` then `` <PreFilter message>.`` when
  PreFilter rejected the pod, else `` <histogram>.`` (left out when empty), then
  `` <PostFilter message>.``: a PostFilter message that ends with a period ends with
  two (issue #123301).
* 1.30: the PostFilter message is appended without the extra period.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from kspread.engine.allocator import request_reports
from kspread.engine.corev1helpers import tolerations_tolerate_taint
from kspread.engine.devices import selector_matches
from kspread.engine.framework.interface import FilterPlugin, StatusView
from kspread.engine.framework.status import Code, CycleState, Status
from kspread.engine.model import Pod, Taint
from kspread.engine.plugins.dynamicresources import NAME as DRA
from kspread.engine.plugins.dynamicresources import DRAState, DynamicResourcesFilter, to_allocate
from kspread.engine.plugins.nodeaffinity import NodeAffinity
from kspread.engine.plugins.nodematch import _requirement_matches as requirement_matches
from kspread.engine.plugins.nodematch import do_not_schedule_taints, node_selector_matches
from kspread.engine.plugins.nodeports import NodePorts, check_conflict
from kspread.engine.plugins.noderesources_fit import PRE_FILTER_KEY as FIT_PRE_FILTER_KEY
from kspread.engine.plugins.noderesources_fit import (
    NodeResourcesFitFilter,
    dra_backed_resources,
    fits_request,
)
from kspread.engine.plugins.nodeunschedulable import NodeUnschedulable
from kspread.engine.plugins.podtopologyspread import PRE_FILTER_KEY as SPREAD_PRE_FILTER_KEY
from kspread.engine.plugins.podtopologyspread import PodTopologySpread, PreFilterState
from kspread.engine.plugins.tainttoleration import TaintToleration
from kspread.engine.quantity import PODS, show_quantity
from kspread.engine.resources import pod_requests
from kspread.engine.snapshot import DEFAULT_BIND_ALL_HOST_IP, NodeInfo, pod_host_ports
from kspread.engine.versions import Version

if TYPE_CHECKING:
    from kspread.engine.framework.runtime import Framework
    from kspread.engine.scheduler import CycleResult

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"


def prefilter_rejection_is_fit_error(v: Version) -> bool:
    """A PreFilter plugin's Unschedulable status is a FitError, every node carrying it
    (PR #92797, 1.19); before, the cycle failed with the status as its error."""
    return v.minor >= 19


def appends_post_filter_message(v: Version) -> bool:
    """FitError carries PostFilter's message (Diagnosis.PostFilterMsg) and DefaultPreemption
    prefixes its messages with "preemption: " (PR #107775, 1.24)."""
    return v.minor >= 24


def separates_pre_filter_message(v: Version) -> bool:
    """The PreFilter message stands alone instead of counted once per node, each part
    ends with a period (PR #110894, 1.25)."""
    return v.minor >= 25


def doubles_post_filter_period(v: Version) -> bool:
    """The PostFilter message gets a period of its own, after the one it ends with
    (1.25 to 1.29; issue #123301, fixed in 1.30)."""
    return 25 <= v.minor <= 29


def reason_histogram(statuses: Mapping[str, Status]) -> list[str]:
    """``sortReasonsHistogram``: "<count> <reason>" for every reason of every node's
    status, sorted as strings."""
    counts: Counter[str] = Counter()
    if isinstance(statuses, StatusView) and statuses._dict is None:
        per_id = np.bincount(statuses.ids, minlength=len(statuses.table)) if len(statuses.ids) else \
            np.zeros(len(statuses.table), np.intp)
        for name in statuses.overrides:
            j = statuses.names.index(name)
            per_id[int(statuses.ids[j])] -= 1
        for k, st in enumerate(statuses.table):
            for reason in st.reasons:
                counts[reason] += int(per_id[k])
        for st in statuses.overrides.values():
            for reason in st.reasons:
                counts[reason] += 1
    else:
        for st in statuses.values():
            for reason in st.reasons:
                counts[reason] += 1
    return sorted(f"{n} {reason}" for reason, n in counts.items() if n > 0)


def fit_error_message(v: Version, num_all_nodes: int, statuses: Mapping[str, Status],
                      pre_filter: Status | None = None, post_filter_msg: str = "") -> str:
    """``FitError.Error()`` as version ``v`` writes it."""
    head = NO_NODE_AVAILABLE_MSG.format(num_all_nodes)
    pre_msg = pre_filter.message if pre_filter is not None and not pre_filter.is_success() else ""
    post = post_filter_msg if appends_post_filter_message(v) else ""
    if not separates_pre_filter_message(v):
        msg = f"{head}: {', '.join(reason_histogram(statuses))}."
        return msg + (" " + post if post else "")
    msg = head + ":"
    if pre_msg:
        msg += f" {pre_msg}."
    else:
        hist = reason_histogram(statuses)
        if hist:
            msg += f" {', '.join(hist)}."
    if post:
        msg += f" {post}." if doubles_post_filter_period(v) else f" {post}"
    return msg


def preemption_message(v: Version, r: CycleResult) -> str:
    """DefaultPreemption's PostFilter message as upstream words it (empty when it
    nominated a node, or before 1.24): ``preemption: `` then the pod's ineligibility, or
    the FitError of the nodes where preemption cannot help and of the dry run's
    failures."""
    st = r.post_filter_status
    if st is None or st.is_success() or st.code == Code.ERROR or not appends_post_filter_message(v):
        return ""
    last = _last_post_filter_message(v, r, st)
    if st.code == Code.UNSCHEDULABLE and r.post_filter_reasons:
        # RunPostFilterPlugins: every rejecting plugin's reasons, joined
        return ", ".join((*r.post_filter_reasons, last))
    return last


def _last_post_filter_message(v: Version, r: CycleResult, st: Status) -> str:
    if st.plugin != "DefaultPreemption":
        return st.message
    out = r.preemption
    statuses = r.statuses
    if out is not None and (out.potential or st.message == PREEMPTION_NOT_HELPFUL):
        potential = set(out.potential)
        inner: dict[str, Status] = {}
        for node in statuses:
            if node not in potential:
                inner[node] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (PREEMPTION_NOT_HELPFUL,))
            elif node in out.dry_run and not out.dry_run[node].is_success():
                inner[node] = out.dry_run[node]
        if out.candidates:  # extenders left no candidate: SelectCandidate's message
            return "preemption: " + st.message
        return "preemption: " + fit_error_message(v, len(inner), inner)
    return "preemption: " + st.message


def verdict(v: Version, r: CycleResult) -> str | None:
    """The FailedScheduling message of the cycle ``r``: None when it selected a node,
    failed with an error, or its per-node records are gone (a compacted cycle). A pod that
    fit in a pod group cycle whose group could not be placed (1.36) gets the group's words
    ("pod group is unschedulable, <its Permit message>")."""
    pg = r.pod_group
    if pg is not None and pg.group_status == "Unschedulable" and pg.message is not None:
        return str(pg.message)
    if r.error or r.selected or r.compacted:
        return None
    pre = r.pre_filter_status
    statuses = r._statuses if isinstance(r._statuses, StatusView) else r.statuses
    if not statuses:
        return None
    if pre is not None and not pre.is_success() and not prefilter_rejection_is_fit_error(v):
        return None  # not a FitError: the cycle's error (kspread does not model its text before 1.19)
    return fit_error_message(v, len(statuses), statuses, pre, preemption_message(v, r))


# ---- what a node lacks ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Lack:
    """One thing a node lacks for the pod, as a failing filter plugin sees it: ``detail``
    the numbers beside the plugin's reason (``requests 1500m; 1320m of 4 free``), ``need``
    what would make that check pass (``180m more cpu``)."""

    plugin: str
    detail: str
    need: str


def _resource_lacks(plugin: FilterPlugin, state: CycleState, pod: Pod, info: NodeInfo, v: Version) -> list[Lack]:
    pre = state.get(FIT_PRE_FILTER_KEY)
    request = pre.request if pre is not None and hasattr(pre, "request") else pod_requests(pod, v)
    args = getattr(plugin, "args", {}) or {}
    ignored = (frozenset(args.get("ignoredResources") or ()), frozenset(args.get("ignoredResourceGroups") or ()))
    out = []
    backed = dra_backed_resources(getattr(plugin, "handle", None), v)
    for ins in fits_request(request, info, v, *ignored, backed):
        name = plugin.name
        if ins.resource == PODS:
            out.append(Lack(name, f"{ins.used} of {ins.capacity} pods on the node", "room for 1 more pod"))
            continue
        free = ins.capacity - ins.used
        q = show_quantity
        if free >= 0:
            detail = f"requests {q(ins.resource, ins.requested)}; {q(ins.resource, free)} of " \
                     f"{q(ins.resource, ins.capacity)} free"
        else:
            detail = f"requests {q(ins.resource, ins.requested)}; over-committed: {q(ins.resource, ins.used)} of " \
                     f"{q(ins.resource, ins.capacity)} requested"
        out.append(Lack(name, detail, f"{q(ins.resource, ins.requested - max(free, 0))} more {ins.resource}"))
    return out


def _taint(t: Taint) -> str:
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def _taint_lacks(plugin: FilterPlugin, pod: Pod, info: NodeInfo) -> list[Lack]:
    tols = tuple(pod.tolerations)
    taints = [t for t in info.node.taints if do_not_schedule_taints(t) and not tolerations_tolerate_taint(tols, t)]
    if not taints:
        return []
    shown = ", ".join(_taint(t) for t in taints)
    return [Lack(plugin.name, f"untolerated: {shown}", f"a toleration of {shown}")]


def _has(labels: Mapping[str, str], key: str) -> str:
    return f"the node has {key}={labels[key]}" if key in labels else f"the node has no {key} label"


def _affinity_lacks(plugin: FilterPlugin, pod: Pod, info: NodeInfo) -> list[Lack]:
    node = info.node
    labels = node.labels
    out = []
    for k, want in pod.node_selector.items():
        if labels.get(k) != want:
            out.append(Lack(plugin.name, f"nodeSelector {k}={want}: {_has(labels, k)}", f"the label {k}={want}"))
    aff = pod.affinity
    terms = aff.node_affinity.required if aff is not None and aff.node_affinity is not None else None
    added = getattr(plugin, "added_required", None)
    for what, group in (("addedAffinity", added), ("required node affinity", terms)):
        if group is None or node_selector_matches(group, node):
            continue
        parts, needs = [], []
        for i, term in enumerate(group, 1):
            failing = [r for r in term.match_expressions if not requirement_matches(r, labels)]
            failing_fields = [r for r in term.match_fields if not requirement_matches(r, {"metadata.name": node.name})]
            said = [f"{r} ({_has(labels, r.key)})" for r in failing] + [f"{r} (the node is {node.name})"
                                                                       for r in failing_fields]
            parts.append(f"term {i}: " + ("; ".join(said) if said else "no requirement"))
            needs.append(" and ".join(str(r) for r in [*failing, *failing_fields]) or f"term {i}")
        out.append(Lack(plugin.name, f"{what} not matched: " + ", ".join(parts),
                        f"labels matching {' or '.join(needs)} ({what})"))
    return out


def _ports_lacks(plugin: FilterPlugin, pod: Pod, info: NodeInfo) -> list[Lack]:
    taken = [w for w in pod_host_ports(pod) if check_conflict(info.used_ports, w)]
    if not taken:
        return []
    shown = ", ".join(f"{port}/{proto}" + (f" on {ip}" if ip != DEFAULT_BIND_ALL_HOST_IP else "")
                      for ip, proto, port in taken)
    return [Lack(plugin.name, f"host port {shown} in use", f"host port {shown} free")]


def _spread_lacks(plugin: FilterPlugin, state: CycleState, pod: Pod, info: NodeInfo, v: Version) -> list[Lack]:
    """Each constraint the node fails: its topology label missing, or the skew (the
    matching pods in the node's domain, plus the pod if it matches, minus the global
    minimum) over maxSkew."""
    s = state.get(SPREAD_PRE_FILTER_KEY)
    if not isinstance(s, PreFilterState):
        return []
    out = []
    for i, c in enumerate(s.constraints):
        key = c.topology_key
        value = info.node.labels.get(key)
        if value is None:
            out.append(Lack(plugin.name, f"no {key} label", f"the label {key}"))
            continue
        least = s.min_match_num(i, v)
        if least is None:
            continue
        count = s.match_num[i].get(value, 0)
        skew = count + (1 if c.selector.matches(pod.labels) else 0) - least
        if skew > c.max_skew:
            out.append(Lack(plugin.name, f"{key}={value}: {count} matching pod(s), the minimum {least}, "
                                         f"skew {skew} > maxSkew {c.max_skew}",
                            f"{skew - c.max_skew} fewer matching pod(s) in {key}={value}"))
    return out


def _node_allocatable_lacks(plugin: FilterPlugin, st: Status) -> list[Lack]:
    """DynamicResources' rejections for node allocatable resources (DRANodeAllocatableResources):
    the devices were found, so no device report; per ``Insufficient <resource>`` the resource
    to free, else the reason."""
    reasons = st.reasons
    if reasons and all(r.startswith("Insufficient ") for r in reasons):
        return [Lack(plugin.name, "", f"more free {r.removeprefix('Insufficient ')} for the pod's requests with its "
                                     "claims' node allocatable resources") for r in reasons]
    if any(k in st.message for k in ("node-allocatable", "node allocatable resource claim", "pod level request for")):
        return [Lack(plugin.name, "", f"passing {plugin.name}: {st.message}")]
    return []


def _device_lacks(plugin: FilterPlugin, state: CycleState, pod: Pod, info: NodeInfo) -> list[Lack]:
    """DynamicResources: per request of the claims it had to allocate, the devices of the
    node that match it and those free; a claim allocated elsewhere, by its node selector."""
    s = state.get(DRA)
    if not isinstance(s, DRAState) or not s.claims:
        return []
    out = []
    for c, sel in zip(s.claims, s.available_on):
        if c.allocation is not None and sel is not None and not selector_matches(sel, info.node):
            out.append(Lack(plugin.name, f"claim {c.key} is allocated to another node",
                            f"claim {c.key} deallocated (PostFilter does it when no other pod reserves it)"))
    if s.allocator is not None:
        for rep in request_reports(s.allocator, info.node, to_allocate(s, pod, info.node.name)):
            detail = (f"claim {rep.claim} request {rep.request}: needs {rep.needed}, {rep.matching} matching "
                      f"device(s) on the node, {rep.free} free")
            if rep.tainted:
                detail += f", {rep.tainted} with a taint the request does not tolerate"
            if rep.error:
                detail += f" ({rep.error})"
            if rep.free < rep.needed or rep.needed == 0:
                need = f"{max(rep.needed - rep.free, 1)} more free matching device(s) for {rep.claim}/{rep.request}"
            else:
                need = f"devices for {rep.claim}/{rep.request} that keep its constraints and leave enough for the rest"
            out.append(Lack(plugin.name, detail, need))
    return out


def node_lacks(fwk: Framework, state: CycleState, pod: Pod, info: NodeInfo,
               rows: list[tuple[str, Status]]) -> list[Lack]:
    """What the node lacks for the pod, for every filter plugin that rejects it (``rows``:
    ``Framework.filter_plugin_statuses``); numbers for resources, the taints, labels and
    host ports named; any other plugin's reason as it is. Valid while the cluster is as
    the cycle saw it, with the pods nominated to the node."""
    plugins = {p.name: p for p in fwk.filter_plugins}
    v = fwk.version
    nominated = fwk.nominated_pods_for(pod, info.name)
    if nominated:  # the filters ran with the pods nominated here (equal or higher priority)
        info = info.clone()
        for q in nominated:
            info.add_pod(q if q.node_name == info.name else replace(q, node_name=info.name))
    out: list[Lack] = []
    for name, st in rows:
        if st.is_success() or st.is_skip():
            continue
        p = plugins.get(name)
        found: list[Lack] = []
        if isinstance(p, NodeResourcesFitFilter):
            found = _resource_lacks(p, state, pod, info, v)
        elif isinstance(p, TaintToleration):
            found = _taint_lacks(p, pod, info)
        elif isinstance(p, NodeAffinity):
            found = _affinity_lacks(p, pod, info)
        elif isinstance(p, PodTopologySpread):
            found = _spread_lacks(p, state, pod, info, v)
        elif isinstance(p, NodePorts):
            found = _ports_lacks(p, pod, info)
        elif isinstance(p, DynamicResourcesFilter):
            found = _node_allocatable_lacks(p, st) or _device_lacks(p, state, pod, info)
        elif (volume_lacks := getattr(p, "volume_lacks", None)) is not None:  # the volume plugins
            found = [Lack(name, detail, need) for detail, need in volume_lacks(state, pod, info)]
        elif isinstance(p, NodeUnschedulable):
            found = [Lack(name, "spec.unschedulable is true",
                          "uncordoning, or a toleration of node.kubernetes.io/unschedulable:NoSchedule")]
        out.extend(found or [Lack(name, "", f"passing {name}: {st.message or st.code}")])
    return out


def closest_first(lacks: Mapping[str, list[Lack]], order: Sequence[str]) -> list[str]:
    """The nodes that lack something, those closest to fitting first: fewest rejecting
    plugins, then fewest lacks, then node order."""
    rank = {n: i for i, n in enumerate(order)}
    nodes = [n for n, ls in lacks.items() if ls]
    return sorted(nodes, key=lambda n: (len({lk.plugin for lk in lacks[n]}), len(lacks[n]), rank.get(n, len(rank))))
