"""What kspread refuses as too large, before it costs time or memory.

A case is untrusted input: a few lines can ask for 50 million pods (``replicas``), a
number of a million digits or a list of 50,000 nodes. The limits below are far above
what real clusters reach (upstream's documented scale: 5,000 nodes, 150,000 pods), and
each is checked in time proportional to the text before anything is expanded. README,
"Limits", lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import accumulate
from typing import Any

from kspread.errors import CaseError

# Integers of more digits than this are refused wherever they are: every integer a case
# holds fits in 64 bits (19 digits), and Python converts no more than 4,300 digits to or
# from text.
MAX_INT_DIGITS = 100
_HUGE = 10 ** MAX_INT_DIGITS


def int_digits(x: int) -> int:
    """How many decimal digits ``abs(x)`` has, without converting it to text."""
    x = abs(x)
    d = max(1, int(x.bit_length() * 0.30102999566398120))  # log10(2): at most one too many or few
    while d > 1 and x < 10 ** (d - 1):
        d -= 1
    while x >= 10 ** d:
        d += 1
    return d


def huge_int_message(digits: int) -> str:
    return (f"integer out of range: it has {digits:,} digits (every integer kspread reads fits in 64 bits; "
            f"it refuses any of more than {MAX_INT_DIGITS} digits)")


def huge_int_at(data: Any) -> tuple[list, int] | None:
    """The path of the first integer of more than MAX_INT_DIGITS digits in ``data`` (keys
    in order, list items by index), and its number of digits; None when there is none."""
    stack: list[tuple[Any, list]] = [(data, [])]
    while stack:
        x, at = stack.pop()
        if isinstance(x, int) and not isinstance(x, bool):
            if not -_HUGE < x < _HUGE:
                return at, int_digits(x)
        elif isinstance(x, Mapping):
            stack += [(v, [*at, k]) for k, v in reversed(list(x.items()))]
        elif isinstance(x, list):
            stack += [(v, [*at, i]) for i, v in reversed(list(enumerate(x)))]
    return None


# The most a case may hold once its shorthand is expanded (``replicas``, ``zones``).
# Upstream's documented scale is 5,000 nodes and 150,000 pods; a sequence of 100,000
# pods is long. Each limit is a multiple of that, checked before anything is built.
MAX_NODES = 20_000
MAX_PODS = 300_000  # existing pods: ``pods`` (replicas counted) and Pod manifests of ``objects``
MAX_INCOMING = 200_000  # incoming pods: ``schedule`` entries, replicas counted
# DRA devices: a node's ``devices`` shorthand (``count`` counted: a node of nodes or of an
# addNode step) and the devices of ResourceSlice manifests. 5,000 nodes of 8 GPUs are 40,000.
MAX_DEVICES = 100_000


# The schema's maximum of one entry's ``replicas``.
_MAX_REPLICAS = 1_000_000


def _too_many(what: str, total: int, limit: int, path: list) -> CaseError:
    e = CaseError(f"too large: with this entry the case has {total:,} {what}, more than kspread's limit of "
                  f"{limit:,} (documentation: reference/workflow.md, \"Limits\")", path)
    e.format_error = True  # kspread's limit, not the scheduler's: no expect.error meets it
    return e


def check_sizes(doc: Mapping[str, Any]) -> None:
    """Refuse a case whose nodes, existing pods, incoming pods or devices, expanded, would
    pass MAX_NODES, MAX_PODS, MAX_INCOMING or MAX_DEVICES, at the entry that passes it: one pass over the
    lists as written (``replicas`` summed, not expanded), before the schema validates each
    entry and anything is built (``kspread.format.loader.load_case``)."""
    objects = doc.get("objects")
    objects = objects if isinstance(objects, list) else []
    kinds = [o.get("kind") if isinstance(o, Mapping) else None for o in objects]
    nodes = doc.get("nodes")
    nodes = nodes if isinstance(nodes, list) else []
    listed = bool(nodes) or "Node" in kinds
    if listed:
        _running(["nodes"], [1] * len(nodes), "nodes", MAX_NODES, kinds, "Node")
    # the nodes `zones` names: the case's nodes when it lists none, else each one of them
    zones = doc.get("zones")
    total = 0
    for zone, members in (zones.items() if isinstance(zones, Mapping) else ()):
        n = len(members) if isinstance(members, list) else 0
        if total + n > MAX_NODES:
            raise _too_many("nodes named in `zones`" if listed else "nodes", MAX_NODES + 1, MAX_NODES,
                            ["zones", zone, MAX_NODES - total])
        total += n
    for key, what, limit, kind in (("pods", "existing pods", MAX_PODS, "Pod"),
                                   ("schedule", "incoming pods", MAX_INCOMING, "")):
        items = doc.get(key)
        items = items if isinstance(items, list) else []
        # (a comprehension over 150,000 pods: about 15 ms)
        replicas = [item.get("replicas") if type(item) is dict else None for item in items]
        # (a count the schema refuses, not a positive int up to its maximum, is left to it)
        counts = [r if type(r) is int and 0 < r <= _MAX_REPLICAS else 1 for r in replicas]
        _running([key], counts, what, limit, kinds if kind else [], kind, replicas)
    _check_devices(doc, nodes, objects, kinds)


def _check_devices(doc: Mapping[str, Any], nodes: list, objects: list, kinds: list) -> None:
    """The devices of the nodes' ``devices`` shorthand (``count`` summed, not expanded),
    of addNode steps, then of ResourceSlice manifests, up to MAX_DEVICES."""
    schedule = doc.get("schedule")
    entries = [(["nodes", i], n) for i, n in enumerate(nodes)]
    entries += [(["schedule", i, "addNode"], s.get("addNode"))
                for i, s in enumerate(schedule if isinstance(schedule, list) else ()) if type(s) is dict]
    total = 0
    for at, node in entries:
        devices = node.get("devices") if type(node) is dict else None
        for j, d in enumerate(devices if isinstance(devices, list) else ()):
            count = d.get("count") if type(d) is dict else None
            # (a count the schema refuses, or of more than MAX_INT_DIGITS digits, is left to it)
            total += count if type(count) is int and 0 < count < _HUGE else 1
            if total > MAX_DEVICES:
                raise _too_many("devices", total, MAX_DEVICES,
                                [*at, "devices", j, "count"] if count is not None else [*at, "devices", j])
    for i, k in enumerate(kinds):
        spec = objects[i].get("spec") if k == "ResourceSlice" else None
        devices = spec.get("devices") if isinstance(spec, Mapping) else None
        if isinstance(devices, list) and devices:
            total += len(devices)
            if total > MAX_DEVICES:
                raise _too_many("devices", total, MAX_DEVICES, ["objects", i, "spec", "devices"])


def _running(path: list, counts: list[int], what: str, limit: int, kinds: list, kind: str,
             replicas: list | None = None) -> None:
    """The entry of ``path`` (one count each), then of ``objects`` of ``kind``, at which
    the running total passes ``limit``."""
    total = sum(counts)
    if total > limit:
        for i, total in enumerate(accumulate(counts)):
            if total > limit:
                at = [*path, i, "replicas"] if replicas is not None and replicas[i] is not None else [*path, i]
                raise _too_many(what, total, limit, at)
    for i, k in enumerate(kinds):
        if k == kind:
            total += 1
            if total > limit:
                raise _too_many(what, total, limit, ["objects", i])
