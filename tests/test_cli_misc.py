"""Small workflow features: --version, the schema command, pytest's cache (--lf)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

from kspread.workflow.cli import main as cli_main


def test_version(capsys):
    try:
        cli_main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    assert capsys.readouterr().out == f"kspread {version('kspread')}\n"


def test_schema_prints_the_schema_and_its_path(capsys):
    assert cli_main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["properties"]["expect"] and schema["$schema"].startswith("https://json-schema.org/")
    assert cli_main(["schema", "--path"]) == 0
    path = capsys.readouterr().out.strip()
    with open(path, encoding="utf-8") as f:
        assert json.load(f) == schema


RIGHT = """apiVersion: kspread/v1
kind: Case
name: right
profile: {filter: [NodeUnschedulable]}
nodes: [n1]
pod: {name: new}
expect: {feasible: [n1]}
---
apiVersion: kspread/v1
kind: Case
name: wrong
profile: {filter: [NodeUnschedulable]}
nodes: [n1]
pod: {name: new}
expect: {feasible: []}
"""


def test_last_failed_reruns_only_the_failing_case(pytester):
    pytester.makefile(".yaml", cases=RIGHT)
    first = pytester.runpytest_subprocess()
    first.assert_outcomes(passed=1, failed=1)
    again = pytester.runpytest_subprocess("--lf", "-v")
    again.assert_outcomes(failed=1)
    assert "cases.yaml::wrong" in again.stdout.str() and "cases.yaml::right" not in again.stdout.str()


def test_module_entry_point():
    r = subprocess.run([sys.executable, "-m", "kspread", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("kspread ")


def test_junit_xml_carries_the_case_file_and_line(pytester):
    import xml.etree.ElementTree as ET

    pytester.makefile(".yaml", cases=RIGHT)
    pytester.runpytest("--junitxml=out.xml").assert_outcomes(passed=1, failed=1)
    root = ET.parse(pytester.path / "out.xml").getroot()
    cases = {tc.get("name"): {p.get("name"): p.get("value") for p in tc.iter("property")} for tc in root.iter("testcase")}
    path = "cases.yaml"  # relative to the rootdir, as pytest reports locations
    assert cases == {"right": {"file": path, "line": "1"}, "wrong": {"file": path, "line": "9"}}


VARIANTS = """apiVersion: kspread/v1
kind: Case
name: sweep
profile: {filter: [NodeUnschedulable]}
nodes: [n1]
pod: {name: new}
expect: {feasible: [n1]}
variants:
  good:
    version: "1.31"
  "1.30":
    version: "1.30"
    expect: {feasible: []}
"""


def test_last_failed_reruns_failing_variants(pytester):
    pytester.makefile(".yaml", cases=RIGHT, sweep=VARIANTS)
    pytester.runpytest_subprocess().assert_outcomes(passed=3, failed=2)
    again = pytester.runpytest_subprocess("--lf", "-v")
    again.assert_outcomes(failed=2)
    out = again.stdout.str()
    assert "sweep.yaml::sweep[1.30] FAILED" in out and "cases.yaml::wrong FAILED" in out
    assert "sweep.yaml::sweep PASSED" not in out and "sweep[good]" not in out
    first = pytester.runpytest_subprocess("--ff", "-v")
    first.assert_outcomes(passed=3, failed=2)
    order = [line.split(" ")[0] for line in first.stdout.lines if line.endswith("%]")]
    assert set(order[:2]) == {"sweep.yaml::sweep[1.30]", "cases.yaml::wrong"}


def test_every_argument_of_every_command_has_a_help_text():
    """`kspread COMMAND --help` (and the generated Command line page) explains every
    positional and option: `explain`'s file and `completion`'s shell once had none."""
    import argparse

    from kspread.workflow.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {a.dest}" for name, p in sub.choices.items() for a in p._actions
               if not isinstance(a, argparse._HelpAction) and not a.help]
    assert not missing, missing
