"""Reading a real kube-scheduler configuration (KubeSchedulerConfiguration) into a Profile.

``load_config(path, version, scheduler_name=None)`` reads the file, picks the profile
whose ``schedulerName`` matches, and reproduces what the version's kube-scheduler does
with it:

* the config API versions the minor accepts (``v1beta1`` 1.19-1.22, ``v1beta2``
  1.22-1.27, ``v1beta3`` 1.23-1.28, ``v1`` 1.25 on; the alpha versions of 1.12-1.18
  are not read by kspread);
* the defaulting of that config API version: ``v1beta1`` and ``v1beta2`` default
  every extension point separately, ``v1beta3`` and ``v1`` default one ``multiPoint``
  set (pkg/scheduler/apis/config/<version>/default_plugins.go);
* the merge of the profile's plugins with those defaults per extension point
  (``mergePluginSet``): ``disabled`` entries, ``'*'``, enabled entries replacing a
  default in place (from v1beta2; v1beta1 appends them, so re-enabling a default is
  a duplicate), new entries appended;
* the framework's construction (pkg/scheduler/framework/runtime/framework.go):
  ``updatePluginList`` per extension point, ``expandMultiPointPlugins`` with its
  precedence rules, the single QueueSort / at least one Bind checks, and
  ``getScoreWeights`` (a specific Score weight wins over the multiPoint one; 0 or
  unset means 1);
* ``pluginConfig`` args, decoded strictly for the config API version, defaulted and
  validated by ``kspread.engine.framework.args`` (errors at their line in this file),
  ``percentageOfNodesToScore`` (global, and per profile from 1.27).

Which plugins are enabled by default, and with which weights, comes from
``kspread.engine.framework.profile.default_profile`` (the version's newest config API);
their order at each extension point is upstream's. Extenders that a
KubeSchedulerConfiguration declares are HTTP services kspread cannot call: they are an
error (a case gives static extenders in its own ``profile.extenders``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from kspread.engine.framework.args import decode_args
from kspread.engine.framework.profile import PluginRef, Profile, default_profile
from kspread.engine.framework.registry import UPSTREAM
from kspread.engine.versions import Version
from kspread.errors import CaseError, PathT, described, did_you_mean, format_path
from kspread.format.files import decode_utf8, file_in_trees, read_regular
from kspread.format.schema import check_args_shape
from kspread.format.yamlio import node_line

GROUP = "kubescheduler.config.k8s.io"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
INT32_MAX = 2**31 - 1

# Config API version -> (first minor, last minor or None) that accepts it.
API_VERSIONS: dict[str, tuple[int, int | None]] = {
    "v1alpha1": (12, 18),
    "v1alpha2": (18, 18),
    "v1beta1": (19, 22),
    "v1beta2": (22, 27),
    "v1beta3": (23, 28),
    "v1": (25, None),
}
SUPPORTED_APIS = ("v1beta1", "v1beta2", "v1beta3", "v1")


def accepted_apis(minor: int) -> list[str]:
    """The config API versions kube-scheduler 1.<minor> decodes."""
    return [a for a, (lo, hi) in API_VERSIONS.items() if lo <= minor and (hi is None or minor <= hi)]


# Extension points in the order framework.go's getExtensionPoints walks them.
POINTS = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score",
          "preBind", "bind", "postBind", "permit", "preEnqueue", "queueSort",
          "placementGenerate", "placementScore")
# the pod group cycle's extension points (1.36's Plugins fields; TopologyAwareWorkloadScheduling)
_PLACEMENT_POINTS = ("placementGenerate", "placementScore")
_TYPE_NAME = {
    "preFilter": "PreFilterPlugin", "filter": "FilterPlugin", "postFilter": "PostFilterPlugin",
    "reserve": "ReservePlugin", "preScore": "PreScorePlugin", "score": "ScorePlugin",
    "preBind": "PreBindPlugin", "bind": "BindPlugin", "postBind": "PostBindPlugin",
    "permit": "PermitPlugin", "preEnqueue": "PreEnqueuePlugin", "queueSort": "QueueSortPlugin",
    "placementGenerate": "PlacementGeneratePlugin", "placementScore": "PlacementScorePlugin",
}
_OTHER_POINTS = ("preEnqueue", "queueSort", "reserve", "permit", "preBind", "bind", "postBind")

# Plugins a config API version no longer accepts (validation.go removedPluginsByVersion /
# invalidPluginsByVersion); the list of a version applies to it and every later one.
_REMOVED_IN_API = {
    "v1beta2": ("NodeLabel", "ServiceAffinity", "NodePreferAvoidPods", "NodeResourcesLeastAllocated",
                "NodeResourcesMostAllocated", "RequestedToCapacityRatio"),
}
_API_ORDER = ("v1beta1", "v1beta2", "v1beta3", "v1")


def _removed_in(api: str, name: str) -> str | None:
    for a in _API_ORDER[: _API_ORDER.index(api) + 1]:
        if name in _REMOVED_IN_API.get(a, ()):
            return a
    return None


# ---- which extension points each in-tree plugin implements ------------------------------

def capabilities(name: str, minor: int) -> frozenset[str]:
    """The extension points upstream plugin ``name`` implements in 1.<minor> (1.19 on).

    Filter / Score / PostFilter of the default plugins are taken from default_profile
    (see ``_implements``); this table decides the rest. Entries marked (u) are from
    memory of the plugin sources, not checked line by line against every release."""
    m = minor
    c: set[str] = set()
    if name == "PrioritySort":
        c = {"queueSort"}
    elif name == "DefaultBinder":
        c = {"bind"}
    elif name == "SchedulingGates":
        c = {"preEnqueue"}
    elif name == "DefaultPreemption":
        c = {"postFilter"}
    elif name in ("NodeUnschedulable", "NodeName"):
        c = {"filter"}
    elif name == "TaintToleration":
        c = {"filter", "preScore", "score"}  # no PreFilter in any release (1.31 and 1.35 checked)
    elif name == "NodeAffinity":
        c = {"filter", "score"}
        if m >= 20:  # (u): PreScore in the 1.21 defaults, not in 1.19's
            c.add("preScore")
        if m >= 21:
            c.add("preFilter")
    elif name == "NodePorts":
        c = {"preFilter", "filter"}
    elif name == "NodeResourcesFit":
        c = {"preFilter", "filter"}
        if m >= 22:  # scoring strategies (v1beta2); v1beta1 1.22 rejects it next to LeastAllocated
            c.add("score")
        if m >= 29:  # (u)
            c.add("preScore")
        if m >= 36:  # ScorePlacement (MostAllocated over a placement's nodes)
            c.add("placementScore")
    elif name == "TopologyPlacementGenerator":
        c = {"placementGenerate"}
    elif name == "PodGroupPodsCount":
        c = {"placementScore"}
    elif name == "NodeResourcesBalancedAllocation":
        c = {"score"}
        if m >= 29:  # (u)
            c.add("preScore")
    elif name in ("NodeResourcesLeastAllocated", "NodeResourcesMostAllocated", "RequestedToCapacityRatio",
                  "NodePreferAvoidPods", "ImageLocality"):
        c = {"score"}
    elif name == "NodeResourceLimits":
        c = {"preScore", "score"}
    elif name == "NodeLabel":
        c = {"filter", "score"}
    elif name == "ServiceAffinity":
        c = {"preFilter", "filter", "score"}
    elif name in ("InterPodAffinity", "PodTopologySpread"):
        c = {"preFilter", "filter", "preScore", "score"}
    elif name in ("SelectorSpread", "DefaultPodTopologySpread"):
        c = {"preScore", "score"}
    elif name == "VolumeBinding":
        c = {"preFilter", "filter", "reserve", "preBind"}
        if m >= 22:  # Score behind VolumeCapacityPriority (u)
            c.add("score")
    elif name == "VolumeRestrictions":
        c = {"filter"}
        if m >= 23:  # (u)
            c.add("preFilter")
    elif name == "VolumeZone":
        c = {"filter"}
        if m >= 26:  # in v1beta2's default PreFilter set by 1.26/1.27 (first minor (u))
            c.add("preFilter")
    elif name in ("NodeVolumeLimits", "EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits"):
        c = {"filter"}
    elif name == "DynamicResources":  # (u)
        c = {"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"}
    return frozenset(c)


# ---- upstream's default orders ------------------------------------------------------------

# v1beta3 / v1 MultiPoint (default_plugins.go), a superset over the versions.
_MULTIPOINT_ORDER = (
    "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
    "NodeResourcesFit", "VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits",
    "AzureDiskLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity",
    "DynamicResources", "DefaultPreemption", "NodeResourcesBalancedAllocation", "ImageLocality",
    "DefaultBinder", "SelectorSpread",
)
# v1beta1 / v1beta2 per extension point (algorithmprovider/registry.go up to 1.21,
# v1beta1|v1beta2/default_plugins.go from 1.22).
_FILTER_ORDER_OLD = (  # 1.19, 1.20
    "NodeUnschedulable", "NodeResourcesFit", "NodeName", "NodePorts", "NodeAffinity", "VolumeRestrictions",
    "TaintToleration", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding",
    "VolumeZone", "PodTopologySpread", "InterPodAffinity",
)
_FILTER_ORDER = (  # 1.21 on
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
    "VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding",
    "VolumeZone", "PodTopologySpread", "InterPodAffinity",
)
_PRE_FILTER_ORDER = ("NodeResourcesFit", "NodePorts", "VolumeRestrictions", "PodTopologySpread",
                     "InterPodAffinity", "VolumeBinding", "VolumeZone", "NodeAffinity", "TaintToleration")
_PRE_SCORE_ORDER = ("InterPodAffinity", "PodTopologySpread", "TaintToleration", "NodeAffinity",
                    "SelectorSpread", "NodeResourceLimits")
_SCORE_ORDER = ("NodeResourcesBalancedAllocation", "ImageLocality", "InterPodAffinity", "NodeResourcesFit",
                "NodeResourcesLeastAllocated", "NodeAffinity", "NodePreferAvoidPods", "PodTopologySpread",
                "TaintToleration", "VolumeBinding", "SelectorSpread", "NodeResourceLimits")


def _ordered(names: Sequence[str], order: Sequence[str]) -> list[str]:
    rank = {n: i for i, n in enumerate(order)}
    known = sorted((n for n in names if n in rank), key=rank.__getitem__)
    return known + [n for n in names if n not in rank]


# ---- parsed configuration -----------------------------------------------------------------

@dataclass(frozen=True)
class _Entry:
    name: str
    weight: int | None  # None: unset
    path: tuple


@dataclass
class _Set:
    enabled: list[_Entry] = field(default_factory=list)
    disabled: list[_Entry] = field(default_factory=list)


@dataclass
class _Ctx:
    file: str
    version: Version
    api: str
    prefix: tuple
    # the directory trees a file the configuration names must lie in (tlsConfig's files);
    # None: the configuration's own directory
    roots: tuple[str, ...] | None = None

    @property
    def minor(self) -> int:
        return self.version.minor

    def err(self, msg: str, path: PathT, value: Any = ...) -> CaseError:
        return CaseError(msg, (*self.prefix, *path), value=value, file=self.file, line=self.line(path))

    def line(self, path: PathT) -> int | None:
        """The line of ``path`` (without the prefix) in the file; composed once."""
        if not hasattr(self, "_root"):
            self._root = _compose(self.file)
        return None if self._root is None else node_line(self._root, tuple(p for p in path if p != "(default)"))


def _locate(file: str, path: tuple) -> int | None:
    """The line of ``path`` in the file's first YAML document, as deep as it goes."""
    node = _compose(file)
    return None if node is None else node_line(node, path)


def _compose(file: str) -> Any:
    """The file's first YAML document as a node tree (for lines), or None."""
    try:
        return yaml.compose(Path(file).read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except Exception:
        return None


def _mapping(ctx: _Ctx, raw: Any, path: tuple, allowed: Sequence[str], what: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ctx.err(f"{what} must be a mapping", path, value=raw)
    for k in raw:
        if k not in allowed:
            raise ctx.err(f'strict decoding error: unknown field "{k}" (known: {", ".join(allowed)})'
                          + did_you_mean(k, allowed),
                          (*path, k))
    return raw


def _int64(ctx: _Ctx, raw: Any, path: tuple, what: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ctx.err(f"{what} must be an integer", path, value=raw)
    if not -(1 << 63) <= raw < 1 << 63:
        raise ctx.err(f"{what} is out of the int64 range", path, value=raw)
    return raw


def _int32(ctx: _Ctx, raw: Any, path: tuple, what: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ctx.err(f"{what} must be an integer", path, value=raw)
    if not -INT32_MAX - 1 <= raw <= INT32_MAX:
        raise ctx.err(f"{what} is out of the int32 range", path, value=raw)
    return raw


def _known(name: str, minor: int):
    for k in UPSTREAM:
        if k.name == name:
            return k if k.in_version(minor) else None
    return None


def _check_plugin_name(ctx: _Ctx, name: str, path: tuple) -> None:
    removed = _removed_in(ctx.api, name)
    if removed:
        raise ctx.err(f"plugin {name!r} was removed in version \"{GROUP}/{removed}\" "
                      f"(KubeSchedulerConfiguration is version \"{GROUP}/{ctx.api}\")", path, value=name)
    if _known(name, ctx.minor) is None:
        k = next((k for k in UPSTREAM if k.name == name), None)
        if k is None:
            raise ctx.err(f"plugin {name!r} does not exist (not an in-tree kube-scheduler plugin)"
                          + did_you_mean(name, [k.name for k in UPSTREAM if k.in_version(ctx.minor)]), path, value=name)
        span = f"1.{k.first}" + (f" to 1.{k.last}" if k.last is not None else " on")
        raise ctx.err(f"plugin {name!r} does not exist in version {ctx.version} (it exists in {span})",
                      path, value=name)


def _parse_set(ctx: _Ctx, raw: Any, path: tuple) -> _Set:
    m = _mapping(ctx, raw, path, ("enabled", "disabled"), "a plugin set")
    out = _Set()
    for key in ("enabled", "disabled"):
        items = m.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise ctx.err(f"{key} must be a list of plugins", (*path, key), value=items)
        for i, item in enumerate(items):
            p = (*path, key, i)
            it = _mapping(ctx, item, p, ("name", "weight"), "a plugin")
            name = it.get("name")
            if not isinstance(name, str) or not name:
                raise ctx.err("a plugin needs a name", (*p, "name"), value=name)
            weight = it.get("weight")
            if weight is not None:
                weight = _int32(ctx, weight, (*p, "weight"), "weight")
                if weight < 0:
                    # as in a case's profile; upstream does not validate it (getScoreWeights only
                    # turns 0 into 1), and a negative weight would reward what a plugin penalizes
                    raise ctx.err("a score weight must not be negative (0 or unset means 1)", (*p, "weight"),
                                  value=weight)
            out_list = out.enabled if key == "enabled" else out.disabled
            out_list.append(_Entry(name, weight, p))
    return out


# ---- defaults -----------------------------------------------------------------------------

def _default_sets(ctx: _Ctx, path: tuple) -> dict[str, _Set]:
    """The config API version's default plugins, per extension point (and multiPoint)."""
    m = ctx.minor
    dp = default_profile(ctx.version)
    filters = [r.name for r in dp.filter]
    post_filters = [r.name for r in dp.post_filter]
    score = [(r.name, r.weight) for r in dp.score]
    dpath = (*path, "(default)")
    sets: dict[str, _Set] = {p: _Set() for p in POINTS}
    sets["multiPoint"] = _Set()

    def entries(names_weights):
        return [_Entry(n, w, dpath) for n, w in names_weights]

    if ctx.api in ("v1beta3", "v1"):
        weights = dict(score)
        names = ["PrioritySort", *filters, *[n for n, _ in score], *post_filters, "DefaultBinder"]
        names = list(dict.fromkeys(names))
        ordered = _ordered(names, _MULTIPOINT_ORDER)
        if m >= 30:
            ordered.insert(0, "SchedulingGates")
        elif m >= 27:
            ordered.append("SchedulingGates")  # PodSchedulingReadiness beta (on) 1.27-1.29
        if m == 36 and ctx.version.gate("TopologyAwareWorkloadScheduling"):
            # applyTopologyAwareWorkloadScheduling: appended to MultiPoint
            ordered += ["TopologyPlacementGenerator", "PodGroupPodsCount"]
            weights["PodGroupPodsCount"] = 1
        sets["multiPoint"].enabled = entries((n, weights.get(n)) for n in ordered)
        return sets

    # v1beta1 / v1beta2: every extension point separately; weights of those APIs.
    names = [n for n, _ in score]
    if ctx.api == "v1beta1":
        names = ["NodeResourcesLeastAllocated" if n == "NodeResourcesFit" else n for n in names]
        if "NodePreferAvoidPods" not in names:
            names.append("NodePreferAvoidPods")
    else:
        names = ["NodeResourcesFit" if n == "NodeResourcesLeastAllocated" else n for n in names]
        names = [n for n in names if n != "NodePreferAvoidPods"]
    # VolumeBinding scores in these APIs only with the VolumeCapacityPriority alpha gate.
    names = [n for n in dict.fromkeys(names) if n != "VolumeBinding"]
    special = {"PodTopologySpread": 2 if m >= 19 else 1, "NodePreferAvoidPods": 10000}
    sets["score"].enabled = entries((n, special.get(n, 1)) for n in _ordered(names, _SCORE_ORDER))
    sets["filter"].enabled = entries((n, None) for n in _ordered(filters, _FILTER_ORDER if m >= 21 else _FILTER_ORDER_OLD))
    sets["postFilter"].enabled = entries((n, None) for n in post_filters)
    pre_filter = [n for n in filters if "preFilter" in capabilities(n, m)]
    sets["preFilter"].enabled = entries((n, None) for n in _ordered(pre_filter, _PRE_FILTER_ORDER))
    pre_score = [n for n in names if "preScore" in capabilities(n, m)]
    sets["preScore"].enabled = entries((n, None) for n in _ordered(pre_score, _PRE_SCORE_ORDER))
    sets["queueSort"].enabled = entries([("PrioritySort", None)])
    sets["bind"].enabled = entries([("DefaultBinder", None)])
    if "VolumeBinding" in filters:
        sets["reserve"].enabled = entries([("VolumeBinding", None)])
        sets["preBind"].enabled = entries([("VolumeBinding", None)])
    if ctx.api == "v1beta2" and m >= 27:
        sets["preEnqueue"].enabled = entries([("SchedulingGates", None)])
    return sets


def _is_default(e: _Entry) -> bool:
    return bool(e.path) and e.path[-1] == "(default)"


def _written_later(a: _Entry, b: _Entry) -> _Entry:
    """Of two entries that name one plugin, the one written second in the file (the
    duplicate), whatever order merging with the defaults put them in."""
    def index(e: _Entry) -> int:
        return e.path[-1] if e.path and isinstance(e.path[-1], int) else -1
    return b if index(b) >= index(a) else a


def _implements(ctx: _Ctx, e: _Entry, point: str, dp: Profile, defaults: set[str], expanding: bool) -> bool:
    """Whether plugin ``e.name`` extends ``point``. When multiPoint expands a default
    plugin, its Filter, Score and PostFilter follow default_profile, so an unchanged
    configuration gives exactly default_profile's sets; the default per-point sets of
    v1beta1/v1beta2 are taken as they are; anything else follows ``capabilities``."""
    if not expanding and _is_default(e):
        return True
    if expanding and e.name in defaults and point in ("filter", "score", "postFilter"):
        lst = {"filter": dp.filter, "score": dp.score, "postFilter": dp.post_filter}[point]
        return any(r.name == e.name for r in lst)
    return point in capabilities(e.name, ctx.minor)


# ---- merge and framework construction ------------------------------------------------------

def _merge_set(ctx: _Ctx, default: _Set, custom: _Set) -> _Set:
    disabled_names = {d.name for d in custom.disabled} | {d.name for d in default.disabled}
    if ctx.api == "v1beta1":
        # types.go Plugins.Apply (1.19-1.21) / v1beta1 mergePluginSet (1.22): append.
        enabled = [] if "*" in disabled_names else [e for e in default.enabled if e.name not in disabled_names]
        return _Set(enabled + list(custom.enabled), list(custom.disabled))
    custom_by_name = {e.name: (i, e) for i, e in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled = []
    if "*" not in disabled_names:
        for e in default.enabled:
            if e.name in disabled_names:
                continue
            if e.name in custom_by_name:
                i, ce = custom_by_name[e.name]
                e = ce  # replaced in place, weight and all
                replaced.add(i)
            enabled.append(e)
    enabled += [e for i, e in enumerate(custom.enabled) if i not in replaced]
    return _Set(enabled, list(custom.disabled) + list(default.disabled))


@dataclass
class _Built:
    lists: dict[str, list[_Entry]]
    weights: dict[str, int]
    placement_weights: dict[str, int] = field(default_factory=dict)


def _build(ctx: _Ctx, merged: dict[str, _Set], dp: Profile, defaults: set[str], profile_path: tuple,
           scheduler_name: str) -> _Built:
    for s in merged.values():
        for e in s.enabled:
            _check_plugin_name(ctx, e.name, e.path if e.path and e.path[-1] != "(default)" else profile_path)
    lists: dict[str, list[_Entry]] = {}
    for point in POINTS:
        out: list[_Entry] = []
        seen: dict[str, _Entry] = {}
        for e in merged[point].enabled:
            if not _implements(ctx, e, point, dp, defaults, False):
                raise ctx.err(f"plugin {e.name!r} does not extend {_TYPE_NAME[point]} plugin", e.path, value=e.name)
            if e.name in seen:
                raise ctx.err(f"plugin {e.name!r} already registered as {_TYPE_NAME[point]!r}",
                              _written_later(seen[e.name], e).path, value=e.name)
            seen[e.name] = e
            out.append(e)
        lists[point] = out
    mp = merged.get("multiPoint")
    if mp is not None and mp.enabled:
        for point in POINTS:
            disabled = {d.name for d in merged[point].disabled}
            if "*" in disabled:
                continue
            enabled_names = [e.name for e in lists[point]]
            overrides: set[str] = set()
            from_mp: list[_Entry] = []
            for e in mp.enabled:
                if not _implements(ctx, e, point, dp, defaults, True) or e.name in disabled:
                    continue
                if e.name in enabled_names:
                    overrides.add(e.name)  # the specific extension point's setting wins
                    continue
                dup = next((x for x in from_mp if x.name == e.name), None)
                if dup is not None:
                    raise ctx.err(f"plugin {e.name!r} already registered as {_TYPE_NAME[point]!r}",
                                  _written_later(dup, e).path, value=e.name)
                from_mp.append(e)
            lists[point] = ([e for e in lists[point] if e.name in overrides] + from_mp
                            + [e for e in lists[point] if e.name not in overrides])
    if len(lists["queueSort"]) != 1:
        raise ctx.err(f"only one queue sort plugin required for profile with scheduler name "
                      f"{scheduler_name!r}, but got {len(lists['queueSort'])}", (*profile_path, "plugins"))
    if not lists["bind"]:
        raise ctx.err(f"at least one bind plugin is needed for profile with scheduler name {scheduler_name!r}",
                      (*profile_path, "plugins"))
    if len(lists["placementGenerate"]) > 1:
        raise ctx.err(f"at most one placement generate plugin is allowed for profile with scheduler name "
                      f"{scheduler_name!r}", (*profile_path, "plugins"))
    # getScoreWeights: Score's own entries first, then multiPoint; the first one counts.
    # (Only the weights of the plugins that do score matter.)
    scoring = {e.name for e in lists["score"]}
    weights: dict[str, int] = {}
    candidates = list(merged["score"].enabled) + (list(mp.enabled) if mp is not None else [])
    for e in candidates:
        if e.name in scoring and e.name not in weights:
            weights[e.name] = e.weight or 1
    # getValidScoreWeights for the PlacementScore plugins: PlacementScore's entries, then multiPoint
    placing = {e.name for e in lists["placementScore"]}
    placement_weights: dict[str, int] = {}
    for e in list(merged["placementScore"].enabled) + (list(mp.enabled) if mp is not None else []):
        if e.name in placing and e.name not in placement_weights:
            placement_weights[e.name] = e.weight or 1
    return _Built(lists, weights, placement_weights)


# ---- pluginConfig ------------------------------------------------------------------------

def _plugin_config(ctx: _Ctx, raw: Any, path: tuple) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """pluginConfig: name -> (args as given, args decoded by kspread.engine.framework.args)."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise ctx.err("pluginConfig must be a list of {name, args}", path, value=raw)
    out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for i, item in enumerate(raw):
        p = (*path, i)
        it = _mapping(ctx, item, p, ("name", "args"), "a pluginConfig entry")
        name = it.get("name")
        if not isinstance(name, str) or not name:
            raise ctx.err("a pluginConfig entry needs a name", (*p, "name"), value=name)
        if name in out:
            raise ctx.err(f"Duplicate value: {name!r} (one pluginConfig entry per plugin)", (*p, "name"), value=name)
        removed = _removed_in(ctx.api, name)
        if removed:
            raise ctx.err(f"pluginConfig for {name!r}: the plugin was removed in version \"{GROUP}/{removed}\" "
                          f"(KubeSchedulerConfiguration is version \"{GROUP}/{ctx.api}\")", (*p, "name"), value=name)
        if _known(name, ctx.minor) is None:
            raise ctx.err(f"pluginConfig for {name!r}, which is not an in-tree plugin of version {ctx.version} "
                          f"(kspread runs in-tree plugins only)", (*p, "name"), value=name)
        args = it.get("args")
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise ctx.err("args must be a mapping", (*p, "args"), value=args)
        args = dict(args)
        kind = args.pop("kind", None)
        api_version = args.pop("apiVersion", None)
        if kind is not None and kind != f"{name}Args":
            raise ctx.err(f"args has to match plugin args: kind {kind!r} is not {name + 'Args'!r}",
                          (*p, "args", "kind"), value=kind)
        if api_version is not None and api_version != f"{GROUP}/{ctx.api}":
            raise ctx.err(f"args apiVersion must be {GROUP}/{ctx.api}", (*p, "args", "apiVersion"), value=api_version)
        try:
            decoded = decode_args(name, args, ctx.version, (*p, "args"), api=ctx.api, check_shape=check_args_shape)
        except CaseError as e:
            raise ctx.err(e.message, e.path, e.value) from None
        out[name] = (args, decoded)
    return out


# ---- the file --------------------------------------------------------------------------

_TOP_FIELDS = ("apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "healthzBindAddress",
               "metricsBindAddress", "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
               "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
               "delayCacheUntilActive")


def read_config_text(path: str) -> str:
    """The text of a configuration file; a CaseError when it cannot be read: missing, not
    a regular file (a FIFO would block, /dev/zero never end), not UTF-8."""
    try:
        data = read_regular(path)
    except OSError as e:
        raise CaseError(f"cannot read the scheduler configuration: {e.strerror or e}", file=path) from None
    return decode_utf8(data, path, "the scheduler configuration")


def _read(path: str) -> Any:
    text = read_config_text(path)
    from kspread.format.yamlio import load_strict

    # the shared strict reader: duplicate keys, alias bombs, deep nesting are errors with lines
    docs = [d for d in load_strict(text, path) if d is not None]
    if not docs:
        raise CaseError("the scheduler configuration file is empty", file=path)
    if len(docs) > 1:
        raise CaseError("a scheduler configuration file holds one document", file=path)
    return docs[0]


def _api_of(doc: Mapping[str, Any], file: str, version: Version) -> str:
    def err(msg, key, value=...):
        return CaseError(msg, (key,), value=value, file=file, line=_locate(file, (key,)))

    raw = doc.get("apiVersion")
    group, _, api = raw.partition("/") if isinstance(raw, str) else ("", "", "")
    if group != GROUP:
        # not a scheduler configuration: its values are not echoed (any file may be named by mistake)
        got = "is missing" if raw is None else f"is {described(raw)}, not {GROUP}/<version>"
        raise err(f"not a KubeSchedulerConfiguration: apiVersion {got}", "apiVersion")
    if api not in API_VERSIONS:
        raise err(f"unknown apiVersion (a KubeSchedulerConfiguration is {GROUP}/v1, v1beta3, ...)", "apiVersion", raw)
    if doc.get("kind") is None:
        typo = [k for k in doc if isinstance(k, str) and k.lower().startswith("kind")]
        if typo:
            raise err(f"missing required field 'kind' (kind: {KIND}); unknown field {typo[0]!r}", typo[0])
        raise err(f"missing required field 'kind' (kind: {KIND})", "apiVersion")
    if doc.get("kind") != KIND:
        raise err(f"kind must be {KIND}", "kind", doc.get("kind"))
    accepted = accepted_apis(version.minor)
    if api not in accepted:
        lo, hi = API_VERSIONS[api]
        span = f"1.{lo}" + (f" to 1.{hi}" if hi is not None else " on") if hi != lo else f"1.{lo} only"
        raise err(f"kube-scheduler {version} does not accept {GROUP}/{api} (accepted in {span}); "
                  f"{version} accepts {', '.join(accepted) or 'no config API version kspread reads'}",
                  "apiVersion", raw)
    if api not in SUPPORTED_APIS:
        raise err(f"kspread reads {GROUP} {', '.join(SUPPORTED_APIS)} only, not {api} "
                  f"(the alpha configurations of 1.12-1.18)", "apiVersion", raw)
    return api


def case_config_path(given: str, base_dir: str | None, roots: Sequence[str] | None,
                     at: PathT = ("profile", "config")) -> str:
    """The file a case's ``profile.config`` names: ``given`` relative to ``base_dir`` (the
    case file's directory), which must resolve, symlinks followed, inside one of ``roots``
    (the directory trees being tested: the current directory and the paths given on the
    command line, or pytest's rootdir and its arguments; without roots, the case file's
    own directory). An absolute path is refused: a case under review must not make a run
    read a file outside the tree it tests (a token, ``~/.git-credentials``)."""
    return file_in_trees(given, base_dir, roots, at, "KubeSchedulerConfiguration",
                         "a configuration file is named relative to the case file", "configuration")


def load_config(path: str | Path, version: Version, scheduler_name: str | None = None,
                *, path_prefix: PathT = (), roots: Sequence[str] | None = None) -> Profile:
    """The Profile kube-scheduler ``version`` runs for the profile named ``scheduler_name``
    (default ``default-scheduler``) of the KubeSchedulerConfiguration file ``path``.

    Errors are CaseErrors with ``file`` set to the configuration file, ``path`` the field
    inside it (after ``path_prefix``) and ``line`` where it can be found. Files the
    configuration names (an extender's tlsConfig files) must lie inside ``roots`` (the
    directory trees being tested; default: the configuration's own directory)."""
    file = str(path)
    doc = _read(file)
    if not isinstance(doc, Mapping):
        # what the file holds is not echoed: it may be any file (a token) named by mistake
        raise CaseError(f"not a KubeSchedulerConfiguration: the file holds {described(doc)}, not a mapping",
                        file=file, line=_locate(file, ()))
    api = _api_of(doc, file, version)
    ctx = _Ctx(file, version, api, tuple(path_prefix), tuple(roots) if roots else None)
    _mapping(ctx, doc, (), _TOP_FIELDS, "a KubeSchedulerConfiguration")

    extenders, managed = _extenders(ctx, doc.get("extenders"))
    # ValidateKubeSchedulerConfiguration's other numbers (SetDefaults: parallelism 16)
    if doc.get("parallelism") is not None:
        parallelism = _int32(ctx, doc["parallelism"], ("parallelism",), "parallelism")
        if parallelism <= 0:
            raise ctx.err("parallelism: should be an integer value greater than zero", ("parallelism",), parallelism)
    conn = doc.get("clientConnection")
    if isinstance(conn, Mapping) and conn.get("burst") is not None:
        burst = _int32(ctx, conn["burst"], ("clientConnection", "burst"), "clientConnection.burst")
        if burst < 0:
            raise ctx.err("clientConnection.burst: must be non-negative", ("clientConnection", "burst"), burst)
    pct = doc.get("percentageOfNodesToScore")
    if pct is not None:
        pct = _int32(ctx, pct, ("percentageOfNodesToScore",), "percentageOfNodesToScore")
        if not 0 <= pct <= 100:
            raise ctx.err("percentageOfNodesToScore: not in valid range [0-100]", ("percentageOfNodesToScore",), pct)

    # the scheduling queue's backoff (ValidateKubeSchedulerConfiguration; defaults 1 and 10)
    initial_backoff, max_backoff = 1, 10
    if doc.get("podInitialBackoffSeconds") is not None:
        initial_backoff = _int64(ctx, doc["podInitialBackoffSeconds"], ("podInitialBackoffSeconds",),
                                 "podInitialBackoffSeconds")
        if initial_backoff <= 0:
            raise ctx.err("podInitialBackoffSeconds: must be greater than 0", ("podInitialBackoffSeconds",),
                          initial_backoff)
    if doc.get("podMaxBackoffSeconds") is not None:
        max_backoff = _int64(ctx, doc["podMaxBackoffSeconds"], ("podMaxBackoffSeconds",), "podMaxBackoffSeconds")
    if max_backoff < initial_backoff:
        raise ctx.err("podMaxBackoffSeconds: must be greater than or equal to PodInitialBackoffSeconds",
                      ("podMaxBackoffSeconds",), max_backoff)

    raw_profiles = doc.get("profiles")
    if raw_profiles is None or raw_profiles == []:
        raw_profiles = [{}]  # SetDefaults: one profile
    if not isinstance(raw_profiles, list):
        raise ctx.err("profiles must be a list", ("profiles",), value=raw_profiles)

    profile_fields = ["schedulerName", "plugins", "pluginConfig"]
    if ctx.minor >= 27 and api in ("v1beta3", "v1"):
        profile_fields.append("percentageOfNodesToScore")
    plugin_points = [p for p in POINTS if (p != "preEnqueue" or ctx.minor >= 26)
                     and (p not in _PLACEMENT_POINTS or ctx.minor >= 36)]
    if api in ("v1beta3", "v1"):
        plugin_points.append("multiPoint")

    names: dict[str, int] = {}
    queue_sorts: list[tuple[int, Any]] = []
    built: dict[str, Profile] = {}
    for i, rp in enumerate(raw_profiles):
        ppath = ("profiles", i)
        rp = _mapping(ctx, rp, ppath, profile_fields, "a profile")
        name = rp.get("schedulerName")
        if name is None and len(raw_profiles) == 1:
            name = DEFAULT_SCHEDULER_NAME
        if not isinstance(name, str) or not name:
            raise ctx.err("schedulerName: Required value (every profile of several needs one)",
                          (*ppath, "schedulerName"), value=name)
        if name in names:
            raise ctx.err(f"schedulerName: Duplicate value {name!r} (also profiles[{names[name]}])",
                          (*ppath, "schedulerName"), value=name)
        names[name] = i
        raw_plugins = _mapping(ctx, rp.get("plugins"), (*ppath, "plugins"), plugin_points, "plugins")
        custom = {p: _parse_set(ctx, raw_plugins.get(p), (*ppath, "plugins", p)) for p in [*POINTS, "multiPoint"]}
        queue_sorts.append((i, raw_plugins.get("queueSort")))
        ppct = rp.get("percentageOfNodesToScore")
        if ppct is not None:
            ppct = _int32(ctx, ppct, (*ppath, "percentageOfNodesToScore"), "percentageOfNodesToScore")
            if not 0 <= ppct <= 100:
                raise ctx.err("percentageOfNodesToScore: not in valid range [0-100]",
                              (*ppath, "percentageOfNodesToScore"), ppct)
        built[name] = _profile(ctx, custom, rp.get("pluginConfig"), ppath, name,
                               ppct if ppct is not None else pct)

    # validateCommonQueueSort: every profile configures queueSort the same way.
    if queue_sorts:
        canon = _canon(queue_sorts[0][1])
        for i, qs in queue_sorts[1:]:
            if _canon(qs) != canon:
                raise ctx.err("queueSort must be the same for all profiles", ("profiles", i, "plugins", "queueSort"))

    want = scheduler_name or DEFAULT_SCHEDULER_NAME
    if want not in built:
        raise CaseError(f"no profile with schedulerName {want!r} (the profiles are: {', '.join(built)})",
                        (*ctx.prefix, "profiles"), file=file, line=_locate(file, ("profiles",)))
    chosen = built[want]
    chosen.pod_initial_backoff_seconds, chosen.pod_max_backoff_seconds = initial_backoff, max_backoff
    if extenders:
        from kspread.format.extenders import apply_ignored_by_scheduler

        for prof in built.values():  # buildExtenders: every profile's NodeResourcesFit
            apply_ignored_by_scheduler(prof, managed, ("extenders",), _err_of(ctx))
        chosen.extenders = extenders
    return chosen


def _err_of(ctx: _Ctx):
    def err(msg: str, path: PathT, value: Any = ...) -> CaseError:
        return ctx.err(msg, tuple(path), value)

    return err


def _extenders(ctx: _Ctx, raw: Any) -> tuple[list, list[tuple[str, bool]]]:
    """The configuration's HTTP extenders (kspread.format.extenders), named by their
    urlPrefix as upstream names them, each knowing its file and line."""
    from kspread.format.extenders import HTTP_FIELDS, http_extender, validate_extenders

    if raw is None:
        return [], []
    if not isinstance(raw, list):
        raise ctx.err("extenders must be a list", ("extenders",), value=raw)
    err = _err_of(ctx)
    out, managed = [], []
    for i, item in enumerate(raw):
        path = ("extenders", i)
        item = _mapping(ctx, item, path, HTTP_FIELDS, "an extender")
        e, m = http_extender(item, path, name=None, base_dir=os.path.dirname(ctx.file) or ".", default_weight=0,
                             err=err, file=ctx.file, roots=ctx.roots)
        out.append(e)
        managed.extend(m)
    validate_extenders(out, ("extenders",), err)
    return [replace(e, path=(*ctx.prefix, *e.path), where=f"{ctx.file}:{ctx.line(e.path)}") for e in out], managed


def _canon(raw: Any) -> Any:
    if not raw:
        return ((), ())
    return tuple(tuple((e.get("name"), e.get("weight") or 0) for e in (raw.get(k) or []) if isinstance(e, Mapping))
                 for k in ("enabled", "disabled"))


def _profile(ctx: _Ctx, custom: dict[str, _Set], raw_config: Any, ppath: tuple, name: str,
             pct: int | None) -> Profile:
    dp = default_profile(ctx.version)
    defaults = _default_sets(ctx, (*ppath, "plugins"))
    default_names = {e.name for s in defaults.values() for e in s.enabled}
    merged = {p: _merge_set(ctx, defaults[p], custom[p]) for p in [*POINTS, "multiPoint"]}
    if ctx.api == "v1beta1" and ctx.minor >= 22:
        _check_conflicts(ctx, merged["score"])
    b = _build(ctx, merged, dp, default_names, ppath, name)
    pre = ctx.prefix

    def ref(e: _Entry, weight: int = 1) -> PluginRef:
        return PluginRef(e.name, weight, (*pre, *e.path), ctx.file, ctx.line(e.path))

    filter_refs = [ref(e) for e in b.lists["filter"]]
    score_refs = [ref(e, b.weights[e.name]) for e in b.lists["score"]]
    post_filter_refs = [ref(e) for e in b.lists["postFilter"]]
    pre_filter = [e.name for e in b.lists["preFilter"]]
    pre_score = [e.name for e in b.lists["preScore"]]
    derived_pf = [r.name for r in filter_refs if "preFilter" in capabilities(r.name, ctx.minor)]
    derived_ps = [r.name for r in score_refs if "preScore" in capabilities(r.name, ctx.minor)]
    plugin_config = _plugin_config(ctx, raw_config, (*ppath, "pluginConfig"))
    running = {r.name for r in (*filter_refs, *score_refs, *post_filter_refs)} | set(pre_filter) | set(pre_score)
    # Args of a plugin the profile does not run are validated upstream and then unused.
    plugin_config = {k: v for k, v in plugin_config.items() if k in running}
    given_names = set(plugin_config)
    # SetDefaults gives every enabled plugin with an args type its default args, which are
    # validated as given ones are (RequestedToCapacityRatio has no default shape).
    for point in POINTS:
        for e in b.lists[point]:
            if e.name in running and e.name not in plugin_config:
                try:
                    plugin_config[e.name] = ({}, decode_args(e.name, {}, ctx.version, (), api=ctx.api))
                except CaseError as err:
                    raise ctx.err(f"plugin {e.name!r} has no pluginConfig entry, and its default arguments are "
                                  f"invalid: {format_path(err.path) + ': ' if err.path else ''}{err.message}",
                                  e.path) from None
    return Profile(
        filter=filter_refs,
        score=score_refs,
        post_filter=post_filter_refs,
        plugin_config={k: given for k, (given, _) in plugin_config.items() if k in given_names},
        plugin_args={k: decoded for k, (_, decoded) in plugin_config.items()},
        extenders=[],
        percentage_of_nodes_to_score=pct if pct is not None else 0,  # upstream's default: adaptive
        pre_filter=None if pre_filter == derived_pf else [ref(e) for e in b.lists["preFilter"]],
        pre_score=None if pre_score == derived_ps else [ref(e) for e in b.lists["preScore"]],
        other_extension_points={p: tuple(e.name for e in b.lists[p]) for p in _OTHER_POINTS if b.lists[p]},
        placement_generate=tuple(e.name for e in b.lists["placementGenerate"]),
        placement_score=tuple((e.name, b.placement_weights[e.name]) for e in b.lists["placementScore"]),
        scheduler_name=name,
        config_file=ctx.file,
    )


def _check_conflicts(ctx: _Ctx, score: _Set) -> None:
    """v1beta1 (1.22): NodeResourcesFit cannot score next to the plugins it replaced."""
    names = [e.name for e in score.enabled]
    if "NodeResourcesFit" not in names:
        return
    clash = [n for n in names if n in ("NodeResourcesLeastAllocated", "NodeResourcesMostAllocated",
                                       "RequestedToCapacityRatio")]
    if clash:
        e = next(e for e in score.enabled if e.name == "NodeResourcesFit")
        raise ctx.err(f"plugin 'NodeResourcesFit' conflicts with {clash} in version \"{GROUP}/v1beta1\" "
                      f"(disable them to score with NodeResourcesFit)", e.path, value="NodeResourcesFit")
