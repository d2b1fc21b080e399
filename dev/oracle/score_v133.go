//go:build v133 && !v132

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func scoreOn(p framework.ScorePlugin, ctx context.Context, state *framework.CycleState, pod *v1.Pod, n *framework.NodeInfo) (int64, *framework.Status) {
	return p.Score(ctx, state, pod, n)
}
