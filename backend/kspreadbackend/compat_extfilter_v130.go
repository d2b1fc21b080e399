//go:build pre132 && !pre130

package kspreadbackend

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// findNodesThatPassExtenders: upstream's (v1.30-v1.31: node infos, a NodeToStatusMap).
func findNodesThatPassExtenders(ctx context.Context, sched *scheduler.Scheduler, pod *v1.Pod, feasible []fwNodeInfo,
	statuses framework.NodeToStatusMap) ([]fwNodeInfo, error) {
	return scheduler.KspreadFindNodesThatPassExtenders(ctx, sched.Extenders, pod, feasible, statuses)
}
