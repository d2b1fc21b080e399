//go:build legacy && v125

// 1.25-1.27: NewFramework takes a stop channel.
package main

import (
	"context"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

func newFramework(ctx context.Context, r frameworkruntime.Registry, p *config.KubeSchedulerProfile, opts ...frameworkruntime.Option) (framework.Framework, error) {
	return frameworkruntime.NewFramework(r, p, ctx.Done(), opts...)
}
