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

from collections.abc import Iterable
from typing import Any

from kspread.workflow.runner import _MISSING, EXPECT_KEYS, Verdict

MAX_NODES = 200
MAX_PODS = 24
MAX_CYCLES = 200
MAX_TAINTS = 6  # taints of a node in the picture; the rest counted
MAX_LABELS = 8  # labels of a node the plugins read; the rest counted


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


REPORTED_KEYS = (*EXPECT_KEYS, "attempts", "ties", "placementOrder", "races", "timeline", "schedulingError", "verdict")


def actual_entry(actual: dict[str, Any]) -> dict[str, Any]:
    """The ``actual`` of an entry: the results in the shape of ``expect`` and what kspread
    reports beside them (``attempts``, ``ties``, ``schedulingError``, ``verdict``)."""
    out = {k: actual[k] for k in REPORTED_KEYS if k in actual}
    if "ties" in out:  # (plain mappings: the runner's carry the scheduler for every node)
        out["ties"] = {p: dict(t) for p, t in out["ties"].items()}
    return out


def case_entry(doc: Any, v: Verdict, pictures: bool = False, all_ties: bool = False) -> dict[str, Any]:
    """One case's entry (``doc`` a ``kspread.format.loader.CaseDoc``); ``all_ties``: each
    tie with every tied node, not the first ``TIE_NAMES``."""
    entry: dict[str, Any] = {"file": doc.file, "line": doc.line, "name": doc.name, "passed": v.passed}
    if v.case is not None:
        entry["version"] = str(v.case.version)
        if v.case.tags:  # e.g. imported-without-owners (kspread import)
            entry["tags"] = list(v.case.tags)
    if v.error is not None:
        entry["error"] = v.error
    if v.outcome is not None:
        entry["actual"] = actual_entry(v.outcome.actual)
        sched = v.outcome.scheduler
        if all_ties and entry["actual"].get("ties") and sched is not None:
            entry["actual"]["ties"] = {k: sched.tie_summary(k, None) for k in entry["actual"]["ties"]}
    if not v.passed and v.case is not None:
        entry["expected"] = jsonable(v.case.expect)
        entry["differences"] = jsonable(differences(v))
    if not v.passed:
        entry["message"] = v.message
        if v.why:
            entry["why"] = v.why
    if pictures and v.case is not None:
        entry["cluster"] = cluster_picture(v)
    return entry


def _zone(labels: Any) -> str:
    from kspread.engine.model import BETA_ZONE_LABEL, ZONE_LABEL

    return str(labels.get(ZONE_LABEL) or labels.get(BETA_ZONE_LABEL) or "")


def read_label_keys(case: Any) -> list[str]:
    """The node label keys the scheduling of the case's incoming pods reads: their
    nodeSelector, node affinity (required and preferred), topology spread constraints
    and pod (anti-)affinity topology keys, and the zone labels (the default spreading of
    SelectorSpread and PodTopologySpread; their hostname label is the node's name)."""
    from kspread.engine.model import BETA_ZONE_LABEL, ZONE_LABEL

    keys: dict[str, None] = {}
    for pod in case.incoming:
        keys.update(dict.fromkeys(pod.node_selector))
        aff = pod.affinity
        na = aff.node_affinity if aff is not None else None
        if na is not None:
            terms = [*(na.required or ()), *(t.preference for t in na.preferred)]
            for term in terms:
                keys.update(dict.fromkeys(r.key for r in term.match_expressions))
        for rules in (aff.pod_affinity, aff.pod_anti_affinity) if aff is not None else ():
            if rules is not None:
                keys.update(dict.fromkeys(t.topology_key for t in rules.required))
                keys.update(dict.fromkeys(t.term.topology_key for t in rules.preferred))
        keys.update(dict.fromkeys(c.topology_key for c in pod.topology_spread_constraints))
    keys.update(dict.fromkeys((ZONE_LABEL, BETA_ZONE_LABEL)))
    return list(keys)


def _node_marks(node: Any, keys: list[str]) -> dict[str, Any]:
    """A node's taints (``key=value:Effect``) and the labels of ``keys`` it has, bounded."""
    taints = [f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}" for t in node.taints]
    labels = [f"{k}={node.labels[k]}" for k in keys if k in node.labels]
    return {"taints": taints[:MAX_TAINTS], "taintsTotal": len(taints),
            "labels": labels[:MAX_LABELS], "labelsTotal": len(labels)}


def cluster_picture(v: Verdict) -> dict[str, Any]:
    """What the HTML report draws of a case: its nodes (zone, the pods declared on
    them, the taints and the labels the plugins read), the incoming pods, and each
    cycle (pod, bound node, nominated node, victims); of the last cycle, each score
    plugin's weight and weighted scores (``weights``, ``weighted``), which with the
    extenders' make up the totals. Bounded: a 5,000-node case draws ``MAX_NODES``
    nodes and counts the rest."""
    case = v.case
    assert case is not None
    nodes = case.cluster.nodes
    pods_on: dict[str, list[str]] = {}
    for p in case.cluster.pods:
        if p.node_name:
            pods_on.setdefault(p.node_name, []).append(p.key)
    keys = read_label_keys(case)
    drawn = []
    for n in nodes[:MAX_NODES]:
        on = pods_on.get(n.name, [])
        drawn.append({"name": n.name, "zone": _zone(n.labels), "pods": on[:MAX_PODS], "podsTotal": len(on),
                      **_node_marks(n, keys)})
    out: dict[str, Any] = {"nodes": drawn, "nodesTotal": len(nodes),
                           "incoming": [p.key for p in case.incoming[:MAX_CYCLES]],
                           "sequence": case.is_sequence}
    if v.outcome is not None and v.outcome.cycles and v.outcome.scheduler is not None:
        last = v.outcome.cycles[-1]
        if last.scores is not None:
            out["weights"] = {sp.label: sp.weight for sp in v.outcome.scheduler.framework.score_plugins}
            out["weighted"] = {p: dict(per_node) for p, per_node in last.scores.weighted.items()}
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
        world = v.outcome.scheduler.sequence if v.outcome.scheduler is not None else None
        if world is not None:
            out["steps"] = step_marks(world.records)
    return out


def step_marks(records: Iterable[Any]) -> list[dict[str, Any]]:
    """A sequence's steps for the cycle picture: each with the number of cycles run before
    it (``before``), what it was, the sequence clock, and the pods it evicted, kept,
    created and moved (each list bounded by ``MAX_PODS``, with its length). Batches of
    created pods (``create ...``) are the cycles themselves and are left out. Bounded by
    ``MAX_CYCLES`` steps."""
    out: list[dict[str, Any]] = []
    for r in records:
        if r.what.startswith("create "):
            continue
        if len(out) == MAX_CYCLES:
            break
        m: dict[str, Any] = {"before": r.first_cycle, "step": r.what, "clock": r.clock}
        for k in ("evicted", "kept", "created", "moved"):
            pods = list(getattr(r, k))
            if pods:
                m[k] = pods[:MAX_PODS]
                if len(pods) > MAX_PODS:
                    m[k + "Total"] = len(pods)
        out.append(m)
    return out
