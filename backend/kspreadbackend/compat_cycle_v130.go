//go:build !pre130

package kspreadbackend

import (
	"context"

	"k8s.io/kubernetes/pkg/scheduler"
)

// scheduleOne: one scheduling cycle (exported from v1.30).
func scheduleOne(ctx context.Context, sched *scheduler.Scheduler) { sched.ScheduleOne(ctx) }
