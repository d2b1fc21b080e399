// podgroup136.go: added by kspread's dev/seqoracle-build.sh to the 1.36 fullcycle driver in place of
// gang.go (gang.patch calls the same hooks; podgroup136.patch adds gangParked to steps.go's idle
// test). Sequences with pod groups (1.36, gates GenericWorkload and GangScheduling, issue 32):
//
//   - the input's `podGroups` (scheduling.k8s.io/v1alpha2 PodGroup manifests) are created in the fake
//     API, each with a UID of its own (the fake API gives none), before the informers start, so GangScheduling's lister holds them; a pod's
//     `schedulingGroup` (input) becomes its spec.schedulingGroup. 1.35's v1alpha1 Workloads and
//     workloadRef are refused (exit status 1);
//   - kspread's rule for a pod group that cannot be placed (kspread/engine/podgroupcycle.py): upstream
//     pops its pods again as soon as activeQ is empty, for ever; while nothing changes each retry
//     repeats the cycle. gangParked, called by the idle test after each ScheduleOne, drops a pod group
//     cycle that repeated the group's last one (its cycles in scheduler.OracleLog: each pod, whether it
//     fit, its error) with nothing changed since the cycle before it began (the pods' nodes,
//     nominations, scheduling gates, the nodes, the resource claims' allocations and reservations,
//     the volumes' and claims' bindings: a change a cycle made itself, a claim DynamicResources'
//     PostFilter deallocated, makes the next cycle no repeat), with its outcome; and once every pod left in backoffQ is of such a
//     parked group (activeQ empty), the scheduler counts as idle;
//   - DRAWorkloadResourceClaims: a PodGroup's spec.resourceClaims go with it; for each template
//     entry the PodGroup gets status.resourceClaimStatuses naming <podgroup>-<entry>, and the
//     first pod whose entry names it alike (name and template) makes that claim, owned by the
//     PodGroup (dra.go's makeTemplateClaims, the resource claim controller emulated); the pods'
//     status.resourceClaimStatuses name it;
//   - at the end, `waiting`: the pods still waiting at Permit (a binding cycle's wait for its gang's
//     quorum pod, which comes in the same submission).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
)

type pgPod struct {
	Name            string                 `json:"name"`
	Namespace       string                 `json:"namespace"`
	SchedulingGroup *v1.PodSchedulingGroup `json:"schedulingGroup"`
	WorkloadRef     json.RawMessage        `json:"workloadRef"`
}

type pgInput struct {
	Workloads []json.RawMessage           `json:"workloads"`
	PodGroups []schedulingv1alpha2.PodGroup `json:"podGroups"`
	Pods      []pgPod                     `json:"pods"`
	Sched     []pgPod                     `json:"schedule"`
}

var (
	pgRefs    = map[string]*v1.PodSchedulingGroup{} // ns/name (as OracleLog names pods) -> schedulingGroup
	pgOn      bool
	pgChecked int               // OracleLog's length at the last check
	pgLast    = map[string]string{} // group -> the state and its cycles after its last pod group cycle
	pgBefore  = map[string]string{} // group -> the state before its last pod group cycle
	pgParked  = map[string]string{} // group -> the state it was parked in
	pgNow     string                // the state at the last call of gangParked: before the next ScheduleOne
	pgObjs    = map[string]*schedulingv1alpha2.PodGroup{} // the input's PodGroups as created
)

func pgLogKey(ns, name string) string {
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + name
}

// gangSetup: after newSeqDriver, before the informers start
func gangSetup(ctx context.Context, raw []byte, client *fake.Clientset, _ *seqDriver) {
	var in pgInput
	must(json.Unmarshal(raw, &in))
	refuse := len(in.Workloads) > 0
	for _, p := range append(append([]pgPod{}, in.Pods...), in.Sched...) {
		if len(p.WorkloadRef) > 0 && string(p.WorkloadRef) != "null" {
			refuse = true
		}
		if p.SchedulingGroup != nil {
			pgRefs[pgLogKey(p.Namespace, p.Name)] = p.SchedulingGroup
		}
	}
	if refuse {
		fmt.Fprintln(os.Stderr, "fullcycle 1.36: 1.35's gangs (v1alpha1 workloads, a pod's workloadRef) do not exist at 1.36")
		os.Exit(1)
	}
	for i := range in.PodGroups {
		pg := in.PodGroups[i].DeepCopy()
		if pg.Namespace == "" {
			pg.Namespace = "default"
		}
		if pg.UID == "" {
			// as an API server would: a UID of its own (the fake API sets none; workload-aware
			// preemption keys victim groups and running preemptions by it)
			pg.UID = types.UID("podgroup/" + pg.Namespace + "/" + pg.Name)
		}
		// DRAWorkloadResourceClaims: off, the API server drops spec.resourceClaims; on, the resource
		// claim controller's status for each template entry (the claim itself is made with the
		// first pod that uses it: dra.go's podGroupClaim)
		if !utilfeature.DefaultFeatureGate.Enabled("DRAWorkloadResourceClaims") {
			pg.Spec.ResourceClaims = nil
		}
		for _, rc := range pg.Spec.ResourceClaims {
			if rc.ResourceClaimTemplateName != nil {
				claimName := pg.Name + "-" + rc.Name
				pg.Status.ResourceClaimStatuses = append(pg.Status.ResourceClaimStatuses,
					schedulingv1alpha2.PodGroupResourceClaimStatus{Name: rc.Name, ResourceClaimName: &claimName})
			}
		}
		pgObjs[pgLogKey(pg.Namespace, pg.Name)] = pg.DeepCopy()
		_, err := client.SchedulingV1alpha2().PodGroups(pg.Namespace).Create(ctx, pg, metav1.CreateOptions{})
		must(err)
	}
	podGroupClaim = func(pod *v1.Pod, rc v1.PodResourceClaim) (string, metav1.OwnerReference, bool) {
		sg := pgRefs[pgLogKey(pod.Namespace, pod.Name)]
		if sg == nil || sg.PodGroupName == nil {
			return "", metav1.OwnerReference{}, false
		}
		pg := pgObjs[pgLogKey(pod.Namespace, *sg.PodGroupName)]
		if pg == nil {
			return "", metav1.OwnerReference{}, false
		}
		for _, c := range pg.Spec.ResourceClaims {
			if c.Name == rc.Name && c.ResourceClaimTemplateName != nil && rc.ResourceClaimTemplateName != nil &&
				*c.ResourceClaimTemplateName == *rc.ResourceClaimTemplateName && c.ResourceClaimName == nil {
				yes := true
				return pg.Name + "-" + rc.Name, metav1.OwnerReference{APIVersion: "scheduling.k8s.io/v1alpha2",
					Kind: "PodGroup", Name: pg.Name, UID: pg.UID, Controller: &yes, BlockOwnerDeletion: &yes}, true
			}
		}
		return "", metav1.OwnerReference{}, false
	}
	pgOn = len(in.PodGroups) > 0 || len(pgRefs) > 0
	if v := os.Getenv("FC_V"); v != "" { // klog's verbosity (debugging)
		must(flag.Set("v", v))
	}
}

// gangDecorate: the pod's schedulingGroup (mkPod)
func gangDecorate(pod *v1.Pod) {
	if sg, ok := pgRefs[pgLogKey(pod.Namespace, pod.Name)]; ok {
		c := *sg
		pod.Spec.SchedulingGroup = &c
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

// gangWait: no Permit timers to drive at 1.36 (a gang's binding cycles wait only for the quorum pod
// of the same submission)
func (d *seqDriver) gangWait(context.Context, int64) {}

func pgGroupOf(ns string, sg *v1.PodSchedulingGroup) string {
	if sg == nil || sg.PodGroupName == nil {
		return ""
	}
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + *sg.PodGroupName
}

// pgState: what a pod group cycle's outcome depends on that a sequence changes
func pgState(ctx context.Context, d *seqDriver) string {
	var parts []string
	pods, err := d.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	must(err)
	for _, p := range pods.Items {
		parts = append(parts, fmt.Sprintf("p %s/%s %s %s %d %v", p.Namespace, p.Name, p.Spec.NodeName,
			p.Status.NominatedNodeName, len(p.Spec.SchedulingGates), p.DeletionTimestamp != nil))
	}
	nodes, err := d.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	must(err)
	for _, n := range nodes.Items {
		// (the fake API does not bump a node's resourceVersion: its spec, labels and capacity)
		spec, err := json.Marshal(n.Spec)
		must(err)
		meta, err := json.Marshal([]any{n.Labels, n.Status.Allocatable})
		must(err)
		parts = append(parts, "n "+n.Name+" "+string(spec)+" "+string(meta))
	}
	claims, err := d.client.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{})
	must(err)
	for _, c := range claims.Items {
		var users []string
		for _, r := range c.Status.ReservedFor {
			users = append(users, r.Name)
		}
		parts = append(parts, fmt.Sprintf("c %s/%s %v %v", c.Namespace, c.Name, allocatedDevices(&c), users))
	}
	pvcs, err := d.client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	must(err)
	for _, c := range pvcs.Items {
		parts = append(parts, fmt.Sprintf("pvc %s/%s %s %s", c.Namespace, c.Name, c.Spec.VolumeName,
			c.Annotations["volume.kubernetes.io/selected-node"]))
	}
	pvs, err := d.client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	must(err)
	for _, v := range pvs.Items {
		ref := ""
		if v.Spec.ClaimRef != nil {
			ref = v.Spec.ClaimRef.Namespace + "/" + v.Spec.ClaimRef.Name
		}
		parts = append(parts, fmt.Sprintf("pv %s %s", v.Name, ref))
	}
	sort.Strings(parts)
	return strings.Join(parts, "\n")
}

// gangParked: the idle test's hook (podgroup136.patch), after each ScheduleOne (see above). a and b:
// the pods in activeQ and backoffQ.
func gangParked(d *seqDriver, a, b int) bool {
	if !pgOn {
		return false
	}
	ctx := context.Background()
	n := len(scheduler.OracleLog)
	start := pgChecked
	pgChecked = n
	if n > start {
		group := ""
		var cycles []string
		for _, c := range scheduler.OracleLog[start:n] {
			g := ""
			if sg, ok := pgRefs[c.Pod]; ok {
				ns := strings.SplitN(c.Pod, "/", 2)[0]
				g = pgGroupOf(ns, sg)
			}
			if g == "" || (group != "" && g != group) {
				group = ""
				break
			}
			group = g
			// whether each pod fit, not where: on 100 nodes or more nextStartNodeIndex moves at every
			// retry, and with it the nodes a retry finds (kspread does not follow that, see dev/README.md)
			cycles = append(cycles, fmt.Sprintf("%s %v %s", c.Pod, c.Picked != "", c.Err))
		}
		if group != "" {
			state := pgState(ctx, d)
			sig := state + "\n" + strings.Join(cycles, "\n")
			// a repeat: the same cycles and state after as the group's last cycle, and nothing
			// changed since that one began (kspread runs a group again after any change, the
			// group's own last cycle's included: its deletions, its nominations cleared)
			if pgLast[group] == sig && pgBefore[group] == pgNow {
				// a repeat: upstream's retry of a group nothing changed for, which kspread does not run
				scheduler.OracleLog = scheduler.OracleLog[:start]
				pgChecked = start
				kept := d.rec.out[:0]
				for _, o := range d.rec.out {
					if o.Index < start {
						kept = append(kept, o)
					}
				}
				d.rec.out = kept
				d.rec.seen = start
				pgParked[group] = state
				if q, ok := d.sched.SchedulingQueue.(interface {
					OracleDemoteSaturated(func(*v1.Pod) bool) int
				}); ok {
					// (a parked group at podBackoffQ's head with its backoff at the maximum: the
					// wall clock would soon put it behind the pods there; zz_queue_v136.go)
					q.OracleDemoteSaturated(func(p *v1.Pod) bool { return pgGroupOf(p.Namespace, p.Spec.SchedulingGroup) == group })
				}
			}
			pgLast[group] = sig
			pgBefore[group] = pgNow
		}
	}
	pgNow = pgState(ctx, d)
	if a > 0 || b == 0 {
		return false
	}
	q, ok := d.sched.SchedulingQueue.(interface {
		OracleBackoffPods() ([]*v1.Pod, []*v1.Pod)
	})
	if !ok {
		return false
	}
	bo, eo := q.OracleBackoffPods()
	state := pgNow
	live := func(pods []*v1.Pod) int {
		k := 0
		for _, p := range pods {
			if g := pgGroupOf(p.Namespace, p.Spec.SchedulingGroup); g == "" || pgParked[g] != state {
				k++
			}
		}
		return k
	}
	liveBo, liveEo := live(bo), live(eo)
	if liveBo == 0 && liveEo == 0 {
		return true
	}
	if liveBo == 0 && d.popBackoff {
		// only podErrorBackoffQ's pods are live (the parked ones would be popped again, to no end):
		// the scheduler waits for the backoff flush that moves one to activeQ
		for i := 0; i < 30; i++ {
			d.tickTo(d.now + 1)
			if a2, _, _ := queueLens(d.sched); a2 > 0 {
				break
			}
		}
	}
	return false
}
