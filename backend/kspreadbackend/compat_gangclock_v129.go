//go:build pre135 || !pre136

package kspreadbackend

import "time"

// setGangClock: a version without 1.35's workload manager sets no pod group deadline on a clock of
// its own (1.36's GangScheduling waits its fixed timeout, on the Permit timers' clock).
func setGangClock(func() time.Time) {}
