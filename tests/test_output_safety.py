"""A case under review is untrusted input (issue 26): what a case, an extender or a
backend says reaches CI logs, terminals and pull-request comments only through
``kspread.workflow.safetext``. Each output path is walked with a corpus of payloads
(a line break before ``::error``, ``::stop-commands::``, ``##[error]``, ANSI and OSC 8
escapes, a mention, a link, an image, HTML, U+2028, U+202E)."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

from extender_server import ExtenderServer
from kspread.engine.versions import NEWEST_MINOR
from kspread.format.loader import read_file
from kspread.workflow import safetext
from kspread.workflow.cli import main as cli_main

PAYLOADS = ["\n::error file=x::pwned", "::stop-commands::tok", "\x1b[31m", "\x1b]8;;http://evil\x07",
            "@org/team", "[x](http://evil)", "![i](http://evil/i.png)", "<img src=x>", "\u2028", "\u202e",
            "##[error]v1"]
# what a line of a log must not hold: C0 (but the line feed), DEL, C1, the line and
# paragraph separators, bidi marks, embeddings, overrides and isolates
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
# all payloads but the line breaks: a name that loads
NAME = "::stop-commands::tok @org/team [x](http://evil) ![i](http://evil/i.png) <img src=x> ##[error]v1"
# all payloads on one line, the line breaks last (a description's first line is shown)
DESCRIPTION = ("::error file=x::pwned \x1b[31m \x1b]8;;http://evil\x07 @org/team [x](http://evil) "
               "![i](http://evil/i.png) <img src=x> \u202e ##[error]v1 \u2028second line\nthird line")


def runner_command(line: str) -> tuple[str, dict[str, str], str] | None:
    """What GitHub's runner reads from a line of output (actions/runner ActionCommand:
    ``::`` after leading blanks, or ``##[`` anywhere): (command, properties, data)."""
    text = line.lstrip()
    if text.startswith("::"):
        end = text.find("::", 2)
        if end < 0:
            return None
        info, data = text[2:end], text[end + 2:]
        name, _, props = info.partition(" ")
        out = {}
        for p in props.split(","):
            k, sep, v = p.partition("=")
            if sep:
                for esc, c in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
                    v = v.replace(esc, c)
                out[k] = v
        for esc, c in (("%0D", "\r"), ("%0A", "\n"), ("%25", "%")):
            data = data.replace(esc, c)
        return name, out, data
    if "##[" in line and "]" in line[line.index("##["):]:
        return line[line.index("##[") + 3:].split("]", 1)[0], {}, ""
    return None


def assert_log_safe(text: str, annotations: int = 0) -> list[tuple[str, dict[str, str], str]]:
    """No raw control character but the line feed, no ``##[``, and no line the runner reads
    as a command but ``annotations`` of kspread's own ``::error`` (returned, parsed)."""
    bad = RAW.search(text)
    assert bad is None, f"U+{ord(bad.group()):04X} at {text[max(0, bad.start() - 60):bad.end() + 20]!r}"
    assert "##[" not in text
    commands = [c for c in map(runner_command, text.split("\n")) if c is not None]
    assert all(c[0] == "error" and c[1].get("title", "").startswith("kspread: case") for c in commands), commands
    assert len(commands) == annotations, commands
    return commands


def yaml_text(s: str) -> str:
    return json.dumps(s)  # a JSON string is a YAML double-quoted scalar


def write_corpus(root: Path, extender_url: str | None = None) -> Path:
    d = root / "cases"
    d.mkdir()
    profile = "{}"
    if extender_url is not None:
        profile = f"{{extenders: [{{name: ext, urlPrefix: '{extender_url}', filterVerb: filter}}]}}"
    (d / "hostile.yaml").write_text(textwrap.dedent(f"""\
        apiVersion: kspread/v1
        kind: Case
        name: {yaml_text(NAME)}
        description: {yaml_text(DESCRIPTION)}
        profile: {profile}
        nodes: [n1, n2]
        pod: {{name: p}}
        expect: {{feasible: [n1]}}
        ---
        apiVersion: kspread/v1
        kind: Case
        name: {yaml_text("refused" + PAYLOADS[0] + PAYLOADS[2])}
        nodes: [n1]
        pod: {{name: p}}
        expect: {{feasible: [n1]}}
        ---
        apiVersion: kspread/v1
        kind: Case
        name: "@org/team passes"
        nodes: [n1]
        pod: {{name: p}}
        expect: {{feasible: [n1]}}
        """), encoding="utf-8")
    # a file name with a line break, a workflow command and an escape
    (d / "evil\n::error file=x::pwned \x1b[31m.yaml").write_text(
        "apiVersion: kspread/v1\nkind: Case\nname: plain\nnodes: [n1]\npod: {name: p}\nexpect: {feasible: [n2]}\n",
        encoding="utf-8")
    return d


@pytest.fixture
def corpus(tmp_path):
    return write_corpus(tmp_path)


# ---- the helper ------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", PAYLOADS)
def test_each_sink_of_safetext_neutralises_each_payload(payload):
    text = f"a {payload} b"
    for one in (safetext.line(text), safetext.gh_property(text), safetext.md_inline(text), safetext.md_html(text)):
        assert "\n" not in one
        assert_log_safe(one)
    assert_log_safe(safetext.lines(text))
    data = safetext.gh_data(text)
    assert "\n" not in data and "\r" not in data and RAW.search(data) is None and "##[" not in data
    assert safetext.md_inline(text).startswith("`")


def test_line_escapes_and_lines_folds_readably():
    assert safetext.line("a\n::error file=x::pwned") == "a\\n::error file=x::pwned"
    assert safetext.lines("a\n  ::error file=x::pwned\r\nb") == "a\n  \\::error file=x::pwned\nb"
    assert safetext.line("\x1b[31mred\x1b]8;;http://evil\x07") == "\\x1b[31mred\\x1b]8;;http://evil\\x07"
    assert safetext.line("x\u2028y\u202ez\x85\x7f\t") == "x\\u2028y\\u202ez\\x85\\x7f\\t"
    assert safetext.line("see ##[error]v1") == "see ##\\[error]v1"
    assert safetext.line("plain text: ok, 1/2") == "plain text: ok, 1/2"


def test_markdown_inline_is_a_code_span_github_renders_as_text():
    assert safetext.md_inline("@org/team") == "`@org/team`"
    assert safetext.md_inline("a|b") == "`a\\|b`"  # a GFM table cell's pipe
    assert safetext.md_inline("``x`") == "``` ``x` ```"  # a longer fence, padded
    assert safetext.md_html("<img src=x> @org") == "<code>&lt;img src=x&gt; @org</code>"
    assert safetext.md_plain("1 passed, 2 failed") == "1 passed, 2 failed"
    assert safetext.md_plain("1 passed @org") == "`1 passed @org`"
    assert safetext.md_block("x\n```\ny") == "````text\nx\n```\ny\n````"


def test_github_command_escaping_follows_the_runner():
    assert safetext.gh_property("a,b:c%\nd") == "a%2Cb%3Ac%25\\nd"
    assert safetext.gh_data("50%\nnext\r\nend\rx") == "50%25%0Anext%0Aend\\rx"
    assert runner_command("::error file=a%2Cb%3Ac,title=t::x%0Ay") == ("error", {"file": "a,b:c", "title": "t"},
                                                                        "x\ny")


def test_json_text_keeps_the_value_and_breaks_the_old_command_form():
    text = safetext.json_text(json.dumps({"name": "##[error]v1"}))
    assert "##[" not in text and json.loads(text) == {"name": "##[error]v1"}


# ---- the case name -----------------------------------------------------------------------------


@pytest.mark.parametrize(("char", "what"), [
    ("\n", "a line break"), ("\r", "a line break"), ("\u2028", "a line break"), ("\x85", "a line break"),
    ("\x1b", "a control character"), ("\t", "a control character"), ("\x7f", "a control character"),
    ("\u202e", "a bidirectional text control"), ("\u2066", "a bidirectional text control"),
])
def test_a_case_name_with_a_control_character_is_refused_at_its_line(tmp_path, char, what):
    p = tmp_path / "names.yaml"
    p.write_text("apiVersion: kspread/v1\nkind: Case\n# the name\nname: " + yaml_text(f"ok{char}::error x::y")
                 + "\nnodes: [n1]\npod: {name: p}\nexpect: {feasible: [n1]}\n", encoding="utf-8")
    doc = read_file(p).docs[0]
    assert doc.name == "names"  # named by its file, as a case without a name
    assert str(doc.error) == (f"{p}:4: name: a case name cannot hold {what} (U+{ord(char):04X}, character 3): the "
                              "name is printed in reports and CI logs, where it would break the line, drive the "
                              "terminal or reorder the text")


def test_a_case_name_with_markup_still_loads_and_prints_as_text(tmp_path, capsys):
    p = tmp_path / "c.yaml"
    p.write_text(f"apiVersion: kspread/v1\nkind: Case\nname: {yaml_text(NAME)}\nnodes: [n1]\npod: {{name: p}}\n"
                 "expect: {feasible: [n1]}\n", encoding="utf-8")
    assert read_file(p).docs[0].name == NAME
    assert cli_main(["run", str(p)]) == 0
    out = capsys.readouterr().out
    assert_log_safe(out)
    shown = "\\::stop-commands::tok @org/team [x](http://evil) ![i](http://evil/i.png) <img src=x> ##\\[error]v1"
    assert safetext.line(NAME) == shown
    assert out.splitlines()[0].startswith(f"PASS {shown} ({p}:1, version ")


# ---- kspread run -------------------------------------------------------------------------------


def _run(capsys, *args: str) -> tuple[int, str, str]:
    rc = cli_main(["run", *args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_run_plain_prints_no_command_and_no_escape(corpus, capsys, quiet):
    rc, out, err = _run(capsys, *quiet, "--explain", "none", str(corpus))
    assert rc == 1
    assert_log_safe(out)
    assert_log_safe(err)
    # still readable: the payloads escaped, the description's first line in the header
    assert "\\x1b[31m" in out and "\\u202e" in out and "##\\[error]v1" in out and "@org/team" in out
    assert "FAIL hostile-2 (" in out and "name: a case name cannot hold a line break (U+000A" in out
    assert "evil\\n::error file=x::pwned \\x1b[31m.yaml: the file's path holds a line break" in out + err
    assert "  \\::error file=x::pwned \\x1b[31m \\x1b]8;;http://evil\\x07 @org/team" in out


def test_run_on_a_terminal_prints_no_escape_of_the_case(corpus, capsys, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    rc, out, _ = _run(capsys, "--explain", "none", str(corpus))
    assert rc == 1
    assert "\x1b[" in out  # rich's own colours
    assert "\x1b]8" not in out and "\x1b[31m" not in out
    # rich's own sequences (colours, the status line's cursor moves): the case's are escaped
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out).replace("\r", "\n")
    assert_log_safe(plain)
    assert "\\x1b[31m" in plain and "[x](http://evil)" in plain  # rich read no markup of the name


def test_a_fold_on_a_terminal_does_not_begin_a_line_with_a_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "40")
    p = tmp_path / "c.yaml"
    name = "x" * 28 + " ::error file=x::pwned"  # rich folds the header before the command
    p.write_text(f"apiVersion: kspread/v1\nkind: Case\nname: {yaml_text(name)}\nnodes: [n1]\npod: {{name: p}}\n"
                 "expect: {feasible: [n2]}\n", encoding="utf-8")
    rc, out, _ = _run(capsys, "-q", str(p))
    assert rc == 1
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out).replace("\r", "\n")
    assert "\n\\::error file=x::pwned" in plain  # folded there, with a backslash
    assert_log_safe(plain)


def test_command_guard_tracks_line_starts_across_writes():
    from io import StringIO

    buf = StringIO()
    guard = safetext.CommandGuard(buf)
    for piece in ("a\n", "  ", "::x::y\r", "::z", "::not at a line start", "\n\x1b[1m::styled"):
        guard.write(piece)
    assert buf.getvalue() == "a\n  \\::x::y\r\\::z::not at a line start\n\x1b[1m::styled"


def test_run_json_is_json_and_nothing_else_leaks(corpus, capsys):
    rc, out, err = _run(capsys, "--json", "--github", str(corpus))
    assert rc == 1
    assert_log_safe(out)
    report = json.loads(out)
    assert {e.get("name") for e in report} >= {NAME, "hostile-2", "@org/team passes"}
    assert_log_safe(err, annotations=3)  # --github with --json: kspread's annotations on standard error


def test_github_annotations_are_kspread_s_and_point_at_the_case(corpus, capsys):
    rc, out, err = _run(capsys, "-q", "--github", "--explain", "none", str(corpus))
    assert rc == 1
    ann = assert_log_safe(out, annotations=3)
    assert_log_safe(err)
    by_title = {a[1]["title"]: a for a in ann}
    hostile = by_title[f"kspread: case {NAME.replace('##[', '##' + chr(92) + '[')} failed"]
    assert hostile[1]["file"] == str(corpus / "hostile.yaml") and hostile[1]["line"] == "1"
    assert "\x1b" not in hostile[2] and "\u202e" not in hostile[2]  # the message: escaped too
    assert "\n\\::error file=x::pwned" not in hostile[2]
    broken = [a for a in ann if "evil" in a[1]["file"]]
    assert broken[0][1]["file"] == str(corpus / "evil\\n::error file=x::pwned \\x1b[31m.yaml")


class _Tags(HTMLParser):
    """The tags of an HTML text, and its text outside ``code`` and ``pre``."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.depth = 0
        self.outside: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.depth += tag in ("code", "pre")

    def handle_endtag(self, tag):
        self.depth -= tag in ("code", "pre")

    def handle_data(self, data):
        if not self.depth:
            self.outside.append(data)


def rendered(markdown: str) -> _Tags:
    """The markdown as a CommonMark renderer with GFM tables and raw HTML shows it."""
    from markdown_it import MarkdownIt

    page = _Tags()
    page.feed(MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown))
    return page


def test_markdown_renders_no_mention_link_image_or_html(corpus, tmp_path, capsys):
    md = tmp_path / "s.md"
    rc, _, _ = _run(capsys, "-q", "--markdown", str(md), str(corpus))
    assert rc == 1
    text = md.read_text(encoding="utf-8")
    assert_log_safe(text)
    page = rendered(text)
    assert not {"a", "img", "script"} & set(page.tags), page.tags
    outside = "".join(page.outside)
    for live in ("@org", "http://evil", "<img", "::error", "::stop-commands"):
        assert live not in outside, live
    assert f"| `{safetext.line(NAME)}` |" in text  # the name as it is, in a code span
    assert rendered("x @org/team [x](http://evil) <img src=x>").tags == ["p", "a", "img"]  # the check can fail


def test_html_report_escapes_control_characters(corpus, tmp_path, capsys):
    page_path = tmp_path / "r.html"
    _run(capsys, "-q", "--html", str(page_path), str(corpus))
    page = page_path.read_text(encoding="utf-8")
    assert_log_safe(page)
    tags = _Tags()
    tags.feed(page)
    assert "img" not in tags.tags and "a" in tags.tags  # the index's own links only
    assert all(not t.startswith("http") for t in re.findall(r"href='([^']*)'", page))
    assert "\\x1b[31m" in page and "&lt;img src=x&gt;" in page


# ---- validate, explain, diff, import -----------------------------------------------------------


def test_validate_explain_and_diff_print_no_command(corpus, tmp_path, capsys):
    assert cli_main(["validate", str(corpus)]) == 1
    cap = capsys.readouterr()
    assert_log_safe(cap.out)
    assert_log_safe(cap.err)
    assert "name: a case name cannot hold a line break" in cap.out
    assert cli_main(["validate", "--json", str(corpus)]) == 1
    cap = capsys.readouterr()
    assert_log_safe(cap.out)
    json.loads(cap.out)
    for extra in ([], ["-v"], ["--json"]):
        cli_main(["explain", *extra, str(corpus / "hostile.yaml")])
        cap = capsys.readouterr()
        assert_log_safe(cap.out)
        assert_log_safe(cap.err)
        if extra != ["--json"]:
            assert f"case {safetext.line(NAME)} (" in cap.out
    cfg = tmp_path / "sched.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", encoding="utf-8")
    for extra in ([], ["--json"]):
        cli_main(["diff", "--base", str(cfg), "--head", str(cfg), *extra, str(corpus)])
        cap = capsys.readouterr()
        assert_log_safe(cap.out)
        assert_log_safe(cap.err)


def test_import_messages_print_no_command(tmp_path, capsys):
    dump = tmp_path / "dump.yaml"
    node = "gone\n::error file=x::pwned \x1b[31m ##[error]v1"
    dump.write_text("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: web, "
                    f"namespace: default}}, spec: {{nodeName: {yaml_text(node)}, containers: [{{name: c}}]}}}}\n",
                    encoding="utf-8")
    assert cli_main(["import", str(dump)]) == 0
    cap = capsys.readouterr()
    assert_log_safe(cap.err)
    assert ("kspread import: warning: pod default/web is bound to node gone\n\\::error file=x::pwned \\x1b[31m "
            "##\\[error]v1, which the dump lacks: left out") in cap.err


# ---- extender and backend texts ------------------------------------------------------------------


def test_an_extender_s_error_text_prints_as_text(tmp_path, capsys):
    said = "down\n::error file=x::pwned\n::stop-commands::tok \x1b]8;;http://evil\x07 @org/team ##[error]v1"
    server = ExtenderServer(lambda verb, body: (200, {"Error": said}, 0.0))
    try:
        corpus = write_corpus(tmp_path, server.url)
        md = tmp_path / "s.md"
        rc, out, err = _run(capsys, "--github", "--markdown", str(md), "--explain", "none", str(corpus))
    finally:
        server.stop()
    assert rc == 1
    assert server.requests, "the extender was called"
    assert_log_safe(out, annotations=3)
    assert_log_safe(err)
    assert "\\::error file=x::pwned" in out or "\\n::error file=x::pwned" in out  # shown, folded or escaped
    page = rendered(md.read_text(encoding="utf-8"))
    assert not {"a", "img"} & set(page.tags) and "@org" not in "".join(page.outside)


def _fake_backend(tmp_path: Path, version: str, stderr: str) -> Path:
    exe = tmp_path / "backend"
    exe.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, sys
        if sys.argv[1:] == ["--info"]:
            print(json.dumps({{"kubernetesVersion": {version!r}, "plugins": [], "outOfTreePlugins": []}}))
            sys.exit(0)
        sys.stdin.read()
        sys.stderr.write({stderr!r})
        sys.exit(2)
        """), encoding="utf-8")
    exe.chmod(0o755)
    return exe


SAID = "panic: \x1b[31mboom\x1b[0m\n::error file=x::pwned\n  ::stop-commands::tok\n##[error]v1 \u202e @org/team\n"


def test_a_backend_s_text_prints_as_text(tmp_path, capsys):
    corpus = write_corpus(tmp_path)
    exe = _fake_backend(tmp_path, f"v1.{NEWEST_MINOR}.0", SAID)
    rc, out, err = _run(capsys, "--backend", str(exe), "--github", "--explain", "none", str(corpus))
    assert rc == 1
    assert_log_safe(out, annotations=4)  # the plain case fails on the backend's error too
    assert_log_safe(err)
    assert "\\x1b[31mboom\\x1b[0m" in out and "  \\::stop-commands::tok" in out


def test_a_backend_that_does_not_start_is_a_safe_message(tmp_path, capsys):
    exe = tmp_path / "backend"
    exe.write_text(f"#!{sys.executable}\nimport sys\nsys.stderr.write({SAID!r})\nsys.exit(1)\n", encoding="utf-8")
    exe.chmod(0o755)
    with pytest.raises(SystemExit) as e:
        cli_main(["run", "--backend", str(exe), str(tmp_path)])
    assert isinstance(e.value.code, str)
    assert_log_safe(e.value.code)
    assert "--info did not print the backend's JSON" in e.value.code


# ---- pytest ------------------------------------------------------------------------------------


def test_pytest_usage_error_of_a_backend_prints_no_command(pytester):
    exe = pytester.path / "backend"
    exe.write_text(f"#!{sys.executable}\nimport sys\nsys.stderr.write({SAID!r})\nsys.exit(1)\n", encoding="utf-8")
    exe.chmod(0o755)
    write_corpus(pytester.path)
    text = _pytest_output(pytester, f"--kspread-backend={exe}", "cases/hostile.yaml")
    assert "--kspread-backend: backend " in text and "\\x1b[31mboom" in text
    assert_log_safe(text)


def _pytest_output(pytester, *args: str) -> str:
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    return "\n".join(result.outlines + result.errlines)


def test_pytest_reports_print_no_command(pytester, tmp_path):
    corpus = write_corpus(pytester.path)
    md = pytester.path / "s.md"
    for args in (["-rA"], ["-v", "-rA"], ["-q", "--kspread-explain=none"], ["--collect-only", "-q"]):
        text = _pytest_output(pytester, *args, f"--kspread-markdown={md}", str(corpus))
        assert_log_safe(text)
    text = _pytest_output(pytester, "-rA", str(corpus))
    assert "cases/hostile.yaml::hostile-2" in text and "::\\::stop-commands::tok @org/team" in text
    # the file's id escaped, its ':' and '[' percent-encoded (pytest would read them as separators)
    assert "cases/evil\\n%3A%3Aerror file=x%3A%3Apwned \\x1b%5B31m.yaml" in text
    assert "the file's path holds a line break (U+000A)" in text
    page = rendered(md.read_text(encoding="utf-8"))
    assert not {"a", "img"} & set(page.tags) and "@org" not in "".join(page.outside)


def test_pytest_skip_reasons_print_no_command(pytester):
    corpus = write_corpus(pytester.path)
    (corpus / "evil\n::error file=x::pwned \x1b[31m.yaml").unlink()
    exe = _fake_backend(pytester.path, "v1.30.0-\x1b[31m\n::error file=x::pwned ##[error]v1", SAID)
    text = _pytest_output(pytester, "-rs", "-rA", f"--kspread-backend={exe}", str(corpus))
    assert_log_safe(text)
    # a backend that names no Kubernetes version is refused once, before any case, its text escaped
    assert "ERROR: --kspread-backend: backend" in text and "is not a Kubernetes version such as v1.35.4" in text
    assert "x1b[31m" in text and "\x1b" not in text
