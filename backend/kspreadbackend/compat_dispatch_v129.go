//go:build pre134

package kspreadbackend

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
)

// runDispatcher: nothing: no API dispatcher before v1.34.
func runDispatcher(*scheduler.Scheduler, klog.Logger) {}

// skipScorePlugins: the score plugins PreScore told the cycle to skip (a field up to v1.33).
func skipScorePlugins(state fwCycleState) sets.Set[string] { return state.SkipScorePlugins }
