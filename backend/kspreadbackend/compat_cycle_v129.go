//go:build pre130

package kspreadbackend

import (
	"context"

	"k8s.io/kubernetes/pkg/scheduler"
)

// scheduleOne: one scheduling cycle (v1.29: unexported; backend/inject/zz_kspread_schedule_one_v129.go).
func scheduleOne(ctx context.Context, sched *scheduler.Scheduler) {
	scheduler.KspreadScheduleOne(ctx, sched)
}
