"""The engine (what upstream's pkg/scheduler is) imports neither the case format nor
the workflow: arrows point workflow -> case format -> engine."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "kspread"

ENGINE = ["framework", "plugins", "snapshot.py", "scheduler.py", "resources.py", "listers.py", "model.py",
          "labels.py", "versions.py", "quantity.py", "errors.py"]
FORMAT = {"case", "loader", "schema", "config", "importer"}
WORKFLOW = {"runner", "update", "diff", "explain", "cli", "pytest_plugin"}


def _engine_files() -> list[Path]:
    out: list[Path] = []
    for entry in ENGINE:
        p = PKG / entry
        out += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return out


def _imported(path: Path) -> set[str]:
    """Top-level kspread modules a file imports (anywhere in it, functions included)."""
    mods: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for n in names:
            parts = n.split(".")
            if parts[0] == "kspread" and len(parts) > 1:
                mods.add(parts[1])
    return mods


def test_engine_imports_neither_format_nor_workflow():
    bad = {str(p.relative_to(PKG)): sorted(_imported(p) & (FORMAT | WORKFLOW)) for p in _engine_files()}
    assert {k: v for k, v in bad.items() if v} == {}


def test_plugins_do_not_import_the_scheduler():
    bad = [str(p.relative_to(PKG)) for p in sorted((PKG / "plugins").glob("*.py")) + sorted(
        (PKG / "framework").glob("*.py")) if "scheduler" in _imported(p)]
    assert bad == []

