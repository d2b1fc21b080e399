// zz_queue_v136.go: zz_queue_v135.go for the 1.36 driver (dev/seqoracle-build.sh), added to the
// vendored k8s.io/kubernetes/pkg/scheduler/backend/queue (v1.36) for the fullcycle driver's steps.go.
// One change: OracleDropErrorBackoff keeps the pods of a pod group (spec.schedulingGroup), which a
// pod group cycle sends to podErrorBackoffQ when their group could not be placed (no plugin rejected
// them: errPodGroupUnschedulable), to be retried with their group; kspread retries them too. The
// driver runs the scheduling queue on a clock of its own (the sequence's clock) and does the
// queue's periodic work itself, at the times that clock says, instead of PriorityQueue.Run's
// goroutines on the wall clock. Nothing of upstream's behaviour changes.
package queue

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"
)

// OracleSetClock replaces the queue's clock (and its backoffQ's) before any pod is queued.
func (p *PriorityQueue) OracleSetClock(c clock.WithTicker) {
	p.clock = c
	p.backoffQ.(*backoffQueue).clock = c
}

// OracleFlushBackoffQCompleted runs one flushBackoffQCompleted (Run: every second).
func (p *PriorityQueue) OracleFlushBackoffQCompleted(logger klog.Logger) { p.flushBackoffQCompleted(logger) }

// OracleFlushUnschedulablePodsLeftover runs one flushUnschedulablePodsLeftover (Run: every 30 s).
func (p *PriorityQueue) OracleFlushUnschedulablePodsLeftover(logger klog.Logger) {
	p.flushUnschedulablePodsLeftover(logger)
}

// OracleDropErrorBackoff takes the pods whose last cycle ended in an Error out of the queue
// (podErrorBackoffQ), as kspread's rule says (an Error is not retried); upstream retries them
// after their backoff, for ever while the error stays. Returns how many it dropped.
func (p *PriorityQueue) OracleDropErrorBackoff() int {
	p.lock.Lock()
	defer p.lock.Unlock()
	bq := p.backoffQ.(*backoffQueue)
	bq.lock.Lock()
	defer bq.lock.Unlock()
	dropped := 0
	for _, pi := range bq.podErrorBackoffQ.List() {
		if pi.Pod.Spec.SchedulingGroup != nil {
			continue
		}
		_ = bq.podErrorBackoffQ.Delete(pi)
		dropped++
	}
	return dropped
}

// OracleBackoffPods lists backoffQ's two queues: podBackoffQ (popped when activeQ is empty, with
// SchedulerPopFromBackoffQ) and podErrorBackoffQ (moved to activeQ by the flush once backoff ends).
func (p *PriorityQueue) OracleBackoffPods() (backoff, errored []*v1.Pod) {
	bq := p.backoffQ.(*backoffQueue)
	bq.lock.RLock()
	defer bq.lock.RUnlock()
	for _, pi := range bq.podBackoffQ.List() {
		backoff = append(backoff, pi.Pod)
	}
	for _, pi := range bq.podErrorBackoffQ.List() {
		errored = append(errored, pi.Pod)
	}
	return backoff, errored
}

// OracleDemoteSaturated: the pods of a parked pod group (in, by the driver) in podBackoffQ whose
// backoff is at the maximum move one ordering window later. Upstream pops such a group again and
// again while it is podBackoffQ's head; its backoff no longer grows, but the wall clock moves, so
// its expiry soon passes the pods behind it, which come first. The driver's clock stands still
// while the scheduler is busy: without this the group would stay the head for ever (kspread's
// rule: the pods behind it come first). Returns how many pods it moved.
func (p *PriorityQueue) OracleDemoteSaturated(in func(*v1.Pod) bool) int {
	p.lock.Lock()
	defer p.lock.Unlock()
	bq := p.backoffQ.(*backoffQueue)
	bq.lock.Lock()
	defer bq.lock.Unlock()
	moved := 0
	for _, pi := range bq.podBackoffQ.List() {
		if !in(pi.Pod) {
			continue
		}
		count := pi.UnschedulableCount
		if pi.ConsecutiveErrorsCount > 0 {
			count = pi.ConsecutiveErrorsCount
		}
		if bq.calculateBackoffDuration(count) < bq.podMaxBackoff {
			continue
		}
		pi.BackoffExpiration = bq.alignToWindow(bq.clock.Now().Add(bq.podMaxBackoff + backoffQOrderingWindowDuration))
		bq.podBackoffQ.AddOrUpdate(pi)
		moved++
	}
	return moved
}

// oracleUnschedSeq: when each pod was last added to unschedulablePods (addOrUpdate calls
// oracleNoteUnschedulable: a sed of dev/seqoracle-build.sh), by the queue's key.
var (
	oracleUnschedSeq = map[string]int64{}
	oracleUnschedN   int64
)

func oracleNoteUnschedulable(key string) {
	oracleUnschedN++
	oracleUnschedSeq[key] = oracleUnschedN
}

// oracleSortPodInfos: movePodsToActiveOrBackoffQueue takes the pods in the order they were last added
// to unschedulablePods (a sed of dev/seqoracle-build.sh), not in its map's random order: the order in
// which one event moves pods to activeQ sets their InitialAttemptTimestamp, by which a pod group
// cycle orders its pods (kspread's rule: the order its queue moved them).
func oracleSortPodInfos(l []*framework.QueuedPodInfo, key func(*v1.Pod) string) {
	sort.SliceStable(l, func(i, j int) bool { return oracleUnschedSeq[key(l[i].Pod)] < oracleUnschedSeq[key(l[j].Pod)] })
}
