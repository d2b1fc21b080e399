//go:build legacy && (v130 || v131)

// PreScore with NodeInfos (1.30-1.31).
package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func preScore(p framework.PreScorePlugin, ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) *framework.Status {
	return p.PreScore(ctx, state, pod, nodes)
}
