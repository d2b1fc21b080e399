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


def requests_key(pod: Pod) -> tuple:
    """Every field of the pod that ``node_pod_requests``, ``pod_requests`` and
    ``scoring_requests`` read, as a hashable value: pods with equal keys have equal
    requests (the snapshot computes them once per key). A new field those functions
    read must be added here."""
    return (tuple((tuple(c.requests.items()), c.restartable) for c in pod.containers),
            tuple((tuple(c.requests.items()), c.restartable) for c in pod.init_containers),
            tuple(pod.overhead.items()))


def node_pod_requests(pod: Pod, version: Version) -> dict[str, int]:
    """What a pod on a node adds to NodeInfo.Requested: ``pod_requests`` from 1.19
    (PR #89222); before, the containers' sum plus the overhead, init containers
    ignored (calculateResource)."""
    if version.minor >= 19:
        return pod_requests(pod, version)
    reqs: dict[str, int] = {}
    for c in pod.containers:
        _add(reqs, c.requests)
    if pod.overhead and version.minor >= 16 and version.gate("PodOverhead"):
        _add(reqs, pod.overhead)
    return reqs


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


# ---- non-zero requests (used by the resource scoring plugins) ----------------------------

# schedutil.DefaultMilliCPURequest / DefaultMemoryRequest: what a container that does not
# set a cpu / memory request counts as when nodes are scored (an explicit 0 stays 0).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
NON_ZERO_DEFAULTS = {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST}


def effective_containers(pod: Pod) -> tuple:
    """The pod's containers; a case pod given without ``requests`` and ``containers``
    stands for a pod with one container that requests nothing (a real pod has at
    least one container)."""
    if pod.containers:
        return pod.containers
    from kspread.model import Container

    return (Container("main"),)


def _with_defaults(requests: Mapping[str, int]) -> dict[str, int]:
    out = dict(requests)
    for k, v in NON_ZERO_DEFAULTS.items():
        if k not in out:
            out[k] = v
    return out


def scoring_requests(
    pod: Pod, version: Version, *, non_zero: bool, include_init: bool, overhead_cpu_in_cores: bool = False
) -> dict[str, int]:
    """The pod's requests as the resource scorers and NodeInfo's non-zero sums see
    them: with ``non_zero`` every container (and init container) that does not set
    cpu / memory counts the defaults above; init containers only with
    ``include_init`` (from 1.19; before, the containers' sum alone); sidecars as
    ``pod_requests``; then the overhead (PodOverhead), whose cpu counts in whole cores
    when ``overhead_cpu_in_cores`` (the 1.17-1.26 scorer's ``quantity.Value()``)."""
    reqs: dict[str, int] = {}
    for c in effective_containers(pod):
        _add(reqs, _with_defaults(c.requests) if non_zero else c.requests)
    if include_init:
        sidecars_on = version.minor >= 28 and version.gate("SidecarContainers")
        init_max: dict[str, int] = {}
        sidecar_sum: dict[str, int] = {}
        for c in pod.init_containers:
            r = _with_defaults(c.requests) if non_zero else dict(c.requests)
            if sidecars_on and c.restartable:
                _add(sidecar_sum, r)
                _max_into(init_max, sidecar_sum)
            else:
                _add(r, sidecar_sum)
                _max_into(init_max, r)
        _add(reqs, sidecar_sum)
        _max_into(reqs, init_max)
    if pod.overhead and version.minor >= 16 and version.gate("PodOverhead"):
        for k, v in pod.overhead.items():
            if k == "cpu" and overhead_cpu_in_cores:
                v = -(-v // 1000)  # Value() of the quantity: whole cores, rounded up
            reqs[k] = reqs.get(k, 0) + v
    return reqs


def node_non_zero_requests(pod: Pod, version: Version) -> tuple[int, int]:
    """(cpu millicores, memory bytes) a pod adds to NodeInfo's NonZeroRequested
    (``calculateResource`` / resourcehelper.PodRequests with NonMissingContainerRequests)."""
    r = scoring_requests(pod, version, non_zero=True, include_init=version.minor >= 19)
    return r.get("cpu", 0), r.get("memory", 0)
