//go:build !pre135

package kspreadbackend

// The device taint eviction controller from 1.35 (devicetaints.go): it reads the slices as
// published and matches the NoExecute DeviceTaintRules itself; a pod already terminating is left
// alone (addConditionAndDeletePod).
const (
	dteTrackerSlices    = false
	dteSkipsTerminating = true
)
