//go:build pre135 && !pre134

package kspreadbackend

// The device taint eviction controller in 1.34 (devicetaints.go): it reads the slices through a
// ResourceSlice tracker of its own, the DeviceTaintRules' taints applied, and evicts a pod
// already terminating as any other.
const (
	dteTrackerSlices    = true
	dteSkipsTerminating = false
)
