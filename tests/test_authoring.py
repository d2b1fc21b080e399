"""Authoring: expect.spread (counts per topology domain), placements as a tied set, and what a
golden update writes (the case's question by default, ties never as plain facts, --update-keys)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kspread.format.loader import load_case, read_file
from kspread.workflow.runner import check

ROOT = Path(__file__).resolve().parent.parent

ZONES = """\
apiVersion: kspread/v1
kind: Case
name: c
version: "1.35"
zones: {za: [a1, a2], zb: [b1]}
pods:
- {name: old, node: b1, labels: {app: web}}
"""


def _check(tmp_path: Path, text: str):
    p = tmp_path / "case.yaml"
    p.write_text(text, encoding="utf-8")
    return check(read_file(p).docs[0])


def _kspread(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kspread", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_spread_counts_the_schedules_pods_by_domain(tmp_path):
    # three unowned pods without requests over a1, a2, b1: every cycle ties, and the first in
    # node order, a1, is taken each time
    v = _check(tmp_path, ZONES + "schedule: [{name: w, replicas: 3, labels: {app: web}}]\n"
               "expect: {spread: {topologyKey: topology.kubernetes.io/zone, counts: {za: 3, zb: 0, zc: 0}}}\n")
    assert v.passed, v.message


def test_spread_difference_rows_name_key_and_domain(tmp_path):
    v = _check(tmp_path, ZONES + "schedule: [{name: w, replicas: 3, labels: {app: web}}]\n"
               "expect: {spread: {topologyKey: topology.kubernetes.io/zone, counts: {za: 1, zb: 2}}}\n")
    assert not v.passed
    assert "spread:\n  key domain                      expected  actual\n" in v.message
    assert "topology.kubernetes.io/zone za  1         3" in v.message
    assert "topology.kubernetes.io/zone zb  2         0" in v.message


def test_spread_with_a_selector_counts_existing_pods_and_none_for_unlabelled_nodes(tmp_path):
    text = ZONES.replace("zones: {za: [a1, a2], zb: [b1]}", "zones: {za: [a1, a2], zb: [b1]}\nnodes: [a1, a2, b1, bare]")
    v = _check(tmp_path, text + "schedule: [{name: w, replicas: 4, labels: {app: web}}]\n"
               "expect:\n  spread:\n  - topologyKey: topology.kubernetes.io/zone\n"
               "    selector: {matchLabels: {app: web}}\n    counts: {za: 4, zb: 1}\n"
               "  - topologyKey: topology.kubernetes.io/zone\n    selector: {matchLabels: {app: web}}\n"
               "    namespace: other\n    counts: {}\n")
    assert v.passed, v.message


@pytest.mark.parametrize(("expect", "shown"), [
    ("{spread: {topologyKey: 'bad key!', counts: {}}}", "case.yaml:9: expect.spread.topologyKey: topologyKey: "),
    ("{spread: {topologyKey: zone, namespace: x, counts: {}}}",
     "case.yaml:9: expect.spread.namespace: namespace narrows a selector"),
    ("{spread: {topologyKey: zone, counts: {za: -1}}}", "case.yaml:9: expect.spread"),
    ("{spread: {topologyKey: zone}}", "missing required field 'counts'"),
])
def test_spread_errors(tmp_path, expect, shown):
    v = _check(tmp_path, ZONES + "schedule: [{name: w}]\nexpect: " + expect + "\n")
    assert not v.passed and shown in v.message, v.message


def test_spread_needs_a_schedule(tmp_path):
    v = _check(tmp_path, ZONES + "pod: {name: w}\nexpect: {spread: {topologyKey: zone, counts: {za: 1}}}\n")
    assert "spread counts where the pods of a `schedule` end" in v.message


def test_placements_as_a_set_pass_when_the_pod_ends_on_one_of_them(tmp_path):
    v = _check(tmp_path, ZONES + "schedule: [{name: w, labels: {app: web}}]\n"
               "expect: {placements: {w: [a1, a2]}}\n")
    assert v.passed, v.message
    v = _check(tmp_path, ZONES + "schedule: [{name: w, labels: {app: web}}]\n"
               "expect: {placements: {w: [a2, b1]}}\n")
    assert not v.passed and "[a2, b1]" in v.message and "a1" in v.message
    v = _check(tmp_path, ZONES + "schedule: [{name: w}]\nexpect: {placements: {w: [a1, zz]}}\n")
    assert "case.yaml:9: expect.placements.w[1]: unknown node 'zz'" in v.message


def test_update_of_an_empty_sequence_writes_ties_as_their_sets(tmp_path):
    (tmp_path / "c.yaml").write_text(
        ZONES + "nodes: [{name: a1, allocatable: {cpu: '1', pods: 9}}, {name: a2}, {name: b1}]\n"
        "schedule: [{name: big, requests: {cpu: '2'}}, {name: w}]\nexpect: {}\n", encoding="utf-8")
    run = _kspread("run", "-q", "--update", "c.yaml", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    expect = yaml.safe_load((tmp_path / "c.yaml").read_text())["expect"]
    # big fits a2 and b1 only, a tie; so does w (a1's allocatable has no memory: it scores lower)
    assert expect == {"placements": {"big": ["a2", "b1"], "w": ["a2", "b1"]}}
    assert _kspread("run", "-q", "c.yaml", cwd=tmp_path).returncode == 0


def test_update_keys_write_the_keys_asked_for(tmp_path):
    (tmp_path / "c.yaml").write_text(ZONES + "pod: {name: w}\nexpect: {}\n", encoding="utf-8")
    run = _kspread("run", "-q", "--update", "--update-keys", "feasible,totals", "c.yaml", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    expect = yaml.safe_load((tmp_path / "c.yaml").read_text())["expect"]
    assert list(expect) == ["feasible", "totals"] and expect["feasible"] == ["a1", "a2", "b1"]
    bad = _kspread("run", "--update", "--update-keys", "score", "c.yaml", cwd=tmp_path)
    assert bad.returncode == 4 and "not an expect key: score" in bad.stderr
    # without --update the keys would be written nowhere, and the run would pass as if they were
    alone = _kspread("run", "--update-keys", "scores", "c.yaml", cwd=tmp_path)
    assert (alone.returncode, alone.stderr) == (4, "kspread run: --update-keys needs --update\n")


def test_pytest_update_keys_without_update_is_a_usage_error(pytester):
    pytester.makefile(".yaml", c=ZONES + "pod: {name: w}\nexpect: {selected: [a1, a2, b1]}\n")
    r = pytester.runpytest("--kspread-update-keys", "scores")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "--kspread-update-keys needs --kspread-update" in r.stderr.str()


def test_an_unschedulable_pods_default_update_says_why_on_the_first_nodes(tmp_path):
    nodes = ", ".join(f"{{name: n{i}, allocatable: {{cpu: '1', pods: 9}}}}" for i in range(12))
    p = tmp_path / "c.yaml"
    p.write_text("apiVersion: kspread/v1\nkind: Case\nname: c\nversion: \"1.35\"\n"
                 f"nodes: [{nodes}]\npod: {{name: w, requests: {{cpu: '2'}}}}\nexpect: {{}}\n", encoding="utf-8")
    assert _kspread("run", "-q", "--update", "c.yaml", cwd=tmp_path).returncode == 0
    expect = yaml.safe_load(p.read_text())["expect"]
    assert expect["unschedulable"] is True and expect["preemption"] is None
    assert list(expect["filter"]) == [f"n{i}" for i in range(10)]
    assert expect["filter"]["n0"] == {"code": "UnschedulableAndUnresolvable", "reason": "Insufficient cpu"}
    case = load_case(read_file(p).docs[0])
    assert case.expect == expect


MARKED = """\
apiVersion: kspread/v1
kind: Case
name: skipped
skip: the node pool is being redesigned
version: "1.35"
nodes: [n1]
pod: {name: p, unknownField: 1}
expect: {selected: n1}
---
apiVersion: kspread/v1
kind: Case
name: known-bad
xfail: "waits on the MostAllocated change"
version: "1.35"
nodes: [n1, n2]
pod: {name: p}
expect: {selected: n1}
---
apiVersion: kspread/v1
kind: Case
name: xpass
xfail: was broken
version: "1.35"
nodes: [n1]
pod: {name: p}
expect: {selected: n1}
---
apiVersion: kspread/v1
kind: Case
name: xfail-typo
xfail: was broken
version: "1.35"
nodes: [n1]
pod: {name: p, labelz: {}}
expect: {selected: n1}
"""


def test_skip_and_xfail_under_kspread_run(tmp_path):
    (tmp_path / "m.yaml").write_text(MARKED, encoding="utf-8")
    run = _kspread("run", "m.yaml", cwd=tmp_path)  # -q leaves out the SKIP and XFAIL lines
    assert run.returncode == 1
    assert "SKIP skipped (m.yaml:1): skip: the node pool is being redesigned" in run.stdout + run.stderr
    assert "XFAIL known-bad (m.yaml:10): waits on the MostAllocated change" in run.stdout + run.stderr
    assert "case 'xpass' passes, but is marked xfail (was broken): remove `xfail`" in run.stdout
    assert "pod.labelz: unknown field 'labelz'" in run.stdout  # a case that cannot load is no expected failure
    assert "0 passed, 2 failed, 1 skipped, 1 xfailed" in run.stdout


def test_skip_and_xfail_are_pytest_marks(pytester):
    pytester.makefile(".yaml", m=MARKED)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(failed=2, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(["*XPASS(strict)*was broken*", "*skip: the node pool is being redesigned*"])


def test_skip_and_xfail_together_are_refused(tmp_path):
    v = _check(tmp_path, ZONES + "xfail: a\nskip: b\npod: {name: p}\nexpect: {selected: a1}\n")
    assert "case.yaml:9: skip: give either `skip` or `xfail`, not both" in v.message, v.message
