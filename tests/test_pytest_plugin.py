"""The pytest plugin end to end, through pytest itself (pytester)."""

from __future__ import annotations

CASES = """\
apiVersion: kspread/v1
kind: Case
name: right
tags: [smoke, seed-000]
version: "1.24"
profile: {score: [SelectorSpread]}
nodes: [n1, n2]
owners:
- {kind: Service, name: s1, selector: {app: web}}
pods:
- {name: a, node: n1, labels: {app: web}}
pod: {name: new, labels: {app: web}}
expect:
  scores:
    SelectorSpread: {n1: 0, n2: 100}
  selected: n2
---
apiVersion: kspread/v1
kind: Case
name: wrong
tags: [regression]
version: "1.24"
profile: {score: [SelectorSpread]}
nodes: [n1, n2]
owners:
- {kind: Service, name: s1, selector: {app: web}}
pods:
- {name: a, node: n1, labels: {app: web}}
pod: {name: new, labels: {app: web}}
expect:
  scores:
    SelectorSpread: {n1: 100, n2: 0}
  selected: n1
---
apiVersion: v1
kind: ConfigMap
metadata: {name: not-a-case}
"""


def test_collects_one_item_per_case(pytester):
    pytester.makefile(".yaml", cases=CASES)
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["cases.yaml::right", "cases.yaml::wrong"])
    assert "not-a-case" not in result.stdout.str()


def test_wrong_expectation_shows_a_table_without_traceback(pytester):
    pytester.makefile(".yaml", cases=CASES)
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*cases.yaml:18: case 'wrong' (version 1.24)*",
        "scores:",
        "  plugin node        expected  actual",
        "  SelectorSpread n1  100       0",
        "  SelectorSpread n2  0         100",
        "selected:",
        "  expected  actual",
        "  n1        n2",
        "in all: *values changed*",
    ])
    assert "Traceback" not in out
    assert "kspread/workflow/runner.py" not in out


def test_keyword_and_marker_selection(pytester):
    pytester.makefile(".yaml", cases=CASES)
    result = pytester.runpytest("-q", "-k", "right")
    result.assert_outcomes(passed=1, deselected=1)
    result = pytester.runpytest("-q", "-m", "smoke", "-W", "error::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=1, deselected=1)
    result = pytester.runpytest("-q", "-m", "regression")
    result.assert_outcomes(failed=1, deselected=1)


def test_broken_file_is_one_failing_item(pytester):
    pytester.makefile(".yaml", broken="apiVersion: kspread/v1\nkind: Case\nnodes: [n1\n")
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*broken.yaml:*: invalid YAML*"])


def test_default_names_and_reportinfo(pytester):
    doc = "apiVersion: kspread/v1\nkind: Case\nversion: '1.24'\nprofile: {}\nnodes: [n1]\npod: {name: p}\n" \
          "expect: {selected: n1}\n"
    pytester.makefile(".yaml", multi=doc + "---\n" + doc)
    result = pytester.runpytest("-v")
    result.stdout.fnmatch_lines(["*multi.yaml::multi-1 PASSED*", "*multi.yaml::multi-2 PASSED*"])
    items, _ = pytester.inline_genitems()
    assert [i.reportinfo()[1] for i in items] == [0, 8]


def test_failure_report_explains_the_differing_nodes(pytester):
    pytester.makefile(".yaml", cases=CASES)
    result = pytester.runpytest("-q", "-k", "wrong")
    # short, the default: one row per node, the selected node marked
    result.stdout.fnmatch_lines([
        "in all: 3 values changed",
        "",
        "explain (nodes that differ):",
        "   node  SelectorSpread  total",
        "   n1                 0      0",
        "*  n2               100    100",
        "(* selected)",
        "selected: n2",
        "=*=",
    ])
    # the reason before the path: in the report's first line, which pytest's short summary shows
    result.stdout.fnmatch_lines(["scores SelectorSpread n1: expected 100, actual 0 (and 2 more differences) (cases.yaml:18)",
                                 "*cases.yaml:18: case 'wrong'*"])
    result.stdout.fnmatch_lines(["FAILED cases.yaml::wrong - scores SelectorSpread n1: expected 100, actual 0 *"])
    result = pytester.runpytest("-q", "-k", "wrong", "--kspread-explain=none")
    result.stdout.fnmatch_lines(["in all: 3 values changed", "=*="])
    assert "explain (" not in result.stdout.str()
    result = pytester.runpytest("-q", "-k", "wrong", "--kspread-explain=full")
    result.stdout.fnmatch_lines([
        "explain (nodes that differ):",
        "n1: feasible",
        "  score  SelectorSpread * raw 1      normalized 0     x1 = 0",
        "  total  0",
        "n2: feasible",
        "  score  SelectorSpread * raw 0      normalized 100   x1 = 100",
    ])


_HEAVY = ("numpy", "jsonschema", "deepdiff", "rich", "yaml", "kspread.format.loader", "kspread.engine.scheduler",
          "kspread.workflow.runner")
_SHOW_MODULES = f"""
import sys

def test_modules():
    print("PLUGIN", "kspread.workflow.pytest_plugin" in sys.modules)
    print("HEAVY", sorted(m for m in {_HEAVY!r} if m in sys.modules))
"""


def test_a_run_that_meets_no_case_imports_nothing_heavy(pytester):
    """The plugin loads in every pytest run of the environment: the loader, the engine
    and their libraries are imported only at the first case file."""
    pytester.makepyfile(test_modules=_SHOW_MODULES)
    pytester.makefile(".yaml", other="apiVersion: v1\nkind: ConfigMap\n")  # YAML, not a case
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*PLUGIN True", "HEAVY []"])


def test_the_first_case_file_imports_the_loader_and_the_engine(pytester):
    pytester.makepyfile(test_modules=_SHOW_MODULES)
    pytester.makefile(".yaml", cases=CASES)
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    # rich draws the failure report's explain table
    heavy = ["deepdiff", "jsonschema", "kspread.engine.scheduler", "kspread.format.loader", "kspread.workflow.runner",
             "numpy", "rich", "yaml"]
    result.stdout.fnmatch_lines([f"HEAVY {heavy!r}"])


def test_tested_trees_and_markers_are_read_once_per_session(pytester, monkeypatch):
    """Per session, not per case file: a corpus of many files pays them once."""
    import sys

    from kspread.format import files

    calls = {"trees": 0, "markers": 0}
    real_trees = files.tested_trees

    def trees(*a, **kw):
        calls["trees"] += 1
        return real_trees(*a, **kw)

    monkeypatch.setattr(files, "tested_trees", trees)

    class CountMarkers:
        def pytest_configure(self, config):
            real = config.getini

            def getini(name):  # the plugin's reads, not pytest's own
                calls["markers"] += sys._getframe(1).f_globals["__name__"] == "kspread.workflow.pytest_plugin"
                return real(name)

            monkeypatch.setattr(config, "getini", getini)

    for i in range(3):
        pytester.makefile(".yaml", **{f"c{i}": CASES.replace("name: right", f"name: right{i}")})
    result = pytester.runpytest("-q", "-m", "smoke", plugins=[CountMarkers()])
    result.assert_outcomes(passed=3, deselected=3)
    # the registered markers: read when smoke, seed-000 and regression are each first met
    assert calls == {"trees": 1, "markers": 3}


def test_collection_reads_a_case_file_once_and_shares_a_tags_mark(pytester, monkeypatch):
    """Per case file and per item, the least: the bytes read to tell a case file are the
    ones parsed (not read again), and the items of one tag share its one mark."""
    import os

    from kspread.format import files
    from kspread.workflow import pytest_plugin

    reads: list[str] = []
    real_read = files.read_regular

    def read_regular(path):
        reads.append(os.path.basename(path))
        return real_read(path)

    monkeypatch.setattr(files, "read_regular", read_regular)
    monkeypatch.setattr(pytest_plugin, "read_regular", read_regular)
    marks: dict[str, set[int]] = {}

    class Marks:
        def pytest_collection_finish(self, session):
            for item in session.items:
                for m in item.iter_markers():
                    marks.setdefault(m.name, set()).add(id(m))

    for i in range(3):
        pytester.makefile(".yaml", **{f"c{i}": CASES.replace("name: right", f"name: right{i}")
                                      .replace("name: wrong", f"name: wrong{i}")})
    result = pytester.runpytest("--collect-only", "-q", plugins=[Marks()])
    result.stdout.fnmatch_lines(["6 tests collected*"])
    assert sorted(reads) == ["c0.yaml", "c1.yaml", "c2.yaml"]
    assert {name: len(ids) for name, ids in marks.items()} == {"smoke": 1, "seed-000": 1, "regression": 1}


def test_an_item_lets_its_document_go_once_run_and_reads_it_again_to_rerun(pytester):
    """A corpus's items live to the session's end: once run, an item keeps its case's name
    and line, not its parsed document (every pass of the garbage collector would walk
    them); run again (a plugin that reruns items), it reads its file again."""
    import pytest

    from kspread.workflow.pytest_plugin import CaseFailure

    path = pytester.makefile(".yaml", cases=CASES)
    items, _ = pytester.inline_genitems(str(path))
    right, wrong = items
    right.runtest()
    assert right.doc is None and wrong.doc is not None
    assert right.reportinfo()[1:] == (0, "kspread case right")
    right.runtest()  # read again: passes again
    path.write_text(CASES.replace("SelectorSpread: {n1: 0, n2: 100}", "SelectorSpread: {n1: 0, n2: 99}"))
    with pytest.raises(CaseFailure) as e:
        right.runtest()
    assert str(e.value).startswith("scores SelectorSpread n2: expected 99, actual 100 (cases.yaml:1)\n")
    path.write_text(CASES.replace("name: right", "name: renamed"))
    with pytest.raises(CaseFailure) as e:
        right.runtest()
    assert str(e.value) == (f"{path}:1: the case 'right' is no longer in the file (it was collected from it; run "
                            "pytest again)")


def test_a_failure_does_not_hold_its_run_alive(pytester):
    # pytest keeps the last failure's traceback to the end of the session: had its frames
    # held the verdict, every pod of a big case would stay alive, each gc pass walking them
    pytester.makeconftest("""
        import sys

        def pytest_sessionfinish(session):
            tb, held = sys.last_traceback, []
            while tb is not None:
                held += [k for k, v in tb.tb_frame.f_locals.items() if type(v).__name__ in ("Verdict", "Outcome")]
                tb = tb.tb_next
            print("held by the traceback:", held)
        """)
    pytester.makefile(".yaml", cases=CASES)
    result = pytester.runpytest_subprocess("-q", "-s", "-k", "wrong")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["*held by the traceback: []"])


def test_explain_command(tmp_path):
    import subprocess
    import sys

    p = tmp_path / "c.yaml"
    p.write_text(CASES)
    r = subprocess.run([sys.executable, "-m", "kspread", "explain", str(p), "--case", "right"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[1:] == [
        "     node  SelectorSpread  total", "  *  n2               100    100", "     n1                 0      0",
        "  (* selected)", "  selected: n2", "", ""]
    r = subprocess.run([sys.executable, "-m", "kspread", "explain", str(p), "--case", "right", "-v"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "  n2: feasible\n    score  SelectorSpread" in r.stdout
    assert "    total  100\n  selected: n2" in r.stdout
    r = subprocess.run([sys.executable, "-m", "kspread", "explain", str(p), "--case", "nope"],
                       capture_output=True, text=True)
    assert r.returncode == 4 and "no case named 'nope'" in r.stderr


def test_short_summary_puts_the_reason_before_the_path(pytester, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    pytester.makefile(".yaml", cases=CASES)
    pytester.makefile(".yaml", broken="apiVersion: kspread/v1\nkind: Case\nname: broken\nnodes: [n1]\n"
                                      "pod: {name: p, bogus: 1}\nexpect: {feasible: [n1]}\n")
    result = pytester.runpytest("-q", "-rf")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "\nFAILED broken.yaml::broken - pod.bogus: unknown field 'bogus' (allowed: affinity, " in out
    assert ("\nFAILED cases.yaml::wrong - scores SelectorSpread n1: expected 100, actual 0 (and 2 more "
            "differences) (cases.yaml:18)\n") in out
