"""A PodGroup's priority as 1.36's Priority admission sets it (admitPodGroup, with
WorkloadAwarePreemption on; plugin/pkg/admission/priority): the value of its
priorityClassName, else the globalDefault class's, else 0; the errors for a missing class
and a priority that does not match. Golden cases: cases/gangs/pod-group-priority-class-136.yaml."""

from __future__ import annotations

import pytest

from kspread.errors import CaseError
from kspread.format.case import build_case

WAP = {"GenericWorkload": True, "GangScheduling": True, "WorkloadAwarePreemption": True}
NODES = [{"name": "n1", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}]


def _groups(classes=(), gates=WAP, **spec):
    pg = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "workers"},
          "spec": {"schedulingPolicy": {"basic": {}}, **spec}}
    doc = {"version": "1.36", "featureGates": gates, "nodes": NODES, "priorityClasses": list(classes),
           "objects": [pg], "schedule": [{"name": "w", "schedulingGroup": {"podGroupName": "workers"}}]}
    return build_case(doc, "t").cluster.pod_groups[("default", "workers")]


CLASSES = [{"name": "training", "value": 100}, {"name": "std", "value": 50, "globalDefault": True}]


def test_the_class_gives_the_priority():
    assert _groups(CLASSES, priorityClassName="training").priority == 100
    assert _groups(CLASSES, priorityClassName="training", priority=100).priority == 100
    assert _groups(priorityClassName="system-cluster-critical").priority == 2_000_000_000


def test_without_a_class_the_global_default_else_zero():
    assert _groups(CLASSES).priority == 50
    assert _groups(CLASSES[:1]).priority == 0
    # a priority given without a class is taken as the admitted value (as for pods)
    assert _groups(CLASSES, priority=30).priority == 30


@pytest.mark.parametrize("spec, where, text", [
    ({"priorityClassName": "missing"}, "priorityClassName", "no PriorityClass with name missing was found"),
    ({"priorityClassName": "training", "priority": 5}, "priority",
     ("priority set in the pod group (5) must match the priority computed (100) based on the priority class set "
      "in the spec")),
])
def test_admission_errors_name_the_field(spec, where, text):
    with pytest.raises(CaseError) as e:
        _groups(CLASSES, **spec)
    assert text in str(e.value)
    assert tuple(e.value.path) == ("objects", 0, "spec", where)


def test_without_workload_aware_preemption_the_field_is_refused():
    gates = {"GenericWorkload": True, "GangScheduling": True}
    with pytest.raises(CaseError, match="priorityClassName needs the feature gate WorkloadAwarePreemption"):
        _groups(CLASSES, gates=gates, priorityClassName="training")
    assert _groups(CLASSES, gates=gates).priority == 0  # no admission of PodGroups without the gate
