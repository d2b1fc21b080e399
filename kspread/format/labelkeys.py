"""matchLabelKeys / mismatchLabelKeys as the API server stores them.

When the API server creates a pod (pkg/registry/core/pod/strategy.go, PrepareForCreate), it
appends to the label selector of each pod affinity term a requirement ``key In (value)`` for each
of its matchLabelKeys and ``key NotIn (value)`` for each of its mismatchLabelKeys that the pod's
labels carry (gate MatchLabelKeysInPodAffinity), and, from 1.34, ``key In (value)`` to the label
selector of each topology spread constraint for its matchLabelKeys (gates
MatchLabelKeysInPodTopologySpread and MatchLabelKeysInPodTopologySpreadSelectorMerge, beta and on
in 1.34). The keys stay in the spec; the scheduler merges a spread constraint's keys again itself
(the same requirement twice selects the same pods) and reads none of an affinity term's.

A pod in a case's ``pods:`` is written as its author writes it, before admission: kspread merges
the keys as the API server and the scheduler do. A pod in ``objects:`` or in ``kspread import``'s
dump is what the API server stored, the keys already merged: ``written_pod_fields`` takes the
merged requirements off again, so that both forms mean one pod. The requirements it takes off are
exactly those the API server appended, at the end of ``matchExpressions``, in its order; a
selector that does not end with them (a pod created before the merge, or with a gate off) is left
as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

IN = "In"
NOT_IN = "NotIn"


def merged_requirements(match_keys: Any, mismatch_keys: Any, labels: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The requirements the API server appends for these keys and the pod's labels."""
    out = [{"key": k, "operator": IN, "values": [labels[k]]}
           for k in _keys(match_keys) if k in labels]
    out += [{"key": k, "operator": NOT_IN, "values": [labels[k]]}
            for k in _keys(mismatch_keys) if k in labels]
    return out


def _keys(raw: Any) -> list[str]:
    return [k for k in raw if isinstance(k, str)] if isinstance(raw, (list, tuple)) else []


def _unmerged_selector(selector: Any, appended: list[dict[str, Any]]) -> Any:
    """``selector`` without the ``appended`` requirements at the end of its matchExpressions
    (itself when it does not end with them)."""
    if not appended or not isinstance(selector, Mapping):
        return selector
    exprs = selector.get("matchExpressions")
    n = len(appended)
    if not isinstance(exprs, list) or len(exprs) < n or not all(
            isinstance(e, Mapping) and _same_requirement(e, a) for e, a in zip(exprs[-n:], appended, strict=True)):
        return selector
    out = dict(selector)
    if len(exprs) == n:
        del out["matchExpressions"]
    else:
        out["matchExpressions"] = list(exprs[:-n])
    return out


def _same_requirement(stored: Mapping[str, Any], appended: Mapping[str, Any]) -> bool:
    return (set(stored) == {"key", "operator", "values"} and stored["key"] == appended["key"]
            and stored["operator"] == appended["operator"] and stored["values"] == appended["values"])


def _unmerged_term(term: Any, labels: Mapping[str, Any]) -> Any:
    if not isinstance(term, Mapping) or "labelSelector" not in term:
        return term
    appended = merged_requirements(term.get("matchLabelKeys"), term.get("mismatchLabelKeys"), labels)
    sel = _unmerged_selector(term["labelSelector"], appended)
    if sel is term["labelSelector"]:
        return term
    return {**term, "labelSelector": sel}


def written_affinity(affinity: Any, labels: Any) -> Any:
    """A stored pod's ``affinity`` as it was written (see the module's doc)."""
    if not isinstance(affinity, Mapping) or not isinstance(labels, Mapping):
        return affinity
    out = dict(affinity)
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = affinity.get(kind)
        if not isinstance(rules, Mapping):
            continue
        new_rules = dict(rules)
        req = rules.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(req, list):
            new_rules["requiredDuringSchedulingIgnoredDuringExecution"] = [_unmerged_term(t, labels) for t in req]
        pref = rules.get("preferredDuringSchedulingIgnoredDuringExecution")
        if isinstance(pref, list):
            new_rules["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {**w, "podAffinityTerm": _unmerged_term(w["podAffinityTerm"], labels)}
                if isinstance(w, Mapping) and "podAffinityTerm" in w else w for w in pref]
        out[kind] = new_rules
    return out


def written_spread_constraints(constraints: Any, labels: Any) -> Any:
    """A stored pod's ``topologySpreadConstraints`` as they were written (see the module's doc)."""
    if not isinstance(constraints, list) or not isinstance(labels, Mapping):
        return constraints
    out = []
    for c in constraints:
        if isinstance(c, Mapping) and "labelSelector" in c:
            sel = _unmerged_selector(c["labelSelector"], merged_requirements(c.get("matchLabelKeys"), None, labels))
            if sel is not c["labelSelector"]:
                c = {**c, "labelSelector": sel}
        out.append(c)
    return out


def merge_affinity_keys(affinity: dict[str, Any], labels: Mapping[str, str]) -> None:
    """Append, in place, what the API server appends to each pod affinity term of a pod it
    creates (the backend's fake API server does not)."""
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = affinity.get(kind) or {}
        terms = list(rules.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [w["podAffinityTerm"] for w in rules.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
        for t in terms:
            if t.get("labelSelector") is None:
                continue
            extra = merged_requirements(t.get("matchLabelKeys"), t.get("mismatchLabelKeys"), labels)
            if extra:
                t["labelSelector"]["matchExpressions"] = [*(t["labelSelector"].get("matchExpressions") or ()),
                                                          *extra]


def key_conflicts(selector: Any, match_keys: Any, mismatch_keys: Any = None
                  ) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """The check of a term's or constraint's matchLabelKeys that the API server makes on the
    selector it merged them into (ValidateMatchLabelKeysAndMismatchLabelKeys): a matchLabelKey
    is refused when, after the merge, a second requirement on it follows one in matchLabels or
    matchExpressions ("exists in both matchLabelKeys and labelSelector"). Returns (index, key)
    of the keys refused whatever the pod's labels, and of those refused only when the pod has
    a label with that key (the merge adds the second requirement)."""
    if not isinstance(selector, Mapping):
        return [], []
    keys, others = _keys(match_keys), _keys(mismatch_keys)
    in_labels = set(selector["matchLabels"]) if isinstance(selector.get("matchLabels"), Mapping) else set()
    in_exprs: dict[str, int] = {}
    for e in selector.get("matchExpressions") or []:
        if isinstance(e, Mapping) and isinstance(e.get("key"), str):
            in_exprs[e["key"]] = in_exprs.get(e["key"], 0) + 1
    last = {k: i for i, k in enumerate(keys)}  # upstream reports a key at its last index
    always: list[tuple[int, str]] = []
    if_labelled: list[tuple[int, str]] = []
    for k, i in last.items():
        user = in_exprs.get(k, 0)
        merged = keys.count(k) + others.count(k)
        if (k in in_labels and user >= 1) or user >= 2:
            always.append((i, k))
        elif k in in_labels or user + merged >= 2:
            if_labelled.append((i, k))
    return sorted(always), sorted(if_labelled)


def affinity_terms(affinity: Any) -> list[tuple[tuple[Any, ...], Mapping[str, Any]]]:
    """Each pod affinity term of ``affinity`` with its path under it."""
    out: list[tuple[tuple[Any, ...], Mapping[str, Any]]] = []
    if not isinstance(affinity, Mapping):
        return out
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = affinity.get(kind)
        if not isinstance(rules, Mapping):
            continue
        req = "requiredDuringSchedulingIgnoredDuringExecution"
        pref = "preferredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(rules.get(req) or ()):
            if isinstance(t, Mapping):
                out.append(((kind, req, i), t))
        for i, w in enumerate(rules.get(pref) or ()):
            if isinstance(w, Mapping) and isinstance(w.get("podAffinityTerm"), Mapping):
                out.append(((kind, pref, i, "podAffinityTerm"), w["podAffinityTerm"]))
    return out
