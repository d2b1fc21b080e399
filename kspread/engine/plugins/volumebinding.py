"""VolumeBinding (predicate CheckVolumeBinding up to 1.17), as upstream's
plugins/volumebinding (binder.go) with the PV controller's FindMatchingVolume.

PreFilter (podHasPVCs, GetPodVolumeClaims): every claim the pod uses (a
persistentVolumeClaim, or ``<pod>-<volume>`` for an ephemeral volume) must exist, not be
lost nor being deleted, and an ephemeral volume's claim must belong to the pod; else
UnschedulableAndUnresolvable with upstream's text. A claim is bound when it names its
volume and carries ``pv.kubernetes.io/bind-completed``; an unbound claim whose class binds
WaitForFirstConsumer (and that names no volume) waits for the node; any other unbound
claim is "pod has unbound immediate PersistentVolumeClaims" (UnschedulableAndUnresolvable).
A pod without claims: Skip (from 1.27; before, Success and Filter passes). The
CSIStorageCapacity check below follows its gate (beta, on, to 1.23; GA from 1.24).

Filter (FindPodVolumes), per node: a bound claim's volume must exist ("node(s) unavailable
due to one or more pvc(s) bound to non-existent pv(s)"; to 1.22 "pvc(s) bound to
non-existent pv(s)") and its node affinity match the
node ("node(s) had volume node affinity conflict" up to 1.32, "node(s) didn't match
PersistentVolume's node affinity" from 1.33, PR #129887). A waiting claim with a
``volume.kubernetes.io/selected-node`` annotation fits only that node; the others, smallest
request first, each take the smallest available volume of their class that fits
(capacity, volume mode, access modes, selector, node affinity; a volume already bound to
the claim first; equal sizes: the first by name, where upstream's cache order decides);
a claim without one is provisioned: its class needs a provisioner (not
``kubernetes.io/no-provisioner``) and allowedTopologies matching the node ("node(s) didn't
find available persistent volumes to bind" otherwise), and, for a CSIDriver with
``storageCapacity: true``, a CSIStorageCapacity of the class whose nodeTopology matches
the node and whose maximumVolumeSize (else capacity) holds the request ("node(s) did not
have enough free storage"). Every reason is UnschedulableAndUnresolvable.

Score (from 1.21), with the gate VolumeCapacityPriority (to 1.32) or StorageCapacityScoring
(from 1.33) on: per storage class, the requests of the node's static bindings over their
volumes' capacities (from 1.33 with StorageCapacityScoring, when the node has no static
binding, the provisioned claims' requests over the capacity of the CSIStorageCapacity that
admitted them), as a utilization in percent (integer division; over or of zero capacity:
100) through VolumeBindingArgs' shape (scores 0..10 times 10), the classes' scores averaged
and rounded half away from zero. Default shape: {0: 0, 100: 10} for VolumeCapacityPriority,
{0: 10, 100: 0} for StorageCapacityScoring. Gate off: 0 everywhere, or (from 1.30) PreScore
Skip; with the gate on PreScore skips (1.30+) unless some node had a static binding or
StorageCapacityScoring is on.

In a ``schedule`` sequence, binding the pod binds what Filter chose for the node: the
static volumes to their claims, the provisioned claims to new volumes
(``kspread.engine.storage.Storage.provision``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kspread.engine.apis.config import ShapePoint
from kspread.engine.framework.interface import (
    FilterPlugin,
    Plugin,
    PodEvent,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreFailed,
    ScorePlugin,
)
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SKIP, SUCCESS, CycleState, Status, error, unresolvable
from kspread.engine.model import HOSTNAME_LABEL, Node, Pod
from kspread.engine.plugins.resource_allocation import broken_linear
from kspread.engine.plugins.volumes import (
    check_modelled,
    ephemeral_owner_error,
    not_found,
    storage_of,
    volume_binding_pre_score_skips,
    volume_binding_scores,
    volumes_signer,
)
from kspread.engine.quantity import show_quantity
from kspread.engine.snapshot import NodeInfo, NodeSet
from kspread.engine.storage import (
    ANN_SELECTED_NODE,
    IN_TREE_PLUGINS,
    NOT_SUPPORTED_PROVISIONER,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    Storage,
    migration_gate_on,
)
from kspread.engine.versions import Version
from kspread.errors import CaseError

ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
def err_pv_not_exist(version: Version) -> str:
    """ErrReasonPVNotExist: reworded in 1.23."""
    if version.minor >= 23:
        return "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
    return "pvc(s) bound to non-existent pv(s)"



ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
_STATE = "VolumeBinding"
MAX_UTILIZATION = 100


def err_node_conflict(version: Version) -> str:
    """ErrReasonNodeConflict: reworded in 1.33 (PR #129887)."""
    if version.minor >= 33:
        return "node(s) didn't match PersistentVolume's node affinity"
    return "node(s) had volume node affinity conflict"


def vac_enabled(version: Version) -> bool:
    return version.minor >= 31 and version.gate("VolumeAttributesClass")


@dataclass(slots=True)
class PodVolumeClaims:
    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    delayed: list[PersistentVolumeClaim] = field(default_factory=list)


@dataclass(slots=True)
class PodVolumes:
    """What Filter chose on one node: (claim, volume) pairs and claims to provision (with
    the CSIStorageCapacity that admitted each, or None)."""

    static: list[tuple[PersistentVolumeClaim, PersistentVolume]] = field(default_factory=list)
    provision: list[PersistentVolumeClaim] = field(default_factory=list)
    capacities: list[CSIStorageCapacity | None] = field(default_factory=list)


@dataclass(slots=True)
class _State:
    """stateData: the pod's claims and, per node that passed Filter, what it would bind."""

    claims: PodVolumeClaims
    storage: Storage  # the objects as the binder read them (its assume caches over the API's)
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    has_static: bool = False


def _gib(n: int) -> str:
    return show_quantity("storage", n)


def volume_mismatch(claim: PersistentVolumeClaim, pv: PersistentVolume, node: Node, excluded: set[str],
                    version: Version) -> tuple[str | None, bool]:
    """FindMatchingVolume's checks of one volume for the claim: the first one it fails
    (None when it fits), and whether the search ends at this volume (one already bound to
    the claim: the match when its node affinity fits, else no match at all)."""
    vac = vac_enabled(version)
    spec = claim.spec
    requested = spec.request or 0
    if pv.name in excluded:
        return "chosen for another of the pod's claims", False
    if pv.claim_ref is not None and not pv.bound_to(claim):
        return f"bound to claim {pv.claim_ref[0]}/{pv.claim_ref[1]}", False
    if pv.capacity < requested:
        return f"{_gib(pv.capacity)}, smaller than the request", False
    if spec.volume_mode != pv.volume_mode:
        return f"volumeMode {pv.volume_mode}, the claim's {spec.volume_mode}", False
    if version.minor >= 31:  # FindMatchingVolume reads volumeAttributesClassName from 1.31
        if vac and spec.volume_attributes_class != pv.volume_attributes_class:
            return f"volumeAttributesClassName {pv.volume_attributes_class!r}", False
        if not vac and pv.volume_attributes_class:
            return "a volumeAttributesClassName (gate VolumeAttributesClass off)", False
    if pv.deleting:
        return "being deleted", False
    affinity_ok = pv.node_affinity_matches(node)
    if pv.bound_to(claim):
        return (None if affinity_ok else "bound to the claim, its node affinity does not match the node"), True
    if pv.phase != "Available":
        return f"phase {pv.phase}", False
    if spec.selector is not None and not spec.selector.as_selector().matches(pv.labels):
        return "labels not matching the claim's selector", False
    if pv.class_name != claim.class_name:
        return f"class {pv.class_name!r}", False
    if not affinity_ok:
        return "node affinity not matching the node", False
    if not set(spec.access_modes) <= set(pv.access_modes):
        return f"access modes {', '.join(pv.access_modes) or 'none'}", False
    return None, False


def find_matching_volume(claim: PersistentVolumeClaim, volumes: Sequence[PersistentVolume], node: Node,
                         excluded: set[str], version: Version) -> PersistentVolume | str | None:
    """FindMatchingVolume with delayBinding and a node: the volume for the claim, None,
    or an error text."""
    spec = claim.spec
    if not vac_enabled(version) and spec.volume_attributes_class and version.minor >= 31:
        return (f"unsupported volumeAttributesClassName is set on claim {claim.namespace}/{claim.name} when the "
                "feature-gate VolumeAttributesClass is disabled")
    smallest: PersistentVolume | None = None
    for pv in volumes:
        why, final = volume_mismatch(claim, pv, node, excluded, version)
        if final:
            return pv if why is None else None
        if why is None and (smallest is None or smallest.capacity > pv.capacity):
            smallest = pv
    return smallest


def has_enough_capacity(storage: Storage, claim: PersistentVolumeClaim, class_name: str, provisioner: str,
                        node: Node, version: Version) -> tuple[bool, CSIStorageCapacity | None]:
    """hasEnoughCapacity: whether the claim fits, and the capacity object that admits it."""
    size = claim.spec.request
    if size is None:
        return True, None
    if not version.gate("CSIStorageCapacity"):  # the gate off (to 1.23): no capacity check
        return True, None
    drv = storage.csi_drivers.get(provisioner)
    if drv is None or not drv.storage_capacity:
        return True, None
    for cap in storage.capacities:
        limit = cap.limit()
        if cap.storage_class == class_name and limit is not None and limit >= size and cap.node_has_access(node):
            return True, cap
    return False, None


def find_pod_volumes(storage: Storage, claims: PodVolumeClaims, node: Node,
                     version: Version) -> tuple[PodVolumes, list[str]] | str:
    """FindPodVolumes: what the node would bind, and the reasons it cannot (or an error)."""
    out = PodVolumes()
    bound_ok = unbound_ok = sufficient = pvs_found = True

    def reasons() -> list[str]:
        r = []
        if not bound_ok:
            r.append(err_node_conflict(version))
        if not unbound_ok:
            r.append(ERR_BIND_CONFLICT)
        if not sufficient:
            r.append(ERR_NOT_ENOUGH_SPACE)
        if not pvs_found:
            r.append(err_pv_not_exist(version))
        return r

    csi_node = storage.csi_nodes.get(node.name)
    for claim in claims.bound:
        pv = storage.pvs.get(claim.volume_name)
        if pv is None:
            pvs_found = False
            break
        if pv.csi is None and pv.disk is not None and csi_node is not None:
            plugin, driver = IN_TREE_PLUGINS[pv.disk.kind]
            if driver and plugin in csi_node.migrated_plugins and migration_gate_on(pv.disk.kind, version.minor):
                raise CaseError(f"PersistentVolume {pv.name!r} is an in-tree {pv.disk.kind} volume on node "
                                f"{node.name!r}, whose CSINode lists {plugin} as migrated: its translation to "
                                "CSI is not modelled by kspread")
        if not pv.node_affinity_matches(node):
            bound_ok = False
            break
    if not claims.delayed:
        return out, reasons()
    to_match: list[PersistentVolumeClaim] = []
    to_provision: list[PersistentVolumeClaim] = []
    for claim in claims.delayed:
        selected = claim.annotations.get(ANN_SELECTED_NODE)
        if selected is not None:
            if selected != node.name:
                unbound_ok = False
                return out, reasons()
            to_provision.append(claim)
        else:
            to_match.append(claim)
    if to_match:
        chosen: set[str] = set()
        for claim in sorted(to_match, key=lambda c: c.spec.request or 0):
            match = find_matching_volume(claim, storage.pvs_of_class(claim.class_name), node, chosen, version)
            if isinstance(match, str):
                return match
            if match is None:
                to_provision.append(claim)
                unbound_ok = False
                continue
            chosen.add(match.name)
            out.static.append((claim, match))
    if to_provision:
        for claim in to_provision:
            cls_name = claim.class_name
            if not cls_name:
                return f'no class for claim "{claim.key}"'
            cls = storage.classes.get(cls_name)
            if cls is None:
                return f'failed to find storage class "{cls_name}"'
            if not cls.provisioner or cls.provisioner == NOT_SUPPORTED_PROVISIONER:
                unbound_ok = False
                out.provision = []
                return out, reasons()
            if not cls.topology_matches(node.labels):
                unbound_ok = False
                out.provision = []
                return out, reasons()
            enough, cap = has_enough_capacity(storage, claim, cls_name, cls.provisioner, node, version)
            if not enough:
                unbound_ok = True
                sufficient = False
                out.provision = []
                return out, reasons()
            out.provision.append(claim)
            out.capacities.append(cap)
        unbound_ok = True
    return out, reasons()


_SHOWN_VOLUMES = 5


def _no_static_match(storage: Storage, claim: PersistentVolumeClaim, node: Node, excluded: set[str],
                     version: Version) -> str:
    """Why no volume of the claim's class fits it on the node: each volume's first failed
    check (at most ``_SHOWN_VOLUMES``)."""
    volumes = storage.pvs_of_class(claim.class_name)
    if not volumes:
        return f"no volume of class {claim.class_name}"
    said = [f"{pv.name} ({volume_mismatch(claim, pv, node, excluded, version)[0] or 'fits'})"
            for pv in volumes[:_SHOWN_VOLUMES]]
    more = f" and {len(volumes) - _SHOWN_VOLUMES} more" if len(volumes) > _SHOWN_VOLUMES else ""
    return f"no volume of class {claim.class_name} fits: {', '.join(said)}{more}"


def explain_pod_volumes(storage: Storage, claims: PodVolumeClaims, node: Node,
                        version: Version) -> list[tuple[str, str]]:
    """explain: per claim that keeps the pod off the node, what FindPodVolumes found
    (a bound volume missing or elsewhere; a claim's selected node; no static volume that
    fits and no provisioning: the class provisions nothing, its allowedTopologies exclude
    the node, or no CSIStorageCapacity of the class in the node's topology holds the
    request), each as (detail, what would make it pass)."""
    out: list[tuple[str, str]] = []
    for claim in claims.bound:
        pv = storage.pvs.get(claim.volume_name)
        if pv is None:
            out.append((f"claim {claim.key} is bound to volume {claim.volume_name}, which does not exist",
                        f"volume {claim.volume_name}"))
        elif not pv.node_affinity_matches(node):
            out.append((f"claim {claim.key}: its volume {pv.name}'s node affinity does not match the node",
                        f"a node matching volume {pv.name}'s node affinity"))
    to_match: list[PersistentVolumeClaim] = []
    to_provision: list[tuple[PersistentVolumeClaim, str]] = []
    for claim in claims.delayed:
        selected = claim.annotations.get(ANN_SELECTED_NODE)
        if selected is None:
            to_match.append(claim)
        elif selected != node.name:
            out.append((f"claim {claim.key} is being provisioned for node {selected} ({ANN_SELECTED_NODE})",
                        f"node {selected}"))
        else:
            to_provision.append((claim, ""))
    chosen: set[str] = set()
    for claim in sorted(to_match, key=lambda c: c.spec.request or 0):
        match = find_matching_volume(claim, storage.pvs_of_class(claim.class_name), node, chosen, version)
        if isinstance(match, PersistentVolume):
            chosen.add(match.name)
        elif match is None:
            to_provision.append((claim, _no_static_match(storage, claim, node, chosen, version)))
    for claim, static in to_provision:
        cls = storage.classes.get(claim.class_name)
        if cls is None:
            continue
        size = _gib(claim.spec.request or 0)
        head = f"claim {claim.key} ({size}, class {cls.name})" + (f": {static}" if static else "")
        if not cls.provisioner or cls.provisioner == NOT_SUPPORTED_PROVISIONER:
            out.append((f"{head}; the class provisions no volume (provisioner {cls.provisioner or 'none'})",
                        f"an available volume of class {cls.name} for claim {claim.key} that fits on the node"))
        elif not cls.topology_matches(node.labels):
            out.append((f"{head}; the class's allowedTopologies do not include the node",
                        f"a node in class {cls.name}'s allowedTopologies"))
        elif not has_enough_capacity(storage, claim, cls.name, cls.provisioner, node, version)[0]:
            caps = [c for c in storage.capacities if c.storage_class == cls.name and c.node_has_access(node)]
            if caps:
                shown = ", ".join(f"{c.namespace}/{c.name} {_gib(lim) if (lim := c.limit()) is not None else 'none'}"
                                  for c in caps)
                detail = f"capacity of class {cls.name} in the node's topology: {shown}"
            else:
                detail = f"no CSIStorageCapacity of class {cls.name} covers the node"
            out.append((f"claim {claim.key} requests {size}: {detail}",
                        f"{size} of class {cls.name} capacity in the node's topology"))
    return out


def pod_volume_claims(storage: Storage, pod: Pod, version: Version) -> PodVolumeClaims | Status | None:
    """podHasPVCs and GetPodVolumeClaims: None for a pod without claims, a Status when
    PreFilter rejects it. Before 1.23: ephemeral volumes only with the gate
    GenericEphemeralVolume (beta, on), a missing one's claim is the lookup's NotFound, a
    claim not controlled by the pod is "was not created for the pod", no Lost check."""
    old = version.minor < 23
    has = False
    claims: list[tuple[PersistentVolumeClaim, bool]] = []
    for v in pod.volumes:
        name = v.claim_name(pod.name)
        if name is None or (v.ephemeral is not None and not version.gate("GenericEphemeralVolume")):
            continue
        has = True
        claim = storage.claim(pod.namespace, name)
        if claim is None:
            if v.ephemeral is not None and not old:
                return unresolvable(f'waiting for ephemeral volume controller to create the persistentvolumeclaim '
                                    f'"{name}"')
            return unresolvable(not_found("persistentvolumeclaim", name))
        if claim.phase == "Lost" and not old:
            return unresolvable(f'persistentvolumeclaim "{claim.name}" bound to non-existent persistentvolume '
                                f'"{claim.volume_name}"')
        if claim.deleting:
            return unresolvable(f'persistentvolumeclaim "{claim.name}" is being deleted')
        if v.ephemeral is not None:
            if old:
                if claim.owner_pod != pod.name:
                    return unresolvable(f'persistentvolumeclaim "{claim.name}" was not created for the pod')
            else:
                err = ephemeral_owner_error(pod, claim)
                if err:
                    return unresolvable(err)
        claims.append((claim, v.ephemeral is not None))
    if not has:
        return None
    out = PodVolumeClaims()
    immediate = False
    for claim, _ in claims:
        if claim.fully_bound():
            out.bound.append(claim)
            continue
        delay = storage.is_delay_binding(claim)
        if isinstance(delay, str):
            return error(delay)
        if delay and not claim.volume_name:
            out.delayed.append(claim)
        else:
            immediate = True
    if immediate:
        return unresolvable(ERR_UNBOUND_IMMEDIATE)
    return out


class VolumeBindingFilter(Plugin, PreFilterPlugin, FilterPlugin):
    """VolumeBinding up to 1.20: filter only."""

    name = "VolumeBinding"
    signs_pods = True

    def node_events(self, hints: bool) -> frozenset[str]:
        """EventsToRegister's Node entry, with no hint (Queue): Add and UpdateNodeLabel,
        and UpdateNodeTaint with SchedulerQueueingHints off (the queue adds it for a
        plugin that registers Node/Add either way)."""
        return frozenset({"Add", "UpdateNodeLabel"} if hints else {"Add", "UpdateNodeLabel", "UpdateNodeTaint"})

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        return volumes_signer(pod)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        check_modelled(self, pod)
        storage = storage_of(self).binder_view()
        got = pod_volume_claims(storage, pod, self.version)
        if got is None:
            state.write(_STATE, None)
            # Skip from 1.27; before, Success and Filter passes every node
            return SKIP if self.version.minor >= 27 else SUCCESS
        if isinstance(got, Status):
            return got
        if 27 <= self.version.minor <= 28:
            self._check_eligible_nodes(got)
        state.write(_STATE, _State(got, storage))
        return SUCCESS

    def _check_eligible_nodes(self, claims: PodVolumeClaims) -> None:
        """GetEligibleNodes (1.27-1.28): PreFilter's result restricts the search to the
        hostnames of the bound local volumes' node affinity (per term, the hostname In
        values intersected; the terms' union). kspread does not model that PreFilterResult:
        where a node it leaves out would pass the volumes' node affinity (a term that does
        not name hosts), the case is an error; elsewhere the left-out nodes fail the
        affinity check anyway (upstream reports no status for them)."""
        storage = storage_of(self)
        eligible: set[str] | None = None
        volumes = []
        for claim in claims.bound:
            pv = storage.pvs.get(claim.volume_name)
            if pv is None:
                return
            volumes.append(pv)
            names: set[str] = set()
            for term in pv.node_affinity or ():
                hosts: set[str] | None = None
                for r in term.match_expressions:
                    if r.key == HOSTNAME_LABEL and r.op == "In":
                        hosts = set(r.values) if hosts is None else hosts & set(r.values)
                names |= hosts or set()
            if pv.node_affinity and names:
                eligible = names if eligible is None else eligible & names
        if eligible is None:
            return
        for info in self.handle.snapshot:
            node = info.node
            if node.name not in eligible and all(pv.node_affinity_matches(node) for pv in volumes):
                raise CaseError(f"node {node.name!r} passes the bound volumes' node affinity but is not among the "
                                "hostnames VolumeBinding's PreFilter returns in 1.27-1.28 (GetEligibleNodes): "
                                "kspread does not model that PreFilterResult")

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        return True

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        return True

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        st = state.get(_STATE)
        if not isinstance(st, _State):
            return SUCCESS
        got = find_pod_volumes(st.storage, st.claims, node_info.node, self.version)
        if isinstance(got, str):
            return error(got)
        chosen, reasons = got
        if reasons:
            return unresolvable(*reasons)
        st.by_node[node_info.name] = chosen
        st.has_static = st.has_static or bool(chosen.static)
        return SUCCESS

    def volume_lacks(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> list[tuple[str, str]]:
        """explain: which claims keep the pod off the node, and why."""
        st = state.get(_STATE)
        if not isinstance(st, _State):
            return []
        return explain_pod_volumes(st.storage, st.claims, node_info.node, self.version)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> list[PodEvent]:
        """Reserve in a run: ``reserve_volumes`` on the node (no event: the assume caches
        are not informers)."""
        if self.handle.storage is not None and pod.volumes:
            self.reserve_volumes(state, pod, self.handle.snapshot.get(node_name).node)
        return []

    def reserve_volumes(self, state: CycleState, pod: Pod, node: Node) -> None:
        """Reserve (AssumePodVolumes): what Filter chose on ``node`` goes into the assume
        caches, which later cycles' VolumeBinding reads until PreBind writes it
        (``bind_volumes``) or Unreserve reverts it (``Storage.revert_pod_volumes``).
        Nothing when every claim of the pod is bound (allBound)."""
        storage = storage_of(self)
        st = state.get(_STATE)
        view = storage.binder_view()
        claims = st.claims if isinstance(st, _State) else pod_volume_claims(view, pod, self.version)
        if not isinstance(claims, PodVolumeClaims) or not claims.delayed:
            return
        chosen = st.by_node.get(node.name) if isinstance(st, _State) else None
        if chosen is None:
            got = find_pod_volumes(view, claims, node, self.version)
            if isinstance(got, str) or got[1]:
                return
            chosen = got[0]
        storage.assume_pod_volumes(pod.key, node.name, chosen.static, chosen.provision)

    def bind_volumes(self, pod: Pod, node: Node) -> list[PodEvent]:
        """PreBind (BindPodVolumes) in a sequence, the PV controller and the provisioner
        acting at once: what the pod's Reserve assumed is written (the static volumes
        bound to their claims, the claims to provision bound to new volumes) and leaves
        the assume caches. Returns the storage events: a static volume's PVUpdate and its
        claim's PVCUpdate; a provisioned claim's PVCUpdate (the selected-node annotation,
        then the binding: one event) and its volume's PVAdd."""
        storage = storage_of(self)
        record = storage.assumptions.pop(pod.key, None)
        if record is None:
            return []
        changed = [name for _, name, base in record.static if storage.pvs.get(name) is not base]
        changed += [key for key, base in record.provision if storage.pvcs.get(key) is not base]
        if changed:
            raise CaseError(f"pod {pod.key}'s VolumeBinding PreBind writes {', '.join(changed)} as its Reserve "
                            "assumed them, and they changed since (another pod's binding wrote them): upstream's "
                            "update then conflicts, which kspread does not model", ["schedule"])
        events: list[PodEvent] = []
        for key, name, _ in record.static:
            storage.assumed_pvs.pop(name, None)
            storage.bind_claim_to_volume(storage.pvcs[key], storage.pvs[name])
            events += [PodEvent("PVUpdate", pod, obj=storage.pvs[name]),
                       PodEvent("PVCUpdate", pod, obj=storage.pvcs[key])]
        for key, _ in record.provision:
            storage.assumed_pvcs.pop(key, None)
            new = storage.provision(storage.pvcs[key], node)
            events += [PodEvent("PVCUpdate", pod, obj=storage.pvcs[key]), PodEvent("PVAdd", pod, obj=new)]
        return events

    pod_events = frozenset({"PVCUpdate", "PVAdd", "PVUpdate"})

    def pre_bind_pre_flight(self, state: CycleState) -> bool:
        """PreBindPreFlight (1.34+): PreBind has work unless every claim of the pod is
        bound (Reserve's allBound): a claim waiting for its first consumer is bound there."""
        st = state.get(_STATE)
        return isinstance(st, _State) and bool(st.claims.delayed)

    def pod_event_hint(self, pod: Pod, event: PodEvent) -> bool:
        """isSchedulableAfterPersistentVolumeClaimChange: a claim the pod uses; a volume
        added or changed: Queue (no hint)."""
        if event.action == "PVCUpdate":
            claim = event.obj
            return claim.namespace == pod.namespace and any(
                v.claim_name(pod.name) == claim.name for v in pod.volumes)
        return True


def scoring_gate(version: Version) -> str:
    return "StorageCapacityScoring" if version.minor >= 33 else "VolumeCapacityPriority"


def default_shape(version: Version) -> tuple[ShapePoint, ...]:
    """SetDefaults_VolumeBindingArgs with the scoring gate on."""
    if version.minor >= 33:
        return (ShapePoint(0, 10), ShapePoint(100, 0))
    return (ShapePoint(0, 0), ShapePoint(100, 10))


class VolumeBindingScoring(VolumeBindingFilter, PreScorePlugin, ScorePlugin):
    """VolumeBinding from 1.21: Score with the storage capacity scoring gate on."""

    def __init__(self, args, handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        self.scorer: tuple[ShapePoint, ...] | None = None
        if self.version.gate(scoring_gate(self.version)):
            shape = (args or {}).get("shape") or default_shape(self.version)
            self.scorer = tuple(ShapePoint(p.utilization, p.score * 10) for p in shape)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        if not volume_binding_pre_score_skips(self.version):
            return SUCCESS
        if self.scorer is None:
            return SKIP
        st = state.get(_STATE)
        if (isinstance(st, _State) and st.has_static) or (
                self.version.minor >= 33 and self.version.gate("StorageCapacityScoring")):
            return SUCCESS
        return SKIP

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        """Score over the nodes: 0 where the pod's claims chose no volume on the node (every
        node for a pod without claims, which StorageCapacityScoring scores from 1.37's
        default profile), ``score`` on the others. No loop over every node for such a pod."""
        out = np.zeros(len(nodes), np.int64)
        st = state.get(_STATE)
        if self.scorer is None or not isinstance(st, _State) or not st.by_node:
            return out
        for i, name in enumerate(nodes.names):
            if name in st.by_node:
                s, status = self.score(state, pod, name)
                if not status.is_success():
                    raise ScoreFailed(status)
                out[i] = s
        return out

    def score(self, state: CycleState, pod: Pod, node_name: str) -> tuple[int, Status]:
        st = state.get(_STATE)
        if self.scorer is None or not isinstance(st, _State):
            return 0, SUCCESS
        chosen = st.by_node.get(node_name)
        if chosen is None:
            return 0, SUCCESS
        classes: dict[str, list[int]] = {}  # class -> [requested, capacity]
        capacity_scoring = self.version.minor >= 33 and self.version.gate("StorageCapacityScoring")
        if chosen.static or not capacity_scoring:
            for claim, pv in chosen.static:
                r = classes.setdefault(pv.storage_class, [0, 0])
                r[0] += claim.spec.request or 0
                r[1] += pv.capacity
        else:
            for claim, cap in zip(chosen.provision, chosen.capacities):
                if cap is None:
                    continue
                if cap.capacity is None:
                    raise CaseError(f"CSIStorageCapacity {cap.namespace}/{cap.name} has no capacity: upstream's "
                                    "VolumeBinding Score reads it (a nil pointer); kspread does not model that")
                r = classes.setdefault(claim.class_name, [0, 0])
                r[1] = cap.capacity
                r[0] += claim.spec.request or 0
        if not classes:
            return 0, SUCCESS
        total = 0
        for requested, capacity in classes.values():
            util = MAX_UTILIZATION if capacity == 0 or requested > capacity else requested * MAX_UTILIZATION // capacity
            total += broken_linear(self.scorer, util)
        return (2 * total + len(classes)) // (2 * len(classes)), SUCCESS


@register("VolumeBinding", first=12)
def _volume_binding(args, handle, config_path: tuple = ()) -> Plugin:
    if volume_binding_scores(handle.version):
        return VolumeBindingScoring(args, handle, config_path)
    return VolumeBindingFilter(args, handle, config_path)
