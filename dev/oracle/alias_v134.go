//go:build v134

// 1.34: these names are still in pkg/scheduler/framework.
package main

import "k8s.io/kubernetes/pkg/scheduler/framework"

type (
	fPlugin          = framework.Plugin
	fHandle          = framework.Handle
	fNominatingInfo  = framework.NominatingInfo
	fNodeScoreList   = framework.NodeScoreList
	fNodeScore       = framework.NodeScore
	fFilterPlugin    = framework.FilterPlugin
	fPreFilterPlugin = framework.PreFilterPlugin
	fScorePlugin     = framework.ScorePlugin
	fPreScorePlugin  = framework.PreScorePlugin
)
