"""EqualPriority (priority function up to 1.17): every node scores 1."""

from __future__ import annotations

from kspread.framework.interface import Plugin, ScorePlugin
from kspread.framework.registry import register
from kspread.framework.status import SUCCESS, CycleState, Status
from kspread.model import Pod


@register("EqualPriority", first=12, last=17)
class EqualPriority(Plugin, ScorePlugin):
    def score(self, state: CycleState, pod: Pod, node_name: str) -> tuple[int, Status]:
        return 1, SUCCESS
