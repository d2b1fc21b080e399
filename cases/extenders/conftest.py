"""Starts the example extender (examples/extender/extender.py) on a free loopback port
before the first case of this directory runs, and points the cases at it through the
variable they name (KSPREAD_EXAMPLE_EXTENDER), which it allows them to read (kspread reads
no variable a case names unless allowed outside the case: here the ini key
kspread_extender_env). A value already set is kept: run these cases against another copy
by setting it, or with --kspread-extender example=URL."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

VAR = "KSPREAD_EXAMPLE_EXTENDER"
_server = pytest.StashKey[object]()


def _start(config: pytest.Config) -> None:
    if _server in config.stash or os.environ.get(VAR):
        return
    path = Path(__file__).resolve().parents[2] / "examples" / "extender" / "extender.py"
    spec = importlib.util.spec_from_file_location("kspread_example_extender", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server, url = module.serve(0)
    config.stash[_server] = server
    os.environ[VAR] = url


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("kspread_extender_env", VAR)


def pytest_runtest_setup(item: pytest.Item) -> None:
    _start(item.config)


def pytest_unconfigure(config: pytest.Config) -> None:
    server = config.stash.get(_server, None)
    if server is not None:
        server.shutdown()  # type: ignore[attr-defined]
        server.server_close()  # type: ignore[attr-defined]
        os.environ.pop(VAR, None)
