"""ImageLocality (ImageLocalityPriority up to 1.17): favor nodes that already have the
pod's container images (framework/plugins/imagelocality; algorithm/priorities/
image_locality.go).

Each image name a node reports in ``status.images`` is an image state with a size (that
of the first node, in node order, reporting the name) and the number of nodes reporting
it. For every container whose normalized image name the node has, the image adds
``int64(float64(size) * (float64(numNodes) / float64(totalNodes)))`` (the spread factor
damps images present on few nodes; totalNodes counts every node of the snapshot). The
sum is clamped to [23 MiB, max] and scaled linearly:
``MaxNodeScore * (sum - 23 MiB) / (max - 23 MiB)`` in int64. ``max`` is 1000 MiB, times
the number of containers from 1.19. From 1.30 init containers are summed and counted
too. No NormalizeScore.

A name without a tag (no ':' after the last '/') is looked up with ":latest" appended;
digests and other spellings are compared as written, as upstream does.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from kspread.engine.framework.interface import Plugin, PreScorePlugin, ScorePlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SUCCESS, CycleState, Status
from kspread.engine.model import Node, Pod
from kspread.engine.resources import effective_containers
from kspread.engine.snapshot import NodeSet
from kspread.engine.versions import Version, resource_scoring

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: append ":latest" when the name has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def image_states(nodes: Sequence[Node]) -> dict[str, tuple[int, frozenset[str]]]:
    """Image name -> (size, nodes reporting it), as the scheduler cache keeps them."""
    size: dict[str, int] = {}
    holders: dict[str, set[str]] = {}
    for n in nodes:
        for im in n.images:
            for name in im.names:
                if name not in size:
                    size[name] = im.size_bytes
                holders.setdefault(name, set()).add(n.name)
    return {k: (size[k], frozenset(v)) for k, v in holders.items()}


def scaled_image_score(size: int, num_nodes: int, total_nodes: int) -> int:
    spread = float(num_nodes) / float(total_nodes)
    return int(float(size) * spread)


def calculate_priorities(sum_scores: np.ndarray, num_containers: int, version: Version) -> np.ndarray:
    """``calculatePriority`` over the nodes' sums (int64: sums stay below the threshold
    after clamping, 1000 MiB per container, times MaxNodeScore)."""
    max_threshold = MAX_CONTAINER_THRESHOLD
    if resource_scoring(version).image_threshold_per_container:
        max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    # if below the minimum, the minimum; else if above the maximum, the maximum (in this
    # order: a pod without containers has a maximum of 0 and scores 0)
    clamped = np.where(sum_scores < MIN_THRESHOLD, MIN_THRESHOLD, np.minimum(sum_scores, max_threshold))
    num = version.max_node_score * (clamped - MIN_THRESHOLD)
    den = max_threshold - MIN_THRESHOLD
    # Go's int64 division truncates toward zero
    return np.sign(num) * np.sign(den) * (np.abs(num) // abs(den))


def calculate_priority(sum_scores: int, num_containers: int, version: Version) -> int:
    return int(calculate_priorities(np.array([sum_scores], np.int64), num_containers, version)[0])


def pod_images(pod: Pod, version: Version) -> list[str]:
    """The images summed, in upstream's order (init containers first, from 1.30)."""
    containers = list(effective_containers(pod))
    if resource_scoring(version).image_counts_init_containers:
        containers = list(pod.init_containers) + containers
    return [c.image for c in containers]


class _State:
    __slots__ = ("states", "total")

    def __init__(self, states, total: int) -> None:
        self.states = states
        self.total = total

    def clone(self) -> _State:
        return self


@register("ImageLocality", first=12)
class ImageLocality(Plugin, PreScorePlugin, ScorePlugin):
    signs_pods = True

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        """SignPod: the normalized image names of the containers and init containers."""
        names = {normalized_image_name(c.image) for c in (*pod.containers, *pod.init_containers)}
        return (("ImageNames", tuple(sorted(names))),)

    _KEY = "PreScoreImageLocality(kspread)"
    _states: _State | None = None

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        snap = self.handle.snapshot
        if self._states is None:  # nodes (and their images) do not change during a run
            self._states = _State(image_states([i.node for i in snap]), len(snap))
        state.write(self._KEY, self._states)
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        st = state.get(self._KEY)
        assert isinstance(st, _State)
        if not st.states:
            return np.zeros(len(nodes), np.int64)  # (no node has an image: every sum is 0, as below)
        images = pod_images(pod, self.version)
        num_containers = len(images)
        if resource_scoring(self.version).image_counts_image_volumes:
            images += [v.image for v in pod.volumes if v.image is not None]
        total = np.zeros(len(nodes), np.int64)
        summed = False
        for image in images:
            name = normalized_image_name(image)
            entry = st.states.get(name)
            if entry is not None:
                has = nodes.evaluate(("image", name), partial(_has_image, name=name), bool, bool)
                total += np.where(has, scaled_image_score(entry[0], len(entry[1]), st.total), 0)
                summed = True
        if not summed:
            # no node has one of the images: every sum is 0, below the minimum threshold,
            # which calculatePriority scores 0
            return total
        return calculate_priorities(total, num_containers, self.version)


def _has_image(node: Node, name: str) -> bool:
    return any(name in im.names for im in node.images)
