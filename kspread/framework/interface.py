"""Extension points of the scheduling framework, as upstream's framework/interface.go.

A plugin is a class deriving from ``Plugin`` and from one mixin per extension
point it implements. The runtime (``kspread.framework.runtime``) discovers the
extension points with ``isinstance``; plugins never call each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from kspread.framework.status import CycleState, Status

if TYPE_CHECKING:  # pragma: no cover
    from kspread.framework.handle import Handle
    from kspread.model import Node, Pod
    from kspread.snapshot import NodeInfo


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


class Plugin:
    """Base of every plugin. ``name`` is the name the version's configuration uses."""

    name: str = ""

    def __init__(self, args: Mapping[str, Any], handle: "Handle", config_path: tuple = ()) -> None:
        self.args = args
        self.handle = handle
        self.version = handle.version
        self.config_path = config_path


class PreFilterPlugin:
    def pre_filter(self, state: CycleState, pod: "Pod") -> Status:
        raise NotImplementedError

    # PreFilterExtensions: keep PreFilter state right when the scheduler adds or
    # removes pods (nominated pods, preemption dry runs). None: not implemented.
    def add_pod(self, state: CycleState, pod: "Pod", added: "Pod", node_info: "NodeInfo") -> Status | None:
        return None

    def remove_pod(self, state: CycleState, pod: "Pod", removed: "Pod", node_info: "NodeInfo") -> Status | None:
        return None

    has_pre_filter_extensions = False


class FilterPlugin:
    def filter(self, state: CycleState, pod: "Pod", node_info: "NodeInfo") -> Status:
        raise NotImplementedError


class PostFilterPlugin:
    def post_filter(self, state: CycleState, pod: "Pod", statuses: Mapping[str, Status]) -> tuple[Any, Status]:
        raise NotImplementedError


class PreScorePlugin:
    def pre_score(self, state: CycleState, pod: "Pod", nodes: Sequence["Node"]) -> Status:
        raise NotImplementedError


class ScorePlugin:
    def score(self, state: CycleState, pod: "Pod", node_name: str) -> tuple[int, Status]:
        raise NotImplementedError

    # ScoreExtensions.NormalizeScore; plugins without one leave has_normalize False.
    has_normalize = False

    def normalize_score(self, state: CycleState, pod: "Pod", scores: list[NodeScore]) -> Status:
        raise NotImplementedError
