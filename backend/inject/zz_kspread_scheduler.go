// Copied by backend/build.sh into the vendored k8s.io/kubernetes/pkg/scheduler of the build tree:
// the one way to ask, after a cycle, what its extenders decided there (findNodesThatPassExtenders
// and prioritizeNodes are unexported). It calls upstream's own functions and changes nothing.

package scheduler

import (
	"context"

	"k8s.io/klog/v2"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// KspreadFindNodesThatPassExtenders is findNodesThatPassExtenders: the extenders' filters, each
// on the nodes the previous one kept, their failed nodes' statuses set in statuses.
func KspreadFindNodesThatPassExtenders(ctx context.Context, extenders []fwk.Extender, pod *v1.Pod,
	feasible []fwk.NodeInfo, statuses *framework.NodeToStatus) ([]fwk.NodeInfo, error) {
	return findNodesThatPassExtenders(ctx, extenders, pod, feasible, statuses)
}

// KspreadPrioritizeNodes is prioritizeNodes: PreScore, the score plugins and the extenders'
// priorities (weighted and scaled), each node's total.
func KspreadPrioritizeNodes(ctx context.Context, extenders []fwk.Extender, f framework.Framework,
	state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, error) {
	return prioritizeNodes(ctx, extenders, f, state, pod, nodes)
}

// KspreadUpdateSnapshot is what a scheduling cycle does first (schedulePod): the scheduler's
// snapshot brought up to its cache, so that a cycle can be asked about before it runs.
func KspreadUpdateSnapshot(ctx context.Context, sched *Scheduler) error {
	return sched.Cache.UpdateSnapshot(klog.FromContext(ctx), sched.nodeInfoSnapshot)
}
