//go:build legacy && !v131

// Before 1.31 the oracle runs no DynamicResources (kspread models structured parameters
// from 1.31); devices_none.go refuses device objects.
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

func (*draRun) allocations(context.Context, framework.Plugin, *v1.Pod, []*framework.NodeInfo) (map[string]map[string][]string, string) {
	return nil, ""
}

func (*draRun) postFilter(context.Context, framework.Plugin, *framework.CycleState, *v1.Pod) *StatusOut {
	return nil
}
