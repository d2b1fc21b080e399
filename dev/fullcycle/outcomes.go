// outcomes.go: added by kspread's dev/seqoracle-build.sh to the fullcycle driver (the shared
// main.go of /work/shared/fullcycle, 1.35 or v131) next to its main.go. It records, for each
// cycle in scheduler.OracleLog, what the cycle left in the fake API once it settled: the pods
// deleted since the previous cycle (the preemption's victims), the cycle's pod's nodeName and
// nominatedNodeName. main.go calls observe after each settle (outcomes.patch).
package main

import (
	"context"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler"
)

type cycleOutcome struct {
	Index     int      `json:"index"` // into "cycles"
	Pod       string   `json:"pod"`
	Node      string   `json:"node,omitempty"`
	Nominated string   `json:"nominatedNodeName,omitempty"`
	Victims   []string `json:"victims"`
}

type outcomeRecorder struct {
	client  kubernetes.Interface
	present map[string]*v1.Pod
	seen    int
	out     []cycleOutcome
}

func newOutcomeRecorder(ctx context.Context, client kubernetes.Interface) *outcomeRecorder {
	r := &outcomeRecorder{client: client, out: []cycleOutcome{}}
	r.present = r.list(ctx)
	return r
}

func (r *outcomeRecorder) list(ctx context.Context) map[string]*v1.Pod {
	pl, err := r.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	must(err)
	m := map[string]*v1.Pod{}
	for i := range pl.Items {
		p := &pl.Items[i]
		m[p.Namespace+"/"+p.Name] = p
	}
	return m
}

// observe attributes what changed since the last call to the newest cycle (victims are deleted
// only by a preemption, inside its cycle or, with SchedulerAsyncPreemption, in a goroutine the
// settle time waits for).
func (r *outcomeRecorder) observe(ctx context.Context) {
	n := len(scheduler.OracleLog)
	if n == r.seen {
		return
	}
	now := r.list(ctx)
	victims := []string{}
	for k := range r.present {
		if _, ok := now[k]; !ok {
			victims = append(victims, k)
		}
	}
	sort.Strings(victims)
	last := scheduler.OracleLog[n-1]
	o := cycleOutcome{Index: n - 1, Pod: last.Pod, Victims: victims}
	if p, ok := now[last.Pod]; ok {
		o.Node = p.Spec.NodeName
		o.Nominated = p.Status.NominatedNodeName
	}
	r.out = append(r.out, o)
	r.seen = n
	r.present = now
}
