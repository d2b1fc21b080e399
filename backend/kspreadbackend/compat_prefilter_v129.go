//go:build pre131

package kspreadbackend

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// runPreFilter: RunPreFilterPlugins (v1.29-v1.30: no plugin set returned; preFilterLeftOut does not
// read it before v1.32).
func runPreFilter(ctx context.Context, fw framework.Framework, state fwCycleState, pod *v1.Pod) (*fwPreFilterResult, *fwStatus, sets.Set[string]) {
	res, st := fw.RunPreFilterPlugins(ctx, state, pod)
	return res, st, nil
}
