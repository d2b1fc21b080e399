"""NodePorts (PodFitsHostPorts up to 1.17): the pod's host ports must be free on the
node (framework/plugins/nodeports; HostPortInfo in framework/types.go).

A used or wanted port is (hostIP, protocol, hostPort) with an empty hostIP meaning
0.0.0.0 and an empty protocol TCP; hostPort <= 0 is no host port. A wanted port
conflicts when the same protocol and port is used on the same hostIP or on 0.0.0.0,
and a wanted 0.0.0.0 port conflicts with that protocol and port on any hostIP. The
used ports are those of every pod on the node (``NodeInfo.used_ports``), terminating
pods included; they are a set, as upstream's HostPortInfo: removing a pod (preemption's
dry run, a deleted victim) frees its ports even when another pod uses the same one. Failure: Unschedulable "node(s) didn't have free ports for the
requested pod ports". kspread reads the ports of regular containers, as upstream's
NodeInfo and Filter do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from kspread.engine.framework.interface import Filtered, FilterPlugin, Plugin, PodEvent, PreFilterPlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SUCCESS, CycleState, Status, unschedulable
from kspread.engine.model import Pod
from kspread.engine.snapshot import DEFAULT_BIND_ALL_HOST_IP, NodeInfo, NodeSet, PortKey, pod_host_ports

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


def check_conflict(used: Mapping[PortKey, int], want: PortKey) -> bool:
    """``HostPortInfo.CheckConflict``."""
    ip, protocol, port = want
    if ip == DEFAULT_BIND_ALL_HOST_IP:
        return any(k[1] == protocol and k[2] == port for k in used)
    return (DEFAULT_BIND_ALL_HOST_IP, protocol, port) in used or (ip, protocol, port) in used


def fits_ports(wanted: list[PortKey], node_info: NodeInfo) -> bool:
    return not any(check_conflict(node_info.used_ports, w) for w in wanted)


class _State:
    __slots__ = ("ports",)

    def __init__(self, ports: list[PortKey]) -> None:
        self.ports = ports

    def clone(self) -> _State:
        return self


@register("NodePorts", first=12)
class NodePorts(Plugin, PreFilterPlugin, FilterPlugin):
    _KEY = "PreFilterNodePorts"
    # EventsToRegister: Pod/Delete (container ports are immutable, updates are ignored)
    pod_events = frozenset({"Delete"})
    signs_pods = True

    def node_events(self, hints: bool) -> frozenset[str]:
        # Add (no hint: Queue); UpdateNodeTaint | UpdateNodeLabel too without hints (issue 109437)
        return frozenset({"Add"} if hints else {"Add", "UpdateNodeTaint", "UpdateNodeLabel"})

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: the host ports of the containers and init containers (HostPortsSigner)."""
        ports = {p.host_port for c in (*pod.containers, *pod.init_containers) for p in c.ports if p.host_port != 0}
        return (("HostPorts", tuple(sorted(ports))),)

    def pod_event_hint(self, pod: Pod, event: PodEvent) -> bool:
        """isSchedulableAfterPodDeleted (1.35): Queue only when the deleted pod was bound or
        nominated and used a host port the pod wants."""
        deleted = event.pod
        if deleted.node_name is None and not deleted.nominated_node:
            return False
        used = {k: 1 for k in pod_host_ports(deleted)}
        if not used:
            return False
        return not all(not check_conflict(used, w) for w in pod_host_ports(pod))

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        state.write(self._KEY, _State(pod_host_ports(pod)))
        return SUCCESS

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        """Only when the pod wants no host port (the used ports are not a column)."""
        st = state.get(self._KEY)
        return not (st.ports if isinstance(st, _State) else pod_host_ports(pod))

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        """When the pod wants no host port (it then passes every node)."""
        return self.reads_only_columns(state, pod)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        st = state.get(self._KEY)
        ports = st.ports if isinstance(st, _State) else pod_host_ports(pod)
        if not ports:
            return Filtered.passing(len(nodes))
        # only nodes with used host ports can conflict
        conflict = np.array([bool(info.used_ports) and not fits_ports(ports, info) for info in nodes.infos],
                            bool)
        return Filtered.where(conflict, unschedulable(ERR_REASON))
