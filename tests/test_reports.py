"""Reports people read (issue 21): the HTML report, the markdown summary, GitHub
annotations, -x, -k without pytest's private API, shell completion, and the pytest
options (--kspread-html, --kspread-markdown, --markers listing the tags)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kspread.workflow.cli import main as cli_main
from kspread.workflow.keyword import KeywordError, compile_keyword

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "<script>alert(1)</script>"

CASES = f"""apiVersion: kspread/v1
kind: Case
name: spread
tags: [smoke]
profile: {{filter: [NodeResourcesFit], score: [NodeResourcesFit]}}
nodes:
- {{name: n1, labels: {{topology.kubernetes.io/zone: a}}, allocatable: {{cpu: "4", memory: 8Gi, pods: 110}}}}
- {{name: n2, labels: {{topology.kubernetes.io/zone: b}}, allocatable: {{cpu: "4", memory: 8Gi, pods: 110}}}}
pods:
- {{name: busy, node: n1, requests: {{cpu: "3"}}}}
pod: {{name: p, requests: {{cpu: "1"}}}}
expect:
  selected: n1
---
apiVersion: kspread/v1
kind: Case
name: "{HOSTILE}"
profile: {{filter: [NodeResourcesFit], postFilter: [DefaultPreemption]}}
nodes:
- {{name: n1, allocatable: {{cpu: "2", memory: 4Gi, pods: 110}}}}
- {{name: n2, allocatable: {{cpu: "2", memory: 4Gi, pods: 110}}}}
pods:
- {{name: low, node: n1, priority: 1, requests: {{cpu: "2"}}}}
- {{name: someone-else, node: n2, priority: 50, requests: {{cpu: "2"}}}}
pod: {{name: high, priority: 100, requests: {{cpu: "2"}}}}
expect:
  preemption: {{node: n1, victims: [someone-else]}}
---
apiVersion: kspread/v1
kind: Case
name: fits
profile: {{filter: [NodeUnschedulable]}}
nodes: [n1]
pod: {{name: p}}
expect: {{feasible: [n1]}}
"""


@pytest.fixture
def cases(tmp_path):
    p = tmp_path / "cases.yaml"
    p.write_text(CASES, encoding="utf-8")
    return p


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data):
        self.text.append(data)


def _page(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def test_html_report_structure_and_escaping(cases, tmp_path, capsys):
    out = tmp_path / "report.html"
    assert cli_main(["run", "-q", "--html", str(out), str(cases)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == f"kspread: HTML report written to {out}"
    page = _page(out)
    text = "".join(page.text)
    assert "1 passed, 2 failed" in text
    for name in ("spread", HOSTILE, "fits"):
        assert name in text  # every case, the hostile name as text
    assert "script" not in page.tags  # ... never as an element
    assert "<script>" not in out.read_text(encoding="utf-8")
    assert page.tags.count("svg") >= 4  # the bar, two clusters, the heatmap
    # differences: the wrong selected node and the wrong victim, expected then actual
    assert "selectedselectedn1n2" in text.replace(" ", "")
    assert "victims[someone-else][low]" in text.replace(" ", "")  # YAML
    assert "zone a" in text and "zone b" in text and "\u25b7 high (nominated)" in text
    # self-contained: no script, stylesheet, image or frame to fetch; links are anchors
    assert not {"script", "link", "img", "iframe", "object", "embed"} & set(page.tags)
    for key, value in page.attrs:
        if key in ("href", "src", "xlink:href", "action"):
            assert value is not None and value.startswith("#"), (key, value)
    assert "url(" not in out.read_text(encoding="utf-8")


def test_html_report_of_a_big_case_is_bounded(tmp_path):
    nodes = "\n".join(f"- {{name: n{i:04d}, labels: {{topology.kubernetes.io/zone: z{i % 3}}}, "
                      f'allocatable: {{cpu: "4", memory: 8Gi, pods: 110}}}}' for i in range(400))
    pods = "\n".join(f"- {{name: p{i}, node: n0000}}" for i in range(50))
    (tmp_path / "big.yaml").write_text(
        "apiVersion: kspread/v1\nkind: Case\nname: big\nprofile: {filter: [NodeResourcesFit], score: "
        f"[NodeResourcesFit]}}\nnodes:\n{nodes}\npods:\n{pods}\npod: {{name: p, requests: {{cpu: '1'}}}}\n"
        "expect: {selected: n0001}\n", encoding="utf-8")
    out = tmp_path / "big.html"
    assert cli_main(["run", "-q", "--html", str(out), str(tmp_path / "big.yaml")]) == 1
    text = "".join(_page(out).text)
    assert "328 more node(s) not drawn" in text  # 72 drawn: 24 in each of the 3 zones
    assert "+44 more pods" in text  # 50 pods on n0000, 6 drawn
    assert "376 more node(s) not drawn" in text  # the heatmap: 24 columns


def test_html_report_of_a_5000_node_case_stays_small():
    from kspread.workflow.report_html import render_html

    names = [f"n{i:04d}" for i in range(5000)]
    entry = {"file": "big.yaml", "line": 1, "name": "big", "passed": False, "actual": {
        "scores": {f"Plugin{k}": dict.fromkeys(names, 50) for k in range(30)}, "totals": dict.fromkeys(names, 1500),
        "selected": "n0000"}, "differences": [{"key": "totals", "what": n, "expected": 1, "actual": 1500}
                                              for n in names],
        "cluster": {"nodes": [{"name": n, "zone": f"z{i % 50}", "pods": [f"p{j}" for j in range(24)],
                               "podsTotal": 300} for i, n in enumerate(names[:200])], "nodesTotal": 5000,
                    "incoming": [], "sequence": True, "cyclesTotal": 5000,
                    "cycles": [{"pod": f"q{i}", "node": names[i]} for i in range(200)]}}
    page = render_html([entry] * 3, "0 passed, 3 failed")
    assert len(page) < 1_000_000, len(page)
    assert page.count("4904 more node(s) not drawn") == 3  # 96 nodes drawn of a case
    assert page.count("4900 more difference(s) not shown") == 3
    assert page.count("4940 more cycle(s) not drawn; 40 more node(s) not drawn") == 3


def test_html_report_draws_a_sequences_steps_between_its_cycles(tmp_path):
    """Issue 28: the cycle picture of a sequence with steps shows each step where it
    happened, with what it evicted, kept and created; evicted pods are struck."""
    src = (ROOT / "cases" / "scenarios" / "drain.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "drain.yaml"
    bad.write_text(src.replace("web-rs-r1: n3}", "web-rs-r1: n2}").replace(
        "drain: n1\n- drain: n1", "drain: n1\n- {name: extra, requests: {cpu: 100m}}\n- drain: n1").replace(
        "evicted: [web-a, web-b]", "evicted: [web-a]"), encoding="utf-8")
    out = tmp_path / "r.html"
    assert cli_main(["run", "-q", "--html", str(out), str(bad)]) == 1
    page = out.read_text(encoding="utf-8")
    figures = page.split("<figure>")
    seq = [f for f in figures if "Placements cycle by cycle, and the steps between them" in f]
    assert len(seq) == 2  # both fail: web-rs-r1's node, the second's evictions
    rows = [t for t in _page_text(seq[0]) if t.strip()]
    # the step's band comes before the cycle it led to
    assert rows.index("\u25b8 step: drain n1 (clock 0 s): evicted web-a; kept web-b; created web-rs-r1") \
        < rows.index("1. web-rs-r1")
    rows2 = [t for t in _page_text(seq[1]) if t.strip()]
    order = [r for r in rows2 if r.startswith(("\u25b8 step", "1.", "2.", "3."))]
    # a step's record names the pods created after it: the replacement, then the listed pod
    assert order == ["\u25b8 step: drain n1 (clock 0 s): evicted web-a; kept web-b; created web-rs-r1, extra",
                     "1. web-rs-r1", "2. extra",
                     "\u25b8 step: drain n1 (clock 0 s): evicted web-b; created web-rs-r2", "3. web-rs-r2"]
    # the nodes picture strikes the pods the drains evicted
    nodes_fig = _page_text(next(f for f in figures if "Nodes by zone" in f))
    assert "\u2715 web-a" in nodes_fig and "\u25cf web-b" in nodes_fig  # web-b was kept by the PDB


def _page_text(html: str) -> list[str]:
    page = _Page()
    page.feed(html)
    return page.text


def test_html_report_cuts_long_values():
    from kspread.workflow.report_html import render_html

    nodes = [f"n{i:04d}" for i in range(5000)]
    entry = {"file": "big.yaml", "line": 1, "name": "big", "passed": False,
             "differences": [{"key": "feasible", "what": "feasible", "expected": [], "actual": nodes}]}
    page = render_html([entry], "0 passed, 1 failed")
    assert len(page) < 20_000
    assert '[n0000, n0001, ' in page and "\u2026 (33000 more characters)" in page  # YAML: no quotes


def test_markdown_summary_and_github_annotations(cases, tmp_path, capsys, monkeypatch):
    md = tmp_path / "summary.md"
    step = tmp_path / "step.md"
    step.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert cli_main(["run", "-q", "--markdown", str(md), str(cases)]) == 1
    out = capsys.readouterr().out
    text = md.read_text(encoding="utf-8")
    assert step.read_text(encoding="utf-8") == "earlier step\n" + text  # appended
    lines = text.splitlines()
    assert lines[0] == "## :x: kspread: 1 passed, 2 failed"
    assert lines[2:6] == ["| Case | Where | What |", "|---|---|---|",
                          f"| `spread` | `{cases}:1` | 1 difference(s) in selected |",
                          f"| `{HOSTILE}` | `{cases}:15` | 1 difference(s) in preemption |"]
    fenced = text.split("```text\n")[2].split("\n```")[0]  # the hostile case's report: a code block
    assert HOSTILE not in text.replace(fenced, "").replace(f"`{HOSTILE}`", "")  # code: shown as text
    assert f"<details><summary><code>&lt;script&gt;alert(1)&lt;/script&gt;</code> (<code>{cases}:15</code>)</summary>" \
        in text
    ann = [line for line in out.splitlines() if line.startswith("::error ")]
    assert len(ann) == 2
    assert ann[0].startswith(f"::error file={cases},line=1,title=kspread%3A case spread failed::{cases}:1: case "
                             "'spread' (version ")
    assert "%0Aselected:%0A" in ann[0] and "\n" not in ann[0]
    assert ann[1].startswith(f"::error file={cases},line=15,title=kspread%3A case {HOSTILE} failed::")


def test_annotation_escaping_follows_the_runner():
    from kspread.workflow.report_ci import github_annotations

    report = [{"file": "a,b:c.yaml", "line": 3, "name": "x", "passed": False, "message": "50% off\r\nnext\rend"},
              {"file": "ok.yaml", "line": 1, "name": "y", "passed": True}]
    # CR LF is a line break; a lone CR is shown escaped (safetext.gh_data)
    assert list(github_annotations(report)) == [
        "::error file=a%2Cb%3Ac.yaml,line=3,title=kspread%3A case x failed::50%25 off%0Anext\\rend"]


def test_report_file_that_cannot_be_written_is_a_message(cases, tmp_path, capsys):
    assert cli_main(["run", "-q", "--html", str(tmp_path / "no" / "r.html"), str(cases)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"kspread: --html {tmp_path / 'no' / 'r.html'}: No such file or directory")


def test_exitfirst_stops_at_the_first_failure(cases, capsys):
    assert cli_main(["run", "-x", str(cases)]) == 1
    out = capsys.readouterr().out
    assert "FAIL spread" in out and "alert" not in out and "fits" not in out
    assert out.splitlines()[-1] == "0 passed, 1 failed (stopped at the first failure, -x)"
    assert cli_main(["run", "-x", "-k", "fits", str(cases)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed, 2 deselected"


@pytest.mark.parametrize(("expr", "words", "want"), [
    ("web and not slow", ["web-fast"], True),
    ("web and not slow", ["web-slow"], False),
    ("smoke or db", ["x", "SMOKE"], True),
    ("not (a or b) and c", ["c"], True),
    ("not (a or b) and c", ["b", "c"], False),
    ("seed-000", ["seed-000"], True),
    ("a.b:c/d[1]", ["xa.b:c/d[1]y"], True),
    ("not not x", ["x"], True),
])
def test_keyword_expressions_as_pytest(expr, words, want):
    assert compile_keyword(expr)(words) is want


@pytest.mark.parametrize(("expr", "message"), [
    ("web and", "at column 8: expected not OR left parenthesis OR identifier; got end of input"),
    ("(a or b", "at column 8: expected right parenthesis; got end of input"),
    ("a b", "at column 3: expected end of input; got 'b'"),
    ("True", "at column 1: expected not OR left parenthesis OR identifier; got 'True'"),
    ("a & b", "at column 3: unexpected character '&'"),
])
def test_bad_keyword_expressions(expr, message):
    with pytest.raises(KeywordError) as e:
        compile_keyword(expr)
    assert str(e.value) == message


def test_no_private_pytest_api():
    for path in (ROOT / "kspread").rglob("*.py"):
        assert "_pytest" not in path.read_text(encoding="utf-8"), path


def test_bash_completion(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    script = subprocess.run([sys.executable, "-m", "kspread", "completion", "bash"], capture_output=True,
                            text=True, check=True, cwd=ROOT).stdout
    (tmp_path / "k.bash").write_text(script, encoding="utf-8")

    def complete(*words: str) -> list[str]:
        cmd = (f"source {tmp_path / 'k.bash'}; COMP_WORDS=(kspread {' '.join(words)}); "
               f"COMP_CWORD={len(words)}; _kspread; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
        return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=True).stdout.split()

    assert complete("ru") == ["run"]
    assert complete("run", "--h") == ["--html", "--help"]
    assert complete("run", "--exi") == ["--exitfirst"]
    assert complete("run", "--ex") == ["--extender", "--extender-env", "--extender-max-timeout", "--explain",
                                       "--exitfirst"]
    assert complete("completion", "f") == ["fish"]


def test_zsh_and_fish_completion_name_every_command(capsys):
    assert cli_main(["completion", "zsh"]) == 0
    zsh = capsys.readouterr().out
    assert zsh.startswith("#compdef kspread\n")
    assert "        'completion:print a shell completion script (bash, zsh or fish)'" in zsh
    assert "'--html[write an HTML report one self-contained page" in zsh
    assert cli_main(["completion", "fish"]) == 0
    fish = capsys.readouterr().out
    assert "complete -c kspread -n '__fish_seen_subcommand_from run' -s x -l exitfirst -d 'stop at the first " \
           "failing case'" in fish
    for shell, text in (("zsh", zsh), ("fish", fish)):
        if shutil.which(shell):
            res = subprocess.run([shell, "-n"], input=text, capture_output=True, text=True)
            assert res.returncode == 0, res.stderr


def test_pytest_html_and_markdown_reports(pytester):
    pytester.makefile(".yaml", cases=CASES)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--kspread-html=r.html", "--kspread-markdown=r.md")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["kspread: --kspread-html report written to r.html",
                                 "kspread: --kspread-markdown report written to r.md"])
    page = _page(pytester.path / "r.html")
    text = "".join(page.text)
    assert "1 passed, 2 failed" in text and HOSTILE in text and "script" not in page.tags
    md = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert "| `spread` | `cases.yaml:1` | 1 difference(s) in selected |" in md


def test_pytest_markers_lists_the_tags_in_use(pytester):
    pytester.makefile(".yaml", cases=CASES.replace("tags: [smoke]", "tags: [smoke, nightly-only]"))
    result = pytester.runpytest("--markers", "-p", "no:cacheprovider")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["@pytest.mark.smoke: kspread case tag", "@pytest.mark.nightly-only: kspread case tag"])


def test_json_report_keeps_its_shape(cases, capsys):
    assert cli_main(["run", "--json", "--github", "--html", "/dev/null/x", str(cases)]) == 1
    cap = capsys.readouterr()
    report = json.loads(cap.out)  # the annotations go to stderr with --json
    assert cap.err.count("::error file=") == 2
    assert [e["name"] for e in report] == ["spread", HOSTILE, "fits"]
    assert not any("cluster" in e or "message" in e for e in report)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (apt-get install chromium)")
def test_html_report_in_a_real_browser(cases, tmp_path):
    out = tmp_path / "report.html"
    cli_main(["run", "-q", "--html", str(out), str(cases)])
    res = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                          "--v=0", "--virtual-time-budget=2000", "--dump-dom", out.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Uncaught" not in res.stderr and "Failed to load resource" not in res.stderr
    dom = res.stdout
    assert "1 passed, 2 failed" in dom
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom and "<script>" not in dom
    assert dom.count("<svg") >= 4 and "zone a" in dom


def test_progress_only_on_a_terminal(cases, capsys, monkeypatch):
    shown: list[str] = []

    class Status:
        def __init__(self, text: str) -> None:
            shown.append(text)

        def start(self) -> None:
            pass

        def update(self, text: str) -> None:
            shown.append(text)

        def stop(self) -> None:
            shown.append("(stopped)")

    monkeypatch.setattr("rich.console.Console.status", lambda self, text: Status(text))
    assert cli_main(["run", "-q", str(cases)]) == 1
    assert shown == []  # not a terminal: no progress
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert cli_main(["run", "-q", str(cases)]) == 1
    # rich Text, not markup: a case name's [link=...] or [bold] is shown as written
    assert [str(t) for t in shown] == ["[0 run, 0 failed] spread", f"[1 run, 1 failed] {HOSTILE}",
                                       "[2 run, 2 failed] fits", "(stopped)"]


def test_the_demo_corpus_of_the_readme_picture_fails_on_purpose(capsys):
    demo = str(ROOT / "examples" / "report-demo")
    assert cli_main(["run", "-q", demo]) == 1
    out = capsys.readouterr().out
    assert [line.split(" (")[0] for line in out.splitlines() if line.startswith("FAIL ")] == [
        "FAIL web-spreads-across-zones", "FAIL preempt-the-cheapest-node", "FAIL rollout-sequence"]
    assert out.splitlines()[-1] == "2 passed, 3 failed"


def test_pytest_reports_under_xdist_gather_every_worker(pytester):
    pytest.importorskip("xdist")
    pytester.makefile(".yaml", cases=CASES)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-n", "2", "--kspread-html=r.html",
                                           "--kspread-markdown=r.md")
    result.assert_outcomes(passed=1, failed=2)
    page = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert page.count("<section class='case'") == 2 and "Passing cases (1)" in page
    assert "## :x: kspread: 1 passed, 2 failed" in (pytester.path / "r.md").read_text(encoding="utf-8")
