"""``kspread run --html FILE`` and ``pytest --kspread-html FILE``: one self-contained
HTML page (inline CSS and SVG drawn here, no script, nothing fetched when viewed)
written from the run's report entries (``kspread.workflow.report``).

The page: a summary, an index of the cases, and each failing case with its
differences and pictures: the nodes grouped by zone with their pods, where the
incoming pod went, a preemption's victims; a heatmap of the nodes by score plugin;
a sequence's placements cycle by cycle. Passing cases are listed in one table. All
text from cases (names, labels, messages) is escaped (``safetext.html_text``: HTML, and a
control character or a bidi override shown as ``\\x1b``, ``\\u202e``). Everything is bounded, so a
5,000-node case or a corpus of thousands gives a page of a few megabytes at most.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kspread.workflow.safetext import html_text

MAX_DETAILED = 100  # failing cases shown with differences and pictures
MAX_DIFF_ROWS = 100  # rows of one case's differences
MAX_MESSAGE = 20_000  # characters of one case's text report
MAX_ZONE_NODES = 24  # nodes drawn per zone
MAX_DRAWN_NODES = 96  # nodes drawn per case
MAX_CHIPS = 6  # pods drawn per node
MAX_HEAT_NODES = 24  # heatmap columns
MAX_HEAT_PLUGINS = 20  # heatmap rows
MAX_SEQ_CYCLES = 60  # sequence rows
MAX_SEQ_NODES = 20  # sequence columns
MAX_PASSED_ROWS = 2_000  # passing cases listed

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
header{background:#24292f;color:#fff;padding:16px 28px}
header h1{margin:0 0 4px;font-size:20px}
header .sum{font-size:16px}
main{padding:12px 28px 40px;max-width:1400px}
.pill{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;color:#fff}
.pass{background:#1a7f37}.fail{background:#cf222e}
section.case{background:#fff;border:1px solid #d0d7de;border-radius:6px;margin:16px 0;padding:12px 18px}
section.case h2{font-size:17px;margin:4px 0}
.where{color:#57606a;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #d0d7de;padding:2px 8px;text-align:left;vertical-align:top;font-size:13px}
th{background:#f6f8fa}
td.want{color:#1a7f37}td.have{color:#cf222e}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:480px;white-space:pre-wrap}
pre.why{background:#fff8c5;border-left:3px solid #bf8700}
.pics{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
figure{margin:6px 0;display:table}figcaption{display:table-caption;caption-side:bottom;font-size:12px;color:#57606a}
ul.index{columns:3;padding-left:18px}
.more{color:#57606a;font-style:italic}
"""


def _e(value: Any) -> str:
    return html_text(value)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _fmt(value: Any, limit: int = 2_000) -> str:
    """A value as YAML on one line (``{n1: 50}``, ``[a, b]``, ``null``); text as it is."""
    if isinstance(value, str):
        text = value
    else:
        from kspread.workflow.yamltext import flow

        text = flow(value)
    return text if len(text) <= limit else text[:limit] + f"\u2026 ({len(text) - limit} more characters)"


def _svg_text(x: float, y: float, text: str, n: int, cls: str = "", size: int = 11, anchor: str = "start",
              fill: str = "#1f2328", weight: str = "normal") -> str:
    short = _short(text, n)
    tip = f"<title>{_e(text)}</title>" if short != text else ""
    return (f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" '
            f'font-weight="{weight}" font-family="system-ui,sans-serif"{cls}>{tip}{_e(short)}</text>')


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{_e(label)}">'
            + "".join(body) + "</svg>")


def _placements(pic: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, str], set[str]]:
    """Per node: the incoming pods bound there (by the last cycle of each pod); the
    nominated node of a preemption, and its victims and the pods steps evicted."""
    landed: dict[str, str] = {}
    nominated: dict[str, str] = {}
    victims: set[str] = set()
    for c in pic.get("cycles", []):
        if c.get("node"):
            landed[c["pod"]] = c["node"]
            nominated.pop(c["pod"], None)
        elif c.get("nominated"):
            nominated[c["pod"]] = c["nominated"]
            landed.pop(c["pod"], None)
        victims.update(c.get("victims", []))
    for m in pic.get("steps", []):
        victims.update(m.get("evicted", []))  # evicted by a step (drain, NoExecute, deletePod)
    on: dict[str, list[str]] = {}
    for pod, node in landed.items():
        on.setdefault(node, []).append(pod)
    return on, nominated, victims


def cluster_svg(pic: dict[str, Any]) -> str:
    """The nodes grouped by zone, each with its pods: the incoming pod's node in green
    (the pod on it marked), a preemption's nominated node in orange, victims struck."""
    landed, nominated, victims = _placements(pic)
    nominated_nodes: dict[str, list[str]] = {}
    for pod, node in nominated.items():
        nominated_nodes.setdefault(node, []).append(pod)
    zones: dict[str, list[dict[str, Any]]] = {}
    for n in pic["nodes"]:
        zones.setdefault(n["zone"], []).append(n)
    w, gap = 168, 10
    per_row = max(1, min(5, max((len(ns) for ns in zones.values()), default=1)))
    body: list[str] = []
    y = 4.0
    drawn = 0
    for zone, nodes in zones.items():
        if drawn >= MAX_DRAWN_NODES:
            break
        shown = nodes[: min(MAX_ZONE_NODES, MAX_DRAWN_NODES - drawn)]
        drawn += len(shown)
        rows = [shown[i:i + per_row] for i in range(0, len(shown), per_row)]
        top = y
        y += 20
        for row in rows:
            heights = []
            for n in row:
                chips = len(landed.get(n["name"], [])) + len(nominated_nodes.get(n["name"], [])) \
                    + min(len(n["pods"]), MAX_CHIPS) + (1 if n["podsTotal"] > MAX_CHIPS else 0)
                heights.append(26 + 15 * max(chips, 1))
            h = max(heights)
            for i, n in enumerate(row):
                x = 14 + i * (w + gap)
                name = n["name"]
                incoming = landed.get(name, [])
                waiting = nominated_nodes.get(name, [])
                stroke, fill = ("#1a7f37", "#dafbe1") if incoming else (("#bc4c00", "#fff1e5") if waiting
                                                                       else ("#8c959f", "#ffffff"))
                body.append(f'<rect x="{x}" y="{y:.0f}" width="{w}" height="{h}" rx="5" fill="{fill}" '
                            f'stroke="{stroke}" stroke-width="{2 if incoming or waiting else 1}"/>')
                body.append(_svg_text(x + 8, y + 16, name, 24, weight="600"))
                cy = y + 32
                for pod in incoming:
                    body.append(_svg_text(x + 10, cy, "\u25b6 " + pod, 24, fill="#1a7f37", weight="600"))
                    cy += 15
                for pod in waiting:
                    body.append(_svg_text(x + 10, cy, "\u25b7 " + pod + " (nominated)", 24, fill="#bc4c00",
                                          weight="600"))
                    cy += 15
                for pod in n["pods"][:MAX_CHIPS]:
                    gone = pod in victims
                    body.append(_svg_text(x + 10, cy, ("\u2715 " if gone else "\u25cf ") + pod, 24,
                                          fill="#cf222e" if gone else "#57606a"))
                    if gone:
                        body.append(f'<line x1="{x + 22}" y1="{cy - 4:.0f}" x2="{x + w - 10}" y2="{cy - 4:.0f}" '
                                    'stroke="#cf222e" stroke-width="1"/>')
                    cy += 15
                if n["podsTotal"] > MAX_CHIPS:
                    body.append(_svg_text(x + 10, cy, f"+{n['podsTotal'] - MAX_CHIPS} more pods", 24, fill="#57606a"))
                elif not n["pods"] and not incoming and not waiting:
                    body.append(_svg_text(x + 10, cy, "(no pods)", 24, fill="#8c959f"))
            y += h + gap
        more = len(nodes) - len(shown)
        label = f"zone {zone}" if zone else "no zone"
        if more > 0:
            label += f" ({more} more nodes not drawn)"
        body.append(f'<rect x="4" y="{top:.0f}" width="{14 + per_row * (w + gap)}" height="{y - top:.0f}" rx="7" '
                    'fill="none" stroke="#0969da" stroke-dasharray="4 3"/>')
        body.append(_svg_text(12, top + 14, label, 60, fill="#0969da", weight="600"))
        y += 8
    not_drawn = pic["nodesTotal"] - drawn
    if not_drawn > 0:
        body.append(_svg_text(12, y + 12, f"{not_drawn} more node(s) not drawn", 60, fill="#57606a"))
        y += 20
    return _svg(max(24 + per_row * (w + gap), 380), y + 4, body, "nodes by zone with their pods")


def _heat(score: float, top: float) -> str:
    frac = 0.0 if top <= 0 else max(0.0, min(1.0, score / top))
    light = 96 - 52 * frac
    return f"hsl(212,80%,{light:.0f}%)"


def heatmap_svg(actual: dict[str, Any], expected: dict[str, Any] | None,
                pic: dict[str, Any] | None = None) -> str | None:
    """Nodes (columns, by total score, highest first) by score plugin (rows): each
    cell the plugin's weighted score (its normalized score times its weight, the weight
    in the row's label), darker when higher, with a row for what the extenders added, so
    that each node's column adds up to its total; a cell whose expected (normalized)
    score differs is outlined in red; the selected node's column is marked. Without the
    weights (``pic`` has none), the normalized scores."""
    scores = actual.get("scores") or {}
    totals = actual.get("totals") or {}
    if not scores or not totals:
        return None
    want = (expected or {}).get("scores") if isinstance(expected, dict) else None
    want = want if isinstance(want, dict) else {}
    weighted = (pic or {}).get("weighted")
    weights = (pic or {}).get("weights") or {}
    nodes = sorted(totals, key=lambda n: -float(totals[n]) if isinstance(totals[n], (int, float)) else 0)
    more_nodes = max(0, len(nodes) - MAX_HEAT_NODES)
    all_nodes = nodes
    nodes = nodes[:MAX_HEAT_NODES]
    plugins = list(scores)[:MAX_HEAT_PLUGINS]
    more_plugins = len(scores) - len(plugins)
    sel = actual.get("selected")
    selected = set(sel if isinstance(sel, list) else [sel] if sel else [])
    left, cw, ch, top = 250, 64, 22, 50
    body: list[str] = []
    for j, node in enumerate(nodes):
        x = left + j * cw + cw / 2
        mark = "\u2605 " if node in selected else ""
        body.append(f'<g transform="translate({x:.0f},{top - 6}) rotate(-35)">'
                    + _svg_text(0, 0, mark + node, 16, weight="600" if mark else "normal",
                                fill="#1a7f37" if mark else "#1f2328") + "</g>")
    rows: list[tuple[str, str, dict[str, Any]]] = []  # (label, plugin, value per node)
    if isinstance(weighted, dict):
        for p in plugins:
            rows.append((f"{p} \u00d7{weights.get(p, 1)}", p, weighted.get(p) or {}))
        # what the score plugins do not explain: the extenders' prioritize scores (and the
        # plugins not drawn), so that each column adds up to its total
        rest = {n: totals[n] - sum((weighted.get(p) or {}).get(n, 0) for p in plugins) for n in all_nodes
                if isinstance(totals.get(n), (int, float))}
        if any(rest.values()):
            rows.append(("extenders" if not more_plugins else f"extenders and {more_plugins} more plugin(s)",
                         "", rest))
    else:
        rows.extend((p, p, scores[p]) for p in plugins)
    rows.append(("total", "total", totals))
    for i, (label, plugin, per_node) in enumerate(rows):
        y = top + i * ch
        is_total = plugin == "total"
        body.append(_svg_text(left - 8, y + 15, label, 38, anchor="end", weight="600" if is_total else "normal"))
        vals = [v for v in (per_node or {}).values() if isinstance(v, (int, float))]
        high = max(vals, default=0)
        for j, node in enumerate(nodes):
            v = (per_node or {}).get(node)
            x = left + j * cw
            fill = "#f6f8fa" if not isinstance(v, (int, float)) else (
                _heat(v, high) if not is_total else f"hsl(140,60%,{96 - 50 * (v / high if high > 0 else 0):.0f}%)")
            norm = (scores.get(plugin) or {}).get(node) if plugin in scores else None
            exp = want.get(plugin, {}).get(node) if isinstance(want.get(plugin), dict) else None
            wrong = exp is not None and exp != norm
            stroke = 'stroke="#cf222e" stroke-width="2.5"' if wrong else 'stroke="#ffffff" stroke-width="1"'
            if plugin in scores and isinstance(weighted, dict):
                tip = f"{plugin} on {node}: normalized {_fmt(norm)} \u00d7 weight {weights.get(plugin, 1)} = {_fmt(v)}"
            else:
                tip = f"{label} on {node}: {_fmt(v)}"
            tip += f" (expected normalized {_fmt(exp)})" if wrong else ""
            body.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cw - 2}" height="{ch - 2}" fill="{fill}" {stroke}>'
                        f"<title>{_e(tip)}</title></rect>")
            dark = isinstance(v, (int, float)) and high > 0 and v / high > 0.6
            body.append(_svg_text(x + cw / 2, y + 15, "" if v is None else _fmt(v), 9, anchor="middle",
                                  fill="#ffffff" if dark else "#1f2328"))
    h = top + len(rows) * ch + 6
    width = left + len(nodes) * cw + 40
    if more_nodes:
        body.append(_svg_text(left, h + 10, f"{more_nodes} more node(s) not drawn", 60, fill="#57606a"))
        h += 18
    return _svg(max(width, 320), h, body, "heatmap of nodes by score plugin")


def node_marks_table(pic: dict[str, Any], first: list[str]) -> str:
    """A table of the nodes' taints and of their labels the plugins read (the nodes of
    ``first`` first, at most ``MAX_HEAT_NODES``; a node with neither is left out)."""
    by_name = {n["name"]: n for n in pic.get("nodes", [])}
    order = [n for n in dict.fromkeys([*first, *by_name]) if n in by_name]
    marked = [by_name[n] for n in order if by_name[n].get("taints") or by_name[n].get("labels")]
    if not marked:
        return ""

    def cell(items: list[str], total: int) -> str:
        more = f" <span class='more'>+{total - len(items)} more</span>" if total > len(items) else ""
        return ", ".join(f"<code>{_e(x)}</code>" for x in items) + more

    rows = ["<table class='marks'><tr><th>node</th><th>taints</th><th>labels the plugins read</th></tr>"]
    for n in marked[:MAX_HEAT_NODES]:
        rows.append(f"<tr><td>{_e(n['name'])}</td><td>{cell(n.get('taints', []), n.get('taintsTotal', 0))}</td>"
                    f"<td>{cell(n.get('labels', []), n.get('labelsTotal', 0))}</td></tr>")
    rows.append("</table>")
    if len(marked) > MAX_HEAT_NODES:
        rows.append(f"<p class='more'>{len(marked) - MAX_HEAT_NODES} more node(s) with taints or labels</p>")
    return "".join(rows)


def _step_note(m: dict[str, Any]) -> str:
    parts = []
    for k in ("evicted", "kept", "created", "moved"):
        if m.get(k):
            more = m.get(k + "Total", len(m[k])) - len(m[k])
            parts.append(f"{k} {', '.join(m[k])}" + (f" and {more} more" if more > 0 else ""))
    return f"step: {m['step']} (clock {m['clock']} s)" + (": " + "; ".join(parts) if parts else "")


def sequence_svg(pic: dict[str, Any]) -> str | None:
    """A sequence cycle by cycle: a row per cycle, a column per node it touched; a
    green dot where the pod was bound, an orange ring where a preemption nominated it
    (the victims named at the row's end), a grey cross for a pod left unschedulable.
    A step (drain, addNode, wait, ...) is a blue band between the cycles it came
    between, saying what it evicted, kept, created and moved."""
    cycles = pic.get("cycles") or []
    steps = pic.get("steps") or []
    if not pic.get("sequence") or not (cycles or steps):
        return None
    shown = cycles[:MAX_SEQ_CYCLES]
    rows: list[tuple[str, Any]] = []
    pending = list(steps)
    for i, c in enumerate(shown):
        while pending and pending[0]["before"] <= i:
            rows.append(("step", pending.pop(0)))
        rows.append(("cycle", (i, c)))
    if len(shown) == len(cycles):
        rows.extend(("step", m) for m in pending)
        pending = []
    nodes = list(dict.fromkeys(c.get("node") or c.get("nominated") for c in shown
                               if c.get("node") or c.get("nominated")))
    more_nodes = max(0, len(nodes) - MAX_SEQ_NODES)
    nodes = nodes[:MAX_SEQ_NODES]
    left, cw, rh, top = 190, 56, 20, 50
    width = left + max(len(nodes), 1) * cw + 200
    if any(kind == "step" for kind, _ in rows):
        width = max(width, 720)  # room for a step's line
    body: list[str] = []
    for j, node in enumerate(nodes):
        x = left + j * cw + cw / 2
        body.append(f'<g transform="translate({x:.0f},{top - 6}) rotate(-35)">' + _svg_text(0, 0, node, 16)
                    + "</g>")
    for r, (kind, item) in enumerate(rows):
        y = top + r * rh
        if kind == "step":
            body.append(f'<rect x="4" y="{y}" width="{width}" height="{rh}" fill="#ddf4ff"/>')
            body.append(_svg_text(8, y + 14, "\u25b8 " + _step_note(item), (width - 16) // 7, fill="#0969da"))
            continue
        i, c = item
        if i % 2 == 0:
            body.append(f'<rect x="4" y="{y}" width="{width}" height="{rh}" fill="#f6f8fa"/>')
        body.append(_svg_text(8, y + 14, f"{i + 1}. {c['pod']}", 28))
        target = c.get("node") or c.get("nominated")
        for j, node in enumerate(nodes):
            cx, cy = left + j * cw + cw / 2, y + rh / 2
            if node == target and c.get("node"):
                body.append(f'<circle cx="{cx:.0f}" cy="{cy:.0f}" r="6" fill="#1a7f37"><title>{_e(c["pod"])} bound '
                            f'to {_e(node)}</title></circle>')
            elif node == target:
                body.append(f'<circle cx="{cx:.0f}" cy="{cy:.0f}" r="6" fill="none" stroke="#bc4c00" '
                            f'stroke-width="2.5"><title>{_e(c["pod"])} nominated to {_e(node)}</title></circle>')
        note = ""
        if c.get("victims"):
            note = "preempts " + ", ".join(c["victims"])
        elif c.get("error"):
            note = "error: " + c["error"]
        elif not target:
            note = "\u2715 unschedulable"
        if note:
            body.append(_svg_text(left + max(len(nodes), 1) * cw + 8, y + 14, note, 40,
                                  fill="#cf222e" if "unsched" in note or "error" in note else "#bc4c00"))
    h = top + len(rows) * rh + 8
    extra = []
    if pic.get("cyclesTotal", len(cycles)) > len(shown):
        extra.append(f"{pic.get('cyclesTotal', len(cycles)) - len(shown)} more cycle(s) not drawn")
    if pending:
        extra.append(f"{len(pending)} more step(s) not drawn")
    if more_nodes:
        extra.append(f"{more_nodes} more node(s) not drawn")
    if extra:
        body.append(_svg_text(8, h + 10, "; ".join(extra), 80, fill="#57606a"))
        h += 18
    return _svg(width + 20, h, body, "placements cycle by cycle, with the steps between them")


def _differences_table(diffs: list[dict[str, Any]]) -> str:
    rows = ["<table class='diffs'><tr><th>key</th><th>what</th><th>expected</th><th>actual</th><th>note</th></tr>"]
    for d in diffs[:MAX_DIFF_ROWS]:
        rows.append(f"<tr><td>{_e(d.get('key', ''))}</td><td>{_e(d.get('what', ''))}</td>"
                    f"<td class='want'><code>{_e(_fmt(d.get('expected')))}</code></td>"
                    f"<td class='have'><code>{_e(_fmt(d.get('actual')))}</code></td>"
                    f"<td>{_e(d.get('note', ''))}</td></tr>")
    rows.append("</table>")
    if len(diffs) > MAX_DIFF_ROWS:
        rows.append(f"<p class='more'>{len(diffs) - MAX_DIFF_ROWS} more difference(s) not shown</p>")
    return "".join(rows)


def _where(e: dict[str, Any]) -> str:
    return f"{e['file']}:{e['line']}" if e.get("line") else str(e["file"])


def _case_section(i: int, e: dict[str, Any]) -> str:
    name = e.get("name", "(case file)")
    ver = f", version {e['version']}" if e.get("version") else ""
    out = [(f"<section class='case' id='case-{i}'><h2><span class='pill fail'>FAIL</span> {_e(name)}</h2>"
            f"<div class='where'>{_e(_where(e))}{_e(ver)}</div>")]
    if e.get("differences"):
        out.append(_differences_table(e["differences"]))
    elif e.get("error"):
        out.append(f"<pre>{_e(e['error'])}</pre>")
    if e.get("why"):
        # the scheduler's verdict, the preemption's deciding criterion, what it would take: in view
        out.append(f"<pre class='why'>{_e(chr(10).join(str(x) for x in e['why']))}</pre>")
    pics: list[str] = []
    pic = e.get("cluster")
    if pic and pic.get("nodes"):
        pics.append(f"<figure>{cluster_svg(pic)}<figcaption>Nodes by zone with their pods; green: where the incoming"
                    " pod went, orange: nominated by a preemption, struck: victims and pods a step evicted</figcaption></figure>")
    heat = heatmap_svg(e.get("actual") or {}, e.get("expected"), pic)
    if heat:
        what = ("Weighted scores by plugin (normalized \u00d7 weight), the extenders' and the total: each node's "
                "column adds up to its total" if pic and "weighted" in pic else "Scores by plugin (normalized) and "
                "total")
        pics.append(f"<figure>{heat}<figcaption>{what}; \u2605 selected; red outline: differs from the expected "
                    "score</figcaption></figure>")
    if pic:
        seq = sequence_svg(pic)
        if seq:
            pics.append(f"<figure>{seq}<figcaption>Placements cycle by cycle, and the steps between them</figcaption></figure>")
    if pics:
        out.append("<div class='pics'>" + "".join(pics) + "</div>")
    if pic:
        totals = (e.get("actual") or {}).get("totals") or {}
        first = sorted(totals, key=lambda n: -float(totals[n]) if isinstance(totals[n], (int, float)) else 0)
        marks = node_marks_table(pic, [*(d.get("what", "").split(" ")[-1] for d in e.get("differences") or []),
                                       *first])
        if marks:
            out.append(marks)
    msg = str(e.get("message") or "")
    if msg:
        cut = msg[:MAX_MESSAGE] + (f"\n... ({len(msg) - MAX_MESSAGE} more characters)" if len(msg) > MAX_MESSAGE
                                   else "")
        out.append(f"<details><summary>The failure report as the terminal shows it</summary><pre>{_e(cut)}</pre>"
                   "</details>")
    out.append("</section>")
    return "".join(out)


def _bar(passed: int, failed: int) -> str:
    total = max(passed + failed, 1)
    w = 600
    pw = w * passed / total
    return _svg(w, 14, [f'<rect x="0" y="0" width="{pw:.1f}" height="14" fill="#2da44e"/>',
                        f'<rect x="{pw:.1f}" y="0" width="{w - pw:.1f}" height="14" fill="#cf222e"/>'],
                f"{passed} passed, {failed} failed")


def render_html(report: Iterable[dict[str, Any]], summary: str, title: str = "kspread report") -> str:
    entries = list(report)
    bad = [e for e in entries if not e.get("passed", False)]
    good = [e for e in entries if e.get("passed", False)]
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
             f"<header><h1>{_e(title)}</h1><div class='sum'>{_e(summary)}</div>{_bar(len(good), len(bad))}</header>",
             "<main>"]
    if bad:
        parts.append(f"<h2>Failing cases ({len(bad)})</h2><ul class='index'>")
        for i, e in enumerate(bad):
            link = f"<a href='#case-{i}'>" if i < MAX_DETAILED else "<span>"
            end = "</a>" if i < MAX_DETAILED else "</span>"
            parts.append(f"<li>{link}{_e(e.get('name', e['file']))}{end} <span class='where'>"
                         f"{_e(_where(e))}</span></li>")
        parts.append("</ul>")
        for i, e in enumerate(bad[:MAX_DETAILED]):
            parts.append(_case_section(i, e))
        if len(bad) > MAX_DETAILED:
            parts.append(f"<p class='more'>{len(bad) - MAX_DETAILED} more failing case(s) listed above, not "
                         "detailed</p>")
    if good:
        parts.append(f"<h2>Passing cases ({len(good)})</h2><table><tr><th>case</th><th>where</th><th>version</th>"
                     "<th>selected</th></tr>")
        for e in good[:MAX_PASSED_ROWS]:
            sel = (e.get("actual") or {}).get("selected")
            parts.append(f"<tr><td><span class='pill pass'>PASS</span> {_e(e.get('name', ''))}</td>"
                         f"<td class='where'>{_e(_where(e))}</td><td>{_e(e.get('version', ''))}</td>"
                         f"<td>{_e(_fmt(sel) if 'actual' in e else '(expected error)')}</td></tr>")
        parts.append("</table>")
        if len(good) > MAX_PASSED_ROWS:
            parts.append(f"<p class='more'>{len(good) - MAX_PASSED_ROWS} more passing case(s)</p>")
    parts.append("</main></body></html>\n")
    return "".join(parts)
