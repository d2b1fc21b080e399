//go:build !pre130

package kspreadbackend

// The extenders' filter and prioritizeNodes take node infos (v1.30 and later).

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// prioritizeNodes: PreScore, the score plugins and the extenders' priorities, as schedulePod scores.
func prioritizeNodes(ctx context.Context, sched *scheduler.Scheduler, fw framework.Framework, state fwCycleState,
	pod *v1.Pod, feasible []fwNodeInfo) ([]fwNodePluginScores, error) {
	return scheduler.KspreadPrioritizeNodes(ctx, sched.Extenders, fw, state, pod, feasible)
}
