"""The pytest plugin: every kspread case document becomes one test item.

Registered through the ``pytest11`` entry point, so ``pytest any/dir`` collects
case files once kspread is installed. All logic lives in the library; this
module only adapts it to pytest (collection, markers, failure reports).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kspread.errors import CaseError
from kspread.format.loader import CaseDoc, mentions_case, read_file, tested_trees
from kspread.workflow.runner import check, duplicate_names

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr
    from pluggy import Result

_SUFFIXES = (".yaml", ".yml", ".json")
_MARKER_OK = re.compile(r"^[A-Za-z_][\w.+:-]*\Z")
# pytest's own markers change how an item runs; a tag of that name is not applied
# as a marker (it still selects with -k).
_RESERVED_MARKERS = {"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kspread")
    group.addoption(
        "--kspread-update",
        action="store_true",
        help="rewrite the expect of failing cases (and fill empty ones) with the actual results",
    )
    group.addoption(
        "--kspread-config",
        metavar="PATH",
        help="a KubeSchedulerConfiguration to run cases that give no profile with (instead of the "
        "version's default profile)",
    )


def pytest_configure(config: pytest.Config) -> None:
    cfg = config.getoption("kspread_config", None)
    if cfg is not None:
        from kspread.format.config import read_config_text

        try:  # once, before any case: a file that cannot be read at all is a usage error (its
            # content errors are each case's failure, at their line)
            read_config_text(cfg)
        except CaseError as e:
            raise pytest.UsageError(f"--kspread-config: {e}") from None
    if config.getoption("kspread_update", False):
        config.pluginmanager.register(GoldenUpdate(config), "kspread-update")


class GoldenUpdate:
    """``--kspread-update``: gathers the updates of the run's cases and writes them at
    the end of the session, each file once. A case's update travels with its test
    report, so under pytest-xdist every worker's updates reach the controller, which
    alone writes. A session in which no case ran updated nothing: it fails, saying so."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.updates: list = []
        self.cases_run = 0

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo
    ) -> Generator[None, Result[pytest.TestReport], None]:
        outcome = yield
        if call.when != "call" or not isinstance(item, (CaseItem, BrokenFile)):
            return
        rep = outcome.get_result()
        # extra attributes of the report: serialized with it to the xdist controller
        rep.kspread_case = True  # type: ignore[attr-defined]
        upd = getattr(item, "kspread_update", None)
        if upd is not None and rep.passed:
            rep.kspread_update = upd  # type: ignore[attr-defined]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and getattr(report, "kspread_case", False):
            self.cases_run += 1
        upd = getattr(report, "kspread_update", None)
        if upd is not None and report.when == "call" and report.passed:
            from kspread.workflow.update import Update

            self.updates.append(Update.from_dict(upd))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput") or self.config.getoption("collectonly", False):
            return  # a pytest-xdist worker: the controller writes
        if not self.updates:
            if not self.cases_run:
                self._write(["kspread: no case ran; --kspread-update updated nothing"])
                if session.exitstatus == pytest.ExitCode.OK:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        from kspread.workflow.update import apply_all

        res = apply_all(self.updates)
        lines = []
        if res.updated:
            lines.append(f"kspread: updated {len(res.updated)} case(s):")
            lines += [f"  {c}" for c in res.changes]
        if res.failed:
            lines.append(f"kspread: could not update {len(res.failed)} case(s); the run fails:")
            for u, why in res.failed:
                lines.append(f"  {u.file}: {u.case}: " + why.replace("\n", "\n    "))
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        self._write(lines)

    def _write(self, lines: list[str]) -> None:
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line("")  # end the progress line
            tr.write_sep("-", "kspread --kspread-update")
            for line in lines:
                tr.write_line(line)
        else:  # pragma: no cover
            print("\n".join(lines))


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix not in _SUFFIXES:
        return None
    try:
        head = file_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not mentions_case(head):
        return None
    return CaseFile.from_parent(parent, path=file_path)


class CaseFailure(Exception):
    """A case did not produce what it expects; the message is the whole report."""


class CaseFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        res = read_file(self.path)
        if res.error is not None:
            yield BrokenFile.from_parent(self, name=self.path.name, error=res.error)
            return
        dups = duplicate_names(res.docs)
        roots = _tested_trees(self.config)
        for i, doc in enumerate(res.docs):
            name = doc.name
            if i in dups:
                yield BrokenFile.from_parent(self, name=f"{name}#{doc.index + 1}", error=dups[i])
                continue
            doc.roots = roots
            item = CaseItem.from_parent(self, name=name, doc=doc)
            tags = doc.data.get("tags") if isinstance(doc.data, dict) else None
            for tag in tags if isinstance(tags, list) else []:
                if isinstance(tag, str) and _MARKER_OK.match(tag) and tag not in _RESERVED_MARKERS:
                    _register_marker(self.config, tag)
                    item.add_marker(tag)
            yield item


def _tested_trees(config: pytest.Config) -> tuple[str, ...]:
    """pytest's rootdir and the paths it was given: where a case's profile.config may lie."""
    here = config.invocation_params.dir
    return tested_trees([str(here / a.split("::", 1)[0]) for a in config.args], str(config.rootpath))


def _register_marker(config: pytest.Config, tag: str) -> None:
    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    if tag not in known:
        config.addinivalue_line("markers", f"{tag}: kspread case tag")


class BrokenFile(pytest.Item):
    def __init__(self, *, error: CaseError, **kw: Any) -> None:
        super().__init__(**kw)
        self.error = error
        # JUnit XML: pytest writes an item's user properties in every junit family, while
        # the testcase's own file/line attributes exist in xunit1 only
        self.user_properties += [("file", self.nodeid.split("::", 1)[0]), ("line", str(error.line or 1))]

    def runtest(self) -> None:
        raise CaseFailure(str(self.error))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str | TerminalRepr:
        if isinstance(excinfo.value, CaseFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, (self.error.line or 1) - 1, f"kspread file {self.path.name}"


class CaseItem(pytest.Item):
    def __init__(self, *, doc: CaseDoc, **kw: Any) -> None:
        super().__init__(**kw)
        self.doc = doc
        self.user_properties += [("file", self.nodeid.split("::", 1)[0]), ("line", str(doc.line))]

    def runtest(self) -> None:
        verdict = check(self.doc, self.config.getoption("kspread_config", None))
        if self.config.getoption("kspread_update", False):
            from kspread.workflow.update import UpdateError, check_update, update_for

            try:
                upd = update_for(self.doc, verdict)
                if upd is not None:
                    self.kspread_update = check_update(upd).to_dict()
                    return
            except UpdateError as e:
                head = verdict.message + "\n\n" if verdict.message else ""
                raise CaseFailure(f"{head}--kspread-update could not fix this case: {e}") from None
        if not verdict.passed:
            message = verdict.message
            # pytest keeps a failure's traceback (sys.last_traceback) to the end of the session:
            # its frame must not hold the run (the cluster, every pod) alive for the final gc
            del verdict
            raise CaseFailure(message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str | TerminalRepr:
        if isinstance(excinfo.value, CaseFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.doc.line - 1, f"kspread case {self.name}"
