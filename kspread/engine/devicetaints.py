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

from collections.abc import Mapping, Sequence
from dataclasses import replace

from kspread.engine.devicecel import CelError, device_matches
from kspread.engine.devices import (
    ClaimTracker,
    Device,
    DeviceClass,
    DeviceTaint,
    DeviceTaintRule,
    ResourceSlice,
)


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
                   classes: Mapping[str, DeviceClass]) -> list[ResourceSlice]:
    """ListPatchedResourceSlices: every slice the tracker stores, patched."""
    if not rules:
        return list(slices)
    out = []
    for s in slices:
        p = patch_slice(s, rules, classes)
        if p is not None:
            out.append(p)
    return out


def scheduler_slices(t: ClaimTracker) -> list[ResourceSlice]:
    """The slices as the scheduler's DRA manager lists them during a run: the case's
    slices patched with the run's rules (kept until a rule or slice changes)."""
    if t.patched is None:
        t.patched = patched_slices(t.objects.slices, t.taint_rules, t.objects.classes)
        t.cel_results.clear()  # keyed by device object: the patched devices are new ones
    return t.patched
