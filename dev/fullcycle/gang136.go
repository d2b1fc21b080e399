// gang136.go: added by kspread's dev/seqoracle-build.sh to the 1.36 fullcycle driver in place of
// gang.go (gang.patch calls the same hooks). 1.36 replaced scheduling.k8s.io/v1alpha1 Workload and a
// pod's spec.workloadRef with v1alpha2 (Workload and PodGroup objects, spec.schedulingGroup) and a
// pod group scheduling cycle, which this driver does not drive yet: a sequence with workloads or a
// pod with a workloadRef is refused with an error (exit status 1), so that no gang is run as if it
// were plain pods. Pods waiting at Permit are still reported (`waiting`) and left out of the idle test.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler"
)

type gangPod136 struct {
	Name        string          `json:"name"`
	WorkloadRef json.RawMessage `json:"workloadRef"`
}

type gangInput136 struct {
	Workloads []json.RawMessage `json:"workloads"`
	Pods      []gangPod136      `json:"pods"`
	Sched     []gangPod136      `json:"schedule"`
}

// gangSetup: refuses gangs (see above)
func gangSetup(_ context.Context, raw []byte, _ *fake.Clientset, _ *seqDriver) {
	var in gangInput136
	must(json.Unmarshal(raw, &in))
	refuse := len(in.Workloads) > 0
	for _, p := range append(append([]gangPod136{}, in.Pods...), in.Sched...) {
		if len(p.WorkloadRef) > 0 && string(p.WorkloadRef) != "null" {
			refuse = true
		}
	}
	if refuse {
		fmt.Fprintln(os.Stderr, "fullcycle 1.36: gangs (workloads, a pod's workloadRef) are not driven at 1.36 (v1alpha2 Workload/PodGroup)")
		os.Exit(1)
	}
}

// gangDecorate: nothing at 1.36
func gangDecorate(*v1.Pod) {}

// gangWaiting: the pods waiting at Permit
func gangWaiting(s *scheduler.Scheduler) []string {
	var out []string
	for _, f := range s.Profiles {
		f.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
			p := wp.GetPod()
			out = append(out, podKey(p.Namespace, p.Name))
		})
	}
	sort.Strings(out)
	return out
}

// gangWait: no Permit timers of gangs at 1.36
func (d *seqDriver) gangWait(context.Context, int64) {}
