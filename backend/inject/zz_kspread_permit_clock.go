// Copied by backend/build.sh into the vendored k8s.io/kubernetes/pkg/scheduler/framework/runtime of
// the build tree, with a sed of waiting_pods_map.go: a pod waiting at Permit gets a timer per plugin
// (newWaitingPod), started by KspreadAfterFunc instead of time.AfterFunc. A sequence with steps sets
// it to record the timers and fire them on the sequence's clock (a `wait` step); otherwise it is
// time.AfterFunc, as upstream. And a sed of framework.go: WaitOnPermit notes when it has received
// the pod's answer (kspreadAnswer), so that a pod allowed or rejected, still in the map of waiting
// pods until WaitOnPermit returns, is not counted as waiting (KspreadWaitingPods). Nothing else
// changes.

package runtime

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// KspreadAfterFunc starts a waiting pod's Permit timer (default: the wall clock's time.AfterFunc).
var KspreadAfterFunc = time.AfterFunc

// KspreadTimerPending: the timer t (one KspreadAfterFunc returned) is still a pending plugin's timer
// of a pod waiting at Permit in the framework, neither allowed by that plugin nor rejected: that
// pod's UID, and true.
func KspreadTimerPending(f framework.Framework, t *time.Timer) (types.UID, bool) {
	fi, ok := f.(*frameworkImpl)
	if !ok || fi.waitingPods == nil {
		return "", false
	}
	m := fi.waitingPods
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, wp := range m.pods {
		wp.mu.RLock()
		pending := false
		for _, pt := range wp.pendingPlugins {
			if pt == t {
				pending = len(wp.s) == 0 && !kspreadWasAnswered(wp)
			}
		}
		wp.mu.RUnlock()
		if pending {
			return wp.pod.UID, true
		}
	}
	return "", false
}

// kspreadAnswered: the waiting pods whose WaitOnPermit has received their answer
var kspreadAnswered sync.Map

func kspreadAnswer(wp *waitingPod) { kspreadAnswered.Store(wp, true) }

// kspreadWasAnswered: WaitOnPermit has received the pod's answer (it returns, and removes the pod
// from the map, right after)
func kspreadWasAnswered(wp *waitingPod) bool {
	_, ok := kspreadAnswered.Load(wp)
	return ok
}
