"""Scheduler profiles: which plugins run at which extension point, with weights.

A case's ``profile`` is the whole profile; without one the version's default
profile (``default_profile``) applies, with upstream's weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kspread.engine.versions import Version
from kspread.errors import CaseError, PathT


@dataclass(frozen=True, slots=True)
class PluginRef:
    name: str
    weight: int = 1
    path: tuple = ()
    # where the reference is written when that is not the case file: a
    # KubeSchedulerConfiguration (errors about the plugin are reported there)
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Extender:
    """A static extender (``filter`` / ``prioritize`` given in the case) or an HTTP one
    (``http``: kspread.engine.extender.HTTPConfig, called as upstream calls it)."""

    name: str
    weight: int = 1
    filter: frozenset[str] | None = None  # nodes kept; None: all
    prioritize: Mapping[str, int] | None = None  # None: the extender does not prioritize
    http: Any = None  # HTTPConfig of an HTTP extender
    path: tuple = ()  # where it is written: the field path in the case (or configuration)
    file: str | None = None  # the KubeSchedulerConfiguration it comes from, if not the case
    where: str = ""  # file:line, filled in once the case is located


@dataclass
class Profile:
    filter: list[PluginRef] = field(default_factory=list)
    score: list[PluginRef] = field(default_factory=list)
    post_filter: list[PluginRef] = field(default_factory=list)
    plugin_config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # The same entries decoded and validated (kspread.engine.framework.args.decode_args),
    # as the plugins receive them; an entry missing here is decoded when the profile runs.
    plugin_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    extenders: list[Extender] = field(default_factory=list)
    # None: kspread's default, every node (100 %). 0 is upstream's adaptive value.
    percentage_of_nodes_to_score: int | None = None
    is_default: bool = False
    # The fields below are set only by a profile read from a KubeSchedulerConfiguration
    # (kspread.format.config.load_config); a case's own profile leaves them at their defaults.
    # PreFilter / PreScore plugins in upstream's order. None: the PreFilter (PreScore) of
    # each filter (score) plugin, in filter (score) order; load_config leaves None when the
    # configured list is exactly that (the usual v1beta3/v1 case).
    pre_filter: list[PluginRef] | None = None
    pre_score: list[PluginRef] | None = None
    # The extension points kspread does not run (preEnqueue, queueSort, reserve, permit,
    # preBind, bind, postBind): point -> plugin names in order, for reporting only.
    other_extension_points: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    scheduler_name: str | None = None
    config_file: str | None = None  # the KubeSchedulerConfiguration file this came from
    # podInitialBackoffSeconds / podMaxBackoffSeconds (the scheduling queue of a sequence)
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    # the pod group cycle's PlacementGenerate plugins and PlacementScore plugins with their
    # weights (1.36, TopologyAwareWorkloadScheduling); None: the default profile's
    # (placement_plugins)
    placement_generate: tuple[str, ...] | None = None
    placement_score: tuple[tuple[str, int], ...] | None = None
    # profile.outOfTree of a case: plugins that are not upstream's in-tree plugins, which only
    # a backend registering them runs (the reference engine reports such a case not runnable)
    out_of_tree: tuple[str, ...] = ()


def _refs(raw: Any, path: PathT, weighted: bool) -> list[PluginRef]:
    out: list[PluginRef] = []
    seen: set[str] = set()
    for i, item in enumerate(raw or []):
        p = (*path, i)
        if isinstance(item, str):
            name, weight = item, 1
        else:
            name = item["name"]
            weight = item.get("weight", 1)
            if not weighted and "weight" in item:
                raise CaseError("a weight is only meaningful for score plugins", (*p, "weight"))
        if name in seen:
            raise CaseError(f"plugin {name!r} is listed twice", p, value=name)
        seen.add(name)
        out.append(PluginRef(name, weight, p))
    return out


def profile_from_case(raw: Mapping[str, Any], version: Version) -> Profile:
    path = ("profile",)
    extenders = []
    for e in raw.get("extenders") or []:
        extenders.append(
            Extender(
                name=e["name"],
                weight=e.get("weight", 1),
                filter=frozenset(e["filter"]) if "filter" in e else None,
                prioritize=dict(e["prioritize"]) if "prioritize" in e else None,
            )
        )
    return Profile(
        filter=_refs(raw.get("filter"), (*path, "filter"), False),
        score=_refs(raw.get("score"), (*path, "score"), True),
        post_filter=_refs(raw.get("postFilter"), (*path, "postFilter"), False),
        plugin_config=dict(raw.get("pluginConfig") or {}),
        extenders=extenders,
        percentage_of_nodes_to_score=raw.get("percentageOfNodesToScore"),
        out_of_tree=tuple(raw.get("outOfTree") or ()),
    )


# Filter order of the legacy predicates (predicates.Ordering(), GeneralPredicates
# = PodFitsResources, HostName, PodFitsHostPorts, PodMatchNodeSelector), of the 1.18
# algorithm provider and of config API v1beta1 (1.19-1.21).
_FILTERS_V1BETA1 = ("NodeUnschedulable", "NodeResourcesFit", "NodeName", "NodePorts", "NodeAffinity",
                    "VolumeRestrictions", "TaintToleration", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits",
                    "AzureDiskLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity")
# v1beta2 (1.22) and the MultiPoint order of v1beta3 (1.23-1.24) and v1 (1.25+).
_FILTERS_V1BETA2 = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                    "NodeResourcesFit", "VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits",
                    "AzureDiskLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity")
_CLOUD_VOLUME_LIMITS = ("EBSLimits", "GCEPDLimits", "AzureDiskLimits")


def default_plugins(version: Version) -> tuple[list[str], list[tuple[str, int]]]:
    """The default profile's filter plugins (in order) and score plugins with weights.

    * 1.12-1.17: the DefaultProvider's predicates and priorities (algorithmprovider/
      defaults), named as the 1.18 plugins: priorities SelectorSpread 1, InterPodAffinity 1,
      LeastRequested 1, BalancedResourceAllocation 1, NodePreferAvoidPods 10000,
      NodeAffinity 1, TaintToleration 1, ImageLocality 1; EvenPodsSpread (predicate and
      priority, weight 1) when its gate is on (alpha 1.16-1.17);
    * 1.18: the algorithm provider's plugins, PodTopologySpread weight 1 (EvenPodsSpread
      beta, on);
    * 1.19-1.21 (v1beta1): PodTopologySpread weight 2; SelectorSpread only while the
      DefaultPodTopologySpread gate is off (always in 1.19, where it is alpha);
    * 1.22 (v1beta2, the built-in default of 1.22): filters reordered cheapest first;
      NodeResourcesFit scores in place of NodeResourcesLeastAllocated; NodePreferAvoidPods
      deprecated and no longer a default (PR #99597; still in v1beta1's defaults);
      1.21-1.22 with the VolumeCapacityPriority gate on: VolumeBinding scores, weight 1, last;
    * 1.23+ (v1beta3, v1 from 1.25; MultiPoint): TaintToleration 3, NodeAffinity 2,
      NodeResourcesFit 1, VolumeBinding (scores 0; weight 1), PodTopologySpread 2,
      InterPodAffinity 2, NodeResourcesBalancedAllocation 1, ImageLocality 1;
      NodePreferAvoidPods dropped; EBSLimits, GCEPDLimits, AzureDiskLimits gone from
      1.31; DynamicResources from 1.34 (DynamicResourceAllocation GA, on), a score
      plugin too from 1.35 (weight 2, after InterPodAffinity; scores 0);
      NodeDeclaredFeatures (a filter, last) while its gate is on (alpha 1.35, on from 1.36).
    """
    m = version.minor
    spread_on = m >= 18 or (m >= 16 and version.gate("EvenPodsSpread"))
    filters = list(_FILTERS_V1BETA1 if m <= 21 else _FILTERS_V1BETA2)
    if not spread_on:
        filters.remove("PodTopologySpread")
    if m >= 31:
        filters = [f for f in filters if f not in _CLOUD_VOLUME_LIMITS]
    if dra_enabled(version):
        filters.append("DynamicResources")
    if m >= 35 and version.gate("NodeDeclaredFeatures"):
        # applyFeatureGates appends it to MultiPoint (after DefaultBinder); DynamicResources
        # is then inserted before DefaultPreemption: so it filters last
        filters.append("NodeDeclaredFeatures")
    selector_spread = m <= 19 or (m <= 25 and not version.gate("DefaultPodTopologySpread"))
    score: list[tuple[str, int]]
    if m <= 22:
        score = [("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("InterPodAffinity", 1),
                 ("NodeResourcesFit" if m >= 22 else "NodeResourcesLeastAllocated", 1), ("NodeAffinity", 1)]
        if m <= 21:
            score.append(("NodePreferAvoidPods", 10000))
        score.append(("TaintToleration", 1))
        if spread_on:
            score.append(("PodTopologySpread", 2 if m >= 19 else 1))
        if m >= 21 and version.gate("VolumeCapacityPriority"):
            score.append(("VolumeBinding", 1))  # getDefaultPlugins adds it with the alpha gate on
    else:
        score = [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("VolumeBinding", 1),
                 ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("NodeResourcesBalancedAllocation", 1),
                 ("ImageLocality", 1)]
        if m >= 35 and dra_enabled(version):
            # applyDynamicResources: before DefaultPreemption in MultiPoint, weight 2
            score.insert(6, ("DynamicResources", 2))
    if selector_spread:
        score.append(("SelectorSpread", 1))
    return filters, score


def placement_plugins(profile: Profile, version: Version) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...]]:
    """The profile's PlacementGenerate plugins and weighted PlacementScore plugins (1.36):
    a configuration's own, else the default profile's: with TopologyAwareWorkloadScheduling
    on, TopologyPlacementGenerator, and NodeResourcesFit (a PlacementScore plugin through
    MultiPoint, its score weight) and PodGroupPodsCount (weight 1); none with the gate off.
    A case's own ``profile`` (filter, score, postFilter) keeps the default's, as its
    GangScheduling."""
    if profile.placement_generate is not None and profile.placement_score is not None:
        return profile.placement_generate, profile.placement_score
    if version.minor != 36 or not version.gate("TopologyAwareWorkloadScheduling"):
        return (), ()
    fit = next((r.weight for r in profile.score if r.name == "NodeResourcesFit"), None)
    score = (*((("NodeResourcesFit", fit),) if fit is not None else ()), ("PodGroupPodsCount", 1))
    return ("TopologyPlacementGenerator",), score


def dra_enabled(version: Version) -> bool:
    """The DynamicResourceAllocation gate: on by default from 1.34; before, a case may
    turn it on (from 1.26; kspread models structured parameters from 1.31)."""
    return version.minor >= 26 and version.gate("DynamicResourceAllocation")


def default_profile(version: Version) -> Profile:
    """The default profile of ``version`` (``default_plugins``), with DefaultPreemption."""
    path = ("profile", "(default)")
    filters, score = default_plugins(version)
    return Profile(
        filter=[PluginRef(n, 1, path) for n in filters],
        score=[PluginRef(n, w, path) for n, w in score],
        # MultiPoint order: DynamicResources' PostFilter before DefaultPreemption
        post_filter=[*([PluginRef("DynamicResources", 1, path)] if dra_enabled(version) else []),
                     PluginRef("DefaultPreemption", 1, path)],
        is_default=True,
    )
