"""The tree stays ruff-clean and mypy-clean: both run here, from the repository root,
with the settings in pyproject.toml ([tool.ruff], [tool.mypy]), so that the README's
test command (and .ci/run) checks them too. Both come with the `test` extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def _failure(tool: str, res: subprocess.CompletedProcess[str]) -> str:
    return (f"{tool} failed (exit {res.returncode}); run it from the repository root to see the same "
            f"(install it with: python3 -m pip install -e '.[test]')\n{res.stdout}{res.stderr}")


def test_ruff_is_clean():
    res = _run("ruff", "check", "--no-cache", ".")
    assert res.returncode == 0, _failure("ruff check .", res)


def test_mypy_is_clean():
    res = _run("mypy", "--config-file", "pyproject.toml")
    assert res.returncode == 0, _failure("mypy", res)
