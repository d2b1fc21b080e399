"""Dynamic resource allocation with structured parameters: the objects of
``resource.k8s.io`` as the scheduler reads them (DeviceClass, ResourceSlice,
ResourceClaim), normalized to the v1 shape whatever API version a case wrote, and
the claims' state during a run (``ClaimTracker``: allocations, reservations).

The format side (kspread/format/devices.py) builds these from a case's ``objects``;
the allocator (kspread/engine/allocator.py) and the DynamicResources plugin read them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction

from kspread.engine.model import Node, NodeSelectorTerm

# device attribute kinds (DeviceAttribute's one-of, named as its fields); the list kinds are
# 1.36's (DRAListTypeAttributes), each a non-empty list of its scalar kind's values
INT, BOOL, STRING, VERSION = "int", "bool", "string", "version"
INTS, BOOLS, STRINGS, VERSIONS = "ints", "bools", "strings", "versions"
LIST_KINDS = {INTS: INT, BOOLS: BOOL, STRINGS: STRING, VERSIONS: VERSION}
EXACT_COUNT, ALL = "ExactCount", "All"
# resourceapi.AllocationResultsMaxSize, FirstAvailableDeviceRequestMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32
FIRST_AVAILABLE_MAX_SIZE = 8


@dataclass(frozen=True, slots=True)
class Attribute:
    kind: str  # INT, BOOL, STRING, VERSION, or a list kind (INTS, ...)
    value: int | bool | str | tuple[int | bool | str, ...]  # a tuple for a list kind

    def as_set(self) -> tuple[str, frozenset]:
        """attributeAsSet (DRAListTypeAttributes): the values as a set, with their scalar
        kind (values of different kinds never meet: an int and a bool are apart)."""
        if self.kind in LIST_KINDS:
            assert isinstance(self.value, tuple)
            return LIST_KINDS[self.kind], frozenset(self.value)
        return self.kind, frozenset((self.value,))


# DeviceTaintEffect: the effects that keep a claim off a device it does not tolerate
# (any other, such as None, is informational)
NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str = ""
    effect: str = NO_SCHEDULE
    # timeAdded on a sequence's clock (seconds; None: when its slice was created), and
    # whether the case wrote a timeAdded (a date: kspread's clock has none)
    time_added: int | None = field(default=None, compare=False)
    time_added_given: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class DeviceTaintRule:
    """A DeviceTaintRule (resource.k8s.io/v1alpha3): its taint goes on every device its
    deviceSelector matches (kspread/engine/devicetaints.py)."""

    name: str
    taint: DeviceTaint
    # deviceSelector's fields; None: any
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    # 1.33-1.34 only: a DeviceClass and CEL selectors
    device_class: str | None = None
    selectors: tuple[str, ...] = ()
    # spec.deviceSelector given (1.35's eviction controller matches no device without one)
    selector_given: bool = True


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    key: str = ""
    operator: str = "Equal"  # Equal or Exists
    value: str = ""
    effect: str = ""  # empty: every effect
    toleration_seconds: int | None = None

    def tolerates(self, taint: DeviceTaint) -> bool:
        """resourceclaim.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


@dataclass(frozen=True, slots=True)
class RequestPolicy:
    """A device capacity's requestPolicy (consumable capacity)."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    # validRange: min (None: no range), max, step
    range_min: Fraction | None = None
    range_max: Fraction | None = None
    range_step: Fraction | None = None


@dataclass(frozen=True, slots=True)
class Device:
    name: str
    # qualified name (``model`` or ``domain/model``) -> value, as the slice writes it
    attributes: Mapping[str, Attribute] = field(default_factory=dict)
    # qualified name -> quantity (exact)
    capacity: Mapping[str, Fraction] = field(default_factory=dict)
    taints: tuple[DeviceTaint, ...] = ()
    # partitionable devices: (counter set, counter -> quantity) per entry of consumesCounters
    consumes_counters: tuple[tuple[str, Mapping[str, Fraction]], ...] = ()
    # per-device node selection (the slice's perDeviceNodeSelection)
    node_name: str | None = None
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    all_nodes: bool = False
    # consumable capacity: several claims may share the device, each consuming capacity
    allow_multiple_allocations: bool | None = None
    capacity_policies: Mapping[str, RequestPolicy] = field(default_factory=dict)
    # binding conditions (None: not given; an empty list is given, as upstream tells them
    # apart), the failure conditions, and bindsToNode
    binding_conditions: tuple[str, ...] | None = None
    binding_failure_conditions: tuple[str, ...] = ()
    binds_to_node: bool = False
    # nodeAllocatableResourceMappings (DRANodeAllocatableResources, 1.36): node
    # allocatable resource (cpu, memory, ...) -> its mapping
    node_allocatable: Mapping[str, NodeAllocatableMapping] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class NodeAllocatableMapping:
    """A device's mapping to a node allocatable resource: ``capacity_key`` (None: the
    device count) times ``multiplier`` (defaulted to 1, as the API server does)."""

    capacity_key: str | None
    multiplier: Fraction = Fraction(1)


@dataclass(frozen=True, slots=True)
class NodeAllocatableClaimStatus:
    """One entry of a pod's status.nodeAllocatableResourceClaimStatuses
    (DRANodeAllocatableResources): the claim as the pod names it in the namespace, the
    containers that reference it, and the node allocatable resources its devices take
    (exact quantities; (name, quantity) pairs by name, so the status is hashable as the pod is)."""

    claim: str
    containers: tuple[str, ...]
    resources: tuple[tuple[str, Fraction], ...]


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int = 0
    slice_count: int = 1
    node_name: str | None = None
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    all_nodes: bool = False
    devices: tuple[Device, ...] = ()
    # partitionable devices: (counter set, counter -> quantity) per entry of sharedCounters
    shared_counters: tuple[tuple[str, Mapping[str, Fraction]], ...] = ()
    per_device_node_selection: bool = False


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...] = ()  # CEL expressions
    # DRAExtendedResource: the extended resource the class backs (besides the implicit
    # deviceclass.resource.kubernetes.io/<name>), and metadata.creationTimestamp (RFC 3339;
    # empty: as old as any other) that decides between classes naming the same resource
    extended_resource_name: str | None = None
    created: str = ""


IMPLICIT_EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"


def extended_resource_classes(classes: Mapping[str, DeviceClass]) -> dict[str, DeviceClass]:
    """The ExtendedResourceCache's resource name -> class, the classes added in case
    order: a class's extendedResourceName and its implicit name. When two classes name
    the same resource the newer wins (equal: the lower name); as upstream's cache, the
    loser registers neither name."""
    out: dict[str, DeviceClass] = {}
    for c in classes.values():
        if c.extended_resource_name is not None:
            other = out.get(c.extended_resource_name)
            if other is not None and (c.created < other.created or (c.created == other.created
                                                                     and c.name >= other.name)):
                continue
            out[c.extended_resource_name] = c
        out[IMPLICIT_EXTENDED_PREFIX + c.name] = c
    return out


def is_dra_extended_resource_name(name: str) -> bool:
    """IsDRAExtendedResourceName: an extended resource name (``domain/name`` outside
    kubernetes.io, not requests.*) or an implicit one."""
    if name.startswith(IMPLICIT_EXTENDED_PREFIX):
        return True
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


@dataclass(frozen=True, slots=True)
class ExactRequest:
    """An ExactDeviceRequest (v1's ``exactly``) or one subrequest of ``firstAvailable``."""

    name: str
    class_name: str
    selectors: tuple[str, ...] = ()
    mode: str = EXACT_COUNT
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    # consumable capacity: capacity.requests (None: not given)
    capacity_requests: Mapping[str, Fraction] | None = None


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    name: str
    exactly: ExactRequest | None = None
    first_available: tuple[ExactRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class MatchAttribute:
    attribute: str  # fully qualified
    requests: tuple[str, ...] = ()  # empty: every request
    distinct: bool = False  # distinctAttribute (consumable capacity) rather than matchAttribute


@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    request: str  # the request, or ``request/subrequest``
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    # consumable capacity: the share of a device allocated several times, and what it consumes
    share_id: str | None = None
    consumed_capacity: Mapping[str, Fraction] | None = None
    # binding conditions: PreBind waits until a driver sets them in the claim's status
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    # the request's tolerations, which the allocator copies into the result from 1.35
    tolerations: tuple[DeviceToleration, ...] = ()

    @property
    def id(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True, slots=True)
class Allocation:
    devices: tuple[AllocatedDevice, ...]
    # None: available on every node; else the terms (one, as the allocator builds it)
    node_selector: tuple[NodeSelectorTerm, ...] | None = None


@dataclass(frozen=True, slots=True)
class DeviceCondition:
    """One condition of an allocated device's status (status.devices[].conditions), as
    a driver sets it (a sequence's setDeviceConditions step)."""

    type: str
    status: str  # True | False | Unknown
    reason: str
    message: str = ""


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    namespace: str
    name: str
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[MatchAttribute, ...] = ()
    allocation: Allocation | None = None
    # pod keys, and PodGroups as ``PodGroup:<name>`` (plugins.podgroups.pod_group_reference)
    reserved_for: tuple[str, ...] = ()
    owner_pod: str | None = None  # the pod (key) a claim made from a template belongs to
    deleting: bool = False
    # DRAExtendedResource: the claim DynamicResources makes for a pod's extended resources
    # backed by devices (annotation resource.kubernetes.io/extended-resource-claim: "true")
    extended_resources: bool = False
    # DRADeviceBindingConditions in a sequence: status.allocation.allocationTimestamp (the
    # sequence's clock, seconds) and status.devices' conditions per allocated device id
    allocated_at: int | None = None
    device_conditions: tuple[tuple[tuple[str, str, str], tuple[DeviceCondition, ...]], ...] = ()
    # DRAWorkloadResourceClaims: the PodGroup (name, the claim's namespace) whose controller
    # reference the claim has (one made from a PodGroup's template)
    owner_pod_group: str | None = None

    @property
    def key(self) -> str:
        return self.name if self.namespace == "default" else f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class PodClaim:
    """One entry of a pod's spec.resourceClaims, resolved to the claim's name (a
    template's claim is ``<pod>-<name>``, as the case format names it)."""

    name: str
    claim_name: str
    template: str = ""  # the ResourceClaimTemplate's name, for a claim made from one
    # the pod shorthand's ``devices`` entry: the requests of a claim made for the pod
    inline: tuple[DeviceRequest, ...] | None = None
    # DRAWorkloadResourceClaims: the pod's PodGroup, whose spec.resourceClaims has an entry
    # of this name naming the same claim or template (resourceclaim.BindTo): the claim is
    # the PodGroup's (a template's: ``<podgroup>-<name>``), reserved for the PodGroup
    pod_group: str = ""

    @property
    def from_template(self) -> bool:
        """The claim is made for the pod (from a template, or from the shorthand)."""
        return bool(self.template) or self.inline is not None


@dataclass
class DeviceObjects:
    """The device objects of a case, as written."""

    classes: dict[str, DeviceClass] = field(default_factory=dict)
    slices: list[ResourceSlice] = field(default_factory=list)
    claims: dict[tuple[str, str], ResourceClaim] = field(default_factory=dict)
    # DeviceTaintRules (DRADeviceTaints in 1.33-1.34, DRADeviceTaintRules in 1.35)
    taint_rules: list[DeviceTaintRule] = field(default_factory=list)
    _extended: dict[str, DeviceClass] | None = None
    # the keys of the claims DynamicResources would make for pods' extended resources
    extended_claims: set[str] = field(default_factory=set)
    # the ResourceClaimTemplates, (namespace, name) -> (requests, constraints), and the claims
    # the case wrote (the others were made for pods, as the resource claim controller would)
    templates: dict[tuple[str, str], tuple] = field(default_factory=dict)
    declared: set[tuple[str, str]] = field(default_factory=set)

    @property
    def extended_resources(self) -> dict[str, DeviceClass]:
        """extended_resource_classes of the case's classes (a run changes no class)."""
        if self._extended is None:
            self._extended = extended_resource_classes(self.classes)
        return self._extended

    def __bool__(self) -> bool:
        return bool(self.classes or self.slices or self.claims)


EXTENDED_CLAIM_SUFFIX = "-extended-resources"


def extended_claim_name(pod_name: str) -> str:
    """The name of the claim DynamicResources makes for a pod's extended resources:
    upstream's generateName <pod>-extended-resources- gets 5 random characters; kspread
    names it <pod>-extended-resources."""
    return pod_name + EXTENDED_CLAIM_SUFFIX


def term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    """A node selector term (nodeaffinity.NewNodeSelector's terms): every expression on
    the labels and every field on metadata.name; an empty term matches nothing."""
    if not term.match_expressions and not term.match_fields:
        return False
    if not all(r.matches(node.labels) for r in term.match_expressions):
        return False
    fields = {"metadata.name": node.name}
    return all(r.matches(fields) for r in term.match_fields)


def selector_matches(terms: tuple[NodeSelectorTerm, ...], node: Node) -> bool:
    return any(term_matches(t, node) for t in terms)


class ClaimTracker:
    """The claims during a run: the case's claims copied (a run never changes the
    case), each allocation kept with its claim, the set of allocated devices."""

    def __init__(self, objects: DeviceObjects | None) -> None:
        self.objects = objects or DeviceObjects()
        self.claims: dict[tuple[str, str], ResourceClaim] = dict(self.objects.claims)
        # the allocator's CEL results for the run (kspread.engine.allocator.Allocator.cel_results)
        self.cel_results: dict = {}
        # the DeviceTaintRules of the run, and the slices patched with them
        # (kspread.engine.devicetaints.scheduler_slices; None: to compute)
        self.taint_rules: list[DeviceTaintRule] = list(self.objects.taint_rules)
        self.patched: list[ResourceSlice] | None = None
        self.stored: list[ResourceSlice] = []  # the tracker's store, as last synced
        self.now = 0  # a sequence's clock (binding conditions' allocation time and timeout)
        # DynamicResources' in-flight allocations (SignalClaimPendingAllocation): claim ->
        # (the claim with the allocation the first Reserve gave it, the pods sharing it, in
        # the order they signalled it), until PreBind writes it or the last sharer's
        # Unreserve drops it; other pods' filters count their devices
        self.in_flight: dict[tuple[str, str], tuple[ResourceClaim, tuple[str, ...]]] = {}
        # 1.36: the pods of the pod group whose scheduling cycle runs (their Reserve's
        # in-flight allocations are the group's pendingAllocations)
        self.group_pods: frozenset[str] = frozenset()

    def get(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get((namespace, name))

    def __iter__(self) -> Iterator[ResourceClaim]:
        return iter(self.claims.values())

    def allocated_devices(self, consumable_capacity: bool = False) -> set[tuple[str, str, str]]:
        """ListAllAllocatedDevices: every device of an allocated claim, but those a
        claim holds with admin access; with consumable capacity (GatherAllocatedState)
        also but the shares of a device allocated several times (a shareID)."""
        out: set[tuple[str, str, str]] = set()
        for c in [*self.claims.values(), *(f for f, _ in self.in_flight.values())]:
            if c.allocation is not None:
                out.update(d.id for d in c.allocation.devices
                           if not d.admin_access and not (consumable_capacity and d.share_id is not None))
        return out

    def aggregated_capacity(self) -> dict[tuple[str, str, str], dict[str, Fraction]]:
        """GatherAllocatedState's AggregatedCapacity: per device, the capacity its shares
        (results with a shareID and consumedCapacity) consume."""
        out: dict[tuple[str, str, str], dict[str, Fraction]] = {}
        for c in [*self.claims.values(), *(f for f, _ in self.in_flight.values())]:
            if c.allocation is None:
                continue
            for d in c.allocation.devices:
                if d.admin_access or d.share_id is None or d.consumed_capacity is None:
                    continue
                agg = out.setdefault(d.id, {})
                for name, q in d.consumed_capacity.items():
                    agg[name] = agg.get(name, Fraction(0)) + q
        return out

    def signal_in_flight(self, claim: ResourceClaim, pod_key: str) -> None:
        """SignalClaimPendingAllocation: a claim not in flight enters with the allocation
        given; one in flight gains a sharer and keeps the allocation it has."""
        k = (claim.namespace, claim.name)
        cur = self.in_flight.get(k)
        if cur is None:
            self.in_flight[k] = (claim, (pod_key,))
        elif pod_key in cur[1]:
            self.in_flight[k] = (claim, cur[1])  # the pod's Reserve again (kspread's): its allocation
        else:
            self.in_flight[k] = (cur[0], (*cur[1], pod_key))

    def drop_in_flight(self, pod_key: str) -> None:
        """MaybeRemoveClaimPendingAllocation of the pod's claims (Unreserve): the pod stops
        sharing each; the last sharer removes it (no event: the claims' assume cache has
        nothing to restore)."""
        for k, (c, pods) in list(self.in_flight.items()):
            if pod_key not in pods:
                continue
            rest = [p for p in pods if p != pod_key]
            if rest:
                self.in_flight[k] = (c, tuple(rest))
            else:
                del self.in_flight[k]

    def allocate(self, claim: ResourceClaim, allocation: Allocation, pod_key: str) -> None:
        self.claims[(claim.namespace, claim.name)] = replace(
            claim, allocation=allocation, reserved_for=(*claim.reserved_for, pod_key))

    def reserve(self, claim: ResourceClaim, pod_key: str) -> None:
        cur = self.claims[(claim.namespace, claim.name)]
        if pod_key not in cur.reserved_for:
            self.claims[(claim.namespace, claim.name)] = replace(cur, reserved_for=(*cur.reserved_for, pod_key))

    def unreserve(self, claim: ResourceClaim, pod_key: str) -> None:
        """DynamicResources' Unreserve: the pod leaves reservedFor; the allocation stays."""
        cur = self.claims[(claim.namespace, claim.name)]
        self.claims[(claim.namespace, claim.name)] = replace(
            cur, reserved_for=tuple(p for p in cur.reserved_for if p != pod_key))

    def deallocate(self, claim: ResourceClaim) -> None:
        cur = self.claims[(claim.namespace, claim.name)]
        self.claims[(claim.namespace, claim.name)] = replace(cur, allocation=None, reserved_for=(), allocated_at=None,
                                                             device_conditions=())

    def pod_gone(self, pod_key: str) -> list[ResourceClaim]:
        """A pod was deleted: the resource claim controller takes it out of its claims'
        reservedFor and deallocates a claim that no pod reserves any more. Returns every
        claim it wrote (each a status update), as it was before."""
        changed = []
        for k, c in list(self.claims.items()):
            if pod_key in c.reserved_for:
                left = tuple(p for p in c.reserved_for if p != pod_key)
                if not left and c.allocation is not None:
                    self.claims[k] = replace(c, allocation=None, reserved_for=(), allocated_at=None,
                                             device_conditions=())
                else:
                    self.claims[k] = replace(c, reserved_for=left)
                changed.append(c)
        return changed

    def allocations(self) -> dict[str, list[str] | None]:
        """claim key -> its allocated devices (``driver/pool/device``), None: unallocated
        (or, for a pod's extended resources' claim, not made)."""
        out: dict[str, list[str] | None] = {key: None for key in self.objects.extended_claims}
        out.update({c.key: (None if c.allocation is None else [str(d) for d in c.allocation.devices])
                    for c in self.claims.values()})
        return out
