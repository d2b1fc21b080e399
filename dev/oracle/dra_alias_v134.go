//go:build v134

// 1.34: the DRA interfaces are still in pkg/scheduler/framework.
package main

import "k8s.io/kubernetes/pkg/scheduler/framework"

type (
	fSharedDRAManager     = framework.SharedDRAManager
	fResourceClaimTracker = framework.ResourceClaimTracker
	fNodeToStatusReader   = framework.NodeToStatusReader
	fPostFilterResult     = framework.PostFilterResult
)
