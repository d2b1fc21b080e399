"""Explain a scheduling cycle node by node: every filter plugin's status with its
reason, every score plugin's raw, normalized and weighted score, the extenders'
contributions and the total. Used by ``kspread explain`` and by failure reports."""

from __future__ import annotations

from typing import Iterable

from kspread.framework.status import Code, SchedulingError, Status
from kspread.scheduler import CycleResult, Scheduler


def _filter_rows(sched: Scheduler, r: CycleResult, node: str) -> list[tuple[str, str]]:
    fwk = sched.framework
    st = r.statuses.get(node)
    rows: list[tuple[str, str]] = []
    if st is not None and not st.is_success() and st.plugin and st.plugin not in {p.name for p in fwk.filter_plugins}:
        # rejected before the filters ran (PreFilter) or by an extender
        return [(st.plugin, _status(st))]
    state = r.state
    info = sched.snapshot.node_infos.get(node)
    for p in fwk.filter_plugins:
        if state is not None and p.name in state.skip_filter_plugins:
            rows.append((p.name, "Skip (PreFilter found nothing to check)"))
            continue
        if state is None or info is None:
            continue
        try:
            pst = p.filter(state, r.pod, info)
        except (SchedulingError, KeyError) as e:  # state a failed PreFilter never wrote
            rows.append((p.name, f"Error: {e}"))
            continue
        rows.append((p.name, _status(pst)))
    if st is not None and st.plugin.startswith("extender:"):
        rows.append((st.plugin, _status(st)))
    return rows


def _status(st: Status) -> str:
    return str(st.code) + (f": {st.message}" if st.reasons else "")


def explain_cycle(sched: Scheduler, r: CycleResult, nodes: Iterable[str] | None = None) -> str:
    version = sched.version
    order = [n.name for n in sched.case.cluster.nodes]
    wanted = list(nodes) if nodes is not None else order
    lines: list[str] = []
    scale = version.extender_score_scale
    prioritizers = [e for e in sched.extenders if e.prioritize is not None]
    weights = {sp.label: sp.weight for sp in sched.framework.score_plugins}
    for node in wanted:
        verdict = "feasible" if node in r.feasible else "not feasible"
        if node in r.feasible and node not in r.searched:
            verdict += " (not reached by the search: not scored)"
        lines.append(f"{node}: {verdict}")
        frows = _filter_rows(sched, r, node)
        for i, (plugin, text) in enumerate(frows):
            lines.append(f"  {'filter' if i == 0 else '':<7}{plugin:<34}{text}")
        if r.scores is not None and node in r.totals:
            first = True
            for plugin, per_node in r.scores.raw.items():
                raw = per_node.get(node)
                norm = r.scores.normalized.get(plugin, {}).get(node)
                weighted = r.scores.weighted.get(plugin, {}).get(node)
                lines.append(f"  {'score' if first else '':<7}{plugin:<34}raw {raw:<6} normalized {norm:<5} "
                             f"x{weights.get(plugin, 1)} = {weighted}")
                first = False
            for e in prioritizers:
                s = (e.prioritize or {}).get(node, 0)
                lines.append(f"  {'score' if first else '':<7}{'extender ' + e.name:<34}"
                             f"{s} x{e.weight}" + (f" x{scale}" if scale != 1 else "") + f" = {s * e.weight * scale}")
                first = False
        if node in r.totals:
            lines.append(f"  {'total':<7}{r.totals[node]}")
    if nodes is None:
        if r.selected:
            lines.append("selected: " + ", ".join(sorted(r.selected, key=order.index)))
        elif r.preemption is not None and r.preemption.nominated_node:
            victims = ", ".join(sorted(p.key for p in r.preemption.victims))
            lines.append(f"preemption: nominated {r.preemption.nominated_node}, victims [{victims}]")
        else:
            lines.append("unschedulable")
        if r.error:
            lines.append(f"scheduling error: {r.error}")
    return "\n".join(lines)


__all__ = ["explain_cycle", "Code"]
