"""Scale-out for corpora is pytest-xdist: ``pytest -n 2 cases/`` collects and runs the
same items with the same outcomes as a serial run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("xdist")


def _outcomes(*extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "pytest", "cases", "-q", "-rA", "-p", "no:cacheprovider", *extra]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)", line)
        if m:
            out[m.group(2)] = m.group(1)
    assert out, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


def test_parallel_run_matches_serial_run():
    serial = _outcomes()
    parallel = _outcomes("-n", "2")
    assert parallel == serial
