"""Command line: ``kspread run`` and ``kspread validate``."""

from __future__ import annotations

import argparse
import functools
import sys
from typing import IO, Any, NoReturn, cast

from kspread.engine.scheduler import Scheduler
from kspread.errors import CaseError
from kspread.format.loader import collect, load_case, meets_expected_error
from kspread.workflow import safetext
from kspread.workflow.runner import (
    Verdict,
    asserts_nothing,
    check,
    duplicate_names,
    not_expectable_note,
)

_say = safetext.say
_json_out = safetext.print_json


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
        raise UsageError(f"kspread run: -k {expr!r}: {e}") from None


# exit statuses, as pytest's: a case failed (or a file did not load), a usage or input
# error (a bad option, a path that does not exist, a --case name that names no case), no
# case collected or selected
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_CASE = 0, 1, 4, 5


class UsageError(Exception):
    """A mistake in the command line: its message, then exit status ``EXIT_USAGE``."""


def _missing(paths: list[str], cmd: str) -> None:
    """A path that does not exist is a usage error, as under pytest (nothing is run)."""
    import os

    gone = [p for p in paths if not os.path.lexists(p)]
    if gone:
        raise UsageError("\n".join(f"kspread {cmd}: file or directory not found: {p}" for p in gone))


def cmd_run(args: argparse.Namespace) -> int:
    import time

    from kspread.workflow.report import case_entry, file_entry
    from kspread.workflow.report_junit import ERROR, FAILED, PASSED, SKIPPED, XFAILED, JUnitCase

    _missing(args.files, "run")
    if args.update_keys and not args.update:
        # alone it would change nothing, and the run would pass as if the keys were written
        raise UsageError("kspread run: --update-keys needs --update")
    if args.keyword:
        _keyword_expression(args.keyword)  # a bad expression is a usage error before anything runs
    started = time.perf_counter()
    failed = passed = deselected = skipped = xfailed = 0
    cases = 0
    report: list[dict[str, Any]] = []
    junit: list[JUnitCase] = []
    out = _Output(args)
    backend = None
    if args.backend:
        from kspread.workflow.backend import BackendRun

        if args.update:
            raise UsageError("kspread run: --update writes the reference engine's results; it does not go with "
                             "--backend")
        backend = BackendRun.start(args.backend, args.compare, out.note)
    elif args.compare:
        raise UsageError("kspread run: --compare needs --backend PATH")
    names: set[str] = set()
    pictures = bool(args.html)
    stop = False
    for fr in collect(args.files):
        if fr.error is not None:
            failed += 1
            out.error(str(fr.error))
            report.append(file_entry(fr.path, fr.error))
            junit.append(JUnitCase(fr.path, fr.path, getattr(fr.error, "line", None), ERROR,
                                   message="the case file does not load", text=str(fr.error)))
            if args.exitfirst:
                break
            continue
        dups = duplicate_names(fr.docs)
        _with_extender_access(fr.docs, args)
        checked: list[tuple[Any, Verdict, float]] = []
        for i, doc in enumerate(fr.docs):
            names.add(doc.name)
            if not _selected(doc, args):
                deselected += 1
                continue
            out.progress(doc.name)
            t0 = time.perf_counter()
            if i in dups:
                v = Verdict(False, str(dups[i]), error=str(dups[i]))
            elif backend is not None:
                got = backend.check(doc)
                if got is None:  # not applicable to the backend: a skip, with the reason
                    skipped += 1
                    junit.append(JUnitCase(doc.file, doc.name, doc.line, SKIPPED, time.perf_counter() - t0,
                                           "not applicable to the backend (another version)"))
                    continue
                v = got
            else:
                v = check(doc, explain=args.explain)
            checked.append((doc, v, time.perf_counter() - t0))
            if v.skipped is not None:
                continue
            out.checked(v)
            if args.exitfirst and not args.update and not v.passed:
                stop = True  # -x: the first failure ends the run
                break
        if args.update:
            _update_file([(doc, v) for doc, v, _ in checked if v.skipped is None], args.update_keys or ())
        for doc, v, took in checked:  # in the file's order
            if v.skipped is not None:
                skipped += 1
                out.status(f"SKIP {safetext.line(doc.name)} ({safetext.line(doc.file)}:{doc.line}): "
                           f"{safetext.line(v.skipped)}")
                junit.append(JUnitCase(doc.file, doc.name, doc.line, SKIPPED, took, v.skipped))
                continue
            cases += 1
            if v.xfail is not None:
                if not v.passed:
                    xfailed += 1
                    out.status(f"XFAIL {safetext.line(doc.name)} ({safetext.line(doc.file)}:{doc.line}): "
                               f"{safetext.line(v.xfail)}")
                    junit.append(JUnitCase(doc.file, doc.name, doc.line, XFAILED, took, v.xfail))
                    continue
                v.passed = False  # strict, as the pytest plugin marks it: an expected failure that passes fails
                v.message = (f"{doc.file}:{doc.line}: case {doc.name!r} passes, but is marked xfail "
                             f"({safetext.line(v.xfail)}): remove `xfail` once the case is meant to pass")
            failed += not v.passed
            passed += v.passed
            entry = case_entry(doc, v, pictures, args.all_ties)
            report.append(entry)
            if v.passed:
                junit.append(JUnitCase(doc.file, doc.name, doc.line, PASSED, took))
            else:
                from kspread.workflow.reason import short_reason

                junit.append(JUnitCase(doc.file, doc.name, doc.line, FAILED, took,
                                       short_reason(v, doc.file, doc.line), v.message))
            out.case(doc, v, entry.get("actual", {}))
            if args.exitfirst and not v.passed:
                stop = True
                break
        if stop:
            break
    out.done()
    if args.json:
        _json_out([{k: x for k, x in e.items() if k not in ("cluster", "message", "why")} for e in report])
    unknown = [n for n in dict.fromkeys(args.case or []) if n not in names] if not stop else []
    for n in unknown:  # a mistyped name must not quietly run fewer cases
        _say(f"kspread: --case {n!r} names no case in {', '.join(args.files)}", sys.stderr)
    if not cases and not failed and not skipped and not xfailed:
        if unknown:
            return EXIT_USAGE
        if deselected:
            print(f"kspread: no case selected ({deselected} deselected)", file=sys.stderr)
        else:
            _say(_no_case(args.files), sys.stderr)
        return EXIT_NO_CASE
    summary = f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "") \
        + (f", {xfailed} xfailed" if xfailed else "") \
        + (f", {deselected} deselected" if deselected else "")
    if backend is not None:
        summary += backend.summary()
    if stop:
        summary += " (stopped at the first failure, -x)"
    written = _write_reports(args, report, summary)
    if args.junit_xml:
        from kspread.workflow.report_junit import render_junit

        written &= _write_report("--junit-xml", args.junit_xml, render_junit(junit, time.perf_counter() - started),
                                 "JUnit XML report")
    if args.json:
        _say(summary, sys.stderr)
    else:
        out.summary(summary, failed)
    if unknown:
        return EXIT_USAGE
    return EXIT_FAILED if failed or not written else EXIT_OK


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
                _say(f"kspread: GITHUB_STEP_SUMMARY {step_summary}: {e.strerror or e}", sys.stderr)
                ok = False
    if args.github or os.environ.get("GITHUB_ACTIONS") == "true":
        from kspread.workflow.report_ci import github_annotations

        # kspread's own workflow commands, their data and properties escaped (safetext.gh_*); the
        # runner reads both streams; --json keeps stdout JSON
        for line in github_annotations(report):
            print(line, file=sys.stderr if args.json else sys.stdout)
    return ok


def _write_report(flag: str, path: str, text: str, what: str) -> bool:
    from kspread.format.files import write_atomic

    try:
        write_atomic(path, text)
    except OSError as e:
        _say(f"kspread: {flag} {path}: {e.strerror or e}", sys.stderr)
        return False
    _say(f"kspread: {what} written to {path}", sys.stderr)
    return True

class _Output:
    """What ``kspread run`` prints: a line per case (PASS, FAIL, SKIP, XFAIL) and each
    failing case's report; ``-v`` also each case's actual results; ``-q`` only the failing
    cases. In colour (but with ``--no-color`` or ``NO_COLOR``) and with tables that fit the
    terminal on a TTY (rich), plain text otherwise. On a TTY a status line shows the
    progress (cases run, failed, the one running)."""

    def __init__(self, args: argparse.Namespace) -> None:
        import os

        self.quiet = args.quiet
        self.verbose = args.verbose
        self.silent = args.json
        self.console = None
        if not self.silent and sys.stdout.isatty():
            try:
                from rich.console import Console
            except ImportError:  # pragma: no cover - rich is a dependency
                pass
            else:
                # a long line folds at the terminal's width: CommandGuard keeps a fold from
                # beginning a line with a workflow command (a CI job may run kspread on a pty)
                guard = cast("IO[str]", safetext.CommandGuard(sys.stdout))  # a text stream (TextIOBase)
                # https://no-color.org: NO_COLOR set and not empty turns colour off, as --no-color does
                plain = bool(args.no_color or os.environ.get("NO_COLOR"))
                self.console = Console(file=guard, force_terminal=True, highlight=False, no_color=plain)
        self.status_shown: Any = None
        self.ran = self.failed = 0

    def progress(self, name: str) -> None:
        if self.console is None:
            return
        from rich.text import Text

        text = Text(f"[{self.ran} run, {self.failed} failed] {safetext.line(name)}")  # Text: no markup read
        if self.status_shown is None:
            self.status_shown = self.console.status(text)
            self.status_shown.start()
        else:
            self.status_shown.update(text)

    def done(self) -> None:
        if self.status_shown is not None:
            self.status_shown.stop()
            self.status_shown = None

    def error(self, text: str) -> None:
        _say(text, sys.stderr)

    def note(self, text: str) -> None:
        """A line of its own (a difference the backend found): on stderr with --json."""
        _say(text, sys.stderr if self.silent else sys.stdout)

    def status(self, text: str) -> None:
        """A case's line that is not a failure (SKIP, XFAIL): not with ``-q``."""
        if not self.quiet:
            self.note(text)

    def checked(self, v: Verdict) -> None:
        self.ran += 1
        self.failed += not v.passed

    def case(self, doc, v: Verdict, actual: dict[str, Any]) -> None:
        if self.silent or (self.quiet and v.passed):
            return
        where = f"{safetext.line(doc.file)}:{doc.line}" + (f", version {v.case.version}" if v.case else "")
        word = "PASS" if v.passed else "FAIL"
        body: list[str] = []
        if v.outcome is not None and self.verbose:
            body.append("  " + safetext.lines(_yaml_dump(actual)).replace("\n", "\n  ").rstrip())
        if not v.passed or (v.outcome is None and self.verbose):
            body.append("  " + safetext.lines(v.message).replace("\n", "\n  "))
        name = safetext.line(doc.name)
        if self.console is None:
            print(f"{word} {name} ({where})")
            for b in body:
                print(b)
            return
        from rich.text import Text

        self.console.print(Text.assemble((word, "bold green" if v.passed else "bold red"), f" {name} ",
                                         (f"({where})", "dim")))
        for b in body:
            # soft wrapping off: long lines fold at the terminal's width, indented
            self.console.print(Text(b), overflow="fold")

    def summary(self, text: str, failed: int) -> None:
        if self.console is None:
            _say(text)
        else:
            from rich.text import Text

            self.console.print(Text(safetext.lines(text), style="bold red" if failed else "bold green"))


def _update_file(checked: list[tuple[Any, Verdict]], keys: tuple[str, ...] = ()) -> None:
    """``--update``: write the updates of one file's cases (the file once). A case
    whose update is written passes; one the update cannot fix fails, saying why."""
    from kspread.workflow.update import UpdateError, apply_file, update_for

    pending = {}
    for doc, v in checked:
        if v.error is not None and v.outcome is None:
            continue  # did not load (or a duplicate name): never written
        try:
            upd = update_for(doc, v, keys)
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
        _say(f"updated {change}", sys.stderr)


def cmd_validate(args: argparse.Namespace) -> int:
    _missing(args.files, "validate")
    bad = 0
    count = 0
    report: list[dict[str, Any]] = []

    def invalid(entry: dict[str, Any], message: str) -> None:
        nonlocal bad
        bad += 1
        report.append({**entry, "valid": False, "error": message})
        if not args.json:
            _say(message)

    for fr in collect(args.files):
        if fr.error is not None:
            invalid({"file": fr.path}, str(fr.error))
            continue
        dups = duplicate_names(fr.docs)
        _with_extender_access(fr.docs, args)
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
        _json_out(report)
    print(f"{count} case(s) checked, {bad} invalid", file=sys.stderr)
    if not count and not bad:
        _say(_no_case(args.files), sys.stderr)
        return EXIT_NO_CASE
    return EXIT_FAILED if bad else EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    import shutil

    from kspread.workflow.explain import explain_compact, explain_cycles
    from kspread.workflow.runner import differing_nodes, explain_run

    _missing([args.file], "explain")
    width = shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80
    shown = 0
    bad = 0
    usage = False
    entries: list[dict[str, Any]] = []
    for fr in collect([args.file]):
        if fr.error is not None:
            _say(str(fr.error), sys.stderr)
            return EXIT_FAILED
        _with_extender_access(fr.docs, args)
        for doc in fr.docs:
            if args.case is not None and doc.name != args.case:
                continue
            try:
                case = load_case(doc)
                outcome, cycles = explain_run(case)
            except CaseError as e:
                doc.place(e)
                _say(str(e), sys.stderr)
                bad += 1
                if args.json:
                    entries.append({"file": doc.file, "line": doc.line, "name": doc.name, "error": str(e)})
                continue
            names = [n.name for n in case.cluster.nodes]
            unknown = [n for n in args.node or [] if n not in names]
            if unknown:
                _say(f"{doc.file}:{doc.line}: case {doc.name!r} has no node {unknown[0]!r} (--node)", sys.stderr)
                usage = True
                continue
            shown += 1
            first = differing_nodes(outcome.diffs, set(names)) if case.expect else []
            if args.json:
                from kspread.workflow.explain_json import explain_entry

                entries.append(explain_entry(doc, str(case.version), outcome, cycles))
                continue
            print(f"case {safetext.line(doc.name)} ({safetext.line(doc.file)}:{doc.line}, version {case.version})")
            if args.verbose:
                text = explain_cycles(outcome.scheduler, cycles, nodes=args.node, header=case.is_sequence)
            else:
                text = explain_compact(outcome.scheduler, cycles, nodes=args.node, first=first,
                                       header=case.is_sequence, width=width - 2, top=args.top)
            print("  " + safetext.lines(text).replace("\n", "\n  "))
            print()
    if shown == 0 and bad == 0 and not usage:
        if args.case:
            raise UsageError(f"kspread explain: no case named {args.case!r} in {args.file}")
        _say(f"kspread explain: no case in {args.file}", sys.stderr)
        return EXIT_NO_CASE
    if args.json:
        _json_out(entries)
    return EXIT_USAGE if usage else EXIT_FAILED if bad else EXIT_OK


def _with_extender_access(docs, args: argparse.Namespace) -> None:
    from kspread.workflow.access import extender_access

    access = extender_access(args)
    for doc in docs:
        doc.extender_access = access


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


def _import(args: argparse.Namespace) -> int:
    """``kspread import``: its messages (which quote the dump's names) through ``safetext``;
    the case it writes to standard output is data, as a file would be."""
    import contextlib

    from kspread.format.importer import cmd_import

    guard = safetext.Lines(sys.stderr)
    try:
        with contextlib.redirect_stderr(guard):
            return cmd_import(args)
    finally:
        guard.flush()


def cmd_completion(args: argparse.Namespace) -> int:
    from kspread.workflow.completion import SHELLS

    sys.stdout.write(SHELLS[args.shell](build_parser()))
    return 0


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return n


def update_keys_arg(text: str) -> tuple[str, ...]:
    """``--update-keys``: expect keys, comma-separated; ``all`` for every key a run reports."""
    from kspread.workflow.runner import EXPECT_KEYS

    keys = tuple(k.strip() for k in text.split(",") if k.strip())
    if keys == ("all",):
        return tuple(k for k in EXPECT_KEYS if k != "spread")  # spread needs its topology key: write it by hand
    unknown = [k for k in keys if k not in EXPECT_KEYS]
    if unknown or not keys:
        raise argparse.ArgumentTypeError(f"not an expect key: {', '.join(unknown) or repr(text)} "
                                         f"(keys: {', '.join(EXPECT_KEYS)}, or all)")
    return keys


class _Parser(argparse.ArgumentParser):
    """argparse's parser, but a usage error exits ``EXIT_USAGE`` (4, as pytest's), its
    message (which quotes the command line) printed through ``safetext``."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        _say(f"{self.prog}: error: {message}", sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    from kspread.workflow import access

    ap = _Parser(prog="kspread", description="kube-scheduler policy-testing harness",
                 epilog="exit status: 0 all passed, 1 a case failed (or is invalid), 4 a usage error (a bad "
                        "option, a path that does not exist, a --case name that names no case), 5 no case "
                        "collected or selected")
    ap.add_argument("--version", action="version", version=f"%(prog)s {_package_version()}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run cases: a line per case, the failing cases' reports, a summary")
    r.add_argument("files", nargs="+", help="case files or directories")
    r.add_argument("--json", action="store_true",
                   help="print a JSON report (failing cases with their expected values and the differences)")
    loud = r.add_mutually_exclusive_group()
    loud.add_argument("-q", "--quiet", action="store_true", help="print only the failing cases and the summary")
    loud.add_argument("-v", "--verbose", action="store_true",
                      help="also print every case's actual results, in the shape of expect, every key filled")
    r.add_argument("--no-color", action="store_true",
                   help="no colour on a terminal (as the NO_COLOR environment variable)")
    r.add_argument("--all-ties", action="store_true",
                   help="report every node of each tie (ties: the count and the first 10 nodes otherwise)")
    r.add_argument("-k", dest="keyword", metavar="EXPR",
                   help="run only the cases whose name or tags match the expression, as pytest -k "
                        "('web and not slow')")
    r.add_argument("--case", action="append", metavar="NAME", help="run only the case of this name (repeatable)")
    r.add_argument("--update", action="store_true",
                   help="rewrite the expect of failing cases (and fill empty ones) with the actual results")
    r.add_argument("--update-keys", metavar="KEYS", type=update_keys_arg,
                   help="with --update: also write these expect keys whole (comma-separated, e.g. "
                        "scores,totals; 'all' for every key); an empty expect then gets only these")
    access.extender_options(r)
    r.add_argument("--backend", metavar="PATH", action="append",
                   help="run the cases through a kspread backend (a kube-scheduler build of upstream's code, "
                        "backend/build.sh) instead of the reference engine; repeat it with backends of other "
                        "minor versions: each case runs through the one of its version, a case of a version no "
                        "backend has is skipped")
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
    r.add_argument("--junit-xml", metavar="FILE",
                   help="write a JUnit XML report (one testcase per case), which CI systems read")
    r.add_argument("--github", action="store_true",
                   help="print GitHub Actions annotations (::error file=...,line=...) for failing cases "
                        "(on by itself when GITHUB_ACTIONS=true)")
    r.set_defaults(func=cmd_run)
    v = sub.add_parser("validate", help="check case files without running them")
    v.add_argument("files", nargs="+", help="case files or directories")
    v.add_argument("--json", action="store_true", help="print a JSON report: each case, valid or its error")
    access.extender_options(v)
    v.set_defaults(func=cmd_validate)
    from kspread.workflow.diff import add_arguments as diff_arguments

    d = sub.add_parser("diff", help="compare two scheduler configurations over a corpus of cases")
    diff_arguments(d)
    d.set_defaults(func=_diff)
    e = sub.add_parser("explain", help="per node: the first rejecting filter, or each plugin's score and the total")
    e.add_argument("file", help="a case file (or a directory of them)")
    e.add_argument("--case", help="the case's name (default: every case in the file)")
    e.add_argument("-v", "--verbose", action="store_true",
                   help="per node every filter plugin's status, every score plugin's raw, normalized and weighted "
                   "score, the preemption (default: one row per node)")
    e.add_argument("--json", action="store_true",
                   help="print a JSON report: each case as run --json gives it, with each cycle explained (cycles)")
    e.add_argument("--top", metavar="N", type=_positive_int,
                   help="at most N scored nodes (highest totals) and N other nodes per cycle; the rest are counted")
    e.add_argument("--node", metavar="NAME", action="append",
                   help="explain only this node (repeatable)")
    access.extender_options(e)
    e.set_defaults(func=cmd_explain)
    sc = sub.add_parser("schema", help="print the case format's JSON Schema (or its path), for editors")
    sc.add_argument("--path", action="store_true", help="print the schema file's path instead of its content")
    sc.set_defaults(func=cmd_schema)
    from kspread.format import importer

    im = sub.add_parser("import", help="write a case from a kubectl dump of a cluster (kubectl get ... -A -o yaml)")
    importer.add_arguments(im)
    im.set_defaults(func=_import)
    co = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)")
    co.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell the script is for")
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
    except UsageError as e:
        _say(str(e), sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 1
    except SystemExit as e:
        if not isinstance(e.code, str):
            raise
        # a message (a backend's error among them), which Python prints: as any other text
        raise SystemExit(safetext.lines(e.code)) from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
