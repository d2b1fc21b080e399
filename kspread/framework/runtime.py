"""The framework runtime: runs each extension point's plugins uniformly
(framework/runtime/framework.go)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from kspread.errors import CaseError
from kspread.framework.handle import Handle
from kspread.framework.interface import (
    FilterPlugin,
    NodeScore,
    Plugin,
    PostFilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from kspread.framework.profile import Profile
from kspread.framework.registry import resolve
from kspread.framework.status import SUCCESS, Code, CycleState, SchedulingError, Status
from kspread.model import Node, Pod
from kspread.snapshot import NodeInfo


@dataclass
class ScoredPlugin:
    plugin: Plugin
    weight: int
    label: str  # the name results are reported under (as the profile spells it)


@dataclass
class ScoreTable:
    """Per plugin and node: the Score result, the normalized score, and the totals."""

    raw: dict[str, dict[str, int]] = field(default_factory=dict)
    normalized: dict[str, dict[str, int]] = field(default_factory=dict)
    weighted: dict[str, dict[str, int]] = field(default_factory=dict)


class Framework:
    def __init__(self, profile: Profile, handle: Handle) -> None:
        self.profile = profile
        self.handle = handle
        self.version = handle.version
        handle.framework = self
        self._instances: dict[str, Plugin] = {}
        self.filter_plugins: list[Plugin] = []
        self.pre_filter_plugins: list[Plugin] = []
        self.score_plugins: list[ScoredPlugin] = []
        self.pre_score_plugins: list[Plugin] = []
        self.post_filter_plugins: list[Plugin] = []
        for ref in profile.filter:
            p = self._instance(ref.name, ref.path)
            if not isinstance(p, FilterPlugin):
                raise CaseError(f"plugin {ref.name!r} has no Filter extension point", ref.path)
            self.filter_plugins.append(p)
            if isinstance(p, PreFilterPlugin):
                self.pre_filter_plugins.append(p)
        for ref in profile.score:
            p = self._instance(ref.name, ref.path)
            if not isinstance(p, ScorePlugin):
                raise CaseError(f"plugin {ref.name!r} has no Score extension point", ref.path)
            weight = ref.weight
            if weight == 0:
                if self.version.legacy_priorities:
                    raise CaseError("a priority's weight must be positive", ref.path)
                weight = 1  # the framework defaults an unset weight to 1
            self.score_plugins.append(ScoredPlugin(p, weight, ref.name))
            if isinstance(p, PreScorePlugin) and p not in self.pre_score_plugins:
                self.pre_score_plugins.append(p)
        if profile.pre_filter is not None:
            self.pre_filter_plugins = self._ordered(profile.pre_filter, PreFilterPlugin, self.filter_plugins, "PreFilter")
        if profile.pre_score is not None:
            scored = [sp.plugin for sp in self.score_plugins]
            self.pre_score_plugins = self._ordered(profile.pre_score, PreScorePlugin, scored, "PreScore")
        for ref in profile.post_filter:
            p = self._instance(ref.name, ref.path)
            if not isinstance(p, PostFilterPlugin):
                raise CaseError(f"plugin {ref.name!r} has no PostFilter extension point", ref.path)
            self.post_filter_plugins.append(p)
        for name in profile.plugin_config:
            if name not in self._instances:
                raise CaseError(
                    f"pluginConfig for {name!r}, which the profile does not enable", ("profile", "pluginConfig", name)
                )

    def _instance(self, name: str, path: tuple) -> Plugin:
        reg = resolve(name, self.version.minor, path)
        key = reg.name
        if key not in self._instances:
            args = self.profile.plugin_config.get(name) or self.profile.plugin_config.get(key) or {}
            self._instances[key] = reg.factory(args, self.handle, config_path=("profile", "pluginConfig", name))
        return self._instances[key]

    def _ordered(self, refs, mixin, users: list[Plugin], point: str) -> list[Plugin]:
        """PreFilter / PreScore plugins in the configured order. A filter (score) plugin
        the configuration does not list there still runs kspread's PreFilter (PreScore)
        after the listed ones: kspread's plugins model each version's extension points
        themselves, and their PreFilter/PreScore only prepare what Filter/Score read."""
        out: list[Plugin] = []
        for ref in refs:
            p = self._instance(ref.name, ref.path)
            if isinstance(p, mixin) and p not in out:
                out.append(p)
        for p in users:
            if isinstance(p, mixin) and p not in out:
                out.append(p)
        return out

    def plugin(self, name: str) -> Plugin | None:
        return self._instances.get(name)

    @property
    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    # ---- filtering ------------------------------------------------------------------

    def run_pre_filter_plugins(self, state: CycleState, pod: Pod) -> Status:
        for p in self.pre_filter_plugins:
            st = p.pre_filter(state, pod)
            if st.is_skip():
                state.skip_filter_plugins.add(p.name)
                continue
            if not st.is_success():
                if st.code == Code.ERROR:
                    raise SchedulingError(f"running PreFilter plugin {p.name!r}: {st.message}", p.name)
                return st.with_plugin(p.name)
        return SUCCESS

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        for p in self.filter_plugins:
            if p.name in state.skip_filter_plugins:
                continue
            st = p.filter(state, pod, node_info)
            if not st.is_success():
                if st.code == Code.ERROR:
                    raise SchedulingError(f"running Filter plugin {p.name!r}: {st.message}", p.name)
                return st.with_plugin(p.name)
        return SUCCESS

    def run_pre_filter_add_pod(self, state: CycleState, pod: Pod, added: Pod, node_info: NodeInfo) -> None:
        for p in self.pre_filter_plugins:
            if p.name in state.skip_filter_plugins:
                continue
            st = p.add_pod(state, pod, added, node_info)
            if st is not None and not st.is_success():
                raise SchedulingError(f"running AddPod on PreFilter plugin {p.name!r}: {st.message}", p.name)

    def run_pre_filter_remove_pod(self, state: CycleState, pod: Pod, removed: Pod, node_info: NodeInfo) -> None:
        for p in self.pre_filter_plugins:
            if p.name in state.skip_filter_plugins:
                continue
            st = p.remove_pod(state, pod, removed, node_info)
            if st is not None and not st.is_success():
                raise SchedulingError(f"running RemovePod on PreFilter plugin {p.name!r}: {st.message}", p.name)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filters with the pods nominated to this node that have equal or higher
        priority added first, then (if any were added) without them: both must pass."""
        for pass_ in (0, 1):
            s, info, added = state, node_info, False
            if pass_ == 0:
                nominated = self.nominated_pods_for(pod, node_info.name)
                if nominated:
                    s = state.clone()
                    info = node_info.clone()
                    for p in nominated:
                        bound = _on_node(p, node_info.name)
                        info.add_pod(bound)
                        self.run_pre_filter_add_pod(s, pod, bound, info)
                    added = True
            st = self.run_filter_plugins(s, pod, info)
            if not st.is_success():
                return st
            if pass_ == 0 and not added:
                break
        return SUCCESS

    def nominated_pods_for(self, pod: Pod, node_name: str) -> list[Pod]:
        """The pods nominated to the node that the pod's filters must make room for:
        equal or higher priority, other than the pod itself."""
        return [p for p in self.handle.nominator.on_node(node_name) if p.priority >= pod.priority and p.key != pod.key]

    def filter_plugin_statuses(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> list[tuple[str, Status]]:
        """For explain: every filter plugin's status on the node, where a cycle stops at
        the first failure. As in ``run_filter_plugins_with_nominated_pods``, a plugin is
        checked with the nominated pods added and, when that passes, without them; a
        plugin PreFilter skipped reports Skip, an Error is reported, not raised. Valid
        while the cluster, the nominator and ``state`` are as the cycle saw them."""
        views = [(state, node_info)]
        nominated = self.nominated_pods_for(pod, node_info.name)
        if nominated:
            s, info = state.clone(), node_info.clone()
            for p in nominated:
                bound = _on_node(p, node_info.name)
                info.add_pod(bound)
                self.run_pre_filter_add_pod(s, pod, bound, info)
            views.insert(0, (s, info))
        out: list[tuple[str, Status]] = []
        for p in self.filter_plugins:
            if p.name in state.skip_filter_plugins:
                out.append((p.name, Status(Code.SKIP, plugin=p.name)))
                continue
            st = SUCCESS
            for s, info in views:
                try:
                    st = p.filter(s, pod, info)
                except (SchedulingError, KeyError) as e:  # state a failed PreFilter never wrote
                    st = Status(Code.ERROR, (str(e),))
                if not st.is_success():
                    break
            out.append((p.name, st.with_plugin(p.name)))
        return out

    def run_post_filter_plugins(self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]) -> tuple[Any, Status]:
        last = Status(Code.UNSCHEDULABLE)
        for p in self.post_filter_plugins:
            result, st = p.post_filter(state, pod, statuses)
            if st.is_success():
                return result, st
            if st.code == Code.ERROR:
                raise SchedulingError(f"running PostFilter plugin {p.name!r}: {st.message}", p.name)
            last = st
        return None, last

    # ---- scoring ----------------------------------------------------------------------

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> None:
        for p in self.pre_score_plugins:
            st = p.pre_score(state, pod, nodes)
            if st.is_skip():
                state.skip_score_plugins.add(p.name)
                continue
            if not st.is_success():
                raise SchedulingError(f"running PreScore plugin {p.name!r}: {st.message}", p.name)

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> ScoreTable:
        table = ScoreTable()
        max_score = self.version.max_node_score
        for sp in self.score_plugins:
            p = sp.plugin
            if p.name in state.skip_score_plugins:
                continue
            scores: list[NodeScore] = []
            for n in nodes:
                s, st = p.score(state, pod, n.name)
                if not st.is_success():
                    raise SchedulingError(f"running Score plugin {p.name!r}: {st.message}", p.name)
                scores.append(NodeScore(n.name, s))
            table.raw[sp.label] = {ns.name: ns.score for ns in scores}
            if p.has_normalize:
                st = p.normalize_score(state, pod, scores)
                if not st.is_success():
                    raise SchedulingError(f"running NormalizeScore plugin {p.name!r}: {st.message}", p.name)
            if self.version.checks_score_range:
                for ns in scores:
                    if ns.score > max_score or ns.score < 0:
                        raise SchedulingError(
                            f"plugin {p.name!r} returns an invalid score {ns.score}, it should in the range of "
                            f"[0, {max_score}] after normalizing",
                            p.name,
                        )
            table.normalized[sp.label] = {ns.name: ns.score for ns in scores}
            table.weighted[sp.label] = {ns.name: ns.score * sp.weight for ns in scores}
        return table


def _on_node(pod: Pod, node_name: str) -> Pod:
    from dataclasses import replace

    return pod if pod.node_name == node_name else replace(pod, node_name=node_name)
