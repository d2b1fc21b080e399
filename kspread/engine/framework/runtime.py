"""The framework runtime: runs each extension point's plugins uniformly
(framework/runtime/framework.go).

Filter and Score run over the candidate nodes at once (``NodeSet`` columns): the
filter plugins run in the profile's order, each over the nodes every earlier plugin
let through, so each node ends with the status of the first plugin that rejected it,
as upstream's per-node RunFilterPlugins gives. The one-node entry points
(``run_filter_plugins``, ``run_filter_plugins_with_nominated_pods`` on a NodeInfo)
run the same code over a one-node set."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from kspread.engine.framework.handle import Handle
from kspread.engine.framework.interface import (
    Filtered,
    FilterPlugin,
    Plugin,
    PostFilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreFailed,
    ScorePlugin,
)
from kspread.engine.framework.profile import PluginRef, Profile
from kspread.engine.framework.registry import resolve
from kspread.engine.framework.status import SUCCESS, Code, CycleState, SchedulingError, Status, go_quote
from kspread.engine.model import Node, Pod, replace_pod
from kspread.engine.snapshot import NodeInfo, NodeSet, PodSums, pod_sums
from kspread.errors import CaseError, did_you_mean

_M = TypeVar("_M")  # an extension point's mixin


@dataclass
class ScoredPlugin:
    plugin: ScorePlugin
    weight: int
    label: str  # the name results are reported under (as the profile spells it)


class ScoreTable:
    """Per plugin and node: the Score result, the normalized score, and the weighted
    score, kept as arrays over ``names`` (the scored nodes); ``raw``, ``normalized``
    and ``weighted`` give them as plugin -> node -> score mappings when asked, each
    made once (a report reads them per node and plugin): read them, never change them."""

    def __init__(self, nodes: NodeSet | Sequence[str] = ()) -> None:
        self._nodes = nodes
        self._names: list[str] | None = None
        self.arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._mappings: dict[int, dict[str, dict[str, int]]] = {}

    @property
    def names(self) -> list[str]:
        if self._names is None:
            n = self._nodes
            self._names = n.names if isinstance(n, NodeSet) else list(n)
        return self._names

    def add(self, label: str, raw: np.ndarray, normalized: np.ndarray, weighted: np.ndarray) -> None:
        self.arrays[label] = (raw, normalized, weighted)
        self._mappings.clear()

    def _mapping(self, k: int) -> dict[str, dict[str, int]]:
        m = self._mappings.get(k)
        if m is None:
            m = self._mappings[k] = {label: dict(zip(self.names, a[k].tolist())) for label, a in self.arrays.items()}
        return m

    @property
    def raw(self) -> dict[str, dict[str, int]]:
        return self._mapping(0)

    @property
    def normalized(self) -> dict[str, dict[str, int]]:
        return self._mapping(1)

    @property
    def weighted(self) -> dict[str, dict[str, int]]:
        return self._mapping(2)

    def total(self) -> np.ndarray:
        """The weighted scores' sum per node (int64, a new array)."""
        weighted = [a[2] for a in self.arrays.values()]
        if not weighted:
            return np.zeros(len(self._nodes), np.int64)
        out = weighted[0].astype(np.int64)  # (a copy)
        for w in weighted[1:]:
            out += w
        return out


class Framework:
    def __init__(self, profile: Profile, handle: Handle) -> None:
        self.profile = profile
        self.handle = handle
        self.version = handle.version
        handle.framework = self
        self._instances: dict[str, Plugin] = {}
        self._nominated: _Nominated | None = None  # nominated_pods_by_node's last answer
        # per priority, the nominated pods of that priority or more
        self._nominated_indexes: dict[int, _NominatedIndex] = {}
        self.filter_plugins: list[FilterPlugin] = []
        self.pre_filter_plugins: list[PreFilterPlugin] = []
        self.score_plugins: list[ScoredPlugin] = []
        self.pre_score_plugins: list[PreScorePlugin] = []
        self.post_filter_plugins: list[PostFilterPlugin] = []
        for ref in profile.filter:
            p = self._instance(ref.name, ref.path, ref)
            if not isinstance(p, FilterPlugin):
                raise CaseError(f"plugin {ref.name!r} has no Filter extension point", ref.path,
                                file=ref.file, line=ref.line)
            self.filter_plugins.append(p)
            if isinstance(p, PreFilterPlugin):
                self.pre_filter_plugins.append(p)
        for ref in profile.score:
            p = self._instance(ref.name, ref.path, ref)
            if not isinstance(p, ScorePlugin):
                raise CaseError(f"plugin {ref.name!r} has no Score extension point", ref.path,
                                file=ref.file, line=ref.line)
            weight = ref.weight
            if weight == 0:
                if self.version.legacy_priorities:
                    raise CaseError("a priority's weight must be positive", ref.path, file=ref.file, line=ref.line)
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
            p = self._instance(ref.name, ref.path, ref)
            if not isinstance(p, PostFilterPlugin):
                raise CaseError(f"plugin {ref.name!r} has no PostFilter extension point", ref.path,
                                file=ref.file, line=ref.line)
            self.post_filter_plugins.append(p)
        for name in profile.plugin_config:
            if name not in self._instances:
                raise CaseError(
                    f"pluginConfig for {name!r}, which the profile does not enable"
                    + did_you_mean(name, [n for n in self._instances if n not in profile.plugin_config]),
                    ("profile", "pluginConfig", name),
                )

    def plugins(self) -> list[Plugin]:
        """Every plugin of the profile."""
        return list(self._instances.values())

    def _instance(self, name: str, path: tuple, ref: PluginRef | None = None) -> Plugin:
        try:
            return self._new_instance(name, path)
        except CaseError as e:
            if ref is not None and e.file is None and ref.file is not None:
                e.file, e.line = ref.file, ref.line  # written in a KubeSchedulerConfiguration
            raise

    def _new_instance(self, name: str, path: tuple) -> Plugin:
        reg = resolve(name, self.version.minor, path)
        key = reg.name
        if key not in self._instances:
            given = name if name in self.profile.plugin_config else key
            args = self.profile.plugin_args.get(given)
            if args is None:
                from kspread.engine.framework.args import decode_args

                args = decode_args(given, self.profile.plugin_config.get(given), self.version,
                                   ("profile", "pluginConfig", given))
            self._instances[key] = reg.factory(args, self.handle, config_path=("profile", "pluginConfig", given))
        return self._instances[key]

    def _ordered(self, refs, mixin: type[_M], users: Sequence[object], point: str) -> list[_M]:
        """PreFilter / PreScore plugins in the configured order. A filter (score) plugin
        the configuration does not list there still runs kspread's PreFilter (PreScore)
        after the listed ones: kspread's plugins model each version's extension points
        themselves, and their PreFilter/PreScore only prepare what Filter/Score read."""
        out: list[_M] = []
        for ref in refs:
            p = self._instance(ref.name, ref.path, ref)
            if isinstance(p, mixin) and p not in out:
                out.append(p)
        for u in users:
            if isinstance(u, mixin) and u not in out:
                out.append(u)
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
            if st is SUCCESS:
                continue
            if st.is_skip():
                state.skip_filter_plugins.add(p.name)
                continue
            if not st.is_success():
                if st.code == Code.ERROR:
                    raise SchedulingError(plugin_error(self.version.minor, "PreFilter", p.name, st.message), p.name)
                return st.with_plugin(p.name)
        return SUCCESS

    def run_filter_plugins_on_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet,
                                    passed_once: bool = False) -> Filtered:
        """RunFilterPlugins over a set of nodes: per node the status of the first
        filter plugin that does not pass it (with the plugin's name), else Success.
        An Error status is returned like any other (``raise_first_error``).
        ``passed_once``: every node passed every plugin this cycle with other pods on
        it, so the plugins whose result ignores the node's pods pass it again and are
        not run (``FilterPlugin.ignores_node_pods``)."""
        n = len(nodes)
        if not n:
            return Filtered(np.zeros(0, np.intp), [SUCCESS])
        ids: np.ndarray | None = None  # made when a node fails
        table: list[Status] = [SUCCESS]
        alive: np.ndarray | None = None  # positions still passing; None: all
        sub = nodes  # the nodes at ``alive``
        skip = state.skip_filter_plugins
        for p in self.filter_plugins:
            if skip and p.name in skip:
                continue
            if passed_once and p.ignores_node_pods(state, pod):
                continue
            res = p.filter_nodes(state, pod, sub)
            if len(res.table) == 1:  # only Success: every node passes
                continue
            if alive is None:
                # the first plugin that fails a node: its ids are the set's (the table
                # holds only Success so far)
                passing = (res.ids == 0).nonzero()[0]
                if len(passing) == n:
                    continue
                ids = np.array(res.ids, np.intp)
                table.extend(st.with_plugin(p.name) for st in res.table[1:])
                if not len(passing):
                    break  # no node left
                alive = passing
            else:
                failed = res.ids.nonzero()[0]
                if not len(failed):
                    continue
                assert ids is not None
                offset = len(table) - 1
                table.extend(st.with_plugin(p.name) for st in res.table[1:])
                ids[alive[failed]] = res.ids[failed] + offset
                if len(failed) == len(sub):
                    break  # no node left
                alive = alive[(res.ids == 0).nonzero()[0]]
            sub = nodes.subset(alive)
        return Filtered(np.zeros(n, np.intp) if ids is None else ids, table)

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """RunFilterPlugins on one node; an Error status raises SchedulingError."""
        st = self.run_filter_plugins_on_nodes(state, pod, NodeSet.of(node_info)).status(0)
        raise_on_error(st, self.version.minor)
        return st

    def run_pre_filter_add_pod(self, state: CycleState, pod: Pod, added: Pod, node_info: NodeInfo) -> None:
        for p in self.pre_filter_plugins:
            if p.name in state.skip_filter_plugins:
                continue
            st = p.add_pod(state, pod, added, node_info)
            if st is not None and not st.is_success():
                raise SchedulingError(plugin_error(self.version.minor, "AddPod", p.name, st.message), p.name)

    def run_pre_filter_remove_pod(self, state: CycleState, pod: Pod, removed: Pod, node_info: NodeInfo) -> None:
        for p in self.pre_filter_plugins:
            if p.name in state.skip_filter_plugins:
                continue
            st = p.remove_pod(state, pod, removed, node_info)
            if st is not None and not st.is_success():
                raise SchedulingError(plugin_error(self.version.minor, "RemovePod", p.name, st.message), p.name)

    def nominated_pods_for(self, pod: Pod, node_name: str) -> list[Pod]:
        """The pods nominated to the node that the pod's filters must make room for:
        equal or higher priority, other than the pod itself."""
        return self.nominated_pods_by_node(pod).get(node_name, [])

    def nominated_pods_by_node(self, pod: Pod) -> Mapping[str, list[Pod]]:
        """``nominated_pods_for`` every node that has some (node -> pods), kept while the
        nominator does not change. Read only."""
        return self._nominated_for(pod).by_node

    def has_nominated(self, pod: Pod, positions: np.ndarray) -> np.ndarray:
        """Per snapshot position, whether the node has pods ``nominated_pods_for``."""
        if not self.handle.nominator.has_any():
            return np.zeros(len(positions), bool)
        return self._nominated_for(pod).has_at(positions)

    def nominated_sums(self, pod: Pod, positions: np.ndarray) -> PodSums:
        """What the pods ``nominated_pods_for`` add to the nodes at these snapshot
        positions (nodes that have some)."""
        return self._nominated_for(pod).sums_at(positions)

    def _nominated_for(self, pod: Pod) -> _Nominated:
        nominator = self.handle.nominator
        key = (pod.key, pod.priority, nominator.version)
        cached = self._nominated
        if cached is not None and cached.key == key:
            return cached
        index = self._nominated_indexes.get(pod.priority)
        changes = None if index is None else nominator.changes_since(index.version)
        if changes is None:
            if len(self._nominated_indexes) >= 8:
                del self._nominated_indexes[next(iter(self._nominated_indexes))]
            index = self._nominated_indexes[pod.priority] = _NominatedIndex(pod.priority, self.handle.snapshot)
            for name, pods in nominator.by_node():
                for p in pods:
                    index.add(name, p)
        else:
            assert index is not None
            for name, removed, added in changes:
                index.change(name, removed, added)
        index.version = nominator.version
        self._nominated = _Nominated(key, index, pod.key)
        return self._nominated

    def run_filter_plugins_with_nominated_pods_on_nodes(self, state: CycleState, pod: Pod,
                                                        nodes: NodeSet) -> Filtered:
        """RunFilterPluginsWithNominatedPods over a set of nodes: nodes with pods of
        equal or higher priority nominated to them are filtered one by one (with those
        pods added, then without); the others all at once. A SchedulingError of a
        one-by-one node is kept as an Error status."""
        special: list[int] = []
        nominated: list[list[Pod]] = []
        found: _Nominated | None = None
        at: np.ndarray | None = None  # ``special`` as an array, for snapshot nodes
        if self.handle.nominator.has_any():
            found = self._nominated_for(pod)
            if found.by_node:
                if nodes.snapshot is not None and nodes._infos is None:
                    at = (found.has_at(nodes.positions)).nonzero()[0]  # type: ignore[arg-type]
                else:
                    for i, name in nodes.find(found.by_node.keys()):
                        special.append(i)
                        nominated.append(found.by_node[name])
        if not special and (at is None or not len(at)):
            return self.run_filter_plugins_on_nodes(state, pod, nodes)
        # ``special`` as a list (from ``at``) only where nodes go one by one: the column
        # path below reads ``at`` (a sequence's waiting preemptors make it long)
        if self.pre_filter_state_is_shared(state):
            special_at = at if at is not None else np.array(special, np.intp)
            # the nominated pods change no PreFilter state: filter the nodes with their
            # nominated pods added all at once; a node must pass that and the plain run.
            # Upstream's first pass is the one with the nominated pods, and a node that
            # fails it is not filtered again: the plain run covers only the other nodes,
            # so a plugin's notes in the cycle state (DynamicResources' unavailable claims,
            # which PostFilter deallocates) come from the nodes upstream filters.
            if nodes.snapshot is not None and self.filters_read_only_columns(state, pod):
                # the nominated pods as changes to the columns
                assert found is not None
                sub = nodes.subset(special_at)
                assert sub.positions is not None  # a subset of snapshot nodes keeps their positions
                with_pods = sub.with_sums(self.nominated_sums(pod, sub.positions))
            else:
                if at is not None:
                    assert found is not None
                    special = at.tolist()
                    nominated = [found.by_node[name] for name in nodes.subset(at).names]
                infos = nodes.infos
                added = []
                for i, pods in zip(special, nominated):
                    info = infos[i].clone()
                    for p in pods:
                        info.add_pod(_on_node(p, info.name))
                    added.append(info)
                with_pods = NodeSet.of(*added)
            with_nominated = self.run_filter_plugins_on_nodes(state, pod, with_pods)
            hit = with_nominated.ids.nonzero()[0]
            failed = special_at[hit]
            if len(failed):
                keep = np.ones(len(nodes), bool)
                keep[failed] = False
                rest = keep.nonzero()[0]
                plain = self.run_filter_plugins_on_nodes(state, pod, nodes.subset(rest))
                combined_ids = np.zeros(len(nodes), np.intp)
                combined_ids[rest] = plain.ids
            else:
                plain = self.run_filter_plugins_on_nodes(state, pod, nodes)
                combined_ids = plain.ids.copy()
            combined = list(plain.table)
            offset = len(combined) - 1
            combined.extend(with_nominated.table[1:])
            combined_ids[failed] = with_nominated.ids[hit] + offset
            return Filtered(combined_ids, combined)
        if at is not None:
            special = at.tolist()
        special_set = set(special)
        plain_pos = np.array([i for i in range(len(nodes)) if i not in special_set], np.intp)
        ids = np.zeros(len(nodes), np.intp)
        table: list[Status] = [SUCCESS]
        if len(plain_pos):
            res = self.run_filter_plugins_on_nodes(state, pod, nodes.subset(plain_pos))
            table.extend(res.table[1:])
            ids[plain_pos] = res.ids
        infos = nodes.infos
        index: dict[Status, int] = {}
        raised: dict[int, SchedulingError] = {}
        for i in special:
            try:
                st = self._filter_with_nominated(state, pod, infos[i])
            except SchedulingError as e:
                raised[len(table)] = e
                ids[i] = len(table)
                table.append(Status(Code.ERROR, (str(e),), e.plugin))
                continue
            if not st.is_success():
                slot = index.get(st)
                if slot is None:
                    slot = index[st] = len(table)
                    table.append(st)
                ids[i] = slot
        return Filtered(ids, table, raised)

    def filters_read_only_columns(self, state: CycleState, pod: Pod) -> bool:
        """Every filter plugin that runs this cycle reads only columns
        (``FilterPlugin.reads_only_columns``)."""
        return all(p.name in state.skip_filter_plugins or p.reads_only_columns(state, pod)
                   for p in self.filter_plugins)

    def pre_filter_state_is_shared(self, state: CycleState) -> bool:
        """No PreFilter plugin that runs this cycle keeps state that AddPod / RemovePod
        change: the cycle state then holds for any node with pods added or removed, and
        such nodes can be filtered together."""
        return not any(p.has_pre_filter_extensions and p.name not in state.skip_filter_plugins
                       for p in self.pre_filter_plugins)

    def _filter_with_nominated(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
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

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status:
        """Filters with the pods nominated to this node that have equal or higher
        priority added first, then (if any were added) without them: both must pass.
        An Error status raises SchedulingError."""
        return self._filter_with_nominated(state, pod, node_info)

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
            for q in nominated:
                bound = _on_node(q, node_info.name)
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
                raise SchedulingError(plugin_error(self.version.minor, "PostFilter", p.name, st.message), p.name)
            last = st
        return None, last

    # ---- scoring ----------------------------------------------------------------------

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> None:
        for p in self.pre_score_plugins:
            st = p.pre_score(state, pod, nodes)
            if st is SUCCESS:
                continue
            if st.is_skip():
                state.skip_score_plugins.add(p.name)
                continue
            if not st.is_success():
                raise SchedulingError(plugin_error(self.version.minor, "PreScore", p.name, st.message), p.name)

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: NodeSet) -> ScoreTable:
        """RunScorePlugins: Score over the nodes, NormalizeScore, the range check, weights."""
        table = ScoreTable(nodes)
        max_score = self.version.max_node_score
        for sp in self.score_plugins:
            p = sp.plugin
            if p.name in state.skip_score_plugins:
                continue
            try:
                raw = np.asarray(p.score_nodes(state, pod, nodes), np.int64)
            except ScoreFailed as e:
                msg = plugin_error(self.version.minor, "Score", p.name, e.status.message)
                raise SchedulingError(msg, p.name) from None
            scores = raw
            if p.has_normalize:
                try:
                    names = nodes.lazy_names()
                    scores = np.asarray(p.normalize_scores(state, pod, names, raw.copy()), np.int64)
                except ScoreFailed as e:
                    raise SchedulingError(plugin_error(self.version.minor, "NormalizeScore", p.name, e.status.message),
                                          p.name) from None
            # (as uint64 a negative score is above any max_score: one reduction finds both)
            if self.version.checks_score_range and len(scores) and scores.view(np.uint64).max() > max_score:
                bad = np.flatnonzero((scores > max_score) | (scores < 0))
                if len(bad):
                    shown = (f"plugin {go_quote(p.name)} returns an invalid score {int(scores[bad[0]])}, it "
                             f"should in the range of [0, {max_score}] after normalizing")
                    raise SchedulingError(plugin_error(self.version.minor, "ScoreRange", p.name, shown), p.name)
            table.add(sp.label, raw, scores, scores if sp.weight == 1 else scores * sp.weight)
        return table


class _NominatedIndex:
    """The nominated pods of priority ``priority`` or more, per node (in the nominator's
    order), and what they add to each node as int64 arrays over the snapshot's nodes;
    brought up to date with the nominator's changes (``Nominator.changes_since``)."""

    def __init__(self, priority: int, snapshot) -> None:
        self.priority = priority
        self.version = -1
        self.snapshot = snapshot
        n = len(snapshot.node_list)
        self.by_node: dict[str, list[Pod]] = {}
        self.where: dict[str, set[str]] = {}  # pod key -> its nodes (pods of this index)
        self.count = np.zeros(n, np.int64)
        self.cpu = np.zeros(n, np.int64)
        self.memory = np.zeros(n, np.int64)
        self.requests: dict[str, np.ndarray] = {}

    def _sum(self, node: str, pod: Pod, sign: int) -> None:
        i = self.snapshot.position.get(node)
        if i is None:
            return
        e = self.snapshot.requests.get(pod)
        self.count[i] += sign
        self.cpu[i] += sign * e.cpu
        self.memory[i] += sign * e.memory
        for r, v in e.requests.items():
            col = self.requests.get(r)
            if col is None:
                col = self.requests[r] = np.zeros(len(self.count), np.int64)
            col[i] += sign * v

    def add(self, node: str, pod: Pod) -> None:
        if pod.priority >= self.priority:
            self.by_node.setdefault(node, []).append(pod)
            self.where.setdefault(pod.key, set()).add(node)
            self._sum(node, pod, 1)

    def change(self, node: str, removed: Pod | None, added: Pod | None) -> None:
        pods = self.by_node.get(node)
        at = None
        if removed is not None and pods is not None:
            at = next((j for j, p in enumerate(pods) if p is removed), None)
            if at is not None:
                del pods[at]
                self._sum(node, removed, -1)
                nodes = self.where.get(removed.key)
                if nodes is not None:
                    nodes.discard(node)
                    if not nodes:
                        del self.where[removed.key]
        if added is not None and added.priority >= self.priority:
            pods = self.by_node.setdefault(node, [])
            # a pod replaced in place keeps its place, as in the nominator
            pods.insert(len(pods) if at is None else at, added)
            self.where.setdefault(added.key, set()).add(node)
            self._sum(node, added, 1)
        if pods is not None and not pods:
            del self.by_node[node]


class _Changed(Mapping):
    """A read-only view of ``base`` with the entries of ``changed`` replaced (None:
    left out)."""

    __slots__ = ("_base", "_changed", "_len")

    def __init__(self, base: dict[str, list[Pod]], changed: dict[str, list[Pod] | None]) -> None:
        self._base, self._changed = base, changed
        self._len = len(base) + sum((v is not None) - (k in base) for k, v in changed.items())

    def __getitem__(self, key: str) -> list[Pod]:
        if key in self._changed:
            v = self._changed[key]
            if v is None:
                raise KeyError(key)
            return v
        return self._base[key]

    def __iter__(self) -> Iterator[str]:
        changed, base = self._changed, self._base
        yield from (k for k in base if k not in changed or changed[k] is not None)
        yield from (k for k, v in changed.items() if v is not None and k not in base)

    def __len__(self) -> int:
        return self._len


class _Nominated:
    """The pods nominated to each node that a pod's filters make room for
    (``Framework.nominated_pods_by_node``: the index's pods but the pod itself), and
    what they add to each node."""

    __slots__ = ("key", "by_node", "_index", "_own")

    def __init__(self, key: tuple, index: _NominatedIndex, own: str) -> None:
        self.key, self._index = key, index
        nodes = index.where.get(own)
        # (snapshot position, the pod's own entries there) where the pod itself is
        self._own: list[tuple[int, list[Pod]]] = []
        self.by_node: Mapping[str, list[Pod]] = index.by_node
        if not nodes:
            return
        # the index's map with the pod's own nodes changed, not a copy of it: a
        # nominated pod's retry would otherwise copy every outstanding nomination
        changed: dict[str, list[Pod] | None] = {}
        position = index.snapshot.position
        for node in sorted(nodes):
            pods = [p for p in index.by_node[node] if p.key != own]
            changed[node] = pods or None
            if node in position:
                self._own.append((position[node], [p for p in index.by_node[node] if p.key == own]))
        self.by_node = _Changed(index.by_node, changed)

    def has_at(self, positions: np.ndarray) -> np.ndarray:
        """Per snapshot position, whether pods are nominated to the node."""
        count = self._index.count[positions]
        for i, pods in self._own:
            count = count - len(pods) * (positions == i)
        return count > 0

    def sums_at(self, positions: np.ndarray) -> PodSums:
        """What the nominated pods add to the nodes at these snapshot positions."""
        index = self._index
        sums = PodSums(index.count[positions], index.cpu[positions], index.memory[positions],
                       {r: col[positions] for r, col in index.requests.items()})
        for i, pods in self._own:
            hit = (positions == i).astype(np.int64)
            if hit.any():
                own = pod_sums([pods], index.snapshot.requests)
                sums.count = sums.count - hit * own.count[0]
                sums.cpu = sums.cpu - hit * own.cpu[0]
                sums.memory = sums.memory - hit * own.memory[0]
                for r, col in own.requests.items():
                    sums.requests[r] = sums.requests[r] - hit * col[0]
        return sums


# How frameworkImpl (framework/runtime/framework.go) wraps a plugin's Error status, the
# same from 1.21 to 1.35 (read in the vendored v1.21.6, v1.22.3, v1.23.9 ... v1.35.4
# trees): {name} is the plugin's name as Go's %q, {msg} the status's message
# (AsError: the reasons joined by ", "). RunPostFilterPlugins returns the message as is;
# a range error is worded by the caller and wrapped here.
_PLUGIN_ERRORS = {
    "PreFilter": "running PreFilter plugin {name}: {msg}",
    "AddPod": "running AddPod on PreFilter plugin {name}: {msg}",
    "RemovePod": "running RemovePod on PreFilter plugin {name}: {msg}",
    "Filter": "running {name} filter plugin: {msg}",
    "PostFilter": "{msg}",
    "PreScore": "running PreScore plugin {name}: {msg}",
    "Score": "running Score plugins: plugin {name} failed with: {msg}",
    "NormalizeScore": "running Normalize on Score plugins: plugin {name} failed with: {msg}",
    "ScoreRange": "applying score defaultWeights on Score plugins: {msg}",
}
FIRST_WORDED_MINOR = 21  # before 1.21 upstream words these otherwise (not modelled)


def plugin_error(minor: int, point: str, plugin: str, message: str) -> str:
    """The text kube-scheduler 1.``minor`` gives a plugin's Error at extension point
    ``point`` (a key of ``_PLUGIN_ERRORS``): what ends the cycle and becomes the pod's
    condition message. Before 1.21 (the "error while running ... for pod" forms, and the
    predicates before 1.18) the wording is not modelled, and the text says so."""
    text = _PLUGIN_ERRORS[point].format(name=go_quote(plugin), msg=message)
    if minor < FIRST_WORDED_MINOR:
        text += (f" (kspread words this as kube-scheduler 1.{FIRST_WORDED_MINOR} and later do; "
                 f"1.{minor}'s wording of a plugin error is not modelled)")
    return text


def raise_on_error(st: Status, minor: int) -> None:
    """Upstream aborts the cycle on a filter plugin's Error status (worded as version
    ``minor`` words it)."""
    if st.code == Code.ERROR:
        raise SchedulingError(plugin_error(minor, "Filter", st.plugin, st.message), st.plugin)


def first_error(res: Filtered, order: Sequence[int] | np.ndarray | None = None) -> int | None:
    """The first node (a position in the set, looked for in ``order``, default the set's
    order) whose status is an Error, or None."""
    errs = [k for k, st in enumerate(res.table) if st.code == Code.ERROR]
    if not errs:
        return None
    hit = np.isin(res.ids, errs)
    if order is not None:
        order = np.asarray(order, np.intp)
        found = np.flatnonzero(hit[order])
        return int(order[found[0]]) if len(found) else None
    found = np.flatnonzero(hit)
    return int(found[0]) if len(found) else None


def raise_error_of(res: Filtered, i: int, minor: int) -> None:
    """Raise the SchedulingError of node ``i``'s Error status (version ``minor``'s words)."""
    k = int(res.ids[i])
    if k in res.raised:
        raise res.raised[k]
    raise_on_error(res.table[k], minor)


def _on_node(pod: Pod, node_name: str) -> Pod:
    return pod if pod.node_name == node_name else replace_pod(pod, node_name=node_name)
