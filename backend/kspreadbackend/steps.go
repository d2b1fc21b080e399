package kspreadbackend

// A sequence's steps (kspread's `schedule` steps: CASE-FORMAT.md, "Sequences: pods and events";
// docs/reference/sequences.md), applied to the real scheduler as the real components write them,
// as the sequence oracle's driver applies them (dev/fullcycle/steps.go), each when the scheduler is
// idle:
//
//   - kubectl cordon/uncordon/label/taint/untaint update the Node; kubectl drain cordons, then asks
//     the eviction API for each pod of the node but DaemonSet pods, once, in the case's order (below):
//     a terminating pod is deleted without asking; the eviction API refuses a pod two
//     PodDisruptionBudgets cover or one whose budget allows no disruption, else takes one
//     disruption from that budget's status and deletes the pod;
//   - a node added is created (as a kubelet registers it); a node deleted is deleted, then its pods
//     (the pod garbage collector); zoneDown deletes every node of the zone so, in node order;
//   - kubectl delete pod deletes the pod; an ungate removes one of a pod's schedulingGates;
//   - the taint manager: a NoExecute taint deletes at once the pods of its node that do not
//     tolerate it and sets a timer at the least tolerationSeconds of the tolerations used for the
//     others (none: never; an earlier timer is kept); a node left without NoExecute taints cancels
//     its pods' timers; a pod bound on such a node is processed once the scheduler is idle;
//   - the device taint eviction controller (devicetaints.go, with devices) acts with it, its
//     evictions due in one list with the taint manager's timers, and once before the first run;
//   - the controllers: a pod a step deletes whose controller is a ReplicaSet, ReplicationController
//     or StatefulSet of the case is replaced at once by a pending pod with its spec, named as the
//     case format says (a StatefulSet reuses the name, the others `<controller>-r<k>`);
//   - the disruption controller recounts every budget before and after each step (expected: the
//     matching pods; healthy: the bound ones not terminating);
//   - the kubelet: a binding starts the pod at the sequence clock's second.
//
// The scheduling queue runs on the sequence's clock (seqClock), not the wall clock
// (zz_kspread_queue.go, 1.33 and later): it starts at kspread's start of the sequence (the
// second after every start time of the case's bound pods) and moves 1 ns at each reading; the run
// does PriorityQueue.Run's periodic work itself at that clock's times (the backoff flush every
// second, the leftover flush every 30 s). While the scheduler runs the clock moves only when it
// would wait for a flush (activeQ empty, and backoffQ holding pods Pop does not take): to the
// next second. A step happens half a second (and a millisecond per earlier step) into the second
// the run went idle in; `wait` moves the clock by its seconds, then the leftover flush at its last
// 30 s tick, the timers that came due (in time order), the backoff flush; the scheduler then runs
// until idle. Case order (drain, the taint manager): the case's bound pods in order, then the pods
// bound during the sequence in the order they were bound.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/clock"
)

// inStep: one step of the input's `steps`, after the first `at` incoming pods.
type inStep struct {
	At      int                `json:"at"`
	Kind    string             `json:"kind"`
	Node    string             `json:"node"`
	NewNode *v1.Node           `json:"newNode"`
	Labels  map[string]*string `json:"labels"`
	Taint   *v1.Taint          `json:"taint"`
	Key     string             `json:"key"`
	Effect  string             `json:"effect"`
	Pod     string             `json:"pod"` // "namespace/name" (a pod of namespace default: its name)
	Gate    string             `json:"gate"`
	Seconds int64              `json:"seconds"`
	Zone    string             `json:"zone"`
	// Template: a `replicas: max` entry's pod (kind "max": maxentry.go)
	Template *v1.Pod `json:"template"`
	// the device steps (devicetaints.go): a DeviceTaintRule, a rule's name; a claim
	// ("namespace/name"), one of its devices ("driver/pool/device") and conditions
	Rule       json.RawMessage    `json:"rule"`
	Name       string             `json:"name"`
	Claim      string             `json:"claim"`
	Device     string             `json:"device"`
	Conditions []metav1.Condition `json:"conditions"`
}

// deviceEvictor: the device taint eviction controller and the device steps (devicetaints.go; nil
// in a build without devices)
type deviceEvictor interface {
	// due: the bound pods whose device taint eviction time has come (the sequence clock's second
	// it came at), in case order
	due(ctx context.Context) ([]deviceDue, error)
	// evict evicts the pod as the controller does (its condition, then the deletion)
	evict(ctx context.Context, p *v1.Pod) error
	// applyStep applies a device step; false for another kind
	applyStep(ctx context.Context, st inStep) (bool, error)
	// publish creates the ResourceSlices of a node an addNode step added, as its driver publishes
	// them once the node is there (one of the same name already there, the node's before it was
	// deleted, is replaced)
	publish(ctx context.Context, slices []json.RawMessage) error
}

type deviceDue struct {
	at  int64
	key string
}

var deviceTaintEviction func(t *timeline) deviceEvictor

// inBudget: a PodDisruptionBudget's spec as the disruption controller reads it: minAvailable or
// maxUnavailable (an integer or a percentage of the expected pods, rounded up), or the desired
// healthy count a budget given as a status alone implies.
type inBudget struct {
	Namespace      string              `json:"namespace"`
	Name           string              `json:"name"`
	MinAvailable   *intstr.IntOrString `json:"minAvailable"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable"`
	Desired        *int32              `json:"desired"`
}

// kspreadQueue: the queue's clock and periodic work (zz_kspread_queue.go)
type kspreadQueue interface {
	KspreadSetClock(clock.WithTicker)
	KspreadFlushBackoffQCompleted(klog.Logger)
	KspreadFlushUnschedulablePodsLeftover(klog.Logger)
	KspreadBackoffLens() (int, int)
}

// seqClock: the sequence's clock. Each reading moves it 1 ns, so that the queue's timestamps keep
// the order of events; set moves it to a time the run chooses, never back.
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

func (c *seqClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// setBack moves the clock to t even if it is earlier, returning the time it was at
func (c *seqClock) setBack(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.now
	c.now = t
	return was
}

type taintTimer struct{ created, due int64 }

// permitTimer: a waiting pod's Permit timer (a stand-in that never fires on the wall clock), due at
// a time of the sequence's clock; fire rejects the pod as upstream's timer does
type permitTimer struct {
	due  time.Time
	t    *time.Timer
	fire func()
}

// timeline: a sequence's steps and the components that act between its scheduling cycles.
type timeline struct {
	steps   []inStep
	budgets map[string]inBudget
	client  *fake.Clientset
	tracker *countingTracker
	sched   *scheduler.Scheduler
	q       kspreadQueue
	logger  klog.Logger
	clk     *seqClock
	epoch   time.Time
	// deadline: the case's limit (a wait for the scheduler past it is the case's error)
	deadline time.Time
	// quiet: the run's wait until the scheduler has seen every write; create: the incoming pods
	// from..to-1 created
	quiet  func(what string) error
	create func(from, to int) error
	nextRV func() string // the next resourceVersion of a pod (as the run's other pod writes get)
	// bindingsDone: no binding cycle runs but those of the pods waiting at Permit (a rejected pod's
	// ends after the event its forgotten assumption sends)
	bindingsDone func() bool
	incoming     int
	nextStep     int
	// waitEnd: the second a `wait` step in progress ends at (its Permit timeouts fire first, the
	// scheduler running until idle after each), -1 when none; waitAt: that step's index
	waitEnd, waitAt, waitStart int64
	rounds                     int
	// permit: the Permit timers of pods waiting at Permit, on the sequence's clock
	permitMu sync.Mutex
	permit   []*permitTimer

	mu         sync.Mutex
	now        int64 // the sequence clock: whole seconds since epoch
	stepsDone  int
	popBackoff bool
	// order: the pods bound, in case order; nodes: the nodes in the case's order (added ones last)
	order    []string
	nodes    []string
	seen     map[string]bool // the pods the taint manager has processed since they were bound
	timers   map[string]taintTimer
	owners   map[string]bool // kind/namespace/name of the controllers that replace a pod
	replaced map[string]int
	// ever: every pod the sequence had, in order (the case's, the incoming, the replacements)
	ever    []string
	everSet map[string]bool
	uids    int
	// mx: the `replicas: max` entries (maxentry.go)
	mx maxEntries
	// dte: the device taint eviction controller (nil without devices); dteStarted: it had its
	// first look (before the scheduler's first run, as kspread's)
	dte        deviceEvictor
	dteStarted bool
	// nodeSlices: a node an addNode step adds -> its ResourceSlices (spec.nodeName), which the step
	// publishes (holdNodeSlices)
	nodeSlices map[string][]json.RawMessage
}

// newTimeline: after scheduler.New, before the informers start: the queue on the sequence's
// clock. epoch: kspread's start of the sequence's clock.
func newTimeline(ctx context.Context, in *input, client *fake.Clientset, tracker *countingTracker,
	sched *scheduler.Scheduler, epoch, deadline time.Time) (*timeline, error) {
	q, ok := sched.SchedulingQueue.(kspreadQueue)
	if !stepsBuilt || !ok {
		return nil, fmt.Errorf("the case has steps, which this backend (Kubernetes %s) does not apply: its "+
			"scheduling queue cannot run on the sequence's clock (1.33 and later)", KubernetesVersion())
	}
	t := &timeline{steps: in.Steps, budgets: map[string]inBudget{}, client: client, tracker: tracker,
		sched: sched, q: q, logger: klog.FromContext(ctx), clk: &seqClock{now: epoch}, epoch: epoch, deadline: deadline,
		popBackoff: gateOn("SchedulerPopFromBackoffQ"), seen: map[string]bool{}, timers: map[string]taintTimer{},
		owners: map[string]bool{}, replaced: map[string]int{}, everSet: map[string]bool{}, incoming: len(in.Incoming),
		waitEnd: -1}
	q.KspreadSetClock(t.clk)
	// a gang's deadline and its pods' Permit timers on the sequence's clock (the run's end puts
	// the wall clock back: t.close)
	setGangClock(t.clk.Now)
	frameworkruntime.KspreadAfterFunc = func(wait time.Duration, f func()) *time.Timer {
		stand := time.AfterFunc(1000*time.Hour, func() {})
		t.permitMu.Lock()
		t.permit = append(t.permit, &permitTimer{due: t.clk.Now().Add(wait), t: stand, fire: f})
		t.permitMu.Unlock()
		return stand
	}
	for _, b := range in.Budgets {
		t.budgets[podKey(nsOf(b.Namespace), b.Name)] = b
	}
	if deviceTaintEviction != nil && len(in.Devices) > 0 {
		t.dte = deviceTaintEviction(t)
	}
	for _, c := range in.ReplicaSets {
		t.owners["ReplicaSet/"+nsOf(c.Namespace)+"/"+c.Name] = true
	}
	for _, c := range in.ReplicationControllers {
		t.owners["ReplicationController/"+nsOf(c.Namespace)+"/"+c.Name] = true
	}
	for _, c := range in.StatefulSets {
		t.owners["StatefulSet/"+nsOf(c.Namespace)+"/"+c.Name] = true
	}
	for _, n := range in.Nodes {
		t.nodes = append(t.nodes, n.Name)
	}
	for _, p := range in.Pods {
		k := podKey(p.Namespace, p.Name)
		t.note(k)
		if p.Spec.NodeName != "" {
			t.order = append(t.order, k)
			t.seen[k] = true // the taint manager acts on changes only
		}
	}
	for _, p := range in.Incoming {
		t.note(podKey(p.Namespace, p.Name))
	}
	for i, st := range in.Steps {
		if st.At < 0 || st.At > len(in.Incoming) || (i > 0 && st.At < in.Steps[i-1].At) {
			return nil, fmt.Errorf("steps[%d] (%s): at %d is not a place among the %d incoming pods after the "+
				"step before it", i, st.Kind, st.At, len(in.Incoming))
		}
	}
	return t, nil
}

// holdNodeSlices: the device objects to create at the start, and the slices each addNode step
// publishes. A node-local ResourceSlice (spec.nodeName) is published by its node's driver once the
// kubelet has registered the node: the slices of a node an addNode step adds are created by that
// step (so the API server dates their taints from it, as kspread does), not at the start, unless
// the case has the node from the start (a step adds it again after a deleteNode: its slices are
// there from the start, and the step publishes them anew).
func (t *timeline) holdNodeSlices(objs []json.RawMessage, nodes []v1.Node) []json.RawMessage {
	if t == nil || t.dte == nil {
		return objs
	}
	added := map[string]bool{}
	for _, st := range t.steps {
		if st.Kind == "addNode" && st.NewNode != nil {
			added[st.NewNode.Name] = true
		}
	}
	if len(added) == 0 {
		return objs
	}
	present := map[string]bool{}
	for _, n := range nodes {
		present[n.Name] = true
	}
	t.nodeSlices = map[string][]json.RawMessage{}
	var start []json.RawMessage
	for _, raw := range objs {
		var head struct {
			Kind string `json:"kind"`
			Spec struct {
				NodeName *string `json:"nodeName"`
			} `json:"spec"`
		}
		// (an object that does not decode is left to the device set-up, which says why)
		if json.Unmarshal(raw, &head) == nil && head.Kind == "ResourceSlice" && head.Spec.NodeName != nil &&
			added[*head.Spec.NodeName] {
			t.nodeSlices[*head.Spec.NodeName] = append(t.nodeSlices[*head.Spec.NodeName], raw)
			if !present[*head.Spec.NodeName] {
				continue
			}
		}
		start = append(start, raw)
	}
	return start
}

// close: the wall clock back for the Permit timers and gangs' deadlines (the next case of a
// serving backend)
func (t *timeline) close() {
	if t == nil {
		return
	}
	setGangClock(nil)
	frameworkruntime.KspreadAfterFunc = time.AfterFunc
}

// nextPermit: the earliest Permit timer still pending that is due by `until` (taken out of the
// list: it is about to fire), or nil
func (t *timeline) nextPermit(until time.Time) *permitTimer {
	t.permitMu.Lock()
	defer t.permitMu.Unlock()
	sort.SliceStable(t.permit, func(i, j int) bool { return t.permit[i].due.Before(t.permit[j].due) })
	for len(t.permit) > 0 && !t.permit[0].due.After(until) {
		p := t.permit[0]
		t.permit = t.permit[1:]
		for _, fw := range t.sched.Profiles {
			if _, ok := frameworkruntime.KspreadTimerPending(fw, p.t); ok {
				return p
			}
		}
	}
	return nil
}

// permitRound, in a wait to second `end`: when a Permit timer still pending comes due in it, the
// clock moves to its second and every pending timer due in that second fires, in due order (the
// waiting pods are rejected "rejected due to timeout after waiting ... at plugin ..."); whether any
// fired (the scheduler then runs until idle, and the wait goes on)
func (t *timeline) permitRound(end int64) (bool, error) {
	first := t.nextPermit(t.epoch.Add(time.Duration(end)*time.Second + 500*time.Millisecond +
		time.Duration(t.stepsDone)*time.Millisecond))
	if first == nil {
		return false, nil
	}
	sec := int64(first.due.Sub(t.epoch) / time.Second)
	fire := []*permitTimer{first}
	for {
		p := t.nextPermit(t.epoch.Add(time.Duration(sec+1)*time.Second - 1))
		if p == nil {
			break
		}
		fire = append(fire, p)
	}
	t.mu.Lock()
	if sec > t.now {
		t.now = sec
	}
	t.mu.Unlock()
	t.clk.set(fire[len(fire)-1].due.Add(time.Nanosecond))
	// one at a time: each rejected pod's binding cycle ends (the rejection handled: the pod back in
	// the queue, forgotten, the event that makes sent) before the next timer fires and before the
	// run looks at the queue again
	for _, p := range fire {
		p.fire()
		if err := waitUntil(t.deadline, "the binding cycle of a pod rejected at Permit", t.bindingsDone); err != nil {
			return true, err
		}
	}
	return true, nil
}

func nsOf(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

func (t *timeline) note(key string) {
	if !t.everSet[key] {
		t.everSet[key] = true
		t.ever = append(t.ever, key)
	}
}

// bound: the binding of a pod (the scheduler's write): it joins the case order; its start time,
// the sequence clock's second
func (t *timeline) bound(ns, name string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.order = append(t.order, podKey(ns, name))
	return t.epoch.Add(time.Duration(t.now) * time.Second)
}

// firstStep: the incoming pods created before the first step (all of them without steps)
func (t *timeline) firstStep(incoming int) int {
	if t == nil || len(t.steps) == 0 {
		return incoming
	}
	return t.steps[0].At
}

// next, the scheduler idle: the taint manager acts; when it deleted nothing, the next step is
// applied and the pods after it created. Whether the scheduler has more to do (nil: never).
func (t *timeline) next(ctx context.Context) (bool, error) {
	if t == nil {
		return false, nil
	}
	if t.waitEnd >= 0 {
		// a wait in progress: its next Permit timeouts, else its end
		fired, err := t.permitRound(t.waitEnd)
		if err != nil {
			return false, err
		}
		if fired {
			t.rounds++
			if t.rounds > maxPermitRounds {
				return false, fmt.Errorf("steps[%d] (wait): a pod waiting at Permit timed out %d times in this wait "+
					"and would go on", t.waitAt, maxPermitRounds)
			}
			return true, nil
		}
		i, end := int(t.waitAt), t.waitEnd
		t.waitEnd = -1
		if err := t.endWait(ctx, end); err != nil {
			return false, fmt.Errorf("steps[%d] (wait): %w", i, err)
		}
		if err := t.afterStep(ctx); err != nil {
			return false, err
		}
		if err := t.createAfter(i); err != nil {
			return false, err
		}
		return true, t.devicesStart(ctx)
	}
	if changed, err := t.taintManager(ctx); err != nil || changed {
		return changed, err
	}
	if t.maxRunning() {
		return t.maxNext(ctx)
	}
	if t.nextStep >= len(t.steps) {
		return false, nil
	}
	i := t.nextStep
	t.nextStep++
	if t.steps[i].Kind == "max" {
		return t.maxStart(ctx, i)
	}
	if t.steps[i].Kind == "wait" {
		// the wait's Permit timeouts first, each followed by a run until idle (next, again)
		if t.steps[i].Seconds < 0 {
			return false, fmt.Errorf("steps[%d] (wait): a wait of %d s", i, t.steps[i].Seconds)
		}
		if err := t.recount(ctx); err != nil {
			return false, err
		}
		t.stepAt()
		t.waitStart, t.waitEnd, t.waitAt, t.rounds = t.now, t.now+t.steps[i].Seconds, int64(i), 0
		return true, nil
	}
	if err := t.apply(ctx, i); err != nil {
		return false, err
	}
	if err := t.createAfter(i); err != nil {
		return false, err
	}
	return true, t.devicesStart(ctx)
}

// begin, the case's objects and the incoming pods before the first step created: the device taint
// eviction controller's first look, unless the sequence begins with a step (then after it)
func (t *timeline) begin(ctx context.Context) error {
	if t == nil || t.firstStep(t.incoming) == 0 {
		return nil
	}
	return t.devicesStart(ctx)
}

// devicesStart: the device taint eviction controller's first look (once), its evictions seen
// and the budgets recounted
func (t *timeline) devicesStart(ctx context.Context) error {
	if t.dte == nil || t.dteStarted {
		return nil
	}
	t.dteStarted = true
	before := t.tracker.c.deletedCount()
	if _, err := t.dueTimers(ctx); err != nil || t.tracker.c.deletedCount() == before {
		return err
	}
	if err := t.quiet("the device taint eviction controller's evictions"); err != nil {
		return err
	}
	return t.recount(ctx)
}

// maxPermitRounds: the most Permit timeouts one wait goes through (kspread's bound)
const maxPermitRounds = 100

// createAfter: the incoming pods after step i, up to the next step
func (t *timeline) createAfter(i int) error {
	to := t.incoming
	if i+1 < len(t.steps) {
		to = t.steps[i+1].At
	}
	return t.create(t.steps[i].At, to)
}

// deleted: every pod deleted in the run, once each, sorted
func (t *timeline) deleted(cnt *counts) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, k := range cnt.deletedSince(0) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// start: the queue's first flushes, at the sequence's second 0
func (t *timeline) start() { t.tickTo(0) }

// tickTo: the clock at second s, with that second's periodic work (from the start: the backoff
// flush every second, the leftover flush every 30 s)
func (t *timeline) tickTo(s int64) {
	t.mu.Lock()
	t.now = s
	t.mu.Unlock()
	t.clk.set(t.epoch.Add(time.Duration(s) * time.Second))
	if s%30 == 0 {
		t.q.KspreadFlushUnschedulablePodsLeftover(t.logger)
	}
	t.q.KspreadFlushBackoffQCompleted(t.logger)
}

// waitsForFlush: the scheduler would wait for the backoff flush (activeQ empty, backoffQ holding
// pods Pop does not take: every pod without SchedulerPopFromBackoffQ, else those of
// podErrorBackoffQ alone); the clock then moves to the next second, with its flushes.
func (t *timeline) waitsForFlush(active, backoff int) bool {
	if t == nil || active > 0 || backoff == 0 {
		return false
	}
	if t.popBackoff {
		if b, _ := t.q.KspreadBackoffLens(); b > 0 {
			return false
		}
	}
	t.tickTo(t.now + 1)
	return true
}

// stepAt: the clock where a step happens, half a second into the current second and a
// millisecond more for each step before it
func (t *timeline) stepAt() {
	t.stepsDone++
	t.clk.set(t.epoch.Add(time.Duration(t.now)*time.Second + 500*time.Millisecond +
		time.Duration(t.stepsDone)*time.Millisecond))
}

func (t *timeline) getPod(ctx context.Context, key string) *v1.Pod {
	ns, name := splitKey(key)
	p, err := t.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

func splitKey(k string) (string, string) {
	if i := strings.Index(k, "/"); i >= 0 {
		return k[:i], k[i+1:]
	}
	return "default", k
}

// podsOn: the pods bound to the node, in case order
func (t *timeline) podsOn(ctx context.Context, node string) []*v1.Pod {
	t.mu.Lock()
	order := append([]string{}, t.order...)
	t.mu.Unlock()
	var out []*v1.Pod
	done := map[string]bool{}
	for _, k := range order {
		if done[k] {
			continue
		}
		done[k] = true
		if p := t.getPod(ctx, k); p != nil && p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	return out
}

func (t *timeline) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	keep := t.order[:0]
	for _, k := range t.order {
		if k != key {
			keep = append(keep, k)
		}
	}
	t.order = keep
	delete(t.timers, key)
	delete(t.seen, key)
}

// evict: delete the pod, then its controller's replacement
func (t *timeline) evict(ctx context.Context, p *v1.Pod) error {
	key := podKey(p.Namespace, p.Name)
	if err := t.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	t.forget(key)
	return t.replace(ctx, p)
}

// replace: the ReplicaSet, ReplicationController or StatefulSet controller creates a pending pod
// with the spec of the pod it lost
func (t *timeline) replace(ctx context.Context, p *v1.Pod) error {
	ref := metav1.GetControllerOf(p)
	if ref == nil || !t.owners[ref.Kind+"/"+nsOf(p.Namespace)+"/"+ref.Name] {
		return nil
	}
	name := p.Name
	if ref.Kind != "StatefulSet" {
		c := ref.Kind + "/" + nsOf(p.Namespace) + "/" + ref.Name
		t.replaced[c]++
		name = fmt.Sprintf("%s-r%d", ref.Name, t.replaced[c])
	}
	t.uids++
	spec := *p.Spec.DeepCopy()
	spec.NodeName = ""
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: p.Labels,
		OwnerReferences: p.OwnerReferences, UID: types.UID(fmt.Sprintf("%s/%s#%d", nsOf(p.Namespace), name, t.uids)),
		CreationTimestamp: metav1.NewTime(t.epoch.Add(time.Duration(t.now) * time.Second))},
		Spec: spec, Status: v1.PodStatus{Phase: v1.PodPending}}
	if dra != nil {
		if err := dra.podCreating(t.tracker, pod); err != nil {
			return err
		}
	}
	if err := ephemeralClaims(t.tracker, pod); err != nil {
		return err
	}
	if _, err := t.client.CoreV1().Pods(p.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return err
	}
	t.note(podKey(p.Namespace, name))
	return nil
}

func selects(sel *metav1.LabelSelector, l map[string]string) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && !s.Empty() && s.Matches(labels.Set(l))
}

// evictionAllowed: the eviction API's PodDisruptionBudget check (checkAndDecrement)
func (t *timeline) evictionAllowed(ctx context.Context, p *v1.Pod) (bool, error) {
	l, err := t.client.PolicyV1().PodDisruptionBudgets(p.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	var covering []policyv1.PodDisruptionBudget
	for _, b := range l.Items {
		if selects(b.Spec.Selector, p.Labels) {
			covering = append(covering, b)
		}
	}
	if len(covering) == 0 {
		return true, nil
	}
	if len(covering) > 1 || covering[0].Status.DisruptionsAllowed <= 0 {
		return false, nil
	}
	b := covering[0].DeepCopy()
	b.Status.DisruptionsAllowed--
	_, err = t.client.PolicyV1().PodDisruptionBudgets(b.Namespace).UpdateStatus(ctx, b, metav1.UpdateOptions{})
	return err == nil, err
}

// recount: the disruption controller over every budget: expected the matching pods, healthy the
// bound ones not terminating, disruptionsAllowed healthy less the desired healthy count, at least 0
func (t *timeline) recount(ctx context.Context) error {
	l, err := t.client.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pods, err := t.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, b := range l.Items {
		budget, ok := t.budgets[podKey(nsOf(b.Namespace), b.Name)]
		if !ok {
			continue
		}
		expected, healthy := 0, int32(0)
		for _, p := range pods.Items {
			if nsOf(p.Namespace) == nsOf(b.Namespace) && selects(b.Spec.Selector, p.Labels) {
				expected++
				if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
					healthy++
				}
			}
		}
		amount := func(x *intstr.IntOrString) int32 {
			if x.Type == intstr.String {
				pct := 0
				fmt.Sscanf(strings.TrimSuffix(x.StrVal, "%"), "%d", &pct)
				return int32((pct*expected + 99) / 100)
			}
			return x.IntVal
		}
		var desired int32
		switch {
		case budget.MinAvailable != nil:
			desired = amount(budget.MinAvailable)
		case budget.MaxUnavailable != nil:
			desired = int32(expected) - amount(budget.MaxUnavailable)
		case budget.Desired != nil:
			desired = *budget.Desired
		default:
			continue
		}
		allowed := healthy - desired
		if allowed < 0 {
			allowed = 0
		}
		if b.Status.DisruptionsAllowed == allowed {
			continue
		}
		nb := b.DeepCopy()
		nb.Status.DisruptionsAllowed = allowed
		if _, err := t.client.PolicyV1().PodDisruptionBudgets(b.Namespace).UpdateStatus(ctx, nb, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// tolerates: the toleration tolerates the taint (key, effect; Exists or Equal)
func tolerates(tol v1.Toleration, taint v1.Taint) bool {
	if tol.Effect != "" && tol.Effect != taint.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != taint.Key {
		return false
	}
	switch tol.Operator {
	case v1.TolerationOpExists:
		return true
	case "", v1.TolerationOpEqual:
		return tol.Value == taint.Value
	}
	return false
}

// processPod: the taint manager's processPodOnNode
func (t *timeline) processPod(ctx context.Context, p *v1.Pod, node *v1.Node) error {
	key := podKey(p.Namespace, p.Name)
	var taints []v1.Taint
	for _, tt := range node.Spec.Taints {
		if tt.Effect == v1.TaintEffectNoExecute {
			taints = append(taints, tt)
		}
	}
	least := int64(-1)
	for _, tt := range taints {
		var used *v1.Toleration
		for i := range p.Spec.Tolerations {
			if tolerates(p.Spec.Tolerations[i], tt) {
				used = &p.Spec.Tolerations[i]
				break
			}
		}
		if used == nil {
			return t.evict(ctx, p)
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
	if len(taints) > 0 && least == 0 {
		return t.evict(ctx, p)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if least < 0 {
		// no NoExecute taint, or none tolerated for a time: no timer
		delete(t.timers, key)
		return nil
	}
	if old, ok := t.timers[key]; ok && old.created < t.now {
		return nil // processPodOnNode keeps a timer set earlier
	}
	t.timers[key] = taintTimer{t.now, t.now + least}
	return nil
}

func (t *timeline) noExecute(ctx context.Context, node *v1.Node) error {
	for _, p := range t.podsOn(ctx, node.Name) {
		if err := t.processPod(ctx, p, node); err != nil {
			return err
		}
	}
	return nil
}

// dueTimers: the evictions whose tolerationSeconds ran out, in time order; whether any came due
func (t *timeline) dueTimers(ctx context.Context) (bool, error) {
	type due struct {
		at  int64
		dev int // 0: the taint manager's timer; 1+i: the device taint eviction controller's i-th
		key string
	}
	var list []due
	t.mu.Lock()
	for k, tm := range t.timers {
		if tm.due <= t.now {
			list = append(list, due{tm.due, 0, k})
		}
	}
	for _, x := range list {
		delete(t.timers, x.key)
	}
	t.mu.Unlock()
	if t.dte != nil {
		// the device taint eviction controller's evictions that came due (case order)
		devs, err := t.dte.due(ctx)
		if err != nil {
			return false, err
		}
		for i, d := range devs {
			list = append(list, due{d.at, 1 + i, d.key})
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].at != list[j].at {
			return list[i].at < list[j].at
		}
		if list[i].dev != list[j].dev {
			return list[i].dev < list[j].dev
		}
		return list[i].key < list[j].key
	})
	for _, x := range list {
		if p := t.getPod(ctx, x.key); p != nil && p.Spec.NodeName != "" {
			evict := t.evict
			if x.dev > 0 {
				evict = t.dte.evict
			}
			if err := evict(ctx, p); err != nil {
				return false, err
			}
		}
	}
	return len(list) > 0, nil
}

// taintManager, once the scheduler is idle: the pods bound since on nodes with NoExecute taints,
// and the timers that came due. Whether it deleted a pod (the scheduler then runs again).
func (t *timeline) taintManager(ctx context.Context) (bool, error) {
	before := t.tracker.c.deletedCount()
	t.mu.Lock()
	order := append([]string{}, t.order...)
	t.mu.Unlock()
	for _, k := range order {
		if t.seen[k] {
			continue
		}
		p := t.getPod(ctx, k)
		if p == nil || p.Spec.NodeName == "" {
			continue
		}
		t.seen[k] = true
		node, err := t.client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if err := t.processPod(ctx, p, node); err != nil {
			return false, err
		}
	}
	if _, err := t.dueTimers(ctx); err != nil {
		return false, err
	}
	if t.tracker.c.deletedCount() > before {
		if err := t.quiet("the taint manager's evictions"); err != nil {
			return false, err
		}
		return true, t.recount(ctx)
	}
	return false, nil
}

func (t *timeline) updateNode(ctx context.Context, name string, change func(*v1.Node)) (*v1.Node, error) {
	n, err := t.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	n = n.DeepCopy()
	change(n)
	return t.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
}

func (t *timeline) deleteNode(ctx context.Context, name string) error {
	pods := t.podsOn(ctx, name)
	if err := t.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	keep := t.nodes[:0]
	for _, n := range t.nodes {
		if n != name {
			keep = append(keep, n)
		}
	}
	t.nodes = keep
	if err := t.quiet("the node's deletion"); err != nil {
		return err
	}
	for _, p := range pods {
		if err := t.evict(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// apply: the step i, the scheduler idle (the disruption controller recounts before and after it)
func (t *timeline) apply(ctx context.Context, i int) error {
	st := t.steps[i]
	if err := t.recount(ctx); err != nil {
		return err
	}
	t.stepAt()
	err := t.applyStep(ctx, st)
	if err != nil {
		return fmt.Errorf("steps[%d] (%s): %w", i, st.Kind, err)
	}
	return t.afterStep(ctx)
}

// afterStep: the step's writes seen, the disruption controller recounts
func (t *timeline) afterStep(ctx context.Context) error {
	if err := t.quiet("the step's writes"); err != nil {
		return err
	}
	return t.recount(ctx)
}

func (t *timeline) applyStep(ctx context.Context, st inStep) error {
	switch st.Kind {
	case "cordon", "uncordon":
		_, err := t.updateNode(ctx, st.Node, func(n *v1.Node) { n.Spec.Unschedulable = st.Kind == "cordon" })
		return err
	case "drain":
		if _, err := t.updateNode(ctx, st.Node, func(n *v1.Node) { n.Spec.Unschedulable = true }); err != nil {
			return err
		}
		if err := t.quiet("the cordon"); err != nil {
			return err
		}
		for _, p := range t.podsOn(ctx, st.Node) {
			if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "DaemonSet" {
				continue // kubectl drain --ignore-daemonsets
			}
			ok := p.DeletionTimestamp != nil
			if !ok {
				var err error
				if ok, err = t.evictionAllowed(ctx, p); err != nil {
					return err
				}
			}
			if ok {
				if err := t.evict(ctx, p); err != nil {
					return err
				}
			}
		}
		return nil
	case "label":
		_, err := t.updateNode(ctx, st.Node, func(n *v1.Node) {
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			for k, v := range st.Labels {
				if v == nil {
					delete(n.Labels, k)
				} else {
					n.Labels[k] = *v
				}
			}
		})
		return err
	case "taint", "untaint":
		if st.Kind == "taint" && st.Taint == nil {
			return fmt.Errorf("no taint given")
		}
		n, err := t.updateNode(ctx, st.Node, func(n *v1.Node) {
			if st.Kind == "taint" {
				n.Spec.Taints = append(n.Spec.Taints, *st.Taint)
				return
			}
			var keep []v1.Taint
			for _, tt := range n.Spec.Taints {
				if !(tt.Key == st.Key && (st.Effect == "" || string(tt.Effect) == st.Effect)) {
					keep = append(keep, tt)
				}
			}
			n.Spec.Taints = keep
		})
		if err != nil {
			return err
		}
		if err := t.quiet("the node's update"); err != nil {
			return err
		}
		return t.noExecute(ctx, n)
	case "addNode":
		if st.NewNode == nil {
			return fmt.Errorf("no newNode given")
		}
		if _, err := t.client.CoreV1().Nodes().Create(ctx, st.NewNode, metav1.CreateOptions{}); err != nil {
			return err
		}
		t.nodes = append(t.nodes, st.NewNode.Name)
		if slices := t.nodeSlices[st.NewNode.Name]; len(slices) > 0 && t.dte != nil {
			// its driver's slices, published once the node is there (the node's event first)
			if err := t.quiet("the added node"); err != nil {
				return err
			}
			return t.dte.publish(ctx, slices)
		}
		return nil
	case "deleteNode":
		return t.deleteNode(ctx, st.Node)
	case "zoneDown":
		var members []string
		for _, name := range t.nodes {
			n, err := t.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if n.Labels[v1.LabelTopologyZone] == st.Zone || n.Labels[v1.LabelFailureDomainBetaZone] == st.Zone {
				members = append(members, name)
			}
		}
		if len(members) == 0 {
			return fmt.Errorf("no node is in zone %q at that point", st.Zone)
		}
		for _, name := range members {
			if err := t.deleteNode(ctx, name); err != nil {
				return err
			}
		}
		return nil
	case "deletePod":
		p := t.getPod(ctx, st.Pod)
		if p == nil {
			return fmt.Errorf("pod %q does not exist at that point", st.Pod)
		}
		return t.evict(ctx, p)
	case "ungate":
		p := t.getPod(ctx, st.Pod)
		if p == nil || p.Spec.NodeName != "" {
			return fmt.Errorf("pod %q is not a pending pod at that point", st.Pod)
		}
		p = p.DeepCopy()
		var keep []v1.PodSchedulingGate
		for _, g := range p.Spec.SchedulingGates {
			if g.Name != st.Gate {
				keep = append(keep, g)
			}
		}
		if len(keep) == len(p.Spec.SchedulingGates) {
			return fmt.Errorf("pod %q has no gate %q", st.Pod, st.Gate)
		}
		p.Spec.SchedulingGates = keep
		// one write with a new resourceVersion (the scheduler drops a pod update whose
		// resourceVersion did not change)
		p.ResourceVersion = t.nextRV()
		return t.tracker.Update(podsResource, p, p.Namespace)
	}
	if t.dte != nil {
		if ok, err := t.dte.applyStep(ctx, st); ok {
			if err != nil || st.Kind == "setDeviceConditions" {
				return err
			}
			// a rule added or deleted: the evictions that came due (the taint manager's too)
			_, err = t.dueTimers(ctx)
			return err
		}
	}
	return fmt.Errorf("the step kind %q is not one this backend applies", st.Kind)
}

// endWait: the end of a wait (its Permit timeouts done): the clock at its end, the leftover flush
// at its last 30 s tick, the taint manager's timers that came due (in time order), the backoff flush
func (t *timeline) endWait(ctx context.Context, end int64) error {
	if tick := end / 30 * 30; tick > t.waitStart {
		// the leftover flush at the last 30 s tick of the wait
		was := t.clk.setBack(t.epoch.Add(time.Duration(tick) * time.Second))
		t.q.KspreadFlushUnschedulablePodsLeftover(t.logger)
		t.clk.set(was)
	}
	t.mu.Lock()
	if end > t.now {
		t.now = end
	}
	t.mu.Unlock()
	// half a second into the wait's last second, as for any step
	t.clk.set(t.epoch.Add(time.Duration(end)*time.Second + 500*time.Millisecond +
		time.Duration(t.stepsDone)*time.Millisecond))
	if _, err := t.dueTimers(ctx); err != nil {
		return err
	}
	t.q.KspreadFlushBackoffQCompleted(t.logger)
	return nil
}

// placements: every pod the sequence had -> its node, else its nominated node, else nil (waiting:
// the pods waiting at Permit, reported by the node they were nominated to before, as kspread has it)
func (t *timeline) placements(ctx context.Context, waiting func(*v1.Pod) (string, bool)) map[string]any {
	out := map[string]any{}
	for _, k := range t.ever {
		p := t.getPod(ctx, k)
		switch {
		case p == nil:
			out[k] = nil
		default:
			if node, ok := waiting(p); ok {
				if node == "" {
					out[k] = nil
				} else {
					out[k] = node
				}
				continue
			}
			switch {
			case p.Spec.NodeName != "":
				out[k] = p.Spec.NodeName
			case p.Status.NominatedNodeName != "":
				out[k] = p.Status.NominatedNodeName
			default:
				out[k] = nil
			}
		}
	}
	return out
}
