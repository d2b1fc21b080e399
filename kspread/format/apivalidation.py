"""The API server's validation of the objects a case describes.

A case states a cluster the API server would have admitted, so what
``pkg/apis/core/validation`` (and its policy / scheduling / apps siblings) refuses
is refused here too, in ``objects:`` manifests and in the shorthand alike: object
names, taints, tolerations, containers and their ports, resource names and integer
quantities, pod affinity terms, PodDisruptionBudget amounts and PriorityClass
names. The checks run on the shorthand form after the schema (which already bounds
the int32 fields and the enums); a manifest's fields are mapped back to where they
were written, so an error names the manifest's line.

Messages follow upstream's wording. The API server's defaulting that changes what
the scheduler sees is applied where the builder reads the field (a container's
requests default from its limits).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from kspread.engine.labels import DNS1123_SUBDOMAIN, label_value_error, qualified_name_error
from kspread.engine.quantity import QuantityError, parse_quantity
from kspread.errors import CaseError

At = Callable[..., list]

# ---- names (k8s.io/apimachinery/pkg/util/validation) ---------------------------------------------

_SUBDOMAIN = DNS1123_SUBDOMAIN
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")

_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def subdomain_error(name: str) -> str | None:
    """IsDNS1123Subdomain: node, pod, PDB, PriorityClass and most workload names."""
    if len(name) > 253:
        return "must be no more than 253 characters"
    return None if _SUBDOMAIN.match(name) else _SUBDOMAIN_MSG


@lru_cache(maxsize=4096)
def label_name_error(name: str) -> str | None:
    """IsDNS1123Label: namespace and container names."""
    if len(name) > 63:
        return "must be no more than 63 characters"
    return None if _LABEL.match(name) else _LABEL_MSG


@lru_cache(maxsize=4096)
def dns1035_error(name: str) -> str | None:
    """IsDNS1035Label: Service names."""
    if len(name) > 63:
        return "must be no more than 63 characters"
    return None if _DNS1035.match(name) else _DNS1035_MSG


def _name(check: Callable[[str], str | None], name: str, at: At, *field: Any) -> None:
    err = check(name)
    if err:
        raise CaseError(err, at(*field), value=name)


OWNER_NAME_CHECKS: dict[str, Callable[[str], str | None]] = {"Service": dns1035_error, "ReplicationController": subdomain_error,
                     "ReplicaSet": subdomain_error, "StatefulSet": subdomain_error}

# ---- resources (pkg/apis/core/helper, ValidateResourceRequirements) ------------------------------

_STANDARD_CONTAINER = ("cpu", "memory", "ephemeral-storage")
# IsStandardResourceName: container resources, pods and the quota names
_STANDARD = frozenset((
    *_STANDARD_CONTAINER, "pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
    "configmaps", "persistentvolumeclaims", "storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "services.nodeports", "services.loadbalancers",
))


def _native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    """IsExtendedResourceName: a domain-prefixed name outside kubernetes.io that also
    makes a valid quota name (``requests.<name>``)."""
    if _native(name) or name.startswith("requests."):
        return False
    return qualified_name_error("requests." + name) is None


def _integer_resource(name: str) -> bool:
    return name == "pods" or is_extended(name)


@lru_cache(maxsize=1024)
def resource_name_error(name: str, container: bool) -> str | None:
    """validateResourceName, and validateContainerResourceName with ``container``."""
    err = qualified_name_error(name)
    if err:
        return err
    single = "/" not in name
    if single and not (name in _STANDARD or name.startswith("hugepages-")):
        return "must be a standard resource type or fully qualified"
    if container:
        if single and not (name in _STANDARD_CONTAINER or name.startswith("hugepages-")):
            return "must be a standard resource for containers"
        if not single and not _native(name) and not is_extended(name):
            return "doesn't follow extended resource name standard"
    return None


def _integer_quantity(raw: Any, path: list) -> None:
    """ValidateResourceQuantityValue's integer rule for integer resources (the
    non-negative one is the quantity parser's)."""
    try:
        q = parse_quantity(raw)
    except QuantityError:
        return  # the builder reports the malformed quantity
    if q.denominator != 1:
        raise CaseError("must be an integer", path, value=raw)


@lru_cache(maxsize=1024)
def _resource_rule(name: str, container: bool) -> tuple[str | None, bool]:
    return resource_name_error(name, container), _integer_resource(name)


def check_resource_list(raw: Mapping[str, Any] | None, at: At, field: tuple, container: bool) -> None:
    for name, q in (raw or {}).items():
        err, integer = _resource_rule(name, container)
        if err:
            raise CaseError(err, at(*field, name), value=name)
        if integer:
            _integer_quantity(q, at(*field, name))


def check_node_resources(raw: Mapping[str, Any] | None, at: At) -> None:
    """A node's allocatable: upstream validates only the quantities."""
    for name, q in (raw or {}).items():
        if _integer_resource(name):
            _integer_quantity(q, at("allocatable", name))


# ---- objects ---------------------------------------------------------------------------------------


def check_node(raw: Mapping[str, Any], at: At) -> None:
    _name(subdomain_error, raw["name"], at, "name")
    check_node_resources(raw.get("allocatable"), at)
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(raw.get("taints") or ()):
        key = t.get("key", "")
        err = qualified_name_error(key)
        if err:
            raise CaseError(err, at("taints", i, "key"), value=key)
        err = label_value_error(t.get("value", ""))
        if err:
            raise CaseError(err, at("taints", i, "value"), value=t.get("value"))
        pair = (key, t.get("effect", ""))
        if pair in seen:
            raise CaseError(f"Duplicate value: taints must be unique by key and effect pair (key {key!r}, "
                            f"effect {pair[1]})", at("taints", i))
        seen.add(pair)


def check_toleration(t: Mapping[str, Any], path: list) -> None:
    """validateTolerations for the Equal and Exists operators (Lt / Gt are the builder's,
    with their feature gate)."""
    key = t.get("key", "")
    op = t.get("operator", "Equal")
    if key:
        err = qualified_name_error(key)
        if err:
            raise CaseError(err, [*path, "key"], value=key)
    elif op != "Exists":
        raise CaseError('operator must be Exists when `key` is empty, which means "match all values and all keys"',
                        [*path, "operator"], value=op)
    if t.get("tolerationSeconds") is not None and t.get("effect", "") != "NoExecute":
        raise CaseError("effect must be 'NoExecute' when `tolerationSeconds` is set", [*path, "effect"],
                        value=t.get("effect", ""))
    if op == "Equal":
        err = label_value_error(t.get("value", ""))
        if err:
            raise CaseError(err, [*path, "value"], value=t.get("value"))
    elif op == "Exists" and t.get("value"):
        raise CaseError("value must be empty when `operator` is 'Exists'", [*path, "value"], value=t["value"])


def _check_port(p: Mapping[str, Any], path: list) -> None:
    for key, required in (("containerPort", True), ("hostPort", False)):
        v = p.get(key)
        if v is None or (v == 0 and not required):
            continue
        if v == 0:
            raise CaseError("Required value", [*path, key])
        if not 1 <= v <= 65535:
            raise CaseError("must be between 1 and 65535, inclusive", [*path, key], value=v)


def check_containers(raw: Mapping[str, Any], at: At) -> None:
    """Container names (DNS-1123 labels, unique across containers and init containers),
    ports, host ports unique per protocol and host IP among the containers, resource
    names and integer amounts; an extended resource's request equals its limit
    (extended resources cannot be overcommitted)."""
    names: dict[str, list] = {}
    host_ports: set[tuple[str, str, int]] = set()
    for key in ("containers", "initContainers"):
        for i, c in enumerate(raw.get(key) or ()):
            path = at(key, i)
            name = c.get("name")
            if name is None:
                raise CaseError("Required value: a container needs a name", [*path, "name"])
            _name(label_name_error, name, lambda *f: [*path, *f], "name")  # noqa: B023 - called at once
            if name in names:
                raise CaseError(f"Duplicate value: container name {name!r} is used twice", [*path, "name"],
                                value=name)
            names[name] = path
            for j, p in enumerate(c.get("ports") or ()):
                _check_port(p, [*path, "ports", j])
                hp = p.get("hostPort") or 0
                if hp and key == "containers":
                    k = (p.get("protocol") or "TCP", p.get("hostIP") or "", hp)
                    if k in host_ports:
                        raise CaseError(f"Duplicate value: host port {k[0]}/{k[1]}/{hp} is used twice",
                                        [*path, "ports", j, "hostPort"], value=hp)
                    host_ports.add(k)
            res = c.get("resources") or {}
            requests, limits = res.get("requests") or {}, res.get("limits") or {}
            check_resource_list(requests, at, (key, i, "resources", "requests"), True)
            check_resource_list(limits, at, (key, i, "resources", "limits"), True)
            _check_requests_within_limits(requests, limits, "limits" in res, [*path, "resources"])
            _check_hugepages_beside_cpu_or_memory(requests, limits, [*path, "resources"])


def overcommit_allowed(name: str) -> bool:
    """IsOvercommitAllowed: a native resource other than hugepages; an extended
    resource's or a hugepage's request must equal its limit."""
    return _native(name) and not name.startswith("hugepages-")


def _check_requests_within_limits(requests: Mapping[str, Any], limits: Mapping[str, Any], has_limits: bool,
                                  path: list) -> None:
    """ValidateResourceRequirements: a request no greater than its limit, and equal to
    it for a resource that cannot be overcommitted (which then needs a limit, when the
    container gives limits at all: kspread's shorthand gives none)."""
    for rname, q in requests.items():
        if rname not in limits:
            if has_limits and not overcommit_allowed(rname):
                raise CaseError("Limit must be set for non overcommitable resources", [*path, "limits"], value=rname)
            continue
        try:
            request, limit = parse_quantity(q), parse_quantity(limits[rname])
        except QuantityError:
            continue  # the builder reports the malformed quantity
        if request != limit and not overcommit_allowed(rname):
            raise CaseError(f"must be equal to {rname} limit of {limits[rname]}", [*path, "requests", rname], value=q)
        if request > limit:
            raise CaseError(f"must be less than or equal to {rname} limit of {limits[rname]}",
                            [*path, "requests", rname], value=q)


def _check_hugepages_beside_cpu_or_memory(requests: Mapping[str, Any], limits: Mapping[str, Any], path: list
                                          ) -> None:
    """ValidateResourceRequirements: hugepages only beside cpu or memory."""
    names = {*requests, *limits}
    if not names & {"cpu", "memory"} and any(n.startswith("hugepages-") for n in names):
        raise CaseError("HugePages require cpu or memory", path)


def _check_affinity_term(term: Mapping[str, Any], path: list) -> None:
    tk = term.get("topologyKey", "")
    if not tk:
        raise CaseError("Required value: can not be empty", [*path, "topologyKey"], value=tk)
    err = qualified_name_error(tk)
    if err:
        raise CaseError(err, [*path, "topologyKey"], value=tk)
    for j, ns in enumerate(term.get("namespaces") or ()):
        _name(label_name_error, ns, lambda *f: [*path, *f], "namespaces", j)


def check_affinity(raw: Mapping[str, Any] | None, path: list) -> None:
    if not raw:
        return
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    na = raw.get("nodeAffinity") or {}
    req = na.get(req_key)
    if req is not None and not req.get("nodeSelectorTerms"):
        raise CaseError("Required value: must have at least one node selector term",
                        [*path, "nodeAffinity", req_key, "nodeSelectorTerms"])
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = raw.get(kind) or {}
        for i, t in enumerate(rules.get(req_key) or ()):
            _check_affinity_term(t, [*path, kind, req_key, i])
        for i, t in enumerate(rules.get(pref_key) or ()):
            _check_affinity_term(t.get("podAffinityTerm") or {}, [*path, kind, pref_key, i, "podAffinityTerm"])


def check_pod(raw: Mapping[str, Any], at: At) -> None:
    check_pod_name(raw, at)
    check_pod_spec(raw, at)


def check_pod_name(raw: Mapping[str, Any], at: At) -> None:
    """The first of ``check_pod``'s checks: the pod's name."""
    name = raw["name"]
    if "replicas" in raw and raw["replicas"] is not None:
        # the generated names are name-0 ... name-(n-1) (`max`: as many as fit, 5 digits at most)
        name = f"{name}-{raw['replicas'] - 1 if isinstance(raw['replicas'], int) else 99999}"
    if not pod_name_ok(name):
        _name(subdomain_error, name, at, "name")


def pod_name_ok(name: str) -> bool:
    """Whether a pod name passes ``check_pod_name`` (a DNS-1123 subdomain)."""
    return len(name) <= 253 and _SUBDOMAIN.match(name) is not None


def check_pod_spec(raw: Mapping[str, Any], at: At) -> None:
    """The rest of ``check_pod``: what does not depend on the pod's name, node,
    nominated node, start time or labels."""
    if "namespace" in raw and raw["namespace"] is not None:
        _name(label_name_error, raw["namespace"], at, "namespace")
    if "requests" in raw:
        check_resource_list(raw["requests"], at, ("requests",), True)
        _check_hugepages_beside_cpu_or_memory(raw["requests"] or {}, {}, at("requests"))
    if "overhead" in raw:
        # validateOverhead validates it as the limits of a container
        check_resource_list(raw["overhead"], at, ("overhead",), True)
        _check_hugepages_beside_cpu_or_memory({}, raw["overhead"] or {}, at("overhead"))
    if "containers" in raw or "initContainers" in raw:
        check_containers(raw, at)
    if "tolerations" in raw:
        for i, t in enumerate(raw["tolerations"] or ()):
            check_toleration(t, at("tolerations", i))
    if raw.get("affinity"):
        check_affinity(raw["affinity"], at("affinity"))
    ctrl = raw.get("controller")
    if isinstance(ctrl, Mapping) and not ctrl.get("name"):
        # validateOwnerReference (a manifest's ownerReferences entry)
        raise CaseError("name must not be empty", at("controller", "name"), value=ctrl.get("name"))


def check_pdb(raw: Mapping[str, Any], at: At) -> None:
    """PDB name and amounts; an int or a percentage no greater than 100%
    (ValidatePositiveIntOrPercent, IsNotMoreThan100Percent)."""
    _name(subdomain_error, raw["name"], at, "name")
    if raw.get("namespace") is not None:
        _name(label_name_error, raw["namespace"], at, "namespace")
    for key in ("minAvailable", "maxUnavailable"):
        v = raw.get(key)
        if isinstance(v, str):
            if not re.fullmatch(r"[0-9]+%", v):
                raise CaseError("must be an integer or percentage (e.g '5%')", at(key), value=v)
            if int(v[:-1]) > 100:
                raise CaseError("must not be greater than 100%", at(key), value=v)
        elif isinstance(v, int) and v < 0:
            raise CaseError("must be greater than or equal to 0", at(key), value=v)


HIGHEST_USER_PRIORITY = 1_000_000_000


def check_global_default(raw: Mapping[str, Any], at: At, default: str | None) -> str | None:
    """Priority admission (plugin/pkg/admission/priority) lets one PriorityClass have
    globalDefault: true; ``default`` is the one seen so far. Returns it after ``raw``."""
    if not raw.get("globalDefault"):
        return default
    if default is not None:
        raise CaseError(f"PriorityClass {default} is already marked as default. Only one default can exist",
                        at("globalDefault"), value=raw["name"])
    return str(raw["name"])


def check_priority_class(raw: Mapping[str, Any], at: At) -> None:
    _name(subdomain_error, raw["name"], at, "name")
    if raw["name"].startswith("system-"):
        raise CaseError("priority class names with 'system-' prefix are reserved", at("name"), value=raw["name"])
    if raw["value"] > HIGHEST_USER_PRIORITY:
        raise CaseError(f"the value of a user PriorityClass must be no greater than {HIGHEST_USER_PRIORITY}",
                        at("value"), value=raw["value"])


def check_owner(raw: Mapping[str, Any], at: At) -> None:
    _name(OWNER_NAME_CHECKS[raw["kind"]], raw["name"], at, "name")
    if raw.get("namespace") is not None:
        _name(label_name_error, raw["namespace"], at, "namespace")


def check_namespace(raw: Mapping[str, Any], at: At) -> None:
    _name(label_name_error, raw["name"], at, "name")
