"""The cluster objects the scheduler reads, in the form kspread's plugins use.

These are plain immutable values built once by ``kspread.format.case`` from a case file;
the scheduling cycle never mutates them (a new placement makes a new ``Pod``
with ``dataclasses.replace``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from kspread.engine.corev1helpers import toleration_tolerates
from kspread.engine.labels import LabelSelector, Requirement

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
BETA_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"

# Allocatable of a node whose case gives no ``allocatable``: cpu, memory and
# ephemeral-storage are unlimited (a value no request reaches), pods is 110.
UNLIMITED = 2**62
DEFAULT_PODS = 110

PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    # tolerationSeconds (NoExecute only): how long the pod stays on a node with the taint
    # before the taint manager evicts it; None: for ever (read only by sequences' steps)
    seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """``Toleration.ToleratesTaint``: see ``kspread.engine.corev1helpers.toleration_tolerates``,
        the one implementation."""
        return toleration_tolerates(self, taint)


@dataclass(frozen=True, slots=True)
class ImageState:
    names: tuple[str, ...]
    size_bytes: int


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    name: str
    labels: Mapping[str, str]
    allocatable: Mapping[str, int]
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    images: tuple[ImageState, ...] = ()
    index: int = 0  # position in the case's node order
    # status.declaredFeatures (NodeDeclaredFeatures): the features the node's kubelet declares
    declared_features: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ContainerPort:
    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    image: str = ""
    requests: Mapping[str, int] = field(default_factory=dict)
    ports: tuple[ContainerPort, ...] = ()
    restartable: bool = False  # an init container with restartPolicy: Always (sidecar)
    # a restartPolicyRules rule with action RestartAllContainers (what NodeDeclaredFeatures
    # reads: Pod.restart_all_containers; a backend is sent the rule)
    restart_all: bool = False
    # resources.claims: the names of the pod's resourceClaims entries the container uses
    claims: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class ContainerResizeStatus:
    """What a pod's status says of one container's resources (status.containerStatuses[]
    or initContainerStatuses[]): ``resources`` (the actual resources; None: the field is
    absent), its ``requests`` (None: absent), and ``allocatedResources`` (None: absent)."""

    name: str
    has_resources: bool = False
    requests: Mapping[str, int] | None = None
    allocated: Mapping[str, int] | None = None


@dataclass(frozen=True, slots=True, eq=False)
class ResizeStatus:
    """A bound pod's status as in-place pod resize (InPlacePodVerticalScaling) leaves it:
    ``resize`` (status.resize, read to 1.32), the reason of the first PodResizePending
    condition (read from 1.33; None: no such condition), the containers' statuses
    (``containers`` from containerStatuses, ``inits`` from initContainerStatuses, in
    order), and the pod-level status.resources (``level_has_resources``,
    ``level_requests``) and status.allocatedResources (``level_allocated``). Compared and
    hashed by identity (``resources.requests_key`` holds it): pods written alike share one."""

    resize: str = ""
    pending_reason: str | None = None
    containers: tuple[ContainerResizeStatus, ...] = ()
    inits: tuple[ContainerResizeStatus, ...] = ()
    level_has_resources: bool = False
    level_requests: Mapping[str, int] | None = None
    level_allocated: Mapping[str, int] | None = None


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@dataclass(frozen=True, slots=True)
class NodeAffinity:
    # None: no required terms; an empty tuple is a required section with no terms (matches nothing).
    required: tuple[NodeSelectorTerm, ...] | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    label_selector: LabelSelector | None
    namespaces: tuple[str, ...]
    topology_key: str
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class PodAffinityRules:
    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(frozen=True, slots=True)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinityRules | None = None
    pod_anti_affinity: PodAffinityRules | None = None


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class OwnerRef:
    kind: str
    name: str
    api_version: str


@dataclass(frozen=True, slots=True, eq=False)
class Pod:
    name: str
    namespace: str = "default"
    labels: Mapping[str, str] = field(default_factory=dict)
    node_name: str | None = None
    priority: int = 0
    priority_class_name: str = ""
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: Mapping[str, int] = field(default_factory=dict)
    # spec.resources (pod-level resources, PodLevelResources gate): requests and limits
    # as given; empty when the pod has none.
    level_requests: Mapping[str, int] = field(default_factory=dict)
    level_limits: Mapping[str, int] = field(default_factory=dict)
    terminating: bool = False
    # status.startTime as seconds since the epoch; None: not started (treated as "now").
    start_time: float | None = None
    nominated_node: str | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    controller: OwnerRef | None = None
    # True when the pod has a DisruptionTarget condition set by the scheduler's preemption.
    preempted_by_scheduler: bool = False
    uses_persistent_volumes: bool = False
    # What the spec holds that upstream's scheduler reads and kspread does not model, as
    # written: the volume sources the volume plugins read (persistentVolumeClaim, ephemeral,
    # gcePersistentDisk, ...) and resourceClaims. A backend is not sent them: it refuses the case.
    unmodelled: tuple[str, ...] = ()
    # spec.schedulingGates (names): the pod is not scheduled while it has one
    scheduling_gates: tuple[str, ...] = ()
    # spec.resourceClaims, each resolved to its claim's name (kspread.engine.devices.PodClaim)
    resource_claims: tuple[Any, ...] = ()
    # spec.volumes as the volume plugins read them (kspread.engine.storage.PodVolume)
    volumes: tuple[Any, ...] = ()
    # status of an in-place resize; None: the case gives no status
    resize: ResizeStatus | None = None
    # a container or init container has a restartPolicyRules rule with action
    # RestartAllContainers (the node-declared feature RestartAllContainersOnContainerExits)
    restart_all_containers: bool = False
    # spec.workloadRef (GenericWorkload, 1.35): the pod's Workload and pod group
    # (kspread.engine.plugins.gangscheduling.WorkloadRef); None: none
    workload_ref: Any = None
    # spec.schedulingGroup.podGroupName (GenericWorkload, 1.36): the pod's PodGroup (same
    # namespace); None: none
    scheduling_group: str | None = None
    # status.nodeAllocatableResourceClaimStatuses (DRANodeAllocatableResources, 1.36), as
    # the scheduler's assume sets it (kspread.engine.devices.NodeAllocatableClaimStatus)
    node_allocatable_claims: tuple[Any, ...] = ()

    @property
    def key(self) -> str:
        """How a case names the pod: bare in ``default``, ``namespace/name`` elsewhere."""
        return self.name if self.namespace == "default" else f"{self.namespace}/{self.name}"


def _all_fields_constructor(cls: type) -> Callable[..., Any]:
    """A function that makes a ``cls`` (a frozen dataclass with slots) from the value of
    every field (keywords, none left out), as ``cls(...)`` does, in a quarter of the
    time: a case builds 150,000 pods. The fields are set on an instance of a plain
    class with the same slots (plain attribute stores, where the frozen ``__init__``
    calls ``object.__setattr__`` for each), which then becomes a ``cls``: Python
    allows the change of class because the two lay out their instances alike, and
    from then on the instance is as frozen as any other."""
    assert not hasattr(cls, "__post_init__")
    names = [f.name for f in fields(cls)]
    builder = type(f"_{cls.__name__}Fields", (), {"__slots__": tuple(getattr(cls, "__slots__"))})  # noqa: B009
    env: dict[str, Any] = {"_new": object.__new__, "_builder": builder, "_cls": cls}
    body = "".join(f"    self.{n} = {n}\n" for n in names)
    exec(f"def make(*, {', '.join(names)}):\n    self = _new(_builder)\n{body}    self.__class__ = _cls\n"
         "    return self\n", env)
    make = env["make"]
    make.__doc__ = f"{cls.__name__}(...) with every field given."
    sample = make(**{n: n for n in names})  # the layouts agree: every field reads back
    assert type(sample) is cls and all(getattr(sample, n) == n for n in names)
    return make


new_pod = _all_fields_constructor(Pod)


def _fields_replacer(cls: type) -> Callable[..., Any]:
    """A function ``replace(obj, **changes)`` for ``cls`` (a frozen dataclass with slots):
    ``dataclasses.replace(obj, **changes)`` in a fraction of the time, made as
    ``_all_fields_constructor`` makes its instances (a sequence replaces a pod at every
    binding and nomination). A name that is not a field raises AttributeError."""
    assert not hasattr(cls, "__post_init__")
    names = [f.name for f in fields(cls)]
    builder = type(f"_{cls.__name__}Copy", (), {"__slots__": tuple(getattr(cls, "__slots__"))})  # noqa: B009
    env: dict[str, Any] = {"_new": object.__new__, "_builder": builder, "_cls": cls, "_set": setattr}
    body = "".join(f"    self.{n} = obj.{n}\n" for n in names)
    exec(f"def replace(obj, /, **changes):\n    self = _new(_builder)\n{body}"
         "    for k, v in changes.items():\n        _set(self, k, v)\n"
         "    self.__class__ = _cls\n    return self\n", env)
    replace = env["replace"]
    replace.__doc__ = f"dataclasses.replace for {cls.__name__}."
    return replace


replace_pod = _fields_replacer(Pod)


def pod_key(namespace: str, name: str) -> str:
    return name if namespace == "default" else f"{namespace}/{name}"


@dataclass(frozen=True, slots=True)
class Service:
    name: str
    namespace: str
    selector: Mapping[str, str] | None  # None: matches nothing


@dataclass(frozen=True, slots=True)
class ReplicationController:
    name: str
    namespace: str
    selector: Mapping[str, str] | None


@dataclass(frozen=True, slots=True)
class ReplicaSet:
    name: str
    namespace: str
    selector: LabelSelector | None


@dataclass(frozen=True, slots=True)
class StatefulSet:
    name: str
    namespace: str
    selector: LabelSelector | None


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    name: str
    namespace: str
    selector: LabelSelector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str] = frozenset()
    # the spec, for the disruption controller's recount in a sequence's steps:
    # ("minAvailable" | "maxUnavailable", n or "p%"); None: the status alone was given
    budget: tuple[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER_PRIORITY


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


# the label the API server sets on every Namespace to its name (NamespaceDefaultLabelName)
LABEL_METADATA_NAME = "kubernetes.io/metadata.name"


@dataclass(slots=True)
class Cluster:
    """Everything a case declares, after admission (priorities resolved)."""

    nodes: list[Node]
    pods: list[Pod]
    services: list[Service] = field(default_factory=list)
    replication_controllers: list[ReplicationController] = field(default_factory=list)
    replica_sets: list[ReplicaSet] = field(default_factory=list)
    stateful_sets: list[StatefulSet] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    # NamespaceDefaultLabelName (from 1.21): the API server labels every Namespace with
    # kubernetes.io/metadata.name (namespace_labels)
    namespace_name_label: bool = False
    # DeviceClasses, ResourceSlices and ResourceClaims (kspread.engine.devices.DeviceObjects)
    devices: Any = None
    # the storage objects (kspread.engine.storage.Storage); None: the case has none
    storage: Any = None
    # Workloads (scheduling.k8s.io/v1alpha1): (namespace, name) ->
    # kspread.engine.plugins.gangscheduling.Workload
    workloads: dict = field(default_factory=dict)
    # PodGroups (scheduling.k8s.io/v1alpha2, 1.36): (namespace, name) ->
    # kspread.engine.plugins.podgroups.PodGroup
    pod_groups: dict = field(default_factory=dict)

    def namespace_labels(self, name: str) -> Mapping[str, str]:
        """The labels of Namespace ``name``, as the namespace lister gives them to
        getNamespaceLabelsSnapshot: a listed namespace's, none for one only pods use (it
        exists, else the API server would not have taken its pods); with
        NamespaceDefaultLabelName on, the API server's kubernetes.io/metadata.name over them,
        whatever value the case gives it."""
        ns = self.namespaces.get(name)
        labels = ns.labels if ns is not None else {}
        return {**labels, LABEL_METADATA_NAME: name} if self.namespace_name_label else labels
