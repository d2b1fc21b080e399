//go:build pre130

// Copied by backend/build.sh into the vendored k8s.io/kubernetes/pkg/scheduler of the build tree
// (built only with the tag pre130: v1.29, where the scheduling cycle's method is unexported).

package scheduler

import "context"

// KspreadScheduleOne is scheduleOne: one scheduling cycle (ScheduleOne from v1.30).
func KspreadScheduleOne(ctx context.Context, sched *Scheduler) { sched.scheduleOne(ctx) }
