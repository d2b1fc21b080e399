"""kspread's model as Kubernetes API JSON (the parts the scheduler reads): what an HTTP
extender is sent (``kspread.engine.extender``) and what a backend is given
(``kspread.workflow.backend``). Empty fields are left out, as Go's encoding/json leaves
out the ``omitempty`` fields of upstream's types."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def quantity(name: str, amount: int) -> str:
    """A resource amount as a quantity string: cpu in millicores (whole cores plainly),
    anything else in units."""
    if name == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    return str(amount)


def resources(m: Mapping[str, int]) -> dict[str, str]:
    return {k: quantity(k, v) for k, v in m.items()}


def requirement(r: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"key": r.key, "operator": r.op}
    if r.values:
        out["values"] = list(r.values)
    return out


def label_selector(s: Any) -> dict[str, Any] | None:
    if s is None:
        return None
    out: dict[str, Any] = {}
    if s.match_labels:
        out["matchLabels"] = dict(s.match_labels)
    if s.match_expressions:
        out["matchExpressions"] = [requirement(r) for r in s.match_expressions]
    return out


def node_selector_term(t: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if t.match_expressions:
        out["matchExpressions"] = [requirement(r) for r in t.match_expressions]
    if t.match_fields:
        out["matchFields"] = [requirement(r) for r in t.match_fields]
    return out


def pod_affinity_term(t: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"topologyKey": t.topology_key}
    if t.label_selector is not None:
        out["labelSelector"] = label_selector(t.label_selector)
    if t.namespaces:
        out["namespaces"] = list(t.namespaces)
    if t.namespace_selector is not None:
        out["namespaceSelector"] = label_selector(t.namespace_selector)
    if t.match_label_keys:
        out["matchLabelKeys"] = list(t.match_label_keys)
    if t.mismatch_label_keys:
        out["mismatchLabelKeys"] = list(t.mismatch_label_keys)
    return out


def pod_affinity(rules: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rules.required:
        out["requiredDuringSchedulingIgnoredDuringExecution"] = [pod_affinity_term(t) for t in rules.required]
    if rules.preferred:
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w.weight, "podAffinityTerm": pod_affinity_term(w.term)} for w in rules.preferred]
    return out


def affinity(a: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    na = a.node_affinity
    if na is not None:
        n: dict[str, Any] = {}
        if na.required is not None:
            n["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [node_selector_term(t) for t in na.required]}
        if na.preferred:
            n["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": p.weight, "preference": node_selector_term(p.preference)} for p in na.preferred]
        out["nodeAffinity"] = n
    if a.pod_affinity is not None:
        out["podAffinity"] = pod_affinity(a.pod_affinity)
    if a.pod_anti_affinity is not None:
        out["podAntiAffinity"] = pod_affinity(a.pod_anti_affinity)
    return out


def tolerations(ts: Any) -> list[dict[str, Any]]:
    # (tolerationSeconds: the taint manager's, which a sequence's steps make act)
    return [{**{k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value),
                                  ("effect", t.effect)) if v},
             **({"tolerationSeconds": t.seconds} if t.seconds is not None else {})} for t in ts]


def spread_constraint(c: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"maxSkew": c.max_skew, "topologyKey": c.topology_key,
                           "whenUnsatisfiable": c.when_unsatisfiable}
    if c.label_selector is not None:
        out["labelSelector"] = label_selector(c.label_selector)
    if c.min_domains is not None:
        out["minDomains"] = c.min_domains
    if c.node_affinity_policy:
        out["nodeAffinityPolicy"] = c.node_affinity_policy
    if c.node_taints_policy:
        out["nodeTaintsPolicy"] = c.node_taints_policy
    if c.match_label_keys:
        out["matchLabelKeys"] = list(c.match_label_keys)
    return out
