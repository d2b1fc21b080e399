"""Files a case (or a command line) names, read as untrusted input: a configuration path
stays inside the directory trees being tested, no error echoes a file that is not what
kspread expected, special files (FIFOs, devices) are refused by name and never read, and
text that is not UTF-8 is an error at its line, never a traceback."""

from __future__ import annotations

import os
import signal
import textwrap

import pytest

from kspread.workflow.cli import main as cli_main

TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
CONFIG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def case(config: str | None = None) -> str:
    profile = f"profile: {{config: '{config}'}}\n" if config is not None else ""
    return textwrap.dedent("""\
        apiVersion: kspread/v1
        kind: Case
        name: c
        nodes: [n1]
        pod: {name: p}
        """) + profile + "expect: {selected: n1}\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """repo/cases/c.yaml and repo/configs/sched.yaml, run from repo/; a secret beside repo/."""
    repo = tmp_path / "repo"
    (repo / "cases").mkdir(parents=True)
    (repo / "configs").mkdir()
    (repo / "configs" / "sched.yaml").write_text(CONFIG)
    (tmp_path / "secret").write_text(TOKEN + "\n")
    monkeypatch.chdir(repo)
    return repo


def run(capsys, *args: str) -> tuple[int, str]:
    rc = cli_main(list(args))
    cap = capsys.readouterr()
    return rc, cap.out + cap.err


# ---- profile.config stays inside the trees being tested --------------------------------------

def test_a_configuration_beside_the_cases_directory_is_read(tree, capsys):
    (tree / "cases" / "c.yaml").write_text(case("../configs/sched.yaml"))
    rc, out = run(capsys, "run", "cases")
    assert (rc, out.splitlines()[-1]) == (0, "1 passed, 0 failed")


def test_dot_dot_out_of_the_tree_is_refused_without_reading_the_file(tree, capsys):
    (tree / "cases" / "c.yaml").write_text(case("../../secret"))
    rc, out = run(capsys, "run", "-q", "cases")
    assert rc == 1 and TOKEN not in out
    assert out.splitlines()[1] == (
        f"  cases/c.yaml:6: profile.config: the file lies outside the directory trees being tested ({tree}, "
        f"{tree / 'cases'}), symlinks followed: a case names a configuration inside the current directory or a "
        "path given to kspread (pytest: its rootdir or a path given) (got '../../secret')")


def test_an_absolute_path_is_refused(tree, capsys):
    (tree / "cases" / "c.yaml").write_text(case("/etc/sched.yaml"))
    rc, out = run(capsys, "validate", "cases/c.yaml")
    assert rc == 1
    assert out.splitlines()[0] == (
        "cases/c.yaml:6: profile.config: an absolute path is refused: a configuration file is named relative to "
        "the case file and lies inside the directory tree being tested (got '/etc/sched.yaml')")


def test_a_symlink_inside_the_tree_is_followed_before_the_check(tree, capsys):
    (tree / "cases" / "sched.yaml").symlink_to(tree.parent / "secret")
    (tree / "cases" / "c.yaml").write_text(case("sched.yaml"))
    rc, out = run(capsys, "explain", "cases/c.yaml")
    assert rc == 1 and TOKEN not in out
    assert out.startswith("cases/c.yaml:6: profile.config: the file lies outside the directory trees being "
                          f"tested ({tree}, {tree / 'cases'}), symlinks followed")


def test_the_paths_given_count_as_trees_being_tested(tree, tmp_path, capsys, monkeypatch):
    (tree / "cases" / "c.yaml").write_text(case("../configs/sched.yaml"))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # the current directory holds neither: the path given does
    rc, out = run(capsys, "run", "-q", str(tree))
    assert (rc, out.splitlines()[-1]) == (0, "1 passed, 0 failed")
    rc, out = run(capsys, "run", "-q", str(tree / "cases"))
    assert rc == 1 and "profile.config: the file lies outside the directory trees being tested" in out


def test_pytest_allows_its_rootdir_and_refuses_beyond_it(pytester):
    (pytester.path / "configs").mkdir()
    (pytester.path / "configs" / "sched.yaml").write_text(CONFIG)
    (pytester.path.parent / "secret.yaml").write_text(TOKEN + "\n")
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "ok.yaml").write_text(case("../configs/sched.yaml").replace("name: c", "name: ok"))
    (pytester.path / "cases" / "bad.yaml").write_text(case("../../secret.yaml").replace("name: c", "name: bad"))
    result = pytester.runpytest("-q", "cases")
    result.assert_outcomes(passed=1, failed=1)
    assert TOKEN not in result.stdout.str()
    result.stdout.fnmatch_lines([(f"{pytester.path}/cases/bad.yaml:6: profile.config: the file lies outside the directory trees "
                                 f"being tested ({pytester.path}, {pytester.path / 'cases'}), symlinks followed*")])


# ---- case files reached through a symlink out of the tree ------------------------------------

OUTSIDE = case().replace("name: c", "name: outside").replace("expect: {selected: n1}", "expect: {selected: n2}")


def test_a_walk_neither_reads_nor_updates_a_case_file_symlinked_out_of_the_tree(tree, capsys):
    # a pull request adds cases/evil.yaml -> a case file outside the tree: --update wrote
    # through the symlink into it
    (tree.parent / "outside.yaml").write_text(OUTSIDE)
    (tree / "cases" / "evil.yaml").symlink_to(tree.parent / "outside.yaml")
    (tree / "cases" / "inside.yaml").symlink_to(tree / "configs" / ".." / "cases" / "c.yaml")
    (tree / "cases" / "c.yaml").write_text(case())
    rc, out = run(capsys, "run", "--update", "cases")
    assert (tree.parent / "outside.yaml").read_text() == OUTSIDE
    assert "outside" not in out and "evil" not in out
    assert (rc, out.splitlines()[-1]) == (0, "2 passed, 0 failed")  # (c.yaml, and through inside.yaml)
    # named on the command line, it is the person's choice: read
    rc, out = run(capsys, "run", "cases/evil.yaml")
    assert rc == 1 and "FAIL outside (cases/evil.yaml:1)" in out


def test_pytest_collects_no_case_file_symlinked_out_of_its_trees(pytester):
    outside = pytester.path.parent / "outside.yaml"
    outside.write_text(OUTSIDE)
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "evil.yaml").symlink_to(outside)
    (pytester.path / "cases" / "c.yaml").write_text(case())
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--kspread-update")
    result.assert_outcomes(passed=1)
    assert outside.read_text() == OUTSIDE
    assert "evil" not in result.stdout.str()


# ---- what a configuration error may show ---------------------------------------------------

def test_a_file_that_is_not_a_mapping_is_described_not_echoed(tree, capsys):
    (tree / "cases" / "token.yaml").write_text(TOKEN + "\n")
    (tree / "cases" / "c.yaml").write_text(case("token.yaml"))
    rc, out = run(capsys, "run", "-q", "cases/c.yaml")
    assert rc == 1 and TOKEN not in out
    assert out.splitlines()[1] == ("  cases/token.yaml:1: not a KubeSchedulerConfiguration: the file holds a string "
                                   "of 40 characters, not a mapping")


def test_another_kind_of_mapping_is_described_not_echoed(tree, capsys):
    (tree / "cases" / "kubeconfig.yaml").write_text(f"apiVersion: {TOKEN}\nkind: Config\nusers: []\n")
    (tree / "cases" / "c.yaml").write_text(case("kubeconfig.yaml"))
    rc, out = run(capsys, "run", "-q", "cases/c.yaml")
    assert rc == 1 and TOKEN not in out
    assert out.splitlines()[1] == ("  cases/kubeconfig.yaml:1: apiVersion: not a KubeSchedulerConfiguration: "
                                   "apiVersion is a string of 40 characters, not kubescheduler.config.k8s.io/<version>")
    (tree / "cases" / "kubeconfig.yaml").write_text("kind: Config\nusers: []\n")
    rc, out = run(capsys, "run", "-q", "cases/c.yaml")
    assert out.splitlines()[1] == ("  cases/kubeconfig.yaml:1: apiVersion: not a KubeSchedulerConfiguration: "
                                   "apiVersion is missing")


# ---- configurations that are not UTF-8 ----------------------------------------------------

@pytest.fixture
def latin1(tree):
    (tree / "cases" / "sched.yaml").write_bytes(CONFIG.encode() + b"# caf\xe9\n")
    (tree / "cases" / "c.yaml").write_text(case("sched.yaml"))
    return "cases/sched.yaml:3: the scheduler configuration is not UTF-8 text: byte 0xe9 on this line cannot be decoded"


def test_a_configuration_that_is_not_utf8_in_run_validate_explain(latin1, capsys):
    rc, out = run(capsys, "run", "-q", "cases/c.yaml")
    assert (rc, out.splitlines()[1]) == (1, "  " + latin1)
    rc, out = run(capsys, "validate", "cases/c.yaml")
    assert (rc, out.splitlines()[0]) == (1, latin1)
    rc, out = run(capsys, "explain", "cases/c.yaml")
    assert (rc, out.splitlines()[0]) == (1, latin1)


def test_a_configuration_that_is_not_utf8_in_diff_is_the_commands_error(latin1, tree, capsys):
    (tree / "cases" / "c.yaml").write_text(case())
    rc, out = run(capsys, "diff", "--base", "cases/sched.yaml", "--head", "configs/sched.yaml", "cases")
    assert (rc, out) == (4, f"kspread diff: --base: {latin1}\n")


def test_a_kspread_config_that_cannot_be_read_is_a_usage_error(pytester):
    pytester.makefile(".yaml", c=case())
    (pytester.path / "sched.yaml").write_bytes(CONFIG.encode() + b"# caf\xe9\n")
    result = pytester.runpytest("-q", "--kspread-config=sched.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([("ERROR: --kspread-config: sched.yaml:3: the scheduler configuration is not UTF-8 "
                                 "text: byte 0xe9 on this line cannot be decoded")])


# ---- FIFOs and devices ------------------------------------------------------------------

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo") or not hasattr(signal, "alarm")
                                or not os.path.exists("/dev/zero"), reason="FIFOs, /dev/zero and SIGALRM")


@pytest.fixture(autouse=True)
def no_hang():
    """A read that blocks on a FIFO fails the test after 20 s instead of hanging the suite."""
    if not hasattr(signal, "alarm"):
        yield
        return

    def hung(signum, frame):
        raise TimeoutError("blocked reading a special file")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@needs_fifo
def test_a_directory_walk_reads_regular_files_only(tree, capsys):
    (tree / "cases" / "c.yaml").write_text(case())
    os.mkfifo(tree / "cases" / "fifo.yaml")
    (tree / "cases" / "zero.yaml").symlink_to("/dev/zero")
    rc, out = run(capsys, "run", "-q", "cases")
    assert (rc, out) == (0, "1 passed, 0 failed\n")
    rc, out = run(capsys, "validate", "cases")
    assert (rc, out) == (0, "1 case(s) checked, 0 invalid\n")


@needs_fifo
def test_a_special_file_named_on_the_command_line_is_refused_by_name(tree, capsys):
    os.mkfifo(tree / "cases" / "fifo.yaml")
    (tree / "cases" / "zero.yaml").symlink_to("/dev/zero")
    assert cli_main(["run", "cases/fifo.yaml", "cases/zero.yaml"]) == 1
    cap = capsys.readouterr()
    assert cap.out == "0 passed, 2 failed\n"
    assert cap.err.splitlines() == [
        "cases/fifo.yaml: not a regular file (a FIFO): kspread reads case files from regular files only",
        "cases/zero.yaml: not a regular file (a character device): kspread reads case files from regular files only"]
    rc, out = run(capsys, "explain", "cases/fifo.yaml")
    assert (rc, out) == (1, ("cases/fifo.yaml: not a regular file (a FIFO): kspread reads case files from regular "
                            "files only\n"))


@needs_fifo
def test_a_special_file_as_configuration(tree, capsys):
    os.mkfifo(tree / "cases" / "sched.yaml")
    (tree / "cases" / "c.yaml").write_text(case("sched.yaml"))
    rc, out = run(capsys, "run", "-q", "cases/c.yaml")
    assert (rc, out.splitlines()[1]) == (1, ("  cases/c.yaml:6: profile.config: not a regular file (a FIFO): a "
                                            "KubeSchedulerConfiguration is read from a regular file (got 'sched.yaml')"))
    (tree / "cases" / "c.yaml").write_text(case())
    rc, out = run(capsys, "diff", "--base", "/dev/zero", "--head", "cases/sched.yaml", "cases")
    assert (rc, out) == (4, ("kspread diff: --base: /dev/zero: cannot read the scheduler configuration: not a "
                            "regular file (a character device)\n"
                            "kspread diff: --head: cases/sched.yaml: cannot read the scheduler configuration: not a "
                            "regular file (a FIFO)\n"))


def test_a_configuration_path_that_is_not_printable_is_refused(tree, capsys):
    (tree / "cases" / "c.yaml").write_text(case().replace("expect:", 'profile: {config: "sched\\0.yaml"}\nexpect:'))
    rc, out = run(capsys, "run", "-q", "cases/c.yaml")
    assert (rc, out.splitlines()[1]) == (1, ("  cases/c.yaml:6: profile.config: the path holds a character that is not "
                                            "printable (a NUL, a line break, ...) (got 'sched\\x00.yaml')"))


# ---- kspread import: its input and its output -----------------------------------------------

@needs_fifo
def test_import_refuses_a_device_and_reads_a_pipe(tmp_path, capsys):
    rc, out = run(capsys, "import", "/dev/zero")
    assert (rc, out) == (1, ("kspread import: error: /dev/zero: cannot read the file: not a regular file (a character "
                            "device)\n"))
    rc, out = run(capsys, "import", str(tmp_path))
    assert (rc, out) == (1, (f"kspread import: error: {tmp_path}: cannot read the file: not a regular file (a "
                            "directory)\n"))
    fifo = tmp_path / "dump.yaml"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # the writer end, as <(kubectl get ...) gives it
        with open(fifo, "w") as f:
            f.write("apiVersion: v1\nkind: List\nitems: []\n")
        os._exit(0)
    rc, out = run(capsys, "import", str(fifo))
    os.waitpid(pid, 0)
    assert rc == 0 and out.startswith("# Imported by `kspread import` from dump.yaml: 0 node(s)")


@needs_fifo
def test_import_does_not_replace_a_special_file_it_is_told_to_write(tmp_path, capsys):
    (tmp_path / "dump.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    out_fifo = tmp_path / "out.yaml"
    os.mkfifo(out_fifo)
    rc, out = run(capsys, "import", str(tmp_path / "dump.yaml"), "-o", str(out_fifo), "--force")
    assert (rc, out.splitlines()[-1]) == (1, (f"kspread import: error: cannot write {out_fifo}: not a regular file "
                                             "(a FIFO)"))
    assert os.path.exists(out_fifo) and not os.path.isfile(out_fifo)


@needs_fifo
def test_pytest_collection_reads_regular_files_only(pytester):
    """A guard: pytest's walk hands the plugin regular files only, and so it stays."""
    pytester.makefile(".yaml", c=case())
    os.mkfifo(pytester.path / "fifo.yaml")
    (pytester.path / "zero.yaml").symlink_to("/dev/zero")
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
