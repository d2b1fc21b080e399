// zz_gang_clock_wm.go: added by kspread's dev/seqoracle-build.sh to the vendored
// k8s.io/kubernetes/pkg/scheduler/backend/workloadmanager (v1.35) for the fullcycle driver's gang.go.
// podGroupInfo.SchedulingTimeout reads the wall clock (time.Now); the build's sed makes it read
// OracleNow, which the driver sets to the sequence's clock. Nothing else changes.
package workloadmanager

import "time"

// OracleNow: the clock a pod group's scheduling deadline is set on (default: the wall clock).
var OracleNow = time.Now
