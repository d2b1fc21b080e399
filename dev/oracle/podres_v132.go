//go:build !legacy

// Pod-level resources (spec.resources, PodLevelResources): the field exists from 1.32.
package main

import v1 "k8s.io/api/core/v1"

func setPodResources(pod *v1.Pod, r *v1.ResourceRequirements) { pod.Spec.Resources = r }
