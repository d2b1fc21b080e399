//go:build v133 && !v132

// 1.33's DRA manager: the ResourceSlice tracker (without device taint rules), as
// scheduler.New starts it.
package main

import (
	"context"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

func newDRAManager(ctx context.Context, claims *assumecache.AssumeCache, f informers.SharedInformerFactory, client kubernetes.Interface) *dynamicresources.DefaultDRAManager {
	tracker, err := resourceslicetracker.StartTracker(ctx, resourceslicetracker.Options{
		SliceInformer: f.Resource().V1beta1().ResourceSlices(), KubeClient: client})
	must(err)
	return dynamicresources.NewDRAManager(ctx, claims, tracker, f)
}
