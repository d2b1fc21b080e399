"""Issue 27, storage: the volume plugins' statuses and reasons, the sequence's claim
binding (PV controller and provisioner emulation) and the storage objects' parsing."""

from __future__ import annotations

import pytest
import yaml

from kspread.engine.framework.status import Code
from kspread.engine.plugins.volumerestrictions import disks_conflict
from kspread.engine.plugins.volumezone import label_zones
from kspread.engine.scheduler import run_case
from kspread.engine.storage import InTreeDisk, StorageClass
from kspread.errors import CaseError
from kspread.format.case import build_case

WFFC = """
- {kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {name: fast}, provisioner: ebs.csi.aws.com,
   volumeBindingMode: WaitForFirstConsumer}
"""


def _run(doc: str):
    case = build_case(yaml.safe_load(doc), "t")
    sched, results, placements = run_case(case, keep_all=True)
    return case, sched, results, placements


def _statuses(doc: str) -> dict[str, tuple[Code, str]]:
    _, _, results, _ = _run(doc)
    r = results[-1]
    if r.pre_filter_status is not None and not r.pre_filter_status.is_success():
        st = r.pre_filter_status
        return {"*": (st.code, st.message)}
    return {n: (st.code, st.message) for n, st in r.statuses.items()}


def test_provisioned_volume_takes_the_csinode_topology_keys_of_the_node():
    _, sched, _, placements = _run(f"""
version: "1.35"
profile: {{filter: [VolumeBinding]}}
zones: {{za: [n1]}}
nodes: [n1]
objects:{WFFC}
- {{kind: CSINode, apiVersion: storage.k8s.io/v1, metadata: {{name: n1}},
   spec: {{drivers: [{{name: ebs.csi.aws.com, nodeID: i, topologyKeys: [topology.kubernetes.io/zone]}}]}}}}
schedule:
- {{name: web, replicas: 1, claims: [{{name: data, storageClassName: fast, storage: 5Gi}}]}}
""")
    assert placements == {"web-0": "n1"}
    st = sched.handle.storage
    claim = st.pvcs["default/data-web-0"]
    assert claim.fully_bound() and claim.phase == "Bound"
    pv = st.pvs[claim.volume_name]
    assert pv.claim_ref == ("default", "data-web-0") and pv.capacity == 5 * 1024**3
    assert [(r.key, r.values) for r in pv.node_affinity[0].match_expressions] == [
        ("topology.kubernetes.io/zone", ("za",))]
    assert pv.csi == ("ebs.csi.aws.com", pv.name)


@pytest.mark.parametrize("topologies, key", [
    ("\n  allowedTopologies: [{matchLabelExpressions: [{key: rack, values: [r1]}]}]", "rack"),
    ("", "kubernetes.io/hostname"),
])
def test_provisioned_volume_without_csinode_keys(topologies, key):
    _, sched, _, placements = _run(f"""
version: "1.35"
profile: {{filter: [VolumeBinding]}}
nodes: [{{name: n1, labels: {{rack: r1}}}}]
objects:
- kind: StorageClass
  apiVersion: storage.k8s.io/v1
  metadata: {{name: fast}}
  provisioner: x.csi.io
  volumeBindingMode: WaitForFirstConsumer{topologies}
schedule:
- {{name: p, volumes: [{{name: d, ephemeral: {{volumeClaimTemplate: {{spec: {{storageClassName: fast,
    accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}}}}}}}]}}
""")
    assert placements == {"p": "n1"}
    st = sched.handle.storage
    claim = st.pvcs["default/p-d"]  # made by the ephemeral volume controller, owned by the pod
    assert claim.owner_pod == "p"
    pv = st.pvs[claim.volume_name]
    assert [(r.key, r.values) for r in pv.node_affinity[0].match_expressions] == [(key, ("r1" if key == "rack"
                                                                                         else "n1",))]


def test_the_case_storage_is_not_changed_by_a_sequence():
    case, sched, _, _ = _run(f"""
version: "1.35"
profile: {{filter: [VolumeBinding]}}
nodes: [n1]
objects:{WFFC}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: c}},
   spec: {{storageClassName: fast, accessModes: [ReadWriteOnce]}}}}
schedule:
- {{name: p, volumes: [{{name: d, persistentVolumeClaim: {{claimName: c}}}}]}}
""")
    assert case.cluster.storage.pvcs["default/c"].volume_name == ""
    assert sched.handle.storage.pvcs["default/c"].volume_name != ""


def test_volumebinding_prefilter_rejections():
    base = f"""
version: "1.35"
profile: {{filter: [VolumeBinding]}}
nodes: [n1]
objects:{WFFC}
"""
    lost = base + """- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: c},
   spec: {storageClassName: fast, volumeName: gone}, status: {phase: Lost}}
pod: {name: p, volumes: [{name: d, persistentVolumeClaim: {claimName: c}}]}
"""
    assert _statuses(lost) == {"*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     'persistentvolumeclaim "c" bound to non-existent persistentvolume "gone"')}
    deleting = base + """- {kind: PersistentVolumeClaim, apiVersion: v1,
   metadata: {name: c, deletionTimestamp: "2024-01-01T00:00:00Z"}, spec: {storageClassName: fast}}
pod: {name: p, volumes: [{name: d, persistentVolumeClaim: {claimName: c}}]}
"""
    gone = 'persistentvolumeclaim "c" is being deleted'
    assert _statuses(deleting) == {"*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, gone)}
    not_owned = base + """- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: p-d}, spec: {storageClassName: fast}}
pod: {name: p, volumes: [{name: d, ephemeral: {volumeClaimTemplate: {spec: {storageClassName: fast}}}}]}
"""
    assert _statuses(not_owned) == {"*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                          "PVC default/p-d was not created for pod default/p (pod is not owner)")}


def test_volumebinding_filter_reasons_in_upstream_order():
    # a bound claim whose volume is elsewhere and a waiting claim with no volume nor provisioner
    st = _statuses("""
version: "1.32"
profile: {filter: [VolumeBinding]}
nodes: [n1, n2]
objects:
- {kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {name: local},
   provisioner: kubernetes.io/no-provisioner, volumeBindingMode: WaitForFirstConsumer}
- {kind: PersistentVolume, apiVersion: v1, metadata: {name: v},
   spec: {capacity: {storage: 1Gi}, claimRef: {namespace: default, name: b},
          nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname,
                                                                               operator: In, values: [n2]}]}]}}}}
- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: b, annotations: {pv.kubernetes.io/bind-completed: "yes"}},
   spec: {volumeName: v}}
- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: w}, spec: {storageClassName: local}}
pod: {name: p, volumes: [{name: b, persistentVolumeClaim: {claimName: b}}, {name: w, persistentVolumeClaim: {claimName: w}}]}
""")
    assert st == {
        "n1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had volume node affinity conflict, "
                                                     "node(s) didn't find available persistent volumes to bind")),
        "n2": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't find available persistent volumes to bind"),
    }


def test_selected_node_annotation_and_missing_volume():
    st = _statuses(f"""
version: "1.35"
profile: {{filter: [VolumeBinding]}}
nodes: [n1, n2]
objects:{WFFC}
- {{kind: PersistentVolumeClaim, apiVersion: v1,
   metadata: {{name: w, annotations: {{volume.kubernetes.io/selected-node: n2}}}}, spec: {{storageClassName: fast}}}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: b, annotations: {{pv.kubernetes.io/bind-completed: "yes"}}}},
   spec: {{volumeName: nowhere}}}}
pod: {{name: p, volumes: [{{name: w, persistentVolumeClaim: {{claimName: w}}}}, {{name: b, persistentVolumeClaim: {{claimName: b}}}}]}}
""")
    both = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
    assert st == {"n1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                         f"node(s) didn't find available persistent volumes to bind, {both}"),
                  "n2": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, both)}


def test_class_without_binding_mode_is_an_error():
    case = build_case(yaml.safe_load("""
version: "1.35"
profile: {filter: [VolumeBinding]}
nodes: [n1]
objects:
- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: c}, spec: {storageClassName: x}}
pod: {name: p, volumes: [{name: d, persistentVolumeClaim: {claimName: c}}]}
"""), "t")
    case.cluster.storage.classes["x"] = StorageClass("x", "p.io", None)
    _, results, _ = run_case(case)
    assert results[-1].error is not None and 'VolumeBindingMode not set for StorageClass "x"' in str(
        results[-1].error)


def test_volumezone_prefilter_texts():
    assert label_zones("za__zb") == frozenset({"za", "zb"})
    assert label_zones("za__") is None and label_zones("") == frozenset()
    base = """
version: "1.35"
profile: {filter: [VolumeZone]}
nodes: [n1]
pod: {name: p, volumes: [{name: d, persistentVolumeClaim: {claimName: c}}]}
objects:
"""
    assert _statuses(base + "- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: c}}\n") == {
        "*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no pv name and storageClass name")}
    assert _statuses(base + "- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: c}, "
                            "spec: {storageClassName: gone}}\n") == {
        "*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'storageclass.storage.k8s.io "gone" not found')}
    assert _statuses(base + "- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: c}, "
                            "spec: {volumeName: v}}\n") == {
        "*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolume "v" not found')}


def test_in_tree_disk_conflicts():
    gce = InTreeDisk("gcePersistentDisk", "d")
    gce_ro = InTreeDisk("gcePersistentDisk", "d", True)
    assert disks_conflict(gce, gce_ro) and not disks_conflict(gce_ro, gce_ro)
    ebs_ro = InTreeDisk("awsElasticBlockStore", "v", True)
    assert disks_conflict(ebs_ro, ebs_ro)
    iscsi = InTreeDisk("iscsi", "iqn.x", True)
    assert not disks_conflict(iscsi, iscsi) and disks_conflict(iscsi, InTreeDisk("iscsi", "iqn.x"))
    rbd = InTreeDisk("rbd", "img", False, ("m1",), "rbd")
    assert disks_conflict(rbd, InTreeDisk("rbd", "img", True, ("m1", "m2"), "rbd"))
    assert not disks_conflict(rbd, InTreeDisk("rbd", "img", False, ("m2",), "rbd"))
    assert not disks_conflict(rbd, InTreeDisk("rbd", "img", False, ("m1",), "other"))
    assert not disks_conflict(gce, InTreeDisk("awsElasticBlockStore", "d"))


LIMITS = """
version: "{v}"
profile: {{filter: [NodeVolumeLimits]}}
featureGates: {gates}
nodes: [n1]
objects:
- {{kind: CSINode, apiVersion: storage.k8s.io/v1, metadata: {{name: n1}},
   spec: {{drivers: [{{name: a.csi.io, nodeID: i, allocatable: {{count: 1}}}}]}}}}
- {{kind: PersistentVolume, apiVersion: v1, metadata: {{name: old}},
   spec: {{capacity: {{storage: 1Gi}}, csi: {{driver: a.csi.io, volumeHandle: h-old}}}}}}
- {{kind: VolumeAttachment, apiVersion: storage.k8s.io/v1, metadata: {{name: va}},
   spec: {{attacher: a.csi.io, nodeName: n1, source: {{persistentVolumeName: old}}}}}}
- {{kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {{name: a}}, provisioner: a.csi.io,
   volumeBindingMode: WaitForFirstConsumer}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: c}}, spec: {{storageClassName: a}}}}
pod: {{name: p, volumes: [{{name: d, persistentVolumeClaim: {{claimName: {claim}}}}}]}}
"""


def test_node_volume_limits_counts_volume_attachments_from_1_32():
    assert _statuses(LIMITS.format(v="1.35", gates="{}", claim="c")) == {
        "n1": (Code.UNSCHEDULABLE, "node(s) exceed max volume count")}
    assert _statuses(LIMITS.format(v="1.32", gates="{}", claim="c"))["n1"][0] == Code.UNSCHEDULABLE
    assert _statuses(LIMITS.format(v="1.31", gates="{}", claim="c"))["n1"][0] == Code.SUCCESS
    assert _statuses(LIMITS.format(v="1.35", gates="{}", claim="x")) == {
        "n1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
               'looking up PVC default/x: persistentvolumeclaim "x" not found')}


def test_volume_limit_scaling_needs_the_driver_on_the_node():
    case = yaml.safe_load(LIMITS.format(v="1.35", gates="{VolumeLimitScaling: true}", claim="c").replace(
        "name: a.csi.io, nodeID", "name: b.csi.io, nodeID"))
    case["objects"].append({"kind": "CSIDriver", "apiVersion": "storage.k8s.io/v1",
                            "metadata": {"name": "a.csi.io"}, "spec": {}})
    assert _statuses(yaml.safe_dump(case)) == {
        "n1": (Code.UNSCHEDULABLE, "a.csi.io CSI driver is not installed on the node")}


def test_pods_with_volumes_before_1_21_are_refused_by_name():
    with pytest.raises(CaseError, match=r"version 1.20 is not modelled \(plugin VolumeRestrictions\)"):
        _run("""
version: "1.20"
nodes: [n1]
pod: {name: p, volumes: [{name: d, gcePersistentDisk: {pdName: x}}]}
""")
    # a pod without such volumes runs as before
    _, _, _, placements = _run("""
version: "1.20"
nodes: [n1]
pod: {name: p, volumes: [{name: s, emptyDir: {}}]}
""")
    assert placements == {"p": "n1"}


@pytest.mark.parametrize("objects, message, path", [
    ("{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: c}, spec: {accessModes: [ReadWriteSome]}}",
     'Unsupported value: "ReadWriteSome"', "objects[0].spec.accessModes[0]"),
    ("{kind: PersistentVolume, apiVersion: v1, metadata: {name: v}, spec: {capacity: {storage: lots}}}",
     "", "objects[0].spec.capacity.storage"),
])
def test_storage_objects_are_validated_with_their_path(objects, message, path):
    with pytest.raises(CaseError) as e:
        build_case(yaml.safe_load(f"""
version: "1.35"
nodes: [n1]
objects: [{objects}]
pod: {{name: p}}
"""), "t")
    assert message in str(e.value)
    assert ".".join(str(x) if isinstance(x, str) else f"[{x}]" for x in e.value.path).replace(".[", "[") == path


def test_a_storage_object_defined_twice():
    with pytest.raises(CaseError, match="PersistentVolume 'v' is defined twice"):
        build_case(yaml.safe_load("""
version: "1.35"
nodes: [n1]
objects:
- {kind: PersistentVolume, apiVersion: v1, metadata: {name: v}}
- {kind: PersistentVolume, apiVersion: v1, metadata: {name: v}}
pod: {name: p}
"""), "t")


STORAGE_DUMP = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: za}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: {kubernetes.io/hostname: n2, topology.kubernetes.io/zone: zb}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata: {name: fast, uid: u1, resourceVersion: "7", annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
  provisioner: ebs.csi.aws.com
  reclaimPolicy: Delete
  parameters: {type: gp3}
  volumeBindingMode: WaitForFirstConsumer
- apiVersion: v1
  kind: PersistentVolume
  metadata:
    name: pv-a
    labels: {topology.kubernetes.io/zone: za}
    annotations: {pv.kubernetes.io/provisioned-by: ebs.csi.aws.com}
    finalizers: [kubernetes.io/pv-protection]
  spec:
    accessModes: [ReadWriteOnce]
    capacity: {storage: 10Gi}
    claimRef: {apiVersion: v1, kind: PersistentVolumeClaim, name: data-db-0, namespace: default, uid: x}
    csi: {driver: ebs.csi.aws.com, volumeHandle: vol-a, fsType: ext4}
    nodeAffinity:
      required:
        nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [za]}]}]
    persistentVolumeReclaimPolicy: Delete
    storageClassName: fast
    volumeMode: Filesystem
  status: {phase: Bound}
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata:
    name: data-db-0
    namespace: default
    annotations: {pv.kubernetes.io/bind-completed: "yes", pv.kubernetes.io/bound-by-controller: "yes"}
    managedFields: [{manager: kube-controller-manager}]
  spec:
    accessModes: [ReadWriteOnce]
    resources: {requests: {storage: 10Gi}}
    storageClassName: fast
    volumeMode: Filesystem
    volumeName: pv-a
  status: {phase: Bound, capacity: {storage: 10Gi}}
- apiVersion: storage.k8s.io/v1
  kind: CSINode
  metadata: {name: n1}
  spec: {drivers: [{name: ebs.csi.aws.com, nodeID: i-1, topologyKeys: [topology.kubernetes.io/zone],
                    allocatable: {count: 25}}]}
- apiVersion: storage.k8s.io/v1
  kind: CSIDriver
  metadata: {name: ebs.csi.aws.com}
  spec: {attachRequired: true, podInfoOnMount: false, storageCapacity: false}
- apiVersion: v1
  kind: Pod
  metadata: {name: db-0, namespace: default, uid: p1, creationTimestamp: "2024-05-01T10:00:00Z"}
  spec:
    schedulerName: default-scheduler
    containers: [{name: pg, image: postgres}]
    volumes:
    - {name: data, persistentVolumeClaim: {claimName: data-db-0}}
    - {name: cfg, configMap: {name: c}}
  status: {phase: Pending}
"""


def test_import_keeps_the_storage_objects_trimmed_and_the_pending_pod_runs(tmp_path):
    from kspread.format import importer

    p = tmp_path / "dump.yaml"
    p.write_text(STORAGE_DUMP, encoding="utf-8")
    warnings: list[str] = []
    out = importer.import_snapshot(str(p), warn=warnings.append, pending=True, version="1.35")
    assert warnings == []
    data = yaml.safe_load(out)
    kinds = [o["kind"] for o in data["objects"]]
    assert kinds == ["StorageClass", "CSIDriver", "CSINode", "PersistentVolume", "PersistentVolumeClaim"]
    sc, drv, _, pv, pvc = data["objects"]
    assert sc == {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
                  "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer"}
    assert drv["spec"] == {"storageCapacity": False}
    assert pv["spec"]["claimRef"] == {"namespace": "default", "name": "data-db-0"}
    assert pv["spec"]["csi"] == {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-a"}
    assert pvc["metadata"] == {"name": "data-db-0", "namespace": "default",
                               "annotations": {"pv.kubernetes.io/bind-completed": "yes"}}
    assert data["pod"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]
    assert "persistentvolumes,persistentvolumeclaims,storageclasses" in importer._KUBECTL
    data["expect"] = {"feasible": ["n1"]}
    _, _, placements = run_case(build_case(data, "imported"))
    assert placements == {"db-0": "n1"}


REQUEUE = """
version: "{v}"
profile: {{filter: [VolumeBinding]}}
nodes: [n1]
objects:
- {{kind: CSIDriver, apiVersion: storage.k8s.io/v1, metadata: {{name: lvm.io}}, spec: {{storageCapacity: true}}}}
- {{kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {{name: lvm}}, provisioner: lvm.io,
   volumeBindingMode: WaitForFirstConsumer}}
- {{kind: CSIStorageCapacity, apiVersion: storage.k8s.io/v1, metadata: {{name: c, namespace: kube-system}},
   storageClassName: lvm, capacity: 10Gi, nodeTopology: {{}}}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: big}},
   spec: {{storageClassName: lvm, resources: {{requests: {{storage: 50Gi}}}}}}}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: small}},
   spec: {{storageClassName: lvm, resources: {{requests: {{storage: 1Gi}}}}}}}}
schedule:
- {{name: hi, priority: 10, volumes: [{{name: d, persistentVolumeClaim: {{claimName: big}}}}]}}
- {{name: lo, volumes: [{{name: d, persistentVolumeClaim: {{claimName: small}}}}]}}
"""


@pytest.mark.parametrize("version", ["1.30", "1.35"])
def test_a_provisioning_requeues_the_pods_volumebinding_rejected(version):
    # hi fails (not enough free storage); lo's binding provisions a volume (PVAdd, which
    # VolumeBinding registers without a hint): hi is tried again, and fails again
    _, sched, _, placements = _run(REQUEUE.format(v=version))
    assert placements == {"hi": None, "lo": "n1"}
    assert sched.attempts == {"hi": 2, "lo": 1}
    assert [e.action for e in sched.storage_events] == ["PVCUpdate", "PVAdd"]


def test_a_provisioning_does_not_requeue_pods_other_plugins_rejected():
    doc = REQUEUE.format(v="1.35").replace("filter: [VolumeBinding]", "filter: [VolumeBinding, NodeAffinity]")
    doc = doc.replace("- {name: hi, priority: 10,", "- {name: hi, priority: 10, nodeSelector: {x: y},")
    doc = doc.replace("claimName: big", "claimName: small2").replace(
        "- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: small},",
        "- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: small2}, spec: {storageClassName: lvm}}\n"
        "- {kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: small},")
    _, sched, _, placements = _run(doc)
    assert placements == {"hi": None, "lo": "n1"}
    assert sched.attempts == {"hi": 1, "lo": 1}


@pytest.mark.parametrize("version, gates, scored", [
    ("1.22", {}, False),
    ("1.22", {"VolumeCapacityPriority": True}, True),  # getDefaultPlugins adds it with the gate
    ("1.36", {}, False),  # PreScore skips: no static binding, StorageCapacityScoring off
    ("1.37", {}, True),  # StorageCapacityScoring beta, on: PreScore runs, Score is 0
    ("1.37", {"StorageCapacityScoring": False}, False),
])
def test_volumebinding_scores_by_the_capacity_gate(version, gates, scored):
    case = build_case({"version": version, "featureGates": gates, "nodes": ["n1", "n2"], "pod": {"name": "p"}},
                      "t")
    from kspread.workflow.runner import run_loaded

    actual = run_loaded(case).actual
    assert ("VolumeBinding" in actual["rawScores"]) is scored, actual["rawScores"]
    if scored:
        assert actual["rawScores"]["VolumeBinding"] == {"n1": 0, "n2": 0}


GCE = """
version: "{v}"
profile: {{filter: [NodeVolumeLimits]}}
nodes: [n1]
objects:
- {{kind: CSINode, apiVersion: storage.k8s.io/v1, metadata: {{name: n1{ann}}},
   spec: {{drivers: [{{name: pd.csi.storage.gke.io, nodeID: i, allocatable: {{count: 1}}}}]}}}}
pods:
- {{name: a, node: n1, volumes: [{{name: d, gcePersistentDisk: {{pdName: one}}}}]}}
pod: {{name: p, volumes: [{{name: d, gcePersistentDisk: {{pdName: two}}}}]}}
"""
MIGRATED = ", annotations: {storage.alpha.kubernetes.io/migrated-plugins: kubernetes.io/gce-pd}"


@pytest.mark.parametrize("version, ann, code", [
    ("1.27", "", Code.SUCCESS),  # not migrated on the node: NodeVolumeLimits does not count GCE PDs
    ("1.27", MIGRATED, Code.UNSCHEDULABLE),
    ("1.28", "", Code.UNSCHEDULABLE),  # from 1.28 a CSINode is enough
])
def test_gce_pd_migration_by_version(version, ann, code):
    assert _statuses(GCE.format(v=version, ann=ann))["n1"][0] == code


def test_portworx_volumes_are_refused_by_name():
    with pytest.raises(CaseError, match="portworxVolume volumes"):
        _run("""
version: "1.35"
profile: {filter: [NodeVolumeLimits]}
nodes: [n1]
objects:
- {kind: CSINode, apiVersion: storage.k8s.io/v1, metadata: {name: n1}, spec: {drivers: []}}
pod: {name: p, volumes: [{name: d, portworxVolume: {volumeID: v}}]}
""")


def test_node_allocatable_attach_limits_to_1_31():
    doc = """
version: "{v}"
profile: {{filter: [NodeVolumeLimits]}}
nodes: [{{name: n1, allocatable: {{cpu: "4", attachable-volumes-csi-a.csi.io: 1}}}}]
objects:
- {{kind: CSINode, apiVersion: storage.k8s.io/v1, metadata: {{name: n1}}, spec: {{drivers: [{{name: a.csi.io, nodeID: i}}]}}}}
- {{kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {{name: a}}, provisioner: a.csi.io,
   volumeBindingMode: WaitForFirstConsumer}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: c1}}, spec: {{storageClassName: a}}}}
- {{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {{name: c2}}, spec: {{storageClassName: a}}}}
pods: [{{name: a, node: n1, volumes: [{{name: d, persistentVolumeClaim: {{claimName: c1}}}}]}}]
pod: {{name: p, volumes: [{{name: d, persistentVolumeClaim: {{claimName: c2}}}}]}}
"""
    assert _statuses(doc.format(v="1.31"))["n1"] == (Code.UNSCHEDULABLE, "node(s) exceed max volume count")
    assert _statuses(doc.format(v="1.32"))["n1"][0] == Code.SUCCESS  # only CSINode counts from 1.32


@pytest.mark.parametrize("version, gates, reason", [
    ("1.28", {}, "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"),
    ("1.28", {"ReadWriteOncePod": False}, None),
    ("1.33", {}, "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"),
    ("1.34", {}, ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
                  "in-use by another pod")),
])
def test_rwop_reason_and_gate_by_version(version, gates, reason):
    doc = {"version": version, "featureGates": gates, "profile": {"filter": ["VolumeRestrictions"]},
           "nodes": ["n1"],
           "objects": [{"kind": "PersistentVolumeClaim", "apiVersion": "v1", "metadata": {"name": "c"},
                        "spec": {"accessModes": ["ReadWriteOncePod"]}}],
           "pods": [{"name": "a", "node": "n1", "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}]}],
           "pod": {"name": "p", "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}]}}
    got = _statuses(yaml.safe_dump(doc))["n1"]
    assert got == ((Code.UNSCHEDULABLE, reason) if reason else (Code.SUCCESS, ""))


@pytest.mark.parametrize("version, code", [("1.28", Code.UNSCHEDULABLE_AND_UNRESOLVABLE), ("1.29", Code.SUCCESS)])
def test_volumezone_translates_beta_keys_from_1_29(version, code):
    doc = {"version": version, "profile": {"filter": ["VolumeZone"]},
           "nodes": [{"name": "n1", "labels": {"topology.kubernetes.io/zone": "za"}}],
           "objects": [
               {"kind": "PersistentVolume", "apiVersion": "v1",
                "metadata": {"name": "v", "labels": {"failure-domain.beta.kubernetes.io/zone": "za"}},
                "spec": {"claimRef": {"namespace": "default", "name": "c"}}},
               {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                "metadata": {"name": "c", "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                "spec": {"volumeName": "v"}}],
           "pod": {"name": "p", "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}]}}
    assert _statuses(yaml.safe_dump(doc))["n1"][0] == code


def test_eligible_nodes_of_1_27_and_1_28_that_matter_are_refused():
    doc = {"version": "1.28", "profile": {"filter": ["VolumeBinding"]},
           "nodes": [{"name": "n1", "labels": {"zone": "a"}}, {"name": "n2", "labels": {"zone": "a"}}],
           "objects": [
               {"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": "v"},
                "spec": {"claimRef": {"namespace": "default", "name": "c"},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [
                             {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                    "values": ["n1"]}]},
                             {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}},
               {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                "metadata": {"name": "c", "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                "spec": {"volumeName": "v"}}],
           "pod": {"name": "p", "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}]}}
    with pytest.raises(CaseError, match="node 'n2' passes the bound volumes' node affinity"):
        _run(yaml.safe_dump(doc))
    doc["version"] = "1.29"  # no PreFilterResult: both nodes pass
    assert _statuses(yaml.safe_dump(doc)) == {"n1": (Code.SUCCESS, ""), "n2": (Code.SUCCESS, "")}
    # only the named host passes the affinity: the restriction changes nothing kspread reports
    doc["version"] = "1.28"
    doc["objects"][0]["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"].pop()
    assert _statuses(yaml.safe_dump(doc))["n1"] == (Code.SUCCESS, "")


def test_missing_claim_in_node_volume_limits_is_an_error_before_1_30():
    case = build_case(yaml.safe_load(LIMITS.format(v="1.29", gates="{}", claim="x")), "t")
    _, results, _ = run_case(case)
    assert 'looking up PVC default/x: persistentvolumeclaim "x" not found' in str(results[-1].error)


def test_a_volumes_unknown_key_is_an_error_at_it():
    doc = yaml.safe_load("""
apiVersion: kspread/v1
kind: Case
version: "1.35"
nodes: [n1]
pod: {name: p, volumes: [{name: d, emptyDir: {}}, {name: e, persistentVolumeClaimx: {claimName: c}}]}
""")
    with pytest.raises(CaseError) as e:
        build_case(doc, "t")
    assert list(e.value.path) == ["pod", "volumes", 1, "persistentVolumeClaimx"]
    assert str(e.value).endswith("unknown field 'persistentVolumeClaimx' in a volume "
                                 "(did you mean 'persistentVolumeClaim'?)")


def test_a_persistent_volumes_unknown_csi_key_is_an_error_at_it():
    doc = yaml.safe_load("""
apiVersion: kspread/v1
kind: Case
version: "1.35"
nodes: [n1]
objects:
- {kind: PersistentVolume, apiVersion: v1, metadata: {name: v1},
   spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], csi: {driverx: ebs.csi.aws.com, volumeHandle: h}}}
pod: {name: p}
""")
    with pytest.raises(CaseError) as e:
        build_case(doc, "t")
    assert list(e.value.path)[-2:] == ["csi", "driverx"]
    assert "unknown field 'driverx' in csi" in str(e.value) and "did you mean 'driver'?" in str(e.value)


def test_volume_plugins_register_node_events():
    """VolumeRestrictions registers Node/Add and VolumeZone Node Add | UpdateNodeLabel (1.35,
    queueing hints on); the queue adds UpdateNodeTaint for both (issue 109437): a taint
    retries a pod either rejected, a label only the one VolumeZone rejected."""
    from pathlib import Path

    src = Path(__file__).resolve().parent.parent / "cases" / "storage" / "node-event-requeues.yaml"
    docs = {d["name"]: d for d in yaml.safe_load_all(src.read_text())}
    sched, _r, placements = run_case(build_case(docs["volumerestrictions-rejected-pod-retried-after-a-node-taint"],
                                                str(src)))
    assert placements["w"] is None and sched.attempts["w"] == 2
    sched, _r, placements = run_case(build_case(docs["volumezone-rejected-pod-retried-after-a-node-taint-and-label"],
                                                str(src)))
    assert placements["p"] == "n1" and sched.attempts["p"] == 3


@pytest.mark.parametrize(("opt_in", "want"), [
    (None, (Code.SUCCESS, "")),
    (False, (Code.SUCCESS, "")),
    (True, (Code.UNSCHEDULABLE, "a.csi.io CSI driver is not installed on the node"))])
def test_volume_limit_scaling_1_36_checks_only_drivers_that_opt_in(opt_in, want):
    """1.36: the driver check applies to a CSIDriver with preventPodSchedulingIfMissing
    only; without it the volume counts as before, and n1's CSINode gives a.csi.io no limit
    (checked with the v1.36.2 single-cycle oracle; 1.35 rejects all three)."""
    case = yaml.safe_load(LIMITS.format(v="1.36", gates="{VolumeLimitScaling: true}", claim="c").replace(
        "name: a.csi.io, nodeID", "name: b.csi.io, nodeID"))
    spec = {} if opt_in is None else {"preventPodSchedulingIfMissing": opt_in}
    case["objects"].append({"kind": "CSIDriver", "apiVersion": "storage.k8s.io/v1",
                            "metadata": {"name": "a.csi.io"}, "spec": spec})
    assert _statuses(yaml.safe_dump(case))["n1"] == want
