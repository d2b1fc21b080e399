"""kspread run and validate as a user drives them: selection, quiet mode, the summary
line, the JSON report, colour on a terminal, and directory walking like pytest's."""

from __future__ import annotations

import json
import sys

import pytest

from kspread.workflow.cli import main as cli_main

CASES = """apiVersion: kspread/v1
kind: Case
name: web-fast
tags: [smoke]
profile: {filter: [NodeUnschedulable]}
nodes: [n1]
pod: {name: p}
expect: {feasible: [n1]}
---
apiVersion: kspread/v1
kind: Case
name: web-slow
profile: {filter: [NodeUnschedulable]}
nodes: [n1]
pod: {name: p}
expect: {feasible: []}
---
apiVersion: kspread/v1
kind: Case
name: db
profile: {filter: [NodeUnschedulable]}
nodes: [n1]
pod: {name: p}
expect: {feasible: [n1]}
"""


@pytest.fixture
def cases(tmp_path):
    p = tmp_path / "cases.yaml"
    p.write_text(CASES, encoding="utf-8")
    return str(p)


def test_summary_line_and_quiet(cases, capsys):
    assert cli_main(["run", cases]) == 1
    out = capsys.readouterr().out
    assert out.count("PASS ") == 2 and out.count("FAIL ") == 1
    assert out.splitlines()[-1] == "2 passed, 1 failed"
    assert cli_main(["run", "-q", cases]) == 1
    out = capsys.readouterr().out
    assert "PASS" not in out and out.startswith("FAIL web-slow (")
    assert out.splitlines()[-1] == "2 passed, 1 failed"


def test_keyword_expression_and_case_names(cases, capsys):
    assert cli_main(["run", "-k", "web and not slow", cases]) == 0
    out = capsys.readouterr().out
    assert "PASS web-fast" in out and "db" not in out
    assert out.splitlines()[-1] == "1 passed, 0 failed, 2 deselected"
    assert cli_main(["run", "-q", "-k", "smoke or db", cases]) == 0  # tags match too
    assert capsys.readouterr().out.splitlines()[-1] == "2 passed, 0 failed, 1 deselected"
    assert cli_main(["run", "--case", "db", "--case", "web-slow", "-q", cases]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 1 failed, 1 deselected"
    # a name that names no case is a usage error (exit 4, as pytest's `file::nope`)
    assert cli_main(["run", "--case", "nope", cases]) == 4
    assert capsys.readouterr().err == f"kspread: --case 'nope' names no case in {cases}\n"
    # -k that selects nothing: no case selected (exit 5, as pytest's)
    assert cli_main(["run", "-k", "nope", cases]) == 5
    assert capsys.readouterr().err == "kspread: no case selected (3 deselected)\n"


def test_a_case_name_that_names_no_case_fails_the_run(cases, capsys):
    # the other names still run, but a mistyped one must not quietly run fewer cases
    assert cli_main(["run", "-q", "--case", "db", "--case", "dbb", cases]) == 4
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == "1 passed, 0 failed, 2 deselected"
    assert captured.err == f"kspread: --case 'dbb' names no case in {cases}\n"
    # a name deselected by -k is a name of a case: not an error
    assert cli_main(["run", "-q", "--case", "db", "--case", "web-fast", "-k", "db", cases]) == 0


def test_bad_keyword_expression_is_a_message(cases, capsys):
    assert cli_main(["run", "-k", "web and", cases]) == 4  # a usage error, before any case runs
    captured = capsys.readouterr()
    assert captured.err.startswith("kspread run: -k 'web and': ") and captured.out == ""


def test_json_report_has_expected_and_differences_of_failing_cases(cases, capsys):
    assert cli_main(["run", "--json", cases]) == 1
    cap = capsys.readouterr()
    report = {e["name"]: e for e in json.loads(cap.out)}
    assert "expected" not in report["db"] and "differences" not in report["db"]
    assert report["web-slow"]["expected"] == {"feasible": []}
    assert report["web-slow"]["differences"] == [{"key": "feasible", "what": "nodes", "expected": [],
                                                  "actual": ["n1"]}]
    assert cap.err == "2 passed, 1 failed\n"


def test_colour_on_a_terminal_plain_otherwise(cases, capsys, monkeypatch):
    assert cli_main(["run", cases]) == 1
    assert "\x1b[" not in capsys.readouterr().out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert cli_main(["run", cases]) == 1
    out = capsys.readouterr().out
    assert "\x1b[1;32mPASS\x1b[0m" in out and "\x1b[1;31mFAIL\x1b[0m" in out


def test_directories_are_walked_as_pytest_collects_them(tmp_path, capsys):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "c.yaml").write_text(CASES, encoding="utf-8")
    for junk in ("node_modules/pkg/package.json", ".venv/lib/x.yaml", "venv2/pyvenv.cfg", "venv2/lib/y.yaml",
                 ".git/config.yaml", "build/out.yaml"):
        f = tmp_path / junk
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("{ not: [valid", encoding="utf-8")
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "templates" / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: {{ .Release.Name }}}\n", encoding="utf-8")
    (tmp_path / "package.json").write_text('{"name": "x"', encoding="utf-8")
    assert cli_main(["validate", str(tmp_path)]) == 0
    assert capsys.readouterr().err == "3 case(s) checked, 0 invalid\n"
    assert cli_main(["run", "-q", str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "2 passed, 1 failed"
    # a file named on the command line is always read
    assert cli_main(["validate", str(tmp_path / "package.json")]) == 1


def test_validate_json(tmp_path, capsys):
    p = tmp_path / "c.yaml"
    p.write_text(CASES + "---\n" + CASES.split("---\n")[0].replace("web-fast", "bad").replace(
        "expect: {feasible: [n1]}", "expect: {feasible: [n9]}"), encoding="utf-8")
    assert cli_main(["validate", "--json", str(p)]) == 1
    cap = capsys.readouterr()
    report = json.loads(cap.out)
    assert [(e["name"], e["valid"]) for e in report] == [("web-fast", True), ("web-slow", True), ("db", True),
                                                         ("bad", False)]
    assert report[3]["line"] == 26 and "expect.feasible" in report[3]["error"] and "n9" in report[3]["error"]
    assert cap.err == "4 case(s) checked, 1 invalid\n"


def test_a_file_name_that_is_not_utf8_prints_escaped(tmp_path):
    # a subprocess: its standard streams are strict UTF-8, as a CI log's
    import os
    import subprocess

    name = b"caf\xe9.yaml".decode("utf-8", "surrogateescape")
    (tmp_path / name).write_text(CASES.split("---")[0], encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "kspread", "run", "-q", "."], capture_output=True, text=True,
                       cwd=tmp_path, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert (r.returncode, r.stdout, r.stderr) == (0, "1 passed, 0 failed\n", "")
    (tmp_path / name).write_text(CASES.split("---")[0].replace("[n1]}", "[n2]}"), encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "kspread", "run", "-q", "."], capture_output=True, text=True,
                       cwd=tmp_path, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert (r.returncode, r.stderr) == (1, "")
    assert r.stdout == ("FAIL web-fast (caf\\udce9.yaml:1)\n  caf\\udce9.yaml:8: expect.feasible[0]: unknown node 'n2'\n"
                        "0 passed, 1 failed\n")


def test_update_writes_strings_yaml_would_break_escaped():
    from kspread.workflow.yamltext import flow

    assert flow({"r": "a\u2028b: c", "s": "x\x85y", "t": "ok"}) == '{r: "a\\u2028b: c", s: "x\\u0085y", t: ok}'
