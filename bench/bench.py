"""Benchmarks (not part of the test suite): scheduling throughput and memory at scale,
against the previous engine measured in the same run.

    python bench/bench.py                        # the default run (a few minutes)
    python bench/bench.py --baseline-ref 301c78a  # compare with that commit's engine
    python bench/bench.py --only basic --nodes 5000 --no-baseline

Workloads, in the shapes of upstream's scheduler_perf (misc/, default_preemption/ and
topology_spreading/performance-config.yaml and their templates): nodes of 4 cpu / 32Gi /
110 pods, the version's default profile, a ``schedule`` sequence of incoming pods:

* ``basic`` (SchedulingBasic; 5000Nodes_10000Pods has the threshold 680): 500 existing
  100m / 500Mi pods at 500 nodes, 1,000 at 5,000 (upstream's initPods, which its
  scheduler spreads one per node: here on evenly spaced nodes); incoming pods the same;
* ``spread`` (TopologySpreading; 5000Nodes_5000Pods has the threshold 460): nodes in
  three zones, one existing 100m / 500Mi pod per node (pod-default: no labels);
  incoming pods labelled ``color: blue`` with a zone constraint (maxSkew 5,
  DoNotSchedule, selector ``color: blue``);
* ``preemption`` (PreemptionBasic; no threshold: upstream measures it at 1,000 nodes and
  has its 5,000-node workload commented out, kubernetes#108308): four existing
  900m / 500Mi pods of priority 1 per node (the cluster full); incoming 3000m / 500Mi pods
  of priority 10, each of which preempts and is then bound on its retry;
* ``async`` (PreemptionAsync; 5000Nodes has the threshold 570): the cluster of
  ``preemption``; incoming ordinary 100m / 500Mi pods (priority 0, always schedulable)
  with preemptors among them. Upstream creates a preemptor every 200 ms while it
  measures the ordinary pods; a sequence has no clock, so the bench keeps the measured
  phase's ratio at the threshold (5 preemptors per 570 ordinary pods a second: one per
  114 ordinary pods) and the rate counts ordinary pods only (the preemptors' cycles in
  the time, as upstream's). All are created at once, so PrioritySort runs the
  preemptors first and they wait nominated while the ordinary pods run (upstream's
  wait, about a second each, keeps some 5 outstanding); the figure is upstream's metric
  on upstream's mix, not its timing;
* ``long`` (PreemptionBasic at ``--long-preemptors``, default 1,000 and 5,000
  preemptors on the largest node count): the peak memory of each run and their ratio,
  and the cost per preemptor (its preempting cycle and its retry, CPU time) over the
  first and the last tenth of the longer sequence;
* ``floor``: kspread's cycle against the floor, ``bench/kernel.py`` (a numpy kernel doing
  the default profile's arithmetic for the cycle and nothing else), at ``--floor-nodes``
  (100, 5,000 and 20,000) in the SchedulingBasic shape with one existing pod per node:
  the time per cycle of each (kspread's from a short and a long sequence, as a rate;
  the kernel's over its loop), wall-clock and CPU, each in its own process and the best
  of ``--repeat``, their ratio, and whether the kernel chose kspread's node for every
  pod of the sequence (with a baseline, the baseline's too);
* ``real`` (issue 31): ``make_real``'s shapes (identical unowned pods, ``floor``; pods
  that differ in requests; identical pods of one ReplicaSet in three zones; 40 owners
  mixing nodeSelector, node affinity, tolerations and their own spread constraints;
  eight colours, each with a zone DoNotSchedule and a hostname ScheduleAnyway
  constraint; identical pods in 1.36 gangs of 8; identical pods under a profile that
  OpportunisticBatching signs every pod of) at ``--real-nodes`` (5,000 and 20,000), each
  against ``kernel.run_shape``,
  a numpy kernel of the same shape's arithmetic, CPU time per cycle and whether the
  kernel chose kspread's node for every pod (with a baseline, the baseline's CPU per
  cycle on the same sequences, this tree's over it, and whether it chose the same
  nodes); pods that differ in requests against identical ones; the memory of 1,000-, 5,000- and 10,000-pod ``requests`` and ``floor``
  sequences (``real_memory``: resident at the end and its peak, what the run holds under
  tracemalloc, the ties kept); with ``--backend PATH`` (a kspread-backend binary, if present)
  the backend's time per pod on each shape beside kspread's at its version;
* ``startup``, ``corpus``, ``loading`` (``bench/startup.py``): what the pytest plugin
  adds to a run that collects no case, the cost per case of a corpus of small cases
  under pytest (and ``-n 2``) against the engine alone, and a 10,000-pod ``schedule``
  loaded against 10,000 ``pods`` of the same shapes;
* ``memory``: the ``basic`` workload at 1,000 and at 10,000 incoming pods, the
  resident memory at the end of each (the results still alive) and their ratio;
* ``scale``: a 150,000-pod cluster (5,000 nodes, 500 Services) written as JSON and as
  block-style YAML (as a user writes it; emitted by yaml-rs when installed, else
  PyYAML), read, validated and built, then one cycle of the default profile; once with
  500 shared label sets and once with labels of its own on every pod. Each file is
  written once, by a process of its own, and both trees read it; times are wall-clock, with the worker's CPU
  seconds beside them, each figure the least of ``--scale-repeat`` runs (3) in which
  the two trees alternate.

Throughput is upstream's way of cancelling loading out: the same workload runs with
a short and a long sequence, and the rate is the extra pods over the extra seconds
(wall clock, and in parentheses the worker's CPU time, ``time.process_time``). The
machine is shared, so each rate is the best of ``--repeat`` pairs of runs (default 1)
and each ``long`` figure the least of ``--repeat`` runs.
Each measurement runs in its own process (so peak RSS is the measurement's own),
with the engine to measure on PYTHONPATH: this tree, and the baseline ref exported
with ``git archive`` into a temporary directory. The old engine is slow, so it is
measured on shorter sequences (``--baseline-pods``); the ratio compares rates.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_BASELINE = "301c78a"

# ---- workloads ------------------------------------------------------------------------------------


def _nodes(n: int, zones: bool) -> tuple[list, dict]:
    alloc = {"cpu": "4", "memory": "32Gi", "pods": 110}
    nodes = [{"name": f"node-{i}", "allocatable": alloc} for i in range(n)]
    zmap: dict[str, list[str]] = {}
    if zones:
        for i in range(n):
            zmap.setdefault(f"moon-{i % 3 + 1}", []).append(f"node-{i}")
    return nodes, zmap


ASYNC_ORDINARY_PER_PREEMPTOR = 114  # PreemptionAsync: 570 measured pods/s, 5 preemptors/s


def make_workload(kind: str, n_nodes: int, n_pods: int) -> dict:
    """A case dict for ``kind`` with ``n_nodes`` nodes and ``n_pods`` incoming pods
    (``async``: ``n_pods`` ordinary pods and a preemptor after every 114th)."""
    nodes, zones = _nodes(n_nodes, kind == "spread")
    pods: list[dict] = []
    schedule: list[dict] = []
    small = {"cpu": "100m", "memory": "500Mi"}
    low = {"cpu": "900m", "memory": "500Mi"}
    high = {"cpu": "3000m", "memory": "500Mi"}
    if kind in ("basic", "memory"):
        init = 500 if n_nodes <= 500 else 1000  # upstream's initPods
        pods = [{"name": f"init-{i}", "node": f"node-{i * n_nodes // init}", "requests": small} for i in range(init)]
        schedule = [{"name": f"pod-{k}", "requests": small} for k in range(n_pods)]
    elif kind == "floor":  # bench/kernel.py's shape: one existing pod per node
        pods = [{"name": f"init-{i}", "node": f"node-{i}", "requests": small} for i in range(n_nodes)]
        schedule = [{"name": f"pod-{k}", "requests": small} for k in range(n_pods)]
    elif kind in REAL_SHAPES:
        return make_real(kind, n_nodes, n_pods)
    elif kind == "spread":
        tsc = [{"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"color": "blue"}}}]
        pods = [{"name": f"init-{i}", "node": f"node-{i}", "requests": small} for i in range(n_nodes)]
        schedule = [{"name": f"pod-{k}", "labels": {"color": "blue"}, "requests": small,
                     "topologySpreadConstraints": tsc} for k in range(n_pods)]
    elif kind in ("preemption", "async"):
        pods = [{"name": f"low-{i}", "node": f"node-{i % n_nodes}", "priority": 1, "requests": low}
                for i in range(4 * n_nodes)]
        if kind == "preemption":
            schedule = [{"name": f"high-{k}", "priority": 10, "requests": high} for k in range(n_pods)]
        else:
            for k in range(n_pods):
                schedule.append({"name": f"pod-{k}", "requests": small})
                if (k + 1) % ASYNC_ORDINARY_PER_PREEMPTOR == 0:
                    schedule.append({"name": f"high-{k}", "priority": 10, "requests": high})
    else:
        raise SystemExit(f"unknown workload {kind!r}")
    case: dict = {"apiVersion": "kspread/v1", "kind": "Case", "name": f"{kind}-{n_nodes}",
                  "nodes": nodes, "pods": pods, "schedule": schedule, "expect": {}}
    if zones:
        case["zones"] = zones
    return case


# ---- issue 31's shapes: real workloads against the floor of their own arithmetic ----------------------

REAL_SHAPES = ("requests", "owned", "mixed", "spread8", "groups", "batching")
GROUP_SIZE = 8  # the groups shape's gangs
# the batching shape's profile: the default profile's filters and scores but those that
# keep OpportunisticBatching from signing a pod (PodTopologySpread's system default
# constraints, InterPodAffinity, the volume plugins): every pod is signed
BATCHING_PROFILE = {
    "filter": [{"name": n} for n in ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                                      "NodePorts", "NodeResourcesFit")],
    "score": [{"name": "TaintToleration", "weight": 3}, {"name": "NodeAffinity", "weight": 2},
              {"name": "NodeResourcesFit", "weight": 1}, {"name": "NodeResourcesBalancedAllocation", "weight": 1},
              {"name": "ImageLocality", "weight": 1}]}
ZONE = "topology.kubernetes.io/zone"
MIXED_OWNERS = 40
SPREAD8_SELECTORS = 8


def pod_requests(kind: str, k: int) -> tuple[int, int]:
    """(milli-cpu, MiB) of incoming pod ``k`` (``requests``: every pod its own pair)."""
    if kind == "requests":
        return 100 + k % 900, 500 + (k * 7) % 1500
    return 100, 500


def mixed_owner(j: int) -> dict:
    """What the pods of owner ``j`` of the ``mixed`` shape ask (see ``make_real``)."""
    kind = j % 5
    spec: dict = {}
    if kind == 1:
        spec["nodeSelector"] = {"disk": "ssd"}
    elif kind == 2:
        spec["affinity"] = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["moon-1", "moon-2"]}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchExpressions": [
                    {"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}}
    elif kind == 3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]
    elif kind == 4:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": f"app{j}"}}},
            {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": f"app{j}"}}}]
    return spec


def make_real(kind: str, n_nodes: int, n_pods: int) -> dict:
    """Issue 31's shapes, nodes of 4 cpu / 32Gi / 110 pods with one existing unowned
    100m / 500Mi pod each (bench/kernel.py's), the default profile of the latest version:

    * ``requests``: unowned pods, pod ``k`` asking 100m + (k mod 900)m cpu and
      500 + (7k mod 1500) Mi memory (pods that differ only in requests);
    * ``owned``: nodes in three zones; identical 100m / 500Mi pods of one ReplicaSet
      (``app: web``): every pod gets the system default constraints (zone and hostname,
      ScheduleAnyway);
    * ``mixed``: nodes in three zones, every 4th node ``disk: ssd``, every 10th tainted
      ``dedicated=batch:NoSchedule``; pod ``k`` of ReplicaSet ``app{k mod 40}``, whose
      pods ask by owner ``j mod 5``: nothing more, a nodeSelector ``disk: ssd``, a
      required zone affinity (moon-1, moon-2) with a preferred ``disk: ssd`` term, the
      taint's toleration, their own constraints (zone DoNotSchedule maxSkew 2, hostname
      ScheduleAnyway maxSkew 1);
    * ``spread8``: nodes in three zones; pod ``k`` labelled ``color: c{k mod 8}``, unowned, with
      two constraints on its colour: zone DoNotSchedule (maxSkew 5) and hostname
      ScheduleAnyway (maxSkew 1);
    * ``groups`` (1.36, GenericWorkload and GangScheduling on): identical pods in gangs of 8
      (PodGroup ``g{k // 8}``, minCount its pods), each gang placed by one pod group cycle;
    * ``batching``: identical pods, a profile in which every pod is signed
      (``BATCHING_PROFILE``), so OpportunisticBatching keeps each cycle's scored nodes.
    """
    alloc = {"cpu": "4", "memory": "32Gi", "pods": 110}
    nodes: list[dict] = []
    zones: dict[str, list[str]] = {}
    for i in range(n_nodes):
        node: dict = {"name": f"node-{i}", "allocatable": alloc}
        if kind == "mixed":
            if i % 4 == 0:
                node["labels"] = {"disk": "ssd"}
            if i % 10 == 0:
                node["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
        nodes.append(node)
        if kind not in ("requests", "groups", "batching"):
            zones.setdefault(f"moon-{i % 3 + 1}", []).append(f"node-{i}")
    small = {"cpu": "100m", "memory": "500Mi"}
    pods = [{"name": f"init-{i}", "node": f"node-{i}", "requests": small} for i in range(n_nodes)]
    owners: list[dict] = []
    schedule: list[dict] = []
    if kind == "owned":
        owners = [{"kind": "ReplicaSet", "name": "web", "selector": {"matchLabels": {"app": "web"}}}]
    elif kind == "mixed":
        owners = [{"kind": "ReplicaSet", "name": f"app{j}", "selector": {"matchLabels": {"app": f"app{j}"}}}
                  for j in range(MIXED_OWNERS)]
    specs = [mixed_owner(j) for j in range(MIXED_OWNERS)]
    for k in range(n_pods):
        cpu, mem = pod_requests(kind, k)
        pod: dict = {"name": f"pod-{k}", "requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}}
        if kind == "owned":
            pod["labels"] = {"app": "web"}
            pod["controller"] = {"kind": "ReplicaSet", "name": "web"}
        elif kind == "mixed":
            j = k % MIXED_OWNERS
            pod["labels"] = {"app": f"app{j}"}
            pod["controller"] = {"kind": "ReplicaSet", "name": f"app{j}"}
            pod.update(specs[j])
        elif kind == "groups":
            pod["schedulingGroup"] = {"podGroupName": f"g{k // GROUP_SIZE}"}
        elif kind == "spread8":
            color = {"color": f"c{k % SPREAD8_SELECTORS}"}
            pod["labels"] = color
            pod["topologySpreadConstraints"] = [
                {"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                 "labelSelector": {"matchLabels": color}},
                {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": {"matchLabels": color}}]
        schedule.append(pod)
    case: dict = {"apiVersion": "kspread/v1", "kind": "Case", "name": f"{kind}-{n_nodes}",
                  "nodes": nodes, "pods": pods, "schedule": schedule, "expect": {}}
    if zones:
        case["zones"] = zones
    if owners:
        case["owners"] = owners
    if kind == "groups":
        case["version"] = "1.36"
        case["featureGates"] = {"GenericWorkload": True, "GangScheduling": True}
        case["objects"] = [
            {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": f"g{j}"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": min(GROUP_SIZE, n_pods - j * GROUP_SIZE)}}}}
            for j in range((n_pods + GROUP_SIZE - 1) // GROUP_SIZE)]
    elif kind == "batching":
        case["profile"] = BATCHING_PROFILE
    return case


def group_order(n_pods: int) -> list[int]:
    """The ``groups`` shape's pods in the order its pod group cycles place them: per gang,
    its last pod (the one whose creation lets the gang into the queue), then the others."""
    out: list[int] = []
    for start in range(0, n_pods, GROUP_SIZE):
        gang = list(range(start, min(start + GROUP_SIZE, n_pods)))
        out += gang[-1:] + gang[:-1]
    return out


def make_scale_case(n_nodes: int, n_pods: int, unique_labels: bool) -> dict:
    nodes, zones = _nodes(n_nodes, True)
    apps = 500
    pods = []
    for i in range(n_pods):
        app = i % apps
        labels = {"app": f"app{app}", "tier": "web" if app % 2 else "db"}
        if unique_labels:
            labels["pod-template-hash"] = f"h{i}"
        pods.append({"name": f"app{app}-{i}", "node": f"node-{(i * 7919) % n_nodes}", "labels": labels,
                     "requests": {"cpu": "10m", "memory": "64Mi"}})
    owners = [{"kind": "Service", "name": f"app{a}", "selector": {"app": f"app{a}"}} for a in range(apps)]
    return {"apiVersion": "kspread/v1", "kind": "Case", "name": "scale", "zones": zones, "nodes": nodes,
            "owners": owners, "pods": pods, "pod": {"name": "new", "labels": {"app": "app7"}}, "expect": {}}


def to_yaml(data: dict) -> str:
    """``data`` as block-style YAML, as a user writes a case: no anchors or aliases
    (the workloads share dicts between items), no flow collections."""
    try:
        import yaml_rs
    except ImportError:
        import yaml

        class _NoAliases(yaml.SafeDumper):
            def ignore_aliases(self, data: object) -> bool:
                return True

        return yaml.dump(data, Dumper=_NoAliases, default_flow_style=False, sort_keys=False)
    return yaml_rs.dumps(data)


# ---- the worker (runs inside the engine under test) ----------------------------------------------------


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def kernel_worker(spec: dict) -> dict:
    from kernel import run, run_shape  # bench/kernel.py, beside this script

    shape = spec.get("shape", "floor")
    if shape == "floor":
        chosen, wall, cpu = run(spec["nodes"], spec["pods"])
    else:
        chosen, wall, cpu = run_shape(shape, spec["nodes"], spec["pods"], pod_requests)
    return {"run_s": wall, "cpu_s": cpu, "chosen": chosen}


def backend_worker(spec: dict) -> dict:
    """``kspread run --backend`` on the workload (wall-clock time of the whole process:
    the short and long sequences' difference is the backend's cycles)."""
    tmp = Path(tempfile.mkdtemp(prefix="kspread-bench-backend-"))
    path = tmp / "case.json"
    case = make_workload(spec["shape"], spec["nodes"], spec["pods"])
    case["version"] = spec["version"]
    path.write_text(json.dumps(case), encoding="utf-8")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kspread", "run", "-q", "--backend", spec["backend"], str(path)],
                   capture_output=True, cwd=ROOT)
    out = {"run_s": time.perf_counter() - t0}
    path.unlink()
    tmp.rmdir()
    return out


def worker(spec: dict) -> dict:
    if spec["kind"] == "kernel":
        return kernel_worker(spec)
    if spec["kind"] == "backend":
        return backend_worker(spec)
    try:  # the layout since the engine, the case format and the workflow are subpackages
        from kspread.engine.scheduler import run_case
        from kspread.format.loader import load_case, read_file
    except ImportError:  # a baseline tree from before (e.g. 301c78a)
        from kspread.loader import load_case, read_file  # type: ignore[no-redef]
        from kspread.scheduler import run_case  # type: ignore[no-redef]

    given = spec.get("file")  # written by the driver (the scale workload): read, never removed
    tmp = Path(tempfile.mkdtemp(prefix="kspread-bench-"))
    path = Path(given) if given else tmp / "case.json"
    if not given:
        case_dict = make_workload(spec["kind"], spec["nodes"], spec["pods"])
        if spec.get("version"):
            case_dict["version"] = spec["version"]
        path.write_text(json.dumps(case_dict), encoding="utf-8")
    gc.collect()
    out: dict = {}
    t0, c0 = time.perf_counter(), time.process_time()
    res = read_file(path)
    t1, c1 = time.perf_counter(), time.process_time()
    case = load_case(res.docs[0])
    t2, c2 = time.perf_counter(), time.process_time()
    del res
    out["read_s"] = t1 - t0
    out["build_s"] = t2 - t1
    out["read_cpu_s"] = c1 - c0
    out["build_cpu_s"] = c2 - c1
    out["rss_loaded_mb"] = _rss_mb()
    cycles: list[tuple[str, float]] = []  # (pod, CPU time at the end of its cycle)
    observe = (lambda _s, r: cycles.append((r.pod.key, time.process_time()))) if spec.get("per_pod") else None
    if spec.get("trace"):  # (real_memory: what the run allocates and keeps, Python's allocations only)
        tracemalloc.start()
    t3, c3 = time.perf_counter(), time.process_time()
    sched, _results, placements = run_case(case, observe) if observe else run_case(case)  # (the results alive at the end)
    t4, c4 = time.perf_counter(), time.process_time()
    if spec.get("trace"):
        gc.collect()
        out["traced_mb"], out["traced_peak_mb"] = (x / 2**20 for x in tracemalloc.get_traced_memory())
        tracemalloc.stop()
        ties = getattr(sched, "ties", {})
        out["ties"] = len(ties)
        out["ties_kb"] = sum(a.nbytes for a in ties.values()) / 1024
    if observe:
        out["tenths"] = _tenths(case, cycles, c3)
    out["run_s"] = t4 - t3
    out["cpu_s"] = c4 - c3
    out["bound"] = sum(1 for v in placements.values() if v is not None)
    out["ordinary_bound"] = sum(1 for k, v in placements.items() if v is not None and not k.startswith("high-"))
    if spec.get("chosen"):  # the node index per incoming pod (node-<i>), -1 when none
        out["chosen"] = [int(v[5:]) if v is not None else -1 for v in (placements[p.key] for p in case.incoming)]
    gc.collect()
    out["rss_end_mb"] = _rss_mb()
    out["peak_mb"] = _peak_mb()
    if not given:
        path.unlink()
    tmp.rmdir()
    return out


def _tenths(case, cycles: list[tuple[str, float]], start: float) -> list[float]:
    """The CPU milliseconds per incoming pod (all its cycles; what binding or preempting
    costs after a cycle falls to the next one) over each tenth of the incoming pods,
    in sequence order."""
    cost: dict[str, float] = {}
    prev = start
    for key, t in cycles:
        cost[key] = cost.get(key, 0.0) + t - prev
        prev = t
    keys = [p.key for p in case.incoming]
    tenth = max(len(keys) // 10, 1)
    return [1000 * sum(cost.get(k, 0.0) for k in keys[j * tenth:(j + 1) * tenth]) / tenth for j in range(10)]


WORKLOADS = ["floor", "real", "basic", "spread", "preemption", "async", "long", "memory", "scale", "startup", "corpus", "loading"]

# ---- the driver --------------------------------------------------------------------------------------------


def _baseline_tree(ref: str) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix=f"kspread-baseline-{ref}-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "kspread", "schemas"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    return tmp


def measure(spec: dict, tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run([sys.executable, str(HERE / "bench.py"), "--worker", json.dumps(spec)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"worker failed for {spec} ({tree}):\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def rates(kind: str, nodes: int, runs: list[tuple[Path, int, int]], repeat: int = 1) -> list[tuple[float, dict]]:
    """Per tree of ``runs`` (tree, short, long): pods per second of wall-clock time
    (``async``: ordinary pods) and, as ``cpu_rate`` in the dict returned, per second of the
    worker's CPU time (``time.process_time``), less sensitive to a busy machine.

    The rate is (long - short) over the difference of the two sequences' times, each the
    least of ``repeat`` runs (the least disturbed), and the trees' runs are interleaved so
    that a busy spell falls on every tree alike. (Taking the best *pair* instead let one
    lucky short run and one unlucky long one read as a 0.7x regression that the least
    times did not show.)"""
    got: list[dict[int, list[dict]]] = [{short: [], long: []} for _tree, short, long in runs]
    for _ in range(repeat):
        for (tree, short, long), seen in zip(runs, got):
            for n_pods in (short, long):
                seen[n_pods].append(measure({"kind": kind, "nodes": nodes, "pods": n_pods}, tree))
    out: list[tuple[float, dict]] = []
    for (_tree, short, long), seen in zip(runs, got):
        a_cpu, b_cpu = (min(m["cpu_s"] for m in seen[k]) for k in (short, long))
        a_run, b_run = (min(m["run_s"] for m in seen[k]) for k in (short, long))
        b = dict(min(seen[long], key=lambda m: m["cpu_s"]))
        b["cpu_rate"] = (long - short) / max(b_cpu - a_cpu, 1e-9)
        out.append(((long - short) / max(b_run - a_run, 1e-9), b))
    return out


def _pair(text: str) -> str:
    """A "short,long" option: two whole numbers, short below long (argparse's usage error otherwise)."""
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts) or int(parts[0]) >= int(parts[1]):
        raise argparse.ArgumentTypeError(f"{text!r}: give two numbers, short,long, with short < long (e.g. 20,1020)")
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--write-scale", help=argparse.SUPPRESS)
    ap.add_argument("--baseline-ref", default=DEFAULT_BASELINE, help="git ref of the previous engine")
    ap.add_argument("--no-baseline", action="store_true", help="measure this tree only")
    ap.add_argument("--only", action="append", choices=list(WORKLOADS),
                    help="run only these workloads (repeatable)")
    ap.add_argument("--nodes", type=int, action="append", help="node counts (default 500 and 5000)")
    ap.add_argument("--pods", type=_pair, default="20,10020",
                    help="short,long sequence for this tree (basic; upstream measures 10,000)")
    ap.add_argument("--spread-pods", type=_pair, default="20,5020",
                    help="short,long sequence for this tree (spread; upstream measures 5,000)")
    ap.add_argument("--preemption-pods", type=_pair, default="20,220",
                    help="short,long sequence for this tree (preemption)")
    ap.add_argument("--async-pods", type=_pair, default="570,5700",
                    help="short,long number of ordinary pods for this tree (async; a preemptor per 114)")
    ap.add_argument("--long-preemptors", type=_pair, default="1000,5000",
                    help="the two sequence lengths of the long workload (largest node count)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each rate and long measurement (the best is shown; the machine is shared)")
    ap.add_argument("--baseline-pods", type=_pair, default="10,40", help="short,long sequence for the baseline")
    ap.add_argument("--baseline-preemption-pods", type=_pair, default=None,
                    help="short,long sequence for the baseline (preemption; default --baseline-pods)")
    ap.add_argument("--baseline-async-pods", type=_pair, default="114,228",
                    help="short,long number of ordinary pods for the baseline (async)")
    ap.add_argument("--floor-nodes", default="100,5000,20000", help="node counts of the floor workload")
    ap.add_argument("--floor-pods", default="3000,2000,1000",
                    help="the long sequence at each floor node count (the short one is 20 pods)")
    ap.add_argument("--real-nodes", default="5000,20000", help="node counts of the real workload")
    ap.add_argument("--real-pods", default="2000,1000",
                    help="the long sequence at each real node count (the short one is 20 pods)")
    ap.add_argument("--real-shapes", default="floor,requests,owned,mixed,spread8,groups,batching",
                    help="shapes of the real workload (floor: identical unowned pods)")
    ap.add_argument("--real-memory-pods", default="1000,5000,10000",
                    help="sequence lengths of the requests shape whose memory is compared ('' for none)")
    ap.add_argument("--backend", help="a kspread-backend binary: the real shapes through it too (if present)")
    ap.add_argument("--backend-version", default="1.35", help="the backend's Kubernetes minor version")
    ap.add_argument("--memory-pods", default="1000,10000", help="sequence lengths of the memory workload")
    ap.add_argument("--baseline-memory-pods", default="50,200")
    ap.add_argument("--scale-pods", type=int, default=150000)
    ap.add_argument("--scale-format", action="append", choices=["json", "yaml"],
                    help="case file formats of the scale workload (repeatable; default both)")
    ap.add_argument("--scale-repeat", type=int, default=3,
                    help="runs of each scale measurement (the least time of each figure is shown)")
    ap.add_argument("--startup-repeat", type=int, default=5,
                    help="runs of each startup, corpus and loading measurement (the least is shown)")
    ap.add_argument("--corpus-cases", type=int, default=2000)
    args = ap.parse_args()
    if args.write_scale:
        write_scale(json.loads(args.write_scale))
        return
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return

    only = args.only or list(WORKLOADS)
    node_counts = args.nodes or [500, 5000]
    bspec = {"preemption": args.baseline_preemption_pods or args.baseline_pods, "async": args.baseline_async_pods}
    tspec = {"basic": args.pods, "spread": args.spread_pods, "preemption": args.preemption_pods,
             "async": args.async_pods}
    base = None if args.no_baseline else _baseline_tree(args.baseline_ref)
    print(f"engine: {ROOT} ({_git_head()}); baseline: {args.baseline_ref if base else 'none'}; "
          f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    if "floor" in only:
        floor(args, base)
    if "real" in only:
        real(args, base)
    for kind in ("basic", "spread", "preemption", "async"):
        if kind not in only:
            continue
        short, long = (int(x) for x in tspec[kind].split(","))
        for n in node_counts:
            runs = [(ROOT, short, long)]
            if base is not None:
                bshort, blong = (int(x) for x in bspec.get(kind, args.baseline_pods).split(","))
                runs.append((base, bshort, blong))
            measured = rates(kind, n, runs, args.repeat)
            r, info = measured[0]
            bound = (f"ordinary bound {info['ordinary_bound']}/{long}, all {info['bound']}" if kind == "async"
                     else f"bound {info['bound']}/{long}")
            line = (f"{kind:<11} {n:>5} nodes  {r:9.1f} pods/s (cpu {info['cpu_rate']:.1f})  "
                    f"peak {info['peak_mb']:7.0f} MB  ({bound})")
            if base is not None:
                br, binfo = measured[1]
                line += (f"  baseline {br:7.1f} pods/s (cpu {binfo['cpu_rate']:.1f}), peak {binfo['peak_mb']:6.0f} MB"
                         f"  ratio {r / br:6.1f}x (cpu {info['cpu_rate'] / binfo['cpu_rate']:.1f}x)")
            print(line, flush=True)
    if "long" in only:
        n = max(node_counts)
        counts = [int(x) for x in args.long_preemptors.split(",")]
        runs = {c: [measure({"kind": "preemption", "nodes": n, "pods": c, "per_pod": True}, ROOT)
                    for _ in range(args.repeat)] for c in counts}
        peaks = {c: min(m["peak_mb"] for m in ms) for c, ms in runs.items()}
        # the run of the longest sequence with the least CPU time: its tenths
        tenths = min(runs[counts[-1]], key=lambda m: m["cpu_s"])["tenths"]
        print(f"long        {n:>5} nodes  peak " + ", ".join(f"{c} preemptors {peaks[c]:.0f} MB" for c in counts)
              + f" (x{peaks[counts[-1]] / peaks[counts[0]]:.2f}); {counts[-1]} preemptors, CPU ms per preemptor "
              f"by tenth: " + " ".join(f"{t:.2f}" for t in tenths)
              + f" (last/first x{tenths[-1] / tenths[0]:.2f})", flush=True)
    if "memory" in only:
        m1, m2 = (int(x) for x in args.memory_pods.split(","))
        n = max(node_counts)
        a = measure({"kind": "memory", "nodes": n, "pods": m1}, ROOT)
        b = measure({"kind": "memory", "nodes": n, "pods": m2}, ROOT)
        print(f"memory      {n:>5} nodes  RSS at end: {m1} pods {a['rss_end_mb']:.0f} MB, {m2} pods "
              f"{b['rss_end_mb']:.0f} MB (x{b['rss_end_mb'] / a['rss_end_mb']:.2f}; "
              f"{(b['rss_end_mb'] - a['rss_end_mb']) * 1024 / (m2 - m1):.1f} KB/pod)", flush=True)
        if base is not None:
            b1, b2 = (int(x) for x in args.baseline_memory_pods.split(","))
            a = measure({"kind": "memory", "nodes": n, "pods": b1}, base)
            b = measure({"kind": "memory", "nodes": n, "pods": b2}, base)
            print(f"  baseline: {b1} pods {a['rss_end_mb']:.0f} MB, {b2} pods {b['rss_end_mb']:.0f} MB "
                  f"({(b['rss_end_mb'] - a['rss_end_mb']) * 1024 / (b2 - b1):.1f} KB/pod)", flush=True)
    rest = [k for k in ("startup", "corpus", "loading") if k in only]
    if rest:  # this tree only: the plugin and the loader of the baseline are not comparable
        from startup import run as run_startup  # bench/startup.py, beside this script

        run_startup(rest, ROOT, args.startup_repeat, args.corpus_cases, 10000)
    if "scale" in only:
        scale_dir = Path(tempfile.mkdtemp(prefix="kspread-bench-scale-"))
        for fmt, unique in [(f, u) for f in args.scale_format or ["json", "yaml"] for u in (False, True)]:
            # written once, by a process of its own: both trees read the same file, and
            # neither the writing nor the driver's memory is in a worker's time or peak
            path = scale_dir / f"case.{fmt}"
            write = {"pods": args.scale_pods, "unique": unique, "format": fmt, "path": str(path)}
            subprocess.run([sys.executable, str(HERE / "bench.py"), "--write-scale", json.dumps(write)], check=True)
            spec = {"kind": "scale", "file": str(path)}
            what = "own labels" if unique else "shared labels"
            # the best of --scale-repeat runs, the trees alternating: the machine is shared
            runs: list[tuple[dict, dict | None]] = [
                (measure(spec, ROOT), measure(spec, base) if base is not None else None)
                for _ in range(args.scale_repeat)
            ]
            a = _best([r[0] for r in runs])
            line = (f"scale {args.scale_pods} pods, {fmt:<4} {what:<13}: {_loading(a)}, snapshot+cycle "
                    f"{a['run_s']:.2f} s, peak {a['peak_mb']:.0f} MB")
            if base is not None:
                b = _best([r[1] for r in runs if r[1] is not None])
                line += f"; baseline {_loading(b)}, snapshot+cycle {b['run_s']:.2f} s, peak {b['peak_mb']:.0f} MB"
            print(line, flush=True)
            path.unlink()
        scale_dir.rmdir()


def per_cycle(nodes: int, short: int, long: int, tree: Path, repeat: int, kind: str = "floor",
              version: str | None = None) -> dict:
    """kspread's µs per cycle (wall and CPU: the extra time over the extra pods of a long
    sequence), the least of ``repeat`` pairs of runs; ``chosen``: the long run's nodes."""
    best: dict | None = None
    for _ in range(repeat):
        a = measure({"kind": kind, "nodes": nodes, "pods": short, "version": version}, tree)
        b = measure({"kind": kind, "nodes": nodes, "pods": long, "chosen": True, "version": version}, tree)
        m = {"us": 1e6 * (b["run_s"] - a["run_s"]) / (long - short),
             "cpu_us": 1e6 * (b["cpu_s"] - a["cpu_s"]) / (long - short), "chosen": b["chosen"]}
        if best is None or m["cpu_us"] < best["cpu_us"]:
            best = m
    assert best is not None
    return best


def floor(args: argparse.Namespace, base: Path | None) -> None:
    """kspread's cycle against bench/kernel.py's, per node count (see ``floor`` above)."""
    for n, long in zip((int(x) for x in args.floor_nodes.split(",")), (int(x) for x in args.floor_pods.split(","))):
        runs = [measure({"kind": "kernel", "nodes": n, "pods": long}, ROOT) for _ in range(args.repeat)]
        k = {"us": 1e6 * min(r["run_s"] for r in runs) / long, "cpu_us": 1e6 * min(r["cpu_s"] for r in runs) / long}
        chosen = runs[0]["chosen"]
        trees = [("kspread", ROOT)] + ([(f"baseline {args.baseline_ref}", base)] if base is not None else [])
        parts = [f"kernel {k['us']:7.1f} µs (cpu {k['cpu_us']:.1f})"]
        for label, tree in trees:
            m = per_cycle(n, 20, long, tree, args.repeat)
            same = "same nodes" if m["chosen"] == chosen else "DIFFERENT NODES"
            parts.append(f"{label} {m['us']:7.1f} µs (cpu {m['cpu_us']:.1f}) x{m['us'] / k['us']:.1f} "
                         f"(cpu x{m['cpu_us'] / k['cpu_us']:.1f}, {same} over {long} pods)")
        print(f"floor       {n:>5} nodes  per cycle: " + "; ".join(parts), flush=True)


def real(args: argparse.Namespace, base: Path | None = None) -> None:
    """Issue 31's shapes (``make_real``) against the floor of their own arithmetic
    (``kernel.run_shape``), per node count, and with a baseline tree (``--baseline-ref``)
    the baseline's cycle on the same sequences (CPU per cycle, this tree's over the
    baseline's: below 1 is faster; whether it chose the same nodes as this tree); then
    pods that differ in requests against identical ones (``requests`` against ``floor``,
    kspread's CPU per cycle; the baseline's too), with
    ``--backend`` (a kspread-backend binary) the backend's time per pod on each
    shape (wall clock: the process's, the long sequence's extra over the short one's) and
    kspread's on the same case at the backend's version (``--backend-version``); then
    ``real_memory``."""
    shapes = args.real_shapes.split(",")
    for n, long in zip((int(x) for x in args.real_nodes.split(",")), (int(x) for x in args.real_pods.split(","))):
        mine: dict[str, dict] = {}
        theirs: dict[str, dict] = {}  # the baseline's
        for shape in shapes:
            runs = [measure({"kind": "kernel", "shape": shape, "nodes": n, "pods": long}, ROOT)
                    for _ in range(args.repeat)]
            k = {"us": 1e6 * min(r["run_s"] for r in runs) / long,
                 "cpu_us": 1e6 * min(r["cpu_s"] for r in runs) / long}
            m = mine[shape] = per_cycle(n, 20, long, ROOT, args.repeat, shape)
            # (groups: the kernel places the pods in the order the group cycles take them)
            ours = [m["chosen"][k] for k in group_order(long)] if shape == "groups" else m["chosen"]
            same = "same nodes" if ours == runs[0]["chosen"] else "DIFFERENT NODES"
            line = (f"real {shape:<9} {n:>5} nodes  per cycle: kernel {k['us']:7.1f} µs (cpu {k['cpu_us']:.1f}); "
                    f"kspread {m['us']:7.1f} µs (cpu {m['cpu_us']:.1f}) x{m['us'] / k['us']:.1f} "
                    f"(cpu x{m['cpu_us'] / k['cpu_us']:.1f}, {same} over {long} pods)")
            if base is not None:
                b = theirs[shape] = per_cycle(n, 20, long, base, args.repeat, shape)
                agree = "same nodes" if b["chosen"] == m["chosen"] else "DIFFERENT NODES"
                line += (f"; baseline {args.baseline_ref} {b['us']:7.1f} µs (cpu {b['cpu_us']:.1f}; "
                         f"cpu x{b['cpu_us'] / k['cpu_us']:.1f} the kernel), this/baseline cpu "
                         f"x{m['cpu_us'] / b['cpu_us']:.2f} ({agree})")
            print(line, flush=True)
        if "requests" in mine and "floor" in mine:
            line = (f"real requests/identical {n:>5} nodes  cpu x{mine['requests']['cpu_us'] / mine['floor']['cpu_us']:.2f}"
                    f" ({mine['requests']['cpu_us']:.1f} µs against {mine['floor']['cpu_us']:.1f})")
            if "requests" in theirs and "floor" in theirs:
                line += (f"; baseline x{theirs['requests']['cpu_us'] / theirs['floor']['cpu_us']:.2f}"
                         f" ({theirs['requests']['cpu_us']:.1f} µs against {theirs['floor']['cpu_us']:.1f})")
            print(line, flush=True)
        if args.backend and Path(args.backend).exists():
            for shape in shapes:
                b = [measure({"kind": "backend", "shape": shape, "nodes": n, "pods": p, "backend": args.backend,
                              "version": args.backend_version}, ROOT)["run_s"] for p in (20, long)]
                m = per_cycle(n, 20, long, ROOT, 1, shape, args.backend_version)
                us = 1e6 * (b[1] - b[0]) / (long - 20)
                print(f"real backend {shape:<9} {n:>5} nodes  {us:7.1f} µs per pod (wall); kspread at "
                      f"{args.backend_version} {m['us']:7.1f} µs (x{us / m['us']:.1f} faster)", flush=True)
    real_memory(args)


def real_memory(args: argparse.Namespace) -> None:
    """The ``requests`` and ``floor`` shapes (pods that differ in requests; identical pods,
    whose every cycle ties among most nodes) at the first ``--real-nodes`` count, a
    sequence of each ``--real-memory-pods`` length: the resident memory at the end and its
    peak (each a process of its own), and in a run of its own under tracemalloc what the
    run allocated and still holds at its end (the loaded case excluded), its peak, and the
    ties the scheduler keeps for reports (count, KB)."""
    if not args.real_memory_pods:
        return
    counts = [int(x) for x in args.real_memory_pods.split(",")]
    n = int(args.real_nodes.split(",")[0])
    for shape in ("requests", "floor"):
        parts = []
        runs = {}
        for c in counts:
            m = runs[c] = measure({"kind": shape, "nodes": n, "pods": c}, ROOT)
            t = measure({"kind": shape, "nodes": n, "pods": c, "trace": True}, ROOT)
            m.update({k: t[k] for k in ("traced_mb", "traced_peak_mb", "ties", "ties_kb")})
            parts.append(f"{c} pods RSS {m['rss_end_mb']:.0f} MB (peak {m['peak_mb']:.0f}), held "
                         f"{m['traced_mb']:.1f} MB (peak {m['traced_peak_mb']:.1f}), ties {m['ties']} "
                         f"({m['ties_kb']:.0f} KB)")
        a, b = runs[counts[0]], runs[counts[-1]]
        per_pod = (b["traced_mb"] - a["traced_mb"]) * 1024 / max(counts[-1] - counts[0], 1)
        print(f"real memory {shape:<9} {n:>5} nodes  " + "; ".join(parts)
              + f" (RSS x{b['rss_end_mb'] / a['rss_end_mb']:.2f}, peak x{b['peak_mb'] / a['peak_mb']:.2f}; "
              f"held {per_pod:.2f} KB per pod)", flush=True)


def _best(runs: list[dict]) -> dict:
    """Each figure's least value over the runs."""
    return {k: min(r[k] for r in runs) for k in runs[0]}


def write_scale(spec: dict) -> None:
    case_dict = make_scale_case(5000, spec["pods"], spec["unique"])
    text = to_yaml(case_dict) if spec["format"] == "yaml" else json.dumps(case_dict)
    Path(spec["path"]).write_text(text, encoding="utf-8")


def _loading(m: dict) -> str:
    """Wall-clock seconds, and the process's CPU seconds (steadier on a shared machine)."""
    return (f"read {m['read_s']:.2f} s + validate+build {m['build_s']:.2f} s = {m['read_s'] + m['build_s']:.2f} s "
            f"(cpu {m['read_cpu_s']:.2f} + {m['build_cpu_s']:.2f} = {m['read_cpu_s'] + m['build_cpu_s']:.2f} s)")


def _git_head() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):  # pragma: no cover
        return "?"


if __name__ == "__main__":
    main()
