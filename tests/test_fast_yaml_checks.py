"""The checks the loader runs on large YAML files read by yaml-rs: the document-start
scan over the whole text agrees with the line-by-line scan it replaced, and the
non-string-key walk finds a key anywhere."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kspread.errors import CaseError
from kspread.format.loader import _doc_lines, _doc_lines_by_line, _has_non_string_key

_LINES = ["---", "--- ", "--- a: 1", "---#x", "--- # c", "---\t", "----", "--", "a: 1", "  b: 2", "# c",
          "%YAML 1.2", "", " ", "\t", "...", "- x", "x", "---\u00a0y", "-\u2028- z"]
_BREAKS = ["\n", "\n", "\n", "\r\n", "\r", "\x0c", "\x85", "\u2028"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_LINES), st.sampled_from(_BREAKS)), max_size=10),
       st.sampled_from(["", "\n", "\n\n", "\ufeff"]))
def test_doc_lines_as_line_by_line(lines, head):
    text = head + "".join(line + brk for line, brk in lines)
    assert _doc_lines(text) == _doc_lines_by_line(text)
    cut = text.rstrip("\n\r")  # no break after the last line
    assert _doc_lines(cut) == _doc_lines_by_line(cut)


@pytest.mark.parametrize("data,found", [
    ({1: "a"}, True),
    ([{"a": [{"b": {3: 4}}]}], True),
    ([{"a": [{"b": {"c": 4}}]}], False),
    ([[[[{(1,): 2}]]]], True),
    ([{"a": {"b": [[{None: 1}]]}}], True),
    ({"a": {True: 1}}, True),
    ("x", False),
    ([None, 1, "a"], False),
    ([[], [[{}]]], False),
    (5, False),
])
def test_non_string_key_anywhere(data, found):
    assert _has_non_string_key(data) is found


# ---- YAML 1.1 (kspread's reader, libyaml, Kubernetes) against YAML 1.2 (yaml-rs) ----

yaml_rs = pytest.importorskip("yaml_rs")

_PAD = ("# " + "x" * 100 + "\n") * 11000  # past FAST_YAML_THRESHOLD


@pytest.mark.parametrize("snippet", [
    "a: yes", "a: on", "a: Off", "a: [x, NO]", "yes: 1", "a: {b: on}",  # 1.1 booleans
    "a: 017", "a: -017", "a: [1,017]", "b: 10\na: 010",  # 1.1 octal
    "a: 0o17", "a: _1", "a: [_1]", "a: {b: 0_1}",  # 1.2 octal, leading underscore
    "a: 1:20", "a: 10:00:00",  # 1.1 base 60
    "a: 1e3", "a: 1.5E3", "a: [2.5, 1e3]",  # exponents 1.1 reads as strings
    "a: 1000\nb: 1e3", "a: [1, 1e0]", "a: [true, 1e0]",  # a float equal to an int or a bool read before it
])
def test_large_yaml_reads_as_yaml_1_1_where_the_versions_differ(snippet):
    from kspread.format import yamlio
    from kspread.format.loader import _read_docs

    text = _PAD + snippet + "\n"
    assert len(text) > 1 << 20
    fast, strict = _read_docs(text, "x.yaml")[0].data, yamlio.read_documents(text, "x.yaml")[0].data
    assert fast == strict
    assert [type(v) for v in fast.values()] == [type(v) for v in strict.values()]


@pytest.mark.parametrize("snippet", [
    # (a quoted 'yes' or '1:20' reads as the plain one would in 1.2: those go to the slow reader)
    "a: '017'", "a: 2", "a: '2'", "a: 1.30", "a: '1.30'", "a: true", "a: ''",
    "a: 0", "a: 100", "a: 1_000", "a: 0x1F", "cpu: 100m", "t: 2024-01-01T00:00:00Z", "name: node-017",
])
def test_large_yaml_stays_on_yaml_rs_where_the_versions_agree(snippet, monkeypatch):
    from kspread.format import loader, yamlio

    def slow(*args, **kwargs):
        raise AssertionError("read by kspread's own reader")

    text = _PAD + snippet + "\n"
    strict = yamlio.read_documents(text, "x.yaml")[0].data
    monkeypatch.setattr(loader.yamlio, "read_documents", slow)
    assert loader._read_docs(text, "x.yaml")[0].data == strict


def test_a_large_case_with_yes_as_a_label_value_fails_as_a_small_one(tmp_path):
    from kspread.errors import CaseError
    from kspread.format.loader import load_case, read_file

    body = ('apiVersion: kspread/v1\nkind: Case\nname: c\nversion: "1.30"\n'
            "nodes:\n- {name: n1, labels: {ssd: yes}}\npod: {name: p}\nexpect: {feasible: [n1]}\n")
    messages = []
    for pad in ("", _PAD):
        f = tmp_path / f"c{len(pad)}.yaml"
        f.write_text(pad + body)
        [doc] = read_file(f).docs
        with pytest.raises(CaseError) as e:
            load_case(doc)
        messages.append(str(e.value).split(": ", 1)[1])  # past the file name and line
    assert "nodes[0].labels.ssd" in messages[0] and "True" in messages[0]
    assert messages[1] == messages[0]


def _starts_scalar(text: str, i: int) -> bool:
    """Whether the character at ``i`` begins a plain scalar (optionally after a sign),
    by hand: the reference for the loader's one-regex scans."""
    j = i - 1
    if j >= 0 and text[j] in "+-":
        j -= 1
    return j < 0 or text[j] in " \t\r\n[{,"


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(["0", "_", "1", "o", "-", "+", " ", "\t", "\n", "\r", "[", "{", ",", ":", "a", "e"]),
                max_size=12).map("".join))
def test_scalar_start_scans_as_by_hand(text):
    from kspread.format.loader import _LEADING_0, _LEADING_UNDERSCORE

    underscore = any(c == "_" and _starts_scalar(text, i) for i, c in enumerate(text))
    zero = any(c == "0" and text[i + 1:i + 2] in tuple("0123456789oO_") and _starts_scalar(text, i)
               for i, c in enumerate(text))
    assert bool(_LEADING_UNDERSCORE.search(text)) is underscore
    assert bool(_LEADING_0.search(text)) is zero


# ---- a duplicate key in a file yaml-rs reads: found by a scan, as the strict reader finds it ----

_DUP_KEYS = ["a", "b", "c", "a", "b", "1", "yes", "x y", '"a"', "'b'", "<<", "~"]
_DUP_VALUES = ["1", "x", "'s'", "[1, 2]", "{k: v, k2: 1}", "null", "&an 5", "*an", "!!str 3", "{a: 1, a: 2}"]


def _block(r, depth: int, indent: int) -> list[str] | None:
    """Random block-style YAML lines whose mappings may give a key twice."""
    if depth > 2 or r.random() < 0.2:
        return None
    out: list[str] = []
    mapping = r.random() < 0.7
    for _ in range(r.randint(1, 4)):
        sub = _block(r, depth + 1, indent + 2)
        head = " " * indent + (r.choice(_DUP_KEYS[:8] if r.random() < 0.9 else _DUP_KEYS) + ":" if mapping else "-")
        if sub is None:
            out.append(f"{head} {r.choice(_DUP_VALUES[:6] if r.random() < 0.9 else _DUP_VALUES)}")
        else:
            out += [head, *sub]
    return out


def test_duplicate_key_scan_agrees_with_the_strict_reader():
    import random

    from kspread.format import loader, yamlio

    r = random.Random(19)
    fast = 0
    for _ in range(4000):
        text = "\n".join(["apiVersion: kspread/v1", "kind: Case", *(_block(r, 0, 0) or ["z: 1"])]) + "\n"
        try:
            yaml_rs.loads(text, parse_datetime=False)
            continue
        except Exception as e:  # yaml-rs's own error type
            if not str(e).startswith("duplicate mapping key"):
                continue
            quick = loader._duplicate_key_docs(text, "f.yaml", e)
        if quick is None:
            continue  # the scan left it to the strict reader
        fast += 1
        [strict] = yamlio.read_documents(text, "f.yaml")
        assert (str(quick[0].error), quick[0].data, quick[0].line) == (str(strict.error), strict.data,
                                                                      strict.line), text
    assert fast > 100


def test_a_duplicate_key_in_a_large_file_is_found_without_composing_it(tmp_path, monkeypatch):
    from kspread.format import loader, yamlio

    monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)

    def composed(*a, **k):
        raise AssertionError("the strict reader composed the file")

    monkeypatch.setattr(yamlio, "read_documents", composed)
    p = tmp_path / "c.yaml"
    p.write_text("apiVersion: kspread/v1\nkind: Case\npods:\n- name: a\n  labels: {x: '1'}\n  name: b\n"
                 "expect: {}\n")
    [doc] = loader.read_file(p).docs
    assert str(doc.error) == f"{p}:6: pods[0]: duplicate key 'name' (lines 4 and 6)"
    assert doc.data["pods"] == [{"name": "b", "labels": {"x": "1"}}]


# ---- a syntax error in a file yaml-rs reads: found by a scan, as the strict reader finds it ----


def _random_value(r, depth=0):
    if depth > 3 or r.random() < 0.3:
        return r.choice([1, "x", "it's", "a b", "multi\nline", None, True, "[x]", "k: v"])
    if r.random() < 0.5:
        return [_random_value(r, depth + 1) for _ in range(r.randint(0, 4))]
    return {r.choice("abcdef") + str(r.randint(0, 9)): _random_value(r, depth + 1) for _ in range(r.randint(0, 4))}


def test_syntax_error_scan_agrees_with_the_strict_reader():
    import random

    import yaml

    from kspread.format import loader, yamlio

    r = random.Random(17)
    fast = 0
    for _ in range(1500):
        data = {"apiVersion": "kspread/v1", "kind": "Case",
                **{f"k{i}": _random_value(r, 1) for i in range(r.randint(1, 4))}}
        text = yaml.safe_dump(data, default_flow_style=r.choice([False, None, True]), sort_keys=False,
                              width=r.choice([20, 80]))
        if r.random() < 0.3:
            text = "# c\n---\n" + text
        if r.random() < 0.3:
            text = text.replace("\n", "\r\n")
        for _ in range(r.randint(1, 2)):  # break it: a character more or less
            i = r.randrange(len(text))
            text = text[:i] + r.choice("[]{}\"':,-#&*!|>?\t\n") + text[i:] if r.random() < 0.7 else \
                text[:i] + text[i + 1:]
        try:
            yaml_rs.loads(text, parse_datetime=False)
            continue
        except Exception as e:  # yaml-rs's own error type
            if str(e).startswith("duplicate mapping key"):
                continue
        quick = loader._syntax_error_docs(text, "f.yaml")
        if quick is None:
            continue  # left to the strict reader
        fast += 1
        strict = yamlio.read_documents(text, "f.yaml")
        assert [(str(d.error), d.line, d.parsed, d.data, d.source) for d in quick] == \
            [(str(d.error), d.line, d.parsed, d.data, d.source) for d in strict], text
    assert fast > 500


def test_a_syntax_error_in_a_large_file_is_found_without_composing_it(tmp_path, monkeypatch):
    from kspread.format import loader, yamlio

    monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)

    def composed(*a, **k):
        raise AssertionError("the strict reader composed the file")

    monkeypatch.setattr(yamlio, "read_documents", composed)
    p = tmp_path / "c.yaml"
    p.write_text("apiVersion: kspread/v1\nkind: Case\npods:\n- {name: a,\n   labels: {x: '1'}\nexpect: {}\n")
    [doc] = loader.read_file(p).docs
    assert str(doc.error) == (f"{p}:6: invalid YAML: while parsing a flow mapping that opened at line 4: did not "
                              "find expected ',' or '}' at line 6")


# ---- a large file read segment by segment: the same data, duplicate key and syntax error as the strict reader ----

# values that span lines, now and then across a line at column 0 (a segment that
# starts there is no start: it must not parse alone)
_SPANNING = ['"x\n{i}y"', "'a\n\n{i}b'", '"q\n{i}z: 1"', "[1,\n{i}2]", "{{a: 1,\n{i}b: 2}}", "|\n{i}t\n{i}u",
             ">-\n{i}f", '{{"a":\n{i}1}}']


def _value(r, indent: int, odd: bool = False) -> str:
    if r.random() < 0.7:
        value = r.choice(_DUP_VALUES) if odd else r.choice(_DUP_VALUES[:6])
        # each anchor its own name (yaml-rs, as YAML 1.2, lets a name be given again, the
        # strict reader does not: a large file with one goes to the strict reader)
        return value.replace("&an", f"&an{r.randrange(10 ** 9)}")
    return r.choice(_SPANNING).format(i="" if r.random() < 0.15 else " " * (indent + 4))
_TOP_KEYS = ["apiVersion", "kind", "name", "nodes", "pods", "zones", "x", "y"]


def _item(r, indent: int) -> list[str]:
    """A list item: a scalar, or a block mapping whose keys may repeat."""
    pad = " " * indent
    if r.random() < 0.3:
        return [f"{pad}- {_value(r, indent)}"]
    keys = r.sample(["name", "cpu", "labels", "node", "m"], r.randint(1, 4))
    if r.random() < 0.05:
        keys.insert(r.randrange(len(keys) + 1), r.choice(keys))  # a key given twice
    out = []
    for j, k in enumerate(keys):
        value = _value(r, indent + 2, r.random() < 0.1)
        out.append(f"{pad}{'- ' if j == 0 else '  '}{k}: {value}")
        if r.random() < 0.15:
            out.append(f"{pad}  sub:\n{pad}    a: 1\n{pad}    {r.choice('ab')}: 2")
    return out


def _segmented_text(r) -> str:
    keys = r.choices(_TOP_KEYS, k=r.randint(2, 7))
    if r.random() < 0.8:
        keys = list(dict.fromkeys(keys))  # mostly without a top-level key given twice
    out = r.choice([[], ["---"], ["# c", ""]])
    for k in keys:
        if r.random() < 0.5:
            indent = r.choice([0, 2])
            out.append(f"{k}:")
            for _ in range(r.randint(1, 12)):
                out += _item(r, indent)
                if r.random() < 0.1:
                    out.append(r.choice(["", "# a comment", "  # indented"]))
        else:
            out.append(f"{k}: {_value(r, 0)}")
    return "\n".join(out) + "\n"


def _spy(monkeypatch, module, name, results):
    f = getattr(module, name)

    def spied(*a, **k):
        out = f(*a, **k)
        results.append(out)
        return out

    monkeypatch.setattr(module, name, spied)


def test_a_text_read_by_segments_reads_as_the_strict_reader_reads_it(monkeypatch):
    """Random texts cut into small segments (top-level keys, runs of list items), with a
    key given twice here and there, values across column-0 lines and now and then a tag,
    an anchor or an alias: the loader gives the strict reader's data, error and line."""
    import random

    from kspread.format import lines, loader, yamlio

    monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)
    monkeypatch.setattr(lines, "SEGMENT_SIZE", 40)
    read: list = []
    _spy(monkeypatch, loader, "_read_segments", read)
    r = random.Random(1919)
    settled = {"data": 0, "duplicate": 0}
    for _ in range(1500):
        text = _segmented_text(r)
        del read[:]
        fast = loader._read_docs(text, "f.yaml")
        strict = yamlio.read_documents(text, "f.yaml")
        assert [(str(d.error), d.line, d.parsed, d.data) for d in fast] == \
            [(str(d.error), d.line, d.parsed, d.data) for d in strict], text
        if read and type(read[0]) is tuple and fast[0].error is read[0][1]:
            settled["duplicate" if read[0][1] is not None else "data"] += 1
    assert settled["data"] > 200 and settled["duplicate"] > 150, settled


def test_a_syntax_error_found_by_segments_is_the_strict_readers(monkeypatch):
    """Random texts cut into small segments, broken by a character more or less at a
    random place: the error (message, line, the flow collection it broke) is the strict
    reader's, found from a segment before it."""
    import random

    from kspread.format import lines, loader, yamlio

    monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)
    monkeypatch.setattr(lines, "SEGMENT_SIZE", 40)
    found: list = []
    _spy(monkeypatch, yamlio, "_syntax_error_by_segments", found)
    r = random.Random(2019)
    settled = 0
    for _ in range(1500):
        text = _segmented_text(r)
        for _ in range(r.randint(1, 2)):
            i = r.randrange(len(text))
            text = text[:i] + r.choice("[]{}\"':,-#&*!|>?\t\n") + text[i:] if r.random() < 0.7 else \
                text[:i] + text[i + 1:]
        try:
            yaml_rs.loads(text, parse_datetime=False)
            continue  # (yaml-rs reads some texts libyaml does not: `[1, |2]`)
        except Exception:
            pass
        del found[:]
        fast = loader._read_docs(text, "f.yaml")
        strict = yamlio.read_documents(text, "f.yaml")
        assert [(str(d.error), d.line, d.parsed, d.data, d.source) for d in fast] == \
            [(str(d.error), d.line, d.parsed, d.data, d.source) for d in strict], text
        settled += any(isinstance(f, CaseError) for f in found)
    assert settled > 300, settled


def _pods_file(n: int, broken: dict[int, str]) -> str:
    out = ["apiVersion: kspread/v1", "kind: Case", "name: c", "pods:"]
    for i in range(n):
        out += broken.get(i, f"- name: p{i}\n  labels: {{app: a{i % 3}}}").split("\n")
    return "\n".join([*out, "expect: {}"]) + "\n"


def test_a_duplicate_key_is_scanned_in_its_segment_only(tmp_path, monkeypatch):
    from kspread.format import lines, loader, yamlio

    monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)
    monkeypatch.setattr(lines, "SEGMENT_SIZE", 100)
    monkeypatch.setattr(yamlio, "read_documents", lambda *a, **k: pytest.fail("the strict reader read the file"))
    scanned: list[int] = []
    scan = yamlio.first_duplicate
    monkeypatch.setattr(yamlio, "first_duplicate", lambda text, *a: scanned.append(len(text)) or scan(text, *a))
    p = tmp_path / "c.yaml"
    text = _pods_file(60, {41: "- name: p41\n  labels: {app: x}\n  name: again"})
    p.write_text(text)
    [doc] = loader.read_file(p).docs
    assert str(doc.error) == f"{p}:89: pods[41]: duplicate key 'name' (lines 87 and 89)"
    assert doc.data["pods"][41] == {"name": "again", "labels": {"app": "x"}} and len(doc.data["pods"]) == 60
    assert scanned and max(scanned) < 200  # one run of items, not the text
    p.write_text(text.replace("pods:", "name: twice\npods:"))
    [doc] = loader.read_file(p).docs
    assert str(doc.error) == f"{p}:4: duplicate key 'name' (lines 3 and 4)"  # the first in the text
    assert doc.data["name"] == "twice"


def test_a_syntax_error_is_scanned_from_the_segment_before_it(tmp_path, monkeypatch):
    from kspread.format import lines, loader, yamlio

    monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)
    monkeypatch.setattr(lines, "SEGMENT_SIZE", 100)
    monkeypatch.setattr(yamlio, "read_documents", lambda *a, **k: pytest.fail("the strict reader read the file"))
    scanned: list[int] = []
    scan = yamlio._syntax_scan
    monkeypatch.setattr(yamlio, "_syntax_scan", lambda text, *a: scanned.append(len(text)) or scan(text, *a))
    p = tmp_path / "c.yaml"
    text = _pods_file(60, {41: "- name: p41\n  labels: {app: [x,\n  y: 1}"})
    p.write_text(text)
    [doc] = loader.read_file(p).docs
    assert str(doc.error) == (f"{p}:89: invalid YAML: while parsing a flow sequence that opened at line 88: did "
                              "not find expected ',' or ']' at line 89")
    assert scanned and max(scanned) < len(text) - text.index("p41") + 200  # from a run just before it


_E = "f.yaml:{}: invalid YAML: "


@pytest.mark.parametrize("text,message", [
    # a line at column 0 that reads alone as a mapping, or as a scalar, but is no key of the text's
    ("x: 1\n{a: 1}\n", _E.format(3) + "while scanning a simple key that opened at line 2: could not find expected ':' "
                                     "at line 3"),
    ("a: 1\nkind: C\nase\nb: 2\n", _E.format(4) + "while scanning a simple key that opened at line 3: could not find "
                                                 "expected ':' at line 4"),
    ("a: 1\n,k: 2\nb:\n- - 1\n", _E.format(2) + "while parsing a block mapping that opened at line 1: did not find "
                                              "expected key at line 2"),
    # the root mapping opens at its first key, not at its tag
    ("# c\n!\npods: 1\nx:\n  - a: 1\n b\n", _E.format(6) + "while parsing a block mapping that opened at line 3: did "
                                                        "not find expected key at line 6"),
    # the list of a run of items opened in the segment of its key (the second of the same name)
    ("zones: 1\nzones:\n  - a\n  - b\n  - c\n  x: 1\n", _E.format(6) + "while parsing a block collection that opened "
                                                                   "at line 3: did not find expected '-' indicator at "
                                                                   "line 6"),
])
def test_segments_that_read_otherwise_alone(monkeypatch, text, message):
    from kspread.format import lines, loader, yamlio

    monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)
    monkeypatch.setattr(lines, "SEGMENT_SIZE", 4)
    [strict] = yamlio.read_documents(text, "f.yaml")
    [doc] = loader._read_docs(text, "f.yaml")
    assert (str(doc.error), doc.parsed) == (str(strict.error), strict.parsed) == (message, False)


# ---- constructs yaml-rs reads otherwise than the strict reader: the text goes to the strict reader ----

_KEYS = ["a", "b", "1", "true", "null", "~", "yes", "?k", "? k", "-k", ":k", ",k", "[k", "]k", "{k", "}k", "#k",
         "&k", "*k", "!k", "|k", ">k", "'k'", '"k"', "%k", "@k", "`k", "k" * 1030, "!!str a", "&an a", "*an", "&an",
         "!!int 1", "!t a", "a b"]
_VALUES = ["1", "x", "[a:]", "{a:, b}", "[a::]", "[a: ]", "{a: }", "[a:b]",
           "&an 1", "*an", "&an {b: 1}", "[1, |2]", "[1, >2]", "{?k: v}", "{? k: v}", "[?a]", "[? a : b]",
           "{a, b}", "[a: b]", "!!str 1", "!!binary aGk=", "!!float 1", "!local x", "!<tag:x> y", "|\n  t", ">\n  t",
           "|-\n  t\n\n", "'a\n  b'", '"a\n  b"', "a\n  b", "[a\n  , b]", "- x", "x #c", "x#c", "---", "...",
           "--- x", "@x", "`x", "%x", "-", "?", ":", "-x", "?x", ":x", ",x", "x,y", "x:y", "x: y", "[]", "{}", "[a,]",
           "{a: 1,}", "[*an]", "{*an : 1}", "*an : 1", "''", '""', '"\\t"', "\t1", "1\t", "x\ufeffy", "\ufeffx",
           "x\u2028y", "x\x85y", "'x\u2029y'", "2001-12-14", "0x1f", ".inf", "-.nan", "=", "[&an a, *an]",
           "{&an a: 1, *an : 2}", "k" * 1030, '"' + "k" * 1030 + '": 1', "&an:- x", "*an: 1", "!!merge a",
           "'it''s'", '"\\x41 \\N \\_ \\/"', "? |\n  k\n: v", ": v", "- - x", "a\n  ---\n  b", "{a: b}: c", "%",
           "a:\n\n\n  b", "[a #c\n  , b]"]
_LINE_STARTS = ["", "", "  ", "    ", "\t", " - ", "- "]
_SEPARATORS = [": ", ": ", ":", ":\t", " : ", ":\n  "]
_BREAKS_ALL = ["\n", "\n", "\n", "\r\n", "\r", "\x85", "\u2028", "\u2029"]
_line = st.one_of(
    st.tuples(st.sampled_from(_LINE_STARTS), st.sampled_from(_VALUES)).map("".join),
    st.tuples(st.sampled_from(_LINE_STARTS), st.sampled_from(_KEYS), st.sampled_from(_SEPARATORS),
              st.sampled_from(_VALUES)).map("".join),
    st.sampled_from(["---", "...", "--- a", "# c", "%YAML 1.1", "%YAML 2.0", "%FOO bar", "%TAG !t! tag:x:",
                     "--- !!map", "\ufeff"]),
)


def _read_at(text: str, threshold: int) -> list:
    from kspread.format import loader

    saved = loader.FAST_YAML_THRESHOLD
    loader.FAST_YAML_THRESHOLD = threshold
    try:
        docs = loader._read_docs(text, "f.yaml")
    finally:
        loader.FAST_YAML_THRESHOLD = saved
    return [(d.data, type(d.data), d.parsed, str(d.error) if d.error else None, d.line) for d in docs]


@settings(max_examples=2500, deadline=None)
@given(st.lists(st.tuples(_line, st.sampled_from(_BREAKS_ALL)), min_size=1, max_size=6))
def test_a_text_reads_alike_on_yaml_rs_and_on_the_strict_reader(lines):
    """Small texts of anchors, aliases, tags, directives, document markers, tabs,
    reserved indicators, indicators in flow collections, multi-line scalars, odd line
    breaks, byte order marks and keys of over 1024 characters: the data, or the error and
    its line, and each document's line are the same as a file above 1 MB (yaml-rs, its
    checks) and below it (the strict reader)."""
    text = "".join(line + brk for line, brk in lines)
    assert _read_at(text, 0) == _read_at(text, 1 << 60), text


@pytest.mark.parametrize("text,data,error", [
    # PyYAML's composer (the strict reader) refuses an anchor name given again; yaml-rs takes the last
    ("a: &an 1\nb: &an 2\nc: *an\n", None, ("f.yaml:2: invalid YAML: found duplicate anchor 'an'; first occurrence "
                                           "that opened at line 1: second occurrence at line 2")),
    # a block scalar indicator in a flow collection: no token to libyaml, the string '|2' to yaml-rs
    ("a: [1, |2]\n", None, ("f.yaml:1: invalid YAML: while scanning for the next token: found character that cannot "
                           "start any token")),
    ("a: {?k: v}\n", {"a": {"k": "v"}}, None),  # libyaml: ? is the key indicator (yaml-rs: the key '?k')
    ("a: [a:, b]\n", None, "f.yaml:1: invalid YAML: while scanning a plain scalar: found unexpected ':'"),
    ("a: {b: c, a:}\n", None, "f.yaml:1: invalid YAML: while scanning a plain scalar: found unexpected ':'"),
    ("a: [:x]\n", None, "f.yaml:1: invalid YAML: while parsing a flow node: did not find expected node content"),
    ("a: !!binary aGk=\n", {"a": b"hi"}, None),  # yaml-rs: the string 'aGk='
    ("a: !local x\n", None, "f.yaml:1: invalid YAML: could not determine a constructor for the tag '!local'"),
    ("- &k:- x\n", [":- x"], None),  # libyaml's anchor name ends at ':' (yaml-rs: the anchor 'k:-' of 'x')
    ("- x,y\x85- z\n", ["x,y", "z"], None),  # NEL: a line break to YAML 1.1, text to 1.2
    ("a: 1\n...\nb: 2\n", None, "f.yaml:3: invalid YAML: did not find expected <document start>"),
    ("%FOO bar\n---\na: 1\n", None, ("f.yaml:1: invalid YAML: while scanning a directive: found unknown directive "
                                    "name")),
    ("%YAML 2.0\n---\na: 1\n", None, "f.yaml:1: invalid YAML: found incompatible YAML document"),
    ("\tc: 1\n", None, ("f.yaml:1: invalid YAML: while scanning for the next token: found character that cannot "
                       "start any token (a tab: YAML indents with spaces, never tabs)")),
    # libyaml takes no implicit key of 1024 characters or more
    ("a: 1\n" + "k" * 1030 + ": 1\n", None, ("f.yaml:2: invalid YAML: while scanning a simple key: could not find "
                                            "expected ':'")),
])
def test_what_yaml_rs_reads_otherwise_is_read_by_the_strict_reader(text, data, error):
    from kspread.format import loader

    assert len(text) < loader.FAST_YAML_THRESHOLD
    fast = _read_at(text, 0)
    assert fast == _read_at(text, 1 << 60)
    assert (fast[-1][0], fast[-1][3]) == (data, error)  # (of the last document: "a: 1" before "...")


@pytest.mark.parametrize("text,docs", [
    ("a: 1\n---\n  b: 1\n", [({"a": 1}, 1), ({"b": 1}, 3)]),  # an indented root: its line, not the marker's
    ("  b: x\n--- a\n", [({"b": "x"}, 1), ("a", 2)]),  # the first document's root indented
    ("a: 1\n---\n", [({"a": 1}, 1), (None, 3)]),  # an empty document
])
def test_documents_whose_first_line_the_scan_cannot_tell(text, docs):
    fast = _read_at(text, 0)
    assert fast == _read_at(text, 1 << 60)
    assert [(d[0], d[4]) for d in fast] == docs


def test_a_case_with_anchors_used_once_each_stays_on_yaml_rs(monkeypatch):
    from kspread.format import loader, yamlio

    monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)
    strict = yamlio.read_documents
    monkeypatch.setattr(loader.yamlio, "read_documents", lambda *a, **k: pytest.fail("read by the strict reader"))
    # (an alias of another top-level key would take the strict reader: the segments are read alone)
    text = "a:\n  b: &x1 {c: 1}\n  d: *x1\n  e: [&x2 f, *x2]\n"
    assert loader._read_docs(text, "f.yaml")[0].data == {"a": {"b": {"c": 1}, "d": {"c": 1}, "e": ["f", "f"]}}
    read: list = []
    monkeypatch.setattr(loader.yamlio, "read_documents", lambda *a: read.append(a[0]) or strict(*a))
    for again in ("g: &x1 2\n", "g: '?q'\n", "g: x\te\n"):  # each read by the strict reader
        assert [(d.data, d.parsed, str(d.error), d.line) for d in loader._read_docs(text + again, "f.yaml")] == \
            [(d.data, d.parsed, str(d.error), d.line) for d in strict(text + again, "f.yaml")]
    assert read == [text + again for again in ("g: &x1 2\n", "g: '?q'\n", "g: x\te\n")]


_ORDINARY = ["x", "1", "a b", "[a, b]", "{a: 1, b: [c]}", "'q'", '"d e"', "|\n      t", "x #c", "-x", "a:b",
             "http://x/?q",
             "true", "null", "~", "1.5", "'it''s'", "[]", "{}", "&an1 v", "*an1", "p-0", "100m"]


def test_case_like_texts_read_alike_and_mostly_on_yaml_rs(monkeypatch):
    """Case-like texts (top-level keys, block lists of mappings) with an odd key or value
    now and then: the same reading both ways, and most stay on yaml-rs (the checks fall
    back where the texts could differ, not everywhere)."""
    import random

    from kspread.format import loader

    strict = loader.yamlio.read_documents
    composed: list = []
    monkeypatch.setattr(loader.yamlio, "read_documents", lambda *a: composed.append(1) or strict(*a))
    r = random.Random(1119)
    kept = 0
    for _ in range(1500):
        def value() -> str:
            return r.choice(_VALUES) if r.random() < 0.04 else r.choice(_ORDINARY)

        def key() -> str:
            return r.choice(_KEYS) if r.random() < 0.02 else r.choice(["name", "cpu", "labels", "node"])

        out = []
        for k in r.sample(["apiVersion", "kind", "name", "nodes", "pods", "x"], r.randint(2, 5)):
            if r.random() < 0.5:
                out.append(f"{k}:")
                for _ in range(r.randint(1, 5)):
                    out += [f"- {key()}: {value()}", f"  {key()}: {value()}"][:r.randint(1, 2)]
            else:
                out.append(f"{k}: {value()}")
        text = "".join(line + (r.choice(_BREAKS_ALL) if r.random() < 0.02 else "\n") for line in out)
        if text.count("&an1") > 1 or ("*an1" in text and "&an1" not in text):
            text = text.replace("&an1 ", "").replace("*an1", "v")
        del composed[:]
        fast = _read_at(text, 0)
        kept += not composed
        assert fast == _read_at(text, 1 << 60), text
    assert kept > 750, kept


# ---- nesting: yaml-rs reads deeper than yamlio.MAX_DEPTH; the strict reader says where it is too deep ----

def _nest(form: str, k: int) -> str:
    """``description:`` holding ``k`` nested collections (the root mapping: one level more)."""
    if form == "flow":
        return "description: " + "[ " * k + "]" * k + "\n"
    if form == "block list":
        return "description:\n" + "".join("  " * i + "-\n" for i in range(k))
    return "description:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(k - 1)) + "  " * k + "k: x\n"


@pytest.mark.parametrize("form", ["flow", "block list", "block mapping"])
@pytest.mark.parametrize("docs", [1, 2])
def test_nesting_past_max_depth_reads_as_the_strict_reader_reads_it(monkeypatch, form, docs):
    from kspread.format import loader, yamlio

    monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)
    for k, line in [(yamlio.MAX_DEPTH - 1, None), (yamlio.MAX_DEPTH, 3 if form == "flow" else 203)]:
        text = "apiVersion: kspread/v1\nkind: Case\n" + _nest(form, k) + "---\nname: b\n" * (docs - 1)
        fast, strict = loader._read_docs(text, "c.yaml"), yamlio.read_documents(text, "c.yaml")
        assert [(d.data, str(d.error), d.line) for d in fast] == [(d.data, str(d.error), d.line) for d in strict]
        assert str(fast[0].error) == ("None" if line is None else
                                      f"c.yaml:{line}: invalid YAML: the data nests more than 200 levels deep")


@pytest.mark.parametrize("text,line,msg", [
    ("? k\n: v\n1\n", 4, "while scanning a simple key that opened at line 3: could not find expected ':' at line 4"),
    ("? |\n  k\n: v\n1\n", 5, "while scanning a simple key that opened at line 4: could not find expected ':' at line 5"),
    ("a: b\n{? k: v}: c\n1\n", 4, ("while scanning a simple key that opened at line 3: could not find expected ':' "
                                  "at line 4")),
])
def test_a_syntax_error_after_a_complex_key_is_the_strict_readers(monkeypatch, text, line, msg):
    # the scan for a syntax error (yamlio.first_syntax_error) stops at the complex key's
    # line; the strict reader at the line after it
    from kspread.format import loader, yamlio

    monkeypatch.setattr(loader, "FAST_YAML_THRESHOLD", 0)
    fast, strict = loader._read_docs(text, "f.yaml"), yamlio.read_documents(text, "f.yaml")
    assert [(str(d.error), d.line) for d in fast] == [(str(d.error), d.line) for d in strict]
    assert str(fast[0].error) == f"f.yaml:{line}: invalid YAML: {msg}"


# ---- at FAST_YAML_THRESHOLD: a file one character above it (yaml-rs) reads as one at it (the strict reader) ----

_EDGE_CASE = """\
apiVersion: kspread/v1
kind: Case
name: edge
nodes:
{nodes}pods:
{pods}pod:
  name: new
expect:
  selected: node-0
"""
_EDGE_ERRORS = {
    "": None,
    "duplicate": "c.yaml:111: pods[9]: duplicate key 'name' (lines 110 and 111)",
    "syntax": "c.yaml:114: invalid YAML: while parsing a flow mapping that opened at line 112: did not find expected "
              "',' or '}' at line 114",
}


@pytest.mark.parametrize("error", list(_EDGE_ERRORS))
def test_a_file_just_above_the_threshold_reads_as_one_just_below(tmp_path, monkeypatch, error):
    from kspread.format import loader

    nodes = "".join(f"- name: node-{i}\n  labels:\n    disk: ssd\n  allocatable:\n    cpu: \"4\"\n"
                    for i in range(10))
    pods = [f"- name: pod-{i}\n  node: node-{i}\n  labels:\n    app: web\n  requests:\n    cpu: 100m\n"
            for i in range(10)]
    if error == "duplicate":
        pods[-1] = pods[-1].replace("  node:", "  name: again\n  node:")
    elif error == "syntax":
        pods[-1] = pods[-1].replace("  labels:\n    app: web\n", "  labels: {app: web,\n")
    text = _EDGE_CASE.format(nodes=nodes, pods="".join(pods))
    loads = []

    class Spy:  # yaml-rs, its reads counted
        def __getattr__(self, name):
            return getattr(yaml_rs, name)

        def loads(self, *a, **k):
            loads.append(1)
            return yaml_rs.loads(*a, **k)

    monkeypatch.setattr(loader, "yaml_rs", Spy())
    read = {}
    for size in (loader.FAST_YAML_THRESHOLD, loader.FAST_YAML_THRESHOLD + 1):
        pad = "# " + "x" * (size - len(text) - 3) + "\n"
        p = tmp_path / f"c{size}.yaml"
        p.write_text(text + pad)
        assert len(p.read_text()) == size
        loads.clear()
        [doc] = loader.read_file(p).docs
        assert bool(loads) is (size > loader.FAST_YAML_THRESHOLD)
        read[size] = (doc.data, doc.line, str(doc.error).replace(str(p), "c.yaml") if doc.error else None)
    below, above = read.values()
    assert above == below
    assert below[1:] == (1, _EDGE_ERRORS[error])
    if error == "syntax":
        assert below[0] is None
    else:
        assert below[0]["pods"][9] == {"name": "again" if error else "pod-9", "node": "node-9",
                                       "labels": {"app": "web"}, "requests": {"cpu": "100m"}}
