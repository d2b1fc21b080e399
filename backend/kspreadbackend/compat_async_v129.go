//go:build pre132

package kspreadbackend

// The scheduler up to v1.31: preemption within the cycle, no in-flight list to ask, the filter
// statuses in a NodeToStatusMap, no status for the nodes a PreFilterResult leaves out.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

// preemptionRunning: never, the victims are deleted within the cycle.
func preemptionRunning(*defaultpreemption.DefaultPreemption, types.UID) bool { return false }

// inFlightPods: 0. The queue's interface has no InFlightPods; a cycle's pod is back in the queue
// (or bound) before its outcome event, which the backend waits for after each cycle.
func inFlightPods(*scheduler.Scheduler) int { return 0 }

// preFilterLeftOut: nil: up to 1.31 findNodesThatFitPod gives the nodes a PreFilterResult leaves
// out no status; the backend reports what their filters say.
func preFilterLeftOut(sets.Set[string]) *fwStatus { return nil }

// extenderFilters: the extenders' filters on the nodes the plugins passed, as findNodesThatFitPod
// calls them; set is given each node an extender rejected with its status.
func extenderFilters(ctx context.Context, sched *scheduler.Scheduler, pod *v1.Pod, feasible []fwNodeInfo,
	set func(string, *fwStatus)) ([]fwNodeInfo, error) {
	statuses := framework.NodeToStatusMap{}
	kept, err := findNodesThatPassExtenders(ctx, sched, pod, feasible, statuses)
	if err != nil {
		return nil, err
	}
	for name, s := range statuses {
		set(name, s)
	}
	return kept, nil
}

// evaluatorOf: nil: up to 1.31 DefaultPreemption makes an evaluator inside each PostFilter call,
// with itself as the Interface, so the dry run's candidates cannot be seen without changing
// upstream's code: the backend reports none (null, as for a profile whose first PostFilter plugin is
// not DefaultPreemption), and kspread does not compare them.
func evaluatorOf(*defaultpreemption.DefaultPreemption) *preemption.Evaluator { return nil }
