"""A mistyped key never passes quietly: every field key of every golden case, renamed
one at a time, makes that case fail with an error at the renamed key's line.

Keys whose mapping holds user data (labels, node names in expectations, resource
names, ...) are left alone: renaming one of them changes the data, not a field.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
import yaml

from kspread.format.loader import read_file
from kspread.format.schema import schema_path
from kspread.workflow.runner import check

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases"

# mappings whose keys are data, not fields
DATA_MAPS = {"labels", "matchLabels", "nodeSelector", "allocatable", "requests", "limits", "overhead", "zones",
             "filter", "rawScores", "scores", "totals", "prioritize", "selector", "featureGates", "placements",
             "candidates", "pluginConfig", "score", "variants"}


def _field_names() -> set[str]:
    names: set[str] = set()

    def walk(o: object) -> None:
        if isinstance(o, dict):
            names.update((o.get("properties") or {}).keys())
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(json.loads(schema_path().read_text()))
    return names


def _keys(text: str) -> list[tuple[int, int, str, str | None, int]]:
    """(line, column, key, parent key, document index) of every mapping key."""
    out = []
    for di, node in enumerate(yaml.compose_all(text)):
        def walk(n, parent):
            if isinstance(n, yaml.MappingNode):
                for k, v in n.value:
                    out.append((k.start_mark.line, k.start_mark.column, k.value, parent, di))  # noqa: B023 - walked at once
                    walk(v, k.value)
            elif isinstance(n, yaml.SequenceNode):
                for v in n.value:
                    walk(v, parent)
        walk(node, None)
    return out


def _mutations() -> list[tuple[Path, int, int, str, int]]:
    fields = _field_names()
    rng = random.Random(2026)
    out = []
    for f in sorted(CASES.rglob("*.yaml")):
        if f.name.endswith(".config.yaml"):
            continue
        text = f.read_text()
        if "error:" in text:
            continue  # expected-error cases accept any error that mentions their text
        keys = [k for k in _keys(text) if k[2] in fields and k[3] not in DATA_MAPS]
        for line, col, key, _parent, di in rng.sample(keys, min(3, len(keys))):
            out.append((f, line, col, key, di))
    return out


MUTATIONS = _mutations()


def test_the_sweep_covers_the_golden_cases():
    assert len({m[0] for m in MUTATIONS}) >= 20
    assert len(MUTATIONS) >= 60


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: f"{m[0].relative_to(CASES)}:{m[1] + 1}:{m[3]}")
def test_a_renamed_key_fails_at_its_line(tmp_path, mutation):
    src, line, col, key, di = mutation
    lines = src.read_text().split("\n")
    assert lines[line][col:col + len(key)] == key
    lines[line] = lines[line][:col] + key + "x" + lines[line][col + len(key):]
    for cfg in src.parent.glob("*.config.yaml"):
        shutil.copy(cfg, tmp_path / cfg.name)
    p = tmp_path / src.name
    p.write_text("\n".join(lines))
    res = read_file(p)
    messages = [str(res.error)] if res.error is not None else []
    messages += [v.message for d in res.docs if d.index == di for v in [check(d)] if not v.passed]
    assert messages, f"renaming {key!r} at line {line + 1} passed quietly"
    assert any(f"{src.name}:{line + 1}:" in m for m in messages), messages


def test_a_misspelt_kind_is_named(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("apiVersion: kspread/v1\nname: c\nkindd: Case\nnodes: [n1]\npod: {name: p}\n"
                 "expect: {feasible: [n1]}\n")
    (doc,) = read_file(p).docs
    v = check(doc)
    assert not v.passed
    assert "c.yaml:3: kindd: missing required field 'kind' (kind: Case); unknown field 'kindd'" in v.message


def test_a_misspelt_key_in_a_status_is_named_not_the_whole_status(tmp_path):
    """expect.filter values are a code or {code, reason}: a typo inside the mapping is
    reported as that field, at its line, not as "must be one of" the codes."""
    p = tmp_path / "c.yaml"
    p.write_text("apiVersion: kspread/v1\nkind: Case\nname: c\nversion: '1.30'\nnodes: [n1]\npod: {name: p}\n"
                 "expect:\n  filter:\n    n1:\n      code: Success\n      reasn: x\n")
    (doc,) = read_file(p).docs
    v = check(doc)
    assert "c.yaml:11: expect.filter.n1.reasn: unknown field 'reasn' (allowed: code, reason)" in v.message


DID_YOU_MEAN = "apiVersion: kspread/v1\nkind: Case\nname: c\nversion: '1.24'\n{extra}nodes: [n1]\npod: {pod}\n" \
               "expect: {{feasible: [n1]}}\n"


@pytest.mark.parametrize(("extra", "pod", "message"), [
    ("", "{name: p, prority: 10}",
     ("c.yaml:6: pod.prority: unknown field 'prority' (allowed: affinity, claims, containers, controller, devices, "
     "initContainers, labels, name, namespace, node, nodeSelector, nominatedNode, overhead, preemptionPolicy, priority, "
     "priorityClassName, replicas, requests, resourceClaims, resources, schedulingGates, schedulingGroup, startTime, status, terminating, "
     "tolerations, "
     "topologySpreadConstraints, volumes, workloadRef) (did you mean 'priority'?)")),
    ("", "{name: p, Labels: {a: b}}", "topologySpreadConstraints, volumes, workloadRef) (did you mean 'labels'?)\n"),
    ("profile: {score: [SelectorSpreed]}\n", "{name: p}",
     ("c.yaml:5: profile.score[0]: unknown plugin 'SelectorSpreed' (not an in-tree kube-scheduler plugin) "
     "(did you mean 'SelectorSpread'?)")),
    ("profile: {filter: [nodeaffinity]}\n", "{name: p}",
     "unknown plugin 'nodeaffinity' (not an in-tree kube-scheduler plugin) (did you mean 'NodeAffinity'?)"),
    ("profile: {score: [Zzz]}\n", "{name: p}",
     ("c.yaml:5: profile.score[0]: unknown plugin 'Zzz' (not an in-tree kube-scheduler plugin; an out-of-tree "
      "plugin is declared at profile.outOfTree)\n")),
    ("profile: {score: [PodTopologySpread], pluginConfig: {PodTopologySpred: {defaultingType: List}}}\n", "{name: p}",
     ("c.yaml:5: profile.pluginConfig.PodTopologySpred: pluginConfig for 'PodTopologySpred', which the profile does "
      "not enable (did you mean 'PodTopologySpread'?)")),
    ("featureGates: {MinDomainsInPodTopologySpred: true}\n", "{name: p}",
     "(did you mean 'MinDomainsInPodTopologySpread'?)"),
    ("", ("{name: p, affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
         "[{topologyKey: a, labelSelector: {matchLabel: {a: b}}}]}}}"),
     ("labelSelector.matchLabel: unknown field 'matchLabel' (allowed: matchExpressions, matchLabels) "
     "(did you mean 'matchLabels'?)")),
])
def test_a_mistyped_name_suggests_the_close_one(tmp_path, extra, pod, message):
    p = tmp_path / "c.yaml"
    p.write_text(DID_YOU_MEAN.format(extra=extra, pod=pod))
    (doc,) = read_file(p).docs
    v = check(doc)
    assert not v.passed
    assert message in v.message + "\n", v.message
    if message.startswith("c.yaml:"):
        assert v.message.endswith(message.rstrip("\n")), v.message


def test_a_mistyped_plugin_of_a_configuration_file_suggests_the_close_one(tmp_path):
    (tmp_path / "sched.yaml").write_text("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n"
                                         "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeAfinity}]\n")
    p = tmp_path / "c.yaml"
    p.write_text(DID_YOU_MEAN.format(extra="profile: {config: sched.yaml}\n", pod="{name: p}"))
    (doc,) = read_file(p).docs
    v = check(doc)
    assert v.message.endswith("sched.yaml:6: profiles[0].plugins.score.enabled[0]: plugin 'NodeAfinity' does not "
                              "exist (not an in-tree kube-scheduler plugin) (did you mean 'NodeAffinity'?)"), v.message


@pytest.mark.parametrize("where,typo", [
    ("ephemeral", "ephemeral: {volumeClaimTemplat: {spec: {accessModes: [ReadWriteOnce]}}}"),
    ("volumeClaimTemplate", "ephemeral: {volumeClaimTemplate: {specs: {accessModes: [ReadWriteOnce]}}}"),
    ("PersistentVolumeClaimSpec", "ephemeral: {volumeClaimTemplate: {spec: {storageClasName: local}}}"),
    ("resources", "ephemeral: {volumeClaimTemplate: {spec: {resources: {request: {storage: 1Gi}}}}}"),
])
def test_a_mistyped_key_in_a_pods_ephemeral_volume_is_an_error(where, typo):
    """A generic ephemeral volume's keys are checked at each level (a renamed `spec` used to
    pass as a template without a spec: a claim of no class and no size)."""
    from kspread.errors import CaseError
    from kspread.format.case import build_case

    doc = yaml.safe_load(f"""
apiVersion: kspread/v1
kind: Case
name: t
version: "1.35"
nodes: [{{name: n1}}]
pod: {{name: p, volumes: [{{name: v, {typo}}}]}}
expect: {{selected: n1}}
""")
    with pytest.raises(CaseError, match=f"unknown field .* in {where} "):
        build_case(doc, "t")


def test_a_mistyped_key_in_a_local_volume_or_a_workloads_controller_ref_is_an_error(tmp_path):
    """Fields kspread does not read but the API checks: a PersistentVolume's local source
    (path required) and a 1.36 Workload's controllerRef."""
    import re

    for name, old, new, field in (
            ("gangs/gang-pods-with-claims-to-bind.yaml", "local: {path: /d}", "local: {pathx: /d}", "local.pathx"),
            ("gangs/pod-groups-136.yaml", "controllerRef: {apiGroup: apps", "controllerRef: {apiGroupx: apps",
             "controllerRef.apiGroupx")):
        text = (CASES / name).read_text()
        assert old in text
        p = tmp_path / Path(name).name
        p.write_text(text.replace(old, new, 1))
        line = text[:text.index(old)].count("\n") + 1
        res = read_file(p)
        messages = [str(res.error)] if res.error is not None else []
        messages += [v.message for d in res.docs for v in [check(d)] if not v.passed]
        assert any(re.search(rf"{p.name}:{line}:.*{re.escape(field)}: unknown field", m) for m in messages), messages
