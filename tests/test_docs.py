"""The documentation site: its examples are real cases that run, its generated pages are
current, what it shows of a run is what a run prints, and it builds in strict mode."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kspread.format.loader import read_file
from kspread.workflow.runner import check

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
sys.path.insert(0, str(ROOT / "dev"))
import docsgen  # noqa: E402

SNIPPET = re.compile(r'--8<-- "([^"]+)"')


def _example_docs(path: Path):
    result = read_file(path)
    assert result.error is None, result.error
    return result.docs


def _case_files() -> list[Path]:
    return sorted(p for p in EXAMPLES.rglob("*.yaml") if "kind: Case" in p.read_text(encoding="utf-8"))


def test_generated_pages_are_current(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    for path, text in docsgen.pages().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.relative_to(ROOT)} is stale: run python3 dev/docsgen.py"


def test_every_snippet_names_an_example_and_every_example_is_shown():
    """A snippet is a file of docs/examples or of the repository (a golden case, or a section of
    one between `# --8<-- [start:NAME]` and `[end:NAME]` comments)."""
    shown = set()
    for page in DOCS.rglob("*.md"):
        for name in SNIPPET.findall(page.read_text(encoding="utf-8")):
            path, _, section = name.partition(":")
            where = EXAMPLES / path if (EXAMPLES / path).is_file() else ROOT / path
            assert where.is_file(), f"{page.relative_to(ROOT)} includes {name}, which does not exist"
            if section:
                text = where.read_text(encoding="utf-8")
                assert f"# --8<-- [start:{section}]" in text and f"# --8<-- [end:{section}]" in text, name
            shown.add(path)
    unshown = {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.yaml")} - shown
    assert not unshown, f"examples no page shows: {sorted(unshown)}"


@pytest.mark.parametrize("path", _case_files(), ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_cases_run(path: Path):
    """Every example case passes, but those named failing*, which fail as the page says."""
    config = None
    if "ci" in path.parts:
        config = str(EXAMPLES / "ci" / "scheduler.yaml")
    for doc in _example_docs(path):
        verdict = check(doc, config=config)
        if path.name.startswith("failing"):
            assert not verdict.passed and verdict.error is None, verdict.message
        else:
            assert verdict.passed, verdict.message


def test_ci_guide_change_fails_the_case_as_shown(tmp_path):
    """docs/guides/ci.md: under the bin-packing configuration, `pytest cases/ --kspread-config
    scheduler.yaml` prints the report the page shows, whole."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "batch.yaml").write_bytes((EXAMPLES / "ci" / "cases" / "batch.yaml").read_bytes())
    (tmp_path / "scheduler.yaml").write_bytes((EXAMPLES / "ci" / "scheduler-binpack.yaml").read_bytes())
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "cases/", "--kspread-config", "scheduler.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 1, run.stdout + run.stderr
    page = (DOCS / "guides" / "ci.md").read_text(encoding="utf-8")
    assert "pytest cases/ --kspread-config scheduler.yaml\n" in page
    shown = page.split("plugin by plugin:\n\n```text\n", 1)[1].split("```", 1)[0]
    assert shown in run.stdout.replace(str(tmp_path), "/home/you/scheduler-config"), (shown, run.stdout)


def test_quickstart_shows_the_failure_pytest_prints(tmp_path):
    """The quick start's failing output is what pytest prints for its example."""
    cases = tmp_path / "cases"
    cases.mkdir()
    for name in ("first.yaml", "failing.yaml"):
        (cases / name).write_text((EXAMPLES / "quickstart" / name).read_text(encoding="utf-8"), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "cases/"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout, run.stdout
    page = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    # every line of the report the page shows, in order (pytest names the case file by its
    # full path in the case's header: the page's is ~/kspread-demo, made in step 2)
    assert "mkdir -p ~/kspread-demo/cases && cd ~/kspread-demo" in page
    shown = page.split("## 3.")[1].split("```text\n", 1)[1].split("```", 1)[0]
    printed = run.stdout.replace(str(tmp_path), "/home/you/kspread-demo")
    assert shown.strip() and shown in printed, (shown, printed)


def test_quickstart_update_prints_as_shown(tmp_path, capsys, monkeypatch):
    """Step 4 of the quick start: `kspread run --update` prints what the page shows, and
    rewrites only the failing expectation."""
    from kspread.workflow.cli import main as cli_main

    (tmp_path / "cases").mkdir()
    failing = tmp_path / "cases" / "failing.yaml"
    before = (EXAMPLES / "quickstart" / "failing.yaml").read_text(encoding="utf-8")
    failing.write_text(before, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    assert cli_main(["run", "--update", "cases/failing.yaml"]) == 0
    out = capsys.readouterr()
    page = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    shown = page.split("## 4.")[1].split("```text\n", 1)[1].split("```", 1)[0]
    for line in shown.splitlines():
        assert line in (out.out + out.err).splitlines(), (line, out)
    assert failing.read_text(encoding="utf-8") == before.replace("feasible: [n1, n2]      #", "feasible: [n2]      #")


def test_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs-material is in the test extra: pip install -e '.[test]'")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    index = (tmp_path / "site" / "quickstart" / "index.html").read_text(encoding="utf-8")
    assert "web-does-not-fit-beside-db" in index  # the snippet was included, not left as a marker
    assert "--8&lt;--" not in index
    # a list item that Markdown took as a paragraph's text (no blank line before it, or an
    # item whose code block ended the list): a line of a page's text starting "* ", outside
    # <pre> blocks
    raw = []
    for page in sorted((tmp_path / "site").rglob("index.html")):
        text = re.sub(r"<pre.*?</pre>", "", page.read_text(encoding="utf-8"), flags=re.S)
        raw += [f"{page.parent.relative_to(tmp_path / 'site')}: {ln[:80]}" for ln in text.splitlines()
                if ln.startswith("* ")]
    assert not raw, raw


def test_the_readme_is_a_front_page_whose_first_case_runs_as_shown(tmp_path):
    """README.md shows the quick start's first case, and the failure it prints once changed."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = (EXAMPLES / "quickstart" / "first.yaml").read_text(encoding="utf-8")
    assert "```yaml\n" + first + "```" in readme
    assert len(readme.splitlines()) < 300, "the README is a front page: reference text goes to docs/"
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "first.yaml").write_text(first.replace("  selected: n2", "  selected: n1"), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "cases/"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT)},
    )
    shown = readme.split("```text\n", 1)[1].split("```", 1)[0]
    # the whole report, as pytest prints it (the case's header names the file by its full path:
    # the README's is the quick start's ~/kspread-demo)
    assert shown in run.stdout.replace(str(tmp_path), "/home/you/kspread-demo"), (shown, run.stdout)
    # every page the README links to exists
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).is_file(), target


def test_every_case_the_readme_shows_passes(tmp_path):
    """The README's worked drain, capacity question, storage and devices cases (issues
    27-29) are real cases: each runs and passes as printed, and asserts something."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL) if "kind: Case" in b]
    names = []
    for i, block in enumerate(blocks):
        path = tmp_path / f"readme-{i}.yaml"
        path.write_text(block, encoding="utf-8")
        docs = _example_docs(path)
        assert len(docs) == 1
        names.append(docs[0].data["name"])
        verdict = check(docs[0])
        assert verdict.passed, (docs[0].data["name"], verdict.message)
        assert docs[0].data.get("expect"), docs[0].name
    assert {"drain-n1-with-a-budget", "how-many-more-workers-fit", "the-database-stays-in-its-zone",
            "which-gpus-the-workers-get"} <= set(names)


def test_the_readmes_device_gates_table_is_current():
    """Every dynamic resource allocation gate kspread knows is in the README's table, with
    its stages, and "modelled" exactly where a case may set it."""
    from kspread.engine.versions import FEATURE_GATES, UNMODELLED_GATES

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {n: (st.strip(), what.strip()) for n, st, what in
            re.findall(r"^\| `((?:DRA|DynamicResource)[A-Za-z]*)` \| ([^|]+) \| ([^|]+) \|$", readme, re.MULTILINE)}
    gates = {**FEATURE_GATES, **{n: g for n, (g, _) in UNMODELLED_GATES.items()}}
    dra = {n for n in gates if n.startswith(("DRA", "DynamicResource"))}
    assert set(rows) == dra
    for name in dra:
        g = gates[name]
        parts = [f"{s.stage.lower()} {'on' if s.default else 'off'} 1.{s.since}" + (" (locked)" if s.locked else "")
                 for s in g.stages] + ([f"removed 1.{g.removed}"] if g.removed else [])
        assert rows[name][0] == ", ".join(parts), name
        # "modelled", or "modelled at ..." where a minor that has the gate still refuses what it reads
        assert (rows[name][1] == "modelled" or rows[name][1].startswith("modelled at ")) == (name in FEATURE_GATES), name


def test_what_if_guide_next_replica_runs_as_shown(tmp_path, capsys, monkeypatch):
    """docs/guides/what-if.md: the kubectl command is the one `kspread import` names, and the
    StatefulSet dump answers "where would the next replica land" as the page shows (issue
    27: an imported cluster with StatefulSets and PVCs)."""
    from kspread.format.importer import _KUBECTL
    from kspread.workflow.cli import main as cli_main

    page = (DOCS / "guides" / "what-if.md").read_text(encoding="utf-8")
    assert f"{_KUBECTL} > dump.yaml" in page
    monkeypatch.setenv("COLUMNS", "80")
    out = tmp_path / "cluster.yaml"
    monkeypatch.chdir(tmp_path)
    assert cli_main(["import", str(ROOT / "examples" / "whatif" / "statefulset-dump.yaml"), "--pending",
                     "-o", "cluster.yaml"]) == 0
    assert cli_main(["run", "--update", "cluster.yaml"]) == 0
    assert "expect: {selected: c1}" in out.read_text(encoding="utf-8")
    capsys.readouterr()
    assert cli_main(["explain", "cluster.yaml"]) == 0
    shown = page.split("```text\n", 1)[1].split("```", 1)[0]
    explained = capsys.readouterr().out
    assert shown in explained, (shown, explained)
    # the page's last claim: had data-db-2 been bound to a volume in za, only a1 would pass
    import yaml

    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    claim = next(o for o in data["objects"] if o["metadata"]["name"] == "data-db-2")
    claim["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    claim["spec"]["volumeName"] = "pv-2"
    pv = next(o for o in data["objects"] if o["metadata"]["name"] == "pv-0")  # za's volume, for db-0
    data["objects"].append({**pv, "metadata": {"name": "pv-2"}, "spec": {
        **pv["spec"], "claimRef": {"namespace": "default", "name": "data-db-2"}}})
    data["expect"] = {"feasible": ["a1"], "filter": {"b1": {
        "code": "UnschedulableAndUnresolvable", "reason": "node(s) didn't match PersistentVolume's node affinity"}}}
    bound = tmp_path / "bound.yaml"
    bound.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert check(_example_docs(bound)[0]).passed
    assert "node(s) didn't match\nPersistentVolume's node affinity" in page or \
        "node(s) didn't match PersistentVolume's node affinity" in page.replace("\n", " ")


def test_pending_guide_runs_as_shown(tmp_path, capsys, monkeypatch):
    """docs/guides/pending.md: its kubectl command exports every kind `kspread import` reads
    (a dump without a pod's claims answers for the missing claim), and its example dump's
    pending pod is explained as the page shows."""
    from kspread.format.importer import _KUBECTL
    from kspread.workflow.cli import main as cli_main

    page = (DOCS / "guides" / "pending.md").read_text(encoding="utf-8")
    assert f"{_KUBECTL} > dump.yaml" in page
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    assert cli_main(["import", str(ROOT / "examples" / "pending" / "dump.yaml"), "--pod", "shop/web-7f9c-x2",
                     "-o", "why.yaml"]) == 0
    capsys.readouterr()
    assert cli_main(["explain", "why.yaml"]) == 0
    shown = page.split("```text\n", 1)[1].split("```", 1)[0]
    assert shown in capsys.readouterr().out


def test_ci_guide_diff_prints_as_shown(tmp_path, capsys, monkeypatch):
    """docs/guides/ci.md: `kspread diff` of today's configuration against the bin-packing
    one prints the changed case as the page shows, and exits 1."""
    from kspread.workflow.cli import main as cli_main

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "batch.yaml").write_bytes((EXAMPLES / "ci" / "cases" / "batch.yaml").read_bytes())
    (tmp_path / "main-scheduler.yaml").write_bytes((EXAMPLES / "ci" / "scheduler.yaml").read_bytes())
    (tmp_path / "scheduler.yaml").write_bytes((EXAMPLES / "ci" / "scheduler-binpack.yaml").read_bytes())
    monkeypatch.chdir(tmp_path)
    page = (DOCS / "guides" / "ci.md").read_text(encoding="utf-8")
    command = "kspread diff --base main-scheduler.yaml --head scheduler.yaml cases/"
    assert command in page
    assert cli_main(command.split()[1:]) == 1
    shown = page.split(command, 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    assert shown in capsys.readouterr().out


def test_running_page_shows_the_report_and_reason_a_run_prints(tmp_path):
    """docs/reference/running.md: the failing case `wrong` (cases/x.yaml, at line 18) prints
    the tables the page shows, and pytest's short summary line is the page's."""
    from kspread.workflow.reason import short_reason

    (tmp_path / "cases").mkdir()
    x = tmp_path / "cases" / "x.yaml"
    x.write_text("# a case further down its file\n" * 17 + """apiVersion: kspread/v1
kind: Case
name: wrong
version: "1.24"
profile: {score: [SelectorSpread]}
nodes: [n1, n2]
owners:
- {kind: Service, name: s1, selector: {foo: bar}}
pods:
- {name: a, node: n1, labels: {foo: bar}}
pod: {name: new, labels: {foo: bar}}
expect:
  scores:
    SelectorSpread: {n1: 100, n2: 0}
  selected: n1
""", encoding="utf-8")
    doc = _example_docs(x)[0]
    doc.file = "cases/x.yaml"
    verdict = check(doc)
    assert not verdict.passed
    page = (DOCS / "reference" / "running.md").read_text(encoding="utf-8")
    shown = page.split("A failing case prints", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    assert shown in verdict.message + "\n", (shown, verdict.message)
    summary = f"FAILED cases/x.yaml::wrong - {short_reason(verdict, 'cases/x.yaml', doc.line)}"
    assert f"```\n{summary}\n```" in page, summary
