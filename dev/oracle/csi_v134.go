//go:build v134

// 1.34: no shared CSI manager option is set (not checked against v1.34.7's framework; the
// volume plugins were compared at 1.35 only).
package main

import (
	"k8s.io/client-go/informers"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

func csiOptions(informers.SharedInformerFactory) []frameworkruntime.Option { return nil }
