//go:build legacy && v123

// Upstream 1.23: PreFilter returns only a status (no PreFilterResult yet).
package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

type nominator struct{}

func (nominator) AddNominatedPod(*framework.PodInfo, *framework.NominatingInfo) {}
func (nominator) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (nominator) UpdateNominatedPod(*v1.Pod, *framework.PodInfo)                {}
func (nominator) NominatedPodsForNode(string) []*framework.PodInfo              { return nil }

func newFramework(_ context.Context, r frameworkruntime.Registry, p *config.KubeSchedulerProfile, opts ...frameworkruntime.Option) (framework.Framework, error) {
	return frameworkruntime.NewFramework(r, p, opts...)
}

func eligible(dp *defaultpreemption.DefaultPreemption, pod *v1.Pod) (bool, string) {
	return dp.PodEligibleToPreemptOthers(pod, nil), ""
}

func selectCandidate(ev *preemption.Evaluator, _ context.Context, c []preemption.Candidate) preemption.Candidate {
	return ev.SelectCandidate(c)
}

func preFilter(p framework.PreFilterPlugin, ctx context.Context, state *framework.CycleState, pod *v1.Pod) (func(string) bool, *framework.Status) {
	return nil, p.PreFilter(ctx, state, pod)
}

func runPreFilter(f framework.Framework, ctx context.Context, state *framework.CycleState, pod *v1.Pod) *framework.Status {
	return f.RunPreFilterPlugins(ctx, state, pod)
}
