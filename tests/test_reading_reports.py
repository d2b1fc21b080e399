"""Reports that show why, and the command line as people expect it (issue 30): the
verdict once, the preemption's deciding criterion in every default report, the HTML's
weighted heatmap, taints and labels, the pending pod's verdict in view, YAML values,
the deepdiff line in words; kspread run's output levels, exit statuses, --junit-xml,
--no-color and NO_COLOR."""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kspread.format.loader import read_file
from kspread.workflow.cli import main as cli_main
from kspread.workflow.report import case_entry
from kspread.workflow.report_html import heatmap_svg, render_html
from kspread.workflow.runner import check

HEAD = "apiVersion: kspread/v1\nkind: Case\n"

PDB = HEAD + """name: pdb-decides
version: "1.29"
profile: {filter: [NodeResourcesFit], postFilter: [DefaultPreemption]}
pdbs:
- {name: web-pdb, selector: {matchLabels: {app: web}}, disruptionsAllowed: 0}
nodes:
- {name: n1, allocatable: {cpu: "2", memory: 4Gi, pods: 110}}
- {name: n2, allocatable: {cpu: "2", memory: 4Gi, pods: 110}}
pods:
- {name: w, node: n1, labels: {app: web}, priority: 10, requests: {cpu: "2"}}
- {name: o, node: n2, priority: 50, requests: {cpu: "2"}}
pod: {name: p, priority: 100, requests: {cpu: "2"}}
expect:
  preemption: {node: n1, victims: [w]}
"""

DECISION = "preemption decided by fewest PDB violations: n1 1, n2 0 -> n2"

PENDING = HEAD + """name: pending
version: "1.29"
profile: {filter: [NodeResourcesFit, TaintToleration]}
nodes:
- {name: n1, allocatable: {cpu: "2", memory: 4Gi, pods: 110}, taints: [{key: a, value: b, effect: NoSchedule}]}
- {name: n2, allocatable: {cpu: "2", memory: 4Gi, pods: 110}}
pod: {name: p, requests: {cpu: "3"}}
expect:
  selected: n2
"""

# NodeResourcesFit rejects both nodes first: TaintToleration does not run after it
VERDICT = "scheduler's verdict: 0/2 nodes are available: 2 Insufficient cpu."

WEIGHTED = HEAD + """name: weighted
version: "1.29"
profile:
  filter: [NodeResourcesFit]
  score: [{name: NodeResourcesBalancedAllocation, weight: 2}, {name: TaintToleration, weight: 3}, NodeResourcesFit,
          NodeAffinity]
nodes:
- {name: n1, allocatable: {cpu: "2", memory: 4Gi, pods: 110}, taints: [{key: a, value: b, effect: PreferNoSchedule}],
   labels: {disk: ssd, team: x, topology.kubernetes.io/zone: z1}}
- {name: n2, allocatable: {cpu: "4", memory: 4Gi, pods: 110}, labels: {disk: hdd}}
pod:
  name: p
  requests: {cpu: "1"}
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - {weight: 1, preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}}
expect:
  selected: n1
"""


def _write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _entry(path: Path, pictures: bool = True):
    doc = read_file(path).docs[0]
    v = check(doc)
    return v, case_entry(doc, v, pictures)


# ---- reports that show why --------------------------------------------------------------------------


def test_the_preemption_criterion_is_in_every_default_report(tmp_path, capsys, monkeypatch, pytester):
    path = _write(tmp_path, PDB)
    v, _ = _entry(path)
    assert v.message.count(DECISION) == 1  # the terminal's and pytest's report, once
    lines = v.message.split("\n")
    assert lines[lines.index("  victims  [w]       [o]") + 4] == DECISION  # beside the table, not below explain
    md, html = tmp_path / "s.md", tmp_path / "r.html"
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert cli_main(["run", "--github", "--markdown", str(md), "--html", str(html), str(path)]) == 1
    out = capsys.readouterr().out
    assert DECISION in out  # terminal
    assert DECISION in md.read_text(encoding="utf-8")  # markdown
    [annotation] = [line for line in out.splitlines() if line.startswith("::error ")]
    assert DECISION in annotation  # GitHub annotation
    page = html.read_text(encoding="utf-8")
    why = re.search(r"<pre class='why'>(.*?)</pre>", page, re.S)
    assert why is not None and DECISION.replace("->", "-&gt;") in why.group(1)  # HTML, not folded
    pytester.makefile(".yaml", cases=PDB)
    # on CI (CI or BUILD_NUMBER set) pytest's short summary repeats a failure's whole text
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert result.stdout.str().count(DECISION) == 1  # pytest


def test_a_tie_and_a_single_candidate_say_so(tmp_path):
    single = PDB.replace("- {name: o, node: n2, priority: 50, requests: {cpu: \"2\"}}",
                         "- {name: o, node: n2, priority: 500, requests: {cpu: \"2\"}}").replace(
        "victims: [w]", "victims: [o]")
    v, _ = _entry(_write(tmp_path, single), pictures=False)
    assert "preemption: n1 is the only candidate" in v.message.split("\n")
    tie = PDB.replace("pdbs:\n- {name: web-pdb, selector: {matchLabels: {app: web}}, disruptionsAllowed: 0}\n", "") \
        .replace("priority: 10,", "priority: 50,").replace("victims: [w]", "victims: [o]") \
        .replace("labels: {app: web},", 'startTime: "2024-01-01T01:00:00Z",') \
        .replace("name: o, node: n2,", 'name: o, node: n2, startTime: "2024-01-01T01:00:00Z",')
    v, _ = _entry(_write(tmp_path, tie, "t.yaml"), pictures=False)
    said = [line for line in v.message.split("\n") if line.startswith("preemption decided by")]
    assert said == [("preemption decided by no criterion: a tie between n1, n2 (last: latest start time: n1 "
                     "2024-01-01T01:00:00Z, n2 2024-01-01T01:00:00Z; upstream takes any, kspread nominates the "
                     "first, n1)")]


def test_the_verdict_is_said_once_and_a_pending_pod_shows_it_in_the_html(tmp_path):
    path = _write(tmp_path, PENDING)
    v, entry = _entry(path)
    assert v.message.count("scheduler's verdict:") == 1
    lines = v.message.split("\n")
    assert VERDICT in lines
    assert entry["why"] == [VERDICT, "what would it take (the nodes closest to fitting first):",
                            "  n2: 1 more cpu", "  n1: 1 more cpu, a toleration of a=b:NoSchedule"]
    page = render_html([entry], "0 passed, 1 failed")
    details = page.index("<details>")
    why = page.index("<pre class='why'>")
    assert why < details  # in view, not in the folded report
    shown = page[why:page.index("</pre>", why)]
    assert "what would it take" in shown and "n1: 1 more cpu, a toleration of a=b:NoSchedule" in shown
    assert "0/2 nodes are available" in shown


def test_the_heatmap_shows_weighted_scores_that_add_up_to_the_total(tmp_path):
    _, entry = _entry(_write(tmp_path, WEIGHTED))
    pic = entry["cluster"]
    assert pic["weights"] == {"NodeResourcesBalancedAllocation": 2, "TaintToleration": 3, "NodeResourcesFit": 1,
                              "NodeAffinity": 1}
    svg = heatmap_svg(entry["actual"], entry["expected"], pic)
    assert svg is not None
    texts = re.findall(r"<text [^>]*>(?:<title>[^<]*</title>)?([^<]*)</text>", svg)
    totals = entry["actual"]["totals"]
    nodes = sorted(totals, key=lambda n: -totals[n])
    assert texts[:2] == [("\u2605 " if n == entry["actual"]["selected"] else "") + n for n in nodes]
    rows = [texts[2 + i * 3: 5 + i * 3] for i in range((len(texts) - 2) // 3)]
    assert len(rows) == 5  # four plugins and the total: no extender
    labels = [r[0] for r in rows]
    assert "NodeResourcesBalancedAllocation \u00d72" in labels and "TaintToleration \u00d73" in labels
    assert labels[-1] == "total"
    for j, node in enumerate(nodes):
        column = [int(r[1 + j]) for r in rows[:-1]]
        assert sum(column) == totals[node] == int(rows[-1][1 + j])  # each column adds up to its total
    w = entry["cluster"]["weighted"]["TaintToleration"]
    n = entry["actual"]["scores"]["TaintToleration"]
    assert {k: 3 * x for k, x in n.items()} == w  # weighted: normalized x 3


def test_the_heatmap_counts_what_the_extenders_added():
    actual = {"scores": {"P": {"n1": 10, "n2": 20}}, "totals": {"n1": 120, "n2": 40}, "selected": "n1"}
    pic = {"weights": {"P": 2}, "weighted": {"P": {"n1": 20, "n2": 40}}}
    svg = heatmap_svg(actual, None, pic)
    assert svg is not None
    texts = re.findall(r"<text [^>]*>(?:<title>[^<]*</title>)?([^<]*)</text>", svg)
    assert texts[2:] == ["P \u00d72", "20", "40", "extenders", "100", "0", "total", "120", "40"]


def test_the_html_shows_the_taints_and_the_labels_the_plugins_read(tmp_path):
    _, entry = _entry(_write(tmp_path, WEIGHTED))
    page = render_html([entry], "0 passed, 1 failed")
    table = re.search(r"<table class='marks'>.*?</table>", page, re.S)
    assert table is not None
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>", table.group(0))
    # n2 first: the highest total
    assert rows == [("n2", "", "<code>disk=hdd</code>"),
                    ("n1", "<code>a=b:PreferNoSchedule</code>",
                     "<code>disk=ssd</code>, <code>topology.kubernetes.io/zone=z1</code>")]  # team: read by none


def test_the_marks_are_bounded():
    from kspread.workflow.report_html import node_marks_table

    pic = {"nodes": [{"name": f"n{i}", "taints": ["t:NoSchedule"] * 6, "taintsTotal": 40, "labels": [],
                      "labelsTotal": 0} for i in range(30)]}
    table = node_marks_table(pic, [])
    assert table.count("<tr>") == 25 and "+34 more" in table and "6 more node(s) with taints or labels" in table


def test_html_values_are_yaml(tmp_path):
    _, entry = _entry(_write(tmp_path, PDB))
    page = render_html([entry], "0 passed, 1 failed")
    assert "<code>[w]</code>" in page and "<code>[o]</code>" in page and "&quot;" not in page.split("<details>")[0]


def test_the_deepdiff_line_says_what_changed_in_words(tmp_path):
    v, _ = _entry(_write(tmp_path, PENDING), pictures=False)
    assert "in all: 1 value changed to null" in v.message.split("\n")
    from kspread.workflow.runner import deepdiff_summary

    assert deepdiff_summary({"selected": None}, {"selected": "n1"}) == "1 null changed to a value"
    assert deepdiff_summary({"feasible": ["a", "b"]}, {"feasible": ["a"]}) == "1 list item missing"
    assert deepdiff_summary({"totals": {"a": 1, "b": 2}}, {"totals": {"a": 2, "b": 3}}) == "2 values changed"


# ---- the command line -----------------------------------------------------------------------------------

CORPUS = HEAD + """name: good
version: "1.29"
profile: {filter: [NodeResourcesFit]}
nodes: [n1]
pod: {name: p}
expect: {selected: n1}
---
""" + HEAD + """name: bad
version: "1.29"
description: "evil \\e[31m ]]> </failure> & \\uFFFE end"
profile: {filter: [NodeResourcesFit]}
nodes: [n1, n2]
pod: {name: p}
expect: {feasible: [n1]}
---
""" + HEAD + """name: later
version: "1.29"
skip: not yet
profile: {filter: [NodeResourcesFit]}
nodes: [n1]
pod: {name: p}
expect: {selected: n1}
---
""" + HEAD + """name: known
version: "1.29"
xfail: issue 12
profile: {filter: [NodeResourcesFit]}
nodes: [n1, n2]
pod: {name: p}
expect: {feasible: [n2]}
"""


def _at(name: str) -> int:
    """The line of a case of CORPUS (its apiVersion)."""
    return CORPUS.split("\n").index(f"name: {name}") - 1


@pytest.fixture
def corpus(tmp_path):
    return str(_write(tmp_path, CORPUS, "corpus.yaml"))


def test_run_prints_a_line_per_case_by_default(corpus, capsys):
    assert cli_main(["run", corpus]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"PASS good ({corpus}:1, version 1.29)"  # its results only with -v
    assert lines[1] == f"FAIL bad ({corpus}:{_at('bad')}, version 1.29)"
    assert lines[2] == f"  {corpus}:{_at('bad')}: case 'bad' (version 1.29)"
    assert "searched:" not in out and "rawScores" not in out
    assert f"SKIP later ({corpus}:{_at('later')}): skip: not yet" in lines and f"XFAIL known ({corpus}:{_at('known')}): issue 12" in lines
    assert lines[-1] == "1 passed, 1 failed, 1 skipped, 1 xfailed"


def test_run_verbose_prints_every_case_s_results(corpus, capsys):
    assert cli_main(["run", "-v", corpus]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [f"PASS good ({corpus}:1, version 1.29)", "  feasible: [n1]", "  searched: [n1]"]


def test_run_quiet_prints_only_failures_and_the_summary(corpus, capsys):
    assert cli_main(["run", "-q", corpus]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"FAIL bad ({corpus}:{_at('bad')}, version 1.29)"
    assert not [line for line in lines if line.startswith(("PASS", "SKIP", "XFAIL"))]
    assert lines[-1] == "1 passed, 1 failed, 1 skipped, 1 xfailed"


def test_exit_statuses_as_pytest(corpus, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli_main(["run", "-k", "good", corpus]) == 0
    assert cli_main(["run", corpus]) == 1  # a case failed
    assert cli_main(["run", str(tmp_path / "nosuch.yaml")]) == 4  # usage: a path that does not exist
    assert capsys.readouterr().err.endswith(f"kspread run: file or directory not found: {tmp_path / 'nosuch.yaml'}\n")
    assert cli_main(["run", "--case", "nope", corpus]) == 4  # usage: a name that names no case
    assert cli_main(["run", "-k", "nope", corpus]) == 5  # no case selected
    assert cli_main(["run", str(empty)]) == 5  # no case collected
    with pytest.raises(SystemExit) as e:
        cli_main(["run", "--no-such-option", corpus])
    assert e.value.code == 4  # a bad option
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err
    assert cli_main(["validate", str(tmp_path / "nosuch.yaml")]) == 4
    assert cli_main(["validate", str(empty)]) == 5
    assert cli_main(["explain", str(tmp_path / "nosuch.yaml")]) == 4
    assert cli_main(["explain", corpus, "--case", "nope"]) == 4
    (tmp_path / "none.yaml").write_text("a: 1\n", encoding="utf-8")
    capsys.readouterr()


def test_junit_xml_report(corpus, tmp_path, capsys):
    out = tmp_path / "junit.xml"
    broken = tmp_path / "fifo.yaml"
    os.mkfifo(broken)  # named on the command line: refused by name, a file that does not load
    assert cli_main(["run", "-q", "--junit-xml", str(out), corpus, str(broken)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == f"kspread: JUnit XML report written to {out}"
    text = out.read_text(encoding="utf-8")
    root = ET.fromstring(text)  # well-formed, whatever the case's texts hold
    [suite] = root
    assert (root.tag, suite.tag, suite.get("name")) == ("testsuites", "testsuite", "kspread")
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "5", "failures": "1", "errors": "1", "skipped": "2"}
    cases = {c.get("name"): c for c in suite}
    good, bad, later, known = (cases[n] for n in ("good", "bad", "later", "known"))
    assert (good.get("classname"), good.get("file"), good.get("line"), list(good)) == (corpus, corpus, "1", [])
    assert float(good.get("time") or "x") >= 0
    [failure] = bad
    assert failure.tag == "failure"
    # the short reason
    assert failure.get("message") == f"feasible: expected [n1], actual [n1, n2] ({corpus}:{_at('bad')})"
    assert failure.text is not None and failure.text.startswith(f"{corpus}:{_at('bad')}: case 'bad' (version 1.29)\n")
    # the description's escape sequence shown escaped, U+FFFE (not an XML character) too
    assert "evil \\x1b[31m ]]> </failure> & \\ufffe end" in failure.text
    assert "\x1b" not in text and "\ufffe" not in text
    assert [(c.tag, c.get("message"), c.get("type")) for c in later] == [("skipped", "skip: not yet", None)]
    assert [(c.tag, c.get("message"), c.get("type")) for c in known] == [("skipped", "issue 12", "xfail")]
    [error] = cases[str(broken)]
    assert error.tag == "error" and error.text is not None and str(broken) in error.text


def test_junit_xml_that_cannot_be_written_is_a_message(corpus, tmp_path, capsys):
    assert cli_main(["run", "-q", "-k", "good", "--junit-xml", str(tmp_path / "no" / "j.xml"), corpus]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"kspread: --junit-xml {tmp_path / 'no' / 'j.xml'}: No such file or directory")


def test_xml_text_strips_what_xml_forbids():
    from kspread.workflow.safetext import xml_attr, xml_text

    assert xml_text("a<b>&\"'\x00\x1b\ud800\ufffe\nz") == "a&lt;b&gt;&amp;&quot;&#x27;\\x00\\x1b\\ud800\\ufffe\nz"
    assert xml_attr("one\ntwo") == "one\\ntwo"


_COLOUR = re.compile(r"\x1b\[[0-9;]*(3[0-7]|9[0-7]|38;)")


@pytest.mark.parametrize("how", ["default", "--no-color", "NO_COLOR"])
def test_no_color_and_NO_COLOR(corpus, capsys, monkeypatch, how):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    args = ["run", "-k", "good or bad", corpus]
    if how == "--no-color":
        args.insert(1, "--no-color")
    elif how == "NO_COLOR":
        monkeypatch.setenv("NO_COLOR", "1")
    assert cli_main(args) == 1
    out = capsys.readouterr().out
    assert "PASS" in out and "FAIL" in out
    assert bool(_COLOUR.search(out)) == (how == "default"), repr(out[:300])


def test_a_sequence_says_its_verdict_once_and_what_it_would_take():
    demo = Path(__file__).resolve().parent.parent / "examples" / "report-demo" / "demo.yaml"
    [doc] = [d for d in read_file(demo).docs if d.name == "rollout-sequence"]
    v = check(doc)
    assert not v.passed and v.message.count("scheduler's verdict:") == 1
    assert v.why == ["scheduler's verdict: 0/2 nodes are available: 2 Insufficient cpu.",
                     "what would it take (the nodes closest to fitting first):", "  n1: 1 more cpu", "  n2: 1 more cpu"]
