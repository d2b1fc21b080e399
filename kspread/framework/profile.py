"""Scheduler profiles: which plugins run at which extension point, with weights.

A case's ``profile`` is the whole profile; without one the version's default
profile (``default_profile``) applies, with upstream's weights.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from kspread.errors import CaseError, PathT
from kspread.versions import Version


@dataclass(frozen=True, slots=True)
class PluginRef:
    name: str
    weight: int = 1
    path: tuple = ()


@dataclass(frozen=True, slots=True)
class Extender:
    name: str
    weight: int = 1
    filter: frozenset[str] | None = None  # nodes kept; None: all
    prioritize: Mapping[str, int] | None = None  # None: the extender does not prioritize


@dataclass
class Profile:
    filter: list[PluginRef] = field(default_factory=list)
    score: list[PluginRef] = field(default_factory=list)
    post_filter: list[PluginRef] = field(default_factory=list)
    plugin_config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    extenders: list[Extender] = field(default_factory=list)
    # None: kspread's default, every node (100 %). 0 is upstream's adaptive value.
    percentage_of_nodes_to_score: int | None = None
    is_default: bool = False


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
    for i, e in enumerate(raw.get("extenders") or []):
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
    )


def default_profile(version: Version) -> Profile:
    """The default profile of ``version`` (algorithmprovider / default_plugins.go).

    Up to 1.17 the DefaultProvider's predicates and priorities, named as the 1.18
    plugins that replaced them."""
    m = version.minor
    path = ("profile", "(default)")
    filters = ["NodeUnschedulable", "NodeResourcesFit", "NodeName", "NodePorts", "NodeAffinity",
               "VolumeRestrictions", "TaintToleration", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits",
               "AzureDiskLimits", "VolumeBinding", "VolumeZone"]
    if m >= 31:
        filters = [f for f in filters if f not in ("EBSLimits", "GCEPDLimits", "AzureDiskLimits")]
    spread_on = m >= 18 or (m >= 16 and version.gate("EvenPodsSpread"))
    if spread_on:
        filters.append("PodTopologySpread")
    filters.append("InterPodAffinity")
    score: list[tuple[str, int]]
    if m <= 22:
        score = [("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("InterPodAffinity", 1),
                 ("NodeResourcesLeastAllocated", 1), ("NodeAffinity", 1), ("NodePreferAvoidPods", 10000),
                 ("TaintToleration", 1)]
        if spread_on:
            score.append(("PodTopologySpread", 2 if m >= 19 else 1))
        if m <= 19 or not version.gate("DefaultPodTopologySpread"):
            score.append(("SelectorSpread", 1))
    else:
        score = [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                 ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("NodeResourcesBalancedAllocation", 1),
                 ("ImageLocality", 1)]
    return Profile(
        filter=[PluginRef(n, 1, path) for n in filters],
        score=[PluginRef(n, w, path) for n, w in score],
        post_filter=[PluginRef("DefaultPreemption", 1, path)],
        is_default=True,
    )
