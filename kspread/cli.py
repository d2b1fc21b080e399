"""Command line: ``kspread run`` and ``kspread validate``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kspread.errors import CaseError
from kspread.loader import collect, expected_error, load_case
from kspread.scheduler import Scheduler
from kspread.runner import EXPECT_KEYS, check


def _yaml_dump(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)


def cmd_run(args: argparse.Namespace) -> int:
    failed = 0
    report: list[dict[str, Any]] = []
    updates = []
    for fr in collect(args.files):
        if fr.error is not None:
            failed += 1
            print(str(fr.error), file=sys.stderr)
            report.append({"file": fr.path, "error": str(fr.error)})
            continue
        for doc in fr.docs:
            v = check(doc)
            if args.update:
                from kspread.update import update_for

                upd = update_for(doc, v)
                if upd is not None:
                    updates.append(upd)
                    v.passed = True
            failed += not v.passed
            entry: dict[str, Any] = {"file": doc.file, "line": doc.line, "name": doc.name, "passed": v.passed}
            if v.case is not None:
                entry["version"] = str(v.case.version)
            if v.error is not None:
                entry["error"] = v.error
            actual = {}
            if v.outcome is not None:
                actual = {k: v.outcome.actual[k] for k in (*EXPECT_KEYS, "schedulingError") if k in v.outcome.actual}
                entry["actual"] = actual
            report.append(entry)
            if not args.json:
                where = f"{doc.file}:{doc.line}" + (f", version {v.case.version}" if v.case else "")
                print(f"{'PASS' if v.passed else 'FAIL'} {doc.name} ({where})")
                if v.outcome is not None:
                    print("  " + _yaml_dump(actual).replace("\n", "\n  ").rstrip())
                if not v.passed or v.outcome is None:
                    print("  " + v.message.replace("\n", "\n  "))
    if updates:
        from kspread.update import apply_all

        for change in apply_all(updates):
            print(f"updated {change}", file=sys.stderr)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    return 1 if failed else 0


def cmd_validate(args: argparse.Namespace) -> int:
    bad = 0
    count = 0
    for fr in collect(args.files):
        if fr.error is not None:
            bad += 1
            print(str(fr.error))
            continue
        for doc in fr.docs:
            count += 1
            try:
                Scheduler(load_case(doc))
            except CaseError as e:
                if e.file is None:
                    e.located(doc.file, doc.locate(e.path))
                    e.path = doc.user_path(e.path)
                if expected_error(doc) is not None and expected_error(doc) in str(e):
                    continue
                bad += 1
                print(str(e))
    print(f"{count} case(s) checked, {bad} invalid", file=sys.stderr)
    return 1 if bad else 0


def cmd_explain(args: argparse.Namespace) -> int:
    from kspread.explain import explain_cycle
    from kspread.runner import run_loaded

    shown = 0
    bad = 0
    for fr in collect([args.file]):
        if fr.error is not None:
            print(str(fr.error), file=sys.stderr)
            return 1
        for doc in fr.docs:
            if args.case is not None and doc.name != args.case:
                continue
            try:
                case = load_case(doc)
                outcome = run_loaded(case, keep_all=True)
            except CaseError as e:
                if e.file is None:
                    e.located(doc.file, doc.locate(e.path))
                    e.path = doc.user_path(e.path)
                print(str(e), file=sys.stderr)
                bad += 1
                continue
            shown += 1
            print(f"case {doc.name} ({doc.file}:{doc.line}, version {case.version})")
            for r in outcome.cycles:
                if len(outcome.cycles) > 1:
                    print(f"pod {r.pod.key}:")
                print("  " + explain_cycle(outcome.scheduler, r).replace("\n", "\n  "))
            print()
    if shown == 0 and bad == 0:
        print(f"no case named {args.case!r} in {args.file}" if args.case else f"no case in {args.file}",
              file=sys.stderr)
        return 1
    return 1 if bad else 0


def _diff(args: argparse.Namespace) -> int:
    from kspread.diff import main as diff_main

    return diff_main(args)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="kspread", description="kube-scheduler policy-testing harness")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run cases and print each case's actual results")
    r.add_argument("files", nargs="+", help="case files or directories")
    r.add_argument("--json", action="store_true", help="print a JSON report")
    r.add_argument("--update", action="store_true",
                   help="rewrite the expect of failing cases (and fill empty ones) with the actual results")
    r.set_defaults(func=cmd_run)
    v = sub.add_parser("validate", help="check case files without running them")
    v.add_argument("files", nargs="+")
    v.set_defaults(func=cmd_validate)
    d = sub.add_parser("diff", help="compare two scheduler configurations over a corpus of cases")
    d.add_argument("--base", required=True, help="KubeSchedulerConfiguration file of the base side")
    d.add_argument("--head", required=True, help="KubeSchedulerConfiguration file of the head side")
    d.add_argument("paths", nargs="+", help="case files or directories")
    d.add_argument("--json", action="store_true", help="print a JSON report")
    d.set_defaults(func=_diff)
    e = sub.add_parser("explain", help="per node: each filter status, each plugin's scores, the total")
    e.add_argument("file")
    e.add_argument("--case", help="the case's name (default: every case in the file)")
    e.set_defaults(func=cmd_explain)
    from kspread import importer

    im = sub.add_parser("import", help="write a case from a kubectl dump of a cluster (kubectl get ... -A -o yaml)")
    importer.add_arguments(im)
    im.set_defaults(func=importer.cmd_import)
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
