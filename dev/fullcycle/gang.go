// gang.go: added by kspread's dev/seqoracle-build.sh to the fullcycle driver (next to main.go and
// steps.go; gang.patch calls it) for sequences with gangs (1.35, gates GenericWorkload and
// GangScheduling, issue 32):
//
//   - the input's `workloads` (scheduling.k8s.io/v1alpha1 Workload manifests) are created in the
//     fake API before the informers start, so the scheduler's Workload informer and GangScheduling's
//     lister hold them; a pod's `workloadRef` (input) becomes its spec.workloadRef;
//   - the gang's clock: podGroupInfo.SchedulingTimeout reads the sequence's clock
//     (workloadmanager.OracleNow, zz_gang_clock_wm.go), and a waiting pod's Permit timer
//     (framework/runtime's newWaitingPod, zz_gang_clock_fw.go) is not a wall-clock timer: the driver
//     records it (its due time on the sequence's clock, and a stand-in time.Timer that never fires,
//     whose Stop tells whether Allow or Reject stopped it) and fires it itself when a `wait` step
//     passes its due time: each time the earliest timer still armed comes due within the wait, the
//     clock moves to it, every armed timer due in that second fires (in due order: the waiting pod is
//     rejected "rejected due to timeout after waiting ... at plugin GangScheduling"), and the
//     scheduler runs until idle before the wait goes on (kspread's rule: docs/reference/gangs.md);
//   - the driver's idle test leaves out the pods waiting at Permit (they stay in flight while their
//     binding cycle waits; ScheduleOne would block on an empty queue);
//   - at the end, `waiting`: the pods still waiting at Permit.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingapi "k8s.io/api/scheduling/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/backend/workloadmanager"
	fwruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

type gangPod struct {
	Name        string                `json:"name"`
	Namespace   string                `json:"namespace"`
	WorkloadRef *v1.WorkloadReference `json:"workloadRef"`
}

type gangInput struct {
	Workloads []schedulingapi.Workload `json:"workloads"`
	Pods      []gangPod                `json:"pods"`
	Sched     []gangPod                `json:"schedule"`
}

type gangTimer struct {
	due time.Time
	t   *time.Timer
	f   func()
}

var (
	gangRefs   = map[string]*v1.WorkloadReference{} // ns/name (podKey) -> workloadRef
	gangMu     sync.Mutex
	gangTimers []*gangTimer
	gangOn     bool
)

// gangSetup: after newSeqDriver, before the informers start
func gangSetup(ctx context.Context, raw []byte, client *fake.Clientset, d *seqDriver) {
	var in gangInput
	must(json.Unmarshal(raw, &in))
	for _, p := range append(append([]gangPod{}, in.Pods...), in.Sched...) {
		if p.WorkloadRef != nil {
			gangRefs[podKey(p.Namespace, p.Name)] = p.WorkloadRef
		}
	}
	for i := range in.Workloads {
		w := in.Workloads[i].DeepCopy()
		if w.Namespace == "" {
			w.Namespace = "default"
		}
		_, err := client.SchedulingV1alpha1().Workloads(w.Namespace).Create(ctx, w, metav1.CreateOptions{})
		must(err)
	}
	gangOn = len(in.Workloads) > 0 || len(gangRefs) > 0
	if v := os.Getenv("FC_V"); v != "" { // klog's verbosity (debugging)
		must(flag.Set("v", v))
	}
	workloadmanager.OracleNow = d.clk.Now
	fwruntime.OracleAfterFunc = func(wait time.Duration, f func()) *time.Timer {
		// a stand-in that never fires: Stop reports whether Allow / Reject stopped it first
		t := time.AfterFunc(1000*time.Hour, func() {})
		gangMu.Lock()
		gangTimers = append(gangTimers, &gangTimer{due: d.clk.Now().Add(wait), t: t, f: f})
		gangMu.Unlock()
		return t
	}
}

// gangDecorate: the pod's workloadRef (mkPod)
func gangDecorate(pod *v1.Pod) {
	if ref, ok := gangRefs[podKey(pod.Namespace, pod.Name)]; ok {
		r := *ref
		pod.Spec.WorkloadRef = &r
	}
}

// gangWaiting: the pods waiting at Permit
func gangWaiting(s *scheduler.Scheduler) []string {
	var out []string
	for _, f := range s.Profiles {
		f.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
			p := wp.GetPod()
			out = append(out, podKey(p.Namespace, p.Name))
		})
	}
	sort.Strings(out)
	return out
}

// gangNext: the earliest armed timer due by `until` (disarmed on return: it is about to fire), or nil
func gangNext(until time.Time) *gangTimer {
	gangMu.Lock()
	defer gangMu.Unlock()
	sort.SliceStable(gangTimers, func(i, j int) bool { return gangTimers[i].due.Before(gangTimers[j].due) })
	for len(gangTimers) > 0 && !gangTimers[0].due.After(until) {
		t := gangTimers[0]
		gangTimers = gangTimers[1:]
		if t.t.Stop() {
			return t
		}
	}
	return nil
}

// gangWait: a `wait` step to second `end`: the Permit timers that come due in it, each second of them
// in turn, with the scheduler run until idle after each
func (d *seqDriver) gangWait(ctx context.Context, end int64) {
	if !gangOn {
		return
	}
	until := seqEpoch.Add(time.Duration(end)*time.Second + d.stepOffset())
	for rounds := 0; rounds < 100; rounds++ {
		first := gangNext(until)
		if first == nil {
			return
		}
		sec := int64(first.due.Sub(seqEpoch) / time.Second)
		fire := []*gangTimer{first}
		for {
			t := gangNext(seqEpoch.Add(time.Duration(sec+1)*time.Second - 1))
			if t == nil {
				break
			}
			fire = append(fire, t)
		}
		d.mu.Lock()
		d.now = sec
		d.mu.Unlock()
		d.clk.set(fire[len(fire)-1].due.Add(time.Nanosecond))
		before := gangWaiting(d.sched)
		for _, t := range fire {
			t.f()
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(d.settle)
		if os.Getenv("FC_DEBUG") != "" {
			fmt.Fprintf(os.Stderr, "gang: %d Permit timers fired at %d s; waiting before %v, after %v\n", len(fire), sec, before, gangWaiting(d.sched))
			nl, err := d.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			must(err)
			for _, n := range append(nl.Items, v1.Node{}) {
				for _, pi := range d.sched.SchedulingQueue.NominatedPodsForNode(n.Name) {
					fmt.Fprintf(os.Stderr, "gang:   nominated to %q: %s\n", n.Name, pi.GetPod().Name)
				}
			}
		}
		d.untilIdle(ctx, d.cycles+500)
	}
	must(errGangRounds)
}

var errGangRounds = &gangError{"a gang timed out at Permit 100 times in one wait"}

type gangError struct{ s string }

func (e *gangError) Error() string { return e.s }
