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
* the highest total, ties to the first in node order (kspread's rule for a sequence);
* bind: the node's requested, non-zero requested and pod-count columns.

``run`` returns the node chosen for each pod, which the bench compares with kspread's
placements over the same sequence, so the kernel is known to do the same arithmetic.
"""

from __future__ import annotations

import time

import numpy as np

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
        # the first highest in node order
        top = found[total == total.max()]
        node = int(top.min())
        chosen.append(node)
        # bind
        cpu[node] += pod_cpu
        mem[node] += pod_mem
        eph[node] += pod_eph
        count[node] += 1
    return chosen, time.perf_counter() - t0, time.process_time() - c0
