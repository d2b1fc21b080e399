//go:build !pre132

package kspreadbackend

// The scheduler from v1.32: asynchronous preemption, the queue's in-flight pods, NodeToStatus and
// the status of the nodes a PreFilterResult leaves out.

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

// inFlightPods: the pods popped whose cycle has not ended (Done not called).
func inFlightPods(sched *scheduler.Scheduler) int {
	return len(sched.SchedulingQueue.InFlightPods())
}

// preFilterLeftOut: the status findNodesThatFitPod gives the nodes a PreFilterResult leaves out.
func preFilterLeftOut(unscheduled sets.Set[string]) *fwStatus {
	return newStatus(codeUnschedulableAndUnresolvable,
		fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduled)))
}

// extenderFilters: the extenders' filters on the nodes the plugins passed, as findNodesThatFitPod
// calls them; set is given each node an extender rejected with its status.
func extenderFilters(ctx context.Context, sched *scheduler.Scheduler, pod *v1.Pod, feasible []fwNodeInfo,
	set func(string, *fwStatus)) ([]fwNodeInfo, error) {
	statuses := framework.NewDefaultNodeToStatus()
	kept, err := scheduler.KspreadFindNodesThatPassExtenders(ctx, sched.Extenders, pod, feasible, statuses)
	if err != nil {
		return nil, err
	}
	statuses.ForEachExplicitNode(set)
	return kept, nil
}

// evaluatorOf: the plugin's preemption evaluator, which it keeps from 1.32 (its Interface is
// wrapped to see the dry run's candidates).
func evaluatorOf(pl *defaultpreemption.DefaultPreemption) *preemption.Evaluator { return pl.Evaluator }

// PodEligibleToPreemptOthers: the first call of the Evaluator's Preempt (with a context from
// 1.32), noted (dryRun.ran) and passed on.
func (d *dryRun) PodEligibleToPreemptOthers(ctx context.Context, pod *v1.Pod, nominatedNodeStatus *fwStatus) (bool, string) {
	d.mu.Lock()
	d.ran = true
	d.mu.Unlock()
	return d.Interface.PodEligibleToPreemptOthers(ctx, pod, nominatedNodeStatus)
}
