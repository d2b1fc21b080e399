package kspreadbackend

// Asynchronous preemption's last victim. Up to v1.34 the evaluator takes the preemptor out of its
// preempting set before it deletes the last victim (v1.35 keeps it there until that deletion is
// done), so IsPodRunningPreemption can answer false before that deletion is even sent, and the
// next cycle would run with the victim still bound, or the run end before its deletion reaches
// the queue. The backend waits for it too: the last cycle's pod is nominated, and a victim its
// dry run found on that node is still bound and not terminating.

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	clienttesting "k8s.io/client-go/testing"
)

func lastVictimPending(tracker clienttesting.ObjectTracker, popped *v1.Pod, dryRuns map[string]*dryRun) bool {
	if popped == nil {
		return false
	}
	pods := v1.SchemeGroupVersion.WithResource("pods")
	got, err := tracker.Get(pods, popped.Namespace, popped.Name)
	if err != nil {
		return false
	}
	node := got.(*v1.Pod).Status.NominatedNodeName
	if node == "" {
		return false
	}
	for _, d := range dryRuns {
		d.mu.Lock()
		victims := append([]string(nil), d.found[node]...)
		d.mu.Unlock()
		for _, key := range victims {
			ns, name := "default", key // podKey's form
			if i := strings.IndexByte(key, '/'); i >= 0 {
				ns, name = key[:i], key[i+1:]
			}
			v, err := tracker.Get(pods, ns, name)
			if err == nil && v.(*v1.Pod).Spec.NodeName != "" && v.(*v1.Pod).DeletionTimestamp == nil {
				return true
			}
		}
	}
	return false
}
