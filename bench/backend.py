"""The backend beside kspread's engine (issue 31; not part of the test suite): CPU and wall time
per pod of upstream's scheduler (a kspread-backend binary, one ``--serve`` process, observing the
placements only) and of kspread's reference engine, on the same sequences, in one run.

    python bench/backend.py --backend .backend-build/kspread-backend
    python bench/backend.py --backend ... --shapes basic --nodes 1000 --pods 20,220

Shapes (``bench/bench.py``'s workloads, at the backend's version): ``basic`` (SchedulingBasic:
1,000 existing 100m / 500Mi pods evenly over the nodes, identical incoming pods), ``owned`` and
``mixed`` (``make_real``: one ReplicaSet in three zones; 40 owners mixing selectors, affinity,
tolerations and spread constraints), each at ``--nodes`` (1,000) with a short and a long
sequence (``--pods``, 20 and 220): the figure per pod is the long run's extra time over its
extra pods, so setup (creating the nodes, starting the scheduler) cancels out. Then
``--big``: one 1,000-pod ``basic`` sequence at 5,000 nodes, its whole time per pod.

Each measurement runs in a process of its own. kspread: ``time.process_time`` of ``run_case``.
The backend: the CPU time of its process (the children's rusage once it has ended; it serves
the one case) and the wall time of kspread's ``call_backend`` (building the input, the backend's
run, reading its answer). Ratios: the backend's figure over kspread's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))


def _case(shape: str, nodes: int, pods: int, version: str) -> dict:
    from bench import make_real, make_workload

    case = make_workload(shape, nodes, pods) if shape == "basic" else make_real(shape, nodes, pods)
    case["version"] = version
    case["name"] = f"{shape}-{nodes}-{pods}"
    return case


def worker(spec: dict) -> dict:
    import tempfile

    from kspread.format.loader import load_case, read_file

    with tempfile.TemporaryDirectory(prefix="kspread-bench-backend-") as tmp:
        path = Path(tmp) / "case.json"
        path.write_text(json.dumps(_case(spec["shape"], spec["nodes"], spec["pods"], spec["version"])))
        case = load_case(read_file(path).docs[0])
    if spec["engine"] == "kspread":
        from kspread.engine.scheduler import run_case

        t0, c0 = time.perf_counter(), time.process_time()
        _, _, placements = run_case(case)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        return {"wall_s": wall, "cpu_s": cpu, "bound": sum(1 for v in placements.values() if v is not None)}
    from kspread.workflow.backend import _Server, call_backend, observation, open_backend

    backend = open_backend(spec["backend"])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, c0 = time.perf_counter(), time.process_time()
    out = call_backend(backend, case, observation(case))
    wall, own = time.perf_counter() - t0, time.process_time() - c0
    _Server.end_all()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "python_cpu_s": own, "backend_ms": out.get("millis"),
            "bound": sum(1 for v in (out.get("placements") or {}).values() if v is not None)}


def measure(spec: dict) -> dict:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"worker failed for {spec}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--backend", default=str(ROOT / ".backend-build" / "kspread-backend"))
    ap.add_argument("--version", default="1.35", help="the backend's Kubernetes minor version")
    ap.add_argument("--shapes", default="basic,owned,mixed")
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", default="20,220", help="short,long sequence")
    ap.add_argument("--big", default="5000,1000", help="nodes,pods of the long sequence ('' to skip)")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    if not os.access(args.backend, os.X_OK):
        raise SystemExit(f"no backend at {args.backend} (backend/build.sh builds one)")
    short, long = (int(x) for x in args.pods.split(","))
    print(f"per pod, CPU ms (wall ms); backend {args.backend} at {args.version}; ratio = backend / kspread")
    print(f"{'shape':<22} {'kspread':>18} {'backend':>18} {'CPU ratio':>10} {'wall ratio':>10}")

    def row(label: str, k: dict, b: dict, pods: int) -> None:
        kc, kw = 1000 * k["cpu_s"] / pods, 1000 * k["wall_s"] / pods
        bc, bw = 1000 * b["cpu_s"] / pods, 1000 * b["wall_s"] / pods
        print(f"{label:<22} {kc:>9.2f} ({kw:>6.2f}) {bc:>9.2f} ({bw:>6.2f}) {bc / kc:>10.1f} {bw / kw:>10.1f}",
              flush=True)

    for shape in [s for s in args.shapes.split(",") if s]:
        res = {}
        for engine in ("kspread", "backend"):
            a, b = (measure({"engine": engine, "shape": shape, "nodes": args.nodes, "pods": n,
                             "version": args.version, "backend": args.backend}) for n in (short, long))
            if b["bound"] != long:
                print(f"  ({engine} bound {b['bound']} of {long} pods)")
            res[engine] = {"cpu_s": b["cpu_s"] - a["cpu_s"], "wall_s": b["wall_s"] - a["wall_s"]}
        row(f"{shape} @ {args.nodes}", res["kspread"], res["backend"], long - short)
    if args.big:
        nodes, pods = (int(x) for x in args.big.split(","))
        k = measure({"engine": "kspread", "shape": "basic", "nodes": nodes, "pods": pods, "version": args.version})
        b = measure({"engine": "backend", "shape": "basic", "nodes": nodes, "pods": pods, "version": args.version,
                     "backend": args.backend})
        row(f"basic {pods} @ {nodes} (all)", k, b, pods)
        print(f"  backend: {b['bound']} of {pods} bound, whole case {b['wall_s']:.1f} s wall, "
              f"{b['cpu_s']:.1f} s CPU (backend's own clock {b['backend_ms']} ms); kspread {k['wall_s']:.1f} s")


if __name__ == "__main__":
    main()
