//go:build !v133 && !legacy && !v134

// Framework names that are in k8s.io/kube-scheduler/framework from 1.35.
package main

import fwk "k8s.io/kube-scheduler/framework"

type (
	fPlugin          = fwk.Plugin
	fHandle          = fwk.Handle
	fNominatingInfo  = fwk.NominatingInfo
	fNodeScoreList   = fwk.NodeScoreList
	fNodeScore       = fwk.NodeScore
	fFilterPlugin    = fwk.FilterPlugin
	fPreFilterPlugin = fwk.PreFilterPlugin
	fScorePlugin     = fwk.ScorePlugin
	fPreScorePlugin  = fwk.PreScorePlugin
)
