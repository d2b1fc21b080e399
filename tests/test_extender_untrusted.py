"""A case under review is untrusted input, and so is what its HTTP extenders answer: a
case reads no environment variable and calls no host that the person running kspread
did not allow outside the case; errors show the urlPrefix as written; an answer cannot
crash or hold the run, nor flood the output; the files an extender names lie inside the
trees being tested. Servers are tests/extender_server.py's, on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from extender_server import ExtenderServer, Raw, free_port
from helpers import write_case
from kspread.errors import CaseError
from kspread.format.extenders import ExtenderAccess
from kspread.format.loader import load_case, read_file
from kspread.workflow.cli import main as cli_main
from kspread.workflow.runner import check, run_loaded

ROOT = Path(__file__).resolve().parent.parent
SECRET = "ghp_kspreadTestSecret0123456789"
SECRET_VAR = "KSPREAD_TEST_SECRET_TOKEN"


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    """Calls to 0.0.0.0 (not loopback) would go to a proxy the environment names."""
    for var in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server():
    started: list[ExtenderServer] = []

    def start(answer) -> ExtenderServer:
        s = ExtenderServer(answer)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def keep_all(verb: str, body: Any) -> tuple[int, Any, float]:
    return 200, {"Nodes": body["Nodes"], "NodeNames": None, "FailedNodes": {}, "Error": ""}, 0.0


def case_body(url: str, **fields: Any) -> str:
    extra = "".join(f", {k}: {v}" for k, v in fields.items())
    return f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{{name: ext, urlPrefix: '{url}', filterVerb: filter{extra}}}]
        nodes: [n1, n2]
        pod: {{name: p}}
        expect: {{feasible: [n1, n2]}}
        """


def load(tmp_path: Path, body: str, access: ExtenderAccess | None = None, name: str = "case.yaml"):
    doc = read_file(write_case(tmp_path, body, name)).docs[0]
    doc.extender_access = access
    return load_case(doc)


def load_error(tmp_path: Path, body: str, access: ExtenderAccess | None = None) -> CaseError:
    with pytest.raises(CaseError) as e:
        load(tmp_path, body, access)
    return e.value


# ---- the environment ------------------------------------------------------------------------


@pytest.mark.parametrize("ignorable", ["false", "true"])
def test_a_variable_not_allowed_is_never_read_nor_sent(tmp_path, server, monkeypatch, ignorable):
    s = server(keep_all)
    monkeypatch.setenv(SECRET_VAR, SECRET)
    e = load_error(tmp_path, case_body(f"{s.url}/${{{SECRET_VAR}}}", ignorable=ignorable))
    assert SECRET not in str(e) and (e.line, tuple(e.path)) == (6, ("profile", "extenders", 0, "urlPrefix"))
    assert e.message.startswith(f"urlPrefix reads the environment variable {SECRET_VAR}, which kspread reads only "
                                f"when allowed outside the case: --extender-env {SECRET_VAR} (pytest: ")
    # with a default the variable is not read either: the default is sent
    out = run_loaded(load(tmp_path, case_body(f"{s.url}/${{{SECRET_VAR}:-none}}", ignorable=ignorable)))
    assert not out.diffs and s.requests and all(SECRET not in json.dumps(b) for _, b in s.requests)
    assert s.verbs() == ["filter"]


def test_a_case_cannot_probe_which_variables_exist(tmp_path, monkeypatch):
    """What a variable that is not allowed holds, or whether it is set, changes nothing."""
    body = case_body(f"http://127.0.0.1:{free_port()}/${{{SECRET_VAR}:-x}}", ignorable="true")
    results = []
    for value in (None, "", SECRET, "http://10.9.9.9/"):
        if value is None:
            monkeypatch.delenv(SECRET_VAR, raising=False)
        else:
            monkeypatch.setenv(SECRET_VAR, value)
        case = load(tmp_path, body)
        results.append(case.profile.extenders[0].http.url_prefix)
    assert len(set(results)) == 1 and results[0].endswith("/x")
    with pytest.raises(CaseError):  # without a default: the same error, set or not
        load(tmp_path, case_body(f"http://127.0.0.1:9/${{{SECRET_VAR}}}"))
    monkeypatch.delenv(SECRET_VAR)
    with pytest.raises(CaseError):
        load(tmp_path, case_body(f"http://127.0.0.1:9/${{{SECRET_VAR}}}"))


def test_a_configuration_named_by_the_case_is_held_to_the_same(tmp_path, server, monkeypatch):
    s = server(keep_all)
    monkeypatch.setenv(SECRET_VAR, SECRET)
    (tmp_path / "sched.yaml").write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                                         "kind: KubeSchedulerConfiguration\nextenders:\n"
                                         f"- {{urlPrefix: '{s.url}/${{{SECRET_VAR}}}', filterVerb: filter, "
                                         "ignorable: true}\n")
    body = ('version: "1.30"\nprofile: {config: sched.yaml}\nnodes: [n1]\npod: {name: p}\n'
            "expect: {selected: n1}\n")
    e = load_error(tmp_path, body)
    assert (e.file, e.line, tuple(e.path)) == (str(tmp_path / "sched.yaml"), 4, ("extenders", 0, "urlPrefix"))
    assert SECRET not in str(e) and s.requests == []
    # allowed: read and sent, but never shown
    case = load(tmp_path, body, ExtenderAccess(env=frozenset({SECRET_VAR})))
    out = run_loaded(case, keep_all=True)
    assert s.requests and not out.diffs
    assert all(SECRET not in c.describe() for cy in out.cycles for c in cy.extender_calls)


def test_an_allowed_variable_is_expanded_and_its_host_counts_as_named(tmp_path, server, monkeypatch):
    s = server(keep_all)
    monkeypatch.setenv("KSPREAD_TEST_EXT_URL", s.url.replace("127.0.0.1", "0.0.0.0"))
    access = ExtenderAccess(env=frozenset({"KSPREAD_TEST_EXT_URL"}))
    out = run_loaded(load(tmp_path, case_body("${KSPREAD_TEST_EXT_URL}"), access))
    assert not out.diffs and s.verbs() == ["filter"]


# ---- the hosts called -----------------------------------------------------------------------


def test_a_host_that_is_not_loopback_is_refused_at_the_url_line(tmp_path):
    e = load_error(tmp_path, case_body("http://10.9.9.9:8888/x", ignorable="true"))
    assert (e.line, tuple(e.path)) == (6, ("profile", "extenders", 0, "urlPrefix"))
    assert e.message == (
        "urlPrefix calls 10.9.9.9 (port 8888), which is not loopback: kspread calls a case's extender on another "
        "host only when allowed outside the case: --allow-extender-host 10.9.9.9:8888 (pytest: "
        "--kspread-allow-extender-host 10.9.9.9:8888 or the ini key kspread_allow_extender_hosts); or give the "
        "extender's URL with --extender NAME=URL")
    # allowed by host, by host and port; another port is not
    load(tmp_path, case_body("http://10.9.9.9:8888/x"), ExtenderAccess(hosts=("10.9.9.9",)))
    load(tmp_path, case_body("http://10.9.9.9:8888/x"), ExtenderAccess(hosts=("10.9.9.9:8888",)))
    with pytest.raises(CaseError):
        load(tmp_path, case_body("http://10.9.9.9:8888/x"), ExtenderAccess(hosts=("10.9.9.9:8080",)))
    for url in ("http://[::ffff:127.0.0.1]:9/x", "http://0.0.0.0:9/x", "https://example.com/x",
                "http://127.0.0.1:9@example.com/x"):
        with pytest.raises(CaseError):
            load(tmp_path, case_body(url))
    e = load_error(tmp_path, case_body("http://user:pw@127.0.0.1:9/x"))
    assert e.message.endswith("a URL with user information (user@host) is refused: kspread sends no credentials")
    for url in ("http://127.0.0.1:9/x", "http://localhost:9/x", "http://[::1]:9/x", "http://127.8.9.10:9/x"):
        load(tmp_path, case_body(url))


def test_an_allowed_host_is_called(tmp_path, server):
    """0.0.0.0 reaches the loopback server on Linux, but is not a loopback address."""
    s = server(keep_all)
    url = s.url.replace("127.0.0.1", "0.0.0.0")
    with pytest.raises(CaseError):
        load(tmp_path, case_body(url))
    out = run_loaded(load(tmp_path, case_body(url), ExtenderAccess(hosts=(f"0.0.0.0:{s.port}",))))
    assert not out.diffs and s.verbs() == ["filter"]


def test_the_command_line_and_pytest_allow_hosts_and_variables(tmp_path, server, pytester):
    s = server(keep_all)
    url = s.url.replace("127.0.0.1", "0.0.0.0")
    p = write_case(tmp_path, case_body(url + "/${KSPREAD_TEST_PART:-a}"))
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "KSPREAD_TEST_PART": "b"}

    def kspread(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kspread", *args], capture_output=True, text=True, env=env,
                              timeout=60)

    r = kspread("validate", str(p))
    assert r.returncode == 1 and f"{p}:6: profile.extenders[0].urlPrefix: urlPrefix calls 0.0.0.0" in r.stdout
    r = kspread("run", str(p), "--allow-extender-host", f"0.0.0.0:{s.port}", "--extender-env", "KSPREAD_TEST_PART")
    assert r.returncode == 0, r.stdout + r.stderr
    r = kspread("run", str(p), "--allow-extender-host", "http://x/")
    assert r.returncode == 4 and "expected HOST or HOST:PORT, got 'http://x/'" in r.stderr
    assert [b for _, b in s.requests] and [v for v in s.verbs()] == ["filter"]
    assert s.paths == ["/ext/b/filter"]
    # pytest: options and ini keys
    (pytester.path / "case.yaml").write_text(p.read_text())
    res = pytester.runpytest("-p", "no:cacheprovider", "case.yaml")
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*case.yaml:6: profile.extenders?0?.urlPrefix: urlPrefix calls 0.0.0.0*"])
    res = pytester.runpytest("-p", "no:cacheprovider", "case.yaml",
                                        f"--kspread-allow-extender-host=0.0.0.0:{s.port}")
    res.assert_outcomes(passed=1)
    pytester.makeini(f"[pytest]\nkspread_allow_extender_hosts = 0.0.0.0:{s.port}\n"
                     "kspread_extender_env = KSPREAD_TEST_PART\n")
    os.environ["KSPREAD_TEST_PART"] = "c"
    try:
        res = pytester.runpytest("-p", "no:cacheprovider", "case.yaml")
    finally:
        del os.environ["KSPREAD_TEST_PART"]
    res.assert_outcomes(passed=1)
    assert s.paths[-2:] == ["/ext/a/filter", "/ext/c/filter"]
    pytester.makeini("[pytest]\nkspread_allow_extender_hosts = a b\n")
    res = pytester.runpytest("-p", "no:cacheprovider", "case.yaml")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*ini key kspread_allow_extender_hosts: expected HOST or HOST:PORT, got 'a b'*"])


# ---- what errors show -----------------------------------------------------------------------


def test_errors_show_the_url_as_written_in_every_report(tmp_path, monkeypatch, capsys):
    """An allowed variable is sent, but never printed: not in the log, the markdown
    comment, the HTML report nor the GitHub annotations."""
    port = free_port()  # nothing listens: the call fails
    secret_url = f"http://127.0.0.1:{port}/{SECRET}"
    monkeypatch.setenv(SECRET_VAR, secret_url)
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    p = write_case(tmp_path, case_body(f"${{{SECRET_VAR}}}"))
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    rc = cli_main(["run", str(p), "--extender-env", SECRET_VAR, "--markdown", str(md), "--html", str(html),
                   "--github"])
    out = capsys.readouterr()
    assert rc == 1
    written = f'Post "${{{SECRET_VAR}}}/filter": dial tcp: connect: connection refused'
    assert written in out.out
    for where, text in (("log", out.out + out.err), ("markdown", md.read_text()), ("html", html.read_text())):
        assert SECRET not in text and str(port) not in text, where
    assert "::error file=" in out.out and SECRET not in out.out
    assert "Post &quot;${" in html.read_text() or "Post \"${" in html.read_text()
    # run's and explain's JSON too
    for args in (["run", str(p), "--json"], ["explain", str(p), "--json"], ["explain", str(p), "-v"]):
        cli_main([*args, "--extender-env", SECRET_VAR])
        text = capsys.readouterr()
        assert f"${{{SECRET_VAR}}}/filter" in text.out + text.err, args
        assert SECRET not in text.out + text.err and str(port) not in text.out + text.err, args


def test_the_url_given_on_the_command_line_is_shown_as_given(tmp_path):
    port = free_port()
    case = load(tmp_path, case_body("http://127.0.0.1:9/written"),
                ExtenderAccess(urls={"ext": f"http://127.0.0.1:{port}/given"}))
    out = run_loaded(case)
    assert out.actual["schedulingError"].startswith(
        f'Post "http://127.0.0.1:{port}/given/filter": dial tcp 127.0.0.1:{port}: connect: connection refused')


# ---- what an answer can do ------------------------------------------------------------------


def _errors_case(url: str, ignorable: str, timeout: str = "5s") -> str:
    return case_body(url, ignorable=ignorable, httpTimeout=timeout)


@pytest.mark.parametrize("ignorable", ["false", "true"])
def test_an_answer_nested_deeper_than_go_decodes_is_an_extender_error(tmp_path, server, ignorable):
    deep = b"[" * 200_000 + b"]" * 200_000
    s = server(lambda verb, body: (200, deep, 0.0))
    out = run_loaded(load(tmp_path, _errors_case(s.url, ignorable)), keep_all=True)
    call = out.cycles[-1].extender_calls[0]
    assert call.error == "exceeded max depth"
    if ignorable == "true":
        assert call.ignored and out.actual["feasible"] == ["n1", "n2"]
    else:
        assert out.actual["schedulingError"].startswith("exceeded max depth (extender ext at ")


def test_nesting_that_go_decodes_is_decoded(tmp_path, server):
    """Go's decoder takes 10000 levels; Python's own stops near 1000: kspread takes Go's."""
    nested = "[" * 5000 + "]" * 5000
    s = server(lambda verb, body: (200, f'{{"NodeNames": null, "Nodes": {json.dumps(body["Nodes"])}, '
                                        f'"Extra": {nested}}}'.encode(), 0.0))
    out = run_loaded(load(tmp_path, _errors_case(s.url, "false")), keep_all=True)
    assert not out.diffs and out.cycles[-1].extender_calls[0].error is None


@pytest.mark.parametrize("ignorable", ["false", "true"])
def test_headers_trickled_past_the_timeout_time_out(tmp_path, server, ignorable):
    """httpTimeout covers the whole exchange, headers included (http.Client's Timeout)."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 200
    s = server(lambda verb, body: (200, Raw([bytes([c]) for c in head]), 0.5))
    t0 = time.monotonic()
    out = run_loaded(load(tmp_path, _errors_case(s.url, ignorable, "1s")), keep_all=True)
    took = time.monotonic() - t0
    assert took < 5, took
    call = out.cycles[-1].extender_calls[0]
    assert call.error == (f'Post "{s.url}/filter": context deadline exceeded (Client.Timeout exceeded while '
                          "awaiting headers)")
    assert call.ignored == (ignorable == "true")


def test_a_body_trickled_past_the_timeout_times_out(tmp_path, server):
    body = b'{"NodeNames": null, "Nodes": {"items": []}}' + b" " * 100
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    s = server(lambda verb, b: (200, Raw([head, *(bytes([c]) for c in body)]), 0.3))
    t0 = time.monotonic()
    out = run_loaded(load(tmp_path, _errors_case(s.url, "false", "1s")), keep_all=True)
    assert time.monotonic() - t0 < 5
    assert out.actual["schedulingError"].startswith(
        "net/http: request canceled (Client.Timeout or context cancellation while reading body) (extender ext at ")


def test_an_answer_larger_than_the_bound_is_refused(tmp_path, server):
    big = b" " * (17 << 20) + b"{}"
    s = server(lambda verb, body: (200, big, 0.0))
    out = run_loaded(load(tmp_path, _errors_case(s.url, "false")), keep_all=True)
    assert out.actual["schedulingError"].startswith(f"the answer of {s.url}/filter is larger than 16 MiB")
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n{}"
    s2 = server(lambda verb, body: (200, Raw([head]), 0.0))
    out = run_loaded(load(tmp_path, _errors_case(s2.url, "false")), keep_all=True)
    assert out.actual["schedulingError"].startswith(f"the answer of {s2.url}/filter is larger than 16 MiB")


def test_long_texts_of_an_answer_are_echoed_bounded(tmp_path, server):
    huge = "E" * 5_000_000
    s = server(lambda verb, body: (200, {"Error": huge}, 0.0))
    p = write_case(tmp_path, _errors_case(s.url, "false"))
    v = check(read_file(p).docs[0])
    assert not v.passed
    assert f"{'E' * 500}... [4999500 more characters] (extender ext at " in v.message
    assert len(v.message) < 20_000
    # a node name and a reason, and many of them
    names = {f"{'n' * 50_000}{i}": "R" * 50_000 for i in range(50)}
    s2 = server(lambda verb, body: (200, {"Nodes": body["Nodes"], "FailedNodes": names,
                                          "FailedAndUnresolvableNodes": {"n2": "U" * 5_000_000}}, 0.0))
    p = write_case(tmp_path, _errors_case(s2.url, "false").replace("feasible: [n1, n2]", "feasible: [n1]"))
    v = check(read_file(p).docs[0])
    assert not v.passed and len(v.message) < 40_000, len(v.message)
    assert "... and 30 more" in v.message and f"{'U' * 500}... [4999500 more characters]" in v.message
    # the claimed node that was not sent
    s3 = server(lambda verb, body: (200, {"NodeNames": ["x" * 5_000_000]}, 0.0))
    out = run_loaded(load(tmp_path, _errors_case(s3.url, "false", "5s").replace(
        "filterVerb: filter", "filterVerb: filter, nodeCacheCapable: true")))
    assert len(out.actual["schedulingError"]) < 2000
    assert out.actual["schedulingError"].startswith(
        f'extender "{s3.url}" claims a filtered node "{"x" * 500}... [4999500 more characters]" which is not found')


# ---- files and durations --------------------------------------------------------------------


@pytest.mark.parametrize("field", ["caFile", "certFile", "keyFile"])
def test_tls_files_resolve_inside_the_trees_being_tested(tmp_path, field):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tmp_path / "secret.pem").write_text(SECRET + "\n")
    (tree / "link.pem").symlink_to(tmp_path / "secret.pem")
    os.mkfifo(tree / "fifo.pem")

    def err(path: str) -> CaseError:
        return load_error(tree, case_body("https://127.0.0.1:9/x", tlsConfig=f"{{{field}: '{path}'}}"))

    e = err("../secret.pem")
    assert (e.line, tuple(e.path)) == (6, ("profile", "extenders", 0, "tlsConfig", field))
    assert e.message.startswith(f"the file lies outside the directory trees being tested ({tree}), symlinks "
                                "followed: a case names a certificate or key file inside the current directory")
    assert err("link.pem").message.startswith("the file lies outside the directory trees being tested")
    assert err(str(tmp_path / "secret.pem")).message.startswith("an absolute path is refused: a certificate or key "
                                                               "file is named relative to the file that names it")
    assert err("fifo.pem").message == f"not a regular file (a FIFO): a tlsConfig.{field} is read from a regular file"
    assert err("none.pem").message == f"no such tlsConfig.{field} file: {tree / 'none.pem'}"


def test_tls_files_of_a_configuration_resolve_inside_the_trees_being_tested(tmp_path):
    tree = tmp_path / "tree"
    (tree / "configs").mkdir(parents=True)
    (tmp_path / "secret.pem").write_text(SECRET + "\n")
    (tree / "configs" / "sched.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nextenders:\n"
        "- urlPrefix: https://127.0.0.1:9/x\n  filterVerb: filter\n  tlsConfig: {caFile: ../../secret.pem}\n")
    body = ('version: "1.30"\nprofile: {config: ../configs/sched.yaml}\nnodes: [n1]\npod: {name: p}\n'
            "expect: {selected: n1}\n")
    (tree / "cases").mkdir()
    doc = read_file(write_case(tree / "cases", body)).docs[0]
    doc.roots = (str(tree),)
    with pytest.raises(CaseError) as info:
        load_case(doc)
    e = info.value
    assert (os.path.realpath(e.file), e.line, tuple(e.path)) == (str(tree / "configs" / "sched.yaml"), 6,
                                        ("extenders", 0, "tlsConfig", "caFile"))
    assert e.message.startswith(f"the file lies outside the directory trees being tested ({tree})")


def test_an_encrypted_client_key_is_an_error_not_a_prompt(tmp_path, server):
    import shutil

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-keyout", "key.pem", "-out", "cert.pem",
                    "-days", "1", "-subj", "/CN=x", "-passout", "pass:secret"], cwd=tmp_path, check=True,
                   capture_output=True)
    s = server(keep_all)
    out = run_loaded(load(tmp_path, case_body(s.url.replace("http:", "https:"), enableHTTPS="true",
                                              tlsConfig="{certFile: cert.pem, keyFile: key.pem}")))
    assert out.actual["schedulingError"].startswith(
        "extender TLS configuration: the client key is encrypted (kspread, as upstream, reads unencrypted keys "
        "only) (extender ext at ")
    assert s.requests == []


@pytest.mark.parametrize("given,message", [
    ("9999999999999999999h", 'time: invalid duration "9999999999999999999h"'),
    ("2562048h", 'time: invalid duration "2562048h"'),
])
def test_an_http_timeout_go_refuses_is_an_error_at_its_line(tmp_path, given, message):
    e = load_error(tmp_path, case_body("http://127.0.0.1:9/x", httpTimeout=f"'{given}'"))
    assert (e.message, e.line, tuple(e.path)) == (message, 6, ("profile", "extenders", 0, "httpTimeout"))


def test_the_longest_http_timeout_go_takes_is_taken(tmp_path, server):
    s = server(keep_all)
    longest = "2562047h47m16.854775807s"
    # beyond the person's ceiling (60 s by default) it is refused; a person may allow it
    assert "httpTimeout 9223372036.855s is longer than the 60s" in str(
        load_error(tmp_path, case_body(s.url, httpTimeout=longest)))
    out = run_loaded(load(tmp_path, case_body(s.url, httpTimeout=longest), ExtenderAccess(max_timeout=1e10)))
    assert not out.diffs


def test_an_allowed_host_goes_through_the_proxy_the_environment_names(tmp_path, server, monkeypatch):
    """Go's ProxyFromEnvironment: HTTP_PROXY for a host that is not loopback, unless
    NO_PROXY covers it; the proxy gets the absolute URL."""
    proxy = server(keep_all)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
    monkeypatch.delenv("http_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    access = ExtenderAccess(hosts=("extender.invalid",))
    out = run_loaded(load(tmp_path, case_body("http://extender.invalid:8080/x"), access))
    assert not out.diffs and proxy.paths == ["http://extender.invalid:8080/x/filter"]
    direct = server(keep_all)
    url = direct.url.replace("127.0.0.1", "0.0.0.0")
    access = ExtenderAccess(hosts=("0.0.0.0",))
    monkeypatch.setenv("NO_PROXY", "0.0.0.0")
    assert not run_loaded(load(tmp_path, case_body(url), access)).diffs
    assert direct.paths == ["/ext/filter"] and len(proxy.paths) == 1


def test_answers_decode_as_go_decodes_them(tmp_path, server, capsys):
    """NaN is not JSON; bytes that are not UTF-8 and lone surrogates become U+FFFD (so a
    report can still be written)."""
    s = server(lambda verb, body: (200, b'{"NodeNames": null, "Nodes": {"items": []}, "X": NaN}', 0.0))
    out = run_loaded(load(tmp_path, _errors_case(s.url, "true")), keep_all=True)
    assert out.cycles[-1].extender_calls[0].error == "invalid character 'N' looking for beginning of value"
    nodes = b'{"items": [{"metadata": {"name": "n1"}}]}'
    s2 = server(lambda verb, body: (200, b'{"Nodes": ' + nodes + b', "FailedNodes": {"n2": "bad \\ud800 \xff"}}',
                                    0.0))
    out = run_loaded(load(tmp_path, _errors_case(s2.url, "false")), keep_all=True)
    assert out.actual["filter"]["n2"] == {"code": "Unschedulable", "reason": "bad \ufffd \ufffd"}
    s3 = server(lambda verb, body: (200, b'{"Error": "lone \\udfff"}', 0.0))
    p = write_case(tmp_path, _errors_case(s3.url, "false"))
    md = tmp_path / "r.md"
    assert cli_main(["run", str(p), "--markdown", str(md)]) == 1
    assert "lone \ufffd (extender ext at" in md.read_text(encoding="utf-8")
    capsys.readouterr()


def test_pytest_shows_the_url_as_written(pytester, monkeypatch):
    port = free_port()
    monkeypatch.setenv(SECRET_VAR, f"http://127.0.0.1:{port}/{SECRET}")
    (pytester.path / "case.yaml").write_text("apiVersion: kspread/v1\nkind: Case\n"
                                             + case_body(f"${{{SECRET_VAR}}}").replace("\n        ", "\n").lstrip())
    res = pytester.runpytest("case.yaml", f"--kspread-extender-env={SECRET_VAR}", "--kspread-markdown=r.md",
                             "--kspread-html=r.html")
    res.assert_outcomes(failed=1)
    text = res.stdout.str() + res.stderr.str()
    assert f'Post "${{{SECRET_VAR}}}/filter": dial tcp: connect: connection refused' in text
    for out in (text, (pytester.path / "r.md").read_text(), (pytester.path / "r.html").read_text()):
        assert SECRET not in out and str(port) not in out


def test_a_cases_http_timeout_is_bounded_by_what_the_person_allows(tmp_path):
    """A case may not hold the run on a silent port for days: httpTimeout beyond the
    person's ceiling (60 s unless --extender-max-timeout) is refused at its line."""
    import subprocess
    import sys

    p = tmp_path / "slow.yaml"
    p.write_text("apiVersion: kspread/v1\nkind: Case\nname: slow\nversion: \"1.35\"\nnodes: [n1]\n"
                 "profile:\n  filter: [NodeResourcesFit]\n  extenders:\n  - name: e\n"
                 "    urlPrefix: http://127.0.0.1:9/x\n    filterVerb: filter\n    httpTimeout: 2000000h\n"
                 "    ignorable: true\npod: {name: p}\nexpect: {feasible: [n1]}\n")

    def run(*extra: str) -> str:
        r = subprocess.run([sys.executable, "-m", "kspread", "run", "-q", *extra, str(p)], capture_output=True,
                           text=True, timeout=60)
        return r.stdout + r.stderr

    out = run()
    assert (f"{p}:12: profile.extenders[0].httpTimeout: httpTimeout 7200000000s is longer than the 60s a case's "
            "extender call may take: a person running kspread allows more with --extender-max-timeout") in out
    assert "is longer than the 100000000s" in run("--extender-max-timeout", "1e8")
    assert "expected a number of seconds above 0, got '0'" in run("--extender-max-timeout", "0")
    # within the ceiling the case runs (the port refuses at once; the extender is ignorable)
    p.write_text(p.read_text().replace("2000000h", "2s"))
    assert "1 passed, 0 failed" in run()
