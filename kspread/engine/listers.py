"""Lookups of the objects that own or select a pod, as the scheduler's listers do."""

from __future__ import annotations

from collections import defaultdict
from typing import Generic, TypeVar

from kspread.engine.labels import as_selector, selector_from_set
from kspread.engine.model import Cluster, Pod, ReplicaSet, ReplicationController, Service, StatefulSet

T = TypeVar("T")


class _ByNamespace(Generic[T]):
    def __init__(self, objs: list[T]) -> None:
        self.by_ns: dict[str, list[T]] = defaultdict(list)
        self.by_name: dict[tuple[str, str], T] = {}
        for o in objs:
            self.by_ns[o.namespace].append(o)  # type: ignore[attr-defined]
            self.by_name[(o.namespace, o.name)] = o  # type: ignore[attr-defined]

    def in_namespace(self, ns: str) -> list[T]:
        return self.by_ns.get(ns, [])

    def get(self, ns: str, name: str) -> T | None:
        return self.by_name.get((ns, name))


class Listers:
    def __init__(self, cluster: Cluster) -> None:
        self.services = _ByNamespace(cluster.services)
        self.rcs = _ByNamespace(cluster.replication_controllers)
        self.rss = _ByNamespace(cluster.replica_sets)
        self.sss = _ByNamespace(cluster.stateful_sets)

    def pod_services(self, pod: Pod) -> list[Service]:
        """GetPodServices: Services of the pod's namespace whose (non-nil) selector matches."""
        return [
            s
            for s in self.services.in_namespace(pod.namespace)
            if s.selector is not None and selector_from_set(s.selector).matches(pod.labels)
        ]

    def pod_controllers(self, pod: Pod) -> list[ReplicationController]:
        """GetPodControllers: RCs of the namespace whose selector matches the pod's labels
        (none for a pod without labels; an empty or nil selector matches nothing)."""
        if not pod.labels:
            return []
        return [
            rc
            for rc in self.rcs.in_namespace(pod.namespace)
            if rc.selector and selector_from_set(rc.selector).matches(pod.labels)
        ]

    def _by_label_selector(self, objs: list, pod: Pod) -> list:
        if not pod.labels:
            return []
        out = []
        for o in objs:
            if o.selector is None:
                continue
            sel = as_selector(o.selector)
            if sel.empty():  # "should match nothing, not everything"
                continue
            if sel.matches(pod.labels):
                out.append(o)
        return out

    def pod_replica_sets(self, pod: Pod) -> list[ReplicaSet]:
        return self._by_label_selector(self.rss.in_namespace(pod.namespace), pod)

    def pod_stateful_sets(self, pod: Pod) -> list[StatefulSet]:
        return self._by_label_selector(self.sss.in_namespace(pod.namespace), pod)
