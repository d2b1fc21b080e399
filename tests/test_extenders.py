"""HTTP extenders against real servers on 127.0.0.1 (tests/extender_server.py): the
requests kspread sends (k8s.io/kube-scheduler/extender/v1's JSON), what it does with
the answers at each extension point and version, and the errors, as upstream's
HTTPExtender (pkg/scheduler/extender.go), findNodesThatPassExtenders, prioritizeNodes,
callExtenders and extendersBinding."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from extender_server import ExtenderServer, Trickle, free_port
from helpers import write_case
from kspread.engine.extender import pod_uid
from kspread.engine.model import Pod
from kspread.errors import CaseError
from kspread.format.extenders import ExtenderAccess
from kspread.format.loader import load_case, read_file
from kspread.workflow.explain import explain_cycles
from kspread.workflow.runner import explain_run, run_loaded

ROOT = Path(__file__).resolve().parent.parent


def _load(tmp_path: Path, body: str, urls: dict[str, str] | None = None):
    p = write_case(tmp_path, body)
    res = read_file(p)
    assert res.error is None, res.error
    doc = res.docs[0]
    doc.extender_access = None if urls is None else ExtenderAccess(urls=urls)
    return load_case(doc), p


def run(tmp_path: Path, body: str, urls: dict[str, str] | None = None):
    case, _ = _load(tmp_path, body, urls)
    return run_loaded(case, keep_all=True)


def ok(value: Any, delay: float = 0.0) -> tuple[int, Any, float]:
    return 200, value, delay


def names(body: dict) -> list[str]:
    return [n["metadata"]["name"] for n in body["Nodes"]["items"]]


def keep_all(verb: str, body: Any) -> tuple[int, Any, float]:
    if verb == "filter":
        return ok({"Nodes": body["Nodes"], "NodeNames": None, "FailedNodes": {}, "Error": ""})
    return ok({})


@pytest.fixture
def server():
    started: list[ExtenderServer] = []

    def start(answer, tls=None) -> ExtenderServer:
        s = ExtenderServer(answer, tls)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def ext(url: str, **fields: Any) -> str:
    """A profile.extenders entry named ext (flow mapping)."""
    extra = "".join(f", {k}: {v}" for k, v in fields.items())
    return f"{{name: ext, urlPrefix: '{url}'{extra}}}"


# ---- prioritize ------------------------------------------------------------------------


def test_scores_follow_the_pod_labels_in_a_sequence(tmp_path, server):
    def answer(verb, body):
        want = body["Pod"]["metadata"]["labels"]["want"]
        return ok([{"Host": n, "Score": 10 if n == want else 1} for n in names(body)])

    s = server(answer)
    out = run(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{ext(s.url, prioritizeVerb='prioritize', weight=3)}]
        nodes: [n1, n2, n3]
        schedule:
        - {{name: a, labels: {{want: n2}}}}
        - {{name: b, labels: {{want: n3}}}}
        expect: {{placements: {{a: n2, b: n3}}}}
        """)
    assert out.actual["placements"] == {"a": "n2", "b": "n3"}
    # 10 x weight 3 x (MaxNodeScore 100 / MaxExtenderPriority 10)
    assert out.actual["totals"] == {"n1": 30, "n2": 30, "n3": 300}
    assert s.verbs() == ["prioritize", "prioritize"]
    _verb, body = s.requests[0]
    assert set(body) == {"Pod", "Nodes", "NodeNames"} and body["NodeNames"] is None
    assert names(body) == ["n1", "n2", "n3"]
    assert body["Pod"]["metadata"] == {"name": "a", "namespace": "default", "labels": {"want": "n2"},
                                       "uid": pod_uid(Pod("a"))}


@pytest.mark.parametrize("version,totals", [("1.16", {"n1": 10, "n2": 4}), ("1.17", {"n1": 100, "n2": 40}),
                                            ("1.30", {"n1": 100, "n2": 40})])
def test_extender_scores_scale_by_version(tmp_path, server, version, totals):
    """0..10 scores: x weight before 1.17 (MaxPriority 10), x weight x 10 from 1.17."""
    s = server(lambda verb, body: ok([{"Host": "n1", "Score": 5}, {"Host": "n2", "Score": 2},
                                      {"Host": "elsewhere", "Score": 10}]))
    out = run(tmp_path, f"""
        version: "{version}"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{ext(s.url, prioritizeVerb='prioritize', weight=2)}]
        nodes: [n1, n2]
        pod: {{name: p}}
        expect: {{selected: n1}}
        """)
    assert out.actual["totals"] == totals  # a host the extender was not sent is dropped


def test_prioritize_error_is_ignored_even_when_not_ignorable(tmp_path, server):
    s = server(lambda verb, body: (500, {}, 0))
    out = run(tmp_path, f"""
        version: "1.30"
        profile:
          score: [TaintToleration]
          extenders: [{ext(s.url, prioritizeVerb='prioritize')}]
        nodes: [n1, n2]
        pod: {{name: p}}
        expect: {{selected: [n1, n2]}}
        """)
    assert out.actual["totals"] == {"n1": 100, "n2": 100} and "schedulingError" not in out.actual
    call = out.cycles[-1].extender_calls[0]
    assert (call.error, call.ignored) == (f"failed prioritize with extender at URL {s.url}/prioritize, code 500", True)


# ---- filter -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.20", "1.21"])
def test_filter_failed_and_unresolvable_nodes(tmp_path, server, version):
    s = server(lambda verb, body: ok({"Nodes": {"items": [n for n in body["Nodes"]["items"]
                                                          if n["metadata"]["name"] == "n1"]},
                                      "FailedNodes": {"n2": "no licence"},
                                      "FailedAndUnresolvableNodes": {"n3": "wrong hardware"}}))
    out = run(tmp_path, f"""
        version: "{version}"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{ext(s.url, filterVerb='filter')}]
        nodes: [n1, n2, n3]
        pod: {{name: p}}
        expect: {{selected: n1}}
        """)
    n3 = ({"code": "UnschedulableAndUnresolvable", "reason": "wrong hardware"} if version == "1.21" else
          # FailedAndUnresolvableNodes came in 1.21 (PR #92866): before, the field is unknown
          {"code": "Unschedulable", "reason": "node(s) were filtered out by extender ext"})
    assert out.actual["filter"] == {"n1": {"code": "Success"},
                                    "n2": {"code": "Unschedulable", "reason": "no licence"}, "n3": n3}
    assert out.actual["feasible"] == ["n1"] and out.actual["selected"] == "n1"


@pytest.mark.parametrize("version,candidates", [("1.20", {"n1": ["v1"], "n2": ["v2"]}), ("1.21", {"n1": ["v1"]})])
def test_unresolvable_nodes_are_not_preemption_candidates(tmp_path, server, version, candidates):
    # n1 and n2 are full, so the extender is sent n3 only; it fails n3 and names n1 and n2
    # too (statuses.Set takes any node): n2 unresolvable is no longer a potential node
    s = server(lambda verb, body: ok({"Nodes": {"items": []}, "FailedNodes": {"n1": "busy", "n3": "busy"},
                                      "FailedAndUnresolvableNodes": {"n2": "wrong hardware"}}))
    out = run(tmp_path, f"""
        version: "{version}"
        profile:
          filter: [NodeResourcesFit]
          postFilter: [DefaultPreemption]
          extenders: [{ext(s.url, filterVerb='filter')}]
        nodes:
        - {{name: n1, allocatable: {{cpu: "1", memory: 1Gi, pods: 10}}}}
        - {{name: n2, allocatable: {{cpu: "1", memory: 1Gi, pods: 10}}}}
        - {{name: n3, allocatable: {{cpu: "1", memory: 1Gi, pods: 10}}}}
        pods:
        - {{name: v1, node: n1, priority: 1, requests: {{cpu: "1"}}}}
        - {{name: v2, node: n2, priority: 1, requests: {{cpu: "1"}}}}
        pod: {{name: p, priority: 10, requests: {{cpu: "1"}}}}
        expect: {{unschedulable: false}}
        """)
    assert [names(b) for _, b in s.requests] == [["n3"]]
    # n3 fits without victims: not a candidate (the dry run wants at least one victim)
    assert out.actual["candidates"] == candidates


def test_node_cache_capable_sends_names(tmp_path, server):
    s = server(lambda verb, body: ok({"NodeNames": ["n3", "n1"], "FailedNodes": {"n2": "full"}}))
    out = run(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{ext(s.url, filterVerb='filter', nodeCacheCapable='true')}]
        nodes: [n1, n2, n3]
        pod: {{name: p}}
        expect: {{selected: [n1, n3]}}
        """)
    assert out.actual["feasible"] == ["n1", "n3"]
    body = s.requests[0][1]
    assert body["NodeNames"] == ["n1", "n2", "n3"] and body["Nodes"] is None


def test_a_node_the_extender_was_not_sent_fails_the_cycle(tmp_path, server):
    s = server(lambda verb, body: ok({"NodeNames": ["n1", "n9"]}))
    case, p = _load(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders:
          - {ext(s.url, filterVerb='filter', nodeCacheCapable='true')}
        nodes: [n1, n2]
        pod: {{name: p}}
        expect: {{selected: n1}}
        """)
    out = run_loaded(case)
    assert out.actual["schedulingError"] == (
        f'extender "{s.url}" claims a filtered node "n9" which is not found in the input node list '
        f"(extender ext at {p}:7)")


def test_each_cycle_filters_the_cluster_as_it_is_then(tmp_path, server):
    s = server(keep_all)
    out = run(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeResourcesFit]
          extenders: [{ext(s.url, filterVerb='filter')}]
        nodes:
        - {{name: n1, allocatable: {{cpu: "1", memory: 1Gi, pods: 10}}}}
        - {{name: n2, allocatable: {{cpu: "1", memory: 1Gi, pods: 10}}}}
        schedule:
        - {{name: a, requests: {{cpu: "1"}}}}
        - {{name: b, requests: {{cpu: "1"}}}}
        expect: {{placements: {{a: n1, b: n2}}}}
        """)
    assert out.actual["placements"] == {"a": "n1", "b": "n2"}
    # with an extender, no EqualPriority: totals 0, the first node in node order
    assert [names(b) for _, b in s.requests] == [["n1", "n2"], ["n2"]]


# ---- managedResources --------------------------------------------------------------------


@pytest.mark.parametrize("pod,called", [
    ("{name: p}", False),
    ("{name: p, requests: {cpu: 100m}}", False),
    ("{name: p, requests: {example.com/gpu: 1}}", True),
    ("{name: p, containers: [{name: c, resources: {limits: {example.com/gpu: 1}}}]}", True),
    ("{name: p, initContainers: [{name: i, resources: {requests: {example.com/gpu: 1}}}], containers: [{name: c}]}",
     True),
])
def test_managed_resources_decide_interest(tmp_path, server, pod, called):
    s = server(lambda verb, body: ok({"Nodes": {"items": []}, "FailedNodes": {"n1": "no"}}))
    out = run(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{ext(s.url, filterVerb='filter', managedResources='[{name: example.com/gpu}]')}]
        nodes: [n1]
        pod: {pod}
        expect: {{unschedulable: false}}
        """)
    assert s.verbs() == (["filter"] if called else [])
    assert out.actual["unschedulable"] is called


@pytest.mark.parametrize("ignored,code", [("true", "Success"), ("false", "Unschedulable")])
def test_ignored_by_scheduler_sets_node_resources_fit_ignored_resources(tmp_path, ignored, code):
    out = run(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeResourcesFit]
          extenders:
          - {{name: ext, urlPrefix: 'http://127.0.0.1:9/x', managedResources: [{{name: example.com/gpu,
              ignoredByScheduler: {ignored}}}], ignorable: true}}
        nodes: [{{name: n1, allocatable: {{cpu: "1", memory: 1Gi, pods: 10}}}}]
        pod: {{name: p, requests: {{cpu: 100m}}}}
        expect: {{unschedulable: false}}
        """)
    # p does not ask for the gpu, so the extender is never called; a second pod does
    del out
    out = run(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeResourcesFit]
          extenders:
          - {{name: ext, urlPrefix: 'http://127.0.0.1:{free_port()}/x', managedResources: [{{name: example.com/gpu,
              ignoredByScheduler: {ignored}}}], filterVerb: filter, ignorable: true}}
        nodes: [{{name: n1, allocatable: {{cpu: "1", memory: 1Gi, pods: 10}}}}]
        pod: {{name: p, requests: {{example.com/gpu: 1}}}}
        expect: {{unschedulable: false}}
        """)
    assert out.actual["filter"]["n1"]["code"] == code


# ---- preempt -----------------------------------------------------------------------------

PREEMPT_CLUSTER = """
    nodes:
    - {name: n1, allocatable: {cpu: "1", memory: 1Gi, pods: 10}}
    - {name: n2, allocatable: {cpu: "1", memory: 1Gi, pods: 10}}
    pods:
    - {name: v1, node: n1, priority: 1, requests: {cpu: "1"}}
    - {name: v2, node: n2, priority: 2, requests: {cpu: "1"}}
    pod: {name: p, priority: 10, requests: {cpu: "1"}}
    expect: {unschedulable: false}
    """


def _preempt_case(url: str, version: str = "1.30", **fields: Any) -> str:
    return textwrap.dedent(f"""
        version: "{version}"
        profile:
          filter: [NodeResourcesFit]
          postFilter: [DefaultPreemption]
          extenders: [{ext(url, preemptVerb='preempt', **fields)}]
        """) + textwrap.dedent(PREEMPT_CLUSTER)


def test_preempt_removes_a_candidate(tmp_path, server):
    def answer(verb, body):
        kept = {n: {"Pods": [{"UID": p["metadata"]["uid"]} for p in v["Pods"]],
                    "NumPDBViolations": v["NumPDBViolations"]}
                for n, v in body["NodeNameToVictims"].items() if n != "n1"}
        return ok({"NodeNameToMetaVictims": kept})

    s = server(answer)
    out = run(tmp_path, _preempt_case(s.url))
    # without the extender n1 wins (lowest victim priority); it drops n1
    assert out.actual["preemption"] == {"node": "n2", "victims": ["v2"]}
    assert out.actual["candidates"] == {"n1": ["v1"], "n2": ["v2"]}
    body = s.requests[0][1]
    assert body["NodeNameToMetaVictims"] is None
    assert {n: [p["metadata"]["name"] for p in v["Pods"]] for n, v in body["NodeNameToVictims"].items()} == \
        {"n1": ["v1"], "n2": ["v2"]}
    assert body["NodeNameToVictims"]["n2"]["Pods"][0]["spec"]["priority"] == 2


def test_preempt_node_cache_capable_sends_uids(tmp_path, server):
    s = server(lambda verb, body: ok({"NodeNameToMetaVictims": {"n1": body["NodeNameToMetaVictims"]["n1"]}}))
    out = run(tmp_path, _preempt_case(s.url, nodeCacheCapable="true"))
    assert out.actual["preemption"] == {"node": "n1", "victims": ["v1"]}
    body = s.requests[0][1]
    assert body["NodeNameToVictims"] is None
    assert body["NodeNameToMetaVictims"] == {
        "n1": {"Pods": [{"UID": pod_uid(Pod("v1"))}], "NumPDBViolations": 0},
        "n2": {"Pods": [{"UID": pod_uid(Pod("v2"))}], "NumPDBViolations": 0}}


@pytest.mark.parametrize("answer,error", [
    ({"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "bogus"}]}}},
     "extender: {url} claims to preempt pod (UID: &{{bogus}}) on node: n1, but the pod is not found on that node"),
    ({"NodeNameToMetaVictims": {"n1": {"Pods": []}}}, 'expected at least one victim pod on node "n1"'),
    ({"NodeNameToMetaVictims": {"n7": {"Pods": []}}}, 'nodeinfo not found for node name "n7"'),
])
def test_preempt_errors_leave_the_pod_unschedulable(tmp_path, server, answer, error):
    s = server(lambda verb, body: ok(answer))
    case, p = _load(tmp_path, _preempt_case(s.url))
    out = run_loaded(case, keep_all=True)
    assert out.actual["preemption"] is None and out.actual["unschedulable"] is True
    r = out.cycles[-1]
    msg = error.format(url=s.url)
    assert r.post_filter_status.code.name == "ERROR"
    assert r.post_filter_status.message == f"{msg} (extender ext at {p}:7)"


def test_ignorable_preempt_extender_drops_candidates_without_victims(tmp_path, server):
    s = server(lambda verb, body: ok({"NodeNameToMetaVictims": {
        "n1": {"Pods": []}, "n2": {"Pods": [{"UID": pod_uid(Pod("v2"))}]}}}))
    out = run(tmp_path, _preempt_case(s.url, ignorable="true"))
    assert out.actual["preemption"] == {"node": "n2", "victims": ["v2"]}


# ---- bind ---------------------------------------------------------------------------------


def test_bind_takes_over_binding(tmp_path, server):
    s = server(lambda verb, body: ok({"Error": ""}))
    out = run(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{ext(s.url, bindVerb='bind')}]
        nodes: [n1]
        schedule: [{{name: a, namespace: team}}]
        expect: {{placements: {{team/a: n1}}}}
        """)
    assert out.actual["placements"] == {"team/a": "n1"}
    assert s.requests == [("bind", {"PodName": "a", "PodNamespace": "team", "PodUID": pod_uid(Pod("a", "team")),
                                    "Node": "n1"})]


def test_bind_error_leaves_the_pod_pending(tmp_path, server):
    s = server(lambda verb, body: ok({"Error": "quota exceeded"}))
    case, p = _load(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders:
          - {ext(s.url, bindVerb='bind')}
        nodes: [n1]
        schedule: [{{name: a}}]
        expect: {{placements: {{a: null}}}}
        """)
    out = run_loaded(case)
    assert out.actual["placements"] == {"a": None}
    assert out.actual["schedulingError"] == f"quota exceeded (extender ext at {p}:7)"


def test_a_failed_binding_of_one_incoming_pod_is_in_the_results_a_report_compares(tmp_path, server):
    # a failure report compares a one-pod case as its cycle ends (before the binding):
    # the binding extender's error that follows must still reach the results compared
    s = server(lambda verb, body: ok({"Error": "quota exceeded"}))
    case, p = _load(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders:
          - {ext(s.url, bindVerb='bind')}
        nodes: [n1, n2]
        pod: {{name: a}}
        expect: {{selected: n2}}
        """)
    out = run_loaded(case, capture=lambda sched, r, nodes: "captured")
    assert out.actual["schedulingError"] == f"quota exceeded (extender ext at {p}:7)"
    assert out.explained is None  # the report explains a re-run, not the cycle before the binding


# ---- errors: ignorable and not -------------------------------------------------------------


def _errors_case(url: str, ignorable: bool, timeout: str = "") -> str:
    fields = {"filterVerb": "filter", "prioritizeVerb": "prioritize", "ignorable": str(ignorable).lower()}
    if timeout:
        fields["httpTimeout"] = timeout
    return f"""
        version: "1.30"
        profile:
          score: [TaintToleration]
          extenders:
          - {ext(url, **fields)}
        nodes: [n1, n2]
        pod: {{name: p}}
        expect: {{selected: [n1, n2]}}
        """


def _failures(server):
    down = f"http://127.0.0.1:{free_port()}/ext"
    slow = server(lambda verb, body: ok({}, delay=1.0))
    garbage = server(lambda verb, body: ok(b"garbage"))
    broken = server(lambda verb, body: (500, {}, 0))
    port = int(down.rsplit(":", 1)[1].split("/")[0])
    return [
        (down, "", f'Post "{down}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'),
        (slow.url, "200ms", (f'Post "{slow.url}/filter": context deadline exceeded (Client.Timeout exceeded while '
                            "awaiting headers)")),
        (garbage.url, "", "invalid character 'g' looking for beginning of value"),
        (broken.url, "", f"failed filter with extender at URL {broken.url}/filter, code 500"),
    ]


def test_ignorable_extender_failures_are_skipped(tmp_path, server):
    for url, timeout, error in _failures(server):
        out = run(tmp_path, _errors_case(url, True, timeout))
        assert "schedulingError" not in out.actual
        assert out.actual["feasible"] == ["n1", "n2"] and out.actual["totals"] == {"n1": 100, "n2": 100}
        calls = out.cycles[-1].extender_calls
        assert [(c.verb, c.error, c.ignored) for c in calls] == [("filter", error, True),
                                                                 ("prioritize", error.replace("/filter",
                                                                                              "/prioritize")
                                                                  .replace("failed filter", "failed prioritize"),
                                                                  True)]


def test_non_ignorable_extender_failures_fail_the_cycle(tmp_path, server):
    for url, timeout, error in _failures(server):
        case, p = _load(tmp_path, _errors_case(url, False, timeout))
        out = run_loaded(case)
        assert out.actual["schedulingError"] == f"{error} (extender ext at {p}:7)"
        assert out.actual["selected"] is None


def test_explain_shows_every_call(tmp_path, server):
    def answer(verb, body):
        if verb == "filter":
            return ok({"Nodes": {"items": body["Nodes"]["items"][:2]}, "FailedNodes": {"n3": "no room"}})
        return ok([{"Host": "n1", "Score": 3}, {"Host": "n2", "Score": 7}])

    s = server(answer)
    case, _ = _load(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{ext(s.url, filterVerb='filter', prioritizeVerb='prioritize', weight=2)}]
        nodes: [n1, n2, n3]
        pod: {{name: p}}
        expect: {{selected: n2}}
        """)
    outcome, cycles = explain_run(case)
    text = explain_cycles(outcome.scheduler, cycles)
    assert "         extender:ext                      Unschedulable: no room" in text
    assert "extender ext                      3 x2 x10 = 60" in text
    assert "extender ext                      7 x2 x10 = 140" in text
    calls = text.split("extender calls:\n", 1)[1].split("\n")
    assert calls[0].startswith(f"  filter ext ({s.url}/filter): sent 3 node(s); kept 2: n1, n2; failed: n3 "
                               "(no room); ")
    assert calls[1].startswith(f"  prioritize ext ({s.url}/prioritize): sent 2 node(s); scores: n1=3, n2=7; ")
    assert calls[1].endswith(" ms")


# ---- HTTPS --------------------------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def tls_files(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the test certificate authority")
    d = tmp_path / "pki"
    d.mkdir()
    for ca in ("ca", "other-ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{ca}.key", "-out", f"{ca}.crt",
                 "-days", "1", "-subj", f"/CN=kspread test {ca}", cwd=d)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
             "-subj", "/CN=127.0.0.1", cwd=d)
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.crt", "-days", "1", "-extfile", "san.ext", cwd=d)
    # a certificate for a name only (tlsConfig.serverName)
    (d / "named.ext").write_text("subjectAltName=DNS:ext.kspread.test\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "named.crt", "-days", "1", "-extfile", "named.ext", cwd=d)
    return d


def test_https_with_a_test_certificate_authority(tmp_path, server, tls_files):
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tls_files / "server.crt", tls_files / "server.key")
    s = server(keep_all, tls=ctx)
    assert s.url.startswith("https://")

    def case(tls: str) -> str:
        return f"""
            version: "1.30"
            profile:
              filter: [NodeUnschedulable]
              extenders:
              - {{name: ext, urlPrefix: '{s.url}', filterVerb: filter, enableHTTPS: true{tls}}}
            nodes: [n1]
            pod: {{name: p}}
            expect: {{selected: n1}}
            """

    # the CA file is named relative to the case file
    assert "schedulingError" not in run(tmp_path, case(", tlsConfig: {caFile: pki/ca.crt}")).actual
    # enableHTTPS without a CA: upstream does not verify the server (Insecure)
    assert "schedulingError" not in run(tmp_path, case("")).actual
    out = run(tmp_path, case(", tlsConfig: {caFile: pki/other-ca.crt}"))
    assert out.actual["schedulingError"].startswith(
        f'Post "{s.url}/filter": tls: failed to verify certificate: unable to get local issuer certificate')
    assert len(s.requests) == 2


def test_server_name_is_what_the_certificate_is_checked_against(tmp_path, server, tls_files):
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tls_files / "named.crt", tls_files / "server.key")
    s = server(keep_all, tls=ctx)

    def case(tls: str) -> str:
        return f"""
            version: "1.30"
            profile:
              filter: [NodeUnschedulable]
              extenders:
              - {{name: ext, urlPrefix: '{s.url}', filterVerb: filter, tlsConfig: {{caFile: pki/ca.crt{tls}}}}}
            nodes: [n1]
            pod: {{name: p}}
            expect: {{selected: n1}}
            """

    out = run(tmp_path, case(""))
    assert out.actual["schedulingError"].startswith(
        f'Post "{s.url}/filter": tls: failed to verify certificate: IP address mismatch')
    assert "schedulingError" not in run(tmp_path, case(", serverName: ext.kspread.test")).actual
    assert len(s.requests) == 1


# ---- configuration, validation, URL overrides ----------------------------------------------


def test_kube_scheduler_configuration_extenders(tmp_path, server):
    s = server(lambda verb, body: ok({"NodeNames": ["n2"]}))
    (tmp_path / "sched.yaml").write_text(textwrap.dedent(f"""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        extenders:
        - urlPrefix: {s.url}
          filterVerb: filter
          nodeCacheCapable: true
        """))
    case, _ = _load(tmp_path, """
        version: "1.30"
        profile: {config: sched.yaml}
        nodes: [n1, n2]
        pod: {name: p}
        expect: {selected: n2}
        """)
    [e] = case.profile.extenders
    assert (e.name, e.where) == (s.url, f"{tmp_path / 'sched.yaml'}:4")
    assert run_loaded(case).actual["feasible"] == ["n2"]
    # one URL replaced on the command line: the extender is named by its urlPrefix
    down = f"http://127.0.0.1:{free_port()}/x"
    case, _ = _load(tmp_path, "version: '1.30'\nprofile: {config: sched.yaml}\nnodes: [n1]\npod: {name: p}\n"
                    "expect: {selected: n1}\n", urls={s.url: down})
    assert run_loaded(case).actual["schedulingError"].startswith(f'Post "{down}/filter": dial tcp')


@pytest.mark.parametrize("fields,message,path,line", [
    # no weight written: the error is at the extender
    ("prioritizeVerb: p", "Invalid value: 0: must have a positive weight applied to it", ("extenders", 0, "weight"),
     4),
    ("managedResources: [{name: gpu}]", "Invalid value: 'gpu': is an invalid extended resource name",
     ("extenders", 0, "managedResources", 0, "name"), 5),
    ("httpTimeout: 5", 'httpTimeout must be a duration string such as "5s" or "500ms"',
     ("extenders", 0, "httpTimeout"), 5),
    ("filterVerbs: f", 'strict decoding error: unknown field "filterVerbs"', ("extenders", 0, "filterVerbs"), 5),
])
def test_configuration_extenders_are_validated(tmp_path, fields, message, path, line):
    (tmp_path / "sched.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nextenders:\n"
        f"- urlPrefix: http://127.0.0.1:1/x\n  {fields}\n")
    with pytest.raises(CaseError) as e:
        _load(tmp_path, "version: '1.30'\nprofile: {config: sched.yaml}\nnodes: [n1]\npod: {name: p}\n"
              "expect: {selected: n1}\n")
    assert e.value.message.startswith(message) and e.value.path == path
    assert (e.value.file, e.value.line) == (str(tmp_path / "sched.yaml"), line)


def test_case_extender_validation(tmp_path):
    def err(extenders: str) -> CaseError:
        with pytest.raises(CaseError) as e:
            _load(tmp_path, f"version: '1.30'\nprofile:\n  filter: [NodeUnschedulable]\n  extenders:\n{extenders}"
                  "nodes: [n1]\npod: {name: p}\nexpect: {selected: n1}\n")
        return e.value

    e = err("  - {name: a, urlPrefix: 'http://x', bindVerb: b}\n  - {name: b, urlPrefix: 'http://y', bindVerb: b}\n")
    assert (e.message, e.line) == (('Invalid value: "found 2 extenders implementing bind": only one extender can '
                                   "implement bind"), 6)
    e = err("  - {name: a, urlPrefix: 'http://x', managedResources: [{name: example.com/gpu}]}\n"
            "  - {name: b, urlPrefix: 'http://y', managedResources: [{name: example.com/gpu}]}\n")
    assert (e.message, e.line) == ("Invalid value: 'example.com/gpu': duplicate extender managed resource name", 8)
    e = err("  - {name: a, urlPrefix: 'http://x', filter: [n1]}\n")
    assert e.message == "extender 'a' is an HTTP extender (urlPrefix): its results come from the extender, not from " \
                        "`filter`"
    e = err("  - {name: a, urlPrefix: 'ftp://x'}\n")
    assert (e.message, e.line) == ("urlPrefix 'ftp://x' is not an http:// or https:// URL", 7)
    # a variable the person did not allow is never read
    e = err("  - {name: a, urlPrefix: '${KSPREAD_TEST_UNSET_VARIABLE}/x'}\n")
    assert (e.message, e.line) == (("urlPrefix reads the environment variable KSPREAD_TEST_UNSET_VARIABLE, which "
                                   "kspread reads only when allowed outside the case: --extender-env "
                                   "KSPREAD_TEST_UNSET_VARIABLE (pytest: --kspread-extender-env "
                                   "KSPREAD_TEST_UNSET_VARIABLE or the ini key kspread_extender_env); or give the "
                                   "extender's URL with --extender NAME=URL"), 7)
    # one allowed but not set
    p = write_case(tmp_path, "version: '1.30'\nprofile:\n  filter: [NodeUnschedulable]\n  extenders:\n"
                   "  - {name: a, urlPrefix: '${KSPREAD_TEST_UNSET_VARIABLE}/x'}\nnodes: [n1]\npod: {name: p}\n"
                   "expect: {selected: n1}\n")
    doc = read_file(p).docs[0]
    doc.extender_access = ExtenderAccess(env=frozenset({"KSPREAD_TEST_UNSET_VARIABLE"}), environ={})
    with pytest.raises(CaseError) as info:
        load_case(doc)
    assert (info.value.message, info.value.line) == (
        ("urlPrefix names the environment variable KSPREAD_TEST_UNSET_VARIABLE, which is not set (set it, or write "
        "${KSPREAD_TEST_UNSET_VARIABLE:-http://host:port} to give a default)"), 7)


def test_environment_expansion_and_override(tmp_path, server, monkeypatch):
    s = server(keep_all)
    body = """
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{name: ext, urlPrefix: '${KSPREAD_TEST_EXT:-http://127.0.0.1:9/none}', filterVerb: filter}]
        nodes: [n1]
        pod: {name: p}
        expect: {selected: n1}
        """
    allowed = ExtenderAccess(env=frozenset({"KSPREAD_TEST_EXT"}))

    def run_with(access: ExtenderAccess | None):
        p = write_case(tmp_path, body)
        doc = read_file(p).docs[0]
        doc.extender_access = access
        return run_loaded(load_case(doc), keep_all=True)

    monkeypatch.setenv("KSPREAD_TEST_EXT", s.url)
    assert "schedulingError" not in run_with(allowed).actual and s.verbs() == ["filter"]
    # set but not allowed: never read, the default is called, and the error says why
    out = run_with(None)
    assert out.actual["schedulingError"] == (
        'Post "${KSPREAD_TEST_EXT:-http://127.0.0.1:9/none}/filter": dial tcp: connect: connection refused '
        f"(extender ext at {tmp_path / 'case.yaml'}:6); urlPrefix's ${{KSPREAD_TEST_EXT}} took its default: kspread "
        "reads KSPREAD_TEST_EXT only when allowed (--extender-env KSPREAD_TEST_EXT, pytest --kspread-extender-env "
        "KSPREAD_TEST_EXT)")
    monkeypatch.delenv("KSPREAD_TEST_EXT")
    assert run_with(allowed).actual["schedulingError"].startswith(
        'Post "${KSPREAD_TEST_EXT:-http://127.0.0.1:9/none}/filter": dial tcp: connect: connection refused')
    assert "schedulingError" not in run(tmp_path, body, urls={"ext": s.url}).actual
    assert s.verbs() == ["filter", "filter"]


def test_cli_and_pytest_extender_options(tmp_path, server):
    s = server(keep_all)
    p = write_case(tmp_path, """
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{name: ext, urlPrefix: 'http://127.0.0.1:9/written', filterVerb: filter}]
        nodes: [n1]
        pod: {name: p}
        expect: {selected: n1}
        """)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "kspread", "run", str(p), "--extender", f"ext={s.url}"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(p), f"--kspread-extender=ext={s.url}"],
                       capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "kspread", "run", str(p), "--extender", "ext"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 4 and "expected NAME=URL, got 'ext'" in r.stderr
    assert s.verbs() == ["filter", "filter"]


@pytest.mark.parametrize("version,cache,totals", [
    # 1.31: Score looks the node up by name: n1's pod counts
    ("1.31", "false", {"n1": 40, "n2": 90}),
    # from 1.32 Score reads the NodeInfo it is given: Filter's new, pod-less NodeInfos
    ("1.35", "false", {"n1": 90, "n2": 90}),
    # nodeCacheCapable: the NodeInfos sent come back, pods and all
    ("1.35", "true", {"n1": 40, "n2": 90}),
])
def test_nodes_returned_as_objects_score_without_pods_from_1_32(tmp_path, server, version, cache, totals):
    def answer(verb, body):
        if body["NodeNames"] is not None:
            return ok({"NodeNames": body["NodeNames"]})
        return ok({"Nodes": body["Nodes"]})

    s = server(answer)
    out = run(tmp_path, f"""
        version: "{version}"
        profile:
          filter: [NodeResourcesFit]
          score: [NodeResourcesFit]
          extenders: [{ext(s.url, filterVerb='filter', nodeCacheCapable=cache)}]
        nodes:
        - {{name: n1, allocatable: {{cpu: "2", memory: 2Gi, pods: 10}}}}
        - {{name: n2, allocatable: {{cpu: "2", memory: 2Gi, pods: 10}}}}
        pods: [{{name: v, node: n1, requests: {{cpu: "1", memory: 1Gi}}}}]
        pod: {{name: p, requests: {{cpu: 200m, memory: 200Mi}}}}
        expect: {{selected: n2}}
        """)
    assert out.actual["totals"] == totals


def test_the_nominated_node_alone_then_the_rest_for_feasible(tmp_path, server):
    """PreferNominatedNode (1.22+): upstream sends the extenders the nominated node alone;
    kspread then sends the other filter-passing nodes in a call of its own, for `feasible`."""
    s = server(lambda verb, body: ok({"Nodes": {"items": [n for n in body["Nodes"]["items"]
                                                          if n["metadata"]["name"] != "n3"]},
                                      "FailedNodes": {"n3": "no"}}))
    out = run(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{ext(s.url, filterVerb='filter')}]
        nodes: [n1, n2, n3]
        pod: {{name: p, nominatedNode: n2}}
        expect: {{selected: n2}}
        """)
    assert [names(b) for _, b in s.requests] == [["n2"], ["n1", "n3"]]
    assert [c.for_feasible for c in out.cycles[-1].extender_calls] == [False, True]
    assert out.actual["feasible"] == ["n1", "n2"] and out.actual["searched"] == ["n2"]
    assert out.actual["selected"] == "n2"


def test_a_failure_report_lists_the_extender_calls(tmp_path, server):
    from kspread.workflow.runner import check

    s = server(lambda verb, body: ok([{"Host": "n1", "Score": 2}, {"Host": "n2", "Score": "high"}]))
    p = write_case(tmp_path, f"""
        version: "1.30"
        profile:
          filter: [NodeUnschedulable]
          extenders: [{ext(s.url, prioritizeVerb='prioritize')}]
        nodes: [n1, n2]
        pod: {{name: p}}
        expect: {{selected: n2}}
        """)
    v = check(read_file(p).docs[0])
    assert not v.passed
    assert (f"  prioritize ext ({s.url}/prioritize): sent 2 node(s); error (ignored): json: cannot unmarshal "
            "string into Go struct field HostPriority.Score of type int64; ") in v.message


def test_diff_runs_a_configuration_with_an_extender(tmp_path, server):
    s = server(lambda verb, body: ok([{"Host": "n2", "Score": 10}]))
    base = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    (tmp_path / "base.yaml").write_text(base)
    (tmp_path / "head.yaml").write_text(base + "extenders:\n- {urlPrefix: '${KSPREAD_TEST_DIFF_EXT}', "
                                        "prioritizeVerb: prioritize, weight: 5}\n")
    (tmp_path / "cases.yaml").write_text("apiVersion: kspread/v1\nkind: Case\nname: c\nversion: '1.30'\n"
                                         "nodes: [n1, n2]\npod: {name: p}\nexpect: {unschedulable: false}\n")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "KSPREAD_TEST_DIFF_EXT": s.url}
    r = subprocess.run([sys.executable, "-m", "kspread", "diff", "--base", str(tmp_path / "base.yaml"), "--head",
                        str(tmp_path / "head.yaml"), str(tmp_path / "cases.yaml"), "--extender-env",
                        "KSPREAD_TEST_DIFF_EXT"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert '  selected: [n1, n2] -> n2' in r.stdout, r.stdout + r.stderr
    assert s.verbs() == ["prioritize"]


def test_an_answer_trickling_past_the_timeout_times_out(tmp_path, server):
    """httpTimeout covers reading the body too (http.Client's Timeout)."""
    s = server(lambda verb, body: ok(Trickle([b"[", b" ", b" ", b" ", b"]"]), delay=0.15))
    out = run(tmp_path, _errors_case(s.url, False, "300ms"))
    assert out.actual["schedulingError"].startswith(
        "net/http: request canceled (Client.Timeout or context cancellation while reading body) (extender ext at ")


def test_case_extenders_beside_a_configuration_come_after_its_own(tmp_path, server):
    s = server(lambda verb, body: ok({"NodeNames": body["NodeNames"][:1]}))
    (tmp_path / "sched.yaml").write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                                         "kind: KubeSchedulerConfiguration\nextenders:\n"
                                         f"- {{urlPrefix: '{s.url}/a', filterVerb: f, nodeCacheCapable: true}}\n")
    out = run(tmp_path, f"""
        version: "1.30"
        profile:
          config: sched.yaml
          extenders: [{ext(s.url + '/b', filterVerb='f', nodeCacheCapable='true')}]
        nodes: [n1, n2, n3]
        pod: {{name: p}}
        expect: {{selected: n1}}
        """)
    assert [c.url for c in out.cycles[-1].extender_calls] == [f"{s.url}/a/f", f"{s.url}/b/f"]
    assert [b["NodeNames"] for _, b in s.requests] == [["n1", "n2", "n3"], ["n1"]]
    assert out.actual["feasible"] == ["n1"]


def test_a_malformed_pytest_extender_option_is_a_usage_error(pytester):
    pytester.makefile(".yaml", case="apiVersion: kspread/v1\nkind: Case\nnodes: [n1]\npod: {name: p}\n"
                                    "expect: {selected: n1}\n")
    result = pytester.runpytest("--kspread-extender=nourl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kspread-extender: expected NAME=URL, got 'nourl'*"])


# ---- 1.35: an extender's answer gives the nodes a Randomizer --------------------------------

EIGHT = """
        nodes: [{nodes}]
        pods: [{pods}]
        schedule: [{{name: p, requests: {{cpu: "1"}}}}]
        expect: {{placements: {{p: n0}}}}
        """.format(nodes=", ".join(f"{{name: n{i}, allocatable: {{cpu: '4', memory: 8Gi, pods: 110}}}}"
                                   for i in range(8)),
                   pods=", ".join(f"{{name: b{i}, node: n{i}, requests: {{cpu: '1'}}}}" for i in range(6)))


@pytest.mark.parametrize("answered,verb,node", [
    (None, "filterVerb", "n6"),   # no prioritizeVerb: every node answered with 0
    (["n0"], "prioritizeVerb", "n7"),  # n6, n7 without a Randomizer: the heap's pick
    (["n0", "n6", "n7"], "prioritizeVerb", "n6"),  # both random: node order
    (["n7"], "prioritizeVerb", "n7"),  # only n7 has one: it beats n6
])
def test_extender_answers_decide_which_ties_are_random_from_1_35(tmp_path, server, answered, verb, node):
    def answer(verb, body):
        if verb == "filter":  # node names kept (nodes returned as objects would score without pods)
            return ok({"Nodes": None, "NodeNames": body["NodeNames"], "FailedNodes": {}, "Error": ""})
        return ok([{"Host": n, "Score": 0} for n in answered])

    s = server(answer)
    out = run(tmp_path, f"""
        version: "1.35"
        profile:
          filter: [NodeResourcesFit]
          score: [NodeResourcesFit]
          extenders: [{ext(s.url, nodeCacheCapable='true', **{verb: verb[:-4]})}]
        """ + EIGHT)
    assert out.actual["placements"] == {"p": node}
    assert out.actual["ties"]["p"]["nodes"] == ["n6", "n7"]


def test_the_example_extender_prints_its_usage_not_a_traceback():
    """`python3 examples/extender/extender.py --help` (or a port that is not a number)."""
    script = Path(__file__).resolve().parent.parent / "examples" / "extender" / "extender.py"
    ok = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert ok.returncode == 0 and "python3 examples/extender/extender.py [PORT]" in ok.stdout
    bad = subprocess.run([sys.executable, str(script), "eighty"], capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "[PORT]" in bad.stderr and "Traceback" not in bad.stderr
