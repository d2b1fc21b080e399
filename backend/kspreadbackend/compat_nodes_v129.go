//go:build pre130

package kspreadbackend

// The extenders' filter and prioritizeNodes take nodes, not node infos (v1.29).

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func nodesOf(infos []fwNodeInfo) []*v1.Node {
	out := make([]*v1.Node, 0, len(infos))
	for _, ni := range infos {
		out = append(out, ni.Node())
	}
	return out
}

// prioritizeNodes: PreScore, the score plugins and the extenders' priorities, as schedulePod scores.
func prioritizeNodes(ctx context.Context, sched *scheduler.Scheduler, fw framework.Framework, state fwCycleState,
	pod *v1.Pod, feasible []fwNodeInfo) ([]fwNodePluginScores, error) {
	return scheduler.KspreadPrioritizeNodes(ctx, sched.Extenders, fw, state, pod, nodesOf(feasible))
}

// findNodesThatPassExtenders: upstream's, on the node infos' nodes, the infos of those kept returned.
func findNodesThatPassExtenders(ctx context.Context, sched *scheduler.Scheduler, pod *v1.Pod, feasible []fwNodeInfo,
	statuses framework.NodeToStatusMap) ([]fwNodeInfo, error) {
	kept, err := scheduler.KspreadFindNodesThatPassExtenders(ctx, sched.Extenders, pod, nodesOf(feasible), statuses)
	if err != nil {
		return nil, err
	}
	byName := map[string]fwNodeInfo{}
	for _, ni := range feasible {
		byName[ni.Node().Name] = ni
	}
	out := make([]fwNodeInfo, 0, len(kept))
	for _, n := range kept {
		out = append(out, byName[n.Name])
	}
	return out, nil
}
