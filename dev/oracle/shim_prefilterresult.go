//go:build legacy && (v131 || v130 || v129 || v128 || v125 || v124)

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func preFilter(p framework.PreFilterPlugin, ctx context.Context, state *framework.CycleState, pod *v1.Pod) (func(string) bool, *framework.Status) {
	res, s := p.PreFilter(ctx, state, pod)
	if res == nil || res.AllNodes() {
		return nil, s
	}
	return func(n string) bool { return res.NodeNames.Has(n) }, s
}
