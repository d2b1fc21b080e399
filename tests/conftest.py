"""The example extender (examples/extender) runs for the whole test session on a free
loopback port, so that tests running the golden cases of cases/extenders reach it
through KSPREAD_EXAMPLE_EXTENDER, as cases/extenders/conftest.py does for pytest cases/."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# The plugin imports the loader and the engine at the first case file it collects. An
# in-process pytester run removes the modules imported during it, and numpy cannot be
# imported twice in one process: import them here, before any pytester run.
import kspread.format.loader
import kspread.workflow.runner  # noqa: F401

pytest_plugins = ["pytester"]

EXAMPLE_VAR = "KSPREAD_EXAMPLE_EXTENDER"


@pytest.fixture(scope="session", autouse=True)
def example_extender() -> Iterator[str | None]:
    if os.environ.get(EXAMPLE_VAR):
        yield os.environ[EXAMPLE_VAR]
        return
    path = Path(__file__).resolve().parent.parent / "examples" / "extender" / "extender.py"
    spec = importlib.util.spec_from_file_location("kspread_example_extender", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server, url = module.serve(0)
    os.environ[EXAMPLE_VAR] = url
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
        os.environ.pop(EXAMPLE_VAR, None)
