//go:build pre135 && !pre134

package kspreadbackend

// The scheduler framework's types in v1.34: the cycle state, node info and status moved to
// k8s.io/kube-scheduler/framework, the plugin interfaces still in pkg/scheduler/framework.

import (
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

type (
	fwHandle           = framework.Handle
	fwPlugin           = framework.Plugin
	fwCycleState       = fwk.CycleState
	fwNodeInfo         = fwk.NodeInfo
	fwStatus           = fwk.Status
	fwScorePlugin      = framework.ScorePlugin
	fwPostFilterPlugin = framework.PostFilterPlugin
	fwPreFilterResult  = framework.PreFilterResult
	fwNodePluginScores = framework.NodePluginScores
)

const (
	codeSuccess                      = fwk.Success
	codeError                        = fwk.Error
	codeUnschedulableAndUnresolvable = fwk.UnschedulableAndUnresolvable
)

var newStatus = fwk.NewStatus
