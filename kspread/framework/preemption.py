"""What preemption decides (upstream's framework/preemption): the outcome a PostFilter
plugin such as DefaultPreemption returns to the scheduling cycle. It lives with the
framework so that plugins and the cycle both import it from here, and no plugin
imports the scheduler."""

from __future__ import annotations

from dataclasses import dataclass, field

from kspread.model import Pod


@dataclass
class PreemptionOutcome:
    """What PostFilter (DefaultPreemption) decided."""

    nominated_node: str | None
    victims: list[Pod] = field(default_factory=list)
    candidates: dict[str, list[Pod]] = field(default_factory=dict)
    # nodes that tie with nominated_node on every criterion (set-valued expectation)
    tied_nodes: list[str] = field(default_factory=list)
    # PostFilter asks to clear the pod's nominatedNodeName (NominatedNodeName "")
    clear_nomination: bool = False
