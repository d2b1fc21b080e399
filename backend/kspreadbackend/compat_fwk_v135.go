//go:build !pre135

package kspreadbackend

// The scheduler framework's types, where kube-scheduler v1.35 has them: every interface in the
// staging module k8s.io/kube-scheduler/framework. (Build tags: backend/build.sh builds version
// 1.N with the tags preM for every M from N+1 to 135; 1.35, the default, with none.)

import fwk "k8s.io/kube-scheduler/framework"

type (
	fwHandle           = fwk.Handle
	fwPlugin           = fwk.Plugin
	fwCycleState       = fwk.CycleState
	fwNodeInfo         = fwk.NodeInfo
	fwStatus           = fwk.Status
	fwScorePlugin      = fwk.ScorePlugin
	fwPostFilterPlugin = fwk.PostFilterPlugin
	fwPreFilterResult  = fwk.PreFilterResult
	fwNodePluginScores = fwk.NodePluginScores
)

const (
	codeSuccess                      = fwk.Success
	codeError                        = fwk.Error
	codeUnschedulableAndUnresolvable = fwk.UnschedulableAndUnresolvable
)

var newStatus = fwk.NewStatus
