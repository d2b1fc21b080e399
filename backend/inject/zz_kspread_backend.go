// Copied by backend/build.sh into the vendored k8s.io/kubernetes/pkg/scheduler/framework/runtime
// of the build tree: the one way to reach a framework's score plugins (kspread reports each
// plugin's raw score, before NormalizeScore, which RunScorePlugins does not return) and its
// PostFilter plugins (kspread reports DefaultPreemption's candidates, which its Evaluator keeps
// inside Preempt), and its pods waiting at Permit (which a run leaves waiting, never timed out on
// the wall clock: their Permit timers are stopped). It reads and changes nothing else. The lists are returned as the framework
// keeps them (their element type moved to k8s.io/kube-scheduler/framework in v1.35): the same
// file serves every version from 1.29.

package runtime

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// KspreadScorePlugins returns the score plugins of a framework made by NewFramework (a slice of
// the version's ScorePlugin interface), in the profile's order, with their weights; nil when f is
// another implementation.
func KspreadScorePlugins(f framework.Framework) (any, map[string]int) {
	fi, ok := f.(*frameworkImpl)
	if !ok {
		return nil, nil
	}
	return fi.scorePlugins, fi.scorePluginWeight
}

// KspreadPostFilterPlugins returns the PostFilter plugins of a framework made by NewFramework (a
// slice of the version's PostFilterPlugin interface), in the profile's order; nil when f is
// another implementation.
func KspreadPostFilterPlugins(f framework.Framework) any {
	fi, ok := f.(*frameworkImpl)
	if !ok {
		return nil
	}
	return fi.postFilterPlugins
}

// KspreadWaitingPods returns the pods waiting at Permit in a framework made by NewFramework: UID ->
// the node each was reserved on. With stop, their Permit timers are stopped first: a pod that waits
// is then allowed or rejected by a plugin or by preemption, never by its timeout (Allow and Reject
// work as before; a stopped timer's Stop is a no-op). Nil when f is another implementation. A pod
// already allowed (no plugin pending) or signalled (its status in the channel WaitOnPermit reads)
// is not waiting: its binding cycle goes on, and it stays in the map only until WaitOnPermit returns
// (nor is one whose answer WaitOnPermit has received: zz_kspread_permit_clock.go).
func KspreadWaitingPods(f framework.Framework, stop bool) map[types.UID]string {
	fi, ok := f.(*frameworkImpl)
	if !ok || fi.waitingPods == nil {
		return nil
	}
	out := map[types.UID]string{}
	m := fi.waitingPods
	m.mu.RLock()
	defer m.mu.RUnlock()
	for uid, wp := range m.pods {
		// wp.pod is the assumed pod RunPermitPlugins was given: its nodeName is the reserved node
		wp.mu.RLock()
		if stop {
			for _, t := range wp.pendingPlugins {
				t.Stop()
			}
		}
		if len(wp.pendingPlugins) > 0 && len(wp.s) == 0 && !kspreadWasAnswered(wp) {
			out[uid] = wp.pod.Spec.NodeName
		}
		wp.mu.RUnlock()
	}
	return out
}
