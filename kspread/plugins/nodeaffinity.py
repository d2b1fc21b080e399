"""NodeAffinity, Filter: the node must match the pod's nodeSelector and required node
affinity (framework/plugins/nodeaffinity; before 1.18 the MatchNodeSelector predicate).
Score (preferred terms) is not implemented yet: add PreScore/Score to the class when it is.

Reason text by version (``err_reason``): "node(s) didn't match node selector" up to
1.20, "node(s) didn't match Pod's node affinity" in 1.21, "node(s) didn't match Pod's
node affinity/selector" from 1.22.

From 1.25 (``prefilter_checks_name_conflict``) PreFilter rejects a pod whose required
terms all select nodes by metadata.name and together name no node, with "pod
affinity terms conflict" for every node. The PreFilterResult that restricts the
search to the named nodes is not modelled: it changes only which reason the other
nodes report.
"""

from __future__ import annotations

from typing import Any, Mapping

from kspread.errors import CaseError
from kspread.framework.interface import FilterPlugin, Plugin, PreFilterPlugin
from kspread.framework.registry import register
from kspread.framework.status import SUCCESS, CycleState, Status, unresolvable
from kspread.labels import IN
from kspread.model import Pod
from kspread.plugins.nodematch import required_node_affinity_matches
from kspread.snapshot import NodeInfo
from kspread.versions import Version

ERR_REASON_CONFLICT = "pod affinity terms conflict"


def err_reason(version: Version) -> str:
    m = version.minor
    if m <= 20:
        return "node(s) didn't match node selector"
    if m == 21:
        return "node(s) didn't match Pod's node affinity"
    return "node(s) didn't match Pod's node affinity/selector"


def prefilter_checks_name_conflict(version: Version) -> bool:
    return version.minor >= 25


def required_node_names(pod: Pod) -> set[str] | None:
    """The node names the required terms restrict the pod to through matchFields
    metadata.name In (intersection within a term, union over terms); None when
    some term does not restrict by name (every node stays eligible)."""
    aff = pod.affinity
    if aff is None or aff.node_affinity is None or not aff.node_affinity.required:
        return None
    names: set[str] = set()
    for term in aff.node_affinity.required:
        term_names: set[str] | None = None
        for r in term.match_fields:
            if r.key == "metadata.name" and r.op == IN:
                vals = set(r.values)
                term_names = vals if term_names is None else term_names & vals
        if term_names is None:
            return None
        names |= term_names
    return names


@register("NodeAffinity")
class NodeAffinity(Plugin, PreFilterPlugin, FilterPlugin):
    def __init__(self, args: Mapping[str, Any], handle, config_path: tuple = ()) -> None:
        super().__init__(args, handle, config_path)
        for k in args or {}:
            raise CaseError(f"NodeAffinity args field {k!r} is not implemented by kspread", (*config_path, str(k)))

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        if prefilter_checks_name_conflict(self.version):
            names = required_node_names(pod)
            if names is not None and not names:
                return unresolvable(ERR_REASON_CONFLICT)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if required_node_affinity_matches(pod, node_info.node):
            return SUCCESS
        return unresolvable(err_reason(self.version))
