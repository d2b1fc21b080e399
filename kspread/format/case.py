"""Build a runnable ``Case`` from one validated case document.

The JSON Schema (``schemas/case.schema.json``) has already checked the shape;
this module checks what a schema cannot (references between objects, label and
quantity syntax, admission) and converts the shorthand and raw Kubernetes objects
into ``kspread.engine.model`` values. Every error names the field path; the loader adds
the file and line.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kspread.engine.framework.args import decode_profile_args
from kspread.engine.framework.profile import Profile, default_profile, profile_from_case
from kspread.engine.labels import (
    GT,
    IN,
    LABEL_SELECTOR_OPERATORS,
    LT,
    NOT_IN,
    Requirement,
    label_value_error,
    parse_label_selector,
    parse_labels,
    parse_selector_requirement,
    qualified_name_error,
    valid_labels_dict,
)
from kspread.engine.model import (
    BETA_ZONE_LABEL,
    DEFAULT_PODS,
    HOSTNAME_LABEL,
    PREEMPT_LOWER_PRIORITY,
    UNLIMITED,
    ZONE_LABEL,
    Affinity,
    Cluster,
    Container,
    ContainerPort,
    ImageState,
    Namespace,
    Node,
    NodeAffinity,
    NodeSelectorTerm,
    OwnerRef,
    Pod,
    PodAffinityRules,
    PodAffinityTerm,
    PodDisruptionBudget,
    PreferredSchedulingTerm,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    new_pod,
)
from kspread.engine.plugins.interpodaffinity import match_label_keys_enabled
from kspread.engine.versions import Version, make_version, resource_scoring
from kspread.errors import CaseError, PathT, did_you_mean
from kspread.format import apivalidation
from kspread.format.devices import (
    build_devices,
    check_claim_statuses_named,
    node_allocatable_claim_statuses,
    node_slices,
    pod_claim_refs,
    pod_claims,
    shorthand_classes,
)
from kspread.format.labelkeys import affinity_terms, key_conflicts
from kspread.format.objects import POD_TEMPLATE_HASH, convert_object, pod_template_hash, unmodelled_volumes
from kspread.format.resize import resize_status, resource_amounts
from kspread.format.schema import check_args_shape, validate
from kspread.format.shapes import freeze
from kspread.format.storage import add_object, add_pod_claims, claims_shorthand, pod_volumes
from kspread.format.workloads import (
    composite_pod_groups,
    pod_groups,
    scheduling_group,
    workload_ref,
    workloads,
)

SYSTEM_PRIORITY_CLASSES = {
    "system-cluster-critical": 2_000_000_000,
    "system-node-critical": 2_000_001_000,
}
# Bound pods without a startTime started in list order, one second apart, from here.
DEFAULT_START_EPOCH = 946_684_800.0  # 2000-01-01T00:00:00Z


@dataclass
class Case:
    name: str
    version: Version
    profile: Profile
    cluster: Cluster
    incoming: list[Pod]
    is_sequence: bool
    # a `schedule` with steps or `replicas: max`: its pods, steps and max entries in order
    # (kspread.engine.steps); None otherwise
    timeline: list[Any] | None
    # ``expect`` is the one part of the document kept after building: the parsed tree
    # (every pod as written) is not kept alive by the case
    expect: Mapping[str, Any]
    description: str = ""
    source: str = ""
    tags: list[str] = field(default_factory=list)
    # kspread's extension: the case is not run (skip) or is expected to fail (xfail), with the reason
    skip: str | None = None
    xfail: str | None = None
    # nodes whose `allocatable` is given without `pods` (they allow 0 pods), named in
    # failure reports when that is why nothing fits
    nodes_without_pods: frozenset[str] = frozenset()


# ---- small parsers -----------------------------------------------------------------


_resources = resource_amounts


def _time(raw: Any, path: PathT) -> float:
    if isinstance(raw, _dt.datetime):
        t = raw
    else:
        try:
            t = _dt.datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
        except ValueError:
            raise CaseError("not an RFC 3339 time like 2024-01-01T00:00:00Z", path, value=raw) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    return t.timestamp()


def _node_selector_term(raw: Mapping[str, Any], path: PathT) -> NodeSelectorTerm:
    ops = (*LABEL_SELECTOR_OPERATORS, GT, LT)
    exprs = tuple(
        parse_selector_requirement(e, [*path, "matchExpressions", i], ops)
        for i, e in enumerate(raw.get("matchExpressions") or [])
    )
    fields = tuple(_node_field_requirement(e, [*path, "matchFields", i])
                   for i, e in enumerate(raw.get("matchFields") or []))
    return NodeSelectorTerm(exprs, fields)


def node_selector_terms(raws: list, path: PathT) -> tuple[NodeSelectorTerm, ...]:
    """A list of nodeSelectorTerms (a PersistentVolume's node affinity)."""
    out = []
    for i, t in enumerate(raws):
        if not isinstance(t, Mapping):
            raise CaseError("a node selector term must be a mapping with matchExpressions/matchFields", [*path, i],
                            value=t)
        out.append(_node_selector_term(t, [*path, i]))
    return tuple(out)


def _node_field_requirement(raw: Any, path: PathT) -> Requirement:
    """A matchFields entry of a pod's node affinity, validated as the API server's
    ValidateNodeFieldSelectorRequirement does: In or NotIn with exactly one value, the
    key metadata.name, the value a node name."""
    if not isinstance(raw, Mapping):
        raise CaseError("a selector requirement must be a mapping with key, operator, values", path, value=raw)
    for k in raw:
        if k not in ("key", "operator", "values"):
            raise CaseError(f"unknown field {k!r} in a selector requirement"
                            + did_you_mean(k, ("key", "operator", "values")), [*path, str(k)])
    values = raw.get("values") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise CaseError("must be a list of strings", [*path, "values"], value=values)
    op = raw.get("operator")
    if op not in (IN, NOT_IN):
        raise CaseError("not a valid selector operator", [*path, "operator"], value=op)
    if len(values) != 1:
        raise CaseError("must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                        [*path, "values"], value=values)
    key = raw.get("key")
    if key != "metadata.name":
        raise CaseError("not a valid field selector key", [*path, "key"], value=key)
    err = apivalidation.subdomain_error(values[0])
    if err:
        raise CaseError(err, [*path, "values", 0], value=values[0])
    return Requirement(key, op, (values[0],))


def _pod_affinity_term(raw: Mapping[str, Any], path: PathT) -> PodAffinityTerm:
    return PodAffinityTerm(
        label_selector=parse_label_selector(raw.get("labelSelector"), [*path, "labelSelector"]),
        namespaces=tuple(raw.get("namespaces") or ()),
        topology_key=raw["topologyKey"],
        namespace_selector=parse_label_selector(raw.get("namespaceSelector"), [*path, "namespaceSelector"]),
        match_label_keys=tuple(raw.get("matchLabelKeys") or ()),
        mismatch_label_keys=tuple(raw.get("mismatchLabelKeys") or ()),
    )


def _pod_affinity_rules(raw: Mapping[str, Any] | None, path: PathT) -> PodAffinityRules | None:
    if raw is None:
        return None
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    return PodAffinityRules(
        required=tuple(_pod_affinity_term(t, [*path, req_key, i]) for i, t in enumerate(raw.get(req_key) or [])),
        preferred=tuple(
            WeightedPodAffinityTerm(t["weight"], _pod_affinity_term(t["podAffinityTerm"],
                                                                    [*path, pref_key, i, "podAffinityTerm"]))
            for i, t in enumerate(raw.get(pref_key) or [])
        ),
    )


def _affinity(raw: Mapping[str, Any] | None, path: PathT) -> Affinity | None:
    if not raw:
        return None
    na = None
    if raw.get("nodeAffinity") is not None:
        r = raw["nodeAffinity"]
        p = [*path, "nodeAffinity"]
        req = r.get("requiredDuringSchedulingIgnoredDuringExecution")
        required = None
        if req is not None:
            required = tuple(
                _node_selector_term(t, [*p, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", i])
                for i, t in enumerate(req.get("nodeSelectorTerms") or [])
            )
        preferred = tuple(
            PreferredSchedulingTerm(
                t["weight"],
                _node_selector_term(t["preference"],
                                    [*p, "preferredDuringSchedulingIgnoredDuringExecution", i, "preference"]),
            )
            for i, t in enumerate(r.get("preferredDuringSchedulingIgnoredDuringExecution") or [])
        )
        na = NodeAffinity(required, preferred)
    return Affinity(
        node_affinity=na,
        pod_affinity=_pod_affinity_rules(raw.get("podAffinity"), [*path, "podAffinity"]),
        pod_anti_affinity=_pod_affinity_rules(raw.get("podAntiAffinity"), [*path, "podAntiAffinity"]),
    )


GATE_SELECTOR_MERGE = "MatchLabelKeysInPodTopologySpreadSelectorMerge"


def selector_merge(version: Version) -> bool:
    """Whether the API server merges a spread constraint's matchLabelKeys into its selector
    when it creates a pod, and validates the merged selector (from 1.34; labelkeys.py)."""
    return (version.minor >= 34 and version.gate(GATE_SELECTOR_MERGE)
            and version.gate("MatchLabelKeysInPodTopologySpread"))


def _tsc(raw: Mapping[str, Any], path: PathT, version: Version,
         if_labelled: list[tuple[int, str]]) -> TopologySpreadConstraint:
    """One topologySpreadConstraint, validated as the API server validates it. A key whose
    refusal depends on the pod's labels (from 1.34) goes to ``if_labelled``."""
    keys = tuple(raw.get("matchLabelKeys") or ())
    err = qualified_name_error(raw["topologyKey"]) if raw["topologyKey"] else "topologyKey is required"
    if err:
        raise CaseError(err, [*path, "topologyKey"], value=raw["topologyKey"])
    if raw.get("minDomains") is not None and raw["whenUnsatisfiable"] != "DoNotSchedule":
        raise CaseError("can only use minDomains if whenUnsatisfiable=DoNotSchedule", [*path, "minDomains"],
                        value=raw["minDomains"])
    for i, k in enumerate(keys):
        err = qualified_name_error(k)
        if err:
            raise CaseError(err, [*path, "matchLabelKeys", i], value=k)
    if keys:
        sel = raw.get("labelSelector")
        if sel is None:
            raise CaseError("matchLabelKeys cannot be set when labelSelector is nil", [*path, "matchLabelKeys"])
        if selector_merge(version):
            always, labelled = key_conflicts(sel, keys)
            if always:
                i, k = always[0]
                raise CaseError(f"key {k!r} exists in both matchLabelKeys and labelSelector",
                                [*path, "matchLabelKeys", i], value=k)
            if_labelled.extend(labelled)
        else:
            in_selector = set((sel.get("matchLabels") or {}).keys()) | {
                e.get("key") for e in sel.get("matchExpressions") or [] if isinstance(e, Mapping)}
            for i, k in enumerate(keys):
                if k in in_selector:
                    raise CaseError(f"key {k!r} exists in both matchLabelKeys and labelSelector",
                                    [*path, "matchLabelKeys", i], value=k)
    return TopologySpreadConstraint(
        max_skew=raw["maxSkew"],
        topology_key=raw["topologyKey"],
        when_unsatisfiable=raw["whenUnsatisfiable"],
        label_selector=parse_label_selector(raw.get("labelSelector"), [*path, "labelSelector"]),
        min_domains=raw.get("minDomains"),
        node_affinity_policy=raw.get("nodeAffinityPolicy"),
        node_taints_policy=raw.get("nodeTaintsPolicy"),
        match_label_keys=keys,
    )


def _check_affinity_keys(affinity: Any, at, if_labelled: list[tuple[tuple[Any, ...], str]]) -> None:
    """The API server's validation of each pod affinity term's matchLabelKeys and
    mismatchLabelKeys, made on the selector it merged them into (labelkeys.py); (the key's
    path, key) of each key refused only when the pod has a label with that key go to
    ``if_labelled``."""
    for rel, t in affinity_terms(affinity):
        where = ("affinity", *rel)
        sel = t.get("labelSelector")
        match, mismatch = t.get("matchLabelKeys") or [], t.get("mismatchLabelKeys") or []
        for name, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):
            if keys and sel is None:
                raise CaseError("must not be specified when labelSelector is not set", at(*where, name))
            for i, k in enumerate(keys):
                err = qualified_name_error(k)
                if err:
                    raise CaseError(err, at(*where, name, i), value=k)
        always, labelled = key_conflicts(sel, match, mismatch)
        if always:
            i, k = always[0]
            raise CaseError(f"key {k!r} exists in both matchLabelKeys and labelSelector",
                            at(*where, "matchLabelKeys", i), value=k)
        if_labelled.extend(((*where, "matchLabelKeys", i), k) for i, k in labelled)
        both = set(mismatch)
        for i, k in enumerate(match):
            if k in both:
                raise CaseError(f"key {k!r} exists in both matchLabelKeys and mismatchLabelKeys",
                                at(*where, "matchLabelKeys", i), value=k)


def _tscs(raws: list, at, version: Version,
          if_labelled: list[tuple[tuple[Any, ...], str]]) -> tuple[TopologySpreadConstraint, ...]:
    """The constraints; (the key's path, key) of each key refused only when the pod has a
    label with that key go to ``if_labelled``."""
    seen: set[tuple[str, str]] = set()
    out = []
    for i, t in enumerate(raws):
        labelled: list[tuple[int, str]] = []
        c = _tsc(t, at("topologySpreadConstraints", i), version, labelled)
        if_labelled.extend((("topologySpreadConstraints", i, "matchLabelKeys", j), k) for j, k in labelled)
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            raise CaseError(f"duplicate constraint for {{topologyKey: {pair[0]}, whenUnsatisfiable: {pair[1]}}}",
                            at("topologySpreadConstraints", i))
        seen.add(pair)
        out.append(c)
    return tuple(out)


def _container(raw: Mapping[str, Any], path: PathT, init: bool) -> Container:
    res = raw.get("resources") or {}
    requests = _resources(res.get("requests"), [*path, "resources", "requests"])
    # API defaulting (SetDefaults_Pod): a resource with a limit and no request requests its limit
    for k, v in _resources(res.get("limits"), [*path, "resources", "limits"]).items():
        requests.setdefault(k, v)
    ports = tuple(
        ContainerPort(p["containerPort"], p.get("hostPort", 0) or 0, p.get("protocol", "TCP"), p.get("hostIP", ""))
        for p in raw.get("ports") or []
    )
    if raw.get("restartPolicy") and not init:
        raise CaseError("restartPolicy is only allowed on init containers (sidecars)", [*path, "restartPolicy"])
    return Container(
        name=raw["name"],
        image=raw.get("image", ""),
        requests=requests,
        ports=ports,
        restartable=raw.get("restartPolicy") == "Always",
        restart_all=any(isinstance(rule, Mapping) and rule.get("action") == "RestartAllContainers"
                        for rule in raw.get("restartPolicyRules") or []),
        claims=tuple(str(cl["name"]) for cl in res.get("claims") or [] if isinstance(cl, Mapping) and "name" in cl),
    )


COMPARISON_GATE = "TaintTolerationComparisonOperators"


def _toleration(raw: Mapping[str, Any], path: PathT, version: Version) -> Toleration:
    """One toleration. The Lt / Gt operators are validated as the API server validates
    them: they exist only with the TaintTolerationComparisonOperators gate (alpha from
    1.35; without it the operator is an unsupported value), and their value must then
    be a decimal integer in canonical form that fits in an int64."""
    op = raw.get("operator", "Equal")
    value = raw.get("value", "")
    if op in ("Lt", "Gt"):
        if version.minor < 35:
            raise CaseError(
                f'unsupported value "{op}": supported values: "Equal", "Exists" (Lt and Gt came with the '
                f"{COMPARISON_GATE} feature gate, alpha in 1.35; version {version} does not have them)",
                [*path, "operator"], value=op,
            )
        if not version.gate(COMPARISON_GATE):
            raise CaseError(
                f'unsupported value "{op}": supported values: "Equal", "Exists" (Lt and Gt need '
                f"featureGates: {{{COMPARISON_GATE}: true}}; the gate is off by default in {version})",
                [*path, "operator"], value=op,
            )
        from kspread.engine.corev1helpers import canonical_int64

        if canonical_int64(value) is None:
            raise CaseError(
                f"with operator {op}, value must be a decimal integer in canonical form (no sign '+', "
                "no leading zero) that fits in 64 bits",
                [*path, "value"], value=value,
            )
    seconds = raw.get("tolerationSeconds")
    return Toleration(raw.get("key", ""), op, value, raw.get("effect", ""), seconds)


# Pod-level resources kspread models (upstream supports cpu, memory and hugepages-*).
POD_LEVEL_RESOURCES = ("cpu", "memory")


def _pod_level_resources(raw: Mapping[str, Any] | None, at, version: Version, containers, inits,
                         raw_containers: list) -> tuple[dict[str, int], dict[str, int]]:
    """``resources`` (spec.resources, KEP-2837): pod-level requests and limits.

    The field exists from 1.32 (PodLevelResources gate: alpha, beta and on from 1.34).
    With the gate off the API server drops it and the scheduler ignores it, so it is
    parsed and kept, and ``kspread.engine.resources`` reads it only with the gate on. Checked
    as the API server validates it: only cpu and memory (kspread does not model
    pod-level hugepages), requests no greater than limits, and no smaller than the
    containers' aggregate requests. A limit without a request is refused, and so is a
    container-requested cpu / memory without a pod-level request when the pod has
    pod-level limits: the API server would default those requests, which kspread does
    not reproduce."""
    if raw is None:
        return {}, {}
    if version.minor < 32:
        raise CaseError(f"pod-level resources (spec.resources) exist from 1.32 (PodLevelResources gate); "
                        f"version {version} does not have them", at("resources"))
    reqs = _resources(raw.get("requests"), at("resources", "requests"))
    lims = _resources(raw.get("limits"), at("resources", "limits"))
    for kind, got in (("requests", reqs), ("limits", lims)):
        for name in got:
            if name.startswith("hugepages-"):
                raise CaseError(f"kspread models pod-level {' and '.join(POD_LEVEL_RESOURCES)} only, not {name}",
                                at("resources", kind, name))
            if name not in POD_LEVEL_RESOURCES:
                raise CaseError(f"unsupported pod-level resource {name!r}: supported values: cpu, memory, hugepages-*",
                                at("resources", kind, name))
    for name, lim in lims.items():
        if name not in reqs:
            raise CaseError(f"give resources.requests.{name} as well: the API server defaults a pod-level request "
                            "from the limit and the containers, which kspread does not reproduce",
                            at("resources", "limits", name))
        if reqs[name] > lim:
            raise CaseError(f"must be less than or equal to the pod-level {name} limit",
                            at("resources", "requests", name), value=(raw.get("requests") or {}).get(name))
    from kspread.engine.resources import aggregate_container_requests

    aggregate = aggregate_container_requests(containers, inits, version)
    if lims:
        # With pod-level limits the API server also defaults a missing pod-level request
        # from the containers' aggregate (pkg/apis/core/v1 defaults, PR #128407); which
        # resources it covers changed between releases, so kspread asks for it explicitly.
        for name in POD_LEVEL_RESOURCES:
            if name not in reqs and aggregate.get(name, 0) > 0:
                raise CaseError(f"give resources.requests.{name} as well: with pod-level limits the API server "
                                f"defaults it from the containers' {name} requests, which kspread does not reproduce",
                                at("resources", "limits"))
    for name, req in reqs.items():
        if aggregate.get(name, 0) > req:
            raise CaseError(f"must be greater than or equal to the containers' aggregate {name} request",
                            at("resources", "requests", name), value=(raw.get("requests") or {}).get(name))
    # validatePodResourceConsistency: each container's limit no greater than the pod's
    for i, c in enumerate(raw_containers):
        c_limits = (c.get("resources") or {}).get("limits") or {}
        for name, lim in lims.items():
            if name in c_limits:
                path = at("containers", i, "resources", "limits", name)
                if _resources({name: c_limits[name]}, path[:-1])[name] > lim:
                    raise CaseError(f"must be less than or equal to pod limits of {(raw.get('limits') or {})[name]}",
                                    path, value=c_limits[name])
    return reqs, lims


_CONTROLLER_API = {"ReplicationController": "v1", "Job": "batch/v1"}


def _new_pod(spec: tuple, name: str, labels: dict[str, str], node_name: str | None, terminating: bool,
             start: float | None, nominated: str | None, pod_groups: Mapping | None = None) -> Pod:
    """A Pod from a converted spec (``_Builder._spec_head`` + ``_spec_tail``) and the
    pod's own fields. ``pod_groups``: the case's PodGroups, whose spec.resourceClaims a
    pod's entries may name (DRAWorkloadResourceClaims)."""
    (ns, containers, inits, level_requests, level_limits, priority, cls_name, policy, overhead, node_selector,
     affinity, tolerations, tscs, ctrl, preempted, pvs, unmodelled, claims, volumes, gates, resize, claim_statuses,
     restart_all, wl_ref, group) = spec
    if volumes and any(v.template is not None for v in volumes):
        # a `claims:` volume uses the claim <volume>-<pod>, as a StatefulSet's template
        volumes = tuple(replace(v, claim=f"{v.name}-{name}") if v.template is not None else v for v in volumes)
    return new_pod(
        name=name,
        namespace=ns,
        labels=labels,
        node_name=node_name,
        priority=priority,
        priority_class_name=cls_name,
        preemption_policy=policy,
        containers=containers,
        init_containers=inits,
        overhead=overhead,
        level_requests=level_requests,
        level_limits=level_limits,
        terminating=terminating,
        start_time=start,
        nominated_node=nominated,
        node_selector=node_selector,
        affinity=affinity,
        tolerations=tolerations,
        topology_spread_constraints=tscs,
        controller=ctrl,
        preempted_by_scheduler=preempted,
        uses_persistent_volumes=pvs,
        unmodelled=unmodelled,
        scheduling_gates=gates,
        resource_claims=pod_claims(name, claims, (pod_groups or {}).get((ns, group)) if group else None),
        volumes=volumes,
        resize=resize,
        restart_all_containers=restart_all,
        workload_ref=wl_ref,
        scheduling_group=group,
        node_allocatable_claims=claim_statuses,
    )


class _Builder:
    def __init__(self, doc: Mapping[str, Any], version: Version) -> None:
        self.doc = doc
        self.version = version
        self.classes: dict[str, PriorityClass] = {}
        # the case's PodGroups (1.36), read before the pods: their resourceClaims resolve
        # the pods' claims (DRAWorkloadResourceClaims)
        self.pod_groups: dict[tuple[str, str], Any] = {}
        self.pod_count = 0
        # Pods that differ only in name, node, nominated node, start time and labels are
        # checked and converted once: the spec parts by spec key (``spec_key``), label
        # maps by their items. Only what passed is cached, so every error is still
        # raised at the first pod that has it, in the same order of checks.
        self._checked: set = set()
        self._specs: dict[Any, tuple] = {}
        self._labels: dict[tuple, dict[str, str]] = {}
        # For each shape number (``validate_deduplicated``) whose first pod was built:
        # its converted spec and ``terminating``, when its pods have none of the fields
        # ``quick_pod`` leaves to ``pod`` (replicas, startTime, nominatedNode); else None.
        self._quick: dict[int, tuple | None] = {}
        # keys of a spec's spread constraints refused when the pod has their label (_tscs)
        self._if_labelled: dict[Any, tuple[tuple[tuple[Any, ...], str], ...]] = {}
        self._tail_if_labelled: list[tuple[tuple[Any, ...], str]] = []

    @staticmethod
    def spec_key(raw: Mapping[str, Any]) -> tuple:
        """Equal for two pods exactly when they are written alike (``shapes.freeze``)
        but for the fields each pod has of its own."""
        pairs = [(k, freeze(v)) for k, v in raw.items() if k not in OWN_FIELDS]
        pairs.sort()  # by key: keys differ, so values are never compared
        return tuple(pairs)

    def check_pod(self, raw: Mapping[str, Any], at, key: tuple) -> None:
        """apivalidation.check_pod: the spec part once per spec key."""
        if key in self._checked:
            apivalidation.check_pod_name(raw, at)
            return
        apivalidation.check_pod(raw, at)
        if len(self._checked) < _CACHE_LIMIT:
            self._checked.add(key)

    def labels(self, raw: Any, at) -> dict[str, str]:
        """parse_labels(raw, at("labels")), one dict for every pod with the same label map."""
        if type(raw) is not dict:
            return parse_labels(raw, at("labels"))
        try:
            key = tuple(raw.items())  # parsed maps have string values only: no 1 == True
            hit = self._labels.get(key)
        except TypeError:  # an unhashable value: parse_labels says what is wrong
            return parse_labels(raw, at("labels"))
        if hit is None:
            hit = dict(raw) if valid_labels_dict(raw) else parse_labels(raw, at("labels"))
            if len(self._labels) < _CACHE_LIMIT:
                self._labels[key] = hit
        return hit

    # ---- priority admission ------------------------------------------------------

    def admit(self, raw: Mapping[str, Any], at) -> tuple[int, str, str]:
        """Priority admission (plugin/pkg/admission/priority): (priority, class name,
        preemption policy).

        A named class must exist (the two system classes always do; up to 1.16 they
        are allowed only in kube-system, PR #65593). No class name: the globalDefault
        class with the lowest value, else priority 0. The pod's preemptionPolicy must
        agree with the class's. A ``priority`` given without a class is taken as the
        admitted value (the case states the outcome of admission). preemptionPolicy
        exists only with the NonPreemptingPriority gate (alpha 1.15, on from 1.19):
        without it the API server drops the field and every pod may preempt."""
        cls_name = raw.get("priorityClassName") or ""
        explicit = raw.get("priority")
        policy = raw.get("preemptionPolicy")
        policies_on = self.version.gate("NonPreemptingPriority")
        if not policies_on:
            policy = None

        def class_policy(pc: PriorityClass) -> str:
            return pc.preemption_policy if policies_on else PREEMPT_LOWER_PRIORITY

        def check_policy(pc: PriorityClass) -> str:
            want = class_policy(pc)
            if policy is not None and policy != want:
                raise CaseError(
                    f"the string value of PreemptionPolicy ({policy}) must not be provided in pod spec; "
                    f"priority admission controller computed {want} from the given PriorityClass name",
                    at("preemptionPolicy"),
                )
            return want

        if cls_name:
            if cls_name in self.classes:
                pc = self.classes[cls_name]
            elif cls_name in SYSTEM_PRIORITY_CLASSES:
                ns = raw.get("namespace") or "default"
                if self.version.minor <= 16 and ns != "kube-system":
                    raise CaseError(f"pods with {cls_name} priorityClass is not permitted in {ns} namespace",
                                    at("priorityClassName"), value=cls_name)
                pc = PriorityClass(cls_name, SYSTEM_PRIORITY_CLASSES[cls_name])
            else:
                raise CaseError(f"no PriorityClass with name {cls_name} was found", at("priorityClassName"),
                                value=cls_name)
            if explicit is not None and explicit != pc.value:
                raise CaseError(
                    f"the integer value of priority ({explicit}) must not be provided in pod spec; "
                    f"priority admission controller computed {pc.value} from the given PriorityClass name",
                    at("priority"),
                )
            return pc.value, cls_name, check_policy(pc)
        if explicit is not None:
            return explicit, "", policy or PREEMPT_LOWER_PRIORITY
        defaults = [c for c in self.classes.values() if c.global_default]
        if defaults:
            pc = min(defaults, key=lambda c: c.value)
            return pc.value, pc.name, check_policy(pc)
        return 0, "", policy or PREEMPT_LOWER_PRIORITY

    # ---- pods ----------------------------------------------------------------------

    def pod(self, raw: Mapping[str, Any], at, name: str, nodes: Mapping[str, Node], incoming: bool,
            key: tuple | None = None) -> Pod:
        labels = self.labels(raw.get("labels"), at)
        node_name = raw.get("node")
        if node_name is not None and node_name not in nodes:
            raise CaseError(f"pod is bound to unknown node {node_name!r}", at("node"), value=node_name)
        nominated = raw.get("nominatedNode")
        if nominated is not None and nominated not in nodes:
            raise CaseError(f"unknown node {nominated!r}", at("nominatedNode"), value=nominated)
        if key is None:
            key = self.spec_key(raw)
        spec = self._specs.get(key)
        if spec is None:
            head = self._spec_head(raw, at)
            start = self._start(raw, at, node_name)
            spec = head + self._spec_tail(raw, at)
            if_labelled = tuple(self._tail_if_labelled)
            if len(self._specs) < _CACHE_LIMIT:
                self._specs[key] = spec
                if if_labelled:
                    self._if_labelled[key] = if_labelled
            if key and key[0] is _SHAPE and not incoming:
                # (a pod's node allocatable claim statuses name its claims, which its name may make)
                plain = not if_labelled and all(raw.get(k) is None for k in ("replicas", "startTime", "nominatedNode")) \
                    and not spec[-4]
                self._quick[key[1]] = (spec, bool(raw.get("terminating", False))) if plain else None
        else:
            start = self._start(raw, at, node_name)
            if_labelled = self._if_labelled.get(key, ())
        for where, k in if_labelled:
            if k in labels:
                raise CaseError(f"key {k!r} exists in both matchLabelKeys and labelSelector (the API server "
                                f"merges the pod's label {k}={labels[k]} into the selector; a pod as `kubectl get` "
                                "prints it, merged already, goes under `objects:`)", at(*where), value=k)
        pod = _new_pod(spec, name, labels, node_name, bool(raw.get("terminating", False)), start, nominated,
                       self.pod_groups)
        if pod.node_allocatable_claims:
            check_claim_statuses_named(pod, at)
        return pod

    def quick_pod(self, raw: Mapping[str, Any], shape: int, nodes: Mapping[str, Node]) -> Pod | None:
        """``pod`` for a pod of a shape whose first pod was built, when it needs nothing
        but the checks every pod gets (its name, its labels, its node) and they pass;
        None when it needs more or fails one: ``check_pod`` and ``pod`` then say what is
        wrong, in their order. Pods of one shape differ only in their own fields, so the
        spec is the first pod's."""
        quick = self._quick.get(shape)
        if quick is None:
            return None
        name = raw["name"]
        if not apivalidation.pod_name_ok(name):
            return None
        labels = raw.get("labels")
        if labels is None:
            labels = {}
        elif type(labels) is dict:
            try:
                key = tuple(labels.items())
                hit = self._labels.get(key)
            except TypeError:
                return None
            if hit is None:
                if not valid_labels_dict(labels):
                    return None
                hit = dict(labels)
                if len(self._labels) < _CACHE_LIMIT:
                    self._labels[key] = hit
            labels = hit
        else:
            return None
        node_name = raw.get("node")
        if node_name is not None and node_name not in nodes:
            return None
        start = None if node_name is None else DEFAULT_START_EPOCH + self.pod_count
        self.pod_count += 1
        spec, terminating = quick
        return _new_pod(spec, name, labels, node_name, terminating, start, None, self.pod_groups)

    def _start(self, raw: Mapping[str, Any], at, node_name: str | None) -> float | None:
        start = None
        if raw.get("startTime") is not None:
            start = _time(raw["startTime"], at("startTime"))
        elif node_name is not None:
            start = DEFAULT_START_EPOCH + self.pod_count
        self.pod_count += 1
        return start

    def _spec_head(self, raw: Mapping[str, Any], at) -> tuple:
        """What a pod's spec key decides, checked before its start time."""
        ns = raw.get("namespace") or "default"
        containers: tuple[Container, ...]
        # the shorthand's container uses the claims of the shorthand's `devices`
        shorthand_claims = tuple(str(k) for k in raw["devices"]) if isinstance(raw.get("devices"), Mapping) else ()
        if raw.get("requests") is not None:
            containers = (Container("main", requests=_resources(raw["requests"], at("requests")),
                                    claims=shorthand_claims),)
        elif raw.get("containers") is not None:
            # given explicitly, `containers: []` included: a pod with no containers at all
            containers = tuple(_container(c, at("containers", i), False) for i, c in enumerate(raw["containers"]))
        else:
            # neither requests nor containers: one container that requests nothing
            containers = (Container("main", claims=shorthand_claims),)
        inits = tuple(_container(c, at("initContainers", i), True) for i, c in enumerate(raw.get("initContainers") or []))
        level_requests, level_limits = _pod_level_resources(raw.get("resources"), at, self.version, containers, inits,
                                                            raw.get("containers") or [])
        priority, cls_name, policy = self.admit(raw, at)
        return ns, containers, inits, level_requests, level_limits, priority, cls_name, policy

    def _spec_tail(self, raw: Mapping[str, Any], at) -> tuple:
        """What a pod's spec key decides, checked after its start time."""
        overhead = _resources(raw.get("overhead"), at("overhead"))
        node_selector = parse_labels(raw.get("nodeSelector"), at("nodeSelector"))
        affinity = _affinity(raw.get("affinity"), at("affinity"))
        tolerations = tuple(
            _toleration(t, at("tolerations", i), self.version) for i, t in enumerate(raw.get("tolerations") or [])
        )
        self._tail_if_labelled = []
        if match_label_keys_enabled(self.version):
            _check_affinity_keys(raw.get("affinity"), at, self._tail_if_labelled)
        tscs = _tscs(raw.get("topologySpreadConstraints") or [], at, self.version, self._tail_if_labelled)
        ctrl = None
        if raw.get("controller") is not None:
            c = raw["controller"]
            ctrl = OwnerRef(c["kind"], c["name"], c.get("apiVersion") or _CONTROLLER_API.get(c["kind"], "apps/v1"))
        volumes = pod_volumes(raw.get("volumes"), at("volumes"))
        if not resource_scoring(self.version).image_counts_image_volumes:
            volumes = tuple(v for v in volumes if v.image is None)  # no plugin reads them before 1.36
        if raw.get("claims") is not None:
            volumes += claims_shorthand(raw["claims"], at("claims"), {v.name for v in volumes})
        return (overhead, node_selector, affinity, tolerations, tscs, ctrl,
                bool(raw.get("_preemptedByScheduler", False)),
                any(v.claim is not None or v.ephemeral is not None or v.template is not None for v in volumes),
                # what a backend is not sent (it skips the case): the volume sources and claims
                (tuple(raw.get("_unmodelled") or ()) or unmodelled_volumes(raw.get("volumes")))
                + (("claims",) if raw.get("claims") else ()),
                pod_claim_refs(raw.get("resourceClaims"), at, raw.get("containers"), self.version,
                               raw.get("devices")),
                volumes,
                self._gates(raw, at),
                *self._status(raw, at),
                self._declared_feature_needs(raw, at),
                workload_ref(raw.get("workloadRef"), at, self.version),
                scheduling_group(raw.get("schedulingGroup"), at, self.version))

    def _declared_feature_needs(self, raw: Mapping[str, Any], at) -> bool:
        """Whether a container or init container has a restartPolicyRules rule with action
        RestartAllContainers (what NodeDeclaredFeatures infers RestartAllContainersOnContainerExits
        from). From 1.36, with the gate on, upstream's registry also infers features from
        fields kspread does not model (a volume mount's bindMountOptions; spec.hostNetwork
        with hostUsers: false): a pod with one is refused."""
        restart_all = False
        gate_on = self.version.minor >= 35 and self.version.gate("NodeDeclaredFeatures")
        for key in ("containers", "initContainers"):
            for i, c in enumerate(raw.get(key) or []):
                for rule in c.get("restartPolicyRules") or []:
                    if isinstance(rule, Mapping) and rule.get("action") == "RestartAllContainers":
                        restart_all = True
                for j, m in enumerate(c.get("volumeMounts") or []):
                    if gate_on and self.version.minor >= 36 and isinstance(m, Mapping) \
                            and m.get("bindMountOptions") is not None:
                        raise CaseError("a volume mount's bindMountOptions makes a pod need the node-declared "
                                        "feature VolumeBindMountOptions from 1.36, which kspread does not model",
                                        at(key, i, "volumeMounts", j, "bindMountOptions"))
        if gate_on and self.version.minor >= 36 and raw.get("_hostNetworkUserNamespace"):
            raise CaseError("spec.hostNetwork with hostUsers: false makes a pod need the node-declared feature "
                            "UserNamespacesHostNetworkSupport from 1.36, which kspread does not model",
                            at("_hostNetworkUserNamespace"))
        return restart_all

    def _status(self, raw: Mapping[str, Any], at) -> tuple[Any, tuple]:
        """The pod's ``status``: its in-place resize (``_resize``) and its node allocatable claim
        statuses (DRANodeAllocatableResources). v1.36.2's ValidatePodResize forbids resizing a
        pod that has the latter, which the scheduler writes when it binds the pod: a pending
        resize beside them is an error."""
        resize = self._resize(raw, at)
        path = at("status", "nodeAllocatableResourceClaimStatuses")
        claims = node_allocatable_claim_statuses((raw.get("status") or {}).get("nodeAllocatableResourceClaimStatuses"),
                                                 path, self.version)
        if claims and resize is not None and (resize.resize or resize.pending_reason is not None):
            raise CaseError("pods with node allocatable resource claims cannot be resized (v1.36.2's "
                            "ValidatePodResize): a pod with these statuses has no pending resize", path)
        return resize, claims

    def _resize(self, raw: Mapping[str, Any], at) -> Any:
        """The pod's ``status`` of an in-place resize (kspread.format.resize)."""
        st = {k: v for k, v in (raw.get("status") or {}).items() if k != "nodeAllocatableResourceClaimStatuses"}
        if not st:
            return None
        names = {c.name for c in self._containers_of(raw)}
        inits = {c.get("name") for c in raw.get("initContainers") or []}
        return resize_status(st, at, self.version, names, inits)

    @staticmethod
    def _containers_of(raw: Mapping[str, Any]) -> tuple[Container, ...]:
        if raw.get("requests") is None and raw.get("containers") is not None:
            return tuple(Container(c["name"]) for c in raw["containers"])
        return (Container("main"),)

    def _gates(self, raw: Mapping[str, Any], at) -> tuple[str, ...]:
        """spec.schedulingGates: names, each once (the API validates them unique); a field
        of PodSchedulingReadiness (alpha 1.26, beta and on 1.27, GA 1.30)."""
        gates = raw.get("schedulingGates") or []
        if gates and not self.version.gate("PodSchedulingReadiness"):
            raise CaseError(f"schedulingGates need the PodSchedulingReadiness feature gate (alpha 1.26, on from "
                            f"1.27); version {self.version} does not have it on", at("schedulingGates"))
        names: list[str] = []
        for i, g in enumerate(gates):
            if g["name"] in names:
                raise CaseError(f"Duplicate value: {g['name']!r}", at("schedulingGates", i, "name"), value=g["name"])
            names.append(g["name"])
        return tuple(names)


# A pod's own fields: not in its spec key.
OWN_FIELDS = frozenset(("name", "node", "nominatedNode", "startTime", "labels"))
# Spec key of a pod of a validated shape: (_SHAPE, shape number); a spec_key is a tuple of pairs.
_SHAPE = object()
# Most distinct specs and label maps a build remembers.
_CACHE_LIMIT = 8192
# The items of one section of a case, each with the pather of its field paths (``_pather``).
Section = list[tuple[Any, Any]]


def _pather(prefix: PathT, fieldmap: Mapping[str, PathT] | None = None):
    def at(fieldname: str, *rest) -> list:
        if fieldmap is not None and fieldname in fieldmap:
            return [*fieldmap[fieldname], *rest]
        return [*prefix, fieldname, *rest]

    return at


def build_case(doc: Mapping[str, Any], default_name: str, base_dir: str | None = None,
               config: str | None = None, pod_shapes: list[int] | None = None,
               roots: Sequence[str] | None = None) -> Case:
    """Build a Case from a document that passed the schema. ``base_dir`` resolves a
    profile's ``config`` file, which must lie inside one of ``roots`` (default: inside
    ``base_dir``; see ``kspread.format.config.case_config_path``); ``config`` (the --kspread-config option) is the
    KubeSchedulerConfiguration for cases that give no ``profile``. ``pod_shapes``, from
    the loader's validation, numbers the shapes of ``pods`` (see
    ``validate_deduplicated``): pods of one shape share a spec key.

    The steps, in the order their errors are reported: the sections (shorthand and
    ``objects``), priority classes, ``zones``, nodes, namespaces, existing pods, owners,
    PodDisruptionBudgets, the incoming pod(s), then the profile and the references of
    ``profile`` and ``expect``."""
    version = make_version(doc.get("version"), doc.get("featureGates"))
    b = _Builder(doc, version)
    sections = _sections(doc)
    _priority_classes(b, sections["priorityClasses"])
    if version.gate("DRAWorkloadResourceClaims"):
        b.pod_groups = pod_groups([w for w in sections["workloads"] if w[0].get("kind") == "PodGroup"], version,
                                  {**{n: PriorityClass(n, v) for n, v in SYSTEM_PRIORITY_CLASSES.items()},
                                   **b.classes})
    zone_of = _zones(doc)
    nodes, without_pods = _nodes(doc, sections, zone_of, version)
    namespaces = _namespaces(sections["namespaces"])
    pods, seen_pods = _existing_pods(b, sections["pods"], nodes, pod_shapes)
    services, rcs, rss, sss = _owners(sections["owners"])
    pdbs = _pdbs(sections["pdbs"], pods)
    cluster = Cluster(nodes=list(nodes.values()), pods=pods, services=services, replication_controllers=rcs,
                      replica_sets=rss, stateful_sets=sss, pdbs=pdbs, priority_classes=list(b.classes.values()),
                      namespaces=namespaces, namespace_name_label=version.gate("NamespaceDefaultLabelName"))
    incoming, timeline = _incoming(doc, b, nodes, seen_pods)
    cluster.devices = build_devices(sections["devices"], version, [*pods, *incoming],
                                    shorthand_classes(doc.get("deviceClasses"), version),
                                    [s for raw, at in [*sections["nodes"], *_added_nodes(doc)]
                                     if isinstance(raw, Mapping)
                                     for s in node_slices(raw["name"], raw.get("devices"), at, version)],
                                    b.pod_groups)
    _check_allocation_refs(doc.get("expect") or {}, cluster.devices)
    cluster.storage = _storage(sections["storage"], [*pods, *incoming])
    composite_pod_groups([w for w in sections["workloads"] if w[0].get("kind") == "CompositePodGroup"], version)
    cluster.workloads = workloads([w for w in sections["workloads"] if w[0].get("kind") == "Workload"], version)
    cluster.pod_groups = b.pod_groups or pod_groups(
        [w for w in sections["workloads"] if w[0].get("kind") == "PodGroup"], version,
        {**{n: PriorityClass(n, v) for n, v in SYSTEM_PRIORITY_CLASSES.items()}, **b.classes})
    _check_gangs(doc, version, cluster.workloads, incoming, timeline)
    is_sequence = "schedule" in doc
    expect = doc.get("expect") or {}
    if not incoming and not timeline and "error" not in expect:
        raise CaseError("a case needs `pod` (one incoming pod) or `schedule` (a list of them)", [])

    if "skip" in doc and "xfail" in doc:
        later = [k for k in doc if k in ("skip", "xfail")][-1]
        raise CaseError("give either `skip` or `xfail`, not both (a skipped case does not run)", [later])
    profile = _profile(doc, version, base_dir, config, roots)
    _check_extender_refs(doc.get("profile"), nodes)
    added = {s.arg.name: s.arg for s in timeline or () if getattr(s, "kind", None) == "addNode"}
    _check_expect_refs(expect, {**nodes, **added}, seen_pods, _sequence_names(timeline, cluster))
    _check_expect_fits(expect, profile, version, doc.get("profile") is None, is_sequence, {p.key for p in incoming},
                       {p.key for p in pods}, _sequence_names(timeline, cluster), timeline)
    return Case(
        name=doc.get("name") or default_name,
        version=version,
        profile=profile,
        cluster=cluster,
        incoming=incoming,
        is_sequence=is_sequence,
        timeline=timeline,
        expect=expect,
        description=doc.get("description", ""),
        source=doc.get("source", ""),
        tags=list(doc.get("tags") or []),
        skip=doc.get("skip"),
        xfail=doc.get("xfail"),
        nodes_without_pods=frozenset(without_pods),
    )


def _check_gangs(doc: Mapping[str, Any], version: Version, wls: Mapping[tuple[str, str], Any], incoming: list[Pod],
                 timeline: list[Any] | None) -> None:
    """What kspread does not model of gang scheduling (GangScheduling on) is an error
    naming it: a gang pod as a single-cycle ``pod`` (PreEnqueue and Permit need a
    ``schedule``) or in a ``replicas: max`` entry. (What a waiting gang pod's claims
    need that kspread does not model is refused when it waits: ``SequenceRun.until_idle``.)"""
    if "pod" in doc and incoming and incoming[0].scheduling_group is not None and version.gate("GenericWorkload"):
        raise CaseError("a pod of a pod group is scheduled in a `schedule`: 1.36 schedules it with its group's "
                        "other pods in a pod group scheduling cycle", ["pod", "schedulingGroup"])
    from kspread.engine.steps import MaxEntry

    for t in timeline or ():
        if isinstance(t, MaxEntry) and t.template.scheduling_group is not None and version.gate("GenericWorkload"):
            raise CaseError("`replicas: max` of a pod of a pod group is not modelled: ask with a number of replicas",
                            [*t.path, "replicas"])
    if not version.gate("GangScheduling"):
        return

    def gang(p: Pod) -> bool:
        ref = p.workload_ref
        wl = wls.get((p.namespace, ref.name)) if ref is not None else None
        return wl is not None and wl.pod_groups.get(ref.pod_group) is not None

    if "pod" in doc and incoming and gang(incoming[0]):
        raise CaseError("a pod of a gang (its Workload's pod group has a gang policy) is scheduled in a `schedule`: "
                        "GangScheduling holds it until its group has minCount pods and binds the group together",
                        ["pod", "workloadRef"])
    for t in timeline or ():
        if isinstance(t, MaxEntry) and gang(t.template):
            raise CaseError("`replicas: max` of a gang pod is not modelled: ask with a number of replicas",
                            [*t.path, "replicas"])


def _sections(doc: Mapping[str, Any]) -> dict[str, Section]:
    """The items of every section (nodes, pods, owners, pdbs, priorityClasses,
    namespaces), each with the pather of its field paths: the shorthand sections first,
    then the raw objects of ``objects`` converted to the shorthand forms (each with a
    map from shorthand field to its path inside ``objects``), then the ReplicaSets the
    Deployments of ``objects`` made."""
    sections: dict[str, Section] = {k: [] for k in
                                    ("nodes", "pods", "owners", "pdbs", "priorityClasses", "namespaces")}
    sections["devices"] = []
    sections["storage"] = []
    sections["workloads"] = []
    for key in sections:
        if key in ("storage", "workloads"):
            continue
        for i, item in enumerate(doc.get(key) or []):
            sections[key].append((item, _pather([key, i])))
    deployments: list[tuple[dict, list, dict]] = []
    for i, obj in enumerate(doc.get("objects") or []):
        for section, item, prefix, fieldmap in convert_object(obj, ["objects", i]):
            if section == "deployments":
                deployments.append((item, prefix, fieldmap))
            elif section == "devices":
                sections["devices"].append((item["_raw"], prefix))
            elif section in ("storage", "workloads"):
                sections[section].append((item, prefix))
            else:
                sections[section].append((item, _pather(prefix, fieldmap)))
    # the pods to schedule name their ReplicaSet too (a rollout's pods: the controller made it)
    incoming = [e for e in [doc.get("pod"), *(doc.get("schedule") or [])] if isinstance(e, Mapping) and "name" in e]
    sections["owners"] += _deployment_replica_sets(deployments, sections, incoming)
    return sections


def _storage(items: Section, pods: list[Pod]) -> Any:
    """The storage objects of ``objects``, plus the claims the controllers create for
    the pods (``kspread.format.storage.add_pod_claims``); None when there are none."""
    from kspread.engine.storage import Storage

    storage = Storage()
    for obj, path in items:
        add_object(storage, obj, path, node_selector_terms)
    for p in pods:
        if p.volumes:
            add_pod_claims(storage, p.name, p.namespace, p.volumes)
    return None if storage.empty() else storage


def _priority_classes(b: _Builder, items: Section) -> None:
    """The PriorityClasses, into ``b.classes`` (first: pods need them): each name once
    (the two system classes always exist), at most one globalDefault, as the API
    validates them."""
    global_default: str | None = None
    for raw, at in items:
        name = raw["name"]
        if name in b.classes or name in SYSTEM_PRIORITY_CLASSES:
            raise CaseError(f"PriorityClass {name!r} is defined twice", at("name"), value=name)
        apivalidation.check_priority_class(raw, at)
        global_default = apivalidation.check_global_default(raw, at, global_default)
        b.classes[name] = PriorityClass(name, raw["value"], bool(raw.get("globalDefault", False)),
                                        raw.get("preemptionPolicy", PREEMPT_LOWER_PRIORITY))


def _zones(doc: Mapping[str, Any]) -> dict[str, str]:
    """The ``zones`` shorthand as node name -> zone: each zone a valid label value, each
    node in one zone at most."""
    zone_of: dict[str, str] = {}
    for zone, members in (doc.get("zones") or {}).items():
        err = label_value_error(zone)  # it becomes the value of the zone label
        if err:
            raise CaseError(err, ["zones", zone], value=zone)
        for j, n in enumerate(members):
            if n in zone_of:
                raise CaseError(f"node {n!r} is in two zones ({zone_of[n]!r} and {zone!r})", ["zones", zone, j], value=n)
            zone_of[n] = zone
    return zone_of


def _nodes(doc: Mapping[str, Any], sections: dict[str, Section], zone_of: Mapping[str, str],
           version: Version) -> tuple[dict[str, Node], set[str]]:
    """The nodes by name, in the case's order, and the names of those whose
    ``allocatable`` leaves out ``pods``: labels (the hostname label, the zone labels of
    ``zones``), allocatable, taints, images. A case that lists no node has the nodes
    ``zones`` names; otherwise every node ``zones`` names must be listed."""
    nodes: dict[str, Node] = {}
    without_pods: set[str] = set()
    if not sections["nodes"]:
        # a case that lists no node (neither in `nodes` nor as a Node manifest) has the
        # nodes its `zones` name, bare, in the order written
        sections["nodes"] = [(n, _pather(["zones", zone, j], {"name": ["zones", zone, j]}))
                             for zone, members in (doc.get("zones") or {}).items() for j, n in enumerate(members)]
    for raw, at in sections["nodes"]:
        if isinstance(raw, str):
            raw = {"name": raw}
        name = raw["name"]
        if name in nodes:
            apivalidation.check_node(raw, at)
            raise CaseError(f"node {name!r} is defined twice", at("name"), value=name)
        nodes[name], no_pods = _node(raw, at, zone_of, version, len(nodes))
        if no_pods:
            without_pods.add(name)
    for zone, members in (doc.get("zones") or {}).items():
        for j, n in enumerate(members):
            if n not in nodes:
                raise CaseError(f"node {n!r} is in zones but not in nodes: add it to nodes (or leave nodes out, "
                                "and `zones` names every node)", ["zones", zone, j])
    return nodes, without_pods


def _node(raw: Mapping[str, Any], at, zone_of: Mapping[str, str], version: Version, index: int) -> tuple[Node, bool]:
    """One node (and whether its allocatable leaves out ``pods``)."""
    name = raw["name"]
    apivalidation.check_node(raw, at)
    without_pods = False
    labels = parse_labels(raw.get("labels"), at("labels"))
    labels.setdefault(HOSTNAME_LABEL, name)
    if name in zone_of:
        # the shorthand sets these labels: a different value given beside it would vanish
        for key in (ZONE_LABEL, BETA_ZONE_LABEL) if version.zones_shorthand_sets_beta_label else (ZONE_LABEL,):
            if labels.get(key, zone_of[name]) != zone_of[name]:
                raise CaseError(f"node {name!r} is in zone {zone_of[name]!r} of `zones` but its labels say "
                                f"{key}: {labels[key]}", at("labels", key), value=labels[key])
        labels[ZONE_LABEL] = zone_of[name]
        if version.zones_shorthand_sets_beta_label:
            labels[BETA_ZONE_LABEL] = zone_of[name]
    if raw.get("allocatable") is None:
        alloc = {"cpu": UNLIMITED, "memory": UNLIMITED, "ephemeral-storage": UNLIMITED, "pods": DEFAULT_PODS}
    else:
        alloc = _resources(raw["allocatable"], at("allocatable"))
        if "pods" not in alloc:
            alloc["pods"] = 0  # as on a real node: a resource it does not list is 0
            without_pods = True
    node = Node(
        name=name,
        labels=labels,
        allocatable=alloc,
        taints=tuple(Taint(t["key"], t.get("value", ""), t["effect"]) for t in raw.get("taints") or []),
        unschedulable=bool(raw.get("unschedulable", False)),
        images=tuple(ImageState(tuple(im["names"]), im["sizeBytes"]) for im in raw.get("images") or []),
        index=index,
        declared_features=frozenset(raw.get("declaredFeatures") or ()),
    )
    return node, without_pods


def _namespaces(items: Section) -> dict[str, Namespace]:
    """The Namespaces by name, with their labels as written (for namespaceSelectors; the API
    server's kubernetes.io/metadata.name: ``Cluster.namespace_labels``), each once."""
    namespaces: dict[str, Namespace] = {}
    for raw, at in items:
        apivalidation.check_namespace(raw, at)
        if raw["name"] in namespaces:
            raise CaseError(f"namespace {raw['name']!r} is defined twice", at("name"), value=raw["name"])
        namespaces[raw["name"]] = Namespace(raw["name"], parse_labels(raw.get("labels"), at("labels")))
    return namespaces


def _existing_pods(b: _Builder, items: Section, nodes: Mapping[str, Node],
                   pod_shapes: list[int] | None) -> tuple[list[Pod], dict[str, Any]]:
    """The existing pods (``replicas`` expanded) in order, and their keys seen so far
    (namespace/name, each once). A pod of ``doc["pods"]`` whose shape's first pod was
    built takes ``_Builder.quick_pod`` when it can; every other pod is checked and
    built in full."""
    pods: list[Pod] = []
    seen_pods: dict[str, Any] = {}
    shape_of = pod_shapes if pod_shapes is not None else []  # of doc["pods"], which come first
    n_shaped = len(shape_of)
    for j, (raw, at) in enumerate(items):
        p = b.quick_pod(raw, shape_of[j], nodes) if j < n_shaped else None
        if p is not None:
            pk = p.key
            if pk in seen_pods:
                raise CaseError(f"pod {pk!r} is defined twice", at("name"), value=raw["name"])
            seen_pods[pk] = True
            pods.append(p)
            continue
        spec = (_SHAPE, shape_of[j]) if j < n_shaped else b.spec_key(raw)
        b.check_pod(raw, at, spec)
        names = [raw["name"]]
        if raw.get("replicas") == "max":
            raise CaseError("`replicas: max` is for entries of `schedule` (how many more fit); an existing pod "
                            "needs a number", at("replicas"), value="max")
        if raw.get("replicas") is not None:
            names = [f"{raw['name']}-{k}" for k in range(raw["replicas"])]
        for name in names:
            p = b.pod(raw, at, name, nodes, incoming=False, key=spec)
            pk = p.key
            if pk in seen_pods:
                raise CaseError(f"pod {pk!r} is defined twice", at("name"), value=raw["name"])
            seen_pods[pk] = True
            pods.append(p)
    return pods, seen_pods


def _owners(items: Section) -> tuple[list[Service], list[ReplicationController], list[ReplicaSet],
                                     list[StatefulSet]]:
    """The owners (Services, ReplicationControllers, ReplicaSets, StatefulSets) with
    their selectors: a plain label map for the first two, a label selector for the
    others; each kind/namespace/name once."""
    services: list[Service] = []
    rcs: list[ReplicationController] = []
    rss: list[ReplicaSet] = []
    sss: list[StatefulSet] = []
    seen_owners: set[tuple[str, str, str]] = set()
    for raw, at in items:
        kind, name, ns = raw["kind"], raw["name"], raw.get("namespace") or "default"
        apivalidation.check_owner(raw, at)
        if (kind, ns, name) in seen_owners:
            raise CaseError(f"{kind} {ns}/{name} is defined twice", at("name"), value=name)
        seen_owners.add((kind, ns, name))
        sel = raw.get("selector")
        if kind in ("Service", "ReplicationController"):
            plain = None if sel is None else parse_labels(sel, at("selector"))
            if kind == "Service":
                services.append(Service(name, ns, plain))
            else:
                rcs.append(ReplicationController(name, ns, plain))
        else:
            ls = parse_label_selector(sel, at("selector"))
            if kind == "ReplicaSet":
                rss.append(ReplicaSet(name, ns, ls))
            else:
                sss.append(StatefulSet(name, ns, ls))
    return services, rcs, rss, sss


def _pdbs(items: Section, pods: list[Pod]) -> list[PodDisruptionBudget]:
    """The PodDisruptionBudgets, each namespace/name once, with the disruptions they
    allow over the existing ``pods`` (``_disruptions_allowed``)."""
    pdbs: list[PodDisruptionBudget] = []
    seen_pdbs: set[tuple[str, str]] = set()
    for raw, at in items:
        ns = raw.get("namespace") or "default"
        apivalidation.check_pdb(raw, at)
        if (ns, raw["name"]) in seen_pdbs:
            raise CaseError(f"PodDisruptionBudget {ns}/{raw['name']} is defined twice", at("name"))
        seen_pdbs.add((ns, raw["name"]))
        ls = parse_label_selector(raw.get("selector"), at("selector"))
        spec = next(((k, raw[k]) for k in ("minAvailable", "maxUnavailable") if raw.get(k) is not None), None)
        pdbs.append(
            PodDisruptionBudget(raw["name"], ns, ls, _disruptions_allowed(raw, at, ls, ns, pods),
                                frozenset(raw.get("_disruptedPods") or ()), spec)
        )
    return pdbs


def _incoming(doc: Mapping[str, Any], b: _Builder, nodes: Mapping[str, Node],
              seen_pods: dict[str, Any]) -> tuple[list[Pod], list[Any] | None]:
    """The incoming pod(s): ``pod``, or the entries of ``schedule`` (one with
    ``replicas`` is N pods, named and created in order as existing pods'); no key may
    repeat an existing pod's or another incoming pod's (``seen_pods`` grows). Also the
    sequence's timeline when ``schedule`` has steps or a ``replicas: max`` entry (its
    pods, steps and max entries in order; kspread.engine.steps), else None."""
    from kspread.engine.steps import MaxEntry

    incoming: list[Pod] = []
    timeline: list[Any] = []
    raws = [(doc["pod"], _pather(["pod"]))] if "pod" in doc else [
        (p, _pather(["schedule", i])) for i, p in enumerate(doc.get("schedule") or [])
    ]
    for i, (raw, at) in enumerate(raws):
        if "name" not in raw:
            timeline.append(_step(raw, ("schedule", i), b.version))
            continue
        spec = b.spec_key(raw)
        b.check_pod(raw, at, spec)
        if raw.get("replicas") == "max":
            p = b.pod(raw, at, raw["name"], nodes, incoming=True, key=spec)
            made = [k for k in ("resourceClaims", "devices", "claims") if raw.get(k)] + [
                "volumes" for v in p.volumes if v.ephemeral is not None][:1]
            if made:
                raise CaseError(f"`replicas: max` with {made[0]}: kspread does not model the claims of replicas "
                                "made one by one (give the replicas as pods, or `replicas: N`)", at(made[0]))
            timeline.append(MaxEntry(raw["name"], p, ("schedule", i)))
            continue
        # a `schedule` entry with replicas: N incoming pods, named and created in order as existing pods'
        names = [raw["name"]] if raw.get("replicas") is None else [f"{raw['name']}-{k}" for k in range(raw["replicas"])]
        for name in names:
            p = b.pod(raw, at, name, nodes, incoming=True, key=spec)
            if p.node_allocatable_claims and "schedule" in doc:
                raise CaseError("a pod a `schedule` creates has no status.nodeAllocatableResourceClaimStatuses (the "
                                "API server's PrepareForCreate resets a new pod's status): give a pending pod with one "
                                "in `pods:` (nominated) or as the single cycle's `pod:`",
                                at("status", "nodeAllocatableResourceClaimStatuses"))
            if p.key in seen_pods:
                raise CaseError(f"pod {p.key!r} is defined twice", at("name"), value=raw["name"])
            seen_pods[p.key] = True
            incoming.append(p)
            timeline.append(p)
    if "pod" in doc and incoming and incoming[0].scheduling_gates:
        raise CaseError("the incoming pod has scheduling gates: the scheduler would never try it (give it in "
                        "`schedule` with an `ungate` step)", ["pod", "schedulingGates"])
    if all(isinstance(t, Pod) for t in timeline):
        return incoming, None
    return incoming, timeline


def _added_nodes(doc: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], Any]]:
    """The nodes ``addNode`` steps add, as written (their ``devices`` publish slices that
    count once the node exists)."""
    out = []
    for i, raw in enumerate(doc.get("schedule") or []):
        if isinstance(raw, Mapping) and isinstance(raw.get("addNode"), Mapping):
            out.append((raw["addNode"], _pather(["schedule", i, "addNode"])))
    return out


def _step(raw: Mapping[str, Any], path: tuple, version: Version) -> Any:
    """A step of ``schedule`` (its one key; the schema checked its shape)."""
    from kspread.engine.steps import Step, taint_of

    kind, arg = next(iter(raw.items()))
    at = _pather([*path, kind])
    if kind in ("drain", "cordon", "uncordon", "deleteNode", "zoneDown", "deletePod"):
        return Step(kind, arg, path, f"{kind} {arg}")
    if kind == "wait":
        return Step(kind, arg, path, f"wait {arg}")
    if kind == "addNode":
        node, _ = _node({"name": arg} if isinstance(arg, str) else arg, at, {}, version, 0)
        return Step(kind, node, path, f"addNode {node.name}")
    if kind == "taint":
        apivalidation.check_node({"name": arg["node"], "taints": [{k: v for k, v in arg.items() if k != "node"}]},
                                 lambda *f: [*path, kind, *f[2:]] if f[0] == "taints" else [*path, kind, *f])
        taint = taint_of(arg)
        text = f"taint {arg['node']} {taint.key}" + (f"={taint.value}" if taint.value else "") + f":{taint.effect}"
        return Step(kind, (arg["node"], taint), path, text)
    if kind == "untaint":
        return Step(kind, dict(arg), path, f"untaint {arg['node']} {arg['key']}" +
                    (f":{arg['effect']}" if arg.get("effect") else ""))
    if kind == "label":
        labels = {k: v for k, v in arg["labels"].items() if v is not None}
        parse_labels(labels, at("labels"))  # the keys and the values set are label keys and values
        for k in arg["labels"]:
            parse_labels({k: "x"}, at("labels"))
        shown = ", ".join(f"{k}={v}" if v is not None else f"{k}-" for k, v in arg["labels"].items())
        return Step(kind, dict(arg), path, f"label {arg['node']} {shown}")
    if kind == "addDeviceTaintRule":
        from kspread.format.devices import device_taint_rule

        rp = [*path, kind]
        if not isinstance(arg, Mapping) or arg.get("kind") != "DeviceTaintRule":
            raise CaseError("addDeviceTaintRule takes a DeviceTaintRule manifest (kind: DeviceTaintRule)", rp)
        raw_taint = arg["spec"].get("taint") if isinstance(arg.get("spec"), Mapping) else None
        if isinstance(raw_taint, Mapping) and raw_taint.get("timeAdded") is not None:
            raise CaseError("a step's DeviceTaintRule has no timeAdded: the API server sets it when it creates "
                            "the rule (the step's clock)", [*rp, "spec", "taint", "timeAdded"])
        rule = device_taint_rule(arg, version, rp)
        return Step(kind, rule, path, f"addDeviceTaintRule {rule.name}")
    if kind == "deleteDeviceTaintRule":
        return Step(kind, arg, path, f"deleteDeviceTaintRule {arg}")
    if kind == "setDeviceConditions":
        return _set_device_conditions(arg, version, [*path, kind], path)
    assert kind == "ungate"
    return Step(kind, dict(arg), path, f"ungate {arg['pod']} {arg['gate']}")


_CONDITION_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")


def _set_device_conditions(arg: Mapping[str, Any], version: Version, rp: list, path: tuple) -> Any:
    """A driver's update of an allocated device's conditions in its claim's status
    (DRAResourceClaimDeviceStatus; the scheduler reads them for binding conditions, with
    DRADeviceBindingConditions too)."""
    from kspread.engine.devices import DeviceCondition
    from kspread.engine.steps import Step

    if version.minor < 32 or not version.gate("DRAResourceClaimDeviceStatus"):
        raise CaseError(f"setDeviceConditions writes a claim's status.devices, which needs the feature gate "
                        f"DRAResourceClaimDeviceStatus (from 1.32), off in 1.{version.minor} here", rp)
    conds = []
    for i, c in enumerate(arg["conditions"]):
        if not _CONDITION_REASON.match(c["reason"]):
            raise CaseError("a condition's reason must start with a letter and consist of letters, digits, '_', "
                            "',' and ':', ending with a letter, digit or '_'", [*rp, "conditions", i, "reason"],
                            value=c["reason"])
        conds.append(DeviceCondition(c["type"], c["status"], c["reason"], c.get("message", "")))
    ns = arg.get("namespace") or "default"
    shown = ", ".join(f"{c.type}={c.status}" for c in conds)
    return Step("setDeviceConditions", {"claim": arg["claim"], "namespace": ns, "device": arg["device"],
                                        "conditions": tuple(conds)},
                path, f"setDeviceConditions {arg['claim']} {arg['device']} {shown}")


def _deployment_replica_sets(deployments: list[tuple[dict, list, dict]],
                             sections: Mapping[str, Section], incoming: Sequence[Mapping[str, Any]] = ()) -> Section:
    """The ReplicaSets that the deployment controller made for the Deployments of
    ``objects``: ``<deployment>-<pod-template-hash>``, selecting what the Deployment
    selects plus ``pod-template-hash`` (upstream's ``CloneSelectorAndAddLabel``). A
    ReplicaSet of ``objects`` that the Deployment controls is its ReplicaSet already;
    else one for each hash that the case's pods name, existing or ``incoming`` (the
    ``pod`` and the ``schedule`` entries: a pod controlled by ReplicaSet ``<deployment>-<h>``
    with the label ``pod-template-hash: <h>``, as a cluster's pods are, and as the pods
    of a rollout are, whose ReplicaSet the controller made first); else one with kspread's
    own hash of the template (``pod_template_hash``)."""
    out: list[tuple[dict, Any]] = []
    for dep, prefix, fmap in deployments:
        name, ns = dep["name"], dep.get("namespace") or "default"
        # a Deployment's name is a DNS-1123 subdomain, as a ReplicaSet's (its own, before the hash is added)
        apivalidation.check_owner({**dep, "kind": "ReplicaSet"}, _pather(prefix, fmap))
        if any(raw.get("kind") == "ReplicaSet" and (raw.get("namespace") or "default") == ns
               and raw.get("_controller") == ("Deployment", name) for raw, _ in sections["owners"]):
            continue
        hashes: list[str] = []
        for raw in [*(raw for raw, _ in sections["pods"]), *incoming]:
            ctrl, labels = raw.get("controller"), raw.get("labels")
            if not isinstance(ctrl, Mapping) or not isinstance(labels, Mapping) or \
                    (raw.get("namespace") or "default") != ns or ctrl.get("kind") != "ReplicaSet":
                continue
            h = labels.get(POD_TEMPLATE_HASH)
            if isinstance(h, str) and ctrl.get("name") == f"{name}-{h}" and h not in hashes:
                hashes.append(h)
        if not hashes:
            hashes.append(pod_template_hash(dep.get("template"), dep.get("collisionCount")))
        for h in hashes:
            sel = dict(dep.get("selector") or {})
            sel["matchLabels"] = {**(sel.get("matchLabels") or {}), POD_TEMPLATE_HASH: h}
            rs = {"kind": "ReplicaSet", "name": f"{name}-{h}", "selector": sel}
            if "namespace" in dep:
                rs["namespace"] = dep["namespace"]
            out.append((rs, _pather(prefix, fmap)))
    return out


def _profile(doc: Mapping[str, Any], version: Version, base_dir: str | None, config: str | None,
             roots: Sequence[str] | None) -> Profile:
    raw = doc.get("profile")
    if raw is None:
        if config is None:
            return default_profile(version)
        from kspread.format.config import load_config

        return load_config(config, version)
    if raw.get("config") is not None:
        from kspread.format.config import case_config_path, load_config

        path = case_config_path(raw["config"], base_dir, roots)
        prof = load_config(path, version, raw.get("schedulerName"), roots=roots)
        if raw.get("extenders"):
            _case_extenders(prof, raw["extenders"], version, base_dir, roots)
        return prof
    prof = profile_from_case(raw, version)
    _check_out_of_tree(prof, version)
    if raw.get("extenders"):
        _case_extenders(prof, raw["extenders"], version, base_dir, roots)
    # plugin arguments decoded strictly, defaulted and validated for the version
    prof.plugin_args = decode_profile_args(prof.plugin_config, version, ("profile", "pluginConfig"),
                                           check_shape=check_args_shape)
    return prof


def _check_out_of_tree(prof: Profile, version: Version) -> None:
    """``profile.outOfTree``: each name is no in-tree plugin (those are listed where they run,
    and a mistyped one is an error with a suggestion, never taken for an out-of-tree plugin),
    is declared once, and is enabled at filter, score or postFilter. Every plugin the profile
    enables and does not declare there is an in-tree plugin of the version: checked here, when
    the case loads, so that a backend (which runs no kspread plugin) never gets a case whose
    names the reference engine would refuse."""
    from kspread.engine.framework.registry import UPSTREAM, upstream_plugin

    in_tree = {k.name for k in UPSTREAM} | {a for k in UPSTREAM for a in k.legacy_names}
    used = {r.name for r in (*prof.filter, *prof.score, *prof.post_filter)}
    seen: set[str] = set()
    for i, name in enumerate(prof.out_of_tree):
        path = ("profile", "outOfTree", i)
        if name in in_tree:
            raise CaseError(f"{name!r} is an in-tree kube-scheduler plugin: list it at filter, score or postFilter "
                            "only; outOfTree declares plugins that are not", path, value=name)
        if name in seen:
            raise CaseError(f"plugin {name!r} is declared twice", path, value=name)
        seen.add(name)
    # a name enabled and neither in-tree nor declared is reported where it is enabled (a typo
    # there, close to a declared name, is not a declaration "not enabled")
    unused = [n for n in prof.out_of_tree if n not in used]
    for ref in (*prof.filter, *prof.score, *prof.post_filter):
        if ref.name not in seen:
            try:
                upstream_plugin(ref.name, version.minor, ref.path,
                                unknown_note="; an out-of-tree plugin is declared at profile.outOfTree")
            except CaseError as e:
                close = did_you_mean(ref.name, unused)
                if not close or not str(e.message).startswith("unknown plugin"):
                    raise
                raise CaseError(f"unknown plugin {ref.name!r} (neither an in-tree kube-scheduler plugin nor "
                                f"declared at profile.outOfTree){close}", ref.path, value=ref.name) from None
    for i, name in enumerate(prof.out_of_tree):
        if name in unused:
            raise CaseError(f"out-of-tree plugin {name!r} is declared but not enabled at filter, score or "
                            "postFilter", ("profile", "outOfTree", i), value=name)


def _disruptions_allowed(raw, at, ls, ns: str, pods: list[Pod]) -> int:
    """status.disruptionsAllowed. A PDB may give the spec (minAvailable or
    maxUnavailable, not both, as the API validates), the status, or both, as every
    real PDB object carries both; the scheduler reads only the status, so a given
    ``disruptionsAllowed`` decides. Without it, it is computed as the disruption
    controller would from the matching pods (expected = matching pods, healthy = the
    bound, non-terminating ones)."""
    from kspread.engine.labels import as_selector
    from kspread.engine.steps import disruptions_allowed

    spec = [k for k in ("minAvailable", "maxUnavailable") if raw.get(k) is not None]
    if len(spec) > 1:
        raise CaseError("minAvailable and maxUnavailable cannot be both set", at(spec[1]))
    if not spec and raw.get("disruptionsAllowed") is None:
        raise CaseError("a PodDisruptionBudget needs minAvailable, maxUnavailable or disruptionsAllowed", at("name"))
    sel = as_selector(ls)
    matching = [p for p in pods if p.namespace == ns and not sel.empty() and sel.matches(p.labels)]
    expected = len(matching)
    healthy = sum(1 for p in matching if p.node_name is not None and not p.terminating)

    if raw.get("disruptionsAllowed") is not None:
        return raw["disruptionsAllowed"]
    # the syntax and range of the amounts are apivalidation.check_pdb's
    return disruptions_allowed((spec[0], raw[spec[0]]), expected, healthy)


def _case_extenders(prof: Profile, raws: list, version: Version, base_dir: str | None,
                    roots: Sequence[str] | None) -> None:
    """``profile.extenders``: static ones (``filter`` / ``prioritize``) and HTTP ones
    (``urlPrefix`` and upstream's other Extender fields), in the order written, validated
    together as upstream validates a configuration's extenders."""
    from kspread.format.extenders import (
        HTTP_FIELDS,
        apply_ignored_by_scheduler,
        http_extender,
        validate_extenders,
    )

    static = profile_from_case({"extenders": raws}, version).extenders
    out = []
    http = []
    names: set[str] = set()
    for i, (raw, ext) in enumerate(zip(raws, static)):
        path = ("profile", "extenders", i)
        if ext.name in names:
            raise CaseError(f"extender {ext.name!r} is listed twice", (*path, "name"), value=ext.name)
        names.add(ext.name)
        given = [k for k in HTTP_FIELDS if k in raw and k != "weight"]
        if not given:
            out.append(replace(ext, path=path))
            continue
        if "urlPrefix" not in raw:
            raise CaseError(f"extender {ext.name!r} gives {given[0]} but no urlPrefix: an HTTP extender needs its "
                            "URL", (*path, given[0]))
        for k in ("filter", "prioritize"):
            if k in raw:
                raise CaseError(f"extender {ext.name!r} is an HTTP extender (urlPrefix): its results come from the "
                                f"extender, not from `{k}`", (*path, k))
        e, managed = http_extender(raw, path, name=ext.name, base_dir=base_dir or ".", default_weight=1,
                                   roots=roots)
        http.append((e, managed))
        out.append(e)
    if prof.config_file:
        # beside a KubeSchedulerConfiguration: after its own extenders, validated with them
        out = [*prof.extenders, *out]
    validate_extenders(out, ("profile", "extenders"))
    prof.extenders = out
    apply_ignored_by_scheduler(prof, [m for _, ms in http for m in ms], ("profile", "extenders"))


def _check_extender_refs(raw: Mapping[str, Any] | None, nodes: Mapping[str, Node]) -> None:
    """A static extender's nodes must be the case's. Upstream's HTTPExtender.Filter
    refuses a kept node that is not in the list it was given; a prioritized node the
    list lacks it ignores, which for a case is only a misspelt name."""
    for i, e in enumerate((raw or {}).get("extenders") or []):
        if "urlPrefix" in e:
            continue  # an HTTP extender: its answers are checked when it is called
        if e.get("filter") is None and e.get("prioritize") is None:
            raise CaseError(f"extender {e['name']!r} neither filters nor prioritizes: it would change nothing "
                            "(give `filter`, `prioritize` or both)", ["profile", "extenders", i])
        for j, n in enumerate(e.get("filter") or []):
            if n not in nodes:
                raise CaseError(f"extender {e['name']!r} claims a filtered node {n!r} which is not found in the input "
                                "node list (the case has no such node)", ["profile", "extenders", i, "filter", j],
                                value=n)
        for n in e.get("prioritize") or {}:
            if n not in nodes:
                raise CaseError(f"extender {e['name']!r} prioritizes a node {n!r} which is not found in the input "
                                "node list (the case has no such node)", ["profile", "extenders", i, "prioritize", n],
                                value=n)


def check_expect(expect: Any) -> None:
    """The ``expect`` block on its own, before anything else of the case: its shape,
    then what a schema cannot say. Every key given must compare something: an empty
    or blank ``error`` (it would match any message), ``error`` beside other keys (a case that
    fails has no results to compare them with), and an empty ``filter``,
    ``preemption`` or ``placements``, or an empty plugin under ``rawScores`` /
    ``scores``, which would compare nothing, are errors. (Empty ``rawScores``,
    ``scores``, ``totals`` and ``candidates`` and an empty ``feasible`` or
    ``searched`` assert something: nothing scored, no candidate, no node.) Checked
    first, so that an error here is never hidden by, or taken for, an error of the
    cluster the case describes."""
    if not isinstance(expect, Mapping):
        return  # absent, or not a mapping: the schema says so
    error = expect.get("error")
    if isinstance(error, str) and not error.strip():
        raise CaseError("an empty `error` would match every message: give the text the error must contain",
                        ["expect", "error"], value=error)
    empty = {
        "filter": "compares no node: list the nodes whose status to compare (e.g. `n1: Unschedulable`)",
        "preemption": "compares nothing: give `node`, `victims` or both (`preemption: null` asserts that "
                      "preemption ran and found no candidate)",
        "placements": "compares no pod: list the pods of `schedule` whose placement to compare",
        "allocations": "compares no claim: list the ResourceClaims whose devices to compare",
    }
    for key, why in empty.items():
        if expect.get(key) == {}:
            raise CaseError(f"an empty mapping {why}", ["expect", key])
    for key in ("rawScores", "scores"):
        per_plugin = expect.get(key)
        for plugin, per_node in (per_plugin.items() if isinstance(per_plugin, Mapping) else ()):
            if per_node == {}:
                raise CaseError(f"an empty mapping compares no node of {plugin}: list its nodes (`{key}: {{}}` "
                                "alone asserts that nothing was scored)", ["expect", key, plugin])
    if isinstance(expect.get("spread"), (Mapping, list)):
        # each count against its own shape first: a mistyped key is named at its line (through the
        # oneOf of one count or a list, the schema would report the missing required key instead)
        for one, path in spread_specs(expect["spread"]):
            if isinstance(one, Mapping):
                validate(dict(one), "spreadCount", path)
    validate(dict(expect), "expect", ["expect"])  # (the messages above say more than the schema's minProperties)
    if "error" in expect:
        others = [k for k in expect if k != "error"]
        if others:
            raise CaseError(f"`error` cannot be combined with other keys ({', '.join(others)}): a case that fails "
                            "to load or run has no results to compare them with", ["expect", others[0]])


def _sequence_names(timeline: list[Any] | None, cluster: Cluster) -> Callable[[str], bool]:
    """Whether a pod key is one a sequence's timeline may create: a replica of a
    ``replicas: max`` entry (``<name>-<k>``), or a replacement a ReplicaSet or
    ReplicationController of the case creates for an evicted pod (``<owner>-r<k>``)."""
    import re

    from kspread.engine.steps import MaxEntry

    if not timeline:
        return lambda key: False
    prefixes = [e.template.key + "-" for e in timeline if isinstance(e, MaxEntry)]
    owners: list[Any] = [*cluster.replica_sets, *cluster.replication_controllers]
    for o in owners:
        prefixes.append((o.name if o.namespace == "default" else f"{o.namespace}/{o.name}") + "-r")

    def known(key: str) -> bool:
        return any(key.startswith(pre) and re.fullmatch("[0-9]+", key[len(pre):]) is not None for pre in prefixes)

    return known


def _check_allocation_refs(expect: Mapping[str, Any], devices: Any) -> None:
    """``expect.allocations`` names claims of the case (or made from its templates)."""
    if not isinstance(expect, Mapping) or not expect.get("allocations"):
        return
    known = {c.key for c in devices.claims.values()} | devices.extended_claims if devices is not None else set()
    for c in expect["allocations"]:
        if c not in known:
            raise CaseError(f"no ResourceClaim {c!r} in the case" + did_you_mean(str(c), sorted(known)),
                            ["expect", "allocations", c], value=c)


def _check_expect_refs(expect: Mapping[str, Any], nodes: Mapping[str, Node], pods: Mapping[str, Any],
                       created: Callable[[str], bool] = lambda key: False) -> None:
    def node(n, path):
        if n is not None and n not in nodes:
            raise CaseError(f"unknown node {n!r}", path, value=n)

    def pod(p, path):
        if p not in pods:
            raise CaseError(f"unknown pod {p!r}", path, value=p)

    for key in ("feasible", "searched"):
        for i, n in enumerate(expect.get(key) or []):
            node(n, ["expect", key, i])
    for n in expect.get("filter") or {}:
        node(n, ["expect", "filter", n])
    for key in ("rawScores", "scores"):
        for plugin, per_node in (expect.get(key) or {}).items():
            for n in per_node:
                node(n, ["expect", key, plugin, n])
    for n in expect.get("totals") or {}:
        node(n, ["expect", "totals", n])
    sel = expect.get("selected")
    for i, n in enumerate(sel if isinstance(sel, list) else [sel]):
        node(n, ["expect", "selected"] + ([i] if isinstance(sel, list) else []))
    pre = expect.get("preemption")
    if isinstance(pre, Mapping):
        ns = pre.get("node")
        for i, n in enumerate(ns if isinstance(ns, list) else [ns]):
            node(n, ["expect", "preemption", "node"] + ([i] if isinstance(ns, list) else []))
        for i, v in enumerate(pre.get("victims") or []):
            pod(v, ["expect", "preemption", "victims", i])
    for n, victims in (expect.get("candidates") or {}).items():
        node(n, ["expect", "candidates", n])
        for i, v in enumerate(victims):
            pod(v, ["expect", "candidates", n, i])
    for p, n in (expect.get("placements") or {}).items():
        if not created(p):
            pod(p, ["expect", "placements", p])
        for i, one in enumerate(n if isinstance(n, list) else [n]):
            node(one, ["expect", "placements", p] + ([i] if isinstance(n, list) else []))
    for i, p in enumerate(expect.get("evicted") or []):
        if not created(p):
            pod(p, ["expect", "evicted", i])


def _check_expect_fits(expect: Mapping[str, Any], profile: Profile, version: Version, default: bool,
                       is_sequence: bool, incoming: set[str], existing: set[str] = frozenset(),  # type: ignore[assignment]
                       created: Callable[[str], bool] = lambda key: False, timeline: list[Any] | None = None) -> None:
    """Keys of ``expect`` that the case cannot produce: scores of a plugin its profile
    does not score with (named as the profile spells it), preemption without a
    PostFilter plugin, placements without ``schedule`` or of a pod it does not
    schedule. Each would only fail later as a mismatch."""
    scored = [ref.name for ref in profile.score]
    extenders = {e.name for e in profile.extenders}
    whose = f"the default profile of version {version}" if default else "the profile"
    for key in ("rawScores", "scores"):
        for plugin in expect.get(key) or {}:
            if plugin in scored:
                continue
            if plugin in extenders:
                why = f"{plugin!r} is an extender: extender scores count in `totals` only"
            elif scored:
                why = f"not a score plugin of {whose} (its score plugins: {', '.join(scored)})"
            else:
                why = f"{whose} has no score plugins"
            raise CaseError(f"plugin {plugin!r}: {why}", ["expect", key, plugin], value=plugin)
    if not profile.post_filter:
        for key in ("preemption", "candidates"):
            if key in expect:
                raise CaseError(f"preemption never runs: {whose} has no PostFilter plugin "
                                "(list DefaultPreemption under postFilter)", ["expect", key])
    if "spread" in expect:
        _check_spread(expect["spread"], is_sequence)
    if "placements" in expect:
        if not is_sequence:
            raise CaseError("placements are for a `schedule` of incoming pods; this case schedules one `pod` "
                            "(compare `selected` or `preemption` instead)", ["expect", "placements"])
        for pod in expect["placements"] or {}:
            if pod not in incoming and pod not in existing and not created(pod):
                raise CaseError(f"pod {pod!r} is not in `schedule`: placements name the pods the case schedules",
                                ["expect", "placements", pod], value=pod)
    for key in ("evicted", "capacity"):
        if key in expect and not is_sequence:
            raise CaseError(f"{key} is for a `schedule` sequence; this case schedules one `pod`", ["expect", key])
    from kspread.engine.steps import MaxEntry

    entries = {e.template.key for e in timeline or () if isinstance(e, MaxEntry)}
    for name in expect.get("capacity") or {}:
        if name not in entries:
            raise CaseError(f"{name!r} is not a `replicas: max` entry of `schedule`"
                            + (f" (those: {', '.join(sorted(entries))})" if entries else " (it has none)"),
                            ["expect", "capacity", name], value=name)


def spread_specs(spread: Any) -> list[tuple[Mapping[str, Any], list]]:
    """``expect.spread`` as (one count, its path): one mapping, or a list of them."""
    if isinstance(spread, list):
        return [(one, ["expect", "spread", i]) for i, one in enumerate(spread)]
    return [(spread, ["expect", "spread"])]


def _check_spread(spread: Any, is_sequence: bool) -> None:
    """``expect.spread`` (kspread's extension): counts the pods of a `schedule` (or, with a
    selector, of the cluster at its end), by the value of a topology key of their node."""
    if not is_sequence:
        raise CaseError("spread counts where the pods of a `schedule` end; this case schedules one `pod` "
                        "(compare `selected` instead)", ["expect", "spread"])
    for one, path in spread_specs(spread):
        why = qualified_name_error(one["topologyKey"])
        if why:
            raise CaseError(f"topologyKey: {why}", [*path, "topologyKey"], value=one["topologyKey"])
        parse_label_selector(one.get("selector"), [*path, "selector"])
        if "namespace" in one and "selector" not in one:
            raise CaseError("namespace narrows a selector: give `selector` too (without it, spread counts the "
                            "pods of `schedule`, in their own namespaces)", [*path, "namespace"])
