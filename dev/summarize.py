#!/usr/bin/env python3
"""Summarize difftest.py --json files as markdown tables: per version, and per plugin.

    python3 dev/summarize.py results/*.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def main(paths: list[str]) -> None:
    runs = sorted((json.loads(Path(p).read_text()) for p in paths), key=lambda r: [int(x) for x in r["version"].split(".")])
    print("| version | cases | with differences | unexplained | explained (kind) |")
    print("|---|---|---|---|---|")
    for r in runs:
        expl = ", ".join(f"{d['plugin']} {d['kind']}: {d['count']}" for d in r["differences"] if d["explained"])
        print(f"| {r['version']} | {r['cases']} | {r['casesWithDifferences']} | {r['unexplainedCases']} | {expl or '-'} |")
    plugins = sorted({k.rsplit(" ", 1)[0] for r in runs for k in r["coverage"] if k.endswith((" rejects", " varies")) and not k.startswith("default")})
    print()
    print("Per plugin, summed over the versions: cases where upstream's plugin rejected a node / scored "
          "feasible nodes unevenly, and the differences found (explained + unexplained).")
    print()
    print("| plugin | rejects | varies | differences | unexplained |")
    print("|---|---|---|---|---|")
    diffs: Counter = Counter()
    unexpl: Counter = Counter()
    for r in runs:
        for d in r["differences"]:
            diffs[d["plugin"]] += d["count"]
            if not d["explained"]:
                unexpl[d["plugin"]] += d["count"]
    cov: Counter = Counter()
    for r in runs:
        cov.update(r["coverage"])
    for p in plugins + ["DefaultPreemption"]:
        print(f"| {p} | {cov.get(p + ' rejects', '-')} | {cov.get(p + ' varies', '-')} | {diffs[p]} | {unexpl[p]} |")
    print()
    print("Also: " + ", ".join(f"{k} {cov[k]}" for k in ("scored", "default spreading varies", "no node fits",
                                                           "preemption candidates", "preemption nominates",
                                                           "pod-level requests", "Lt/Gt tolerations meet level taints",
                                                           "an Lt/Gt toleration tolerates",
                                                           "non-default plugin args")))


if __name__ == "__main__":
    main(sys.argv[1:])
