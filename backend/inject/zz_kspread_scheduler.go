// Copied by backend/build.sh into the vendored k8s.io/kubernetes/pkg/scheduler of the build tree:
// the one way to ask, after a cycle, what its extenders decided there (findNodesThatPassExtenders
// and prioritizeNodes are unexported). It calls upstream's own functions and changes nothing. The
// functions are given as they are (their signatures differ between versions: the same file
// serves every version from 1.29).

package scheduler

import (
	"context"

	"k8s.io/klog/v2"
)

// KspreadFindNodesThatPassExtenders is findNodesThatPassExtenders: the extenders' filters, each
// on the nodes the previous one kept, their failed nodes' statuses set in the statuses given.
var KspreadFindNodesThatPassExtenders = findNodesThatPassExtenders

// KspreadPrioritizeNodes is prioritizeNodes: PreScore, the score plugins and the extenders'
// priorities (weighted and scaled), each node's total.
var KspreadPrioritizeNodes = prioritizeNodes

// KspreadUpdateSnapshot is what a scheduling cycle does first (schedulePod): the scheduler's
// snapshot brought up to its cache, so that a cycle can be asked about before it runs.
func KspreadUpdateSnapshot(ctx context.Context, sched *Scheduler) error {
	return sched.Cache.UpdateSnapshot(klog.FromContext(ctx), sched.nodeInfoSnapshot)
}
