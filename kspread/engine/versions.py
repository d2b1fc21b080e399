"""Supported kube-scheduler minor versions and what differs between them.

Every version difference kspread models is a named property of ``Version`` (the
behaviour flags), so plugins ask ``version.selector_spread_match`` rather than
comparing numbers; the README's table of versions is the human form of this
module. Feature gates that change scheduling are listed in ``FEATURE_GATES`` with
their per-version defaults, so a case's ``featureGates`` override them as
``--feature-gates`` would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kspread.errors import CaseError, did_you_mean

OLDEST_MINOR = 12
NEWEST_MINOR = 37  # upstream main, in development


@dataclass(frozen=True, slots=True)
class GateStage:
    since: int  # first minor with this stage
    default: bool
    stage: str  # ALPHA, BETA, GA, DEPRECATED
    locked: bool = False


@dataclass(frozen=True, slots=True)
class FeatureGate:
    name: str
    stages: tuple[GateStage, ...]
    removed: int | None = None  # first minor that no longer knows the gate

    def stage_at(self, minor: int) -> GateStage | None:
        if minor < self.stages[0].since or (self.removed is not None and minor >= self.removed):
            return None
        current = self.stages[0]
        for s in self.stages:
            if s.since <= minor:
                current = s
        return current


def _gate(name: str, *stages: tuple[int, bool, str], removed: int | None = None) -> FeatureGate:
    return FeatureGate(
        name,
        tuple(GateStage(m, d, st, locked=(st == "GA")) for m, d, st in stages),
        removed,
    )


# The gates whose value changes what kspread computes. Stages from upstream's
# pkg/features (versioned specs); a gate is "locked" once GA, as upstream locks them.
FEATURE_GATES: dict[str, FeatureGate] = {
    g.name: g
    for g in (
        _gate("EvenPodsSpread", (16, False, "ALPHA"), (18, True, "BETA"), (19, True, "GA"), removed=21),
        _gate("DefaultPodTopologySpread", (19, False, "ALPHA"), (20, True, "BETA"), (24, True, "GA"), removed=26),
        _gate("NonPreemptingPriority", (15, False, "ALPHA"), (19, True, "BETA"), (24, True, "GA"), removed=26),
        _gate("PodOverhead", (16, False, "ALPHA"), (18, True, "BETA"), (24, True, "GA"), removed=26),
        _gate("PreferNominatedNode", (21, False, "ALPHA"), (22, True, "BETA"), (24, True, "GA"), removed=26),
        _gate(
            "MinDomainsInPodTopologySpread",
            (24, False, "ALPHA"), (25, False, "BETA"), (27, True, "BETA"), (30, True, "GA"),
            removed=32,
        ),
        _gate(
            "NodeInclusionPolicyInPodTopologySpread",
            # GA and locked from 1.33; still listed in upstream main (1.37).
            (25, False, "ALPHA"), (26, True, "BETA"), (33, True, "GA"),
        ),
        _gate("MatchLabelKeysInPodTopologySpread", (25, False, "ALPHA"), (27, True, "BETA")),
        # The API server's side of it (format/labelkeys.py): from 1.34 it merges a spread
        # constraint's matchLabelKeys into its labelSelector when it creates a pod, and
        # validates the merged selector; the scheduler merges them again, to the same pods.
        _gate("MatchLabelKeysInPodTopologySpreadSelectorMerge", (34, True, "BETA")),
        _gate("PodDisruptionConditions", (25, False, "ALPHA"), (26, True, "BETA"), (31, True, "GA"), removed=33),
        _gate("SidecarContainers", (28, False, "ALPHA"), (29, True, "BETA"), (33, True, "GA")),
        # InterPodAffinity (plugins/interpodaffinity.py): namespaceSelector in pod affinity
        # terms (KEP-2249), and matchLabelKeys / mismatchLabelKeys (KEP-3633).
        _gate("PodAffinityNamespaceSelector", (21, False, "ALPHA"), (22, True, "BETA"), (24, True, "GA"), removed=26),
        # The API server's side of namespaceSelector (KEP-2161, pkg/registry/core/namespace
        # strategy.go Canonicalize): every Namespace carries kubernetes.io/metadata.name=<its
        # name>, whatever the object says (model.Cluster.namespace_labels).
        _gate("NamespaceDefaultLabelName", (21, True, "BETA"), (22, True, "GA"), removed=24),
        _gate("MatchLabelKeysInPodAffinity", (29, False, "ALPHA"), (31, True, "BETA"), (33, True, "GA")),
        # InterPodAffinity's hostname fast path (1.37, upstream main's filtering.go): terms with
        # topologyKey kubernetes.io/hostname checked on the filtered node's own pods, not in
        # the topology maps. Not only faster: nodes sharing a hostname value, matching pods on
        # nodes without the label and PreFilter's Skip differ (plugins/interpodaffinity.py).
        _gate("InterPodAffinityHostnameFastPath", (37, False, "ALPHA")),
        # Toleration matching (corev1helpers.py toleration_tolerates, used by
        # TaintToleration, NodeUnschedulable, PodTopologySpread's nodeTaintsPolicy and
        # preemption): the Lt / Gt operators (KEP-5471). Still alpha in upstream main.
        _gate("TaintTolerationComparisonOperators", (35, False, "ALPHA")),
        # Pod-level resources, spec.resources (KEP-2837): NodeResourcesFit's filter and
        # every resource scorer (kspread/engine/resources.py).
        _gate("PodLevelResources", (32, False, "ALPHA"), (34, True, "BETA")),
        # The scheduling queue of a ``schedule`` sequence (kspread/engine/queue.py):
        # plugins' queueing hints (KEP-4247; beta on in 1.28.0, off from the 1.28 patch
        # releases -- upstream's versioned spec records 1.28 as off -- to 1.31, on from 1.32,
        # GA and locked from 1.34), and popping backoffQ when activeQ is empty (KEP-5142).
        # In-place pod resize (KEP-1287; kspread/engine/resources.py): a bound pod's status
        # resources (containerStatuses' resources / allocatedResources) and pending resize
        # (status.resize to 1.32, the PodResizePending condition from 1.33) in NodeInfo and
        # the resource scorers; and the pod-level status resources (KEP-5419).
        _gate("InPlacePodVerticalScaling", (27, False, "ALPHA"), (33, True, "BETA"), (35, True, "GA")),
        _gate("InPlacePodLevelResourcesVerticalScaling", (35, False, "ALPHA"), (36, True, "BETA")),
        # The NodeDeclaredFeatures plugin (plugins/nodedeclaredfeatures.py, KEP-5328): nodes'
        # status.declaredFeatures against the features a pod's spec needs.
        _gate("NodeDeclaredFeatures", (35, False, "ALPHA"), (36, True, "BETA"), (37, True, "GA")),
        # Nomination timing (docs/reference/sequences.md, "Nomination timing"): a preemption's
        # API calls in a goroutine (KEP-4832), and nominatedNodeName set at the start of a
        # binding cycle whose PreBind or Permit will wait (KEP-5278). Under a sequence's
        # clock rule both finish before the next pod is popped: accepted, same placements.
        _gate("SchedulerAsyncPreemption", (32, False, "ALPHA"), (33, True, "BETA")),
        _gate("NominatedNodeNameForExpectation", (34, False, "ALPHA"), (35, True, "BETA")),
        _gate("SchedulerQueueingHints", (28, False, "BETA"), (32, True, "BETA"), (34, True, "GA")),
        _gate("SchedulerPopFromBackoffQ", (33, True, "BETA")),
        # spec.schedulingGates and the SchedulingGates PreEnqueue plugin (KEP-3521): a pod
        # with a gate waits outside activeQ until its last gate is removed (queue.py)
        _gate("PodSchedulingReadiness", (26, False, "ALPHA"), (27, True, "BETA"), (30, True, "GA"), removed=32),
        # KEP-5598: a pod with the signature of the pod just scheduled takes the next node
        # of that cycle's sorted list if it passes the filters (kspread/engine/scheduler.py)
        _gate("OpportunisticBatching", (35, True, "BETA")),
        # Dynamic resource allocation (plugins/dynamicresources.py, allocator.py): GA in
        # 1.34 but locked only from 1.35; admin access and prioritized lists.
        FeatureGate("DynamicResourceAllocation", (GateStage(26, False, "ALPHA"), GateStage(32, False, "BETA"),
                                                  GateStage(34, True, "GA"), GateStage(35, True, "GA", locked=True))),
        _gate("DRAAdminAccess", (32, False, "ALPHA"), (34, True, "BETA"), (36, True, "GA")),
        FeatureGate("DRAPrioritizedList", (GateStage(33, False, "ALPHA"), GateStage(34, True, "BETA"),
                                           GateStage(36, True, "GA"), GateStage(37, True, "GA", locked=True))),
        # devices' taints and requests' tolerations (allocator.py taint_prevents_allocation);
        # GA in 1.37 but not locked there
        FeatureGate("DRADeviceTaints", (GateStage(33, False, "ALPHA"), GateStage(36, True, "BETA"),
                                        GateStage(37, True, "GA"))),
        # DeviceTaintRules (devicetaints.py): in 1.33-1.34 read while DRADeviceTaints is on,
        # from 1.35 behind their own gate, which depends on DRADeviceTaints
        # (GA in 1.37 but not locked there)
        FeatureGate("DRADeviceTaintRules", (GateStage(35, False, "ALPHA"), GateStage(36, False, "BETA"),
                                            GateStage(37, True, "GA"))),
        # counter sets, devices consuming them, per-device node selection (allocator.py)
        _gate("DRAPartitionableDevices", (33, False, "ALPHA"), (36, True, "BETA")),
        # devices shared by several allocations, request capacity, distinctAttribute
        # (allocator.py, after upstream's "experimental" allocator; modelled from 1.35)
        _gate("DRAConsumableCapacity", (34, False, "ALPHA"), (36, True, "BETA")),
        # extended resources backed by devices: NodeResourcesFit leaves them to
        # DynamicResources, which allocates them in a claim made for the pod (from 1.35)
        _gate("DRAExtendedResource", (34, False, "ALPHA"), (36, True, "BETA"), (37, True, "GA")),
        # devices' binding conditions (allocator.py; PreBind's wait in a sequence: scheduler.py)
        # need both gates
        _gate("DRADeviceBindingConditions", (34, False, "ALPHA"), (36, True, "BETA")),
        _gate("DRAResourceClaimDeviceStatus", (32, False, "ALPHA"), (33, True, "BETA"), (37, True, "GA")),
        # devices' list attributes (ints, bools, strings, versions), CEL's includes(), and
        # matchAttribute / distinctAttribute over value sets (allocator.py, devicecel.py)
        _gate("DRAListTypeAttributes", (36, False, "ALPHA")),
        # The volume plugins (plugins/volumebinding.py, nodevolumelimits.py): a claim's and
        # a volume's volumeAttributesClassName in FindMatchingVolume (GA in 1.34, locked
        # from 1.36), and NodeVolumeLimits' check that a volume's CSI driver is installed.
        FeatureGate("VolumeAttributesClass", (GateStage(29, False, "ALPHA"), GateStage(31, False, "BETA"),
                                              GateStage(34, True, "GA"), GateStage(36, True, "GA", locked=True))),
        _gate("VolumeLimitScaling", (35, False, "ALPHA"), (37, True, "BETA")),
        # VolumeRestrictions' ReadWriteOncePod check (KEP-2485)
        _gate("ReadWriteOncePod", (22, False, "ALPHA"), (27, True, "BETA"), (29, True, "GA"), removed=31),
        # VolumeBinding's Score (KEP-1845): VolumeCapacityPriority to 1.32 (static volumes,
        # default shape favours fuller volumes), renamed StorageCapacityScoring in 1.33
        # (also provisioned volumes by CSIStorageCapacity, default shape favours free space).
        _gate("VolumeCapacityPriority", (21, False, "ALPHA"), removed=33),
        # VolumeBinding's check of CSIStorageCapacity objects for drivers with
        # storageCapacity (KEP-1472; v1beta1 objects to 1.23, v1 from 1.24).
        # Generic ephemeral volumes in VolumeBinding (KEP-1698; the other volume plugins read
        # them from 1.23, when the gate is locked on).
        FeatureGate("GenericEphemeralVolume", (GateStage(19, False, "ALPHA"), GateStage(21, True, "BETA"),
                                               GateStage(23, True, "GA", locked=True)), 25),
        FeatureGate("CSIStorageCapacity", (GateStage(19, False, "ALPHA"), GateStage(21, True, "BETA"),
                                           GateStage(24, True, "GA", locked=True)), 28),
        _gate("StorageCapacityScoring", (33, False, "ALPHA"), (37, True, "BETA")),
        # Workloads and gangs (KEP-4671), which depend on GenericWorkload: 1.35's Workload
        # API, pods' spec.workloadRef and the GangScheduling plugin's Permit wait
        # (plugins/gangscheduling.py); 1.36's PodGroup objects, pods' spec.schedulingGroup
        # and the pod group scheduling cycle (plugins/podgroups.py, podgroupcycle.py).
        # 1.37 (upstream main) is refused by name (make_version, GANGS_1_37).
        _gate("GenericWorkload", (35, False, "ALPHA"), (37, False, "BETA")),
        # 1.37 merged GangScheduling and WorkloadAwarePreemption (workload-aware preemption
        # of 1.36's pod groups, podgrouppreemption.py) into GenericWorkload (MERGED_GATES)
        _gate("GangScheduling", (35, False, "ALPHA"), removed=37),
        FeatureGate("WorkloadAwarePreemption", (GateStage(36, False, "ALPHA"),), 37),
        # 1.36's placement-based pod group algorithm (PodGroups' schedulingConstraints, the
        # TopologyPlacementGenerator and PodGroupPodsCount plugins: podgroupplacement.py)
        _gate("TopologyAwareWorkloadScheduling", (36, False, "ALPHA")),
        # PodGroup spec.resourceClaims: claims shared by a group's pods, reserved for the
        # PodGroup (plugins/dynamicresources.py, format/devices.py)
        _gate("DRAWorkloadResourceClaims", (36, False, "ALPHA"), (37, False, "BETA")),
        # devices' nodeAllocatableResourceMappings: DynamicResources' Filter checks the cpu,
        # memory, ... a pod's claims take with its requests, the assumed pod's
        # status.nodeAllocatableResourceClaimStatuses counts in NodeInfo (resources.py)
        _gate("DRANodeAllocatableResources", (36, False, "ALPHA")),
    )
}


def _unmodelled(name: str, why: str, *stages: tuple[int, bool, str], removed: int | None = None,
                locked_from: int | None = None, same: bool = True) -> tuple[FeatureGate, str]:
    """An unmodelled gate and the reason a case may not set it: by default that kspread
    computes the same either way, because ``why``; ``same=False``: ``why`` says what kspread
    computes instead (it differs from upstream with the gate on)."""
    g = FeatureGate(
        name,
        tuple(GateStage(m, d, st, locked=(locked_from is not None and m >= locked_from)) for m, d, st in stages),
        removed,
    )
    return g, (f"kspread computes the same with it on or off, because {why}" if same else why)


# Gates the scheduler reads (in the plugins kspread covers or in the scheduling cycle
# around them) that kspread does not model: setting one in ``featureGates`` is an
# error that says so. Their default is harmless to every case kspread can express,
# which is the reason given with each. Stages from upstream main's scheduler feature
# list (versioned specs, read for 1.37).
# Gates kspread models only from a later minor than the first that has them: turning one
# on before is an error naming why.
MODELLED_FROM: dict[str, tuple[int, str]] = {
    "DRAExtendedResource": (35, ("1.34's DynamicResources maps extended resources to device classes in its own "
                                "way (no implicit names)")),
    "DRADeviceBindingConditions": (35, "kspread models binding conditions after upstream's v1.35 allocator"),
    "DRAConsumableCapacity": (35, ("1.34's allocator checks a candidate's capacity against the slice's device at "
                                  "the request's device index")),
}


# Gates upstream folded into another: from that minor on the gate is unknown, and what it
# enabled follows the other gate (kubernetes/kubernetes#139520, upstream main for 1.37:
# GenericWorkload enables the Workload and PodGroup APIs, gang scheduling and workload-aware
# preemption together).
MERGED_GATES: dict[str, tuple[str, int]] = {
    "GangScheduling": ("GenericWorkload", 37),
    "WorkloadAwarePreemption": ("GenericWorkload", 37),
}

# What 1.37 (upstream main) has of workload-aware scheduling that kspread does not model, so
# that GenericWorkload on at 1.37 is refused with it (read from upstream main: see
# dev/README.md, "1.37 workload-aware scheduling").
GANGS_1_37 = ("kspread models gangs as 1.35 (v1alpha1 Workloads, the GangScheduling plugin's Permit wait) and 1.36 "
              "(v1alpha2 PodGroups, the pod group scheduling cycle, workload-aware preemption) have them, not 1.37's: "
              "Workloads and PodGroups served as scheduling.k8s.io/v1beta1 and v1alpha3, a pod group queued and "
              "popped as one entity, the root pod group algorithm (RunRootSchedulingAlgorithm) and PodGroupPostFilter "
              "plugins, a group that fails before scheduling when a pod's priority differs from the PodGroup's or its "
              "pods' preemption policies differ (validatePodGroup), and the PodGroupInitiallyScheduled condition")
_GANGS_1_37_ONLY = ("it acts only on pod groups, which kspread refuses at 1.37 (GenericWorkload on is refused: "
                    "1.37's workload-aware scheduling is not modelled)")

# 1.37's scheduler preemption for a deferred in-place resize (KEP-5836): what kspread would
# need, read from upstream main's deferredpodscheduling plugin and its integration test.
RESIZE_PREEMPTION_1_37 = (
    "with it 1.37 schedules a bound pod whose resize is Deferred (PodResizePending, reason Deferred): the pod "
    "enters the scheduling queue although bound, the DeferredPodScheduling plugin keeps it to its own node and "
    "off a node whose spec.podPreemptionPolicy.disableResizePreemption is set, most other filters skip it, "
    "preemption evicts on its node for the resized requests, and its Permit always rejects the pod so that it "
    "waits for the kubelet to actuate the resize; kspread's queue takes no bound pod and models neither the "
    "kubelet's actuation nor a Node's podPreemptionPolicy, so it computes deferred resizes as with the gate off "
    "(its default): nothing is preempted on a resize's behalf")
# 1.37's pre-queueing hints (KEP-6132): what could and could not be read.
PRE_QUEUEING_HINTS_1_37 = (
    "the queue's side of it in 1.37 (moveAllToActiveOrBackoffQueue asking each plugin's PreQueueingHintFn "
    "which pods its QueueingHint is to see for an event) is not among the upstream sources kspread could "
    "read, only the KEP and DynamicResources' tests; DynamicResources' hint narrows a ResourceClaim event to "
    "the pods whose spec or status names the claim (every pod for a deallocation or a deletion), but which pods "
    "the queue then offers the event to (those rejected by other plugins too, those with no rejecting plugin) "
    "is that unread code's; kspread's queue follows the queueing hints of the plugins it models, as with the "
    "gate off (its default)")

UNMODELLED_GATES: dict[str, tuple[FeatureGate, str]] = {
    g.name: (g, why)
    for g, why in (
        _unmodelled("DRASchedulerFilterTimeout", "kspread's allocator has no wall clock: a filter never times out",
                    (34, True, "BETA")),
        _unmodelled("SchedulerAsyncAPICalls", "kspread makes no API calls", (34, False, "BETA")),
        # CompositePodGroup: CompositePodGroup objects (v1alpha3), PodGroups' and Workloads'
        # hierarchy fields; PodGroupPreemptionPolicy: a PodGroup's spec.preemptionPolicy
        _unmodelled("CompositePodGroup", _GANGS_1_37_ONLY, (37, False, "ALPHA")),
        _unmodelled("PodGroupPreemptionPolicy", _GANGS_1_37_ONLY, (37, False, "ALPHA")),
        # KEP-5836, read from upstream main (dev/README.md, "1.37 single-feature gates")
        _unmodelled("InPlacePodVerticalScalingSchedulerPreemption", RESIZE_PREEMPTION_1_37, (37, False, "ALPHA"),
                    same=False),
        # KEP-6132, read from upstream main (dev/README.md, "1.37 single-feature gates")
        _unmodelled("SchedulerPreQueueingHints", PRE_QUEUEING_HINTS_1_37, (37, False, "ALPHA"), same=False),
    )
}


@dataclass(frozen=True)
class Version:
    """A kube-scheduler minor version with the feature gates of one run."""

    minor: int
    gates: Mapping[str, bool] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"1.{self.minor}"

    def __str__(self) -> str:
        return self.name

    def at_least(self, minor: int) -> bool:
        return self.minor >= minor

    def gate(self, name: str) -> bool:
        """The value of a feature gate; a gate this version does not know is off
        (before it existed) or on (after it was removed as GA)."""
        if name in self.gates:
            return self.gates[name]
        merged = MERGED_GATES.get(name)
        if merged is not None and self.minor >= merged[1]:
            return self.gate(merged[0])
        g = FEATURE_GATES[name]
        st = g.stage_at(self.minor)
        if st is not None:
            return st.default
        return g.removed is not None and self.minor >= g.removed

    # ---- scoring scale and aggregation -------------------------------------------

    @property
    def legacy_priorities(self) -> bool:
        """Up to 1.17 the scheduler ran predicates and map/reduce priority functions
        (generic_scheduler PrioritizeNodes); from 1.18 the framework's plugins."""
        return self.minor <= 17

    @property
    def max_node_score(self) -> int:
        """MaxPriority 10 before 1.17, framework.MaxNodeScore 100 from 1.17."""
        return 10 if self.minor < 17 else 100

    @property
    def extender_score_scale(self) -> int:
        """Extender scores (0..MaxExtenderPriority=10) are multiplied by
        MaxNodeScore/MaxExtenderPriority from 1.17; before, both ranges were 0..10."""
        return self.max_node_score // 10

    @property
    def checks_score_range(self) -> bool:
        """The framework rejects a normalized plugin score outside [0, MaxNodeScore]."""
        return not self.legacy_priorities

    @property
    def adaptive_percentage_of_nodes(self) -> bool:
        """percentageOfNodesToScore 0 means adaptive (50 - n/125, at least 5%) from 1.14;
        in 1.12/1.13 a value <= 0 means all nodes."""
        return self.minor >= 14

    @property
    def queue_filters_events_by_plugin(self) -> bool:
        """From 1.21 an event moves only the unschedulable pods whose rejecting plugins
        registered it (EventsToRegister, podMatchesEvent); before, AssignedPodAdd moved
        the pods with a required affinity term it matches and any other event every
        unschedulable pod."""
        return self.minor >= 21

    @property
    def queue_requeues_spread_pods_on_add(self) -> bool:
        """From 1.31 (PR #122627) AssignedPodAdded, with queueing hints off, also offers the
        event to the pods PodTopologySpread rejected in the added pod's namespace
        (getUnschedulablePodsWithCrossTopologyTerm); before, only to pods with a required
        affinity term the added pod matches."""
        return self.minor >= 31

    @property
    def queue_sees_nomination_changes(self) -> bool:
        """From 1.33 (PR #129058) a pending pod whose nominated node changes or is cleared
        is, to the queue, an AssignedPodDelete for the pods of its priority or less
        (hasNominatedNodeNameChanged, getLEPriorityPreCheck)."""
        return self.minor >= 33

    @property
    def queue_sees_bound_nomination(self) -> bool:
        """In 1.33 and 1.34 a pod bound with a nomination is, to the queue, an
        AssignedPodDelete for the pods of its priority or less: the unscheduled pods'
        informer handler (a FilteringResourceEventHandler) sees the binding as the pod's
        deletion (OnDelete of the old object, nominatedNodeName set), and
        deletePodFromSchedulingQueue moves pods as for a nominated pod deleted. From 1.35
        (deletePodFromSchedulingQueue's ``inBinding``) a binding moves none there."""
        return self.queue_sees_nomination_changes and self.minor <= 34

    @property
    def csi_driver_check_needs_opt_in(self) -> bool:
        """From 1.36 NodeVolumeLimits' check that a volume's CSI driver is on the node
        (VolumeLimitScaling) applies only to a CSIDriver with
        spec.preventPodSchedulingIfMissing true; 1.35 checks every CSIDriver."""
        return self.minor >= 36

    @property
    def pod_hints_see_nominated_pods(self) -> bool:
        """From 1.36 (PR #135392) InterPodAffinity's and PodTopologySpread's pod-event
        queueing hints take a pending pod with a nominated node (an AssignedPodDelete for a
        nomination changed or cleared, or for a nominated pod deleted) as they take a bound
        one; before, every pod without a node was skipped."""
        return self.minor >= 36

    @property
    def affinity_hint_sees_deleted_anti_affinity(self) -> bool:
        """From 1.36 (PR #135325) InterPodAffinity's hint for a deleted pod also answers
        Queue when the deleted pod's own required anti-affinity matched the pending pod."""
        return self.minor >= 36

    @property
    def search_counts_dropped_node(self) -> bool:
        """Up to 1.16 each node the search checks is taken from the node tree's iterator
        (NodeTree().Next()), so the feasible node found beyond the last needed, dropped,
        has moved the iterator past it too; from 1.17 (the snapshot list and nextStartNodeIndex)
        processedNodes counts the feasible nodes kept and the statuses only."""
        return self.minor <= 16

    @property
    def snapshot_keeps_node_list(self) -> bool:
        """From 1.18 UpdateSnapshot lists the node tree afresh only when a node came into the
        snapshot or left it (updateAllLists): a node the tree moved to another zone keeps its
        place in the list; up to 1.17 each snapshot listed the tree."""
        return self.minor >= 18

    @property
    def heap_breaks_ties(self) -> bool:
        """From 1.35 (OpportunisticBatching's sortedNodeScores) the node is the first pop of a
        heap over the scored nodes in search order; equal totals are ordered by each node's
        Randomizer, which prioritizeNodes sets only for nodes an extender scored: otherwise
        the heap's own structure decides (up to 1.34 selectHost picks one at random)."""
        return self.minor >= 35

    @property
    def first_fit_without_scoring(self) -> bool:
        """From 1.30 the search stops at the first feasible node when nothing scores."""
        return self.minor >= 30

    # ---- SelectorSpread -----------------------------------------------------------

    @property
    def selector_spread_match(self) -> str:
        """How SelectorSpread matches a pod against the owners' selectors:
        'any' (<=1.13), 'all' (1.14-1.16, PR #72801), 'merged' single selector (1.17+)."""
        if self.minor <= 13:
            return "any"
        if self.minor <= 16:
            return "all"
        return "merged"

    @property
    def default_selector_by_owner_ref(self) -> bool:
        """DefaultSelector finds the RC/RS/StatefulSet through the pod's controller
        ownerReference from 1.22 (PR #102236); before, every one whose selector matches."""
        return self.minor >= 22

    @property
    def zone_key_reads_ga_labels(self) -> bool:
        """GetZoneKey falls back to topology.kubernetes.io/{zone,region} from 1.17."""
        return self.minor >= 17

    @property
    def selector_spread_skips_topology_spread_pods(self) -> bool:
        """From 1.18 SelectorSpread scores 0 for pods with topologySpreadConstraints."""
        return self.minor >= 18

    @property
    def has_selector_spread(self) -> bool:
        return self.minor <= 28

    @property
    def zones_shorthand_sets_beta_label(self) -> bool:
        """The ``zones`` shorthand also sets failure-domain.beta.kubernetes.io/zone while
        the scheduler has a reader of it (GetZoneKey, used by SelectorSpread, up to 1.28)."""
        return self.minor <= 28

    # ---- PodTopologySpread (plugins/podtopologyspread.py) ------------------------

    @property
    def pts_missing_label_unresolvable(self) -> bool:
        """Filter on a node without a constraint's topology key: from 1.19
        UnschedulableAndUnresolvable "... (missing required label)"; in 1.18
        Unschedulable with the plain constraints reason."""
        return self.minor >= 19

    @property
    def pts_filter_passes_without_domains(self) -> bool:
        """1.18 only: Filter passes every node when PreFilter found no eligible domain
        at all (TpPairToMatchNum empty), even nodes lacking the topology key."""
        return self.minor == 18

    @property
    def pts_counts_pods_off_affinity(self) -> bool:
        """1.19-1.23 PreFilter bug (fixed by PR #107009): domains come from nodes that
        match the pod's required node affinity, but pods are counted on every node
        whose (key, value) is such a domain, matching the affinity or not."""
        return 19 <= self.minor <= 23

    @property
    def pts_weighted_scoring(self) -> bool:
        """From 1.19 (PRs #90475, #90820): scoreForCount with the topology normalizing
        weight ln(size + 2) and maxSkew - 1, IgnoredNodes, hostname counted per node,
        NormalizeScore 100 * (max + min - s) / max. 1.18: raw sums of domain counts,
        NormalizeScore 100 * (total - s) / (total - min)."""
        return self.minor >= 19

    @property
    def pts_score_rounds(self) -> bool:
        """Score is math.Round(sum) from 1.24 (PR #107384); int64() truncation before."""
        return self.minor >= 24

    @property
    def pts_system_defaults_relax_topologies(self) -> bool:
        """From 1.23 (PR #105046) PreScore only requires every topology key on a node
        when the pod has its own constraints or the defaults are not the System ones."""
        return self.minor >= 23

    @property
    def pts_add_remove_respect_affinity(self) -> bool:
        """From 1.25 (PR #110768) AddPod/RemovePod skip nodes that fail the incoming
        pod's required node affinity (gate off) / the inclusion policies (gate on)."""
        return self.minor >= 25

    @property
    def pts_empty_selector_counts_zero(self) -> bool:
        """1.27 (PR #116607) to 1.36: countPodsMatchSelector returns 0 for an empty
        selector (``labelSelector: {}``); fixed in upstream main by PR #141340, which
        kspread takes as 1.37."""
        return 27 <= self.minor <= 36

    @property
    def pts_skip_without_constraints(self) -> bool:
        """From 1.28 (PRs #117683, #118608) PreFilter and PreScore return Skip for a pod
        without applicable constraints (no Filter call, no score at all); before, Filter
        passed and every node scored 0 raw, 100 normalized."""
        return self.minor >= 28

    @property
    def pts_domains_counted_live(self) -> bool:
        """From 1.33 (PR #129119, state indexed by constraint) minDomains compares with
        the number of values in the constraint's live count map, which is always
        applied; before, TpKeyToDomainsNum is counted once in PreFilter, only with the
        MinDomains gate on, and a key without any domain makes Filter skip the
        constraint."""
        return self.minor >= 33

    @property
    def pts_defaulting(self) -> str:
        """How PodTopologySpreadArgs choose their default constraints: 'list' (1.18:
        defaultConstraints only), 'gate' (1.19: an omitted defaultConstraints means
        the system defaults when DefaultPodTopologySpread is on), 'v1beta1' (1.20-1.21:
        an omitted defaultingType is List when defaultConstraints is given, else System,
        with the gate on; List with it off), 'system' (1.22+: omitted means System)."""
        if self.minor <= 18:
            return "list"
        if self.minor == 19:
            return "gate"
        if self.minor <= 21:
            return "v1beta1"
        return "system"


class ResourceScoringFlags:
    """Version differences of the resource scoring plugins (NodeResourcesFit score,
    Least/MostAllocated, RequestedToCapacityRatio, BalancedAllocation) and of the
    non-zero requests they read. Read as ``resource_scoring(version).<flag>``."""

    __slots__ = ("minor",)

    def __init__(self, minor: int) -> None:
        self.minor = minor

    @property
    def fit_scores(self) -> bool:
        """NodeResourcesFit has a Score with a scoringStrategy from 1.22 (PR #101822; the
        v1beta2 default profile scores with it); before, only the separate
        NodeResourcesLeastAllocated / MostAllocated / RequestedToCapacityRatio."""
        return self.minor >= 22

    @property
    def init_containers_in_nonzero(self) -> bool:
        """Init containers count (max with the containers' sum) in the non-zero
        requests of the pod and of NodeInfo from 1.19 (PR #89222)."""
        return self.minor >= 19

    @property
    def fit_score_ignores_overhead(self) -> bool:
        """1.22-1.23: NodeResourcesFit's scoring strategies build their scorer without
        the PodOverhead flag, so the incoming pod's overhead is left out of its score
        (NodeResourcesBalancedAllocation and the 1.22 Least/MostAllocated plugins set it);
        from 1.24 (PodOverhead GA) the overhead always counts. Checked against the
        vendored plugins (1.22.3, 1.23.9, 1.24.3)."""
        return 22 <= self.minor <= 23

    @property
    def fit_score_ignores_pod_level(self) -> bool:
        """From 1.33 NodeResourcesFit's scoring strategies build their scorer
        (nodeResourceStrategyTypeMap) without the PodLevelResources flag, which moved from
        the global gate (1.32) into the scorer's own field; only BalancedAllocation sets
        it. So the incoming pod's pod-level requests are left out of NodeResourcesFit's
        score (the pods on the node still count theirs, through NodeInfo). Checked
        against the vendored plugins (1.32.5, 1.33.3, 1.34.7, 1.35.4); 1.36-1.37
        unverified."""
        return self.minor >= 33

    @property
    def fit_score_ignores_status(self) -> bool:
        """Likewise, from 1.33 NodeResourcesFit's scorer is built without the
        InPlacePodVerticalScaling flag (1.27-1.32 read the global gate), so the incoming
        pod's status resources are left out of its score (BalancedAllocation reads them).
        Checked against the vendored 1.32.5-1.35.4 plugins; 1.36-1.37 unverified."""
        return self.minor >= 33

    @property
    def overhead_cpu_in_cores(self) -> bool:
        """1.17-1.26: the scorer adds the overhead of the incoming pod with
        ``quantity.Value()`` for every resource, so cpu overhead counts in whole cores
        (rounded up) instead of millicores; 1.27 moved to resourcehelper.PodRequests.
        UNVERIFIED for 1.17."""
        return 17 <= self.minor <= 26

    @property
    def skips_unallocatable(self) -> bool:
        """From 1.22 (PR #101946) a resource the node has 0 of, or an extended resource
        the pod does not request, is left out of the score and of the weight sum."""
        return self.minor >= 22

    @property
    def most_allocated_caps_requested(self) -> bool:
        """MostAllocated scores requested > allocatable as allocatable (PR #102925,
        1.22, cherry-picked to 1.20/1.21 patches); before, such a resource scores 0."""
        return self.minor >= 20

    @property
    def rtcr_utilization_floor(self) -> bool:
        """RequestedToCapacityRatio utilization ``requested*100/capacity`` from 1.22
        (PR #103089); before ``100 - (capacity-requested)*100/capacity`` (rounds up)."""
        return self.minor >= 22

    @property
    def rtcr_shape_scale(self) -> int:
        """Shape scores are 0..10 (MaxCustomPriorityScore) and multiplied by
        MaxNodeScore/10 from 1.17; before, the scale was 0..10 already."""
        return 10 if self.minor >= 17 else 1

    @property
    def balanced_std(self) -> bool:
        """BalancedAllocation from 1.22 (PRs #101946, #102925): standard deviation of the
        fractions (|f1-f2|/2 for two), fractions capped at 1; before, 1 - |cpu-mem| and
        0 when either fraction >= 1."""
        return self.minor >= 22

    @property
    def balanced_uses_requested(self) -> bool:
        """BalancedAllocation reads the real requests, not the non-zero ones, from 1.23
        (PR #105845, cherry-picked to 1.22)."""
        return self.minor >= 22

    @property
    def balanced_skips_best_effort(self) -> bool:
        """BalancedAllocation PreScore returns Skip for a pod requesting none of its
        resources, from 1.33 (PR #130260)."""
        return self.minor >= 33

    @property
    def balanced_scores_change(self) -> bool:
        """From 1.36 (PR #135573) the score is 50 + (50 + with_pod - without_pod) / 2.
        First release: v1.36.0 -- the PR (opened 2025-12-03, after the 1.35 code freeze)
        is in CHANGELOG-1.36 under v1.36.0-alpha.1, "changes since v1.35.0", and in no
        1.35 patch release's notes; release-1.35 keeps the std formula."""
        return self.minor >= 36

    @property
    def image_counts_image_volumes(self) -> bool:
        """From 1.36 ImageLocality sums the images of the pod's image volumes
        (``volumes[].image.reference``) too, after the containers' (sumImageScores); the
        maximum threshold still counts the containers only."""
        return self.minor >= 36

    @property
    def image_threshold_per_container(self) -> bool:
        """ImageLocality's maximum threshold is 1000 MiB times the number of containers
        from 1.19 (PR #91138); before, 1000 MiB."""
        return self.minor >= 19

    @property
    def image_counts_init_containers(self) -> bool:
        """ImageLocality sums (and counts for the threshold) init containers too, from
        1.30 (checked against the vendored plugins: 1.29.14 reads pod.Spec.Containers only,
        1.30.4 adds pod.Spec.InitContainers to the sum and to the container count)."""
        return self.minor >= 30


_SCORING_FLAGS: dict[int, ResourceScoringFlags] = {}


def resource_scoring(version: Version) -> ResourceScoringFlags:
    """The flags of the version's minor (one instance per minor: they hold nothing else)."""
    flags = _SCORING_FLAGS.get(version.minor)
    if flags is None:
        flags = _SCORING_FLAGS[version.minor] = ResourceScoringFlags(version.minor)
    return flags


def parse_version(raw: object, path=("version",)) -> int:
    if raw is None:
        return NEWEST_MINOR
    if not isinstance(raw, str):
        raise CaseError('version must be a quoted string like "1.24"', path, value=raw)
    major, _, minor = raw.partition(".")
    if major != "1" or not minor.isdigit() or not OLDEST_MINOR <= int(minor) <= NEWEST_MINOR:
        raise CaseError(
            f'unsupported version; kspread supports "1.{OLDEST_MINOR}" to "1.{NEWEST_MINOR}"', path, value=raw
        )
    return int(minor)


def make_version(raw_version: object, raw_gates: object) -> Version:
    minor = parse_version(raw_version)
    gates: dict[str, bool] = {}
    if raw_gates:
        assert isinstance(raw_gates, Mapping)
        for name, val in raw_gates.items():
            path = ("featureGates", name)
            g = FEATURE_GATES.get(name)
            if g is None and name in UNMODELLED_GATES:
                ug, why = UNMODELLED_GATES[name]
                if ug.stage_at(minor) is None:
                    raise CaseError(f"version 1.{minor} does not know feature gate {name!r}", path)
                raise CaseError(
                    f"feature gate {name} is known to 1.{minor} but kspread does not model it: {why}",
                    path,
                )
            if g is None:
                raise CaseError(
                    f"feature gate {name!r} is unknown to kspread (modelled gates: "
                    f"{', '.join(sorted(FEATURE_GATES))})"
                    + did_you_mean(name, [*FEATURE_GATES, *UNMODELLED_GATES]),
                    path,
                )
            st = g.stage_at(minor)
            if st is None and name in MERGED_GATES and minor >= MERGED_GATES[name][1]:
                raise CaseError(f"version 1.{minor} does not know feature gate {name!r}: upstream merged it into "
                                f"{MERGED_GATES[name][0]} in 1.{MERGED_GATES[name][1]} (kubernetes/kubernetes#139520)",
                                path)
            if st is None:
                raise CaseError(f"version 1.{minor} does not know feature gate {name!r}", path)
            if not isinstance(val, bool):
                raise CaseError("a feature gate is true or false", path, value=val)
            if val and name in MODELLED_FROM and minor < MODELLED_FROM[name][0]:
                since, why = MODELLED_FROM[name]
                raise CaseError(f"feature gate {name} is modelled by kspread from 1.{since}: {why}", path)
            if st.locked and val != st.default:
                raise CaseError(
                    f"cannot set feature gate {name} to {str(val).lower()} in 1.{minor}: "
                    f"it is GA and locked to {str(st.default).lower()}",
                    path,
                )
            gates[name] = val
    if gates.get("GangScheduling") and not gates.get("GenericWorkload"):
        raise CaseError("feature gate GangScheduling depends on GenericWorkload, which is off: turn both on",
                        ("featureGates", "GangScheduling"))
    if minor >= 37 and gates.get("GenericWorkload"):
        raise CaseError(f"feature gate GenericWorkload in 1.{minor}: {GANGS_1_37}", ("featureGates", "GenericWorkload"))
    version = Version(minor, gates)
    if minor >= 35:
        # the feature gates' dependencies (checked from 1.35), on what every gate is, set or by
        # default (component-base's featureGate.SetFromMap checks each enabled feature)
        for name, needs in GATE_DEPENDENCIES.items():
            if FEATURE_GATES[name].stage_at(minor) is not None and version.gate(name):
                off = [n for n in needs if not version.gate(n)]
                if off:
                    raise CaseError(f"{name} is enabled, but depends on features that are disabled: "
                                    f"[{' '.join(off)}]",
                                    ("featureGates", name if name in version.gates else off[0]))
    return version


# features.defaultVersionedKubernetesFeatureGates' dependencies, among the modelled gates
GATE_DEPENDENCIES: dict[str, tuple[str, ...]] = {
    "DRADeviceBindingConditions": ("DynamicResourceAllocation", "DRAResourceClaimDeviceStatus"),
    "DRADeviceTaintRules": ("DRADeviceTaints",),
    "InPlacePodLevelResourcesVerticalScaling": ("InPlacePodVerticalScaling", "PodLevelResources",
                                                "NodeDeclaredFeatures"),
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": ("MatchLabelKeysInPodTopologySpread",),
    "WorkloadAwarePreemption": ("GangScheduling",),
    "TopologyAwareWorkloadScheduling": ("GenericWorkload",),
    "DRAWorkloadResourceClaims": ("DynamicResourceAllocation", "GenericWorkload"),
    "DRANodeAllocatableResources": ("DynamicResourceAllocation",),
}
