//go:build !pre131

package kspreadbackend

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// runPreFilter: RunPreFilterPlugins, with the plugins that rejected the pod or restricted the
// nodes (v1.31 and later).
func runPreFilter(ctx context.Context, fw framework.Framework, state fwCycleState, pod *v1.Pod) (*fwPreFilterResult, *fwStatus, sets.Set[string]) {
	return fw.RunPreFilterPlugins(ctx, state, pod)
}
