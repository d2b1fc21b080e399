"""Command line: ``kspread run`` and ``kspread validate``."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any

from kspread.engine.scheduler import Scheduler
from kspread.errors import CaseError
from kspread.format.loader import collect, load_case, meets_expected_error
from kspread.workflow.runner import (
    Verdict,
    asserts_nothing,
    check,
    duplicate_names,
    not_expectable_note,
)


def _yaml_dump(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)


def _no_case(paths: list[str]) -> str:
    return f"kspread: no case in {', '.join(paths)} (a case is a YAML document with apiVersion: kspread/v1, kind: Case)"


def _selected(doc, args: argparse.Namespace) -> bool:
    """``--case NAME`` (exact, repeatable) and ``-k EXPR`` (pytest's keyword expression
    over the case name and its tags)."""
    if args.case and doc.name not in args.case:
        return False
    if not args.keyword:
        return True
    tags = doc.data.get("tags") if isinstance(doc.data, dict) else None
    words = [doc.name, *(t for t in (tags if isinstance(tags, list) else []) if isinstance(t, str))]
    return _keyword_expression(args.keyword)(words)


@functools.lru_cache(maxsize=8)
def _keyword_expression(expr: str):
    from kspread.workflow.keyword import KeywordError, compile_keyword

    try:
        return compile_keyword(expr)
    except KeywordError as e:
        raise SystemExit(f"kspread run: -k {expr!r}: {e}") from None


def cmd_run(args: argparse.Namespace) -> int:
    from kspread.workflow.report import case_entry, file_entry

    failed = passed = deselected = skipped = 0
    cases = 0
    report: list[dict[str, Any]] = []
    out = _Output(args)
    backend = None
    if args.backend:
        from kspread.workflow.backend import BackendRun

        if args.update:
            raise SystemExit("kspread run: --update writes the reference engine's results; it does not go with --backend")
        backend = BackendRun.start(args.backend, args.compare, out.note)
    elif args.compare:
        raise SystemExit("kspread run: --compare needs --backend PATH")
    names: set[str] = set()
    pictures = bool(args.html)
    stop = False
    for fr in collect(args.files):
        if fr.error is not None:
            failed += 1
            out.error(str(fr.error))
            report.append(file_entry(fr.path, fr.error))
            if args.exitfirst:
                break
            continue
        dups = duplicate_names(fr.docs)
        _with_extender_urls(fr.docs, args)
        checked: list[tuple[Any, Verdict]] = []
        for i, doc in enumerate(fr.docs):
            names.add(doc.name)
            if not _selected(doc, args):
                deselected += 1
                continue
            out.progress(doc.name)
            if i in dups:
                checked.append((doc, Verdict(False, str(dups[i]), error=str(dups[i]))))
            elif backend is not None:
                v = backend.check(doc)
                if v is None:  # not applicable to the backend: a skip, with the reason
                    skipped += 1
                    continue
                checked.append((doc, v))
            else:
                v = check(doc, explain=args.explain)
                if v.skipped is not None:
                    skipped += 1
                    out.note(f"SKIP {doc.name} ({doc.file}:{doc.line}): {v.skipped}")
                    continue
                checked.append((doc, v))
            out.checked(checked[-1][1])
            if args.exitfirst and not args.update and not checked[-1][1].passed:
                stop = True  # -x: the first failure ends the run
                break
        if args.update:
            _update_file(checked)
        for doc, v in checked:
            cases += 1
            failed += not v.passed
            passed += v.passed
            entry = case_entry(doc, v, pictures)
            report.append(entry)
            out.case(doc, v, entry.get("actual", {}))
            if args.exitfirst and not v.passed:
                stop = True
                break
        if stop:
            break
    out.done()
    if args.json:
        json.dump([{k: x for k, x in e.items() if k not in ("cluster", "message")} for e in report],
                  sys.stdout, indent=2)
        print()
    unknown = [n for n in dict.fromkeys(args.case or []) if n not in names] if not stop else []
    for n in unknown:  # a mistyped name must not quietly run fewer cases
        print(f"kspread: --case {n!r} names no case in {', '.join(args.files)}", file=sys.stderr)
    if not cases and not failed and not skipped:
        if deselected:
            print(f"kspread: no case selected ({deselected} deselected)", file=sys.stderr)
        else:
            print(_no_case(args.files), file=sys.stderr)
        return 1
    summary = f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "") \
        + (f", {deselected} deselected" if deselected else "")
    if backend is not None:
        summary += backend.summary()
    if stop:
        summary += " (stopped at the first failure, -x)"
    written = _write_reports(args, report, summary)
    if args.json:
        print(summary, file=sys.stderr)
    else:
        out.summary(summary, failed)
    return 1 if failed or unknown or not written else 0


def _write_reports(args: argparse.Namespace, report: list[dict[str, Any]], summary: str) -> bool:
    """``--html``, ``--markdown`` (and ``$GITHUB_STEP_SUMMARY``), ``--github`` (or
    ``GITHUB_ACTIONS=true``): written from the run's report entries."""
    import os

    ok = True
    if args.html:
        from kspread.workflow.report_html import render_html

        text = render_html(report, summary, title="kspread run " + " ".join(args.files))
        ok &= _write_report("--html", args.html, text, "HTML report")
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY") if os.environ.get("GITHUB_ACTIONS") == "true" else None
    if args.markdown or step_summary:
        from kspread.workflow.report_ci import render_markdown

        text = render_markdown(report, summary)
        if args.markdown:
            ok &= _write_report("--markdown", args.markdown, text, "markdown summary")
        if step_summary:
            try:
                with open(step_summary, "a", encoding="utf-8") as f:  # GitHub gathers each step's appends
                    f.write(text)
            except OSError as e:
                print(f"kspread: GITHUB_STEP_SUMMARY {step_summary}: {e.strerror or e}", file=sys.stderr)
                ok = False
    if args.github or os.environ.get("GITHUB_ACTIONS") == "true":
        from kspread.workflow.report_ci import github_annotations

        for line in github_annotations(report):  # the runner reads both streams; --json keeps stdout JSON
            print(line, file=sys.stderr if args.json else sys.stdout)
    return ok


def _write_report(flag: str, path: str, text: str, what: str) -> bool:
    from kspread.format.files import write_atomic

    try:
        write_atomic(path, text)
    except OSError as e:
        print(f"kspread: {flag} {path}: {e.strerror or e}", file=sys.stderr)
        return False
    print(f"kspread: {what} written to {path}", file=sys.stderr)
    return True

class _Output:
    """What ``kspread run`` prints: each case (only failures with ``-q``), in colour and
    with tables that fit the terminal on a TTY (rich), plain text otherwise. On a TTY a
    status line shows the progress (cases run, failed, the one running)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.quiet = args.quiet
        self.silent = args.json
        self.console = None
        if not self.silent and sys.stdout.isatty():
            try:
                from rich.console import Console
            except ImportError:  # pragma: no cover - rich is a dependency
                pass
            else:
                self.console = Console(highlight=False)
        self.status: Any = None
        self.ran = self.failed = 0

    def progress(self, name: str) -> None:
        if self.console is None:
            return
        text = f"[{self.ran} run, {self.failed} failed] {name}"
        if self.status is None:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def done(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def error(self, text: str) -> None:
        print(text, file=sys.stderr)

    def note(self, text: str) -> None:
        """A line of its own (a skipped case, a difference): on stderr with --json."""
        print(text, file=sys.stderr if self.silent else sys.stdout)

    def checked(self, v: Verdict) -> None:
        self.ran += 1
        self.failed += not v.passed

    def case(self, doc, v: Verdict, actual: dict[str, Any]) -> None:
        if self.silent or (self.quiet and v.passed):
            return
        where = f"{doc.file}:{doc.line}" + (f", version {v.case.version}" if v.case else "")
        word = "PASS" if v.passed else "FAIL"
        body: list[str] = []
        if v.outcome is not None and not self.quiet:
            body.append("  " + _yaml_dump(actual).replace("\n", "\n  ").rstrip())
        if not v.passed or v.outcome is None:
            body.append("  " + v.message.replace("\n", "\n  "))
        if self.console is None:
            print(f"{word} {doc.name} ({where})")
            for b in body:
                print(b)
            return
        from rich.text import Text

        self.console.print(Text.assemble((word, "bold green" if v.passed else "bold red"), f" {doc.name} ",
                                         (f"({where})", "dim")))
        for b in body:
            # soft wrapping off: long lines fold at the terminal's width, indented
            self.console.print(Text(b), overflow="fold")

    def summary(self, text: str, failed: int) -> None:
        if self.console is None:
            print(text)
        else:
            self.console.print(text, style="bold red" if failed else "bold green")


def _update_file(checked: list[tuple[Any, Verdict]]) -> None:
    """``--update``: write the updates of one file's cases (the file once). A case
    whose update is written passes; one the update cannot fix fails, saying why."""
    from kspread.workflow.update import UpdateError, apply_file, update_for

    pending = {}
    for doc, v in checked:
        if v.error is not None and v.outcome is None:
            continue  # did not load (or a duplicate name): never written
        try:
            upd = update_for(doc, v)
        except UpdateError as e:
            v.passed = False
            v.message = (v.message + "\n\n" if v.message else "") + f"--update could not fix this case: {e}"
            continue
        if upd is not None:
            pending[id(upd)] = (upd, v)
    if not pending:
        return
    ups = [u for u, _ in pending.values()]
    res = apply_file(ups[0].file, ups)
    for u in res.updated:
        pending[id(u)][1].passed = True
    for u, why in res.failed:
        v = pending[id(u)][1]
        v.passed = False
        v.message = (v.message + "\n\n" if v.message else "") + f"--update could not fix this case: {why}"
    for change in res.changes:
        print(f"updated {change}", file=sys.stderr)


def cmd_validate(args: argparse.Namespace) -> int:
    bad = 0
    count = 0
    report: list[dict[str, Any]] = []

    def invalid(entry: dict[str, Any], message: str) -> None:
        nonlocal bad
        bad += 1
        report.append({**entry, "valid": False, "error": message})
        if not args.json:
            print(message)

    for fr in collect(args.files):
        if fr.error is not None:
            invalid({"file": fr.path}, str(fr.error))
            continue
        dups = duplicate_names(fr.docs)
        for i, doc in enumerate(fr.docs):
            count += 1
            entry = {"file": doc.file, "line": doc.line, "name": doc.name}
            if i in dups:
                invalid(entry, str(dups[i]))
                continue
            try:
                case = load_case(doc)
                if not case.profile.out_of_tree:
                    # a profile with out-of-tree plugins is checked as far as kspread can (its
                    # declarations, every other name in-tree): only a backend builds it, as `run` says
                    Scheduler(case)
                if not case.expect:
                    raise asserts_nothing(doc)
            except CaseError as e:
                doc.place(e)
                if meets_expected_error(doc, e):
                    report.append({**entry, "valid": True, "expectedError": str(e)})
                    continue
                invalid(entry, str(e) + not_expectable_note(doc, e))
                continue
            report.append({**entry, "valid": True})
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    print(f"{count} case(s) checked, {bad} invalid", file=sys.stderr)
    if not count and not bad:
        print(_no_case(args.files), file=sys.stderr)
        return 1
    return 1 if bad else 0


def cmd_explain(args: argparse.Namespace) -> int:
    import shutil

    from kspread.workflow.explain import explain_compact, explain_cycles
    from kspread.workflow.runner import differing_nodes, explain_run

    width = shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80
    shown = 0
    bad = 0
    entries: list[dict[str, Any]] = []
    for fr in collect([args.file]):
        if fr.error is not None:
            print(str(fr.error), file=sys.stderr)
            return 1
        _with_extender_urls(fr.docs, args)
        for doc in fr.docs:
            if args.case is not None and doc.name != args.case:
                continue
            try:
                case = load_case(doc)
                outcome, cycles = explain_run(case)
            except CaseError as e:
                doc.place(e)
                print(str(e), file=sys.stderr)
                bad += 1
                if args.json:
                    entries.append({"file": doc.file, "line": doc.line, "name": doc.name, "error": str(e)})
                continue
            shown += 1
            first = differing_nodes(outcome.diffs, {n.name for n in case.cluster.nodes}) if case.expect else []
            if args.json:
                from kspread.workflow.explain_json import explain_entry

                entries.append(explain_entry(doc, str(case.version), outcome, cycles))
                continue
            print(f"case {doc.name} ({doc.file}:{doc.line}, version {case.version})")
            if args.verbose:
                text = explain_cycles(outcome.scheduler, cycles, header=case.is_sequence)
            else:
                text = explain_compact(outcome.scheduler, cycles, first=first, header=case.is_sequence,
                                       width=width - 2)
            print("  " + text.replace("\n", "\n  "))
            print()
    if shown == 0 and bad == 0:
        print(f"no case named {args.case!r} in {args.file}" if args.case else f"no case in {args.file}",
              file=sys.stderr)
        return 1
    if args.json:
        json.dump(entries, sys.stdout, indent=2)
        print()
    return 1 if bad else 0


def extender_url(text: str) -> tuple[str, str]:
    """``NAME=URL`` of ``--extender`` (the NAME is the case's extender name, or the urlPrefix a
    KubeSchedulerConfiguration writes; the URL is split at the first ``=`` after it)."""
    name, sep, url = text.partition("=")
    if text.startswith(("http://", "https://")):
        # a configuration's extender is named by its URL, which may hold '='
        name, sep, url = text.rpartition("=")
    if not sep or not name or not url:
        raise argparse.ArgumentTypeError(f"expected NAME=URL, got {text!r}")
    return name, url


def _extender_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--extender", action="append", type=extender_url, metavar="NAME=URL", default=[],
                   help="call the HTTP extender NAME (its name in the case, or its urlPrefix in a "
                        "KubeSchedulerConfiguration) at URL instead of the urlPrefix written (repeatable)")


def _with_extender_urls(docs, args: argparse.Namespace) -> None:
    urls = dict(getattr(args, "extender", None) or [])
    if urls:
        for doc in docs:
            doc.extender_urls = urls


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kspread")
    except PackageNotFoundError:  # a checkout on PYTHONPATH, not installed
        return "(not installed)"


def cmd_schema(args: argparse.Namespace) -> int:
    from kspread.format.schema import schema_path

    path = schema_path()
    if args.path:
        print(path)
    else:
        sys.stdout.write(path.read_text(encoding="utf-8"))
    return 0


def _diff(args: argparse.Namespace) -> int:
    from kspread.workflow.diff import main as diff_main

    return diff_main(args)


def cmd_completion(args: argparse.Namespace) -> int:
    from kspread.workflow.completion import SHELLS

    sys.stdout.write(SHELLS[args.shell](build_parser()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="kspread", description="kube-scheduler policy-testing harness")
    ap.add_argument("--version", action="version", version=f"%(prog)s {_package_version()}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run cases and print each case's actual results")
    r.add_argument("files", nargs="+", help="case files or directories")
    r.add_argument("--json", action="store_true",
                   help="print a JSON report (failing cases with their expected values and the differences)")
    r.add_argument("-q", "--quiet", action="store_true", help="print only the failing cases and the summary")
    r.add_argument("-k", dest="keyword", metavar="EXPR",
                   help="run only the cases whose name or tags match the expression, as pytest -k "
                        "('web and not slow')")
    r.add_argument("--case", action="append", metavar="NAME", help="run only the case of this name (repeatable)")
    r.add_argument("--update", action="store_true",
                   help="rewrite the expect of failing cases (and fill empty ones) with the actual results")
    _extender_option(r)
    r.add_argument("--backend", metavar="PATH",
                   help="run the cases through a kspread backend (a kube-scheduler build of upstream's code, "
                        "backend/build.sh) instead of the reference engine; cases of another version are skipped")
    r.add_argument("--compare", action="store_true",
                   help="with --backend: also run the reference engine and print every difference per key")
    r.add_argument("--explain", choices=("short", "full", "none"), default="short",
                   help="how a failure report explains the run: short (one row per node, the default), full "
                   "(every plugin's status and scores) or none (left out)")
    r.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failing case")
    r.add_argument("--html", metavar="FILE",
                   help="write an HTML report: one self-contained page with a summary, the differences and pictures")
    r.add_argument("--markdown", metavar="FILE",
                   help="write a markdown summary (a pull-request comment; under GitHub Actions it also goes to "
                        "$GITHUB_STEP_SUMMARY)")
    r.add_argument("--github", action="store_true",
                   help="print GitHub Actions annotations (::error file=...,line=...) for failing cases "
                        "(on by itself when GITHUB_ACTIONS=true)")
    r.set_defaults(func=cmd_run)
    v = sub.add_parser("validate", help="check case files without running them")
    v.add_argument("files", nargs="+", help="case files or directories")
    v.add_argument("--json", action="store_true", help="print a JSON report: each case, valid or its error")
    v.set_defaults(func=cmd_validate)
    from kspread.workflow.diff import add_arguments as diff_arguments

    d = sub.add_parser("diff", help="compare two scheduler configurations over a corpus of cases")
    diff_arguments(d)
    d.set_defaults(func=_diff)
    e = sub.add_parser("explain", help="per node: the first rejecting filter, or each plugin's score and the total")
    e.add_argument("file")
    e.add_argument("--case", help="the case's name (default: every case in the file)")
    e.add_argument("-v", "--verbose", action="store_true",
                   help="per node every filter plugin's status, every score plugin's raw, normalized and weighted "
                   "score, the preemption (default: one row per node)")
    e.add_argument("--json", action="store_true",
                   help="print a JSON report: each case as run --json gives it, with each cycle explained (cycles)")
    _extender_option(e)
    e.set_defaults(func=cmd_explain)
    sc = sub.add_parser("schema", help="print the case format's JSON Schema (or its path), for editors")
    sc.add_argument("--path", action="store_true", help="print the schema file's path instead of its content")
    sc.set_defaults(func=cmd_schema)
    from kspread.format import importer

    im = sub.add_parser("import", help="write a case from a kubectl dump of a cluster (kubectl get ... -A -o yaml)")
    importer.add_arguments(im)
    im.set_defaults(func=importer.cmd_import)
    co = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)")
    co.add_argument("shell", choices=("bash", "zsh", "fish"))
    co.set_defaults(func=cmd_completion)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for stream in (sys.stdout, sys.stderr):
        # a file name that is not UTF-8 (surrogate escapes) prints as \udcff, never a UnicodeEncodeError
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        return args.func(args)
    except BrokenPipeError:
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
