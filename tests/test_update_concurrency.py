"""Golden update and the file system: two runs updating one file at the same time,
a run killed while writing, read-only files. Interleavings are forced (one writer
paused between reading the file and replacing it), not left to luck."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading

import pytest

from kspread.format import files
from kspread.format.loader import read_file
from kspread.workflow import update
from kspread.workflow.cli import main as cli_main
from kspread.workflow.runner import check
from kspread.workflow.update import apply_all, check_update, update_for

SPREAD = """\
apiVersion: kspread/v1
kind: Case
name: {name}
version: "1.24"
profile: {{score: [SelectorSpread]}}
nodes: [n1, n2]
owners:
- {{kind: Service, name: s1, selector: {{app: web}}}}
pods:
- {{name: a, node: n1, labels: {{app: web}}}}
pod: {{name: new, labels: {{app: web}}}}
expect:
  selected: n1   # wrong for {name}
"""


def _two_cases(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(SPREAD.format(name="c1") + "---\n" + SPREAD.format(name="c2"))
    return p


def _both_fixed() -> str:
    return (SPREAD.format(name="c1") + "---\n" + SPREAD.format(name="c2")).replace("selected: n1", "selected: n2")


def _interleave(monkeypatch, first, second) -> None:
    """Run ``first`` in thread A and ``second`` in thread B: A is paused right after
    it has read the file to rewrite (in plan) until B has either finished or is
    waiting for the file's lock, so without a lock B's write falls between A's read
    and A's rename."""
    a_read, b_progress = threading.Event(), threading.Event()
    real_plan, real_flock = update.plan, fcntl.flock

    def paused_plan(*args, **kw):
        if threading.current_thread().name == "A" and not a_read.is_set():
            a_read.set()
            assert b_progress.wait(30), "B neither finished nor waited for the lock"
        return real_plan(*args, **kw)

    def flock(fd, op):
        if threading.current_thread().name == "B" and op & fcntl.LOCK_EX:
            b_progress.set()  # B is about to wait for A's lock
        return real_flock(fd, op)

    monkeypatch.setattr(update, "plan", paused_plan)
    monkeypatch.setattr(fcntl, "flock", flock)
    results: dict[str, object] = {}

    def run(name, fn):
        try:
            results[name] = fn()
        finally:
            if name == "B":
                b_progress.set()

    a = threading.Thread(target=run, args=("A", first), name="A")
    b = threading.Thread(target=run, args=("B", second), name="B")
    a.start()
    assert a_read.wait(30)
    b.start()
    a.join(60)
    b.join(60)
    assert not a.is_alive() and not b.is_alive()
    return results


def test_two_cli_updates_of_one_file_at_once_lose_nothing(tmp_path, monkeypatch, capsys):
    p = _two_cases(tmp_path)
    results = _interleave(monkeypatch, lambda: cli_main(["run", "-q", "--update", "--case", "c1", str(p)]),
                          lambda: cli_main(["run", "-q", "--update", "--case", "c2", str(p)]))
    assert results == {"A": 0, "B": 0}
    err = capsys.readouterr().err
    assert f"updated {p}: c1: expect.selected: n1 -> n2\n" in err
    assert f"updated {p}: c2: expect.selected: n1 -> n2\n" in err
    assert p.read_text() == _both_fixed()


def test_two_pytest_updates_of_one_file_at_once_lose_nothing(tmp_path, monkeypatch):
    # what two `pytest --kspread-update` controllers do at the end of their sessions
    p = _two_cases(tmp_path)
    u1, u2 = (check_update(update_for(d, check(d))) for d in read_file(p).docs)
    results = _interleave(monkeypatch, lambda: apply_all([u1]), lambda: apply_all([u2]))
    for r in results.values():
        assert r.failed == [] and len(r.updated) == 1  # type: ignore[attr-defined]
    assert p.read_text() == _both_fixed()


def test_a_case_changed_by_a_concurrent_run_is_not_overwritten(tmp_path, monkeypatch):
    # both runs fix the same case from different versions of it: the second finds its
    # case changed under it and says so, rather than writing results of the old case
    p = _two_cases(tmp_path)
    u1 = check_update(update_for(read_file(p).docs[0], check(read_file(p).docs[0])))
    p.write_text(p.read_text().replace("nodes: [n1, n2]", "nodes: [n1, n2, n3]", 1))
    doc = read_file(p).docs[0]
    u1b = check_update(update_for(doc, check(doc)))
    results = _interleave(monkeypatch, lambda: apply_all([u1b]), lambda: apply_all([u1]))
    assert results["A"].failed == []  # type: ignore[attr-defined]
    assert [why for _, why in results["B"].failed] == [  # type: ignore[attr-defined]
        "the file changed during the run; not updated (run the update again)"]
    assert p.read_text().split("---\n")[0] == SPREAD.format(name="c1").replace(
        "nodes: [n1, n2]", "nodes: [n1, n2, n3]").replace("selected: n1", "selected: [n2, n3]")


def _killed_write(path) -> None:
    """A process killed by SIGKILL in write_atomic, after the temporary file is written
    and before the rename."""
    code = ("import os, signal\nfrom kspread.format import files\n"
            "files.os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\n"
            f"files.write_atomic({str(path)!r}, 'half')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == -signal.SIGKILL, r.stderr


def test_a_killed_update_leaves_a_temporary_file_the_next_update_removes(tmp_path):
    p = _two_cases(tmp_path)
    _killed_write(p)
    left = [x.name for x in tmp_path.iterdir() if x.name != "c.yaml"]
    assert len(left) == 1 and left[0].startswith(".kspread-") and left[0].endswith(".tmp")
    # not ours to remove: a live process's, another machine's, an older kspread's
    alive = f".kspread-{files._host_tag()}-{os.getppid()}-abcd1234.tmp"
    other_host = f".kspread-00000000-{left[0].split('-')[2]}-abcd1234.tmp"
    for name in (alive, other_host, ".kspread-abcd1234.tmp"):
        (tmp_path / name).write_text("x")
    assert cli_main(["run", "-q", "--update", str(p)]) == 0
    assert p.read_text() == _both_fixed()
    assert sorted(x.name for x in tmp_path.iterdir()) == sorted(
        ["c.yaml", alive, other_host, ".kspread-abcd1234.tmp"])


def test_a_read_only_case_file_is_not_rewritten(tmp_path, capsys):
    p = _two_cases(tmp_path)
    before = p.read_text()
    p.chmod(0o444)
    try:
        assert cli_main(["run", "-q", "--update", str(p)]) == 1
        assert p.read_text() == before and p.stat().st_mode & 0o777 == 0o444
    finally:
        p.chmod(0o644)
    out = capsys.readouterr().out
    assert out.count(f"--update could not fix this case: cannot write {p}: the file is read-only (mode 0444); "
                     "not replaced\n") == 2
    assert [x.name for x in tmp_path.iterdir()] == ["c.yaml"]


def test_a_writer_waiting_on_a_replaced_file_locks_the_new_one(tmp_path, monkeypatch):
    p = tmp_path / "c.yaml"
    p.write_text("a")
    waiting = threading.Event()
    real_flock = fcntl.flock
    order: list[str] = []

    def flock(fd, op):
        if threading.current_thread().name == "second":
            waiting.set()
        return real_flock(fd, op)

    monkeypatch.setattr(fcntl, "flock", flock)

    def second():
        with files.locked(str(p)):
            order.append("second reads " + p.read_text())

    with files.locked(str(p)):
        t = threading.Thread(target=second, name="second")
        t.start()
        assert waiting.wait(30)  # it has opened the file as it is now, and waits on it
        files.write_atomic(str(p), "b")
        order.append("first wrote b")
    t.join(30)
    assert order == ["first wrote b", "second reads b"]
    with pytest.raises(FileNotFoundError), files.locked(str(tmp_path / "missing.yaml")):
        pass


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_a_file_rewritten_by_root_keeps_its_owner_and_group(tmp_path):
    p = _two_cases(tmp_path)
    os.chown(p, 4242, 4343)
    p.chmod(0o640)
    assert cli_main(["run", "-q", "--update", str(p)]) == 0
    st = p.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (4242, 4343, 0o640)
    assert p.read_text() == _both_fixed()


def test_two_runs_fixing_the_same_case_the_same_way_both_pass(tmp_path, monkeypatch, capsys):
    p = _two_cases(tmp_path)
    results = _interleave(monkeypatch, lambda: cli_main(["run", "-q", "--update", "--case", "c1", str(p)]),
                          lambda: cli_main(["run", "-q", "--update", "--case", "c1", str(p)]))
    assert results == {"A": 0, "B": 0}
    assert capsys.readouterr().err.count(f"updated {p}: c1: expect.selected: n1 -> n2\n") == 2
    assert p.read_text() == _both_fixed().replace("selected: n2   # wrong for c2", "selected: n1   # wrong for c2")


def test_locking_a_fifo_neither_blocks_nor_locks(tmp_path):
    fifo = tmp_path / "c.yaml"
    os.mkfifo(fifo)
    with pytest.raises(files.NotRegularFile) as e, files.locked(str(fifo)):
        pass
    assert str(e.value) == "not a regular file (a FIFO)"
