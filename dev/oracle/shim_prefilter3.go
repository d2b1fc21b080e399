//go:build legacy && v131

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func runPreFilter(f framework.Framework, ctx context.Context, state *framework.CycleState, pod *v1.Pod) *framework.Status {
	_, s, _ := f.RunPreFilterPlugins(ctx, state, pod)
	return s
}
