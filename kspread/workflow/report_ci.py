"""Reports for CI, written from the run's report entries (``kspread.workflow.report``):
a markdown summary (a pull-request comment, a GitHub job summary) and GitHub Actions
annotations at each failing case's file and line. Every text of an entry (names, file
names, messages: a case's, an extender's, a backend's) goes through
``kspread.workflow.safetext``: code spans and fenced blocks in markdown, the runner's
escapes in annotations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kspread.workflow import safetext

# a pull-request comment holds 65,536 characters: the summary stays under that
MAX_MARKDOWN = 60_000
MAX_DETAILS = 50  # failing cases detailed (the rest listed in the table)
MAX_MESSAGE = 4_000  # characters of one case's failure report
MAX_ROWS = 200  # rows of the failing cases' table


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters; run the case for the whole report)"


def _where(e: dict[str, Any]) -> str:
    return f"{e['file']}:{e['line']}" if e.get("line") else str(e["file"])


def failing(report: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in report if not e.get("passed", False)]


def _first_line(e: dict[str, Any]) -> str:
    diffs = e.get("differences")
    if diffs:
        keys = list(dict.fromkeys(d["key"] for d in diffs))
        return f"{len(diffs)} difference(s) in {', '.join(keys)}"
    text = str(e.get("message") or e.get("error") or "")
    return text.strip().splitlines()[0] if text.strip() else "failed"


def render_markdown(report: list[dict[str, Any]], summary: str) -> str:
    """The summary as GitHub-flavoured markdown, at most ``MAX_MARKDOWN`` characters."""
    bad = failing(report)
    icon = ":x:" if bad else ":white_check_mark:"
    parts = [f"## {icon} kspread: {safetext.md_plain(summary)}\n"]
    if bad:
        parts.append("| Case | Where | What |\n|---|---|---|")
        for e in bad[:MAX_ROWS]:
            parts.append(f"| {safetext.md_inline(e.get('name', '(file)'))} | {safetext.md_inline(_where(e))} "
                         f"| {safetext.md_plain(_first_line(e))} |")
        if len(bad) > MAX_ROWS:
            parts.append(f"\n{len(bad) - MAX_ROWS} more failing case(s) not listed.")
        parts.append("")
    size = sum(len(p) + 1 for p in parts)
    shown = 0
    for e in bad[:MAX_DETAILS]:
        body = _cut(str(e.get("message") or e.get("error") or ""), MAX_MESSAGE)
        block = (f"<details><summary>{safetext.md_html(e.get('name', e['file']))} "
                 f"({safetext.md_html(_where(e))})</summary>\n\n{safetext.md_block(body)}\n\n</details>\n")
        if size + len(block) > MAX_MARKDOWN:
            break
        parts.append(block)
        size += len(block) + 1
        shown += 1
    if shown < len(bad):
        parts.append(f"{len(bad) - shown} failing case(s) not detailed here; run them for their reports.\n")
    return "\n".join(parts)


def github_annotations(report: list[dict[str, Any]]) -> Iterator[str]:
    """``::error file=F,line=L,title=T::message`` for each failing case (GitHub shows
    them on the pull request's diff at the case's line)."""
    for e in failing(report):
        title = f"kspread: case {e['name']} failed" if "name" in e else "kspread: case file does not load"
        props = f"file={safetext.gh_property(e['file'])}"
        if e.get("line"):
            props += f",line={int(e['line'])}"
        props += f",title={safetext.gh_property(title)}"
        yield f"::error {props}::{safetext.gh_data(_cut(str(e.get('message') or e.get('error') or 'failed'), MAX_MESSAGE))}"
