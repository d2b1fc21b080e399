#!/usr/bin/env python3
"""Sequence test: random `schedule` sequences through kspread and through the whole real scheduler.

A maintainer's tool, not part of CI (the oracle, ``fullcycle``, is built from vendored upstream
source by dev/seqoracle-build.sh; see dev/README.md, "The sequence oracle"). Each random
sequence (nodes in zones, bound pods, 5-30 incoming pods with priorities, preemption, spread,
affinity, taints, PDBs; with --storage also volumes, claims, classes, CSINodes and
StatefulSet-like replicas with claims) is written as a kspread case (YAML) and as the oracle's JSON input;
kspread runs it in this process (``--tree``: the kspread source tree to import), the oracle
as a subprocess (one filter worker; ties among scores broken as upstream's heap pops them from
1.35, in node order before). Compared:

* the final placements (bound node, else nominated node, else null);
* each cycle, in order: the pod, the searched set (the feasible nodes the search found, the
  nodes scored), the selection (the node the pod was bound to), the preemption (the pod's
  nominated node after the cycle, the victims deleted).

    python3 dev/seqtest.py --oracle WORK/fullcycle135 --version 1.35 -n 300 --seed 2026 --backoff 1 -j 2

It prints the number of sequences whose placements agree, whose every cycle agrees, the class
of each sequence's first divergence, and writes for the first few sequences of each class a
minimal reproducer (the sequence shrunk: pods, nodes, PDBs dropped while the same class of
difference stays) under ``--out``, as a kspread case whose ``expect.placements`` is upstream's.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timezone
from multiprocessing import Pool
from pathlib import Path
from typing import Any

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
CSI = "ebs.csi.aws.com"  # the zonal CSI driver of --storage (its CSINodes report the zone)
HOSTPATH_CSI = "hostpath.csi.k8s.io"  # a CSI driver without CSINodes: provisioned volumes follow the hostname
APPS = ["web", "db", "cache"]
NAMESPACES = ["default", "ns1"]


# ---- the random sequence ---------------------------------------------------------------------

class Gen:
    """Random sequences within what the fullcycle driver builds: nodes (labels, allocatable,
    taints, unschedulable), pods (namespace, labels, priority, preemptionPolicy, requests,
    nodeSelector, affinity, tolerations, spread constraints), PDBs."""

    def __init__(self, rng: random.Random, minor: int) -> None:
        self.r = rng
        self.minor = minor

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def selector(self) -> dict:
        r = self.r
        if self.chance(0.75):
            return {"matchLabels": {"app": r.choice(APPS)}}
        op = r.choice(["In", "NotIn", "Exists"])
        e: dict[str, Any] = {"key": r.choice(["app", "tier"]), "operator": op}
        if op != "Exists":
            e["values"] = r.sample(APPS + ["front", "back"], r.randint(1, 2))
        return {"matchExpressions": [e]}

    def affinity_term(self) -> dict:
        t: dict[str, Any] = {"labelSelector": self.selector(), "topologyKey": self.r.choice([ZONE, HOST, HOST])}
        if self.chance(0.15):
            t["namespaces"] = self.r.sample(NAMESPACES, self.r.randint(1, 2))
        return t

    def affinity(self, incoming: bool) -> dict | None:
        r = self.r
        a: dict[str, Any] = {}
        if incoming and self.chance(0.25):
            na: dict[str, Any] = {}
            term = {"matchExpressions": [{"key": r.choice(["disk", "tier"]), "operator": "In",
                                          "values": r.sample(["ssd", "hdd", "a", "b"], 2)}]}
            if self.chance(0.5):
                na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
            else:
                na["preferredDuringSchedulingIgnoredDuringExecution"] = [{"weight": r.randint(1, 100), "preference": term}]
            a["nodeAffinity"] = na
        for kind in ("podAffinity", "podAntiAffinity"):
            if self.chance(0.15 if incoming else 0.06):
                if self.chance(0.5):
                    a[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [self.affinity_term()]}
                else:
                    a[kind] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": r.randint(1, 100), "podAffinityTerm": self.affinity_term()}]}
        return a or None

    def spread(self) -> list[dict]:
        r = self.r
        out: list[dict] = []
        for key in r.sample([ZONE, HOST], r.randint(1, 2)):
            c: dict[str, Any] = {"maxSkew": r.randint(1, 2), "topologyKey": key,
                                 "whenUnsatisfiable": r.choice(["DoNotSchedule", "ScheduleAnyway"]),
                                 "labelSelector": self.selector()}
            if c["whenUnsatisfiable"] == "DoNotSchedule" and self.chance(0.15):
                c["minDomains"] = r.randint(1, 4)
            out.append(c)
        return out

    def requests(self, big: bool) -> dict:
        r = self.r
        req = {"cpu": f"{r.choice([250, 500, 1000, 1500, 2000] if big else [100, 250, 500, 1000])}m"}
        if self.chance(0.7):
            req["memory"] = f"{r.choice([256, 512, 1024, 2048])}Mi"
        return req

    def pod(self, name: str, node: str | None, tight: bool) -> dict:
        r = self.r
        incoming = node is None
        p: dict[str, Any] = {"name": name}
        if self.chance(0.2):
            p["namespace"] = "ns1"
        if node:
            p["node"] = node
        labels = {}
        if self.chance(0.85):
            labels["app"] = r.choice(APPS)
        if self.chance(0.4):
            labels["tier"] = r.choice(["front", "back"])
        p["labels"] = labels
        p["priority"] = r.choice([0, 100, 1000, 2000, 2000]) if incoming else r.choice([0, 0, 10, 100, 1000])
        if incoming and self.chance(0.1):
            p["preemptionPolicy"] = "Never"
        p["requests"] = self.requests(tight)
        if incoming and self.chance(0.15):
            p["nodeSelector"] = {"disk": r.choice(["ssd", "hdd"])}
        aff = self.affinity(incoming)
        if aff:
            p["affinity"] = aff
        if self.chance(0.3 if incoming else 0.1):
            tol: list[dict] = []
            for _ in range(r.randint(1, 2)):
                t: dict[str, Any] = {"key": r.choice(["dedicated", "spot"])}
                if self.chance(0.5):
                    t.update(operator="Equal", value=r.choice(["x", "y"]))
                else:
                    t["operator"] = "Exists"
                if self.chance(0.6):
                    t["effect"] = r.choice(["NoSchedule", "PreferNoSchedule"])
                tol.append(t)
            p["tolerations"] = tol
        if self.chance(0.35 if incoming else 0.08):
            p["topologySpreadConstraints"] = self.spread()
        return p

    def sequence(self) -> dict:
        r = self.r
        x = r.random()
        n_nodes = r.randint(2, 10) if x < 0.6 else r.randint(11, 60) if x < 0.85 else r.randint(100, 160)
        zones = r.sample(["za", "zb", "zc"], r.randint(1, 3))
        tight = self.chance(0.5)  # nearly full nodes: preemption
        nodes = []
        for i in range(n_nodes):
            labels: dict[str, str] = {}
            if self.chance(0.9):
                labels[ZONE] = r.choice(zones)
            if self.chance(0.5):
                labels["disk"] = r.choice(["ssd", "hdd"])
            if self.chance(0.3):
                labels["tier"] = r.choice(["a", "b"])
            n: dict[str, Any] = {"name": f"n{i + 1}", "labels": labels,
                                 "allocatable": {"cpu": r.choice(["2", "4"] if tight else ["2", "4", "8"]),
                                                 "memory": r.choice(["4Gi", "8Gi", "16Gi"]),
                                                 "pods": str(r.randint(2, 5) if tight else r.randint(4, 30))}}
            if self.chance(0.15):
                n["taints"] = [{"key": r.choice(["dedicated", "spot"]), "value": r.choice(["x", "y"]),
                                "effect": r.choice(["NoSchedule", "PreferNoSchedule"])}]
            if self.chance(0.04):
                n["unschedulable"] = True
            nodes.append(n)
        pods = []
        per_node = (1, 3) if tight else (0, 2)
        for n in nodes:
            for _ in range(r.randint(*per_node) if self.chance(0.8) else 0):
                pods.append(self.pod(f"p{len(pods)}", n["name"], tight))
        count = r.randint(5, 30)
        if self.chance(0.5):
            incoming = [self.pod(f"q{i}", None, tight) for i in range(count)]
        else:
            # replicas of 1-3 templates (pods of one shape: OpportunisticBatching's signature)
            templates = [self.pod("t", None, tight) for _ in range(r.randint(1, 3))]
            for t in templates:
                if self.chance(0.6):
                    t.pop("affinity", None)
                    t.pop("topologySpreadConstraints", None)
            incoming = []
            for i in range(count):
                q = copy.deepcopy(templates[min(i * len(templates) // count, len(templates) - 1)
                                            if self.chance(0.8) else r.randrange(len(templates))])
                q["name"] = f"q{i}"
                incoming.append(q)
        pdbs = []
        for i in range(r.randint(0, 2)):
            pdbs.append({"name": f"pdb{i}", "namespace": r.choice(NAMESPACES),
                         "selector": {"matchLabels": {"app": r.choice(APPS)}}, "disruptionsAllowed": r.randint(0, 1)})
        # PodTopologySpread without default constraints (defaultingType List) in some profiles:
        # with the system defaults no pod is signable, and OpportunisticBatching never applies
        plugin_config = [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}] if self.chance(0.4) else []
        return {"nodes": nodes, "pods": pods, "schedule": incoming, "pdbs": pdbs, "pluginConfig": plugin_config}

    def storage(self, s: dict) -> None:
        """Storage for a sequence (--storage): a zonal CSI driver (with or without storage
        capacity) reporting the zone in most nodes' CSINodes, some with an attach limit;
        classes WaitForFirstConsumer (``wffc``, allowedTopologies or not; ``hostpath``, a
        driver no CSINode reports), Immediate (``imm``) and static (``local``,
        kubernetes.io/no-provisioner); CSIStorageCapacities per zone; local volumes of
        distinct sizes on some nodes, available zonal volumes of ``wffc`` and volumes
        bound to claims (ReadWriteOnce or ReadWriteOncePod). The incoming pods are
        StatefulSet-like: each replica of a template has its own claim ``data-<pod>`` of the
        template's class (as volumeClaimTemplates make them), some also a shared claim, an
        in-tree disk or a generic ephemeral volume (its claim written out, owned by the
        pod); independent incoming pods get such volumes at random; bound pods use the bound
        claims and in-tree disks."""
        r = self.r
        nodes = [n["name"] for n in s["nodes"]]
        zones = sorted({n["labels"][ZONE] for n in s["nodes"] if ZONE in n["labels"]})
        objs: list[dict] = []

        def obj(kind: str, api: str, meta: dict, **rest: Any) -> dict:
            o = {"apiVersion": api, "kind": kind, "metadata": meta, **rest}
            objs.append(o)
            return o

        obj("CSIDriver", "storage.k8s.io/v1", {"name": CSI}, spec={"storageCapacity": self.chance(0.5)})
        for n in nodes:
            if self.chance(0.85):
                d: dict[str, Any] = {"name": CSI, "nodeID": f"i-{n}", "topologyKeys": [ZONE]}
                if self.chance(0.5):
                    d["allocatable"] = {"count": r.randint(1, 4)}
                obj("CSINode", "storage.k8s.io/v1", {"name": n}, spec={"drivers": [d]})
        wffc: dict[str, Any] = {"provisioner": CSI, "volumeBindingMode": "WaitForFirstConsumer"}
        if zones and self.chance(0.3):
            wffc["allowedTopologies"] = [{"matchLabelExpressions": [
                {"key": ZONE, "values": r.sample(zones, r.randint(1, len(zones)))}]}]
        obj("StorageClass", "storage.k8s.io/v1", {"name": "wffc"}, **wffc)
        obj("StorageClass", "storage.k8s.io/v1", {"name": "hostpath"}, provisioner=HOSTPATH_CSI,
            volumeBindingMode="WaitForFirstConsumer")
        obj("StorageClass", "storage.k8s.io/v1", {"name": "imm"}, provisioner=CSI, volumeBindingMode="Immediate")
        obj("StorageClass", "storage.k8s.io/v1", {"name": "local"}, provisioner="kubernetes.io/no-provisioner",
            volumeBindingMode="WaitForFirstConsumer")
        for z in zones:
            if self.chance(0.8):
                cap: dict[str, Any] = {"storageClassName": "wffc", "capacity": f"{r.choice([5, 20, 50, 200])}Gi",
                                       "nodeTopology": {"matchLabels": {ZONE: z}}}
                if self.chance(0.3):
                    cap["maximumVolumeSize"] = f"{r.choice([10, 30])}Gi"
                obj("CSIStorageCapacity", "storage.k8s.io/v1", {"name": f"cap-{z}", "namespace": "kube-system"}, **cap)
        # distinct sizes: among equal sizes upstream takes its cache's order
        sizes = r.sample(range(1, 120), 40)
        for n in r.sample(nodes, min(len(nodes), r.randint(0, 6))):
            for k in range(r.randint(1, 3)):
                obj("PersistentVolume", "v1", {"name": f"local-{n}-{k}"}, spec={
                    "capacity": {"storage": f"{sizes.pop()}Gi"}, "storageClassName": "local",
                    "accessModes": r.choice([["ReadWriteOnce"], ["ReadWriteOnce", "ReadOnlyMany"]]),
                    "local": {"path": "/d"},
                    "nodeAffinity": {"required": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": HOST, "operator": "In", "values": [n]}]}]}}},
                    status={"phase": "Available"})
        for i in range(r.randint(0, 3) if zones else 0):  # available zonal volumes of wffc
            obj("PersistentVolume", "v1", {"name": f"zpv{i}"}, spec={
                "capacity": {"storage": f"{sizes.pop()}Gi"}, "storageClassName": "wffc",
                "accessModes": ["ReadWriteOnce"], "csi": {"driver": CSI, "volumeHandle": f"zvol-{i}"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [r.choice(zones)]}]}]}}},
                status={"phase": "Available"})

        def claim(name: str, ns: str, spec: dict, bound: str | None = None, **meta: Any) -> str:
            m = {"name": name, "namespace": ns, **meta}
            if bound:
                m.setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
                spec = {**spec, "volumeName": bound}
            obj("PersistentVolumeClaim", "v1", m, spec=spec, status={"phase": "Bound" if bound else "Pending"})
            return name

        def claim_spec(cls: str, modes: list[str] | None = None) -> dict:
            size = r.choice([1, 5, 8, 25, 60]) if cls != "local" else r.randint(1, 100)
            return {"storageClassName": cls, "accessModes": modes or ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": f"{size}Gi"}}}

        shared: dict[str, list[str]] = {ns: [] for ns in NAMESPACES}
        for i in range(r.randint(0, 3)):  # volumes bound to claims
            ns = r.choice(NAMESPACES)
            zs = r.sample(zones, r.randint(1, len(zones))) if zones else []
            cls = r.choice(["wffc", "imm"])
            pv_spec: dict[str, Any] = {"capacity": {"storage": "10Gi"}, "storageClassName": cls,
                                       "accessModes": ["ReadWriteOnce"],
                                       "claimRef": {"namespace": ns, "name": f"bc{i}"},
                                       "csi": {"driver": CSI, "volumeHandle": f"vol-{i}"}}
            if zs:
                pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": zs}]}]}}
            obj("PersistentVolume", "v1", {"name": f"pv-bc{i}"}, spec=pv_spec, status={"phase": "Bound"})
            modes = ["ReadWriteOncePod"] if self.chance(0.3) else ["ReadWriteOnce"]
            shared[ns].append(claim(f"bc{i}", ns, {"storageClassName": cls, "accessModes": modes,
                                                    "resources": {"requests": {"storage": "10Gi"}}}, bound=f"pv-bc{i}"))
        for i in range(r.randint(0, 2)):  # unbound claims pods share
            ns = r.choice(NAMESPACES)
            cls = r.choice(["wffc", "wffc", "local", "hostpath", "imm"])
            modes = ["ReadWriteOncePod"] if self.chance(0.2) else None
            shared[ns].append(claim(f"sc{i}", ns, claim_spec(cls, modes)))

        def extra(pod: dict, vols: list[dict], incoming: bool) -> None:
            ns = pod.get("namespace") or "default"
            k = r.random()
            if k < 0.35 and shared[ns]:
                vols.append({"name": f"s{len(vols)}", "persistentVolumeClaim": {"claimName": r.choice(shared[ns])}})
            elif k < 0.5:
                vols.append({"name": f"g{len(vols)}", "gcePersistentDisk": {"pdName": r.choice(["d1", "d2"]),
                                                                              "readOnly": self.chance(0.5)}})
            elif k < 0.65 and incoming:
                name = f"e{len(vols)}"
                spec = claim_spec(r.choice(["wffc", "hostpath"]))
                vols.append({"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": spec}}})
                claim(f"{pod['name']}-{name}", ns, spec, ownerReferences=[
                    {"apiVersion": "v1", "kind": "Pod", "name": pod["name"], "uid": f"{ns}/{pod['name']}",
                     "controller": True}])

        for p in s["pods"]:
            if self.chance(0.3):
                vols: list[dict] = []
                extra(p, vols, False)
                if vols:
                    p["volumes"] = vols
        templates: dict[str, dict] = {}  # a template's signature -> its claim class and extra volumes
        for q in s["schedule"]:
            ns = q.get("namespace") or "default"
            vols = []
            sig = json.dumps({k: v for k, v in q.items() if k != "name"}, sort_keys=True)
            if sig not in templates:
                cls = r.choice(["wffc", "wffc", "wffc", "local", "local", "hostpath", "imm", None])
                templates[sig] = {"cls": cls, "modes": ["ReadWriteOncePod"] if self.chance(0.1) else None,
                                  "extra": self.chance(0.3), "size": None}
            t = templates[sig]
            if t["cls"]:
                spec = claim_spec(t["cls"], t["modes"])
                t["size"] = t["size"] or spec["resources"]["requests"]["storage"]
                spec["resources"]["requests"]["storage"] = t["size"]  # one volumeClaimTemplate
                vols.append({"name": "data", "persistentVolumeClaim": {"claimName": claim(f"data-{q['name']}", ns, spec)}})
            if t["extra"] or self.chance(0.15):
                extra(q, vols, True)
            if vols:
                q["volumes"] = vols
        s["storage"] = objs

    def steps(self, s: dict) -> list[dict]:
        """1-4 steps between the incoming pods (issue 28), each naming what the cluster has at
        that point: cordon, uncordon, drain, label (zone, disk, tier; set or removed), taint
        (NoSchedule, PreferNoSchedule, NoExecute), untaint, addNode, deleteNode, deletePod, ungate,
        wait. ``at``: applied once the first ``at`` incoming pods were created and scheduled. Also
        makes the cluster's life: owners (ReplicaSet, ReplicationController, StatefulSet) and
        controller references, PDBs by minAvailable (the drivers recount them), scheduling gates
        on some incoming pods, NoExecute tolerations with tolerationSeconds. deletePod names a pod
        nothing else can have deleted: a gated pod not yet ungated, or a bound pod of the case
        raised above every incoming pod's priority on a node no earlier step disturbed."""
        r = self.r
        # the cluster's life: owners, controllers, budgets, gates, NoExecute tolerations
        owners = []
        for ns in NAMESPACES:
            for app in APPS:
                if self.chance(0.5):
                    kind = r.choice(["ReplicaSet", "ReplicationController", "StatefulSet"])
                    owners.append({"kind": kind, "name": f"{app}-{kind[0].lower()}s", "namespace": ns,
                                   "selector": {"app": app}})
        s["owners"] = owners
        by = {(o["namespace"], o["selector"]["app"]): o for o in owners}
        for p in s["pods"] + s["schedule"]:
            o = by.get((p.get("namespace") or "default", p.get("labels", {}).get("app")))
            if o is not None and self.chance(0.7):
                p["controller"] = {"kind": o["kind"], "name": o["name"]}
            if self.chance(0.2):
                t: dict[str, Any] = {"key": "maint", "operator": "Exists", "effect": "NoExecute"}
                # not a few seconds: a replacement that tolerates the taint comes back and is
                # evicted again once the clock passes its timer, which 1.31's backoff waits
                # advance: evictions for ever (kspread: an error naming the step)
                secs = r.choice([None, 60, 300, 400, 3600])
                if secs is not None:
                    t["tolerationSeconds"] = secs
                p.setdefault("tolerations", []).append(t)
        s["pdbs"] = [{"name": f"pdb{i}", "namespace": r.choice(NAMESPACES),
                      "selector": {"matchLabels": {"app": r.choice(APPS)}}, "minAvailable": r.randint(0, 3)}
                     for i in range(r.randint(0, 2))]
        gated = []
        for i, p in enumerate(s["schedule"]):
            if self.chance(0.12):
                p["schedulingGates"] = [{"name": "example.com/g1"}] + (
                    [{"name": "example.com/g2"}] if self.chance(0.3) else [])
                gated.append(i)
        nodes = {n["name"]: copy.deepcopy(n) for n in s["nodes"]}
        disturbed: set[str] = set()  # nodes a step may have evicted pods from
        deleted: set[str] = set()
        gates = {i: [g["name"] for g in s["schedule"][i]["schedulingGates"]] for i in gated}
        out = []
        for at in sorted(r.randint(0, len(s["schedule"])) for _ in range(r.randint(1, 4))):
            names = sorted(nodes, key=lambda n: int(n[1:]))
            kind = r.choice(["cordon", "uncordon", "drain", "drain", "label", "taint", "taint", "untaint", "addNode",
                             "deleteNode", "deletePod", "ungate", "wait", "wait"])
            name = r.choice(names) if names else None
            tainted = [n for n in names if nodes[n].get("taints")]
            if kind == "untaint" and not tainted:
                kind = "taint"
            if kind in ("deleteNode", "cordon", "uncordon", "label", "taint", "drain") and (name is None or (
                    kind == "deleteNode" and len(names) < 2)):
                kind = "addNode"
            st: dict[str, Any] = {"at": at, "kind": kind}
            if kind == "ungate":
                ready = [i for i in gates if i < at and gates[i] and key(s["schedule"][i]) not in deleted]
                if not ready:
                    kind = st["kind"] = "wait"
                else:
                    i = r.choice(ready)
                    st["pod"], st["gate"] = key(s["schedule"][i]), gates[i].pop(0)
            if kind == "deletePod":
                pending = [key(s["schedule"][i]) for i in gates if i < at and gates[i]]
                bound = [key(p) for p in s["pods"] if p["node"] in nodes and p["node"] not in disturbed]
                choices = [k for k in pending + bound if k not in deleted]
                if not choices:
                    kind = st["kind"] = "wait"
                else:
                    k = r.choice(choices)
                    st["pod"] = k
                    deleted.add(k)
                    for p in s["pods"]:
                        if key(p) == k:
                            p["priority"] = 5000  # above every incoming pod: no preemption takes it first
            if kind == "wait":
                st["seconds"] = r.choice([1, 5, 20, 31, 60, 120, 330, 400])
            elif kind == "addNode":
                new = f"n{max((int(n[1:]) for n in nodes), default=0) + 1}"
                labels = {ZONE: r.choice(["za", "zb", "zc"])} if self.chance(0.9) else {}
                if self.chance(0.5):
                    labels["disk"] = r.choice(["ssd", "hdd"])
                st["newNode"] = {"name": new, "labels": labels, "allocatable": {
                    "cpu": r.choice(["2", "4", "8"]), "memory": r.choice(["4Gi", "8Gi"]), "pods": str(r.randint(4, 30))}}
                # a copy: a later taint step changes the generator's node, not the node this step adds
                nodes[new] = copy.deepcopy(st["newNode"])
            elif kind in ("deleteNode", "drain"):
                st["node"] = name
                disturbed.add(name)
                if kind == "deleteNode":
                    del nodes[name]
            elif kind == "label":
                st["node"] = name
                lkey = r.choice([ZONE, "disk", "tier"])
                value = None if self.chance(0.3) else r.choice({"disk": ["ssd", "hdd"], "tier": ["a", "b"]}.get(
                    lkey, ["za", "zb", "zc"]))
                st["labels"] = {lkey: value}
            elif kind == "taint":
                taint = {"key": r.choice(["maint", "spot2"]), "value": "x",
                         "effect": r.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])}
                if any((t["key"], t["effect"]) == (taint["key"], taint["effect"]) for t in
                       nodes[name].get("taints") or []):
                    continue
                st["node"], st["taint"] = name, taint
                nodes[name].setdefault("taints", []).append(taint)
                if taint["effect"] == "NoExecute":
                    disturbed.add(name)
            elif kind == "untaint":
                name = r.choice(tainted)
                tkey = nodes[name]["taints"][0]["key"]
                st["node"], st["key"] = name, tkey
                nodes[name]["taints"] = [t for t in nodes[name]["taints"] if t["key"] != tkey]
            elif kind in ("cordon", "uncordon"):
                st["node"] = name
            out.append(st)
        return out


def config_text(s: dict) -> str:
    """The KubeSchedulerConfiguration both sides read (kspread: ``profile.config``): the
    default profile, upstream's default percentageOfNodesToScore (adaptive), the sequence's
    plugin arguments."""
    prof: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if s.get("pluginConfig"):
        prof["pluginConfig"] = s["pluginConfig"]
    return json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [prof]}, indent=1)


# ---- the two inputs --------------------------------------------------------------------------

SETTLE_MILLIS = 30  # the oracle's wait after each cycle for the informers (--settle)
MAX_BACKOFF: int | None = None  # the oracle's maximum pod backoff (--max-backoff)


def oracle_input(s: dict, backoff: int, gates: dict[str, bool], version: str) -> dict:
    """The oracle's input: the initial backoff ``backoff`` seconds, the maximum MAX_BACKOFF, by
    default upstream's 10 s (podMaxBackoffSeconds) from a backoff of 1 s, none (0) without. Ties
    among scores: from 1.35 as upstream's heap pops them (``heap``; one filter worker, so the
    scored list is in search order, as kspread has it), before in node order (upstream: random);
    preemption's candidates tied on every criterion in node order either way."""
    out: dict[str, Any] = copy.deepcopy(s)
    del out["pluginConfig"]
    tie_break = "heap" if int(version.split(".")[1]) >= 35 else "nodeOrder"
    out.update(parallelism=1, tieBreak=tie_break, backoffSeconds=backoff, config=config_text(s),
               settleMillis=SETTLE_MILLIS,
               maxBackoffSeconds=MAX_BACKOFF if MAX_BACKOFF is not None else (10 if backoff else 0))
    if gates:
        out["featureGates"] = gates
    return out


def kspread_case(s: dict, version: str, name: str, gates: dict[str, bool], config: str,
                 expect: dict | None = None) -> dict:
    """The case; ``config`` is the path of config_text(s) (as the case names it)."""
    doc: dict[str, Any] = {"apiVersion": "kspread/v1", "kind": "Case", "name": name, "version": version}
    if gates:
        doc["featureGates"] = gates
    doc["profile"] = {"config": config}
    pods = s["pods"]
    if gates.get("WorkloadAwarePreemption"):
        # the start times mkPod gives the oracle's bound pods (1700000000 + their index), which
        # workload-aware preemption's victim order reads (kspread's default for a pod without
        # one is "now", later than the sequence's pods; the oracle's, earlier)
        pods = [dict(p, startTime=datetime.fromtimestamp(1700000000 + i, timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ")) if p.get("node") and "startTime" not in p else p for i, p in enumerate(pods)]
    # a status's containerStatuses name the oracle's container "c" (--resize): the case names it too
    pods = [{**{k: v for k, v in p.items() if k != "requests"},
             "containers": [{"name": "c", "resources": {"requests": p.get("requests") or {}}}]}
            if p.get("status") else p for p in pods]
    doc.update(nodes=s["nodes"], pods=pods, schedule=with_steps(s))
    if s.get("storage") or s.get("workloads") or s.get("devices") or s.get("podGroups"):
        # workloads: --gangs (1.35); podGroups: --gangs (1.36); devices: --devices
        doc["objects"] = (s.get("storage") or []) + (s.get("workloads") or []) + (s.get("podGroups") or []) \
            + (s.get("devices") or [])
    if s.get("owners"):
        doc["owners"] = [{**o, "selector": o["selector"] if o["kind"] == "ReplicationController" else
                          {"matchLabels": o["selector"]}} for o in s["owners"]]
    if s["pdbs"]:
        doc["pdbs"] = s["pdbs"]
    doc["expect"] = expect or {"placements": {key(p): None for p in s["schedule"]}}
    return doc


def with_steps(s: dict) -> list[dict]:
    """The case's `schedule`: the incoming pods with the sequence's steps between them."""
    out: list[dict] = []
    steps = s.get("steps") or []
    for i in range(len(s["schedule"]) + 1):
        for st in steps:
            if st["at"] != i:
                continue
            k = st["kind"]
            if k == "addNode":
                out.append({"addNode": st["newNode"]})
            elif k == "label":
                out.append({"label": {"node": st["node"], "labels": st["labels"]}})
            elif k == "taint":
                out.append({"taint": {"node": st["node"], **st["taint"]}})
            elif k == "untaint":
                out.append({"untaint": {"node": st["node"], "key": st["key"]}})
            elif k == "deletePod":
                out.append({"deletePod": st["pod"]})
            elif k == "ungate":
                out.append({"ungate": {"pod": st["pod"], "gate": st["gate"]}})
            elif k == "wait":
                out.append({"wait": st["seconds"]})
            else:
                out.append({k: st["node"]})
        if i < len(s["schedule"]):
            out.append(s["schedule"][i])
    return out


def key(p: dict) -> str:
    ns = p.get("namespace") or "default"
    return p["name"] if ns == "default" else f"{ns}/{p['name']}"


def short(k: str) -> str:
    """``ns/name`` as a case names a pod: bare in ``default``."""
    return k.removeprefix("default/")


# ---- running ----------------------------------------------------------------------------------

ORACLE_ENV: dict[str, str] = {}  # extra environment of the oracle (FC_POOL_ORDER: --devices)


ORACLE_TIMEOUT = 300  # seconds, per oracle run


def run_oracle(oracle: str, inp: dict, path: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory() as d:
        f = path or Path(d) / "in.json"
        f.write_text(json.dumps(inp, indent=1))
        for attempt in (1, 2):
            try:
                p = subprocess.run([oracle, str(f)], check=False, capture_output=True, text=True,
                                   timeout=ORACLE_TIMEOUT, env={**os.environ, **ORACLE_ENV} if ORACLE_ENV else None)
                break
            except subprocess.TimeoutExpired:
                # the oracle hangs now and then (a run of a sequence that answers in a second
                # sat idle for the whole timeout, seed 2032): once more, then an error
                if attempt == 2:
                    return {"error": f"the oracle did not answer in {ORACLE_TIMEOUT} s, twice"}
    if p.returncode != 0:
        err = p.stderr.strip()
        # a Go panic: its message and first frames (what crashed), then the end
        at = err.find("\npanic: ")
        head = err[at + 1:at + 1200] + "\n...\n" if at >= 0 else ""
        return {"error": head + err[-1000:] or f"exit status {p.returncode}"}
    return json.loads(p.stdout)


def oracle_cycles(o: dict) -> list[dict]:
    """Each cycle: pod, searched (sorted), picked, after (the pod's node, else nominated node,
    once the cycle settled), victims; batchHint (1.35) for the classes."""
    outs = {x["index"]: x for x in o.get("outcomes") or []}
    cycles = []
    for i, c in enumerate(o.get("cycles") or []):
        x = outs.get(i) or {}
        cycles.append({"pod": short(c["pod"]), "searched": sorted(c.get("searched") or []),
                       "picked": c.get("picked") or None,
                       "after": x.get("node") or x.get("nominatedNodeName") or None,
                       "victims": sorted(short(v) for v in x.get("victims") or []),
                       "hint": c.get("batchHint") or "", "err": c.get("err") or ""})
    return cycles


def write_case(d: Path, s: dict, version: str, name: str, gates: dict[str, bool], expect: dict | None = None,
               backoff: int | None = None) -> dict:
    """NAME.yaml (the kspread case), NAME.config.yaml (its profile's KubeSchedulerConfiguration)
    and, with ``backoff``, NAME.json (the oracle's input) in ``d``; returns the case."""
    import yaml

    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}.config.yaml").write_text(config_text(s) + "\n")
    doc = kspread_case(s, version, name, gates, f"{name}.config.yaml", expect)
    (d / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False, width=120))
    if backoff is not None:
        (d / f"{name}.json").write_text(json.dumps(oracle_input(s, backoff, gates, version), indent=1))
    return doc


def run_kspread(doc: dict, base_dir: Path, devices: dict | None = None
                ) -> tuple[list[dict], dict[str, Any], dict[str, Any], list[str], list[str]]:
    """... and, given ``devices`` (a dict), its ``allocations`` at the end and ``allocationLog``
    (devices.py: each batch of claims newly allocated between two cycles)."""
    from kspread.engine import scheduler as engine
    from kspread.format.case import build_case

    case = build_case(doc, doc["name"], base_dir=str(base_dir))
    after: dict[int, str | None] = {}  # cycle -> the pod's node or nominated node once settled
    keys: list[str] = []
    current: list[Any] = []

    def place(sched: Any, k: str) -> str | None:
        # a pod waiting at Permit (--gangs): upstream's NominatedNodeNameForExpectation nominates
        # it to its node, kspread leaves it pending (dev/README.md)
        return sched.waiting[k][1] if k in getattr(sched, "waiting", {}) else sched.placement(k)

    def settled() -> None:
        # the newest cycle's outcome: at the next cycle, or when the run goes idle (before a
        # step changes the cluster, as the oracle observes it)
        if keys and len(keys) - 1 not in after:
            after[len(keys) - 1] = place(current[0], keys[-1])

    waiting_at: list[set[str]] = []  # per cycle, the pods waiting at Permit (--gangs)

    def observe(sched: Any, r: Any) -> None:
        current[:] = [sched]
        settled()
        if devices is not None:
            dev_observe(devices, sched)
        keys.append(r.pod.key)
        waiting_at.append(set(getattr(sched, "waiting", ())))

    until_idle = engine.SequenceRun.until_idle

    def until_idle_then_settled(self: Any) -> None:
        until_idle(self)
        settled()
        if devices is not None:  # before a step can release claims
            dev_observe(devices, self.sched)

    engine.SequenceRun.until_idle = until_idle_then_settled  # type: ignore[method-assign]
    try:
        _sched, results, placements = engine.run_case(case, observe=observe, keep_all=True)
    finally:
        engine.SequenceRun.until_idle = until_idle  # type: ignore[method-assign]
    if case.timeline:  # every pod the sequence had, where it ends; the pods evicted
        final = dict(placements)
        evicted = sorted(_sched.sequence.evicted_pods())
        placements = {p.key: placements.get(p.key) for p in case.incoming}  # the oracle's "placements"
    else:
        victims = {v.key for r in results if r.preemption is not None and r.preemption.nominated_node
                   for v in r.preemption.victims}
        # 1.36's workload-aware preemption: a pod group cycle's victims (on its last pod's outcome)
        victims |= {v.key for r in results if getattr(r, "pod_group", None) is not None for v in r.pod_group.victims}
        evicted = sorted(victims)
        final = {p.key: None if p.key in victims else p.node_name for p in case.cluster.pods}
        final.update(placements)
    settled()
    for k, (_, n) in getattr(_sched, "waiting", {}).items():  # (place)
        final[k] = n
        if k in placements:
            placements[k] = n
    if devices is not None:
        dev_observe(devices, _sched)
    cycles = []
    for i, r in enumerate(results):
        pre = r.preemption
        # a victim waiting at Permit is rejected, not deleted (the oracle sees deletions)
        # (a pod of a 1.36 pod group: its own preemption's victims are observed after the
        # group's cycle, on its last pod's outcome: pod_group.victims)
        victims = sorted(v.key for v in pre.victims if v.key not in waiting_at[i]) \
            if pre is not None and pre.nominated_node and getattr(r, "pod_group", None) is None else []
        picked = r.bound_node or getattr(r, "waiting_on", None)  # (a pod waiting at Permit: its node)
        if getattr(r, "pod_group", None) is not None:  # 1.36: the node the pod fit on in its group's cycle
            picked = r.pod_group.node
        cycles.append({"pod": r.pod.key, "searched": sorted(r.searched), "picked": picked,
                       "after": after.get(i), "victims": victims, "err": r.error or ""})
        pg = getattr(r, "pod_group", None)
        if pg is not None and (pg.message or "").startswith('running PreBind plugin "DynamicResources"'):
            cycles[-1]["lost"] = True  # (claim_race: its PreBind lost a shared claim)
        if pg is not None:
            # 1.36: the oracle observes once per ScheduleOne (a pod group cycle): only the group
            # cycle's last logged cycle gets an outcome, that of its pod once the cycle settled
            prev = results[i - 1].pod_group if i > 0 else None
            if prev is None or (prev.group, prev.cycle) != (pg.group, pg.cycle):
                group_start = len(cycles) - 1
            nxt = results[i + 1].pod_group if i + 1 < len(results) else None
            own = cycles[-1]["after"]
            cycles[-1]["after"] = None
            if getattr(pg, "placement_runs", ()):
                # TopologyAwareWorkloadScheduling: every placement's run is logged, in the order
                # tried; the results are the chosen one's
                def logged(one: Any) -> list[dict]:
                    return [{"pod": c.pod, "searched": list(c.searched), "picked": c.node, "after": None,
                             "victims": [], "err": c.error} for c in one]
                before = [c for one in pg.placement_runs[:pg.chosen] for c in logged(one)]
                cycles[group_start:group_start] = before
                for one in pg.placement_runs[pg.chosen + 1:]:
                    cycles.extend(logged(one))
            for one in pg.preemption_runs:  # workload-aware preemption's runs, logged after
                for c in one:
                    cycles.append({"pod": c.pod, "searched": list(c.searched), "picked": c.node,
                                   "after": None, "victims": [], "err": c.error})
            if pg.victims:  # upstream logs them with the last run's last cycle
                cycles[-1]["victims"] = sorted(v.key for v in pg.victims)
            if nxt is None or (nxt.group, nxt.cycle) != (pg.group, pg.cycle):
                # (the last logged cycle is the group's last pod's: a run that stopped early on
                # an error preempts nothing)
                cycles[-1]["after"] = own
    run = getattr(getattr(_sched, "sequence", None), "run", None)
    rejected = list(getattr(run, "rejected", {}).values())
    GANG_STATS.update(waits=sum(1 for r in results if getattr(r, "waiting_on", None)),
                      timeouts=sum(1 for x in rejected if x not in ("preempted", "removed")),
                      preempted=sum(1 for x in rejected if x == "preempted"),
                      removed=sum(1 for x in rejected if x == "removed"),
                      # 1.36, gate off: pods of a pod group whose own PostFilter preempted in the group's cycle
                      groupPreempts=sum(1 for r in results if getattr(r, "pod_group", None) is not None
                                        and r.preemption is not None and r.preemption.nominated_node),
                      # those of them with volumes or resource claims (their Reserve on the nominated node)
                      groupPreemptsVolumes=sum(1 for r in results if getattr(r, "pod_group", None) is not None
                                               and r.preemption is not None and r.preemption.nominated_node
                                               and (r.pod.volumes or r.pod.resource_claims)),
                      # 1.36: group pods whose DynamicResources PreBind failed on a claim another pod
                      # of their group cycle allocated first (a shared claim's pending allocation)
                      claimConflicts=sum(1 for r in results if getattr(r, "pod_group", None) is not None
                                         and (r.pod_group.message or "").startswith(
                                             'running PreBind plugin "DynamicResources"')))
    return cycles, placements, final, evicted, sorted(getattr(_sched, "waiting", {}))


GANG_STATS: dict[str, int] = {}  # the last run_kspread's gang figures (--gangs)


def first_divergence(oc: list[dict], kc: list[dict]) -> tuple[int, str] | None:
    """The first cycle where the two runs differ, and the class of the difference."""
    for i in range(max(len(oc), len(kc))):
        if i >= len(kc):
            return i, "upstream retries" if any(c["pod"] == oc[i]["pod"] for c in oc[:i]) else "upstream extra cycle"
        if i >= len(oc):
            return i, "kspread retries" if any(c["pod"] == kc[i]["pod"] for c in kc[:i]) else "kspread extra cycle"
        o, k = oc[i], kc[i]
        if o["pod"] != k["pod"]:
            o_retry = any(c["pod"] == o["pod"] for c in oc[:i])
            k_retry = any(c["pod"] == k["pod"] for c in kc[:i])
            if o_retry and not k_retry:
                return i, "upstream retries"
            if k_retry and not o_retry:
                return i, "kspread retries"
            return i, "retry order" if o_retry else "queue order"
        batch = " (batch hint)" if o.get("hint") else ""
        if o.get("hint") and o["searched"] == [o["hint"]] and k["searched"] != o["searched"]:
            # OpportunisticBatching: the previous cycle's next-best node, filtered alone
            return i, "batch hint: " + ("same node" if o["picked"] == k["picked"] else "other node")
        if o["searched"] != k["searched"]:
            if o["searched"] and k["searched"] and len(o["searched"]) == len(k["searched"]):
                return i, "searched: other nodes" + batch
            return i, "searched: other count" + batch
        if o["picked"] != k["picked"]:
            return i, "selection" + batch
        if o["victims"] != k["victims"]:
            return i, "preemption victims"
        if o["after"] != k["after"]:
            return i, "nomination"
    return None


def compare(s: dict, version: str, oracle: str, backoff: int, gates: dict[str, bool], name: str,
            write: Path | None = None) -> dict:
    """Run one sequence both ways. Returns {placements, cycles (agree?), first: (i, class)}."""
    o = run_oracle(oracle, oracle_input(s, backoff, gates, version))
    res: dict[str, Any] = {"name": name}
    if "error" in o:
        res.update(error=f"oracle: {o['error']}", cls="oracle error")
        if s.get("workloads"):
            gang_both_refuse(s, version, name, gates, res)
        return res
    with tempfile.TemporaryDirectory() as tmp:
        d = write or Path(tmp)
        doc = write_case(d, s, version, name, gates, {"placements": o["placements"]},
                         backoff if write is not None else None)
        try:
            kdev: dict | None = {"allocations": initial_allocations(s)} if s.get("devices") else None
            kc, kp, kfinal, kevicted, kwaiting = run_kspread(doc, d, kdev)
        except Exception as e:  # a kspread error on a valid sequence is a difference too
            res.update(error=f"kspread: {type(e).__name__}: {e}", cls="kspread error")
            if "binds the pod to the missing node" in str(e):
                res["cls"] = "kspread refuses: a gang bound on a deleted node (explained)"
            elif "would wait at GangScheduling's Permit holding" in str(e) or "of a gang would wait in" in str(e):
                res["cls"] = "kspread refuses: a gang pod would wait with claims (explained)"
            elif "kspread does not model it in 1.36's pod group scheduling cycle" in str(e):
                # a refusal by name (podgroupcycle._refuse): what it names is in the docs (Gangs)
                why = str(e).split(": kspread does not model")[0].split("pod group ", 1)[-1]
                res["cls"] = f"kspread refuses by name: a group pod {why.split(' ', 1)[-1][:60]}"
            return res
    oc = oracle_cycles(o)
    fd = first_divergence(oc, kc)
    ofinal, oevicted = o.get("final") or {}, sorted(o.get("evicted") or [])
    if s.get("workloads") or s.get("podGroups"):  # --gangs: the pods still waiting at Permit, compared as evictions are
        res.update(GANG_STATS)
        oevicted += [f"waiting:{short(k)}" for k in o.get("waiting") or []]
        kevicted = kevicted + [f"waiting:{k}" for k in sorted(kwaiting)]
    res.update(final=ofinal == kfinal and oevicted == kevicted, upstreamFinal=ofinal, kspreadFinal=kfinal,
               upstreamEvicted=oevicted, kspreadEvicted=kevicted)
    res.update(placements=o["placements"] == kp, cycles=fd is None, upstream=o["placements"], kspread=kp,
               ncycles=(len(oc), len(kc)), hints=sum(1 for c in oc if c["hint"]),
               preemptions=sum(1 for c in oc if c["victims"]))
    if s.get("storage"):
        # what the sequence exercised (upstream's cycles): pods with claims bound, and cycles
        # whose pod a volume plugin rejected on some node (the reason texts in kspread's cycle)
        with_claims = {key(p) for p in s["schedule"] if any(
            "persistentVolumeClaim" in v or "ephemeral" in v for v in p.get("volumes") or [])}
        res["claimBinds"] = sum(1 for c in oc if c["picked"] and c["pod"] in with_claims)
        res["volumeRejects"] = sum(1 for c in oc if any(w in c["err"] for w in VOLUME_REASONS))
    if kdev is not None:
        dev_compare(res, o, kdev)
    res["upstreamCycles"], res["kspreadCycles"] = oc, kc
    if fd is not None:
        res["first"] = fd[0]
        res["cls"] = fd[1]
        if fd[1] == "preemption victims" and s.get("workloads") and gang_tie(s, oc[fd[0]], kc[fd[0]]):
            res["cls"] = "preemption victims: gang bound together (explained)"
        if fd[1] == "retry order" and s.get("workloads") and gang_replaced(s, oc[:fd[0]], oc[fd[0]], kc[fd[0]]):
            res["cls"] = "retry order: gang bound together (explained)"
        if s.get("podGroups") and claim_race(s, oc, kc, fd[0]):
            res["cls"] = f"{fd[1]}: another pod won a shared claim (explained)"
        res["detail"] = {"upstream": oc[fd[0]] if fd[0] < len(oc) else None,
                         "kspread": kc[fd[0]] if fd[0] < len(kc) else None}
    elif not res["placements"]:
        res["cls"] = "placements only"
    elif not res["final"]:
        res["cls"] = "final allocations" if res.get("allocations") is False else "final placements or evictions only"
        if res.get("reservedForOrder") and oal_equal(res) and ofinal == kfinal and oevicted == kevicted \
                and (s.get("workloads") or s.get("podGroups")):
            res["cls"] = "reservedFor order: gang bound together (explained)"
    elif res.get("allocationLog") is False:
        res["cls"] = "allocations"
        if (s.get("workloads") or s.get("podGroups")) and gang_write_order(s, res["upstreamAllocationLog"],
                                                                            res["kspreadAllocationLog"]):
            res["cls"] = "allocations: gang bound together (explained)"
    return res


def claim_race(s: dict, oc: list[dict], kc: list[dict], at: int) -> bool:
    """1.36: the runs agree up to cycle ``at``, and a pod group cycle there (or the one ``at`` is
    in) had pods share an unallocated claim, of which kspread's run had one lose at PreBind
    (``lost``), while the two runs retry different pods of that cycle afterwards: another pod's
    PreBind wrote the claim first. The quorum pod's Permit allows the gang's waiting pods in a
    Go map's order (gangscheduling.go, ``for podUID := range assumedPods``), and each binding
    cycle runs in its own goroutine (schedule_one_podgroup.go, ``go sched.runBindingCycle``):
    which PreBind writes first is a race; kspread's rule is the cycle's order (podgroupcycle)."""
    groups = {key(p): (p.get("namespace") or "default", p["schedulingGroup"].get("podGroupName"))
              for p in s["schedule"] if isinstance(p, dict) and p.get("schedulingGroup")}
    j = 0
    while j < min(at + 1, len(kc)):
        g = groups.get(kc[j]["pod"])
        end = j + 1
        while g is not None and end < len(kc) and groups.get(kc[end]["pod"]) == g \
                and kc[end]["pod"] not in {c["pod"] for c in kc[j:end]}:
            end += 1
        if g is not None and any(c.get("lost") for c in kc[j:end]):
            pods = {c["pod"] for c in kc[j:end] if c["picked"]}
            retried = [pods & {c["pod"] for c in cycles[end:]} for cycles in (oc, kc)]
            if retried[0] != retried[1]:
                return True
        j = end
    return False


def gang_write_order(s: dict, olog: list[str], klog: list[str]) -> bool:
    """The allocation logs differ only in the order the claims of one gang group's pods were
    written when the gang completed: its pods' PreBinds run in binding goroutines that upstream
    starts in a map's order, so that order is a race (issue 33). 1.36: the pods of one pod group
    (schedulingGroup) that one group cycle placed: their binding cycles run concurrently, a gang's
    waiting at Permit until the quorum pod allows them in a map's order."""
    if sorted(olog) != sorted(klog):
        return False
    groups = {key(p): (p.get("namespace") or "default", p["workloadRef"]["name"], p["workloadRef"]["podGroup"])
              for p in s["schedule"] if p.get("workloadRef")}
    groups.update({key(p): (p.get("namespace") or "default", p["schedulingGroup"]["podGroupName"])
                   for p in s["schedule"] if p.get("schedulingGroup")})

    def group(item: str) -> tuple | None:
        # a pod's claims: <pod>-<entry> (from a template), c-<pod>-<i> (devgen's claims of its own)
        claim = item.split("=", 1)[0]
        ns, _, name = claim.rpartition("/")

        def owns(pk: str) -> bool:
            pns, _, pod = pk.rpartition("/")
            return claim.startswith(pk + "-") or (pns == ns and name.startswith(f"c-{pod}-"))

        return next((g for pk, g in groups.items() if owns(pk)), None)

    def runs(log: list[str]) -> list[tuple]:
        out: list[tuple[tuple | None, list[str]]] = []
        for x in log:
            g = group(x)
            if g is not None and out and out[-1][0] == g:
                out[-1][1].append(x)
            else:
                out.append((g, [x]))
        return [(g, sorted(xs)) for g, xs in out]

    return runs(olog) == runs(klog)


def gang_both_refuse(s: dict, version: str, name: str, gates: dict[str, bool], res: dict) -> None:
    """--gangs --gang-deletes: the oracle failed; the class when kspread refuses the same
    sequence for the same reason: 1.35.4 crashes at a gang's Permit wait after a pod of
    the group was deleted while it waited (podGroupInfo.UnscheduledPods), or a deletePod
    names a pod something deleted before (both sides' error)."""
    with tempfile.TemporaryDirectory() as tmp:
        doc = write_case(Path(tmp), s, version, name, gates, {"placements": {key(s["schedule"][0]): None}}, None)
        try:
            run_kspread(doc, Path(tmp), None)
            return
        except Exception as e:
            kerr = str(e)
    oerr = res["error"]
    if "UnscheduledPods" in oerr and "1.35.4's scheduler crashes here" in kerr:
        res["cls"] = "gang crash after a waiting pod's deletion (both; explained)"
    elif "does not exist at that point" in oerr and "does not exist at that point" in kerr:
        res["cls"] = "deletePod of a pod deleted before (both refuse)"


def gang_tie(s: dict, o: dict, k: dict) -> bool:
    """The two runs nominate the same node and their victims differ only in pods of one
    gang group (workloadRef, namespace): pods its quorum bound together, whose order in the
    node's pod list -- which preemption reprieves first among pods tied on priority and
    start time -- is the order their binding goroutines finished in upstream."""
    if o["after"] != k["after"]:
        return False
    refs = {key(p): (p.get("namespace") or "default", json.dumps(p.get("workloadRef"), sort_keys=True))
            for p in s["schedule"] if p.get("workloadRef")}
    diff = set(o["victims"]) ^ set(k["victims"])
    groups = {refs.get(v) for v in diff}
    return bool(diff) and None not in groups and len(groups) == 1


def gang_replaced(s: dict, before: list[dict], o: dict, k: dict) -> bool:
    """The two runs retry first different pods of one gang group (workloadRef, namespace),
    both with a controller, that upstream last placed on the same node: replacements of
    pods its quorum bound together, evicted by one step. The driver's evictions go in the
    order the pods were bound (its binding reactor), and the binding goroutines of a
    gang's pods race (dev/README.md, "Gangs in sequences")."""
    pods = {key(p): p for p in s["schedule"] if isinstance(p, dict) and "name" in p}
    po, pk = pods.get(o["pod"]), pods.get(k["pod"])
    if po is None or pk is None or not (po.get("controller") and pk.get("controller")):
        return False
    if ((po.get("namespace"), json.dumps(po.get("workloadRef"), sort_keys=True))
            != (pk.get("namespace"), json.dumps(pk.get("workloadRef"), sort_keys=True))) or not po.get("workloadRef"):
        return False
    last = {c["pod"]: c["after"] for c in before}
    return last.get(o["pod"]) is not None and last.get(o["pod"]) == last.get(k["pod"])


# ---- devices (--devices) -------------------------------------------------------------------

def dev_observe(store: dict, sched: Any) -> None:
    """kspread's claims after a cycle: ``allocations`` (claim -> sorted devices, allocated
    ones), and in ``allocationLog`` the claims newly allocated since the last call."""
    now = {k: sorted(v) for k, v in sched.claims.allocations().items() if v}
    prev = store.get("allocations") or {}
    batch = sorted(f"{k}={','.join(v)}" for k, v in now.items() if prev.get(k) != v)
    if batch:
        store.setdefault("allocationLog", []).append(batch)
    store["allocations"] = now
    # each claim's reservedFor in order (pods by name, as the oracle's ``reservedFor`` gives them)
    store["reservedFor"] = {c.key: [f"podgroups/{k.removeprefix('PodGroup:')}" if k.startswith("PodGroup:")
                                    else f"pods/{k.rsplit('/', 1)[-1]}" for k in c.reserved_for]
                            for c in sched.claims if c.reserved_for}


def dev_compare(res: dict, o: dict, kdev: dict) -> None:
    """The allocations at the end (part of "final") and in order (``allocationLog``: the
    oracle's writes grouped by pod, each group sorted; kspread's batches)."""
    groups: list[list[str]] = []
    pod = None
    for e in o.get("allocationLog") or []:
        item = f"{e['claim']}={','.join(e['devices'] or [])}"
        if groups and e["pod"] == pod:
            groups[-1].append(item)
        else:
            groups.append([item])
            pod = e["pod"]
    olog = [x for g in groups for x in sorted(g)]
    klog = [x for g in kdev.get("allocationLog") or [] for x in g]
    oal, kal = o.get("allocations") or {}, kdev.get("allocations") or {}
    res.update(allocations=oal == kal, allocationLog=olog == klog, upstreamAllocations=oal, kspreadAllocations=kal,
               upstreamAllocationLog=olog, kspreadAllocationLog=klog, claimAllocs=len(olog))
    if oal != kal:
        res["final"] = False
    if "reservedFor" in o:  # (an oracle built before the output had none)
        ores, kres = o.get("reservedFor") or {}, kdev.get("reservedFor") or {}
        res.update(reservedFor=ores == kres, upstreamReservedFor=ores, kspreadReservedFor=kres,
                   # the same pods, in another order: the binding cycles that reserved them raced
                   reservedForOrder=ores != kres and {k: sorted(v) for k, v in ores.items()} ==
                   {k: sorted(v) for k, v in kres.items()})
        if ores != kres:
            res["final"] = False
            res["allocations"] = False


def oal_equal(res: dict) -> bool:
    """The final allocations agree (devices per claim)."""
    return res.get("upstreamAllocations") == res.get("kspreadAllocations")


def initial_allocations(s: dict) -> dict[str, list[str]]:
    """The claims the sequence's objects hold allocated (claim key -> sorted devices)."""
    out = {}
    for o in s.get("devices") or []:
        alloc = (o.get("status") or {}).get("allocation") if o["kind"] == "ResourceClaim" else None
        if alloc:
            ns = o["metadata"].get("namespace") or "default"
            k = o["metadata"]["name"] if ns == "default" else f"{ns}/{o['metadata']['name']}"
            out[k] = sorted(f"{x['driver']}/{x['pool']}/{x['device']}" for x in alloc["devices"]["results"])
    return out


def pool_order(s: dict) -> str:
    """FC_POOL_ORDER: the sequence's ResourceSlices in case order (kspread's pool order)."""
    return ",".join(o["metadata"]["name"] for o in s.get("devices") or [] if o["kind"] == "ResourceSlice")


VOLUME_REASONS = ("volume node affinity", "PersistentVolume's node affinity", "persistent volumes to bind",
                  "unbound immediate", "max volume count", "node(s) exceed max volume count", "no available volume zone",
                  "ReadWriteOncePod", "enough free storage", "disk conflict", "storageclass", "PersistentVolumeClaim")


def describe(cycles: list[dict] | None) -> str:
    """Cycles in one line: ``pod->node`` (bound), ``pod=>node-[victims]`` (nominated after
    preempting), ``pod:x`` (unschedulable); ``{k}`` after the node: k nodes searched
    (when more than one), ``~`` when the batch's hint node was taken."""
    out = []
    for c in cycles or []:
        n = len(c["searched"])
        found = f"{{{n}}}" if n > 1 else ""
        if c["picked"]:
            out.append(f"{c['pod']}->{c['picked']}{found}{'~' if c.get('hint') else ''}")
        elif c["victims"]:
            out.append(f"{c['pod']}=>{c['after']}-[{','.join(c['victims'])}]")
        elif c["after"]:
            out.append(f"{c['pod']}:x(nominated {c['after']})")
        else:
            out.append(f"{c['pod']}:x")
    return " ".join(out)


# ---- shrinking --------------------------------------------------------------------------------

def without_node(s: dict, name: str) -> dict:
    t = copy.deepcopy(s)
    t["nodes"] = [n for n in t["nodes"] if n["name"] != name]
    t["pods"] = [p for p in t["pods"] if p.get("node") != name]
    if t.get("steps"):
        t["steps"] = [st for st in t["steps"] if st.get("node") != name]
    return t


def steps_valid(s: dict) -> bool:
    """Every step names a node (and an untaint a taint) the cluster has at that point, and
    comes at most after the last incoming pod."""
    nodes = {n["name"]: {(t["key"]) for t in n.get("taints") or []} for n in s["nodes"]}
    gated = {key(p): [g["name"] for g in p.get("schedulingGates") or []] for p in s["schedule"]}
    index = {key(p): i for i, p in enumerate(s["schedule"])}
    bound = {key(p): p for p in s["pods"]}
    for st in s.get("steps") or []:
        if st["at"] > len(s["schedule"]):
            return False
        if st["kind"] == "wait":
            continue
        if st["kind"] in ("deletePod", "ungate"):
            k = st["pod"]
            if k in bound:  # a bound pod of the case: its node still there
                if st["kind"] == "ungate" or bound.pop(k)["node"] not in nodes:
                    return False
                continue
            if index.get(k, len(s["schedule"])) >= st["at"] or not gated.get(k):
                return False  # not created yet, or not gated (a pending pod might have been bound)
            if st["kind"] == "deletePod":
                del gated[k]
            elif st["gate"] in gated[k]:
                gated[k].remove(st["gate"])
            else:
                return False
            continue
        if st["kind"] == "addNode":
            if st["newNode"]["name"] in nodes:
                return False
            nodes[st["newNode"]["name"]] = set()
            continue
        if st["node"] not in nodes:
            return False
        if st["kind"] == "deleteNode":
            del nodes[st["node"]]
        elif st["kind"] == "taint":
            nodes[st["node"]].add(st["taint"]["key"])
        elif st["kind"] == "untaint":
            if st["key"] not in nodes[st["node"]]:
                return False
            nodes[st["node"]].discard(st["key"])
    return True


POD_ATTRS = ("volumes", "affinity", "topologySpreadConstraints", "tolerations", "nodeSelector", "labels", "preemptionPolicy")
NODE_ATTRS = ("taints", "unschedulable", "labels")


def shrink(s: dict, cls: str, check: Any, budget: int) -> tuple[dict, int]:
    """Drop incoming pods, bound pods, nodes (with their pods), PDBs, pods' constraints, nodes'
    taints and labels while
    ``check(candidate)`` still gives the class ``cls``; chunks first, then one at a time."""
    runs = 0

    def keeps(t: dict) -> bool:
        nonlocal runs
        if runs >= budget or not t["nodes"] or not t["schedule"] or not steps_valid(t):
            return False
        runs += 1
        return check(t) == cls

    changed = True
    while changed and runs < budget:
        changed = False
        for field in ("nodes", "schedule", "pods", "pdbs", "steps", "owners"):
            if field not in s:
                continue
            items = s[field]
            size = max(1, len(items) // 2)
            while size >= 1 and runs < budget:
                i = 0
                while i < len(s[field]) and runs < budget:
                    chunk = s[field][i:i + size]
                    if field == "nodes":
                        t = s
                        for n in chunk:
                            t = without_node(t, n["name"])
                    else:
                        t = copy.deepcopy(s)
                        t[field] = t[field][:i] + t[field][i + size:]
                        if field == "schedule":  # the steps after the dropped pods move up
                            for st in t.get("steps") or []:
                                st["at"] = st["at"] if st["at"] <= i else max(i, st["at"] - size)
                    if keeps(t):
                        s, changed = t, True
                    else:
                        i += size
                size //= 2
        for field, attrs in (("schedule", POD_ATTRS), ("pods", POD_ATTRS), ("nodes", NODE_ATTRS)):
            for i in range(len(s[field])):
                for attr in attrs:
                    if attr in s[field][i] and runs < budget:
                        t = copy.deepcopy(s)
                        del t[field][i][attr]
                        if keeps(t):
                            s, changed = t, True
    return s, runs


# ---- the run ---------------------------------------------------------------------------------

ARGS: argparse.Namespace


def _init(tree: str) -> None:
    sys.path.insert(0, tree)


def _one(job: tuple[int, dict]) -> dict:
    i, s = job
    a = ARGS
    name = f"seq-{a.seed}-{i}"
    r = compare(s, a.version, a.oracle, a.backoff, a.gates, name, Path(a.out) / "cases" if a.write_all else None)
    if a.recheck and r.get("cls") and "error" not in r:
        # the oracle runs the real scheduler's goroutines: a second run tells timing from rule
        again = compare(s, a.version, a.oracle, a.backoff, a.gates, name)
        r["stable"] = again.get("cls") == r["cls"] and again.get("upstream") == r.get("upstream")
    if a.devices and r.get("cls") and "error" not in r:
        # upstream takes a node's pools in a Go map's order: explained when the oracle agrees
        # with kspread's order (the case's) forced (zz_pool_order.go)
        ORACLE_ENV["FC_POOL_ORDER"] = pool_order(s)
        try:
            again = compare(s, a.version, a.oracle, a.backoff, a.gates, name)
        finally:
            ORACLE_ENV.clear()
        r["poolOrder"] = not again.get("cls") and bool(again.get("final"))
        r["poolOrderClass"] = again.get("cls")
    return r


def main() -> int:
    global ARGS, SETTLE_MILLIS, MAX_BACKOFF
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oracle", required=True, help="the fullcycle binary for --version")
    ap.add_argument("--version", required=True, help='"1.35" or "1.31" (the fullcycle builds)')
    ap.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent),
                    help="the kspread source tree to import (default: this one)")
    ap.add_argument("-n", type=int, default=100, help="number of random sequences")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--backoff", type=int, default=1, help="the oracle's pod backoff in seconds (0 or 1)")
    ap.add_argument("--gate", action="append", default=[], metavar="NAME=BOOL",
                    help="a feature gate for both kspread and the oracle")
    ap.add_argument("-j", "--jobs", type=int, default=1, choices=(1, 2), help="sequences run at once")
    ap.add_argument("--out", default="dev/seqtest-out", help="where reproducers (and --write-all cases) go")
    ap.add_argument("--write-all", action="store_true", help="write every sequence (case YAML, oracle JSON)")
    ap.add_argument("--examples", type=int, default=2, help="reproducers shrunk per class")
    ap.add_argument("--shrink-budget", type=int, default=120, help="oracle runs per reproducer")
    ap.add_argument("--recheck", action="store_true", help="run the oracle twice on differing sequences")
    ap.add_argument("--max-backoff", type=int, help="the oracle's maximum pod backoff in seconds (default: "
                    "10, upstream's podMaxBackoffSeconds, with --backoff 1; 0 with --backoff 0)")
    ap.add_argument("--settle", type=int, default=SETTLE_MILLIS,
                    help="the oracle's settleMillis (wait after each cycle; the wall clock backoff windows see)")
    ap.add_argument("--only", help="run only these sequences of the seed's -n (indices, comma-separated)")
    ap.add_argument("--json", help="write the results as JSON to this file")
    ap.add_argument("--storage", action="store_true",
                    help="storage in every sequence: PVs, claims, classes, CSINodes, CSIDrivers, "
                         "CSIStorageCapacities, StatefulSet-like replicas with claims (the oracle needs "
                         "dev/fullcycle/storage.go)")
    ap.add_argument("--gang-deletes", type=float, default=0.0, metavar="P",
                    help="with --gangs: that share of the gang sequences deletes a gang pod (often one waiting at "
                         "Permit), and seqtest's deleteNode steps stay deleteNode (not cordon)")
    ap.add_argument("--gang-volumes", type=float, default=0.0, metavar="P",
                    help="with --gangs and --storage: that share of the gang groups uses a volume (a bound claim of "
                         "their namespace, else an in-tree disk)")
    ap.add_argument("--gang-claims", type=float, default=0.0, metavar="P",
                    help="with --gangs and --storage: that share of the gang groups gives each pod a claim of its "
                         "own waiting for its first consumer (class wffc, local or hostpath)")
    ap.add_argument("--wap", action="store_true",
                    help="with --gangs at 1.36: WorkloadAwarePreemption on, the PodGroups with priorities "
                         "and disruption modes (seqgang.to_pod_groups)")
    ap.add_argument("--group-claims", type=float, default=0.0, metavar="P",
                    help="with --gangs and --devices at 1.36: that share of the PodGroups whose pods have the same "
                         "resourceClaims entries lists them in spec.resourceClaims (DRAWorkloadResourceClaims on; "
                         "seqgang.add_group_claims)")
    ap.add_argument("--group-priorities", action="store_true",
                    help="with --gangs at 1.36 and WorkloadAwarePreemption off: each pod group's pods get a "
                         "priority (0, 10, 100 or 1000), so their own DefaultPreemption preempts in the group's "
                         "cycle (seqgang.to_pod_groups)")
    ap.add_argument("--topology", type=float, default=0.0, metavar="P",
                    help="with --gangs at 1.36: TopologyAwareWorkloadScheduling on, and that share of the PodGroups "
                         "constrained to one zone (seqgang.add_topology)")
    ap.add_argument("--gangs", type=float, default=0.0, metavar="P",
                    help="the share of sequences that get gangs (dev/seqgang.py: Workloads, pods with workloadRef, "
                         "waits past the Permit timeout; gates GenericWorkload and GangScheduling on for every "
                         "sequence; 1.35; the oracle needs dev/fullcycle/gang.go)")
    ap.add_argument("--steps", type=float, default=0.0, metavar="P",
                    help="the share of sequences that get 1-4 steps between their pods (every step kind; with "
                         "owners and controllers, PDBs by minAvailable, gates, NoExecute tolerations; the oracle "
                         "needs dev/fullcycle/steps.go)")
    ap.add_argument("--resize", action="store_true",
                    help="half the bound pods with an in-place resize's status (difftest's shapes: "
                         "containerStatuses' resources and allocatedResources, PodResizePending / "
                         "PodResizeInProgress; the oracle needs dev/fullcycle/resize.patch); a controller's "
                         "replacement has none")
    ap.add_argument("--devices", action="store_true",
                    help="devices in every sequence (dev/devgen.py's shapes: slices, classes, claims, templates; "
                         "1.35: the oracle needs dev/fullcycle/dra.go); allocations compared, pool order explained")
    args = ap.parse_args()
    SETTLE_MILLIS, MAX_BACKOFF = args.settle, args.max_backoff
    args.gates = {}
    for g in args.gate:
        k, _, v = g.partition("=")
        args.gates[k] = v.lower() in ("true", "1")
    args.tree = str(Path(args.tree).resolve())
    args.out = str(Path(args.out) / f"{args.version}-b{args.backoff}")
    ARGS = args
    _init(args.tree)
    import kspread

    args.commit = tree_commit(args.tree)
    print(f"kspread from {Path(kspread.__file__).parent} ({args.commit}); oracle {args.oracle}; version {args.version}; "
          f"backoff {args.backoff}s; gates {args.gates or '-'}", file=sys.stderr)
    rng = random.Random(args.seed)
    gen = Gen(rng, int(args.version.split(".")[1]))
    seqs = [gen.sequence() for _ in range(args.n)]
    if args.storage:
        # a generator of its own: the sequences of a seed stay those of runs without storage
        storage_gen = Gen(random.Random(args.seed * 7919 + 27), gen.minor)
        for s in seqs:
            storage_gen.storage(s)
    if args.resize:
        if gen.minor < 35:
            ap.error("--resize: only the 1.35 and 1.36 drivers read a pod's status (resize.patch)")
        # a generator of its own: the sequences of a seed stay those of runs without it
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import difftest

        resize_gen = Gen(random.Random(args.seed * 7919 + 41), gen.minor)
        for s in seqs:
            for p in s["pods"]:
                if resize_gen.chance(0.5):
                    p["status"] = difftest.Gen.resize_status(resize_gen, p)  # type: ignore[arg-type]
    if args.gangs:
        # a generator of its own (before the steps, which then see the gang pods)
        import seqgang

        seqgang.DELETE_GANG_POD = args.gang_deletes
        seqgang.DELETE_NODES = args.gang_deletes > 0
        seqgang.VOLUMES = args.gang_volumes
        seqgang.CLAIMS = args.gang_claims
        gang_gen = Gen(random.Random(args.seed * 7919 + 32), gen.minor)
        gang_seqs = [s for s in seqs if gang_gen.chance(args.gangs)]
        for s in gang_seqs:
            seqgang.add(gang_gen, s)
            if gen.minor >= 36:  # 1.36: PodGroups and pods' schedulingGroup (seqgang.to_pod_groups)
                seqgang.to_pod_groups(s, gang_gen.r if args.wap else None,
                                      gang_gen.r if args.group_priorities and not args.wap else None)
        args.gates.update(seqgang.GATES)
        if args.wap:
            args.gates["WorkloadAwarePreemption"] = True
        if args.topology and gen.minor >= 36:
            # a generator of its own: the sequences of a seed stay those of runs without it
            topo = random.Random(args.seed * 7919 + 37)
            for s in gang_seqs:
                seqgang.add_topology(s, topo, args.topology)
            args.gates["TopologyAwareWorkloadScheduling"] = True
    if args.devices:
        # a generator of its own: the sequences of a seed stay those of runs without devices
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from devgen import SequenceDeviceGen

        dev_gen = SequenceDeviceGen(random.Random(args.seed * 7919 + 29), gen.minor)
        for s in seqs:
            dev_gen.sequence(s)
        if args.group_claims and args.gangs and gen.minor >= 36:
            # a generator of its own; DRAWorkloadResourceClaims on for both sides
            import seqgang

            claims_rng = random.Random(args.seed * 7919 + 37)
            n_groups = sum(seqgang.add_group_claims(s, claims_rng, args.group_claims) for s in seqs)
            args.gates["DRAWorkloadResourceClaims"] = True
            print(f"{n_groups} PodGroups with resourceClaims", file=sys.stderr)
    if args.steps:
        # a generator of its own: the sequences of a seed stay those of runs without steps
        step_gen = Gen(random.Random(args.seed * 7919 + 28), gen.minor)
        for s in seqs:
            if step_gen.chance(args.steps):
                s["steps"] = step_gen.steps(s)
    if args.gangs:
        for s in gang_seqs:
            seqgang.finish(gang_gen, s)
            seqgang.delete_waiting(s, args.version, args.gates)
    t0 = time.time()
    results: list[dict] = []
    jobs = list(enumerate(seqs))
    if args.only:
        keep = {int(x) for x in args.only.split(",")}
        jobs = [j for j in jobs if j[0] in keep]
        seqs = [s for i, s in enumerate(seqs) if i in keep]
    if args.jobs > 1:
        with Pool(args.jobs, initializer=_init, initargs=(args.tree,)) as pool:
            for r in pool.imap(_one, jobs):
                results.append(r)
                _progress(results, len(jobs), t0)
    else:
        for j in jobs:
            results.append(_one(j))
            _progress(results, len(jobs), t0)
    n = len(results)
    placements = sum(1 for r in results if r.get("placements"))
    cycles = sum(1 for r in results if r.get("cycles"))
    final = sum(1 for r in results if r.get("final"))
    classes = Counter(r["cls"] for r in results if r.get("cls"))
    unstable = Counter(r["cls"] for r in results if r.get("cls") and r.get("stable") is False)
    print(f"version {args.version}, backoff {args.backoff}s (max {oracle_input(seqs[0], args.backoff, {}, args.version)['maxBackoffSeconds']}s), "
          f"settle {args.settle} ms, seed {args.seed}, kspread {args.tree} ({args.commit}): "
          f"{n} sequences; "
          f"placements agree {placements}/{n}; final placements and evictions agree {final}/{n}; "
          f"every cycle agrees {cycles}/{n}; "
          f"{sum(r.get('preemptions', 0) for r in results)} preemptions, "
          f"{sum(r.get('hints', 0) for r in results)} cycles with a batch hint" +
          (f", {sum(r.get('claimBinds', 0) for r in results)} pods with claims bound, "
           f"{sum(r.get('volumeRejects', 0) for r in results)} cycles a volume plugin rejected nodes in"
           if args.storage else "") +
          (f", {sum(r.get('waits', 0) for r in results)} Permit waits, {sum(r.get('timeouts', 0) for r in results)} "
           f"pods rejected at the Permit timeout, {sum(r.get('preempted', 0) for r in results)} waiting pods "
           f"preempted, {sum(r.get('removed', 0) for r in results)} deleted (kspread's count), "
           f"{sum(r.get('groupPreempts', 0) for r in results)} pod group pods preempting in their group's cycle "
           f"({sum(r.get('groupPreemptsVolumes', 0) for r in results)} with volumes or claims), "
           f"{sum(r.get('claimConflicts', 0) for r in results)} group pods whose PreBind lost a shared claim, in "
           f"{sum(1 for s in seqs if s.get('workloads') or s.get('podGroups'))} gang sequences"
           if args.gangs else "") + f" ({time.time() - t0:.0f} s)")
    if args.devices:
        explained = Counter(r["cls"] for r in results if r.get("poolOrder"))
        print(f"  devices: {sum(r.get('claimAllocs', 0) for r in results)} claims allocated upstream; final allocations "
              f"agree {sum(1 for r in results if r.get('allocations'))}/{n}, in order "
              f"{sum(1 for r in results if r.get('allocationLog'))}/{n}; differences explained by the pool order: "
              f"{sum(explained.values())} ({dict(explained)})")
    for cls, k in classes.most_common():
        extra = f" ({unstable[cls]} changed on a second oracle run)" if unstable[cls] else ""
        print(f"  first divergence: {cls:32} {k}{extra}")
    out = Path(args.out)
    repros: list[dict] = []

    def save() -> None:
        if args.json:
            Path(args.json).write_text(json.dumps({
                "version": args.version, "backoff": args.backoff, "maxBackoff": args.max_backoff,
                "settle": args.settle, "seed": args.seed, "tree": args.tree,
                "commit": args.commit,
                "gates": args.gates, "sequences": n, "placementsAgree": placements, "finalAgree": final, "cyclesAgree": cycles,
                "classes": dict(classes), "unstable": dict(unstable), "reproducers": repros,
                "results": [{k: v for k, v in r.items() if not k.endswith("Cycles")} for r in results]},
                indent=1, default=str))

    save()  # the figures, before the reproducers are shrunk
    if args.examples:
        import yaml

        done: Counter = Counter()
        for r, s in zip(results, seqs):
            cls = r.get("cls")
            if not cls or "error" in cls or done[cls] >= args.examples:
                continue
            done[cls] += 1

            def check(t: dict, _name: str = r["name"]) -> str | None:
                return compare(t, args.version, args.oracle, args.backoff, args.gates, _name + "-shrink").get("cls")

            small, runs = shrink(s, cls, check, args.shrink_budget)
            final = compare(small, args.version, args.oracle, args.backoff, args.gates, r["name"] + "-min")
            slug = re.sub(r"[^A-Za-z0-9._-]", "", cls.replace(" ", "-"))  # a file name (a class may quote a path)
            stem = f"{slug}-{r['name']}"
            doc = write_case(out, small, args.version, stem, args.gates, {"placements": final.get("upstream")},
                             args.backoff)
            doc = {k: v for k, v in doc.items() if k != "expect"}
            ties = "upstream's heap" if int(args.version.split(".")[1]) >= 35 else "node order"
            doc["description"] = (f"seqtest: {cls} (oracle: backoff {args.backoff}s, one filter worker, ties in "
                                  f"{ties}), first at cycle {final.get('first')}.\n"
                                  f"upstream: {describe(final.get('upstreamCycles'))}\n"
                                  f"kspread:  {describe(final.get('kspreadCycles'))}\n"
                                  f"placements: upstream {final.get('upstream')}; kspread {final.get('kspread')}")
            doc["expect"] = {"placements": final.get("upstream")}
            fn = out / f"{stem}.yaml"
            fn.write_text(yaml.safe_dump(doc, sort_keys=False, width=120))
            repros.append({"class": cls, "file": str(fn), "shrinkRuns": runs, "stillDiffers": final.get("cls")})
            print(f"  reproducer {fn} ({len(small['nodes'])} nodes, {len(small['pods'])} bound, "
                  f"{len(small['schedule'])} incoming; {runs} oracle runs; now: {final.get('cls')})")
    save()
    return 0 if cycles == n else 1


def tree_commit(tree: str) -> str:
    """The tree's git HEAD, marked ``+dirty`` when its kspread/ has uncommitted changes."""
    try:
        head = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", tree, "status", "--porcelain", "--", "kspread"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+dirty" if dirty else "")


def _progress(results: list[dict], total: int, t0: float) -> None:
    if len(results) % 10 == 0 or len(results) == total:
        p = sum(1 for r in results if r.get("placements"))
        c = sum(1 for r in results if r.get("cycles"))
        f = sum(1 for r in results if r.get("final"))
        print(f"  {len(results)}/{total}: placements {p}, final {f}, cycles {c} ({time.time() - t0:.0f} s)",
              file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
