"""Issue 26: any case text, however hostile, loads (and runs) or fails with a CaseError
naming where, in bounded time. Hypothesis takes small valid cases and puts hostile values
(integers past any range, numbers of a million digits, long strings, deep nesting, wrong
types) at random places, written as YAML (both readers) or JSON, and edits their texts at
random (cuts, inserted YAML indicators and characters)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kspread.format.loader as loader
from kspread.errors import CaseError
from kspread.format.loader import read_file
from kspread.workflow.runner import check


@dataclass(frozen=True)
class Raw:
    """Text written as is into the case (a number Python would not write itself)."""

    text: str


BASES: list[dict[str, Any]] = [
    {"apiVersion": "kspread/v1", "kind": "Case", "name": "c", "version": "1.30",
     "nodes": [{"name": "n1", "allocatable": {"cpu": "2", "memory": "4Gi", "pods": 10},
                "labels": {"topology.kubernetes.io/zone": "a"}},
               {"name": "n2", "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}],
     "pods": [{"name": "web", "node": "n1", "replicas": 2, "labels": {"app": "web"}, "priority": 10,
               "requests": {"cpu": "500m"}, "controller": {"kind": "ReplicaSet", "name": "web-rs"}}],
     "owners": [{"kind": "ReplicaSet", "name": "web-rs", "selector": {"matchLabels": {"app": "web"}}}],
     "pod": {"name": "new", "labels": {"app": "web"}, "requests": {"cpu": "1", "memory": "1Gi"},
             "tolerations": [{"key": "k", "operator": "Exists"}],
             "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                            "whenUnsatisfiable": "ScheduleAnyway",
                                            "labelSelector": {"matchLabels": {"app": "web"}}}]},
     "expect": {"selected": "n1"}},
    {"apiVersion": "kspread/v1", "kind": "Case", "name": "s", "version": "1.33",
     "zones": {"a": ["n1"], "b": ["n2"]},
     "priorityClasses": [{"name": "high", "value": 1000}],
     "schedule": [{"name": "a", "replicas": 3, "requests": {"cpu": "100m"}},
                  {"name": "b", "priorityClassName": "high", "startTime": "2024-01-01T00:00:00Z"}],
     "pdbs": [{"name": "p", "selector": {"matchLabels": {"app": "x"}}, "minAvailable": 1}],
     "expect": {"placements": {"b": "n1"}}},
    {"apiVersion": "kspread/v1", "kind": "Case", "name": "o", "version": "1.35",
     "objects": [{"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
                  "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
                 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"},
                  "spec": {"nodeName": "n1", "priority": 5,
                           "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}],
     "pod": {"name": "new", "nodeSelector": {"kubernetes.io/hostname": "n1"},
             "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                 {"weight": 5, "preference": {"matchExpressions": [
                     {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}}]}}},
     "expect": {"selected": "n1"}},
    # issue 32: the newer features (DRA devices and their CEL, steps of a sequence, gangs)
    {"apiVersion": "kspread/v1", "kind": "Case", "name": "d", "version": "1.35",
     "deviceClasses": [{"name": "gpu", "driver": "gpu.example.com"}],
     "nodes": [{"name": "n1", "devices": [{"driver": "gpu.example.com", "name": "gpu", "count": 2,
                                           "attributes": {"model": "a100", "mem": 80}, "capacity": {"memory": "80Gi"}}]}],
     "schedule": [{"name": "a", "devices": {"g": {"class": "gpu", "count": 1,
                                                  "selector": 'device.attributes["gpu.example.com"].model == "a100"'}}}],
     "expect": {"placements": {"a": "n1"}}},
    {"apiVersion": "kspread/v1", "kind": "Case", "name": "st", "version": "1.35",
     "nodes": [{"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}},
               {"name": "n2", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}],
     "pods": [{"name": "w", "node": "n1", "requests": {"cpu": "1"}, "labels": {"app": "w"},
               "controller": {"kind": "ReplicaSet", "name": "rs"}}],
     "owners": [{"kind": "ReplicaSet", "name": "rs", "selector": {"matchLabels": {"app": "w"}}}],
     "schedule": [{"name": "b", "requests": {"cpu": "3"}, "schedulingGates": [{"name": "example.com/g"}]},
                  {"drain": "n1"}, {"taint": {"node": "n2", "key": "k", "effect": "NoExecute"}}, {"wait": 30},
                  {"addNode": {"name": "n3", "allocatable": {"cpu": "4", "pods": 110}}},
                  {"ungate": {"pod": "b", "gate": "example.com/g"}},
                  {"name": "c", "replicas": "max", "requests": {"cpu": "1"}}],
     "expect": {"placements": {"b": "n3"}}},
    {"apiVersion": "kspread/v1", "kind": "Case", "name": "g", "version": "1.35",
     "featureGates": {"GenericWorkload": True, "GangScheduling": True},
     "nodes": [{"name": "n1", "allocatable": {"cpu": "5", "memory": "8Gi", "pods": 110}}],
     "objects": [{"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "t"},
                  "spec": {"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 2}}}]}}],
     "schedule": [{"name": "w", "replicas": 2, "requests": {"cpu": "2"}, "workloadRef": {"name": "t", "podGroup": "w"}}],
     "expect": {"placements": {"w-0": "n1", "w-1": "n1"}}},
]

# What a hostile case puts in a field.
HOSTILE = st.one_of(
    st.sampled_from([Raw("9" * 4301), Raw("-" + "9" * 5000), Raw("9" * 200_000), Raw("1" + "0" * 101),
                     Raw("9223372036854775808"), Raw("1e999999"), Raw(".inf"), Raw(".nan"), Raw("1." + "1" * 50_000)]),
    st.sampled_from(["9" * 4301, "1e999999", "0." + "0" * 100_000 + "1", "1" + "0" * 60 + "Ei", "x" * 300_000,
                     "a" * 64, "a" * 254, "-1", "", "Ki", "\u202e\x1b[31m", "n" * 70 + ".example.com/k"]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([None, True, [], {}, [[[[["deep"]]]]], {"a": {"b": {"c": 1}}}]),
    st.integers(min_value=150, max_value=400).map(lambda n: Raw("[" * n + "]" * n)),
    st.integers(min_value=1, max_value=3).map(lambda k: ["n1"] * (10 ** k)),
    # a CEL selector of 100,000 additions; a comprehension past the cost limit; a name with a quote
    st.sampled_from(["device.driver" + " + 1" * 25_000, "[" + ",".join(["1"] * 200) + "].all(a, ["
                     + ",".join(["1"] * 200) + "].all(b, [" + ",".join(["1"] * 200) + "].all(c, true)))",
                     'x" || true || "']),
)


def _paths(data: Any, at: tuple = ()) -> list[tuple]:
    """Every path in ``data`` (a mapping key or list index at each step), itself first."""
    out = [at]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _paths(v, (*at, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*at, i))
    return out


def _put(data: Any, path: tuple, value: Any, add_key: str | None) -> Any:
    if not path:
        if add_key is not None and isinstance(data, dict):
            return {**data, add_key: value}
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {**data, head: _put(data[head], rest, value, add_key)}
    out = list(data)
    out[head] = _put(out[head], rest, value, add_key)
    return out


def _flow(x: Any) -> str:
    """JSON text, with Raw as written (valid JSON flow is valid YAML flow)."""
    if isinstance(x, Raw):
        return x.text
    if isinstance(x, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {_flow(v)}" for k, v in x.items()) + "}"
    if isinstance(x, list):
        return "[" + ", ".join(_flow(v) for v in x) + "]"
    return json.dumps(x)


def _text(data: dict, style: str) -> tuple[str, str]:
    if style == "json":
        return _flow(data), ".json"
    lines = []
    for k, v in data.items():
        if style == "block" and isinstance(v, list) and v:
            lines.append(f"{k}:")
            lines += [f"- {_flow(item)}" for item in v]
        else:
            lines.append(f"{k}: {_flow(v)}")
    return "\n".join(lines) + "\n", ".yaml"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(base=st.sampled_from(range(len(BASES))), data=st.data(), value=HOSTILE,
       style=st.sampled_from(["block", "flow", "json"]), strict=st.booleans(),
       add_key=st.sampled_from([None, None, "x", "replicas", "priority", "labels"]))
def test_any_case_text_loads_or_fails_with_a_case_error_in_bounded_time(
        tmp_path: Path, monkeypatch, base, data, value, style, strict, add_key):
    doc = BASES[base]
    path = data.draw(st.sampled_from(_paths(doc)[1:]))
    text, suffix = _text(_put(doc, path, value, add_key), style)
    f = tmp_path / f"case{suffix}"
    f.write_text(text, encoding="utf-8")
    with monkeypatch.context() as m:
        if strict:
            m.setattr(loader, "yaml_rs", None)
        start = time.process_time()
        try:
            res = read_file(f)
        except CaseError:
            pytest.fail("read_file raises no CaseError: it returns it")
        outcomes = []
        if res.error is not None:
            outcomes.append(str(res.error))
        for d in res.docs:
            v = check(d)  # loads and runs; a CaseError is its verdict's message
            outcomes.append(v.message or "ran")
        spent = time.process_time() - start
    assert outcomes, "a file holding a case yields a verdict"
    for o in outcomes:
        assert len(o) < 5000, o[:300]
    assert spent < 10, f"{spent:.1f} s at {path}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(base=st.sampled_from(range(len(BASES))), style=st.sampled_from(["block", "flow", "json"]),
       strict=st.booleans(), cut=st.tuples(st.floats(0, 1), st.integers(0, 40)),
       insert=st.text(alphabet=st.sampled_from(list("{}[],:-?&*!|>'\"#%@` \n\t\\0123456789eE.xn")) | st.characters(),
                      max_size=30))
def test_any_edit_of_a_case_text_loads_or_fails_with_a_case_error(tmp_path: Path, monkeypatch, base, style, strict,
                                                                  cut, insert):
    text, suffix = _text(BASES[base], style)
    at = int(cut[0] * len(text))
    text = text[:at] + insert + text[at + cut[1]:]
    f = tmp_path / f"case{suffix}"
    f.write_text(text, encoding="utf-8", errors="surrogatepass")
    with monkeypatch.context() as m:
        if strict:
            m.setattr(loader, "yaml_rs", None)
        start = time.process_time()
        res = read_file(f)
        outcomes = [str(res.error)] if res.error is not None else []
        outcomes += [check(d).message or "ran" for d in res.docs]
        spent = time.process_time() - start
    # (an edit may leave no case in the file: then nothing is kspread's to say)
    for o in outcomes:
        assert len(o) < 5000, o[:300]
    assert spent < 10
