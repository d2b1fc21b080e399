"""Every error names the file, and the line of the offending field, in JSON as in YAML,
found by one scan that stops at the field (``kspread.format.lines``)."""

from __future__ import annotations

import json
import textwrap

import pytest

from kspread.format import lines, loader
from kspread.format.loader import read_file
from kspread.workflow.runner import check, duplicate_names

JSON_CASE = """\
{
  "apiVersion": "kspread/v1",
  "kind": "Case",
  "nodes": ["n1"],
  "pod": {
    "name": "p",
    "prority": 3
  },
  "expect": {"selected": "n1"}
}
"""

ALLOWED = ("(allowed: affinity, claims, containers, controller, devices, initContainers, labels, name, namespace, "
           "node, nodeSelector, nominatedNode, overhead, preemptionPolicy, priority, priorityClassName, replicas, "
           "requests, resourceClaims, resources, schedulingGates, schedulingGroup, startTime, status, terminating, tolerations, "
           "topologySpreadConstraints, volumes, workloadRef) (did you mean 'priority'?)")


def _messages(p) -> list[str]:
    res = read_file(p)
    assert res.error is None, res.error
    dups = duplicate_names(res.docs)
    return [str(dups[i]) if i in dups else check(d).message for i, d in enumerate(res.docs)]


# ---- JSON ---------------------------------------------------------------------------------------


def test_json_field_error_names_its_line(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(JSON_CASE)
    assert _messages(p) == [f"{p}:7: pod.prority: unknown field 'prority' {ALLOWED}"]


def test_json_list_of_cases_names_each_case_and_field_line(tmp_path):
    p = tmp_path / "many.json"
    p.write_text(textwrap.dedent("""\
        [
          {"apiVersion": "kspread/v1", "kind": "Case", "name": "a",
           "nodes": ["n1"], "pod": {"name": "p"}, "expect": {"selected": "n1"}},
          {"apiVersion": "kspread/v1", "kind": "Case", "name": "a",
           "nodes": ["n1"], "pod": {"name": "p"}, "expect": {"selected": "n1"}},
          {"apiVersion": "kspread/v1", "kind": "Case", "name": "c",
           "nodes": ["n1"], "pod": {"name": "p"},
           "expect": {}}
        ]
        """))
    res = read_file(p)
    assert [d.line for d in res.docs] == [2, 4, 6]
    assert _messages(p)[1:] == [
        f"{p}:4: name: case name 'a' is used twice in this file",
        (f"{p}:8: expect: the case asserts nothing: give at least one key (or let `pytest --kspread-update` or "
        "`kspread run --update` fill it)"),
    ]


def test_json_variant_lines(tmp_path):
    p = tmp_path / "v.json"
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "name": "v", "nodes": ["n1"], "pod": {"name": "p"},
           "expect": {"selected": "n1"}, "variants": {"one": {"version": "1.24"}, "two": {"nodes": [5]}}}
    p.write_text(json.dumps(doc, indent=1))
    res = read_file(p)
    assert [(d.name, d.line) for d in res.docs] == [("v", 1), ("v[one]", 15), ("v[two]", 18)]
    assert check(res.docs[2]).message == f"{p}:20: variants.two.nodes[0]: must be a string or a mapping (got 5)"


@pytest.mark.parametrize("text,msg", [
    ('{"apiVersion": "kspread/v1", "kind": "Case",\n "pods": [{"name": "a"},\n  {"name": "b",\n   "name": "c"}]}',
     "4: pods[1]: duplicate key 'name' (lines 3 and 4)"),
    ('{"apiVersion": "kspread/v1", "kind": "Case", "nodes": ["n1"], "nodes": []}',
     "1: duplicate key 'nodes' (twice on line 1)"),
    ('[{"kind": "Case"},\n {"kind": "Case", "x": {"a": 1,\n\t"a": 2}}]', "3: [1].x: duplicate key 'a' (lines 2 and 3)"),
    # a key longer than YAML allows an implicit key (the text is no YAML: the lines come from JSON)
    ('{"kind": "Case",\n "description": {"' + "k" * 1100 + '": 1},\n "nodes": ["n1"],\n "nodes": []}',
     "4: duplicate key 'nodes' (lines 3 and 4)"),
])
def test_json_duplicate_key_names_both_lines_and_the_object(tmp_path, text, msg):
    p = tmp_path / "d.json"
    p.write_text(text)
    assert str(read_file(p).error) == f"{p}:{msg}"


def test_json_scan_stops_at_the_field():
    # what follows the field is never read: the scan is as long as the text before it
    text = '{"a": {"b": [1,\n 2, {"c": 3}]},\n "d": ' + "!" * 50
    assert lines.json_line(text, ["a", "b", 2, "c"]) == 2
    assert lines.json_line(text, ["a", "x"]) == 1
    assert lines.json_line(text, ["d"]) == 3
    assert lines.json_line(text, ["e"]) is None  # the text is not JSON that far


def test_json_keys_are_read_as_json_reads_them():
    text = '{"a\\u0062": 1,\n "x": {"\\"q": 2}}'
    assert lines.json_line(text, ["ab"]) == 1
    assert lines.json_line(text, ["x", '"q']) == 2
    assert lines.json_key_lines(text, ["x"]) == {'"q': 2}
    assert lines.json_line("{a: 1}", ["a"]) is None  # YAML flow, not JSON


# ---- YAML ---------------------------------------------------------------------------------------


def test_yaml_scan_stops_at_the_field():
    text = "a:\n  b: [1,\n    2]\nc: [unclosed\n"
    assert lines.yaml_line(text, 0, ["a", "b", 1]) == 3
    assert lines.yaml_line(text, 0, ["c"]) == 4
    assert lines.yaml_line(text, 0, ["c", 0]) == 4
    assert lines.yaml_line(text, 0, ["c", 1]) is None  # the text cannot be parsed that far
    assert lines.yaml_line("a: 1\n---\nb:\n  c: 2\n", 1, ["b", "c"]) == 4
    assert lines.yaml_line("a: 1\n", 1, ["a"]) is None


def test_yaml_path_through_aliases():
    text = textwrap.dedent("""\
        base: &b
          x: 1
          y:
            z: 2
        other: &b
          x: 3
        first: *b
        list:
        - *b
        - {y: *b}
        """)
    assert lines.yaml_line(text, 0, ["first", "x"]) == 6  # the anchor's latest definition before the alias
    assert lines.yaml_line(text, 0, ["first", "q"]) == 7  # no such key: the alias's own line
    assert lines.yaml_line(text, 0, ["list", 1, "y", "x"]) == 6
    assert lines.yaml_key_lines(text, 0, ["first"]) == {"x": 6}


def test_error_inside_an_anchor_is_reported_there(tmp_path):
    p = tmp_path / "a.yaml"
    p.write_text(textwrap.dedent("""\
        apiVersion: kspread/v1
        kind: Case
        nodes: [n1]
        pods:
        - &p {name: a, node: n1}
        - {name: b, node: n1, labels: &l {app: web}}
        pod:
          name: p
          labels: *l
          nodeSelector: {x: 1}
        expect: {selected: n1}
        """))
    assert _messages(p) == [f"{p}:10: pod.nodeSelector.x: must be a string (got 1)"]


def test_a_field_that_comes_from_a_merge_key_is_reported_where_it_is_written(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text(textwrap.dedent("""\
        apiVersion: kspread/v1
        kind: Case
        nodes: [n1]
        pods:
        - &base
          name: a
          node: n1
        pod:
          <<: *base
          name: p
        expect: {selected: n1}
        """))
    assert _messages(p) == [f"{p}:7: pod.node: the incoming pod may not have `node` or `replicas`"]
    text = "a: &a {x: 1, y: {z: 2}}\nb: &b {x: 3}\nm:\n  <<: [*b, *a]\n  w: 4\n"
    assert [lines.yaml_line(text, 0, p) for p in (["m", "x"], ["m", "y", "z"], ["m", "w"], ["m", "v"])] == [2, 1, 5, 3]


# ---- keys that exclude each other: at the second one -----------------------------------------


@pytest.mark.parametrize("body,msg", [
    ("nodes: [n1]\npod: {name: p}\nschedule: [{name: q}]\nexpect: {selected: n1}\n",
     "5: schedule: give either `pod` or `schedule`, not both"),
    ("nodes: [n1]\nschedule: [{name: q}]\npod: {name: p}\nexpect: {selected: n1}\n",
     "5: pod: give either `pod` or `schedule`, not both"),
    ("nodes: [n1]\npod:\n  name: p\n  requests: {cpu: 1}\n  containers: [{name: c}]\nexpect: {selected: n1}\n",
     "7: pod.containers: give either `requests` or `containers`, not both"),
    (("nodes: [n1]\npods:\n- name: a\n  containers: []\n  requests: {cpu: 1}\npod: {name: p}\n"
     "expect: {selected: n1}\n"),
     "7: pods[0].requests: give either `requests` or `containers`, not both"),
    ("nodes: [n1]\nschedule:\n- name: a\n  requests: {cpu: 1}\n  containers: []\nexpect: {placements: {a: n1}}\n",
     "7: schedule[0].containers: give either `requests` or `containers`, not both"),
    ("nodes: [n1]\npod:\n  name: p\n  replicas: 2\nexpect: {selected: n1}\n",
     "6: pod.replicas: the incoming pod may not have `node` or `replicas`"),
])
def test_exclusive_keys_are_reported_at_the_second(tmp_path, body, msg):
    p = tmp_path / "c.yaml"
    p.write_text("apiVersion: kspread/v1\nkind: Case\n" + body)
    assert _messages(p) == [f"{p}:{msg}"]


def test_duplicate_case_name_is_reported_at_its_name(tmp_path):
    p = tmp_path / "d.yaml"
    one = "apiVersion: kspread/v1\nkind: Case\n# the same name\nname: x\nnodes: [n1]\npod: {name: p}\n" \
          "expect: {selected: n1}\n"
    p.write_text(one + "---\n" + one)
    assert _messages(p)[1] == f"{p}:12: name: case name 'x' is used twice in this file"


def test_an_expected_error_that_does_not_come_is_reported_at_expect_error(tmp_path):
    p = tmp_path / "e.yaml"
    p.write_text("apiVersion: kspread/v1\nkind: Case\nnodes: [n1]\npod: {name: p}\nexpect:\n"
                 "  error: no such node\n")
    assert _messages(p) == [(f"{p}:6: expected an error containing 'no such node'; the case loaded and ran without "
                            "error")]


# ---- encodings ------------------------------------------------------------------------------------


def test_a_byte_that_is_not_utf8_names_its_line_and_byte(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_bytes(b"apiVersion: kspread/v1\nkind: Case\nnodes: [n1]\ndescription: caf\xe9\n")
    assert str(read_file(p).error) == (f"{p}:4: cannot read the file: byte 0xe9 (column 17 of this line, byte 62 "
                                       "of the file) is not UTF-8 (invalid continuation byte): save it as UTF-8")


@pytest.mark.parametrize("encoding,name", [("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32")])
def test_utf16_is_refused_not_skipped(tmp_path, pytester, encoding, name):
    text = "apiVersion: kspread/v1\nkind: Case\nnodes: [n1]\npod: {name: p}\nexpect: {selected: n1}\n"
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    msg = (f"cannot read the file: {name}: save as UTF-8 (the file starts with a {name} byte order mark; kspread "
           "reads UTF-8)")
    p = tmp_path / "c.yaml"
    p.write_bytes(data)
    assert str(read_file(p).error) == f"{p}:1: {msg}"
    # in a directory, pytest and the CLI read it (and fail), never pass over it
    assert [str(r.error) for r in loader.collect([str(tmp_path)])] == [f"{p}:1: {msg}"]
    q = pytester.path / "c.yaml"
    q.write_bytes(data)
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"{q}:1: {msg}"])


@pytest.mark.parametrize("fast", [False, True])
def test_a_utf8_byte_order_mark_is_read_in_json_and_yaml(tmp_path, monkeypatch, fast):
    if fast:
        if loader.yaml_rs is None:
            pytest.skip("yaml-rs is not installed")
        monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)
    yaml_text = "apiVersion: kspread/v1\nkind: Case\nnodes: [n1]\npod: {name: p, prority: 1}\nexpect: {selected: n1}\n"
    for name, text, line in [("c.json", JSON_CASE, 7), ("c.yaml", yaml_text, 4)]:
        p = tmp_path / name
        p.write_bytes(b"\xef\xbb\xbf" + text.encode())
        assert _messages(p) == [f"{p}:{line}: pod.prority: unknown field 'prority' {ALLOWED}"]


@pytest.mark.parametrize("point,plugin,kind,between,index", [
    ("multiPoint", "NodeResourcesFit", "PreFilterPlugin", "- name: ImageLocality", 2),  # a default plugin: merging
    ("multiPoint", "SelectorSpread", "PreScorePlugin", "- name: ImageLocality", 2),     # moves the first one last
    ("queueSort", "PrioritySort", "QueueSortPlugin", "# the same again", 1),
])
def test_duplicate_plugin_entry_is_reported_at_the_second(tmp_path, point, plugin, kind, between, index):
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(textwrap.dedent(f"""\
        apiVersion: kubescheduler.config.k8s.io/v1beta3
        kind: KubeSchedulerConfiguration
        profiles:
        - schedulerName: default-scheduler
          plugins:
            {point}:
              enabled:
              - name: {plugin}
              {between}
              - name: {plugin}
        """))
    p = tmp_path / "c.yaml"
    p.write_text("apiVersion: kspread/v1\nkind: Case\nversion: \"1.24\"\nnodes: [n1]\npod: {name: p}\n"
                 "profile: {config: sched.yaml}\nexpect: {selected: n1}\n")
    msg = f"profiles[0].plugins.{point}.enabled[{index}]: plugin {plugin!r} already registered as {kind!r}"
    assert _messages(p) == [f"{cfg}:10: {msg}"]


# ---- the jump to a top-level key and a list item: the same lines as the scan of the whole text ----------

_SCALARS = [1, "x", "it's", 'q"uote', "a: b", "multi\nline text", "- dash", "#h", "", None, True, "[x]", "{y}",
            "  lead", "k:", "---", "..."]


def _random_data(r, depth=0):
    if depth > 3 or r.random() < 0.3:
        return r.choice(_SCALARS)
    if r.random() < 0.5:
        return [_random_data(r, depth + 1) for _ in range(r.randint(0, 4))]
    return {r.choice(["a", "b", "pods", "expect", "n-1", "x.y"]) + str(r.randint(0, 3)): _random_data(r, depth + 1)
            for _ in range(r.randint(0, 4))}


def _paths(x, pre=()):
    yield pre
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, (*pre, k))
        yield (*pre, "missing")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, (*pre, i))
        yield (*pre, len(x))


def test_the_jump_finds_the_lines_the_whole_scan_finds():
    import random

    import yaml

    r = random.Random(17)
    jumped = 0
    for trial in range(300):
        data = {k: _random_data(r, 1) for k in ["apiVersion", "pods", "expect", "b1"][:r.randint(1, 4)]}
        if trial % 4 == 3 and loader.yaml_rs is not None:  # lists indented under their key, a leading ---
            text = loader.yaml_rs.dumps(data)
        else:
            text = yaml.safe_dump(data, default_flow_style=r.choice([False, None, True]) if trial % 3 else False,
                                  sort_keys=False, indent=r.choice([2, 4]), width=r.choice([20, 80]))
        if r.random() < 0.3:
            text = text.replace("\n", "\r\n")
        if r.random() < 0.2:
            text = "# c\n---\n" + text
        for p in _paths(data):
            whole, keys = lines._yaml_walk(text, 0, p, None), {}
            lines._yaml_walk(text, 0, p, keys)
            assert (lines.yaml_line(text, 0, p), lines.yaml_key_lines(text, 0, p)) == (whole, keys), (p, text)
            jumped += lines._jump(text, 0, p, None) is not None
    assert jumped > 1000


@pytest.mark.parametrize("text,path,line", [
    ('a: "x\nK: 1"\nK: 2\n', ["K"], 3),                        # a line inside a quoted scalar is no key
    ("a: [1,\nK: 2]\nK: 3\n", ["K"], 3),                       # nor one inside a flow collection
    ('pods:\n- "a\n- b"\n- c\n', ["pods", 1], 4),              # nor an item
    ("pods:\n- a: |\n    - x\n- b\n", ["pods", 1], 4),
    ("x: &a {k: 1}\npods:\n- *a\n- k: *a\n", ["pods", 1, "k", "k"], 1),  # through aliases
    ('"K": 1\nL: 2\n', ["K"], 1),                               # a quoted key
    ("K: 1\n---\nK: 2\n", ["K"], 1),
])
def test_lines_that_only_look_like_keys_or_items(text, path, line):
    assert lines.yaml_line(text, 0, path) == line
