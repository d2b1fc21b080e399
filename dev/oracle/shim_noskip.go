//go:build legacy && (v123 || v124)

package main

import "k8s.io/kubernetes/pkg/scheduler/framework"

func isSkip(*framework.Status) bool { return false } // no Skip status code before 1.25
