"""The cluster snapshot the plugins read: one NodeInfo per node, with indexes.

Spreading plugins count "pods in namespace N whose labels match selector S" per
node or per topology domain. Pods of one workload share their labels, so the
snapshot groups non-terminating pods by (namespace, label set) and keeps, per
group, how many of its pods sit on each node. A count then costs time in the
number of distinct groups and the nodes that hold them, never in the number of
pods; whether a selector matches a group is computed once and cached.

Placements, evictions and nominations of a ``schedule`` sequence update the
snapshot in place (``add_pod`` / ``remove_pod``), as the scheduler's cache does.
"""

from __future__ import annotations

from typing import Iterable, Iterator, Mapping

from kspread.labels import Selector
from kspread.model import Node, Pod
from kspread.resources import node_non_zero_requests, node_pod_requests
from kspread.versions import Version

GroupKey = tuple[str, frozenset]  # (namespace, frozenset of label items)


PortKey = tuple[str, str, int]  # (hostIP, protocol, hostPort)


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


class NodeInfo:
    """A node and the pods on it (framework.NodeInfo)."""

    __slots__ = ("node", "pods", "requested", "groups", "non_zero_requested", "used_ports", "_version", "_matcher",
                 "pods_with_affinity", "pods_with_required_anti_affinity")

    def __init__(self, node: Node, version: Version, matcher: SelectorCache) -> None:
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

    @property
    def name(self) -> str:
        return self.node.name

    def clone(self) -> "NodeInfo":
        c = NodeInfo(self.node, self._version, self._matcher)
        c.pods = dict(self.pods)
        c.requested = dict(self.requested)
        c.groups = dict(self.groups)
        c.non_zero_requested = dict(self.non_zero_requested)
        c.used_ports = dict(self.used_ports)
        c.pods_with_affinity = dict(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = dict(self.pods_with_required_anti_affinity)
        return c

    def add_pod(self, pod: Pod) -> None:
        self.pods[pod.key] = pod
        for k, v in node_pod_requests(pod, self._version).items():
            self.requested[k] = self.requested.get(k, 0) + v
        cpu, mem = node_non_zero_requests(pod, self._version)
        self.non_zero_requested["cpu"] += cpu
        self.non_zero_requested["memory"] += mem
        for key in pod_host_ports(pod):
            self.used_ports[key] = self.used_ports.get(key, 0) + 1
        if has_pod_affinity(pod):
            self.pods_with_affinity[pod.key] = pod
            if has_required_anti_affinity(pod):
                self.pods_with_required_anti_affinity[pod.key] = pod
        if not pod.terminating:
            g = group_key(pod)
            self.groups[g] = self.groups.get(g, 0) + 1

    def remove_pod(self, pod: Pod) -> None:
        stored = self.pods.pop(pod.key)
        for k, v in node_pod_requests(stored, self._version).items():
            self.requested[k] -= v
        cpu, mem = node_non_zero_requests(stored, self._version)
        self.non_zero_requested["cpu"] -= cpu
        self.non_zero_requested["memory"] -= mem
        # HostPortInfo is a set, not a multiset: removing a pod frees its host ports even
        # when another pod on the node uses the same one (HostPortInfo.Remove deletes the
        # entry), as upstream's cache and preemption's dry run see it.
        for key in pod_host_ports(stored):
            self.used_ports.pop(key, None)
        self.pods_with_affinity.pop(stored.key, None)
        self.pods_with_required_anti_affinity.pop(stored.key, None)
        if not stored.terminating:
            g = group_key(stored)
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
        self.node_infos: dict[str, NodeInfo] = {n.name: NodeInfo(n, version, self.matcher) for n in nodes}
        self.node_list: list[NodeInfo] = list(self.node_infos.values())
        # (namespace, labels) -> {node name: count} over non-terminating bound pods
        self.group_nodes: dict[GroupKey, dict[str, int]] = {}
        # the same over every bound pod, terminating ones too (InterPodAffinity counts them)
        self.all_group_nodes: dict[GroupKey, dict[str, int]] = {}
        for p in pods:
            if p.node_name is not None:
                self.add_pod(p)

    def __len__(self) -> int:
        return len(self.node_list)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_list)

    def get(self, name: str) -> NodeInfo:
        return self.node_infos[name]

    def add_pod(self, pod: Pod) -> None:
        assert pod.node_name is not None
        self.node_infos[pod.node_name].add_pod(pod)
        all_per_node = self.all_group_nodes.setdefault(group_key(pod), {})
        all_per_node[pod.node_name] = all_per_node.get(pod.node_name, 0) + 1
        if not pod.terminating:
            per_node = self.group_nodes.setdefault(group_key(pod), {})
            per_node[pod.node_name] = per_node.get(pod.node_name, 0) + 1

    def remove_pod(self, pod: Pod) -> None:
        assert pod.node_name is not None
        info = self.node_infos[pod.node_name]
        stored = info.pods[pod.key]
        info.remove_pod(stored)
        _decrement(self.all_group_nodes, group_key(stored), pod.node_name)
        if not stored.terminating:
            g = group_key(stored)
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


def _decrement(index: dict[GroupKey, dict[str, int]], g: GroupKey, node: str) -> None:
    per_node = index[g]
    per_node[node] -= 1
    if not per_node[node]:
        del per_node[node]
        if not per_node:
            del index[g]


class Nominator:
    """Pods nominated to a node (status.nominatedNodeName) that are not bound yet."""

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, Pod]] = {}

    def add(self, pod: Pod) -> None:
        if pod.nominated_node:
            self._by_node.setdefault(pod.nominated_node, {})[pod.key] = pod

    def remove(self, pod: Pod) -> None:
        for pods in self._by_node.values():
            pods.pop(pod.key, None)

    def on_node(self, node_name: str) -> list[Pod]:
        return list(self._by_node.get(node_name, {}).values())
