//go:build legacy && (v125 || v124)

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

type nominator struct{}

func (nominator) AddNominatedPod(*framework.PodInfo, *framework.NominatingInfo) {}
func (nominator) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (nominator) UpdateNominatedPod(*v1.Pod, *framework.PodInfo)                {}
func (nominator) NominatedPodsForNode(string) []*framework.PodInfo              { return nil }

func eligible(dp *defaultpreemption.DefaultPreemption, pod *v1.Pod) (bool, string) {
	return dp.PodEligibleToPreemptOthers(pod, nil)
}

func selectCandidate(ev *preemption.Evaluator, _ context.Context, c []preemption.Candidate) preemption.Candidate {
	return ev.SelectCandidate(c)
}
