"""The scheduler's own verdict on a pod that fits no node: ``FitError.Error()``, the
message of its FailedScheduling event and PodScheduled condition, as the case's version
words it (framework/types.go; core/generic_scheduler.go before 1.21). A function of the
cycle's records (each node's filter status, PreFilter's, PostFilter's and the
preemption's outcome): reporting only, never an expectation.

How the wording changed:

* up to 1.23: ``0/N nodes are available: <histogram>.``, the histogram being
  ``"<count> <reason>"`` for every reason of every node's status, sorted as strings
  (so "10 x" before "2 y"), joined by ", ". From 1.19 (PR #92797) a PreFilter
  rejection is a FitError whose every node carries PreFilter's status.
* 1.24 (PR #107775): PostFilter's message is appended after a space; DefaultPreemption
  prefixes its own with ``preemption: `` (``preemption: 0/N nodes are available: 2 No
  preemption victims found for incoming pod, 2 Preemption is not helpful for
  scheduling.``).
* 1.25 (PR #110894): ``0/N nodes are available:`` then `` <PreFilter message>.`` when
  PreFilter rejected the pod, else `` <histogram>.`` (left out when empty), then
  `` <PostFilter message>.``: a PostFilter message that ends with a period ends with
  two (issue #123301).
* 1.30: the PostFilter message is appended without the extra period.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from kspread.engine.framework.interface import StatusView
from kspread.engine.framework.status import Code, Status
from kspread.engine.versions import Version

if TYPE_CHECKING:
    from kspread.engine.scheduler import CycleResult

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"


def prefilter_rejection_is_fit_error(v: Version) -> bool:
    """A PreFilter plugin's Unschedulable status is a FitError, every node carrying it
    (PR #92797, 1.19); before, the cycle failed with the status as its error."""
    return v.minor >= 19


def appends_post_filter_message(v: Version) -> bool:
    """FitError carries PostFilter's message (Diagnosis.PostFilterMsg) and DefaultPreemption
    prefixes its messages with "preemption: " (PR #107775, 1.24)."""
    return v.minor >= 24


def separates_pre_filter_message(v: Version) -> bool:
    """The PreFilter message stands alone instead of counted once per node, each part
    ends with a period (PR #110894, 1.25)."""
    return v.minor >= 25


def doubles_post_filter_period(v: Version) -> bool:
    """The PostFilter message gets a period of its own, after the one it ends with
    (1.25 to 1.29; issue #123301, fixed in 1.30)."""
    return 25 <= v.minor <= 29


def reason_histogram(statuses: Mapping[str, Status]) -> list[str]:
    """``sortReasonsHistogram``: "<count> <reason>" for every reason of every node's
    status, sorted as strings."""
    counts: Counter[str] = Counter()
    if isinstance(statuses, StatusView) and statuses._dict is None:
        per_id = np.bincount(statuses.ids, minlength=len(statuses.table)) if len(statuses.ids) else \
            np.zeros(len(statuses.table), np.intp)
        for name in statuses.overrides:
            j = statuses.names.index(name)
            per_id[int(statuses.ids[j])] -= 1
        for k, st in enumerate(statuses.table):
            for reason in st.reasons:
                counts[reason] += int(per_id[k])
        for st in statuses.overrides.values():
            for reason in st.reasons:
                counts[reason] += 1
    else:
        for st in statuses.values():
            for reason in st.reasons:
                counts[reason] += 1
    return sorted(f"{n} {reason}" for reason, n in counts.items() if n > 0)


def fit_error_message(v: Version, num_all_nodes: int, statuses: Mapping[str, Status],
                      pre_filter: Status | None = None, post_filter_msg: str = "") -> str:
    """``FitError.Error()`` as version ``v`` writes it."""
    head = NO_NODE_AVAILABLE_MSG.format(num_all_nodes)
    pre_msg = pre_filter.message if pre_filter is not None and not pre_filter.is_success() else ""
    post = post_filter_msg if appends_post_filter_message(v) else ""
    if not separates_pre_filter_message(v):
        msg = f"{head}: {', '.join(reason_histogram(statuses))}."
        return msg + (" " + post if post else "")
    msg = head + ":"
    if pre_msg:
        msg += f" {pre_msg}."
    else:
        hist = reason_histogram(statuses)
        if hist:
            msg += f" {', '.join(hist)}."
    if post:
        msg += f" {post}." if doubles_post_filter_period(v) else f" {post}"
    return msg


def preemption_message(v: Version, r: CycleResult) -> str:
    """DefaultPreemption's PostFilter message as upstream words it (empty when it
    nominated a node, or before 1.24): ``preemption: `` then the pod's ineligibility, or
    the FitError of the nodes where preemption cannot help and of the dry run's
    failures."""
    st = r.post_filter_status
    if st is None or st.is_success() or st.code == Code.ERROR or not appends_post_filter_message(v):
        return ""
    if st.plugin != "DefaultPreemption":
        return st.message
    out = r.preemption
    statuses = r.statuses
    if out is not None and (out.potential or st.message == PREEMPTION_NOT_HELPFUL):
        potential = set(out.potential)
        inner: dict[str, Status] = {}
        for node in statuses:
            if node not in potential:
                inner[node] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (PREEMPTION_NOT_HELPFUL,))
            elif node in out.dry_run and not out.dry_run[node].is_success():
                inner[node] = out.dry_run[node]
        if out.candidates:  # extenders left no candidate: SelectCandidate's message
            return "preemption: " + st.message
        return "preemption: " + fit_error_message(v, len(inner), inner)
    return "preemption: " + st.message


def verdict(v: Version, r: CycleResult) -> str | None:
    """The FailedScheduling message of the cycle ``r``: None when it selected a node,
    failed with an error, or its per-node records are gone (a compacted cycle)."""
    if r.error or r.selected or r.compacted:
        return None
    pre = r.pre_filter_status
    statuses = r._statuses if isinstance(r._statuses, StatusView) else r.statuses
    if not statuses:
        return None
    if pre is not None and not pre.is_success() and not prefilter_rejection_is_fit_error(v):
        return None  # not a FitError: the cycle's error (kspread does not model its text before 1.19)
    return fit_error_message(v, len(statuses), statuses, pre, preemption_message(v, r))
