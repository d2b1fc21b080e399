//go:build !v133 && !legacy && !v134

// NodeVolumeLimits reads CSINodes through the framework's shared CSI manager (1.35).
package main

import (
	"k8s.io/client-go/informers"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

func csiOptions(f informers.SharedInformerFactory) []frameworkruntime.Option {
	return []frameworkruntime.Option{frameworkruntime.WithSharedCSIManager(
		nodevolumelimits.NewCSIManager(f.Storage().V1().CSINodes().Lister()))}
}
