//go:build !pre136

package kspreadbackend

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
)

// preemptionRunning (from 1.36): the plugin's executor, which deletes the victims since the
// evaluator was split in two (preemption.Executor, shared with pod group preemption), is still
// preempting for the pod.
func preemptionRunning(pl *defaultpreemption.DefaultPreemption, uid types.UID) bool {
	return pl.Executor.IsPodRunningPreemption(uid)
}
