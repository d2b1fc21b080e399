"""The cluster snapshot the plugins read: one NodeInfo per node, with indexes.

Spreading plugins count "pods in namespace N whose labels match selector S" per
node or per topology domain. Pods of one workload share their labels, so the
snapshot groups non-terminating pods by (namespace, label set) and keeps, per
group, how many of its pods sit on each node. A count then costs time in the
number of distinct groups and the nodes that hold them, never in the number of
pods; whether a selector matches a group is computed once and cached.

Placements, evictions and nominations of a ``schedule`` sequence update the
snapshot in place (``add_pod`` / ``remove_pod``), as the scheduler's cache does.

Columns. Besides one NodeInfo per node, the snapshot keeps per-node columns (numpy
int64, in the case's node order): allocatable and requested per resource, the
non-zero cpu / memory requests, the pod count, and for the static node data codes
that let plugins evaluate a node property once per distinct value (taint sets,
label values per key). The snapshot is their one owner: ``add_pod`` / ``remove_pod``
update them in place, and plugins read them through a ``NodeSet`` (the candidate
nodes of one Filter or Score call). A ``NodeSet`` can also be built from detached
NodeInfos (a node with nominated pods added, or with preemption victims removed):
the same plugin code then reads columns computed from those NodeInfos.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

import numpy as np

from kspread.engine.labels import Selector
from kspread.engine.model import Node, Pod
from kspread.engine.quantity import PODS
from kspread.engine.resources import node_non_zero_requests, node_pod_requests, requests_key
from kspread.engine.versions import Version

GroupKey = tuple[str, frozenset]  # (namespace, frozenset of label items)


PortKey = tuple[str, str, int]  # (hostIP, protocol, hostPort)

_H = TypeVar("_H", bound=Hashable)  # a static node property that NodeSet.evaluate evaluates once per value


def has_pod_affinity(pod: Pod) -> bool:
    """Upstream's podWithAffinity: the pod has a podAffinity or podAntiAffinity section."""
    a = pod.affinity
    return a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None)


def has_required_anti_affinity(pod: Pod) -> bool:
    """Upstream's podWithRequiredAntiAffinity: at least one required anti-affinity term."""
    a = pod.affinity
    return a is not None and a.pod_anti_affinity is not None and bool(a.pod_anti_affinity.required)
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


def pod_host_ports(pod: Pod) -> list[PortKey]:
    """The host ports of the pod's containers as HostPortInfo keys them: an empty
    hostIP is 0.0.0.0, an empty protocol TCP; ports with hostPort <= 0 are not used."""
    out: list[PortKey] = []
    for c in pod.containers:
        for p in c.ports:
            if p.host_port > 0:
                out.append((p.host_ip or DEFAULT_BIND_ALL_HOST_IP, p.protocol or "TCP", p.host_port))
    return out


def group_key(pod: Pod) -> GroupKey:
    return (pod.namespace, frozenset(pod.labels.items()))


class SelectorCache:
    """Whether a selector matches a label group, computed once per pair."""

    __slots__ = ("_cache",)

    def __init__(self) -> None:
        self._cache: dict[tuple[Selector, GroupKey], bool] = {}

    def matches(self, selector: Selector, namespace: str, key: GroupKey) -> bool:
        if key[0] != namespace:
            return False
        ck = (selector, key)
        hit = self._cache.get(ck)
        if hit is None:
            hit = selector.matches(dict(key[1]))
            self._cache[ck] = hit
        return hit


class PodEntry:
    """What a pod adds to a NodeInfo, computed once per pod (the requests once per
    distinct request shape)."""

    __slots__ = ("requests", "cpu", "memory", "ports", "group", "affinity", "required_anti_affinity")

    def __init__(self, pod: Pod, version: Version, shapes: dict) -> None:
        key = requests_key(pod)
        hit = shapes.get(key)
        if hit is None:
            if len(shapes) >= PodRequestCache.LIMIT:
                shapes.clear()
            cpu, mem = node_non_zero_requests(pod, version)
            hit = shapes[key] = (node_pod_requests(pod, version), cpu, mem)
        # the requests mapping is shared by the pods of one shape: read only
        self.requests: dict[str, int] = hit[0]
        self.cpu: int = hit[1]
        self.memory: int = hit[2]
        self.ports = pod_host_ports(pod)
        self.group = group_key(pod)
        self.affinity = has_pod_affinity(pod)
        self.required_anti_affinity = self.affinity and has_required_anti_affinity(pod)


class PodRequestCache:
    """What a pod adds to a NodeInfo (``node_pod_requests``, ``node_non_zero_requests``,
    host ports, label group, affinity), computed once per pod: pods are immutable, and
    a sequence or a preemption dry run adds and removes the same pods many times."""

    __slots__ = ("_cache", "_version", "_shapes", "_last")

    # entries kept at most (then the cache starts over), so a long sequence stays flat
    LIMIT = 4096

    def __init__(self, version: Version) -> None:
        self._cache: dict[Pod, PodEntry] = {}
        self._shapes: dict[tuple, tuple[dict[str, int], int, int]] = {}
        self._version = version
        # the fields a PodEntry reads of the last pod one was made for, and that entry
        self._last: tuple | None = None

    def get(self, pod: Pod) -> PodEntry:
        hit = self._cache.get(pod)
        if hit is None:
            if len(self._cache) >= self.LIMIT:
                self._cache.clear()
            # a pod that shares every field an entry reads with the last pod given one
            # (the same converted objects, never mutated, which ``_last`` holds; equal
            # namespace and labels) shares its entry (read only): a sequence binds a
            # copy of each pod it schedules, and pods written alike share those objects
            last = self._last
            if (last is not None and last[0] is pod.containers and last[1] is pod.init_containers
                    and last[2] is pod.overhead and last[3] is pod.level_requests and last[4] is pod.affinity
                    and last[5] == pod.namespace and (last[6] is pod.labels or last[6] == pod.labels)):
                hit = last[7]
            else:
                hit = PodEntry(pod, self._version, self._shapes)
                self._last = (pod.containers, pod.init_containers, pod.overhead, pod.level_requests, pod.affinity,
                              pod.namespace, pod.labels, hit)
            self._cache[pod] = hit
        return hit

    def entry(self, pod: Pod) -> PodEntry:
        """The pod's entry without keeping it (building a snapshot of many pods)."""
        hit = self._cache.get(pod)
        return hit if hit is not None else PodEntry(pod, self._version, self._shapes)


def swap_remove(pods: dict[str, Pod], key: str) -> Pod:
    """Remove ``key`` from a node's pods as upstream's NodeInfo.RemovePod does
    (removeFromSlice): the node's last pod takes the removed one's place. The order is the
    node's pod order, which preemption reads (victims tied on priority and start time keep
    it). Returns the removed pod."""
    keys = list(pods)
    stored = pods.pop(key)
    i = keys.index(key)
    if i < len(keys) - 1:
        for k in keys[i + 1:-1]:  # the last key now follows keys[:i]; the others after it
            pods[k] = pods.pop(k)
    return stored


class NodeInfo:
    """A node and the pods on it (framework.NodeInfo)."""

    __slots__ = ("node", "pods", "requested", "groups", "non_zero_requested", "used_ports", "_version", "_matcher",
                 "pods_with_affinity", "pods_with_required_anti_affinity", "_requests")

    def __init__(self, node: Node, version: Version, matcher: SelectorCache,
                 requests: PodRequestCache | None = None) -> None:
        self.node = node
        self.pods: dict[str, Pod] = {}
        self.requested: dict[str, int] = {}
        # non-terminating pods by (namespace, labels) -> count
        self.groups: dict[GroupKey, int] = {}
        # NonZeroRequested: cpu / memory with the scoring defaults for unset requests
        self.non_zero_requested: dict[str, int] = {"cpu": 0, "memory": 0}
        # UsedPorts: (hostIP, protocol, hostPort) -> number of pods using it, every pod
        # on the node (terminating too), hostPort > 0 only
        self.used_ports: dict[PortKey, int] = {}
        # PodsWithAffinity / PodsWithRequiredAntiAffinity (every pod, terminating too), by key
        self.pods_with_affinity: dict[str, Pod] = {}
        self.pods_with_required_anti_affinity: dict[str, Pod] = {}
        self._version = version
        self._matcher = matcher
        self._requests = requests if requests is not None else PodRequestCache(version)

    @property
    def name(self) -> str:
        return self.node.name

    def without_pods(self) -> NodeInfo:
        """The node with no pod on it (what upstream's HTTPExtender.Filter makes of a Node
        object an extender returns)."""
        return NodeInfo(self.node, self._version, self._matcher, self._requests)

    def clone(self) -> NodeInfo:
        c = NodeInfo(self.node, self._version, self._matcher, self._requests)
        c.pods = dict(self.pods)
        c.requested = dict(self.requested)
        c.groups = dict(self.groups)
        c.non_zero_requested = dict(self.non_zero_requested)
        c.used_ports = dict(self.used_ports)
        c.pods_with_affinity = dict(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = dict(self.pods_with_required_anti_affinity)
        return c

    def add_pod(self, pod: Pod, entry: PodEntry | None = None) -> None:
        key = pod.key
        self.pods[key] = pod
        e = entry if entry is not None else self._requests.get(pod)
        requested = self.requested
        for k, v in e.requests.items():
            requested[k] = requested.get(k, 0) + v
        self.non_zero_requested["cpu"] += e.cpu
        self.non_zero_requested["memory"] += e.memory
        for port in e.ports:
            self.used_ports[port] = self.used_ports.get(port, 0) + 1
        if e.affinity:
            self.pods_with_affinity[key] = pod
            if e.required_anti_affinity:
                self.pods_with_required_anti_affinity[key] = pod
        if not pod.terminating:
            g = e.group
            self.groups[g] = self.groups.get(g, 0) + 1

    def remove_pod(self, pod: Pod) -> None:
        stored = swap_remove(self.pods, pod.key)
        e = self._requests.get(stored)
        requested = self.requested
        for k, v in e.requests.items():
            requested[k] -= v
        self.non_zero_requested["cpu"] -= e.cpu
        self.non_zero_requested["memory"] -= e.memory
        # HostPortInfo is a set, not a multiset: removing a pod frees its host ports even
        # when another pod on the node uses the same one (HostPortInfo.Remove deletes the
        # entry), as upstream's cache and preemption's dry run see it.
        for port in e.ports:
            self.used_ports.pop(port, None)
        if e.affinity:
            self.pods_with_affinity.pop(stored.key, None)
            self.pods_with_required_anti_affinity.pop(stored.key, None)
        if not stored.terminating:
            g = e.group
            n = self.groups[g] - 1
            if n:
                self.groups[g] = n
            else:
                del self.groups[g]

    def count_matching(self, namespace: str, selector: Selector) -> int:
        """Non-terminating pods in ``namespace`` whose labels match ``selector``."""
        total = 0
        m = self._matcher
        for g, n in self.groups.items():
            if m.matches(selector, namespace, g):
                total += n
        return total


class Snapshot:
    """All NodeInfos in the case's node order, plus the group index."""

    def __init__(self, nodes: Iterable[Node], pods: Iterable[Pod], version: Version) -> None:
        self.version = version
        self.matcher = SelectorCache()
        self.requests = PodRequestCache(version)
        self.node_infos: dict[str, NodeInfo] = {n.name: NodeInfo(n, version, self.matcher, self.requests)
                                                for n in nodes}
        self.node_list: list[NodeInfo] = list(self.node_infos.values())
        # (namespace, labels) -> {node name: count} over non-terminating bound pods
        self.group_nodes: dict[GroupKey, dict[str, int]] = {}
        # the same over every bound pod, terminating ones too (InterPodAffinity counts them)
        self.all_group_nodes: dict[GroupKey, dict[str, int]] = {}
        # columns (see the module docstring)
        n = len(self.node_list)
        self.position: dict[str, int] = {info.name: i for i, info in enumerate(self.node_list)}
        self.all_positions = np.arange(n, dtype=np.intp)
        self._name_array: np.ndarray | None = None
        self._allocatable: dict[str, np.ndarray] = {}
        self._requested: dict[str, np.ndarray] = {}
        self._non_zero = {"cpu": np.zeros(n, np.int64), "memory": np.zeros(n, np.int64)}
        self.pod_count = np.zeros(n, np.int64)
        self._static_codes: dict[Hashable, tuple[np.ndarray, list]] = {}
        self._static_memo: dict[Hashable, np.ndarray] = {}
        # node position -> pods with (anti-)affinity / with required anti-affinity on it
        self._with_affinity: dict[int, int] = {}
        self._with_required_anti: dict[int, int] = {}
        # (namespace, selector) -> per node, non-terminating pods matching (kept current)
        self._count_columns: dict[tuple[str, Selector], np.ndarray] = {}
        # label group -> the count columns its pods count in (cleared as columns come and go)
        self._group_columns: dict[GroupKey, list[np.ndarray]] = {}
        # every bound pod as a row (``pod_rows``), built when first asked for
        self.pod_table: PodTable | None = None
        # the columns' changes: ``column_version`` counts them, the log keeps the node
        # position of the latest ones (``changed_since``)
        self.column_version = 0
        self._column_log: list[int] = []
        # resource -> (column_version, a lower bound of what every node has left): ``least_left``
        self._least_left: dict[str, tuple[int, int]] = {}
        # (kind, resource) -> (column_version, bounds of the column): ``bounds``
        self._bounds: dict[tuple[str, str], tuple[int, int, int]] = {}
        self._static_values: dict[Hashable, object] = {}  # ``static_value``
        # nodes grouped by the values of all their columns (``column_groups``), kept
        # current from the first use
        self._groups: _ColumnGroups | None = None
        # the pods a pod group cycle (1.36) assumed in the snapshot (Snapshot.AssumePod), which
        # the snapshot's usedPVCSet, made when it was taken, does not count
        self.group_assumed: set[str] = set()
        self._add_all([p for p in pods if p.node_name is not None])

    def _add_all(self, pods: list[Pod]) -> None:
        """``add_pod`` for many pods, the columns filled at the end."""
        positions = np.empty(len(pods), np.intp)
        cpu = np.empty(len(pods), np.int64)
        mem = np.empty(len(pods), np.int64)
        position, infos, entry = self.position, self.node_infos, self.requests.entry
        groups, all_groups = self.group_nodes, self.all_group_nodes
        for k, pod in enumerate(pods):
            node = pod.node_name
            assert node is not None
            e = entry(pod)
            infos[node].add_pod(pod, e)
            i = positions[k] = position[node]
            cpu[k] = e.cpu
            mem[k] = e.memory
            if e.affinity:
                _count(self._with_affinity, i, 1)
                if e.required_anti_affinity:
                    _count(self._with_required_anti, i, 1)
            per_node = all_groups.setdefault(e.group, {})
            per_node[node] = per_node.get(node, 0) + 1
            if not pod.terminating:
                per_node = groups.setdefault(e.group, {})
                per_node[node] = per_node.get(node, 0) + 1
        n = len(self.node_list)
        self.pod_count += np.bincount(positions, minlength=n).astype(np.int64)
        np.add.at(self._non_zero["cpu"], positions, cpu)
        np.add.at(self._non_zero["memory"], positions, mem)

    def name_array(self) -> np.ndarray:
        """The node names in snapshot order as a numpy object array (made once: a node's
        name and position never change in a snapshot), to gather names by positions."""
        a = self._name_array
        if a is None:
            a = self._name_array = np.array([info.name for info in self.node_list], dtype=object)
        return a

    def __len__(self) -> int:
        return len(self.node_list)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_list)

    def get(self, name: str) -> NodeInfo:
        return self.node_infos[name]

    # ---- columns -------------------------------------------------------------------

    def allocatable(self, resource: str) -> np.ndarray:
        col = self._allocatable.get(resource)
        if col is None:
            col = np.array([info.node.allocatable.get(resource, 0) for info in self.node_list], np.int64)
            col.flags.writeable = False  # (static: what is derived from it may be kept)
            self._allocatable[resource] = col
        return col

    def requested(self, resource: str) -> np.ndarray:
        col = self._requested.get(resource)
        if col is None:
            col = np.array([info.requested.get(resource, 0) for info in self.node_list], np.int64)
            self._requested[resource] = col
        return col

    def non_zero_requested(self, resource: str) -> np.ndarray:
        return self._non_zero[resource]

    def static_codes(self, key: Hashable, fn: Callable[[Node], Hashable]) -> tuple[np.ndarray, list]:
        """Per node the code of ``fn(node)`` (a static property: labels, taints) and the
        distinct values in code order; computed once per ``key``."""
        hit = self._static_codes.get(key)
        if hit is None:
            hit = _codes([info.node for info in self.node_list], fn)
            self._static_codes[key] = hit
        return hit

    STATIC_MEMO = 256  # values kept by ``static_memo`` (then the oldest is dropped)

    def static_memo(self, key: Hashable, make: Callable[[], np.ndarray]) -> np.ndarray:
        """``make()``: per node (every node, in order) a value that depends only on static
        node data (labels, taints) and on ``key``, computed once per key (read only)."""
        hit = self._static_memo.get(key)
        if hit is None:
            if len(self._static_memo) >= self.STATIC_MEMO:
                del self._static_memo[next(iter(self._static_memo))]
            hit = self._static_memo[key] = make()
            hit.flags.writeable = False
        return hit

    def nodes(self, positions: np.ndarray | None = None) -> NodeSet:
        return NodeSet(self, self.all_positions if positions is None else positions)

    def has_affinity_pods(self, required_anti_affinity: bool = False) -> bool:
        """Whether ``infos_with_affinity_pods`` lists any node."""
        return bool(self._with_required_anti if required_anti_affinity else self._with_affinity)

    def infos_with_affinity_pods(self, required_anti_affinity: bool = False) -> list[NodeInfo]:
        """NodeInfos (node order) of the nodes with a pod that has pod (anti-)affinity
        (HavePodsWithAffinityList), or a required anti-affinity term
        (HavePodsWithRequiredAntiAffinityList)."""
        index = self._with_required_anti if required_anti_affinity else self._with_affinity
        return [self.node_list[i] for i in sorted(index)]

    COUNT_COLUMNS = 64  # selectors whose count columns are kept current
    GROUP_COLUMNS = 4096  # label groups whose count columns are kept (then it starts over)

    def count_column(self, namespace: str, selector: Selector) -> np.ndarray:
        """Per node (snapshot order) the non-terminating pods in ``namespace`` matching
        ``selector``; kept current as pods are added and removed. Read only."""
        key = (namespace, selector)
        col = self._count_columns.get(key)
        if col is None:
            col = np.zeros(len(self.node_list), np.int64)
            position = self.position
            m = self.matcher
            for g, per_node in self.group_nodes.items():
                if m.matches(selector, namespace, g):
                    for node, n in per_node.items():
                        col[position[node]] += n
            if len(self._count_columns) >= self.COUNT_COLUMNS:
                del self._count_columns[next(iter(self._count_columns))]
            self._count_columns[key] = col
            self._group_columns.clear()
        return col

    def pod_rows(self, positions: np.ndarray) -> PodRows:
        """The pods on the nodes at ``positions`` as rows, node-major (``node`` the index
        in ``positions``), each node's in its pod order. Read only."""
        return self._pod_table().rows(positions, len(self.node_list))

    def pod_sums_below(self, positions: np.ndarray, priority: int) -> PodSums:
        """What the pods of priority below ``priority`` add to the nodes at ``positions``
        (distinct): ``pod_rows``' rows of those pods, summed per node (int64)."""
        return self._pod_table().sums_below(positions, len(self.node_list), priority)

    def pod_requests(self) -> list[str]:
        """The resources of the pods' requests (``pod_rows``' ``requests`` columns)."""
        return list(self._pod_table().requests)

    def _pod_table(self) -> PodTable:
        table = self.pod_table
        if table is None:
            table = self.pod_table = PodTable()
            pods = [p for info in self.node_list for p in info.pods.values()]
            at = np.repeat(np.arange(len(self.node_list), dtype=np.intp),
                           [len(info.pods) for info in self.node_list])
            table.extend(pods, at, [self.requests.entry(p) for p in pods])
        return table

    def column_groups(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The nodes grouped by the values of every column (allocatable, requested and
        non-zero requested per resource, pod count): (per node its group, a node of each
        group), so that what depends only on the columns is computed once per group;
        None when the groups are more than a quarter of the nodes. Read only."""
        g = self._groups
        if g is None:
            g = self._groups = _ColumnGroups(self)
        if 4 * len(g.reps) > len(self.node_list):
            return None
        return g.codes, g.representatives()

    def column_key(self, i: int) -> tuple:
        """The values of every column at node position ``i`` (``column_groups``): the
        allocatable as a static code, the requests of the NodeInfo (the columns' source)."""
        info = self.node_list[i]
        alloc = self.static_codes("allocatable", lambda n: tuple(sorted(n.allocatable.items())))[0]
        nz = info.non_zero_requested
        return (alloc.item(i), tuple(sorted((k, v) for k, v in info.requested.items() if v)), nz["cpu"], nz["memory"],
                len(info.pods))

    LEAST_LEFT_ROWS = 64  # changed nodes read one by one at most by ``least_left``; more: every node

    def least_left(self, resource: str) -> int:
        """A lower bound of what each node has left of ``resource`` (allocatable less
        requested; ``pods``: allowed pods less the pod count; int64, exact: see
        NodeResourcesFit's comparisons): the least over every node when computed, then
        kept through the columns' changes (``changed_since``) by the changed nodes' own
        (a node whose left grew leaves the bound below the least, still a bound), so that
        a request within it fails no node without a comparison per node."""
        alloc = self.allocatable(resource)
        used = self.pod_count if resource == PODS else self.requested(resource)
        hit = self._least_left.get(resource)
        if hit is not None:
            changed = self.changed_since(hit[0])
            if changed is not None and len(changed) <= self.LEAST_LEFT_ROWS:
                least = hit[1]
                for i in changed:
                    left = alloc.item(i) - used.item(i)
                    if left < least:
                        least = left
                self._least_left[resource] = (self.column_version, least)
                return least
        least = int((alloc - used).min()) if len(alloc) else 0
        self._least_left[resource] = (self.column_version, least)
        return least

    def bounds(self, kind: str, resource: str) -> tuple[int, int]:
        """Bounds (low, high) of the ``requested`` or ``non_zero`` column of ``resource``
        over every node: its least and largest value when computed, then kept through the
        columns' changes by the changed nodes' own values (``least_left``'s way: a value
        that moved inwards leaves them bounds, no longer tight)."""
        col = self.requested(resource) if kind == "requested" else self.non_zero_requested(resource)
        hit = self._bounds.get((kind, resource))
        if hit is not None:
            changed = self.changed_since(hit[0])
            if changed is not None and len(changed) <= self.LEAST_LEFT_ROWS:
                lo, hi = hit[1], hit[2]
                for i in changed:
                    v = col.item(i)
                    if v < lo:
                        lo = v
                    elif v > hi:
                        hi = v
                self._bounds[(kind, resource)] = (self.column_version, lo, hi)
                return lo, hi
        lo, hi = (int(col.min()), int(col.max())) if len(col) else (0, 0)
        self._bounds[(kind, resource)] = (self.column_version, lo, hi)
        return lo, hi

    def static_value(self, key: Hashable, make: Callable[[], object]) -> object:
        """``make()``, a value that depends only on static node data (allocatable,
        labels, taints) and on ``key``, computed once per key (read only)."""
        values = self._static_values
        if key in values:
            return values[key]
        if len(values) >= self.STATIC_MEMO:
            del values[next(iter(values))]
        v = values[key] = make()
        return v

    COLUMN_LOG = 4096  # column changes kept at most

    def changed_since(self, version: int) -> list[int] | None:
        """The node positions whose columns changed after ``column_version`` was
        ``version`` (a position once per change); None when those are no longer kept."""
        n = self.column_version - version
        log = self._column_log
        if n < 0 or n > len(log):
            return None
        return log[len(log) - n:] if n else []

    def _column_add(self, pod: Pod, sign: int, e: PodEntry) -> None:
        """The pod (its entry ``e``) added to (sign 1) or removed from (-1) the columns."""
        i = self.position[pod.node_name]  # type: ignore[index]
        self.column_version += 1
        log = self._column_log
        log.append(i)
        if len(log) > self.COLUMN_LOG:
            del log[:self.COLUMN_LOG // 2]
        if self._count_columns and not pod.terminating:
            g = e.group
            cols = self._group_columns.get(g)
            if cols is None:
                m = self.matcher
                if len(self._group_columns) >= self.GROUP_COLUMNS:
                    self._group_columns.clear()
                cols = self._group_columns[g] = [col for (namespace, selector), col in self._count_columns.items()
                                                 if m.matches(selector, namespace, g)]
            for col in cols:
                col[i] += sign
        if e.affinity:
            _count(self._with_affinity, i, sign)
            if e.required_anti_affinity:
                _count(self._with_required_anti, i, sign)
        self.pod_count[i] += sign
        cpu, mem = e.cpu, e.memory
        for k, v in e.requests.items():
            column = self._requested.get(k)
            if column is not None:
                column[i] += sign * v
        self._non_zero["cpu"][i] += sign * cpu
        self._non_zero["memory"][i] += sign * mem
        if self._groups is not None:
            self._groups.move(i)

    def add_pod(self, pod: Pod) -> None:
        node = pod.node_name
        assert node is not None
        e = self.requests.get(pod)
        self.node_infos[node].add_pod(pod, e)
        self._column_add(pod, 1, e)
        if self.pod_table is not None:
            self.pod_table.append(pod, self.position[node], e)
        all_per_node = self.all_group_nodes.setdefault(e.group, {})
        all_per_node[node] = all_per_node.get(node, 0) + 1
        if not pod.terminating:
            per_node = self.group_nodes.setdefault(e.group, {})
            per_node[node] = per_node.get(node, 0) + 1

    def remove_pod(self, pod: Pod) -> None:
        assert pod.node_name is not None
        info = self.node_infos[pod.node_name]
        stored = info.pods[pod.key]
        e = self.requests.get(stored)
        info.remove_pod(stored)
        self._column_add(stored, -1, e)
        if self.pod_table is not None:
            self.pod_table.remove(stored)
        _decrement(self.all_group_nodes, e.group, pod.node_name)
        if not stored.terminating:
            g = e.group
            per_node = self.group_nodes[g]
            per_node[pod.node_name] -= 1
            if not per_node[pod.node_name]:
                del per_node[pod.node_name]
                if not per_node:
                    del self.group_nodes[g]

    def counts_by_node(self, namespace: str, selector: Selector) -> Mapping[str, int]:
        """Node name -> number of non-terminating pods in ``namespace`` matching
        ``selector`` (nodes without any are absent)."""
        out: dict[str, int] = {}
        m = self.matcher
        for g, per_node in self.group_nodes.items():
            if m.matches(selector, namespace, g):
                for node, n in per_node.items():
                    out[node] = out.get(node, 0) + n
        return out


class _ColumnGroups:
    """``Snapshot.column_groups``: a code per distinct ``column_key``, kept current node
    by node as pods are added and removed (``move``), a node of each code in use."""

    __slots__ = ("snapshot", "index", "codes", "members", "reps", "live", "_array")

    SLACK = 64  # codes no longer in use kept beyond as many as are in use

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.index: dict[tuple, int] = {}
        n = len(snapshot.node_list)
        self.codes = np.empty(n, np.intp)
        self.members: list[int] = []  # nodes per code
        self.reps: list[int] = []  # a node per code (0 for a code no node has)
        self._array = np.zeros(64, np.intp)  # ``reps`` as an array (the first len(reps))
        for i in range(n):
            c = self._code(snapshot.column_key(i), i)
            self.codes[i] = c
            self.members[c] += 1
        self.live = len(self.reps)

    def _rep(self, c: int, i: int) -> None:
        self.reps[c] = i
        self._array[c] = i

    def _code(self, key: tuple, i: int) -> int:
        c = self.index.get(key)
        if c is None:
            c = self.index[key] = len(self.reps)
            self.reps.append(i)
            if c >= len(self._array):
                self._array = np.concatenate([self._array, np.zeros(len(self._array), np.intp)])
            self._array[c] = i
            self.members.append(0)
        return c

    def move(self, i: int) -> None:
        """Node ``i``'s columns changed: its code again (the codes renumbered when those
        no longer in use outnumber those in use, so memory stays flat)."""
        old = int(self.codes[i])
        c = self._code(self.snapshot.column_key(i), i)
        if c == old:
            return
        self.codes[i] = c
        members = self.members
        members[old] -= 1
        if not members[old]:
            self.live -= 1
            self._rep(old, 0)
        elif self.reps[old] == i:
            self._rep(old, self._member(old, i))
        members[c] += 1
        if members[c] == 1:
            self.live += 1
            self._rep(c, i)
        if len(self.reps) > 2 * self.live + self.SLACK:
            self._renumber()

    def _member(self, c: int, i: int) -> int:
        """A node with code ``c`` (one has it), looked for after node ``i`` in growing
        chunks, then before it: a node's neighbours share its group in a cluster of
        alike nodes, where a sequence's every binding moves the representative."""
        codes = self.codes
        n = len(codes)
        start, step = i + 1, 64
        while start < n:
            hit = np.flatnonzero(codes[start:start + step] == c)
            if len(hit):
                return start + int(hit[0])
            start += step
            step *= 4
        return int(np.flatnonzero(codes[:i] == c)[0])

    def _renumber(self) -> None:
        used = [c for c, m in enumerate(self.members) if m]
        new = np.full(len(self.reps), -1, np.intp)
        new[used] = np.arange(len(used), dtype=np.intp)
        self.codes = new[self.codes]
        self.index = {k: int(new[c]) for k, c in self.index.items() if self.members[c]}
        self.reps = [self.reps[c] for c in used]
        self._array = np.array(self.reps + [0] * max(64, len(used)), np.intp)
        self.members = [self.members[c] for c in used]

    def representatives(self) -> np.ndarray:
        """A node of each code (read only, until the next ``move``)."""
        return self._array[:len(self.reps)]


def _count(index: dict[int, int], key: int, sign: int) -> None:
    n = index.get(key, 0) + sign
    if n:
        index[key] = n
    else:
        del index[key]


def _codes(nodes: Sequence[Node], fn: Callable[[Node], Hashable]) -> tuple[np.ndarray, list]:
    index: dict[Hashable, int] = {}
    values: list = []
    out = np.empty(len(nodes), np.intp)
    for i, n in enumerate(nodes):
        v = fn(n)
        c = index.get(v)
        if c is None:
            c = index[v] = len(values)
            values.append(v)
        out[i] = c
    return out, values


class PodTable:
    """Every pod bound in the snapshot as a row of columns (``PodRows``' fields, and
    the node's position): built from the NodeInfos when first asked for, then pods
    added go at the end, so a node's rows are always in its pod order (NodeInfo.pods).
    Removed rows are dead until the table is compacted."""

    def __init__(self) -> None:
        self.size = 0
        self.dead = 0
        cap = 16
        self.node = np.zeros(cap, np.intp)
        self.alive = np.zeros(cap, bool)
        self.priority = np.zeros(cap, np.int64)
        self.start = np.zeros(cap, np.float64)
        self.cpu = np.zeros(cap, np.int64)
        self.memory = np.zeros(cap, np.int64)
        self.pods = np.empty(cap, object)
        self.requests: dict[str, np.ndarray] = {}
        self.row: dict[tuple[str, str], int] = {}  # (node, pod key) -> row
        # the rows (dead ones too) grouped by node, each node's in row order: node i's
        # are ``order[starts[i]:starts[i + 1]]``; built when ``rows`` first needs them,
        # kept as rows are appended, dropped when the table is extended or compacted
        self._order: np.ndarray | None = None
        self._starts: np.ndarray | None = None
        # ``sums_below``'s sums of every node, per priority: (number of nodes, sums)
        self._below: dict[int, tuple[int, PodSums]] = {}

    _COLUMNS = ("node", "alive", "priority", "start", "cpu", "memory", "pods")

    def _reserve(self, n: int) -> None:
        cap = len(self.node)
        if self.size + n <= cap:
            return
        new = max(2 * cap, self.size + n)
        for name in self._COLUMNS:
            old = getattr(self, name)
            col = np.zeros(new, old.dtype) if old.dtype != object else np.empty(new, object)
            col[:self.size] = old[:self.size]
            setattr(self, name, col)
        for r, old in self.requests.items():
            col = np.zeros(new, np.int64)
            col[:self.size] = old[:self.size]
            self.requests[r] = col

    def append(self, pod: Pod, position: int, e: PodEntry) -> None:
        """``extend`` with one pod."""
        self._reserve(1)
        a = self.size
        self.node[a] = position
        self.alive[a] = True
        self.priority[a] = pod.priority
        self.start[a] = np.inf if pod.start_time is None else pod.start_time
        self.cpu[a] = e.cpu
        self.memory[a] = e.memory
        cap = len(self.node)
        for r, v in e.requests.items():
            col = self.requests.get(r)
            if col is None:
                col = self.requests[r] = np.zeros(cap, np.int64)
            col[a] = v
        self.pods[a] = pod
        self.row[(pod.node_name, pod.key)] = a  # type: ignore[index]
        self.size = a + 1
        self._change_below(a, 1)
        if self._order is not None and self._starts is not None:
            if position + 1 < len(self._starts):
                at, old = int(self._starts[position + 1]), self._order
                order = np.empty(len(old) + 1, np.intp)
                order[:at] = old[:at]
                order[at] = a
                order[at + 1:] = old[at:]
                self._order = order
                self._starts[position + 1:] += 1
            else:  # a node past those indexed: index again when next asked
                self._order = self._starts = None

    def extend(self, pods: list[Pod], positions: np.ndarray, entries: list[PodEntry]) -> None:
        n = len(pods)
        self._below.clear()
        self._reserve(n)
        a, b = self.size, self.size + n
        self.node[a:b] = positions
        self.alive[a:b] = True
        self.priority[a:b] = [p.priority for p in pods]
        self.start[a:b] = [np.inf if p.start_time is None else p.start_time for p in pods]
        self.cpu[a:b] = [e.cpu for e in entries]
        self.memory[a:b] = [e.memory for e in entries]
        cap = len(self.node)
        for j, e in enumerate(entries):
            for r, v in e.requests.items():
                col = self.requests.get(r)
                if col is None:
                    col = self.requests[r] = np.zeros(cap, np.int64)
                col[a + j] = v
        row, column = self.row, self.pods
        for j, p in enumerate(pods):
            column[a + j] = p
            row[(p.node_name, p.key)] = a + j  # type: ignore[index]
        self.size = b
        self._order = self._starts = None

    def remove(self, pod: Pod) -> None:
        """The row goes; the node's last live row takes its place (``swap_remove``)."""
        r = self.row.pop((pod.node_name, pod.key))  # type: ignore[arg-type]
        self._change_below(r, -1)
        last = self._last_row(int(self.node[r]))
        if last > r:
            for name in self._COLUMNS:
                col = getattr(self, name)
                col[r] = col[last]
            for col in self.requests.values():
                col[r] = col[last]
            moved = self.pods[r]
            self.row[(moved.node_name, moved.key)] = r
            r = last
        self.alive[r] = False
        self.pods[r] = None
        self.dead += 1
        if self.dead > 1024 and 2 * self.dead > self.size:
            self._compact()

    def _last_row(self, position: int) -> int:
        """The node's last live row (the row of its last pod)."""
        order, starts = self._order, self._starts
        if order is not None and starts is not None and position + 1 < len(starts):
            seg = order[starts[position]:starts[position + 1]]
            live = seg[self.alive[seg]]
            if len(live):
                return int(live[-1])
        rows = np.flatnonzero(self.alive[:self.size] & (self.node[:self.size] == position))
        return int(rows[-1]) if len(rows) else -1

    def _compact(self) -> None:
        keep = np.flatnonzero(self.alive[:self.size])
        renumber = np.full(self.size, -1, np.intp)
        renumber[keep] = np.arange(len(keep))
        for name in self._COLUMNS:
            col = getattr(self, name)
            col[:len(keep)] = col[keep]
            col[len(keep):self.size] = False if name == "alive" else (None if name == "pods" else 0)
        for col in self.requests.values():
            col[:len(keep)] = col[keep]
            col[len(keep):self.size] = 0
        rows = list(self.row)
        new = renumber[np.array([self.row[k] for k in rows], np.intp)].tolist() if rows else []
        self.row = dict(zip(rows, new))
        self.size = len(keep)
        self.dead = 0
        self._order = self._starts = None

    def sums_below(self, positions: np.ndarray, num_nodes: int, priority: int) -> PodSums:
        """Per node at ``positions``, what its live rows of priority below ``priority``
        add: count, non-zero cpu / memory, requests (int64). Every node's sums are
        made once per priority (the last few asked), then kept as rows come and go."""
        hit = self._below.get(priority)
        if hit is None or hit[0] != num_nodes:
            if len(self._below) >= 4:
                del self._below[next(iter(self._below))]
            sel = np.flatnonzero(self.alive[:self.size] & (self.priority[:self.size] < priority))
            node = self.node[sel]

            def per_node(col: np.ndarray) -> np.ndarray:
                out = np.zeros(num_nodes, np.int64)
                np.add.at(out, node, col[sel])  # exact in int64
                return out

            hit = self._below[priority] = (num_nodes, PodSums(
                np.bincount(node, minlength=num_nodes).astype(np.int64), per_node(self.cpu),
                per_node(self.memory), {r: per_node(col) for r, col in self.requests.items()}))
        return hit[1].take(positions)

    def _change_below(self, r: int, sign: int) -> None:
        """Row ``r`` comes (sign 1) or goes (-1): the kept sums of ``sums_below``."""
        if not self._below:
            return
        k, prio = int(self.node[r]), int(self.priority[r])
        for p, (num_nodes, sums) in list(self._below.items()):
            if prio >= p:
                continue
            if k >= num_nodes or any(col[r] and res not in sums.requests for res, col in self.requests.items()):
                del self._below[p]  # a node or a resource not in them: made again when asked
                continue
            sums.count[k] += sign
            sums.cpu[k] += sign * int(self.cpu[r])
            sums.memory[k] += sign * int(self.memory[r])
            for res, col in sums.requests.items():
                col[k] += sign * int(self.requests[res][r])

    def rows(self, positions: np.ndarray, num_nodes: int) -> PodRows:
        """The live rows of the nodes at ``positions`` (distinct), node-major, each
        node's in row order; ``node`` the index in ``positions``."""
        order, starts = self._order, self._starts
        if order is None or starts is None or len(starts) != num_nodes + 1:
            node = self.node[:self.size]
            order = self._order = np.argsort(node, kind="stable")
            starts = self._starts = np.zeros(num_nodes + 1, np.intp)
            np.cumsum(np.bincount(node, minlength=num_nodes), out=starts[1:])
        begin = starts[positions]
        lengths = starts[positions + 1] - begin
        ends = np.cumsum(lengths)
        sel = order[np.repeat(begin - (ends - lengths), lengths) + np.arange(int(ends[-1]) if len(ends) else 0)]
        k = np.repeat(np.arange(len(positions), dtype=np.intp), lengths)
        live = self.alive[sel]
        if not live.all():
            sel, k = sel[live], k[live]
        return PodRows(self.pods[sel], k, self.priority[sel], self.start[sel], self.cpu[sel],
                       self.memory[sel], {r: col[sel] for r, col in self.requests.items()})


class PodSums:
    """What groups of pods add to a node each (``pod_sums``): pod count, non-zero cpu /
    memory, requests per resource; int64 arrays, one entry per group."""

    __slots__ = ("count", "cpu", "memory", "requests")

    def __init__(self, count: np.ndarray, cpu: np.ndarray, memory: np.ndarray,
                 requests: dict[str, np.ndarray]) -> None:
        self.count, self.cpu, self.memory, self.requests = count, cpu, memory, requests

    def take(self, idx: np.ndarray) -> PodSums:
        return PodSums(self.count[idx], self.cpu[idx], self.memory[idx],
                       {r: col[idx] for r, col in self.requests.items()})


def pod_sums(groups: Sequence[Iterable[Pod]], cache: PodRequestCache) -> PodSums:
    """The sums of what each group of pods adds to a node (int64)."""
    entry = cache.get
    entries = [[entry(p) for p in pods] for pods in groups]
    n = len(groups)
    at = np.repeat(np.arange(n, dtype=np.intp), [len(es) for es in entries])
    flat = [e for es in entries for e in es]
    count = np.bincount(at, minlength=n).astype(np.int64)
    cpu = np.zeros(n, np.int64)
    memory = np.zeros(n, np.int64)
    np.add.at(cpu, at, np.array([e.cpu for e in flat], np.int64))
    np.add.at(memory, at, np.array([e.memory for e in flat], np.int64))
    requests: dict[str, np.ndarray] = {}
    shapes: dict[int, list] = {}  # the pods of one requests mapping (shared per shape)
    for k, e in enumerate(flat):
        shapes.setdefault(id(e.requests), [e.requests, []])[1].append(k)
    for reqs, ks in shapes.values():
        where = at[ks]
        for r, v in reqs.items():
            col = requests.get(r)
            if col is None:
                col = requests[r] = np.zeros(n, np.int64)
            np.add.at(col, where, v)
    return PodSums(count, cpu, memory, requests)


def _objects(items: list) -> np.ndarray:
    out = np.empty(len(items), object)
    for j, x in enumerate(items):
        out[j] = x
    return out


class PodRows:
    """Pods as rows of columns: per pod its priority, start time (inf when not set),
    non-zero cpu / memory requests and requests per resource (what it adds to a
    NodeInfo), and ``node``, the index of the node it is on within a set of nodes
    (``concat``)."""

    __slots__ = ("pods", "node", "priority", "start", "cpu", "memory", "requests")

    def __init__(self, pods: np.ndarray, node: np.ndarray, priority: np.ndarray, start: np.ndarray,
                 cpu: np.ndarray, memory: np.ndarray, requests: dict[str, np.ndarray]) -> None:
        self.pods, self.node, self.priority, self.start = pods, node, priority, start
        self.cpu, self.memory, self.requests = cpu, memory, requests

    @staticmethod
    def of(pods: list[Pod], cache: PodRequestCache) -> PodRows:
        entries = [cache.get(p) for p in pods]
        n = len(pods)
        requests: dict[str, np.ndarray] = {}
        for j, e in enumerate(entries):
            for r, v in e.requests.items():
                col = requests.get(r)
                if col is None:
                    col = requests[r] = np.zeros(n, np.int64)
                col[j] = v
        return PodRows(_objects(pods), np.zeros(n, np.intp), np.array([p.priority for p in pods], np.int64),
                       np.array([np.inf if p.start_time is None else p.start_time for p in pods], np.float64),
                       np.array([e.cpu for e in entries], np.int64),
                       np.array([e.memory for e in entries], np.int64), requests)

    @staticmethod
    def concat(parts: Sequence[PodRows]) -> PodRows:
        """The rows of several nodes, ``node`` set to each part's index."""
        pods = np.concatenate([part.pods for part in parts]) if parts else np.empty(0, object)
        lengths = np.array([len(part.pods) for part in parts], np.intp)
        node = np.repeat(np.arange(len(parts), dtype=np.intp), lengths)
        resources: set[str] = set()
        for part in parts:
            resources.update(part.requests)
        requests = {}
        for r in sorted(resources):
            requests[r] = np.concatenate([part.requests[r] if r in part.requests
                                          else np.zeros(len(part.pods), np.int64) for part in parts]) \
                if parts else np.zeros(0, np.int64)

        def cat(name: str, dtype) -> np.ndarray:
            return np.concatenate([getattr(part, name) for part in parts]) if parts else np.zeros(0, dtype)

        return PodRows(pods, node, cat("priority", np.int64), cat("start", np.float64), cat("cpu", np.int64),
                       cat("memory", np.int64), requests)

    def __len__(self) -> int:
        return len(self.pods)


class _Lazy(Sequence):
    """A list computed on first use; ``source``: the NodeSet it lists (plugins that can
    read its columns need not list it)."""

    __slots__ = ("_make", "_n", "_list", "source")

    def __init__(self, make: Callable[[], list], n: int, source: NodeSet | None = None) -> None:
        self._make = make
        self._n = n
        self._list: list | None = None
        self.source = source

    def _items(self) -> list:
        if self._list is None:
            self._list = self._make()
        return self._list

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        return self._items()[i]

    def __iter__(self):
        return iter(self._items())


class NodeSet:
    """The candidate nodes of one Filter or Score call, as columns.

    Either positions into the snapshot (the columns are the snapshot's, indexed; for
    every node in order, ``Snapshot.nodes()``, the columns themselves), or
    detached NodeInfos (columns computed from them: a node with nominated pods added
    or preemption victims removed). Plugins only read it."""

    __slots__ = ("snapshot", "positions", "_infos", "overrides")

    def __init__(self, snapshot: Snapshot | None, positions: np.ndarray | None,
                 infos: Sequence[NodeInfo] | None = None, overrides: dict | None = None) -> None:
        self.snapshot = snapshot
        self.positions = positions
        self._infos = infos
        # columns that replace the snapshot's for these nodes (a preemption dry run's
        # nodes with pods removed): ("requested", r), ("non_zero", r), ("pod_count",).
        # Only plugins that read nothing but columns may run over such a set.
        self.overrides = overrides

    @staticmethod
    def of(*infos: NodeInfo) -> NodeSet:
        return NodeSet(None, None, infos)

    def __len__(self) -> int:
        return len(self._infos) if self._infos is not None else len(self.positions)  # type: ignore[arg-type]

    @property
    def infos(self) -> Sequence[NodeInfo]:
        if self._infos is None:
            lst = self.snapshot.node_list  # type: ignore[union-attr]
            self._infos = [lst[i] for i in self.positions]  # type: ignore[union-attr]
        return self._infos

    @property
    def names(self) -> list[str]:
        if self._infos is None and self.snapshot is not None:
            return self.snapshot.name_array()[self.positions].tolist()
        return [info.node.name for info in self.infos]

    def find(self, names: Collection[str]) -> list[tuple[int, str]]:
        """(index in the set, name) of the set's nodes named in ``names``, in set order."""
        if self._infos is None:
            snap = self.snapshot
            wanted = [snap.position[m] for m in names if m in snap.position]  # type: ignore[union-attr]
            if not wanted:
                return []
            where = np.flatnonzero(np.isin(self.positions, wanted)).tolist()  # type: ignore[arg-type]
            lst = snap.node_list  # type: ignore[union-attr]
            return [(i, lst[self.positions[i]].node.name) for i in where]  # type: ignore[index]
        return [(i, info.node.name) for i, info in enumerate(self._infos) if info.node.name in names]

    @property
    def node_objects(self) -> list[Node]:
        return [info.node for info in self.infos]

    def lazy_node_objects(self) -> Sequence[Node]:
        """The nodes, listed only when a plugin reads them."""
        return _Lazy(lambda: self.node_objects, len(self), self)

    def lazy_names(self) -> Sequence[str]:
        """The node names, listed only when read."""
        return _Lazy(lambda: self.names, len(self), self)

    def subset(self, where: np.ndarray) -> NodeSet:
        """The nodes at ``where`` (positions within this set)."""
        if self.snapshot is not None:
            over = None if self.overrides is None else {k: v[where] for k, v in self.overrides.items()}
            return NodeSet(self.snapshot, self.positions[where], overrides=over)  # type: ignore[index]
        infos = self.infos
        return NodeSet(None, None, [infos[i] for i in where])

    def with_sums(self, sums: PodSums) -> NodeSet:
        """These nodes (of the snapshot) with pods adding ``sums`` to the j-th."""
        snap = self.snapshot
        assert snap is not None
        overrides = dict(self.overrides or {})
        overrides[("pod_count",)] = self.pod_count() + sums.count
        overrides[("non_zero", "cpu")] = self.non_zero_requested("cpu") + sums.cpu
        overrides[("non_zero", "memory")] = self.non_zero_requested("memory") + sums.memory
        for r, col in sums.requests.items():
            overrides[("requested", r)] = self.requested(r) + col
        return NodeSet(snap, self.positions, overrides=overrides)

    def _override(self, key: tuple) -> np.ndarray | None:
        over = self.overrides
        return None if over is None else over.get(key)

    def allocatable(self, resource: str) -> np.ndarray:
        snap = self.snapshot
        if snap is not None:
            col = snap.allocatable(resource)
            return col if self.positions is snap.all_positions else col[self.positions]
        return np.array([i.node.allocatable.get(resource, 0) for i in self.infos], np.int64)

    def requested(self, resource: str) -> np.ndarray:
        col = self._override(("requested", resource))
        if col is not None:
            return col
        snap = self.snapshot
        if snap is not None:
            col = snap.requested(resource)
            return col if self.positions is snap.all_positions else col[self.positions]
        return np.array([i.requested.get(resource, 0) for i in self.infos], np.int64)

    def non_zero_requested(self, resource: str) -> np.ndarray:
        col = self._override(("non_zero", resource))
        if col is not None:
            return col
        snap = self.snapshot
        if snap is not None:
            col = snap.non_zero_requested(resource)
            return col if self.positions is snap.all_positions else col[self.positions]
        return np.array([i.non_zero_requested.get(resource, 0) for i in self.infos], np.int64)

    def pod_count(self) -> np.ndarray:
        col = self._override(("pod_count",))
        if col is not None:
            return col
        snap = self.snapshot
        if snap is not None:
            return snap.pod_count if self.positions is snap.all_positions else snap.pod_count[self.positions]
        return np.array([len(i.pods) for i in self.infos], np.int64)

    def codes(self, key: Hashable, fn: Callable[[Node], Hashable]) -> tuple[np.ndarray, list]:
        """Per node the code of the static property ``fn(node)`` (cached under ``key``
        by the snapshot) and the distinct values, for evaluating once per value."""
        snap = self.snapshot
        if snap is not None:
            col, values = snap.static_codes(key, fn)
            return (col if self.positions is snap.all_positions else col[self.positions]), values
        return _codes([i.node for i in self.infos], fn)

    def evaluate(self, key: Hashable, fn: Callable[[Node], _H], value_fn: Callable[[_H], object],
                 dtype=np.intp) -> np.ndarray:
        """``value_fn(fn(node))`` per node, calling ``value_fn`` once per distinct value."""
        if self.snapshot is not None:
            col, values = self.snapshot.static_codes(key, fn)
            if len(values) != 1:  # (one value: the codes are not gathered)
                col = col[self.positions]
        else:
            col, values = self.codes(key, fn)
        if len(values) == 1:
            return np.full(len(self), value_fn(values[0]), dtype)
        table = np.zeros(len(values), dtype)
        for c in np.flatnonzero(np.bincount(col, minlength=len(values))).tolist():  # the codes present
            table[c] = value_fn(values[c])
        return table[col]


class ColumnMemo:
    """A plugin's per-node values that depend only on the snapshot's columns and on
    inputs that are not columns (``key``: the pod's requests, say), kept across cycles
    over every node of the snapshot: where a node's columns changed since
    (``Snapshot.changed_since``), its value is computed again by ``row(i)``, the same
    formula on Python numbers for the node at snapshot position ``i`` (or None: then
    every row is computed again); every other value stands. ``whole(nodes)`` computes the
    values over a NodeSet (when the key is new or too many rows changed: over a node of
    each group of nodes with equal columns, ``Snapshot.column_groups``, or every node).
    Used for sets of at least half the snapshot's nodes, read from its own columns; None
    otherwise (the caller computes)."""

    KEYS = 8  # keys kept at most (the oldest is dropped)
    ROWS = 64  # changed rows computed one by one at most; more: ``whole`` again

    __slots__ = ("_entries", "_snapshot")

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[int, np.ndarray]] = {}
        self._snapshot: Snapshot | None = None

    def over(self, nodes: NodeSet, key: Hashable, whole: Callable[[NodeSet], np.ndarray],
             row: Callable[[int], object], any_size: bool = False) -> np.ndarray | None:
        """The values at ``nodes`` (a new array), or None when the set is not for a memo
        (``any_size``: any set of the snapshot's nodes is, for values every cycle reads)."""
        snap = nodes.snapshot
        if snap is None or nodes.overrides is not None or nodes.positions is None \
                or (not any_size and 2 * len(nodes) < len(snap.node_list)):
            return None
        if self._snapshot is not snap:
            self._entries.clear()
            self._snapshot = snap
        hit = self._entries.get(key)
        values: np.ndarray | None = None
        if hit is not None:
            values = hit[1]
            changed = snap.changed_since(hit[0])
            if changed is None or len(changed) > self.ROWS:
                values = None
            else:
                for i in (changed if len(changed) == 1 else set(changed)):
                    v = row(i)
                    if v is None:  # (the row cannot be computed alone: every row again)
                        values = None
                        break
                    values[i] = v
        if values is None:
            groups = snap.column_groups()
            if groups is None:
                values = whole(snap.nodes())
            else:  # (once per group of nodes with equal columns)
                codes, reps = groups
                values = whole(snap.nodes(reps)).take(codes)
            if key not in self._entries and len(self._entries) >= self.KEYS:
                del self._entries[next(iter(self._entries))]
        self._entries[key] = (snap.column_version, values)
        return values.copy() if nodes.positions is snap.all_positions else values.take(nodes.positions)


def _decrement(index: dict[GroupKey, dict[str, int]], g: GroupKey, node: str) -> None:
    per_node = index[g]
    per_node[node] -= 1
    if not per_node[node]:
        del per_node[node]
        if not per_node:
            del index[g]


class Nominator:
    """Pods nominated to a node (status.nominatedNodeName) that are not bound yet.

    ``version`` counts the changes; the latest ones are kept (``changes_since``) so that
    what is derived from the nominated pods can be updated rather than recomputed.

    Upstream's nominator keeps a reference (name, namespace, UID) per pod, and
    NominatedPodsForNode looks each one up in the queue (activeQ, the unschedulable pods,
    backoffQ; nominatedPodToInfo). A pod in none of them (popped, in flight) is given as a
    pod made of that reference alone: priority 0, no labels, no containers. In 1.36 a pod
    group's pods are all in flight during its cycle (``hold``): what Filter and preemption
    read of their nominations (``by_node``, ``changes_since``) is such a pod until the
    group's pods go back to the queue (``release``). ``on_node`` gives the pods themselves."""

    LOG = 4096  # changes kept at most

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, Pod]] = {}
        self._where: dict[str, set[str]] = {}  # pod key -> the nodes it is nominated to
        self._count = 0
        self.version = 0
        # (node, removed pod or None, added pod or None) per change; log[0] is the
        # change to ``version - len(log) + 1``
        self._log: list[tuple[str, Pod | None, Pod | None]] = []
        self._held: frozenset[str] = frozenset()  # keys of the pods in flight (``hold``)
        self._real: dict[str, Pod] = {}  # a held pod's key -> the pod (its entry is bare)

    def _record(self, node: str, removed: Pod | None, added: Pod | None) -> None:
        self.version += 1
        self._log.append((node, removed, added))
        if len(self._log) > self.LOG:
            del self._log[:self.LOG // 2]

    def changes_since(self, version: int) -> list[tuple[str, Pod | None, Pod | None]] | None:
        """The changes after ``version``, in order (node, pod removed, pod added; a pod
        replaced in place has both); None when they are no longer kept."""
        n = self.version - version
        if n < 0 or n > len(self._log):
            return None
        return self._log[len(self._log) - n:] if n else []

    def add(self, pod: Pod) -> None:
        node = pod.nominated_node
        if node:
            if pod.key in self._held:
                self._real[pod.key] = pod
                pod = _reference_only(pod)
            pods = self._by_node.setdefault(node, {})
            old = pods.get(pod.key)
            pods[pod.key] = pod
            if old is None:
                self._count += 1
                self._where.setdefault(pod.key, set()).add(node)
            self._record(node, old, pod)

    def remove(self, pod: Pod) -> None:
        self._real.pop(pod.key, None)
        for node in sorted(self._where.pop(pod.key, ())):
            old = self._by_node[node].pop(pod.key)
            self._count -= 1
            self._record(node, old, None)

    def hold(self, keys: Iterable[str]) -> None:
        """The pods ``keys`` are in flight (a pod group's cycle): their nominations read as
        pods of their reference alone until ``release`` (each one's place kept)."""
        self._held = frozenset(keys)
        for key in sorted(self._held):
            for node in sorted(self._where.get(key, ())):
                pods = self._by_node[node]
                real = pods[key]
                self._real[key] = real
                pods[key] = bare = _reference_only(real)
                self._record(node, real, bare)

    def release(self) -> None:
        """The held pods are back in the queue (or bound): their nominations read as they are."""
        held, self._held = self._held, frozenset()
        for key in sorted(held):
            real = self._real.pop(key, None)
            if real is None:
                continue
            for node in sorted(self._where.get(key, ())):
                pods = self._by_node[node]
                bare = pods[key]
                pods[key] = real
                self._record(node, bare, real)

    def by_node(self) -> Iterator[tuple[str, Iterable[Pod]]]:
        """(node, the pods nominated to it) for the nodes that have some, as
        NominatedPodsForNode gives them (a held pod by its reference alone). Read only."""
        return ((n, pods.values()) for n, pods in self._by_node.items() if pods)

    def on_node(self, node_name: str) -> list[Pod]:
        """The pods nominated to the node (held ones as they are)."""
        real = self._real
        return [real.get(k, p) for k, p in self._by_node.get(node_name, {}).items()]

    def has_any(self) -> bool:
        return self._count > 0

    def nodes(self) -> set[str]:
        """Names of the nodes that have pods nominated to them."""
        return {n for n, pods in self._by_node.items() if pods}


def _reference_only(pod: Pod) -> Pod:
    """What nominatedPodToInfo gives for a pod in no queue: a pod with the nominator's
    reference alone (name, namespace; the UID), the rest of its spec and status unset."""
    return Pod(name=pod.name, namespace=pod.namespace)
