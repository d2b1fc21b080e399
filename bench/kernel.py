"""The floor: a numpy kernel doing the default profile's arithmetic for a basic cycle,
and nothing else (no framework, no statuses, no results kept), to measure kspread's
cycle against (``python bench/bench.py --only floor``).

The shape is SchedulingBasic's with one existing pod per node: nodes of 4 cpu / 32Gi /
110 pods (no ephemeral-storage), one existing 100m / 500Mi pod on each, incoming
100m / 500Mi pods, kspread's default profile of the latest version (1.37) and its
search (a case without ``percentageOfNodesToScore`` searches every node). Per cycle:

* Filter (NodeResourcesFit's fitsRequest): the pod count against allocatable pods,
  then cpu, memory and ephemeral-storage requests against allocatable minus requested,
  over every node;
* the search: a case without ``percentageOfNodesToScore`` searches every node, so it
  finds every feasible node wherever it starts (the start index stays 0 for kspread,
  which counts every node processed);
* Score over those nodes, in upstream's integer and float64 operations:
  NodeResourcesFit LeastAllocated (cpu and memory, weights 1, NonZeroRequested plus the
  pod's request, ``(capacity - requested) * 100 / capacity``, their weighted mean);
  NodeResourcesBalancedAllocation as from 1.36 (how the pod changes the balance:
  ``50 + (50 + with - without) / 2``, each ``trunc((1 - |f_cpu - f_mem| / 2) * 100)`` over
  the fractions capped at 1); TaintToleration (no taints: raw 0 on every node, normalized
  to 100, weight 3: 300); ImageLocality (no images: 0); NodeAffinity, PodTopologySpread
  and InterPodAffinity skip in PreScore for these pods (no affinity, no constraints) and
  do not score. The total is their weighted sum (weights 1, 1, 3, 1);
* the highest total; ties as upstream's heap of scores pops them from 1.35 (no extender:
  the first tied node in a preorder walk of the heap over the scored nodes in search
  order, ``heap_first``, kspread's rule for a sequence);
* bind: the node's requested, non-zero requested and pod-count columns.

``run`` returns the node chosen for each pod, which the bench compares with kspread's
placements over the same sequence, so the kernel is known to do the same arithmetic.
"""

from __future__ import annotations

import math
import time

import numpy as np

from kspread.engine.scheduler import heap_first

GI, MI = 2**30, 2**20
MAX_SCORE = 100


def _balance(cpu_req: np.ndarray, mem_req: np.ndarray, cpu_alloc: float, mem_alloc: float) -> np.ndarray:
    fc = np.minimum(cpu_req / cpu_alloc, 1.0)
    fm = np.minimum(mem_req / mem_alloc, 1.0)
    return np.trunc((1 - np.fabs((fc - fm) / 2)) * float(MAX_SCORE)).astype(np.int64)


def run(n_nodes: int, n_pods: int) -> tuple[list[int], float, float]:
    """Schedule ``n_pods`` incoming pods; (the chosen node index per pod, -1 when none
    fits; wall seconds; CPU seconds of the loop)."""
    cpu_alloc, mem_alloc, pods_alloc = 4000, 32 * GI, 110
    pod_cpu, pod_mem, pod_eph = 100, 500 * MI, 0
    cpu = np.full(n_nodes, pod_cpu, np.int64)  # one existing pod per node
    mem = np.full(n_nodes, pod_mem, np.int64)
    eph = np.zeros(n_nodes, np.int64)
    count = np.ones(n_nodes, np.int64)
    eph_alloc = 0
    taint_toleration = 3 * MAX_SCORE  # normalized 100 on every node, weight 3
    chosen: list[int] = []
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n_pods):
        # Filter: every node, four resources (the requests the pod has)
        fits = count < pods_alloc
        fits &= cpu <= cpu_alloc - pod_cpu
        fits &= mem <= mem_alloc - pod_mem
        if pod_eph:
            fits &= eph <= eph_alloc - pod_eph
        found = np.flatnonzero(fits)  # the search: every feasible node
        if not len(found):
            chosen.append(-1)
            continue
        # Score
        c = cpu[found] + pod_cpu
        m = mem[found] + pod_mem
        least = (((cpu_alloc - c) * MAX_SCORE // cpu_alloc) + ((mem_alloc - m) * MAX_SCORE // mem_alloc)) // 2
        least[(c > cpu_alloc) | (m > mem_alloc)] = 0  # (a node that fits never exceeds)
        cf, mf = c.astype(np.float64), m.astype(np.float64)
        with_pod = _balance(cf, mf, float(cpu_alloc), float(mem_alloc))
        without = _balance(cf - pod_cpu, mf - pod_mem, float(cpu_alloc), float(mem_alloc))
        d = MAX_SCORE // 2 + with_pod - without
        balanced = MAX_SCORE // 2 + np.where(d >= 0, d // 2, -((-d) // 2))  # Go's division
        total = least + balanced + taint_toleration
        # the highest; ties as the heap pops them (the scored list is ``found``, in search order)
        top = np.flatnonzero(total == total.max())
        node = int(found[top[heap_first(top)]])
        chosen.append(node)
        # bind
        cpu[node] += pod_cpu
        mem[node] += pod_mem
        eph[node] += pod_eph
        count[node] += 1
    return chosen, time.perf_counter() - t0, time.process_time() - c0


# ---- issue 31's shapes (bench.py's ``make_real``): the same arithmetic with the plugins they add --------

ZONES = 3
HOSTNAME = "hostname"
SYSTEM_DEFAULTS = ((HOSTNAME, 3), ("zone", 5))  # the system default constraints, in their order


def _go_round(x: np.ndarray) -> np.ndarray:
    f = np.floor(x)
    return (f + (x - f >= 0.5)).astype(np.int64)


def _spread_scores(found: np.ndarray, constraints, on_node: np.ndarray, zone: np.ndarray,
                   counting: np.ndarray | None) -> np.ndarray:
    """PodTopologySpread's ScheduleAnyway score over the feasible nodes ``found``, normalized:
    per constraint ``cnt * ln(domains + 2) + maxSkew - 1`` summed in order (hostname:
    the matching pods on the node, the feasible nodes as domains; zone: the matching
    pods of the node's zone over the nodes that match the pod's required affinity
    (``counting``; None: all), the zones of the feasible nodes as domains), rounded;
    then ``100 * (max + min - s) // max``, 100 everywhere when the max is 0."""
    score = np.zeros(len(found), np.float64)
    for key, skew in constraints:
        if key == HOSTNAME:
            weight = math.log(float(len(found) + 2))
            cnt = on_node[found]
        else:
            zones_found = zone[found]
            weight = math.log(float(int(np.count_nonzero(np.bincount(zones_found, minlength=ZONES))) + 2))
            per_zone = (np.bincount(zone, weights=on_node, minlength=ZONES) if counting is None
                        else np.bincount(zone[counting], weights=on_node[counting], minlength=ZONES))
            cnt = per_zone.astype(np.int64)[zones_found]
        score = score + (cnt.astype(np.float64) * weight + float(skew - 1))
    raw = _go_round(score)
    lo, hi = int(raw.min()), max(int(raw.max()), 0)
    if hi == 0:
        return np.full(len(found), MAX_SCORE, np.int64)
    return MAX_SCORE * (hi + lo - raw) // hi


def run_shape(shape: str, n_nodes: int, n_pods: int, requests) -> tuple[list[int], float, float]:
    """``run`` for bench.py's ``make_real`` shapes (``requests(shape, k)``: pod k's
    milli-cpu and MiB). What each adds to the basic cycle:

    * ``requests``: nothing (each pod its own requests);
    * ``groups``, ``batching``: nothing (identical pods; the pod group cycles and the
      batching profile do the same arithmetic; bench.py compares the nodes in the order
      the groups place their pods);
    * ``owned``: PodTopologySpread's system default constraints (hostname maxSkew 3,
      zone maxSkew 5, ScheduleAnyway; nodes without a key are not ignored), weight 2;
    * ``spread8``: per colour, the zone DoNotSchedule filter (the colour's pods per zone,
      ``count + 1 - min > 5`` fails) and the hostname ScheduleAnyway score (maxSkew 1);
    * ``mixed``: TaintToleration's filter (every 10th node, tolerated by owners ``j mod 5
      == 3``), NodeAffinity's filter (``disk: ssd``; zones 1 and 2) and its preferred
      term (10 on ssd nodes, normalized ``100 * s // max``, weight 2), the system
      default constraints (counting the nodes the pod's required affinity matches) or
      the owner's own (zone DoNotSchedule maxSkew 2, hostname ScheduleAnyway maxSkew 1).
    """
    cpu_alloc, mem_alloc, pods_alloc = 4000, 32 * GI, 110
    idx = np.arange(n_nodes)
    zone = idx % ZONES
    ssd = idx % 4 == 0
    tainted = idx % 10 == 0
    groups = {"owned": 1, "mixed": 40, "spread8": 8}.get(shape, 1)
    on_node = np.zeros((groups, n_nodes), np.int64)  # matching pods per node, per label group
    cpu = np.full(n_nodes, 100, np.int64)
    mem = np.full(n_nodes, 500 * MI, np.int64)
    count = np.ones(n_nodes, np.int64)
    plans = [(requests(shape, k), k % groups) for k in range(n_pods)]
    chosen: list[int] = []
    t0, c0 = time.perf_counter(), time.process_time()
    for (pod_cpu_m, pod_mem_mi), g in plans:
        pod_cpu, pod_mem = pod_cpu_m, pod_mem_mi * MI
        kind = g % 5 if shape == "mixed" else -1
        fits = count < pods_alloc
        fits &= cpu <= cpu_alloc - pod_cpu
        fits &= mem <= mem_alloc - pod_mem
        counting = None
        if shape == "mixed":
            if kind != 3:
                fits &= ~tainted
            if kind == 1:
                fits &= ssd
                counting = ssd
            elif kind == 2:
                counting = zone != 2
                fits &= counting
        max_skew = 5 if shape == "spread8" else 2 if kind == 4 else 0
        if max_skew:  # the zone DoNotSchedule constraint
            per_zone = np.bincount(zone, weights=on_node[g], minlength=ZONES).astype(np.int64)
            fits &= per_zone[zone] + 1 - int(per_zone.min()) <= max_skew
        found = np.flatnonzero(fits)
        if not len(found):
            chosen.append(-1)
            continue
        c = cpu[found] + pod_cpu
        m = mem[found] + pod_mem
        least = (((cpu_alloc - c) * MAX_SCORE // cpu_alloc) + ((mem_alloc - m) * MAX_SCORE // mem_alloc)) // 2
        cf, mf = c.astype(np.float64), m.astype(np.float64)
        with_pod = _balance(cf, mf, float(cpu_alloc), float(mem_alloc))
        without = _balance(cf - pod_cpu, mf - pod_mem, float(cpu_alloc), float(mem_alloc))
        d = MAX_SCORE // 2 + with_pod - without
        total = least + MAX_SCORE // 2 + np.where(d >= 0, d // 2, -((-d) // 2)) + 3 * MAX_SCORE
        if kind == 2:  # NodeAffinity's preferred term
            pref = np.where(ssd[found], 10, 0)
            top = int(pref.max())
            if top:
                total += 2 * (MAX_SCORE * pref // top)
        if shape in ("owned", "mixed", "spread8"):
            constraints = ((HOSTNAME, 1),) if shape == "spread8" or kind == 4 else SYSTEM_DEFAULTS
            total += 2 * _spread_scores(found, constraints, on_node[g], zone, counting)
        top = np.flatnonzero(total == total.max())
        node = int(found[top[heap_first(top)]])
        chosen.append(node)
        cpu[node] += pod_cpu
        mem[node] += pod_mem
        count[node] += 1
        on_node[g, node] += 1
    return chosen, time.perf_counter() - t0, time.process_time() - c0
