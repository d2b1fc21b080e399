from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kspread.engine.labels import (
    EVERYTHING,
    NOTHING,
    LabelSelector,
    Requirement,
    as_selector,
    label_value_error,
    parse_label_selector,
    parse_labels,
    qualified_name_error,
    selector_from_set,
    valid_labels_dict,
)
from kspread.engine.quantity import QuantityError, parse_quantity, resource_amount
from kspread.errors import CaseError


@pytest.mark.parametrize("raw,want", [
    ("500m", Fraction(1, 2)), ("1.5", Fraction(3, 2)), ("8Gi", 8 * 2**30), ("1e3", 1000), ("2k", 2000),
    (3, 3), (0.25, Fraction(1, 4)), ("100n", Fraction(1, 10**7)), ("1E-3", Fraction(1, 1000)),
])
def test_parse_quantity(raw, want):
    assert parse_quantity(raw) == want


@pytest.mark.parametrize("raw", ["2cores", "1.2.3", "", "Gi", True, None, "1 Gi"])
def test_bad_quantity(raw):
    with pytest.raises(QuantityError):
        parse_quantity(raw)


def test_cpu_is_millicores_rounded_up_and_others_whole_units_rounded_up():
    assert resource_amount("cpu", "1.5") == 1500
    assert resource_amount("cpu", "0.0001") == 1  # MilliValue rounds up
    assert resource_amount("memory", "1.5") == 2  # Value rounds up
    assert resource_amount("memory", "1Mi") == 1048576


def test_requirement_semantics():
    labels = {"a": "1", "b": "x"}
    assert Requirement("a", "In", ("1", "2")).matches(labels)
    assert Requirement("c", "NotIn", ("1",)).matches(labels)  # absent key satisfies NotIn
    assert not Requirement("c", "Exists").matches(labels)
    assert Requirement("c", "DoesNotExist").matches(labels)
    assert Requirement("a", "Gt", ("0",)).matches(labels)
    assert not Requirement("b", "Gt", ("0",)).matches(labels)  # not an integer


def test_nil_and_empty_label_selectors():
    assert as_selector(None) is NOTHING and not NOTHING.matches({})
    assert not NOTHING.empty()
    empty = parse_label_selector({}, [])
    assert as_selector(empty) == EVERYTHING and EVERYTHING.empty()
    sel = parse_label_selector({"matchLabels": {"app": "web"},
                                "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}, [])
    assert isinstance(sel, LabelSelector)
    assert as_selector(sel).matches({"app": "web"})
    assert not as_selector(sel).matches({"app": "web", "tier": "db"})


def test_selector_from_set_is_sorted_and_anded():
    s = selector_from_set({"b": "2", "a": "1"})
    assert [r.key for r in s.requirements] == ["a", "b"]
    assert s.matches({"a": "1", "b": "2", "c": "3"}) and not s.matches({"a": "1"})


@pytest.mark.parametrize("raw,msg", [
    ({"matchExpressions": [{"key": "a", "operator": "Has"}]}, "'Has' is not a valid selector operator"),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}, "must be specified"),
    ({"matchLabels": {"a/b/c": "x"}}, "prefix of a label key"),
    ({"matchLabels": {"a": "-x"}}, "a label value must be"),
    ({"matchLabel": {"a": "x"}}, "unknown field 'matchLabel'"),
])
def test_label_selector_validation(raw, msg):
    with pytest.raises(CaseError) as e:
        parse_label_selector(raw, ["sel"])
    assert msg in str(e.value)


# The quick check of a whole label map must accept exactly what the per-item check
# (IsQualifiedName, IsValidLabelValue) accepts.
_LABEL_CHARS = st.sampled_from(list("aZ09-_./\n é") + ["x" * 30])


@given(st.lists(st.lists(_LABEL_CHARS, max_size=5).map("".join), min_size=1, max_size=3),
       st.lists(st.one_of(st.lists(_LABEL_CHARS, max_size=4).map("".join), st.integers(), st.none()),
                min_size=1, max_size=3))
def test_quick_label_map_check_agrees_with_the_item_checks(keys, values):
    raw = dict(zip(keys, values))
    ok = all(qualified_name_error(k) is None and label_value_error(v) is None for k, v in raw.items())
    assert valid_labels_dict(raw) is ok
    if ok:
        assert parse_labels(raw, []) == raw
    else:
        with pytest.raises(CaseError):
            parse_labels(raw, [])


@pytest.mark.parametrize("n", [0, 1, 2, 62, 63, 64, 65])
@pytest.mark.parametrize("end", ["a", "-", "\n"])
def test_quick_label_value_check_at_the_length_limit(n, end):
    value = ("a" * (n - 1) + end) if n else ""
    ok = label_value_error(value) is None
    assert ok is (n <= 63 and (n == 0 or end == "a"))
    assert valid_labels_dict({"k": value}) is ok
