//go:build legacy && (v129 || v130 || v131)

// Shims for upstream 1.29-1.31.
package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

type nominator struct{}

func (nominator) AddNominatedPod(klog.Logger, *framework.PodInfo, *framework.NominatingInfo) {}
func (nominator) DeleteNominatedPodIfExists(*v1.Pod)                                         {}
func (nominator) UpdateNominatedPod(klog.Logger, *v1.Pod, *framework.PodInfo)                {}
func (nominator) NominatedPodsForNode(string) []*framework.PodInfo                           { return nil }

func statusPlugin(s *framework.Status) string { return s.Plugin() }

func newFramework(ctx context.Context, r frameworkruntime.Registry, p *config.KubeSchedulerProfile, opts ...frameworkruntime.Option) (framework.Framework, error) {
	return frameworkruntime.NewFramework(ctx, r, p, opts...)
}

func callFactory(f frameworkruntime.PluginFactory, ctx context.Context, args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return f(ctx, args, h)
}

func wrapFactory(f frameworkruntime.PluginFactory, got func(framework.Plugin)) frameworkruntime.PluginFactory {
	return func(ctx context.Context, args runtime.Object, h framework.Handle) (framework.Plugin, error) {
		p, err := f(ctx, args, h)
		if err == nil {
			got(p)
		}
		return p, err
	}
}

func eligible(dp *defaultpreemption.DefaultPreemption, pod *v1.Pod) (bool, string) {
	return dp.PodEligibleToPreemptOthers(pod, nil)
}

func selectCandidate(ev *preemption.Evaluator, ctx context.Context, c []preemption.Candidate) preemption.Candidate {
	return ev.SelectCandidate(ctx, c)
}
