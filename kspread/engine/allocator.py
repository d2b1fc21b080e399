"""The structured allocator (k8s.io/dynamic-resource-allocation/structured, its
"stable"/"incubating" implementation as of v1.35.4): for one node, the first
allocation of every claim's requests that the exhaustive search finds.

The search, as upstream's: claims in order, each claim's requests in order, each
request's devices one at a time; for a device the candidates are the pools
available on the node, their slices, their devices in order; a candidate is taken
when it is not in use (allocated to some claim, or taken earlier in this search),
matches its class's and its request's CEL selectors and keeps every constraint of
its claim; when the rest cannot be allocated it is given back and the next one
tried. ``firstAvailable`` tries its subrequests in order; ``All`` takes every
matching device of the node's pools (none in use), and fails when a pool is
incomplete.

Upstream gathers pools in a Go map, so the order of pools on a node is random; the
order of slices in a pool is the informer's. kspread takes pools in the order their
first slice appears in the case and slices in case order: a case where the choice
of devices depends on it has a tie that upstream breaks at random.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kspread.engine.devicecel import CelError, device_matches
from kspread.engine.devices import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    AllocatedDevice,
    Allocation,
    Attribute,
    Device,
    DeviceClass,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
    selector_matches,
)
from kspread.engine.labels import IN, Requirement
from kspread.engine.model import Node, NodeSelectorTerm

DeviceID = tuple[str, str, str]


class AllocationError(Exception):
    """A fatal error (upstream: Allocate returns an error that is not
    ErrFailedAllocationOnNode): the Filter returns Error."""


class FailedOnNode(Exception):
    """ErrFailedAllocationOnNode: Unschedulable on this node only."""


@dataclass
class Features:
    admin_access: bool = False
    prioritized_list: bool = False
    # from 1.34 a device taken with admin access counts as taken for its own claim (not
    # for the others); up to 1.33 admin access marks nothing: an admin request may take a
    # device the same claim already took, and another request one it took with admin access
    admin_marks_own_claim: bool = True
    # from 1.34 an All request that fails midway gives back the devices it took; v1.33.3
    # drops the rollback (allocateDevice's undo discarded): they stay taken, in the result
    all_rolls_back: bool = True


@dataclass
class Pool:
    driver: str
    pool: str
    slices: list[ResourceSlice]
    incomplete: bool = False
    invalid: bool = False

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool}"


def node_matches(node: Node, slice_: ResourceSlice) -> bool:
    if slice_.node_name:
        return node.name == slice_.node_name
    if slice_.all_nodes:
        return True
    if slice_.node_selector is not None:
        return selector_matches(slice_.node_selector, node)
    return False


def gather_pools(slices: list[ResourceSlice], node: Node) -> list[Pool]:
    """GatherPools: the pools with slices available on the node, the newest
    generation only, each marked incomplete or invalid as upstream does."""
    pools: dict[tuple[str, str], Pool] = {}
    for s in slices:
        if not (s.node_name or s.all_nodes or s.node_selector is not None):
            continue  # nothing known set: some future extension
        if not node_matches(node, s):
            continue
        pid = (s.driver, s.pool)
        pool = pools.get(pid)
        if pool is None:
            pools[pid] = Pool(s.driver, s.pool, [s])
            continue
        if s.generation < pool.slices[0].generation:
            continue
        if s.generation > pool.slices[0].generation:
            pool.slices = []
        pool.slices.append(s)
    out: list[Pool] = []
    for pid, pool in pools.items():
        gen = pool.slices[0].generation
        complete = len(pool.slices) == pool.slices[0].slice_count
        if not complete:
            obsolete = False
            n = 0
            for s in slices:
                if (s.driver, s.pool) != pid:
                    continue
                if s.generation == gen:
                    n += 1
                elif s.generation > gen:
                    obsolete = True
                    break
            if obsolete:
                continue
            complete = n == pool.slices[0].slice_count
        pool.incomplete = not complete
        names: set[str] = set()
        for s in pool.slices:
            for d in s.devices:
                if d.name in names:
                    pool.invalid = True
                names.add(d.name)
        out.append(pool)
    return out


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
    def __init__(self, attribute: str, requests: tuple[str, ...]) -> None:
        self.attribute = attribute
        self.requests = set(requests)
        self.value: Attribute | None = None
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
            self.value = attr
            self.num = 1
            return True
        assert self.value is not None
        if attr.kind != self.value.kind or attr.value != self.value.value:
            return False
        self.num += 1
        return True

    def remove(self, base: str, sub: str) -> None:
        if self._applies(base, sub):
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
                 slices: list[ResourceSlice], cel_results: dict | None = None) -> None:
        self.features = features
        self.allocated = allocated
        self.classes = classes
        self.slices = slices
        # (device, expression, driver) -> the selector's result or its CelError: a device's
        # answer to an expression never changes, so a run keeps them across cycles
        self.cel_results = {} if cel_results is None else cel_results

    def allocate(self, node: Node, claims: list[ResourceClaim]) -> list[Allocation] | None:
        return _Run(self, node, claims).run()


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
        self.result: list[list[tuple[AllocatedDevice, ResourceSlice]]] = [[] for _ in claims]

    # ---- setup --------------------------------------------------------------------

    def run(self) -> list[Allocation] | None:
        self.pools = gather_pools(self.a.slices, self.node)
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
            self.constraints.append([_MatchAttribute(c.attribute, c.requests) for c in claim.constraints])
        self.matches = {}  # upstream starts the search with an empty cache (validation's entries dropped)
        if not self._allocate_one(0, 0, 0, 0, False):
            if any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        out = []
        for devices in self.result:
            out.append(Allocation(tuple(d for d, _ in devices), self._node_selector([s for _, s in devices])))
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
                # the earlier one's cached answers, so its devices are the earlier one's
                key = (ci, ri, max(si - 1, 0))
                for s in pool.slices:
                    for d in s.devices:
                        if self._selectable(key, rd, s, d):
                            rd.all_devices.append(((s.driver, s.pool, d.name), d, s))
            rd.num_devices = len(rd.all_devices)
        else:  # pragma: no cover - the loader admits the two modes
            raise AllocationError(f"claim {_kobj(claim)}, request {name}: unsupported count mode {req.mode}")
        return rd

    # ---- the search ---------------------------------------------------------------

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
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
        if req.mode == ALL and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.result[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            return False
        if req.mode == ALL:
            did, dev, s = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, did, dev, s, must=True)
            if undo is None:
                return False
            # upstream (1.33-1.35.4) goes on with deviceIndices{claim, request, device + 1}:
            # the subrequest index is dropped, so after the first device of an All
            # subrequest past the first, the first subrequest's data decides (its count:
            # usually "done"; its selectors for the devices that follow)
            if self._allocate_one(ci, ri, 0, di + 1, in_sub):
                return True
            if self.a.features.all_rolls_back:
                undo()
            return False
        admin = bool(req.admin_access)
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for s in pool.slices:
                for d in s.devices:
                    did = (pool.driver, pool.pool, d.name)
                    if admin and self.a.features.admin_marks_own_claim and ci in self.allocating.get(did, ()):
                        continue
                    if not admin and self._in_use(did):
                        continue
                    if not self._selectable((ci, ri, si), rd, s, d):
                        continue
                    undo = self._allocate_device(ci, rd, did, d, s, must=False)
                    if undo is None:
                        continue
                    if self._allocate_one(ci, ri, si, di + 1, in_sub):
                        return True
                    undo()
        return False

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated or bool(self.allocating.get(did))

    def _selectable(self, key: tuple[int, int, int], rd: _Request, s: ResourceSlice, d: Device) -> bool:
        mk = (s.driver, s.pool, d.name, key)
        hit = self.matches.get(mk)
        if hit is not None:
            return hit
        ok = self._selectors_match(key[0], d, s.driver, rd.cls, rd.cls.selectors) and \
            self._selectors_match(key[0], d, s.driver, None, rd.request.selectors)
        self.matches[mk] = ok
        return ok

    def _selectors_match(self, ci: int, d: Device, driver: str, cls: DeviceClass | None,
                         selectors: tuple[str, ...]) -> bool:
        for i, expr in enumerate(selectors):
            key = (id(d), expr, driver)
            ok: bool | CelError | None = self.a.cel_results.get(key)
            if ok is None:
                try:
                    ok = device_matches(expr, d, driver)
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

    def _allocate_device(self, ci: int, rd: _Request, did: DeviceID, d: Device, s: ResourceSlice, must: bool):
        admin = bool(rd.request.admin_access)
        marks = not admin or self.a.features.admin_marks_own_claim
        if admin and marks and ci in self.allocating.get(did, ()):
            return None
        if not admin and self._in_use(did):
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
        if marks:
            self.allocating.setdefault(did, set()).add(ci)
        self.result[ci].append((AllocatedDevice(rd.full_name, *did, admin_access=True if admin else None), s))

        def undo() -> None:
            for c in cons:
                c.remove(base, sub)
            if marks:
                self.allocating[did].discard(ci)
            self.result[ci].pop()

        return undo

    def _node_selector(self, slices: list[ResourceSlice]) -> tuple[NodeSelectorTerm, ...] | None:
        """createNodeSelector: pinned to a node when a device is node-local, else the
        requirements of the slices' one-term selectors together, else None."""
        exprs: list[Requirement] = []
        fields: list[Requirement] = []
        for s in slices:
            if s.node_name:
                return (NodeSelectorTerm((), (Requirement("metadata.name", IN, (s.node_name,)),)),)
            if s.node_selector is not None:
                if len(s.node_selector) > 1:
                    raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(s.node_selector)} terms")
                if s.node_selector:
                    term = s.node_selector[0]
                    fields.extend(r for r in term.match_fields if r not in fields)
                    exprs.extend(r for r in term.match_expressions if r not in exprs)
        if exprs or fields:
            return (NodeSelectorTerm(tuple(exprs), tuple(fields)),)
        return None


def _kobj(claim: ResourceClaim) -> str:
    return f"{claim.namespace}/{claim.name}"


@dataclass(frozen=True)
class RequestReport:
    """For explain: one request (or subrequest) of an unallocated claim on one node."""

    claim: str
    request: str
    needed: int  # devices the request asks for (All: the matching ones)
    matching: int  # devices of the node's pools that its class and selectors accept
    free: int  # of those, not allocated to any claim
    error: str = ""  # a CEL error met while checking


def request_reports(a: Allocator, node: Node, claims: list[ResourceClaim]) -> list[RequestReport]:
    """Per request of each claim: how many devices the node offers for it, and how many
    of them are free; the search itself (constraints, several requests competing for
    one device) is what decides, this only says what each request could get alone."""
    run = _Run(a, node, claims)
    run.pools = gather_pools(a.slices, node)
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
                matching = free = 0
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
                                    free += 1
                needed = sub.count if sub.mode == EXACT_COUNT else matching
                out.append(RequestReport(claim.key, name, needed, matching, free, error))
    return out
