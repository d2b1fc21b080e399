"""TopologyAwareWorkloadScheduling (1.36, alpha): the placements a pod group cycle tries
(``podGroupSchedulingPlacementAlgorithm``, pkg/scheduler/schedule_one_podgroup.go) and
the plugins that make and score them, as the default profile has them with the gate on
(applyTopologyAwareWorkloadScheduling: TopologyPlacementGenerator, and PodGroupPodsCount
with weight 1, appended to MultiPoint; NodeResourcesFit is a PlacementScore plugin too).
The cycle itself is ``kspread.engine.podgroupcycle``.

* ``generate`` (RunPlacementGeneratePlugins, TopologyPlacementGenerator.GeneratePlacements):
  a PodGroup without ``schedulingConstraints.topology`` gets one placement, every node. With
  a topology key, one placement per value of that node label (nodes without it are in
  none), in the snapshot's node order; a group with scheduled (assigned or assumed) pods
  only the domain of their nodes. No placement: Unschedulable "no feasible placements
  found" (plugin TopologyPlacementGenerator). A missing PodGroup, a scheduled pod whose
  node has no such label or is gone: Error.
* ``score`` (RunPlacementScorePlugins, findBestPlacement): for each placement in which the
  group can be placed, PodGroupPodsCount (the group's scheduled pods in the cache plus the
  pods the placement's run put on a node, normalized to 0..100 against the most) and
  NodeResourcesFit's ScorePlacement (MostAllocated over the placement's nodes: the
  requests of those pods plus what the nodes have allocated, against their allocatable,
  its scoringStrategy's resources and weights), each times its weight.

Go's map order decides the order of the placements (nodesPerTopologyDomain) and a random
number (Randomizer) the best of equal total scores. kspread tries the domains in the order
their first node appears in the snapshot's node list, takes the first of the tied best
placements in that order and marks the group's pods as placed from a tie.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kspread.engine.framework.profile import placement_plugins
from kspread.engine.plugins.podgroups import PodGroup, PodGroupState
from kspread.errors import CaseError

if TYPE_CHECKING:  # pragma: no cover
    from kspread.engine.scheduler import Scheduler

GENERATOR = "TopologyPlacementGenerator"
PODS_COUNT = "PodGroupPodsCount"
NO_PLACEMENTS = "no feasible placements found"
MAX_SCORE = 100


@dataclass(frozen=True, slots=True)
class Placement:
    """A placement: its name (the domain; "" for every node) and its nodes in the
    snapshot's node order."""

    name: str
    nodes: tuple[str, ...]


def placements_apply(sched: Scheduler) -> bool:
    """podGroupSchedulingAlgorithm takes the placement algorithm with the gate on."""
    return sched.version.minor == 36 and sched.version.gate("TopologyAwareWorkloadScheduling")


def generate(sched: Scheduler, key: tuple[str, str], pg: PodGroup | None,
             state: PodGroupState | None, assumed_nodes: dict[str, str]) -> tuple[list[Placement], str, str]:
    """The placements (in kspread's order), or none with the status code and message:
    ("Unschedulable", NO_PLACEMENTS) or ("Error", ...). ``assumed_nodes``: the node of
    each of the group's pods assumed in the cache (waiting in a binding cycle)."""
    every = Placement("", tuple(sched.order))
    generators, _ = placement_plugins(sched.case.profile, sched.version)
    if not generators:
        # RunPlacementGeneratePlugins without a plugin: one placement, every node
        return [every], "", ""
    if pg is None:
        # the generator's PodGroup lister (an apimachinery NotFound error)
        return [], "Error", f'podgroup.scheduling.k8s.io "{key[1]}" not found'
    tk = pg.topology_key
    if tk is None:
        return [every], "", ""
    required: str | None = None
    scheduled = _scheduled_pods(state, assumed_nodes)
    if scheduled:
        domain, err = _scheduled_domain(sched, key, tk, scheduled)
        if err is not None:
            return [], "Error", f"cannot determine domain for already scheduled pods: {err}"
        required = domain
    by_domain: dict[str, list[str]] = {}
    for name in sched.order:
        value = sched.snapshot.get(name).node.labels.get(tk)
        if value is None or (required is not None and value != required):
            continue
        by_domain.setdefault(value, []).append(name)
    if not by_domain:
        return [], "Unschedulable", NO_PLACEMENTS
    return [Placement(d, tuple(ns)) for d, ns in by_domain.items()], "", ""


def _scheduled_pods(state: PodGroupState | None, assumed_nodes: dict[str, str]) -> list[tuple[str, str | None]]:
    """ScheduledPods of the cache's pod group state: (the pod as klog.KObj names it,
    namespace/name; its node)."""
    if state is None:
        return []
    out: list[tuple[str, str | None]] = [(f"{state.all[k].namespace}/{state.all[k].name}", state.all[k].node_name)
                                         for k in state.assigned]
    out += [(f"{state.all[k].namespace}/{state.all[k].name}", assumed_nodes.get(k)) for k in state.assumed]
    return out


def _scheduled_domain(sched: Scheduler, key: tuple[str, str], tk: str,
                      pods: list[tuple[str, str | None]]) -> tuple[str, str | None]:
    """getScheduledPodsTopologyDomain: the domain of the scheduled pods' nodes, or the
    error. Upstream walks the pods in a Go map's order and stops at the first error: when
    that order could change which error is returned, kspread refuses."""
    domains: dict[str, None] = {}
    errors: list[str] = []
    for k, node in pods:
        info = sched.snapshot.node_infos.get(node) if node is not None else None
        if info is None:
            errors.append(f'getting node for pod {k}: nodeinfo not found for node name "{node or ""}"')
            continue
        value = info.node.labels.get(tk)
        if value is None:
            errors.append(f"no topology domain found for pod {k}")
            continue
        domains[value] = None
    if not errors and len(domains) == 1:
        return next(iter(domains)), None
    if len(errors) == 1 and len(domains) <= 1:
        return "", errors[0]
    raise CaseError(f"pod group {key[0]}/{key[1]}'s scheduled pods are in several domains of {tk} or on nodes "
                    "without it; upstream's error names the first such pods in a Go map's order: kspread does not "
                    "model it", ["schedule"])


def score(sched: Scheduler, state: PodGroupState | None, assignments: list[tuple[Placement, list[Any]]]
          ) -> list[int]:
    """The total score of each placement (``assignments``: the placement and the pods its
    run put on a node, as Pods): NodeResourcesFit's ScorePlacement plus PodGroupPodsCount's
    normalized count, each times its weight (both 1 in the default profile)."""
    _, scorers = placement_plugins(sched.case.profile, sched.version)
    totals = [0] * len(assignments)
    for name, weight in scorers:
        if name == "NodeResourcesFit":
            fit = sched.framework.plugin("NodeResourcesFit")
            if fit is None or not hasattr(fit, "_scorer"):
                raise CaseError("NodeResourcesFit scores placements without scoring nodes in this profile: kspread "
                                "does not model it", ["schedule"])
            for i, (pl, pods) in enumerate(assignments):
                totals[i] += weight * _fit_placement_score(sched, fit, pl, pods)
        elif name == PODS_COUNT:
            scheduled = state.scheduled_count() if state is not None else 0
            counts = [scheduled + len(pods) for _, pods in assignments]
            most = max(counts)
            if most == 0:  # (a placement that succeeded has a pod on a node: never)
                raise CaseError("no pods from pod group are assigned to any of the candidate placements", ["schedule"])
            for i, c in enumerate(counts):
                totals[i] += weight * (c * MAX_SCORE // most)
    return totals


def _fit_placement_score(sched: Scheduler, fit: Any, pl: Placement, pods: list[Any]) -> int:
    """resourceAllocationScorer.scorePlacement with MostAllocated over the scoringStrategy's
    resources: the pods' requests (non-zero defaults, without pod-level resources or
    resize status) plus each node's allocated (cpu and memory non-zero), against the sum of
    the nodes' allocatable; a resource no node has is left out, an extended resource the
    pods do not request too."""
    from kspread.engine.plugins.resource_allocation import usage_columns

    scorer = fit._scorer
    specs = scorer.strategy.resources
    requests = [0] * len(specs)
    for p in pods:
        for j, r in enumerate(scorer._requests(p)):
            requests[j] += r
    positions = np.array([sched.snapshot.position[n] for n in pl.nodes], np.intp)
    nodes = sched.snapshot.nodes(positions)
    cols = usage_columns(nodes, specs, requests, sched.version, False)
    node_score = weight_sum = 0
    for c in cols:
        present = np.asarray(c.present, bool)
        allocatable = int(np.asarray(c.allocatable, np.int64)[present].sum())
        if allocatable == 0:
            continue
        before = np.asarray(c.before, np.int64)
        allocated = int(before[present].sum())
        # the column adds the pods' total to every node: read it back from one
        own = int((np.asarray(c.requested, np.int64) - before)[present][0])
        requested = min(own + allocated, allocatable)
        node_score += requested * MAX_SCORE // allocatable * c.weight
        weight_sum += c.weight
    return node_score // weight_sum if weight_sum else 0

