//go:build legacy && !v123 && !v124

package main

import "k8s.io/kubernetes/pkg/scheduler/framework"

func isSkip(s *framework.Status) bool { return s.IsSkip() }
