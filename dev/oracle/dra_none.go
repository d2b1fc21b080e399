//go:build v132

// 1.32: the oracle does not run DynamicResources yet (its DRA manager was not compared);
// a case with device objects is refused.
package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

type draRun struct{}

func draOptions(context.Context, informers.SharedInformerFactory, kubernetes.Interface, *Cluster) ([]frameworkruntime.Option, *draRun) {
	return nil, nil
}

func (*draRun) allocations(context.Context, framework.Plugin, *framework.CycleState, *v1.Pod, []string) (map[string]map[string][]string, string) {
	return nil, ""
}

func (*draRun) postFilter(context.Context, framework.Plugin, *framework.CycleState, *v1.Pod) *StatusOut {
	return nil
}

func init() { draSupported = false }
