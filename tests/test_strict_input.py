"""Strict loading: nothing a case file says is dropped, skipped or half-read quietly,
and no input crashes or hangs kspread. Every error names file, line and field."""

from __future__ import annotations

import contextlib
import io
import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from kspread.format.loader import read_file
from kspread.format.yamlio import MAX_DEPTH, load_strict, read_documents
from kspread.workflow.cli import main
from kspread.workflow.runner import check

CASE = """\
apiVersion: kspread/v1
kind: Case
name: {name}
version: "1.24"
profile: {{score: [SelectorSpread]}}
nodes: [n1, n2]
pod: {{name: p}}
expect: {{selected: [n1, n2]}}
"""


def case(name: str = "c") -> str:
    return CASE.format(name=name)


def load_one(p: Path):
    res = read_file(p)
    assert res.error is None, res.error
    assert len(res.docs) == 1, res.docs
    return res.docs[0]


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str) -> Ran:
    """``kspread ARGS``, in process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse
            code = e.code if isinstance(e.code, int) else 1
    return Ran(code, out.getvalue(), err.getvalue())


# ---- duplicate keys ---------------------------------------------------------------------------


def test_duplicate_top_level_key_names_both_lines(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case() + "expect: {selected: n1}\n")
    v = check(load_one(p))
    assert not v.passed
    assert v.message == f"{p}:9: duplicate key 'expect' (lines 8 and 9)"


def test_duplicate_nested_key_names_the_field(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("expect: {selected: [n1, n2]}\n", textwrap.dedent("""\
        expect:
          scores:
            SelectorSpread: {n1: 0}
            SelectorSpread: {n2: 0}
        """)))
    v = check(load_one(p))
    assert v.message == f"{p}:11: expect.scores: duplicate key 'SelectorSpread' (lines 10 and 11)"


def test_duplicate_key_on_one_line(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("pod: {name: p}", "pod: {name: p, name: q}"))
    assert check(load_one(p)).message == f"{p}:7: pod: duplicate key 'name' (twice on line 7)"


def test_duplicate_key_fails_in_pytest_with_file_and_line(pytester):
    pytester.makefile(".yaml", dup=case("good") + "---\n" + case("dup") + "nodes: [n3]\n")
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*dup.yaml:18: duplicate key 'nodes' (lines 15 and 18)"])


def test_duplicate_key_in_a_non_case_document_is_not_kspreads(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case() + "---\napiVersion: v1\nkind: ConfigMap\ndata: {a: 1, a: 2}\n")
    res = read_file(p)
    assert [d.name for d in res.docs] == ["c"]
    assert check(res.docs[0]).passed


def test_merge_keys_are_no_duplicates(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("pod: {name: p}", "pods:\n- &base {name: a, node: n1, labels: {app: web}}\n"
                                "- {<<: *base, name: b}\npod: {name: p}"))
    doc = load_one(p)
    assert doc.data["pods"][1] == {"name": "b", "node": "n1", "labels": {"app": "web"}}
    assert check(doc).passed


def test_non_string_key_is_an_error(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("nodes: [n1, n2]", "nodes:\n- name: n1\n  labels: {1: a}\n- n2"))
    assert check(load_one(p)).message == f"{p}:8: nodes[0].labels: mapping key '1' is not a string: quote it"


def test_duplicate_key_in_a_scheduler_configuration(tmp_path):
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(textwrap.dedent("""\
        apiVersion: kubescheduler.config.k8s.io/v1beta3
        kind: KubeSchedulerConfiguration
        profiles:
        - schedulerName: default-scheduler
          plugins:
            score:
              enabled: [{name: NodeAffinity}]
              enabled: [{name: TaintToleration}]
        """))
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("profile: {score: [SelectorSpread]}", "profile: {config: sched.yaml}"))
    v = check(load_one(p))
    assert v.message == f"{cfg}:8: profiles[0].plugins.score: duplicate key 'enabled' (lines 7 and 8)"


def test_duplicate_key_in_kspread_config_option(pytester):
    pytester.makefile(".yaml", c=case().replace("profile: {score: [SelectorSpread]}\n", ""))
    cfg = pytester.path / "sched.cfg"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "kind: KubeSchedulerConfiguration\n")
    result = pytester.runpytest("-q", f"--kspread-config={cfg}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"{cfg}:3: duplicate key 'kind' (lines 2 and 3)"])


def test_duplicate_key_in_json(tmp_path):
    p = tmp_path / "c.json"
    p.write_text('{"apiVersion": "kspread/v1", "kind": "Case",\n "nodes": ["n1"],\n "nodes": ["n2"]}')
    res = read_file(p)
    assert str(res.error) == f"{p}:3: duplicate key 'nodes' (lines 2 and 3)"


# ---- what is a case -----------------------------------------------------------------------------


@pytest.mark.parametrize("head,msg", [
    ("apiVersion: kspread/v1\nkind: case\n",
     ("c.yaml:2: kind: a document with apiVersion kspread/v1 must be kind: Case (the only kind of the kspread "
      "group) (got 'case')")),
    ("apiVersion: kspread.io/v1\nkind: Case\n",
     ("c.yaml:1: apiVersion: a kind: Case document must have apiVersion: kspread/v1 (the case format this kspread "
      "reads) (got 'kspread.io/v1')")),
    ("kind: Case\n",
     ("c.yaml:1: apiVersion: a kind: Case document must have apiVersion: kspread/v1 (the case format this kspread "
      "reads) (got None)")),
])
def test_a_near_case_is_an_error_not_skipped(tmp_path, pytester, head, msg):
    body = case().split("\n", 2)[2]
    p = tmp_path / "c.yaml"
    p.write_text(head + body)
    assert check(load_one(p)).message == f"{tmp_path}/{msg}"
    r = run_cli("run", str(p))
    assert r.returncode == 1 and f"{tmp_path}/{msg}" in r.stdout
    r = run_cli("validate", str(p))
    assert r.returncode == 1 and r.stdout.strip() == f"{tmp_path}/{msg}"
    pytester.makefile(".yaml", c=head + body)
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*{msg}"])


def test_other_documents_are_ignored(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n---\n" + case() +
                 "---\napiVersion: apps/v1\nkind: Deployment\n")
    res = read_file(p)
    assert [(d.name, d.line) for d in res.docs] == [("c", 5)]


def test_paths_without_cases_fail_in_the_cli(tmp_path):
    (tmp_path / "other.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    for cmd in ("run", "validate"):
        r = run_cli(cmd, str(tmp_path))
        assert r.returncode == 5, r  # no case collected, as pytest's exit 5
        assert f"kspread: no case in {tmp_path} (a case is a YAML document with apiVersion: kspread/v1, " \
               "kind: Case)" in r.stderr
    r = run_cli("run", str(tmp_path / "missing.yaml"))
    assert r.returncode == 4 and "file or directory not found" in r.stderr  # a usage error, as pytest's


# ---- expect must assert something the case can produce ------------------------------------------


def test_empty_expect_asserts_nothing(tmp_path, pytester):
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("expect: {selected: [n1, n2]}", "expect: {}"))
    v = check(load_one(p))
    assert not v.passed
    assert v.message == (f"{p}:8: expect: the case asserts nothing: give at least one key (or let "
                         "`pytest --kspread-update` or `kspread run --update` fill it)")
    r = run_cli("validate", str(p))
    assert r.returncode == 1 and r.stdout.strip() == v.message
    r = run_cli("run", str(p))
    assert r.returncode == 1 and "FAIL c" in r.stdout
    # an update run fills it instead
    r = run_cli("run", "--update", str(p))
    assert r.returncode == 0, r.stderr
    assert "expect:\n  selected: [n1, n2]" in p.read_text() or "selected:" in p.read_text()
    assert check(load_one(p)).passed


def test_empty_expect_is_filled_by_pytest_update(pytester):
    p = pytester.makefile(".yaml", c=case().replace("expect: {selected: [n1, n2]}", "expect: {}"))
    pytester.runpytest("-q").assert_outcomes(failed=1)
    pytester.runpytest("-q", "--kspread-update").assert_outcomes(passed=1)
    assert "expect: {}" not in p.read_text()
    pytester.runpytest("-q").assert_outcomes(passed=1)


@pytest.mark.parametrize("change,line,msg", [
    (("expect: {selected: [n1, n2]}", "expect: {scores: {NodeAffinity: {n1: 0}}}"), 8,
     ("expect.scores.NodeAffinity: plugin 'NodeAffinity': not a score plugin of the profile (its score plugins: "
      "SelectorSpread)")),
    (("expect: {selected: [n1, n2]}", "expect:\n  rawScores:\n    ext: {n1: 1}"), 10,
     "expect.rawScores.ext: plugin 'ext': 'ext' is an extender: extender scores count in `totals` only"),
    (("expect: {selected: [n1, n2]}", "expect: {placements: {p: n1}}"), 8,
     ("expect.placements: placements are for a `schedule` of incoming pods; this case schedules one `pod` "
      "(compare `selected` or `preemption` instead)")),
    (("expect: {selected: [n1, n2]}", "expect: {preemption: null}"), 8,
     ("expect.preemption: preemption never runs: the profile has no PostFilter plugin (list DefaultPreemption "
      "under postFilter)")),
    (("expect: {selected: [n1, n2]}", "expect: {filter: {n3: Success}}"), 8,
     "expect.filter.n3: unknown node 'n3'"),
])
def test_expect_names_only_what_the_case_has(tmp_path, change, line, msg):
    text = case().replace(*change)
    if "ext" in change[1]:
        text = text.replace("{score: [SelectorSpread]}", "{score: [SelectorSpread], extenders: [{name: ext, prioritize: {n1: 1}}]}")
    p = tmp_path / "c.yaml"
    p.write_text(text)
    v = check(load_one(p))
    assert v.message == f"{p}:{line}: {msg}"


@pytest.mark.parametrize("version,plugins", [
    ("1.24", ("TaintToleration, NodeAffinity, NodeResourcesFit, VolumeBinding, PodTopologySpread, InterPodAffinity, "
              "NodeResourcesBalancedAllocation, ImageLocality")),
    ("1.17", ("NodeResourcesBalancedAllocation, ImageLocality, InterPodAffinity, NodeResourcesLeastAllocated, "
              "NodeAffinity, NodePreferAvoidPods, TaintToleration, SelectorSpread")),
])
def test_plugins_in_expect_of_the_default_profile(tmp_path, version, plugins):
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("profile: {score: [SelectorSpread]}\n", "").replace("1.24", version)
                 .replace("expect: {selected: [n1, n2]}", "expect:\n  scores:\n    NodeResourcesFit: {n1: 0}\n"
                          "    LeastRequestedPriority: {n1: 0}"))
    v = check(load_one(p))
    bad = "LeastRequestedPriority" if version == "1.24" else "NodeResourcesFit"
    line = 10 if version == "1.24" else 9
    assert v.message == (f"{p}:{line}: expect.scores.{bad}: plugin {bad!r}: not a score plugin of the default "
                         f"profile of version {version} (its score plugins: {plugins})")


PREEMPTION = """\
apiVersion: kspread/v1
kind: Case
version: "1.24"
profile: {filter: [NodeResourcesFit], postFilter: [DefaultPreemption]}
nodes: [{name: n1, allocatable: {cpu: "1", pods: 10}}]
pods:
- {name: low, namespace: team, node: n1, requests: {cpu: "1"}}
- {name: other, node: n1, requests: {cpu: "0"}}
pod: {name: high, priority: 100, requests: {cpu: "1"}}
expect:
"""


@pytest.mark.parametrize("expect,error", [
    ("  preemption: {node: n1, victims: [team/low]}\n  candidates: {n1: [team/low]}\n", None),
    ("  preemption: {node: n1, victims: [low]}\n", "11: expect.preemption.victims[0]: unknown pod 'low'"),
    ("  candidates: {n2: [team/low]}\n", "11: expect.candidates.n2: unknown node 'n2'"),
    ("  placements: {high: n1}\n",
     ("11: expect.placements: placements are for a `schedule` of incoming pods; this case schedules one `pod` "
      "(compare `selected` or `preemption` instead)")),
    ("  placements: {high: n1}\n", None),
    # the case's own pods may be named (CASE-FORMAT: their node at the end), unknown ones not
    ("  placements: {other: n1}\n", None),
    ("  placements: {ghost: n1}\n", "11: expect.placements.ghost: unknown pod 'ghost'"),
])
def test_pods_in_expect_are_namespaced(tmp_path, expect, error):
    text = PREEMPTION + expect
    if "placements" in expect and (error is None or "not in `schedule`" in error):
        text = text.replace("pod: {name: high", "schedule:\n- {name: high")
        if error is not None:
            error = error.replace("11:", "12:")
    p = tmp_path / "c.yaml"
    p.write_text(text)
    v = check(load_one(p))
    if error is None:
        assert v.passed, v.message
    else:
        assert v.message == f"{p}:{error}"


# ---- syntax errors and broken documents --------------------------------------------------------


def test_syntax_error_names_where_the_construct_opened(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("nodes: [n1, n2]", "nodes: [n1, n2\n  n3: x"))
    assert str(load_one(p).error) == (f"{p}:7: invalid YAML: while parsing a flow sequence that opened at line 6: "
                                      "did not find expected ',' or ']' at line 7")


def test_unclosed_quote_names_where_it_opened(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("name: c", "name: 'c\ndescription: x"))
    assert str(load_one(p).error) == (f"{p}:10: invalid YAML: while scanning a quoted scalar that opened at line 3: "
                                      "found unexpected end of stream at line 10")


def test_broken_document_fails_alone(tmp_path, pytester):
    text = case("first") + "---\n" + case("second").replace("nodes: [n1, n2]", "nodes: [n1, n2") + \
        "---\n" + case("third")
    p = tmp_path / "multi.yaml"
    p.write_text(text)
    res = read_file(p)
    assert [(d.name, d.line, d.error is None) for d in res.docs] == [
        ("first", 1, True), ("multi-2", 10, False), ("third", 19, True)]
    assert str(res.docs[1].error) == (f"{p}:16: invalid YAML: while parsing a flow sequence that opened at line 15: "
                                      "did not find expected ',' or ']' at line 16")
    r = run_cli("run", str(p))
    assert r.returncode == 1
    assert [ln.split(" (")[0] for ln in r.stdout.splitlines() if ln[:4] in ("PASS", "FAIL")] == [
        "PASS first", "FAIL multi-2", "PASS third"]
    pytester.makefile(".yaml", multi=text)
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*multi.yaml::first PASSED*", "*multi.yaml::multi-2 FAILED*",
                                 "*multi.yaml::third PASSED*"])


def test_update_beside_a_broken_document(tmp_path):
    p = tmp_path / "c.yaml"
    broken = case("broken").replace("nodes: [n1, n2]", "nodes: [n1, n2")
    p.write_text(case("fill").replace("expect: {selected: [n1, n2]}", "expect: {}") + "---\n" + broken)
    r = run_cli("run", "--update", str(p))
    assert r.returncode == 1  # the broken document still fails
    # an empty expect gets what answers the case's question: the tied set selected
    assert p.read_text() == case("fill") + "---\n" + broken


def test_a_flow_collection_broken_by_a_document_marker(tmp_path):
    text = "a: 1\n---\nb: [\n---\nc: 3\n"
    docs = read_documents(text, "f.yaml")
    assert [(d.index, d.line, d.data) for d in docs] == [(0, 1, {"a": 1}), (1, 3, None), (2, 5, {"c": 3})]
    assert str(docs[1].error) == ("f.yaml:4: invalid YAML: did not find expected node content at line 4, in the "
                                  "flow sequence that opened at line 3")


def test_tags_that_run_code_are_refused(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case() + "description: !!python/object/apply:os.system ['touch pwned']\n")
    assert str(load_one(p).error) == (f"{p}:9: invalid YAML: could not determine a constructor for the tag "
                                      "'tag:yaml.org,2002:python/object/apply:os.system'")


# ---- no input crashes or hangs -----------------------------------------------------------------


def alias_bomb(levels: int = 9) -> str:
    lines = ["  - &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"  - &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "tags:\n" + "\n".join(lines) + "\n"


def test_alias_bomb_in_tags_is_refused(tmp_path, pytester):
    p = tmp_path / "c.yaml"
    p.write_text(case() + alias_bomb())
    v = check(load_one(p))
    # a1 .. a4 stand for 111, 1111, 11111, 111111 nodes: the aliases of a4 (line 14) pass the budget
    assert v.message == (f"{p}:14: YAML aliases expand this document to more than 1,001,340 nodes (passed at "
                         "an alias of the anchor on line 14); kspread does not expand alias bombs")
    pytester.makefile(".yaml", bomb=case() + alias_bomb())
    result = pytester.runpytest("-q", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*bomb.yaml:14: YAML aliases expand*"])


def test_merge_key_bomb_is_linear():
    lines = ["m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10}"]
    for i in range(1, 30):
        lines.append(f"m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * 10) + "]}")
    data = load_strict("\n".join(lines) + "\n", "m.yaml")[0]
    assert data["m29"] == data["m0"]


def test_moderate_aliases_are_fine(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("nodes: [n1, n2]", "nodes: &nodes [n1, n2]\nzones: {z1: *nodes}"))
    assert check(load_one(p)).passed


def test_recursive_alias_is_refused(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(case() + "tags: &t [a, *t]\n")
    assert check(load_one(p)).message == (f"{p}:9: a YAML alias refers to the collection that contains it (anchor "
                                          "at line 9): the data would be infinite")


@pytest.mark.parametrize("nesting", ["[" * 100_000 + "]" * 100_000, "[ " * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
                                     "\n" + "".join("  " * i + "- \n" for i in range(MAX_DEPTH + 5))])
def test_deep_nesting_is_an_error_not_a_crash(tmp_path, nesting):
    p = tmp_path / "c.yaml"
    p.write_text(case() + "description: " + nesting + "\n---\n" + case("next"))
    res = read_file(p)
    assert [d.name for d in res.docs] == ["c-1", "next"]
    err = str(res.docs[0].error)
    assert err.startswith(f"{p}:") and err.endswith(f"invalid YAML: the data nests more than {MAX_DEPTH} levels deep")
    assert check(res.docs[1]).passed


@pytest.mark.parametrize("source", ["x", 'a "quoted" ] text'])
def test_deep_json_is_an_error_not_a_crash(tmp_path, source):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"apiVersion": "kspread/v1", "kind": "Case", "source": source})[:-1] +
                 ',\n"description": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert str(read_file(p).error) == f"{p}:2: invalid JSON: the data nests more than {MAX_DEPTH} levels deep"


def test_nesting_within_the_bound_reads(tmp_path):
    depth = MAX_DEPTH - 10
    p = tmp_path / "c.yaml"
    p.write_text(case().replace("name: c", "name: c\nsource: x") + "description: " + "[" * depth + "]" * depth + "\n")
    assert check(load_one(p)).message == f"{p}:10: description: must be a string (got {'[' * 77}...)"


@pytest.mark.parametrize("body", [
    "expect: [selected]\n", "expect: {selected: n1}\nname: 5\n", "tags: {a: b}\nexpect: {selected: n1}\n",
    "variants: [a]\nexpect: {selected: n1}\n", "variants: {v: 1}\nexpect: {selected: n1}\n",
    "expect: {error: 5}\n", "expect: null\n",
])
def test_odd_shapes_before_validation_are_errors(tmp_path, pytester, body):
    text = "apiVersion: kspread/v1\nkind: Case\nnodes: [n1]\npod: {name: p}\n" + body
    pytester.makefile(".yaml", odd=text)
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=1)
    assert "Traceback" not in result.stdout.str()
    p = tmp_path / "odd.yaml"
    p.write_text(text)
    for cmd in ("run", "validate"):
        r = run_cli(cmd, str(p))
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    r = run_cli("diff", "--base", str(p), "--head", str(p), str(p))
    assert "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("extra,msg", [
    ("nodes: [n3]\n", "duplicate key 'nodes' (lines 6 and 10)"),
    ("tags: {1: a}\n", "tags: mapping key '1' is not a string: quote it"),
    ("tags: [&a x, *a]\n", None),
])
@pytest.mark.parametrize("fast", [True, False])
def test_large_files_read_the_same(tmp_path, monkeypatch, extra, msg, fast):
    # past loader.FAST_YAML_THRESHOLD, where yaml-rs reads the file when it is installed
    if not fast:
        monkeypatch.setattr("kspread.format.loader.yaml_rs", None)
    p = tmp_path / "c.yaml"
    p.write_text(case() + "description: " + "x" * (1 << 20) + "\n" + extra)
    v = check(load_one(p))
    if msg is None:
        assert v.passed, v.message
    else:
        assert v.message == f"{p}:10: {msg}"


# ---- text that is not text --------------------------------------------------------------

SURROGATE_CASE = ('{"apiVersion": "kspread/v1", "kind": "Case", "name": "\\ud800",\n'
                  ' "nodes": ["n1"], "pod": {"name": "p", "labels": {"a": "\\ud83d\\ude00"}},\n'
                  ' "expect": {"selected": "n1"}}\n')
SURROGATE_ERROR = ("{}:1: name: invalid text: a lone surrogate escape (\\ud800 to \\udfff, not a UTF-16 pair) is not a "
                   "character")


def test_a_lone_surrogate_is_invalid_text_in_the_cli(tmp_path):
    # a subprocess: its standard streams are strict UTF-8, as a CI log's
    import os
    import subprocess
    import sys

    p = tmp_path / "s.json"
    p.write_text(SURROGATE_CASE, encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    r = subprocess.run([sys.executable, "-m", "kspread", "run", "-q", str(p)], capture_output=True, text=True,
                       env=env)
    assert (r.returncode, r.stderr) == (1, "")
    assert r.stdout == f"FAIL s ({p}:1)\n  {SURROGATE_ERROR.format(p)}\n0 passed, 1 failed\n"
    p.write_text(SURROGATE_CASE.replace('"\\ud800"', '"\\udc00x"').replace('"name": "p"', '"name": "\\ud83d"'))
    r = subprocess.run([sys.executable, "-m", "kspread", "validate", str(p)], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 1
    assert r.stdout.splitlines()[0] == SURROGATE_ERROR.format(p)


def test_a_lone_surrogate_is_invalid_text_in_pytest(pytester):
    (pytester.path / "s.json").write_text(SURROGATE_CASE, encoding="utf-8")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([SURROGATE_ERROR.format(pytester.path / "s.json"), "FAILED s.json::s - *"])


def test_a_valid_escaped_pair_is_a_character(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(SURROGATE_CASE.replace('"\\ud800"', '"ok", "description": "\\ud83d\\ude00"')
                 .replace('"a": "\\ud83d\\ude00"', '"a": "b"'), encoding="utf-8")
    assert check(load_one(p)).passed
