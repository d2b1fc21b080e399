//go:build !pre135 && pre136

package kspreadbackend

import (
	"time"

	"k8s.io/kubernetes/pkg/scheduler/backend/workloadmanager"
)

// setGangClock: the clock 1.35's workload manager sets a pod group's scheduling deadline on
// (backend/inject/zz_kspread_gang_clock.go), nil: the wall clock's time.Now.
func setGangClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	workloadmanager.KspreadNow = now
}
