"""The checks the loader runs on large YAML files read by yaml-rs: the document-start
scan over the whole text agrees with the line-by-line scan it replaced, and the
non-string-key walk finds a key anywhere."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
