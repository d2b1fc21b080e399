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
expect: {unschedulable: false}
---
apiVersion: kspread/v1
kind: Case
name: only-one-node
version: "1.30"
nodes: [n1]
pod: {name: new}
expect: {unschedulable: false}
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
    assert '  selected: n2 -> n1' in r.stdout  # YAML, as every report prints values
    # LeastAllocated n1 (4-3.5)/4 -> 12 + (8-7)/8 -> 12 = 12, n2 87; MostAllocated 87 / 12
    assert "NodeResourcesFit" in r.stdout and "12 -> 87" in r.stdout and "87 -> 12" in r.stdout
    # the columns are scores before the weight (head weighs NodeResourcesFit 50), the totals
    # weighted: the header says so, or the columns seem not to add up
    assert "(base -> head; a plugin's score before its weight, the total weighted)" in r.stdout
    assert "only-one-node" not in r.stdout
    assert r.stderr == "2 case(s), 1 changed, 1 unchanged, 0 not applicable\n"


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


OLD_CASE = """apiVersion: kspread/v1
kind: Case
name: too-old-for-v1
version: "1.20"
nodes: [n1, n2]
pod: {name: new}
expect: {unschedulable: false}
---
apiVersion: kspread/v1
kind: Case
name: own-profile
version: "1.30"
profile: {score: [NodeResourcesBalancedAllocation]}
nodes:
- {name: n1, allocatable: {cpu: "4", memory: 8Gi, pods: 110}}
- {name: n2, allocatable: {cpu: "4", memory: 8Gi, pods: 110}}
pods:
- {name: a, node: n1, requests: {cpu: "3", memory: 6Gi}}
pod: {name: new, requests: {cpu: 500m, memory: 1Gi}}
expect: {unschedulable: false}
"""


def _diff(tmp_path, cases: str, *extra, base: str = BASE, head: str = HEAD):
    (tmp_path / "b.yaml").write_text(base)
    (tmp_path / "h.yaml").write_text(head)
    (tmp_path / "c.yaml").write_text(cases)
    return subprocess.run([sys.executable, "-m", "kspread", "diff", "--base", str(tmp_path / "b.yaml"), "--head",
                           str(tmp_path / "h.yaml"), str(tmp_path / "c.yaml"), *extra], capture_output=True, text=True)


def test_a_case_one_configuration_cannot_run_is_not_applicable_not_changed(tmp_path):
    r = _diff(tmp_path, OLD_CASE)
    assert r.returncode == 1, r.stderr  # nothing was compared: that is no pass
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'c.yaml'}:1: too-old-for-v1: not applicable (base: ")
    assert "kubescheduler.config.k8s.io/v1" in lines[0]
    assert lines[-2:] == [
        ("2 case(s), 0 changed, 0 unchanged, 1 not applicable, 1 with their own profile (not compared; "
         "--override-profile runs them under both configurations)"),
        "kspread diff: no case was run under both configurations; nothing was compared"]
    with_one_compared = _diff(tmp_path, OLD_CASE + "---\n" + CASES.split("---\n")[1], base=BASE, head=BASE)
    assert with_one_compared.returncode == 0, with_one_compared.stderr
    assert with_one_compared.stderr.splitlines()[-1].startswith("3 case(s), 0 changed, 1 unchanged, 1 not applicable")
    data = json.loads(_diff(tmp_path, OLD_CASE, "--json").stdout)
    assert (data["cases"], data["changed"], data["notApplicable"], data["ownProfile"]) == (2, 0, 1, 1)
    assert data["notApplicableCases"][0]["case"] == "too-old-for-v1"


def test_override_profile_runs_a_case_with_its_own_profile_under_both(tmp_path):
    r = _diff(tmp_path, OLD_CASE, "--override-profile", "--json")
    data = json.loads(r.stdout)
    assert (data["changed"], data["notApplicable"], data["ownProfile"]) == (1, 1, 0)
    assert data["changes"][0]["case"] == "own-profile"
    assert data["changes"][0]["head"]["selected"] == "n1"


MULTI = BASE + """profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  plugins:
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


def test_scheduler_name_picks_a_profile_of_a_multi_profile_configuration(tmp_path):
    same = _diff(tmp_path, CASES, base=BASE, head=MULTI)
    assert same.returncode == 0 and "0 changed" in same.stderr
    plain_packer = BASE + "profiles:\n- schedulerName: default-scheduler\n- schedulerName: packer\n"
    # default-scheduler is the same in both files; the profiles named packer differ
    assert "0 changed" in _diff(tmp_path, CASES, base=plain_packer, head=MULTI).stderr
    packer = _diff(tmp_path, CASES, "--scheduler-name", "packer", base=plain_packer, head=MULTI)
    assert packer.returncode == 1 and "1 changed" in packer.stderr and "packs-or-spreads" in packer.stdout
    r = _diff(tmp_path, CASES, "--scheduler-name", "packer", "--json", base=BASE, head=MULTI)
    # the base file has no profile named packer: at no version can it run, an error before any case runs
    assert (r.returncode, r.stdout) == (4, "")
    assert r.stderr == (f"kspread diff: --base: {tmp_path / 'b.yaml'}:1: profiles: no profile with schedulerName "
                        "'packer' (the profiles are: default-scheduler)\n")


def test_a_configuration_that_cannot_be_read_or_a_mistyped_profile_name_is_an_error(tmp_path):
    missing = str(tmp_path / "missing.yaml")
    for side in ("--base", "--head"):
        (tmp_path / "c.yaml").write_text(CASES)
        (tmp_path / "b.yaml").write_text(BASE)
        args = {"--base": str(tmp_path / "b.yaml"), "--head": str(tmp_path / "b.yaml"), side: missing}
        r = subprocess.run([sys.executable, "-m", "kspread", "diff", "--base", args["--base"], "--head",
                            args["--head"], str(tmp_path / "c.yaml")], capture_output=True, text=True)
        assert (r.returncode, r.stdout) == (4, "")
        assert r.stderr == (f"kspread diff: {side}: {missing}: cannot read the scheduler configuration: "
                            "No such file or directory\n")
    r = _diff(tmp_path, CASES, "--scheduler-name", "defualt-scheduler", base=BASE, head=MULTI)
    assert (r.returncode, r.stdout) == (4, "")
    assert r.stderr == (
        f"kspread diff: --base: {tmp_path / 'b.yaml'}:1: profiles: no profile with schedulerName 'defualt-scheduler' "
        "(the profiles are: default-scheduler)\n"
        f"kspread diff: --head: {tmp_path / 'h.yaml'}:3: profiles: no profile with schedulerName 'defualt-scheduler' "
        "(the profiles are: default-scheduler, packer)\n")
    # a configuration some version runs is no error: the cases it cannot run are not applicable
    old = BASE.replace("/v1\n", "/v1beta1\n")
    r = _diff(tmp_path, CASES, base=old, head=old)
    assert r.returncode == 1 and "2 not applicable" in r.stderr
    assert r.stderr.endswith("kspread diff: no case was run under both configurations; nothing was compared\n")


def test_a_diff_of_no_case_fails(tmp_path):
    (tmp_path / "b.yaml").write_text(BASE)
    (tmp_path / "empty").mkdir()
    r = subprocess.run([sys.executable, "-m", "kspread", "diff", "--base", str(tmp_path / "b.yaml"), "--head",
                        str(tmp_path / "b.yaml"), str(tmp_path / "empty")], capture_output=True, text=True)
    assert r.returncode == 5  # no case collected, as pytest's exit 5
    assert r.stderr == ("0 case(s), 0 changed, 0 unchanged, 0 not applicable\n"
                        f"kspread: no case in {tmp_path / 'empty'} (a case is a YAML document with apiVersion: "
                        "kspread/v1, kind: Case)\n")


def test_a_path_that_does_not_exist_is_a_usage_error(tmp_path):
    (tmp_path / "b.yaml").write_text(BASE)
    r = subprocess.run([sys.executable, "-m", "kspread", "diff", "--base", str(tmp_path / "b.yaml"), "--head",
                        str(tmp_path / "b.yaml"), str(tmp_path / "nosuch")], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (4, "")
    assert r.stderr == f"kspread diff: file or directory not found: {tmp_path / 'nosuch'}\n"
