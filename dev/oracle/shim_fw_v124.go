//go:build legacy && v124

package main

import (
	"context"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

func newFramework(_ context.Context, r frameworkruntime.Registry, p *config.KubeSchedulerProfile, opts ...frameworkruntime.Option) (framework.Framework, error) {
	return frameworkruntime.NewFramework(r, p, opts...)
}
