//go:build pre134

package kspreadbackend

// The scheduler framework's types up to v1.33: all in pkg/scheduler/framework, the cycle state and
// node info structs (pointers), not interfaces.

import "k8s.io/kubernetes/pkg/scheduler/framework"

type (
	fwHandle           = framework.Handle
	fwPlugin           = framework.Plugin
	fwCycleState       = *framework.CycleState
	fwNodeInfo         = *framework.NodeInfo
	fwStatus           = framework.Status
	fwScorePlugin      = framework.ScorePlugin
	fwPostFilterPlugin = framework.PostFilterPlugin
	fwPreFilterResult  = framework.PreFilterResult
	fwNodePluginScores = framework.NodePluginScores
)

const (
	codeSuccess                      = framework.Success
	codeError                        = framework.Error
	codeUnschedulableAndUnresolvable = framework.UnschedulableAndUnresolvable
)

var newStatus = framework.NewStatus
