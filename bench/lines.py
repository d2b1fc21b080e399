"""How long kspread takes to say where a load error is, against how long the file takes
to load (a dev script, not part of the test suite; issue 19).

    python bench/lines.py                          # this tree
    python bench/lines.py --baseline-ref 84d9bf0   # and the tree of that commit, in the same run

Files (written once, in a temporary directory, by a process of their own):

* ``big.yaml`` / ``big.json``: bench.py's 150,000-pod case (5,000 nodes, 500 Services,
  500 shared label sets), written as block-style YAML and as JSON; it loads;
* ``late.*``: the same with a field error in the last pod but one
  (``pods[149998].requests.cpu: not a Kubernetes quantity``), late in the file;
* ``empty.*``: the same with ``expect: {}`` ("the case asserts nothing", at the last
  key of the file);
* ``dup.*``: the same with ``name`` given twice, the second time just before
  ``expect`` (a duplicate key, found while the file is read);
* ``broken.yaml``: the same with an unclosed flow list just before ``expect`` (a
  syntax error, found while the file is read);
* ``flow.yaml``: a case whose ``nodes`` is a one-million-element flow list with a bad
  first element (``nodes[0]: must be a string or a mapping``).

Each measurement runs in a process of its own, so its peak RSS is its own:

* ``load``: read, validate and build ``big.*`` (the time the file takes to load);
* ``error``: read, validate and build a bad file until the error is raised with its
  line; ``locate`` is the part of that time spent finding the line (the line
  lookups, timed where the loader calls them), ``peak`` the process's peak RSS;
* for ``empty.*``: read the file, then the CLI's "asserts nothing" error and its line.

Ratios compare figures of one run (the machine is shared). Times are wall-clock.
"""

from __future__ import annotations

import argparse
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

from bench import make_scale_case, to_yaml  # noqa: E402 - beside this script


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


# ---- files -------------------------------------------------------------------------------------------


def write_files(d: Path) -> None:
    case = make_scale_case(5000, 150_000, False)
    case["expect"] = {"selected": "node-0"}
    late = json.loads(json.dumps(case))
    late["pods"][149_998]["requests"]["cpu"] = "ten"
    empty = dict(case, expect={})
    for name, data in (("big", case), ("late", late), ("empty", empty)):
        (d / f"{name}.yaml").write_text(to_yaml(data), encoding="utf-8")
        (d / f"{name}.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    for fmt, again in (("yaml", "\nname: again\nexpect:"), ("json", '\n "name": "again",\n "expect":')):
        text = (d / f"big.{fmt}").read_text(encoding="utf-8")
        at = text.rindex(again[again.rindex("\n"):])
        (d / f"dup.{fmt}").write_text(text[:at] + again + text[at + len(again[again.rindex("\n"):]):],
                                      encoding="utf-8")
        if fmt == "yaml":
            at = text.rindex("\nexpect:")
            (d / "broken.yaml").write_text(text[:at] + "\nbroken: [a, b" + text[at:], encoding="utf-8")
    names = ", ".join(f"n{i}" for i in range(1, 1_000_000))
    (d / "flow.yaml").write_text("apiVersion: kspread/v1\nkind: Case\nname: flow\n"
                                 f"nodes: [1, {names}]\npod: {{name: p}}\nexpect: {{selected: n1}}\n",
                                 encoding="utf-8")


# ---- the worker (runs inside the tree under test) ------------------------------------------------------


def worker(spec: dict) -> dict:
    from kspread.format import loader

    spent = [0.0]

    def timed(f):  # the line lookups, wherever the loader and the runner call them
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                spent[0] += time.perf_counter() - t
        return wrapper

    for name in ("locate", "locate_keys"):
        if hasattr(loader, name):
            setattr(loader, name, timed(getattr(loader, name)))
    base_mb = _rss_mb()
    t0 = time.perf_counter()
    res = loader.read_file(spec["file"])
    read = time.perf_counter() - t0
    message = str(res.error) if res.error is not None else None
    if message is None:
        doc = res.docs[0]
        if spec["what"] == "empty":
            from kspread.workflow.runner import asserts_nothing
            message = str(asserts_nothing(doc))
        else:
            try:
                loader.load_case(doc)
            except Exception as e:  # the error is the measurement
                message = str(e)
    total = time.perf_counter() - t0
    return {"total_s": total, "read_s": read, "locate_s": spent[0], "peak_mb": _peak_mb(), "base_mb": base_mb,
            "message": (message or "")[:160]}


def measure(spec: dict, tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"worker failed for {spec} ({tree}):\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _baseline_tree(ref: str) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix=f"kspread-lines-{ref}-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "kspread", "schemas"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    return tmp


def run_tree(label: str, tree: Path, d: Path, fmts: list[str]) -> None:
    for fmt in fmts:
        load = measure({"file": str(d / f"big.{fmt}"), "what": "load"}, tree)
        size = (d / f"big.{fmt}").stat().st_size / 1e6
        print(f"{label} {fmt:<4} {size:.0f} MB: load {load['total_s']:.2f} s, peak {load['peak_mb']:.0f} MB "
              f"(after imports {load['base_mb']:.0f} MB)", flush=True)
        for what in ("late", "empty", "dup", "broken")[:4 if fmt == "yaml" else 3]:
            r = measure({"file": str(d / f"{what}.{fmt}"), "what": what}, tree)
            print(f"  {what:<6} error in {r['total_s']:.2f} s (x{r['total_s'] / load['total_s']:.2f} the load), of which "
                  f"locating {r['locate_s']:.2f} s (x{r['locate_s'] / load['total_s']:.2f}); peak {r['peak_mb']:.0f} MB "
                  f"(x{r['peak_mb'] / load['peak_mb']:.2f} the load's)\n    {r['message']}", flush=True)
    r = measure({"file": str(d / "flow.yaml"), "what": "flow"}, tree)
    size = (d / "flow.yaml").stat().st_size / 1e6
    print(f"  flow   {size:.0f} MB, a one-million-element flow list: error in {r['total_s']:.2f} s (reading the file "
          f"{r['read_s']:.2f} s), of which locating {r['locate_s']:.2f} s; peak {r['peak_mb']:.0f} MB\n"
          f"    {r['message']}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--write", help=argparse.SUPPRESS)
    ap.add_argument("--baseline-ref", help="also measure the tree of this git ref")
    ap.add_argument("--format", action="append", choices=["yaml", "json"], help="default both")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    if args.write:
        write_files(Path(args.write))
        return
    d = Path(tempfile.mkdtemp(prefix="kspread-lines-"))
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--write", str(d)], check=True)
    fmts = args.format or ["yaml", "json"]
    try:
        run_tree("this tree", ROOT, d, fmts)
        if args.baseline_ref:
            base = _baseline_tree(args.baseline_ref)
            run_tree(args.baseline_ref, base, d, fmts)
    finally:
        for f in d.iterdir():
            f.unlink()
        d.rmdir()


if __name__ == "__main__":
    main()
