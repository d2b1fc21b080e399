//go:build legacy && (v128 || v125 || v124 || v123)

// Shims for upstream 1.23-1.28: plugin factories without a context, Status.FailedPlugin.
package main

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

func statusPlugin(s *framework.Status) string { return s.FailedPlugin() }

func callFactory(f frameworkruntime.PluginFactory, _ context.Context, args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return f(args, h)
}

func wrapFactory(f frameworkruntime.PluginFactory, got func(framework.Plugin)) frameworkruntime.PluginFactory {
	return func(args runtime.Object, h framework.Handle) (framework.Plugin, error) {
		p, err := f(args, h)
		if err == nil {
			got(p)
		}
		return p, err
	}
}
