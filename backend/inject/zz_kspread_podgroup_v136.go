//go:build !pre136

// Copied by backend/build.sh into the vendored k8s.io/kubernetes/pkg/scheduler of the build tree
// (1.36 on: the build tag): a pod group cycle (1.36) tries each pod of the group on one snapshot in
// which the group's pods placed before it are assumed (assume: nodeInfoSnapshot.AssumePod), then
// forgets them. The backend asks about the cycle's last pod afterwards on that snapshot: these put
// the pods placed before it back, as the cycle had them, and take them out again. With
// TopologyAwareWorkloadScheduling the cycle tries the group in each placement, the snapshot's nodes
// narrowed to it (AssumePlacement): KspreadPlacementNodes gives the nodes a try searches.

package scheduler

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// KspreadAssumeInSnapshot assumes the pods (each with its nodeName set) in the scheduler's snapshot,
// in order; the function returned forgets them, in reverse order.
func KspreadAssumeInSnapshot(sched *Scheduler, pods []*v1.Pod) (func(), error) {
	logger := klog.Background()
	var done []*v1.Pod
	undo := func() {
		for i := len(done) - 1; i >= 0; i-- {
			_ = sched.nodeInfoSnapshot.ForgetPod(logger, done[i])
		}
	}
	for _, p := range pods {
		pi, err := framework.NewPodInfo(p)
		if err == nil {
			err = sched.nodeInfoSnapshot.AssumePod(pi)
		}
		if err != nil {
			undo()
			return nil, err
		}
		done = append(done, p)
	}
	return undo, nil
}

// KspreadPlacementNodes: the nodes of the placement the scheduler's snapshot has assumed, which
// schedulePod searches (ListNodesInPlacement); every node when none is.
func KspreadPlacementNodes(sched *Scheduler) ([]fwk.NodeInfo, error) {
	return sched.nodeInfoSnapshot.ListNodesInPlacement()
}
