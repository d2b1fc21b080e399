// zz_queue_v131.go: added by kspread's dev/seqoracle-build.sh to the vendored
// k8s.io/kubernetes/pkg/scheduler/internal/queue (v1.31) for the fullcycle driver's steps.go. The
// driver runs the scheduling queue on a clock of its own (the sequence's clock) and does the
// queue's periodic work itself, at the times that clock says, instead of PriorityQueue.Run's
// goroutines on the wall clock. Nothing of upstream's behaviour changes.
package queue

import (
	"fmt"

	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// OracleSetClock replaces the queue's clock before any pod is queued.
func (p *PriorityQueue) OracleSetClock(c clock.WithTicker) {
	p.clock = c
}

// OracleFlushBackoffQCompleted runs one flushBackoffQCompleted (Run: every second).
func (p *PriorityQueue) OracleFlushBackoffQCompleted(logger klog.Logger) { p.flushBackoffQCompleted(logger) }

// OracleFlushUnschedulablePodsLeftover runs one flushUnschedulablePodsLeftover (Run: every 30 s).
func (p *PriorityQueue) OracleFlushUnschedulablePodsLeftover(logger klog.Logger) {
	p.flushUnschedulablePodsLeftover(logger)
}

// OracleDump: the queued pods, where they are, their timestamp and attempts (FC_DEBUG)
func (p *PriorityQueue) OracleDump() string {
	out := ""
	for _, pi := range p.podBackoffQ.List() {
		q := pi.(*framework.QueuedPodInfo)
		out += fmt.Sprintf(" backoff:%s@%s/%d", q.Pod.Name, q.Timestamp.Format("05.000000000"), q.Attempts)
	}
	for _, q := range p.unschedulablePods.podInfoMap {
		out += fmt.Sprintf(" unsched:%s@%s/%d", q.Pod.Name, q.Timestamp.Format("05.000000000"), q.Attempts)
	}
	return out
}
