//go:build !pre136

package kspreadbackend

// Pod groups (1.36, alpha: the gates GenericWorkload and GangScheduling, set together by setGates):
// 1.36 replaced 1.35's v1alpha1 Workload and spec.workloadRef (workloads.go) with
// scheduling.k8s.io/v1alpha2: PodGroup objects, which a pod names in spec.schedulingGroup, and
// Workloads holding pod group templates. The case's PodGroups (and any Workloads) are put in the fake
// API before the informers start, so the scheduler's PodGroup informer lists them and
// GangScheduling's lister holds them before any pod arrives; a pod's spec.schedulingGroup comes with
// the pod. The 1.36 scheduler reads no Workload (no informer of them in pkg/scheduler): they are
// only stored. With GenericWorkload on, ScheduleOne runs a pod group cycle for a popped pod with a
// schedulingGroup: it pops the group's other pods from the queue (PopSpecificPod) and places them
// on one snapshot (schedule_one_podgroup.go); group reports the group such a cycle is for (the run's
// loop parks a group whose cycle repeats with nothing changed: backend.go).
//
// This file registers itself in gangs at init; --info lists the protocol "podGroups".

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingapi "k8s.io/api/scheduling/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

type podGroupSupport struct{}

func init() {
	gangs = podGroupSupport{}
	groupUID = podGroupUID
	watchGroupPods = wrapSchedulePod
	podGroupClaim = podGroupTemplateClaim
}

var podGroupsResource = schedulingapi.SchemeGroupVersion.WithResource("podgroups")

// podGroupTemplateClaim: podGroupClaim for a pod of a PodGroup whose spec.resourceClaims has an
// entry of the pod's entry's name from the same ResourceClaimTemplate.
func podGroupTemplateClaim(t *countingTracker, p *v1.Pod, pc v1.PodResourceClaim) (string, metav1.OwnerReference, bool) {
	sg := p.Spec.SchedulingGroup
	if sg == nil || sg.PodGroupName == nil || pc.ResourceClaimTemplateName == nil {
		return "", metav1.OwnerReference{}, false
	}
	got, err := t.ObjectTracker.Get(podGroupsResource, p.Namespace, *sg.PodGroupName)
	if err != nil {
		return "", metav1.OwnerReference{}, false
	}
	pg := got.(*schedulingapi.PodGroup)
	for _, c := range pg.Spec.ResourceClaims {
		if c.Name == pc.Name && c.ResourceClaimName == nil && c.ResourceClaimTemplateName != nil &&
			*c.ResourceClaimTemplateName == *pc.ResourceClaimTemplateName {
			yes := true
			return pg.Name + "-" + c.Name, metav1.OwnerReference{APIVersion: schedulingapi.SchemeGroupVersion.String(),
				Kind: "PodGroup", Name: pg.Name, UID: pg.UID, Controller: &yes, BlockOwnerDeletion: &yes}, true
		}
	}
	return "", metav1.OwnerReference{}, false
}

// wrapSchedulePod: the scheduler's SchedulePod, which a pod group cycle calls for each pod it tries
// (podGroupPodSchedulingAlgorithm, in the group's snapshot, the pods tried before it assumed and
// reserved, narrowed to the placement it tries with TopologyAwareWorkloadScheduling), first
// calling seen with the try: the pod, a new cycle state marked with the group's (as
// initPodSchedulingContext marks the pod's), the placement's nodes, and whether upstream took the
// try to the pod's binding cycle (submitPodGroupAlgorithmResult unmarks the cycle state the pod
// was tried in then: the pods of the result podGroupSchedulingAlgorithm returned that fit). A pod
// scheduled alone goes straight through. And the FailureHandler, calling failed with each pod it
// fails with an Error status (a pod group cycle's error: the placement algorithm returns the run
// of the placement it erred in).
func wrapSchedulePod(sched *scheduler.Scheduler, seen func(t groupTry), failed func(pod *v1.Pod)) {
	run := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, fw framework.Framework, state fwk.CycleState,
		pi *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		if group := state.GetPodGroupSchedulingCycle(); state.IsPodGroupSchedulingCycle() && group != nil {
			nodes, err := scheduler.KspreadPlacementNodes(sched)
			if err == nil {
				seen(groupTry{pod: pi.Pod, nodes: nodes,
					ask: func() *framework.CycleState {
						s := framework.NewCycleState()
						s.SetPodGroupSchedulingCycle(group)
						return s
					},
					bound: func() bool { return !state.IsPodGroupSchedulingCycle() }})
			}
		}
		return run(ctx, fw, state, pi)
	}
	handle := sched.FailureHandler
	sched.FailureHandler = func(ctx context.Context, fw framework.Framework, pi *framework.QueuedPodInfo,
		status *fwk.Status, nominating *fwk.NominatingInfo, start time.Time) {
		if status.IsError() && pi != nil && pi.Pod != nil {
			failed(pi.Pod)
		}
		handle(ctx, fw, pi, status, nominating, start)
	}
}

// podGroupUID: the UID setUp gives a PodGroup ("namespace/name") that has none (kspread sends none)
func podGroupUID(group string) types.UID { return types.UID("podgroup/" + group) }

func (podGroupSupport) protocol() string { return "podGroups" }

// setUp creates the PodGroups and Workloads in the tracker itself, before the informers start: the
// informers' first list delivers them (initial adds, not counted), so the writes are not counted
// either.
func (podGroupSupport) setUp(t *countingTracker, in *input) error {
	for i, raw := range in.PodGroups {
		pg := &schedulingapi.PodGroup{}
		if err := decodeStrict(raw, pg); err != nil {
			return fmt.Errorf("podGroups[%d]: %w", i, err)
		}
		if pg.APIVersion != schedulingapi.SchemeGroupVersion.String() || pg.Kind != "PodGroup" {
			return fmt.Errorf("podGroups[%d]: a %s %s, not a %s PodGroup", i, pg.APIVersion, pg.Kind,
				schedulingapi.SchemeGroupVersion)
		}
		if pg.Namespace == "" {
			pg.Namespace = "default"
		}
		if pg.UID == "" {
			// a UID of its own, as the API server gives one (the fake tracker does not):
			// workload-aware preemption tells victim groups apart by it
			pg.UID = podGroupUID(pg.Namespace + "/" + pg.Name)
		}
		// the resource claim controller's status for each template entry of spec.resourceClaims
		// (DRAWorkloadResourceClaims; kspread sends the field only with the gate on): the claim
		// <podgroup>-<entry>, made with the first pod that uses it (podGroupTemplateClaim)
		for _, rc := range pg.Spec.ResourceClaims {
			if rc.ResourceClaimTemplateName != nil {
				claimName := pg.Name + "-" + rc.Name
				pg.Status.ResourceClaimStatuses = append(pg.Status.ResourceClaimStatuses,
					schedulingapi.PodGroupResourceClaimStatus{Name: rc.Name, ResourceClaimName: &claimName})
			}
		}
		if err := t.ObjectTracker.Create(podGroupsResource, pg, pg.Namespace); err != nil {
			return fmt.Errorf("podGroups[%d] (PodGroup %s/%s): %w", i, pg.Namespace, pg.Name, err)
		}
	}
	for i, raw := range in.Workloads {
		w := &schedulingapi.Workload{}
		if err := decodeStrict(raw, w); err != nil {
			return fmt.Errorf("workloads[%d]: %w (1.36 serves scheduling.k8s.io/v1alpha2 Workloads, with "+
				"podGroupTemplates)", i, err)
		}
		if w.APIVersion != schedulingapi.SchemeGroupVersion.String() || w.Kind != "Workload" {
			return fmt.Errorf("workloads[%d]: a %s %s, not a %s Workload (1.36 serves no v1alpha1 Workload)", i,
				w.APIVersion, w.Kind, schedulingapi.SchemeGroupVersion)
		}
		if w.Namespace == "" {
			w.Namespace = "default"
		}
		if err := t.ObjectTracker.Create(schedulingapi.SchemeGroupVersion.WithResource("workloads"), w, w.Namespace); err != nil {
			return fmt.Errorf("workloads[%d] (Workload %s/%s): %w", i, w.Namespace, w.Name, err)
		}
	}
	return nil
}

// group: the pod group whose cycle a popped pod starts (ScheduleOne's test: GenericWorkload on and
// a schedulingGroup), "namespace/name"; "" for a pod scheduled alone.
func (podGroupSupport) group(p *v1.Pod) string {
	if !gateOn("GenericWorkload") || p.Spec.SchedulingGroup == nil || p.Spec.SchedulingGroup.PodGroupName == nil {
		return ""
	}
	ns := p.Namespace
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + *p.Spec.SchedulingGroup.PodGroupName
}

func decodeStrict(raw json.RawMessage, obj any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(obj)
}

func (podGroupSupport) parking(t *countingTracker, sched *scheduler.Scheduler, rec *recorder) groupParking {
	sched.SchedulingQueue = &notingQueue{SchedulingQueue: sched.SchedulingQueue, rec: rec}
	return &podGroupParking{t: t, sched: sched, last: map[string]string{}, parked: map[string]string{}}
}

// notingQueue: the scheduler's queue, noting each pod the scheduler assumes. assume (schedule_one.go)
// assumes a pod in the snapshot (in a pod group cycle) or in the cache, then has the queue drop its
// nomination, the pod's nodeName set: the one call of DeleteNominatedPodIfExists in pkg/scheduler.
type notingQueue struct {
	internalqueue.SchedulingQueue
	rec *recorder
}

func (q *notingQueue) DeleteNominatedPodIfExists(pod *v1.Pod) {
	q.SchedulingQueue.DeleteNominatedPodIfExists(pod)
	if pod.Spec.NodeName != "" {
		q.rec.assumed(pod.DeepCopy())
	}
}

type podGroupParking struct {
	t     *countingTracker
	sched *scheduler.Scheduler
	// last: group -> the cluster's state and its pods' outcomes after its last cycle
	last map[string]string
	// parked: group -> the state it was parked in
	parked map[string]string
}

func (g *podGroupParking) cycled(group string, events []outcomeEvent) bool {
	var outcomes []string
	for _, e := range events {
		if (podGroupSupport{}).group(e.pod) == group && e.reason != "Assume" {
			outcomes = append(outcomes, podKey(e.pod.Namespace, e.pod.Name)+" "+e.reason+" "+e.message)
		}
	}
	sort.Strings(outcomes)
	state := g.state()
	sig := state + "\n" + strings.Join(outcomes, "\n")
	repeat := g.last[group] == sig
	if repeat {
		g.parked[group] = state
	}
	g.last[group] = sig
	return repeat
}

func (g *podGroupParking) parkedOnly(backoffQ []*v1.Pod) bool {
	if len(g.parked) == 0 || len(backoffQ) == 0 {
		return false
	}
	state := g.state()
	for _, p := range backoffQ {
		if grp := (podGroupSupport{}).group(p); grp == "" || g.parked[grp] != state {
			return false
		}
	}
	return true
}

// state: what a pod group cycle's outcome depends on that a run changes: the pods' nodes,
// nominations, scheduling gates and deletions, and the nodes
func (g *podGroupParking) state() string {
	var parts []string
	if list, err := g.t.List(v1.SchemeGroupVersion.WithResource("pods"), v1.SchemeGroupVersion.WithKind("Pod"), ""); err == nil {
		for _, p := range list.(*v1.PodList).Items {
			parts = append(parts, fmt.Sprintf("p %s/%s %s %s %d %v", p.Namespace, p.Name, p.Spec.NodeName,
				p.Status.NominatedNodeName, len(p.Spec.SchedulingGates), p.DeletionTimestamp != nil))
		}
	}
	if list, err := g.t.List(v1.SchemeGroupVersion.WithResource("nodes"), v1.SchemeGroupVersion.WithKind("Node"), ""); err == nil {
		for _, n := range list.(*v1.NodeList).Items {
			parts = append(parts, "n "+n.Name+" "+n.ResourceVersion)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "\n")
}

// lastTried: the group cycle's pods are tried in one order (priority, then the first time each was
// popped), and submitted in that order (submitPodGroupAlgorithmResult): each fails
// (FailedScheduling, in the cycle) or, the group schedulable, is assumed again for its binding
// cycle. Its first assumption (podGroupPodSchedulingAlgorithm's assumeAndReserve, in the snapshot)
// gave its node. So
// the pod submitted last was tried last, and it was tried with the pods submitted before it that
// fit assumed: those assumed again, or failing with the group's "pod group is unschedulable" (a pod
// Permit rejected was forgotten at once, and fails with Permit's status).
func (g *podGroupParking) lastTried(group string, events []outcomeEvent) (*v1.Pod, []*v1.Pod) {
	first := map[types.UID]*v1.Pod{}
	type submitted struct {
		pod *v1.Pod
		fit bool
	}
	var order []submitted
	for _, e := range events {
		if (podGroupSupport{}).group(e.pod) != group {
			continue
		}
		switch e.reason {
		case "Assume":
			if _, ok := first[e.pod.UID]; !ok {
				first[e.pod.UID] = e.pod
			} else {
				order = append(order, submitted{e.pod, true})
			}
		case "FailedScheduling":
			order = append(order, submitted{e.pod, strings.HasPrefix(e.message, "pod group is unschedulable")})
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	var assumed []*v1.Pod
	for _, s := range order[:len(order)-1] {
		if p := first[s.pod.UID]; s.fit && p != nil {
			assumed = append(assumed, p)
		}
	}
	return order[len(order)-1].pod, assumed
}

func (g *podGroupParking) assume(pods []*v1.Pod) (func(), error) {
	return scheduler.KspreadAssumeInSnapshot(g.sched, pods)
}
