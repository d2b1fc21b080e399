"""Writing cases: `schedule` entries with `replicas`, Deployments in `objects`."""

from __future__ import annotations

from kspread.format.loader import load_case, read_file
from tests.helpers import verdict, write_case

ROLLOUT = """
name: rollout
version: "1.30"
profile: {filter: [PodTopologySpread], score: [PodTopologySpread]}
zones: {a: [n1, n2], b: [n3]}
schedule:
- name: web
  replicas: 3
  labels: {app: web}
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {matchLabels: {app: web}}}
- {name: late, priority: 10}
expect:
  placements: {web-0: n1, web-1: n3, web-2: n1, late: n1}
"""


def test_a_schedule_entry_with_replicas_is_that_many_incoming_pods_in_order(tmp_path):
    (doc,) = read_file(write_case(tmp_path, ROLLOUT)).docs
    case = load_case(doc)
    assert [(p.name, p.labels, p.priority) for p in case.incoming] == [
        ("web-0", {"app": "web"}, 0), ("web-1", {"app": "web"}, 0), ("web-2", {"app": "web"}, 0), ("late", {}, 10)]
    # each replica's placement spreads the next: zone a, zone b, then zone a again; `late` goes
    # first in queue order (priority 10) and takes n1, the first node
    v = verdict(tmp_path, ROLLOUT)
    assert v.passed, v.message
    v = verdict(tmp_path, ROLLOUT.replace("web-1: n3", "web-1: n2"))
    assert not v.passed and "web-1" in v.message


def test_a_schedule_entry_may_not_have_node_and_its_replicas_are_named_once(tmp_path):
    v = verdict(tmp_path, ROLLOUT.replace("  replicas: 3\n", "  replicas: 3\n  node: n1\n"))
    assert v.message.endswith("case.yaml:10: schedule[0].node: an incoming pod may not have `node` (it is scheduled)")
    v = verdict(tmp_path, ROLLOUT.replace("- {name: late, priority: 10}", "- {name: web-2}"))
    assert v.message.endswith("case.yaml:14: schedule[1].name: pod 'web-2' is defined twice"), v.message
    # the single incoming pod is one pod
    v = verdict(tmp_path, "name: one\nnodes: [n1]\npod: {name: p, replicas: 2}\nexpect: {selected: n1}\n")
    assert v.message.endswith("case.yaml:5: pod.replicas: the incoming pod may not have `node` or `replicas`")


DEPLOYMENT = """
name: dep
version: "1.24"
profile: {score: [SelectorSpread]}
nodes: [n1, n2]
objects:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: default}
  spec:
    replicas: 3
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec: {containers: [{name: c, image: nginx}]}
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-7d4b9c8f5-abcde
    labels: {app: web, pod-template-hash: 7d4b9c8f5}
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-7d4b9c8f5, controller: true, uid: u1}]
  spec: {nodeName: n1, containers: [{name: c, image: nginx}]}
pod:
  name: new
  labels: {app: web, pod-template-hash: 7d4b9c8f5}
  controller: {kind: ReplicaSet, name: web-7d4b9c8f5}
expect:
  scores: {SelectorSpread: {n1: 0, n2: 100}}
  selected: n2
"""


def _replica_sets(tmp_path, body):
    (doc,) = read_file(write_case(tmp_path, body)).docs
    return [(rs.name, rs.namespace, rs.selector.match_labels) for rs in load_case(doc).cluster.replica_sets]


def test_a_deployment_yields_the_replica_set_its_pods_name(tmp_path):
    assert _replica_sets(tmp_path, DEPLOYMENT) == [
        ("web-7d4b9c8f5", "default", (("app", "web"), ("pod-template-hash", "7d4b9c8f5")))]
    v = verdict(tmp_path, DEPLOYMENT)
    assert v.passed, v.message
    # without the Deployment the pods' ReplicaSet does not exist: SelectorSpread finds no owner
    start, end = DEPLOYMENT.index("- apiVersion: apps/v1"), DEPLOYMENT.index("- apiVersion: v1\n")
    v = verdict(tmp_path, DEPLOYMENT[:start] + DEPLOYMENT[end:])
    assert not v.passed and "SelectorSpread n1  0         100" in v.message, v.message


def test_a_deployment_without_pods_gets_kspreads_own_hash(tmp_path):
    # no pod names a ReplicaSet of the Deployment: not the existing ones, nor the pod to schedule
    start, end = DEPLOYMENT.index("- apiVersion: v1\n"), DEPLOYMENT.index("pod:\n")
    alone = (DEPLOYMENT[:start] + DEPLOYMENT[end:]).replace(
        "  labels: {app: web, pod-template-hash: 7d4b9c8f5}\n  controller: {kind: ReplicaSet, name: web-7d4b9c8f5}\n",
        "  labels: {app: web}\n")
    assert _replica_sets(tmp_path, alone) == [
        ("web-5776f98846", "default", (("app", "web"), ("pod-template-hash", "5776f98846")))]
    # status.collisionCount is hashed with the template, as the controller does
    bumped = alone.replace("- apiVersion: v1\n", "").replace(
        "      spec: {containers: [{name: c, image: nginx}]}\n",
        "      spec: {containers: [{name: c, image: nginx}]}\n  status: {collisionCount: 1}\n")
    (name, _, _), = _replica_sets(tmp_path, bumped)
    assert name.startswith("web-") and name != "web-5776f98846"


def test_the_pods_to_schedule_name_their_deployments_replica_set(tmp_path):
    """A rollout's pods (the incoming `pod`, `schedule` entries) controlled by ReplicaSet
    web-<h> and labelled pod-template-hash: <h> make that ReplicaSet exist, as the deployment
    controller made it before them: default spreading then finds their siblings. (It was made
    only from existing pods: a schedule's replicas named a ReplicaSet the case lacked, and
    spreading was silently off.)"""
    start, end = DEPLOYMENT.index("- apiVersion: v1\n"), DEPLOYMENT.index("pod:\n")
    no_pods = DEPLOYMENT[:start] + DEPLOYMENT[end:]
    assert _replica_sets(tmp_path, no_pods) == [
        ("web-7d4b9c8f5", "default", (("app", "web"), ("pod-template-hash", "7d4b9c8f5")))]
    rollout = no_pods[:no_pods.index("pod:\n")] + (
        "schedule:\n- {name: web, replicas: 2, labels: {app: web, pod-template-hash: abc12},"
        " controller: {kind: ReplicaSet, name: web-abc12}}\nexpect: {placements: {web-0: [n1, n2], web-1: [n1, n2]}}\n")
    rollout = rollout.replace("profile: {score: [SelectorSpread]}\n", "")
    assert _replica_sets(tmp_path, rollout) == [
        ("web-abc12", "default", (("app", "web"), ("pod-template-hash", "abc12")))]
    # the second replica spreads away from the first (SelectorSpread, 1.24's default profile)
    from kspread.workflow.runner import run_loaded

    (doc,) = read_file(write_case(tmp_path, rollout)).docs
    placed = run_loaded(load_case(doc)).actual["placements"]
    assert placed["web-0"] != placed["web-1"], placed


def test_a_deployment_whose_replica_set_is_listed_adds_nothing(tmp_path):
    rs = ("- apiVersion: apps/v1\n  kind: ReplicaSet\n  metadata:\n    name: web-7d4b9c8f5\n"
          "    ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, controller: true, uid: u0}]\n"
          "  spec: {selector: {matchLabels: {app: web, pod-template-hash: 7d4b9c8f5}}}\n")
    body = DEPLOYMENT.replace("- apiVersion: v1\n", rs + "- apiVersion: v1\n", 1)
    assert _replica_sets(tmp_path, body) == [
        ("web-7d4b9c8f5", "default", (("app", "web"), ("pod-template-hash", "7d4b9c8f5")))]
    assert verdict(tmp_path, body).passed


def test_a_deployment_is_validated_as_a_manifest(tmp_path):
    v = verdict(tmp_path, DEPLOYMENT.replace("    replicas: 3\n", "    replicas: 3\n    replica: 3\n"))
    assert "case.yaml:13: objects[0].spec.replica: unknown field 'replica'" in v.message, v.message
    assert "(did you mean 'replicas'?)" in v.message
    v = verdict(tmp_path, DEPLOYMENT.replace("metadata: {name: web,", "metadata: {name: Web_1,"))
    assert "case.yaml:10: objects[0].metadata.name: a lowercase RFC 1123 subdomain must consist of " in v.message
    assert v.message.endswith("(got 'Web_1')"), v.message
