"""The three sides stay apart, arrows pointing one way: workflow -> case format ->
engine. The engine (what upstream's pkg/scheduler is) imports neither the case format
nor the workflow; the case format does not import the workflow; plugins and the
framework do not import the scheduling cycle; neither the framework nor the model (nor
the configuration API) imports the plugins. Imports anywhere in a file count,
functions included."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "kspread"
SIDES = ("engine", "format", "workflow")


def _imported(path: Path) -> set[str]:
    """The kspread modules a file imports, dotted (``kspread.engine.scheduler``)."""
    mods: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            mods.add(node.module)
            mods.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
    return {m for m in mods if m.startswith("kspread.")}


def _side(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in SIDES else None


def _violations(side: str, forbidden: set[str]) -> dict[str, list[str]]:
    out = {}
    for p in sorted((PKG / side).rglob("*.py")):
        bad = sorted(m for m in _imported(p) if _side(m) in forbidden)
        if bad:
            out[str(p.relative_to(PKG))] = bad
    return out


def test_every_module_is_on_one_side():
    loose = sorted(p.name for p in PKG.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "errors.py"]


def test_engine_imports_neither_format_nor_workflow():
    assert _violations("engine", {"format", "workflow"}) == {}


def test_format_does_not_import_the_workflow():
    assert _violations("format", {"workflow"}) == {}


def test_plugins_and_framework_do_not_import_the_scheduling_cycle():
    bad = [str(p.relative_to(PKG)) for d in ("plugins", "framework") for p in sorted((PKG / "engine" / d).glob("*.py"))
           if "kspread.engine.scheduler" in _imported(p)]
    assert bad == []


def _imports_of_plugins(paths: list[Path]) -> dict[str, list[str]]:
    """The files among ``paths`` that import a plugin module (anywhere in the file), each
    with what it imports from ``kspread.engine.plugins``."""
    out = {}
    for p in paths:
        bad = sorted(m for m in _imported(p) if m.startswith("kspread.engine.plugins"))
        if bad:
            out[str(p.relative_to(PKG))] = bad
    return out


def test_the_model_does_not_import_the_plugins():
    """The API objects sit below the plugins: the helpers they share (does a toleration
    tolerate a taint) live in kspread.engine.corev1helpers, as upstream's sit with the
    types in component-helpers/scheduling/corev1."""
    assert _imports_of_plugins([PKG / "engine" / "model.py", PKG / "engine" / "corev1helpers.py"]) == {}


def test_the_framework_does_not_import_the_plugins():
    """Plugins import the framework, never the other way round: the plugin arguments'
    types and defaults live in kspread.engine.apis (as upstream's apis/config), and the
    scheduler, not the registry, imports the in-tree plugins."""
    below = sorted((PKG / "engine" / "framework").glob("*.py")) + sorted((PKG / "engine" / "apis").glob("*.py"))
    assert _imports_of_plugins(below) == {}


def test_no_import_cycle_between_modules_at_import_time():
    """Module-level imports only (function-level imports are deferred): no cycle."""
    graph: dict[str, set[str]] = {}
    for p in PKG.rglob("*.py"):
        mod = "kspread." + ".".join(p.relative_to(PKG).with_suffix("").parts)
        mod = mod.removesuffix(".__init__")
        deps = set()
        for node in ast.parse(p.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kspread"):
                deps.add(node.module)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("kspread"))
        graph[mod] = deps
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in graph.get(m, ()):
            if d not in graph:
                continue
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d] if d in stack else [m, d])
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_case_format_has_no_import_circle_even_through_deferred_imports():
    """case -> config -> loader -> case was one: configuration files find their lines in
    kspread.format.yamlio, below the loader."""
    fmt = {p: "kspread.format." + p.stem for p in (PKG / "format").glob("*.py") if p.stem != "__init__"}
    graph = {mod: {m for m in _imported(p) if m in fmt.values()} for p, mod in fmt.items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(d == goal or (d not in seen and reaches(d, goal, seen | {d})) for d in graph[start])

    assert sorted(m for m in graph if reaches(m, m, {m})) == []


def test_explain_does_not_import_the_runner():
    """The runner runs cases and composes failure reports with explain's capture and
    tables; explain reads the engine's records and imports no runner: no import circle."""
    assert "kspread.workflow.runner" not in _imported(PKG / "workflow" / "explain.py")
