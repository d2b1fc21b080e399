"""Golden update never loses work: pytest-xdist, file formats, anchors, comments,
symlinks, and updates that cannot fix a case."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kspread.workflow.update import Update, UpdateError, apply_all, apply_file, check_update, plan

SPREAD = """\
apiVersion: kspread/v1
kind: Case
name: {name}
version: "1.24"
profile: {{score: [SelectorSpread]}}
nodes: [n1, n2]
owners:
- {{kind: Service, name: s1, selector: {{app: web}}}}
pods:
- {{name: a, node: n1, labels: {{app: web}}}}
pod: {{name: new, labels: {{app: web}}}}
expect:
  scores:
    SelectorSpread: {{n1: 100, n2: 0}}   # guessed {name}
  selected: n1   # wrong for {name}
"""

FIXED = """\
expect:
  scores:
    SelectorSpread: {{n1: 0, n2: 100}}   # guessed {name}
  selected: n2   # wrong for {name}
"""


def _write(pytester, name: str, text: str):
    p = pytester.path / name
    p.write_text(text)
    return p


def _twelve() -> str:
    return "---\n".join(SPREAD.format(name=f"c{i:02d}") for i in range(12))


def test_xdist_update_rewrites_every_failing_case_once(pytester):
    p = _write(pytester, "many.yaml", _twelve())
    result = pytester.runpytest_subprocess("-n", "4", "--kspread-update")
    result.assert_outcomes(passed=12)
    assert result.ret == 0
    # the workers' updates reach the controller, which writes the file once and lists them all
    result.stdout.fnmatch_lines(["*kspread: updated 12 case(s):*"])
    for i in range(12):
        result.stdout.fnmatch_lines([f"*many.yaml: c{i:02d}: expect.selected: n1 -> n2"])
    text = p.read_text()
    assert text == "---\n".join(SPREAD.format(name=f"c{i:02d}").split("expect:\n")[0] + FIXED.format(name=f"c{i:02d}")
                                for i in range(12))
    pytester.runpytest().assert_outcomes(passed=12)
    assert [x for x in os.listdir(p.parent) if x.startswith(".kspread-")] == []


CASE = {"apiVersion": "kspread/v1", "kind": "Case", "name": "j", "version": "1.24",
        "profile": {"score": ["SelectorSpread"]}, "nodes": ["n1", "n2"],
        "owners": [{"kind": "Service", "name": "s1", "selector": {"app": "web"}}],
        "pods": [{"name": "a", "node": "n1", "labels": {"app": "web"}}],
        "pod": {"name": "new", "labels": {"app": "web"}},
        "expect": {"scores": {"SelectorSpread": {"n1": 100, "n2": 0}}, "selected": "n1"}}
RIGHT = {"scores": {"SelectorSpread": {"n1": 0, "n2": 100}}, "selected": "n2"}


def test_update_keeps_json_json_and_crlf_crlf(pytester):
    # a JSON file with one case, a JSON list of cases (one to fill, one passing), JSON
    # on one line, and a YAML file with CRLF line endings
    single = json.dumps(CASE, indent=2) + "\n"
    cases = [dict(CASE, name="first"), dict(CASE, name="fresh", expect={}), dict(CASE, name="right", expect=RIGHT)]
    many = json.dumps(cases, indent=4) + "\n"
    crlf = SPREAD.format(name="w").replace("\n", "\r\n")
    _write(pytester, "single.json", single)
    _write(pytester, "many.json", many)
    _write(pytester, "mini.json", json.dumps(dict(CASE, name="mini")))
    (pytester.path / "crlf.yaml").write_bytes(crlf.encode())
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*kspread: updated 5 case(s):*"])

    new = (pytester.path / "single.json").read_text()
    assert json.loads(new) == dict(CASE, expect=RIGHT)
    # only the changed values moved: the same lines, in the same layout
    assert new == single.replace('"n1": 100,\n        "n2": 0', '"n1": 0,\n        "n2": 100').replace(
        '"selected": "n1"', '"selected": "n2"')

    new = (pytester.path / "many.json").read_text()
    data = json.loads(new)
    assert data[0] == dict(CASE, name="first", expect=RIGHT)
    assert data[1]["expect"] == {"selected": "n2"}  # an empty expect gets what answers the case's question
    assert data[2] == cases[2]
    assert '        "expect": {\n            "selected": "n2"\n' in new  # the file's own indentation

    assert (pytester.path / "mini.json").read_text() == json.dumps(dict(CASE, name="mini", expect=RIGHT))

    want = (SPREAD.format(name="w").split("expect:\n")[0] + FIXED.format(name="w")).replace("\n", "\r\n")
    assert (pytester.path / "crlf.yaml").read_bytes() == want.encode()

    pytester.runpytest().assert_outcomes(passed=6)


def test_update_keeps_a_byte_order_mark(pytester):
    # kspread reads past a UTF-8 byte order mark (what some Windows editors write), in
    # YAML and JSON: an update rewrites such a file and keeps the mark
    bom = "\ufeff"
    single = json.dumps(dict(CASE, name="j"), indent=2) + "\n"
    (pytester.path / "j.json").write_bytes((bom + single).encode())
    (pytester.path / "w.yaml").write_bytes((bom + SPREAD.format(name="w")).encode())
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*kspread: updated 2 case(s):*"])
    new = (pytester.path / "j.json").read_bytes().decode()
    assert new.startswith(bom) and json.loads(new[1:]) == dict(CASE, name="j", expect=RIGHT)
    want = SPREAD.format(name="w").split("expect:\n")[0] + FIXED.format(name="w")
    assert (pytester.path / "w.yaml").read_bytes() == (bom + want).encode()
    pytester.runpytest().assert_outcomes(passed=2)


def test_symlink_stays_a_symlink_and_its_target_is_updated(pytester):
    real = pytester.mkdir("real")
    target = real / "case.yaml"
    target.write_text(SPREAD.format(name="w"))
    os.chmod(target, 0o640)
    link = pytester.path / "cases" / "link.yaml"
    link.parent.mkdir()
    link.symlink_to(target)
    result = pytester.runpytest("cases", "--kspread-update")
    result.assert_outcomes(passed=1)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == SPREAD.format(name="w").split("expect:\n")[0] + FIXED.format(name="w")
    assert os.stat(target).st_mode & 0o777 == 0o640
    assert [x.name for x in real.iterdir()] == ["case.yaml"]  # no temporary file left


def test_the_same_file_collected_through_a_symlink_is_written_once(pytester):
    target = pytester.path / "case.yaml"
    target.write_text(SPREAD.format(name="w"))
    (pytester.path / "link.yaml").symlink_to(target)
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(passed=2)
    assert result.ret == 0
    assert target.read_text().endswith(FIXED.format(name="w"))


ANCHORS = """\
apiVersion: kspread/v1
kind: Case
name: base
version: "1.24"
profile: {score: [SelectorSpread]}
nodes: &nodes [n1, n2]
pod: {name: new}
expect:
  feasible: *nodes   # an alias into the cluster
  totals: &tot {n1: 500, n2: 500}   # wrong for the base
  selected: &sel [n1, n2]
variants:
  heavy:
    profile: {score: [{name: SelectorSpread, weight: 5}]}
    expect:
      totals: *tot
      selected: *sel
  again:
    profile: {score: [{name: SelectorSpread, weight: 5}]}
    expect: {totals: *tot}
"""


def test_anchors_used_elsewhere_survive_and_keep_their_values(pytester):
    p = _write(pytester, "anchors.yaml", ANCHORS)
    # the same base, its whole expect anchored and aliased by a variant that passes
    shared = ANCHORS.split("variants:")[0].replace("expect:\n", "expect: &e\n").replace("name: base", "name: sh") + \
        "variants:\n  heavy:\n    profile: {score: [{name: SelectorSpread, weight: 5}]}\n    expect: *e\n"
    q = _write(pytester, "shared.yaml", shared)
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*kspread: updated 2 case(s):*",
                                 "*: base: expect.totals.n1: 500 -> 100", "*: base: expect.totals.n2: 500 -> 100",
                                 "*: sh: expect.totals.n1: 500 -> 100", "*: sh: expect.totals.n2: 500 -> 100"])
    # the base's totals change; the variants, which passed, keep the value they
    # aliased: the first alias now carries the anchor
    assert p.read_text() == ANCHORS.replace(
        "totals: &tot {n1: 500, n2: 500}   # wrong", "totals: {n1: 100, n2: 100}   # wrong").replace(
        "      totals: *tot\n", "      totals: &tot {n1: 500, n2: 500}\n")
    assert q.read_text() == shared.replace("expect: &e\n", "expect:\n").replace(
        "totals: &tot {n1: 500, n2: 500}", "totals: &tot {n1: 100, n2: 100}").replace(
        "    expect: *e\n",
        "    expect: &e {feasible: [n1, n2], totals: {n1: 500, n2: 500}, selected: [n1, n2]}\n")
    pytester.runpytest().assert_outcomes(passed=5)


def test_end_of_line_comments_nulls_and_yaml_in_reports(pytester):
    text = """\
apiVersion: kspread/v1
kind: Case
name: nulls
version: "1.24"
profile: {filter: [NodeResourcesFit], postFilter: [DefaultPreemption]}
nodes: [{name: n1, allocatable: {cpu: "1", pods: 10}}]
pods:
- {name: a, node: n1, requests: {cpu: "1"}, priority: 10}
pod: {name: new, requests: {cpu: "1"}, priority: 1}
expect:
  selected: n1              # was a guess
  unschedulable: false      # so was this
  preemption: {node: n1, victims: [a]}   # and this
"""
    p = _write(pytester, "nulls.yaml", text)
    shown = pytester.runpytest()
    shown.stdout.fnmatch_lines(["unschedulable:", "  expected  actual", "  false     true", "preemption:", "  expected                  actual", "  {node: n1, victims: [[]a]}  null"])
    assert "True" not in shown.stdout.str() and "None" not in shown.stdout.str()
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*nulls: expect.selected: n1 -> null",
                                 "*nulls: expect.unschedulable: false -> true",
                                 "*nulls: expect.preemption: {node: n1, victims: [[]a]} -> null"])
    assert p.read_text().endswith("expect:\n"
                                  "  selected: null              # was a guess\n"
                                  "  unschedulable: true      # so was this\n"
                                  "  preemption: null   # and this\n")
    pytester.runpytest().assert_outcomes(passed=1)


def test_an_empty_expect_is_filled_in_block_style(pytester):
    p = _write(pytester, "fresh.yaml", SPREAD.format(name="f").split("expect:\n")[0] + "expect: {}   # todo\n")
    pytester.runpytest("--kspread-update", "--kspread-update-keys", "scores,totals,selected").assert_outcomes(passed=1)
    assert p.read_text().endswith("expect:   # todo\n  scores:\n    SelectorSpread: {n1: 0, n2: 100}\n"
                                  "  totals: {n1: 0, n2: 100}\n  selected: n2\n")
    pytester.runpytest().assert_outcomes(passed=1)


def test_an_empty_expect_gets_the_answer_to_the_cases_question(pytester):
    """One pod: where it goes (one key, not every plugin's scores of every node)."""
    p = _write(pytester, "fresh.yaml", SPREAD.format(name="f").split("expect:\n")[0] + "expect: {}   # todo\n")
    pytester.runpytest("--kspread-update").assert_outcomes(passed=1)
    assert p.read_text().endswith("expect: {selected: n2}   # todo\n")
    pytester.runpytest().assert_outcomes(passed=1)


VARIANT_FAILS = """\
apiVersion: kspread/v1
kind: Case
name: sweep
version: "1.24"
profile: {score: [SelectorSpread]}
nodes: [n1, n2]
owners:
- {kind: Service, name: s1, selector: {app: web}}
pods:
- {name: a, node: n1, labels: {app: web}}
pod: {name: new, labels: {app: web}}
expect:
  scores: {SelectorSpread: {n1: 0, n2: 100}}
variants:
  legacy:
    version: "1.16"
"""


def test_a_variant_the_update_cannot_fix_fails_the_run(pytester):
    p = _write(pytester, "sweep.yaml", VARIANT_FAILS)
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines([("*--kspread-update could not fix this case: variant 'legacy' has no expect of its "
                                  "own (it inherits the case's); give it one (variants.legacy.expect)*")])
    assert p.read_text() == VARIANT_FAILS


def test_cli_update_fails_a_case_it_cannot_fix(tmp_path):
    p = tmp_path / "sweep.yaml"
    p.write_text(VARIANT_FAILS)
    r = subprocess.run([sys.executable, "-m", "kspread", "run", "--update", str(p)], capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "PASS sweep (" in r.stdout and "FAIL sweep[legacy] (" in r.stdout
    assert "--update could not fix this case: variant 'legacy' has no expect of its own" in r.stdout
    assert p.read_text() == VARIANT_FAILS


def test_an_expectation_no_run_can_meet_is_not_written(pytester):
    # preemption is expected, but the profile has no PostFilter: writing what the run
    # produced cannot make the case pass; the case is refused when it loads, and the
    # update leaves the file alone
    text = SPREAD.format(name="nopf").replace("  selected: n1   # wrong for nopf\n",
                                              "  preemption: {node: n1, victims: [a]}\n")
    p = _write(pytester, "nopf.yaml", text)
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([("*nopf.yaml:*: expect.preemption: preemption never runs: the profile has no "
                                  "PostFilter plugin (list DefaultPreemption under postFilter)")])
    assert p.read_text() == text


def test_a_case_that_fails_to_load_is_never_written(pytester):
    text = SPREAD.format(name="ok") + "---\n" + SPREAD.format(name="bad").replace("node: n1,", "node: n9,")
    p = _write(pytester, "two.yaml", text)
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*two.yaml:26: pods[[]0].node: pod is bound to unknown node 'n9'*"])
    new = p.read_text()
    assert new.split("---\n")[1] == text.split("---\n")[1]
    assert new.split("---\n")[0].endswith(FIXED.format(name="ok"))


def test_cli_duplicate_names_fail_as_in_pytest(pytester):
    text = SPREAD.format(name="same") + "---\n" + SPREAD.format(name="same")
    p = _write(pytester, "dup.yaml", text)
    msg = f"{p}:19: name: case name 'same' is used twice in this file"
    result = pytester.runpytest()
    result.stdout.fnmatch_lines([msg])
    for cmd in (["run"], ["run", "--update"], ["validate"]):
        r = subprocess.run([sys.executable, "-m", "kspread", *cmd, str(p)], capture_output=True, text=True)
        assert r.returncode == 1, (cmd, r.stdout, r.stderr)
        assert msg in r.stdout, (cmd, r.stdout)
    # --update fixed the first case and left the second (the duplicate) alone
    assert p.read_text().split("---\n")[1] == SPREAD.format(name="same")


# ---------------------------------------------------------------- the library


def _update(path, new_expect, old=None) -> Update:
    return Update(str(path), 0, None, "w", dict(new_expect), False, old or {}, dict(new_expect))


def test_a_case_run_twice_is_written_once(tmp_path):
    # pytest-xdist --dist each runs every case on every worker
    p = tmp_path / "c.yaml"
    p.write_text(SPREAD.format(name="w"))
    u1, u2 = check_update(_update(p, RIGHT)), check_update(_update(p, RIGHT))
    res = apply_all([u1, u2])
    assert res.updated == [u1] and res.failed == []
    assert p.read_text().endswith(FIXED.format(name="w"))
    p.write_text(SPREAD.format(name="w"))
    other = check_update(_update(p, dict(RIGHT, selected=["n1", "n2"])))
    res = apply_all([check_update(_update(p, RIGHT)), other])
    assert res.updated == [] and {why for _, why in res.failed} == {("the case ran twice with different results; "
                                                                     "not updated")}
    assert p.read_text() == SPREAD.format(name="w")


def test_a_file_changed_during_the_run_is_not_written(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(SPREAD.format(name="w"))
    u = check_update(_update(p, RIGHT))
    edited = SPREAD.format(name="w").replace("version:", "description: edited meanwhile\nversion:")
    p.write_text(edited)
    res = apply_file(str(p), [u])
    assert res.updated == [] and [why for _, why in res.failed] == [
        "the file changed during the run; not updated (run the update again)"]
    assert p.read_text() == edited


def test_a_rewrite_that_would_not_read_back_is_refused(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(SPREAD.format(name="w"))
    with pytest.raises(UpdateError, match="would not hold the old cases with only the updated expect replaced"):
        plan(str(p), p.read_text(), [_update(p, {"selected": float("nan")})])
    with pytest.raises(UpdateError, match="no variant 'nope' in the file"):
        plan(str(p), p.read_text(), [Update(str(p), 0, "nope", "w", {}, False, {}, RIGHT)])


def test_an_update_that_cannot_be_written_at_the_end_fails_the_run(pytester):
    # the user edits the case while the run is going on: that edit is kept, the update
    # (results of the case as it was) is not written, and the run says so and fails
    p = _write(pytester, "c.yaml", SPREAD.format(name="w"))
    pytester.makeconftest("""
        from pathlib import Path

        def pytest_runtest_teardown(item):
            p = Path(str(item.path))
            p.write_text(p.read_text().replace("nodes: [n1, n2]", "nodes: [n1, n2, n3]"))
    """)
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(passed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*kspread: could not update 1 case(s); the run fails:*",
                                 "*c.yaml: w: the file changed during the run; not updated (run the update again)"])
    assert p.read_text() == SPREAD.format(name="w").replace("nodes: [n1, n2]", "nodes: [n1, n2, n3]")


def test_an_edit_elsewhere_during_the_run_is_kept_and_the_update_written(pytester):
    # a comment added, and another case's expect changed, while the run goes on: the
    # case that ran reads as it did, so its update is planned again on the new text
    other = SPREAD.format(name="other").replace("selected: n1", "selected: n2")
    p = _write(pytester, "c.yaml", SPREAD.format(name="w") + "---\n" + other)
    pytester.makeconftest("""
        from pathlib import Path

        def pytest_runtest_teardown(item):
            if item.name == "w":
                p = Path(str(item.path))
                p.write_text("# edited during the run\\n" + p.read_text().replace(
                    "selected: n2   # wrong for other", "selected: [n2]   # edited"))
    """)
    result = pytester.runpytest("--kspread-update", "-k", "w")
    result.assert_outcomes(passed=1, deselected=1)
    assert result.ret == 0
    fixed = SPREAD.format(name="w").split("expect:\n")[0] + FIXED.format(name="w")
    assert p.read_text() == ("# edited during the run\n" + fixed + "---\n"
                             + other.replace("selected: n2   # wrong for other", "selected: [n2]   # edited"))


def test_an_update_session_in_which_no_case_ran_fails(pytester):
    # --kspread-update over paths that hold no case (a typo'd selection, the wrong
    # directory) updates nothing: that is not a pass
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(passed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*- kspread --kspread-update -*",
                                 "kspread: no case ran; --kspread-update updated nothing"])
    # every case ran and passed: nothing to update, and the run passes
    _write(pytester, "c.yaml", SPREAD.format(name="w").split("expect:\n")[0] + FIXED.format(name="w"))
    result = pytester.runpytest("--kspread-update")
    result.assert_outcomes(passed=2)
    assert result.ret == 0 and "no case ran" not in result.stdout.str()
    # a case that ran under an xdist worker counts on the controller
    result = pytester.runpytest_subprocess("--kspread-update", "-n", "2", "c.yaml")
    result.assert_outcomes(passed=1)
    assert result.ret == 0 and "no case ran" not in result.stdout.str()


def test_update_of_a_file_read_by_yaml_rs_keeps_yaml_1_1_strings(tmp_path):
    # past loader.FAST_YAML_THRESHOLD the rewritten document is checked with yaml-rs, with the
    # loader's YAML 1.1 checks: a node named 1e3 (a string to 1.1, a number to yaml-rs alone)
    # is written plain and reads back as the name
    from kspread.format import loader

    pytest.importorskip("yaml_rs")
    text = SPREAD.format(name="w").replace("n2", "1e3").replace(
        "version:", "description: " + "x" * loader.FAST_YAML_THRESHOLD + "\nversion:")
    p = tmp_path / "c.yaml"
    p.write_text(text)
    r = subprocess.run([sys.executable, "-m", "kspread", "run", "--update", str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert p.read_text().endswith("expect:\n  scores:\n    SelectorSpread: {n1: 0, 1e3: 100}   # guessed w\n"
                                  "  selected: 1e3   # wrong for w\n")
    [doc] = loader.read_file(p).docs
    assert doc.data["expect"] == {"scores": {"SelectorSpread": {"n1": 0, "1e3": 100}}, "selected": "1e3"}
