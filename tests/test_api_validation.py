"""Objects are validated as the API server validates them, in the shorthand and in
``objects:`` manifests alike: each error names the file, the line of the field and
the field, in upstream's words."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kspread.format.loader import read_file
from kspread.workflow.runner import check
from tests import helpers

HEAD = """\
apiVersion: kspread/v1
kind: Case
name: c
version: "1.30"
"""


def verdict(tmp_path: Path, body: str):
    p = tmp_path / "case.yaml"
    p.write_text(HEAD + textwrap.dedent(body))
    res = read_file(p)
    assert res.error is None, res.error
    (doc,) = res.docs
    return check(doc)


def fails(tmp_path: Path, body: str, where: str, message: str) -> None:
    v = verdict(tmp_path, body)
    assert not v.passed
    assert f"case.yaml:{where}: {message}" in v.message, v.message


def passes(tmp_path: Path, body: str) -> None:
    v = verdict(tmp_path, body)
    assert v.passed, v.message


# ---- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["N1", "n_1", "-n1", "n1."])
def test_node_name_is_a_dns_subdomain(tmp_path, name):
    fails(tmp_path, f"""\
        nodes:
        - {{name: "{name}"}}
        pod: {{name: p}}
        expect: {{feasible: []}}
        """, "6", "nodes[0].name: a lowercase RFC 1123 subdomain must consist of")


def test_pod_names_namespaces_and_generated_replica_names(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        pods:
        - {name: Web, node: n1}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "7", "pods[0].name: a lowercase RFC 1123 subdomain")
    fails(tmp_path, """\
        nodes: [n1]
        pods:
        - {name: web, namespace: my.ns, node: n1}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "7", "pods[0].namespace: a lowercase RFC 1123 label must consist of")
    long = "a" * 252
    fails(tmp_path, f"""\
        nodes: [n1]
        pods:
        - {{name: {long}, node: n1, replicas: 10}}
        pod: {{name: p}}
        expect: {{feasible: [n1]}}
        """, "7", "pods[0].name: must be no more than 253 characters")


@pytest.mark.parametrize("field, body, where, message", [
    # Go's regexp `$` ends the text; Python's would also match before a final newline
    ("label value", 'pods:\n- {name: web, node: n1, labels: {app: "web\\n"}}', "7",
     "pods[0].labels.app: a label value must be 63 characters or less"),
    ("label key", 'pods:\n- {name: web, node: n1, labels: {"app\\n": web}}', "7",
     'pods[0].labels["app\\n"]: a label key\'s name part must be 63 characters or less'),
    ("pod name", 'pods:\n- {name: "web\\n", node: n1}', "7",
     "pods[0].name: a lowercase RFC 1123 subdomain"),
    ("namespace", 'pods:\n- {name: web, namespace: "ns\\n", node: n1}', "7",
     "pods[0].namespace: a lowercase RFC 1123 label must consist of"),
    ("service name", 'owners:\n- {kind: Service, name: "web\\n", selector: {app: web}}', "7",
     "owners[0].name: a DNS-1035 label must consist of"),
])
def test_a_trailing_newline_is_not_a_valid_name(tmp_path, field, body, where, message):
    fails(tmp_path, "nodes: [n1]\n" + body + "\npod: {name: p}\nexpect: {feasible: [n1]}\n", where, message)


def test_service_name_is_a_dns1035_label(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        owners:
        - {kind: Service, name: 1web, selector: {app: web}}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "7", "owners[0].name: a DNS-1035 label must consist of")


def test_priority_class_system_prefix_is_reserved(tmp_path):
    fails(tmp_path, """\
        priorityClasses:
        - {name: system-mine, value: 10}
        nodes: [n1]
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "6", "priorityClasses[0].name: priority class names with 'system-' prefix are reserved")


# ---- taints and tolerations --------------------------------------------------------------------------


def test_duplicate_taints(tmp_path):
    fails(tmp_path, """\
        nodes:
        - name: n1
          taints:
          - {key: a, value: x, effect: NoSchedule}
          - {key: a, value: y, effect: NoSchedule}
        pod: {name: p}
        expect: {feasible: []}
        """, "9", "nodes[0].taints[1]: Duplicate value: taints must be unique by key and effect pair")
    # the same key with another effect is a different taint
    passes(tmp_path, """\
        nodes:
        - name: n1
          taints:
          - {key: a, value: x, effect: NoSchedule}
          - {key: a, value: x, effect: PreferNoSchedule}
        pod: {name: p, tolerations: [{key: a, operator: Exists, effect: NoSchedule}]}
        expect: {feasible: [n1]}
        """)


def test_taint_key_and_value_syntax(tmp_path):
    fails(tmp_path, """\
        nodes:
        - {name: n1, taints: [{key: "a b", effect: NoSchedule}]}
        pod: {name: p}
        expect: {feasible: []}
        """, "6", "nodes[0].taints[0].key: a label key's name part")
    fails(tmp_path, """\
        nodes:
        - {name: n1, taints: [{key: a, value: "x y", effect: NoSchedule}]}
        pod: {name: p}
        expect: {feasible: []}
        """, "6", "nodes[0].taints[0].value: a label value must be")


@pytest.mark.parametrize("tol, field, message", [
    ("{key: a, operator: Exists, value: x}", "value", "value must be empty when `operator` is 'Exists'"),
    ("{operator: Equal, value: x}", "operator", "operator must be Exists when `key` is empty"),
    ("{key: a, value: x, effect: NoSchedule, tolerationSeconds: 5}", "effect",
     "effect must be 'NoExecute' when `tolerationSeconds` is set"),
    ("{key: a, value: 'x y'}", "value", "a label value must be"),
    ("{key: 'a b', operator: Exists}", "key", "a label key's name part"),
])
def test_toleration_rules(tmp_path, tol, field, message):
    fails(tmp_path, f"""\
        nodes: [n1]
        pod: {{name: p, tolerations: [{tol}]}}
        expect: {{feasible: [n1]}}
        """, "6", f"pod.tolerations[0].{field}: {message}")


# ---- containers ----------------------------------------------------------------------------------------


def test_duplicate_container_names_across_init_containers(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        pod:
          name: p
          containers: [{name: app}]
          initContainers: [{name: app}]
        expect: {feasible: [n1]}
        """, "9", "pod.initContainers[0].name: Duplicate value: container name 'app' is used twice")


def test_container_name_is_a_dns_label(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        pod: {name: p, containers: [{name: App}]}
        expect: {feasible: [n1]}
        """, "6", "pod.containers[0].name: a lowercase RFC 1123 label")


@pytest.mark.parametrize("port, field", [
    ("{containerPort: 80, hostPort: 65536}", "hostPort"),
    ("{containerPort: 80, hostPort: -1}", "hostPort"),
    ("{containerPort: 70000}", "containerPort"),
])
def test_port_ranges(tmp_path, port, field):
    fails(tmp_path, f"""\
        nodes: [n1]
        pod: {{name: p, containers: [{{name: c, ports: [{port}]}}]}}
        expect: {{feasible: [n1]}}
        """, "6", f"pod.containers[0].ports[0].{field}: must be between 1 and 65535, inclusive")


def test_duplicate_host_port_in_one_pod(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        pod:
          name: p
          containers:
          - {name: a, ports: [{containerPort: 80, hostPort: 8080}]}
          - {name: b, ports: [{containerPort: 81, hostPort: 8080}]}
        expect: {feasible: [n1]}
        """, "10", "pod.containers[1].ports[0].hostPort: Duplicate value: host port TCP//8080 is used twice")
    # another protocol is another port
    passes(tmp_path, """\
        nodes: [n1]
        pod:
          name: p
          containers:
          - {name: a, ports: [{containerPort: 80, hostPort: 8080}]}
          - {name: b, ports: [{containerPort: 81, hostPort: 8080, protocol: UDP}]}
        expect: {feasible: [n1]}
        """)


@pytest.mark.parametrize("name, message", [
    ("foo/bar/baz", "the prefix of a label key must be a DNS-1123 subdomain"),
    ("gpu", "must be a standard resource type or fully qualified"),
    ("pods", "must be a standard resource for containers"),
    ("example.com/", "a label key's name part"),
])
def test_malformed_resource_names(tmp_path, name, message):
    fails(tmp_path, f"""\
        nodes: [n1]
        pod: {{name: p, requests: {{"{name}": 1}}}}
        expect: {{feasible: [n1]}}
        """, "6", f"pod.requests.{name}: {message}")


def test_extended_resources_are_integers_and_not_overcommitted(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        pod: {name: p, requests: {example.com/gpu: 500m}}
        expect: {feasible: [n1]}
        """, "6", "pod.requests.example.com/gpu: must be an integer")
    fails(tmp_path, """\
        nodes:
        - {name: n1, allocatable: {cpu: 1, pods: 10, example.com/gpu: 1.5}}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "6", "nodes[0].allocatable.example.com/gpu: must be an integer")
    fails(tmp_path, """\
        nodes: [n1]
        pod:
          name: p
          containers:
          - name: c
            resources: {requests: {example.com/gpu: 1}, limits: {example.com/gpu: 2}}
        expect: {feasible: [n1]}
        """, "10", "pod.containers[0].resources.requests.example.com/gpu: must be equal to example.com/gpu limit of 2")


def test_limits_default_requests(tmp_path):
    """The API server defaults a container's missing request from its limit, so a pod
    giving only a GPU limit requests the GPU (shorthand and manifest alike)."""
    nodes = """\
nodes:
- {name: n1, allocatable: {cpu: 4, pods: 10, example.com/gpu: 1}}
- {name: n2, allocatable: {cpu: 4, pods: 10}}
"""
    expect = """\
expect:
  feasible: [n1]
  filter:
    n2: {code: Unschedulable, reason: "Insufficient example.com/gpu"}
"""
    passes(tmp_path, nodes + """\
pod:
  name: p
  containers:
  - name: c
    resources: {limits: {example.com/gpu: 1, cpu: 500m}}
""" + expect)
    passes(tmp_path, nodes + """\
objects:
- apiVersion: v1
  kind: Pod
  metadata: {name: x}
  spec:
    nodeName: n1
    containers:
    - name: c
      resources: {limits: {example.com/gpu: 1}}
pod: {name: p, requests: {example.com/gpu: 1}}
expect:
  feasible: []
""")


# ---- affinity, PDBs, int32 --------------------------------------------------------------------------------


def test_empty_topology_key_in_an_affinity_term(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        pod:
          name: p
          affinity:
            podAntiAffinity:
              preferredDuringSchedulingIgnoredDuringExecution:
              - weight: 1
                podAffinityTerm: {labelSelector: {matchLabels: {a: b}}, topologyKey: ""}
        expect: {feasible: [n1]}
        """, "12", "pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
                   ".podAffinityTerm.topologyKey: Required value: can not be empty")


def test_required_node_affinity_needs_a_term(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        pod:
          name: p
          affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}
        expect: {feasible: [n1]}
        """, "8", "pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
                  "Required value: must have at least one node selector term")


_TERM = "pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"


def _required_term(part: str, requirement: str) -> str:
    """A case whose pod requires one node selector term with one requirement (on line 13)."""
    return f"""\
        nodes: [n1]
        pod:
          name: p
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                - {part}:
                  - {requirement}
        expect: {{feasible: [n1]}}
        """


@pytest.mark.parametrize("requirement, field, message", [
    # ValidateNodeFieldSelectorRequirement
    ("{key: metadata.name, operator: Gt, values: ['5']}", "matchFields[0].operator", "not a valid selector operator"),
    ("{key: metadata.name, operator: Exists}", "matchFields[0].operator", "not a valid selector operator"),
    ("{key: metadata.name, operator: In, values: [n1, n2]}", "matchFields[0].values",
     "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"),
    ("{key: metadata.name, operator: NotIn, values: [N_1]}", "matchFields[0].values[0]",
     "a lowercase RFC 1123 subdomain"),
    ("{key: metadata.uid, operator: In, values: [n1]}", "matchFields[0].key", "not a valid field selector key"),
])
def test_node_affinity_match_fields(tmp_path, requirement, field, message):
    fails(tmp_path, _required_term("matchFields", requirement), "13", f"{_TERM}.{field}: {message}")


@pytest.mark.parametrize("value, message", [
    # what labels.NewRequirement cannot parse: Go's ParseInt, then a label value
    ("' 5'", "must be an integer when `operator` is 'Lt' or 'Gt'"),
    ("'1_000'", "must be an integer when `operator` is 'Lt' or 'Gt'"),
    ("'9223372036854775808'", "must be an integer when `operator` is 'Lt' or 'Gt'"),
    ("'-5'", "a label value must be"),
])
def test_node_affinity_gt_values_the_scheduler_cannot_parse(tmp_path, value, message):
    fails(tmp_path, _required_term("matchExpressions", f"{{key: gen, operator: Gt, values: [{value}]}}"), "13",
          f"{_TERM}.matchExpressions[0].values[0]: {message}")


def test_node_affinity_gt_at_the_int64_limit(tmp_path):
    passes(tmp_path, """\
        nodes:
        - {name: n1, labels: {gen: "9223372036854775807"}}
        - {name: n2, labels: {gen: "5"}}
        pod:
          name: p
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                - matchExpressions:
                  - {key: gen, operator: Gt, values: ["9223372036854775806"]}
        expect: {feasible: [n1]}
        """)


@pytest.mark.parametrize("amount, message", [
    ('"101%"', "must not be greater than 100%"),
    ('"5.5%"', "must be an integer or percentage (e.g '5%')"),
    ("-1", "must be greater than or equal to 0"),
])
def test_pdb_amounts(tmp_path, amount, message):
    fails(tmp_path, f"""\
        nodes: [n1]
        pdbs:
        - {{name: d, selector: {{matchLabels: {{app: a}}}}, maxUnavailable: {amount}}}
        pod: {{name: p}}
        expect: {{feasible: [n1]}}
        """, "7", f"pdbs[0].maxUnavailable: {message}")


@pytest.mark.parametrize("field, body", [
    ("pod.priority", "pod: {name: p, priority: 2147483648}"),
    ("pod.topologySpreadConstraints[0].maxSkew",
     ("pod: {name: p, topologySpreadConstraints: [{maxSkew: 2147483648, topologyKey: zone, "
      "whenUnsatisfiable: DoNotSchedule}]}")),
])
def test_int32_ranges(tmp_path, field, body):
    fails(tmp_path, f"""\
        nodes: [n1]
        {body}
        expect: {{feasible: [n1]}}
        """, "6", f"{field}: 2147483648 is greater than the maximum of 2147483647")


# ---- manifests: the same rules, at the manifest's line -----------------------------------------------------


def test_manifest_errors_point_into_the_manifest(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        objects:
        - apiVersion: v1
          kind: Pod
          metadata: {name: x}
          spec:
            nodeName: n1
            containers: [{name: c}]
            tolerations:
            - {key: a, operator: Exists, value: v}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "14", "objects[0].spec.tolerations[0].value: value must be empty when `operator` is 'Exists'")
    fails(tmp_path, """\
        objects:
        - apiVersion: v1
          kind: Node
          metadata: {name: n1}
          spec:
            taints:
            - {key: a, effect: NoSchedule}
            - {key: a, effect: NoSchedule}
        pod: {name: p}
        expect: {feasible: []}
        """, "12", "objects[0].spec.taints[1]: Duplicate value")
    fails(tmp_path, """\
        nodes: [n1]
        objects:
        - apiVersion: policy/v1
          kind: PodDisruptionBudget
          metadata: {name: d}
          spec: {minAvailable: 200%, selector: {matchLabels: {a: b}}}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "10", "objects[0].spec.minAvailable: must not be greater than 100%")
    fails(tmp_path, """\
        nodes: [n1]
        objects:
        - {apiVersion: apps/v1, kind: Pod, metadata: {name: x}, spec: {containers: [{name: c}]}}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "7", "objects[0].apiVersion: must be one of 'v1' (got 'apps/v1')")


# ---- amounts beyond int64 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("amount, message", [
    ("99999999999999999999", "quantity too large: the scheduler reads it as an int64"),
    ('"10000000000000000k"', "quantity too large: the scheduler reads it as an int64"),
    ('"1e999999999"', "quantity out of range (exponent 999999999)"),
])
def test_quantities_beyond_int64(tmp_path, amount, message):
    fails(tmp_path, f"""\
        nodes:
        - {{name: n1, allocatable: {{cpu: {amount}, pods: 10}}}}
        pod: {{name: p}}
        expect: {{feasible: [n1]}}
        """, "6", f"nodes[0].allocatable.cpu: {message}")


def test_score_weights_are_int32(tmp_path):
    fails(tmp_path, """\
        profile: {score: [{name: ImageLocality, weight: 2147483648}]}
        nodes: [n1]
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "5", "profile.score[0].weight: 2147483648 is greater than the maximum of 2147483647")


def test_extender_weight_wraps_as_int64(tmp_path):
    """Upstream multiplies an extender's score by its int64 weight in int64: a weight
    near the limit wraps around (10 * (2**63 - 1) * 10 is -100 in int64), and the
    totals (and explain) say what upstream computes."""
    passes(tmp_path, """\
        profile:
          score: [ImageLocality]
          extenders: [{name: e, weight: 9223372036854775807, prioritize: {n1: 10, n2: 5}}]
        nodes: [n1, n2]
        pod: {name: p}
        expect:
          totals: {n1: -100, n2: -50}
          selected: n2
        """)


# ---- requests and limits, priority classes, zones, controllers, extenders (issue 17) -------------------


@pytest.mark.parametrize("key", ["containers", "initContainers"])
def test_a_request_above_its_limit(tmp_path, key):
    fails(tmp_path, f"""\
        nodes: [n1]
        pod:
          name: p
          {key}:
          - name: c
            resources: {{requests: {{cpu: "2", memory: 1Gi}}, limits: {{cpu: 1500m, memory: 1Gi}}}}
        expect: {{feasible: [n1]}}
        """, "10", f"pod.{key}[0].resources.requests.cpu: must be less than or equal to cpu limit of 1500m (got '2')")


def test_a_request_equal_to_or_below_its_limit_passes(tmp_path):
    passes(tmp_path, """\
        nodes: [n1]
        pod:
          name: p
          containers:
          - name: c
            resources: {requests: {cpu: 1000m, memory: 1Gi}, limits: {cpu: "1", memory: 2Gi}}
        expect: {feasible: [n1]}
        """)


def test_a_hugepage_request_must_equal_its_limit(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        pod:
          name: p
          containers:
          - name: c
            resources: {requests: {memory: 1Gi, hugepages-2Mi: 2Mi}, limits: {memory: 1Gi, hugepages-2Mi: 4Mi}}
        expect: {feasible: [n1]}
        """, "10", "pod.containers[0].resources.requests.hugepages-2Mi: must be equal to hugepages-2Mi limit of 4Mi")


def test_a_manifest_request_above_its_limit_points_into_the_manifest(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        objects:
        - apiVersion: v1
          kind: Pod
          metadata: {name: x}
          spec:
            nodeName: n1
            containers:
            - {name: c, resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "13", "objects[0].spec.containers[0].resources.requests.memory: must be less than or equal to memory "
                   "limit of 1Gi (got '2Gi')")


def test_overhead_is_validated_as_container_limits(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        pod: {name: p, overhead: {pods: 1}}
        expect: {feasible: [n1]}
        """, "6", "pod.overhead.pods: must be a standard resource for containers (got 'pods')")


def test_one_global_default_priority_class(tmp_path):
    fails(tmp_path, """\
        priorityClasses:
        - {name: low, value: 1, globalDefault: true}
        - {name: mid, value: 5}
        - {name: high, value: 10, globalDefault: true}
        nodes: [n1]
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "8", "priorityClasses[2].globalDefault: PriorityClass low is already marked as default. Only one "
                  "default can exist (got 'high')")
    fails(tmp_path, """\
        priorityClasses:
        - {name: low, value: 1, globalDefault: true}
        objects:
        - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 10,
           globalDefault: true}
        nodes: [n1]
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "9", "objects[0].globalDefault: PriorityClass low is already marked as default.")


def test_a_zone_is_a_label_value(tmp_path):
    fails(tmp_path, """\
        zones: {'bad zone': [n1]}
        nodes: [n1]
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "5", 'zones["bad zone"]: a label value must be 63 characters or less, empty or begin and end with an '
                  "alphanumeric character, and contain only alphanumerics, '-', '_' or '.' (got 'bad zone')")


@pytest.mark.parametrize("kind, owner", [("Deployment", "ReplicaSet"), ("CronJob", "Job")])
def test_a_pod_controller_is_a_kind_that_creates_pods(tmp_path, kind, owner):
    fails(tmp_path, f"""\
        nodes: [n1]
        pods:
        - {{name: a, node: n1, controller: {{kind: {kind}, name: web}}}}
        pod: {{name: p}}
        expect: {{feasible: [n1]}}
        """, "7", "pods[0].controller.kind: must be one of 'ReplicationController', 'ReplicaSet', 'StatefulSet', "
                  f"'DaemonSet', 'Job' (a {kind}'s pods are owned by its {owner}: give that as the controller) "
                  f"(got '{kind}')")


@pytest.mark.parametrize("kind", ["DaemonSet", "Job", "ReplicaSet"])
def test_controllers_that_create_pods_pass(tmp_path, kind):
    passes(tmp_path, f"""\
        nodes: [n1]
        pods:
        - {{name: a, node: n1, controller: {{kind: {kind}, name: web}}}}
        pod: {{name: p}}
        expect: {{feasible: [n1]}}
        """)


def test_extenders_name_nodes_of_the_case(tmp_path):
    fails(tmp_path, """\
        profile:
          filter: [NodeResourcesFit]
          extenders: [{name: e, filter: [n1, n7]}]
        nodes: [n1, n2]
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "7", "profile.extenders[0].filter[1]: extender 'e' claims a filtered node 'n7' which is not found in "
                  "the input node list (the case has no such node)")
    fails(tmp_path, """\
        profile:
          filter: [NodeResourcesFit]
          extenders:
          - name: e
            prioritize: {n1: 3, n8: 5}
        nodes: [n1, n2]
        pod: {name: p}
        expect: {feasible: [n1, n2]}
        """, "9", "profile.extenders[0].prioritize.n8: extender 'e' prioritizes a node 'n8' which is not found in "
                  "the input node list (the case has no such node)")


def test_one_controller_among_owner_references(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        objects:
        - apiVersion: v1
          kind: Pod
          metadata:
            name: x
            ownerReferences:
            - {apiVersion: apps/v1, kind: ReplicaSet, name: a, controller: true}
            - {apiVersion: apps/v1, kind: StatefulSet, name: b, controller: true}
          spec: {nodeName: n1, containers: [{name: c}]}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "13", 'objects[0].metadata.ownerReferences[1].controller: Only one reference can have Controller set to '
                   'true. Found "true" in references for ReplicaSet/a and StatefulSet/b')


def test_a_manifest_controller_of_a_kind_that_does_not_create_pods(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        objects:
        - apiVersion: v1
          kind: Pod
          metadata:
            name: x
            ownerReferences:
            - {apiVersion: apps/v1, kind: Deployment, name: a, controller: true}
          spec: {nodeName: n1, containers: [{name: c}]}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "12", "objects[0].metadata.ownerReferences[0].kind: must be one of 'ReplicationController', 'ReplicaSet', "
                   "'StatefulSet', 'DaemonSet', 'Job' (a Deployment's pods are owned by its ReplicaSet: give that as "
                   "the controller) (got 'Deployment')")


def test_a_container_limit_above_the_pod_level_limit(tmp_path):
    v = helpers.verdict(tmp_path, """\
        name: c
        version: "1.34"
        nodes: [n1]
        pod:
          name: p
          resources: {requests: {cpu: "1"}, limits: {cpu: "2"}}
          containers:
          - {name: a, resources: {requests: {cpu: 500m}, limits: {cpu: "2"}}}
          - {name: b, resources: {requests: {cpu: 500m}, limits: {cpu: 2500m}}}
        expect: {feasible: [n1]}
        """)
    assert not v.passed
    assert v.message.endswith("case.yaml:11: pod.containers[1].resources.limits.cpu: must be less than or equal to "
                              "pod limits of 2 (got '2500m')"), v.message


def test_zones_and_a_node_zone_label_that_disagree(tmp_path):
    fails(tmp_path, """\
        zones: {a: [n1]}
        nodes:
        - {name: n1, labels: {topology.kubernetes.io/zone: b}}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "7", "nodes[0].labels.topology.kubernetes.io/zone: node 'n1' is in zone 'a' of `zones` but its labels "
                  "say topology.kubernetes.io/zone: b (got 'b')")
    passes(tmp_path, """\
        zones: {a: [n1]}
        nodes:
        - {name: n1, labels: {topology.kubernetes.io/zone: a, failure-domain.beta.kubernetes.io/zone: b}}
        pod: {name: p}
        expect: {feasible: [n1]}
        """)


def test_an_extender_that_does_nothing(tmp_path):
    fails(tmp_path, """\
        profile:
          filter: [NodeResourcesFit]
          extenders: [{name: e, weight: 2}]
        nodes: [n1]
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "7", "profile.extenders[0]: extender 'e' neither filters nor prioritizes: it would change nothing "
                  "(give `filter`, `prioritize` or both)")


def test_a_controller_needs_a_name(tmp_path):
    fails(tmp_path, """\
        nodes: [n1]
        pods:
        - {name: a, node: n1, controller: {kind: ReplicaSet, name: ""}}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "7", "pods[0].controller.name: name must not be empty (got '')")
    fails(tmp_path, """\
        nodes: [n1]
        objects:
        - apiVersion: v1
          kind: Pod
          metadata:
            name: x
            ownerReferences:
            - {apiVersion: apps/v1, kind: ReplicaSet, name: "", controller: true}
          spec: {nodeName: n1, containers: [{name: c}]}
        pod: {name: p}
        expect: {feasible: [n1]}
        """, "12", "objects[0].metadata.ownerReferences[0].name: name must not be empty (got '')")


@pytest.mark.parametrize("pod, field", [
    ("{name: p, requests: {hugepages-2Mi: 2Mi}}", "pod.requests"),
    ("{name: p, overhead: {hugepages-2Mi: 2Mi}}", "pod.overhead"),
    ("{name: p, containers: [{name: c, resources: {limits: {hugepages-2Mi: 2Mi}}}]}", "pod.containers[0].resources"),
])
def test_hugepages_need_cpu_or_memory_beside_them(tmp_path, pod, field):
    fails(tmp_path, f"""\
        nodes: [n1]
        pod: {pod}
        expect: {{feasible: [n1]}}
        """, "6", f"{field}: HugePages require cpu or memory")
    passes(tmp_path, f"""\
        nodes: [n1]
        pod: {pod.replace("{hugepages-2Mi: 2Mi}", "{hugepages-2Mi: 2Mi, memory: 1Gi}")}
        expect: {{feasible: []}}
        """)
