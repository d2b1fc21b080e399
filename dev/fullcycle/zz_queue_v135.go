// zz_queue_v135.go: added by kspread's dev/seqoracle-build.sh to the vendored
// k8s.io/kubernetes/pkg/scheduler/backend/queue (v1.35) for the fullcycle driver's steps.go. The
// driver runs the scheduling queue on a clock of its own (the sequence's clock) and does the
// queue's periodic work itself, at the times that clock says, instead of PriorityQueue.Run's
// goroutines on the wall clock. Nothing of upstream's behaviour changes.
package queue

import (
	"k8s.io/klog/v2"
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
	pods := bq.podErrorBackoffQ.List()
	for _, pi := range pods {
		_ = bq.podErrorBackoffQ.Delete(pi)
	}
	return len(pods)
}
