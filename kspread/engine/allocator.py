"""The structured allocator (k8s.io/dynamic-resource-allocation/structured, its
"stable"/"incubating" implementation as of v1.35.4): for one node, the first
allocation of every claim's requests that the exhaustive search finds.

The search, as upstream's: claims in order, each claim's requests in order, each
request's devices one at a time; for a device the candidates are the pools
available on the node, their slices, their devices in order; a candidate is taken
when it is not in use (allocated to some claim, or taken earlier in this search),
matches its class's and its request's CEL selectors and keeps every constraint of
its claim; when the rest cannot be allocated it is given back and the next one
tried (from 1.36, outside upstream's "stable" allocator, a request's next device is
looked for after the one its previous device took: combinations, not permutations).
``firstAvailable`` tries its subrequests in order; ``All`` takes every
matching device of the node's pools (none in use), and fails when a pool is
incomplete.

Upstream gathers pools in a Go map, so the order of pools on a node is random; the
order of slices in a pool is the informer's. kspread takes pools in the order their
first slice appears in the case and slices in case order: a case where the choice
of devices depends on it has a tie that upstream breaks at random.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from kspread.engine.devicecel import CelError, device_matches
from kspread.engine.devices import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    LIST_KINDS,
    NO_EXECUTE,
    NO_SCHEDULE,
    AllocatedDevice,
    Allocation,
    Attribute,
    Device,
    DeviceClass,
    ExactRequest,
    RequestPolicy,
    ResourceClaim,
    ResourceSlice,
    selector_matches,
)
from kspread.engine.labels import IN, Requirement
from kspread.engine.model import Node, NodeSelectorTerm
from kspread.errors import CaseError

DeviceID = tuple[str, str, str]


class AllocationError(Exception):
    """A fatal error (upstream: Allocate returns an error that is not
    ErrFailedAllocationOnNode): the Filter returns Error."""


class FailedOnNode(Exception):
    """ErrFailedAllocationOnNode: Unschedulable on this node only."""


class _Stop(Exception):
    """errStop where Allocate takes it for "no allocation on this node" (v1.32.5)."""


@dataclass
class Features:
    admin_access: bool = False
    prioritized_list: bool = False
    device_taints: bool = False
    # 1.33-1.34 (allTaintsTolerated): every taint must be tolerated, whatever its
    # effect; from 1.35 (taintPreventsAllocation) only NoSchedule and NoExecute count
    every_taint_effect: bool = False
    partitionable_devices: bool = False
    # DRAConsumableCapacity (upstream's "experimental" allocator, as of 1.35)
    consumable_capacity: bool = False
    # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (DeviceBindingAndStatus;
    # the "experimental" allocator too)
    binding_conditions: bool = False
    # from 1.35 (the "incubating" and "experimental" allocators, one of which runs while
    # DRADeviceTaints is on) a result carries its request's tolerations; 1.33-1.34's none
    result_tolerations: bool = False

    @property
    def experimental(self) -> bool:
        """The allocator upstream picks: "incubating" or "experimental" (not "stable") when a
        feature only they have is on."""
        return self.consumable_capacity or self.binding_conditions or self.list_type_attributes
    # how counters are checked: 33 (a device's slice, the counters it consumes, against
    # the devices allocated and being allocated), 34 (a device's slice, every counter of
    # it, tracking what this search consumes), 35 (the pool, as 34)
    counters_version: int = 35
    # from 1.34 a device taken with admin access counts as taken for its own claim (not
    # for the others); up to 1.33 admin access marks nothing: an admin request may take a
    # device the same claim already took, and another request one it took with admin access
    admin_marks_own_claim: bool = True
    # from 1.34 an All request that fails midway gives back the devices it took; v1.33.3
    # drops the rollback (allocateDevice's undo discarded): they stay taken, in the result
    all_rolls_back: bool = True
    # from 1.33 an All request that matches no device fails; up to 1.32 it is allocated
    # no device and the search goes on
    all_needs_a_device: bool = True
    # v1.31.8's All request: its devices are those its own selectors match in every pool of
    # the node (the class is not stored yet when they are gathered, so its selectors are
    # not checked), one in use is passed over (allocateDevice's answer is dropped) and, when
    # the search fails after it, the search ends with the error "stop allocation"
    all_v131: bool = False
    # v1.32.5: an All request meeting a device it cannot take (in use) ends the node's
    # search with no allocation (errStop), where from 1.33 the search backtracks
    all_unavailable_stops: bool = False
    # from 1.36 the allocator keeps a subrequest's own index where 1.33-1.35 lose it: an
    # All subrequest's devices are gathered under its own key (1.33-1.35: the previous
    # subrequest's) and the search goes on with its own next device (1.33-1.35: the first
    # subrequest's data); see _request and _allocate_one
    subrequest_index_kept: bool = False
    # the allocator's ListTypeAttributes (upstream's "experimental" allocator, which differs
    # from 1.36's "incubating" one only there): matchAttribute and distinctAttribute
    # compare values as sets. v1.36.2's scheduler gives the gate to CEL only, not to the
    # allocator (kubernetes/kubernetes#139332, merged for 1.37): from 1.37 with the gate
    list_type_attributes: bool = False
    # DRAListTypeAttributes in CEL (1.36+): list attributes are lists, includes() exists
    cel_list_attributes: bool = False
    # from 1.36 the "incubating" and "experimental" allocators (not "stable") look for a
    # request's next device after the one its previous device took (startLocation): a
    # request's devices are tried as combinations in device order, not permutations
    device_combinations: bool = False


@dataclass
class Pool:
    driver: str
    pool: str
    slices: list[ResourceSlice]  # the slices with devices available on the node
    incomplete: bool = False
    invalid: bool = False
    # partitionable devices, from 1.35 (per pool): the pool's counter sets (from its
    # slices with sharedCounters) and its other slices of the generation, whose
    # allocated devices consume counters too
    counter_sets: dict[str, Mapping[str, Fraction]] = field(default_factory=dict)
    other_slices: list[ResourceSlice] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool}"


def _target_matches(node: Node, node_name: str | None, all_nodes: bool,
                    node_selector: tuple[NodeSelectorTerm, ...] | None) -> bool:
    """NodeMatches."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        return selector_matches(node_selector, node)
    return False


def node_matches(node: Node, slice_: ResourceSlice) -> bool:
    return _target_matches(node, slice_.node_name, slice_.all_nodes, slice_.node_selector)


class _SliceIndex:
    """The slices of one list that GatherPools can take for a node, in the list's order:
    the slices naming the node, and every slice naming none (or with sharedCounters,
    which from 1.35 belong to their pool on every node). A slice naming another node is
    passed over for it whatever else it has, so a node reads its own slices and the
    others, not every node's (upstream walks them all)."""

    __slots__ = ("slices", "size", "own", "general", "_bare")

    def __init__(self, slices: list[ResourceSlice]) -> None:
        self.slices = slices
        self.size = len(slices)
        self.own: dict[str, list[int]] = {}
        self.general: list[int] = []
        for i, s in enumerate(slices):
            if s.node_name and not s.shared_counters:
                self.own.setdefault(s.node_name, []).append(i)
            else:
                self.general.append(i)
        self._bare: tuple[Any, np.ndarray] | None = None  # (snapshot, bare_positions)

    def bare_positions(self, snapshot: Any) -> np.ndarray | None:
        """Per snapshot position, whether the node has no slice to gather (None: every node
        reads some, a slice naming no node)."""
        if self.general:
            return None
        if self._bare is None or self._bare[0] is not snapshot:
            bare = np.ones(len(snapshot), bool)
            bare[[snapshot.position[n] for n in self.own if n in snapshot.position]] = False
            self._bare = (snapshot, bare)
        return self._bare[1]

    def for_node(self, name: str) -> list[ResourceSlice]:
        own = self.own.get(name, ())
        if not self.general:
            return [self.slices[i] for i in own]
        return [self.slices[i] for i in heapq.merge(own, self.general)]


# the index of the last list of slices asked for (a run keeps its list until a slice or
# rule changes, then makes a new one; a list is never changed in place)
_last_index: list[_SliceIndex] = []


def _slice_index(slices: list[ResourceSlice]) -> _SliceIndex:
    index = _last_index[0] if _last_index else None
    if index is None or index.slices is not slices or index.size != len(slices):
        index = _SliceIndex(slices)
        _last_index[:] = [index]
    return index


def _node_slices(slices: list[ResourceSlice], node: Node) -> list[ResourceSlice]:
    return _slice_index(slices).for_node(node.name)


def gather_pools(slices: list[ResourceSlice], node: Node, features: Features | None = None) -> list[Pool]:
    """GatherPools: the pools with slices available on the node, the newest
    generation only, each marked incomplete or invalid as upstream does. With
    partitionable devices a slice with per-device node selection is available when
    one of its devices is; from 1.35 a slice with sharedCounters belongs to its pool
    on every node."""
    f = features or Features()
    per_pool = f.partitionable_devices and f.counters_version >= 35
    pools: dict[tuple[str, str], Pool] = {}
    deferred: list[ResourceSlice] = []
    for s in _node_slices(slices, node):
        if not f.partitionable_devices and (s.per_device_node_selection or s.shared_counters):
            continue
        if per_pool and s.shared_counters:
            pass  # needed to use the pool, whatever its node selection
        elif s.node_name or s.all_nodes or s.node_selector is not None:
            if not node_matches(node, s):
                continue
            if f.experimental and _has_binding_conditions(s):
                deferred.append(s)  # after the slices without, so that simpler devices come first
                continue
        elif s.per_device_node_selection:
            if not any(_target_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in s.devices):
                continue
            if f.experimental and _has_binding_conditions(s):
                deferred.append(s)
                continue
        else:
            continue  # nothing known set: some future extension
        _add_slice(pools, s)
    for s in deferred:
        _add_slice(pools, s)
    out: list[Pool] = []
    last: list[Pool] = []
    for pid, pool in pools.items():
        built = _build_pool(pid, pool, slices, per_pool)
        if built is None:
            continue
        if f.experimental and any(_has_binding_conditions(s) for s in built.slices):
            last.append(built)  # pools with binding conditions after the others
        else:
            out.append(built)
    return out + last


def _has_binding_conditions(s: ResourceSlice) -> bool:
    return any(d.binding_conditions is not None for d in s.devices)


def _add_slice(pools: dict[tuple[str, str], Pool], s: ResourceSlice) -> None:
    """addSlice: a pool keeps the slices of its newest generation."""
    pid = (s.driver, s.pool)
    pool = pools.get(pid)
    if pool is None:
        pools[pid] = Pool(s.driver, s.pool, [s])
        return
    if s.generation < pool.slices[0].generation:
        return
    if s.generation > pool.slices[0].generation:
        pool.slices = []
    pool.slices.append(s)


def _build_pool(pid: tuple[str, str], pool: Pool, slices: list[ResourceSlice], per_pool: bool) -> Pool | None:
    """The pool complete, incomplete or invalid; None when a newer generation replaces it."""
    gen = pool.slices[0].generation
    complete = len(pool.slices) == pool.slices[0].slice_count
    all_of_gen: list[ResourceSlice] | None = None
    if not complete:
        all_of_gen = []
        for s in slices:
            if (s.driver, s.pool) != pid:
                continue
            if s.generation == gen:
                all_of_gen.append(s)
            elif s.generation > gen:
                return None
        complete = len(all_of_gen) == pool.slices[0].slice_count
    pool.incomplete = not complete
    counter_slices: list[ResourceSlice] = []
    if per_pool:
        counter_slices = [s for s in pool.slices if s.shared_counters]
        pool.slices = [s for s in pool.slices if not s.shared_counters]
    names: set[str] = set()
    for s in pool.slices:
        for d in s.devices:
            if d.name in names:
                pool.invalid = True
            names.add(d.name)
    if per_pool and not pool.incomplete and not pool.invalid:
        _build_counters(pool, counter_slices, all_of_gen)
    return pool


def _build_counters(pool: Pool, counter_slices: list[ResourceSlice], all_of_gen: list[ResourceSlice] | None) -> None:
    """buildPool's counter part (1.35+): a counter set named twice, or a device
    consuming a counter set or counter the pool does not have, makes the pool invalid."""
    for s in counter_slices:
        for name, counters in s.shared_counters:
            if name in pool.counter_sets:
                pool.invalid = True
                return
            pool.counter_sets[name] = counters
    if not _consumption_valid(pool.counter_sets, [*counter_slices, *pool.slices]):
        pool.invalid = True
        return
    if all_of_gen is not None:
        seen = {s.name for s in (*counter_slices, *pool.slices)}
        pool.other_slices = [s for s in all_of_gen if s.name not in seen]
        if not _consumption_valid(pool.counter_sets, pool.other_slices):
            pool.invalid = True


def _consumption_valid(counter_sets: dict[str, Mapping[str, Fraction]], slices: list[ResourceSlice]) -> bool:
    for s in slices:
        for d in s.devices:
            for cs, counters in d.consumes_counters:
                if cs not in counter_sets or any(c not in counter_sets[cs] for c in counters):
                    return False
    return True


@dataclass
class _Request:
    request: ExactRequest
    parent: str | None  # the parent request's name for a subrequest
    cls: DeviceClass
    num_devices: int = 0
    all_devices: list[tuple[DeviceID, Device, ResourceSlice]] = field(default_factory=list)
    selected_sub: int = 0

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.request.name}" if self.parent else self.request.name

    @property
    def base_name(self) -> str:
        return self.parent if self.parent else self.request.name

    @property
    def sub_name(self) -> str:
        return self.request.name if self.parent else ""


class _MatchAttribute:
    """matchAttributeConstraint. Without the allocator's ListTypeAttributes (v1.36.2's
    scheduler never sets it) values are scalars: a device whose value is a list is taken
    only as the constraint's first. With it (upstream's experimental allocator, from 1.37)
    values are sets (a scalar a set of one): the first device's set is kept, each device
    added must meet it and narrows it to their intersection; removing a device only counts
    it out, the set stays narrowed until the constraint is empty again (upstream's
    ``remove``)."""

    def __init__(self, attribute: str, requests: tuple[str, ...], list_attributes: bool = False) -> None:
        self.attribute = attribute
        self.requests = set(requests)
        self.list_attributes = list_attributes
        self.value: Attribute | None = None
        self.intersection: tuple[str, frozenset] | None = None
        self.num = 0

    def _applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        if not sub:
            return base in self.requests
        return base in self.requests or f"{base}/{sub}" in self.requests

    def add(self, base: str, sub: str, device: Device, driver: str) -> bool:
        if not self._applies(base, sub):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.num == 0:
            if self.list_attributes:
                self.intersection = attr.as_set()
            else:
                self.value = attr
            self.num = 1
            return True
        if self.list_attributes:
            assert self.intersection is not None
            kind, values = attr.as_set()
            if kind != self.intersection[0] or not values & self.intersection[1]:
                return False
            self.intersection = (kind, values & self.intersection[1])
        else:
            # a list value is of no kind the scalar rule knows (its switch's default): it
            # matches nothing, and nothing matches it
            assert self.value is not None
            if attr.kind in LIST_KINDS or attr.kind != self.value.kind or attr.value != self.value.value:
                return False
        self.num += 1
        return True

    def remove(self, base: str, sub: str) -> None:
        if self._applies(base, sub):
            self.num -= 1


class _DistinctAttribute(_MatchAttribute):
    """distinctAttributeConstraint (consumable capacity): the devices' values all differ.
    Without the allocator's ListTypeAttributes (1.36) a list value is refused while a value
    is held, and a scalar is compared with the scalars held; with it (1.37) the values are
    sets, pairwise disjoint (a scalar a set of one; sets of different kinds are disjoint).
    As upstream, the values are kept per request
    name (a request's second device replaces its first's value, and removing one device
    of a request forgets the request's value)."""

    def __init__(self, attribute: str, requests: tuple[str, ...], list_attributes: bool = False) -> None:
        super().__init__(attribute, requests, list_attributes)
        self.values: dict[str, Attribute] = {}

    def add(self, base: str, sub: str, device: Device, driver: str) -> bool:
        if not self._applies(base, sub):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.num:
            if self.list_attributes:
                kind, values = attr.as_set()
                if any(k == kind and values & v for k, v in (o.as_set() for o in self.values.values())):
                    return False
            elif attr.kind in LIST_KINDS:
                # the scalar rule's switch has no case for a list: refused when there is a
                # value to compare it with
                if self.values:
                    return False
            elif any(v.kind == attr.kind and v.value == attr.value for v in self.values.values()):
                return False
        self.values[base] = attr
        self.num += 1
        return True

    def remove(self, base: str, sub: str) -> None:
        if self._applies(base, sub):
            self.values.pop(base, None)
            self.num -= 1


def lookup_attribute(device: Device, driver: str, name: str) -> Attribute | None:
    if name in device.attributes:
        return device.attributes[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


class Allocator:
    """NewAllocator: the cluster's classes, slices and allocated devices, fixed for a
    scheduling cycle; ``allocate`` runs per node."""

    def __init__(self, features: Features, allocated: set[DeviceID], classes: dict[str, DeviceClass],
                 slices: list[ResourceSlice], cel_results: dict | None = None,
                 aggregated_capacity: dict[DeviceID, dict[str, Fraction]] | None = None) -> None:
        self.features = features
        self.allocated = allocated
        # consumable capacity: what the allocated shares of each device consume
        self.aggregated_capacity = aggregated_capacity or {}
        self.shares = 0  # share IDs handed out (upstream: random UIDs)
        self.classes = classes
        self.slices = slices
        # (device, expression, driver) -> the selector's result or its CelError: a device's
        # answer to an expression never changes, so a run keeps them across cycles
        self.cel_results = {} if cel_results is None else cel_results
        # partitionable devices (1.34+): the counters left by the allocated devices, per
        # slice name (1.34) or pool name (1.35+: upstream keys them by the pool's name alone)
        self.available_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        # a node with no slice to gather: the search's failure (None, or the exception's
        # type and message) for the same claims, which no such node changes (kept with them)
        self._bare: dict[tuple[int, ...], tuple[list[ResourceClaim], type[Exception] | None, str]] = {}

    def bare_positions(self, snapshot: Any) -> np.ndarray | None:
        """Per snapshot position, whether the node has no slice to gather (``allocate``
        fails on every such node as on the first); None when every node has some."""
        return _slice_index(self.slices).bare_positions(snapshot)

    def allocate(self, node: Node, claims: list[ResourceClaim]) -> list[Allocation] | None:
        if _node_slices(self.slices, node):
            return _Run(self, node, claims).run()
        # no pools: what the search finds depends on the claims alone (the validation, and
        # no device to try), so a failure is the same on every such node of the cycle
        key = tuple(map(id, claims))
        hit = self._bare.get(key)
        if hit is not None:
            if hit[1] is None:
                return None
            raise hit[1](hit[2])
        try:
            out = _Run(self, node, claims).run()
        except (FailedOnNode, AllocationError) as e:
            if type(e) in (FailedOnNode, AllocationError) and len(e.args) == 1:
                self._bare[key] = (list(claims), type(e), e.args[0])
            raise
        if out is None:
            self._bare[key] = (list(claims), None, "")
        return out


class _Run:
    def __init__(self, a: Allocator, node: Node, claims: list[ResourceClaim]) -> None:
        self.a = a
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.requests: dict[tuple[int, int, int], _Request] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.matches: dict[tuple, bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.result: list[list[tuple[AllocatedDevice, ResourceSlice, Device]]] = [[] for _ in claims]
        # partitionable devices (1.34+): what the devices of this search consume, keyed as
        # Allocator.available_counters
        self.consumed: dict[str, dict[str, dict[str, Fraction]]] = {}
        # consumable capacity: what the shares taken in this search consume, per device
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}

    # ---- setup --------------------------------------------------------------------

    def run(self) -> list[Allocation] | None:
        self.pools = gather_pools(self.a.slices, self.node, self.a.features)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, req in enumerate(claim.requests):
                if req.first_available:
                    if not self.a.features.prioritized_list:
                        raise AllocationError(f"claim {_kobj(claim)}, request {req.name}: has subrequests, but the "
                                              "DRAPrioritizedList feature is disabled")
                    least = None
                    for si, sub in enumerate(req.first_available):
                        rd = self._validate(ci, ri, si, sub, req.name)
                        self.requests[(ci, ri, si)] = rd
                        least = rd.num_devices if least is None else min(least, rd.num_devices)
                    min_devices += least or 0
                else:
                    assert req.exactly is not None
                    rd = self._validate(ci, ri, 0, req.exactly, None)
                    self.requests[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(f"claim {_kobj(claim)}: number of requested devices {min_devices} exceeds "
                                      f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            lists = self.a.features.list_type_attributes
            self.constraints.append([(_DistinctAttribute if c.distinct else _MatchAttribute)(c.attribute, c.requests, lists)
                                     for c in claim.constraints])
        self.matches = {}  # upstream starts the search with an empty cache (validation's entries dropped)
        try:
            found = self._allocate_one(0, 0, 0, 0, False)
        except _Stop:
            return None
        if not found:
            if any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        out = []
        for devices in self.result:
            out.append(Allocation(tuple(d for d, _, _ in devices), self._node_selector([(s, d) for _, s, d in devices])))
        return out

    def _validate(self, ci: int, ri: int, si: int, req: ExactRequest, parent: str | None) -> _Request:
        claim = self.claims[ci]
        name = f"{parent}/{req.name}" if parent else req.name
        if not self.a.features.admin_access and req.admin_access is not None:
            raise AllocationError(f"claim {_kobj(claim)}, request {req.name}: admin access is requested, but the "
                                  "feature is disabled")
        if not req.class_name:
            raise AllocationError(f"claim {_kobj(claim)}, request {req.name}: missing device class name "
                                  "(unsupported request type?)")
        cls = self.a.classes.get(req.class_name)
        if cls is None:
            raise AllocationError(f"claim {_kobj(claim)}, request {req.name}: could not retrieve device class "
                                  f'{req.class_name}: deviceclass.resource.k8s.io "{req.class_name}" not found')
        rd = _Request(req, parent, cls)
        if req.mode == EXACT_COUNT:
            rd.num_devices = req.count
        elif req.mode == ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(f"claim {_kobj(claim)}, request {req.name}: asks for all devices, but "
                                          f"resource pool {pool.id} is currently being updated")
                if pool.invalid:
                    raise AllocationError(f"claim {_kobj(claim)}, request {req.name}: asks for all devices, but "
                                          f"resource pool {pool.id} is currently invalid")
                # upstream (1.33-1.35.4) validates subrequest si with the key of si - 1 (it
                # sets the index after validating): an All subrequest after an All one takes
                # the earlier one's cached answers, so its devices are the earlier one's;
                # 1.36 sets the index first
                key = (ci, ri, si if self.a.features.subrequest_index_kept else max(si - 1, 0))
                for s in pool.slices:
                    for d in s.devices:
                        if self._selectable(key, rd, s, d, with_class=not self.a.features.all_v131):
                            if self.a.features.consumable_capacity and \
                                    not self._capacity_fits((s.driver, s.pool, d.name), d, req):
                                continue
                            rd.all_devices.append(((s.driver, s.pool, d.name), d, s))
                            if d.consumes_counters and self.a.features.partitionable_devices and \
                                    self.a.features.counters_version >= 35:
                                raise CaseError(
                                    f"claim {_kobj(claim)}, request {req.name}: allocationMode All over a device "
                                    f"that consumes counters ({s.driver}/{s.pool}/{d.name}) is not modelled by "
                                    "kspread: upstream's v1.35 allocator checks its counters without its pool and "
                                    "panics", ["objects"])
            rd.num_devices = len(rd.all_devices)
        else:  # pragma: no cover - the loader admits the two modes
            raise AllocationError(f"claim {_kobj(claim)}, request {name}: unsupported count mode {req.mode}")
        return rd

    # ---- the search ---------------------------------------------------------------

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool,
                      start: tuple[int, int, int] = (0, 0, 0)) -> bool:
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            return self._allocate_one(ci + 1, 0, 0, 0, False)
        rd = self.requests[(ci, ri, si)]
        if not in_sub and rd.parent is not None:
            sub = 0
            while (ci, ri, sub) in self.requests:
                if self._allocate_one(ci, ri, sub, di, True):
                    self.requests[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            return False
        req = rd.request
        if req.mode == ALL and not rd.all_devices and self.a.features.all_needs_a_device:
            return False
        if di >= rd.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.result[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            return False
        if req.mode == ALL:
            did, dev, s = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, did, dev, s, must=True)
            if undo is None and not self.a.features.all_v131:
                if self.a.features.all_unavailable_stops:
                    raise _Stop
                return False
            # upstream (1.33-1.35.4) goes on with deviceIndices{claim, request, device + 1}:
            # the subrequest index is dropped, so after the first device of an All
            # subrequest past the first, the first subrequest's data decides (its count:
            # usually "done"; its selectors for the devices that follow); 1.36 keeps it
            if self._allocate_one(ci, ri, si if self.a.features.subrequest_index_kept else 0, di + 1, in_sub):
                return True
            if self.a.features.all_v131:
                raise AllocationError("stop allocation")
            if undo is not None and self.a.features.all_rolls_back:
                undo()
            return False
        admin = bool(req.admin_access)
        combinations = self.a.features.device_combinations and self.a.features.experimental
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            for sj in range(start[1] if pi == start[0] else 0, len(pool.slices)):
                s = pool.slices[sj]
                for dk in range(start[2] if (pi, sj) == start[:2] else 0, len(s.devices)):
                    d = s.devices[dk]
                    did = (pool.driver, pool.pool, d.name)
                    if admin and self.a.features.admin_marks_own_claim and ci in self.allocating.get(did, ()):
                        continue
                    if not admin and self._in_use(did):
                        continue
                    if not self._selectable((ci, ri, si), rd, s, d):
                        continue
                    if self.a.features.consumable_capacity and not self._capacity_fits(did, d, req):
                        continue
                    undo = self._allocate_device(ci, rd, did, d, s, must=False, pool=pool)
                    if undo is None:
                        continue
                    if self._allocate_one(ci, ri, si, di + 1, in_sub, (pi, sj, dk + 1) if combinations else (0, 0, 0)):
                        return True
                    undo()
        return False

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated or bool(self.allocating.get(did))

    def _selectable(self, key: tuple[int, int, int], rd: _Request, s: ResourceSlice, d: Device,
                    with_class: bool = True) -> bool:
        if d.binding_conditions and not self.a.features.binding_conditions:
            return False  # devices with binding conditions need the feature
        mk = (s.driver, s.pool, d.name, key)
        hit = self.matches.get(mk)
        if hit is not None:
            return hit
        ok = (not with_class or self._selectors_match(key[0], d, s.driver, rd.cls, rd.cls.selectors)) and \
            self._selectors_match(key[0], d, s.driver, None, rd.request.selectors)
        if ok and s.per_device_node_selection:
            ok = _target_matches(self.node, d.node_name, d.all_nodes, d.node_selector)
        self.matches[mk] = ok
        return ok

    def _selectors_match(self, ci: int, d: Device, driver: str, cls: DeviceClass | None,
                         selectors: tuple[str, ...]) -> bool:
        for i, expr in enumerate(selectors):
            key = (id(d), expr, driver)
            ok: bool | CelError | None = self.a.cel_results.get(key)
            if ok is None:
                try:
                    ok = device_matches(expr, d, driver, self.a.features.consumable_capacity,
                                        self.a.features.cel_list_attributes)
                except CelError as err:
                    ok = err
                self.a.cel_results[key] = ok
            if isinstance(ok, CelError):
                kind = "compile" if ok.compile_error else "runtime"
                where = f"class {cls.name}" if cls is not None else f"claim {_kobj(self.claims[ci])}"
                raise AllocationError(f"{where}: selector #{i}: CEL {kind} error: {ok}") from None
            if not ok:
                return False
        return True

    def _allocate_device(self, ci: int, rd: _Request, did: DeviceID, d: Device, s: ResourceSlice, must: bool,
                         pool: Pool | None = None):
        admin = bool(rd.request.admin_access)
        f = self.a.features
        multi = f.consumable_capacity and bool(d.allow_multiple_allocations)
        marks = not admin or f.admin_marks_own_claim
        if not multi and admin and marks and ci in self.allocating.get(did, ()):
            return None
        if not admin and self._in_use(did):
            return None
        if d.consumes_counters and not f.partitionable_devices and f.counters_version >= 34:
            return None  # 1.34+: consuming counters needs the feature
        # a device shared by several allocations counts its counters once, when its
        # first share is taken
        skip_counters = multi and (did in self.a.aggregated_capacity or did in self.allocating_capacity)
        counted = f.partitionable_devices and bool(d.consumes_counters) and not skip_counters
        if counted and not self._check_counters(did, d, s, pool):
            return None
        # upstream gives the counters back only in the undo of a device it took (and never
        # for a shared device): a device whose taint or constraint fails after this check
        # keeps them for the rest of the search (1.34+), and so does kspread
        if f.device_taints and taint_prevents_allocation(d, rd.request, f.every_taint_effect):
            return None
        base, sub = rd.base_name, rd.sub_name
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, d, s.driver):
                if must:
                    raise AllocationError(
                        f"claim {_kobj(self.claims[ci])}, request {rd.request.name}: cannot add device "
                        f"{'/'.join(did)} because a claim constraint would not be satisfied")
                for e in cons[:i]:
                    e.remove(base, sub)
                return None
        if not multi and marks:
            self.allocating.setdefault(did, set()).add(ci)
        share_id = consumed = None
        if f.consumable_capacity:
            if not self._capacity_fits(did, d, rd.request):
                return None  # as upstream: without giving back what was taken above
            if multi:
                consumed = {name: _consumed(rd.request.capacity_requests, name, q, d.capacity_policies.get(name))
                            for name, q in d.capacity.items()}
                self.a.shares += 1
                share_id = f"share-{self.a.shares}"
                held = self.allocating_capacity.setdefault(did, {})
                for name, q in consumed.items():
                    held[name] = held.get(name, Fraction(0)) + q
        self.result[ci].append((AllocatedDevice(
            rd.full_name, *did, admin_access=True if admin else None, share_id=share_id,
            consumed_capacity=consumed or None,
            binding_conditions=(d.binding_conditions or ()) if f.binding_conditions else (),
            binding_failure_conditions=d.binding_failure_conditions if f.binding_conditions else (),
            tolerations=rd.request.tolerations if f.result_tolerations else ()), s, d))

        def undo() -> None:
            for c in cons:
                c.remove(base, sub)
            if multi:
                if consumed:
                    held = self.allocating_capacity[did]
                    for name, q in consumed.items():
                        held[name] -= q
                        if not held[name]:
                            del held[name]
                    if not held:
                        del self.allocating_capacity[did]
            else:
                if marks:
                    self.allocating[did].discard(ci)
                if counted and f.counters_version >= 34:
                    self._release_counters(d, s, pool)
            self.result[ci].pop()

        return undo

    # ---- consumable capacity ------------------------------------------------------------

    def _capacity_fits(self, did: DeviceID, d: Device, req: ExactRequest) -> bool:
        """CmpRequestOverCapacity: every capacity the request names exists on the device
        (else the device is skipped), and for each of the device's capacities what the
        request consumes keeps its requestPolicy and, with what the device's allocated
        shares and the shares of this search consume, stays within the capacity."""
        asked = req.capacity_requests or {}
        if any(name not in d.capacity for name in asked):
            return False
        held = self.a.aggregated_capacity.get(did, {})
        taking = self.allocating_capacity.get(did, {})
        for name, value in d.capacity.items():
            policy = d.capacity_policies.get(name)
            want = _consumed(req.capacity_requests, name, value, policy)
            if policy is not None and _violates(want, policy):
                return False
            if held.get(name, Fraction(0)) + want + taking.get(name, Fraction(0)) > value:
                return False
        return True

    # ---- partitionable devices -----------------------------------------------------------

    def _counter_key(self, s: ResourceSlice, pool: Pool | None) -> str:
        if self.a.features.counters_version >= 35:
            assert pool is not None
            return pool.pool
        return s.name

    def _check_counters(self, did: DeviceID, d: Device, s: ResourceSlice, pool: Pool | None) -> bool:
        """checkAvailableCounters (1.34+) / checkAvailableCapacity (1.33)."""
        if self.a.features.counters_version <= 33:
            return self._check_counters_133(d, s)
        key = self._counter_key(s, pool)
        avail = self.a.available_counters.get(key)
        if avail is None:
            if self.a.features.counters_version >= 35:
                assert pool is not None
                sets = list(pool.counter_sets.items())
                slices = [*pool.slices, *pool.other_slices]
            else:
                sets, slices = list(s.shared_counters), [s]
            avail = {name: dict(counters) for name, counters in sets}
            for sl in slices:
                for dev in sl.devices:
                    if (sl.driver, sl.pool, dev.name) not in self.a.allocated:
                        continue
                    for cs, counters in dev.consumes_counters:
                        left = avail.get(cs, {})
                        for name, v in counters.items():
                            if name in left:
                                left[name] -= v
            self.a.available_counters[key] = avail
        consumed = self.consumed.setdefault(key, {})
        for cs, counters in d.consumes_counters:
            mine = consumed.setdefault(cs, {})
            for name, v in counters.items():
                mine[name] = mine.get(name, Fraction(0)) + v
        for cs, counters in avail.items():
            mine = consumed.get(cs, {})
            for name, v in counters.items():
                if v < mine.get(name, 0):
                    self._release_counters(d, s, pool)
                    return False
        return True

    def _check_counters_133(self, d: Device, s: ResourceSlice) -> bool:
        """1.33: the device's slice's counter sets less what its devices allocated or being
        allocated consume must hold each counter the device consumes."""
        wanted = {cs for cs, _ in d.consumes_counters}
        avail = {name: dict(counters) for name, counters in s.shared_counters if name in wanted}
        for dev in s.devices:
            if (s.driver, s.pool, dev.name) not in self.a.allocated and \
                    not self.allocating.get((s.driver, s.pool, dev.name)):
                continue
            for cs, counters in dev.consumes_counters:
                left = avail.get(cs, {})
                for name, v in counters.items():
                    if name in left:
                        left[name] -= v
        for cs, counters in d.consumes_counters:
            left = avail.get(cs, {})
            for name, v in counters.items():
                if name not in left or left[name] < v:
                    return False
        return True

    def _release_counters(self, d: Device, s: ResourceSlice, pool: Pool | None) -> None:
        consumed = self.consumed[self._counter_key(s, pool)]
        for cs, counters in d.consumes_counters:
            mine = consumed[cs]
            for name, v in counters.items():
                mine[name] -= v

    def _node_selector(self, devices: list[tuple[ResourceSlice, Device]]) -> tuple[NodeSelectorTerm, ...] | None:
        """createNodeSelector: pinned to a node when a device is node-local, else the
        requirements of the slices' one-term selectors together, else None; a device of a
        slice with per-device node selection gives its own."""
        exprs: list[Requirement] = []
        fields: list[Requirement] = []
        for s, d in devices:
            node_name, node_selector = (d.node_name, d.node_selector) if s.per_device_node_selection else \
                (s.node_name, s.node_selector)
            if self.a.features.experimental and (node_name or d.binds_to_node):
                # node-local, or bound to the node it is allocated for (bindsToNode)
                return (NodeSelectorTerm((), (Requirement("metadata.name", IN, (self.node.name,)),)),)
            if node_name:
                return (NodeSelectorTerm((), (Requirement("metadata.name", IN, (node_name,)),)),)
            if node_selector is not None:
                if len(node_selector) > 1:
                    raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(node_selector)} terms")
                if node_selector:
                    term = node_selector[0]
                    fields.extend(r for r in term.match_fields if r not in fields)
                    exprs.extend(r for r in term.match_expressions if r not in exprs)
        if exprs or fields:
            return (NodeSelectorTerm(tuple(exprs), tuple(fields)),)
        return None


def _consumed(asked: Mapping[str, Fraction] | None, name: str, value: Fraction, policy: RequestPolicy | None) -> Fraction:
    """calculateConsumedCapacity: what a request consumes of one capacity of a device."""
    want = None if asked is None else asked.get(name)
    if want is None:
        return policy.default if policy is not None and policy.default is not None else value
    if policy is None:
        return want
    if policy.range_min is not None:
        if want < policy.range_min:
            return policy.range_min
        if policy.range_step is None:
            return want
        lo, step = _int_value(policy.range_min), _int_value(policy.range_step)
        n, rem = divmod(_int_value(want) - lo, step)
        return Fraction(lo + step * (n + (1 if rem else 0)))
    if policy.valid_values:
        return next((v for v in policy.valid_values if want <= v), want)
    return want


def _violates(want: Fraction, policy: RequestPolicy) -> bool:
    """violatesPolicy."""
    if policy.default is not None and want == policy.default:
        return False
    if policy.range_min is not None:
        if policy.range_max is not None and want > policy.range_max:
            return True
        if policy.range_step is not None:
            added = _int_value(want) - _int_value(policy.range_min)
            return _go_rem(added, _int_value(policy.range_step)) != 0
        return False
    if policy.valid_values:
        return want not in policy.valid_values
    return False


def _int_value(q: Fraction) -> int:
    """resource.Quantity.Value(): the value rounded up to an integer."""
    return math.ceil(q)


def _go_rem(a: int, b: int) -> int:
    """Go's %: the remainder takes the sign of the dividend."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def taint_prevents_allocation(d: Device, req: ExactRequest, every_effect: bool = False) -> bool:
    """taintPreventsAllocation (1.35+): a NoSchedule or NoExecute taint that none of the
    request's tolerations tolerates (other effects are informational); 1.33-1.34
    (allTaintsTolerated): any taint none of them tolerates."""
    return any((every_effect or t.effect in (NO_SCHEDULE, NO_EXECUTE))
               and not any(tol.tolerates(t) for tol in req.tolerations) for t in d.taints)


def _kobj(claim: ResourceClaim) -> str:
    return f"{claim.namespace}/{claim.name}"


@dataclass(frozen=True)
class RequestReport:
    """For explain: one request (or subrequest) of an unallocated claim on one node."""

    claim: str
    request: str
    needed: int  # devices the request asks for (All: the matching ones)
    matching: int  # devices of the node's pools that its class and selectors accept
    free: int  # of those, not allocated to any claim (nor kept off by an untolerated taint)
    error: str = ""  # a CEL error met while checking
    tainted: int = 0  # matching devices not allocated whose taints the request does not tolerate


def request_reports(a: Allocator, node: Node, claims: list[ResourceClaim]) -> list[RequestReport]:
    """Per request of each claim: how many devices the node offers for it, and how many
    of them are free; the search itself (constraints, several requests competing for
    one device) is what decides, this only says what each request could get alone."""
    run = _Run(a, node, claims)
    run.pools = gather_pools(a.slices, node, a.features)
    out = []
    for ci, claim in enumerate(claims):
        for ri, req in enumerate(claim.requests):
            subs = list(req.first_available) if req.first_available else [req.exactly]
            for si, sub in enumerate(subs):
                assert sub is not None
                parent = req.name if req.first_available else None
                name = f"{parent}/{sub.name}" if parent else sub.name
                cls = a.classes.get(sub.class_name)
                if cls is None:
                    out.append(RequestReport(claim.key, name, sub.count, 0, 0, f"no device class {sub.class_name}"))
                    continue
                rd = _Request(sub, parent, cls)
                matching = free = tainted = 0
                error = ""
                for pool in run.pools:
                    if pool.incomplete or pool.invalid:
                        continue
                    for s in pool.slices:
                        for d in s.devices:
                            try:
                                ok = run._selectable((ci, ri, si), rd, s, d)
                            except AllocationError as e:
                                error = str(e)
                                ok = False
                            if ok:
                                matching += 1
                                if (s.driver, s.pool, d.name) not in a.allocated or sub.admin_access:
                                    if a.features.device_taints and taint_prevents_allocation(
                                            d, sub, a.features.every_taint_effect):
                                        tainted += 1
                                    else:
                                        free += 1
                needed = sub.count if sub.mode == EXACT_COUNT else matching
                out.append(RequestReport(claim.key, name, needed, matching, free, error, tainted))
    return out
