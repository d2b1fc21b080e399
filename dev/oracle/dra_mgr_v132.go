//go:build v132

// 1.32's DRA manager: ResourceSlices straight from the informer's lister (no tracker, no
// device taints), as scheduler.New builds it.
package main

import (
	"context"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

func newDRAManager(ctx context.Context, claims *assumecache.AssumeCache, f informers.SharedInformerFactory, _ kubernetes.Interface) *dynamicresources.DefaultDRAManager {
	return dynamicresources.NewDRAManager(ctx, claims, f)
}
