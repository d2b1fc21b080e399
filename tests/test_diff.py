"""kspread diff: the same corpus under two KubeSchedulerConfigurations."""

from __future__ import annotations

import json
import subprocess
import sys

BASE = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
HEAD = BASE + """profiles:
- plugins:
    score:
      enabled:
      - {name: NodeResourcesFit, weight: 50}
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""
CASES = """apiVersion: kspread/v1
kind: Case
name: packs-or-spreads
version: "1.30"
nodes:
- {name: n1, allocatable: {cpu: "4", memory: 8Gi, pods: 110}}
- {name: n2, allocatable: {cpu: "4", memory: 8Gi, pods: 110}}
pods:
- {name: a, node: n1, requests: {cpu: "3", memory: 6Gi}}
pod: {name: new, requests: {cpu: 500m, memory: 1Gi}}
expect: {}
---
apiVersion: kspread/v1
kind: Case
name: only-one-node
version: "1.30"
nodes: [n1]
pod: {name: new}
expect: {}
"""


def _run(tmp_path, *extra):
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "head.yaml").write_text(HEAD)
    (tmp_path / "cases.yaml").write_text(CASES)
    return subprocess.run(
        [sys.executable, "-m", "kspread", "diff", "--base", str(tmp_path / "base.yaml"), "--head",
         str(tmp_path / "head.yaml"), str(tmp_path / "cases.yaml"), *extra],
        capture_output=True, text=True)


def test_diff_reports_changed_cases_with_both_score_tables(tmp_path):
    r = _run(tmp_path)
    assert r.returncode == 1, r.stderr
    assert "cases.yaml:1: packs-or-spreads" in r.stdout
    assert '  selected: "n2" -> "n1"' in r.stdout
    # LeastAllocated n1 (4-3.5)/4 -> 12 + (8-7)/8 -> 12 = 12, n2 87; MostAllocated 87 / 12
    assert "NodeResourcesFit" in r.stdout and "12 -> 87" in r.stdout and "87 -> 12" in r.stdout
    assert "only-one-node" not in r.stdout
    assert "2 case(s) run under both configurations, 1 changed" in r.stderr


def test_diff_json_and_no_change(tmp_path):
    r = _run(tmp_path, "--json")
    data = json.loads(r.stdout)
    assert data["cases"] == 2 and data["changed"] == 1
    change = data["changes"][0]
    assert change["case"] == "packs-or-spreads"
    assert change["base"]["selected"] == "n2" and change["head"]["selected"] == "n1"
    assert change["head"]["scores"]["NodeResourcesFit"] == {"n1": 87, "n2": 12}
    same = subprocess.run([sys.executable, "-m", "kspread", "diff", "--base", str(tmp_path / "base.yaml"),
                           "--head", str(tmp_path / "base.yaml"), str(tmp_path / "cases.yaml")],
                          capture_output=True, text=True)
    assert same.returncode == 0 and "0 changed" in same.stderr
