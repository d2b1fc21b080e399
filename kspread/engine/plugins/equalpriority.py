"""EqualPriority (priority function up to 1.17): every node scores 1."""

from __future__ import annotations

from kspread.engine.framework.interface import Plugin, ScorePlugin
from kspread.engine.framework.registry import register
from kspread.engine.framework.status import SUCCESS, CycleState, Status
from kspread.engine.model import Pod


@register("EqualPriority", first=12, last=17)
class EqualPriority(Plugin, ScorePlugin):
    def score(self, state: CycleState, pod: Pod, node_name: str) -> tuple[int, Status]:
        return 1, SUCCESS
