// outcomes.go: added by kspread's dev/seqoracle-build.sh to the fullcycle driver (the shared
// main.go of /work/shared/fullcycle, 1.35 or v131) next to its main.go. It records, for each
// cycle in scheduler.OracleLog, what the cycle left in the fake API once it settled: the pods
// deleted since the previous cycle (the preemption's victims), the cycle's pod's nodeName and
// nominatedNodeName. main.go calls observe after each settle (outcomes.patch). It also stores a
// pod's patch or update in one step with a new resourceVersion (podWriteWithRV), and takes the
// maximum pod backoff from the input (maxBackoff).
package main

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/scheduler"
)

// maxBackoff: the input's maxBackoffSeconds (upstream's default is 10 s, podMaxBackoffSeconds),
// else def (main.go's backoffSeconds, which it uses for both the initial and the maximum backoff).
func maxBackoff(raw []byte, def int64) int64 {
	var in struct {
		MaxBackoff *int64 `json:"maxBackoffSeconds"`
	}
	must(json.Unmarshal(raw, &in))
	if in.MaxBackoff == nil {
		return def
	}
	return *in.MaxBackoff
}

// podWriteWithRV stores a pod's strategic-merge patch (the scheduler's status patches: nomination,
// PodScheduled, DisruptionTarget: status only) or update with a new resourceVersion in ONE tracker write, as an
// API server does. main.go's own bump applies the change first (a watch event whose old and new
// resourceVersion are equal, which the scheduler's updatePodInSchedulingQueue drops) and then
// re-stores the pod with a new resourceVersion (an event without the change): the queue saw the new
// state but never the change itself, so hasNominatedNodeNameChanged was never true and a cleared
// nomination did not move lower-or-equal priority pods (eventhandlers.go). Other patch types fall
// through to main.go's reactor.
func podWriteWithRV(client *fake.Clientset, rv *int64) clienttesting.ReactionFunc {
	gvr := v1.SchemeGroupVersion.WithResource("pods")
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() == "binding" {
			return false, nil, nil
		}
		var pod *v1.Pod
		switch a := action.(type) {
		case clienttesting.PatchAction:
			if a.GetPatchType() != types.StrategicMergePatchType {
				return false, nil, nil
			}
			obj, err := client.Tracker().Get(gvr, a.GetNamespace(), a.GetName())
			if err != nil {
				return true, nil, err
			}
			old, err := json.Marshal(obj)
			if err != nil {
				return true, nil, err
			}
			merged, err := strategicpatch.StrategicMergePatch(old, a.GetPatch(), &v1.Pod{})
			if err != nil {
				return true, nil, err
			}
			patched := &v1.Pod{}
			if err := json.Unmarshal(merged, patched); err != nil {
				return true, nil, err
			}
			// only the status is taken from the JSON round trip: re-decoded quantities and
			// times differ from the stored ones for reflect.DeepEqual, and 1.31's isPodUpdated
			// would take every status patch for a spec change (and requeue the pod)
			pod = obj.(*v1.Pod).DeepCopy()
			pod.Status = patched.Status
		case clienttesting.UpdateAction:
			p, ok := a.GetObject().(*v1.Pod)
			if !ok {
				return false, nil, nil
			}
			pod = p.DeepCopy()
		default:
			return false, nil, nil
		}
		*rv++
		pod.ResourceVersion = strconv.FormatInt(*rv, 10)
		return true, pod, client.Tracker().Update(gvr, pod, pod.Namespace)
	}
}

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
