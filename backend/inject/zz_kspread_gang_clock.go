// Copied by backend/build.sh into the vendored k8s.io/kubernetes/pkg/scheduler/backend/workloadmanager
// of the build tree (1.35), with a sed of podgroupinfo.go: a pod group's scheduling deadline is set
// on KspreadNow instead of time.Now. A sequence with steps sets it to the sequence's clock. Nothing
// else changes.

package workloadmanager

import "time"

// KspreadNow: the clock a pod group's scheduling deadline is set on (default: the wall clock).
var KspreadNow = time.Now
