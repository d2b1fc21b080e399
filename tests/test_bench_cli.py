"""bench/bench.py's own command line: a malformed option is a usage error, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench.py"


@pytest.mark.parametrize("option, value", [("--pods", "5000"), ("--baseline-pods", "40,10"),
                                           ("--spread-pods", "a,b")])
def test_a_short_long_option_that_is_not_two_numbers_is_a_usage_error(option, value):
    r = subprocess.run([sys.executable, str(BENCH), "--only", "basic", "--no-baseline", option, value],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert f"argument {option}: '{value}': give two numbers, short,long, with short < long" in r.stderr
    assert "Traceback" not in r.stderr
