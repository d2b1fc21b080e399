"""Helpers shared by plugins (framework/plugins/helper, pkg/util/node): spreading, pod groups."""

from __future__ import annotations

from typing import Any

from kspread.engine.labels import EVERYTHING, Selector, as_selector, merge_sets, selector_from_set
from kspread.engine.listers import Listers
from kspread.engine.model import (
    BETA_REGION_LABEL,
    BETA_ZONE_LABEL,
    REGION_LABEL,
    ZONE_LABEL,
    Node,
    Pod,
)
from kspread.engine.versions import Version


def get_zone_key(node: Node, version: Version) -> str:
    """``utilnode.GetZoneKey``: "" for a node without zone and region, else
    region + ":\\x00:" + zone. Beta labels only before 1.17; beta first, then the GA
    label, from 1.17 (a present beta label wins even when empty)."""
    labels = node.labels
    if version.zone_key_reads_ga_labels:
        zone = labels[BETA_ZONE_LABEL] if BETA_ZONE_LABEL in labels else labels.get(ZONE_LABEL, "")
        region = labels[BETA_REGION_LABEL] if BETA_REGION_LABEL in labels else labels.get(REGION_LABEL, "")
    else:
        zone = labels.get(BETA_ZONE_LABEL, "")
        region = labels.get(BETA_REGION_LABEL, "")
    if not zone and not region:
        return ""
    return region + ":\x00:" + zone


def _requirements_of(ls) -> tuple:
    """``Selector.Requirements()`` of LabelSelectorAsSelector(ls); none when it is Nothing."""
    sel = as_selector(ls)
    return () if sel.nothing else sel.requirements


def default_selector(pod: Pod, listers: Listers, version: Version) -> Selector:
    """``helper.DefaultSelector``: the conjunction of the selectors of the pod's
    Services and of its ReplicationController / ReplicaSet / StatefulSet.

    Before 1.22 the controllers are every one in the namespace whose selector
    matches the pod's labels; from 1.22 only the one named by the pod's controller
    ownerReference (v1 ReplicationController, apps/v1 ReplicaSet or StatefulSet)."""
    label_set: dict[str, str] = {}
    for svc in listers.pod_services(pod):
        label_set = merge_sets(label_set, svc.selector or {})
    if not version.default_selector_by_owner_ref:
        for rc in listers.pod_controllers(pod):
            label_set = merge_sets(label_set, rc.selector or {})
        selector = selector_from_set(label_set) if label_set else EVERYTHING
        for rs in listers.pod_replica_sets(pod):
            selector = selector.add(*_requirements_of(rs.selector))
        for ss in listers.pod_stateful_sets(pod):
            selector = selector.add(*_requirements_of(ss.selector))
        return selector
    selector = selector_from_set(label_set)
    owner = pod.controller
    if owner is None:
        return selector
    gvk = (owner.api_version, owner.kind)
    if gvk == ("v1", "ReplicationController"):
        owner_rc = listers.rcs.get(pod.namespace, owner.name)
        if owner_rc is not None:
            label_set = merge_sets(label_set, owner_rc.selector or {})
            selector = selector_from_set(label_set)
    elif gvk == ("apps/v1", "ReplicaSet"):
        owner_rs = listers.rss.get(pod.namespace, owner.name)
        if owner_rs is not None:
            selector = selector.add(*_requirements_of(owner_rs.selector))
    elif gvk == ("apps/v1", "StatefulSet"):
        owner_ss = listers.sss.get(pod.namespace, owner.name)
        if owner_ss is not None:
            selector = selector.add(*_requirements_of(owner_ss.selector))
    return selector


def legacy_selectors(pod: Pod, listers: Listers, services_only: bool = False) -> list[Selector]:
    """``getSelectors`` of the priority functions up to 1.16: one selector per
    matching Service, RC, ReplicaSet and StatefulSet, in that order."""
    out = [selector_from_set(s.selector or {}) for s in listers.pod_services(pod)]
    if services_only:
        return out
    out += [selector_from_set(rc.selector or {}) for rc in listers.pod_controllers(pod)]
    out += [as_selector(rs.selector) for rs in listers.pod_replica_sets(pod)]
    out += [as_selector(ss.selector) for ss in listers.pod_stateful_sets(pod)]
    return out


class GroupMembers:
    """The scheduler's pod event handlers' record of pod groups, shared by 1.35's workload
    manager (GangScheduling) and 1.36's pod group cache: per group, its pods in the order the
    informer saw them and which are unscheduled, assumed or assigned. A subclass names the
    group a pod belongs to (``_key``) and makes a group's state (``_new_state``: an object
    with the dicts ``all``, ``unscheduled``, ``assumed`` and ``assigned``)."""

    groups: dict

    @staticmethod
    def _key(pod: Pod) -> tuple[str, ...] | None:
        raise NotImplementedError

    def _new_state(self) -> Any:
        raise NotImplementedError

    def add_pod(self, pod: Pod) -> None:
        """addPod: assigned when bound, else unscheduled."""
        key = self._key(pod)
        if key is None:
            return
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = self._new_state()
        g.all[pod.key] = pod
        (g.assigned if pod.node_name else g.unscheduled)[pod.key] = None

    def bound(self, pod: Pod) -> None:
        """updatePod: the pod was bound (assigned, no longer unscheduled or assumed)."""
        g = self._state_of(pod)
        if g is not None:
            g.all[pod.key] = pod
            g.assigned[pod.key] = None
            g.unscheduled.pop(pod.key, None)
            g.assumed.pop(pod.key, None)

    def delete_pod(self, pod: Pod) -> None:
        """deletePod; the group's state goes with its last pod."""
        key = self._key(pod)
        g = self.groups.get(key) if key is not None else None
        if g is None:
            return
        for part in (g.all, g.unscheduled, g.assumed, g.assigned):
            part.pop(pod.key, None)
        if not g.all:
            del self.groups[key]

    def _state_of(self, pod: Pod) -> Any:
        key = self._key(pod)
        return self.groups.get(key) if key is not None else None
