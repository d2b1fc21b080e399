#!/usr/bin/env python3
"""Random `replicas: max` sequences through a backend: does kspread's `capacity` agree?

A maintainer's tool, not part of CI (dev/README.md, "`replicas: max` through the backend").
It writes N random sequences at one version (2-5 nodes of distinct sizes in two zones, some
tainted or labelled, bound pods of three priorities; before the entry, sometimes a pending pod
that needs a replica on its node and a step; the entry's pod with a spread constraint, an
anti-affinity, a node selector, a toleration or a priority; after it, sometimes a pod that may
preempt, a step and a second entry), runs them with ``kspread run --backend B --compare`` and
sorts every case that differs: `capacity` differs (a bug of one side); the rest differ where
kspread reports a tie (a node tie in ``ties``, or preemption "decided by no criterion"), whose
pick upstream makes at random; or not (to explain).

    export PYTHONPATH=$PWD
    python3 dev/maxrandom.py --backend .backend-build/kspread-backend [--version 1.35] [-n 40] [--seed 1]
        [--keep FILE] [-v]
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _entry(r: random.Random, name: str) -> dict[str, Any]:
    labels = {"app": name}
    p: dict[str, Any] = {"name": name, "replicas": "max", "labels": labels,
                         "requests": {"cpu": r.choice(["500m", "1", "1500m", "2"]),
                                      "memory": r.choice(["512Mi", "1Gi", "2Gi"])}}
    x = r.random()
    if x < 0.3:
        p["topologySpreadConstraints"] = [{"maxSkew": r.choice([1, 2]), "topologyKey": r.choice([ZONE, HOST]),
                                           "whenUnsatisfiable": r.choice(["DoNotSchedule", "ScheduleAnyway"]),
                                           "labelSelector": {"matchLabels": labels}}]
    elif x < 0.45:
        p["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": labels}, "topologyKey": r.choice([HOST, ZONE])}]}}
    elif x < 0.55:
        p["nodeSelector"] = {"disk": "ssd"}
    if r.random() < 0.3:
        p["tolerations"] = [{"key": "t", "operator": "Exists"}]
    if r.random() < 0.3:
        p["priority"] = r.choice([-10, 0, 100])
    return p


def case(r: random.Random, name: str, version: str) -> dict[str, Any]:
    nn = r.randint(2, 5)
    cpus, mems = r.sample(range(2, 12), nn), r.sample([3, 5, 7, 9, 11, 13], nn)
    nodes = []
    for k in range(nn):
        node: dict[str, Any] = {"name": f"n{k}", "labels": {ZONE: r.choice("ab")},
                                "allocatable": {"cpu": str(cpus[k]), "memory": f"{mems[k]}Gi",
                                                "pods": r.randint(3, 12)}}
        if r.random() < 0.3:
            node["labels"]["disk"] = "ssd"
        if r.random() < 0.2:
            node["taints"] = [{"key": "t", "value": "x", "effect": r.choice(["NoSchedule", "PreferNoSchedule"])}]
        nodes.append(node)
    pods = [{"name": f"e{k}", "node": f"n{r.randrange(nn)}", "priority": r.choice([-10, 0, 50]),
             "labels": {"app": r.choice(["w", "x"])}, "requests": {"cpu": r.choice(["500m", "1", "2"]),
                                                                    "memory": "1Gi"}}
            for k in range(r.randint(0, 4))]
    schedule: list[dict[str, Any]] = []
    if r.random() < 0.4:
        pre: dict[str, Any] = {"name": "pre", "labels": {"app": "p"},
                               "requests": {"cpu": r.choice(["1", "3"]), "memory": "1Gi"}}
        if r.random() < 0.5:
            pre["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "w"}}, "topologyKey": HOST}]}}
        schedule.append(pre)
    if r.random() < 0.3:
        schedule.append(r.choice([{"cordon": f"n{r.randrange(nn)}"}, {"drain": f"n{r.randrange(nn)}"},
                                  {"addNode": {"name": "new", "labels": {ZONE: "b"},
                                               "allocatable": {"cpu": "3", "memory": "8Gi", "pods": 5}}}]))
    schedule.append(_entry(r, "w"))
    if r.random() < 0.4:
        schedule.append({"name": "after", "priority": r.choice([0, 1000]), "requests": {"cpu": "2", "memory": "1Gi"}})
    if r.random() < 0.4:
        schedule.append(r.choice([{"drain": f"n{r.randrange(nn)}"}, {"wait": 5}, {"uncordon": f"n{r.randrange(nn)}"}]))
    if r.random() < 0.5:
        schedule.append(_entry(r, "v"))
    return {"apiVersion": "kspread/v1", "kind": "Case", "name": name, "version": version, "nodes": nodes,
            **({"pods": pods} if pods else {}), "schedule": schedule,
            # a placeholder: --compare compares the two schedulers' whole results
            "expect": {"capacity": {"w": 0}}}


def _kspread(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "kspread", "run", *args], capture_output=True, text=True,
                          check=False).stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", required=True)
    ap.add_argument("--version", default="1.35")
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="write the cases to this file (else a temporary one)")
    ap.add_argument("-v", action="store_true", help="print each difference")
    args = ap.parse_args()
    r = random.Random(args.seed)
    docs = [case(r, f"max-{args.seed}-{i}", args.version) for i in range(args.n)]
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or str(Path(tmp) / "max.yaml")
        Path(path).write_text(yaml.safe_dump_all(docs, sort_keys=False))
        out = _kspread("-q", "--backend", args.backend, "--compare", path)
        differ: dict[str, list[str]] = {}
        current = None
        for line in out.splitlines():
            if m := re.match(r"DIFFER (\S+) ", line):
                current = m.group(1)
                differ[current] = []
            elif current is not None and line.startswith("  "):
                differ[current].append(line.strip())
            else:
                current = None
        sorts: dict[str, list[str]] = {"capacity": [], "tie": [], "unexplained": []}
        for name, lines in differ.items():
            if any(x.startswith("capacity") for x in lines):
                sorts["capacity"].append(name)
                continue
            seen = _kspread("-v", "--case", name, path)
            tied = "decided by no criterion" in seen or re.search(r"^  ties:\n    \S", seen, re.M) is not None
            sorts["tie" if tied else "unexplained"].append(name)
        if args.v or sorts["capacity"] or sorts["unexplained"]:
            for name, lines in differ.items():
                kind = next(k for k, v in sorts.items() if name in v)
                print(f"{name} ({kind}):", *lines[:8], sep="\n  ")
    summary = re.findall(r"agrees with it on \d+ of \d+ cases", out)
    print(f"{args.n} random `replicas: max` sequences at {args.version} (seed {args.seed}): "
          f"{summary[0] if summary else out.strip().splitlines()[-1:]}; differing: "
          f"{len(sorts['capacity'])} in capacity, {len(sorts['tie'])} at a tie kspread reports, "
          f"{len(sorts['unexplained'])} not explained")
    return 1 if sorts["capacity"] or sorts["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())
