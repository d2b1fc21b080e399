//go:build !v133 && !legacy && !v134 && !v136

// DeviceTaintRules (1.35, DRADeviceTaintRules): the ResourceSlice tracker applies the
// rules as scheduler.New sets it up. Its store of patched slices fills only from informer
// events, so the slice, rule and class informers run until the tracker has synced (the
// fake client holds the objects).
package main

import (
	"context"
	"time"

	resourcealphaapi "k8s.io/api/resource/v1alpha3"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/kubernetes/pkg/features"
)

func trackerOptions(f informers.SharedInformerFactory, client kubernetes.Interface) (resourceslicetracker.Options, bool) {
	opts := resourceslicetracker.Options{SliceInformer: f.Resource().V1().ResourceSlices(), KubeClient: client}
	if !utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules) {
		return opts, false
	}
	opts.EnableDeviceTaintRules = true
	opts.EnableConsumableCapacity = utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity)
	opts.TaintInformer = f.Resource().V1alpha3().DeviceTaintRules()
	opts.ClassInformer = f.Resource().V1().DeviceClasses()
	return opts, true
}

func syncTracker(ctx context.Context, f informers.SharedInformerFactory, tracker *resourceslicetracker.Tracker) {
	for _, inf := range []cache.SharedIndexInformer{f.Resource().V1().ResourceSlices().Informer(),
		f.Resource().V1alpha3().DeviceTaintRules().Informer(), f.Resource().V1().DeviceClasses().Informer()} {
		go inf.Run(ctx.Done())
		cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	}
	for !tracker.HasSynced() {
		time.Sleep(time.Millisecond)
	}
}

func isTaintRule(o any) bool {
	_, ok := o.(*resourcealphaapi.DeviceTaintRule)
	return ok
}
