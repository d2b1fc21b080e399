//go:build v136

// DeviceTaintRules (1.36, DRADeviceTaintRules beta, off by default): as taintrules_v135.go, with
// the rules served as resource.k8s.io/v1beta2, the version 1.36's scheduler.New gives the
// ResourceSlice tracker (kspread refuses DeviceTaintRule at 1.36; the oracle reads them for
// inspection only).
package main

import (
	"context"
	"time"

	resourcebetaapi "k8s.io/api/resource/v1beta2"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/kubernetes/pkg/features"
)

func trackerOptions(f informers.SharedInformerFactory, client kubernetes.Interface) (resourceslicetracker.Options, bool) {
	opts := resourceslicetracker.Options{SliceInformer: f.Resource().V1().ResourceSlices(), KubeClient: client}
	opts.EnableConsumableCapacity = utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity)
	if !utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules) {
		return opts, false
	}
	opts.EnableDeviceTaintRules = true
	opts.TaintInformer = f.Resource().V1beta2().DeviceTaintRules()
	opts.ClassInformer = f.Resource().V1().DeviceClasses()
	return opts, true
}

func syncTracker(ctx context.Context, f informers.SharedInformerFactory, tracker *resourceslicetracker.Tracker) {
	for _, inf := range []cache.SharedIndexInformer{f.Resource().V1().ResourceSlices().Informer(),
		f.Resource().V1beta2().DeviceTaintRules().Informer(), f.Resource().V1().DeviceClasses().Informer()} {
		go inf.Run(ctx.Done())
		cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	}
	for !tracker.HasSynced() {
		time.Sleep(time.Millisecond)
	}
}

func isTaintRule(o any) bool {
	_, ok := o.(*resourcebetaapi.DeviceTaintRule)
	return ok
}
