#!/usr/bin/env python3
"""Differential test: random clusters through kspread and through the real upstream plugins.

A maintainer's tool, not part of CI (the oracle is built from vendored upstream source; see
dev/README.md). Each random cluster becomes a kspread case (in memory) and a line of the
oracle's JSON input; the two results are compared on the feasible set, each node's filter
status (code, reason, plugin), each score plugin's raw, normalized and weighted scores, the
totals, and DefaultPreemption's dry run (candidates, nominated node, victims).

    python3 dev/difftest.py --oracle /path/oracle-1.35 --version 1.35 -n 10000 --seed 1

Differences are counted per plugin and kind; the first few examples of each kind are
written as case files (kspread format, with the oracle's answer in ``expect``) under
``--out``. Known, documented differences (README "Checked against upstream") are counted
as explained, by the rules in ``EXPLAINED``.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import random
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kspread.engine.devices import extended_claim_name
from kspread.engine.framework.profile import default_plugins
from kspread.engine.plugins.dynamicresources import SPECIAL_CLAIM_NAME
from kspread.engine.scheduler import run_case
from kspread.engine.versions import make_version
from kspread.errors import CaseError
from kspread.format.case import build_case

sys.path.insert(0, str(Path(__file__).resolve().parent))
import devgen

FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
           "PodTopologySpread", "InterPodAffinity"]
# with --storage (checked at 1.28, 1.31, 1.33-1.35): the volume plugins, where the default profile has them
VOLUME_FILTERS = ["VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"]
STORAGE = False  # set by --storage
# with --resize: bound pods carry an in-place resize's status (containerStatuses' resources
# and allocatedResources, the PodResizePending / PodResizeInProgress conditions)
RESIZE = False  # set by --resize
# with --ndf (1.35): NodeDeclaredFeatures on, nodes' declaredFeatures, incoming pods with a
# RestartAllContainers restart rule
NDF = False  # set by --ndf
NDF_FEATURES = ["RestartAllContainersOnContainerExits", "GuaranteedQoSPodCPUResize"]
DEVICES = False  # set by --devices: device objects and DynamicResources (devgen.py)
CSI = "ebs.csi.aws.com"
SCORES = ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
          "NodeResourcesBalancedAllocation", "ImageLocality"]

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APPS = ["web", "db", "cache"]
NAMESPACES = ["default", "ns1", "ns2"]
IMAGES = ["nginx:1.25", "redis", "docker.io/library/postgres:16", "gcr.io/x/app:v1"]
# Numeric taint values for the Lt / Gt toleration operators ("01" and "x" are no decimal
# integer in canonical form: no Lt / Gt toleration matches them).
LEVELS = ["0", "1", "3", "5", "10", "01", "x"]


def feature_gates(minor: int) -> dict[str, bool]:
    """The gates every case of a version runs with (in kspread's case and in the oracle):
    TaintTolerationComparisonOperators (alpha, off by default in 1.35) so that the
    tolerations use Lt / Gt; PodLevelResources (alpha, off by default in 1.32-1.33) so
    that pods carry spec.resources there too."""
    return {**_feature_gates(minor), **(devgen.feature_gates(minor) if DEVICES else {})}


def _feature_gates(minor: int) -> dict[str, bool]:
    if minor >= 35:
        gates = {"TaintTolerationComparisonOperators": True}
        if NDF:
            gates["NodeDeclaredFeatures"] = True
        if STORAGE:  # VolumeBinding scores (the shape comes with the case's pluginConfig)
            gates["StorageCapacityScoring"] = True
        return gates
    if minor in (32, 33):
        return {"PodLevelResources": True}
    if STORAGE and minor < 27:  # VolumeRestrictions' PreFilter check of ReadWriteOncePod claims (alpha)
        return {"ReadWriteOncePod": True}
    return {}


# ---- the random cluster ------------------------------------------------------------------

class Gen:
    def __init__(self, rng: random.Random, version: int) -> None:
        self.r = rng
        self.minor = version
        gates = feature_gates(version)
        self.comparison = gates.get("TaintTolerationComparisonOperators", False)
        self.pod_level = version >= 34 or gates.get("PodLevelResources", False)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def selector(self, allow_empty: bool = False) -> dict:
        r = self.r
        if allow_empty and self.chance(0.05):
            return {}
        if self.chance(0.7):
            return {"matchLabels": {"app": r.choice(APPS)}}
        op = r.choice(["In", "NotIn", "Exists", "DoesNotExist"])
        e: dict[str, Any] = {"key": r.choice(["app", "tier"]), "operator": op}
        if op in ("In", "NotIn"):
            e["values"] = r.sample(APPS + ["front", "back"], r.randint(1, 2))
        return {"matchExpressions": [e]}

    def node_selector_term(self) -> dict:
        r = self.r
        if self.chance(0.1):
            # a node by name (matchFields; NodeAffinity's PreFilter: the names of required
            # terms, "pod affinity terms conflict" when they name none)
            t = {"matchFields": [{"key": "metadata.name", "operator": r.choice(["In", "In", "NotIn"]),
                                  "values": [f"n{r.randint(1, 7)}"]}]}
            if self.chance(0.3):
                t["matchFields"].append({"key": "metadata.name", "operator": "In", "values": [f"n{r.randint(1, 7)}"]})
            return t
        key = r.choice(["disk", "tier", ZONE, "gpu"])
        op = r.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"] if key == "gpu" else
                      ["In", "NotIn", "Exists", "DoesNotExist"])
        e: dict[str, Any] = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            e["values"] = r.sample({"disk": ["ssd", "hdd"], "tier": ["a", "b", "c"], ZONE: ["za", "zb", "zc"], "gpu": ["0", "1", "2"]}[key],
                                   r.randint(1, 2))
        elif op in ("Gt", "Lt"):
            e["values"] = [str(r.randint(0, 4))]
        return {"matchExpressions": [e]}

    def affinity_term(self) -> dict:
        r = self.r
        t: dict[str, Any] = {"labelSelector": self.selector(), "topologyKey": r.choice([ZONE, HOST, ZONE])}
        x = r.random()
        if x < 0.15:
            t["namespaces"] = r.sample(NAMESPACES, r.randint(1, 2))
        elif x < 0.3:
            t["namespaceSelector"] = r.choice([{}, {"matchLabels": {"team": r.choice(["a", "b"])}}])
        if self.minor >= 29 and self.chance(0.1) and "tier" not in json.dumps(t["labelSelector"]):
            t["matchLabelKeys"] = ["tier"]
        return t

    def affinity(self, incoming: bool) -> dict | None:
        r = self.r
        a: dict[str, Any] = {}
        if incoming and self.chance(0.3):
            na: dict[str, Any] = {}
            if self.chance(0.5):
                na["requiredDuringSchedulingIgnoredDuringExecution"] = {
                    "nodeSelectorTerms": [self.node_selector_term() for _ in range(r.randint(1, 2))]}
            if self.chance(0.6):
                na["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": r.randint(1, 100), "preference": self.node_selector_term()}
                    for _ in range(r.randint(1, 2))]
            if na:
                a["nodeAffinity"] = na
        for kind in ("podAffinity", "podAntiAffinity"):
            if self.chance(0.25 if incoming else 0.12):
                pa: dict[str, Any] = {}
                if self.chance(0.5):
                    pa["requiredDuringSchedulingIgnoredDuringExecution"] = [self.affinity_term()]
                if self.chance(0.6):
                    pa["preferredDuringSchedulingIgnoredDuringExecution"] = [
                        {"weight": r.randint(1, 100), "podAffinityTerm": self.affinity_term()}
                        for _ in range(r.randint(1, 2))]
                if pa:
                    a[kind] = pa
        return a or None

    def spread(self) -> list[dict]:
        r = self.r
        out = []
        for _ in range(r.randint(1, 2)):
            c: dict[str, Any] = {"maxSkew": r.randint(1, 3), "topologyKey": r.choice([ZONE, HOST]),
                                 "whenUnsatisfiable": r.choice(["DoNotSchedule", "ScheduleAnyway"]),
                                 "labelSelector": self.selector()}
            if c["whenUnsatisfiable"] == "DoNotSchedule" and self.minor >= 25 and self.chance(0.2):
                c["minDomains"] = r.randint(1, 4)
            if self.minor >= 27 and self.chance(0.15) and "tier" not in json.dumps(c["labelSelector"]):
                c["matchLabelKeys"] = ["tier"]
            if self.minor >= 26 and self.chance(0.15):
                c["nodeAffinityPolicy"] = r.choice(["Honor", "Ignore"])
            if self.minor >= 26 and self.chance(0.15):
                c["nodeTaintsPolicy"] = r.choice(["Honor", "Ignore"])
            if any(x["topologyKey"] == c["topologyKey"] and x["whenUnsatisfiable"] == c["whenUnsatisfiable"]
                   for x in out):
                continue
            out.append(c)
        return out

    def tolerations(self) -> list[dict]:
        r = self.r
        out = []
        for _ in range(r.randint(0, 2)):
            t: dict[str, Any] = {"key": r.choice(["dedicated", "gpu", "spot"])}
            if self.chance(0.5):
                t["operator"] = "Equal"
                t["value"] = r.choice(["x", "y"])
            else:
                t["operator"] = "Exists"
            if self.chance(0.6):
                t["effect"] = r.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])
            out.append(t)
        if self.comparison and self.chance(0.4):
            for _ in range(r.randint(1, 2)):
                t = {"key": "level", "operator": r.choice(["Lt", "Gt"]), "value": str(r.randint(-1, 11))}
                if self.chance(0.6):
                    t["effect"] = r.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])
                out.append(t)
        return out

    def pod_resources(self, p: dict) -> dict | None:
        """spec.resources: pod-level requests of cpu and / or memory, each at least the
        sum of every container's and init container's request (so at least the aggregate
        the API server requires); none with the containers' own when they request none."""
        r = self.r
        if not self.pod_level or not self.chance(0.2):
            return None
        req = {}
        for res, unit, extra in (("cpu", "m", [0, 0, 100, 500, 1500]), ("memory", "Mi", [0, 0, 64, 512, 2048])):
            if not self.chance(0.7):
                continue
            total = 0
            for q in [p.get("requests") or {}] + [ic["resources"]["requests"] for ic in p.get("initContainers") or []]:
                if res in q:
                    total += int(q[res].removesuffix(unit))
            amount = total + r.choice(extra)
            if amount == 0:
                amount = 100 if res == "cpu" else 128
            req[res] = f"{amount}{unit}"
        return {"requests": req} if req else None

    def ports(self) -> list[dict]:
        r = self.r
        if not self.chance(0.2):
            return []
        p: dict[str, Any] = {"containerPort": 8080, "hostPort": r.choice([80, 443, 8080])}
        if self.chance(0.3):
            p["protocol"] = "UDP"
        if self.chance(0.3):
            p["hostIP"] = r.choice(["0.0.0.0", "10.0.0.1", "10.0.0.2"])
        return [p]

    def requests(self) -> dict:
        r = self.r
        req = {}
        if self.chance(0.05):
            req["example.com/gpu"] = str(r.randint(1, 2))
        if self.chance(0.8):
            req["cpu"] = f"{r.choice([100, 250, 500, 1000, 1500])}m"
        if self.chance(0.7):
            req["memory"] = f"{r.choice([128, 256, 512, 1024, 2048])}Mi"
        return req

    def pod(self, name: str, node: str | None, owners: list[dict], incoming: bool) -> dict:
        r = self.r
        p: dict[str, Any] = {"name": name, "namespace": r.choice(NAMESPACES) if self.chance(0.3) else "default"}
        if node:
            p["node"] = node
        labels = {}
        if self.chance(0.85):
            labels["app"] = r.choice(APPS)
        if self.chance(0.4):
            labels["tier"] = r.choice(["front", "back"])
        p["labels"] = labels
        p["priority"] = r.choice([0, 0, 10, 100, 1000]) if not incoming else r.choice([0, 100, 1000, 2000])
        if incoming and self.chance(0.1):
            p["preemptionPolicy"] = "Never"
        p["requests"] = self.requests()
        if self.chance(0.05):
            p["overhead"] = {"cpu": r.choice(["100m", "250m"]), "memory": "64Mi"}
        if node and self.chance(0.05):
            p["terminating"] = True
        if self.chance(0.15):
            p["initContainers"] = []
            for i in range(r.randint(1, 2)):
                ic: dict[str, Any] = {"name": f"init{i}", "image": "pause", "resources": {"requests": self.requests()}}
                if self.minor >= 29 and self.chance(0.4):
                    ic["restartPolicy"] = "Always"  # a sidecar
                p["initContainers"].append(ic)
        level = self.pod_resources(p)
        if level:
            p["resources"] = level
        if self.chance(0.5):
            p["image"] = r.choice(IMAGES)
        ports = self.ports()
        if ports:
            p["ports"] = ports
        if incoming and self.chance(0.2):
            p["nodeSelector"] = {"disk": r.choice(["ssd", "hdd"])}
        aff = self.affinity(incoming)
        if aff:
            p["affinity"] = aff
        tol = self.tolerations() if (incoming or self.chance(0.2)) else []
        if incoming and self.chance(0.1):  # NodeUnschedulable's taint
            tol.append({"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                        **({"effect": "NoSchedule"} if self.chance(0.7) else {})})
        if self.chance(0.02):  # an empty key with Exists tolerates every taint
            tol.append({"operator": "Exists"})
        if tol:
            p["tolerations"] = tol
        if self.chance(0.35 if incoming else 0.1):
            p["topologySpreadConstraints"] = self.spread()
        mine = [o for o in owners if o["kind"] in ("ReplicaSet", "StatefulSet", "ReplicationController")
                and o["namespace"] == p["namespace"]]
        if mine and self.chance(0.5):
            o = r.choice(mine)
            p["controller"] = {"kind": o["kind"], "name": o["name"]}
        if RESIZE and node and self.chance(0.5):
            p["status"] = self.resize_status(p)
        return p

    def resize_status(self, p: dict) -> dict:
        """A bound pod's status as an in-place resize leaves it (--resize): for its container
        "c" and its init containers, each maybe, actual requests (resources.requests;
        sometimes resources without requests) and allocatedResources; and maybe a
        PodResizePending (Deferred / Infeasible) or PodResizeInProgress condition."""
        r = self.r

        def amounts() -> dict:
            out = {}
            if self.chance(0.8):
                out["cpu"] = f"{r.choice([100, 250, 500, 1000, 2000])}m"
            if self.chance(0.6):
                out["memory"] = f"{r.choice([128, 256, 512, 1024, 2048])}Mi"
            return out

        def one(name: str) -> dict:
            cs: dict[str, Any] = {"name": name}
            if self.chance(0.85):
                cs["resources"] = {"requests": amounts()} if self.chance(0.85) else {}
            if self.chance(0.75):
                cs["allocatedResources"] = amounts()
            return cs

        st: dict[str, Any] = {}
        kind = r.choice(["", "Deferred", "Infeasible", "InProgress"])
        if kind == "InProgress":
            st["conditions"] = [{"type": "PodResizeInProgress", "status": "True"}]
        elif kind:
            st["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": kind}]
        if self.chance(0.9):
            st["containerStatuses"] = [one("c")]
        inits = [one(ic["name"]) for ic in p.get("initContainers") or [] if self.chance(0.6)]
        if inits:
            st["initContainerStatuses"] = inits
        return st

    def plugin_config(self) -> dict:
        """Non-default plugin arguments (v1 form), for 1.32 and later (the oracle decodes
        them as a KubeSchedulerConfiguration file): NodeResourcesFit's scoring strategy and
        ignored resources, BalancedAllocation's resources, InterPodAffinity's hard weight
        and ignorePreferredTermsOfExistingPods, PodTopologySpread's default constraints,
        NodeAffinity's addedAffinity."""
        r = self.r
        out: dict[str, Any] = {}
        names = ["cpu", "memory", "example.com/gpu"]
        for plugin in r.sample(["NodeResourcesFit", "NodeResourcesBalancedAllocation", "InterPodAffinity",
                                "PodTopologySpread", "NodeAffinity"], r.randint(1, 2)):
            if plugin == "NodeResourcesFit":
                a: dict[str, Any] = {}
                if self.chance(0.8):
                    st: dict[str, Any] = {"type": r.choice(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])}
                    if self.chance(0.85):
                        st["resources"] = [{"name": n, "weight": r.randint(1, 5)}
                                           for n in r.sample(names, r.randint(1, 3))]
                    if st["type"] == "RequestedToCapacityRatio":
                        st["requestedToCapacityRatio"] = {"shape": r.choice([
                            [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
                            [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
                            [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 7}, {"utilization": 100, "score": 3}],
                            [{"utilization": 30, "score": 2}, {"utilization": 80, "score": 9}]])}
                    a["scoringStrategy"] = st
                if self.chance(0.2):
                    a["ignoredResources"] = ["example.com/gpu"]
                elif self.chance(0.1):
                    a["ignoredResourceGroups"] = ["example.com"]
                out[plugin] = a
            elif plugin == "NodeResourcesBalancedAllocation":
                out[plugin] = {"resources": [{"name": n, "weight": 1} for n in r.sample(names, r.randint(1, 3))]}
            elif plugin == "InterPodAffinity":
                out[plugin] = {"hardPodAffinityWeight": r.choice([0, 1, 50, 100]),
                               "ignorePreferredTermsOfExistingPods": self.chance(0.5)}
            elif plugin == "PodTopologySpread":
                if self.chance(0.2):
                    out[plugin] = {"defaultingType": "System"}
                else:
                    cons = [{"maxSkew": r.randint(1, 3), "topologyKey": key,
                             "whenUnsatisfiable": r.choice(["DoNotSchedule", "ScheduleAnyway"])}
                            for key in r.sample([ZONE, HOST], r.randint(0, 2))]
                    out[plugin] = {"defaultingType": "List", "defaultConstraints": cons}
            else:
                added: dict[str, Any] = {}
                if self.chance(0.6):
                    added["requiredDuringSchedulingIgnoredDuringExecution"] = {
                        "nodeSelectorTerms": [self.node_selector_term() for _ in range(r.randint(1, 2))]}
                if not added or self.chance(0.5):
                    added["preferredDuringSchedulingIgnoredDuringExecution"] = [
                        {"weight": r.randint(1, 100), "preference": self.node_selector_term()}]
                out[plugin] = {"addedAffinity": added}
        return out

    def cluster(self) -> dict:
        r = self.r
        n_nodes = r.randint(2, 6) if self.chance(0.9) else r.randint(7, 12)
        zones_used = r.sample(["za", "zb", "zc"], r.randint(1, 3))
        nodes, zones = [], defaultdict(list)
        for i in range(n_nodes):
            name = f"n{i + 1}"
            n: dict[str, Any] = {"name": name, "labels": {}}
            if self.chance(0.9):
                zones[r.choice(zones_used)].append(name)
            if self.chance(0.5):
                n["labels"]["disk"] = r.choice(["ssd", "hdd"])
            if self.chance(0.3):
                n["labels"]["tier"] = r.choice(["a", "b", "c"])
            if self.chance(0.3):
                n["labels"]["gpu"] = str(r.randint(0, 4))
            if self.chance(0.8):
                n["allocatable"] = {"cpu": r.choice(["1", "2", "4", "3500m"]), "memory": r.choice(["2Gi", "4Gi", "8Gi"]),
                                    "pods": str(r.randint(1, 8))}
                if self.chance(0.2):
                    n["allocatable"]["example.com/gpu"] = str(r.randint(0, 2))
            if self.chance(0.25):
                n["taints"] = [{"key": r.choice(["dedicated", "gpu", "spot"]), "value": r.choice(["x", "y"]),
                                "effect": r.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])}]
            if self.comparison and self.chance(0.3):
                n.setdefault("taints", []).append({"key": "level", "value": r.choice(LEVELS),
                                                   "effect": r.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])})
            if self.chance(0.08):
                n["unschedulable"] = True
            if self.chance(0.4):
                n["images"] = [{"names": [im], "sizeBytes": r.choice([5, 50, 300, 900, 1200]) * 1024 * 1024}
                               for im in r.sample(IMAGES, r.randint(1, 2))]
            if NDF and self.chance(0.6):
                n["declaredFeatures"] = sorted(r.sample(NDF_FEATURES, r.randint(1, 2)))
            nodes.append(n)
        owners = []
        for i in range(r.randint(0, 3)):
            kind = r.choice(["Service", "ReplicaSet", "StatefulSet", "ReplicationController"])
            ns = "default" if self.chance(0.7) else r.choice(NAMESPACES)
            app = r.choice(APPS)
            sel: Any = {"app": app} if kind in ("Service", "ReplicationController") else {"matchLabels": {"app": app}}
            owners.append({"kind": kind, "name": f"o{i}", "namespace": ns, "selector": sel})
        tight = self.chance(0.25)  # full nodes: preemption
        pods = [self.pod(f"p{i}", r.choice(nodes)["name"], owners, False)
                for i in range(r.randint(6, 14) if tight else r.randint(0, 10))]
        pod = self.pod("new", None, owners, True)
        if NDF and self.chance(0.5):
            pod["restartAll"] = True
        if tight:
            pod["priority"] = r.choice([100, 1000, 2000])
            for n in nodes:
                n.setdefault("allocatable", {"cpu": "2", "memory": "4Gi", "pods": "110"})
                n["allocatable"]["pods"] = str(r.randint(2, 4))
        c: dict[str, Any] = {"zones": {z: v for z, v in zones.items()}, "nodes": nodes, "pods": pods, "pod": pod,
                             "owners": owners,
                             "namespaces": [{"name": "ns1", "labels": {"team": "a"}},
                                            {"name": "ns2", "labels": {"team": "b"}},
                                            {"name": "default", "labels": {"team": "a"} if self.chance(0.3) else {}}]}
        pdbs = []
        for i in range(r.randint(0, 2)):
            pdbs.append({"name": f"pdb{i}", "namespace": "default" if self.chance(0.7) else r.choice(NAMESPACES),
                         "selector": {"matchLabels": {"app": r.choice(APPS)}}, "disruptionsAllowed": r.randint(0, 1)})
        c["pdbs"] = pdbs
        if self.minor >= 32 and self.chance(0.3):
            c["pluginConfig"] = self.plugin_config()
        if STORAGE:
            self.storage(c)
        if DEVICES:
            devgen.DeviceGen(r, self.minor).objects(c)
        return c

    def storage(self, c: dict) -> None:
        """Storage objects and volumes (--storage): a CSI driver (storage capacity or not),
        CSINodes with attach limits, classes (WaitForFirstConsumer with or without
        allowedTopologies, Immediate, static local), CSIStorageCapacities per zone, local
        PVs of distinct sizes, zonal bound PVs, claims bound and not, ReadWriteOncePod
        claims, in-tree disks; the pods of namespace default use them. VolumeBinding
        scores through a random shape (StorageCapacityScoring on)."""
        r = self.r
        nodes = [n["name"] for n in c["nodes"]]
        zones = sorted(c["zones"])
        objs: list[dict] = []

        def obj(kind: str, api: str, meta: dict, **rest: Any) -> dict:
            o = {"apiVersion": api, "kind": kind, "metadata": meta, **rest}
            objs.append(o)
            return o

        obj("CSIDriver", "storage.k8s.io/v1", {"name": CSI}, spec={"storageCapacity": self.chance(0.6)})
        for node in c["nodes"]:
            n = node["name"]
            if self.minor <= 30 and "allocatable" in node and self.chance(0.3):
                # the per-cloud limit plugins' node limits (EBSLimits, GCEPDLimits to 1.30)
                for key in r.sample(["attachable-volumes-aws-ebs", "attachable-volumes-gce-pd"], r.randint(1, 2)):
                    node["allocatable"][key] = str(r.randint(0, 2))
            if self.chance(0.8):
                d: dict[str, Any] = {"name": CSI, "nodeID": f"i-{n}", "topologyKeys": [ZONE]}
                if self.chance(0.7):
                    d["allocatable"] = {"count": r.randint(1, 3)}
                meta: dict[str, Any] = {"name": n}
                if self.chance(0.3):
                    migrated = ["kubernetes.io/gce-pd"]
                    if self.minor < 27 and self.chance(0.5):  # EBS needs the annotation to 1.26
                        migrated.append("kubernetes.io/aws-ebs")
                    meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": ",".join(migrated)}
                obj("CSINode", "storage.k8s.io/v1", meta, spec={"drivers": [d]})
        wffc: dict[str, Any] = {"provisioner": CSI, "volumeBindingMode": "WaitForFirstConsumer"}
        if zones and self.chance(0.4):
            wffc["allowedTopologies"] = [{"matchLabelExpressions": [
                {"key": ZONE, "values": r.sample(zones, r.randint(1, len(zones)))}]}]
        obj("StorageClass", "storage.k8s.io/v1", {"name": "wffc"}, **wffc)
        obj("StorageClass", "storage.k8s.io/v1", {"name": "imm"}, provisioner=CSI, volumeBindingMode="Immediate")
        obj("StorageClass", "storage.k8s.io/v1", {"name": "local"}, provisioner="kubernetes.io/no-provisioner",
            volumeBindingMode="WaitForFirstConsumer")
        for z in zones:
            if self.chance(0.8):
                cap: dict[str, Any] = {"storageClassName": "wffc", "capacity": f"{r.choice([5, 20, 50, 100])}Gi",
                                       "nodeTopology": {"matchLabels": {ZONE: z}}}
                if self.chance(0.3):
                    cap["maximumVolumeSize"] = f"{r.choice([10, 30])}Gi"
                api = "storage.k8s.io/v1" if self.minor >= 24 else "storage.k8s.io/v1beta1"
                obj("CSIStorageCapacity", api, {"name": f"cap-{z}", "namespace": "kube-system"}, **cap)
        sizes = r.sample(range(1, 80), 12)  # distinct: upstream's choice among equal sizes is its cache's order
        for n in r.sample(nodes, min(len(nodes), r.randint(0, 4))):
            for k in range(r.randint(1, 2)):
                size = sizes.pop()
                obj("PersistentVolume", "v1", {"name": f"local-{n}-{k}"}, spec={
                    "capacity": {"storage": f"{size}Gi"}, "storageClassName": "local",
                    "accessModes": r.choice([["ReadWriteOnce"], ["ReadWriteOnce", "ReadOnlyMany"], ["ReadOnlyMany"]]),
                    "local": {"path": "/d"},
                    "nodeAffinity": {"required": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": HOST, "operator": "In", "values": [n]}]}]}}},
                    status={"phase": "Available"})  # kspread's default for a PV without status; upstream's is ""
        claims: list[str] = []

        def claim(name: str, spec: dict, bound: str | None = None, **meta: Any) -> None:
            m = {"name": name, "namespace": "default", **meta}
            if bound:
                m.setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
                spec = {**spec, "volumeName": bound}
            obj("PersistentVolumeClaim", "v1", m, spec=spec)
            claims.append(name)

        for i in range(r.randint(0, 3)):  # zonal volumes bound to claims
            zs = r.sample(zones, r.randint(1, len(zones))) if zones else []
            labels = {ZONE: "__".join(zs)} if zs and self.chance(0.8) else {}
            pv_spec: dict[str, Any] = {"capacity": {"storage": "10Gi"}, "storageClassName": "wffc",
                                       "accessModes": ["ReadWriteOnce"],
                                       "claimRef": {"namespace": "default", "name": f"bc{i}"},
                                       "csi": {"driver": CSI, "volumeHandle": f"vol-{i}"}}
            if zs and self.chance(0.5):
                pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": zs}]}]}}
            obj("PersistentVolume", "v1", {"name": f"pv-bc{i}", "labels": labels}, spec=pv_spec,
                status={"phase": "Bound"})
            modes = ["ReadWriteOncePod"] if self.chance(0.3) else ["ReadWriteOnce"]
            claim(f"bc{i}", {"storageClassName": "wffc", "accessModes": modes,
                             "resources": {"requests": {"storage": "10Gi"}}}, bound=f"pv-bc{i}")
        for i in range(r.randint(0, 2)):
            claim(f"w{i}", {"storageClassName": "wffc", "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": f"{r.choice([1, 8, 25, 60])}Gi"}}})
        for i in range(r.randint(0, 2)):
            claim(f"l{i}", {"storageClassName": "local", "accessModes": r.choice([["ReadWriteOnce"], ["ReadOnlyMany"]]),
                            "resources": {"requests": {"storage": f"{r.randint(1, 60)}Gi"}}})
        if self.chance(0.1):
            claim("imm0", {"storageClassName": "imm", "accessModes": ["ReadWriteOnce"],
                           "resources": {"requests": {"storage": "1Gi"}}})

        def volumes(pod: dict, incoming: bool) -> None:
            if pod.get("namespace", "default") != "default":
                return
            vols = []
            for j in range(r.randint(0, 2)):
                kind = r.random()
                if kind < 0.5 and claims:
                    vols.append({"name": f"v{j}", "persistentVolumeClaim": {"claimName": r.choice(claims)}})
                elif kind < 0.7:
                    vols.append({"name": f"v{j}", "gcePersistentDisk": {"pdName": r.choice(["d1", "d2"]),
                                                                         "readOnly": self.chance(0.5)}})
                elif kind < 0.85:
                    vols.append({"name": f"v{j}", "awsElasticBlockStore": {"volumeID": r.choice(["vol-a", "vol-b"])}})
                elif incoming:
                    name = f"{pod['name']}-v{j}"
                    spec = {"storageClassName": "wffc", "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "2Gi"}}}
                    vols.append({"name": f"v{j}", "ephemeral": {"volumeClaimTemplate": {"spec": spec}}})
                    obj("PersistentVolumeClaim", "v1", {
                        "name": name, "namespace": "default", "ownerReferences": [
                            {"apiVersion": "v1", "kind": "Pod", "name": pod["name"], "uid": f"default/{pod['name']}",
                             "controller": True}]}, spec=spec)
            names = set()
            vols = [v for v in vols if not (v["name"] in names or names.add(v["name"]))]
            if vols:
                pod["volumes"] = vols

        for p in c["pods"]:
            if self.chance(0.5):
                volumes(p, False)
        if self.chance(0.8):
            volumes(c["pod"], True)
        c["storage"] = objs
        if self.minor < 35:
            return  # VolumeBinding scores nothing without its gate (the legacy oracles take default args)
        shape = sorted(r.sample(range(0, 101), 2))
        c.setdefault("pluginConfig", {})["VolumeBinding"] = {
            "bindTimeoutSeconds": 600,
            "shape": [{"utilization": shape[0], "score": r.randint(0, 10)},
                      {"utilization": shape[1], "score": r.randint(0, 10)}]}


# ---- conversions -----------------------------------------------------------------------------

def merge_match_label_keys(pod: dict) -> None:
    """What the API server does at pod creation (MatchLabelKeysInPodAffinity, on from 1.31):
    each pod affinity term's matchLabelKeys / mismatchLabelKeys become ``key In (value)`` /
    ``key NotIn (value)`` requirements of its labelSelector, with the pod's own label values.
    The scheduler itself never reads those fields, so the oracle's pods must carry the merge."""
    labels = pod.get("labels") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = (pod.get("affinity") or {}).get(kind) or {}
        terms = list(pa.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [w["podAffinityTerm"] for w in pa.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
        for t in terms:
            if t.get("labelSelector") is None:
                continue
            extra = [{"key": k, "operator": "In", "values": [labels[k]]} for k in t.get("matchLabelKeys") or []
                     if k in labels]
            extra += [{"key": k, "operator": "NotIn", "values": [labels[k]]} for k in t.get("mismatchLabelKeys") or []
                      if k in labels]
            if extra:
                t["labelSelector"]["matchExpressions"] = list(t["labelSelector"].get("matchExpressions") or []) + extra


def score_plugins(minor: int) -> list[str]:
    """SelectorSpread (not in the default profile from 1.23, still registered to 1.28) too;
    VolumeBinding with --storage."""
    return SCORES + (["SelectorSpread"] if minor <= 28 else []) + (["VolumeBinding"] if STORAGE and minor >= 35
                                                                     else []) + (
        ["DynamicResources"] if DEVICES and minor >= 35 else [])


def filters(minor: int) -> list[str]:
    """The filter plugins in upstream's default order (the volume ones with --storage)."""
    out = FILTERS
    if STORAGE:
        i = FILTERS.index("NodeResourcesFit") + 1
        out = FILTERS[:i] + volume_filters(minor) + FILTERS[i:]
    return out + (["DynamicResources"] if DEVICES else []) + (["NodeDeclaredFeatures"] if NDF else [])


def volume_filters(minor: int) -> list[str]:
    """The volume filters in the default profile's order: EBSLimits, GCEPDLimits (before
    NodeVolumeLimits) and AzureDiskLimits (after it) to 1.30."""
    if minor > 30:
        return VOLUME_FILTERS
    return ["VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits",
            "VolumeBinding", "VolumeZone"]


def oracle_input(c: dict, cid: str, minor: int) -> dict:
    out = copy.deepcopy(c)
    out["id"] = cid
    if minor >= 31:
        for p in out["pods"] + [out["pod"]]:
            merge_match_label_keys(p)
    out["filter"], out["score"], out["preempt"] = filters(minor), score_plugins(minor), True
    if feature_gates(minor):
        out["featureGates"] = feature_gates(minor)
    return out


def _kspread_pod(p: dict) -> dict:
    q = {k: v for k, v in p.items() if k not in ("requests", "image", "ports", "restartAll")}
    container: dict[str, Any] = {"name": "c", "image": p.get("image", "pause")}
    if p.get("restartAll"):  # the oracle's rule (ndf_v135.go)
        container["restartPolicyRules"] = [{"action": "RestartAllContainers",
                                            "exitCodes": {"operator": "In", "values": [42]}}]
    if p.get("requests"):
        container["resources"] = {"requests": p["requests"]}
    if p.get("ports"):
        container["ports"] = p["ports"]
    if p.get("resourceClaims"):  # the container uses every claim of the pod, as the oracle's (devices.go)
        container.setdefault("resources", {})["claims"] = [{"name": e["name"]} for e in p["resourceClaims"]]
    q["containers"] = [container]
    return q


def kspread_case(c: dict, version: str, name: str) -> dict:
    v = make_version(version, None)
    weights = dict(default_plugins(v)[1])
    doc: dict[str, Any] = {
        "apiVersion": "kspread/v1", "kind": "Case", "name": name, "version": version,
        "profile": {"filter": filters(v.minor), "score": [{"name": s, "weight": weights.get(s, 1)}
                                                 for s in score_plugins(v.minor)],
                    "postFilter": (["DynamicResources"] if DEVICES else []) + ["DefaultPreemption"]},
        "zones": c["zones"], "nodes": c["nodes"], "pods": [_kspread_pod(p) for p in c["pods"]],
        "pod": _kspread_pod(c["pod"]), "owners": c["owners"], "namespaces": c["namespaces"],
        "pdbs": c["pdbs"], "expect": {"feasible": []},
    }
    if not doc["zones"]:
        del doc["zones"]
    if feature_gates(v.minor):
        doc["featureGates"] = feature_gates(v.minor)
    if c.get("pluginConfig"):
        doc["profile"]["pluginConfig"] = c["pluginConfig"]
    if c.get("storage") or c.get("devices"):
        doc["objects"] = (c.get("storage") or []) + (c.get("devices") or [])
    return doc


# ---- comparison ------------------------------------------------------------------------------

DR_ERR = 'running "DynamicResources" filter plugin: '
DEVICE_ID = r"cannot add device \S+ because"


def oracle_node_status(o: dict, node: str) -> tuple[str, str, str]:
    """The scheduler's status for a node: a PreFilter rejection for every node (the
    framework runs every PreFilter before any Filter and stops at the first that rejects,
    in plugin order); otherwise the first plugin in filter order that rejects the node."""
    for plugin in o["filterOrder"]:
        s = o["preFilter"].get(plugin)
        if s and s["code"] not in ("Success", "Skip"):
            return s["code"], ", ".join(s.get("reasons") or []), plugin
    for plugin in o["filterOrder"]:
        s = o["filter"].get(plugin, {}).get(node)
        if s and s["code"] not in ("Success", "Skip"):
            return s["code"], ", ".join(s.get("reasons") or []), plugin
    return "Success", "", ""


def compare(o: dict, k, ks_case) -> list[tuple[str, str, str]]:
    """Differences as (plugin, kind, detail)."""
    diffs: list[tuple[str, str, str]] = []
    r = k
    nodes = [n.name for n in ks_case.cluster.nodes]
    errors = {n: oracle_node_status(o, n) for n in nodes}
    errors = {n: e for n, e in errors.items() if e[0] == "Error"}
    if errors:
        # a Filter that errs ends the cycle (RunFilterPluginsWithNominatedPods' first error,
        # from 16 workers: any of the nodes that err); kspread stops at the first in node
        # order: its error must be one of upstream's
        # upstream's words (frameworkImpl, the plugin's name as Go's %q)
        said = {f'running "{e[2]}" filter plugin: {e[1]}' for e in errors.values()}
        if r.error not in said:
            diffs.append((next(iter(errors.values()))[2], "error",
                          f"upstream errors {sorted(said)}; kspread {r.error!r}"))
        return diffs
    for n in nodes:
        code, reason, plugin = oracle_node_status(o, n)
        st = r.statuses.get(n)
        kcode = str(st.code) if st else "(none)"
        kreason = st.message if st else ""
        kplugin = st.plugin if st else ""
        if code != kcode:
            detail = f"{n}: upstream {code} [{plugin}] {reason!r}; kspread {kcode} [{kplugin}] {kreason!r}"
            diffs.append((plugin or kplugin or "?", "filter-code", detail))
        elif code != "Success" and (reason != kreason or plugin != kplugin):
            diffs.append((plugin, "filter-reason", f"{n}: upstream [{plugin}] {reason!r}; kspread [{kplugin}] {kreason!r}"))
    for plugin, so in o["score"].items():
        if so.get("error") and len(o["feasible"]) > 1:
            # a Score plugin's error ends the cycle (DynamicResources' computeScore with an
            # allocated claim before an unallocated one: allocations indexed by claim)
            want = f'running Score plugins: plugin "{plugin}" failed with: {so["error"]}'
            if r.error != want:
                diffs.append((plugin, "score-error", f"upstream {want!r}; kspread {r.error!r}"))
            return diffs
    of, kf = sorted(o["feasible"]), sorted(r.feasible)
    if of != kf:
        diffs.append(("(feasible)", "feasible", f"upstream {of}; kspread {kf}"))
        return diffs
    if len(of) > 1:
        ks = r.scores
        delta = {n: 0 for n in of}  # weighted differences the per-plugin rows account for
        for plugin in score_plugins(ks_case.version.minor):
            so = o["score"].get(plugin) or {}
            oraw = so.get("raw")
            kraw = ks.raw.get(plugin) if ks else None
            ow = so.get("weighted") if oraw else {}
            kw = ks.weighted.get(plugin, {}) if (ks and kraw is not None) else {}
            for n in of:
                delta[n] += (kw.get(n) or 0) - (ow.get(n) or 0)
            if not oraw:  # skipped upstream (PreScore Skip): contributes nothing
                if kraw and any(kw.values()):
                    diffs.append((plugin, "skip", f"upstream skips; kspread weighted {kw}"))
                continue
            if kraw is None:
                if any(so["normalized"].values()):
                    diffs.append((plugin, "skip", f"kspread skips; upstream normalized {so['normalized']}"))
                continue
            for what, omap, kmap in (("raw", oraw, kraw), ("normalized", so["normalized"], ks.normalized[plugin]),
                                     ("weighted", ow, kw)):
                bad = {n: (omap.get(n), kmap.get(n)) for n in of if omap.get(n) != kmap.get(n)}
                if bad:
                    diffs.append((plugin, what, f"(upstream, kspread) {bad}"))
                    break
        bad = {n: (o["total"].get(n), r.totals.get(n)) for n in of
               if (r.totals.get(n) or 0) - (o["total"].get(n) or 0) != delta[n]}
        if bad:
            diffs.append(("(total)", "total", f"(upstream, kspread) {bad}"))
    if not of:
        op = o.get("preemption") or {}
        kp = r.preemption
        err = op.get("error") or ""
        # several nodes' errors come aggregated: "[e1, e2]"
        parts = re.split(r", (?=running \")", err[1:-1]) if err.startswith("[" + DR_ERR) and err.endswith("]") \
            else [err]
        if all(x.startswith(DR_ERR) for x in parts) and op.get("candidates"):
            # the dry run's Filter errors with candidates found elsewhere: upstream's Preempt
            # drops the error (findCandidates' err counts only without candidates), the oracle
            # reports it as DryRunPreemption returns it: compare the candidates
            op = {**op, "error": ""}
        elif all(x.startswith(DR_ERR) for x in parts):
            # a Filter error in the dry run (DynamicResources: a claim that can never be
            # allocated on a node): no candidate there; without candidates PostFilter's
            # status is the aggregated Error (the cycle stays Unschedulable)
            wants = sorted(x[len(DR_ERR):] for x in parts)
            pf = r.post_filter_status
            got = sorted(pf.reasons) if pf is not None and pf.code.value == "Error" else []
            if got != wants:
                same = len(got) == len(wants) and all(
                    re.sub(DEVICE_ID, "D", g) == re.sub(DEVICE_ID, "D", w) for g, w in zip(got, wants))
                diffs.append(("DefaultPreemption", "preemption-error" + (" (device named)" if same else ""),
                              f"upstream {wants!r}; kspread {got!r}"))
            return diffs
        if op.get("error"):
            prefilter = op["error"].startswith("PreFilter: ") and not (kp and kp.candidates)
            # the oracle's dry run takes the nodes its Filter calls rejected as Unschedulable,
            # even after a PreFilter rejection; the scheduler's nodes all carry that
            # rejection (here UnschedulableAndUnresolvable): no candidate, as kspread finds
            diffs.append(("DefaultPreemption", "after-prefilter" if prefilter else "oracle-error", op["error"]))
            return diffs
        ocand = {n: sorted(v) for n, v in (op.get("candidates") or {}).items()}
        kcand = {n: sorted(p.key for p in v) for n, v in ((kp.candidates.items()) if kp else [])}
        if ocand != kcand:
            diffs.append(("DefaultPreemption", "candidates", f"upstream {ocand}; kspread {kcand}"))
        else:
            onode = op.get("node") or None
            knode = kp.nominated_node if kp else None
            ktied = set(kp.tied_nodes) if kp and kp.tied_nodes else {knode}
            if (onode is None) != (knode is None) or (onode is not None and onode not in ktied):
                diffs.append(("DefaultPreemption", "node", f"upstream {onode}; kspread {knode} (ties {sorted(ktied - {None})})"))
            elif onode is not None and sorted(op.get("victims") or []) != ocand.get(onode):
                diffs.append(("DefaultPreemption", "victims", f"upstream {op.get('victims')}"))
    return diffs


def compare_devices(o: dict, sched, r) -> list[tuple[str, str, str]]:
    """--devices: the devices allocated on the node kspread chose (upstream: what
    DynamicResources' Reserve allocates there), and DynamicResources' PostFilter status
    when no node fits."""
    diffs: list[tuple[str, str, str]] = []
    if sorted(o["feasible"]) != sorted(r.feasible) or r.error is not None:
        return diffs  # compared by compare()
    if o["feasible"]:
        node = sched.placement(r.pod.key)
        if node is None:
            return [("DynamicResources", "allocation", f"kspread bound no pod; upstream feasible {o['feasible']}")]
        want = {ext_claim(k[len("default/"):] if k.startswith("default/") else k, r.pod.name):
                sorted(x.split("@")[0] for x in v or [])  # null: an allocation without devices
                for k, v in ((o.get("allocations") or {}).get(node) or {}).items()}
        have = sched.claims.allocations()
        got = {k: sorted(have.get(k) or []) for k in want}
        mine = {pc.claim_name if r.pod.namespace == "default" else f"{r.pod.namespace}/{pc.claim_name}"
                for pc in r.pod.resource_claims}
        extra = {k for k in mine - set(want) if have.get(k) is not None and k not in ALLOCATED_BEFORE}
        if got != want or extra:
            diffs.append(("DynamicResources", "allocation",
                          f"{node}: upstream {(o.get('allocations') or {}).get(node)}; kspread {got}" +
                          (f", also {sorted(extra)}" if extra else "")))
    elif "postFilter" in o:
        op = ", ".join(o["postFilter"].get("reasons") or [])
        order = o["filterOrder"]
        if any((o["preFilter"].get(p) or {}).get("code") == "UnschedulableAndUnresolvable"
               for p in order[:order.index("DynamicResources")]):
            # the framework stops at that PreFilter: DynamicResources' PreFilter never runs
            # (the oracle runs every one), and its PostFilter errs reading its state
            op = "not found"
        st = r.post_filter_status
        if st is not None and st.plugin == "DynamicResources":
            kp = ", ".join(st.reasons)
        elif r.post_filter_reasons:
            kp = r.post_filter_reasons[0]
        elif not r.pod.resource_claims and not extended_claim(sched, r.pod):
            # DefaultPreemption succeeded: its words are lost, its effect is not
            kp = "" if sched.version.minor == 33 else "no new claims to deallocate"  # 1.33: a fast path
        else:
            have = sched.claims.allocations()
            victims = {v.key for v in (r.preemption.victims if r.preemption and r.preemption.nominated_node else [])}
            freed = [k for k, users in ALLOCATED_BEFORE.items() if have.get(k) is None and not set(users) & victims]
            kp = "deallocation of ResourceClaim completed" if freed else "still not schedulable"
        if op != kp:
            diffs.append(("DynamicResources", "postfilter", f"upstream {op!r}; kspread {kp!r}"))
    return diffs


def extended_claim(sched, pod) -> bool:
    """Whether DynamicResources' PreFilter gave the pod the in-memory claim of its extended
    resources (a request of a resource a DeviceClass backs, DRAExtendedResource on): its
    PostFilter then has a claim to look at ("still not schedulable", not the fast path's
    "no new claims to deallocate")."""
    from kspread.engine.devices import is_dra_extended_resource_name
    from kspread.engine.plugins.dynamicresources import extended_resources_enabled
    from kspread.engine.resources import pod_requests
    if sched.claims is None or not extended_resources_enabled(sched.version):
        return False
    backed = sched.claims.objects.extended_resources
    return any(q and is_dra_extended_resource_name(k) and k in backed
               for k, q in pod_requests(pod, sched.version).items())


def ext_claim(key: str, pod: str) -> str:
    """The oracle's name for the claim of a pod's extended resources (--extended): Reserve
    signals upstream's in-memory claim, named "<extended-resources>" until PreBind creates it
    with generateName "<pod>-extended-resources-"; kspread names it "<pod>-extended-resources"."""
    ns, _, name = key.rpartition("/")
    if name != SPECIAL_CLAIM_NAME:
        return key
    return (ns + "/" if ns else "") + extended_claim_name(pod)


ALLOCATED_BEFORE: dict[str, tuple] = {}  # claims allocated in the case's input -> reservedFor (per case)


def run_and_compare(o: dict, doc: dict, cid: str) -> list[tuple[str, str, str]]:
    try:
        case = build_case(doc, cid)
        ALLOCATED_BEFORE.clear()
        if case.cluster.devices is not None:
            ALLOCATED_BEFORE.update((v.key, v.reserved_for) for v in case.cluster.devices.claims.values()
                                    if v.allocation is not None)
        sched, results, _ = run_case(case)
        diffs = compare(o, results[-1], case)
        if DEVICES:
            diffs += compare_devices(o, sched, results[-1])
        return diffs
    except Exception as e:  # a kspread error on a valid cluster is a difference too
        return [("(kspread)", "exception", f"{type(e).__name__}: {e}")]


POOL_ORDER_NOTE = "upstream's allocator takes the pools in Go map order (random); kspread's is the case's"


def _slice_orders(slices: list, limit: int):
    """Orders of the slices as upstream's allocator may see them: pools in any order
    (GatherPools walks a Go map) and a pool's slices in any order (the informer's
    lister lists a map), the case's own first."""
    pools: dict[tuple[str, str], list] = {}
    for x in slices:
        pools.setdefault((x.driver, x.pool), []).append(x)
    groups = list(pools.values())
    n = 0
    for perm in itertools.permutations(range(len(groups))):
        inner = [list(itertools.permutations(groups[i])) for i in perm]
        for combo in itertools.product(*inner):
            yield [x for g in combo for x in g]
            n += 1
            if n >= limit:
                return


def _node_outcome(alloc_cls, features, tracker, slices, node, todo):
    from kspread.engine.allocator import AllocationError, FailedOnNode
    a = alloc_cls(features, tracker.allocated_devices(), tracker.objects.classes, slices, {})
    try:
        got = a.allocate(node, todo)
    except FailedOnNode as e:
        return ("UnschedulableAndUnresolvable", str(e))
    except AllocationError as e:
        return ("Error", str(e))
    if got is None:
        return ("UnschedulableAndUnresolvable", "cannot allocate all claims")
    return ("Success", {c.key: sorted(str(d) for d in al.devices) for c, al in zip(todo, got)})


def pool_orders(o: dict, doc: dict, cid: str, limit: int = 48) -> bool:
    """Whether every node where kspread's allocator and upstream's disagree (the Filter's
    outcome, or the devices upstream's Reserve takes there) agrees under some order of
    the pools and of their slices: upstream's GatherPools returns pools in a Go map's
    order and the informer lists slices in a map's order, both different from call to
    call (so from node to node); kspread takes the case's order."""
    from kspread.engine.allocator import Allocator
    from kspread.engine.devices import ClaimTracker
    from kspread.engine.devicetaints import scheduler_slices
    from kspread.engine.plugins.dynamicresources import allocator_features, pod_claims
    try:
        case = build_case(doc, cid)
    except Exception:
        return False
    objs = case.cluster.devices
    if objs is None or len(objs.slices) < 2:
        return False
    pod = case.incoming[0]
    tracker = ClaimTracker(objs)
    slices = scheduler_slices(tracker)  # DeviceTaintRules applied
    todo = [c for c in pod_claims(tracker, pod) if c.allocation is None]
    if not todo:
        return False
    features = allocator_features(case.version)
    dr = o["filter"].get("DynamicResources") or {}
    allocs = o.get("allocations") or {}
    some = False
    for node in case.cluster.nodes:
        st = dr.get(node.name)
        if st is None or st["code"] == "Skip":
            continue
        reason = ", ".join(st.get("reasons") or [])
        if st["code"] == "Success":
            if node.name not in o["feasible"]:
                continue  # another plugin rejects it: no Reserve ran there
            want: Any = ("Success", {ext_claim(k[8:] if k.startswith("default/") else k, pod.name):
                                     sorted(x.split("@")[0] for x in v or [])
                                     for k, v in (allocs.get(node.name) or {}).items()})
        elif reason == "resourceclaim not available on the node":
            continue  # decided after the allocation, which succeeded: not compared here
        else:
            want = (st["code"], reason)
        if _node_outcome(Allocator, features, tracker, list(slices), node, todo) == want:
            continue
        some = True
        mine = [x for x in slices if x.node_name in (None, node.name)]  # others: not for the node
        if not any(_node_outcome(Allocator, features, tracker, order, node, todo) == want
                   for order in _slice_orders(mine, limit)):
            return False
    return some


def cover(coverage: Counter, o: dict) -> None:
    """What a case exercised upstream: plugins that rejected a node, scored unevenly, preemption."""
    for plugin in o["filterOrder"]:
        if any(s["code"] not in ("Success", "Skip") for s in (o["filter"].get(plugin) or {}).values()):
            coverage[f"{plugin} rejects"] += 1
    if len(o["feasible"]) > 1:
        coverage["scored"] += 1
        for plugin, so in o["score"].items():
            if len(set((so.get("normalized") or {}).values())) > 1:
                coverage[f"{plugin} varies"] += 1
    if not o["feasible"]:
        coverage["no node fits"] += 1
        pre = o.get("preemption") or {}
        if pre.get("candidates"):
            coverage["preemption candidates"] += 1
        if pre.get("node"):
            coverage["preemption nominates"] += 1


def comparison_tolerates(c: dict) -> bool:
    """Coverage only: some Lt / Gt toleration of the incoming pod tolerates some node's
    taint (effect and key match, both values canonical decimal integers, compared)."""
    canon = re.compile(r"^(0|-?[1-9][0-9]*)$")
    for t in c["pod"].get("tolerations") or []:
        if t.get("operator") not in ("Lt", "Gt"):
            continue
        for n in c["nodes"]:
            for taint in n.get("taints") or []:
                if (t.get("effect") and t["effect"] != taint["effect"]) or t["key"] != taint["key"]:
                    continue
                if canon.match(t["value"]) and canon.match(taint["value"]):
                    have, want = int(taint["value"]), int(t["value"])
                    if (have < want) if t["operator"] == "Lt" else (have > want):
                        return True
    return False


# ---- explained differences (README "Checked against upstream") --------------------------------

UNLIMITED_NOTE = "nodes without allocatable (kspread: unlimited)"
PREFILTER_NOTE = "the oracle's dry run after a PreFilter rejection (the scheduler runs none)"


# --extended: v1.36.2's BalancedAllocation never makes the CEL cache its DRA-backed scoring
# compiles a class's selectors with (NewBalancedAllocation sets no DRACaches.celCache; only
# NewFit does): scoring a resource a DeviceClass with a CEL selector backs on a node whose
# allocatable lacks it panics there. kspread refuses that scoring by name (not modelled).
BA_PANIC_SITE = "noderesources.(*resourceAllocationScorer).deviceMatchesClass"
DRA_SCORE_REFUSAL = ("an extended resource backed by devices (DRAExtendedResource): its scoring from the node's "
                     "devices is not modelled by kspread")
EXT_CLAIM_REFUSAL = "upstream's PreBind creates an extended resources claim with no request for it"
EXT_CLAIM_NOTE = ("kspread refuses, by name, a pod with claims whose DRA-backed extended resources the chosen node's "
                  "allocatable serves (upstream's PreBind creates a claim with no request)")
DRA_SCORE_NOTE = ("kspread refuses, by name, NodeResourcesFit's or BalancedAllocation's scoring of an extended "
                  "resource a DeviceClass backs (not modelled)")


def ba_panic(doc: dict, cid: str) -> str | None:
    """The oracle's BalancedAllocation panicked (BA_PANIC_SITE): explained when kspread refuses
    that scoring by name, or when kspread finds one feasible node or none (upstream's
    schedulePod scores no single node; the oracle scores every feasible node)."""
    try:
        _, results, _ = run_case(build_case(doc, cid))
    except CaseError as e:
        if DRA_SCORE_REFUSAL in str(e) and "NodeResourcesBalancedAllocation scores" in str(e):
            return "panic: BalancedAllocation's DRA-backed score (kspread refuses)"
        return None
    if len(results[-1].feasible) <= 1:
        return "panic: BalancedAllocation's DRA-backed score of a single node (not scored upstream)"
    return None


# --node-allocatable: validatePodLevelRequestsCoverDRA walks the pod-level requests, a Go map,
# and names the first resource the containers and DRA requests exceed; when both cpu and memory
# do, upstream names either (kspread: cpu, then memory)
COVER = re.compile(r"upstream \[DynamicResources\] 'pod level request for (\S+) is insufficient to cover the "
                   r"aggregated container and node-allocatable DRA requests'; kspread \[DynamicResources\] 'pod level "
                   r"request for (\S+) is insufficient to cover the aggregated container and node-allocatable DRA "
                   r"requests'")
COVER_ORDER_NOTE = "validatePodLevelRequestsCoverDRA names the first insufficient resource in Go map order"


def _cover_map_order(detail: str) -> bool:
    pairs = COVER.findall(detail)
    return bool(pairs) and all({a, b} == {"cpu", "memory"} for a, b in pairs) and \
        len(pairs) == detail.count("upstream [")


def explained(version: str, plugin: str, kind: str, detail: str, c: dict) -> str | None:
    """The README item ("Checked against upstream") that explains a difference, or None."""
    if plugin == "DynamicResources" and kind == "filter-reason" and _cover_map_order(detail):
        return COVER_ORDER_NOTE
    if plugin == "(kspread)" and kind == "exception" and DRA_SCORE_REFUSAL in detail:
        return DRA_SCORE_NOTE
    if plugin == "(kspread)" and kind == "exception" and EXT_CLAIM_REFUSAL in detail:
        return EXT_CLAIM_NOTE
    unlimited = {n["name"] for n in c["nodes"] if "allocatable" not in n}
    if plugin in ("NodeResourcesFit", "NodeResourcesBalancedAllocation") and kind in ("raw", "normalized"):
        # every node that differs has no allocatable: the oracle's finite stand-in
        nodes = set(re.findall(r"'(n\d+)': \(", detail))
        if nodes and nodes <= unlimited:
            return UNLIMITED_NOTE
        if kind == "normalized" and unlimited:
            # NormalizeScore-free plugins: a raw difference elsewhere would have shown first
            return None
    if plugin == "DefaultPreemption" and kind == "after-prefilter":
        return PREFILTER_NOTE
    if kind == "pool order":
        return POOL_ORDER_NOTE
    if kind == "preemption-error (device named)":
        # the first device of the node's pools in the allocator's order that breaks the
        # claim's constraint: the same error, another device
        return POOL_ORDER_NOTE
    return None


# ---- the run ---------------------------------------------------------------------------------

def run_batch(oracle: str, lines: list[str]) -> list[dict]:
    p = subprocess.run([oracle, "-jsonl"], check=False, input="\n".join(lines) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"oracle failed: {p.stderr[-2000:]}")
    return [json.loads(x) for x in p.stdout.splitlines() if x.strip()]


RULE_PANIC = "interface conversion: interface {} is *v1beta2.DeviceTaintRule, not *v1alpha3.DeviceTaintRule"


def rules_136(args) -> int:
    """DeviceTaintRules at 1.36 (--rules-136): every case goes to the oracle alone (a panic ends
    its process). A case with a rule must end the oracle with v1.36.2's tracker panic and be
    refused by kspread naming it; a case without one is compared as in the other modes."""
    from kspread.format.devices import V136_RULE_CRASH

    rng = random.Random(args.seed)
    gen = Gen(rng, 36)
    counts: Counter = Counter()
    for i in range(args.n):
        c = gen.cluster()
        cid = f"s{args.seed}-{i}"
        rules = [o for o in c.get("devices") or [] if o.get("kind") == "DeviceTaintRule"]
        slices = [o for o in c.get("devices") or [] if o.get("kind") == "ResourceSlice"]
        p = subprocess.run([args.oracle, "-jsonl"], check=False, input=json.dumps(oracle_input(c, cid, 36)) + "\n",
                           capture_output=True, text=True)
        panicked = p.returncode != 0 and RULE_PANIC in p.stderr
        try:
            build_case(kspread_case(c, args.version, cid), cid)
            refused = False
        except CaseError as e:
            refused = V136_RULE_CRASH in str(e)
        if rules:
            kind = "rules and slices" if slices else "rules, no slice"
            counts[f"{kind}: cases"] += 1
            counts[f"{kind}: oracle panicked"] += panicked
            counts[f"{kind}: kspread refused"] += refused
            ok = refused and (panicked or not slices)
        else:
            o = json.loads(p.stdout.splitlines()[0]) if p.returncode == 0 and p.stdout.strip() else {}
            diffs = run_and_compare(o, kspread_case(c, args.version, cid), cid) if o else [("(oracle)", "error", "")]
            unexplained = [d for d in diffs if explained(args.version, d[0], d[1], d[2], c) is None]
            counts["no rule: cases"] += 1
            counts["no rule: unexplained differences"] += bool(unexplained)
            ok = not unexplained and not refused
        counts["unexpected"] += not ok
        if not ok and counts["unexpected"] <= args.examples:
            out_dir = Path(args.out) / args.version
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / f"rules136-{cid}.json").write_text(json.dumps(
                {"cluster": c, "oracleRc": p.returncode, "oracleStderr": p.stderr[-3000:]}, indent=1))
    print(f"version 1.36 --rules-136: {args.n} cases, seed {args.seed}")
    for k, v in sorted(counts.items()):
        print(f"  {k:40} {v}")
    if args.json:
        Path(args.json).write_text(json.dumps({"version": "1.36", "mode": "rules-136", "cases": args.n,
                                               "seed": args.seed, "counts": dict(counts)}, indent=1))
    return 1 if counts["unexpected"] else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oracle", required=True, help="the oracle binary built for --version")
    ap.add_argument("--version", required=True, help='kspread version of the cases, e.g. "1.35"')
    ap.add_argument("-n", type=int, default=1000, help="number of random cases")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=500, help="cases per oracle invocation")
    ap.add_argument("--out", default="dev/difftest-out", help="where failing examples are written")
    ap.add_argument("--examples", type=int, default=3, help="examples written per (plugin, kind)")
    ap.add_argument("--json", help="write the counts as JSON to this file")
    ap.add_argument("--storage", action="store_true", help="storage objects and the volume plugins (1.23 and later; VolumeBinding scores from 1.35)")
    ap.add_argument("--devices", action="store_true", help="device objects and DynamicResources (from 1.31)")
    ap.add_argument("--ndf", action="store_true", help="NodeDeclaredFeatures (1.35 oracle with ndf_v135.go)")
    ap.add_argument("--taint-rules", action="store_true",
                    help="with --devices at 1.35: DeviceTaintRules and tolerations (oracle with taintrules_v135.go); "
                         "at 1.36: taints in the slices' devices and tolerations")
    ap.add_argument("--rules-136", action="store_true",
                    help="with --devices --taint-rules at 1.36: DeviceTaintRules too (resource.k8s.io/v1beta2, "
                         "DRADeviceTaintRules on), each case run alone: a case with a rule must crash the oracle "
                         "(v1.36.2's tracker panics) and be refused by kspread")
    ap.add_argument("--list-attributes", action="store_true",
                    help="with --devices at 1.36: DRAListTypeAttributes on, list attributes, selectors over them and "
                         "distinctAttribute constraints (dev/devgen.py LIST_ATTRS)")
    ap.add_argument("--node-allocatable", action="store_true",
                    help="with --devices at 1.36: DRANodeAllocatableResources on, devices mapping cpu and memory, "
                         "bound pods with status.nodeAllocatableResourceClaimStatuses for their claims (dev/devgen.py "
                         "NODE_ALLOC; the oracle's pod container names the pod's claims)")
    ap.add_argument("--extended", action="store_true",
                    help="with --devices at 1.36: extended resources a DeviceClass backs (DRAExtendedResource, "
                         "beta, on): the gpu class's extendedResourceName and the pod's requests of it or of the "
                         "class's implicit name (dev/devgen.py EXTENDED)")
    ap.add_argument("--resize", action="store_true",
                    help="bound pods with an in-place resize's status (the oracle needs main.go's PodIn.status)")
    args = ap.parse_args()
    global STORAGE, DEVICES, RESIZE, NDF
    STORAGE = args.storage
    DEVICES = args.devices
    RESIZE = args.resize
    NDF = args.ndf
    devgen.TAINT_RULES = args.taint_rules
    devgen.RULES_136 = args.rules_136
    devgen.LIST_ATTRS = args.list_attributes
    devgen.NODE_ALLOC = args.node_allocatable
    devgen.EXTENDED = args.extended
    if args.extended and not (args.devices and args.version == "1.36"):
        raise SystemExit("--extended goes with --devices at 1.36")
    if args.node_allocatable and not (args.devices and args.version == "1.36"):
        raise SystemExit("--node-allocatable goes with --devices at 1.36")
    if args.list_attributes and not (args.devices and int(args.version.split(".")[1]) >= 36):
        raise SystemExit("--list-attributes goes with --devices at 1.36 or later")
    if args.rules_136:
        if not (args.version == "1.36" and args.devices and args.taint_rules):
            raise SystemExit("--rules-136 goes with --version 1.36 --devices --taint-rules")
        return rules_136(args)

    import yaml

    minor = int(args.version.split(".")[1])
    rng = random.Random(args.seed)
    gen = Gen(rng, minor)
    counts: Counter = Counter()  # (plugin, kind, explained?) -> n
    per_plugin_cases: Counter = Counter()
    coverage: Counter = Counter()
    cases_with_diff = 0
    unexplained_cases = 0
    errors = 0
    written: Counter = Counter()
    out_dir = Path(args.out) / args.version
    done = 0
    while done < args.n:
        size = min(args.batch, args.n - done)
        clusters = [gen.cluster() for _ in range(size)]
        ids = [f"s{args.seed}-{done + i}" for i in range(size)]
        outs = run_batch(args.oracle, [json.dumps(oracle_input(c, i, minor)) for c, i in zip(clusters, ids)])
        for c, cid, o in zip(clusters, ids, outs):
            assert o.get("id") == cid, (o.get("id"), cid)
            if o.get("error"):
                why = BA_PANIC_SITE in o["error"] and ba_panic(kspread_case(c, args.version, cid), cid)
                if why:
                    counts[("(oracle)", why, True)] += 1
                    cases_with_diff += 1
                    continue
                errors += 1
                counts[("(oracle)", "error: " + o["error"][:80], False)] += 1
                continue
            doc = kspread_case(c, args.version, cid)
            diffs = run_and_compare(o, doc, cid)
            if DEVICES and diffs and pool_orders(o, doc, cid):
                diffs = [("DynamicResources", "pool order", POOL_ORDER_NOTE)]
            case_unexplained = False
            seen_plugins = set()
            for plugin, kind, detail in diffs:
                why = explained(args.version, plugin, kind, detail, c)
                counts[(plugin, kind, why is not None)] += 1
                seen_plugins.add(plugin)
                if why is None:
                    case_unexplained = True
                    if written[(plugin, kind)] < args.examples:
                        written[(plugin, kind)] += 1
                        out_dir.mkdir(parents=True, exist_ok=True)
                        doc_out = dict(doc)
                        doc_out["description"] = f"difftest {plugin} {kind}: {detail}"[:2000]
                        doc_out["expect"] = {"feasible": sorted(o["feasible"])}
                        fn = out_dir / f"{plugin.strip('()')}-{kind}-{cid}.yaml"
                        fn.write_text(yaml.safe_dump(doc_out, sort_keys=False, width=120))
                        (out_dir / f"{fn.stem}.oracle.json").write_text(json.dumps(o, indent=1))
            for p in seen_plugins:
                per_plugin_cases[p] += 1
            cover(coverage, o)
            if not c["pod"].get("topologySpreadConstraints") and \
                    len(set((o["score"].get("PodTopologySpread") or {}).get("normalized", {}).values())) > 1:
                coverage["default spreading varies"] += 1
            if c.get("pluginConfig"):
                coverage["non-default plugin args"] += 1
            if DEVICES:
                devgen.cover(coverage, c, o)
            if any(p.get("resources") for p in c["pods"] + [c["pod"]]):
                coverage["pod-level requests"] += 1
            if any(t.get("operator") in ("Lt", "Gt") for t in c["pod"].get("tolerations") or []) and \
                    any(t["key"] == "level" for n in c["nodes"] for t in n.get("taints") or []):
                coverage["Lt/Gt tolerations meet level taints"] += 1
                if comparison_tolerates(c):
                    coverage["an Lt/Gt toleration tolerates"] += 1
            if diffs:
                cases_with_diff += 1
            if case_unexplained:
                unexplained_cases += 1
        done += size
        print(f"  {done}/{args.n} cases, {cases_with_diff} with differences ({unexplained_cases} unexplained)",
              file=sys.stderr)
    print(f"version {args.version} (oracle {outs[0].get('version') if outs else '?'}): {args.n} cases, "
          f"{cases_with_diff} with differences, {unexplained_cases} unexplained, {errors} oracle errors")
    for (plugin, kind, expl), n in sorted(counts.items()):
        print(f"  {plugin:32} {kind:16} {'explained' if expl else 'UNEXPLAINED':12} {n}")
    print("  coverage (cases where upstream ...): " + ", ".join(f"{k} {v}" for k, v in sorted(coverage.items())))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "version": args.version, "cases": args.n, "seed": args.seed, "casesWithDifferences": cases_with_diff,
            "unexplainedCases": unexplained_cases, "oracleErrors": errors, "coverage": dict(coverage),
            "differences": [{"plugin": p, "kind": k, "explained": e, "count": n}
                            for (p, k, e), n in sorted(counts.items())]}, indent=1))
    return 1 if unexplained_cases else 0


if __name__ == "__main__":
    raise SystemExit(main())
