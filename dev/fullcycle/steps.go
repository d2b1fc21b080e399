// steps.go: added by kspread's dev/seqoracle-build.sh to the fullcycle driver (next to main.go and
// outcomes.go; steps.patch calls it, the zz_queue_v1NN.go file of the build's release goes into the
// vendored scheduling queue). It runs a sequence: the incoming pods and, between them, kspread's
// `schedule` steps (issue 28), each applied when the scheduler is idle, through the fake API as the
// real component writes it:
//
//   - kubectl cordon/uncordon/label/taint/untaint update the Node; kubectl drain cordons, then asks
//     the eviction API for each pod of the node but DaemonSet pods, in the case's order (below), once:
//     the eviction API refuses a pod two PodDisruptionBudgets cover or one whose budget allows no
//     disruption, else takes one disruption from that budget's status and deletes the pod;
//   - a node added is created (as a kubelet registers it), last in node order; a node deleted is
//     deleted, then its pods (as the pod garbage collector deletes them);
//   - kubectl delete pod deletes the pod; an ungate removes one of a pod's schedulingGates (an update);
//   - the taint manager (NoExecuteTaintManager): a NoExecute taint deletes at once the pods of its node
//     that do not tolerate it, and sets a timer at the least tolerationSeconds of the tolerations used
//     for the others (none: never; an earlier timer is kept); a node without NoExecute taints cancels
//     its pods' timers; a pod bound on such a node is processed once the scheduler is idle;
//   - the controllers: a pod a step deletes whose controller is a ReplicaSet, ReplicationController or
//     StatefulSet of the input's owners is replaced at once by a pending pod with its spec, named as
//     kspread's case format says (the StatefulSet reuses the name, the others `<controller>-r<k>`);
//   - the disruption controller recounts every budget (minAvailable) when the scheduler is idle,
//     before and after each step: expected the matching pods, healthy the bound ones;
//   - the kubelet: a binding starts the pod (phase Running, status.startTime at the sequence clock's
//     second, as the API stores it).
//
// The scheduling queue runs on the sequence's clock (seqClock), not the wall clock: it starts at a
// whole second and moves 1 ns at each reading (so that the queue's timestamps keep the order of
// events); the driver does the queue's periodic work at that clock's times (PriorityQueue.Run's
// flushBackoffQCompleted every second, flushUnschedulablePodsLeftover every 30 s, from the start).
// While the scheduler runs, the clock moves only when it would wait for a backoff (activeQ empty,
// backoffQ not, and SchedulerPopFromBackoffQ off): to the next whole second, with that second's
// flushes. A step happens half a second (and a millisecond per earlier step) into the second the
// run went idle in (so that a backoff ending in that second has ended, as kspread's whole-second
// clock says; with SchedulerPopFromBackoffQ backoffQ compares one-second windows, and a backoff
// ending in the step's second has not: kspread's queue follows both). A `wait` moves it at once
// by its seconds; then, in this order, the leftover flush at the last 30 s tick, the timers that came
// due (in time order), the backoff flush, and the scheduler runs until it is idle (kspread's rule:
// CASE-FORMAT.md, "Sequences: pods and events").
//
// Case order (drain, the taint manager): the input's bound pods in order, then the pods bound during
// the sequence in the order they were bound.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apps "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/utils/clock"
)

type inStep struct {
	At      int                `json:"at"`
	Kind    string             `json:"kind"`
	Node    string             `json:"node"`
	NewNode *inNode            `json:"newNode"`
	Labels  map[string]*string `json:"labels"`
	Taint   *v1.Taint          `json:"taint"`
	Key     string             `json:"key"`
	Effect  string             `json:"effect"`
	Pod     string             `json:"pod"`
	Gate    string             `json:"gate"`
	Seconds int64              `json:"seconds"`
}

// what the driver reads of the input beyond main.go's fields
type seqInput struct {
	// "nodeOrder" (default), "heap" (scores' ties as upstream's heap pops them, candidates in node
	// order) or "upstream"
	TieBreak string `json:"tieBreak"`
	Steps  []inStep  `json:"steps"`
	Owners []inOwner `json:"owners"`
	Pods   []seqPod  `json:"pods"`
	Sched  []seqPod  `json:"schedule"`
	PDBs   []struct {
		Name         string `json:"name"`
		Namespace    string `json:"namespace"`
		MinAvailable *int32 `json:"minAvailable"`
	} `json:"pdbs"`
}

type inOwner struct {
	Kind      string            `json:"kind"`
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Selector  map[string]string `json:"selector"` // matchLabels (a plain map for a ReplicationController)
}

type seqPod struct {
	Name            string   `json:"name"`
	Namespace       string   `json:"namespace"`
	SchedulingGates []v1.PodSchedulingGate `json:"schedulingGates"`
	Controller      *struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"controller"`
}

// seqClock: the sequence's clock. Each reading moves it 1 ns, so that the queue's timestamps keep the
// order of events as a real clock does; set moves it to a time the driver chooses.
type seqClock struct {
	clock.RealClock // timers and tickers: unused (PriorityQueue.Run is not called)
	mu              sync.Mutex
	now             time.Time
}

func (c *seqClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Nanosecond)
	return c.now
}

func (c *seqClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// set moves the clock to t, never back (two steps in one second keep their order)
func (c *seqClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// setBack moves the clock to t even if it is earlier (the wait's leftover flush at its last 30 s
// tick), returning the time to restore
func (c *seqClock) setBack(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.now
	c.now = t
	return was
}

// seqEpoch: the sequence's clock 0 (a whole second, after every bound pod's start time of main.go)
var seqEpoch = time.Unix(1800000000, 0)

type timer struct{ created, due int64 }

type seqDriver struct {
	in        seqInput
	client    *fake.Clientset
	sched     *scheduler.Scheduler
	logger    klog.Logger
	clk       *seqClock
	now       int64 // the sequence clock, whole seconds since seqEpoch
	rv        *int64
	popBackoff bool
	extras    map[string]seqPod // ns/name -> the input's extra fields
	owners    map[string]bool   // kind/ns/name
	minAvail  map[string]int32  // ns/name of a PDB -> minAvailable
	mu        sync.Mutex
	order     []string // pods bound, in case order (drain, taint manager)
	seen      map[types.UID]bool
	timers    map[string]timer
	evicted   []string
	ever      map[string]bool // every pod the sequence had
	replaced  map[string]int
	uids      int
	cycles    int
	stepsDone int
	settle    time.Duration
	rec       *outcomeRecorder
}

type queueClock interface {
	OracleSetClock(clock.WithTicker)
	OracleFlushBackoffQCompleted(klog.Logger)
	OracleFlushUnschedulablePodsLeftover(klog.Logger)
}

func podKey(ns, name string) string {
	if ns == "" || ns == "default" {
		return name
	}
	return ns + "/" + name
}

func splitKey(k string) (string, string) {
	if i := strings.Index(k, "/"); i >= 0 {
		return k[:i], k[i+1:]
	}
	return "default", k
}

// newSeqDriver: after scheduler.New, before the informers start. It puts the queue on the sequence's
// clock, creates the owners and installs the kubelet's part of a binding.
func newSeqDriver(ctx context.Context, raw []byte, client *fake.Clientset, sched *scheduler.Scheduler, rv *int64) *seqDriver {
	d := &seqDriver{client: client, sched: sched, logger: klog.FromContext(ctx), rv: rv,
		clk: &seqClock{now: seqEpoch}, extras: map[string]seqPod{}, owners: map[string]bool{},
		minAvail: map[string]int32{}, seen: map[types.UID]bool{}, timers: map[string]timer{},
		ever: map[string]bool{}, replaced: map[string]int{}}
	must(json.Unmarshal(raw, &d.in))
	sched.SchedulingQueue.(queueClock).OracleSetClock(d.clk)
	for _, f := range utilfeature.DefaultFeatureGate.KnownFeatures() {
		if strings.HasPrefix(f, "SchedulerPopFromBackoffQ=") {
			d.popBackoff = utilfeature.DefaultFeatureGate.Enabled("SchedulerPopFromBackoffQ")
		}
	}
	for _, p := range append(append([]seqPod{}, d.in.Pods...), d.in.Sched...) {
		d.extras[podKey(p.Namespace, p.Name)] = p
	}
	for _, p := range d.in.PDBs {
		if p.MinAvailable != nil {
			d.minAvail[podKey(p.Namespace, p.Name)] = *p.MinAvailable
		}
	}
	for _, o := range d.in.Owners {
		ns := o.Namespace
		if ns == "" {
			ns = "default"
		}
		d.owners[o.Kind+"/"+ns+"/"+o.Name] = true
		meta := metav1.ObjectMeta{Name: o.Name, Namespace: ns, UID: types.UID(o.Kind + "/" + ns + "/" + o.Name)}
		sel := &metav1.LabelSelector{MatchLabels: o.Selector}
		var err error
		switch o.Kind {
		case "ReplicaSet":
			_, err = client.AppsV1().ReplicaSets(ns).Create(ctx, &apps.ReplicaSet{ObjectMeta: meta,
				Spec: apps.ReplicaSetSpec{Selector: sel}}, metav1.CreateOptions{})
		case "StatefulSet":
			_, err = client.AppsV1().StatefulSets(ns).Create(ctx, &apps.StatefulSet{ObjectMeta: meta,
				Spec: apps.StatefulSetSpec{Selector: sel}}, metav1.CreateOptions{})
		case "ReplicationController":
			_, err = client.CoreV1().ReplicationControllers(ns).Create(ctx, &v1.ReplicationController{ObjectMeta: meta,
				Spec: v1.ReplicationControllerSpec{Selector: o.Selector}}, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("owner kind %q is not modelled", o.Kind)
		}
		must(err)
	}
	// preemption's candidates tied on every criterion: the first in the snapshot's node order, as
	// kspread picks them (zz_preemption_order.go; upstream's pick among them is random)
	preemption.OracleCandidateOrder = func(c []string) {
		if d.in.TieBreak == "upstream" {
			return
		}
		idx := map[string]int{}
		for i, n := range sched.OracleSnapshotOrder() {
			idx[n] = i
		}
		sort.SliceStable(c, func(i, j int) bool { return idx[c[i]] < idx[c[j]] })
	}
	// the binding, with what the kubelet then writes when it starts the pod: phase Running and
	// status.startTime (whole seconds, as the API server stores a time); one write
	podsGVR := v1.SchemeGroupVersion.WithResource("pods")
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
		obj, err := client.Tracker().Get(podsGVR, b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		p := obj.(*v1.Pod).DeepCopy()
		p.Spec.NodeName = b.Target.Name
		p.Status.Phase = v1.PodRunning
		d.mu.Lock()
		st := metav1.NewTime(seqEpoch.Add(time.Duration(d.now) * time.Second))
		d.order = append(d.order, podKey(p.Namespace, p.Name))
		*d.rv++
		p.ResourceVersion = strconv.FormatInt(*d.rv, 10)
		d.mu.Unlock()
		p.Status.StartTime = &st
		return true, b, client.Tracker().Update(podsGVR, p, b.Namespace)
	})
	return d
}

// decorate: the input's extra pod fields (schedulingGates, controller) on a pod main.go made
func (d *seqDriver) decorate(pod *v1.Pod) *v1.Pod {
	k := podKey(pod.Namespace, pod.Name)
	d.ever[k] = true
	x, ok := d.extras[k]
	if !ok {
		return pod
	}
	pod.Spec.SchedulingGates = append(pod.Spec.SchedulingGates, x.SchedulingGates...)
	if c := x.Controller; c != nil {
		api := "apps/v1"
		if c.Kind == "ReplicationController" {
			api = "v1"
		}
		yes := true
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: api, Kind: c.Kind, Name: c.Name, Controller: &yes,
			UID: types.UID(c.Kind + "/" + pod.Namespace + "/" + c.Name)}}
	}
	if pod.Spec.NodeName != "" {
		d.order = append(d.order, k)
		d.seen[pod.UID] = true // the taint manager acts on changes only
	}
	return pod
}

// ---- the run ------------------------------------------------------------------------------------

// stepOffset: where in its second the current step happens
func (d *seqDriver) stepOffset() time.Duration {
	return 500*time.Millisecond + time.Duration(d.stepsDone)*time.Millisecond
}

func (d *seqDriver) queue() queueClock { return d.sched.SchedulingQueue.(queueClock) }

// tickTo: the clock at second s, with that second's periodic work (from the start: the backoff
// flush every second, the leftover flush every 30 s)
func (d *seqDriver) tickTo(s int64) {
	d.mu.Lock()
	d.now = s
	d.mu.Unlock()
	d.clk.set(seqEpoch.Add(time.Duration(s) * time.Second))
	if s%30 == 0 {
		d.queue().OracleFlushUnschedulablePodsLeftover(d.logger)
	}
	d.queue().OracleFlushBackoffQCompleted(d.logger)
}

func (d *seqDriver) inFlight() int {
	if q, ok := d.sched.SchedulingQueue.(interface{ InFlightPods() []*v1.Pod }); ok {
		return len(q.InFlightPods())
	}
	return 0 // 1.31: no in-flight pods without queueing hints; the settle time waits for the binding
}

// untilIdle: ScheduleOne until the queue holds no pod it would pop; then the taint manager, and again
// while it evicts
func (d *seqDriver) untilIdle(ctx context.Context, limit int) {
	for {
		for d.cycles < limit {
			time.Sleep(d.settle)
			d.rec.observe(ctx)
			if q, ok := d.sched.SchedulingQueue.(interface{ OracleDropErrorBackoff() int }); ok {
				q.OracleDropErrorBackoff() // zz_queue_v135.go: an Error is not retried (kspread's rule)
			}
			a, b, _ := queueLens(d.sched)
			if a+b == 0 && d.inFlight() == 0 {
				time.Sleep(d.settle)
				a, b, _ = queueLens(d.sched)
				if a+b == 0 {
					break
				}
			}
			if a == 0 && b > 0 && !d.popBackoff {
				// the scheduler waits for the next backoff flush
				d.tickTo(d.now + 1)
				time.Sleep(2 * time.Millisecond)
				continue
			}
			d.sched.ScheduleOne(ctx)
			d.cycles++
		}
		d.rec.observe(ctx)
		if !d.taintManager(ctx) {
			return
		}
	}
}

// run: the pods before each step created and scheduled until idle, then the step
func (d *seqDriver) run(ctx context.Context, in input, settle time.Duration, rec *outcomeRecorder) {
	d.settle, d.rec = settle, rec
	steps := d.in.Steps
	limit := 10*len(in.Schedule) + 10
	for _, st := range steps {
		if st.Kind == "drain" || st.Kind == "deleteNode" || st.Kind == "taint" || st.Kind == "deletePod" || st.Kind == "wait" {
			limit += 200
		}
	}
	// the start: the queue's first flushes, the budgets as the disruption controller counts them
	d.tickTo(0)
	d.recount(ctx)
	next := 0
	for si := 0; si <= len(steps); si++ {
		end := len(in.Schedule)
		if si < len(steps) {
			end = steps[si].At
		}
		for ; next < end; next++ {
			a0, b0, u0 := queueLens(d.sched)
			pod := d.decorate(mkPod(in.Schedule[next], len(in.Pods)+next))
			_, err := d.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
			must(err)
			deadline := time.Now().Add(5 * time.Second)
			for {
				a, b, u := queueLens(d.sched)
				if a+b+u == a0+b0+u0+1 || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(2 * time.Millisecond)
		}
		d.untilIdle(ctx, limit)
		if si < len(steps) {
			d.recount(ctx)
			// a step happens some time after the run that went idle in that second: half a second
			// on, and a millisecond more for each step before it (the runs' readings take
			// nanoseconds), so that a backoff that ends in that second has ended, whether the pod
			// failed after a flush or after an earlier step, as kspread's whole-second clock says
			d.stepsDone++
			d.clk.set(seqEpoch.Add(time.Duration(d.now)*time.Second + d.stepOffset()))
			if q, ok := d.sched.SchedulingQueue.(interface{ OracleDump() string }); ok && os.Getenv("FC_DEBUG") != "" {
				fmt.Fprintf(os.Stderr, "step %d (%s) at %d: %s\n", si, steps[si].Kind, d.now, q.OracleDump())
			}
			d.applyStep(ctx, steps[si])
			time.Sleep(d.settle)
			d.recount(ctx)
			// what the step deleted is no cycle's outcome (outcomes.go counts deletions as victims)
			d.rec.present = d.rec.list(ctx)
		}
	}
}

// ---- the API as the components write it ------------------------------------------------------

func (d *seqDriver) updateNode(ctx context.Context, name string, change func(*v1.Node)) *v1.Node {
	n, err := d.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	must(err)
	n = n.DeepCopy()
	change(n)
	n, err = d.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	must(err)
	return n
}

func (d *seqDriver) getPod(ctx context.Context, key string) *v1.Pod {
	ns, name := splitKey(key)
	p, err := d.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

// podsOn: the pods bound to the node, in case order
func (d *seqDriver) podsOn(ctx context.Context, node string) []*v1.Pod {
	d.mu.Lock()
	order := append([]string{}, d.order...)
	d.mu.Unlock()
	var out []*v1.Pod
	done := map[string]bool{}
	for _, k := range order {
		if done[k] {
			continue
		}
		done[k] = true
		if p := d.getPod(ctx, k); p != nil && p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	return out
}

func (d *seqDriver) forget(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	keep := d.order[:0]
	for _, k := range d.order {
		if k != key {
			keep = append(keep, k)
		}
	}
	d.order = keep
	delete(d.timers, key)
}

// evict: delete the pod (a step's eviction), then its controller's replacement
func (d *seqDriver) evict(ctx context.Context, p *v1.Pod) {
	key := podKey(p.Namespace, p.Name)
	must(d.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}))
	d.forget(key)
	d.evicted = append(d.evicted, key)
	d.replace(ctx, p)
}

// replace: the ReplicaSet, ReplicationController or StatefulSet controller creates a pending pod with
// the spec of the pod it lost
func (d *seqDriver) replace(ctx context.Context, p *v1.Pod) {
	ref := metav1.GetControllerOf(p)
	if ref == nil || !d.owners[ref.Kind+"/"+p.Namespace+"/"+ref.Name] {
		return
	}
	name := p.Name
	if ref.Kind != "StatefulSet" {
		c := ref.Kind + "/" + p.Namespace + "/" + ref.Name
		d.replaced[c]++
		name = fmt.Sprintf("%s-r%d", ref.Name, d.replaced[c])
	}
	d.uids++
	spec := *p.Spec.DeepCopy()
	spec.NodeName = ""
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: p.Labels,
		OwnerReferences: p.OwnerReferences, UID: types.UID(fmt.Sprintf("%s/%s#%d", p.Namespace, name, d.uids)),
		CreationTimestamp: metav1.NewTime(seqEpoch.Add(time.Duration(d.now) * time.Second))},
		Spec: spec, Status: v1.PodStatus{Phase: v1.PodPending}}
	_, err := d.client.CoreV1().Pods(p.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	must(err)
	d.ever[podKey(p.Namespace, name)] = true
}

func selects(sel *metav1.LabelSelector, l map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	must(err)
	return !s.Empty() && s.Matches(labels.Set(l))
}

// evictionAllowed: the eviction API's PodDisruptionBudget check for a running pod (checkAndDecrement)
func (d *seqDriver) evictionAllowed(ctx context.Context, p *v1.Pod) bool {
	l, err := d.client.PolicyV1().PodDisruptionBudgets(p.Namespace).List(ctx, metav1.ListOptions{})
	must(err)
	var covering []policyv1.PodDisruptionBudget
	for _, b := range l.Items {
		if selects(b.Spec.Selector, p.Labels) {
			covering = append(covering, b)
		}
	}
	if len(covering) == 0 {
		return true
	}
	if len(covering) > 1 {
		return false // "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
	}
	b := covering[0].DeepCopy()
	if b.Status.DisruptionsAllowed <= 0 {
		return false
	}
	b.Status.DisruptionsAllowed--
	if b.Status.DisruptedPods == nil {
		b.Status.DisruptedPods = map[string]metav1.Time{}
	}
	b.Status.DisruptedPods[p.Name] = metav1.NewTime(d.clk.Now())
	_, err = d.client.PolicyV1().PodDisruptionBudgets(b.Namespace).UpdateStatus(ctx, b, metav1.UpdateOptions{})
	must(err)
	return true
}

// recount: the disruption controller over every budget (minAvailable, an integer: expected the
// matching pods, healthy the bound ones not being deleted; disruptionsAllowed = healthy - minAvailable,
// at least 0). A budget without minAvailable keeps its status.
func (d *seqDriver) recount(ctx context.Context) {
	l, err := d.client.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	must(err)
	pods, err := d.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	must(err)
	for _, b := range l.Items {
		want, ok := d.minAvail[podKey(b.Namespace, b.Name)]
		if !ok {
			continue
		}
		healthy := int32(0)
		for _, p := range pods.Items {
			if p.Namespace == b.Namespace && selects(b.Spec.Selector, p.Labels) && p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				healthy++
			}
		}
		allowed := healthy - want
		if allowed < 0 {
			allowed = 0
		}
		mi := intstr.FromInt32(want)
		if b.Status.DisruptionsAllowed == allowed && b.Spec.MinAvailable != nil && *b.Spec.MinAvailable == mi && len(b.Status.DisruptedPods) == 0 {
			continue
		}
		nb := b.DeepCopy()
		nb.Spec.MinAvailable = &mi
		nb.Status.DisruptionsAllowed = allowed
		nb.Status.CurrentHealthy = healthy
		nb.Status.DesiredHealthy = want
		nb.Status.DisruptedPods = nil
		_, err := d.client.PolicyV1().PodDisruptionBudgets(b.Namespace).Update(ctx, nb, metav1.UpdateOptions{})
		must(err)
	}
}

// tolerates: the toleration tolerates the taint (key, effect; Exists or Equal)
func tolerates(tol v1.Toleration, t v1.Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case v1.TolerationOpExists:
		return true
	case "", v1.TolerationOpEqual:
		return tol.Value == t.Value
	}
	return false
}

// processPod: the taint manager's processPodOnNode
func (d *seqDriver) processPod(ctx context.Context, p *v1.Pod, node *v1.Node) {
	key := podKey(p.Namespace, p.Name)
	var taints []v1.Taint
	for _, t := range node.Spec.Taints {
		if t.Effect == v1.TaintEffectNoExecute {
			taints = append(taints, t)
		}
	}
	if len(taints) == 0 {
		delete(d.timers, key)
		return
	}
	least := int64(-1)
	for _, t := range taints {
		var used *v1.Toleration
		for i := range p.Spec.Tolerations {
			if tolerates(p.Spec.Tolerations[i], t) {
				used = &p.Spec.Tolerations[i]
				break
			}
		}
		if used == nil {
			d.evict(ctx, p)
			return
		}
		if used.TolerationSeconds != nil {
			s := *used.TolerationSeconds
			if s < 0 {
				s = 0
			}
			if least < 0 || s < least {
				least = s
			}
		}
	}
	if least < 0 {
		delete(d.timers, key)
		return
	}
	if least == 0 {
		d.evict(ctx, p)
		return
	}
	if old, ok := d.timers[key]; ok && old.created < d.now {
		return
	}
	d.timers[key] = timer{d.now, d.now + least}
}

func (d *seqDriver) noExecute(ctx context.Context, node *v1.Node) {
	for _, p := range d.podsOn(ctx, node.Name) {
		d.processPod(ctx, p, node)
	}
}

// dueTimers: the evictions whose tolerationSeconds ran out, in time order
func (d *seqDriver) dueTimers(ctx context.Context) bool {
	type due struct {
		at  int64
		key string
	}
	var list []due
	for k, t := range d.timers {
		if t.due <= d.now {
			list = append(list, due{t.due, k})
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].at != list[j].at {
			return list[i].at < list[j].at
		}
		return list[i].key < list[j].key
	})
	for _, x := range list {
		delete(d.timers, x.key)
		if p := d.getPod(ctx, x.key); p != nil && p.Spec.NodeName != "" {
			d.evict(ctx, p)
		}
	}
	return len(list) > 0
}

// taintManager, once the scheduler is idle: the pods bound since on nodes with NoExecute taints, and
// the timers that came due. Returns whether it evicted a pod.
func (d *seqDriver) taintManager(ctx context.Context) bool {
	n := len(d.evicted)
	d.mu.Lock()
	order := append([]string{}, d.order...)
	d.mu.Unlock()
	for _, k := range order {
		p := d.getPod(ctx, k)
		if p == nil || p.Spec.NodeName == "" || d.seen[p.UID] {
			continue
		}
		d.seen[p.UID] = true
		node, err := d.client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			continue
		}
		d.processPod(ctx, p, node)
	}
	d.dueTimers(ctx)
	if len(d.evicted) > n {
		time.Sleep(d.settle)
		d.recount(ctx)
		d.rec.present = d.rec.list(ctx)
		return true
	}
	return false
}

func (d *seqDriver) applyStep(ctx context.Context, st inStep) {
	switch st.Kind {
	case "cordon", "uncordon":
		d.updateNode(ctx, st.Node, func(n *v1.Node) { n.Spec.Unschedulable = st.Kind == "cordon" })
	case "drain":
		d.updateNode(ctx, st.Node, func(n *v1.Node) { n.Spec.Unschedulable = true })
		time.Sleep(20 * time.Millisecond)
		for _, p := range d.podsOn(ctx, st.Node) {
			if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "DaemonSet" {
				continue
			}
			if d.evictionAllowed(ctx, p) {
				d.evict(ctx, p)
			}
		}
	case "label":
		d.updateNode(ctx, st.Node, func(n *v1.Node) {
			for k, v := range st.Labels {
				if v == nil {
					delete(n.Labels, k)
				} else {
					n.Labels[k] = *v
				}
			}
		})
	case "taint":
		n := d.updateNode(ctx, st.Node, func(n *v1.Node) { n.Spec.Taints = append(n.Spec.Taints, *st.Taint) })
		time.Sleep(20 * time.Millisecond)
		d.noExecute(ctx, n)
	case "untaint":
		n := d.updateNode(ctx, st.Node, func(n *v1.Node) {
			var keep []v1.Taint
			for _, t := range n.Spec.Taints {
				if !(t.Key == st.Key && (st.Effect == "" || string(t.Effect) == st.Effect)) {
					keep = append(keep, t)
				}
			}
			n.Spec.Taints = keep
		})
		time.Sleep(20 * time.Millisecond)
		d.noExecute(ctx, n)
	case "addNode":
		nn := st.NewNode
		lab := map[string]string{"kubernetes.io/hostname": nn.Name}
		for k, v := range nn.Labels {
			lab[k] = v
		}
		alloc := quantities(map[string]string{"cpu": "1000000", "memory": "1000000Gi", "ephemeral-storage": "1000000Gi", "pods": "110"})
		if nn.Allocatable != nil {
			alloc = quantities(nn.Allocatable)
		}
		if scheduler.OracleNodeIndex != nil {
			// an added node comes last in the case's node order (kspread's rule for ties)
			scheduler.OracleNodeIndex[nn.Name] = len(scheduler.OracleNodeIndex)
		}
		before := d.sched.Cache.NodeCount()
		_, err := d.client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nn.Name, Labels: lab},
			Spec:   v1.NodeSpec{Taints: nn.Taints, Unschedulable: nn.Unschedulable},
			Status: v1.NodeStatus{Allocatable: alloc, Capacity: alloc}}, metav1.CreateOptions{})
		must(err)
		// the node in the cache (a deleted node of that name may still be there while it holds a
		// pod assumed at Permit: AddNode then gives that NodeInfo the new node)
		waitFor(func() bool {
			if info, ok := d.sched.Cache.Dump().Nodes[nn.Name]; ok {
				return info.Node() != nil
			}
			return d.sched.Cache.NodeCount() == before+1
		})
	case "deleteNode":
		pods := d.podsOn(ctx, st.Node)
		must(d.client.CoreV1().Nodes().Delete(ctx, st.Node, metav1.DeleteOptions{}))
		time.Sleep(20 * time.Millisecond)
		for _, p := range pods {
			d.evict(ctx, p)
		}
	case "deletePod":
		p := d.getPod(ctx, st.Pod)
		if p == nil {
			must(fmt.Errorf("deletePod: pod %q does not exist at that point", st.Pod))
		}
		d.evict(ctx, p)
	case "ungate":
		p := d.getPod(ctx, st.Pod)
		if p == nil || p.Spec.NodeName != "" {
			must(fmt.Errorf("ungate: pod %q is not a pending pod at that point", st.Pod))
		}
		p = p.DeepCopy()
		var keep []v1.PodSchedulingGate
		for _, g := range p.Spec.SchedulingGates {
			if g.Name != st.Gate {
				keep = append(keep, g)
			}
		}
		if len(keep) == len(p.Spec.SchedulingGates) {
			must(fmt.Errorf("ungate: pod %q has no gate %q", st.Pod, st.Gate))
		}
		p.Spec.SchedulingGates = keep
		_, err := d.client.CoreV1().Pods(p.Namespace).Update(ctx, p, metav1.UpdateOptions{})
		must(err)
	case "wait":
		end := d.now + st.Seconds
		if tick := end / 30 * 30; tick > d.now {
			// the leftover flush at the last 30 s tick of the wait
			was := d.clk.setBack(seqEpoch.Add(time.Duration(tick) * time.Second))
			d.queue().OracleFlushUnschedulablePodsLeftover(d.logger)
			d.clk.set(was)
		}
		d.mu.Lock()
		d.now = end
		d.mu.Unlock()
		// half a second into the wait's last second, as for any step
		d.clk.set(seqEpoch.Add(time.Duration(end)*time.Second + d.stepOffset()))
		d.dueTimers(ctx)
		d.queue().OracleFlushBackoffQCompleted(d.logger)
	default:
		must(fmt.Errorf("unknown step kind %q", st.Kind))
	}
}

// final: every pod the sequence had -> its node, else its nominated node, else nil; the pods evicted
// by steps or by preemption
func (d *seqDriver) final(ctx context.Context) (map[string]any, []string) {
	out := map[string]any{}
	for k := range d.ever {
		out[k] = nil
	}
	pl, err := d.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	must(err)
	for _, p := range pl.Items {
		k := podKey(p.Namespace, p.Name)
		switch {
		case p.Spec.NodeName != "":
			out[k] = p.Spec.NodeName
		case p.Status.NominatedNodeName != "":
			out[k] = p.Status.NominatedNodeName
		default:
			out[k] = nil
		}
	}
	ev := map[string]bool{}
	for _, k := range d.evicted {
		ev[k] = true
	}
	for _, o := range d.rec.out {
		for _, v := range o.Victims {
			ns, name := splitKey(v)
			ev[podKey(ns, name)] = true
		}
	}
	var list []string
	for k := range ev {
		list = append(list, k)
	}
	sort.Strings(list)
	return out, list
}
