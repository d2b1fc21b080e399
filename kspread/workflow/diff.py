"""``kspread diff``: run every case of a corpus under two scheduler configurations
and report the cases whose outcome changes (selected nodes, preemption victims or
placements), with both sides' per-plugin scores.

Each case is counted once, in one of four groups:

* changed: both configurations apply and the outcome differs;
* unchanged;
* not applicable: one side's configuration cannot run at the case's version (an API
  version that release does not read, a plugin it does not have, ...), with the reason;
* own profile: the case gives its own ``profile``, which is what it tests, so the
  configurations do not replace it (``--override-profile`` runs it under both anyway).

Cases whose ``expect`` is ``error`` (they must fail to load) and cases that do not
load are reported apart as well: they say nothing about a configuration.

A diff that compares nothing does not pass: a configuration that no version kspread
supports can run (it cannot be read, it has no profile of ``--scheduler-name``, ...) is
an error before any case runs (exit 4, a usage error, as a path that does not exist),
a diff in which no case was run under both configurations fails (exit 1), and one that
finds no case exits 5. Values print as YAML (``selected: n2 -> n1``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from kspread.errors import CaseError
from kspread.format.loader import collect, expected_error, load_case
from kspread.workflow.access import extender_access, extender_options
from kspread.workflow.runner import run_loaded
from kspread.workflow.safetext import line as one_line
from kspread.workflow.safetext import print_json as say_json
from kspread.workflow.safetext import say
from kspread.workflow.yamltext import flow


@dataclasses.dataclass
class Side:
    outcome: dict[str, Any] | None = None  # what decides placement, and the scores
    not_applicable: str | None = None  # why this configuration cannot run the case


def _side(case, config_path: str, scheduler_name: str | None, access: Any = None) -> Side:
    from kspread.format.config import load_config
    from kspread.format.extenders import resolve_url

    try:
        profile = load_config(config_path, case.version, scheduler_name)
        # HTTP extenders: the URL given, or their urlPrefix with the allowed variables expanded
        profile.extenders = [resolve_url(e, access) if e.http is not None else e for e in profile.extenders]
    except CaseError as e:
        return Side(not_applicable=str(e))
    try:
        outcome = run_loaded(dataclasses.replace(case, profile=profile))
    except CaseError as e:
        return Side({"error": str(e)})
    a = outcome.actual
    out: dict[str, Any] = {"selected": a.get("selected"), "totals": a.get("totals") or {},
                           "scores": a.get("scores") or {}}
    if "preemption" in a:
        out["preemption"] = a["preemption"]
    if "placements" in a:
        out["placements"] = a["placements"]
    if a.get("schedulingError"):
        out["error"] = a["schedulingError"]
    return Side(out)


def unusable(config_path: str, scheduler_name: str | None) -> str | None:
    """Why the configuration cannot run at any version kspread supports (the error at
    the newest version), or None when some version can run it."""
    from kspread.engine.versions import NEWEST_MINOR, OLDEST_MINOR, Version
    from kspread.format.config import load_config

    newest: str | None = None
    for minor in range(NEWEST_MINOR, OLDEST_MINOR - 1, -1):
        try:
            load_config(config_path, Version(minor), scheduler_name)
        except CaseError as e:
            newest = newest or str(e)
            continue
        return None
    return newest


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
    cells_of: list[list[str]] = []
    for n in nodes:
        cells = []
        for p in plugins:
            b = base.get("scores", {}).get(p, {}).get(n, "-")
            h = head.get("scores", {}).get(p, {}).get(n, "-")
            cells.append(f"{b}" if b == h else f"{b} -> {h}")
        b, h = base.get("totals", {}).get(n, "-"), head.get("totals", {}).get(n, "-")
        cells.append(f"{b}" if b == h else f"{b} -> {h}")
        cells_of.append(cells)
    # each column as wide as its widest cell, not a fixed width
    widths = [max(len(c), *(len(row[i]) for row in cells_of)) + 2 for i, c in enumerate(cols)]
    node_w = max(4, *(len(n) for n in nodes)) + 2
    lines = ["    " + "node".ljust(node_w) + "".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()
             + "   (base -> head; a plugin's score before its weight, the total weighted)"]
    for n, cells in zip(nodes, cells_of):
        lines.append("    " + n.ljust(node_w) + "".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
    return lines


def main(args: argparse.Namespace) -> int:
    report: list[dict[str, Any]] = []
    not_applicable: list[dict[str, Any]] = []
    own_profile: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    total = changed = expected_errors = 0
    scheduler_name = getattr(args, "scheduler_name", None)
    override = getattr(args, "override_profile", False)
    # a file that cannot be read, or has no profile of that name, is the command's error,
    # not every case's "not applicable"
    unusable_sides = [(flag, why) for flag, config_path in (("--base", args.base), ("--head", args.head))
                      if (why := unusable(config_path, scheduler_name)) is not None]
    from kspread.workflow.cli import EXIT_FAILED, EXIT_NO_CASE, EXIT_OK, EXIT_USAGE, _missing, _no_case

    for flag, why in unusable_sides:
        say(f"kspread diff: {flag}: {why}", sys.stderr)
    if unusable_sides:
        return EXIT_USAGE
    _missing(args.paths, "diff")
    access = extender_access(args)
    for fr in collect(args.paths):
        if fr.error is not None:
            say(str(fr.error), sys.stderr)
            invalid.append({"file": str(getattr(fr.error, "file", "") or ""), "error": str(fr.error)})
            continue
        for doc in fr.docs:
            doc.extender_access = access
            where = {"case": doc.name, "file": doc.file, "line": doc.line}
            if expected_error(doc) is not None:
                expected_errors += 1  # cases that must fail to load say nothing about a configuration
                continue
            total += 1
            if doc.data.get("profile") is not None and not override:
                own_profile.append(where)
                continue
            try:
                case = load_case(doc)
            except CaseError as e:
                invalid.append({**where, "error": str(e)})
                continue
            base = _side(case, args.base, scheduler_name, access)
            head = _side(case, args.head, scheduler_name, access)
            if base.not_applicable is not None or head.not_applicable is not None:
                not_applicable.append({**where, "base": base.not_applicable, "head": head.not_applicable})
                continue
            assert base.outcome is not None and head.outcome is not None
            if _decisive(base.outcome) == _decisive(head.outcome):
                continue
            changed += 1
            report.append({**where, "base": base.outcome, "head": head.outcome})
    unchanged = total - changed - len(not_applicable) - len(own_profile) - len(invalid)
    if args.json:
        say_json({"cases": total, "changed": changed, "unchanged": unchanged,
                  "notApplicable": len(not_applicable), "ownProfile": len(own_profile), "invalid": len(invalid),
                  "changes": report, "notApplicableCases": not_applicable, "ownProfileCases": own_profile,
                  "invalidCases": invalid})
    else:
        for r in report:
            say(f"{one_line(r['file'])}:{r['line']}: {one_line(r['case'])}")
            for key in ("error", "selected", "preemption", "placements"):
                b, h = r["base"].get(key), r["head"].get(key)
                if b != h:
                    say(f"  {key}: {flow(b)} -> {flow(h)}")
            for line in _table(r["base"], r["head"]):
                say(line)
        for r in not_applicable:
            if r["base"] == r["head"]:
                sides = [f"both: {r['base']}"]
            else:
                sides = [f"{s}: {r[s]}" for s in ("base", "head") if r[s] is not None]
            say(f"{one_line(r['file'])}:{r['line']}: {one_line(r['case'])}: not applicable ({'; '.join(sides)})", sys.stderr)
        for r in invalid:
            if "case" in r:
                say(f"{r['error']}", sys.stderr)
        parts = [f"{total} case(s)", f"{changed} changed", f"{unchanged} unchanged",
                 f"{len(not_applicable)} not applicable"]
        if own_profile:
            parts.append(f"{len(own_profile)} with their own profile (not compared; --override-profile "
                         "runs them under both configurations)")
        if invalid:
            parts.append(f"{len(invalid)} invalid")
        if expected_errors:
            parts.append(f"{expected_errors} expecting a load error skipped")
        say(", ".join(parts), sys.stderr)
    if not total and not invalid and not expected_errors:
        say(_no_case(args.paths), sys.stderr)
        return EXIT_NO_CASE
    if changed + unchanged == 0:
        say("kspread diff: no case was run under both configurations; nothing was compared", sys.stderr)
        return EXIT_FAILED
    return EXIT_FAILED if changed or invalid else EXIT_OK


def add_arguments(d: argparse.ArgumentParser) -> None:
    d.add_argument("--base", required=True, help="KubeSchedulerConfiguration file of the base side")
    d.add_argument("--head", required=True, help="KubeSchedulerConfiguration file of the head side")
    d.add_argument("--scheduler-name", metavar="NAME",
                   help="the profile (schedulerName) of a multi-profile configuration (default: default-scheduler)")
    d.add_argument("--override-profile", action="store_true",
                   help="run cases that give their own profile under both configurations too")
    d.add_argument("paths", nargs="+", help="case files or directories")
    d.add_argument("--json", action="store_true", help="print a JSON report")
    extender_options(d)
