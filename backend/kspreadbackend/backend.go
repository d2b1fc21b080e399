// Package kspreadbackend runs a kspread case through upstream kube-scheduler's own code: a real
// scheduler (scheduler.New with a fake clientset and informers: cache, snapshot, scheduling queue,
// the profile's framework, DefaultPreemption, DefaultBinder) whose ScheduleOne is called until no
// pod is left to pop. After each cycle the profile's framework is asked, on the snapshot that
// cycle used, for every node's filter status and every score plugin's raw, normalized and
// weighted scores, which is what kspread reports.
//
// A plugin author builds a backend of their own with a main package of a few lines:
//
//	func main() { kspreadbackend.Main(kspreadbackend.WithPlugin("MyPlugin", myplugin.New)) }
//
// as kube-scheduler's app.NewSchedulerCommand(app.WithPlugin(name, factory)) registers them.
//
// Protocol: `BACKEND --info` prints {"kubernetesVersion", "plugins", "outOfTreePlugins",
// "protocols"} (protocols: "serve", and "devices", and "workloads" (1.35) or "podGroups" (1.36), and
// "steps", "max" and "ephemeralVolumes" (1.33 and later: steps.go, maxentry.go, ephemeral.go), and
// "deviceSteps" and "nodeSlices" (with devices and steps: devicetaints.go, steps.go), when the build has them); `BACKEND` reads one case
// (JSON, see input) from stdin and prints its result (JSON, see output) on stdout. A case that
// cannot be run prints {"error": "..."} and exits 0; a broken request exits 2.
package kspreadbackend

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// Option configures a backend (WithPlugin).
type Option func(*options)

type options struct {
	registry frameworkruntime.Registry
}

// WithPlugin registers an out-of-tree plugin under name, as app.WithPlugin does for kube-scheduler.
// When the factory refuses args that no registered type decoded, the error says so.
func WithPlugin(name string, factory frameworkruntime.PluginFactory) Option {
	return func(o *options) {
		o.registry[name] = func(ctx context.Context, obj runtime.Object, h fwHandle) (fwPlugin, error) {
			p, err := factory(ctx, obj, h)
			if err != nil {
				err = argsNote(name, obj, err)
			}
			return p, err
		}
	}
}

// argsNote explains a factory's error that names the type its args came as (upstream's "want args
// to be of type XArgs, got *runtime.Unknown") when no type <name>Args is registered in the
// scheduler's config scheme: the args came as the JSON the case wrote, or as nil (no pluginConfig,
// and no registered type to default them).
func argsNote(name string, obj runtime.Object, err error) error {
	gvk := schema.GroupVersionKind{Group: "kubescheduler.config.k8s.io", Version: "v1", Kind: name + "Args"}
	msg := err.Error()
	if scheme.Scheme.Recognizes(gvk) || !(strings.Contains(msg, "runtime.Unknown") || strings.Contains(msg, "<nil>")) {
		return err
	}
	how := "its args came as *runtime.Unknown, the JSON the case writes"
	if obj == nil {
		how = "it was given no args (nil): the case has no pluginConfig for it, and no registered type defaults them"
	}
	return fmt.Errorf("%w (%s: no type %sArgs is registered in the scheduler's config scheme; import the "+
		"package that registers it in main.go, as examples/backend-outoftree/main.go imports "+
		"sigs.k8s.io/scheduler-plugins/apis/config/scheme)", err, how, name)
}

type input struct {
	Nodes           []v1.Node                      `json:"nodes"`
	Pods            []v1.Pod                       `json:"pods"`
	Incoming        []v1.Pod                       `json:"incoming"`
	PDBs            []policyv1.PodDisruptionBudget `json:"pdbs"`
	PriorityClasses []schedulingv1.PriorityClass   `json:"priorityClasses"`
	Namespaces      []v1.Namespace                 `json:"namespaces"`
	Services        []v1.Service                   `json:"services"`
	// the controllers of DefaultSelector (PodTopologySpread's default constraints, SelectorSpread)
	ReplicationControllers []v1.ReplicationController `json:"replicationControllers"`
	ReplicaSets            []appsv1.ReplicaSet        `json:"replicaSets"`
	StatefulSets           []appsv1.StatefulSet       `json:"statefulSets"`
	// Storage: PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers,
	// CSIStorageCapacities and VolumeAttachments (each with its kind), created before the nodes
	Storage []json.RawMessage `json:"storage"`
	// Devices: DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates
	// (resource.k8s.io/v1, each with its kind), created before the nodes (devices.go)
	Devices []json.RawMessage `json:"devices"`
	// Workloads: scheduling.k8s.io/v1alpha1 Workloads (gangs, 1.35: workloads.go), in the API
	// before the informers start; a pod's spec.workloadRef comes with the pod
	// (1.36: scheduling.k8s.io/v1alpha2 Workloads, stored only: podgroups_v136.go)
	Workloads []json.RawMessage `json:"workloads"`
	// PodGroups: scheduling.k8s.io/v1alpha2 PodGroups (1.36: podgroups_v136.go), in the API before the
	// informers start; a pod's spec.schedulingGroup comes with the pod
	PodGroups []json.RawMessage `json:"podGroups"`
	Config    string            `json:"config"` // KubeSchedulerConfiguration text; empty: upstream's default
	// Extenders: when given, the configuration's extenders (v1 Extender objects, as a
	// KubeSchedulerConfiguration writes them: the case's and the file's, their urlPrefix as
	// kspread expanded it); every urlPrefix must be a loopback address
	Extenders    json.RawMessage `json:"extenders"`
	FeatureGates map[string]bool `json:"featureGates"`
	// MaxCycles: stop after this many scheduling cycles (1 for a single-cycle case: the
	// incoming pod's first cycle, not its retry after preemption); 0: until no pod is left
	MaxCycles int `json:"maxCycles"`
	// Observe: "last" (default) reports the per-node data of the last cycle (filter statuses,
	// scores); "none" reports none (the placements only)
	Observe string `json:"observe"`
	// TimeoutMillis: the case's limit (default 120 s); past it the case answers an error
	TimeoutMillis int64 `json:"timeoutMillis"`
	// Steps: a sequence's steps, each after the first `at` incoming pods (steps.go; protocol
	// "steps"); Budgets: the PodDisruptionBudgets' specs the disruption controller recounts them by
	Steps   []inStep   `json:"steps"`
	Budgets []inBudget `json:"budgets"`
}

// Cycle is what one scheduling cycle did, in the shape of kspread's actual results.
type Cycle struct {
	Pod       string                      `json:"pod"`
	Filter    map[string]map[string]any   `json:"filter"`
	Feasible  []string                    `json:"feasible"`
	RawScores map[string]map[string]int64 `json:"rawScores"`
	Scores    map[string]map[string]int64 `json:"scores"`
	Weighted  map[string]map[string]int64 `json:"weightedScores"`
	Totals    map[string]int64            `json:"totals"`
	Selected  *string                     `json:"selected"`
	// Scored: false when the profile has no score plugin (every feasible node then scores 1)
	Scored bool `json:"scored"`
	// PostFilter ran (no feasible node and a PostFilter plugin): Nominated and Victims say what it did
	// (the pod's nominatedNodeName and the pods deleted since the cycle began; with DefaultPreemption,
	// the chosen candidate's victims, and no nomination when the dry run found no candidate)
	PostFilterRan bool     `json:"postFilterRan"`
	Nominated     *string  `json:"nominated"`
	Victims       []string `json:"victims"`
	// Candidates: node -> victims (sorted) of every candidate DefaultPreemption's dry run
	// found in this cycle ({}: none, or no dry run: the pod was not eligible, no node was
	// Unschedulable, or an earlier PostFilter plugin succeeded); null when the profile has no
	// DefaultPreemption among its PostFilter plugins
	Candidates map[string][]string `json:"candidates"`
	// Error: the cycle ended with an error (a Filter plugin's Error status, which stops the
	// search: no node's status is reported; a score plugin's error: no score is)
	Error string `json:"error,omitempty"`
}

type output struct {
	KubernetesVersion string         `json:"kubernetesVersion"`
	Cycles            []Cycle        `json:"cycles"`
	Placements        map[string]any `json:"placements"`
	Deleted           []string       `json:"deleted"`
	// Allocations: with devices, every claim at the end: its devices (driver/pool/device), or
	// null when it is not allocated; null without devices
	Allocations map[string]any `json:"allocations"`
	Error       string         `json:"error,omitempty"`
	Millis      int64          `json:"millis"`

	// Capacity: with `replicas: max` entries, each entry's replicas placed (maxentry.go)
	Capacity map[string]int `json:"capacity,omitempty"`
}

// KubernetesVersion is the k8s.io/kubernetes module this backend was built from.
func KubernetesVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/kubernetes" {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

// Main is the whole program: `--info`; `--serve`, cases streamed (one JSON object a line on
// stdin, its answer one line on stdout, until stdin ends); or one case from stdin.
func Main(opts ...Option) {
	o := &options{registry: frameworkruntime.Registry{}}
	for _, f := range opts {
		f(o)
	}
	if len(os.Args) > 1 && os.Args[1] == "--info" {
		names := []string{}
		for n := range plugins.NewInTreeRegistry() {
			names = append(names, n)
		}
		sort.Strings(names)
		oot := []string{}
		for n := range o.registry {
			oot = append(oot, n)
		}
		sort.Strings(oot)
		protocols := []string{"serve"}
		if dra != nil {
			protocols = append(protocols, "devices")
		}
		if gangs != nil {
			protocols = append(protocols, gangs.protocol())
		}
		if stepsBuilt {
			// "max": a step of kind "max", a `replicas: max` entry (maxentry.go); "ephemeralVolumes": the
			// controllers of a deleted or replaced pod's ephemeral claims (ephemeral.go)
			protocols = append(protocols, "steps", "max", ephemeralProtocol)
		}
		if stepsBuilt && deviceTaintEviction != nil {
			// the device steps and the device taint eviction controller (devicetaints.go); "nodeSlices":
			// the slices of a node an addNode step adds are published by that step (steps.go)
			protocols = append(protocols, "deviceSteps", "nodeSlices")
		}
		must(json.NewEncoder(os.Stdout).Encode(map[string]any{
			"kubernetesVersion": KubernetesVersion(), "plugins": names, "outOfTreePlugins": oot,
			"protocols": protocols}))
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "--serve" {
		serve(os.Stdin, os.Stdout, o)
		return
	}
	raw, err := io.ReadAll(os.Stdin)
	must(err)
	must(json.NewEncoder(os.Stdout).Encode(answer(raw, o)))
}

// serve answers the cases of a run, one JSON line each, in one process.
func serve(r io.Reader, w io.Writer, o *options) {
	in := bufio.NewReaderSize(r, 1<<20)
	out := bufio.NewWriter(w)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			must(json.NewEncoder(out).Encode(answer(line, o)))
			must(out.Flush())
		}
		if err == io.EOF {
			return
		}
		must(err)
	}
}

// answer runs one case given as JSON.
func answer(raw []byte, o *options) *output {
	var in input
	if err := json.Unmarshal(raw, &in); err != nil {
		must(fmt.Errorf("reading the case: %w", err))
	}
	start := time.Now()
	out, err := run(in, o)
	if err != nil {
		out = &output{Error: err.Error()}
	}
	out.KubernetesVersion = KubernetesVersion()
	out.Millis = time.Since(start).Milliseconds()
	return out
}

// recorder counts, per pod, the scheduling outcome events (Scheduled, FailedScheduling: one per
// cycle, from the scheduling cycle or from the binding cycle) and keeps the pod the last one
// regards. Per pod: the pods a gang's last pod allows at Permit bind (Scheduled) while that pod's
// own cycle ends.
type recorder struct {
	mu    sync.Mutex
	last  map[types.UID]*v1.Pod
	total map[types.UID]int
	// log: every outcome event, in order (a pod group cycle's, compared with the group's last one)
	log []outcomeEvent
}

type outcomeEvent struct {
	pod             *v1.Pod
	reason, message string
}

func (r *recorder) Eventf(regarding runtime.Object, _ runtime.Object, _, reason, _, note string, args ...interface{}) {
	// the cycle's own outcome; not "Preempted", which regards a victim
	if reason != "Scheduled" && reason != "FailedScheduling" {
		return
	}
	if p, ok := regarding.(*v1.Pod); ok {
		r.mu.Lock()
		r.last[p.UID] = p
		r.total[p.UID]++
		r.log = append(r.log, outcomeEvent{pod: p, reason: reason, message: fmt.Sprintf(note, args...)})
		r.mu.Unlock()
	}
}

// assumed notes the scheduler's assumption of a pod (its nodeName set) in the log, as an event
// "Assume" whose message is the node (podgroups_v136.go's queue)
func (r *recorder) assumed(p *v1.Pod) {
	r.mu.Lock()
	r.log = append(r.log, outcomeEvent{pod: p, reason: "Assume", message: p.Spec.NodeName})
	r.mu.Unlock()
}

// since: the outcome events from the n-th on
func (r *recorder) since(n int) []outcomeEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]outcomeEvent(nil), r.log[n:]...)
}

func (r *recorder) logged() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.log)
}

func (r *recorder) WithLogger(klog.Logger) events.EventRecorderLogger { return r }

// count: the outcome events that regarded the pod so far, and the pod the last of them regards.
func (r *recorder) count(uid types.UID) (int, *v1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total[uid], r.last[uid]
}

func podKey(ns, name string) string {
	if ns == "" || ns == "default" {
		return name
	}
	return ns + "/" + name
}

// gatesSet: the feature gates the previous case of this process set, put back to their
// defaults before the next case (gates are process-wide in upstream's code).
var gatesSet = map[string]bool{}

func setGates(gates map[string]bool) error {
	// one change: the gates the last case set back to their defaults and this case's set, so that
	// gates depending on each other (GangScheduling on GenericWorkload) are checked together
	all := utilfeature.DefaultMutableFeatureGate.GetAll()
	change := map[string]bool{}
	for g := range gatesSet {
		if spec, ok := all[featuregate.Feature(g)]; ok {
			change[g] = spec.Default
		}
	}
	for g, v := range gates {
		change[g] = v
	}
	gatesSet = map[string]bool{}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(change); err != nil {
		return fmt.Errorf("feature gates %v: %w", gates, err)
	}
	for g, v := range gates {
		gatesSet[g] = v
	}
	return nil
}

// deviceSupport is dynamic resource allocation's part of a run (devices.go, which sets dra at
// init; nil in a build without it): the case's device objects, and the resource claim
// controller's work on a pod's creation and deletion.
type deviceSupport interface {
	// setUp creates the device objects (before the nodes)
	setUp(client *fake.Clientset, t *countingTracker, objs []json.RawMessage) error
	// podCreating makes the pod's template claims and names them in its status
	podCreating(t *countingTracker, p *v1.Pod) error
	// podDeleted releases the deleted pod's claims (called inside the tracker's Delete)
	podDeleted(t *countingTracker, ns, name string, uid types.UID) error
	// allocations: claim -> its devices, or nil, at the end
	allocations(t *countingTracker) (map[string]any, error)
}

var dra deviceSupport

// gangSupport is the Workload API's part of a run (workloads.go at 1.35, podgroups_v136.go from
// 1.36, which set gangs at init; nil in a build for a version without it).
type gangSupport interface {
	// protocol: its name in --info ("workloads": 1.35's shape; "podGroups": 1.36's)
	protocol() string
	// setUp puts the Workloads and PodGroups in the API (before the informers start)
	setUp(t *countingTracker, in *input) error
	// group: the pod group ("namespace/name") whose pod group cycle the popped pod starts; "" for
	// a pod scheduled alone
	group(p *v1.Pod) string
	// parking: a run's record of its pod group cycles (nil: the version has none); it has the
	// scheduler note each assumption in rec
	parking(t *countingTracker, sched *scheduler.Scheduler, rec *recorder) groupParking
}

// groupParking: a run's pod group cycles (1.36). A group that cannot be placed goes back to
// backoffQ and upstream pops it again after its backoff, for ever, each retry repeating the cycle
// while nothing changes; kspread tries such a group again only after a change. So a group cycle
// that repeats the group's last one exactly is not counted and parks the group, and the run ends
// once activeQ is empty and backoffQ holds parked groups' pods alone.
type groupParking interface {
	// cycled: a cycle of group ended with these outcome events (the informers quiet); whether it
	// repeated the group's last cycle (the same outcomes, in the same cluster state)
	cycled(group string, events []outcomeEvent) bool
	// parkedOnly: whether every pod of backoffQ is of a group parked in the cluster's state
	parkedOnly(backoffQ []*v1.Pod) bool
	// lastTried: a cycle of group (its events, assumptions included): the pod it tried last, and
	// the group's pods assumed in its snapshot then (each with its node); nil when none
	lastTried(group string, events []outcomeEvent) (*v1.Pod, []*v1.Pod)
	// assume puts pods in the scheduler's snapshot as a cycle assumes them; the function returned
	// takes them out
	assume(pods []*v1.Pod) (func(), error)
}

var gangs gangSupport

// groupUID: the UID of a pod group ("namespace/name") as the backend created it (1.36; nil
// before): workload-aware preemption records its asynchronous deletions under the PodGroup's UID
// (preemption.Executor's preempting set), so a run waits for them as for a pod's
var groupUID func(group string) types.UID

// watchGroupPods (podgroups_v136.go; nil before 1.36) wraps the scheduler's SchedulePod so that
// seen is called with each try of a pod group cycle (groupTry), as it is about to try the pod: a
// cycle state to ask about it in as that cycle does (the group's: DynamicResources reads the claims
// the group's pods tried before it put in flight; the snapshot then holds those pods, assumed and
// reserved), and the nodes it searches (its placement's); and the FailureHandler, so that failed is
// called with each pod failed with an Error status (grouptries.go)
var watchGroupPods func(sched *scheduler.Scheduler, seen func(t groupTry), failed func(pod *v1.Pod))

// waitingAtPermit: the pods waiting at Permit in every profile (UID -> the node each holds). Their
// Permit timers are stopped on the way (KspreadWaitingPods): a run has no wall clock to time them
// out on (kspread's sequences time a gang out in `wait` steps: with steps the timers are stand-ins
// on the sequence's clock, which steps.go fires itself).
func waitingAtPermit(sched *scheduler.Scheduler) map[types.UID]string {
	out := map[types.UID]string{}
	for _, fw := range sched.Profiles {
		for uid, node := range frameworkruntime.KspreadWaitingPods(fw, true) {
			out[uid] = node
		}
	}
	return out
}

// gateOn: whether a feature gate this version has is on (false for one it does not have).
func gateOn(name string) bool {
	if _, ok := utilfeature.DefaultMutableFeatureGate.GetAll()[featuregate.Feature(name)]; !ok {
		return false
	}
	return utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
}

// rejectWaiting ends a run's pods still waiting at Permit: each is rejected (its binding cycle
// ends, as upstream's would at the timeout) and the run waits, briefly, for their binding cycles
// to finish, so that nothing of this case runs on in the process (a server's next case).
func rejectWaiting(sched *scheduler.Scheduler, cnt *counts) {
	waiting := waitingAtPermit(sched)
	if len(waiting) == 0 {
		return
	}
	for _, fw := range sched.Profiles {
		for uid := range waiting {
			fw.RejectWaitingPod(uid)
		}
	}
	_ = waitUntil(time.Now().Add(10*time.Second), "the rejected pods", func() bool {
		return inFlightPods(sched) == 0 && len(waitingAtPermit(sched)) == 0 && cnt.quiet()
	})
}

// defaultTimeout: a case's limit when its input gives none.
const defaultTimeout = 120 * time.Second

func run(in input, o *options) (*output, error) {
	if err := setGates(in.FeatureGates); err != nil {
		return nil, err
	}
	timeout := defaultTimeout
	if in.TimeoutMillis > 0 {
		timeout = time.Duration(in.TimeoutMillis) * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	if len(in.Devices) > 0 && dra == nil {
		return nil, fmt.Errorf("the case has device objects, which this backend (built without devices.go) does not take")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cnt := newCounts()
	client := fake.NewSimpleClientset()
	tracker := installTracker(client, cnt)
	podsGVR := v1.SchemeGroupVersion.WithResource("pods")
	var rv int64
	var mu sync.Mutex
	// started: the start time of the pods bound in the run, the second after every start time of
	// the case's bound pods (kspread's start_epoch; its sequence clock, which moves only when the
	// queue waits for a backoff, is not followed: pods bound in the run tie, and keep the order
	// they joined their node in)
	started := time.Unix(0, 0)
	for i := range in.Pods {
		if st := in.Pods[i].Status.StartTime; st != nil && st.After(started) {
			started = st.Time
		}
	}
	started = started.Truncate(time.Second).Add(time.Second)
	// tl: a sequence's steps (steps.go), on the sequence's clock; nil without steps
	var tl *timeline
	// a binding sets spec.nodeName, and what the kubelet then writes when it starts the pod:
	// phase Running and status.startTime (without it upstream's GetPodStartTime answers
	// time.Now() at each call, and preemption's MoreImportantPod orders the pods bound in the run
	// by the order of its own calls); every write of a pod gets a new resourceVersion, as an API
	// server gives it (the scheduler drops a pod update whose resourceVersion did not change)
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
		obj, err := tracker.Get(podsGVR, b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		p := obj.(*v1.Pod).DeepCopy()
		p.Spec.NodeName = b.Target.Name
		p.Status.Phase = v1.PodRunning
		st := metav1.NewTime(started)
		if tl != nil {
			st = metav1.NewTime(tl.bound(p.Namespace, p.Name))
		}
		p.Status.StartTime = &st
		mu.Lock()
		rv++
		p.ResourceVersion = strconv.FormatInt(rv, 10)
		mu.Unlock()
		return true, b, tracker.Update(podsGVR, p, b.Namespace)
	})
	bump := func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() == "binding" {
			return false, nil, nil
		}
		handled, obj, err := clienttesting.ObjectReaction(tracker)(action)
		p, ok := obj.(*v1.Pod)
		if err != nil || !ok {
			return handled, obj, err
		}
		p = p.DeepCopy()
		mu.Lock()
		rv++
		p.ResourceVersion = strconv.FormatInt(rv, 10)
		mu.Unlock()
		return true, p, tracker.Update(podsGVR, p, p.Namespace)
	}
	client.PrependReactor("patch", "pods", bump)
	client.PrependReactor("update", "pods", bump)

	informerFactory := &countingFactory{SharedInformerFactory: scheduler.NewInformerFactory(client, 0), c: cnt}
	rec := &recorder{last: map[types.UID]*v1.Pod{}, total: map[types.UID]int{}}
	// upstream's default backoff (1 s, at most 10 s), as kspread's queue models it: a pod moved to
	// backoffQ waits there while activeQ holds pods (with 0 s a retried preemptor overtook the
	// lower-priority pods not yet tried)
	schedOpts := []scheduler.Option{scheduler.WithFrameworkOutOfTreeRegistry(o.registry)}
	if in.Config != "" {
		cfg, err := decodeConfig(in.Config)
		if err != nil {
			return nil, fmt.Errorf("the KubeSchedulerConfiguration: %w", err)
		}
		if len(in.Extenders) > 0 && string(in.Extenders) != "null" {
			exts, err := decodeConfig(`{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", ` +
				`"extenders": ` + string(in.Extenders) + `}`)
			if err != nil {
				return nil, fmt.Errorf("the extenders: %w", err)
			}
			cfg.Extenders = exts.Extenders
		}
		if err := loopbackOnly(cfg.Extenders); err != nil {
			return nil, err
		}
		// as kube-scheduler's options.Validate does before it creates the scheduler
		if errs := validation.ValidateKubeSchedulerConfiguration(cfg); errs != nil {
			return nil, fmt.Errorf("the KubeSchedulerConfiguration: %w", errs)
		}
		// the options cmd/kube-scheduler/app's Setup passes from the configuration
		schedOpts = append(schedOpts, scheduler.WithProfiles(cfg.Profiles...),
			scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
			scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
			scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
			scheduler.WithExtenders(cfg.Extenders...),
			scheduler.WithParallelism(cfg.Parallelism))
	}
	sched, err := scheduler.New(ctx, client, informerFactory, nil,
		recorderFactory(rec), schedOpts...)
	if err != nil {
		return nil, err
	}
	var closeOnce sync.Once
	closeQueue := func() { closeOnce.Do(sched.SchedulingQueue.Close) }
	defer closeQueue()
	if len(in.Steps) > 0 {
		if tl, err = newTimeline(ctx, &in, client, tracker, sched, started, deadline); err != nil {
			return nil, err
		}
		defer tl.close()
	}
	if len(in.Workloads) > 0 || len(in.PodGroups) > 0 {
		if gangs == nil {
			return nil, fmt.Errorf("the case has Workload or PodGroup objects, which this backend (Kubernetes %s) "+
				"does not take", KubernetesVersion())
		}
		if err := gangs.setUp(tracker, &in); err != nil {
			return nil, err
		}
	}
	// pod group cycles (gangSupport.parking), watched from before the informers start
	var parking groupParking
	if gangs != nil {
		parking = gangs.parking(tracker, sched, rec)
	}
	// (before closeQueue, deferred earlier)
	defer rejectWaiting(sched, cnt)
	// the pod each cycle pops; with storage, the cycle's per-node data asked before it runs: its
	// claims are bound (or a volume provisioned) when it ends, which VolumeBinding, reading the
	// claims and volumes as they are and not from the snapshot, would see afterwards
	var popped *v1.Pod
	// poppedOutcomes: the outcome events that regarded the popped pod before its cycle
	poppedOutcomes := 0
	// poppedNominated: each pod's nominatedNodeName as it was last popped (a pod waiting at
	// Permit at the end is reported so, as kspread reports it: below)
	poppedNominated := map[types.UID]string{}
	var before *Cycle
	var beforeErr error
	preObserve := (len(in.Storage) > 0 || len(in.Devices) > 0) && in.Observe != "none"
	// tried: the tries of the pod group cycle running (grouptries.go). With storage or devices, each
	// try's per-node data is asked as the cycle is about to try the pod (a pod's first try in its
	// placement counts: workload-aware preemption tries the group again, victims removed), the
	// group's pods tried before it assumed and reserved: their claims in flight, their volumes
	// assumed, which afterwards are bound or forgotten. With TopologyAwareWorkloadScheduling the
	// cycle tries the group in each placement, on the snapshot narrowed to it, and its outcome is
	// one placement's run (grouptries.go): its last pod is asked about over that placement's nodes,
	// as that run tried it (without storage or devices: afterwards, the group's pods the snapshot
	// held then assumed again)
	tried := &groupTries{}
	placementsOn := gateOn("TopologyAwareWorkloadScheduling")
	askAtTry := preObserve
	if watchGroupPods != nil {
		watchGroupPods(sched, func(t groupTry) {
			if beforeErr != nil {
				return
			}
			beforeErr = tried.add(t, rec.logged(), func() (*Cycle, error) {
				if !askAtTry {
					return nil, nil
				}
				return observeIn(ctx, sched, t.pod, t.ask(), t.nodes)
			})
		}, tried.fail)
	}
	pop := sched.NextPod
	sched.NextPod = func(logger klog.Logger) (*framework.QueuedPodInfo, error) {
		pi, err := pop(logger)
		if pi != nil && pi.Pod != nil {
			popped = pi.Pod
			poppedOutcomes, _ = rec.count(pi.Pod.UID)
			poppedNominated[pi.Pod.UID] = pi.Pod.Status.NominatedNodeName
			before, beforeErr = nil, nil
			tried.reset()
			if preObserve {
				if beforeErr = scheduler.KspreadUpdateSnapshot(ctx, sched); beforeErr == nil {
					before, beforeErr = observe(ctx, sched, pi.Pod)
				}
			}
		}
		return pi, err
	}
	// a case past its limit: the queue is closed, so that a cycle waiting in Pop returns
	timedOut := false
	watchdog := time.AfterFunc(time.Until(deadline), func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		cancel()
		closeQueue()
	})
	defer watchdog.Stop()
	late := func(err error) error {
		mu.Lock()
		defer mu.Unlock()
		if timedOut || err != nil {
			return fmt.Errorf("the case took more than %v, its limit (%d nodes, %d pods, %d incoming)",
				timeout, len(in.Nodes), len(in.Pods), len(in.Incoming))
		}
		return nil
	}
	dryRuns, preemptionPlugins := watchDryRuns(sched)
	// the binding cycles running before this run's (another case's, in a serving backend); done:
	// none runs but those of the pods waiting at Permit (a pod rejected while waiting leaves the
	// queue's in-flight pods before its deferred AssignedPodDelete: the gauge counts it until then)
	bindingBase := bindingCycles()
	bindingsDone := func() bool {
		w := len(waitingAtPermit(sched))
		return inFlightPods(sched) <= w && bindingCycles()-bindingBase <= w
	}
	var preemptors []types.UID
	quiet := func(what string) error {
		err := late(waitUntil(deadline, what, func() bool {
			kept := preemptors[:0]
			for _, uid := range preemptors {
				for _, pl := range preemptionPlugins {
					if preemptionRunning(pl, uid) {
						kept = append(kept, uid)
						break
					}
				}
			}
			preemptors = kept
			// with steps (kspread's clock rule: every event of a cycle is seen before the next pod is
			// popped), the binding cycles too: a rejected waiting pod's forgotten assumption moves pods
			return len(preemptors) == 0 && cnt.quiet() && !lastVictimPending(tracker, popped, dryRuns) &&
				(tl == nil || bindingsDone())
		}))
		if err != nil {
			err = fmt.Errorf("%w, waiting for %s (%d preemptions running; %s)", err, what, len(preemptors), cnt.pending())
		}
		return err
	}
	logger := klog.FromContext(ctx)
	informerFactory.Start(ctx.Done())
	if err := late(waitUntil(deadline, "the informers to sync", informerFactory.synced)); err != nil {
		return nil, err
	}
	if tl == nil {
		sched.SchedulingQueue.Run(logger)
	} else {
		tl.quiet, tl.create = quiet, func(from, to int) error { return createIncoming(ctx, client, in.Incoming, from, to, quiet) }
		tl.bindingsDone = bindingsDone
		tl.nextRV = func() string {
			mu.Lock()
			defer mu.Unlock()
			rv++
			return strconv.FormatInt(rv, 10)
		}
		tl.start()
	}
	runDispatcher(sched, logger)
	if err := createObjects(ctx, client, in); err != nil {
		return nil, err
	}
	if err := createStorage(tracker, in.Storage, quiet); err != nil {
		return nil, err
	}
	withDevices := len(in.Devices) > 0
	if withDevices {
		// (with steps: the slices of a node an addNode step adds come with that step)
		if err := dra.setUp(client, tracker, tl.holdNodeSlices(in.Devices, in.Nodes)); err != nil {
			return nil, err
		}
		for _, list := range [][]v1.Pod{in.Pods, in.Incoming} {
			for i := range list {
				if err := dra.podCreating(tracker, &list[i]); err != nil {
					return nil, err
				}
			}
		}
	}
	for i := range in.Pods {
		defaultPodVolumes(&in.Pods[i])
	}
	for i := range in.Incoming {
		defaultPodVolumes(&in.Incoming[i])
	}
	for i := range in.Nodes {
		if _, err := client.CoreV1().Nodes().Create(ctx, &in.Nodes[i], metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		// the informer delivers them in the order they were written, so the cache's node tree
		// sees the case's order; the fake watch channel holds 100 events and panics ("channel
		// full") beyond: let the informers catch up every 50
		if (i+1)%50 == 0 {
			if err := quiet("the informers (nodes)"); err != nil {
				return nil, err
			}
		}
	}
	// the case's pending pods are held as waiting (held.go)
	if err := holdPending(sched, in.Pods); err != nil {
		return nil, err
	}
	for i := range in.Pods {
		p := &in.Pods[i]
		if _, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		if (i+1)%50 == 0 {
			if err := quiet("the informers (pods)"); err != nil {
				return nil, err
			}
		}
	}
	for i := range in.PDBs {
		d := &in.PDBs[i]
		if _, err := client.PolicyV1().PodDisruptionBudgets(d.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	if err := quiet("the informers"); err != nil {
		return nil, err
	}
	if err := nominateHeld(sched, logger, in.Pods); err != nil {
		return nil, err
	}
	// the incoming pods, delivered in list order, so that the queue's timestamps follow it (with
	// steps, those before the first step: timeline.next creates the others with their step)
	if err := createIncoming(ctx, client, in.Incoming, 0, tl.firstStep(len(in.Incoming)), quiet); err != nil {
		return nil, err
	}
	if err := tl.begin(ctx); err != nil { // (steps.go: the device taint eviction controller's first look)
		return nil, err
	}
	out := &output{Cycles: []Cycle{}, Placements: map[string]any{}, Deleted: []string{}}
	// the last cycle: its pod, and the pods deleted before it began
	var last *v1.Pod
	// lastBefore: the last cycle's per-node data asked before it ran (with storage)
	var lastBefore *Cycle
	lastDeleted, cycles := 0, 0
	// pod group cycles (gangSupport.parking): the last one's group, its first outcome event, and
	// what the counted cycles were before it (restored when it repeated its group's last cycle)
	// lastAssumed: the pods a pod group cycle (the last cycle) had assumed when it tried its last pod;
	// lastNodes: the nodes of the placement it tried it in (nil: every node)
	var lastAssumed []*v1.Pod
	var lastNodes []string
	type counted struct {
		last                *v1.Pod
		lastBefore          *Cycle
		lastAssumed         []*v1.Pod
		lastNodes           []string
		lastDeleted, cycles int
	}
	groupCycle, groupEvents := "", 0
	var beforeGroup counted
	// idle: activeQ and backoffQ empty, or backoffQ holding parked groups' pods alone
	idle := func() bool {
		a, b := queueLens(sched)
		if a+b == 0 {
			return true
		}
		if a > 0 || parking == nil {
			return false
		}
		pods, _ := sched.SchedulingQueue.PendingPods()
		return len(pods) >= b && parking.parkedOnly(pods[:b])
	}
	// as many cycles as ten tries of every incoming pod, and ten more (a pod that fails every
	// try, an extender refusing it, is retried after its backoff for ever), and 200 more per step
	// (and ten per replica of a `replicas: max` entry)
	for tries := 0; tries < 10*len(in.Incoming)+10+200*len(in.Steps)+tl.maxTries(); tries++ {
		if err := quiet("the informers"); err != nil {
			return nil, err
		}
		if groupCycle != "" {
			if parking.cycled(groupCycle, rec.since(groupEvents)) {
				// upstream's retry of a group nothing changed for, which kspread does not run
				last, lastBefore, lastAssumed = beforeGroup.last, beforeGroup.lastBefore, beforeGroup.lastAssumed
				lastNodes = beforeGroup.lastNodes
				lastDeleted, cycles = beforeGroup.lastDeleted, beforeGroup.cycles
			}
			groupCycle = ""
		}
		// the pods waiting at Permit are done for now: they stay in flight (their binding cycle
		// waits) until a plugin allows them, or preemption or the end of the case rejects them
		if idle() {
			busy := func() bool { return !bindingsDone() }
			if !busy() {
				// a binding cycle that ended since the informers were last quiet may have written an
				// object (a claim's allocation) whose event moves a pod: let it arrive first
				if err := quiet("the informers"); err != nil {
					return nil, err
				}
				if !idle() {
					continue
				}
				// with steps: the taint manager, or the next step and the pods created with it
				if more, err := tl.next(ctx); err != nil || more {
					if e := late(nil); e != nil {
						return nil, e
					} else if err != nil {
						return nil, err
					}
					continue
				}
				break
			}
			// a binding cycle still running (pods a gang's last pod allowed): ScheduleOne would
			// block on the empty queue; wait for it to end or to queue a pod
			if err := late(waitUntil(deadline, "the binding cycles in flight", func() bool {
				return !idle() || !busy()
			})); err != nil {
				return nil, err
			}
			continue
		}
		// with steps: the scheduler waits for the backoff flush, the sequence's clock moves to it
		if a, b := queueLens(sched); tl.waitsForFlush(a, b) {
			continue
		}
		if in.MaxCycles > 0 && cycles >= in.MaxCycles {
			break
		}
		deletedBefore := cnt.deletedCount()
		for _, d := range dryRuns {
			d.reset()
		}
		popped = nil
		eventsBefore := rec.logged()
		scheduleOne(ctx, sched)
		if err := late(nil); err != nil {
			return nil, err
		}
		pod := popped
		if pod == nil {
			continue
		}
		outcomes := poppedOutcomes
		// the cycle's outcome: Scheduled once bound (the binding cycle runs on), or FailedScheduling;
		// none when upstream skipped the pod (being deleted) or the pod is gone. A pod waiting at
		// Permit has none yet: its cycle is over once its binding cycle has written its
		// nomination (NominatedNodeNameForExpectation), before it waits
		waits := false
		if err := late(waitUntil(deadline, "the cycle's outcome", func() bool {
			if n, _ := rec.count(pod.UID); n > outcomes {
				return true
			}
			got, err := tracker.Get(podsGVR, pod.Namespace, pod.Name)
			if err != nil || got.(*v1.Pod).DeletionTimestamp != nil {
				return true
			}
			node, ok := waitingAtPermit(sched)[pod.UID]
			waits = ok && (!gateOn("NominatedNodeNameForExpectation") || got.(*v1.Pod).Status.NominatedNodeName == node)
			return waits
		})); err != nil {
			return nil, err
		}
		n, ran := rec.count(pod.UID)
		if waits && n == outcomes {
			ran = pod
		} else if n == outcomes || ran == nil {
			continue
		}
		var assumed []*v1.Pod
		// a pod group cycle with placements: the try it reports (none tried: nothing to report)
		var reported *reportedTry
		untried := false
		if parking != nil {
			if g := gangs.group(pod); g != "" {
				groupCycle, groupEvents = g, eventsBefore
				if groupUID != nil {
					preemptors = append(preemptors, groupUID(g))
				}
				beforeGroup = counted{last, lastBefore, lastAssumed, lastNodes, lastDeleted, cycles}
				// the cycle's last pod is the one asked about, on the snapshot it was tried on
				if l, a := parking.lastTried(g, rec.since(eventsBefore)); l != nil {
					ran, assumed = l, a
				}
				if placementsOn {
					var all []fwNodeInfo
					if fw, ok := sched.Profiles[pod.Spec.SchedulerName]; ok {
						all, _ = fw.SnapshotSharedLister().NodeInfos().List()
					}
					if r, ok := tried.reported(all, rec.since); ok {
						reported, ran, assumed = &r, r.pod, r.assumed
					} else {
						untried = true
					}
				}
			}
		}
		preemptors = append(preemptors, pod.UID)
		cycles++
		if untried {
			// no pod tried (no placement, or the generator's Error): kspread observes nothing
			continue
		}
		last, lastDeleted, lastBefore, lastAssumed, lastNodes = ran, deletedBefore, nil, assumed, nil
		if before != nil && before.Pod == podKey(ran.Namespace, ran.Name) {
			lastBefore = before
		}
		if reported != nil {
			// the reported placement's last pod, as its run tried it
			lastBefore, lastNodes = reported.table, reported.nodes
		} else if c := tried.firstTable(ran.UID); c != nil {
			// a pod group cycle's last pod: as the cycle tried it
			lastBefore = c
		}
	}
	if err := quiet("the informers"); err != nil {
		return nil, err
	}
	if err := tracker.controllerError(); err != nil {
		return nil, err
	}
	if last != nil && in.Observe != "none" {
		if beforeErr != nil {
			return nil, beforeErr
		}
		undo := func() {}
		if len(lastAssumed) > 0 {
			var err error
			if undo, err = parking.assume(lastAssumed); err != nil {
				return nil, fmt.Errorf("assuming the pod group's pods placed before %s: %w", last.Name, err)
			}
		}
		c, err := lastCycle(ctx, sched, tracker, cnt, dryRuns, last, lastDeleted, lastBefore, lastNodes,
			waitingAtPermit(sched))
		undo()
		if err != nil {
			return nil, err
		}
		out.Cycles = append(out.Cycles, *c)
	}
	// a pod waiting at Permit is pending at the end: kspread's placements give the node it was
	// nominated to before the cycle in which it began to wait (by its preemption), else null.
	// Upstream has written the node it waits on as its nominatedNodeName, which kspread does not
	// model, and would time it out five minutes on.
	waiting := waitingAtPermit(sched)
	for _, p := range in.Incoming {
		obj, err := tracker.Get(podsGVR, p.Namespace, p.Name)
		switch {
		case err != nil:
			out.Placements[podKey(p.Namespace, p.Name)] = nil
		case waiting[obj.(*v1.Pod).UID] != "":
			if nnn := poppedNominated[obj.(*v1.Pod).UID]; nnn != "" {
				out.Placements[podKey(p.Namespace, p.Name)] = nnn
			} else {
				out.Placements[podKey(p.Namespace, p.Name)] = nil
			}
		case obj.(*v1.Pod).Spec.NodeName != "":
			out.Placements[podKey(p.Namespace, p.Name)] = obj.(*v1.Pod).Spec.NodeName
		case obj.(*v1.Pod).Status.NominatedNodeName != "":
			out.Placements[podKey(p.Namespace, p.Name)] = obj.(*v1.Pod).Status.NominatedNodeName
		default:
			out.Placements[podKey(p.Namespace, p.Name)] = nil
		}
	}
	out.Deleted = deletedPods(tracker, in)
	if tl != nil {
		// every pod the sequence had (the case's, the incoming, the controllers' replacements), and
		// every pod deleted (by preemption, or by the steps and the components they make act)
		out.Placements = tl.placements(ctx, func(p *v1.Pod) (string, bool) {
			if waiting[p.UID] == "" {
				return "", false
			}
			return poppedNominated[p.UID], true
		})
		out.Deleted = tl.deleted(cnt)
		out.Capacity = tl.maxCapacity()
	}
	if withDevices {
		if out.Allocations, err = dra.allocations(tracker); err != nil {
			return nil, err
		}
		if err := tracker.controllerError(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// createIncoming: the incoming pods from..to-1, in list order (the informers let catch up every 50).
func createIncoming(ctx context.Context, client *fake.Clientset, pods []v1.Pod, from, to int, quiet func(string) error) error {
	for i := from; i < to; i++ {
		p := &pods[i]
		if _, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return err
		}
		if (i+1-from)%50 == 0 {
			if err := quiet("the informers (incoming pods)"); err != nil {
				return err
			}
		}
	}
	return nil
}

// createObjects: the case's objects other than nodes and pods, before them.
func createObjects(ctx context.Context, client *fake.Clientset, in input) error {
	for i := range in.Namespaces {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &in.Namespaces[i], metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for i := range in.PriorityClasses {
		if _, err := client.SchedulingV1().PriorityClasses().Create(ctx, &in.PriorityClasses[i], metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for i := range in.Services {
		s := &in.Services[i]
		if _, err := client.CoreV1().Services(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for i := range in.ReplicationControllers {
		c := &in.ReplicationControllers[i]
		if _, err := client.CoreV1().ReplicationControllers(c.Namespace).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for i := range in.ReplicaSets {
		c := &in.ReplicaSets[i]
		if _, err := client.AppsV1().ReplicaSets(c.Namespace).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for i := range in.StatefulSets {
		c := &in.StatefulSets[i]
		if _, err := client.AppsV1().StatefulSets(c.Namespace).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// lastCycle: the per-node data of the run's last cycle, asked on the snapshot that cycle used
// (no cycle ran after it), or as asked before it ran (before, with storage), with its selected
// node, nomination, victims and candidates.
func lastCycle(ctx context.Context, sched *scheduler.Scheduler, tracker *countingTracker, cnt *counts,
	dryRuns map[string]*dryRun, last *v1.Pod, deletedBefore int, before *Cycle, placement []string,
	waiting map[types.UID]string) (*Cycle, error) {
	// a Scheduled event regards the assumed pod, its nodeName set: ask as the cycle asked
	pod := last.DeepCopy()
	pod.Spec.NodeName = ""
	c := before
	if c == nil {
		// over the nodes of the placement the cycle tried it in (nil: every node)
		var nodes []fwNodeInfo
		if fw, ok := sched.Profiles[pod.Spec.SchedulerName]; ok && placement != nil {
			for _, name := range placement {
				ni, err := fw.SnapshotSharedLister().NodeInfos().Get(name)
				if err != nil {
					return nil, fmt.Errorf("the node %s of the placement %s was tried in: %w", name, pod.Name, err)
				}
				nodes = append(nodes, ni)
			}
		}
		var err error
		if c, err = observeIn(ctx, sched, pod, framework.NewCycleState(), nodes); err != nil {
			return nil, err
		}
	}
	obj, err := tracker.Get(v1.SchemeGroupVersion.WithResource("pods"), pod.Namespace, pod.Name)
	if err == nil && obj.(*v1.Pod).Spec.NodeName != "" {
		node := obj.(*v1.Pod).Spec.NodeName
		c.Selected = &node
	} else if node := waiting[pod.UID]; node != "" {
		// waiting at Permit on the node its cycle selected
		c.Selected = &node
	} else if node := last.Spec.NodeName; err != nil && node != "" {
		// bound, then deleted (the taint manager, a step): the node its Scheduled event names
		c.Selected = &node
	} else if err == nil && c.PostFilterRan && obj.(*v1.Pod).Status.NominatedNodeName != "" {
		node := obj.(*v1.Pod).Status.NominatedNodeName
		c.Nominated = &node
		c.Victims = cnt.deletedSince(deletedBefore)
	}
	if d := dryRuns[pod.Spec.SchedulerName]; d != nil && c.PostFilterRan {
		c.Candidates = d.candidates(c.Nominated)
		if len(c.Candidates) == 0 {
			// no candidate: this cycle nominated nothing (Preempt returned no node, or ""
			// to clear it); a nominatedNodeName in the API is an earlier cycle's
			c.Nominated, c.Victims = nil, nil
		} else if v, ok := c.Candidates[deref(c.Nominated)]; ok {
			// the chosen candidate's victims, including those already terminating, which
			// prepareCandidate does not delete again
			c.Victims = v
		}
	}
	return c, nil
}

// decodeConfig reads a KubeSchedulerConfiguration as kube-scheduler's options.loadConfig does: the
// UniversalDecoder defaults it and converts it to the internal type.
func decodeConfig(text string) (*schedulerapi.KubeSchedulerConfiguration, error) {
	obj, gvk, err := scheme.Codecs.UniversalDecoder().Decode([]byte(text), nil, nil)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*schedulerapi.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("a %s, not a KubeSchedulerConfiguration", gvk)
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	return cfg, nil
}

// loopbackOnly: a backend calls extenders on this machine only (127.0.0.0/8, ::1, localhost).
func loopbackOnly(exts []schedulerapi.Extender) error {
	for _, e := range exts {
		u, err := url.Parse(e.URLPrefix)
		if err != nil {
			return fmt.Errorf("extender urlPrefix %q: %w", e.URLPrefix, err)
		}
		host := u.Hostname()
		if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" {
			return fmt.Errorf("extender urlPrefix %q: a backend calls extenders at a loopback address only "+
				"(127.0.0.1, ::1, localhost), not %q", e.URLPrefix, host)
		}
	}
	return nil
}

// dryRun records what DefaultPreemption's dry run (preemption.Evaluator.DryRunPreemption, called
// by the Evaluator's Preempt in the scheduling cycle itself) found. It wraps the plugin's
// preemption.Interface, through which the Evaluator calls the plugin, and passes every call on to
// the plugin's own method, unchanged: the offset and number of candidates are the plugin's own.
// The offset (random) matters only when the dry run may stop before it has visited every potential
// node (more potential nodes than the number of candidates, 100 by default); there the potential
// nodes come in the order of a Go map (NodeToStatus.NodesForStatusCode) and 16 workers check them,
// so no fixed offset would make the candidates reproducible.
type dryRun struct {
	preemption.Interface
	mu sync.Mutex
	// found: node -> victims of each node where SelectVictimsOnNode found victims (a candidate,
	// unless the Evaluator's lists were full: at most the number of candidates of each kind)
	found map[string][]string
	// list: the Evaluator's candidates, when it handed them to CandidatesToVictimsMap (callExtenders
	// with an extender, before the extenders; SelectCandidate with more than one candidate)
	list map[string][]string
	// ran: the Evaluator's Preempt ran in this cycle (it asks PodEligibleToPreemptOthers first);
	// not when an earlier PostFilter plugin succeeded
	ran bool
}

// watchDryRuns wraps DefaultPreemption's Interface in each profile that has it among its
// PostFilter plugins (after DynamicResources, whose PostFilter comes first in the default
// profile, it runs when that one deallocated nothing: the recorder notes whether it ran):
// profile name -> its recorder; and the plugins, whose asynchronous preemptions a run waits for.
func watchDryRuns(sched *scheduler.Scheduler) (map[string]*dryRun, []*defaultpreemption.DefaultPreemption) {
	out := map[string]*dryRun{}
	pls := []*defaultpreemption.DefaultPreemption{}
	for name, fw := range sched.Profiles {
		for _, p := range postFilterPluginsOf(fw) {
			pl, ok := p.(*defaultpreemption.DefaultPreemption)
			if !ok {
				continue
			}
			ev := evaluatorOf(pl)
			if ev == nil {
				continue // up to 1.31: no candidates reported (null)
			}
			d := &dryRun{Interface: ev.Interface}
			ev.Interface = d
			out[name] = d
			pls = append(pls, pl)
		}
	}
	return out, pls
}

func (d *dryRun) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.found, d.list, d.ran = map[string][]string{}, nil, false
}

func victimKeys(pods []*v1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, podKey(p.Namespace, p.Name))
	}
	sort.Strings(out)
	return out
}

func (d *dryRun) SelectVictimsOnNode(ctx context.Context, state fwCycleState, pod *v1.Pod, nodeInfo fwNodeInfo,
	pdbs []*policyv1.PodDisruptionBudget) ([]*v1.Pod, int, *fwStatus) {
	node := nodeInfo.Node().Name
	pods, violations, st := d.Interface.SelectVictimsOnNode(ctx, state, pod, nodeInfo, pdbs)
	if st.IsSuccess() && len(pods) > 0 {
		d.mu.Lock()
		d.found[node] = victimKeys(pods)
		d.mu.Unlock()
	}
	return pods, violations, st
}

func (d *dryRun) CandidatesToVictimsMap(candidates []preemption.Candidate) map[string]*extenderv1.Victims {
	d.mu.Lock()
	if d.list == nil {
		d.list = map[string][]string{}
		for _, c := range candidates {
			d.list[c.Name()] = victimKeys(c.Victims().Pods)
		}
	}
	d.mu.Unlock()
	return d.Interface.CandidatesToVictimsMap(candidates)
}

// candidates: what the cycle's dry run returned. The list the Evaluator handed on when it did;
// otherwise it held at most one candidate (SelectCandidate takes it without a choice): the
// nominated node, with the victims SelectVictimsOnNode gave there; none when nothing was nominated
// or DefaultPreemption did not run.
func (d *dryRun) candidates(nominated *string) map[string][]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.ran {
		return map[string][]string{}
	}
	if d.list != nil {
		return d.list
	}
	if nominated != nil {
		if v, ok := d.found[*nominated]; ok {
			return map[string][]string{*nominated: v}
		}
	}
	return map[string][]string{}
}

var summaryRe = regexp.MustCompile(`activeQ:(\d+); backoffQ:(\d+)`)

// queueLens: the pods in activeQ and backoffQ (those ScheduleOne may pop).
func queueLens(s *scheduler.Scheduler) (int, int) {
	_, sum := s.SchedulingQueue.PendingPods()
	m := summaryRe.FindStringSubmatch(sum)
	if m == nil {
		return 0, 0
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a, b
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// deletedPods: the case's pods (bound and incoming) no longer in the API, as kspread names them.
func deletedPods(tracker *countingTracker, in input) []string {
	out := []string{}
	for _, list := range [][]v1.Pod{in.Pods, in.Incoming} {
		for _, p := range list {
			if _, err := tracker.Get(podsResource, p.Namespace, p.Name); err != nil {
				out = append(out, podKey(p.Namespace, p.Name))
			}
		}
	}
	sort.Strings(out)
	return out
}

// observe asks the pod's profile, on the snapshot its cycle used, for every node's filter status
// (PreFilter, then RunFilterPluginsWithNominatedPods as findNodesThatPassFilters calls it) and,
// when more than one node is feasible (schedulePod scores only then), every score plugin's raw
// score (the plugin's Score), and its weighted score and the totals (RunScorePlugins).
func observe(ctx context.Context, sched *scheduler.Scheduler, pod *v1.Pod) (*Cycle, error) {
	return observeIn(ctx, sched, pod, framework.NewCycleState(), nil)
}

// observeIn: observe, in the cycle state given (a new one, or one marked as a pod group cycle's),
// over the nodes given (a placement's, as schedulePod searches it; nil: every node)
func observeIn(ctx context.Context, sched *scheduler.Scheduler, pod *v1.Pod, state *framework.CycleState,
	nodes []fwNodeInfo) (*Cycle, error) {
	fw, ok := sched.Profiles[pod.Spec.SchedulerName]
	if !ok {
		return nil, fmt.Errorf("pod %s: no profile %q", pod.Name, pod.Spec.SchedulerName)
	}
	if nodes == nil {
		var err error
		if nodes, err = fw.SnapshotSharedLister().NodeInfos().List(); err != nil {
			return nil, err
		}
	}
	c := &Cycle{Pod: podKey(pod.Namespace, pod.Name), Filter: map[string]map[string]any{}, Feasible: []string{},
		RawScores: map[string]map[string]int64{}, Scores: map[string]map[string]int64{},
		Weighted: map[string]map[string]int64{}, Totals: map[string]int64{}, Scored: true}
	preRes, st, unscheduled := runPreFilter(ctx, fw, state, pod)
	feasible := []fwNodeInfo{}
	for _, ni := range nodes {
		name := ni.Node().Name
		s := st
		if st.IsSuccess() {
			s = nil
			if !preRes.AllNodes() && !preRes.NodeNames.Has(name) {
				// the status findNodesThatFitPod gives the nodes a PreFilterResult leaves out (from
				// 1.32; before, none: their filters' statuses are reported)
				s = preFilterLeftOut(unscheduled)
			}
			if s == nil {
				s = fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			}
		}
		c.Filter[name] = statusOf(s)
		if s.IsSuccess() {
			feasible = append(feasible, ni)
			c.Feasible = append(c.Feasible, name)
		}
		if s.Code() == codeError && c.Error == "" {
			// findNodesThatPassFilters ends the cycle at a Filter's Error (its workers' first, in
			// no fixed order; here the first node's): no status, no PostFilter
			c.Error = s.Message()
		}
	}
	if c.Error != "" {
		c.Filter, c.Feasible = map[string]map[string]any{}, []string{}
		return c, nil
	}
	if len(feasible) > 0 && len(sched.Extenders) > 0 {
		// the extenders' filters on the nodes the plugins passed, as findNodesThatFitPod calls them
		kept, err := extenderFilters(ctx, sched, pod, feasible, func(name string, s *fwStatus) { c.Filter[name] = statusOf(s) })
		if err != nil {
			return nil, err
		}
		feasible = kept
		c.Feasible = []string{}
		for _, ni := range nodes {
			if c.Filter[ni.Node().Name]["code"] == codeSuccess.String() {
				c.Feasible = append(c.Feasible, ni.Node().Name)
			}
		}
	}
	if len(feasible) == 0 {
		c.PostFilterRan = len(fw.ListPlugins().PostFilter.Enabled) > 0
		return c, nil
	}
	if len(feasible) == 1 {
		return c, nil
	}
	// a nominated node that passes the filters was the cycle's one feasible node
	// (findNodesThatFitPod's evaluateNominatedNode): upstream scored nothing
	if nnn := pod.Status.NominatedNodeName; nnn != "" && c.Filter[nnn]["code"] == codeSuccess.String() {
		return c, nil
	}
	scorePlugins, weights := scorePluginsOf(fw)
	if len(scorePlugins) == 0 && len(sched.Extenders) == 0 {
		c.Scored = false
		return c, nil // prioritizeNodes gives every node 1: kspread reports no totals then
	}
	// PreScore, the score plugins and the extenders' priorities, as schedulePod scores
	scored, err := prioritizeNodes(ctx, sched, fw, state, pod, feasible)
	if err != nil {
		// the cycle's error (schedulePod returns it): no node is scored
		c.Error = err.Error()
		return c, nil
	}
	isExtender := map[string]bool{}
	for _, e := range sched.Extenders {
		isExtender[e.Name()] = true
	}
	skip := skipScorePlugins(state)
	for _, pl := range scorePlugins {
		if skip.Has(pl.Name()) {
			continue
		}
		raw := map[string]int64{}
		for _, ni := range feasible {
			s, st := scoreOn(ctx, pl, state, pod, ni)
			if !st.IsSuccess() {
				return nil, st.AsError()
			}
			raw[ni.Node().Name] = s
		}
		c.RawScores[pl.Name()] = raw
	}
	for _, ns := range scored {
		c.Totals[ns.Name] = ns.TotalScore
		for _, ps := range ns.Scores {
			if isExtender[ps.Name] {
				continue // an extender's weighted priority: in the total only, as kspread reports it
			}
			if c.Weighted[ps.Name] == nil {
				c.Weighted[ps.Name] = map[string]int64{}
				c.Scores[ps.Name] = map[string]int64{}
			}
			c.Weighted[ps.Name][ns.Name] = ps.Score
			if w := int64(weights[ps.Name]); w != 0 {
				c.Scores[ps.Name][ns.Name] = ps.Score / w
			}
		}
	}
	return c, nil
}

func statusOf(s *fwStatus) map[string]any {
	if s.IsSuccess() {
		return map[string]any{"code": codeSuccess.String()}
	}
	out := map[string]any{"code": s.Code().String()}
	if len(s.Reasons()) > 0 {
		out["reason"] = s.Message()
	}
	if s.Plugin() != "" {
		out["plugin"] = s.Plugin()
	}
	return out
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "kspread-backend:", err)
		os.Exit(2)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// scorePluginsOf: the profile's score plugins, in its order, and their weights (the framework's
// own lists, through the injected file).
func scorePluginsOf(fw framework.Framework) ([]fwScorePlugin, map[string]int) {
	pls, weights := frameworkruntime.KspreadScorePlugins(fw)
	list, _ := pls.([]fwScorePlugin)
	return list, weights
}

// postFilterPluginsOf: the profile's PostFilter plugins, in its order.
func postFilterPluginsOf(fw framework.Framework) []fwPostFilterPlugin {
	list, _ := frameworkruntime.KspreadPostFilterPlugins(fw).([]fwPostFilterPlugin)
	return list
}
