"""The pytest plugin: every kspread case document becomes one test item.

Registered through the ``pytest11`` entry point, so ``pytest any/dir`` collects
case files once kspread is installed. All logic lives in the library; this
module only adapts it to pytest (collection, markers, failure reports).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from kspread.errors import CaseError
from kspread.loader import CaseDoc, mentions_case, read_file
from kspread.runner import check

_SUFFIXES = (".yaml", ".yml", ".json")
_MARKER_OK = re.compile(r"^[A-Za-z_][\w.+:-]*$")
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


_UPDATES = pytest.StashKey[list]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_UPDATES] = []


def pytest_sessionfinish(session: pytest.Session) -> None:
    updates = session.config.stash.get(_UPDATES, [])
    if not updates:
        return
    from kspread.update import apply_all

    changes = apply_all(updates)
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"kspread: updated {len(updates)} case(s):"] + [f"  {c}" for c in changes]
    if tr is not None:
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
        seen: set[str] = set()
        for doc in res.docs:
            name = doc.name
            if name in seen:
                name = f"{name}#{doc.index + 1}"
                item = BrokenFile.from_parent(
                    self, name=name,
                    error=CaseError(f"case name {doc.name!r} is used twice in this file", ["name"],
                                    file=str(self.path), line=doc.line))
                yield item
                continue
            seen.add(name)
            item = CaseItem.from_parent(self, name=name, doc=doc)
            tags = doc.data.get("tags") if isinstance(doc.data, dict) else None
            for tag in tags if isinstance(tags, list) else []:
                if isinstance(tag, str) and _MARKER_OK.match(tag) and tag not in _RESERVED_MARKERS:
                    _register_marker(self.config, tag)
                    item.add_marker(tag)
            yield item


def _register_marker(config: pytest.Config, tag: str) -> None:
    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    if tag not in known:
        config.addinivalue_line("markers", f"{tag}: kspread case tag")


class BrokenFile(pytest.Item):
    def __init__(self, *, error: CaseError, **kw: Any) -> None:
        super().__init__(**kw)
        self.error = error

    def runtest(self) -> None:
        raise CaseFailure(str(self.error))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str:
        if isinstance(excinfo.value, CaseFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, (self.error.line or 1) - 1, f"kspread file {self.path.name}"


class CaseItem(pytest.Item):
    def __init__(self, *, doc: CaseDoc, **kw: Any) -> None:
        super().__init__(**kw)
        self.doc = doc

    def runtest(self) -> None:
        verdict = check(self.doc, self.config.getoption("kspread_config", None))
        if self.config.getoption("kspread_update", False):
            from kspread.update import update_for

            upd = update_for(self.doc, verdict)
            if upd is not None:
                self.config.stash[_UPDATES].append(upd)
                return
        if not verdict.passed:
            raise CaseFailure(verdict.message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str:
        if isinstance(excinfo.value, CaseFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.doc.line - 1, f"kspread case {self.name}"
