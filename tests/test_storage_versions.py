"""Issue 27, storage in 1.23-1.26: what the volume plugins of those releases do differently
from 1.27 (each read from the release's vendored source), and the per-cloud limit plugins'
own counting (non_csi.go)."""

from __future__ import annotations

import pytest
import yaml

from kspread.engine.framework.status import Code
from kspread.engine.scheduler import run_case
from kspread.format.case import build_case

RWOP_CONFLICT = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"


def _statuses(doc: str) -> dict[str, tuple[Code, str]]:
    case = build_case(yaml.safe_load(doc), "t")
    _, results, _ = run_case(case, keep_all=True)
    r = results[-1]
    if r.pre_filter_status is not None and not r.pre_filter_status.is_success():
        st = r.pre_filter_status
        return {"*": (st.code, st.message)}
    return {n: (st.code, st.message) for n, st in r.statuses.items()}


RWOP = """
version: "{v}"
featureGates: {{ReadWriteOncePod: {gate}}}
profile: {{filter: [VolumeRestrictions]}}
nodes: [n1, n2]
objects:
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: c}}, spec: {{accessModes: [ReadWriteOncePod]}}}}
pods:
- {{name: a, node: n1, volumes: [{{name: d, persistentVolumeClaim: {{claimName: c}}}}]}}
pod: {{name: p, volumes: [{vols}]}}
"""
USE_C = "{name: d, persistentVolumeClaim: {claimName: c}}"
MISSING = "{name: m, persistentVolumeClaim: {claimName: gone}}"


def _first(st: dict) -> tuple[Code, str]:
    v = st.get("*") or st["n1"]
    return v[0], v[1]


@pytest.mark.parametrize("version, gate, vols, want", [
    # to 1.26 the check is PreFilter's: every node, UnschedulableAndUnresolvable
    ("1.26", "true", USE_C, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, RWOP_CONFLICT)),
    ("1.23", "true", USE_C, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, RWOP_CONFLICT)),
    ("1.26", "false", USE_C, (Code.SUCCESS, "")),
    # volumes in order: the conflict before a later missing claim, the missing one before it
    ("1.26", "true", f"{USE_C}, {MISSING}", (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, RWOP_CONFLICT)),
    ("1.26", "true", f"{MISSING}, {USE_C}",
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "gone" not found')),
    # from 1.27 Filter's, Unschedulable (preemption can evict the pod using the claim)
    ("1.27", "true", USE_C, (Code.UNSCHEDULABLE, RWOP_CONFLICT)),
])
def test_readwriteoncepod_conflict_by_version(version, gate, vols, want):
    st = _statuses(RWOP.format(v=version, gate=gate, vols=vols))
    assert _first(st) == want
    if version == "1.26" and want[0] != Code.SUCCESS:
        assert "*" in st  # a PreFilter rejection: no node was filtered


ZONE = """
version: "{v}"
profile: {{filter: [VolumeZone]}}
nodes:
- {{name: plain}}
- {{name: z, labels: {{topology.kubernetes.io/zone: a}}}}
objects:
- {{kind: PersistentVolume, apiVersion: v1, metadata: {{name: pv, labels: {{failure-domain.beta.kubernetes.io/zone: a}}}},
   spec: {{capacity: {{storage: 1Gi}}, claimRef: {{namespace: default, name: c}}}}}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: c, annotations: {{pv.kubernetes.io/bind-completed: "yes"}}}},
   spec: {{volumeName: pv}}}}
pod: {{name: p, volumes: [{vols}]}}
"""


def test_volumezone_to_1_26_filters_per_node_without_prefilter():
    missing = "{name: m, persistentVolumeClaim: {claimName: gone}}"
    # 1.26: a node without zone labels passes before any lookup
    st = _statuses(ZONE.format(v="1.26", vols=missing))
    assert st == {"plain": (Code.SUCCESS, ""),
                  "z": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "gone" not found')}
    # 1.27: PreFilter rejects the pod
    assert _statuses(ZONE.format(v="1.27", vols=missing)) == {
        "*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "gone" not found')}
    # a beta-key volume label against a node with only the GA label: no translation before 1.29
    bound = "{name: d, persistentVolumeClaim: {claimName: c}}"
    st = _statuses(ZONE.format(v="1.26", vols=bound))
    assert st["z"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had no available volume zone")
    assert st["plain"] == (Code.SUCCESS, "")
    # the earlier volume's conflict comes before a later volume's lookup error
    st = _statuses(ZONE.format(v="1.26", vols=f"{bound}, {missing}"))
    assert st["z"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had no available volume zone")
    assert _statuses(ZONE.format(v="1.29", vols=bound))["z"] == (Code.SUCCESS, "")


INLINE = """
version: "{v}"
profile: {{filter: [NodeVolumeLimits]}}
nodes: [n1]
objects:
- {{kind: CSINode, apiVersion: storage.k8s.io/v1, metadata: {{name: n1{ann}}},
   spec: {{drivers: [{{name: ebs.csi.aws.com, nodeID: i, allocatable: {{count: 1}}}}]}}}}
pods:
- {{name: a, node: n1, volumes: [{{name: d, awsElasticBlockStore: {{volumeID: one}}}}]}}
pod: {{name: p, volumes: [{{name: d, awsElasticBlockStore: {{volumeID: two}}}}]}}
"""
EBS_MIGRATED = ", annotations: {storage.alpha.kubernetes.io/migrated-plugins: kubernetes.io/aws-ebs}"


@pytest.mark.parametrize("version, ann, code", [
    ("1.24", EBS_MIGRATED, Code.SUCCESS),  # inline volumes are not NodeVolumeLimits' before 1.25
    ("1.25", EBS_MIGRATED, Code.UNSCHEDULABLE),
    ("1.26", "", Code.SUCCESS),  # EBS needs the CSINode's annotation to 1.26
    ("1.27", "", Code.UNSCHEDULABLE),
])
def test_nodevolumelimits_inline_and_ebs_migration_by_version(version, ann, code):
    assert _statuses(INLINE.format(v=version, ann=ann))["n1"][0] == code


CLOUD = """
version: "{v}"
profile: {{filter: [{plugin}]}}
nodes:
- {{name: n1{node}}}
objects:
- {{kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {{name: gp}}, provisioner: kubernetes.io/aws-ebs}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: u}}, spec: {{storageClassName: gp}}}}
{csinode}
pods:
- {{name: a, node: n1, volumes: {existing}}}
pod: {{name: p, volumes: [{{name: d, awsElasticBlockStore: {{volumeID: new}}}}]}}
"""


def _ebs(n: int) -> str:
    return "[" + ", ".join(f"{{name: d{i}, awsElasticBlockStore: {{volumeID: v{i}}}}}" for i in range(n)) + "]"


@pytest.mark.parametrize("node, existing, code", [
    ("", _ebs(38), Code.SUCCESS),  # 38 + 1 <= 39, the default
    ("", _ebs(39), Code.UNSCHEDULABLE),
    (", labels: {node.kubernetes.io/instance-type: m5.large}", _ebs(24), Code.SUCCESS),  # Nitro: 25
    (", labels: {node.kubernetes.io/instance-type: m5.large}", _ebs(25), Code.UNSCHEDULABLE),
    (", labels: {beta.kubernetes.io/instance-type: t3.small}", _ebs(25), Code.UNSCHEDULABLE),
    (", allocatable: {attachable-volumes-aws-ebs: '2'}", _ebs(1), Code.SUCCESS),
    (", allocatable: {attachable-volumes-aws-ebs: '2'}", _ebs(2), Code.UNSCHEDULABLE),
    # an unbound claim of a class with the in-tree provisioner counts as a volume
    (", allocatable: {attachable-volumes-aws-ebs: '2'}",
     "[{name: d0, awsElasticBlockStore: {volumeID: v0}}, {name: c, persistentVolumeClaim: {claimName: u}}]",
     Code.UNSCHEDULABLE),
    # the incoming pod's volume already attached counts once
    (", allocatable: {attachable-volumes-aws-ebs: '2'}",
     "[{name: d0, awsElasticBlockStore: {volumeID: v0}}, {name: d1, awsElasticBlockStore: {volumeID: new}}]",
     Code.SUCCESS),
])
def test_ebslimits_counts_in_tree_disks_where_not_migrated(node, existing, code):
    st = _statuses(CLOUD.format(v="1.26", plugin="EBSLimits", node=node, existing=existing, csinode=""))
    assert st["n1"] == (code, "node(s) exceed max volume count" if code == Code.UNSCHEDULABLE else "")


def test_ebslimits_defers_to_nodevolumelimits_where_migrated():
    csinode = ("- {kind: CSINode, apiVersion: storage.k8s.io/v1, metadata: {name: n1" + EBS_MIGRATED + "}, "
               "spec: {drivers: []}}")
    doc = CLOUD.format(v="1.26", plugin="EBSLimits", node=", allocatable: {attachable-volumes-aws-ebs: '1'}",
                       existing=_ebs(3), csinode=csinode)
    assert _statuses(doc)["n1"] == (Code.SUCCESS, "")
    # without the annotation (1.26) EBSLimits counts them itself
    doc = CLOUD.format(v="1.26", plugin="EBSLimits", node=", allocatable: {attachable-volumes-aws-ebs: '1'}",
                       existing=_ebs(3), csinode=csinode.replace(EBS_MIGRATED, ""))
    assert _statuses(doc)["n1"][0] == Code.UNSCHEDULABLE


@pytest.mark.parametrize("plugin, vol, limit", [
    ("GCEPDLimits", "gcePersistentDisk: {{pdName: d{i}}}", 16),
    ("AzureDiskLimits", "azureDisk: {{diskName: d{i}, diskURI: /u/d{i}}}", 16),
    ("CinderLimits", "cinder: {{volumeID: d{i}}}", 256),
])
def test_cloud_limit_defaults(plugin, vol, limit):
    def vols(n: int, start: int = 0) -> str:
        return "[" + ", ".join(f"{{name: v{i}, {vol.format(i=i)}}}" for i in range(start, start + n)) + "]"

    for n, code in ((limit - 1, Code.SUCCESS), (limit, Code.UNSCHEDULABLE)):
        doc = f"""
version: "1.25"
profile: {{filter: [{plugin}]}}
nodes: [n1]
pods:
- {{name: a, node: n1, volumes: {vols(n)}}}
pod: {{name: p, volumes: {vols(1, 1000)}}}
"""
        assert _statuses(doc)["n1"][0] == code, (plugin, n)


CAPACITY = """
version: "{v}"
featureGates: {gates}
profile: {{filter: [VolumeBinding]}}
nodes: [{{name: n1, labels: {{topology.kubernetes.io/zone: a}}}}]
objects:
- {{kind: CSIDriver, apiVersion: storage.k8s.io/v1, metadata: {{name: ebs.csi.aws.com}}, spec: {{storageCapacity: true}}}}
- {{kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {{name: fast}}, provisioner: ebs.csi.aws.com,
   volumeBindingMode: WaitForFirstConsumer}}
- {{kind: CSIStorageCapacity, apiVersion: storage.k8s.io/v1beta1, metadata: {{name: cap, namespace: kube-system}},
   storageClassName: fast, capacity: 1Gi, nodeTopology: {{matchLabels: {{topology.kubernetes.io/zone: a}}}}}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: c}},
   spec: {{storageClassName: fast, resources: {{requests: {{storage: 5Gi}}}}}}}}
pod: {{name: p, volumes: [{{name: d, persistentVolumeClaim: {{claimName: c}}}}]}}
"""


@pytest.mark.parametrize("version, gates, code", [
    ("1.23", "{}", Code.UNSCHEDULABLE_AND_UNRESOLVABLE),  # beta, on by default
    ("1.23", "{CSIStorageCapacity: false}", Code.SUCCESS),  # off: no capacity check
    ("1.26", "{}", Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
])
def test_csistoragecapacity_gate(version, gates, code):
    st = _statuses(CAPACITY.format(v=version, gates=gates))
    assert st["n1"][0] == code
    if code != Code.SUCCESS:
        assert st["n1"][1] == "node(s) did not have enough free storage"


def test_csistoragecapacity_gate_is_locked_from_1_24():
    from kspread.errors import CaseError
    with pytest.raises(CaseError, match="GA and locked to true"):
        build_case(yaml.safe_load(CAPACITY.format(v="1.24", gates="{CSIStorageCapacity: false}")), "t")


def test_volumebinding_before_1_27_has_no_prefilter_result():
    """1.27-1.28's PreFilterResult (bound local volumes' hostnames) is refused as not modelled;
    1.26 has none, so the same case runs."""
    from kspread.errors import CaseError
    doc = """
version: "{v}"
profile: {{filter: [VolumeBinding]}}
nodes: [n1, {{name: n2, labels: {{disk: x}}}}]
objects:
- {{kind: PersistentVolume, apiVersion: v1, metadata: {{name: pv}}, spec: {{capacity: {{storage: 1Gi}}, local: {{path: /d}},
   claimRef: {{namespace: default, name: c}}, nodeAffinity: {{required: {{nodeSelectorTerms: [
   {{matchExpressions: [{{key: kubernetes.io/hostname, operator: In, values: [n1]}}]}},
   {{matchExpressions: [{{key: disk, operator: In, values: [x]}}]}}]}}}}}}}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: c, annotations: {{pv.kubernetes.io/bind-completed: "yes"}}}},
   spec: {{volumeName: pv}}}}
pod: {{name: p, volumes: [{{name: d, persistentVolumeClaim: {{claimName: c}}}}]}}
"""
    assert _statuses(doc.format(v="1.26")) == {"n1": (Code.SUCCESS, ""), "n2": (Code.SUCCESS, "")}
    with pytest.raises(CaseError, match="GetEligibleNodes"):
        _statuses(doc.format(v="1.27"))


# ---- explain: the numbers behind the volume plugins' reasons -----------------------------

def _explained(doc: str) -> str:
    from kspread.workflow.explain import explain_compact
    from kspread.workflow.runner import explain_run
    case = build_case(yaml.safe_load(doc), "t")
    outcome, cycles = explain_run(case)
    return explain_compact(outcome.scheduler, cycles, width=1000)


LIMITS = """
apiVersion: kspread/v1
kind: Case
name: limits
version: "1.26"
profile: {filter: [EBSLimits, NodeVolumeLimits, VolumeBinding, VolumeZone]}
nodes:
- {name: n1, labels: {topology.kubernetes.io/zone: a},
   allocatable: {cpu: "4", memory: 8Gi, pods: "110", attachable-volumes-aws-ebs: "1"}}
- {name: n2, labels: {topology.kubernetes.io/zone: b}}
- {name: n3, labels: {topology.kubernetes.io/zone: a}}
objects:
- {kind: CSIDriver, apiVersion: storage.k8s.io/v1, metadata: {name: ebs.csi.aws.com}, spec: {storageCapacity: true}}
- {kind: CSINode, apiVersion: storage.k8s.io/v1, metadata: {name: n3},
   spec: {drivers: [{name: ebs.csi.aws.com, nodeID: i3, allocatable: {count: 1}}]}}
- {kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {name: fast}, provisioner: ebs.csi.aws.com,
   volumeBindingMode: WaitForFirstConsumer}
- {kind: CSIStorageCapacity, apiVersion: storage.k8s.io/v1, metadata: {name: cap-b, namespace: kube-system},
   storageClassName: fast, capacity: 1Gi, nodeTopology: {matchLabels: {topology.kubernetes.io/zone: b}}}
- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: data},
   spec: {storageClassName: fast, resources: {requests: {storage: 5Gi}}}}
- {kind: PersistentVolume, apiVersion: v1, metadata: {name: pv-x, labels: {topology.kubernetes.io/zone: a}},
   spec: {capacity: {storage: 1Gi}, csi: {driver: ebs.csi.aws.com, volumeHandle: x}, claimRef: {namespace: default, name: x}}}
- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: x, annotations: {pv.kubernetes.io/bind-completed: "yes"}},
   spec: {volumeName: pv-x}}
pods:
- {name: a, node: n1, volumes: [{name: d, awsElasticBlockStore: {volumeID: one}}]}
- {name: b, node: n3, volumes: [{name: d, persistentVolumeClaim: {claimName: x}}]}
pod: {name: p, volumes: [{name: d, persistentVolumeClaim: {claimName: data}}, {name: e, awsElasticBlockStore: {volumeID: two}},
  {name: f, persistentVolumeClaim: {claimName: x}}]}
expect: {feasible: []}
"""


def test_explain_shows_volume_counts_capacities_and_zones():
    out = _explained(LIMITS)
    assert ("n1    EBSLimits: Unschedulable: node(s) exceed max volume count (1 of 1 attached (awsElasticBlockStore; "
            "limit: the node's allocatable attachable-volumes-aws-ebs), the pod adds 1)") in out
    assert ("n2    VolumeBinding: UnschedulableAndUnresolvable: node(s) did not have enough free storage (claim "
            "default/data requests 5Gi: capacity of class fast in the node's topology: kube-system/cap-b 1Gi)") in out
    assert ("n3    NodeVolumeLimits: Unschedulable: node(s) exceed max volume count (1 of 1 attached "
            "(driver ebs.csi.aws.com), the pod adds 1)") in out
    assert "  n1: room for 1 more awsElasticBlockStore volume(s), 5Gi of class fast capacity in the node's topology" \
        in out
    assert "  n2: 5Gi of class fast capacity in the node's topology, a node with topology.kubernetes.io/zone in (a)" \
        in out


def test_explain_names_the_volumes_a_claim_could_not_bind_and_why():
    doc = """
apiVersion: kspread/v1
kind: Case
name: local
version: "1.23"
nodes:
- {name: n1, labels: {topology.kubernetes.io/zone: a}}
- {name: n2, labels: {topology.kubernetes.io/zone: b}}
objects:
- {kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {name: local}, provisioner: kubernetes.io/no-provisioner,
   volumeBindingMode: WaitForFirstConsumer}
- {kind: PersistentVolume, apiVersion: v1, metadata: {name: local-n1}, spec: {capacity: {storage: 5Gi}, storageClassName: local,
   accessModes: [ReadWriteOnce], local: {path: /d}, nodeAffinity: {required: {nodeSelectorTerms: [
   {matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]}}}}
- {kind: PersistentVolume, apiVersion: v1, metadata: {name: local-n2}, spec: {capacity: {storage: 50Gi}, storageClassName: local,
   accessModes: [ReadOnlyMany], local: {path: /d}, nodeAffinity: {required: {nodeSelectorTerms: [
   {matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n2]}]}]}}}}
- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: data}, spec: {storageClassName: local,
   accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}}
pod: {name: p, volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}
expect: {feasible: []}
"""
    out = _explained(doc)
    assert ("n1    VolumeBinding: UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes to "
            "bind (claim default/data (10Gi, class local): no volume of class local fits: local-n1 (5Gi, smaller than "
            "the request), local-n2 (node affinity not matching the node); the class provisions no volume "
            "(provisioner kubernetes.io/no-provisioner))") in out
    assert "local-n2 (access modes ReadOnlyMany)" in out
    assert "  n1: an available volume of class local for claim default/data that fits on the node" in out


def test_explain_names_the_conflicting_zone_and_disk():
    doc = """
apiVersion: kspread/v1
kind: Case
name: zone
version: "1.24"
profile: {filter: [VolumeRestrictions, VolumeZone]}
nodes:
- {name: n1, labels: {topology.kubernetes.io/zone: zb}}
- {name: n2, labels: {topology.kubernetes.io/region: r1}}
- {name: n3, labels: {topology.kubernetes.io/zone: za}}
objects:
- {kind: PersistentVolume, apiVersion: v1, metadata: {name: pd-1, labels: {topology.kubernetes.io/zone: za__zc}},
   spec: {capacity: {storage: 1Gi}, claimRef: {namespace: default, name: c}, gcePersistentDisk: {pdName: pd-1}}}
- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: c, annotations: {pv.kubernetes.io/bind-completed: "yes"}},
   spec: {volumeName: pd-1}}
pods:
- {name: a, node: n3, volumes: [{name: d, awsElasticBlockStore: {volumeID: vol-1}}]}
pod: {name: p, volumes: [{name: c, persistentVolumeClaim: {claimName: c}}, {name: d, awsElasticBlockStore: {volumeID: vol-1}}]}
expect: {feasible: []}
"""
    out = _explained(doc)
    assert ("n1    VolumeZone: UnschedulableAndUnresolvable: node(s) had no available volume zone (claim c: volume "
            "pd-1 is in topology.kubernetes.io/zone=za, zc; the node has topology.kubernetes.io/zone=zb)") in out
    assert ("n2    VolumeZone: UnschedulableAndUnresolvable: node(s) had no available volume zone (claim c: volume "
            "pd-1 is in topology.kubernetes.io/zone=za, zc; the node has no topology.kubernetes.io/zone label)") in out
    assert ("n3    VolumeRestrictions: Unschedulable: node(s) had no available disk (awsElasticBlockStore vol-1 is in "
            "use by pod a)") in out
    assert "  n3: pod a gone, or a node without it" in out


# ---- 1.21-1.22 -----------------------------------------------------------------------------

BOUND_MISSING_PV = """
version: "{v}"
featureGates: {gates}
profile: {{filter: [VolumeBinding]}}
nodes: [n1]
objects:
- {{kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {{name: wffc}}, provisioner: x.csi.io,
   volumeBindingMode: WaitForFirstConsumer}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: c, annotations: {{pv.kubernetes.io/bind-completed: "yes"}}}},
   spec: {{volumeName: gone}}}}
{extra}
pod: {{name: p, volumes: [{vols}]}}
"""
BOUND = "{name: d, persistentVolumeClaim: {claimName: c}}"
EPHEMERAL = "{name: e, ephemeral: {volumeClaimTemplate: {spec: {storageClassName: wffc}}}}"
NOT_OWNED = ("- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: p-e}, spec: {storageClassName: wffc}}")


@pytest.mark.parametrize("version, gates, vols, extra, want", [
    ("1.22", "{}", BOUND, "", ("n1", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pvc(s) bound to non-existent pv(s)")),
    ("1.23", "{}", BOUND, "", ("n1", Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                               "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")),
    # an ephemeral volume's claim not controlled by the pod (kspread makes a missing one, owned)
    ("1.21", "{}", EPHEMERAL, NOT_OWNED, ("*", Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                          'persistentvolumeclaim "p-e" was not created for the pod')),
    # GenericEphemeralVolume off (beta, on by default in 1.21-1.22): the volume is not read
    ("1.22", "{GenericEphemeralVolume: false}", EPHEMERAL, "", ("n1", Code.SUCCESS, "")),
])
def test_volumebinding_before_1_23(version, gates, vols, extra, want):
    st = _statuses(BOUND_MISSING_PV.format(v=version, gates=gates, vols=vols, extra=extra))
    node, code, msg = want
    assert st[node] == (code, msg)


def test_readwriteoncepod_to_1_24_looks_up_every_claim_first():
    vols = f"{USE_C}, {MISSING}"
    assert _first(_statuses(RWOP.format(v="1.24", gate="true", vols=vols))) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "gone" not found')
    assert _first(_statuses(RWOP.format(v="1.22", gate="true", vols=USE_C))) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, RWOP_CONFLICT)
    # 1.21 knows no ReadWriteOncePod check
    doc = RWOP.format(v="1.21", gate="true", vols=USE_C).replace("featureGates: {ReadWriteOncePod: true}\n", "")
    assert _first(_statuses(doc)) == (Code.SUCCESS, "")


@pytest.mark.parametrize("version, code", [("1.22", Code.SUCCESS), ("1.23", Code.ERROR)])
def test_nodevolumelimits_missing_claim_is_skipped_before_1_23(version, code):
    doc = f"""
version: "{version}"
profile: {{filter: [NodeVolumeLimits]}}
nodes: [n1]
objects:
- {{kind: CSINode, apiVersion: storage.k8s.io/v1, metadata: {{name: n1}},
   spec: {{drivers: [{{name: x.csi.io, nodeID: i, allocatable: {{count: 1}}}}]}}}}
pod: {{name: p, volumes: [{{name: d, persistentVolumeClaim: {{claimName: gone}}}}]}}
"""
    _, results, _ = run_case(build_case(yaml.safe_load(doc), "t"), keep_all=True)
    r = results[-1]
    if code == Code.ERROR:  # an Error status ends the cycle
        assert r.error == ('running "NodeVolumeLimits" filter plugin: looking up PVC default/gone: '
                           'persistentvolumeclaim "gone" not found')
    else:
        assert r.error is None or r.error == ""
        assert r.statuses["n1"].code == code


@pytest.mark.parametrize("version, kind, source, plugin, code", [
    # 1.22: EBS migration gates off by default, whatever the CSINode says: EBSLimits counts
    ("1.22", "aws-ebs", "awsElasticBlockStore: {volumeID: v{i}}", "EBSLimits", Code.UNSCHEDULABLE),
    ("1.23", "aws-ebs", "awsElasticBlockStore: {volumeID: v{i}}", "EBSLimits", Code.SUCCESS),
    # Cinder's gate is on from 1.21: migrated where the CSINode says so
    ("1.21", "cinder", "cinder: {volumeID: v{i}}", "CinderLimits", Code.SUCCESS),
])
def test_cloud_plugins_defer_only_where_the_migration_gate_is_on(version, kind, source, plugin, code):
    existing = ", ".join(f"{{name: d{i}, {source.replace('{i}', str(i))}}}" for i in range(2))
    doc = f"""
version: "{version}"
profile: {{filter: [{plugin}]}}
nodes: [{{name: n1, allocatable: {{cpu: "1", memory: 1Gi, pods: "10", attachable-volumes-{kind}: "1"}}}}]
objects:
- {{kind: CSINode, apiVersion: storage.k8s.io/v1,
   metadata: {{name: n1, annotations: {{storage.alpha.kubernetes.io/migrated-plugins: kubernetes.io/{kind}}}}},
   spec: {{drivers: []}}}}
pods:
- {{name: a, node: n1, volumes: [{existing}]}}
pod: {{name: p, volumes: [{{name: d, {source.replace("{i}", "new")}}}]}}
"""
    assert _statuses(doc)["n1"][0] == code


def test_a_pod_the_cloud_limits_rejected_retries_after_a_pod_deletion():
    """EBSLimits registers Pod Delete: the preemptor, rejected by it, is tried again once
    its victim is deleted (without the event it would wait for ever)."""
    doc = """
version: "1.26"
profile: {filter: [EBSLimits], postFilter: [DefaultPreemption]}
nodes: [{name: n1, allocatable: {cpu: "4", memory: 8Gi, pods: "110", attachable-volumes-aws-ebs: "1"}}]
pods:
- {name: a, node: n1, priority: 0, volumes: [{name: d, awsElasticBlockStore: {volumeID: vol-a}}]}
schedule:
- {name: p1, priority: 0, volumes: [{name: e, awsElasticBlockStore: {volumeID: vol-1}}]}
- {name: p2, priority: 100, volumes: [{name: e, awsElasticBlockStore: {volumeID: vol-2}}]}
"""
    _, results, placements = run_case(build_case(yaml.safe_load(doc), "t"), keep_all=True)
    assert [(r.pod.name, r.attempt) for r in results] == [("p2", 1), ("p1", 1), ("p2", 2)]
    assert placements == {"p1": None, "p2": "n1"}
