//go:build !pre133

// Copied by backend/build.sh into the vendored k8s.io/kubernetes/pkg/scheduler/backend/queue of
// the build tree (1.33 and later: the backoffQueue with a clock of its own). A sequence with steps
// runs the scheduling queue on the sequence's clock, not the wall clock: the backend sets it before
// any pod is queued and does the queue's periodic work (PriorityQueue.Run's flushes, which it then
// does not start) at the times that clock says. Nothing of upstream's behaviour changes.

package queue

import (
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// KspreadSetClock replaces the queue's clock and its backoffQ's.
func (p *PriorityQueue) KspreadSetClock(c clock.WithTicker) {
	p.clock = c
	p.backoffQ.(*backoffQueue).clock = c
}

// KspreadFlushBackoffQCompleted runs one flushBackoffQCompleted (Run: every second, in 1.33 and
// later aligned to backoffQ's ordering window).
func (p *PriorityQueue) KspreadFlushBackoffQCompleted(logger klog.Logger) {
	p.flushBackoffQCompleted(logger)
}

// KspreadFlushUnschedulablePodsLeftover runs one flushUnschedulablePodsLeftover (Run: every 30 s).
func (p *PriorityQueue) KspreadFlushUnschedulablePodsLeftover(logger klog.Logger) {
	p.flushUnschedulablePodsLeftover(logger)
}

// KspreadBackoffLens: the pods in backoffQ's two queues, podBackoffQ (which Pop takes from when
// activeQ is empty, with SchedulerPopFromBackoffQ) and podErrorBackoffQ (which only the flush
// moves, once a pod's backoff has ended).
func (p *PriorityQueue) KspreadBackoffLens() (backoff, errored int) {
	bq := p.backoffQ.(*backoffQueue)
	bq.lock.RLock()
	defer bq.lock.RUnlock()
	return bq.podBackoffQ.Len(), bq.podErrorBackoffQ.Len()
}
