"""The plugin arguments' types and defaults, below both the framework and the plugins
(upstream: pkg/scheduler/apis/config, types_pluginargs.go and the versioned
defaults.go). ``kspread.engine.framework.args`` decodes and validates a raw args
mapping into these values; a plugin reads them. Neither the framework nor this module
imports a plugin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kspread.engine.model import HOSTNAME_LABEL, ZONE_LABEL, TopologySpreadConstraint
from kspread.engine.quantity import CPU, MEMORY
from kspread.engine.versions import Version, resource_scoring

# ---- InterPodAffinityArgs ----------------------------------------------------------------------

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MAX_HARD_POD_AFFINITY_WEIGHT = 100

# ---- resources and utilization shapes (NodeResourcesFitArgs.scoringStrategy, ----------------
# ---- NodeResourcesBalancedAllocationArgs, the 1.18-1.22 resource scoring args) ----------------

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


@dataclass(frozen=True, slots=True)
class ShapePoint:
    utilization: int
    score: int


def scale_shape(shape: Sequence[ShapePoint], version: Version) -> tuple[ShapePoint, ...]:
    """Shape scores 0..10 scaled to the version's node score range."""
    k = resource_scoring(version).rtcr_shape_scale
    return tuple(ShapePoint(p.utilization, p.score * k) for p in shape)


# The priority function's shape when a policy gives none (up to 1.17): least-requested like.
LEGACY_DEFAULT_SHAPE = (ShapePoint(0, 10), ShapePoint(100, 0))

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)


@dataclass(frozen=True, slots=True)
class Strategy:
    """A resource scoring strategy with its resources (and shape, already scaled)
    (``ScoringStrategy``); ``kspread.engine.plugins.noderesources_scoring`` scores with it."""

    kind: str
    resources: tuple[ResourceSpec, ...]
    shape: tuple[ShapePoint, ...] = ()


# ---- PodTopologySpreadArgs ---------------------------------------------------------------------

# plugin.go systemDefaultConstraints (the 1.19 gate defaulting used the same list).
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(max_skew=3, topology_key=HOSTNAME_LABEL, when_unsatisfiable="ScheduleAnyway"),
    TopologySpreadConstraint(max_skew=5, topology_key=ZONE_LABEL, when_unsatisfiable="ScheduleAnyway"),
)
