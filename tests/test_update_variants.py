"""Golden update (--kspread-update, kspread run --update) and variants."""

from __future__ import annotations

import subprocess
import sys

CASES = """\
# top comment
apiVersion: kspread/v1
kind: Case
name: "wrong"   # quoted on purpose
version: "1.24"
profile: {score: [SelectorSpread]}
nodes: [n1, n2]
owners:
- {kind: Service, name: s1, selector: {app: web}}
pods:
- {name: a, node: n1, labels: {app: web}}
pod: {name: new, labels: {app: web}}
expect:
  # my guess
  scores:
    SelectorSpread: {n1: 100}
  selected: n1
---
apiVersion: kspread/v1
kind: Case
name: right
version: "1.24"
profile: {score: [SelectorSpread]}
nodes:   [n1,   n2]     # odd spacing stays
pod: {name: new}
expect: {selected: [n1, n2]}
---
apiVersion: kspread/v1
kind: Case
name: err
version: "1.24"
profile: {score: [Nope]}
nodes: [n1]
pod: {name: new}
expect: {error: "something else"}
---
apiVersion: kspread/v1
kind: Case
name: fresh
version: "1.24"
profile: {score: [SelectorSpread]}
nodes: [n1, n2]
pod: {name: new}
expect: {}
"""


def test_nothing_is_written_without_the_flag(pytester):
    p = pytester.makefile(".yaml", cases=CASES)
    before = p.read_text()
    pytester.runpytest("-q").assert_outcomes(passed=1, failed=3)  # the empty expect asserts nothing: a failure
    assert p.read_text() == before


def test_update_rewrites_failing_and_empty_cases_only(pytester):
    p = pytester.makefile(".yaml", cases=CASES)
    original = p.read_text()
    result = pytester.runpytest("-q", "--kspread-update")
    result.assert_outcomes(passed=3, failed=1)  # the error case is never updated
    result.stdout.fnmatch_lines([
        "*kspread: updated 2 case(s):*",
        "*wrong: expect.scores.SelectorSpread.n1: 100 -> 0",
        "*wrong: expect.selected: n1 -> n2",
        "*fresh: expect.selected: (absent) -> ?n1, n2?",  # fnmatch: [ ] would be a class
    ])
    text = p.read_text()
    assert "# top comment" in text and "# my guess" in text and '"wrong"   # quoted on purpose' in text
    assert "    SelectorSpread: {n1: 0}\n  selected: n2\n" in text  # only the listed node
    assert "nodes:   [n1,   n2]     # odd spacing stays" in text
    assert 'expect: {error: "something else"}' in text
    assert text.endswith("expect: {selected: [n1, n2]}")
    # outside the two expect entries, not a byte changed
    assert original.split("expect:")[0] == text.split("expect:")[0]
    assert original.split("expect:")[2] == text.split("expect:")[2]
    pytester.runpytest("-q").assert_outcomes(passed=3, failed=1)
    # a second update changes nothing
    before = p.read_text()
    pytester.runpytest("-q", "--kspread-update")
    assert p.read_text() == before


def test_cli_update(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(CASES.split("---\n")[0])
    r = subprocess.run([sys.executable, "-m", "kspread", "run", "--update", str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "expect.selected: n1 -> n2" in r.stderr
    assert "selected: n2" in p.read_text()
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".kspread-")]  # no temp file left


VARIANTS = """\
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
    expect:
      scores: {SelectorSpread: {n1: 0, n2: 10}}
  heavy:
    profile: {score: [{name: SelectorSpread, weight: 4}]}
    expect:
      totals: {n1: 0, n2: 999}
  broken:
    pods:
    - {name: a, node: n9}
    expect: {selected: n2}
"""


def test_variants_expand_to_items_and_report_their_own_lines(pytester):
    p = pytester.makefile(".yaml", sweep=VARIANTS)
    result = pytester.runpytest("-v")
    result.stdout.fnmatch_lines([
        "*sweep.yaml::sweep PASSED*",
        "*sweep.yaml::sweep[[]legacy] PASSED*",
        "*sweep.yaml::sweep[[]heavy] FAILED*",
        "*sweep.yaml::sweep[[]broken] FAILED*",
    ])
    result.stdout.fnmatch_lines([f"*{p}:25: variants.broken.pods[[]0].node: pod is bound to unknown node 'n9'*"])
    result.stdout.fnmatch_lines(["*n2    999       400*"])


def test_update_writes_into_the_variant(pytester):
    p = pytester.makefile(".yaml", sweep=VARIANTS.replace("n2: 999", "n2: 1"))
    pytester.runpytest("-q", "--kspread-update", "-k", "heavy")
    assert "      totals: {n1: 0, n2: 400}\n" in p.read_text()
    assert "  scores: {SelectorSpread: {n1: 0, n2: 100}}\n" in p.read_text()


def test_update_report_prints_each_changed_leaf_whole(tmp_path):
    # a changed score is reported at its full path; a list value is printed whole, never cut
    nodes = [f"n{i}" for i in range(1, 26)]
    scores = {n: 0 if n == "n21" else 100 for n in nodes}
    p = tmp_path / "wide.yaml"
    p.write_text("apiVersion: kspread/v1\nkind: Case\nname: wide\nversion: '1.24'\n"
                 "profile: {score: [SelectorSpread]}\n"
                 f"nodes: [{', '.join(nodes)}]\npod: {{name: new}}\n"
                 f"expect:\n  feasible: [{', '.join(nodes[:-1])}]\n"
                 f"  scores:\n    SelectorSpread: {{{', '.join(f'{n}: {v}' for n, v in scores.items())}}}\n")
    r = subprocess.run([sys.executable, "-m", "kspread", "run", "--update", str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stderr.splitlines() == [
        f"updated {p}: wide: expect.feasible: [{', '.join(nodes[:-1])}] -> [{', '.join(nodes)}]",
        f"updated {p}: wide: expect.scores.SelectorSpread.n21: 0 -> 100",
    ]
