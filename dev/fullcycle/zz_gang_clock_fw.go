// zz_gang_clock_fw.go: added by kspread's dev/seqoracle-build.sh to the vendored
// k8s.io/kubernetes/pkg/scheduler/framework/runtime (v1.35) for the fullcycle driver's gang.go.
// A pod waiting at Permit gets a timer per plugin (newWaitingPod: time.AfterFunc); the build's sed
// makes it call OracleAfterFunc, which the driver replaces to fire the timers on the sequence's
// clock. Nothing else changes.
package runtime

import "time"

// OracleAfterFunc: how a waiting pod's Permit timer is started (default: the wall clock's).
var OracleAfterFunc = time.AfterFunc
