"""Device objects of a case (``objects:`` of kinds DeviceClass, ResourceSlice,
ResourceClaim, ResourceClaimTemplate in ``resource.k8s.io``) and pods' resourceClaims,
turned into kspread/engine/devices.py's model (the v1 shape, whatever version the
case wrote). The API version must be one the case's Kubernetes version serves; a
field kspread does not model is refused by name, never ignored."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

from kspread.engine.celcost import SelectorLimit, check_selector
from kspread.engine.devicecel import CelError, compile_selector
from kspread.engine.devices import (
    ALL,
    BOOL,
    BOOLS,
    EXACT_COUNT,
    IMPLICIT_EXTENDED_PREFIX,
    INT,
    INTS,
    LIST_KINDS,
    NO_EXECUTE,
    NO_SCHEDULE,
    STRING,
    STRINGS,
    VERSION,
    AllocatedDevice,
    Allocation,
    Attribute,
    Device,
    DeviceClass,
    DeviceObjects,
    DeviceRequest,
    DeviceTaint,
    DeviceTaintRule,
    DeviceToleration,
    ExactRequest,
    MatchAttribute,
    NodeAllocatableClaimStatus,
    NodeAllocatableMapping,
    PodClaim,
    RequestPolicy,
    ResourceClaim,
    ResourceSlice,
    extended_claim_name,
    is_dra_extended_resource_name,
)
from kspread.engine.labels import (
    GT,
    IN,
    LABEL_SELECTOR_OPERATORS,
    LT,
    NOT_IN,
    Requirement,
    parse_selector_requirement,
)
from kspread.engine.model import NodeSelectorTerm, Pod
from kspread.engine.quantity import QuantityError, parse_quantity
from kspread.engine.versions import Version
from kspread.errors import CaseError, PathT, did_you_mean
from kspread.format.apivalidation import label_name_error, subdomain_error

KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
GROUP = "resource.k8s.io"
_OLD_SHAPE = ("v1alpha3", "v1beta1")  # requests flat, devices under `basic`
TEMPLATE_CLAIM = "from a ResourceClaimTemplate"


def served_versions(minor: int) -> tuple[str, ...]:
    """The resource.k8s.io versions that serve these kinds at a minor (1.31: v1alpha3;
    1.32: v1beta1 added; 1.33: v1beta2 added, v1alpha3 left to DeviceTaintRule;
    1.34: v1, GA)."""
    if minor <= 31:
        return ("v1alpha3",)
    if minor == 32:
        return ("v1alpha3", "v1beta1")
    if minor == 33:
        return ("v1beta1", "v1beta2")
    return ("v1beta1", "v1beta2", "v1")


MODELLED_DRA = ("kspread models dynamic resource allocation with structured parameters, from 1.31 "
                "(resource.k8s.io/v1alpha3: DeviceClass, devices in ResourceSlices, device requests in ResourceClaims)")


def unmodelled_dra(minor: int) -> str:
    """What a minor before 1.31 has of dynamic resource allocation, none of it modelled."""
    classic = "classic DRA (ResourceClass, {}, a resource driver's controller allocating each claim)"
    if minor < 26:
        return f"1.{minor} has no dynamic resource allocation (resource.k8s.io and pods' resourceClaims came in 1.26)"
    if minor == 26:
        return f"1.26 serves resource.k8s.io/v1alpha1 with {classic.format('PodScheduling')} only, not modelled"
    if minor < 30:
        return (f"1.{minor} serves resource.k8s.io/v1alpha2 with {classic.format('PodSchedulingContext')} only, "
                "not modelled")
    return ("1.30 serves resource.k8s.io/v1alpha2: its structured parameters (the namedResources model: "
            "ResourceSlices with namedResources instances, ResourceClaimParameters and ResourceClassParameters "
            "with namedResources selectors) and its " + classic.format("PodSchedulingContext") +
            " are not modelled")


def check_enabled(version: Version, path: PathT) -> None:
    """Device objects need structured parameters (1.31+) with the gate on."""
    if version.minor < 31:
        raise CaseError(f"{unmodelled_dra(version.minor)}: {MODELLED_DRA}", path)
    if not version.gate("DynamicResourceAllocation"):
        raise CaseError(
            f"device objects and pod resourceClaims need the DynamicResourceAllocation feature gate, off by "
            f"default in 1.{version.minor}: set featureGates: {{DynamicResourceAllocation: true}}", path)


def _unmodelled(what: str, gate: str, path: PathT) -> CaseError:
    return CaseError(f"{what} ({gate}) is not modelled by kspread", path)


def _str(raw: Any, path: PathT, what: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise CaseError(f"{what} must be a non-empty string", path, value=raw)
    return raw


def _map(raw: Any, path: PathT, allowed: tuple[str, ...] | None = None) -> Mapping[str, Any]:
    """A mapping (None: empty); with ``allowed``, a field it does not list is an error."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise CaseError("must be a mapping", path, value=raw)
    if allowed is not None:
        for k in raw:
            if k not in allowed:
                raise CaseError(f"unknown field {k!r} (allowed: {', '.join(sorted(allowed))})"
                                + did_you_mean(str(k), allowed), [*path, k])
    return raw


_OBJECT = ("apiVersion", "kind", "metadata", "spec", "status")
_META = ("name", "namespace", "labels", "annotations", "uid", "resourceVersion", "generation", "creationTimestamp",
         "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "finalizers", "managedFields",
         "generateName", "selfLink")
_TERM = ("matchExpressions", "matchFields")
_SELECTOR = ("cel",)
_CEL = ("expression",)
_DEVICE_BODY = ("attributes", "capacity", "taints", "consumesCounters", "nodeName", "nodeSelector", "allNodes",
                "allowMultipleAllocations", "bindingConditions", "bindingFailureConditions", "bindsToNode",
                "nodeAllocatableResourceMappings")
_EXACT = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")


def _object(obj: Mapping[str, Any], path: PathT) -> tuple[Mapping[str, Any], str]:
    """The object's metadata (checked) and name."""
    _map(obj, path, _OBJECT)
    meta = _map(obj.get("metadata"), [*path, "metadata"], _META)
    return meta, _subdomain(meta.get("name"), [*path, "metadata", "name"], "a name")


def _checked_name(raw: Any, path: PathT, what: str, longest: int | None, *parts: tuple[str, Any]) -> str:
    """A name the API server checks: at most ``longest`` characters (None: no such check),
    and each (text, check) of ``parts`` passing its check (the first error is the case's)."""
    name = _str(raw, path, what)
    if longest is not None and len(name) > longest:
        raise CaseError(f"Too long: may not be more than {longest} bytes", path, value=name)
    for text, check in parts:
        err = check(text)
        if err:
            raise CaseError(err, path, value=name)
    return name


def _driver(raw: Any, path: PathT) -> str:
    """A DRA driver's name (ValidateCSIDriverName): at most 63 characters, a DNS subdomain
    in any case; the shorthand writes it into its classes' CEL selector."""
    name = _str(raw, path, "driver")
    return _checked_name(name, path, "driver", 63, (name.lower(), subdomain_error))


def _subdomain(raw: Any, path: PathT, what: str) -> str:
    """A name that is a DNS subdomain: a DRA object's, a device class a request names."""
    name = _str(raw, path, what)
    return _checked_name(name, path, what, None, (name, subdomain_error))


def _label(raw: Any, path: PathT, what: str) -> str:
    """A name that is a DNS label: a device's, a request's."""
    name = _str(raw, path, what)
    return _checked_name(name, path, what, None, (name, label_name_error))


def _pool(raw: Any, path: PathT) -> str:
    """A pool's name (validatePoolName): at most 253 characters, DNS subdomains between
    slashes."""
    name = _str(raw, path, "pool.name")
    return _checked_name(name, path, "pool.name", 253, *((part, subdomain_error) for part in name.split("/")))


def _list(raw: Any, path: PathT) -> list:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise CaseError("must be a list", path, value=raw)
    return raw


def _compiled(expr: str, path: PathT) -> str:
    """A shorthand's selector expression (a pod's ``devices``, ``deviceClasses``), which must
    parse: the shorthand creates its claim or class, and the API server's validateCELSelector
    compiles a new object's selectors and refuses one that does not ("compilation failed:
    ..."). A manifest in ``objects`` is read as `kubectl get` prints a stored object (its
    selectors checked when it was created, under that server's environment): one that does
    not compile fails when the allocator evaluates it, as upstream's scheduler does
    (``cases/devices/device-taint-rules.yaml``). kspread's compiler parses only: an
    expression that parses but does not type-check fails at evaluation too, and the cost
    limit is not modelled."""
    try:
        compile_selector(expr)
    except CelError as e:
        lead = f"Failed to parse expression '{expr}': "
        raise CaseError(f"Invalid value: {expr!r}: compilation failed: {str(e).removeprefix(lead)}",
                        path) from None
    return expr


def _selectors(raw: Any, path: PathT) -> tuple[str, ...]:
    out = []
    for i, s in enumerate(_list(raw, path)):
        cel = _map(_map(s, [*path, i], _SELECTOR).get("cel"), [*path, i, "cel"], _CEL)
        ep = [*path, i, "cel", "expression"]
        out.append(_checked_selector(_str(cel.get("expression"), ep, "a CEL selector's expression"), ep))
    return tuple(out)


def _checked_selector(expression: str, path: PathT) -> str:
    """The expression, unless the API server refuses it for its length, nesting or cost
    (kspread.engine.celcost)."""
    try:
        check_selector(expression)
    except SelectorLimit as e:
        raise CaseError(str(e), path) from None
    return expression


def _selector_of(raw: Any, path: PathT) -> str:
    """A shorthand's selector as the API server's validation takes a new object's: its
    length, nesting and cost first (the compiler is not handed what is past them), then
    whether it compiles."""
    return _compiled(_checked_selector(_str(raw, path, "a CEL selector"), path), path)


def _node_selector(raw: Any, path: PathT) -> tuple[NodeSelectorTerm, ...]:
    terms = []
    for i, t in enumerate(_list(_map(raw, path, ("nodeSelectorTerms",)).get("nodeSelectorTerms"),
                                [*path, "nodeSelectorTerms"])):
        tp = [*path, "nodeSelectorTerms", i]
        t = _map(t, tp, _TERM)
        exprs = tuple(parse_selector_requirement(e, [*tp, "matchExpressions", j], (*LABEL_SELECTOR_OPERATORS, GT, LT))
                      for j, e in enumerate(_list(t.get("matchExpressions"), [*tp, "matchExpressions"])))
        fields = []
        for j, f in enumerate(_list(t.get("matchFields"), [*tp, "matchFields"])):
            f = _map(f, [*tp, "matchFields", j], ("key", "operator", "values"))
            if f.get("key") != "metadata.name" or f.get("operator") not in (IN, NOT_IN):
                raise CaseError("a node field selector is metadata.name with In or NotIn", [*tp, "matchFields", j])
            fields.append(Requirement("metadata.name", f["operator"], tuple(f.get("values") or ())))
        terms.append(NodeSelectorTerm(exprs, tuple(fields)))
    return tuple(terms)


def _api_version(obj: Mapping[str, Any], version: Version, path: PathT) -> str:
    av = obj.get("apiVersion")
    group, _, ver = str(av).partition("/")
    served = served_versions(version.minor)
    if group != GROUP or ver not in served:
        raise CaseError(f"{obj.get('kind')} in 1.{version.minor} is served as "
                        + " or ".join(f"{GROUP}/{v}" for v in served), [*path, "apiVersion"], value=av)
    return ver


# ---- DeviceClass ---------------------------------------------------------------------


def _extended_resource_name(raw: Any, version: Version, path: PathT) -> str | None:
    """A DeviceClass's extendedResourceName (from 1.34; dropped while DRAExtendedResource is off)."""
    if raw is None:
        return None
    if version.minor < 34:
        raise CaseError(f"1.{version.minor} has no extendedResourceName (DRAExtendedResource, from 1.34)", path)
    ext = _str(raw, path, "extendedResourceName")
    if not is_dra_extended_resource_name(ext) or ext.startswith(IMPLICIT_EXTENDED_PREFIX):
        raise CaseError("extendedResourceName is an extended resource name (domain/name, the domain not "
                        "kubernetes.io)", path, value=ext)
    return ext if version.gate("DRAExtendedResource") else None  # the API server drops it with the gate off


def device_class(obj: Mapping[str, Any], version: Version, path: PathT) -> DeviceClass:
    meta, name = _object(obj, path)
    _api_version(obj, version, path)
    spec = _map(obj.get("spec"), [*path, "spec"], ("selectors", "config", "extendedResourceName", "suitableNodes"))
    if spec.get("suitableNodes") is not None:
        raise CaseError(f"a DeviceClass's suitableNodes belongs to {_CLASSIC}", [*path, "spec", "suitableNodes"])
    ext = _extended_resource_name(spec.get("extendedResourceName"), version, [*path, "spec", "extendedResourceName"])
    created = meta.get("creationTimestamp")
    return DeviceClass(name, _selectors(spec.get("selectors"), [*path, "spec", "selectors"]), ext,
                       "" if created is None else str(created))


# ---- ResourceSlice -------------------------------------------------------------------


LIST_GATE = "DRAListTypeAttributes"
# resourceapi.DeviceAttributeMaxValueLength, ResourceSliceMaxAttributeValuesPerDevice
_MAX_VALUE_LENGTH = 64
_MAX_VALUES_PER_DEVICE = 48
_MAX_ATTRIBUTES_AND_CAPACITIES = 32


def _scalar_ok(kind: str, v: Any) -> bool:
    # (an int attribute is an int64: a larger one failed to reach CEL, a traceback)
    return {INT: isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63, BOOL: isinstance(v, bool),
            STRING: isinstance(v, str), VERSION: isinstance(v, str)}[kind]


def _attribute(raw: Any, path: PathT, version: Version) -> Attribute:
    raw = _map(raw, path)
    lists = [k for k in LIST_KINDS if k in raw]
    if lists:
        if version.minor < 36:
            raise CaseError(f"1.{version.minor} has no list attributes ({lists[0]}): they come with 1.36's "
                            f"{LIST_GATE} feature gate", [*path, lists[0]], value=raw[lists[0]])
        if not version.gate(LIST_GATE):
            # the API server drops the list fields (resourceslice strategy); what is left must
            # still be one value
            rest = {k: v for k, v in raw.items() if k not in LIST_KINDS}
            if not rest:
                raise CaseError(f"a list attribute ({lists[0]}) needs the {LIST_GATE} feature gate (alpha, off "
                                f"by default in 1.36): with it off the API server drops the field and refuses "
                                f"the ResourceSlice (exactly one value must be specified)", [*path, lists[0]],
                                value=raw[lists[0]])
            raw = rest
    kinds = [k for k in (INT, BOOL, STRING, VERSION, *LIST_KINDS) if k in raw]
    if len(kinds) != 1 or set(raw) != set(kinds):
        one_of = "int, bool, string, version" + (", ints, bools, strings, versions" if lists else "")
        raise CaseError(f"a device attribute has exactly one of {one_of}", path, value=dict(raw))
    k = kinds[0]
    v = raw[k]
    if k in LIST_KINDS:
        scalar = LIST_KINDS[k]
        if not isinstance(v, list):
            raise CaseError(f"a device attribute's {k} value is a list of {scalar} values", [*path, k], value=v)
        if not v:
            raise CaseError("must not be empty if specified", [*path, k], value=v)
        for i, item in enumerate(v):
            _check_value(scalar, item, [*path, k, i])
        return Attribute(k, tuple(v))
    _check_value(k, v, [*path, k], lists=False)
    return Attribute(k, v)


def _check_value(kind: str, v: Any, path: PathT, lists: bool = True) -> None:
    if not _scalar_ok(kind, v):
        if kind == INT and isinstance(v, int) and not isinstance(v, bool):
            raise CaseError("a device attribute's int value is out of range (an int64)", path, value=v)
        raise CaseError(f"a device attribute's {kind} value has the wrong type", path, value=v)
    if kind == VERSION:
        from kspread.engine.devicecel import _is_semver

        if not _is_semver(v):
            raise CaseError("must be a semantic version (semver 2.0.0)", path, value=v)
    # the length limit of a list's strings and versions (the scalars' is not checked by kspread)
    if lists and kind in (STRING, VERSION) and len(v) > _MAX_VALUE_LENGTH:
        raise CaseError(f"Too long: may not be more than {_MAX_VALUE_LENGTH} bytes", path, value=v)


def _attributes_and_capacities(attrs: Mapping[str, Any], caps: Mapping[str, Any], path: PathT) -> None:
    """A device has at most 32 attributes and capacities together
    (ResourceSliceMaxAttributesAndCapacitiesPerDevice; the CEL cost bound counts on it)."""
    n = len(attrs) + len(caps)
    if n > _MAX_ATTRIBUTES_AND_CAPACITIES:
        raise CaseError(f"the total number of attributes and capacities must not exceed "
                        f"{_MAX_ATTRIBUTES_AND_CAPACITIES}", path, value=n)


def _attribute_values(attrs: Mapping[str, Attribute], path: PathT) -> None:
    """numEntriesDeviceAttribute: a device has at most 48 attribute values, each item of a
    list one."""
    n = sum(len(a.value) if isinstance(a.value, tuple) else 1 for a in attrs.values())
    if n > _MAX_VALUES_PER_DEVICE:
        raise CaseError(f"the total number of attribute values must not exceed {_MAX_VALUES_PER_DEVICE}", path,
                        value=n)


def _quantity(raw: Any, path: PathT) -> Fraction:
    try:
        return parse_quantity(raw)
    except QuantityError as e:
        raise CaseError(str(e), path, value=raw) from None


_DEVICE_UNMODELLED: dict[str, tuple[str, str]] = {}


def _node_allocatable(raw: Any, caps: Mapping[str, Fraction], version: Version,
                      path: PathT) -> dict[str, NodeAllocatableMapping]:
    """A device's nodeAllocatableResourceMappings (DRANodeAllocatableResources, 1.36): validated
    as the API server validates them (a node allocatable resource name, i.e. no domain or a
    kubernetes.io one; allocationMultiplier or capacityKey, the multiplier positive, the key one
    of the device's capacities), the multiplier defaulted to 1; with the gate off the API
    server drops the field, and so does kspread."""
    if version.minor < 36:
        raise CaseError(f"1.{version.minor} has no nodeAllocatableResourceMappings "
                        "(DRANodeAllocatableResources, from 1.36)", path)
    if version.minor >= 37 and version.gate("DRANodeAllocatableResources"):
        raise CaseError(f"nodeAllocatableResourceMappings in 1.{version.minor} are not modelled by kspread: "
                        f"1.{version.minor}'s DynamicResources (upstream main) was not read; kspread models "
                        "DRANodeAllocatableResources of v1.36.2", path)
    out: dict[str, NodeAllocatableMapping] = {}
    for k, m in _map(raw, path).items():
        kp = [*path, k]
        name = str(k)
        if "/" in name and "kubernetes.io/" not in name:
            raise CaseError(f"{name!r} must be a node allocatable resource name", kp, value=name)
        m = _map(m, kp, ("capacityKey", "allocationMultiplier"))
        key, mult = m.get("capacityKey"), m.get("allocationMultiplier")
        if key is None and mult is None:
            raise CaseError("at least one of allocationMultiplier or capacityKey must be set", kp)
        multiplier = Fraction(1)
        if mult is not None:
            multiplier = _quantity(mult, [*kp, "allocationMultiplier"])
            if multiplier <= 0:
                raise CaseError("allocationMultiplier must be positive", [*kp, "allocationMultiplier"], value=mult)
        if key is not None:
            key = _str(key, [*kp, "capacityKey"], "capacityKey")
            if key not in caps:
                raise CaseError(f"capacityKey {key!r} is not one of the device's capacities", [*kp, "capacityKey"],
                                value=key)
        out[name] = NodeAllocatableMapping(key, multiplier)
    return out if version.gate("DRANodeAllocatableResources") else {}


def _native_resource(name: str) -> bool:
    """v1helper.IsNativeResource: no domain, or a kubernetes.io one."""
    return "/" not in name or "kubernetes.io/" in name


def node_allocatable_claim_statuses(raw: Any, path: PathT,
                                    version: Version) -> tuple[NodeAllocatableClaimStatus, ...]:
    """A pod's status.nodeAllocatableResourceClaimStatuses (DRANodeAllocatableResources, 1.36),
    checked as v1.36.2's ValidatePodStatusUpdate checks it (validateNodeAllocatableResourceClaimStatus:
    a claim name, at least one container, at least one resource, each a node allocatable
    resource name with a non-negative quantity; that the pod references the claim is
    ``check_claim_statuses_named``). Before 1.36 the field does not exist; 1.37's (another
    shape, upstream main) is refused by name with the gate on. With the gate off the API server
    drops the field when it is written (dropPodNodeAllocatableResourceStatus) and the scheduler
    reads none of it: none, unchecked."""
    if raw is None:
        return ()
    if version.minor < 36:
        raise CaseError(f"1.{version.minor} has no status.nodeAllocatableResourceClaimStatuses "
                        "(DRANodeAllocatableResources, from 1.36)", path)
    if not version.gate("DRANodeAllocatableResources"):
        return ()
    if version.minor >= 37:
        raise CaseError(f"a pod's nodeAllocatableResourceClaimStatuses in 1.{version.minor} are not modelled by "
                        f"kspread: 1.{version.minor}'s API (upstream main) was not read; kspread models "
                        "DRANodeAllocatableResources of v1.36.2", path)
    out = []
    for i, st in enumerate(raw):
        sp = [*path, i]
        name = st.get("resourceClaimName") or ""
        if not name:
            raise CaseError("Required value: must not be empty", [*sp, "resourceClaimName"])
        if not st.get("containers"):
            raise CaseError("Required value: must not be empty", [*sp, "containers"])
        resources = st.get("resources") or {}
        if not resources:
            raise CaseError("Required value: must not be empty", [*sp, "resources"])
        amounts: dict[str, Fraction] = {}
        for k, q in resources.items():
            kp = [*sp, "resources", k]
            if not _native_resource(str(k)):
                raise CaseError(f"Invalid value: {k!r}: must be a node allocatable resource name", kp, value=k)
            amount = _quantity(q, kp)
            if amount < 0:
                raise CaseError(f"Invalid value: {str(q)!r}: must be non-negative", kp, value=q)
            amounts[str(k)] = amount
        out.append(NodeAllocatableClaimStatus(name, tuple(st["containers"]), tuple(sorted(amounts.items()))))
    return tuple(out)


def check_claim_statuses_named(pod: Pod, at) -> None:
    """validateNodeAllocatableResourceClaimStatus's last check: each status names a claim the
    pod references, in spec.resourceClaims (resourceClaimName) or in status.resourceClaimStatuses
    (a claim made from a template; kspread's ``<pod>-<name>``, or a PodGroup's claim)."""
    named = {pc.claim_name for pc in pod.resource_claims}
    for i, st in enumerate(pod.node_allocatable_claims):
        if st.claim not in named:
            raise CaseError(f"Invalid value: {st.claim!r}: no mapping found in pod reference",
                            at("status", "nodeAllocatableResourceClaimStatuses", i, "resourceClaimName"),
                            value=st.claim)


def _binding_fields(body: Mapping[str, Any], version: Version, bp: PathT) -> tuple:
    """bindingConditions, bindingFailureConditions, bindsToNode (DRADeviceBindingConditions,
    from 1.34, modelled from 1.35). Kept with the gate off: the scheduler then never
    selects a device with binding conditions (an API server with the gate off would not
    have stored them)."""
    given = [k for k in ("bindingConditions", "bindingFailureConditions", "bindsToNode") if body.get(k) is not None]
    if not given:
        return None, (), False
    if version.minor < 34:
        raise CaseError(f"1.{version.minor} has no {given[0]} (DRADeviceBindingConditions, from 1.34)",
                        [*bp, given[0]])
    lists: list[tuple[str, ...] | None] = []
    for k in ("bindingConditions", "bindingFailureConditions"):
        raw = body.get(k)
        if raw is None:
            lists.append(None)
            continue
        items = _list(raw, [*bp, k])
        lists.append(tuple(_str(x, [*bp, k, i], "a condition type") for i, x in enumerate(items)))
    binds = body.get("bindsToNode")
    if binds is not None and not isinstance(binds, bool):
        raise CaseError("bindsToNode is true or false", [*bp, "bindsToNode"], value=binds)
    return lists[0], lists[1] or (), bool(binds)


def _taints_gate(version: Version, path: PathT, what: str) -> bool:
    """Device taints and tolerations exist from 1.33 (DRADeviceTaints); with the gate
    off the API server drops them (False)."""
    if version.minor < 33:
        raise CaseError(f"1.{version.minor} has no device {what} (DRADeviceTaints, from 1.33)", path)
    return version.gate("DRADeviceTaints")


def _taint_effects(version: Version) -> tuple[str, ...]:
    """DeviceTaintEffect: NoSchedule and NoExecute, and None from 1.35."""
    return (NO_SCHEDULE, NO_EXECUTE, "None") if version.minor >= 35 else (NO_SCHEDULE, NO_EXECUTE)


def _taints(raw: Any, version: Version, path: PathT) -> tuple[DeviceTaint, ...]:
    if raw is None or not _taints_gate(version, path, "taints"):
        return ()
    return tuple(_taint(t, version, [*path, i]) for i, t in enumerate(_list(raw, path)))


def _taint(raw: Any, version: Version, tp: PathT) -> DeviceTaint:
    t = _map(raw, tp, ("key", "value", "effect", "timeAdded"))
    effect = t.get("effect")
    if effect not in _taint_effects(version):
        raise CaseError(f"a device taint's effect is one of {', '.join(_taint_effects(version))} in "
                        f"1.{version.minor}", [*tp, "effect"], value=effect)
    value = t.get("value") or ""
    if not isinstance(value, str):
        raise CaseError("must be a string", [*tp, "value"], value=value)
    return DeviceTaint(_str(t.get("key"), [*tp, "key"], "a taint key"), value, effect,
                       time_added_given=t.get("timeAdded") is not None)


def _tolerations(raw: Any, version: Version, path: PathT) -> tuple[DeviceToleration, ...]:
    if raw is None or not _taints_gate(version, path, "tolerations"):
        return ()
    out = []
    for i, t in enumerate(_list(raw, path)):
        tp = [*path, i]
        t = _map(t, tp, ("key", "operator", "value", "effect", "tolerationSeconds"))
        op = t.get("operator") or "Equal"
        if op not in ("Equal", "Exists"):
            raise CaseError("a toleration's operator is Equal or Exists", [*tp, "operator"], value=op)
        key, value, effect = t.get("key") or "", t.get("value") or "", t.get("effect") or ""
        for k, v in (("key", key), ("value", value)):
            if not isinstance(v, str):
                raise CaseError("must be a string", [*tp, k], value=v)
        if not key and op != "Exists":
            raise CaseError("a toleration without a key has operator Exists", [*tp, "operator"], value=op)
        if op == "Exists" and value:
            raise CaseError("a toleration with operator Exists has no value", [*tp, "value"], value=value)
        if effect and effect not in (NO_SCHEDULE, NO_EXECUTE):
            raise CaseError("a toleration's effect is NoSchedule or NoExecute (empty: every effect)",
                            [*tp, "effect"], value=effect)
        secs = t.get("tolerationSeconds")
        if secs is not None and (not isinstance(secs, int) or isinstance(secs, bool)):
            raise CaseError("tolerationSeconds is an integer", [*tp, "tolerationSeconds"], value=secs)
        out.append(DeviceToleration(key, op, value, effect, secs))
    return tuple(out)


def _consumable(version: Version, path: PathT, what: str) -> None:
    """Consumable capacity: alpha in 1.34 (off by default until 1.36), modelled from 1.35
    (versions.MODELLED_FROM refuses the gate on in 1.34)."""
    if version.minor < 34:
        raise CaseError(f"1.{version.minor} has no {what} (DRAConsumableCapacity, from 1.34)", path)
    if not version.gate("DRAConsumableCapacity"):
        raise CaseError(f"{what} needs the DRAConsumableCapacity feature gate, off by default in "
                        f"1.{version.minor}: set featureGates: {{DRAConsumableCapacity: true}}", path)


def _request_policy(raw: Any, path: PathT) -> RequestPolicy:
    raw = _map(raw, path, ("default", "validValues", "validRange"))
    default = None if raw.get("default") is None else _quantity(raw["default"], [*path, "default"])
    values = tuple(_quantity(v, [*path, "validValues", i])
                   for i, v in enumerate(_list(raw.get("validValues"), [*path, "validValues"])))
    if list(values) != sorted(values) or len(set(values)) != len(values):
        raise CaseError("validValues are given in ascending order, each once", [*path, "validValues"])
    rng = raw.get("validRange")
    if rng is not None and values:
        raise CaseError("a requestPolicy has validValues or validRange, not both", path)
    if rng is None:
        if values and default is not None and default not in values:
            raise CaseError("the default must be one of validValues", [*path, "default"])
        return RequestPolicy(default, values)
    rp = [*path, "validRange"]
    rng = _map(rng, rp, ("min", "max", "step"))
    lo = _quantity(rng.get("min"), [*rp, "min"])
    hi = None if rng.get("max") is None else _quantity(rng["max"], [*rp, "max"])
    step = None if rng.get("step") is None else _quantity(rng["step"], [*rp, "step"])
    if step is not None and step <= 0:
        raise CaseError("step must be positive", [*rp, "step"])
    return RequestPolicy(default, (), lo, hi, step)


def _partitionable(version: Version, path: PathT, what: str) -> None:
    """Partitionable devices exist from 1.33 (DRAPartitionableDevices, alpha: off by
    default until 1.36)."""
    if version.minor < 33:
        raise CaseError(f"1.{version.minor} has no {what} (DRAPartitionableDevices, from 1.33)", path)
    if not version.gate("DRAPartitionableDevices"):
        raise CaseError(f"{what} needs the DRAPartitionableDevices feature gate, off by default in "
                        f"1.{version.minor}: set featureGates: {{DRAPartitionableDevices: true}}", path)


def _counters(raw: Any, path: PathT) -> dict[str, Fraction]:
    out = {}
    for k, v in _map(raw, path).items():
        cp = [*path, k]
        out[str(k)] = _quantity(_map(v, cp, ("value",)).get("value"), [*cp, "value"])
    return out


def _counter_sets(raw: Any, path: PathT, key: str) -> tuple[tuple[str, dict[str, Fraction]], ...]:
    """sharedCounters ([{name, counters}]) or consumesCounters ([{counterSet, counters}])."""
    out: list[tuple[str, dict[str, Fraction]]] = []
    for i, e in enumerate(_list(raw, path)):
        ep = [*path, i]
        e = _map(e, ep, (key, "counters"))
        name = _str(e.get(key), [*ep, key], key)
        if any(n == name for n, _ in out):
            raise CaseError(f"{key} {name!r} is given twice", [*ep, key], value=name)
        out.append((name, _counters(e.get("counters"), [*ep, "counters"])))
    return tuple(out)


def _node_fields(body: Mapping[str, Any], path: PathT) -> tuple[str | None, bool]:
    """A slice's or a device's nodeName (a string; empty: none) and allNodes (a boolean)."""
    node_name = body.get("nodeName")
    if node_name is not None and not isinstance(node_name, str):
        raise CaseError("nodeName is a node's name (a string)", [*path, "nodeName"], value=node_name)
    all_nodes = body.get("allNodes")
    if all_nodes is not None and not isinstance(all_nodes, bool):
        raise CaseError("allNodes is true or false", [*path, "allNodes"], value=all_nodes)
    return node_name or None, bool(all_nodes)


def _device(raw: Any, ver: str, version: Version, path: PathT, per_device: bool = False) -> Device:
    if ver in _OLD_SHAPE:
        raw = _map(raw, path, ("name", "basic"))
        body, bp = _map(raw.get("basic"), [*path, "basic"], _DEVICE_BODY), [*path, "basic"]
    else:
        raw = _map(raw, path, ("name", *_DEVICE_BODY))
        body, bp = raw, list(path)
    name = _label(raw.get("name"), [*path, "name"], "a device name")
    for k, (what, gate) in _DEVICE_UNMODELLED.items():
        if body.get(k) is not None:
            raise _unmodelled(what, gate, [*bp, k])
    attrs = {str(k): _attribute(v, [*bp, "attributes", k], version)
             for k, v in _map(body.get("attributes"), [*bp, "attributes"]).items()}
    _attribute_values(attrs, [*bp, "attributes"])
    caps = {}
    policies: dict[str, RequestPolicy] = {}
    for k, v in _map(body.get("capacity"), [*bp, "capacity"]).items():
        cp = [*bp, "capacity", k]
        if ver == "v1alpha3":
            caps[str(k)] = _quantity(v, cp)
        else:
            v = _map(v, cp, ("value", "requestPolicy"))
            caps[str(k)] = _quantity(v.get("value"), [*cp, "value"])
            if v.get("requestPolicy") is not None:
                _consumable(version, [*cp, "requestPolicy"], "consumable capacity (requestPolicy)")
                policies[str(k)] = _request_policy(v["requestPolicy"], [*cp, "requestPolicy"])
    _attributes_and_capacities(attrs, caps, bp)
    consumes: tuple = ()
    if body.get("consumesCounters") is not None:
        _partitionable(version, [*bp, "consumesCounters"], "partitionable devices (consumesCounters)")
        consumes = _counter_sets(body["consumesCounters"], [*bp, "consumesCounters"], "counterSet")
    node_name, all_nodes = _node_fields(body, bp)
    sel = _node_selector(body["nodeSelector"], [*bp, "nodeSelector"]) if body.get("nodeSelector") else None
    given = sum((node_name is not None, all_nodes, sel is not None))
    if given and not per_device:
        raise CaseError("a device has nodeName, nodeSelector or allNodes only in a slice with "
                        "perDeviceNodeSelection: true", bp)
    if per_device and given != 1:
        raise CaseError("with perDeviceNodeSelection a device has exactly one of nodeName, nodeSelector, allNodes", bp)
    multi = body.get("allowMultipleAllocations")
    if multi is not None:
        _consumable(version, [*bp, "allowMultipleAllocations"], "consumable capacity (allowMultipleAllocations)")
        if not isinstance(multi, bool):
            raise CaseError("allowMultipleAllocations is true or false", [*bp, "allowMultipleAllocations"], value=multi)
    node_allocatable = {}
    if body.get("nodeAllocatableResourceMappings") is not None:
        node_allocatable = _node_allocatable(body["nodeAllocatableResourceMappings"], caps, version,
                                             [*bp, "nodeAllocatableResourceMappings"])
    conditions, failure_conditions, binds = _binding_fields(body, version, bp)
    return Device(name, attrs, caps, _taints(body.get("taints"), version, [*bp, "taints"]), consumes,
                  node_name, sel, all_nodes, multi, policies, conditions, failure_conditions, binds, node_allocatable)


def resource_slice(obj: Mapping[str, Any], version: Version, path: PathT) -> ResourceSlice:
    _, name = _object(obj, path)
    ver = _api_version(obj, version, path)
    sp = [*path, "spec"]
    spec = _map(obj.get("spec"), sp, ("driver", "pool", "nodeName", "nodeSelector", "allNodes", "devices",
                                      "sharedCounters", "perDeviceNodeSelection"))
    shared: tuple = ()
    if spec.get("sharedCounters") is not None:
        _partitionable(version, [*sp, "sharedCounters"], "partitionable devices (sharedCounters)")
        shared = _counter_sets(spec["sharedCounters"], [*sp, "sharedCounters"], "name")
    per_device = spec.get("perDeviceNodeSelection")
    if per_device is not None:
        _partitionable(version, [*sp, "perDeviceNodeSelection"], "per-device node selection")
        if not isinstance(per_device, bool):
            raise CaseError("perDeviceNodeSelection is true or false", [*sp, "perDeviceNodeSelection"],
                            value=per_device)
    pool = _map(spec.get("pool"), [*sp, "pool"], ("name", "generation", "resourceSliceCount"))
    node_name, all_nodes = _node_fields(spec, sp)
    sel = _node_selector(spec["nodeSelector"], [*sp, "nodeSelector"]) if spec.get("nodeSelector") else None
    given = sum((node_name is not None, all_nodes, sel is not None, bool(per_device)))
    # from 1.35 a slice of counter sets (sharedCounters, no devices) serves its pool on every node
    if given != 1 and not (given == 0 and shared and version.minor >= 35):
        raise CaseError("a ResourceSlice has exactly one of nodeName, nodeSelector, allNodes"
                        + (", perDeviceNodeSelection" if version.minor >= 33 else ""), sp)
    count = pool.get("resourceSliceCount", 1)
    gen = pool.get("generation", 0)
    if not isinstance(count, int) or count < 1 or not isinstance(gen, int) or gen < 0:
        raise CaseError("pool.resourceSliceCount must be a positive integer and pool.generation a non-negative one",
                        [*sp, "pool"])
    devices = tuple(_device(d, ver, version, [*sp, "devices", i], bool(per_device))
                    for i, d in enumerate(_list(spec.get("devices"), [*sp, "devices"])))
    if shared and devices and version.minor >= 35:
        raise CaseError("only one of devices and sharedCounters can be set in a ResourceSlice (from 1.35)",
                        [*sp, "sharedCounters"])
    if version.minor < 35:  # 1.33-1.34: a device consumes counters of its own slice
        names = {n for n, _ in shared}
        for i, d in enumerate(devices):
            for cs, _ in d.consumes_counters:
                if cs not in names:
                    raise CaseError(f"counter set {cs!r} is not among this slice's sharedCounters",
                                    [*sp, "devices", i], value=cs)
    return ResourceSlice(
        name=name, driver=_driver(spec.get("driver"), [*sp, "driver"]),
        pool=_pool(pool.get("name"), [*sp, "pool", "name"]), generation=gen, slice_count=count,
        node_name=node_name, node_selector=sel, all_nodes=all_nodes, devices=devices, shared_counters=shared,
        per_device_node_selection=bool(per_device))


# ---- DeviceTaintRule -----------------------------------------------------------------


# v1.36.2's scheduler gives its ResourceSlice tracker the v1beta2 DeviceTaintRule informer, while
# the tracker's handlers and its list of rules take v1alpha3 objects (tracker.go: deviceTaintAdd's
# type check, syncSlice's typedSlice): found with the v1.36.2 oracle, every case with a rule and a
# slice panicked ("interface conversion: interface {} is *v1beta2.DeviceTaintRule, not
# *v1alpha3.DeviceTaintRule", dev/README.md "DeviceTaintRules at 1.36").
V136_RULE_CRASH = ("DeviceTaintRule in 1.36 with DRADeviceTaintRules on crashes kube-scheduler v1.36.2, the 1.36 "
                   "kspread models: its ResourceSlice tracker watches resource.k8s.io/v1beta2 DeviceTaintRules but "
                   "takes them as v1alpha3 objects, so it panics when it syncs a ResourceSlice (on a slice or "
                   "DeviceClass event) while a rule exists, and ignores a rule added after (kubernetes/kubernetes "
                   "#139651, fixed in v1.36.3): there is no placement to compare")


def _rule_gate(version: Version) -> str:
    """The gate that has the scheduler's tracker read DeviceTaintRules at a minor."""
    return "DRADeviceTaints" if version.minor < 35 else "DRADeviceTaintRules"


def device_taint_rule(obj: Mapping[str, Any], version: Version, path: PathT) -> DeviceTaintRule:
    """A DeviceTaintRule (resource.k8s.io/v1alpha3, 1.33-1.35): its deviceSelector
    (1.33-1.34: deviceClassName, driver, pool, device, selectors; 1.35: driver, pool,
    device) and its taint. 1.36 serves it as v1alpha3 and v1beta2, and its scheduler
    crashes on one (below); 1.37's is not read."""
    _, name = _object(obj, path)
    if version.minor < 33:
        raise CaseError(f"1.{version.minor} has no DeviceTaintRule (DRADeviceTaints, from 1.33)", [*path, "kind"])
    if version.minor >= 37:
        raise CaseError(f"DeviceTaintRule in 1.{version.minor} is not modelled by kspread: 1.{version.minor}'s "
                        "ResourceSlice tracker (upstream main, resource.k8s.io/v1) was not read; kspread models "
                        "DeviceTaintRules of 1.33-1.35", [*path, "kind"])
    av = obj.get("apiVersion")
    served = ("v1alpha3", "v1beta2") if version.minor >= 36 else ("v1alpha3",)
    if av not in [f"{GROUP}/{v}" for v in served]:
        raise CaseError(f"DeviceTaintRule in 1.{version.minor} is served as "
                        + " and ".join(f"{GROUP}/{v}" for v in served), [*path, "apiVersion"], value=av)
    gate = _rule_gate(version)
    if not version.gate(gate):
        raise CaseError(f"DeviceTaintRule needs the {gate} feature gate, off by default in 1.{version.minor} (the "
                        f"API server does not serve it): set featureGates: {{{gate}: true}}"
                        + (" with DRADeviceTaints" if gate != "DRADeviceTaints" else ""), [*path, "kind"])
    if version.minor == 36:
        raise CaseError(V136_RULE_CRASH, [*path, "kind"])
    sp = [*path, "spec"]
    spec = _map(obj.get("spec"), sp, ("deviceSelector", "taint"))
    fields = ("driver", "pool", "device") if version.minor >= 35 else \
        ("deviceClassName", "driver", "pool", "device", "selectors")
    dp = [*sp, "deviceSelector"]
    raw_sel = spec.get("deviceSelector")
    if version.minor >= 35 and isinstance(raw_sel, Mapping):
        for k in ("deviceClassName", "selectors"):
            if raw_sel.get(k) is not None:
                raise CaseError(f"1.{version.minor}'s DeviceTaintSelector has no {k} (1.33-1.34 only): select "
                                "by driver, pool and device", [*dp, k])
    sel = _map(raw_sel, dp, fields)
    check = {"driver": lambda v, at, _: _driver(v, at), "pool": lambda v, at, _: _pool(v, at), "device": _label,
             "deviceClassName": _subdomain}
    got = {k: check[k](sel[k], [*dp, k], k) for k in ("deviceClassName", "driver", "pool", "device")
           if sel.get(k) is not None}
    selectors = _selectors(sel.get("selectors"), [*dp, "selectors"])
    for i, expr in enumerate(selectors):
        try:
            compile_selector(expr)
        except CelError as e:
            raise CaseError(f"CEL compile error: {e}", [*dp, "selectors", i, "cel", "expression"]) from None
    if spec.get("taint") is None:
        raise CaseError("a DeviceTaintRule has a taint", [*sp, "taint"])
    # created with the case (clock 0); a step's rule gets the step's clock
    taint = replace(_taint(spec["taint"], version, [*sp, "taint"]), time_added=0)
    return DeviceTaintRule(name, taint, got.get("driver"), got.get("pool"), got.get("device"),
                           got.get("deviceClassName"), selectors, spec.get("deviceSelector") is not None)


# ---- ResourceClaim -------------------------------------------------------------------


def _exact(raw: Mapping[str, Any], name: str, path: PathT, version: Version, sub: bool) -> ExactRequest:
    capacity_requests = None
    if raw.get("capacity") is not None:
        cp = [*path, "capacity"]
        _consumable(version, cp, "consumable capacity (a request's capacity)")
        capacity_requests = {str(k): _quantity(v, [*cp, "requests", k])
                             for k, v in _map(_map(raw["capacity"], cp, ("requests",)).get("requests"),
                                              [*cp, "requests"]).items()}
    cls = _subdomain(raw.get("deviceClassName"), [*path, "deviceClassName"], "deviceClassName")
    mode = raw.get("allocationMode") or EXACT_COUNT
    if mode not in (EXACT_COUNT, ALL):
        raise CaseError("allocationMode is ExactCount or All", [*path, "allocationMode"], value=mode)
    count = raw.get("count")
    if mode == EXACT_COUNT:
        count = 1 if count is None else count
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise CaseError("count must be a positive integer", [*path, "count"], value=count)
    elif count is not None:
        raise CaseError("count is given only with allocationMode ExactCount", [*path, "count"], value=count)
    admin = raw.get("adminAccess")
    if admin is not None:
        if sub:
            raise CaseError("a subrequest has no adminAccess", [*path, "adminAccess"])
        if not isinstance(admin, bool):
            raise CaseError("adminAccess is true or false", [*path, "adminAccess"], value=admin)
        if version.minor >= 32 and not version.gate("DRAAdminAccess"):
            admin = None  # the API server drops the field while the gate is off
    return ExactRequest(name, cls, _selectors(raw.get("selectors"), [*path, "selectors"]), mode,
                        int(count) if mode == EXACT_COUNT and count is not None else 0, admin,
                        _tolerations(raw.get("tolerations"), version, [*path, "tolerations"]), capacity_requests)


def _request(raw: Any, ver: str, version: Version, path: PathT) -> DeviceRequest:
    raw = _map(raw, path, ("name", "firstAvailable", *(_EXACT if ver in _OLD_SHAPE else ("exactly",))))
    name = _label(raw.get("name"), [*path, "name"], "a request name")
    subs = _list(raw.get("firstAvailable"), [*path, "firstAvailable"])
    if subs:
        if version.minor < 33:
            raise CaseError(f"1.{version.minor} has no firstAvailable (prioritized lists, from 1.33)",
                            [*path, "firstAvailable"])
        if len(subs) > 8:
            raise CaseError("firstAvailable has at most 8 subrequests", [*path, "firstAvailable"])
        out = []
        for i, s in enumerate(subs):
            sp = [*path, "firstAvailable", i]
            s = _map(s, sp, ("name", *_EXACT))
            out.append(_exact(s, _str(s.get("name"), [*sp, "name"], "a subrequest name"), sp, version, True))
        return DeviceRequest(name, None, tuple(out))
    if ver in _OLD_SHAPE:
        body = {k: v for k, v in raw.items() if k not in ("name", "firstAvailable")}
        return DeviceRequest(name, _exact(body, name, path, version, False))
    return DeviceRequest(name, _exact(_map(raw.get("exactly"), [*path, "exactly"], _EXACT), name,
                                      [*path, "exactly"], version, False))


_CLASSIC = ("classic DRA (a control-plane controller allocates the claim), which kspread does not model: kspread "
            "models structured parameters")


def claim_spec(spec: Mapping[str, Any], ver: str, version: Version, sp: PathT) -> tuple:
    _map(spec, sp, ("devices", "controller") if ver == "v1alpha3" else ("devices",))
    if spec.get("controller"):
        raise CaseError(f"spec.controller asks for {_CLASSIC}", [*sp, "controller"])
    devices = _map(spec.get("devices"), [*sp, "devices"], ("requests", "constraints", "config"))
    dp = [*sp, "devices"]
    requests = tuple(_request(r, ver, version, [*dp, "requests", i])
                     for i, r in enumerate(_list(devices.get("requests"), [*dp, "requests"])))
    names = [r.name for r in requests]
    constraints = []
    for i, c in enumerate(_list(devices.get("constraints"), [*dp, "constraints"])):
        cp = [*dp, "constraints", i]
        c = _map(c, cp, ("requests", "matchAttribute", "distinctAttribute"))
        distinct = c.get("distinctAttribute") is not None
        if distinct:
            _consumable(version, [*cp, "distinctAttribute"], "consumable capacity (distinctAttribute)")
            if c.get("matchAttribute") is not None:
                raise CaseError("a constraint has matchAttribute or distinctAttribute, not both", cp)
        key = "distinctAttribute" if distinct else "matchAttribute"
        attr = _str(c.get(key), [*cp, key], key)
        if "/" not in attr:
            raise CaseError(f"{key} is a fully qualified name (domain/name)", [*cp, key])
        reqs = tuple(_list(c.get("requests"), [*cp, "requests"]))
        for j, r in enumerate(reqs):
            if r not in names and r.partition("/")[0] not in names:
                raise CaseError(f"constraint names unknown request {r!r}", [*cp, "requests", j], value=r)
        constraints.append(MatchAttribute(attr, reqs, distinct))
    return requests, tuple(constraints)


def resource_claim(obj: Mapping[str, Any], version: Version, path: PathT) -> ResourceClaim:
    meta, name = _object(obj, path)
    ver = _api_version(obj, version, path)
    ns = meta.get("namespace") or "default"
    requests, constraints = claim_spec(_map(obj.get("spec"), [*path, "spec"]), ver, version, [*path, "spec"])
    status = _map(obj.get("status"), [*path, "status"], ("allocation", "reservedFor", "devices"))
    stp = [*path, "status"]
    allocation = None
    if status.get("allocation") is not None:
        ap = [*stp, "allocation"]
        alloc = _map(status["allocation"], ap, ("devices", "nodeSelector", "allocationTimestamp"))
        results = []
        for i, r in enumerate(_list(_map(alloc.get("devices"), [*ap, "devices"], ("results", "config")).get("results"),
                                    [*ap, "devices", "results"])):
            rp = [*ap, "devices", "results", i]
            r = _map(r, rp, ("request", "driver", "pool", "device", "adminAccess", "tolerations", "bindingConditions",
                             "bindingFailureConditions", "shareID", "consumedCapacity"))
            for k in ("bindingConditions", "bindingFailureConditions"):
                if r.get(k):
                    raise CaseError(f"an allocated device with {k}: DynamicResources' Filter checks the claim's "
                                    "device status and its binding timeout against the allocation time "
                                    "(DRADeviceBindingConditions), which kspread does not model", [*rp, k])
            share = r.get("shareID")
            consumed = None
            if r.get("consumedCapacity") is not None:
                consumed = {str(k): _quantity(v, [*rp, "consumedCapacity", k])
                            for k, v in _map(r["consumedCapacity"], [*rp, "consumedCapacity"]).items()}
            results.append(AllocatedDevice(
                _str(r.get("request"), [*rp, "request"], "request"), _str(r.get("driver"), [*rp, "driver"], "driver"),
                _pool(r.get("pool"), [*rp, "pool"]), _label(r.get("device"), [*rp, "device"], "device"),
                True if r.get("adminAccess") else None,
                None if share is None else _str(share, [*rp, "shareID"], "shareID"), consumed,
                tolerations=_tolerations(r.get("tolerations"), version, [*rp, "tolerations"])))
        sel = _node_selector(alloc["nodeSelector"], [*ap, "nodeSelector"]) if alloc.get("nodeSelector") else None
        allocation = Allocation(tuple(results), sel)
    reserved = []
    for i, r in enumerate(_list(status.get("reservedFor"), [*stp, "reservedFor"])):
        r = _map(r, [*stp, "reservedFor", i], ("apiGroup", "resource", "name", "uid"))
        if r.get("resource", "pods") == "pods":
            pn = str(r.get("name"))
            reserved.append(pn if ns == "default" else f"{ns}/{pn}")
        elif r.get("resource") == "podgroups" and r.get("apiGroup") == "scheduling.k8s.io":
            reserved.append(f"PodGroup:{r.get('name')}")  # (DRAWorkloadResourceClaims)
    owner = None
    owner_group = None
    for ref in _list(meta.get("ownerReferences"), [*path, "metadata", "ownerReferences"]):
        if isinstance(ref, Mapping) and ref.get("kind") == "Pod" and ref.get("controller"):
            owner = ref.get("name") if ns == "default" else f"{ns}/{ref.get('name')}"
        if isinstance(ref, Mapping) and ref.get("kind") == "PodGroup" and ref.get("controller") and \
                str(ref.get("apiVersion", "")).startswith("scheduling.k8s.io/"):
            owner_group = str(ref.get("name"))
    annotations = _map(meta.get("annotations"), [*path, "metadata", "annotations"])
    extended = annotations.get("resource.kubernetes.io/extended-resource-claim") == "true"
    return ResourceClaim(ns, name, requests, constraints, allocation, tuple(reserved), owner,
                         bool(meta.get("deletionTimestamp")), extended, owner_pod_group=owner_group)


def claim_template(obj: Mapping[str, Any], version: Version, path: PathT) -> tuple[str, str, tuple]:
    meta, name = _object(obj, path)
    ver = _api_version(obj, version, path)
    sp = [*path, "spec", "spec"]
    spec = _map(_map(obj.get("spec"), [*path, "spec"], ("metadata", "spec")).get("spec"), sp)
    return meta.get("namespace") or "default", name, claim_spec(spec, ver, version, sp)


# ---- pods ------------------------------------------------------------------------------


def pod_claim_refs(raw: Any, at, containers: Any, version: Version, devices: Any = None) -> tuple:
    """A pod's spec.resourceClaims as (name, claim name or None, template name or
    None, None), checked as the API server does, then the shorthand's ``devices`` as
    (name, None, None, requests); containers' resources.claims must name them."""
    if not raw and not devices:
        return ()
    check_enabled(version, at("resourceClaims" if raw else "devices"))
    out: list[tuple] = []
    names: set[str] = set()
    for i, e in enumerate(_list(raw, at("resourceClaims"))):
        p = at("resourceClaims", i)
        e = _map(e, p, ("name", "resourceClaimName", "resourceClaimTemplateName"))
        name = _str(e.get("name"), [*p, "name"], "a pod resource claim's name")
        if name in names:
            raise CaseError(f"duplicate pod resource claim name {name!r}", [*p, "name"])
        names.add(name)
        claim, template = e.get("resourceClaimName"), e.get("resourceClaimTemplateName")
        if (claim is None) == (template is None):
            raise CaseError("exactly one of resourceClaimName and resourceClaimTemplateName is required", p)
        out.append((name, claim, template, None))
    for key, spec in _map(devices, at("devices")).items():
        p = at("devices", key)
        if key in names:
            raise CaseError(f"duplicate pod resource claim name {key!r}", p)
        names.add(str(key))
        out.append((str(key), None, None, (_shorthand_request(str(key), spec, p, version),)))
    for ci, c in enumerate(containers or []):
        if not isinstance(c, Mapping):
            continue
        for j, cl in enumerate(_list(_map(c.get("resources"), []).get("claims"), [])):
            cn = cl.get("name") if isinstance(cl, Mapping) else None
            if cn not in names:
                raise CaseError(f"container claim {cn!r} names no entry of the pod's resourceClaims",
                                at("containers", ci, "resources", "claims", j), value=cn)
    return tuple(out)


def pod_claims(pod_name: str, refs: tuple, pod_group: Any = None) -> tuple[PodClaim, ...]:
    """The pod's claims by name: a template's (or the shorthand's) claim is ``<pod>-<name>``.
    ``pod_group`` (DRAWorkloadResourceClaims: the pod's PodGroup): an entry its
    spec.resourceClaims names alike is the PodGroup's claim (``<podgroup>-<name>`` from a
    template), as the resource claim controller resolves it (handleClaim, BindTo)."""
    out = []
    for n, c, t, inline in refs:
        shared = pod_group.claim_for(n, c, t or None) if pod_group is not None and inline is None else None
        if shared is not None:
            out.append(PodClaim(n, c if c is not None else shared.generated_name(pod_group.name), t or "",
                                pod_group=pod_group.name))
        else:
            out.append(PodClaim(n, c if c is not None else f"{pod_name}-{n}", t or "", inline))
    return tuple(out)


# ---- the shorthand (an extension of the case format) -------------------------------------


def _shorthand_request(name: str, raw: Any, path: PathT, version: Version) -> DeviceRequest:
    """A pod's ``devices: {<claim>: {class, count | all, selector, tolerations}}`` entry: a
    claim with one request named after it."""
    raw = _map(raw, path, ("class", "count", "all", "selector", "tolerations"))
    tols = _tolerations(raw.get("tolerations"), version, [*path, "tolerations"])
    cls = _subdomain(raw.get("class"), [*path, "class"], "class (a DeviceClass's name)")
    if raw.get("all") is not None and raw.get("count") is not None:
        raise CaseError("give count or all, not both", [*path, "all"])
    count = raw.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise CaseError("count must be a positive integer", [*path, "count"], value=count)
    sel = () if raw.get("selector") is None else (
        _selector_of(raw["selector"], [*path, "selector"]),)
    if raw.get("all"):
        return DeviceRequest(name, ExactRequest(name, cls, sel, ALL, 0, tolerations=tols))
    return DeviceRequest(name, ExactRequest(name, cls, sel, EXACT_COUNT, count, tolerations=tols))


def shorthand_classes(raw: Any, version: Version) -> list[DeviceClass]:
    """``deviceClasses: [{name, driver, selector}]``: a DeviceClass that selects the
    driver's devices (``device.driver == "<driver>"``), and the selector when given."""
    out = []
    if raw:
        check_enabled(version, ["deviceClasses"])
    for i, c in enumerate(_list(raw, ["deviceClasses"])):
        p: list[str | int] = ["deviceClasses", i]
        c = _map(c, p, ("name", "driver", "selector", "extendedResourceName"))
        # (a driver's name holds no quote: _driver)
        sels = [f'device.driver == "{_driver(c.get("driver"), [*p, "driver"])}"']
        if c.get("selector") is not None:
            sels.append(_selector_of(c["selector"], [*p, "selector"]))
        ext = _extended_resource_name(c.get("extendedResourceName"), version, [*p, "extendedResourceName"])
        out.append(DeviceClass(_subdomain(c.get("name"), [*p, "name"], "a name"), tuple(sels), ext))
    return out


def _shorthand_attribute(raw: Any, path: PathT, version: Version) -> Attribute:
    if isinstance(raw, bool):
        return Attribute(BOOL, raw)
    if isinstance(raw, int):
        _check_value(INT, raw, path)
        return Attribute(INT, raw)
    if isinstance(raw, str):
        return Attribute(STRING, raw)
    if isinstance(raw, list):
        # a list attribute (1.36, DRAListTypeAttributes): ints, bools or strings by its items
        kinds = {BOOL if isinstance(x, bool) else INT if isinstance(x, int) else STRING if isinstance(x, str)
                 else "" for x in raw}
        if len(kinds) != 1 or "" in kinds:
            raise CaseError("a list attribute's items are all integers, all booleans or all strings "
                            "(versions: {versions: [...]})", path, value=raw)
        kind = {BOOL: BOOLS, INT: INTS, STRING: STRINGS}[kinds.pop()]
        return _attribute({kind: raw}, path, version)
    return _attribute(raw, path, version)


def node_slices(node: str, raw: Any, at, version: Version) -> list[ResourceSlice]:
    """A node's ``devices: [{driver, count, name, pool, attributes, capacity, taints}]``: the
    ResourceSlices its drivers publish, one per driver and pool (pool: the node's
    name), devices ``<name>-0`` .. ``<name>-<count-1>`` (name: ``device``)."""
    if not raw:
        return []
    check_enabled(version, at("devices"))
    pools: dict[tuple[str, str], list[Device]] = {}
    for i, d in enumerate(_list(raw, at("devices"))):
        p = at("devices", i)
        d = _map(d, p, ("driver", "count", "name", "pool", "attributes", "capacity", "taints"))
        driver = _driver(d.get("driver"), [*p, "driver"])
        count = d.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise CaseError("count must be a positive integer", [*p, "count"], value=count)
        prefix = _str(d.get("name", "device"), [*p, "name"], "name")
        attrs = {str(k): _shorthand_attribute(v, [*p, "attributes", k], version)
                 for k, v in _map(d.get("attributes"), [*p, "attributes"]).items()}
        _attribute_values(attrs, [*p, "attributes"])
        caps = {str(k): _quantity(v, [*p, "capacity", k])
                for k, v in _map(d.get("capacity"), [*p, "capacity"]).items()}
        _attributes_and_capacities(attrs, caps, p)
        taints = _taints(d.get("taints"), version, [*p, "taints"])
        devices = pools.setdefault((driver, _pool(d.get("pool", node), [*p, "pool"])), [])
        start = sum(1 for x in devices if x.name.startswith(prefix + "-"))
        err = label_name_error(f"{prefix}-{start + count - 1}")
        if err:  # (the last device's name: the longest)
            raise CaseError(f"the device name {prefix}-{start + count - 1}: {err}", [*p, "name"], value=prefix)
        for j in range(count):
            devices.append(Device(f"{prefix}-{start + j}", attrs, caps, taints))
    return [ResourceSlice(f"{node}-{driver}-{pool}", driver, pool, 0, 1, node_name=node, devices=tuple(devs))
            for (driver, pool), devs in pools.items()]


def build_devices(items: Sequence[tuple[Mapping[str, Any], PathT]], version: Version,
                  pods: Sequence[Pod], classes: Sequence[DeviceClass] = (),
                  slices: Sequence[ResourceSlice] = (), pod_groups: Mapping | None = None) -> DeviceObjects | None:
    """The case's device objects (``objects``, and the shorthand's ``classes`` and nodes'
    ``slices``), with a claim made for each pod's template or shorthand entry (as the
    resource claim controller would, unless the case has a claim of that name), and for
    each template entry of a PodGroup's resourceClaims (``pod_groups``,
    DRAWorkloadResourceClaims: ``<podgroup>-<name>``, owned by the PodGroup)."""
    group_claims = [(pg, c) for pg in (pod_groups or {}).values() for c in pg.resource_claims]
    if not items and not classes and not slices and not any(p.resource_claims for p in pods) and not group_claims:
        return None
    if items:
        check_enabled(version, items[0][1])
    objs = DeviceObjects()
    for dc in classes:
        objs.classes[dc.name] = dc
    objs.slices.extend(slices)
    templates: dict[tuple[str, str], tuple] = {}
    seen: dict[tuple[str, str, str], PathT] = {}
    for obj, path in items:
        kind = obj.get("kind")
        meta = obj.get("metadata") or {}
        okey = (str(kind), str(meta.get("namespace") or "default"), str(meta.get("name")))
        if okey in seen:
            raise CaseError(f"{kind} {okey[2]!r} is defined twice", [*path, "metadata", "name"])
        seen[okey] = path
        if kind == "DeviceClass":
            dc = device_class(obj, version, path)
            if dc.name in objs.classes:
                raise CaseError(f"DeviceClass {dc.name!r} is defined twice", [*path, "metadata", "name"])
            objs.classes[dc.name] = dc
        elif kind == "ResourceSlice":
            objs.slices.append(resource_slice(obj, version, path))
        elif kind == "DeviceTaintRule":
            objs.taint_rules.append(device_taint_rule(obj, version, path))
        elif kind == "ResourceClaim":
            c = resource_claim(obj, version, path)
            objs.claims[(c.namespace, c.name)] = c
            objs.declared.add((c.namespace, c.name))
        else:
            ns, name, spec = claim_template(obj, version, path)
            templates[(ns, name)] = spec
    objs.templates = templates
    for p in pods:
        for pc in p.resource_claims:
            key = (p.namespace, pc.claim_name)
            template = pc.template
            if pc.inline is not None:
                if key not in objs.claims:
                    objs.claims[key] = ResourceClaim(p.namespace, pc.claim_name, pc.inline, owner_pod=p.key)
                else:
                    objs.claims[key] = ResourceClaim(**{**_fields(objs.claims[key]), "owner_pod": p.key})
                continue
            if not template:
                if key not in objs.claims:
                    raise CaseError(
                        f"pod {p.key} uses ResourceClaim {pc.claim_name!r}, which the case does not declare: "
                        f'upstream\'s PreEnqueue holds such a pod (could not find ResourceClaim '
                        f'"{p.namespace}/{pc.claim_name}"), which kspread does not model', ["objects"])
                continue
            existing = objs.claims.get(key)
            if existing is not None:
                if pc.pod_group:  # the PodGroup's claim (the case gives it, or an earlier pod made it)
                    objs.claims[key] = ResourceClaim(**{**_fields(existing), "owner_pod_group": pc.pod_group})
                else:
                    objs.claims[key] = ResourceClaim(**{**_fields(existing), "owner_pod": p.key})
                continue
            tspec = templates.get((p.namespace, template))
            if tspec is None:
                raise CaseError(
                    f"pod {p.key} uses ResourceClaimTemplate {template!r}, which the case does not declare: its "
                    "claim cannot be created, and upstream's PreEnqueue holds the pod", ["objects"])
            if pc.pod_group:
                # the resource claim controller's claim for the PodGroup's template entry, owned by the PodGroup
                objs.claims[key] = ResourceClaim(p.namespace, pc.claim_name, tspec[0], tspec[1],
                                                 owner_pod_group=pc.pod_group)
            else:
                objs.claims[key] = ResourceClaim(p.namespace, pc.claim_name, tspec[0], tspec[1], owner_pod=p.key)
    for pg, gc in group_claims:
        if gc.template is None or (pg.namespace, gc.generated_name(pg.name)) in objs.claims:
            continue
        tspec = templates.get((pg.namespace, gc.template))
        if tspec is None:
            raise CaseError(
                f"PodGroup {pg.namespace}/{pg.name} names ResourceClaimTemplate {gc.template!r} (resourceClaims "
                f"entry {gc.name!r}), which the case does not declare: the resource claim controller cannot make "
                "its claim, which kspread does not model", ["objects"])
        objs.claims[(pg.namespace, gc.generated_name(pg.name))] = ResourceClaim(
            pg.namespace, gc.generated_name(pg.name), tspec[0], tspec[1], owner_pod_group=pg.name)
    _extended_claims(objs, version, pods)
    for p in pods:
        if p.node_name is None:
            continue
        for pc in p.resource_claims:
            c = objs.claims[(p.namespace, pc.claim_name)]
            # the controller's syncPod reserves an allocated claim for a bound pod (BindTo: its
            # PodGroup for a PodGroup's claim) unless it is reserved for it (or its PodGroup)
            ref = f"PodGroup:{pc.pod_group}" if pc.pod_group else p.key
            group_ref = f"PodGroup:{p.scheduling_group}" if version.gate("DRAWorkloadResourceClaims") \
                and p.scheduling_group else None
            if c.allocation is not None and p.key not in c.reserved_for and group_ref not in c.reserved_for:
                objs.claims[(p.namespace, pc.claim_name)] = ResourceClaim(
                    **{**_fields(c), "reserved_for": (*c.reserved_for, ref)})
    return objs


def _extended_claims(objs: DeviceObjects, version: Version, pods: Sequence[Pod]) -> None:
    """DRAExtendedResource: the claims DynamicResources would make for pending pods'
    extended resources backed by a DeviceClass (named for ``expect.allocations``). A
    pending pod whose claim exists already (from an earlier cycle whose binding failed)
    is refused: upstream's Filter rejects it and PostFilter deletes the claim."""
    if version.minor < 35 or not version.gate("DRAExtendedResource") or not objs.classes:
        return
    from kspread.engine.resources import pod_requests

    backed = objs.extended_resources
    for p in pods:
        if p.node_name is not None:
            continue
        if not any(q and is_dra_extended_resource_name(r) and r in backed for r, q in pod_requests(p, version).items()):
            continue
        if any(c.extended_resources and c.owner_pod == p.key for c in objs.claims.values()):
            raise CaseError(f"pending pod {p.key} already has a claim for its extended resources: upstream's Filter "
                            "rejects it (\"cannot schedule extended resource claim\") and PostFilter deletes the "
                            "claim, which kspread does not model", ["objects"])
        name = extended_claim_name(p.name)
        objs.extended_claims.add(name if p.namespace == "default" else f"{p.namespace}/{name}")


def _fields(c: ResourceClaim) -> dict[str, Any]:
    return {f: getattr(c, f) for f in c.__slots__}
