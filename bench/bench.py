"""Benchmarks (not part of the test suite): loading and scheduling at cluster scale.

    python bench/bench.py [--nodes 5000] [--pods 150000] [--sequence 200]

Generates a case with NODES nodes in 10 zones and PODS bound pods of 500
Services, writes it as YAML and as JSON in a temporary directory, and times:
reading each file, validating and building the case, one scheduling cycle with
the given profile, and a `schedule` sequence of SEQUENCE pods.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import yaml


def make_case(n_nodes: int, n_pods: int, sequence: int, profile: dict) -> dict:
    nodes = [f"node-{i}" for i in range(n_nodes)]
    zones: dict[str, list[str]] = {}
    for i, n in enumerate(nodes):
        zones.setdefault(f"zone-{i % 10}", []).append(n)
    apps = 500
    pods = []
    for i in range(n_pods):
        app = i % apps
        pods.append({"name": f"app{app}-{i}", "node": nodes[(i * 7919) % n_nodes],
                     "labels": {"app": f"app{app}", "tier": "web" if app % 2 else "db"},
                     "requests": {"cpu": "100m", "memory": "128Mi"}})
    owners = [{"kind": "Service", "name": f"app{a}", "selector": {"app": f"app{a}"}} for a in range(apps)]
    case = {
        "apiVersion": "kspread/v1", "kind": "Case", "name": "scale", "version": "1.24",
        "profile": profile, "zones": zones, "nodes": nodes, "owners": owners, "pods": pods,
        "expect": {},
    }
    if sequence > 1:
        case["schedule"] = [{"name": f"new-{k}", "labels": {"app": f"app{k % apps}"}} for k in range(sequence)]
    else:
        case["pod"] = {"name": "new", "labels": {"app": "app7"}}
    return case


def timed(label: str, fn):
    t = time.perf_counter()
    out = fn()
    print(f"{label:<44} {time.perf_counter() - t:8.2f} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150000)
    ap.add_argument("--sequence", type=int, default=200)
    ap.add_argument("--profile", default='{"score": ["SelectorSpread"]}', help="profile as JSON")
    args = ap.parse_args()

    from kspread.loader import load_case, read_file
    from kspread.scheduler import Scheduler, run_case

    profile = json.loads(args.profile)
    tmp = Path(tempfile.mkdtemp(prefix="kspread-bench-"))
    single = make_case(args.nodes, args.pods, 1, profile)
    seq = make_case(args.nodes, args.pods, args.sequence, profile)
    y = tmp / "scale.yaml"
    j = tmp / "scale.json"
    y.write_text(yaml.safe_dump(single, sort_keys=False, default_flow_style=None), encoding="utf-8")
    j.write_text(json.dumps(single), encoding="utf-8")
    print(f"{args.nodes} nodes, {args.pods} pods; YAML {y.stat().st_size / 1e6:.1f} MB, JSON {j.stat().st_size / 1e6:.1f} MB")
    timed("read YAML", lambda: read_file(y))
    res = timed("read JSON", lambda: read_file(j))
    case = timed("validate + build case", lambda: load_case(res.docs[0]))
    sched = timed("build snapshot + framework", lambda: Scheduler(case))
    timed("one scheduling cycle", lambda: sched.schedule_one(case.incoming[0]))
    sj = tmp / "seq.json"
    sj.write_text(json.dumps(seq), encoding="utf-8")
    seq_case = load_case(read_file(sj).docs[0])
    timed(f"schedule sequence of {args.sequence} pods", lambda: run_case(seq_case))


if __name__ == "__main__":
    main()
