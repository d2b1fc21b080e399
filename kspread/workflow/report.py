"""The per-case report data: what ``kspread run --json`` prints for each case, and
what the HTML and markdown reports and the GitHub annotations are written from
(``kspread.workflow.report_html``, ``kspread.workflow.report_ci``). The pytest
plugin builds the same entries, so every report reads one shape.

An entry: ``file``, ``line``, ``name``, ``passed``, ``version``; ``error`` (a case
that did not load or run, or its expected error); ``actual`` (the results in the
shape of ``expect``); for a failing case ``expected`` and ``differences`` (rows of
``key``, ``what``, ``expected``, ``actual``, ``note``) and ``message`` (the failure
report as the terminal shows it). With ``pictures``, ``cluster``: what the HTML
report draws, bounded (``MAX_NODES`` nodes, ``MAX_PODS`` pods a node, ``MAX_CYCLES``
cycles; the totals say how many there were). A file that did not read is one entry
of ``file``, ``line`` and ``error``.
"""

from __future__ import annotations

from typing import Any

from kspread.workflow.runner import _MISSING, EXPECT_KEYS, Verdict

MAX_NODES = 200
MAX_PODS = 24
MAX_CYCLES = 200


def jsonable(value: Any) -> Any:
    if value is _MISSING:
        return None
    if isinstance(value, dict):
        return {str(k): jsonable(x) for k, x in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(x) for x in value]
    return value


def differences(v: Verdict) -> list[dict[str, Any]]:
    if v.outcome is None:
        return []
    return [{"key": d.key, "what": str(what), "expected": want, "actual": have, **({"note": d.note} if d.note else {})}
            for d in v.outcome.diffs for what, want, have in d.rows]


def file_entry(path: str, error: Any) -> dict[str, Any]:
    """A file that did not read (``error`` a ``CaseError``)."""
    entry: dict[str, Any] = {"file": path}
    line = getattr(error, "line", None)
    if line:
        entry["line"] = line
    entry["error"] = str(error)
    return entry


REPORTED_KEYS = (*EXPECT_KEYS, "attempts", "ties", "timeline", "schedulingError", "verdict")


def actual_entry(actual: dict[str, Any]) -> dict[str, Any]:
    """The ``actual`` of an entry: the results in the shape of ``expect`` and what kspread
    reports beside them (``attempts``, ``ties``, ``schedulingError``, ``verdict``)."""
    return {k: actual[k] for k in REPORTED_KEYS if k in actual}


def case_entry(doc: Any, v: Verdict, pictures: bool = False) -> dict[str, Any]:
    """One case's entry (``doc`` a ``kspread.format.loader.CaseDoc``)."""
    entry: dict[str, Any] = {"file": doc.file, "line": doc.line, "name": doc.name, "passed": v.passed}
    if v.case is not None:
        entry["version"] = str(v.case.version)
        if v.case.tags:  # e.g. imported-without-owners (kspread import)
            entry["tags"] = list(v.case.tags)
    if v.error is not None:
        entry["error"] = v.error
    if v.outcome is not None:
        entry["actual"] = actual_entry(v.outcome.actual)
    if not v.passed and v.case is not None:
        entry["expected"] = jsonable(v.case.expect)
        entry["differences"] = jsonable(differences(v))
    if not v.passed:
        entry["message"] = v.message
    if pictures and v.case is not None:
        entry["cluster"] = cluster_picture(v)
    return entry


def _zone(labels: Any) -> str:
    from kspread.engine.model import BETA_ZONE_LABEL, ZONE_LABEL

    return str(labels.get(ZONE_LABEL) or labels.get(BETA_ZONE_LABEL) or "")


def cluster_picture(v: Verdict) -> dict[str, Any]:
    """What the HTML report draws of a case: its nodes (zone, the pods declared on
    them), the incoming pods, and each cycle (pod, bound node, nominated node,
    victims). Bounded: a 5,000-node case draws ``MAX_NODES`` nodes and counts the rest."""
    case = v.case
    assert case is not None
    nodes = case.cluster.nodes
    pods_on: dict[str, list[str]] = {}
    for p in case.cluster.pods:
        if p.node_name:
            pods_on.setdefault(p.node_name, []).append(p.key)
    drawn = []
    for n in nodes[:MAX_NODES]:
        on = pods_on.get(n.name, [])
        drawn.append({"name": n.name, "zone": _zone(n.labels), "pods": on[:MAX_PODS], "podsTotal": len(on)})
    out: dict[str, Any] = {"nodes": drawn, "nodesTotal": len(nodes),
                           "incoming": [p.key for p in case.incoming[:MAX_CYCLES]],
                           "sequence": case.is_sequence}
    if v.outcome is not None:
        cycles = []
        for r in v.outcome.cycles[:MAX_CYCLES]:
            c: dict[str, Any] = {"pod": r.pod.key, "node": r.bound_node}
            if r.bound_node is None and not case.is_sequence and r.selected:
                c["node"] = r.selected[0]
            pre = r.preemption
            if pre is not None and pre.nominated_node is not None:
                c["nominated"] = pre.nominated_node
                c["victims"] = sorted(p.key for p in pre.victims)
            if r.error:
                c["error"] = r.error
            cycles.append(c)
        out["cycles"] = cycles
        out["cyclesTotal"] = len(v.outcome.cycles)
    return out
