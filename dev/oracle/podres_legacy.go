//go:build legacy

// Up to 1.31 PodSpec has no resources field: a pod that gives one is an input error.
package main

import v1 "k8s.io/api/core/v1"

func setPodResources(pod *v1.Pod, r *v1.ResourceRequirements) {
	panic("pod-level resources (spec.resources) need k8s.io/api 1.32 or later")
}
