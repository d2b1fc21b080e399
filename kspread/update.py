"""Golden update: rewrite the ``expect`` of failing (or empty) cases with the
actual results, in place, keeping comments, key order and quoting (ruamel.yaml
round trip), written atomically. Used by ``pytest --kspread-update`` and
``kspread run --update``; nothing is ever written without one of them.
"""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Mapping

from kspread.runner import EXPECT_KEYS


@dataclass
class Update:
    file: str
    index: int  # YAML document index in the file
    variant: str | None
    case: str
    new: dict[str, Any]  # the new values of expect's keys (None value: remove the key)
    fill: bool  # the expect was empty: new is the whole expect


def new_expect_values(expect: Mapping[str, Any], actual: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """What to write: for an empty ``expect`` the keys the run produced; otherwise the
    keys the expectation names, restricted to the nodes, plugins and pods it lists."""
    if not expect:
        out: dict[str, Any] = {}
        failing = {n: st for n, st in (actual.get("filter") or {}).items() if st.get("code") != "Success"}
        if failing:
            out["filter"] = failing
        if actual.get("scores"):
            out["scores"] = actual["scores"]
        if actual.get("totals"):
            out["totals"] = actual["totals"]
        if "placements" in actual:
            out["placements"] = actual["placements"]
        else:
            if not actual.get("totals"):
                out["feasible"] = actual.get("feasible", [])
            out["selected"] = actual.get("selected")
            if "preemption" in actual:
                out["unschedulable"] = actual.get("unschedulable")
                out["preemption"] = actual["preemption"]
        return out, True
    out = {}
    for key in EXPECT_KEYS:
        if key not in expect:
            continue
        want = expect[key]
        if key not in actual:
            out[key] = None
            continue
        have = actual[key]
        if key == "filter":
            out[key] = {
                n: (have[n]["code"] if isinstance(w, str) else dict(have[n])) if n in have else w
                for n, w in want.items()
            }
        elif key in ("rawScores", "scores"):
            if want == {}:
                out[key] = have
            else:
                out[key] = {p: {n: (have.get(p) or {}).get(n) for n in per_node} for p, per_node in want.items()}
        elif key in ("totals", "placements") and isinstance(want, Mapping) and want:
            out[key] = {n: have.get(n) for n in want}
        else:
            out[key] = have
    return out, False


def _flow(value: Any) -> Any:
    """ruamel values: leaf mappings and lists in flow style ({n1: 50, n2: 0})."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, Mapping):
        m = CommentedMap()
        leaf = True
        for k, v in value.items():
            m[k] = _flow(v)
            if isinstance(v, (Mapping, list)) and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
                leaf = False
        if leaf:
            m.fa.set_flow_style()
        return m
    if isinstance(value, list):
        s = CommentedSeq(_flow(v) for v in value)
        s.fa.set_flow_style()
        return s
    return value


def _yaml():
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=2, offset=0)
    return y


def _expect_span(root, variant: str | None) -> tuple[int, int, int] | None:
    """(start, end, column) of the ``expect: ...`` entry in a composed document."""
    import yaml

    node = root
    if variant is not None:
        for k, v in node.value:
            if k.value == "variants":
                node = v
                break
        else:
            return None
        for k, v in node.value:
            if k.value == variant:
                node = v
                break
        else:
            return None
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if k.value == "expect":
            return k.start_mark.index, v.end_mark.index, k.start_mark.column
    return None


def apply(file: str, updates: list[Update]) -> list[str]:
    """Rewrite the ``expect`` entries of ``file`` named by ``updates``; every other byte
    of the file stays as it was. Returns one line per change made."""
    from kspread.yamlio import compose_documents

    with open(file, encoding="utf-8") as f:
        text = f.read()
    roots = compose_documents(text)  # a broken document of the file is None: its neighbours still update
    y = _yaml()
    edits: list[tuple[int, int, str]] = []
    changes: list[str] = []
    for u in updates:
        span = _expect_span(roots[u.index], u.variant)
        if span is None:
            changes.append(f"{file}: {u.case}: no expect entry found; not updated")
            continue
        start, end, col = span
        chunk = text[start:end].rstrip(" \t\n")  # the node's end mark may reach into the next line
        end = start + len(chunk)
        lines = chunk.split("\n")
        body = "\n".join([lines[0]] + [ln[col:] if ln[:col].strip() == "" else ln for ln in lines[1:]])
        holder = y.load(body)
        exp = holder["expect"]
        if exp is None:
            holder["expect"] = exp = _flow({})
        for key, value in u.new.items():
            old = exp.get(key, "(absent)")
            if value is None and key in exp and key not in ("selected", "preemption"):
                del exp[key]
                changes.append(f"{file}: {u.case}: expect.{key} removed (the run produced no {key})")
                continue
            if old == value:
                continue
            exp[key] = _flow(value)
            changes.append(f"{file}: {u.case}: expect.{key}: {_short(old)} -> {_short(value)}")
        if u.fill:
            exp.fa.set_block_style()
        out = io.StringIO()
        y.dump(holder, out)
        rendered = out.getvalue().rstrip("\n")
        pad = " " * col
        rendered = "\n".join([ln if i == 0 or not ln else pad + ln for i, ln in enumerate(rendered.split("\n"))])
        if rendered != chunk:
            edits.append((start, end, rendered))
    new_text = text
    for start, end, rendered in sorted(edits, reverse=True):
        new_text = new_text[:start] + rendered + new_text[end:]
    if new_text != text:
        write_atomic(file, new_text)
    return changes


def _short(v: Any) -> str:
    s = repr(v if not hasattr(v, "items") else dict(v))
    return s if len(s) < 120 else s[:117] + "..."


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and
    an atomic rename, keeping the file's permissions."""
    d = os.path.dirname(os.path.abspath(path))
    mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o644
    fd, tmp = tempfile.mkstemp(prefix=".kspread-", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def apply_all(updates: list[Update]) -> list[str]:
    by_file: dict[str, list[Update]] = {}
    for u in updates:
        by_file.setdefault(u.file, []).append(u)
    changes: list[str] = []
    for file, us in by_file.items():
        changes.extend(apply(file, us))
    return changes


def update_for(doc, verdict) -> Update | None:
    """The update a checked case needs, or None (passing, error case, did not run)."""
    from kspread.loader import expected_error

    if expected_error(doc) is not None or verdict.outcome is None or verdict.case is None:
        return None
    expect = verdict.case.expect
    if verdict.passed and expect:
        return None
    new, fill = new_expect_values(expect, verdict.outcome.actual)
    return Update(doc.file, doc.index, doc.variant, doc.name, new, fill)
