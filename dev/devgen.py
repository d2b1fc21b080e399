"""Random device objects (dynamic resource allocation) for the differential tests
(``difftest.py --devices``; see dev/README.md).

A cluster gets node-local ResourceSlices (one or two pools per node, a slice of a pool
sometimes split in two), network-attached slices (``nodeSelector`` on a node label, or
``allNodes``), DeviceClasses with CEL selectors, claims already allocated (shared by
bound pods through ``reservedFor``, some not reserved at all), and pods asking for
devices through their own claims, shared claims and ResourceClaimTemplates: ExactCount
and All, several requests, ``matchAttribute`` constraints, ``firstAvailable`` lists
(from 1.33), ``adminAccess``. Objects are written in the ``resource.k8s.io`` version the
Kubernetes version serves to its scheduler (v1 from 1.34, v1beta1 in 1.32-1.33, v1alpha3
in 1.31), each in that version's shape.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

GPU = "gpu.example.com"
NIC = "nic.example.com"
MODELS = ["a100", "h100", "t4"]
VERSIONS = ["1.2.0", "1.10.1", "2.0.0-rc.1", "2.0.0", "2.3.4"]
MEMORY = ["16Gi", "40Gi", "80Gi", "40960Mi"]
# set by difftest.py --taint-rules (1.35): DRADeviceTaints and DRADeviceTaintRules on,
# DeviceTaintRules on the cluster's devices, and requests with tolerations; at 1.36
# (DRADeviceTaints beta, on; kspread takes no DeviceTaintRule there) taints in the slices'
# devices instead of rules
TAINT_RULES = False
# set by difftest.py --rules-136 (with --taint-rules at 1.36): DeviceTaintRules as 1.36 serves
# them (resource.k8s.io/v1beta2) with DRADeviceTaintRules on, on which v1.36.2's scheduler
# panics (kspread refuses them naming the crash)
RULES_136 = False
TAINT_KEYS = ["example.com/fault", "example.com/maintenance"]
# set by difftest.py --list-attributes (1.36+): DRAListTypeAttributes on, devices with list
# attributes (GPUs' models, firmware and lanes always; numa and rack as a list half the
# time), selectors over them, and distinctAttribute constraints besides matchAttribute
LIST_ATTRS = False
# set by difftest.py --node-allocatable (1.36): DRANodeAllocatableResources on, half the devices
# mapping cpu and / or memory (per device: a multiplier); the bound pods that reserve an
# allocated claim mostly carry status.nodeAllocatableResourceClaimStatuses for it (what the
# claim's mapped devices add up to, else an arbitrary cpu / memory), and the incoming pod
# sometimes one for a claim it names (which no plugin reads)
NODE_ALLOC = False
# set by difftest.py --extended (1.36; DRAExtendedResource beta, on): the gpu class backs the
# extended resource example.com/gpu (extendedResourceName, seven clusters in ten), and the
# incoming pod's container mostly requests example.com/gpu or the class's implicit name
# deviceclass.resource.kubernetes.io/gpu; some nodes list example.com/gpu in their allocatable
# (a device plugin's), which NodeResourcesFit then checks itself
EXTENDED = False
EXTENDED_NAME = "example.com/gpu"
IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"


def api_version(minor: int) -> str:
    return "resource.k8s.io/" + ("v1" if minor >= 34 else "v1beta1" if minor >= 32 else "v1alpha3")


def feature_gates(minor: int) -> dict[str, bool]:
    """The DRA gates every --devices case runs with (the oracle gets the same): the
    API and the plugin before 1.34 (beta, off by default in 1.32-1.33; alpha in 1.31),
    admin access (alpha in 1.32-1.33), prioritized lists (alpha in 1.33)."""
    if minor >= 34:
        gates = {"DRAListTypeAttributes": True} if LIST_ATTRS else {}
        if NODE_ALLOC:
            gates["DRANodeAllocatableResources"] = True
        if TAINT_RULES and (minor == 35 or (minor == 36 and RULES_136)):
            return {**gates, "DRADeviceTaints": True, "DRADeviceTaintRules": True}
        return gates
    gates = {"DynamicResourceAllocation": True}
    if minor >= 32:
        gates["DRAAdminAccess"] = True
    if minor >= 33:
        gates["DRAPrioritizedList"] = True
    return gates


class DeviceGen:
    def __init__(self, rng: random.Random, minor: int) -> None:
        self.r = rng
        self.minor = minor
        self.api = api_version(minor)
        self.flat = minor >= 34  # v1: devices without `basic`, requests with `exactly`

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    # ---- attributes and devices ----------------------------------------------------------

    def gpu_device(self, name: str) -> tuple[dict, dict]:
        r = self.r
        attrs: dict[str, Any] = {"model": {"string": r.choice(MODELS)}, "index": {"int": r.randint(0, 3)},
                                 "healthy": {"bool": self.chance(0.8)},
                                 "driverVersion": {"version": r.choice(VERSIONS)},
                                 f"{GPU}/numa": {"int": r.randint(0, 1)}}
        if self.chance(0.3):
            attrs["example.com/rack"] = {"string": r.choice(["r1", "r2"])}
        if LIST_ATTRS:
            attrs["models"] = {"strings": [r.choice(MODELS) for _ in range(r.randint(1, 3))]}
            attrs["firmware"] = {"versions": [r.choice(VERSIONS) for _ in range(r.randint(1, 2))]}
            attrs["lanes"] = {"bools": [self.chance(0.5) for _ in range(r.randint(1, 2))]}
            if self.chance(0.5):
                attrs[f"{GPU}/numa"] = {"ints": [r.randint(0, 2) for _ in range(r.randint(1, 3))]}
            if "example.com/rack" in attrs and self.chance(0.5):
                attrs["example.com/rack"] = {"strings": r.sample(["r1", "r2", "r3"], r.randint(1, 2))}
        caps = {"memory": r.choice(MEMORY)}
        return attrs, caps

    def nic_device(self) -> tuple[dict, dict]:
        r = self.r
        speed = {"int": r.choice([10, 25, 100])}  # the draws in the order they had before LIST_ATTRS
        numa: dict[str, Any] = {"int": r.randint(0, 1)}
        if LIST_ATTRS and self.chance(0.5):
            numa = {"ints": [r.randint(0, 2) for _ in range(r.randint(1, 2))]}
        return ({"speed": speed, f"{GPU}/numa": numa,
                 "rdma": {"bool": self.chance(0.5)}}, {"bandwidth": r.choice(["10G", "25G", "100G"])})

    def network_nics(self, objs: list[dict], classes: list[str], network: list) -> None:
        """The class `nic` and one or two network-attached slices of NICs (allNodes or a node
        selector), added to ``objs``; each device with its selector into ``network``."""
        r = self.r
        classes.append("nic")
        objs.append({"apiVersion": self.api, "kind": "DeviceClass", "metadata": {"name": "nic"},
                     "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{NIC}"'}}]}})
        for i in range(r.randint(1, 2)):
            if self.chance(0.5):
                where: dict[str, Any] = {"allNodes": True}
                sel = None
            else:
                key, val = r.choice([("disk", "ssd"), ("disk", "hdd"), ("tier", "a"),
                                     ("topology.kubernetes.io/zone", "za")])
                sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In",
                                                                    "values": [val]}]}]}
                where = {"nodeSelector": sel}
            devs = [(f"nic-{k}", *self.nic_device()) for k in range(r.randint(1, 3))]
            objs.append(self.slice_(f"net{i}", NIC, f"net{i}", 1, [self.device(d, a, cap) for d, a, cap in devs],
                                    where))
            network.extend(((NIC, f"net{i}", d), sel) for d, _, _ in devs)

    def allocated_place(self, inventory: dict, network: list, taken: set) -> tuple[str | None, list, dict | None] | None:
        """Where a claim allocated in the cluster has its devices: a node's (seven in ten when
        there are network devices too) or one network slice's; (node or None, the free
        devices, the allocation's node selector), or None when there are no devices."""
        r = self.r
        if inventory and (not network or self.chance(0.7)):
            node = r.choice(sorted(inventory))
            return node, [d for d in inventory[node] if d not in taken], {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        if network:
            pick = r.choice(network)
            return None, [d for d, sl in network if sl == pick[1] and d not in taken], pick[1]
        return None

    def device(self, name: str, attrs: dict, caps: dict) -> dict:
        if self.minor >= 32:
            cap = {k: {"value": v} for k, v in caps.items()}
        else:
            cap = dict(caps)  # v1alpha3: plain quantities
        body = {"attributes": attrs, "capacity": cap}
        if TAINT_RULES and self.minor >= 36 and self.chance(0.3):
            body["taints"] = [self.device_taint() for _ in range(self.r.randint(1, 2))]
        if NODE_ALLOC and self.chance(0.5):
            mappings = {}
            if self.chance(0.7):
                mappings["cpu"] = {"allocationMultiplier": self.r.choice(["250m", "1", "2", "3"])}
            if not mappings or self.chance(0.5):
                mappings["memory"] = {"allocationMultiplier": self.r.choice(["512Mi", "1Gi", "3Gi"])}
            body["nodeAllocatableResourceMappings"] = mappings
        return {"name": name, **body} if self.flat else {"name": name, "basic": body}

    @staticmethod
    def mapped(objs: list[dict], devs: list[tuple[str, str, str]]) -> dict[str, str]:
        """What upstream's buildNodeAllocatableDRAInfo gives a claim allocated these devices:
        per resource the sum of the devices' multipliers (devgen's mappings have no
        capacityKey), in millis (cpu) or bytes."""
        units = {"m": 10**-3, "Mi": 2**20, "Gi": 2**30}
        total: dict[str, float] = {}
        want = {(d[1], d[2]) for d in devs}
        for o in objs:
            if o.get("kind") != "ResourceSlice":
                continue
            for d in o["spec"].get("devices") or []:
                body = d.get("basic", d)
                if (o["spec"]["pool"]["name"], d["name"]) not in want:
                    continue
                for res, m in (body.get("nodeAllocatableResourceMappings") or {}).items():
                    q = m["allocationMultiplier"]
                    suffix = next((u for u in units if q.endswith(u)), "")
                    total[res] = total.get(res, 0) + float(q[:len(q) - len(suffix)] if suffix else q) * \
                        units.get(suffix, 1)
        return {k: (f"{round(v * 1000)}m" if k == "cpu" else str(round(v))) for k, v in total.items()}

    def node_allocatable_status(self, p: dict, claim: str, resources: dict[str, str]) -> None:
        """A pod's status entry for ``claim`` (DRANodeAllocatableResources): ``resources``,
        else an arbitrary cpu and / or memory (the API server takes any node allocatable
        resource with a non-negative quantity)."""
        r = self.r
        if not resources:
            if self.chance(0.7):
                resources["cpu"] = r.choice(["100m", "500m", "1", "2"])
            if not resources or self.chance(0.4):
                resources["memory"] = r.choice(["256Mi", "1Gi", "2Gi"])
        st = p.setdefault("status", {}).setdefault("nodeAllocatableResourceClaimStatuses", [])
        st.append({"resourceClaimName": claim, "containers": ["c"], "resources": resources})

    def device_taint(self) -> dict:
        """A taint in a slice's device (1.36): NoSchedule or NoExecute."""
        taint: dict[str, Any] = {"key": self.r.choice(TAINT_KEYS), "effect": self.r.choice(["NoSchedule", "NoExecute"])}
        if self.chance(0.5):
            taint["value"] = self.r.choice(["a", "b"])
        return taint

    def slice_(self, name: str, driver: str, pool: str, count: int, devices: list[dict], where: dict,
               generation: int = 1) -> dict:
        spec = {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
                **where, "devices": devices}
        return {"apiVersion": self.api, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}

    # ---- requests ------------------------------------------------------------------------

    def gpu_selector(self) -> str:
        r = self.r
        if LIST_ATTRS and self.chance(0.6):
            return r.choice([
                f'device.attributes["{GPU}"].models.includes("{r.choice(MODELS)}")',
                f'"{r.choice(MODELS)}" in device.attributes["{GPU}"].models',
                f'device.attributes["{GPU}"].firmware.exists(v, v.isGreaterThan(semver("{r.choice(["1.5.0", "2.0.0"])}")))',
                f'device.attributes["{GPU}"].numa.includes({r.randint(0, 2)})',
                f'device.attributes["{GPU}"].lanes.includes(true)',
                f'size(device.attributes["{GPU}"].models) > 1',
                f'device.attributes["{GPU}"].models.all(m, m != "t4")',
                f'device.attributes["{GPU}"].model.includes("{r.choice(MODELS)}")',
            ])
        return r.choice([
            f'device.attributes["{GPU}"].model == "{r.choice(MODELS)}"',
            f'device.attributes["{GPU}"].index < {r.randint(1, 3)}',
            f'device.attributes["{GPU}"].healthy',
            f'device.capacity["{GPU}"].memory.compareTo(quantity("{r.choice(["20Gi", "40Gi", "64Gi"])}")) >= 0',
            f'device.attributes["{GPU}"].driverVersion.isGreaterThan(semver("{r.choice(["1.5.0", "2.0.0"])}"))',
            f'device.attributes["{GPU}"].driverVersion.isLessThan(semver("2.0.0"))',
            '"rack" in device.attributes["example.com"]',
            f'device.attributes["{GPU}"].model in ["a100", "h100"] && device.attributes["{GPU}"].numa == 0',
        ])

    def nic_selector(self) -> str:
        r = self.r
        return r.choice([
            f'device.attributes["{NIC}"].speed >= {r.choice([25, 100])}',
            f'device.attributes["{NIC}"].rdma',
            f'device.capacity["{NIC}"].bandwidth.isGreaterThan(quantity("20G"))',
        ])

    def exact(self, cls: str, admin_ok: bool) -> dict:
        r = self.r
        e: dict[str, Any] = {"deviceClassName": cls}
        if self.chance(0.4):
            e["selectors"] = [{"cel": {"expression": self.gpu_selector() if cls.startswith("gpu") else
                                       self.nic_selector()}}]
        if self.chance(0.15):
            e["allocationMode"] = "All"
        else:
            e["allocationMode"] = "ExactCount"
            e["count"] = r.choice([1, 1, 1, 2, 2, 3])
        if admin_ok and self.chance(0.08):
            e["adminAccess"] = True
        if TAINT_RULES and self.chance(0.4):
            e["tolerations"] = [self.toleration() for _ in range(r.randint(1, 2))]
        return e

    def toleration(self) -> dict:
        r = self.r
        t: dict[str, Any] = {"key": r.choice(TAINT_KEYS)}
        if self.chance(0.5):
            t["operator"] = "Exists"
        else:
            t["value"] = r.choice(["a", "b"])
        if self.chance(0.5):
            t["effect"] = r.choice(["NoSchedule", "NoExecute"])
        return t

    def taint_rules(self, devices: list[tuple[str, str, str]]) -> list[dict]:
        """0-3 DeviceTaintRules (resource.k8s.io/v1alpha3; 1.36: v1beta2) selecting by
        driver, pool and device name (any of them left out), NoSchedule, NoExecute or None."""
        r = self.r
        out = []
        for i in range(r.choice([0, 1, 1, 2, 3])):
            sel: dict[str, Any] = {}
            pick = r.choice(devices) if devices else (GPU, "p", "gpu-00")
            for k, v in zip(("driver", "pool", "device"), pick):
                if self.chance(0.5):
                    sel[k] = v
            taint: dict[str, Any] = {"key": r.choice(TAINT_KEYS), "effect": r.choice(["NoSchedule", "NoExecute", "None"])}
            if self.chance(0.5):
                taint["value"] = r.choice(["a", "b"])
            spec: dict[str, Any] = {"taint": taint}
            if sel or self.chance(0.5):
                spec["deviceSelector"] = sel
            out.append({"apiVersion": "resource.k8s.io/" + ("v1beta2" if self.minor >= 36 else "v1alpha3"),
                        "kind": "DeviceTaintRule",
                        "metadata": {"name": f"rule{i}"}, "spec": spec})
        return out

    def request(self, name: str, classes: list[str], admin_ok: bool) -> dict:
        r = self.r
        if self.minor >= 33 and self.chance(0.25):
            subs = []
            for j in range(r.randint(1, 3)):
                e = self.exact(r.choice(classes), False)
                subs.append({"name": f"s{j}", **e})
            return {"name": name, "firstAvailable": subs}
        e = self.exact(r.choice(classes), admin_ok)
        return {"name": name, "exactly": e} if self.flat else {"name": name, **e}

    def claim_spec(self, classes: list[str], admin_ok: bool) -> dict:
        r = self.r
        reqs = [self.request(f"r{i}", classes, admin_ok) for i in range(1 if self.chance(0.6) else r.randint(2, 3))]
        devices: dict[str, Any] = {"requests": reqs}
        if self.chance(0.4 if LIST_ATTRS else 0.25):
            kind = "distinctAttribute" if LIST_ATTRS and self.chance(0.4) else "matchAttribute"
            names = [f"{GPU}/numa", f"{GPU}/model", "example.com/rack"] + ([f"{GPU}/models"] if LIST_ATTRS else [])
            c: dict[str, Any] = {kind: r.choice(names)}
            if len(reqs) > 1 and self.chance(0.5):
                c["requests"] = [q["name"] for q in r.sample(reqs, 2)]
            devices["constraints"] = [c]
        return {"devices": devices}

    # ---- the cluster's device objects ----------------------------------------------------

    def relax(self, c: dict) -> None:
        """Seven clusters in ten: no taints, no cordons, an incoming pod without node
        selection, spreading or pod affinity and with small requests, so that devices
        decide more often."""
        if not self.chance(0.7):
            return
        for n in c["nodes"]:
            n.pop("taints", None)
            n.pop("unschedulable", None)
            if "allocatable" in n:
                n["allocatable"]["pods"] = "110"
        pod = c["pod"]
        for k in ("nodeSelector", "affinity", "topologySpreadConstraints", "ports", "resources", "overhead",
                  "initContainers"):
            pod.pop(k, None)
        pod["requests"] = {"cpu": "100m"}

    def objects(self, c: dict) -> None:
        """Adds c["devices"] (manifests) and the pods' resourceClaims."""
        r = self.r
        self.relax(c)
        objs: list[dict] = []
        nodes = [n["name"] for n in c["nodes"]]
        inventory: dict[str, list[tuple[str, str, str]]] = {}  # node -> (driver, pool, device)
        classes = ["gpu"]
        objs.append({"apiVersion": self.api, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                     "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}})
        if EXTENDED:
            self.extended(c, objs[-1])
        if self.chance(0.5):
            classes.append("gpu-big")
            objs.append({"apiVersion": self.api, "kind": "DeviceClass", "metadata": {"name": "gpu-big"},
                         "spec": {"selectors": [
                             {"cel": {"expression": f'device.driver == "{GPU}"'}},
                             {"cel": {"expression": f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) >= 0'}}]}})
        for n in nodes:
            if not self.chance(0.8):
                continue
            for p in range(1 if self.chance(0.7) else 2):
                pool = n if p == 0 else f"{n}-b"
                devs = [(f"gpu-{p}{k}", *self.gpu_device(f"gpu-{p}{k}")) for k in range(r.randint(1, 4))]
                split = len(devs) > 1 and self.chance(0.2)
                parts = [devs[:1], devs[1:]] if split else [devs]
                for i, part in enumerate(parts):
                    objs.append(self.slice_(f"{pool}-gpu-{i}", GPU, pool, len(parts),
                                            [self.device(d, a, cap) for d, a, cap in part], {"nodeName": n}))
                inventory.setdefault(n, []).extend((GPU, pool, d) for d, _, _ in devs)
        network: list[tuple[tuple[str, str, str], dict | None]] = []  # device, allocation node selector
        if self.chance(0.5):
            self.network_nics(objs, classes, network)
        # claims already allocated: on a node's devices, or on network devices
        taken: set[tuple[str, str, str]] = set()
        shared: list[dict] = []
        bound = [p for p in c["pods"] if p.get("namespace", "default") == "default"]
        for i in range(r.randint(0, 3)):
            place = self.allocated_place(inventory, network, taken)
            if place is None:
                break
            node, free, sel = place
            if not free:
                continue
            devs = r.sample(free, min(len(free), r.choice([1, 1, 2])))
            taken.update(devs)
            cls = "gpu" if devs[0][0] == GPU else "nic"
            admin = self.minor >= 31 and self.chance(0.1)
            e: dict[str, Any] = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": len(devs)}
            if admin:
                e["adminAccess"] = True
            req = {"name": "r0", "exactly": e} if self.flat else {"name": "r0", **e}
            results = [{"request": "r0", "driver": d[0], "pool": d[1], "device": d[2],
                        **({"adminAccess": True} if admin and self.minor >= 32 else {})} for d in devs]
            alloc: dict[str, Any] = {"devices": {"results": results}}
            if sel is not None:
                alloc["nodeSelector"] = sel
            users = [p for p in bound if node is None or p["node"] == node]
            users = r.sample(users, min(len(users), r.randint(0, 2)))
            if not self.chance(0.8):
                users = []
            claim = {"apiVersion": self.api, "kind": "ResourceClaim",
                     "metadata": {"name": f"shared{i}", "namespace": "default"},
                     "spec": {"devices": {"requests": [req]}},
                     "status": {"allocation": alloc,
                                "reservedFor": [{"resource": "pods", "name": p["name"], "uid": f"default/{p['name']}"}
                                                for p in users]}}
            for p in users:
                p.setdefault("resourceClaims", []).append({"name": f"c{i}", "resourceClaimName": f"shared{i}"})
                if NODE_ALLOC and self.chance(0.8):
                    self.node_allocatable_status(p, f"shared{i}", self.mapped(objs, devs))
            if not users:
                del claim["status"]["reservedFor"]
            objs.append(claim)
            shared.append(claim)
        # the incoming pod's claims
        pod = c["pod"]
        ns = pod.get("namespace", "default")
        admin_ok = self.minor == 31 or self.minor >= 32
        entries = []
        for j in range(r.randint(1, 2) if self.chance(0.9) else 0):
            kind = r.random()
            if kind < 0.35:
                objs.append({"apiVersion": self.api, "kind": "ResourceClaimTemplate",
                             "metadata": {"name": f"t{j}", "namespace": ns},
                             "spec": {"spec": self.claim_spec(classes, admin_ok)}})
                entries.append({"name": f"e{j}", "resourceClaimTemplateName": f"t{j}"})
            elif kind < 0.8 or not shared or ns != "default":
                objs.append({"apiVersion": self.api, "kind": "ResourceClaim",
                             "metadata": {"name": f"own{j}", "namespace": ns},
                             "spec": self.claim_spec(classes, admin_ok)})
                entries.append({"name": f"e{j}", "resourceClaimName": f"own{j}"})
            else:
                sc = r.choice(shared)
                name = sc["metadata"]["name"]
                if any(e.get("resourceClaimName") == name for e in entries):
                    continue
                entries.append({"name": f"e{j}", "resourceClaimName": name})
        if entries:
            pod["resourceClaims"] = entries
            named = [e["resourceClaimName"] for e in entries if e.get("resourceClaimName")]
            if NODE_ALLOC and named and self.chance(0.2):
                self.node_allocatable_status(pod, r.choice(named), {})
        if TAINT_RULES and (self.minor == 35 or (self.minor == 36 and RULES_136)):
            objs.extend(self.taint_rules([d for devs in inventory.values() for d in devs] + [d for d, _ in network]))
        c["devices"] = objs


    def extended(self, c: dict, gpu_class: dict) -> None:
        """--extended: the gpu class's extendedResourceName, the incoming pod's request."""
        r = self.r
        backed = self.chance(0.7)
        if backed:
            gpu_class["spec"]["extendedResourceName"] = EXTENDED_NAME
        if self.chance(0.8):
            names = [EXTENDED_NAME, IMPLICIT_PREFIX + "gpu"] if backed else [IMPLICIT_PREFIX + "gpu"]
            c["pod"].setdefault("requests", {})[r.choice(names)] = str(r.randint(1, 2))


def cover(coverage: Any, c: dict, o: dict) -> None:
    """What a --devices case exercised upstream."""
    if c["pod"].get("resourceClaims"):
        coverage["devices: pod with claims"] += 1
    with_status = [p for p in c["pods"] if (p.get("status") or {}).get("nodeAllocatableResourceClaimStatuses")]
    if with_status:
        coverage["devices: bound pods with node allocatable statuses"] += 1
        nodes = {p["node"] for p in with_status}
        if any(s.get("code") not in ("Success", "Skip") and n in nodes
               for n, s in (o.get("filter", {}).get("NodeResourcesFit") or {}).items()):
            coverage["devices: NodeResourcesFit rejects a node with such a pod"] += 1
    if o.get("allocations"):
        coverage["devices: allocation compared"] += 1
        results = [x for node in o["allocations"].values() for devs in node.values() for x in devs or []]
        if any("/" in x.split("@")[1] for x in results):
            coverage["devices: subrequest allocated"] += 1
        if len({x.split("/")[1] for x in results}) > 1:
            coverage["devices: several pools used"] += 1
    if o.get("postFilter", {}).get("reasons") == ["deallocation of ResourceClaim completed"]:
        coverage["devices: PostFilter deallocates"] += 1
    dr = o.get("filter", {}).get("DynamicResources") or {}
    reasons = {", ".join(s.get("reasons") or []) for s in dr.values() if s["code"] not in ("Success", "Skip")}
    for x in reasons:
        coverage["devices: " + (x if "cannot add device" not in x else "constraint error")[:60]] += 1
    if EXTENDED and any(k == EXTENDED_NAME or k.startswith(IMPLICIT_PREFIX) for k in c["pod"].get("requests") or {}):
        coverage["devices: pod requests an extended resource"] += 1
        if any(k.endswith("/<extended-resources>") for n in (o.get("allocations") or {}).values() for k in n):
            coverage["devices: extended resource allocated"] += 1
    texts = json.dumps(c.get("devices"))
    for word in ("adminAccess", "firstAvailable", "matchAttribute", '"All"', "allNodes", "nodeSelector",
                 "ResourceClaimTemplate", "DeviceTaintRule", "tolerations", "taints", "distinctAttribute",
                 "includes(", '"ints"'):
        if word in texts:
            coverage[f"devices: {word.strip(chr(34))} in case"] += 1


class SequenceDeviceGen(DeviceGen):
    """Devices for a ``schedule`` sequence (``seqtest.py --devices``; 1.34+ shapes): the
    cluster's node-local and network-attached slices and classes as ``objects`` makes them,
    claims allocated to bound pods (reserved by one or two of them, or by none), unallocated
    claims several incoming pods share, and the incoming pods' claims: their own, shared ones
    and ResourceClaimTemplates (replicas of one pod template share its entries, so each
    replica gets its own claim ``<pod>-<entry>``)."""

    def sequence(self, s: dict) -> None:
        r = self.r
        objs: list[dict] = []
        classes = ["gpu"]
        objs.append({"apiVersion": self.api, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                     "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}})
        if self.chance(0.5):
            classes.append("gpu-big")
            objs.append({"apiVersion": self.api, "kind": "DeviceClass", "metadata": {"name": "gpu-big"},
                         "spec": {"selectors": [
                             {"cel": {"expression": f'device.driver == "{GPU}"'}},
                             {"cel": {"expression": f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) >= 0'}}]}})
        inventory: dict[str, list[tuple[str, str, str]]] = {}
        for n in (n["name"] for n in s["nodes"]):
            if not self.chance(0.7):
                continue
            for p in range(1 if self.chance(0.7) else 2):
                pool = n if p == 0 else f"{n}-b"
                devs = [(f"gpu-{p}{k}", *self.gpu_device(f"gpu-{p}{k}")) for k in range(r.randint(1, 4))]
                parts = [devs[:1], devs[1:]] if len(devs) > 1 and self.chance(0.2) else [devs]
                for i, part in enumerate(parts):
                    objs.append(self.slice_(f"{pool}-gpu-{i}", GPU, pool, len(parts),
                                            [self.device(d, a, cap) for d, a, cap in part], {"nodeName": n}))
                inventory.setdefault(n, []).extend((GPU, pool, d) for d, _, _ in devs)
        network: list[tuple[tuple[str, str, str], dict | None]] = []
        if self.chance(0.4):
            self.network_nics(objs, classes, network)
        # claims allocated to bound pods (reserved by one or two of a node's pods, or by none)
        taken: set[tuple[str, str, str]] = set()
        shared: dict[str, list[str]] = {"default": [], "ns1": []}
        for i in range(r.randint(0, 4)):
            place = self.allocated_place(inventory, network, taken)
            if place is None:
                break
            node, free, sel = place
            if not free:
                continue
            ns = r.choice(["default", "default", "ns1"])
            devs = r.sample(free, min(len(free), r.choice([1, 1, 2])))
            taken.update(devs)
            admin = self.chance(0.1)
            e: dict[str, Any] = {"deviceClassName": "gpu" if devs[0][0] == GPU else "nic",
                                 "allocationMode": "ExactCount", "count": len(devs)}
            if admin:
                e["adminAccess"] = True
            results = [{"request": "r0", "driver": d[0], "pool": d[1], "device": d[2],
                        **({"adminAccess": True} if admin else {})} for d in devs]
            alloc: dict[str, Any] = {"devices": {"results": results}}
            if sel is not None:
                alloc["nodeSelector"] = sel
            users = [p for p in s["pods"] if (p.get("namespace") or "default") == ns
                     and (node is None or p["node"] == node)]
            users = r.sample(users, min(len(users), r.randint(1, 2))) if self.chance(0.85) else []
            name = f"alloc{i}"
            claim: dict[str, Any] = {"apiVersion": self.api, "kind": "ResourceClaim",
                                     "metadata": {"name": name, "namespace": ns},
                                     "spec": {"devices": {"requests": [{"name": "r0", "exactly": e}]}},
                                     "status": {"allocation": alloc}}
            if users:
                claim["status"]["reservedFor"] = [{"resource": "pods", "name": p["name"], "uid": f"{ns}/{p['name']}"}
                                                  for p in users]
            for p in users:
                p.setdefault("resourceClaims", []).append({"name": f"a{i}", "resourceClaimName": name})
            objs.append(claim)
            shared[ns].append(name)
        # unallocated claims several incoming pods share
        for ns in ("default", "ns1"):
            for i in range(r.randint(0, 2) if self.chance(0.4) else 0):
                name = f"shared{i}"
                objs.append({"apiVersion": self.api, "kind": "ResourceClaim",
                             "metadata": {"name": name, "namespace": ns}, "spec": self.claim_spec(classes, True)})
                shared[ns].append(name)
        # the incoming pods' claims: replicas of one template share its entries
        by_sig: dict[str, list[dict]] = {}
        for q in s["schedule"]:
            by_sig.setdefault(json.dumps({k: v for k, v in q.items() if k != "name"}, sort_keys=True), []).append(q)
        ntemplates = 0
        for group in by_sig.values():
            ns = group[0].get("namespace") or "default"
            if len(group) > 1:
                if not self.chance(0.75):
                    continue
                entries = []
                for j in range(r.randint(1, 2)):
                    if shared[ns] and self.chance(0.25):
                        name = r.choice(shared[ns])
                        if not any(x.get("resourceClaimName") == name for x in entries):
                            entries.append({"name": f"e{j}", "resourceClaimName": name})
                        continue
                    t = f"t{ntemplates}"
                    ntemplates += 1
                    objs.append({"apiVersion": self.api, "kind": "ResourceClaimTemplate",
                                 "metadata": {"name": t, "namespace": ns},
                                 "spec": {"spec": self.claim_spec(classes, True)}})
                    entries.append({"name": f"e{j}", "resourceClaimTemplateName": t})
                for q in group:
                    q["resourceClaims"] = copy.deepcopy(entries)
                continue
            for q in group:
                if not self.chance(0.7):
                    continue
                entries = []
                for j in range(r.randint(1, 2)):
                    k = r.random()
                    if k < 0.35:
                        t = f"t{ntemplates}"
                        ntemplates += 1
                        objs.append({"apiVersion": self.api, "kind": "ResourceClaimTemplate",
                                     "metadata": {"name": t, "namespace": ns},
                                     "spec": {"spec": self.claim_spec(classes, True)}})
                        entries.append({"name": f"e{j}", "resourceClaimTemplateName": t})
                    elif k < 0.75 or not shared[ns]:
                        name = f"c-{q['name']}-{j}"
                        objs.append({"apiVersion": self.api, "kind": "ResourceClaim",
                                     "metadata": {"name": name, "namespace": ns},
                                     "spec": self.claim_spec(classes, True)})
                        entries.append({"name": f"e{j}", "resourceClaimName": name})
                    else:
                        name = r.choice(shared[ns])
                        if not any(x.get("resourceClaimName") == name for x in entries):
                            entries.append({"name": f"e{j}", "resourceClaimName": name})
                if entries:
                    q["resourceClaims"] = entries
        s["devices"] = objs
