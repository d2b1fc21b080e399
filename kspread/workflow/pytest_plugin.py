"""The pytest plugin: every kspread case document becomes one test item.

Registered through the ``pytest11`` entry point, so ``pytest any/dir`` collects
case files once kspread is installed. All logic lives in the library; this
module only adapts it to pytest (collection, markers, failure reports).

Loaded by every pytest run in an environment where kspread is installed, so it
imports nothing heavy at start-up: the loader, the engine (numpy) and jsonschema are
imported when the first case file is collected (``kspread.format.sniff`` tells a
case file from other YAML and JSON without them).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from kspread.errors import CaseError
from kspread.format.files import inside_trees, read_regular, sniff_text
from kspread.format.sniff import mentions_case
from kspread.workflow import safetext

if TYPE_CHECKING:
    from pluggy import Result

# what ``Item.repr_failure`` returns: a str or pytest's TerminalRepr, which pytest does not
# export (kspread uses no private pytest API, not even for typing)
FailureRepr = Any

if TYPE_CHECKING:
    from kspread.format.loader import CaseDoc

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
        "--kspread-update-keys",
        metavar="KEYS",
        help="with --kspread-update: also write these expect keys whole (comma-separated, e.g. scores,totals; "
        "'all' for every key); an empty expect then gets only these",
    )
    group.addoption(
        "--kspread-config",
        metavar="PATH",
        help="a KubeSchedulerConfiguration to run cases that give no profile with (instead of the "
        "version's default profile)",
    )
    group.addoption(
        "--kspread-extender",
        action="append",
        metavar="NAME=URL",
        help="call the HTTP extender NAME (its name in the case, or the urlPrefix a KubeSchedulerConfiguration "
        "writes) at URL instead of the urlPrefix written (repeatable)",
    )
    group.addoption(
        "--kspread-extender-env",
        action="append",
        metavar="NAME",
        help="let an extender's urlPrefix read the environment variable NAME as ${NAME} (repeatable; also the ini "
        "key kspread_extender_env; a variable not named is never read: ${NAME:-default} takes its default)",
    )
    group.addoption(
        "--kspread-allow-extender-host",
        action="append",
        metavar="HOST[:PORT]",
        help="let a case's extenders be called on HOST (any port, or PORT) besides loopback (repeatable; also the "
        "ini key kspread_allow_extender_hosts)",
    )
    group.addoption(
        "--kspread-extender-max-timeout",
        metavar="SECONDS",
        help="the longest httpTimeout a case's extender may set (default 60): a call holds the run that long at most",
    )
    parser.addini("kspread_extender_env", "environment variables an extender's urlPrefix may read (one a line)",
                  type="linelist", default=[])
    parser.addini("kspread_allow_extender_hosts", "HOST or HOST:PORT a case's extenders may be called on besides "
                  "loopback (one a line)", type="linelist", default=[])
    group.addoption(
        "--kspread-backend",
        metavar="PATH",
        action="append",
        help="run the cases through a kspread backend (a kube-scheduler build of upstream's code, "
        "backend/build.sh) instead of the reference engine; repeat it with backends of other minor versions: "
        "each case runs through the one of its version, a case of a version no backend has is skipped",
    )
    group.addoption(
        "--kspread-backend-differences",
        metavar="FILE",
        help="with --kspread-backend: a YAML mapping of case names to the reason the backend is known "
        "to differ from their expectation; those cases are expected failures (xfail) with that reason",
    )
    group.addoption(
        "--kspread-explain",
        choices=("short", "full", "none"),
        default="short",
        help="how a failure report explains the run: short (one row per node, the default), full (every "
        "plugin's status and scores, as `kspread explain --verbose`) or none (left out)",
    )
    group.addoption(
        "--kspread-html",
        metavar="FILE",
        help="write an HTML report of the cases: one self-contained page with a summary, the differences and pictures",
    )
    group.addoption(
        "--kspread-markdown",
        metavar="FILE",
        help="write a markdown summary of the cases (a pull-request comment, a GitHub job summary)",
    )


def _update_keys(config: pytest.Config) -> tuple[str, ...]:
    text = config.getoption("kspread_update_keys", None)
    if not text:
        return ()
    if not config.getoption("kspread_update", False):
        raise pytest.UsageError("--kspread-update-keys needs --kspread-update")
    from kspread.workflow.cli import update_keys_arg  # only when the option is given: start-up stays light

    try:
        return update_keys_arg(text)
    except Exception as e:  # argparse.ArgumentTypeError
        raise pytest.UsageError(f"--kspread-update-keys: {e}") from None


_EXTENDER_INI = pytest.StashKey[dict[str, list[str]]]()


def _extender_ini(config: pytest.Config) -> dict[str, list[str]]:
    """The ini keys kspread_extender_env and kspread_allow_extender_hosts, read once per
    session: the lists pytest keeps, which ``config.addinivalue_line`` (a conftest) extends."""
    ini = config.stash.get(_EXTENDER_INI, None)
    if ini is None:
        ini = {key: config.getini(key) for key in ("kspread_extender_env", "kspread_allow_extender_hosts")}
        config.stash[_EXTENDER_INI] = ini
    return ini


def _extender_access(config: pytest.Config) -> Any:
    """The ExtenderAccess the options and ini keys give (a usage error for a malformed one);
    read at each file collected, so a conftest may add to the ini keys
    (``config.addinivalue_line("kspread_extender_env", NAME)``). None when nothing is given
    (loopback only, no variable)."""
    flags = ("kspread_extender", "kspread_extender_env", "kspread_allow_extender_host", "kspread_extender_max_timeout")
    ini = _extender_ini(config)
    if not any(config.getoption(f, None) for f in flags) and not any(ini.values()):
        return None
    from kspread.format.extenders import DEFAULT_MAX_TIMEOUT, ExtenderAccess  # only when something is given
    from kspread.workflow.access import extender_env_name, extender_host, extender_max_timeout, extender_url

    urls = {}
    for text in config.getoption("kspread_extender", None) or []:
        try:
            name, url = extender_url(text)
        except Exception as e:  # argparse.ArgumentTypeError
            raise pytest.UsageError(f"--kspread-extender: {e}") from None
        urls[name] = url
    env: list[str] = []
    hosts: list[str] = []
    for flag, key, check, into in (
            ("--kspread-extender-env", "kspread_extender_env", extender_env_name, env),
            ("--kspread-allow-extender-host", "kspread_allow_extender_hosts", extender_host, hosts)):
        given = [(flag, t) for t in config.getoption(flag.lstrip("-").replace("-", "_"), None) or []]
        for where, text in [*given, *((f"ini key {key}", t) for t in ini[key])]:
            try:
                into.append(check(text.strip()))
            except Exception as e:  # argparse.ArgumentTypeError
                raise pytest.UsageError(f"{where}: {e}") from None
    most = DEFAULT_MAX_TIMEOUT
    if config.getoption("kspread_extender_max_timeout", None) is not None:
        try:
            most = extender_max_timeout(config.getoption("kspread_extender_max_timeout"))
        except Exception as e:  # argparse.ArgumentTypeError
            raise pytest.UsageError(f"--kspread-extender-max-timeout: {e}") from None
    return ExtenderAccess(urls=urls, env=frozenset(env), hosts=tuple(hosts), max_timeout=most)


def pytest_configure(config: pytest.Config) -> None:
    _extender_access(config)  # a malformed NAME=URL, NAME or HOST is a usage error, before any case
    _backend_differences(config)  # likewise a --kspread-backend-differences file that is no mapping
    _update_keys(config)  # and an --kspread-update-keys naming no expect key
    _open_backend(config)  # and a --kspread-backend that is no backend: one error, not one per case
    cfg = config.getoption("kspread_config", None)
    if cfg is not None:
        from kspread.format.config import read_config_text

        try:  # once, before any case: a file that cannot be read at all is a usage error (its
            # content errors are each case's failure, at their line)
            read_config_text(cfg)
        except CaseError as e:
            raise pytest.UsageError(safetext.lines(f"--kspread-config: {e}")) from None
    if config.getoption("kspread_update", False):
        config.pluginmanager.register(GoldenUpdate(config), "kspread-update")
    if config.getoption("kspread_html", None) or config.getoption("kspread_markdown", None):
        config.pluginmanager.register(CaseReports(config), "kspread-reports")
    if config.option.markers:
        _register_tags_in_use(config)


def _register_tags_in_use(config: pytest.Config) -> None:
    """``pytest --markers``: pytest lists the markers before collecting, so the tags of
    the case files under the given paths (pytest's testpaths, else the current
    directory, when none) are read here and registered as markers."""
    from kspread.format.loader import collect

    here = config.invocation_params.dir
    paths = [str(here / a.split("::", 1)[0]) for a in config.args] or [str(here)]
    for fr in collect(paths):
        for doc in fr.docs:
            for tag in _tags(doc):
                _register_marker(config, tag)


def _tags(doc: CaseDoc) -> list[str]:
    """The case's tags that are applied as markers."""
    tags = doc.data.get("tags") if isinstance(doc.data, dict) else None
    return [t for t in (tags if isinstance(tags, list) else [])
            if isinstance(t, str) and _MARKER_OK.match(t) and t not in _RESERVED_MARKERS]


class CaseReports:
    """``--kspread-html`` and ``--kspread-markdown``: each case's report entry
    (``kspread.workflow.report``) travels with its test report (so pytest-xdist workers'
    reach the controller), and the controller writes the reports at the session's end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.entries: list[dict[str, Any]] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo
    ) -> Generator[None, Result[pytest.TestReport], None]:
        outcome = yield
        entry = getattr(item, "kspread_entry", None)
        if call.when == "call" and entry is not None:
            outcome.get_result().kspread_entry = entry  # type: ignore[attr-defined]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = getattr(report, "kspread_entry", None)
        if report.when == "call" and entry is not None:
            self.entries.append(entry)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput") or self.config.getoption("collectonly", False):
            return  # a pytest-xdist worker: the controller writes
        from kspread.format.files import write_atomic

        failed = sum(not e.get("passed") for e in self.entries)
        summary = f"{len(self.entries) - failed} passed, {failed} failed"
        written = []
        html_path = self.config.getoption("kspread_html", None)
        md_path = self.config.getoption("kspread_markdown", None)
        jobs = []
        if html_path:
            from kspread.workflow.report_html import render_html

            jobs.append(("--kspread-html", html_path, render_html(self.entries, summary, title="kspread cases")))
        if md_path:
            from kspread.workflow.report_ci import render_markdown

            jobs.append(("--kspread-markdown", md_path, render_markdown(self.entries, summary)))
        for flag, path, text in jobs:
            try:
                write_atomic(str(self.config.invocation_params.dir / path), text)
                written.append(f"kspread: {flag} report written to {path}")
            except OSError as e:
                written.append(f"kspread: {flag} {path}: {e.strerror or e}")
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None and written:
            tr.write_line("")  # end the progress line
            tr.write_sep("-", "kspread reports")
        for line in written:
            line = safetext.lines(line)
            if tr is not None:
                tr.write_line(line)
            else:  # pragma: no cover
                print(line)


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
                tr.write_line(safetext.lines(line))
        else:  # pragma: no cover
            print(safetext.lines("\n".join(lines)))


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix not in _SUFFIXES:
        return None
    if not inside_trees(file_path, _tested_trees(parent.config)):
        # a symlink out of the trees being tested (one a pull request adds): neither read nor,
        # with --kspread-update, written through
        return None
    try:
        data = read_regular(file_path)
    except OSError:
        return None
    if not mentions_case(sniff_text(data)):
        return None
    if safetext.unsafe(str(file_path)) is not None:
        # pytest prints a node id as it is: a file name holding a line break, an escape or
        # another control character gets an id with it shown escaped (and fails: read_file)
        try:
            rel = file_path.relative_to(parent.config.rootpath).as_posix()
        except ValueError:
            rel = file_path.name
        # ``::`` and ``[...]`` in it would be read as pytest's own separators (9.2 parses a string
        # id: `[31m.yaml]` became parameters, and the file's items could not be made)
        return CaseFile.from_parent(parent, path=file_path, data=None, name=_id_text(file_path.name),
                                    nodeid=_id_text(rel))
    return CaseFile.from_parent(parent, path=file_path, data=data)


def _id_text(text: str) -> str:
    """Text for a pytest node id of a file whose path holds an unprintable character: escaped
    (safetext.line), with ``:``, ``[`` and ``]`` percent-encoded so pytest reads one name."""
    return safetext.line(text).replace(":", "%3A").replace("[", "%5B").replace("]", "%5D")


class CaseFailure(Exception):
    """A case did not produce what it expects; the message is the whole report."""


class CaseNotLoaded(Exception):
    """A case that could not be loaded: a failure whatever its ``xfail`` expects."""


class CaseFile(pytest.File):
    def __init__(self, *, data: bytes | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        # the bytes pytest_collect_file read to tell a case file: collect parses them (the
        # file is read once), then lets them go
        self._data = data

    def collect(self) -> Iterator[pytest.Item]:
        from kspread.format.loader import read_file  # the heavy imports: at the first case file
        from kspread.workflow.runner import duplicate_names

        data, self._data = self._data, None
        res = read_file(self.path, data)
        if res.error is not None:
            yield BrokenFile.from_parent(self, name=safetext.line(self.path.name), error=res.error)
            return
        dups = duplicate_names(res.docs)
        roots = _tested_trees(self.config)
        access = _extender_access(self.config)
        for i, doc in enumerate(res.docs):
            # a name with a control character is refused when the case loads (the loader names
            # such a case by its file); ``##[`` is shown as ``##\[`` (safetext.line)
            name = safetext.line(doc.name)
            if i in dups:
                broken = f"{name}#{doc.index + 1}"
                yield BrokenFile.from_parent(self, name=broken, error=dups[i], nodeid=f"{self.nodeid}::{broken}")
                continue
            doc.roots = roots
            doc.extender_access = access
            # the item's id given as a string: pytest (9.2) reads a string id's `[...]` as
            # parameters, as it reads the ids --lf stored, so a variant item `case[v]` is found
            # again (an id made from the name alone keeps the brackets in the name)
            item = CaseItem.from_parent(self, name=name, doc=doc, nodeid=f"{self.nodeid}::{name}")
            for tag in _tags(doc):
                item.add_marker(_tag_mark(self.config, tag))
            _mark_from_case(item, doc)
            yield item


def _mark_from_case(item: pytest.Item, doc: CaseDoc) -> None:
    """The case's own ``skip`` / ``xfail`` (kspread's extension) as pytest's marks. xfail is
    strict: a case that passes fails the run. Only a case's failure counts as the expected
    one (CaseFailure); the case is still loaded, so a case that cannot be fails even so."""
    data = doc.data if isinstance(doc.data, dict) else {}
    xfail = data.get("xfail")
    if isinstance(xfail, str) and xfail.strip() and "skip" not in data:
        item.add_marker(pytest.mark.xfail(reason=safetext.line(xfail), raises=CaseFailure, strict=True))


# per session, not per case file: a corpus of 2,000 files would resolve the tested paths
# and parse the registered markers 2,000 times
_TREES = pytest.StashKey[tuple[str, ...]]()
_MARKERS = pytest.StashKey[set[str]]()
_TAG_MARKS = pytest.StashKey[dict[str, pytest.MarkDecorator]]()


def _tested_trees(config: pytest.Config) -> tuple[str, ...]:
    """pytest's rootdir and the paths it was given: where a case's profile.config may lie."""
    trees = config.stash.get(_TREES, None)
    if trees is None:
        from kspread.format.files import tested_trees  # light: the loader waits for the first case file

        here = config.invocation_params.dir
        trees = tested_trees([str(here / a.split("::", 1)[0]) for a in config.args], str(config.rootpath))
        config.stash[_TREES] = trees
    return trees


def _reporting(config: pytest.Config) -> bool:
    return bool(config.getoption("kspread_html", None) or config.getoption("kspread_markdown", None))


def _tag_mark(config: pytest.Config, tag: str) -> pytest.MarkDecorator:
    """The marker of a case tag, registered at its first case and then shared by the
    items of every case with that tag (one mark per tag, not one per item)."""
    marks = config.stash.setdefault(_TAG_MARKS, {})
    mark = marks.get(tag)
    if mark is None:
        _register_marker(config, tag)
        mark = marks[tag] = getattr(pytest.mark, tag)
    return mark


def _register_marker(config: pytest.Config, tag: str) -> None:
    known = config.stash.get(_MARKERS, None)
    if known is not None and tag in known:
        return
    # a tag not seen yet: read the registered markers again (another plugin may have added it)
    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    if tag not in known:
        config.addinivalue_line("markers", f"{tag}: kspread case tag")
        known.add(tag)
    config.stash[_MARKERS] = known


class BrokenFile(pytest.Item):
    def __init__(self, *, error: CaseError, **kw: Any) -> None:
        super().__init__(**kw)
        self.error = error
        # JUnit XML: pytest writes an item's user properties in every junit family, while
        # the testcase's own file/line attributes exist in xunit1 only
        self.user_properties += [("file", _file_id(self)), ("line", str(error.line or 1))]

    def runtest(self) -> None:
        if _reporting(self.config):
            from kspread.workflow.report import file_entry

            self.kspread_entry = file_entry(_file_id(self), self.error)
            self.kspread_entry["name"] = self.name
            self.kspread_entry["passed"] = False
        from kspread.workflow.reason import message_reason

        text = str(self.error)
        raise CaseFailure(message_reason(text, _file_id(self), self.error.line or 1) + "\n" + text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str | FailureRepr:
        if isinstance(excinfo.value, (CaseFailure, CaseNotLoaded)):
            return _failure_text(excinfo)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, (self.error.line or 1) - 1, f"kspread file {safetext.line(self.path.name)}"


def _file_id(item: pytest.Item) -> str:
    """The node id of the item's file (its parent's: a file whose name is shown escaped
    may have ``::`` in it)."""
    parent = item.parent
    return parent.nodeid if isinstance(parent, CaseFile) else item.nodeid.split("::", 1)[0]


def _skip(reason: str) -> NoReturn:
    """Skip the running case item, reported at the case's file and line (``-rs`` prints
    ``SKIPPED [1] cases/x.yaml:3: reason``), not at this module's line."""
    reason = safetext.line(reason)  # -rs prints it as it is
    try:
        exc = pytest.skip.Exception(reason, _use_item_location=True)
    except TypeError:  # pragma: no cover - a pytest without the keyword: the plugin's line
        exc = pytest.skip.Exception(reason)
    raise exc


def _backend_differences(config: pytest.Config) -> dict[str, str]:
    """``--kspread-backend-differences FILE``: case name -> reason, read once."""
    known = getattr(config, "_kspread_backend_differences", None)
    if known is None:
        path = config.getoption("kspread_backend_differences", None)
        known = {}
        if path:
            import yaml

            try:
                with open(path, encoding="utf-8") as f:
                    data = yaml.safe_load(f)
            except (OSError, yaml.YAMLError) as e:
                raise pytest.UsageError(safetext.lines(f"--kspread-backend-differences {path}: {e}")) from None
            if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in data.items()):
                raise pytest.UsageError(f"--kspread-backend-differences {path}: not a mapping of case names "
                                        "to reasons")
            known = data
        config._kspread_backend_differences = known  # type: ignore[attr-defined]
    return known


def _open_backend(config: pytest.Config):
    """``--kspread-backend PATH`` (repeated: one backend per minor version): the backends, each
    asked for its ``--info`` once; a usage error when one is none."""
    run = getattr(config, "_kspread_backend_run", None)
    path = config.getoption("kspread_backend", None)
    if run is None and path:
        from kspread.workflow.backend import BackendRun

        try:
            run = BackendRun.start(path, False, lambda text: None)
        except SystemExit as e:
            # the backend's own words (its --info output): printed as any other text
            raise pytest.UsageError(safetext.lines(str(e).replace("kspread run:", "--kspread-backend:", 1))) from None
        config._kspread_backend_run = run  # type: ignore[attr-defined]
    return run


def _backend_check(config: pytest.Config, doc: CaseDoc, item: pytest.Item):
    """``--kspread-backend``: the case's verdict through the backend; a case that does not
    apply there is skipped with the reason."""
    from kspread.workflow.backend import BackendError

    run = _open_backend(config)
    known = _backend_differences(config)
    if doc.name in known:
        item.add_marker(pytest.mark.xfail(reason=safetext.line(f"a known difference of the backend: {known[doc.name]}"),
                                          raises=CaseFailure, strict=False))
    skipped: list[str] = []
    run.say = skipped.append
    try:
        verdict = run.check(doc, config.getoption("kspread_config", None))
    except BackendError as e:  # pragma: no cover - check turns it into a failed verdict
        raise CaseFailure(str(e)) from None
    if verdict is None:
        _skip(skipped[0].split(": ", 1)[1] if skipped else "not applicable to the backend")
    return verdict


class CaseItem(pytest.Item):
    def __init__(self, *, doc: CaseDoc, **kw: Any) -> None:
        super().__init__(**kw)
        # the case's parsed document, until the item runs (runtest lets it go)
        self.doc: CaseDoc | None = doc
        self.line = doc.line
        self.user_properties += [("file", _file_id(self)), ("line", str(doc.line))]

    def runtest(self) -> None:
        doc = self.doc if self.doc is not None else self._read_again()
        # a corpus's items stay alive to the session's end (pytest holds them), and each
        # pass of the garbage collector over the live objects would walk every case's
        # document again: an item that has run keeps its name and line, not its document
        self.doc = None
        self._run(doc)

    def _read_again(self) -> CaseDoc:
        """The case's document read from its file again, for an item run a second time
        (a plugin that reruns items, as pytest-rerunfailures does)."""
        from kspread.format.loader import read_file

        res = read_file(self.path)
        if res.error is not None:
            raise CaseFailure(str(res.error))
        for doc in res.docs:
            if safetext.line(doc.name) == self.name:
                doc.roots = _tested_trees(self.config)
                doc.extender_access = _extender_access(self.config)
                return doc
        raise CaseFailure(f"{self.path}:{self.line}: the case {self.name!r} is no longer in the file (it was "
                          "collected from it; run pytest again)")

    def _run(self, doc: CaseDoc) -> None:
        from kspread.workflow.runner import check

        backend_path = self.config.getoption("kspread_backend", None)
        if backend_path:
            verdict = _backend_check(self.config, doc, self)
        else:
            verdict = check(doc, self.config.getoption("kspread_config", None),
                            explain=self.config.getoption("kspread_explain", "short"))
            if verdict.skipped is not None:
                _skip(verdict.skipped)
        if _reporting(self.config):
            from kspread.workflow.report import case_entry

            self.kspread_entry = case_entry(doc, verdict, bool(self.config.getoption("kspread_html", None)))
            self.kspread_entry["file"] = _file_id(self)  # relative to pytest's rootdir
        if self.config.getoption("kspread_update", False):
            from kspread.workflow.update import UpdateError, check_update, update_for

            try:
                upd = update_for(doc, verdict, _update_keys(self.config))
                if upd is not None:
                    self.kspread_update = check_update(upd).to_dict()
                    if hasattr(self, "kspread_entry"):  # the update makes it pass
                        self.kspread_entry["passed"] = True
                    return
            except UpdateError as e:
                head = verdict.message + "\n\n" if verdict.message else ""
                raise CaseFailure(f"{head}--kspread-update could not fix this case: {e}") from None
        if not verdict.passed:
            from kspread.workflow.reason import short_reason

            # the reason first: pytest's short test summary shows the report's first line
            message = short_reason(verdict, _file_id(self), doc.line) + "\n" + verdict.message
            # pytest keeps a failure's traceback (sys.last_traceback) to the end of the session:
            # its frame must not hold the run (the cluster, every pod) alive for the final gc
            # a case that did not load is not the failure an xfail mark expects
            failure = CaseFailure if verdict.case is not None else CaseNotLoaded
            del verdict
            raise failure(message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str | FailureRepr:
        if isinstance(excinfo.value, (CaseFailure, CaseNotLoaded)):
            return _failure_text(excinfo)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.line - 1, f"kspread case {self.name}"


def _failure_text(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """A case's failure report as pytest prints it (and its short summary's first line):
    ``safetext.lines``, since it holds the case's, an extender's or a backend's text."""
    return safetext.lines(str(excinfo.value))
