"""The array formulas of the resource scorers against straightforward per-node
references (Python integers, float64 in upstream's order), over many nodes at once:
zero capacity, over-commit, kspread's 2**62 "unlimited" allocatable, mixed presence."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kspread.engine.apis.config import ShapePoint
from kspread.engine.plugins.imagelocality import calculate_priorities
from kspread.engine.plugins.interpodaffinity import normalize_score_array
from kspread.engine.plugins.nodematch import default_normalize_scores
from kspread.engine.plugins.resource_allocation import (
    UsageColumn,
    balanced_change_scores,
    balanced_std_scores,
    broken_linears,
    least_requested_scores,
    masked_weighted_averages,
    most_requested_scores,
    rtcr_resource_scores,
    weighted_averages,
)
from kspread.engine.versions import NEWEST_MINOR, OLDEST_MINOR, Version

UNLIMITED = 2**62
amount = st.one_of(st.integers(0, 10**6), st.integers(0, 64 << 30), st.just(UNLIMITED), st.just(0))
pairs = st.lists(st.tuples(amount, amount), min_size=1, max_size=40)


def _cols(ps):
    return np.array([r for r, _ in ps], np.int64), np.array([c for _, c in ps], np.int64)


def _least(r, c, m):
    return 0 if c == 0 or r > c else (c - r) * m // c


def _most(r, c, m, cap):
    if c == 0:
        return 0
    if r > c:
        if not cap:
            return 0
        r = c
    return r * m // c


@given(pairs, st.sampled_from([10, 100]))
def test_least_and_most_requested_match_integer_reference(ps, m):
    r, c = _cols(ps)
    assert least_requested_scores(r, c, m).tolist() == [_least(a, b, m) for a, b in ps]
    for cap in (False, True):
        assert most_requested_scores(r, c, m, cap).tolist() == [_most(a, b, m, cap) for a, b in ps]


def _go_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _broken(shape, p):
    for i, pt in enumerate(shape):
        if p <= pt.utilization:
            if i == 0:
                return shape[0].score
            prev = shape[i - 1]
            return prev.score + _go_div((pt.score - prev.score) * (p - prev.utilization),
                                        pt.utilization - prev.utilization)
    return shape[-1].score


shapes = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 100)), min_size=1, max_size=5).map(
    lambda pts: tuple(ShapePoint(u, s) for u, s in sorted(dict(pts).items())))


@given(shapes, pairs, st.booleans())
def test_rtcr_matches_reference(shape, ps, floor):
    r, c = _cols(ps)
    want = []
    for a, b in ps:
        if b == 0 or a > b:
            p = 100
        elif floor:
            p = a * 100 // b
        else:
            p = 100 - (b - a) * 100 // b
        want.append(_broken(shape, p))
    assert rtcr_resource_scores(shape, r, c, floor).tolist() == want
    assert broken_linears(shape, np.arange(-5, 106)).tolist() == [_broken(shape, p) for p in range(-5, 106)]


def _std_score(fracs_in, m):
    fr, total = [], 0.0
    for req, alloc in fracs_in:
        if alloc == 0:
            continue
        f = min(float(req) / float(alloc), 1.0)
        total += f
        fr.append(f)
    std = 0.0
    if len(fr) == 2:
        std = math.fabs((fr[0] - fr[1]) / 2)
    elif len(fr) > 2:
        mean = total / float(len(fr))
        acc = 0.0
        for f in fr:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(len(fr)))
    return int((1 - std) * float(m))


ROWS = st.integers(1, 4).flatmap(
    lambda k: st.lists(st.lists(st.tuples(amount, amount), min_size=k, max_size=k), min_size=1, max_size=30))


@settings(max_examples=60)
@given(ROWS, st.data())
def test_balanced_std_matches_reference_with_mixed_presence(rows, data):
    k = len(rows[0])
    present = [[data.draw(st.booleans()) for _ in range(k)] for _ in rows]
    cols = []
    for j in range(k):
        req = np.array([row[j][0] for row in rows], np.int64)
        alloc = np.array([row[j][1] for row in rows], np.int64)
        cols.append((req, alloc, np.array([p[j] for p in present], bool)))
    want = [_std_score([row[j] for j in range(k) if pres[j]], 100) for row, pres in zip(rows, present)]
    assert balanced_std_scores(cols, 100, len(rows)).tolist() == want


@settings(max_examples=60)
@given(ROWS, st.booleans(), st.data())
def test_balanced_change_matches_reference(rows, mixed, data):
    # from 1.36: 50 + (50 + with - without) / 2 (Go's division), each the std score of
    # the resources a node counts; the form that checks presence once (issue 19) and
    # the masked one
    k = len(rows[0])
    present = [[data.draw(st.booleans()) if mixed else True for _ in range(k)] for _ in rows]
    added = [data.draw(st.integers(0, 10**6)) for _ in range(k)]
    cols = []
    for j in range(k):
        before = np.array([row[j][0] for row in rows], np.int64)
        alloc = np.array([row[j][1] for row in rows], np.int64)
        cols.append(UsageColumn(1, alloc, before + added[j], before, np.array([p[j] for p in present], bool)))

    def std(row, pres, extra):
        return _std_score([(row[j][0] + extra[j], row[j][1]) for j in range(k) if pres[j]], 100)

    want = [50 + _go_div(50 + std(row, pres, added) - std(row, pres, [0] * k), 2) for row, pres in zip(rows, present)]
    assert balanced_change_scores(cols, 100, len(rows)).tolist() == want


@given(st.lists(st.tuples(amount, amount, st.booleans()), min_size=1, max_size=20), st.integers(1, 5))
def test_weighted_average_leaves_out_absent_resources(rows, w):
    req = np.array([r for r, _, _ in rows], np.int64)
    alloc = np.array([a for _, a, _ in rows], np.int64)
    present = np.array([p for _, _, p in rows], bool)
    col = UsageColumn(w, alloc, req, req, present)
    got = weighted_averages([col, col], lambda r, c: least_requested_scores(r, c, 100), len(rows))
    assert got.tolist() == [(_least(r, a, 100) if p else 0) for r, a, p in rows]


@settings(max_examples=80)
@given(st.integers(1, 30), st.lists(st.tuples(st.integers(0, 100), st.booleans()), min_size=1, max_size=3),
       st.booleans(), st.booleans(), st.data())
def test_weighted_average_without_masks_matches_the_masked_form(n, specs, most, mixed, data):
    # the form without masks (every resource present on every node, a positive weight
    # sum) against the masked form every node went through before (issue 19)
    cols = []
    for w, _ in specs:
        req = np.array(data.draw(st.lists(amount, min_size=n, max_size=n)), np.int64)
        alloc = np.array(data.draw(st.lists(amount, min_size=n, max_size=n)), np.int64)
        present = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)) if mixed else [True] * n)
        cols.append(UsageColumn(w, alloc, req, req, present))
    per = ((lambda r, c: most_requested_scores(r, c, 100, True)) if most
           else (lambda r, c: least_requested_scores(r, c, 100)))
    assert weighted_averages(cols, per, n).tolist() == masked_weighted_averages(cols, per, n).tolist()


@given(st.integers(OLDEST_MINOR, NEWEST_MINOR), st.integers(0, 8), st.integers(1, 30))
def test_image_sums_of_zero_score_zero(minor, containers, n):
    # ImageLocality returns zeros without calculatePriority when no node has an image
    # of the pod: the sums are 0, below the minimum threshold (issue 19)
    got = calculate_priorities(np.zeros(n, np.int64), containers, Version(minor))
    assert got.tolist() == [0] * n


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=30), st.booleans())
def test_default_normalize(scores, reverse):
    arr = np.array(scores, np.int64)
    mx = max(max(scores), 0)
    want = ([100] * len(scores) if reverse else scores) if mx == 0 else [
        (100 - 100 * s // mx) if reverse else 100 * s // mx for s in scores]
    assert default_normalize_scores(100, reverse, arr).tolist() == want


@given(st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=30), st.booleans())
def test_interpod_normalize_with_negative_scores(scores, observed):
    lo, hi = min(scores), max(scores)
    if not observed:
        lo, hi = min(lo, 0), max(hi, 0)
    want = [int(float(100) * (float(s - lo) / float(hi - lo))) if hi - lo > 0 else 0 for s in scores]
    assert normalize_score_array(np.array(scores, np.int64), 100, observed).tolist() == want
