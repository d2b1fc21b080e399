"""A pod's ``status`` as in-place pod resize leaves it (kspread.engine.model.ResizeStatus).

The case gives it in the form ``kubectl get pod -o yaml`` prints: ``resize`` (to 1.32),
``conditions`` (PodResizePending / PodResizeInProgress, from 1.33), ``containerStatuses``
and ``initContainerStatuses`` (each ``name``, ``resources``, ``allocatedResources``) and
the pod-level ``resources`` / ``allocatedResources``. The schema has checked the shape;
this converts the quantities and checks what the API server would refuse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kspread.engine.model import ContainerResizeStatus, ResizeStatus
from kspread.engine.quantity import QuantityError, resource_amount
from kspread.engine.versions import Version
from kspread.errors import CaseError, PathT

# The condition types the scheduler's resource helpers read (PodResizePending's reason:
# Deferred or Infeasible); PodResizeInProgress is kept and not read.
RESIZE_CONDITIONS = ("PodResizePending", "PodResizeInProgress")


def resource_amounts(raw: Any, path: PathT) -> dict[str, int]:
    """A resource list (name -> quantity) in kspread's integer units; an error names the
    field of a quantity that does not parse."""
    out: dict[str, int] = {}
    for k, v in (raw or {}).items():
        try:
            out[k] = resource_amount(k, v)
        except QuantityError as e:
            raise CaseError(str(e), [*path, k], value=v) from None
    return out


def _container_status(raw: Mapping[str, Any], path: PathT) -> ContainerResizeStatus:
    res = raw.get("resources")
    requests = None
    if res is not None and res.get("requests") is not None:
        requests = resource_amounts(res["requests"], [*path, "resources", "requests"])
    allocated = None
    if raw.get("allocatedResources") is not None:
        allocated = resource_amounts(raw["allocatedResources"], [*path, "allocatedResources"])
    return ContainerResizeStatus(raw["name"], res is not None, requests, allocated)


def resize_status(raw: Mapping[str, Any] | None, at, version: Version, container_names: set[str],
                  init_names: set[str]) -> ResizeStatus | None:
    """The pod's ``status`` (the shorthand's field, or a raw Pod's status trimmed to these
    fields); None when it has none. A container status must name a container of its
    list, once, as the kubelet reports them."""
    if not raw:
        return None
    stats: dict[str, tuple[ContainerResizeStatus, ...]] = {}
    for key, names in (("containerStatuses", container_names), ("initContainerStatuses", init_names)):
        seen: set[str] = set()
        out = []
        for i, c in enumerate(raw.get(key) or []):
            path = at("status", key, i)
            name = c["name"]
            if name not in names:
                what = "init container" if key == "initContainerStatuses" else "container"
                raise CaseError(f"names no {what} of the pod (a status reports the {what}s of the spec)",
                                [*path, "name"], value=name)
            if name in seen:
                raise CaseError(f"Duplicate value: {name!r}", [*path, "name"], value=name)
            seen.add(name)
            out.append(_container_status(c, path))
        stats[key] = tuple(out)
    reason = None
    for c in raw.get("conditions") or []:
        if c.get("type") == "PodResizePending":
            reason = c.get("reason") or ""
            break
    level = raw.get("resources")
    level_requests = None
    if level is not None and level.get("requests") is not None:
        level_requests = resource_amounts(level["requests"], at("status", "resources", "requests"))
    level_allocated = None
    if raw.get("allocatedResources") is not None:
        level_allocated = resource_amounts(raw["allocatedResources"], at("status", "allocatedResources"))
    if (level is not None or level_allocated is not None) and version.minor >= 37 \
            and version.gate("InPlacePodVerticalScaling") and version.gate("InPlacePodLevelResourcesVerticalScaling"):
        which = "resources" if level is not None else "allocatedResources"
        raise CaseError("pod-level status resources are not modelled at 1.37 (upstream main reads them in place of "
                        "the containers' statuses, with the overhead taken out): give the containers' statuses, "
                        "or run the case at 1.35 or 1.36", at("status", which))
    return ResizeStatus(
        resize=raw.get("resize") or "",
        pending_reason=reason,
        containers=stats["containerStatuses"],
        inits=stats["initContainerStatuses"],
        level_has_resources=level is not None,
        level_requests=level_requests,
        level_allocated=level_allocated,
    )
