"""DeviceTaintRules: taints an administrator puts on devices without touching their
ResourceSlices. The scheduler's DRA manager reads slices through the ResourceSlice
tracker (k8s.io/dynamic-resource-allocation/resourceslice/tracker), which, with
DeviceTaintRules enabled (DRADeviceTaints in 1.33-1.34, DRADeviceTaintRules from
1.35), appends each matching rule's taint to the device's own; the allocator then
treats them as any device taint.

A rule matches a device when each field its ``deviceSelector`` gives matches: the
slice's driver and pool name, the device's name, and in 1.33-1.34 also a DeviceClass
(whose CEL selectors must all match; a class that does not exist: the rule applies to
no device) and the rule's own CEL selectors (a runtime error: not matched). A CEL
compile error in a class's selector leaves the whole slice out of the tracker's view
(upstream's applyPatches fails and the slice is not stored), as soon as a device of the
slice gets that far. Rules apply in the case's order (upstream lists them from a map,
so the order of taints varies; the allocator checks every taint, so it does not matter).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from kspread.engine.devicecel import CelError, device_matches
from kspread.engine.devices import (
    NO_EXECUTE,
    ClaimTracker,
    Device,
    DeviceClass,
    DeviceTaint,
    DeviceTaintRule,
    ResourceClaim,
    ResourceSlice,
)
from kspread.engine.model import Pod


def _device_matches(rule: DeviceTaintRule, d: Device, driver: str, class_selectors: tuple[str, ...]) -> bool:
    """The rule's CEL checks for one device: the class's selectors (a compile error is
    raised: the slice is lost), then the rule's."""
    for expr in class_selectors:
        try:
            if not device_matches(expr, d, driver):
                return False
        except CelError as e:
            if e.compile_error:
                raise
            return False
    for expr in rule.selectors:
        try:
            if not device_matches(expr, d, driver):
                return False
        except CelError:  # a rule's selector compiled when the case was loaded: runtime errors only
            return False
    return True


def patch_slice(s: ResourceSlice, rules: Sequence[DeviceTaintRule],
                classes: Mapping[str, DeviceClass]) -> ResourceSlice | None:
    """applyPatches: the slice with the taints of the rules that select its devices
    appended (the slice itself when none does); None when a class selector fails to
    compile (upstream drops the slice)."""
    added: list[list[DeviceTaint]] = [[] for _ in s.devices]
    for rule in rules:
        if rule.driver is not None and rule.driver != s.driver:
            continue
        if rule.pool is not None and rule.pool != s.pool:
            continue
        class_selectors: tuple[str, ...] = ()
        if rule.device_class is not None:
            cls = classes.get(rule.device_class)
            if cls is None:
                continue
            class_selectors = cls.selectors
        for i, d in enumerate(s.devices):
            if rule.device is not None and rule.device != d.name:
                continue
            try:
                if not _device_matches(rule, d, s.driver, class_selectors):
                    continue
            except CelError:
                return None
            added[i].append(rule.taint)
    if not any(added):
        return s
    devices = tuple(replace(d, taints=(*d.taints, *extra)) if extra else d for d, extra in zip(s.devices, added))
    return replace(s, devices=devices)


def patched_slices(slices: Sequence[ResourceSlice], rules: Sequence[DeviceTaintRule],
                   classes: Mapping[str, DeviceClass],
                   previous: Sequence[ResourceSlice] = ()) -> list[ResourceSlice]:
    """ListPatchedResourceSlices: every slice the tracker stores, patched. A slice it
    fails to patch keeps the version stored before (``previous``), if any."""
    if not rules:
        return list(slices)
    before = {s.name: s for s in previous}
    out = []
    for s in slices:
        p = patch_slice(s, rules, classes)
        if p is None:
            p = before.get(s.name)
        if p is not None:
            out.append(p)
    return out


def scheduler_slices(t: ClaimTracker) -> list[ResourceSlice]:
    """The slices as the scheduler's DRA manager lists them during a run: the case's
    slices patched with the run's rules (kept until a rule or slice changes)."""
    if t.patched is None:
        t.patched = patched_slices(t.objects.slices, t.taint_rules, t.objects.classes, t.stored)
        t.stored = t.patched
        t.cel_results.clear()  # keyed by device object: the patched devices are new ones
    return t.patched


# ---- the device taint eviction controller ------------------------------------------------


def _rule_matches_device(rule: DeviceTaintRule, driver: str, pool: str, device: str) -> bool:
    """ruleMatchesDevice (1.35): a rule without a deviceSelector matches no device."""
    if not rule.selector_given:
        return False
    return (rule.driver is None or rule.driver == driver) and (rule.pool is None or rule.pool == pool) \
        and (rule.device is None or rule.device == device)


def _latest_devices(slices: Sequence[ResourceSlice]) -> dict[tuple[str, str, str], tuple[ResourceSlice, Device]]:
    """The controller's pools: each device of a pool's slices of its highest generation
    (the first slice naming a device wins)."""
    newest: dict[tuple[str, str], int] = {}
    for s in slices:
        k = (s.driver, s.pool)
        newest[k] = max(newest.get(k, s.generation), s.generation)
    out: dict[tuple[str, str, str], tuple[ResourceSlice, Device]] = {}
    for s in slices:
        if s.generation != newest[(s.driver, s.pool)]:
            continue
        for d in s.devices:
            out.setdefault((s.driver, s.pool, d.name), (s, d))
    return out


def claim_eviction_time(claim: ResourceClaim, devices: Mapping[tuple[str, str, str], tuple[ResourceSlice, Device]],
                        rules: Sequence[DeviceTaintRule], slice_time: Callable[[ResourceSlice], int]) -> int | None:
    """evictionTime / claimEvictionTime: the earliest time a NoExecute taint of an
    allocated device is not tolerated any more: its timeAdded, plus the least
    tolerationSeconds of the result's tolerations with effect NoExecute that tolerate it
    (one without seconds tolerates it for ever; a toleration without an effect does not
    count). ``rules``: the NoExecute rules the controller checks itself (1.35)."""
    assert claim.allocation is not None
    when: int | None = None
    for r in claim.allocation.devices:
        found = devices.get(r.id)
        taints: list[tuple[DeviceTaint, int]] = []
        if found is not None:
            s, d = found
            taints = [(t, slice_time(s) if t.time_added is None else t.time_added)
                      for t in d.taints if t.effect == NO_EXECUTE]
        taints += [(rule.taint, rule.taint.time_added or 0) for rule in rules
                   if rule.taint.effect == NO_EXECUTE and _rule_matches_device(rule, *r.id)]
        for taint, added in taints:
            seconds = [tol.toleration_seconds for tol in r.tolerations
                       if tol.effect == NO_EXECUTE and tol.tolerates(taint)]
            if any(x is None for x in seconds):
                continue
            at = added + (max(0, min(x for x in seconds if x is not None)) if seconds else 0)
            when = at if when is None else min(when, at)
    return when


def pod_eviction_times(pods: Sequence[Pod], t: ClaimTracker, minor: int, rules_gate: bool,
                       slice_time: Callable[[ResourceSlice], int], group_claims: bool = False) -> dict[str, int]:
    """The device taint eviction controller's view of the bound pods: pod key -> the
    time it is to be evicted (the earliest of its claims that are allocated and reserved
    for it). 1.33-1.34 read slices through the ResourceSlice tracker (the rules' taints
    applied as the scheduler sees them); from 1.35 the slices as published, and the
    NoExecute rules (with DRADeviceTaintRules) matched by driver, pool and device. From
    1.35 a terminating pod is left alone (addConditionAndDeletePod does nothing for a pod
    with a deletionTimestamp); 1.34 deletes it as any other. ``group_claims``
    (DRAWorkloadResourceClaims, 1.36): a claim reserved for the pod's PodGroup counts as
    reserved for the pod (IsReservedForPod)."""
    if minor < 35:
        devices = _latest_devices(scheduler_slices(t))
        rules: Sequence[DeviceTaintRule] = ()
    else:
        devices = _latest_devices(t.objects.slices)
        rules = t.taint_rules if rules_gate else ()
    times: dict[tuple[str, str], int | None] = {}
    out: dict[str, int] = {}
    for pod in pods:
        if pod.node_name is None or (pod.terminating and minor >= 35):
            continue
        best: int | None = None
        for pc in pod.resource_claims:
            c = t.get(pod.namespace, pc.claim_name)
            if c is None or c.allocation is None or (pod.key not in c.reserved_for and not (
                    group_claims and pod.scheduling_group and f"PodGroup:{pod.scheduling_group}" in c.reserved_for)):
                continue
            k = (c.namespace, c.name)
            if k not in times:
                times[k] = claim_eviction_time(c, devices, rules, slice_time)
            at = times[k]
            if at is not None and (best is None or at < best):
                best = at
        if best is not None:
            out[pod.key] = best
    return out
