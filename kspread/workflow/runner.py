"""Run a case and compare what comes out with its ``expect``.

Everything here is reachable from Python, the CLI and the pytest plugin alike:
``run_loaded`` gives the actual results in the shape of ``expect`` (every key
filled), ``compare`` the differences, ``render`` a per-node table of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kspread.engine.diagnosis import verdict
from kspread.engine.scheduler import CycleResult, Scheduler, run_case
from kspread.format.case import Case
from kspread.workflow.explain import (
    CycleExplanation,
    capture,
    capture_failure,
    explain_failure,
    failure_nodes,
    plain_table,
    preemption_decision,
    render_plain,
    what_it_takes,
)

EXPECT_KEYS = ("feasible", "searched", "filter", "rawScores", "scores", "totals", "selected", "unschedulable",
               "preemption", "candidates", "placements", "spread", "allocations", "evicted", "capacity")


def _names(pods) -> list[str]:
    return sorted(p.key for p in pods)


def cycle_actual(r: CycleResult) -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["feasible"] = list(r.feasible)
    out["searched"] = list(r.searched)
    out["filter"] = {
        n: ({"code": str(st.code), "reason": st.message} if st.reasons else {"code": str(st.code)})
        for n, st in r.statuses.items()
    }
    if r.scores is not None:
        out["rawScores"] = {p: dict(v) for p, v in r.scores.raw.items()}
        out["scores"] = {p: dict(v) for p, v in r.scores.normalized.items()}
    else:
        out["rawScores"] = {}
        out["scores"] = {}
    out["totals"] = dict(r.totals)
    sel = r.selected
    out["selected"] = None if not sel else (sel[0] if len(sel) == 1 else list(sel))
    out["unschedulable"] = r.unschedulable
    if r.post_filter_ran:
        pre = r.preemption
        if pre is None or pre.nominated_node is None:
            out["preemption"] = None
        else:
            node: Any = pre.nominated_node
            if len(pre.tied_nodes) > 1:
                node = list(pre.tied_nodes)
            out["preemption"] = {"node": node, "victims": _names(pre.victims)}
        out["candidates"] = {n: _names(v) for n, v in (pre.candidates.items() if pre else [])}
    if r.error:
        out["schedulingError"] = r.error
    return out


@dataclass
class Outcome:
    actual: dict[str, Any]
    diffs: list[Diff] = field(default_factory=list)
    cycles: list[CycleResult] = field(default_factory=list)
    scheduler: Any = None
    # what ``run_loaded``'s ``capture`` recorded of a failing cycle as it ran (for a
    # failure report: kspread.workflow.explain.CycleExplanation); None: nothing captured
    explained: list[Any] | None = None


@dataclass
class Diff:
    key: str
    rows: list[tuple[str, Any, Any]]  # (what, expected, actual)
    note: str = ""


def _in_node_order(actual: dict[str, Any], order: Mapping[str, int]) -> None:
    """Report per-node maps in the case's node order."""

    def sort(d: Mapping[str, Any]) -> dict[str, Any]:
        return dict(sorted(d.items(), key=lambda kv: order.get(kv[0], len(order))))

    for key in ("filter", "totals", "candidates"):
        if isinstance(actual.get(key), dict):
            actual[key] = sort(actual[key])
    for key in ("rawScores", "scores"):
        if isinstance(actual.get(key), dict):
            actual[key] = {p: sort(v) for p, v in actual[key].items()}
    for key in ("feasible", "searched"):
        if isinstance(actual.get(key), list):
            actual[key] = sorted(actual[key], key=lambda n: order.get(n, len(order)))
    if isinstance(actual.get("selected"), list):
        actual["selected"] = sorted(actual["selected"], key=lambda n: order.get(n, len(order)))


def run_loaded(case: Case, observe: Callable[[Scheduler, CycleResult], None] | None = None,
               keep_all: bool = False, capture: Callable[[Scheduler, CycleResult, list[str]], Any] | None = None
               ) -> Outcome:
    """Run the case; ``observe`` as for ``run_case`` (explain uses it); ``keep_all``
    keeps every cycle's per-node data (for explaining each).

    ``capture(sched, result, nodes)``, for a case of one incoming pod: its cycle's
    results are compared with the expectation as soon as the cycle ends, and when they
    differ, ``capture`` is called with the nodes the differences name, while the
    cluster is still as the cycle saw it (before the binding or the preemption); what
    it returns is kept in ``Outcome.explained``, so that a failure report explains
    this run instead of running the case again. A sequence's placements are known
    only at its end: ``capture`` is not called for one."""
    early: list[Outcome] = []
    early_error: list[str | None] = []
    hook = observe
    if capture is not None and not case.is_sequence:
        def hook(sched: Scheduler, r: CycleResult) -> None:
            if observe is not None:
                observe(sched, r)
            found = _outcome(case, [r], {}, sched)
            early_error.append(r.error)
            if found.diffs:
                names = {n.name for n in case.cluster.nodes}
                found.explained = [capture(sched, r, differing_nodes(found.diffs, names))]
            early.append(found)

    sched, results, placements = run_case(case, hook, keep_all)
    if early and results and results[-1].error == early_error[-1]:
        # the case's one cycle, compared as it ended (unless what followed it changed its
        # results: an extender's binding that failed)
        early[-1].cycles = results
        if case.cluster.devices is not None:
            # the claims' state is the one after the cycle's binding (its allocations)
            early[-1].actual["allocations"] = sched.claims.allocations()
            early[-1].diffs = compare(case.expect, early[-1].actual)
        return early[-1]
    return _outcome(case, results, placements, sched)


def _preempted(results: list[CycleResult]) -> list[Any]:
    """The victims of every preemption of a sequence's cycles (a pod's, or a pod group's:
    workload-aware preemption)."""
    out: list[Any] = []
    for r in results:
        if r.preemption is not None and r.preemption.nominated_node is not None:
            out.extend(r.preemption.victims)
        if r.pod_group is not None:
            out.extend(r.pod_group.victims)
    return out


def _outcome(case: Case, results: list[CycleResult], placements: dict[str, Any], sched: Scheduler) -> Outcome:
    actual = cycle_actual(results[-1]) if results else {}
    _in_node_order(actual, {n.name: n.index for n in case.cluster.nodes})
    said = verdict(sched.version, results[-1]) if results else None
    if said is not None:
        actual["verdict"] = said  # a report (the FailedScheduling message), not an expectation
    if case.cluster.devices is not None:
        actual["allocations"] = sched.claims.allocations()
    if case.is_sequence:
        world = sched.sequence
        if world is None:
            # the case's own pods the expectation names: their node at the end (null when
            # preemption evicted them)
            gone = {v.key for v in _preempted(results)}
            named = set(case.expect.get("placements") or ()) - set(placements)
            placements = dict(placements)
            for p in case.cluster.pods:
                if p.key in named:
                    placements[p.key] = None if p.key in gone else p.node_name or sched.placement(p.key)
        actual["placements"] = placements
        scheduled = [p.key for p in case.incoming] if world is None else list(dict.fromkeys(
            p.key for p in world.created))
        actual["evicted"] = sorted({v.key for v in _preempted(results)}) if world is None else sorted(
            world.evicted_pods())
        if world is not None and world.capacity:
            actual["capacity"] = dict(world.capacity)
        # kspread reports, not expectations: scheduling cycles per pod, and the pods whose
        # placement kspread took from a tie upstream breaks at random (with the tied nodes)
        actual["attempts"] = {k: sched.attempts.get(k, 0) for k in scheduled}
        # (bounded: the count and the first TIE_NAMES nodes; report.case_entry gives every
        # node on request, from the scheduler)
        actual["ties"] = {k: TieReport(sched, k) for k in scheduled
                          if k in sched.ties and placements.get(k) is not None}
        # ... and the pods whose last status kspread took from the first of several placements
        # that all failed, which upstream takes in a Go map's order (TopologyAwareWorkloadScheduling)
        order = getattr(sched, "placement_order", {})
        if any(k in order for k in scheduled):
            actual["placementOrder"] = {k: list(order[k]) for k in scheduled if k in order}
        # ... and the pods whose outcome a race of a pod group's binding cycles decided (two
        # PreBinds writing one shared claim: kspread lets the first in the cycle's order win)
        races = getattr(sched, "binding_races", {})
        if any(k in races for k in scheduled):
            actual["races"] = {k: [{"claim": c, "pods": list(ps)} for c, ps in races[k]]
                               for k in scheduled if k in races}
        if world is not None:
            actual["timeline"] = world.timeline()
        if "spread" in case.expect:
            actual["spread"] = spread_actual(case, sched, placements, case.expect["spread"])
    return Outcome(actual, compare(case.expect, actual), results, sched)


_MISSING = "(none)"
TIE_NAMES = 10  # the tied nodes a report names (with their count)


class TieReport(dict):
    """A tie as reports give it, ``{"count": n, "nodes": [...]}`` (the first ``TIE_NAMES``
    tied nodes in node order); ``every()``: all of them (a golden update writes the
    whole tied set), from the scheduler."""

    def __init__(self, sched: Scheduler, key: str) -> None:
        super().__init__(sched.tie_summary(key, TIE_NAMES) or {"count": 0, "nodes": []})
        self._sched = sched
        self._key = key

    def every(self) -> list[str]:
        return self._sched.tied_nodes(self._key) or []


def tie_nodes(tie: Any) -> list[str]:
    """Every node of a reported tie (a ``TieReport``, a ``{count, nodes}`` mapping that
    names them all, or a list)."""
    if isinstance(tie, TieReport):
        return tie.every()
    if isinstance(tie, Mapping):
        return list(tie["nodes"])
    return list(tie)


def tie_text(tie: dict[str, Any]) -> str:
    """A reported tie (``Scheduler.tie_summary``) as text: its nodes, and how many more."""
    more = tie["count"] - len(tie["nodes"])
    return ", ".join(tie["nodes"]) + (f" and {more} more" if more > 0 else "")


def race_text(actual: Mapping[str, Any]) -> str:
    """The binding races an outcome reports (``races``) as one note, each once."""
    seen = dict.fromkeys((r["claim"], tuple(r["pods"])) for rs in (actual.get("races") or {}).values() for r in rs)
    if not seen:
        return ""
    return ("decided by a race of a pod group's binding cycles, the first pod in the cycle's order taken as the "
            "winner (upstream's binding goroutines may run in another order): " +
            "; ".join(f"claim {c} written by the PreBinds of {', '.join(ps)}" for c, ps in seen))
NO_DOMAIN = "<none>"  # spread's domain for the pods on nodes without the topology key (kubectl's word)


def spread_actual(case: Case, sched: Scheduler, placements: Mapping[str, Any], spread: Any) -> Any:
    """``expect.spread`` with the counts of the run in place of the expected ones: the
    schedule's pods that end bound or nominated (or, with a selector, every matching pod of
    the cluster at the end), by their node's value of the topology key. A domain the
    expectation lists that no pod reached is given 0, so that equal counts compare equal."""
    from kspread.engine.labels import as_selector, parse_label_selector
    from kspread.format.case import spread_specs

    labels = {info.node.name: info.node.labels for info in sched.snapshot.node_list}
    out = []
    for one, path in spread_specs(spread):
        where: list[str] = []
        if "selector" in one:
            sel = as_selector(parse_label_selector(one["selector"], [*path, "selector"]))
            ns = one.get("namespace")
            bound = set()
            for info in sched.snapshot.node_list:
                for pod in info.pods.values():
                    bound.add(pod.key)
                    if (ns is None or pod.namespace == ns) and sel.matches(pod.labels):
                        where.append(info.node.name)
            for pod in [*case.cluster.pods, *case.incoming]:
                node = placements.get(pod.key) if pod.key in placements else pod.nominated_node
                if pod.key not in bound and node and (ns is None or pod.namespace == ns) and sel.matches(pod.labels):
                    where.append(node)  # nominated, not bound
        else:
            where = [n for p in case.incoming if (n := placements.get(p.key))]
        out.append(domain_counts(one, where, labels))
    return out if isinstance(spread, list) else out[0]


def domain_counts(one: Mapping[str, Any], where: list[str], labels: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """One spread count with the counts of ``where`` (a node a pod ended on, for each pod) by
    their node's value of its topology key; a domain it lists that no pod reached is given 0."""
    counts: dict[str, int] = {}
    for node in where:
        domain = (labels.get(node) or {}).get(one["topologyKey"], NO_DOMAIN)
        counts[domain] = counts.get(domain, 0) + 1
    for domain in one["counts"]:
        counts.setdefault(domain, 0)
    return {**one, "counts": {d: counts[d] for d in [*one["counts"], *sorted(counts)] if d in counts}}


def spread_label(one: Mapping[str, Any], i: int | None) -> str:
    """A spread count's row label in reports: its topology key (and selector, index)."""
    from kspread.workflow.yamltext import flow

    label = one["topologyKey"]
    if "selector" in one:
        label += f" of {flow(one['selector'])}" + (f" in {one['namespace']}" if "namespace" in one else "")
    return label if i is None else f"[{i}] {label}"


def _as_set(v: Any) -> set:
    return set(v) if isinstance(v, list) else {v}


_NOTHING_SCORED = "(nothing scored)"
_PREEMPTION_DID_NOT_RUN = "(did not run: a node fits, or no PostFilter plugin)"
# how deep below its key a difference is reported as one row: feasible is one row, a
# filter row per node, a score row per plugin and node, ...
_ROW_DEPTH = {"feasible": 0, "searched": 0, "selected": 0, "unschedulable": 0, "filter": 1, "totals": 1,
              "placements": 1, "candidates": 1, "preemption": 1, "rawScores": 2, "scores": 2, "spread": 2,
              "allocations": 1, "evicted": 0, "capacity": 1}


def _filter_views(want: Any, have: Any) -> tuple[str, str]:
    """One node's filter expectation and result, as the report shows them. The result is
    shown as the expectation when it meets it (the code; and the reason, when one is
    expected, which may be the whole message or one of its reasons)."""
    if have is _MISSING or have is None:
        return (want if isinstance(want, str) else f"{want['code']}: {want.get('reason', '')}"), _MISSING
    code, reason = have["code"], have.get("reason", "") or ""
    if isinstance(want, str):
        return want, code if code == want else code + (f" ({reason})" if reason else "")
    shown = f"{want['code']}: {want.get('reason', '')}"
    reason_ok = "reason" not in want or want["reason"] == reason or want["reason"] in reason.split(", ")
    return shown, shown if code == want["code"] and reason_ok else f"{code}: {reason}"


def _set_views(w: Any, h: Any) -> tuple[Any, Any]:
    """A set-valued expectation (a node, or a list of nodes) and its result: the same
    value on both sides when they hold the same names, as they are otherwise."""
    if w is not None and h is not None and h is not _MISSING and _as_set(w) == _as_set(h):
        return w, w
    return w, h


def comparable(expect: Mapping[str, Any], actual: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """The expectation and the actual results in one normalized shape, restricted to
    what the expectation asserts (the nodes, plugins and pods it lists), with set-valued
    keys sorted: the two are equal exactly where the case passes. Also a note per key."""
    want: dict[str, Any] = {}
    have: dict[str, Any] = {}
    notes: dict[str, str] = {}
    for key in EXPECT_KEYS:
        if key not in expect:
            continue
        w = expect[key]
        h = actual.get(key, _MISSING)
        if key in ("feasible", "searched", "evicted"):
            want[key], have[key] = sorted(w), sorted(h) if h is not _MISSING else h
        elif key == "filter":
            pairs = {n: _filter_views(wn, (h or {}).get(n, _MISSING) if h is not _MISSING else _MISSING)
                     for n, wn in w.items()}
            want[key] = {n: a for n, (a, _) in pairs.items()}
            have[key] = {n: b for n, (_, b) in pairs.items()}
        elif key in ("rawScores", "scores", "totals") and w == {}:
            # an empty mapping asserts that nothing was scored
            want[key] = _NOTHING_SCORED
            have[key] = _NOTHING_SCORED if h in ({}, _MISSING) else h
        elif key in ("rawScores", "scores"):
            want[key], have[key] = {}, {}
            for plugin, per_node in w.items():
                hp = (h or {}).get(plugin, _MISSING) if h is not _MISSING else _MISSING
                if hp is _MISSING:
                    notes[key] = f"plugin {plugin} produced no {key} (not in the profile, skipped, or scoring did not run)"
                    hp = {}
                want[key][plugin] = dict(per_node)
                have[key][plugin] = {n: hp.get(n, _MISSING) for n in per_node}
        elif key == "spread":
            want[key], have[key] = {}, {}
            hs = h if isinstance(h, list) else [h]
            for i, one in enumerate(w if isinstance(w, list) else [w]):
                label = spread_label(one, i if isinstance(w, list) else None)
                got = hs[i]["counts"] if h is not _MISSING and i < len(hs) else {}
                want[key][label] = {d: c for d, c in one["counts"].items() if c}
                have[key][label] = {d: c for d, c in got.items() if c or want[key][label].get(d)}
        elif key in ("totals", "placements", "capacity"):
            want[key] = dict(w)
            have[key] = {n: (h or {}).get(n, _MISSING) if h is not _MISSING else _MISSING for n in w}
            if key == "placements":
                for p, wn in w.items():
                    # a list: the pod ends on one of these nodes (a tie)
                    if isinstance(wn, list) and have[key][p] in wn:
                        have[key][p] = wn
                ties = actual.get("ties") or {}
                tied = [f"{p} from {tie_text(ties[p])}" for p in w if p in ties]
                if tied:
                    notes[key] = ("placed by a tie, the first tied node in node order taken (from 1.35 the first "
                                  "pop of upstream's heap of scores; upstream may pick another): " + "; ".join(tied))
                raced = race_text(actual)
                if raced:
                    notes[key] = "; ".join(filter(None, (notes.get(key), raced)))
        elif key == "allocations":
            want[key] = {c: (None if d is None else sorted(d)) for c, d in w.items()}
            claims: Mapping[str, Any] = h if isinstance(h, Mapping) else {}
            have[key] = {c: (None if claims.get(c) is None else sorted(claims[c])) if c in claims else _MISSING
                         for c in w}
            raced = race_text(actual)
            if raced:
                notes[key] = raced
        elif key == "selected":
            want[key], have[key] = _set_views(w, h)
        elif key == "unschedulable":
            want[key], have[key] = bool(w), bool(h)
        elif key == "preemption":
            if h is _MISSING:
                want[key], have[key] = w, _PREEMPTION_DID_NOT_RUN
            elif w is None or h is None:
                want[key], have[key] = w, h
            else:
                want[key], have[key] = {}, {}
                h = _tied_candidate(w, h, actual.get("candidates") or {})
                if "node" in w:
                    want[key]["node"], have[key]["node"] = _set_views(w["node"], h["node"])
                if "victims" in w:
                    want[key]["victims"], have[key]["victims"] = _set_views(sorted(w["victims"]), h["victims"])
        elif key == "candidates":
            if h is _MISSING:
                want[key], have[key] = w, "(preemption did not run)"
            else:
                want[key] = {n: sorted(v) for n, v in w.items()}
                have[key] = {n: sorted(v) for n, v in h.items()}
    return want, have, notes


def _tied_candidate(w: Mapping[str, Any], h: Mapping[str, Any], candidates: Mapping[str, Any]) -> Mapping[str, Any]:
    """When candidates tie on every criterion of upstream's choice (``h["node"]`` a list),
    upstream may nominate any of them: an expectation naming one tied node (or, without a
    node, the victims of one) is met by that node with its own victims."""
    tied = h["node"] if isinstance(h["node"], list) else []
    if len(tied) < 2:
        return h
    node = w.get("node")
    if isinstance(node, str) and node in tied:
        return {"node": node, "victims": sorted(candidates.get(node, []))}
    if node is None and "victims" in w:
        for n in tied:
            if sorted(candidates.get(n, [])) == sorted(w["victims"]):
                return {"node": n, "victims": sorted(candidates[n])}
    return h


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (``1`` is not ``1.0`` nor ``True``):
    where this holds, deepdiff finds no difference either."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


def _differing(want: Any, have: Any, depth: int) -> tuple[Any, Any]:
    """``want`` and ``have`` without the entries that are the same on both sides, down to
    ``depth`` levels of mappings (an entry on one side only stays)."""
    if depth <= 0 or not isinstance(want, dict) or not isinstance(have, dict):
        return want, have
    w: dict[Any, Any] = {}
    h: dict[Any, Any] = {}
    for k, v in want.items():
        if k not in have:
            w[k] = v
        elif not _same(v, have[k]):
            w[k], h[k] = _differing(v, have[k], depth - 1)
    for k, v in have.items():
        if k not in want:
            h[k] = v
    return w, h


def _only_differing(want: Mapping[str, Any], have: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What deepdiff needs to see of two results, per expectation key: the rows (nodes,
    plugins and nodes, ...) that differ. deepdiff finds the same differences in these
    as in the whole, in time linear in the rows that are the same (deepdiff over a
    mapping of every node of a big cluster is slow)."""
    w: dict[str, Any] = {}
    h: dict[str, Any] = {}
    for key in dict.fromkeys([*want, *have]):
        if key not in have:
            w[key] = want[key]
        elif key not in want:
            h[key] = have[key]
        elif not _same(want[key], have[key]):
            w[key], h[key] = _differing(want[key], have[key], _ROW_DEPTH.get(key, 0))
    return w, h


def compare(expect: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Diff]:
    """The differences between ``expect`` and the actual results: deepdiff compares
    their normalized forms (``comparable``), restricted to the rows that differ; each
    difference it finds becomes a row of the report (a node, a plugin and node, ...),
    showing both sides."""
    from deepdiff import DeepDiff

    want, have, notes = comparable(expect, actual)
    dd = DeepDiff(*_only_differing(want, have), view="tree", verbose_level=2)
    rows: dict[str, dict[tuple, tuple[str, Any, Any]]] = {}
    for changes in dd.values():
        for change in changes:
            path = change.path(output_format="list")
            key = path[0]
            at = tuple(path[1:1 + _ROW_DEPTH[key]])
            w, h = want.get(key, _MISSING), have.get(key, _MISSING)
            for part in at:
                w = w.get(part, _MISSING) if isinstance(w, dict) else _MISSING
                h = h.get(part, _MISSING) if isinstance(h, dict) else _MISSING
            if len(at) < _ROW_DEPTH[key] and not path[1:]:
                at = ()
            what = " ".join(str(x) for x in at) if at else ("nodes" if key in ("feasible", "searched") else key)
            rows.setdefault(key, {})[at] = (what, w, h)
    out: list[Diff] = []
    for key in EXPECT_KEYS:
        if key in rows:
            ordered = [rows[key][at] for at in _row_order(want[key], rows[key])]
            out.append(Diff(key, ordered, notes.get(key, "")))
    return out


def _row_order(want: Any, rows: Mapping[tuple, Any]) -> list[tuple]:
    """Rows in the order the expectation lists them (then any other)."""
    order: list[tuple] = []
    if isinstance(want, dict):
        for k, v in want.items():
            if isinstance(v, dict):
                order += [(k, n) for n in v]
            order.append((k,))
    order.append(())
    known = [at for at in order if at in rows]
    listed = set(known)
    return known + [at for at in rows if at not in listed]


def differing_nodes(diffs: list[Diff], nodes: set[str]) -> list[str]:
    """The node names a list of differences mentions, in first-mention order."""
    out: dict[str, None] = {}
    for d in diffs:
        for what, want, have in d.rows:
            for token in [str(what).split(" ")[-1], *(_as_list(want)), *(_as_list(have))]:
                if token in nodes:
                    out.setdefault(token)
    return list(out)


def _as_list(v: Any) -> list[str]:
    if isinstance(v, list):
        return [str(x) for x in v]
    return [str(v)] if isinstance(v, str) else []


MAX_ROWS_SHOWN = 20  # rows of a difference table, and names of a list in one cell; the rest is counted
REPORT_WIDTH = 80  # a failure report's tables fold their cells to fit
_ROW_UNIT = {"rawScores": "scores", "scores": "scores", "placements": "pods", "spread": "domains",
             "allocations": "claims", "capacity": "entries"}


_ROW_HEAD = {"filter": "node", "totals": "node", "candidates": "node", "rawScores": "plugin node",
             "scores": "plugin node", "placements": "pod", "preemption": "field", "spread": "key domain",
             "allocations": "claim", "capacity": "entry"}


def row_head(d: Diff) -> str:
    """What the rows of a difference table are, its first column's header: ``node``,
    ``plugin node``, ``pod``, ``field`` (of the preemption: its node, its victims); empty when
    the one row is the key's whole value (``selected``, ``feasible``, ``unschedulable``,
    a whole ``preemption``), which the table then shows without a first column."""
    if all(what in (d.key, "nodes") for what, _, _ in d.rows):
        return ""
    return _ROW_HEAD.get(d.key, "node")


def render(diffs: list[Diff], expect: Mapping[str, Any], actual: Mapping[str, Any]) -> str:
    """The difference tables, each of its first ``MAX_ROWS_SHOWN`` rows (in the order
    the expectation lists them) and the count of the others."""
    lines: list[str] = []
    for d in diffs:
        lines.append(f"{d.key}:")
        rows = [(str(what), _fmt(w), _fmt(h)) for what, w, h in d.rows[:MAX_ROWS_SHOWN]]
        head = row_head(d)
        if head:
            table = plain_table([head, "expected", "actual"], rows)
        else:
            # one row, the key's whole value: no first column
            table = plain_table(["expected", "actual"], [(w, h) for _, w, h in rows])
        lines.append("  " + render_plain([table], REPORT_WIDTH - 2).replace("\n", "\n  "))
        if len(d.rows) > len(rows):
            lines.append(f"  ... and {len(d.rows) - len(rows)} more {_ROW_UNIT.get(d.key, 'nodes')} "
                         f"({len(d.rows)} differ)")
        if d.note:
            lines.append(f"  ({d.note})")
    summary = deepdiff_summary(expect, actual)
    if summary:
        lines.append("")
        lines.append("in all: " + summary)
    if actual.get("schedulingError"):
        lines.append(f"scheduling error: {actual['schedulingError']}")
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    """A report cell: text as it is, any other value as YAML (``null``, ``true``, ``{a: 1}``);
    of a long list, its first ``MAX_ROWS_SHOWN`` items and the count of the others."""
    if isinstance(v, str):
        return v
    from kspread.workflow.yamltext import flow

    if isinstance(v, list) and len(v) > MAX_ROWS_SHOWN:
        return flow(v[:MAX_ROWS_SHOWN])[:-1] + f", ... and {len(v) - MAX_ROWS_SHOWN} more ({len(v)} in all)]"
    return flow(v)


def deepdiff_summary(expect: Mapping[str, Any], actual: Mapping[str, Any]) -> str:
    from deepdiff import DeepDiff

    want = {k: expect[k] for k in EXPECT_KEYS if k in expect}
    have: dict[str, Any] = {k: actual.get(k) for k in want}
    # only compare what the expectation names
    for k in ("filter", "totals", "placements", "allocations", "capacity"):
        if isinstance(want.get(k), dict) and isinstance(have.get(k), dict):
            have[k] = {n: have[k].get(n) for n in want[k]}
            if k == "filter":
                have[k] = {n: (h if isinstance(want[k][n], dict) or h is None else h["code"]) for n, h in have[k].items()}
    for k in ("rawScores", "scores"):
        if isinstance(want.get(k), dict) and isinstance(have.get(k), dict):
            have[k] = {p: {n: (have[k].get(p) or {}).get(n) for n in want[k][p]} for p in want[k]}
    dd = DeepDiff(*_only_differing(want, have), ignore_order=True, verbose_level=1)
    if not dd:
        return ""
    counts: dict[str, int] = {}
    for kind, items in dd.items():
        if kind == "type_changes":
            # deepdiff's "type change" is, to a reader, a value that became null, one that was
            # null, or a number written another way (9.0 for 9)
            for change in items.values():
                if change.get("new_value", 0) is None:
                    what = "changed to null"
                elif change.get("old_value", 0) is None:
                    what = "null changed to a value"
                else:
                    what = "changed type"
                counts[what] = counts.get(what, 0) + 1
        else:
            what = _DEEPDIFF_WORDS.get(kind, kind.replace("_", " "))
            counts[what] = counts.get(what, 0) + len(items)
    return ", ".join(_counted(n, what) for what, n in counts.items())


# deepdiff's kinds of difference, in words (the count goes before them)
_DEEPDIFF_WORDS = {
    "values_changed": "changed",
    "dictionary_item_added": "not expected",
    "dictionary_item_removed": "missing",
    "iterable_item_added": "list item(s) not expected",
    "iterable_item_removed": "list item(s) missing",
    "set_item_added": "list item(s) not expected",
    "set_item_removed": "list item(s) missing",
    "repetition_change": "list item(s) repeated otherwise",
}


def _counted(n: int, what: str) -> str:
    """``1 value changed``, ``3 values changed``, ``2 list items missing``."""
    if what.startswith("list item(s)"):
        return f"{n} list item{'s' if n != 1 else ''}{what.removeprefix('list item(s)')}"
    if what.startswith("null "):
        return f"{n} {'null' if n == 1 else 'nulls'}{what.removeprefix('null')}"
    return f"{n} value{'s' if n != 1 else ''} {what}"


_POD_COUNT_REASONS = ("Too many pods", "Insufficient pods")  # from 1.18 / up to 1.17


def pod_capacity_note(case: Case, cycles: list[CycleResult]) -> str:
    """One line for a failure report when a cycle found every node full by pod count
    and some of those nodes allow 0 pods only because their ``allocatable`` omits
    ``pods``; empty otherwise."""
    if not case.nodes_without_pods:
        return ""
    for r in cycles:
        if r.statuses and all(any(reason in _POD_COUNT_REASONS for reason in st.reasons)
                              for st in r.statuses.values()):
            names = [n.name for n in case.cluster.nodes if n.name in case.nodes_without_pods]
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            nodes, give, they, allow = (("node", "gives", "it", "allows") if len(names) == 1
                                        else ("nodes", "give", "they", "allow"))
            return (f"note: every node failed with \"Too many pods\": {nodes} {shown} {give} `allocatable` "
                    f"without `pods`, so {they} {allow} 0 pods (add e.g. `pods: 110`)")
    return ""


def duplicate_names(docs) -> dict[int, Any]:
    """A case name used twice in one file is an error at each later use: position in
    ``docs`` (``kspread.format.loader.CaseDoc``) -> the error. The CLI and the pytest plugin
    report these the same way."""
    from kspread.errors import CaseError

    seen: set[str] = set()
    out: dict[int, CaseError] = {}
    for i, doc in enumerate(docs):
        if doc.name in seen:
            out[i] = CaseError(f"case name {doc.name!r} is used twice in this file", ["name"], file=doc.file,
                               line=doc.locate(["name"]) or doc.line)
        seen.add(doc.name)
    return out


def _capture_for_report(case: Case) -> Callable[[Scheduler, CycleResult, list[str]], Any]:
    """``run_loaded``'s ``capture`` for a failure report: what explain reads of the
    cycle, for the nodes the report explains."""

    def capture_report(sched: Scheduler, r: CycleResult, nodes: list[str]) -> Any:
        return capture_failure(case, sched, r, nodes)

    return capture_report


def explain_run(case: Case, nodes: Iterable[str] | None = None) -> tuple[Outcome, list[CycleExplanation]]:
    """Run the case, capturing every cycle as it ran (``kspread.workflow.explain.capture``)."""
    wanted = list(nodes) if nodes is not None else None
    captured: list[CycleExplanation] = []
    outcome = run_loaded(case, observe=lambda s, r: captured.append(capture(s, r, wanted)), keep_all=True)
    return outcome, captured


EXPLAIN_MODES = ("short", "full", "none")  # of a failure report: compact, every plugin (--verbose), left out


def failure_explanation(case: Case, outcome: Outcome, nodes: list[str], mode: str = "short") -> str:
    """The explain block of a failure report (``explain_failure``): of the run itself
    when it captured its cycle (``Outcome.explained``), else of a re-run with
    ``capture`` on (runs are deterministic; the block says so if the re-run differs).
    ``mode``: one of ``EXPLAIN_MODES``; ``none`` gives the empty text."""
    return _failure_explanation(case, outcome, nodes, mode)[0]


def _failure_explanation(case: Case, outcome: Outcome, nodes: list[str], mode: str = "short"
                         ) -> tuple[str, list[CycleExplanation]]:
    """``failure_explanation`` and the cycles it explains (none with ``mode`` none, when
    the run captured none)."""
    if mode == "none":
        return "", outcome.explained or []
    if outcome.explained is not None:
        sched, cycles, differs = outcome.scheduler, outcome.explained, False
    else:
        rerun, cycles = explain_run(case, failure_nodes(case, nodes))
        sched, differs = rerun.scheduler, rerun.actual != outcome.actual
    return explain_failure(case, sched, cycles, nodes, rerun_differs=differs, verbose=mode == "full"), cycles


@dataclass
class Verdict:
    """The result of checking one case document against its expectation."""

    passed: bool
    message: str = ""  # why it failed (or the expected error that was seen)
    case: Case | None = None
    outcome: Outcome | None = None
    error: str | None = None  # the case's load or scheduling error, if any
    skipped: str | None = None  # why the case did not run (neither passed nor failed)
    xfail: str | None = None  # the case's own xfail reason: a failure is expected (runners report it as such)
    # of a failure: the scheduler's verdict, the preemption's deciding criterion, what it would
    # take (``why_lines``), which the reports show beside the differences
    why: list[str] = field(default_factory=list)


def not_expectable_note(doc, e) -> str:
    """A line for a load error that holds the ``expect.error`` text but may not meet it
    (``kspread.format.loader.expectable``); empty otherwise."""
    from kspread.format.loader import error_text, expectable, expected_error

    want = expected_error(doc)
    if want is None or want not in error_text(e) or expectable(doc, e):
        return ""
    return ("\n  (this error is in how the case is written, not in the cluster or scheduler it describes: "
            "it never satisfies expect.error)")


def asserts_nothing(doc):
    """The error of a case whose ``expect`` has no keys (``kspread.format.loader.CaseDoc``)."""
    from kspread.errors import CaseError

    path = doc.user_path(["expect"])
    return CaseError("the case asserts nothing: give at least one key (or let `pytest --kspread-update` or "
                     "`kspread run --update` fill it)", path, file=doc.file, line=doc.locate(["expect"]))


def not_runnable(case: Case) -> str:
    """Why the reference engine does not run a case whose profile enables out-of-tree plugins."""
    names = ", ".join(case.profile.out_of_tree)
    return (f"not runnable under the reference engine: the profile enables out-of-tree plugin(s) {names} "
            "(run it through a backend that registers them: kspread run --backend PATH)")


def check(doc, config: str | None = None, run: Callable[[Case], Outcome] | None = None,
          explain: str = "short") -> Verdict:
    """Load, run and compare one case document (``_check``); a case marked ``xfail``
    carries its reason in the verdict (a case that did not load is never an expected
    failure: how it is written is wrong)."""
    v = _check(doc, config, run, explain)
    if v.case is not None and v.case.xfail is not None and v.skipped is None:
        v.xfail = v.case.xfail
    return v


def _check(doc, config: str | None = None, run: Callable[[Case], Outcome] | None = None,
           explain: str = "short") -> Verdict:
    """Load, run and compare one case document (``kspread.format.loader.CaseDoc``).

    A case with ``expect.error`` passes when loading or running it fails with a
    message containing that text, from an error that may meet it
    (``kspread.format.loader.meets_expected_error``: never one in how the case is
    written). ``explain``: how its failure report explains the run (``EXPLAIN_MODES``)."""
    from kspread.errors import CaseError
    from kspread.format.loader import expected_error, load_case, meets_expected_error

    want_error = expected_error(doc)
    case = None
    try:
        skip = doc.data.get("skip") if isinstance(doc.data, dict) else None
        if isinstance(skip, str) and skip.strip() and "xfail" not in doc.data:
            # as pytest's skip mark: not loaded, so a case may wait on what kspread cannot load yet
            return Verdict(True, skipped=f"skip: {skip}")
        case = load_case(doc, config)
        if run is None and case.profile.out_of_tree:
            return Verdict(True, case=case, skipped=not_runnable(case))
        if run is None:
            outcome = run_loaded(case, capture=_capture_for_report(case) if want_error is None else None)
        else:
            outcome = run(case)
    except CaseError as e:
        doc.place(e)
        msg = str(e)
        if meets_expected_error(doc, e):
            return Verdict(True, msg, case, None, msg)
        return Verdict(False, msg + not_expectable_note(doc, e), case, None, msg)
    sched_err = outcome.actual.get("schedulingError")
    if not case.expect:
        # an update run fills it (kspread.workflow.update.update_for: a failed verdict with an outcome)
        return Verdict(False, str(asserts_nothing(doc)), case, outcome, sched_err)
    if want_error is not None:
        if sched_err and meets_expected_error(doc, sched_err):
            return Verdict(True, sched_err, case, outcome, sched_err)
        got = f"scheduling error: {sched_err}" if sched_err else "the case loaded and ran without error"
        where = doc.locate(["expect", "error"]) or doc.line
        return Verdict(False, f"{doc.file}:{where}: expected an error containing {want_error!r}; {got}",
                       case, outcome, sched_err)
    if outcome.diffs:
        head = f"{doc.file}:{doc.line}: case {doc.name!r} (version {case.version})"
        if case.description:
            head += "\n  " + case.description.strip().splitlines()[0]
        body = render(outcome.diffs, case.expect, outcome.actual)
        note = pod_capacity_note(case, outcome.cycles)
        if note:
            body = note + "\n" + body
        nodes = differing_nodes(outcome.diffs, {n.name for n in case.cluster.nodes})
        explained, cycles = _failure_explanation(case, outcome, nodes, explain) if outcome.cycles else ("", [])
        why = why_lines(case, outcome, cycles)
        said = [line for line in why if not line.startswith(" ") and line != _WHAT_IT_TAKES]
        if said:
            body += "\n" + "\n".join(said)
        if explained:
            # each of those lines once: the explain block's outcome repeats the last cycle's
            kept = explained.split("\n")
            for line in said:
                # the last cycle's (a sequence's is indented under its cycle)
                at = [i for i, k in enumerate(kept) if k.strip() == line]
                if at:
                    del kept[at[-1]]
            body += "\n\n" + "\n".join(kept)
        return Verdict(False, head + "\n" + body, case, outcome, sched_err, why=why)
    return Verdict(True, "", case, outcome, sched_err)


_WHAT_IT_TAKES = "what would it take (the nodes closest to fitting first):"


def why_lines(case: Case, outcome: Outcome, cycles: list[CycleExplanation]) -> list[str]:
    """What a failure report says first of the case's (last) cycle, beside the difference
    tables: the scheduler's verdict (its FailedScheduling message), the criterion that
    decided a preemption (with each node's value), and for a pod that fits no node what
    it would take (from the explained cycle, when there is one)."""
    lines: list[str] = []
    if outcome.actual.get("verdict"):
        lines.append(f"scheduler's verdict: {outcome.actual['verdict']}")
    order = [n.name for n in case.cluster.nodes]
    if outcome.cycles:
        decision = preemption_decision(outcome.cycles[-1], order)
        if decision:
            lines.append(decision)
    last = cycles[-1] if cycles else None
    # the last cycle explained (of the run, or of its re-run for a sequence) is the run's last cycle
    if last is not None and outcome.cycles and last.result.pod.key == outcome.cycles[-1].pod.key \
            and not last.result.selected \
            and not (last.result.preemption is not None and last.result.preemption.nominated_node):
        lines.extend(what_it_takes(last, order))
    return lines
