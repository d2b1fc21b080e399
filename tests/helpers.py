"""Small builders for tests: write a case document and load or run it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kspread.format.loader import read_file
from kspread.workflow.runner import check

HEADER = "apiVersion: kspread/v1\nkind: Case\n"


def write_case(tmp_path: Path, body: str, name: str = "case.yaml") -> Path:
    p = tmp_path / name
    p.write_text(HEADER + textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
    return p


def verdict(tmp_path: Path, body: str, explain: str = "short"):
    p = write_case(tmp_path, body)
    res = read_file(p)
    assert res.error is None, res.error
    assert len(res.docs) == 1
    return check(res.docs[0], explain=explain)
