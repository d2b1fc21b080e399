"""Pod resource requests as the scheduler computes them (resourcehelper.PodRequests)."""

from __future__ import annotations

from typing import Mapping

from kspread.model import Pod
from kspread.versions import Version


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def _max_into(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        if v > into.get(k, 0):
            into[k] = v


def pod_requests(pod: Pod, version: Version) -> dict[str, int]:
    """Sum of the containers' requests; then, per resource, the max with each init
    container (sidecars, i.e. restartable init containers, count in the running sum
    from 1.28 with SidecarContainers); then plus the pod overhead (PodOverhead)."""
    reqs: dict[str, int] = {}
    for c in pod.containers:
        _add(reqs, c.requests)
    sidecars_on = version.minor >= 28 and version.gate("SidecarContainers")
    init_max: dict[str, int] = {}
    sidecar_sum: dict[str, int] = {}
    for c in pod.init_containers:
        if sidecars_on and c.restartable:
            _add(sidecar_sum, c.requests)
            _max_into(init_max, sidecar_sum)
        else:
            step = dict(c.requests)
            _add(step, sidecar_sum)
            _max_into(init_max, step)
    _add(reqs, sidecar_sum)
    _max_into(reqs, init_max)
    if pod.overhead and version.minor >= 16 and version.gate("PodOverhead"):
        _add(reqs, pod.overhead)
    return reqs
