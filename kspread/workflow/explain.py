"""Explain scheduling cycles as they ran: node by node, every filter plugin's status
with its reason, every score plugin's raw, normalized and weighted score, the
extenders' contributions and the total; when PostFilter ran, the preemption: the
potential nodes, each candidate with its victims and PDB violations, why the other
nodes are not candidates, and which criterion of pickOneNodeForPreemption decided.
Used by ``kspread explain`` and by failure reports.

Explain never contradicts the run. The verdicts (feasible or not, each node's status,
scores, totals, the preemption) are the cycle's own records (``CycleResult``,
``PreemptionOutcome``). What the cycle does not record, the status of every filter
plugin where the cycle stops at the first failure, is computed while the cluster is
as the cycle saw it: ``capture`` runs through ``run_case``'s ``observe`` hook, after
the cycle and before its binding or preemption changes the cluster, and calls
``Framework.filter_plugin_statuses``. That hook, that method and the result records
are the whole interface explain reads the engine through. Should a re-computed
plugin status disagree with the cycle's record, the report says so instead of
picking one.

A failure report of a case of one incoming pod explains the run itself: ``run_loaded``
compares the cycle's results as soon as it ends and, when they differ, ``capture``
records the nodes the report explains (``failure_nodes``) before the binding. A
sequence's failure is known only at its end: its report re-runs the case with
``capture`` on (runs are deterministic) and checks that the re-run's results are the
reported ones (``kspread.workflow.runner.failure_explanation``: the runner runs, explain
reads and draws; this module imports no runner).

Compact by default (``explain_compact``: one row per node, rich tables of plain text
that fit the width given), every plugin in detail with ``verbose`` (``explain_cycles``).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kspread.engine.diagnosis import Lack, closest_first, node_lacks, verdict
from kspread.engine.framework.status import Code, Status
from kspread.engine.plugins.defaultpreemption import LATEST_START_TIME, MAX_INT32, SMALLEST_PRIORITY_SUM, TIE
from kspread.engine.plugins.dynamicresources import NAME as DRA
from kspread.engine.plugins.dynamicresources import DRAState, to_allocate
from kspread.engine.scheduler import CycleResult, PreemptionOutcome, Scheduler, wrap_int64

if TYPE_CHECKING:
    from kspread.format.case import Case

MAX_VALUES_SHOWN = 10  # per criterion of the node choice, and of the selected nodes; the rest is counted
MAX_NODES_EXPLAINED = 10  # per failure report: the first nodes its differences name; the rest is counted
MAX_LACKING_SHOWN = 5  # nodes under "what would it take"; the rest is counted
MAX_LACKING_SCANNED = 50  # nodes beyond those shown whose lacks are computed for it


@dataclass
class CycleExplanation:
    """One cycle's result plus what only the cluster as the cycle saw it can tell."""

    result: CycleResult
    # node -> (filter plugin, status) for every filter plugin, in the profile's order
    filters: dict[str, list[tuple[str, Status]]] = field(default_factory=dict)
    # node -> the nominated pods its filters made room for (equal or higher priority)
    nominated: dict[str, list[str]] = field(default_factory=dict)
    # node -> what it lacks for the pod, for each filter plugin that rejects it
    lacks: dict[str, list[Lack]] = field(default_factory=dict)


def capture(sched: Scheduler, r: CycleResult, nodes: Iterable[str] | None = None) -> CycleExplanation:
    """Record the filter plugins' statuses of the cycle ``r`` just ran, for ``nodes``
    (default: every node). Call it only from ``run_case``'s ``observe`` hook."""
    cx = CycleExplanation(r)
    fwk = sched.framework
    wanted = list(nodes) if nodes is not None else sched.order
    pre = r.pre_filter_status
    for node in wanted:
        info = sched.snapshot.node_infos.get(node)
        if info is None or r.state is None or (pre is not None and not pre.is_success()):
            continue
        cx.filters[node] = fwk.filter_plugin_statuses(r.state, r.pod, info)
        cx.nominated[node] = [p.key for p in fwk.nominated_pods_for(r.pod, node)]
        cx.lacks[node] = node_lacks(fwk, r.state, r.pod, info, cx.filters[node])
    if not r.selected and not r.error and r.state is not None and (pre is None or pre.is_success()):
        # a pod that fits no node: what the nodes closest to fitting lack, also among the
        # nodes not shown (those preemption might help first, at most MAX_LACKING_SCANNED)
        statuses = r.statuses
        rest = [n for n in sched.order if n not in cx.lacks and n in sched.snapshot.node_infos]
        rest.sort(key=lambda n: statuses[n].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE if n in statuses else True)
        for node in rest[:MAX_LACKING_SCANNED]:
            info = sched.snapshot.node_infos[node]
            cx.lacks[node] = node_lacks(fwk, r.state, r.pod, info, fwk.filter_plugin_statuses(r.state, r.pod, info))
    return cx


def failure_nodes(case: Case, nodes: Sequence[str]) -> list[str]:
    """The nodes a failure report explains: the first ``MAX_NODES_EXPLAINED`` of
    ``nodes`` (those its differences name, in first-mention order); when none is named,
    every node of a small cluster (20 at most), else none."""
    if nodes:
        return list(nodes[:MAX_NODES_EXPLAINED])
    all_nodes = [n.name for n in case.cluster.nodes]
    return all_nodes if len(all_nodes) <= 20 else []


def capture_failure(case: Case, sched: Scheduler, r: CycleResult, nodes: Sequence[str]) -> CycleExplanation:
    """``capture`` of the nodes a failure report explains (``failure_nodes``)."""
    return capture(sched, r, failure_nodes(case, nodes))


def explain_failure(case: Case, sched: Scheduler, cycles: Sequence[CycleExplanation], nodes: Sequence[str],
                    rerun_differs: bool = False, verbose: bool = False, width: int = 80) -> str:
    """The explain block of a failure report: every cycle as it ran, for the nodes
    that differ (at most ``MAX_NODES_EXPLAINED``; all nodes, for a small cluster, when no
    difference names a node). ``cycles``: of the run itself when it captured its cycle,
    else of a re-run (``kspread.workflow.runner.failure_explanation``), which
    ``rerun_differs`` says gave other results than the run. Compact (one row per node,
    ``explain_compact``) unless ``verbose``."""
    shown = failure_nodes(case, nodes)
    if not nodes:
        title = "explain:"
    elif len(shown) < len(nodes):
        title = f"explain (nodes that differ: the first {len(shown)} of {len(nodes)}):"
    else:
        title = "explain (nodes that differ):"
    lines = [title]
    if rerun_differs:
        if any(e.http is not None for e in case.profile.extenders):
            lines.append("the HTTP extenders answered the re-run for explain otherwise than the run; the "
                         "explanation below is of the re-run")
        else:
            lines.append("kspread bug: re-running the case for explain gave other results than the run; "
                         "the explanation below is of the re-run")
    if verbose:
        lines.append(explain_cycles(sched, cycles, shown, header=case.is_sequence))
    else:
        lines.append(explain_compact(sched, cycles, shown, first=shown, header=case.is_sequence, width=width))
    return "\n".join(lines)


def explain_cycles(sched: Scheduler, cycles: Sequence[CycleExplanation], nodes: Iterable[str] | None = None,
                   header: bool = False) -> str:
    """Several cycles (a ``schedule`` sequence), each under a ``cycle N: pod P`` line
    when ``header`` is set."""
    wanted = list(nodes) if nodes is not None else None
    parts = []
    for i, cx in enumerate(cycles, 1):
        text = explain_cycle(sched, cx, wanted)
        if header:
            attempt = cx.result.attempt
            again = f" (attempt {attempt})" if attempt > 1 else ""
            text = f"cycle {i}: pod {cx.result.pod.key}{again}\n" + _indent(text)
            parts.extend(_steps_before(sched, i - 1))
        parts.append(text)
    if header:
        parts.extend(_steps_before(sched, None))
    return "\n".join(parts)


def _steps_before(sched: Scheduler, cycle: int | None) -> list[str]:
    """A sequence's steps that came before cycle ``cycle`` (0-based; None: after the last)."""
    world = getattr(sched, "sequence", None)
    return world.step_lines(cycle) if world is not None else []


def _indent(text: str) -> str:
    return "\n".join("  " + line if line else line for line in text.split("\n"))


# ---- compact: one row per node ----------------------------------------------------------


def explain_compact(sched: Scheduler, cycles: Sequence[CycleExplanation], nodes: Iterable[str] | None = None,
                    first: Sequence[str] = (), header: bool = False, width: int = 80, top: int | None = None) -> str:
    """``explain_cycles`` in one row per node: the scored nodes with each score's
    weighted value and the total, highest total first, then the others with their verdict
    (``row_reason``); the selected or nominated node marked ``*``; the nodes of ``first``
    (those that differ from the expectation) at the top of each table. ``top``: at most
    that many rows in each table, the others counted. Plain text at most ``width``
    columns wide (rich tables, no colour); a node's name is never folded."""
    wanted = list(nodes) if nodes is not None else None
    parts = []
    for i, cx in enumerate(cycles, 1):
        text = compact_cycle(sched, cx, wanted, first, width - 2 if header else width, top)
        if header:
            attempt = cx.result.attempt
            again = f" (attempt {attempt})" if attempt > 1 else ""
            text = f"cycle {i}: pod {cx.result.pod.key}{again}\n" + _indent(text)
            parts.extend(_steps_before(sched, i - 1))
        parts.append(text)
    if header:
        parts.extend(_steps_before(sched, None))
    return "\n".join(parts)


def row_reason(r: CycleResult, cx: CycleExplanation, node: str) -> str:
    """A compact row's verdict of a node that was not scored: the first plugin that
    rejected it with its reason (PreFilter's, when PreFilter rejected the pod; an
    extender's), else why a feasible node has no score."""
    pre = r.pre_filter_status
    if pre is not None and not pre.is_success():
        return f"{pre.plugin}: {_status(pre)} (at PreFilter)"
    if node not in r.feasible:
        st = r.statuses.get(node)
        if st is not None and not st.is_success():
            return f"{st.plugin}: {_status(st)}{_details(cx, node, st.plugin)}"
        for plugin, pst in cx.filters.get(node, []):
            if not (pst.is_success() or pst.is_skip()):
                return f"{plugin}: {_status(pst)}{_details(cx, node, plugin)}"
    return _verdict(r, node, set(r.feasible), set(r.searched), cx)


def _abbreviation(name: str, taken: set[str]) -> str:
    """The capitals of a plugin's name (``NodeResourcesFit`` -> ``NRF``), numbered
    when two plugins share them."""
    base = "".join(c for c in name if c.isupper() or c.isdigit()) or name[:3]
    short, n = base, 2
    while short in taken:
        short, n = f"{base}{n}", n + 1
    taken.add(short)
    return short


def render_plain(tables: list[Any], width: int) -> str:
    """Rich tables or texts as plain text, folded at ``width`` columns."""
    from io import StringIO

    from rich.console import Console

    out = StringIO()
    console = Console(file=out, width=width, color_system=None, highlight=False, emoji=False, markup=False,
                      force_terminal=False, legacy_windows=False)
    for t in tables:
        console.print(t)
    return "\n".join(line.rstrip() for line in out.getvalue().rstrip("\n").split("\n"))


def plain_table(columns: Sequence[str], rows: Sequence[Sequence[str]], right: int = 0,
                whole: Sequence[int] = ()) -> Any:
    """A plain rich table; the columns from ``right`` on (when > 0) are aligned right; the
    columns of ``whole`` (a node's name) never fold."""
    from rich.table import Table

    t = Table(box=None, pad_edge=False, padding=(0, 1), show_edge=False, header_style="", expand=False)
    for k, c in enumerate(columns):
        # the marker column (headed "") keeps its width when no row of the table is marked
        t.add_column(c, justify="right" if right and k >= right else "left",
                     overflow="fold", no_wrap=k in whole,
                     min_width=1 if not c else None)
    for row in rows:
        t.add_row(*row)
    return t


def compact_data(sched: Scheduler, cx: CycleExplanation, nodes: Iterable[str] | None = None,
                 first: Sequence[str] = ()) -> dict[str, Any]:
    """One cycle's compact rows as data (``compact_cycle`` draws them; ``kspread explain
    --json`` prints them): ``pod``, ``attempt``, ``scores`` (the score columns: each score
    plugin, then each extender that prioritized), ``nodes`` (the nodes of ``first`` first,
    then the scored nodes by total, highest first, then the others, each group in the
    cluster's order; each with ``node``, ``marked`` and either its weighted ``scores`` and
    ``total`` or its ``reason``), ``marked`` (``selected`` or ``nominated``), ``selected``,
    ``preemption`` (its node and victims) and ``error``."""
    r = cx.result
    order = list(sched.node_names)
    rank = {n: i for i, n in enumerate(order)}
    wanted = list(nodes) if nodes is not None else list(order)
    top = {n: i for i, n in enumerate(first)}
    totals = r.totals
    wanted.sort(key=lambda n: (top.get(n, len(top)), -totals[n] if n in totals else 0, rank.get(n, len(rank))))
    nominated = r.preemption.nominated_node if r.preemption is not None else None
    marked = set(r.selected) if r.selected else ({nominated} if nominated else set())
    columns: list[tuple[str, dict[str, int]]] = []
    if r.scores is not None:
        columns = [(plugin, dict(per_node)) for plugin, per_node in r.scores.weighted.items()]
    scale = sched.version.extender_score_scale
    for e in sched.extenders:
        if e.prioritize is not None:
            columns.append((f"extender {e.name}", {n: wrap_int64(s * e.weight * scale)
                                                   for n, s in e.prioritize.items()}))
    http_weights = {e.name: e.weight for e in sched.extenders if e.http is not None}
    for call in r.extender_calls:
        if call.verb == "prioritize" and call.scores is not None:
            w = http_weights.get(call.extender, 1)
            columns.append((f"extender {call.extender}", {n: wrap_int64(s * w * scale)
                                                          for n, s in call.scores.items()}))
    rows: list[dict[str, Any]] = []
    for n in wanted:
        row: dict[str, Any] = {"node": n, "marked": n in marked}
        if n in r.totals:
            row["scores"] = {name: per_node.get(n, 0) for name, per_node in columns}
            row["total"] = r.totals[n]
        else:
            row["reason"] = row_reason(r, cx, n)
        rows.append(row)
    return {
        "pod": r.pod.key, "attempt": r.attempt, "scores": [name for name, _ in columns], "nodes": rows,
        "marked": ("selected" if r.selected else "nominated") if marked else None,
        "selected": sorted(r.selected, key=lambda n: rank.get(n, len(rank))),
        "preemption": {"node": nominated, "victims": sorted(p.key for p in r.preemption.victims)}
        if nominated and r.preemption is not None else None,
        "error": r.error or None,
    }


def compact_cycle(sched: Scheduler, cx: CycleExplanation, nodes: Iterable[str] | None = None,
                  first: Sequence[str] = (), width: int = 80, top: int | None = None) -> str:
    """One cycle in one row per node (``explain_compact``), then its outcome."""
    r = cx.result
    data = compact_data(sched, cx, nodes, first)
    mark = {row["node"]: "*" if row["marked"] else "" for row in data["nodes"]}
    scored = [row for row in data["nodes"] if "total" in row]
    rest = [row for row in data["nodes"] if "total" not in row]
    more = {"scored": max(0, len(scored) - top), "rest": max(0, len(rest) - top)} if top is not None else {}
    if top is not None:
        scored, rest = scored[:top], rest[:top]
    parts: list[str] = []
    if scored:
        from rich.text import Text

        def scores_table(names: Sequence[str]) -> Any:
            rows = [[mark[row["node"]], row["node"], *(str(v) for v in row["scores"].values()), str(row["total"])]
                    for row in scored]
            # names and numbers are never folded: a table too wide for ``width`` runs past it
            return plain_table(["", "node", *names, "total"], rows, right=2, whole=range(1, len(names) + 3))

        full = data["scores"]
        text = render_plain([scores_table(full)], 10_000)
        if max(len(line) for line in text.split("\n")) > width:
            taken: set[str] = set()
            short = [_abbreviation(name.removeprefix("extender "), taken) for name in full]
            text = render_plain([scores_table(short)], 10_000)
            legend = ", ".join(f"{a}: {name}" for a, name in zip(short, full))
            text += "\n" + render_plain([Text(f"({legend})")], width)
        parts.append(text)
    if more.get("scored"):
        parts.append(f"   ... and {more['scored']} more scored node(s)")
    if rest:
        rows = [[mark[row["node"]], row["node"], row["reason"]] for row in rest]
        # the node's name whole, and room for the reason beside it
        room = max(width, max(len(row["node"]) for row in rest) + 44)
        parts.append(render_plain([plain_table(["", "node", "not scored" if scored else "verdict"], rows,
                                               whole=(1,))], room))
    if more.get("rest"):
        parts.append(f"   ... and {more['rest']} more node(s) not scored")
    if data["marked"]:
        parts.append(f"(* {data['marked']})")
    parts.extend(extender_call_lines(r))
    outcome = explain_cycle_outcome(sched, r, cx)
    if outcome:
        parts.append(outcome)
    return "\n".join(parts)


def explain_cycle_outcome(sched: Scheduler, r: CycleResult, cx: CycleExplanation | None = None) -> str:
    """The outcome line of a compact cycle: the selected node(s), the preemption's
    nomination and victims, unschedulable (with the scheduler's verdict line and, given
    the cycle's explanation, what it would take), or the scheduling error."""
    rank = {n: i for i, n in enumerate(sched.node_names)}
    lines = []
    if r.selected:
        top = sorted(r.selected, key=rank.__getitem__)
        lines.append("selected: " + ", ".join(top[:MAX_VALUES_SHOWN])
                     + (f", ... ({len(top) - MAX_VALUES_SHOWN} more)" if len(top) > MAX_VALUES_SHOWN else ""))
        lines.extend(allocation_lines(r, r.bound_node or top[0]))
        if r.waiting_on:
            lines.append(waiting_line(r))
    elif r.preemption is not None and r.preemption.nominated_node:
        victims = ", ".join(sorted(p.key for p in r.preemption.victims))
        lines.append(f"preemption: nominated {r.preemption.nominated_node}, victims [{victims}]")
        decision = preemption_decision(r, list(rank))
        if decision:
            lines.append(decision)
    elif not r.error:
        lines.append("unschedulable")
        said = verdict(sched.version, r)
        if said is not None:
            lines.append(f"scheduler's verdict: {said}")
        if cx is not None:
            lines.extend(what_it_takes(cx, list(rank)))
    if r.error:
        lines.append(f"scheduling error: {r.error}")
    return "\n".join(lines)


# ---- one cycle ------------------------------------------------------------------------


def explain_cycle(sched: Scheduler, cx: CycleExplanation, nodes: Iterable[str] | None = None) -> str:
    """One cycle, for ``nodes`` (default: every node), then its outcome."""
    r = cx.result
    version = sched.version
    order = list(sched.node_names)
    rank = {n: i for i, n in enumerate(order)}
    wanted = list(nodes) if nodes is not None else order
    feasible, searched = set(r.feasible), set(r.searched)
    lines: list[str] = []
    scale = version.extender_score_scale
    prioritizers = [e for e in sched.extenders if e.prioritize is not None]
    http_weights = {e.name: e.weight for e in sched.extenders if e.http is not None}
    weights = {sp.label: sp.weight for sp in sched.framework.score_plugins}
    for node in wanted:
        lines.append(f"{node}: {_verdict(r, node, feasible, searched, cx)}")
        frows = _filter_rows(sched, cx, node)
        for i, (plugin, text) in enumerate(frows):
            lines.append(f"  {'filter' if i == 0 else '':<7}{plugin:<34}{text}")
        if cx.nominated.get(node):
            lines.append(f"  {'':<7}(filters ran with the pods nominated here: {', '.join(cx.nominated[node])})")
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
                             f"{s} x{e.weight}" + (f" x{scale}" if scale != 1 else "") + f" = {wrap_int64(s * e.weight * scale)}")
                first = False
            for call in r.extender_calls:
                if call.verb != "prioritize" or call.scores is None:
                    continue
                s, w = call.scores.get(node, 0), http_weights.get(call.extender, 1)
                lines.append(f"  {'score' if first else '':<7}{'extender ' + call.extender:<34}"
                             f"{s} x{w}" + (f" x{scale}" if scale != 1 else "") + f" = {wrap_int64(s * w * scale)}")
                first = False
        if node in r.totals:
            lines.append(f"  {'total':<7}{r.totals[node]}")
    lines.extend(extender_call_lines(r))
    if r.post_filter_ran:
        lines.extend(_preemption_lines(r, order, set(wanted) if nodes is not None else None))
    if r.selected:
        top = sorted(r.selected, key=rank.__getitem__)
        lines.append("selected: " + ", ".join(top[:MAX_VALUES_SHOWN])
                     + (f", ... ({len(top) - MAX_VALUES_SHOWN} more)" if len(top) > MAX_VALUES_SHOWN else ""))
        if r.batch_hint is not None and r.selected == [r.batch_hint]:
            lines.append(f"  (OpportunisticBatching: {r.batch_hint} is the previous cycle's next-best node, "
                         "taken unscored because it passes the filters)")
            if len(r.batch_ties) > 1:
                ties = sorted(r.batch_ties, key=rank.__getitem__)
                lines.append(f"  (a tie: {', '.join(ties)} had the same total in "
                             "that cycle; the hint is the next pop of that cycle's heap of scores, "
                             "whose order among them follows the order the filter workers found them in)")
        elif len(r.selected) > 1 and sched.case.is_sequence and r.bound_node and r.heap_pick is not None:
            lines.append(f"  (a tie: the sequence binds {r.bound_node}, the first pop of upstream's heap of "
                         "scores over the nodes in search order; upstream's filter workers may find them in "
                         "another order, and pop another)")
        elif len(r.selected) > 1 and sched.case.is_sequence and r.bound_node:
            lines.append(f"  (a tie: the sequence binds {r.bound_node}, the first in node order; "
                         "upstream picks any of them)")
        lines.extend(allocation_lines(r, r.bound_node or top[0]))
        if r.waiting_on:
            lines.append(waiting_line(r))
    elif r.preemption is not None and r.preemption.nominated_node:
        victims = ", ".join(sorted(p.key for p in r.preemption.victims))
        lines.append(f"preemption: nominated {r.preemption.nominated_node}, victims [{victims}]")
    elif not r.error:
        lines.append("unschedulable")
        said = verdict(version, r)
        if said is not None:
            lines.append(f"scheduler's verdict: {said}")
        lines.extend(what_it_takes(cx, order))
    if r.error:
        lines.append(f"scheduling error: {r.error}")
    return "\n".join(lines)


def allocation_lines(r: CycleResult, node: str) -> list[str]:
    """DynamicResources: the devices the cycle's Filter allocated on ``node`` for the
    pod's unallocated claims (what Reserve records), claim by claim."""
    s = r.state.get(DRA) if r.state is not None else None
    if not isinstance(s, DRAState) or node not in s.node_allocations:
        return []
    todo = to_allocate(s, r.pod, node)
    lines = [f"devices allocated on {node}:"]
    for c, a in zip(todo, s.node_allocations[node]):
        lines.append(f"  {c.key}: " + ", ".join(f"{d} ({d.request})" for d in a.devices))
    return lines


def extender_call_lines(r: CycleResult) -> list[str]:
    """Each call of an HTTP extender in the cycle: verb, extender, URL, what was sent,
    what came back (kept, failed with reasons, scores, victims) or the error (and
    whether it was ignored), the time it took."""
    if not r.extender_calls:
        return []
    return ["extender calls:", *(f"  {c.describe()}" for c in r.extender_calls)]


NOT_FILTERED = "not filtered: the cycle ended at an Error status"


def _verdict(r: CycleResult, node: str, feasible: set[str], searched: set[str],
             cx: CycleExplanation | None = None) -> str:
    """``feasible`` and ``searched``: the cycle's, as sets."""
    if node not in feasible:
        if r.error is not None and r.statuses.get(node) is None and cx is not None and all(
                st.is_success() or st.is_skip() for _, st in cx.filters.get(node, [])):
            # an Error status ended the search (upstream cancels its filter workers) before
            # this node, which every filter passes: "not feasible" would read as a rejection
            return NOT_FILTERED
        return "not feasible"
    if node in searched or not searched:
        return "feasible"
    # passes every filter, but the cycle's search did not reach it: not scored
    nominated = r.pod.nominated_node
    if nominated and nominated != node and r.searched == [nominated]:
        return (f"feasible (not reached by the search: the nominated node {nominated} was filtered first and "
                "fits (PreferNominatedNode); not scored)")
    hint = r.batch_hint
    if hint and hint != node and r.searched == [hint]:
        return (f"feasible (not reached by the search: OpportunisticBatching's hint {hint} was filtered first and "
                "fits; not scored)")
    return ("feasible (not reached by the search: it stopped once it had found enough feasible nodes "
            "(percentageOfNodesToScore, or first fit without scoring); not scored)")


def _filter_rows(sched: Scheduler, cx: CycleExplanation, node: str) -> list[tuple[str, str]]:
    r = cx.result
    st = r.statuses.get(node)
    pre = r.pre_filter_status
    if pre is not None and not pre.is_success():
        # PreFilter rejected the pod: no filter ran on any node
        return [(pre.plugin, f"{_status(pre)} (at PreFilter: no filter ran)")]
    rows: list[tuple[str, str]] = []
    stopped_at = ""
    passing_unrun = 0
    for plugin, pst in cx.filters.get(node, []):
        passes = pst.is_success() or pst.is_skip()
        if not stopped_at:
            rows.append((plugin, _status(pst) + _details(cx, node, plugin)))
            if not passes:
                stopped_at = plugin
        elif passes:
            passing_unrun += 1
        else:
            # RunFilterPlugins returns at the first rejection: the plugins after it never ran
            rows.append((plugin, f"not run (after {stopped_at}); alone: {_status(pst)}{_details(cx, node, plugin)}"))
    if passing_unrun:
        rows.append(("", (f"(not run after {stopped_at}: {passing_unrun} more filter"
                         f"{'s' if passing_unrun > 1 else ''}, passing alone)")))
    if st is not None and st.plugin.startswith("extender:"):
        rows.append((st.plugin, _status(st)))
    problem = _contradiction(st, cx.filters.get(node))
    if problem:
        rows.append(("kspread bug", problem))
    return rows


def _details(cx: CycleExplanation, node: str, plugin: str) -> str:
    """The numbers beside a plugin's reason (``(requests 1500m; 1320m of 4 free)``)."""
    said = [lk.detail for lk in cx.lacks.get(node, []) if lk.plugin == plugin and lk.detail]
    return f" ({'; '.join(said)})" if said else ""


def what_it_takes(cx: CycleExplanation, order: list[str]) -> list[str]:
    """For a pod that fits no node: per node, what it lacks (the nodes closest to
    fitting first, at most ``MAX_LACKING_SHOWN``)."""
    nodes = closest_first(cx.lacks, order)
    if not nodes:
        return []
    lines = ["what would it take (the nodes closest to fitting first):"]
    for n in nodes[:MAX_LACKING_SHOWN]:
        lines.append(f"  {n}: " + ", ".join(lk.need for lk in cx.lacks[n]))
    if len(nodes) > MAX_LACKING_SHOWN:
        lines.append(f"  ({len(nodes) - MAX_LACKING_SHOWN} more node(s) not shown)")
    return lines


def _contradiction(recorded: Status | None, rows: list[tuple[str, Status]] | None) -> str:
    """How the re-computed plugin statuses contradict the cycle's record, if they do."""
    if recorded is None or rows is None:
        return ""
    by_plugin = dict(rows)
    if recorded.is_success() or recorded.plugin.startswith("extender:"):
        bad = [(p, s) for p, s in rows if not (s.is_success() or s.is_skip())]
        if bad:
            return (f"the cycle recorded {_status(recorded)} for this node, but {bad[0][0]} now says "
                    f"{_status(bad[0][1])}")
        return ""
    mine = by_plugin.get(recorded.plugin)
    if mine is None or mine.code != recorded.code or mine.reasons != recorded.reasons:
        now = _status(mine) if mine is not None else "nothing (not a filter plugin)"
        return f"the cycle recorded {recorded.plugin} {_status(recorded)}, but it now says {now}"
    return ""


def _status(st: Status) -> str:
    if st.is_skip():
        return "Skip (PreFilter found nothing to check)"
    return str(st.code) + (f": {st.message}" if st.reasons else "")


# ---- preemption -------------------------------------------------------------------------


def _preemption_lines(r: CycleResult, order: list[str], nodes: set[str] | None) -> list[str]:
    """The PostFilter block. ``nodes``: restrict per-node lines to these (and the
    nodes the choice kept); None: every node."""
    st = r.post_filter_status
    head = f"preemption ({st.plugin})" if st is not None and st.plugin else "preemption"
    lines = [f"{head}: {_status(st) if st is not None else 'ended with the scheduling error below'}"]
    out = r.preemption
    if out is None or not out.potential:
        return lines
    rank = {n: i for i, n in enumerate(order)}
    potential = set(out.potential)
    chosen = set(out.tied_nodes) | ({out.nominated_node} if out.nominated_node else set())
    show = [n for n in order if nodes is None or n in nodes or n in chosen]
    lines.append(f"  potential nodes (filter status not UnschedulableAndUnresolvable): {len(out.potential)}; "
                 f"candidates found: {len(out.candidates)}"
                 + (f" (the dry run keeps up to {out.max_candidates} of each kind)"
                    if out.max_candidates is not None and out.max_candidates < len(out.potential) else ""))
    hidden = 0
    for n in show:
        if n in out.candidates:
            lines.append(f"  {n}: candidate, {_victims(out.candidates[n])}, "
                         f"PDB violations {out.pdb_violations.get(n, 0)}")
        elif n in out.dry_run:
            dst = out.dry_run[n]
            if dst.is_success():
                lines.append(f"  {n}: not a candidate: victims found, but the dry run already held "
                             f"{out.max_candidates} candidates of that kind")
            else:
                lines.append(f"  {n}: not a candidate: {_status(dst)}")
        elif n in potential:
            lines.append(f"  {n}: not tried: the dry run stopped once it held enough candidates")
        else:
            rst = r.statuses.get(n)
            lines.append(f"  {n}: preemption cannot help ({rst.code if rst is not None else 'no filter status'})")
    if nodes is not None:
        shown = set(show)
        hidden = len([n for n in out.candidates if n not in shown])
        if hidden:
            lines.append(f"  ({hidden} other candidate(s) not shown)")
    if not out.candidates:
        return lines
    if len(out.candidates) == 1:
        lines.append(f"  node choice: {next(iter(out.candidates))} is the only candidate")
        return lines
    lines.append("  node choice (pickOneNodeForPreemption), each criterion keeps the best:")
    for i, step in enumerate(out.pick_steps, 1):
        vals = _step_values(out, step, rank)
        kept = sorted(step.kept, key=lambda n: rank.get(n, len(rank)))
        kept_text = ", ".join(kept[:MAX_VALUES_SHOWN]) + (
            f", ... ({len(kept) - MAX_VALUES_SHOWN} more)" if len(kept) > MAX_VALUES_SHOWN else "")
        lines.append(f"    {i}. {step.criterion}: {vals} -> {kept_text}")
    tied = ", ".join(sorted(out.tied_nodes, key=lambda n: rank.get(n, len(rank))))
    if out.decided_by == TIE:
        lines.append(f"  decided by: none, a tie on every criterion between {tied} "
                     "(upstream takes any; kspread nominates the first)")
    elif len(out.tied_nodes) > 1:
        lines.append(f"  decided by: {out.decided_by}, a tie between {tied} "
                     "(upstream takes any; kspread nominates the first)")
    else:
        lines.append(f"  decided by: {out.decided_by}")
    return lines


def _step_values(out: PreemptionOutcome, step: Any, rank: dict[str, int]) -> str:
    """A criterion's value for each node it compared (``n1 1, n2 0``), the first
    ``MAX_VALUES_SHOWN`` in node order and the others counted."""
    items = sorted(step.values.items(), key=lambda kv: rank.get(kv[0], len(rank)))
    vals = ", ".join(f"{n} {_criterion_value(step.criterion, v, len(out.candidates.get(n, [])))}"
                     for n, v in items[:MAX_VALUES_SHOWN])
    if len(items) > MAX_VALUES_SHOWN:
        vals += f", ... ({len(items) - MAX_VALUES_SHOWN} more)"
    return vals


def preemption_decision(r: CycleResult, order: Sequence[str]) -> str:
    """One line: why the preemption nominated its node, the criterion of
    pickOneNodeForPreemption that decided with each node's value
    (``preemption decided by fewest PDB violations: n1 1, n2 0 -> n2``); empty when no
    preemption nominated a node."""
    out = r.preemption
    if out is None or not out.nominated_node or not out.candidates:
        return ""
    node = out.nominated_node
    if len(out.candidates) == 1:
        return f"preemption: {node} is the only candidate"
    rank = {n: i for i, n in enumerate(order)}
    tied = sorted(out.tied_nodes, key=lambda n: rank.get(n, len(rank)))
    if not out.pick_steps:
        return f"preemption: {node} nominated"
    step = out.pick_steps[-1]
    vals = _step_values(out, step, rank)
    if out.decided_by == TIE or len(tied) > 1:
        shown = ", ".join(tied[:MAX_VALUES_SHOWN]) + (
            f", ... ({len(tied) - MAX_VALUES_SHOWN} more)" if len(tied) > MAX_VALUES_SHOWN else "")
        return (f"preemption decided by no criterion: a tie between {shown} (last: {step.criterion}: {vals}; "
                f"upstream takes any, kspread nominates the first, {node})")
    return f"preemption decided by {step.criterion}: {vals} -> {node}"


def _victims(victims: list) -> str:
    """Victims in the order the dry run returned them (victims[0] is what criterion 2
    reads), each with its priority."""
    return "victims [" + ", ".join(f"{v.key} (priority {v.priority})" for v in victims) + "]"


def _criterion_value(criterion: str, value: Any, n_victims: int) -> str:
    if criterion == SMALLEST_PRIORITY_SUM:
        # compared as the int64 sum of (priority + MaxInt32 + 1)
        return f"{value - n_victims * (MAX_INT32 + 1)} + {n_victims}x2^31"
    if criterion == LATEST_START_TIME:
        if value == math.inf:
            return "now (not started)"
        return _dt.datetime.fromtimestamp(value, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


__all__ = ["Code", "CycleExplanation", "PreemptionOutcome", "capture", "compact_data", "explain_compact", "explain_cycle",
           "explain_cycles", "explain_failure", "preemption_decision", "row_reason", "what_it_takes"]


def waiting_line(r: Any) -> str:
    """Where a sequence's binding cycle waits: GangScheduling's Permit or
    DynamicResources' PreBind."""
    if r.waiting_prebind:
        return f"waits in DynamicResources' PreBind on {r.waiting_on} for its devices' binding conditions"
    return f"waits at GangScheduling's Permit on {r.waiting_on} for its gang"
