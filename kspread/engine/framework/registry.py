"""Which plugins exist in which version, and which of them kspread implements.

``UPSTREAM`` lists every in-tree plugin (and, for versions up to 1.17, the
predicate / priority function a plugin name denotes there) with the minors that
had it. A plugin module in ``kspread.engine.plugins`` registers its implementation with
``@register``; adding a plugin touches only its own module. The registry imports no
plugin: ``kspread.engine.plugins.register_in_tree`` (called by the scheduler) imports
them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kspread.errors import CaseError, PathT, did_you_mean


@dataclass(frozen=True, slots=True)
class Known:
    name: str
    first: int
    last: int | None  # last minor that has it; None: still in upstream main
    legacy_names: tuple[str, ...] = ()  # predicate/priority names up to 1.17

    def in_version(self, minor: int) -> bool:
        return self.first <= minor and (self.last is None or minor <= self.last)


def _k(name: str, first: int, last: int | None = None, *legacy: str) -> Known:
    return Known(name, first, last, legacy)


# Plugin names as the version's scheduler configuration spells them. For minors
# 12..17 a framework name denotes the predicate/priority function it replaced.
UPSTREAM: tuple[Known, ...] = (
    _k("PrioritySort", 18),
    _k("DefaultBinder", 18),
    _k("DefaultPreemption", 12),  # the scheduler's built-in preemption before 1.19
    _k("SchedulingGates", 26),
    _k("NodeUnschedulable", 12, None, "CheckNodeUnschedulable", "CheckNodeUnschedulablePred"),
    _k("NodeName", 12, None, "HostName"),
    _k("TaintToleration", 12, None, "PodToleratesNodeTaints", "TaintTolerationPriority"),
    _k("NodeAffinity", 12, None, "MatchNodeSelector", "NodeAffinityPriority"),
    _k("NodePorts", 12, None, "PodFitsHostPorts"),
    _k("NodeResourcesFit", 12, None, "PodFitsResources"),
    _k("NodeResourcesBalancedAllocation", 12, None, "BalancedResourceAllocation"),
    _k("NodeResourcesLeastAllocated", 12, 22, "LeastRequestedPriority"),
    _k("NodeResourcesMostAllocated", 12, 22, "MostRequestedPriority"),
    _k("RequestedToCapacityRatio", 12, 22, "RequestedToCapacityRatioPriority"),
    _k("NodeResourceLimits", 12, 19, "ResourceLimitsPriority"),
    _k("NodePreferAvoidPods", 12, 23, "NodePreferAvoidPodsPriority"),
    _k("NodeLabel", 12, 22, "CheckNodeLabelPresence", "NodeLabelPriority"),
    _k("ServiceAffinity", 12, 22, "CheckServiceAffinity", "ServiceAntiAffinity"),
    _k("ImageLocality", 12, None, "ImageLocalityPriority"),
    _k("InterPodAffinity", 12, None, "MatchInterPodAffinity", "InterPodAffinityPriority"),
    _k("PodTopologySpread", 16, None, "EvenPodsSpread", "EvenPodsSpreadPriority"),
    # SelectorSpreadPriority up to 1.17, DefaultPodTopologySpread in 1.18, SelectorSpread 1.19-1.28.
    _k("SelectorSpread", 12, 28, "SelectorSpreadPriority"),
    _k("DefaultPodTopologySpread", 17, 18),
    _k("ServiceSpreadingPriority", 12, 17),
    _k("EqualPriority", 12, 17),
    _k("VolumeBinding", 12, None, "CheckVolumeBinding"),
    _k("VolumeRestrictions", 12, None, "NoDiskConflict"),
    _k("VolumeZone", 12, None, "NoVolumeZoneConflict"),
    _k("NodeVolumeLimits", 12, None, "MaxCSIVolumeCountPred"),
    _k("EBSLimits", 12, 30, "MaxEBSVolumeCount"),
    _k("GCEPDLimits", 12, 30, "MaxGCEPDVolumeCount"),
    _k("AzureDiskLimits", 12, 30, "MaxAzureDiskVolumeCount"),
    _k("CinderLimits", 12, 25, "MaxCinderVolumeCount"),
    _k("DynamicResources", 26),
    _k("NodeDeclaredFeatures", 35),
    # TopologyAwareWorkloadScheduling's PlacementGenerate and PlacementScore plugins (1.36),
    # which kspread runs in the pod group cycle (kspread.engine.podgroupplacement)
    _k("TopologyPlacementGenerator", 36),
    _k("PodGroupPodsCount", 36),
)

# Names a plugin had in some versions that mean the same implementation.
RENAMED = {"DefaultPodTopologySpread": "SelectorSpread"}


@dataclass(frozen=True, slots=True)
class Registration:
    name: str
    factory: Callable
    first: int = 12
    last: int | None = None


_IMPLEMENTED: dict[str, Registration] = {}


def register(name: str, *, first: int = 12, last: int | None = None) -> Callable:
    """Class decorator: ``cls`` implements upstream plugin ``name`` for minors first..last."""

    def deco(cls):
        cls.name = name
        _IMPLEMENTED[name] = Registration(name, cls, first, last)
        return cls

    return deco


def upstream_plugin(name: str, minor: int, path: PathT, unknown_note: str = "") -> Known:
    """The in-tree plugin ``name`` (or a legacy alias) denotes at minor version ``minor``, or a
    CaseError: an unknown name (with ``unknown_note`` when no in-tree name is close to it), a
    pre-1.18 name at a later version, a plugin the version does not have."""
    known = None
    for k in UPSTREAM:
        if name == k.name or (minor <= 17 and name in k.legacy_names):
            known = k
            break
    if known is None:
        for k in UPSTREAM:
            if name in k.legacy_names:
                raise CaseError(
                    f"{name!r} is a pre-1.18 predicate/priority name; version 1.{minor} calls it {k.name!r}",
                    path,
                )
        names = [k.name for k in UPSTREAM if k.in_version(minor)]
        if minor <= 17:
            names += [alias for k in UPSTREAM if k.in_version(minor) for alias in k.legacy_names]
        suggestion = did_you_mean(name, names)
        raise CaseError(f"unknown plugin {name!r} (not an in-tree kube-scheduler plugin"
                        + ("" if suggestion else unknown_note) + ")" + suggestion, path)
    if not known.in_version(minor):
        span = f"1.{known.first}" + (f" to 1.{known.last}" if known.last is not None else " on")
        raise CaseError(f"plugin {known.name!r} does not exist in version 1.{minor} (it exists in {span})", path)
    return known


def resolve(name: str, minor: int, path: PathT) -> Registration:
    """The implementation of plugin ``name`` (or a legacy alias) at minor version ``minor``,
    or a CaseError saying why there is none. The in-tree plugins must be registered
    (``kspread.engine.plugins.register_in_tree``)."""
    known = upstream_plugin(name, minor, path)
    impl_name = RENAMED.get(known.name, known.name)
    reg = _IMPLEMENTED.get(impl_name)
    if reg is None or minor < reg.first or (reg.last is not None and minor > reg.last):
        raise CaseError(f"plugin {known.name!r} is not implemented by kspread for version 1.{minor}", path)
    return reg
