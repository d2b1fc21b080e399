"""Benchmarks of the paths a user waits on before and around the engine (issue 19), run
by ``bench/bench.py --only startup --only corpus --only loading`` (or alone:
``python bench/startup.py``). Each measurement runs in a process of its own, the runs
of the things compared alternate, and each figure is the least of ``--repeat`` runs
(the machine is shared): compare the ratios, measured in one run.

* ``startup``: what installing kspread adds to a pytest run that collects no case: a
  run in an empty directory with one trivial test file, with the plugin and with
  ``-p no:kspread``; wall-clock and the child's CPU seconds (user + system).
* ``corpus``: a corpus of small cases (one per file, 2,000 by default) under pytest
  against the engine alone (a process that imports the loader and the runner, then
  reads, loads, builds, runs and compares every case in a loop:
  ``kspread.workflow.runner.check``, what a test item runs), both per case. Under
  pytest: the run over the corpus less the empty run above (so both count the imports
  of kspread, numpy and jsonschema, not the interpreter's start). And the corpus under
  ``pytest -n 2`` (pytest-xdist) against the serial run, wall-clock.
* ``loading``: a case whose 10,000 incoming pods are a ``schedule`` against one whose
  10,000 existing pods are ``pods`` of the same shapes (five request sizes, labels of
  their own): reading, then validating and building (``load_case``).

Children run with bytecode caching on (``PYTHONPYCACHEPREFIX`` in a temporary
directory, after a warm-up run), as an installed kspread has its modules compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

_SMALL_CASE = """\
apiVersion: kspread/v1
kind: Case
name: case-{i}
tags: [smoke]
version: "1.30"
nodes:
- {{name: n1, allocatable: {{cpu: "4", memory: 8Gi, pods: 110}}}}
- {{name: n2, allocatable: {{cpu: "4", memory: 8Gi, pods: 110}}, labels: {{zone: z{z}}}}}
pods:
- {{name: a, node: n1, requests: {{cpu: "1"}}}}
pod: {{name: new, requests: {{cpu: 500m}}}}
expect:
  selected: n2
"""


def write_corpus(d: Path, n: int) -> None:
    d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (d / f"case-{i:05d}.yaml").write_text(_SMALL_CASE.format(i=i, z=i % 7), encoding="utf-8")


def loading_case(which: str, n: int) -> dict:
    """``n`` pods of five shapes (request sizes; labels of their own), as the incoming
    ``schedule`` or as existing pending ``pods`` (then with one incoming ``pod``)."""
    sizes = [{"cpu": f"{100 * (k + 1)}m", "memory": f"{256 * (k + 1)}Mi"} for k in range(5)]
    items = [{"name": f"pod-{k}", "labels": {"app": f"app{k % 50}", "pod-template-hash": f"h{k}"},
              "requests": sizes[k % 5]} for k in range(n)]
    nodes = [{"name": f"node-{i}", "allocatable": {"cpu": "4", "memory": "32Gi", "pods": 110}} for i in range(100)]
    case: dict = {"apiVersion": "kspread/v1", "kind": "Case", "name": f"{which}-{n}", "nodes": nodes, "expect": {}}
    if which == "schedule":
        case["schedule"] = items
    else:
        case["pods"] = items
        case["pod"] = {"name": "new"}
    return case


# ---- workers (each in a process of its own, the tree under test on PYTHONPATH) ---------------------


def worker(spec: dict) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    from kspread.format.loader import load_case, read_file

    if spec["kind"] == "engine":
        # its imports are counted, as the pytest run over the corpus (less the empty run) counts them
        from kspread.workflow.runner import check

        files = sorted(Path(spec["dir"]).glob("*.yaml"))
        t1, c1 = time.perf_counter(), time.process_time()
        passed = 0
        for f in files:
            for doc in read_file(f).docs:
                passed += check(doc).passed
        return {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "import_s": t1 - t0,
                "import_cpu_s": c1 - c0, "cases": len(files), "passed": passed}
    path = Path(spec["file"])
    t0, c0 = time.perf_counter(), time.process_time()
    res = read_file(path)
    t1, c1 = time.perf_counter(), time.process_time()
    case = load_case(res.docs[0])
    t2, c2 = time.perf_counter(), time.process_time()
    return {"read_s": t1 - t0, "build_s": t2 - t1, "read_cpu_s": c1 - c0, "build_cpu_s": c2 - c1,
            "pods": len(case.incoming) + len(case.cluster.pods)}


# ---- the driver --------------------------------------------------------------------------------------


class Runner:
    """Children with the tree on PYTHONPATH and a private bytecode cache."""

    def __init__(self, tree: Path, cache: Path) -> None:
        self.env = dict(os.environ, PYTHONPATH=str(tree), PYTHONPYCACHEPREFIX=str(cache))
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run(self, args: list[str], cwd: Path) -> tuple[float, float, str]:
        """Wall-clock and CPU seconds (user + system) of the child, and its last line."""
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, *args], cwd=cwd, env=self.env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 5):  # 5: no test collected
            raise SystemExit(f"{args} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        lines = proc.stdout.strip().splitlines()
        return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), lines[-1] if lines else ""

    def worker(self, spec: dict, cwd: Path) -> dict:
        return json.loads(self.run([str(HERE / "startup.py"), "--worker", json.dumps(spec)], cwd)[2])


def _pytest(*args: str) -> list[str]:
    return ["-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


def _best(rows: list[tuple[float, float]]) -> tuple[float, float]:
    return min(r[0] for r in rows), min(r[1] for r in rows)


def bench_startup(r: Runner, work: Path, repeat: int) -> tuple[float, float]:
    """The best wall-clock and CPU seconds of an empty pytest run with the plugin; prints
    what the plugin adds."""
    empty = work / "empty"
    empty.mkdir(exist_ok=True)
    (empty / "test_trivial.py").write_text("def test_trivial():\n    assert True\n", encoding="utf-8")
    r.run(_pytest(), empty)  # warm-up: the bytecode cache
    on, off = [], []
    for _ in range(repeat):
        on.append(r.run(_pytest(), empty)[:2])
        off.append(r.run(_pytest("-p", "no:kspread"), empty)[:2])
    (w_on, c_on), (w_off, c_off) = _best(on), _best(off)
    print(f"startup     pytest run collecting no case (best of {repeat}): with kspread {w_on * 1000:.0f} ms "
          f"(cpu {c_on * 1000:.0f}), with -p no:kspread {w_off * 1000:.0f} ms (cpu {c_off * 1000:.0f}): "
          f"kspread adds {(w_on - w_off) * 1000:.0f} ms (cpu {(c_on - c_off) * 1000:.0f} ms)", flush=True)
    return w_on, c_on


def bench_corpus(r: Runner, work: Path, n: int, repeat: int) -> None:
    empty_w, empty_c = bench_startup(r, work, repeat)
    corpus = work / "corpus"
    write_corpus(corpus, n)
    r.run(_pytest("corpus"), work)  # warm-up
    rows: list[tuple[float, float]] = []
    eng: list[tuple[float, float]] = []
    imp: list[tuple[float, float]] = []
    for _ in range(repeat):
        wall, cpu, last = r.run(_pytest("corpus"), work)
        if f"{n} passed" not in last:
            raise SystemExit(f"the corpus did not pass under pytest: {last}")
        rows.append((wall, cpu))
        e = r.worker({"kind": "engine", "dir": str(corpus)}, work)
        if e["passed"] != n:
            raise SystemExit(f"the corpus did not pass in the engine: {e}")
        eng.append((e["wall_s"], e["cpu_s"]))
        imp.append((e["import_s"], e["import_cpu_s"]))
    (pw, pc), (ew, ec), (iw, ic) = _best(rows), _best(eng), _best(imp)
    per_w, per_c = (pw - empty_w) / n * 1000, (pc - empty_c) / n * 1000
    print(f"corpus      {n} small cases (best of {repeat}): pytest {pw:.2f} s (cpu {pc:.2f}), "
          f"{per_w:.2f} ms per case (cpu {per_c:.2f}) beyond the empty run; the engine alone "
          f"{ew / n * 1000:.2f} ms per case (cpu {ec / n * 1000:.2f}; its imports {iw:.2f} s, cpu {ic:.2f}): "
          f"ratio {per_w / (ew / n * 1000):.2f}x (cpu {per_c / (ec / n * 1000):.2f}x)", flush=True)
    try:
        import xdist  # noqa: F401
    except ImportError:
        print("corpus      pytest-xdist not installed: -n not measured")
        return
    par = []
    for _ in range(repeat):
        par.append(r.run(_pytest("-n", "2", "corpus"), work)[:2])
    xw = min(p[0] for p in par)
    print(f"corpus      {n} small cases, wall-clock (best of {repeat}): serial {pw:.2f} s, pytest -n 2 {xw:.2f} s "
          f"(x{pw / xw:.2f}; {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f})", flush=True)


def bench_loading(r: Runner, work: Path, n: int, repeat: int) -> None:
    files = {}
    for which in ("schedule", "pods"):
        files[which] = work / f"{which}.json"
        files[which].write_text(json.dumps(loading_case(which, n)), encoding="utf-8")
    runs: dict[str, list[dict]] = {"schedule": [], "pods": []}
    for _ in range(repeat):
        for which in ("schedule", "pods"):
            m = r.worker({"kind": "load", "file": str(files[which])}, work)
            if m["pods"] != n + (which == "pods"):
                raise SystemExit(f"loading {which}: {m}")
            runs[which].append(m)
    best = {w: {k: min(m[k] for m in ms) for k in ms[0]} for w, ms in runs.items()}
    s, p = best["schedule"], best["pods"]
    print(f"loading     {n} pods of 5 shapes (best of {repeat}): as schedule read {s['read_s']:.3f} s + validate+build "
          f"{s['build_s']:.3f} s (cpu {s['build_cpu_s']:.3f}); as pods read {p['read_s']:.3f} s + validate+build "
          f"{p['build_s']:.3f} s (cpu {p['build_cpu_s']:.3f}): schedule/pods x{s['build_s'] / p['build_s']:.2f} "
          f"(cpu x{s['build_cpu_s'] / p['build_cpu_s']:.2f})", flush=True)


def run(only: list[str], tree: Path, repeat: int, corpus_cases: int, loading_pods: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="kspread-bench-startup-"))
    try:
        r = Runner(tree, work / "pycache")
        if "corpus" in only:
            bench_corpus(r, work, corpus_cases, repeat)  # (prints the startup figures too)
        elif "startup" in only:
            bench_startup(r, work, repeat)
        if "loading" in only:
            bench_loading(r, work, loading_pods, repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--only", action="append", choices=["startup", "corpus", "loading"])
    ap.add_argument("--repeat", type=int, default=5, help="runs of each measurement (the least is shown)")
    ap.add_argument("--corpus-cases", type=int, default=2000)
    ap.add_argument("--loading-pods", type=int, default=10000)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    run(args.only or ["startup", "corpus", "loading"], ROOT, args.repeat, args.corpus_cases, args.loading_pods)


if __name__ == "__main__":
    main()
