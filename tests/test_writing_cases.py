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
