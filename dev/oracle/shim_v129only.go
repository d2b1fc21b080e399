//go:build legacy && (v129 || v128 || v125 || v124 || v123)

// PreScore with the list of nodes; RunPreFilterPlugins with two results (up to 1.29).
package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func preScore(p framework.PreScorePlugin, ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) *framework.Status {
	var ns []*v1.Node
	for _, n := range nodes {
		ns = append(ns, n.Node())
	}
	return p.PreScore(ctx, state, pod, ns)
}
