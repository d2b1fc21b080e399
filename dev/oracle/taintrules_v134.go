//go:build v134

// 1.34: the oracle's tracker reads no DeviceTaintRules.
package main

import (
	"context"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
)

func trackerOptions(f informers.SharedInformerFactory, client kubernetes.Interface) (resourceslicetracker.Options, bool) {
	return resourceslicetracker.Options{SliceInformer: f.Resource().V1().ResourceSlices(), KubeClient: client}, false
}

func syncTracker(context.Context, informers.SharedInformerFactory, *resourceslicetracker.Tracker) {}

func isTaintRule(any) bool { return false }
