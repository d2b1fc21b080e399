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
