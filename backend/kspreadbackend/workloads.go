//go:build !pre135 && pre136

package kspreadbackend

// Gangs (1.35, alpha: the gates GenericWorkload and GangScheduling, which a case sets together and
// setGates changes in one map, GangScheduling depending on GenericWorkload): the case's Workload
// objects (scheduling.k8s.io/v1alpha1) are put in the fake API before the informers start, so the
// scheduler's Workload informer lists them and GangScheduling's lister holds them before any pod
// arrives. A pod's spec.workloadRef comes with the pod (core/v1 has the field from 1.35).
//
// This file is the whole of it: it registers itself in gangs (backend.go) at init. A build for a
// version without the Workload API leaves the file out: gangs stays nil, --info lists no protocol
// "workloads" (kspread then skips cases with Workloads or workloadRefs) and a case sent with
// Workloads is refused. Pods waiting at Permit, which GangScheduling makes, are handled in
// backend.go for any Permit plugin.

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingapi "k8s.io/api/scheduling/v1alpha1"
	"k8s.io/kubernetes/pkg/scheduler"
)

type workloadSupport struct{}

func init() { gangs = workloadSupport{} }

func (workloadSupport) protocol() string { return "workloads" }

// group: "" (1.35 places a gang's pods one cycle each; their Permit waits for the quorum)
func (workloadSupport) group(*v1.Pod) string { return "" }

func (workloadSupport) parking(*countingTracker, *scheduler.Scheduler, *recorder) groupParking {
	return nil
}

// setUp creates the Workloads in the tracker itself, before the informers start: the informers'
// first list delivers them (initial adds, which the counting informers do not count), so the
// writes are not counted either.
func (workloadSupport) setUp(t *countingTracker, in *input) error {
	if len(in.PodGroups) > 0 {
		return fmt.Errorf("the case has PodGroup objects (scheduling.k8s.io/v1alpha2), which are 1.36's; this "+
			"backend (Kubernetes %s) serves 1.35's v1alpha1 Workloads", KubernetesVersion())
	}
	gvr := schedulingapi.SchemeGroupVersion.WithResource("workloads")
	for i, raw := range in.Workloads {
		w := &schedulingapi.Workload{}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(w); err != nil {
			return fmt.Errorf("workloads[%d]: %w", i, err)
		}
		if w.APIVersion != schedulingapi.SchemeGroupVersion.String() || w.Kind != "Workload" {
			return fmt.Errorf("workloads[%d]: a %s %s, not a %s Workload", i, w.APIVersion, w.Kind,
				schedulingapi.SchemeGroupVersion)
		}
		if w.Namespace == "" {
			w.Namespace = "default"
		}
		if err := t.ObjectTracker.Create(gvr, w, w.Namespace); err != nil {
			return fmt.Errorf("workloads[%d] (Workload %s/%s): %w", i, w.Namespace, w.Name, err)
		}
	}
	return nil
}
