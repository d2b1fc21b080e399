//go:build !pre134

package kspreadbackend

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
)

// runDispatcher: the scheduler's API dispatcher, when the gate SchedulerAsyncAPICalls gave it one
// (v1.34 and later), started as the scheduler's Run starts it.
func runDispatcher(sched *scheduler.Scheduler, logger klog.Logger) {
	if sched.APIDispatcher != nil {
		sched.APIDispatcher.Run(logger)
	}
}

// skipScorePlugins: the score plugins PreScore told the cycle to skip.
func skipScorePlugins(state fwCycleState) sets.Set[string] { return state.GetSkipScorePlugins() }
