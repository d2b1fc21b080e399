"""Extension points of the scheduling framework, as upstream's framework/interface.go.

A plugin is a class deriving from ``Plugin`` and from one mixin per extension
point it implements. The runtime (``kspread.engine.framework.runtime``) discovers the
extension points with ``isinstance``; plugins never call each other.

Filter and Score run over the candidate nodes as a whole: ``filter_nodes`` gets a
``NodeSet`` (columns over the nodes) and returns a ``Filtered`` (per node an index
into a small table of statuses, 0 = Success); ``score_nodes`` returns an int64 array;
``normalize_scores`` rewrites one. A plugin implements either the whole-set method or
the one-node method (``filter`` / ``score`` / ``normalize_score``), never both: each
extension point's default derives the one from the other, so every plugin has exactly
one implementation, and a one-node call (explain, the preemption dry run, tests) runs
the same code as the whole-set one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import TYPE_CHECKING, Any

import numpy as np

from kspread.engine.framework.status import SUCCESS, CycleState, Status

if TYPE_CHECKING:  # pragma: no cover
    from kspread.engine.framework.handle import Handle
    from kspread.engine.model import Node, Pod
    from kspread.engine.snapshot import NodeInfo, NodeSet


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


class Filtered:
    """A Filter over a set of nodes: ``ids[i]`` indexes ``table`` (``table[0]`` is Success)."""

    __slots__ = ("ids", "table", "raised")

    def __init__(self, ids: np.ndarray, table: Sequence[Status], raised: dict | None = None) -> None:
        self.ids = ids
        self.table = table
        # table index -> the SchedulingError a node's one-by-one filtering raised
        self.raised = raised or {}

    @staticmethod
    def passing(n: int) -> Filtered:
        """Every one of ``n`` nodes passes: one shared instance per ``n`` (its ids read only)."""
        hit = _PASSING.get(n)
        if hit is None:
            if len(_PASSING) >= 64:
                _PASSING.clear()
            ids = np.zeros(n, np.intp)
            ids.flags.writeable = False
            hit = _PASSING[n] = Filtered(ids, (SUCCESS,))
        return hit

    @staticmethod
    def where(failed: np.ndarray, status: Status) -> Filtered:
        """``status`` where ``failed`` (a bool array), Success elsewhere."""
        return Filtered(failed.astype(np.intp), (SUCCESS, status))

    def status(self, i: int) -> Status:
        return self.table[int(self.ids[i])]


_PASSING: dict[int, Filtered] = {}  # Filtered.passing's instances


class StatusView(Mapping):
    """Every node's filter status, compactly: ``ids[j]`` indexes ``table`` for the j-th
    node of ``names``; ``overrides`` replace some (extenders). A mapping node -> status
    made only when asked. ``positions``, when given: the snapshot positions of ``names``."""

    __slots__ = ("names", "ids", "table", "overrides", "_dict", "positions")

    def __init__(self, names: list[str], ids: np.ndarray, table: Sequence[Status],
                 overrides: dict[str, Status] | None = None, positions: np.ndarray | None = None) -> None:
        self.names = names
        self.ids = ids
        self.table = table
        self.overrides: dict[str, Status] = {} if overrides is None else overrides
        self._dict: dict[str, Status] | None = None
        self.positions = positions

    def as_dict(self) -> dict[str, Status]:
        if self._dict is None:
            table = self.table
            out = {n: table[k] for n, k in zip(self.names, self.ids.tolist())}
            out.update(self.overrides)
            self._dict = out
        return self._dict

    def __getitem__(self, name: str) -> Status:
        if self._dict is not None:
            return self._dict[name]
        st = self.overrides.get(name)
        if st is not None:
            return st
        try:
            j = self.names.index(name)
        except ValueError:
            raise KeyError(name) from None
        return self.table[int(self.ids[j])]

    def __iter__(self):
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def names_without_code(self, code) -> list[str]:
        """The nodes (in order) whose status does not have ``code``."""
        keep = self._without_code(code)
        return list(self.names) if keep is None else list(compress(self.names, keep.tolist()))

    def positions_without_code(self, code) -> np.ndarray | None:
        """``positions`` of ``names_without_code`` (None without positions)."""
        if self.positions is None:
            return None
        keep = self._without_code(code)
        return self.positions if keep is None else self.positions[keep]

    def _without_code(self, code) -> np.ndarray | None:
        """Per node whether its status does not have ``code`` (None: every node)."""
        codes = [st.code != code for st in self.table]
        if all(codes) and not self.overrides:
            return None
        keep = np.array(codes, bool)[self.ids]
        for name, st in self.overrides.items():
            keep[self.names.index(name)] = st.code != code
        return keep


def statuses_to_filtered(statuses: Sequence[Status]) -> Filtered:
    """One status per node -> a Filtered (statuses interned by value)."""
    index: dict[Status, int] = {SUCCESS: 0}
    table: list[Status] = [SUCCESS]
    ids = np.empty(len(statuses), np.intp)
    for i, st in enumerate(statuses):
        k = index.get(st)
        if k is None:
            k = index[st] = len(table)
            table.append(st)
        ids[i] = k
    return Filtered(ids, table)


@dataclass(frozen=True, slots=True)
class PodEvent:
    """A cluster event of a ``schedule`` sequence, as the scheduling queue receives it:
    ``Add`` (AssignedPodAdd: ``pod`` was bound) or ``Delete`` (AssignedPodDelete: ``pod``
    was deleted, or, with ``max_priority`` set, its nomination changed and the queue
    offers the event only to pods of that priority or less: getLEPriorityPreCheck)."""

    action: str
    pod: Pod
    max_priority: int | None = None
    # a ResourceClaimUpdate event (DynamicResources): the claim (old, new); ``pod`` caused it
    claim: Any = None
    # the storage object of a storage event (``PVAdd``, ``PVUpdate``, ``PVCUpdate``: a
    # binding's claims bound or provisioned; ``pod`` is the pod whose binding did it)
    obj: Any = None


def tolerations_signer(pod: Pod) -> tuple:
    """``TolerationsSigner``: the tolerations, sorted by key and value."""
    return tuple(sorted(pod.tolerations, key=lambda t: (t.key or "", t.value or "")))


class Plugin:
    """Base of every plugin. ``name`` is the name the version's configuration uses.

    ``pod_events`` and ``pod_event_hint`` are the plugin's EnqueueExtensions as far as a
    sequence can use them (a sequence's only events are assigned pods added and deleted):
    the pod actions the plugin's EventsToRegister lists, and its QueueingHintFn for them
    (True: Queue, False: QueueSkip), consulted only while SchedulerQueueingHints is on;
    with it off every registered event answers Queue (defaultQueueingHintFn)."""

    name: str = ""
    pod_events: frozenset[str] = frozenset()
    # SignPlugin (OpportunisticBatching, 1.35+): ``sign_pod`` gives the pod's signature
    # fragments (signer, value), or None when the plugin cannot sign this pod. A profile
    # with a PreFilter, Filter, PreScore or Score plugin that does not sign pods
    # (``signs_pods`` false), or with extenders, signs no pod (computeBatchablePlugins).
    signs_pods: bool = False

    def pod_event_hint(self, pod: Pod, event: PodEvent) -> bool:
        return True

    def node_events(self, hints: bool) -> frozenset[str]:
        """The Node action types the plugin's EventsToRegister lists (``Add``, ``Delete``,
        ``UpdateNodeLabel``, ``UpdateNodeTaint``, ``UpdateNodeAllocatable``), with
        SchedulerQueueingHints on (``hints``) or off: v1.35's lists (a sequence's steps
        make node events)."""
        return frozenset()

    def node_event_hint(self, pod: Pod, old: Node | None, new: Node | None) -> bool:
        """The QueueingHintFn of the plugin's Node event (True: Queue); ``old`` None for
        an added node, ``new`` None for a deleted one. None registered: Queue."""
        return True

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, Any], ...] | None:
        return ()

    def signs_no_pod(self) -> bool:
        """True when ``sign_pod`` answers None whatever the pod (a shortcut: the profile
        then batches nothing)."""
        return False

    def __init__(self, args: Mapping[str, Any], handle: Handle, config_path: tuple = ()) -> None:
        self.args = args
        self.handle = handle
        self.version = handle.version
        self.config_path = config_path


class PreFilterPlugin:
    name: str  # the Plugin's, which every plugin also is

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        raise NotImplementedError

    # PreFilterExtensions: keep PreFilter state right when the scheduler adds or
    # removes pods (nominated pods, preemption dry runs). None: not implemented.
    def add_pod(self, state: CycleState, pod: Pod, added: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, node_info: NodeInfo) -> Status | None:
        return None

    has_pre_filter_extensions = False


class FilterPlugin:
    name: str  # the Plugin's, which every plugin also is

    def reads_only_columns(self, state: CycleState, pod: Pod) -> bool:
        """True when this cycle's Filter reads nothing of a node but the NodeSet's
        columns and static node data (labels, taints, name, allocatable): it may then
        run over nodes whose pods exist only as changes to the columns (the
        preemption dry run)."""
        return False

    def ignores_node_pods(self, state: CycleState, pod: Pod) -> bool:
        """True when this cycle's Filter result on a node does not depend on the pods on
        it (only static node data, or always Success): a node that passed it still
        passes with pods added or removed (the preemption dry run's reprieve steps)."""
        return False

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Filtered:
        """Filter over the nodes; by default the one-node ``filter`` per node."""
        if type(self).filter is FilterPlugin.filter:
            raise NotImplementedError(f"{type(self).__name__} implements neither filter_nodes nor filter")
        return statuses_to_filtered([self.filter(state, pod, info) for info in nodes.infos])

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter on one node; by default ``filter_nodes`` over that node alone."""
        from kspread.engine.snapshot import NodeSet

        return self.filter_nodes(state, pod, NodeSet.of(node_info)).status(0)


class PostFilterPlugin:
    name: str  # the Plugin's, which every plugin also is

    def post_filter(self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]) -> tuple[Any, Status]:
        raise NotImplementedError


class PreScorePlugin:
    name: str  # the Plugin's, which every plugin also is

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[Node]) -> Status:
        raise NotImplementedError


class ScorePlugin:
    name: str  # the Plugin's, which every plugin also is

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        """Scores of the nodes (int64); by default the one-node ``score`` per node. A
        non-success status raises ``SchedulingError`` (the runtime names the plugin)."""
        if type(self).score is ScorePlugin.score:
            raise NotImplementedError(f"{type(self).__name__} implements neither score_nodes nor score")
        out = []
        for name in nodes.names:
            s, st = self.score(state, pod, name)
            if not st.is_success():
                raise ScoreFailed(st)
            out.append(s)
        return np.array(out, np.int64) if out else np.zeros(0, np.int64)

    def score(self, state: CycleState, pod: Pod, node_name: str) -> tuple[int, Status]:
        """Score of one node; by default ``score_nodes`` over that node alone."""
        snap = self.handle.snapshot  # type: ignore[attr-defined]
        try:
            one = snap.nodes(np.array([snap.position[node_name]]))
            return int(self.score_nodes(state, pod, one)[0]), SUCCESS
        except ScoreFailed as e:
            return 0, e.status

    # ScoreExtensions.NormalizeScore; plugins without one leave has_normalize False.
    has_normalize = False

    def normalize_scores(self, state: CycleState, pod: Pod, names: Sequence[str],
                         scores: np.ndarray) -> np.ndarray:
        """NormalizeScore over the scores (in place or a new array); by default the
        NodeScore-list ``normalize_score``."""
        lst = [NodeScore(n, int(s)) for n, s in zip(names, scores)]
        st = self.normalize_score(state, pod, lst)
        if not st.is_success():
            raise ScoreFailed(st)
        return np.array([ns.score for ns in lst], np.int64) if lst else scores

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        """NormalizeScore over NodeScores; by default ``normalize_scores``."""
        arr = np.array([ns.score for ns in scores], np.int64)
        try:
            out = self.normalize_scores(state, pod, [ns.name for ns in scores], arr)
        except ScoreFailed as e:
            return e.status
        for ns, s in zip(scores, out):
            ns.score = int(s)
        return SUCCESS


class ScoreFailed(Exception):
    """A Score / NormalizeScore status other than Success, raised out of a whole-set call."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status
