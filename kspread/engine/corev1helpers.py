"""Helpers of the core API types that the model and the plugins share: does a
toleration tolerate a taint, which taint goes untolerated. They sit below the plugins
(as upstream's sit with the types), so ``kspread.engine.model`` uses them without
reaching up into a plugin.

Upstream: ``Toleration.ToleratesTaint`` (k8s.io/api/core/v1/toleration.go) and
component-helpers/scheduling/corev1 (TolerationsTolerateTaint,
FindMatchingUntoleratedTaint; pkg/apis/core/v1/helper before 1.21); before the
framework the same logic lived in the PodToleratesNodeTaints predicate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from kspread.engine.model import Taint, Toleration


def canonical_int64(s: str) -> int | None:
    """The value of ``s`` when it is a decimal integer in canonical form
    (apimachinery ``content.IsDecimalInteger``: "0", or an optional "-" and a digit
    1-9 followed by digits; no "+", no leading zero, no "-0") that fits in an int64
    (``strconv.ParseInt(s, 10, 64)``); None otherwise."""
    digits = s.removeprefix("-")
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    if digits[0] == "0" and (len(digits) > 1 or s.startswith("-")):
        return None
    v = int(s)
    return v if -(2**63) <= v < 2**63 else None


def toleration_tolerates(t: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint``, the one toleration match of kspread: effect and
    key must match when set; Exists matches any value, Equal (or empty) the same
    value; Lt / Gt compare the taint's value with the toleration's as int64
    (``taint < toleration`` for Lt, ``taint > toleration`` for Gt), and either value
    not being a canonical decimal integer means no match. Any other operator
    tolerates nothing.

    Lt and Gt exist only with the TaintTolerationComparisonOperators gate (alpha from
    1.35); without it the API server refuses them, and ``kspread.format.case`` refuses them
    the same way, so a toleration that reaches this function with Lt / Gt is one the
    gate admitted (upstream passes the gate here and answers no match when it is off,
    which no kspread case can reach)."""
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    op = t.operator
    if op == "Exists":
        return True
    if op in ("", "Equal"):
        return t.value == taint.value
    if op in ("Lt", "Gt"):
        want = canonical_int64(t.value)
        have = canonical_int64(taint.value)
        if want is None or have is None:
            return False
        return have < want if op == "Lt" else have > want
    return False


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(toleration_tolerates(t, taint) for t in tolerations)


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: Iterable[Toleration], include: Callable[[Taint], bool]
) -> Taint | None:
    """``FindMatchingUntoleratedTaint``: the first taint (node order) that ``include``
    selects and no toleration tolerates; None when every such taint is tolerated."""
    tols = tuple(tolerations)
    for taint in taints:
        if include(taint) and not tolerations_tolerate_taint(tols, taint):
            return taint
    return None
