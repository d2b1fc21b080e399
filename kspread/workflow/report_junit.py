"""``kspread run --junit-xml FILE``: the run as a JUnit XML report, which CI systems
(GitLab, Jenkins, Azure Pipelines, GitHub test reporters) read without pytest.

One ``testsuite`` named ``kspread``; one ``testcase`` per case, ``classname`` its file
and ``name`` its name (with its variant, ``name[1.35]``), with its ``file``, ``line`` and
``time`` in seconds. A failing case has a ``failure`` whose ``message`` is the short
reason pytest's summary shows (``selected: expected n1, actual n2 (cases/x.yaml:18)``)
and whose text is the failure report; a skipped case a ``skipped`` with its reason; an
expected failure a ``skipped`` of ``type="xfail"`` (as pytest's own JUnit report gives
it); a file that does not load a testcase named by its path with an ``error``. Every
text goes through ``safetext.xml_text`` / ``xml_attr`` (XML-escaped, the characters XML
1.0 forbids shown escaped).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from kspread.workflow.safetext import xml_attr, xml_text

PASSED, FAILED, SKIPPED, XFAILED, ERROR = "passed", "failed", "skipped", "xfailed", "error"


@dataclass
class JUnitCase:
    """One case of the run as the report gives it. ``status``: one of ``PASSED``,
    ``FAILED``, ``SKIPPED``, ``XFAILED``, ``ERROR`` (a file that does not load);
    ``message``: the short reason (a failure, a skip, an xfail); ``text``: the report."""

    file: str
    name: str
    line: int | None
    status: str
    seconds: float = 0.0
    message: str = ""
    text: str = ""


def render_junit(cases: list[JUnitCase], seconds: float, timestamp: _dt.datetime | None = None) -> str:
    """The XML document (UTF-8, XML 1.0)."""
    count = {s: sum(c.status == s for c in cases) for s in (FAILED, SKIPPED, XFAILED, ERROR)}
    when = (timestamp or _dt.datetime.now(_dt.timezone.utc)).isoformat(timespec="seconds")
    head = (f'tests="{len(cases)}" failures="{count[FAILED]}" errors="{count[ERROR]}" '
            f'skipped="{count[SKIPPED] + count[XFAILED]}" time="{seconds:.3f}"')
    out = ['<?xml version="1.0" encoding="utf-8"?>',
           f'<testsuites name="kspread" {head}>',
           f'<testsuite name="kspread" {head} timestamp="{when}">']
    for c in cases:
        attrs = f'classname="{xml_attr(c.file)}" name="{xml_attr(c.name)}" file="{xml_attr(c.file)}"'
        if c.line:
            attrs += f' line="{int(c.line)}"'
        attrs += f' time="{c.seconds:.3f}"'
        if c.status == PASSED:
            out.append(f"<testcase {attrs}/>")
            continue
        if c.status == FAILED:
            inner = f'<failure message="{xml_attr(c.message)}">{xml_text(c.text)}</failure>'
        elif c.status == ERROR:
            inner = f'<error message="{xml_attr(c.message)}">{xml_text(c.text)}</error>'
        elif c.status == XFAILED:
            inner = f'<skipped type="xfail" message="{xml_attr(c.message)}"/>'
        else:
            inner = f'<skipped message="{xml_attr(c.message)}"/>'
        out.append(f"<testcase {attrs}>{inner}</testcase>")
    out.append("</testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"
