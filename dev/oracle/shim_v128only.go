//go:build legacy && v128

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
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

func newFramework(ctx context.Context, r frameworkruntime.Registry, p *config.KubeSchedulerProfile, opts ...frameworkruntime.Option) (framework.Framework, error) {
	return frameworkruntime.NewFramework(ctx, r, p, opts...)
}

func eligible(dp *defaultpreemption.DefaultPreemption, pod *v1.Pod) (bool, string) {
	return dp.PodEligibleToPreemptOthers(pod, nil)
}

func selectCandidate(ev *preemption.Evaluator, ctx context.Context, c []preemption.Candidate) preemption.Candidate {
	return ev.SelectCandidate(klog.FromContext(ctx), c)
}
