"""Issue 32's paths at scale (docs/reference/scale.md): what a long run keeps of
workload-aware preemption's runs of the group's algorithm."""

from __future__ import annotations

from kspread.engine.scheduler import run_case
from kspread.format.case import build_case

GATES = {"GenericWorkload": True, "GangScheduling": True, "WorkloadAwarePreemption": True}


def _full_cluster(nodes: int) -> dict:
    """Every node full of two low-priority pods; a gang of 4 (priority 100) preempts."""
    alloc = {"cpu": "4", "memory": "8Gi", "pods": 110}
    return {
        "apiVersion": "kspread/v1", "kind": "Case", "version": "1.36", "featureGates": GATES,
        "nodes": [{"name": f"node-{i:03d}", "allocatable": alloc} for i in range(nodes)],
        "pods": [{"name": f"low-{i}-{j}", "node": f"node-{i:03d}", "priority": 10, "requests": {"cpu": "2"},
                  "startTime": f"2024-01-01T{j:02d}:{i % 60:02d}:00Z"} for i in range(nodes) for j in range(2)],
        "objects": [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "workers"},
                     "spec": {"priority": 100, "schedulingPolicy": {"gang": {"minCount": 4}}}}],
        "schedule": [{"name": "worker", "replicas": 4, "priority": 100, "requests": {"cpu": "1"},
                      "schedulingGroup": {"podGroupName": "workers"}}],
    }


def test_preemption_runs_keep_searched_nodes_encoded():
    """Each run of the algorithm (one per victim in the reprieve) keeps the nodes each pod
    searched as encoded positions, a few bytes when most nodes were searched (it kept a
    tuple of every name: 8 bytes a node per pod and run), named and sorted when read."""
    _, results, placements = run_case(build_case(_full_cluster(300), "t"))
    runs = [one for r in results if r.pod_group is not None for one in r.pod_group.preemption_runs]
    assert len(runs) == 1 + 600  # with every victim removed, then once per victim given back
    first = runs[0][0]
    assert first.searched == tuple(f"node-{i:03d}" for i in range(300))  # every victim removed: every node
    assert all(c.searched_at.nbytes <= 300 // 8 + 1 for one in runs for c in one)
    assert all(list(c.searched) == sorted(c.searched) for c in runs[-1])
    assert sum(1 for k, v in placements.items() if k.startswith("worker") and v) == 4
