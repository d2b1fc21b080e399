"""The API server's kubernetes.io/metadata.name label on every Namespace
(NamespaceDefaultLabelName): what the engine, the backend input and the import make of it.
The scheduling side is in cases/filters/interpodaffinity.yaml (ipa-namespace-name-label*)."""
from __future__ import annotations

import yaml

from kspread.format import importer
from kspread.format.loader import load_case, read_file
from kspread.workflow.backend import backend_input
from tests.helpers import write_case

CASE = """\
name: c
version: "{version}"
{gates}
nodes: [n1]
namespaces:
- {{name: team-b, labels: {{team: b, kubernetes.io/metadata.name: other}}}}
pods:
- {{name: w1, namespace: team-a, node: n1}}
pod: {{name: p, namespace: shop}}
expect: {{feasible: [n1]}}
"""


def _load(tmp_path, version: str, gates: str = ""):
    res = read_file(write_case(tmp_path, CASE.format(version=version, gates=gates)))
    assert res.error is None, res.error
    return load_case(res.docs[0])


def test_every_namespace_has_its_name_label(tmp_path):
    case = _load(tmp_path, "1.35")
    cl = case.cluster
    assert dict(cl.namespace_labels("team-b")) == {"team": "b", "kubernetes.io/metadata.name": "team-b"}
    assert dict(cl.namespace_labels("team-a")) == {"kubernetes.io/metadata.name": "team-a"}
    # the backend's fake API server neither canonicalizes nor creates the namespaces pods use
    got = {ns["metadata"]["name"]: ns["metadata"]["labels"] for ns in backend_input(case)["namespaces"]}
    assert got == {"team-b": {"team": "b", "kubernetes.io/metadata.name": "team-b"},
                   "team-a": {"kubernetes.io/metadata.name": "team-a"},
                   "shop": {"kubernetes.io/metadata.name": "shop"}}


def test_before_the_gate_or_with_it_off_a_namespace_has_its_own_labels(tmp_path):
    for version, gates in (("1.20", ""), ("1.21", "featureGates: {NamespaceDefaultLabelName: false}")):
        cl = _load(tmp_path, version, gates).cluster
        assert dict(cl.namespace_labels("team-b")) == {"team": "b", "kubernetes.io/metadata.name": "other"}
        assert dict(cl.namespace_labels("team-a")) == {}
    assert dict(_load(tmp_path, "1.21").cluster.namespace_labels("team-a")) == {"kubernetes.io/metadata.name": "team-a"}


def _pod(name: str, ns_selector: dict) -> dict:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "namespaceSelector": ns_selector,
            "topologyKey": "kubernetes.io/hostname"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c"}],
                     "affinity": {"podAntiAffinity": {
                         "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": term}],
                         "requiredDuringSchedulingIgnoredDuringExecution": [term]}}},
            "status": {"phase": "Running"}}


def _dump(*items) -> str:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"pods": "110"}}}
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node, *items]})


def test_import_warns_when_namespaces_selected_by_label_are_not_in_the_dump(tmp_path):
    p = tmp_path / "dump.yaml"

    def warnings_for(text: str) -> list[str]:
        p.write_text(text, encoding="utf-8")
        out: list[str] = []
        importer.import_snapshot(str(p), warn=out.append)
        return out

    by_team = _pod("a", {"matchLabels": {"team": "a"}})
    assert warnings_for(_dump(by_team)) == [
        "the dump has no Namespaces, and 2 pod affinity term(s) select namespaces by their labels: such a "
        "selector matches no namespace but by kubernetes.io/metadata.name, which may differ from the cluster; "
        "import a dump that has them: " + importer._KUBECTL]
    assert "namespaces" in importer._KUBECTL.split()[2].split(",")
    # by name only, or every namespace: nothing the dump lacks
    assert warnings_for(_dump(_pod("b", {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["x"]}]}), _pod("c", {}))) == []
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "labels": {"team": "a"}}}
    assert warnings_for(_dump(by_team, ns)) == []
