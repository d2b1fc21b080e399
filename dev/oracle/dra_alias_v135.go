//go:build !v133 && !legacy && !v134

// DRA names that are in k8s.io/kube-scheduler/framework from 1.35.
package main

import fwk "k8s.io/kube-scheduler/framework"

type (
	fSharedDRAManager     = fwk.SharedDRAManager
	fResourceClaimTracker = fwk.ResourceClaimTracker
	fNodeToStatusReader   = fwk.NodeToStatusReader
	fPostFilterResult     = fwk.PostFilterResult
)
