"""``kspread explain --json``: each case as ``kspread run --json`` gives it (``file``,
``line``, ``name``, ``version``, ``actual``; ``error`` for a case that does not load or
run), plus ``cycles``: what explain prints, as data. Per cycle: the pod and attempt;
PreFilter's status when it rejected the pod; per node its verdict, every filter plugin's status (``code``, ``reason``, the numbers
beside it as ``detail``, ``ran`` false for a plugin after the node's first rejection),
every score plugin's raw, normalized, weight and weighted score and the total; the
PostFilter status; the selected nodes or the nomination; the scheduler's verdict and,
for a pod that fits no node, what each node lacks (the nodes closest to fitting first,
at most ``MAX_LACKING_SHOWN``)."""

from __future__ import annotations

from typing import Any

from kspread.engine.diagnosis import closest_first, verdict
from kspread.engine.scheduler import Scheduler
from kspread.workflow.explain import MAX_LACKING_SHOWN, NOT_FILTERED, CycleExplanation, _verdict
from kspread.workflow.report import actual_entry, jsonable
from kspread.workflow.runner import Outcome


def explain_entry(doc: Any, version: str, outcome: Outcome, cycles: list[CycleExplanation]) -> dict[str, Any]:
    """One case's entry (``doc`` a ``kspread.format.loader.CaseDoc``)."""
    sched = outcome.scheduler
    entry: dict[str, Any] = {"file": doc.file, "line": doc.line, "name": doc.name, "version": version,
                             "actual": jsonable(actual_entry(outcome.actual))}
    entry["cycles"] = [_cycle(sched, cx) for cx in cycles]
    return entry


def _cycle(sched: Scheduler, cx: CycleExplanation) -> dict[str, Any]:
    r = cx.result
    order = list(sched.node_names)
    weights = {sp.label: sp.weight for sp in sched.framework.score_plugins}
    out: dict[str, Any] = {"pod": r.pod.key, "attempt": r.attempt}
    pre = r.pre_filter_status
    if pre is not None and not pre.is_success():  # no filter ran on any node
        out["preFilter"] = {"plugin": pre.plugin, "code": str(pre.code), **({"reason": pre.message} if pre.reasons else {})}
    nodes = []
    feasible, searched = set(r.feasible), set(r.searched)
    for node in order:
        item: dict[str, Any] = {"node": node, "verdict": _verdict(r, node, feasible, searched, cx)}
        lacks = cx.lacks.get(node, [])
        # a node the cycle's Error status kept from being filtered: no filter ran on it
        filters, stopped = [], item["verdict"] == NOT_FILTERED
        for plugin, st in cx.filters.get(node, []):
            f: dict[str, Any] = {"plugin": plugin, "code": str(st.code)}
            if st.reasons:
                f["reason"] = st.message
            detail = "; ".join(lk.detail for lk in lacks if lk.plugin == plugin and lk.detail)
            if detail:
                f["detail"] = detail
            f["ran"] = not stopped
            stopped = stopped or not (st.is_success() or st.is_skip())
            filters.append(f)
        item["filters"] = filters
        if cx.nominated.get(node):
            item["nominatedPods"] = list(cx.nominated[node])
        if r.scores is not None and node in r.totals:
            item["scores"] = [{"plugin": p, "raw": per_node.get(node),
                               "normalized": r.scores.normalized.get(p, {}).get(node),
                               "weight": weights.get(p, 1), "weighted": r.scores.weighted.get(p, {}).get(node)}
                              for p, per_node in r.scores.raw.items()]
        if node in r.totals:
            item["total"] = r.totals[node]
        nodes.append(item)
    out["nodes"] = nodes
    if r.post_filter_ran and r.post_filter_status is not None:
        st = r.post_filter_status
        out["postFilter"] = {"plugin": st.plugin, "code": str(st.code), **({"reason": st.message} if st.reasons else {})}
    if r.selected:
        out["selected"] = sorted(r.selected, key=order.index)
    elif r.preemption is not None and r.preemption.nominated_node:
        out["preemption"] = {"node": r.preemption.nominated_node,
                             "victims": sorted(p.key for p in r.preemption.victims)}
    said = verdict(sched.version, r)
    if said is not None:
        out["verdict"] = said
        closest = closest_first(cx.lacks, order)[:MAX_LACKING_SHOWN]
        out["whatItTakes"] = [{"node": n, "needs": [lk.need for lk in cx.lacks[n]]} for n in closest]
    if r.error:
        out["schedulingError"] = r.error
    return out
