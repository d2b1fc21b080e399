"""Gangs for dev/seqtest.py (``--gangs P``; issue 32): Workloads (scheduling.k8s.io/v1alpha1)
with pod groups, pods with ``workloadRef`` among a sequence's incoming pods, and `wait` steps
past the groups' Permit timeout. The oracle (dev/fullcycle/gang.go) creates the Workloads in
its fake API and gives the pods their workloadRef; both sides run with the gates
GenericWorkload and GangScheduling on.

Per sequence: 1-3 Workloads (a fifth in namespace ns1), each with 1-2 pod groups: four in
five a gang (minCount 2-4), else basic; per group minCount-1 to minCount+1 pods (basic: 1-3)
of one shape (cpu 500m-2000m, priority 0, 100 or 1000: below the plain pods' 2000, which
preempt them), one group in ten split into two replica keys; one pod in twenty names a
Workload or a pod group that does not exist. The gang pods are inserted at random places
among the plain incoming pods (interleaved). ``finish`` (after seqtest's steps) adds 1-3
`wait` steps (60-900 s: past the five-minute timeout in most), turns a deleteNode into a
cordon (kspread refuses deleting the node a pod waits on at Permit) and gives status-only
budgets a minAvailable (0-3), as seqtest's steps do."""

from __future__ import annotations

import copy
import random
from datetime import datetime, timezone
from typing import Any

GATES = {"GenericWorkload": True, "GangScheduling": True}
# issue 32 (i32-gangrel): the share of gang sequences that delete a gang pod (often one
# waiting at Permit), and whether seqtest's deleteNode steps stay (kspread models deleting
# the node a pod waits on); set by seqtest's --gang-deletes
DELETE_GANG_POD = 0.0
DELETE_NODES = False
# the share of gang groups whose pods use a volume (--storage): a bound claim of their
# namespace, else an in-tree disk (kspread refuses a waiting gang pod with claims to bind);
# set by seqtest's --gang-volumes
VOLUMES = 0.0
# issue 33: the share of gang groups whose pods each get a claim of their own waiting for its
# first consumer (class wffc, local or hostpath; as volumeClaimTemplates make them), which a
# waiting pod's VolumeBinding Reserve assumes; set by seqtest's --gang-claims
CLAIMS = 0.0
WAITS = [60, 120, 299, 300, 301, 330, 400, 600, 900]
DEVICE_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity")


def add(gen: Any, s: dict) -> None:
    r = gen.r
    workloads: list[dict] = []
    pods: list[dict] = []
    for w in range(r.randint(1, 3)):
        ns = "ns1" if gen.chance(0.2) else "default"
        name = f"wl{w}"
        groups = []
        for g in range(r.randint(1, 2)):
            gname = f"pg{g}"
            gang = gen.chance(0.8)
            mc = r.randint(2, 4) if gang else None
            groups.append({"name": gname, "policy": {"gang": {"minCount": mc}} if gang else {"basic": {}}})
            count = max(1, mc + r.choice([-1, 0, 0, 0, 1])) if mc else r.randint(1, 3)
            shape: dict[str, Any] = {"requests": {"cpu": f"{r.choice([500, 1000, 1500, 2000])}m"},
                                     "priority": r.choice([0, 100, 1000]), "labels": {"app": r.choice(["web", "db"])}}
            if gen.chance(0.3):
                shape["requests"]["memory"] = f"{r.choice([512, 1024, 2048])}Mi"
            split = gen.chance(0.1)
            vol = None
            if VOLUMES and s.get("storage") and gen.chance(VOLUMES):
                bound = [o["metadata"]["name"] for o in s["storage"] if o["kind"] == "PersistentVolumeClaim"
                         and (o.get("status") or {}).get("phase") == "Bound" and o["metadata"]["namespace"] == ns]
                vol = ({"name": "v", "persistentVolumeClaim": {"claimName": r.choice(bound)}} if bound else
                       {"name": "v", "gcePersistentDisk": {"pdName": r.choice(["d1", "d2"]), "readOnly": True}})
            own = None
            if CLAIMS and s.get("storage") and gen.chance(CLAIMS):
                own = r.choice(["wffc", "wffc", "local", "hostpath"])
            for k in range(count):
                p = copy.deepcopy(shape)
                p["name"] = f"{name}-{gname}-{k}"
                if vol is not None:
                    p["volumes"] = [copy.deepcopy(vol)]
                if own is not None:
                    size = r.randint(1, 100) if own == "local" else r.choice([1, 5, 8, 25])
                    s["storage"].append({
                        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": f"gd-{p['name']}", "namespace": ns},
                        "spec": {"storageClassName": own, "accessModes": ["ReadWriteOnce"],
                                 "resources": {"requests": {"storage": f"{size}Gi"}}},
                        "status": {"phase": "Pending"}})
                    p.setdefault("volumes", []).append({"name": "gd", "persistentVolumeClaim":
                                                        {"claimName": f"gd-{p['name']}"}})
                if ns != "default":
                    p["namespace"] = ns
                ref = {"name": name, "podGroup": gname}
                if split:
                    ref["podGroupReplicaKey"] = f"r{k % 2}"
                if gen.chance(0.05):
                    ref[r.choice(["name", "podGroup"])] = "missing"
                p["workloadRef"] = ref
                pods.append(p)
        meta: dict[str, Any] = {"name": name}
        if ns != "default":
            meta["namespace"] = ns
        workloads.append({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": meta,
                          "spec": {"podGroups": groups}})
    s["workloads"] = workloads
    for p in pods:
        s["schedule"].insert(r.randint(0, len(s["schedule"])), p)


WAP_PRIORITIES = (0, 10, 100, 1000)  # --wap: a PodGroup's priority (its pods' too)


def to_pod_groups(s: dict, wap: random.Random | None = None, preempt: random.Random | None = None) -> None:
    """1.36 (issue 32): the sequence's gangs as 1.36 has them. Each pod group of a Workload (each
    replica key of it: a group of its own) becomes a PodGroup (scheduling.k8s.io/v1alpha2) named
    ``<workload>-<group>[-<key>]`` with the group's policy; a pod's workloadRef becomes its
    ``schedulingGroup`` (one naming a missing Workload or group names a missing PodGroup). The
    v1alpha2 Workloads are left out: the scheduler does not read them. Volumes (--gang-volumes,
    --gang-claims) stay; the priority is 0 (below every other pod: no preemption by the group's
    pods).
    With ``wap`` (seqtest --wap: WorkloadAwarePreemption on) each PodGroup gets a priority of
    WAP_PRIORITIES, which its pods take, and a disruptionMode (none, Pod or PodGroup). With
    ``preempt`` (seqtest --group-priorities: the gate off) each group's pods get a priority of
    WAP_PRIORITIES, so that their own PostFilter preempts lower-priority pods in the group's cycle."""
    prio: dict[tuple[str, str], int] = {}
    policies = {(w["metadata"].get("namespace", "default"), w["metadata"]["name"], g["name"]): g["policy"]
                for w in s.get("workloads") or [] for g in w["spec"]["podGroups"]}
    groups: dict[tuple[str, str], dict] = {}
    for p in s["schedule"]:
        ref = p.pop("workloadRef", None)
        if ref is None:
            continue
        p["priority"] = 0
        p.pop("preemptionPolicy", None)
        ns = p.get("namespace", "default")
        name = "-".join(x for x in (ref["name"], ref["podGroup"], ref.get("podGroupReplicaKey")) if x)
        policy = policies.get((ns, ref["name"], ref["podGroup"]))
        if policy is None:
            name = "missing"
        elif (ns, name) not in groups:
            meta: dict[str, Any] = {"name": name}
            if ns != "default":
                meta["namespace"] = ns
            groups[(ns, name)] = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": meta,
                                  "spec": {"schedulingPolicy": copy.deepcopy(policy)}}
        p["schedulingGroup"] = {"podGroupName": name}
        if wap is not None and (ns, name) in groups:
            spec = groups[(ns, name)]["spec"]
            if "priority" not in spec:
                spec["priority"] = wap.choice(WAP_PRIORITIES)
                mode = wap.choice((None, "Pod", "PodGroup"))
                if mode is not None:
                    spec["disruptionMode"] = mode
            p["priority"] = spec["priority"]
        elif preempt is not None:
            p["priority"] = prio.setdefault((ns, name), preempt.choice(WAP_PRIORITIES))
    s["workloads"] = []
    s["podGroups"] = list(groups.values())


def add_topology(s: dict, r: random.Random, share: float) -> None:
    """1.36, seqtest --topology P (gate TopologyAwareWorkloadScheduling on): that share of the
    sequence's PodGroups constrained to one zone (``schedulingConstraints.topology``: the
    zone label, which most generated nodes have), so the pod group cycle tries each zone."""
    for g in s.get("podGroups") or []:
        if r.random() < share:
            g["spec"]["schedulingConstraints"] = {"topology": [{"key": "topology.kubernetes.io/zone"}]}


def add_group_claims(s: dict, r: random.Random, share: float) -> int:
    """1.36, DRAWorkloadResourceClaims (seqtest --group-claims P): each PodGroup whose pods all
    have the same resourceClaims entries (devgen gives a group's replicas one list: templates,
    shared claims) lists them, with chance ``share``, in its spec.resourceClaims (at most 4),
    so that its pods share one claim per entry, reserved for the PodGroup. Returns how many
    PodGroups got claims."""
    made = 0
    for pg in s.get("podGroups") or []:
        ns = pg["metadata"].get("namespace", "default")
        pods = [p for p in s["schedule"] if (p.get("namespace") or "default") == ns
                and (p.get("schedulingGroup") or {}).get("podGroupName") == pg["metadata"]["name"]]
        if not pods or not pods[0].get("resourceClaims") or r.random() >= share:
            continue
        common = [e for e in pods[0]["resourceClaims"] if all(e in (p.get("resourceClaims") or []) for p in pods)]
        if common:
            pg["spec"]["resourceClaims"] = copy.deepcopy(common[:4])
            made += 1
    return made


def finish(gen: Any, s: dict) -> None:
    """After seqtest's steps: 1-3 waits; a deleteNode turned into a cordon (and a later
    addNode of the same name dropped)."""
    r = gen.r
    steps = s.setdefault("steps", [])
    names = {n["name"] for n in s["nodes"]}
    keep = []
    for st in steps:
        if st["kind"] == "deleteNode" and not DELETE_NODES:
            st["kind"] = "cordon"
        if st["kind"] == "addNode":
            if st["newNode"]["name"] in names:
                continue
            names.add(st["newNode"]["name"])
        keep.append(st)
    for _ in range(r.randint(1, 3)):
        keep.append({"at": r.randint(1, len(s["schedule"])), "kind": "wait", "seconds": r.choice(WAITS)})
    if DELETE_GANG_POD and gen.chance(DELETE_GANG_POD):
        s["deleteWaiting"] = r.random()  # the probe (delete_waiting) picks the pod with it
    # a sequence with steps has budgets by minAvailable, which both sides recount (the driver
    # keeps a status-only budget's status, kspread recounts it from the healthy count it implies)
    for pdb in s["pdbs"]:
        if "minAvailable" not in pdb:
            pdb.pop("disruptionsAllowed", None)
            pdb["minAvailable"] = r.randint(0, 3)
    keep.sort(key=lambda st: st["at"])
    s["steps"] = keep


def delete_waiting(s: dict, version: str, gates: dict[str, bool]) -> None:
    """--gang-deletes: a sequence ``finish`` marked gets a deletePod of a pod waiting at
    Permit. A gang group's last pod gets a scheduling gate (ungated later, half the time),
    so that its group's other pods wait, and each gang pod a 1-second wait after it.
    kspread runs the sequence and records the pods waiting when each step point is
    reached; one of them, drawn with the marker, is deleted first at that point. No point
    with a waiting pod: no deletion."""
    import tempfile
    from pathlib import Path

    import seqtest

    from kspread.engine import steps as engine_steps
    from kspread.format.case import build_case

    pick = s.pop("deleteWaiting", None)
    if pick is None:
        return
    # points to look at: a 1-second wait after each gang pod (a long wait's timeouts
    # leave few pods waiting)
    rng = random.Random(pick)
    gang = [i for i, p in enumerate(s["schedule"]) if "workloadRef" in p]
    for i in gang:
        s["steps"].append({"at": i + 1, "kind": "wait", "seconds": 1})
    # a gang group's last pod gated: it counts for PreEnqueue but is never tried, so the
    # group's other pods wait at Permit (until the deadline, or its ungate step)
    gangs = {(w["metadata"].get("namespace"), w["metadata"]["name"], g["name"])
             for w in s["workloads"] for g in w["spec"]["podGroups"] if "gang" in g["policy"]}
    groups: dict[str, list[int]] = {}
    for i in gang:
        p = s["schedule"][i]
        if (p.get("namespace"), p["workloadRef"]["name"], p["workloadRef"]["podGroup"]) in gangs:
            groups.setdefault(f"{p.get('namespace')}/{p['workloadRef']}", []).append(i)
    held = s["schedule"][groups[rng.choice(sorted(groups))][-1]] if groups else None
    if held is not None and not held.get("schedulingGates"):
        held["schedulingGates"] = [{"name": "example.com/hold"}]
        if rng.random() < 0.5:
            s["steps"].append({"at": rng.randint(gang[-1] + 1, len(s["schedule"])), "kind": "ungate",
                               "pod": seqtest.key(held), "gate": "example.com/hold"})
    s["steps"].sort(key=lambda st: st["at"])
    seen: dict[int, list[str]] = {}  # incoming pods created -> the pods waiting then
    settle = engine_steps.World.settle

    def spy(world: Any, rec: Any) -> None:
        settle(world, rec)
        # the first settle there: the pods waiting when the steps at that point begin
        seen.setdefault(sum(1 for p in world.created if p.key in names), sorted(world.run.sched.waiting))

    names = {seqtest.key(p) for p in s["schedule"]}
    with tempfile.TemporaryDirectory() as tmp:
        doc = seqtest.write_case(Path(tmp), s, version, "probe", gates, {"placements": {seqtest.key(s["schedule"][0]): None}})
        engine_steps.World.settle = spy  # type: ignore[method-assign]
        try:
            from kspread.engine.scheduler import run_case

            run_case(build_case(doc, "probe", base_dir=tmp))
        except Exception:
            return
        finally:
            engine_steps.World.settle = settle  # type: ignore[method-assign]
    points = sorted({st["at"] for st in s["steps"]} & {at for at, w in seen.items() if w})
    if not points:
        return
    at = rng.choice(points)
    s["steps"].insert(next(i for i, st in enumerate(s["steps"]) if st["at"] == at),
                      {"at": at, "kind": "deletePod", "pod": rng.choice(seen[at])})


# ---- golden cases through the oracle -------------------------------------------------------

def case_input(doc: dict) -> dict:
    """A golden gang case (cases/gangs/*.yaml: nodes, pods, Workloads in ``objects``, a
    ``schedule`` of shorthand pods, ``schedulingGates``, PodSpec ``volumes`` and ``resourceClaims`` kept, the storage
    and DRA objects of ``objects``, with ``replicas``, ``wait``,
    ``addNode``, ``deletePod``, ``deleteNode``, ``drain``, ``cordon``, ``label`` and ``ungate``
    steps; any 1.35 sequence case, gangs or not) as
    seqtest's sequence (its ``oracle_input`` makes the oracle's JSON)."""
    def pod(e: dict, name: str) -> dict:
        p = {k: v for k, v in e.items() if k in ("namespace", "labels", "priority", "requests", "workloadRef",
                                                   "schedulingGroup", "nodeSelector", "tolerations", "node",
                                                   "schedulingGates", "volumes", "resourceClaims", "preemptionPolicy")}
        p["name"] = name
        return p

    def started(p: dict, i: int) -> dict:
        # a bound pod's status.startTime as the oracle gives it (mkPod: 1700000000 + its index),
        # for kspread (the oracle reads no startTime)
        if p.get("node"):
            p["startTime"] = datetime.fromtimestamp(1700000000 + i, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return p

    s: dict[str, Any] = {"nodes": [{k: v for k, v in n.items() if k in ("name", "labels", "allocatable", "taints")}
                                   for n in doc["nodes"]],
                         "pods": [started(pod(p, p["name"]), i) for i, p in enumerate(doc.get("pods") or [])],
                         "schedule": [],
                         # PDBs as the oracle reads them (given by disruptionsAllowed)
                         "pdbs": [{k: v for k, v in b.items() if k in ("name", "namespace", "selector",
                                                                       "disruptionsAllowed")}
                                  for b in doc.get("pdbs") or []],
                         "pluginConfig": [], "steps": [],
                         "workloads": [o for o in doc.get("objects") or [] if o.get("kind") == "Workload"
                                       and o.get("apiVersion") == "scheduling.k8s.io/v1alpha1"]}
    # 1.36: the PodGroups (v1alpha2 Workloads are not read by the scheduler: not sent), each
    # with the priority the Priority admission sets (the oracle's fake API has none):
    # its priorityClassName's value, else (no priority given) the globalDefault class's
    classes = {c["name"]: c for c in doc.get("priorityClasses") or []}
    default = min((c for c in classes.values() if c.get("globalDefault")), key=lambda c: c["value"], default=None)
    groups = []
    for o in doc.get("objects") or []:
        if o.get("kind") != "PodGroup":
            continue
        o = copy.deepcopy(o)
        spec = o["spec"]
        if (doc.get("featureGates") or {}).get("WorkloadAwarePreemption"):
            name = spec.pop("priorityClassName", None)
            if name:
                spec["priority"] = classes[name]["value"]
            elif spec.get("priority") is None and default is not None:
                spec["priority"] = default["value"]
        groups.append(o)
    if groups:
        s["podGroups"] = groups
    storage = [o for o in doc.get("objects") or [] if o.get("kind") in STORAGE_KINDS]
    if storage:
        s["storage"] = storage
    devices = [o for o in doc.get("objects") or [] if o.get("kind") in DEVICE_KINDS]
    if devices:
        s["devices"] = devices
    for n in s["nodes"]:
        n["allocatable"] = {k: str(v) for k, v in (n.get("allocatable") or {}).items()}
    for e in doc["schedule"]:
        if "wait" in e:
            s["steps"].append({"at": len(s["schedule"]), "kind": "wait", "seconds": e["wait"]})
        elif "deletePod" in e:
            s["steps"].append({"at": len(s["schedule"]), "kind": "deletePod", "pod": e["deletePod"]})
        elif "label" in e:
            s["steps"].append({"at": len(s["schedule"]), "kind": "label", "node": e["label"]["node"],
                               "labels": e["label"]["labels"]})
        elif "ungate" in e:
            s["steps"].append({"at": len(s["schedule"]), "kind": "ungate", **e["ungate"]})
        elif "deleteNode" in e or "drain" in e or "cordon" in e:
            kind = next(k for k in ("deleteNode", "drain", "cordon") if k in e)
            s["steps"].append({"at": len(s["schedule"]), "kind": kind, "node": e[kind]})
        elif "addNode" in e:
            n = dict(e["addNode"])
            n["allocatable"] = {k: str(v) for k, v in (n.get("allocatable") or {}).items()}
            s["steps"].append({"at": len(s["schedule"]), "kind": "addNode", "newNode": n})
        elif "replicas" in e:
            s["schedule"].extend(pod(e, f"{e['name']}-{i}") for i in range(e["replicas"]))
        else:
            s["schedule"].append(pod(e, e["name"]))
    return s


def main() -> int:
    """``seqgang.py --oracle BIN CASE.yaml...``: each gang case through the oracle and
    kspread (seqtest's compare: every cycle, the final placements, the pods still waiting)."""
    import argparse
    import sys
    from pathlib import Path

    import yaml

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import seqtest

    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--version", default="1.35", help="the cases of this version (1.35: Workloads; 1.36: PodGroups)")
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    bad = 0
    for f in a.cases:
        for doc in yaml.safe_load_all(Path(f).read_text()):
            if not doc or doc.get("version") != a.version or "schedule" not in doc:
                continue
            s = case_input(doc)
            r = seqtest.compare(s, a.version, a.oracle, 1, dict(doc.get("featureGates") or {}), doc["name"])
            ok = r.get("cycles") and r.get("final")
            bad += not ok
            print(f"{'agree ' if ok else 'DIFFER'} {doc['name']}: upstream {seqtest.describe(r.get('upstreamCycles'))}")
            if not ok:
                print(f"       kspread  {seqtest.describe(r.get('kspreadCycles'))}; {r.get('cls')} "
                      f"{r.get('error', '')}\n       final upstream {r.get('upstreamFinal')} "
                      f"{r.get('upstreamEvicted')}\n       final kspread  {r.get('kspreadFinal')} {r.get('kspreadEvicted')}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
