"""``kspread diff``: run every case of a corpus under two scheduler configurations
and report the cases whose outcome changes (selected nodes, preemption victims or
placements), with both sides' per-plugin scores."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from kspread.errors import CaseError
from kspread.loader import collect, expected_error, load_case
from kspread.runner import run_loaded


def _side(doc, config_path: str) -> dict[str, Any]:
    """One side's outcome for one case: what decides placement, and the scores."""
    from kspread.config import load_config

    try:
        case = load_case(doc)
        profile = load_config(config_path, case.version)
        outcome = run_loaded(dataclasses.replace(case, profile=profile))
    except CaseError as e:
        return {"error": str(e)}
    a = outcome.actual
    out: dict[str, Any] = {"selected": a.get("selected"), "totals": a.get("totals") or {},
                           "scores": a.get("scores") or {}}
    if "preemption" in a:
        out["preemption"] = a["preemption"]
    if "placements" in a:
        out["placements"] = a["placements"]
    if a.get("schedulingError"):
        out["error"] = a["schedulingError"]
    return out


def _decisive(side: dict[str, Any]) -> Any:
    sel = side.get("selected")
    return (
        side.get("error"),
        sorted(sel) if isinstance(sel, list) else sel,
        json.dumps(side.get("preemption"), sort_keys=True),
        json.dumps(side.get("placements"), sort_keys=True),
    )


def _table(base: dict[str, Any], head: dict[str, Any]) -> list[str]:
    plugins = list(dict.fromkeys([*base.get("scores", {}), *head.get("scores", {})]))
    nodes = list(dict.fromkeys([*base.get("totals", {}), *head.get("totals", {})]))
    if not nodes:
        return []
    cols = [*plugins, "total"]
    width = max(12, *(len(c) + 2 for c in cols))
    lines = ["    " + "node".ljust(12) + "".join(c.ljust(width) for c in cols) + "   (base -> head)"]
    for n in nodes:
        cells = []
        for p in plugins:
            b = base.get("scores", {}).get(p, {}).get(n, "-")
            h = head.get("scores", {}).get(p, {}).get(n, "-")
            cells.append((f"{b}" if b == h else f"{b} -> {h}").ljust(width))
        b, h = base.get("totals", {}).get(n, "-"), head.get("totals", {}).get(n, "-")
        cells.append((f"{b}" if b == h else f"{b} -> {h}").ljust(width))
        lines.append("    " + n.ljust(12) + "".join(cells))
    return lines


def main(args: argparse.Namespace) -> int:
    report: list[dict[str, Any]] = []
    total = changed = 0
    for fr in collect(args.paths):
        if fr.error is not None:
            print(str(fr.error), file=sys.stderr)
            continue
        for doc in fr.docs:
            if expected_error(doc) is not None:
                continue  # cases that must fail to load say nothing about a configuration
            total += 1
            base, head = _side(doc, args.base), _side(doc, args.head)
            if _decisive(base) == _decisive(head):
                continue
            changed += 1
            report.append({"case": doc.name, "file": doc.file, "line": doc.line, "base": base, "head": head})
    if args.json:
        json.dump({"cases": total, "changed": changed, "changes": report}, sys.stdout, indent=2)
        print()
    else:
        for r in report:
            print(f"{r['file']}:{r['line']}: {r['case']}")
            for key in ("error", "selected", "preemption", "placements"):
                b, h = r["base"].get(key), r["head"].get(key)
                if b != h:
                    print(f"  {key}: {json.dumps(b)} -> {json.dumps(h)}")
            for line in _table(r["base"], r["head"]):
                print(line)
        print(f"{total} case(s) run under both configurations, {changed} changed", file=sys.stderr)
    return 1 if changed else 0
