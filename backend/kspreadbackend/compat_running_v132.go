//go:build !pre132 && pre136

package kspreadbackend

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
)

// preemptionRunning (1.32 to 1.35): the plugin's evaluator is still preempting for the pod (the
// victims' deletion runs after the cycle).
func preemptionRunning(pl *defaultpreemption.DefaultPreemption, uid types.UID) bool {
	return pl.Evaluator.IsPodRunningPreemption(uid)
}
