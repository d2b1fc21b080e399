"""Benchmark (not part of the test suite): what a failing case costs over a passing one,
on a big cluster, as the user waits for it.

    python bench/bench_report.py                         # 1,000 to 5,000 nodes (several minutes)
    python bench/bench_report.py --nodes 5000 --repeat 5
    python bench/bench_report.py --nodes 1000 --baseline-ref d2cbd1b   # also that commit's tree

The case is bench.py's 150,000-pod shape scaled to the node count: 30 pods per node
(500 Services, three zones), the default profile, one incoming pod. It is written
three times as JSON, with the same expectation keys (``selected``, one node's score of
one plugin, ``totals`` of every node):

* ``pass``: the actual results;
* ``wrong-one``: a wrong ``selected`` (a node that is not among the top-scoring ones)
  and a wrong score for one node;
* ``wrong-all``: a wrong ``totals`` for every node (the worst case for the tables).

Each is run in three ways: ``kspread run FILE`` (in-process, its output written to
/dev/null), ``kspread run -q FILE`` (only failures print) and ``pytest -q FILE`` (a
subprocess, the plugin's failure report included). The figure is wall-clock seconds
from reading the file to the last line printed, with the CPU seconds beside it; each
run is a process of its own, the three cases alternate, and each figure is the least
of ``--repeat`` runs (the machine is shared). The ratio failing/passing is taken
within one run of the bench, of the wall-clock times and of the CPU times (steadier
when other work shares the machine), with the CPU seconds the failure added.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench import _baseline_tree, _best, _git_head, make_scale_case  # noqa: E402

CASES = ("pass", "wrong-one", "wrong-all")
MODES = ("run", "run -q", "pytest")


# ---- the cases (written by a process of its own, in the tree under test) ----------------------------------


def write_cases(spec: dict) -> None:
    """The three case files for ``spec["nodes"]`` nodes, in ``spec["dir"]``."""
    from kspread.format.loader import load_case, read_file
    from kspread.workflow.runner import run_loaded

    n = spec["nodes"]
    out = Path(spec["dir"])
    case = make_scale_case(n, 30 * n, False)
    case["name"] = f"report-{n}"
    case["expect"] = {"selected": "node-0"}
    probe = out / "probe.json"
    probe.write_text(json.dumps(case), encoding="utf-8")
    actual = run_loaded(load_case(read_file(probe).docs[0])).actual
    probe.unlink()
    top = actual["selected"] if isinstance(actual["selected"], list) else [actual["selected"]]
    node = next(iter(actual["totals"]))
    plugin = next(iter(actual["scores"]))
    good = {"selected": actual["selected"], "scores": {plugin: {node: actual["scores"][plugin][node]}},
            "totals": actual["totals"]}
    wrong_one = json.loads(json.dumps(good))
    wrong_one["selected"] = next(x for x in (f"node-{i}" for i in range(n)) if x not in top)
    wrong_one["scores"][plugin][node] += 1
    wrong_all = json.loads(json.dumps(good))
    wrong_all["totals"] = {k: v + 1 for k, v in good["totals"].items()}
    for name, expect in zip(CASES, (good, wrong_one, wrong_all)):
        case["expect"] = expect
        (out / f"{name}.json").write_text(json.dumps(case), encoding="utf-8")


# ---- the worker (one measurement, in the tree under test) ----------------------------------------------


def worker(spec: dict) -> dict:
    path, mode = spec["file"], spec["mode"]
    t0, c0 = time.perf_counter(), time.process_time()
    if mode == "pytest":
        # in the case's directory: ``python -m`` puts the working directory first on sys.path,
        # where a checkout's own kspread would shadow the tree under test
        where = str(Path(path).parent)
        rc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", where, path],
                            cwd=where, stdout=subprocess.DEVNULL, check=False).returncode
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = cpu.ru_utime + cpu.ru_stime
    else:
        from kspread.workflow.cli import main as cli_main

        argv = ["run", *(["-q"] if mode == "run -q" else []), path]
        with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
            rc = cli_main(argv)
        cpu_s = time.process_time() - c0
    return {"s": time.perf_counter() - t0, "cpu_s": cpu_s, "rc": rc}


def measure(spec: dict, tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run([sys.executable, str(HERE / "bench_report.py"), "--worker", json.dumps(spec)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"worker failed for {spec} ({tree}):\n{proc.stderr}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    want = 0 if Path(spec["file"]).stem == "pass" else 1
    if out["rc"] != want:
        raise SystemExit(f"{spec}: exit status {out['rc']}, expected {want} ({tree})")
    return out


# ---- the driver ----------------------------------------------------------------------------------------------


def bench_size(n: int, tree: Path, repeat: int) -> dict[str, dict[str, dict]]:
    """mode -> case -> the best figures of ``repeat`` runs, for ``n`` nodes."""
    with tempfile.TemporaryDirectory(prefix=f"kspread-bench-report-{n}-") as d:
        env = dict(os.environ, PYTHONPATH=str(tree))
        subprocess.run([sys.executable, str(HERE / "bench_report.py"), "--write",
                        json.dumps({"nodes": n, "dir": d})], env=env, check=True)
        runs: dict[str, dict[str, list[dict]]] = {m: {c: [] for c in CASES} for m in MODES}
        for _ in range(repeat):
            for mode in MODES:
                for c in CASES:  # alternating: a busy spell of the machine spreads over all three
                    runs[mode][c].append(measure({"mode": mode, "file": f"{d}/{c}.json"}, tree))
    return {m: {c: _best(runs[m][c]) for c in CASES} for m in MODES}


def report(n: int, res: dict[str, dict[str, dict]], label: str = "") -> None:
    for mode in MODES:
        p = res[mode]["pass"]
        parts = [f"{label}{n:>5} nodes  {mode:<7} pass {p['s']:6.2f} s (cpu {p['cpu_s']:6.2f})"]
        for c in CASES[1:]:
            f = res[mode][c]
            parts.append(f"{c} {f['s']:6.2f} s (cpu {f['cpu_s']:6.2f}) x{f['s'] / p['s']:.2f} "
                         f"(cpu x{f['cpu_s'] / p['cpu_s']:.2f}, {f['cpu_s'] - p['cpu_s']:+.2f} s)")
        print("  ".join(parts), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--write", help=argparse.SUPPRESS)
    ap.add_argument("--nodes", type=int, action="append", help="node counts (default 1000, 2000, 4000, 5000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each measurement (the least time is shown)")
    ap.add_argument("--baseline-ref", help="also measure this git ref's tree (once per figure: it may be slow)")
    args = ap.parse_args()
    if args.write:
        write_cases(json.loads(args.write))
        return
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    base = _baseline_tree(args.baseline_ref) if args.baseline_ref else None
    print(f"engine: {ROOT} ({_git_head()}); baseline: {args.baseline_ref or 'none'}; python "
          f"{sys.version.split()[0]}, {os.cpu_count()} cpus; best of {args.repeat}; 30 pods per node", flush=True)
    for n in args.nodes or [1000, 2000, 4000, 5000]:
        report(n, bench_size(n, ROOT, args.repeat))
        if base is not None:
            report(n, bench_size(n, base, 1), "baseline ")


if __name__ == "__main__":
    main()
