package kspreadbackend

// A case's pending pods in `pods` (no nodeName): kspread holds them as waiting, a pod the queue
// tried before and keeps among its unschedulable pods, its nominatedNodeName (when it has one)
// reserving room on that node for the pods of its priority or less. The backend sets up the same:
// each gets a scheduling gate of its own, so that the queue's PreEnqueue (SchedulingGates) keeps
// it among the unschedulable pods and no cycle pops it, and its nomination is given to the
// queue's nominator, as upstream's queue records a pod's nomination when it holds it after a
// failed cycle (a gated pod's Add records none). Its status updates reach the queue as any
// pending pod's: preemption clearing a lower-priority nomination clears it in the nominator too.
// kspread sends no sequence with such pods (upstream's queue would retry them on its events).

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// heldGate is the scheduling gate that holds a case's pending pod.
const heldGate = "kspread.io/held-as-waiting"

// holdPending gates the case's pending pods before they are created; an error when a pod's
// profile has no SchedulingGates at PreEnqueue (the gate would not hold it).
func holdPending(sched *scheduler.Scheduler, pods []v1.Pod) error {
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != "" {
			continue
		}
		if fw, ok := sched.Profiles[p.Spec.SchedulerName]; ok {
			gated := false
			for _, pl := range fw.PreEnqueuePlugins() {
				gated = gated || pl.Name() == "SchedulingGates"
			}
			if !gated {
				return fmt.Errorf("the pending pod %s/%s cannot be held as waiting: its profile %q has no "+
					"SchedulingGates PreEnqueue plugin", p.Namespace, p.Name, p.Spec.SchedulerName)
			}
		}
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: heldGate})
	}
	return nil
}

// nominateHeld gives the queue's nominator the nominations of the case's pending pods (once the
// informers delivered them: the queue holds them gated).
func nominateHeld(sched *scheduler.Scheduler, logger klog.Logger, pods []v1.Pod) error {
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != "" || p.Status.NominatedNodeName == "" {
			continue
		}
		pi, err := framework.NewPodInfo(p)
		if err != nil {
			return err
		}
		sched.SchedulingQueue.AddNominatedPod(logger, pi, nil)
	}
	return nil
}
