package kspreadbackend

// A pod group cycle's tries (1.36: watchGroupPods): each pod the cycle tries, in the placement it
// tries it in (TopologyAwareWorkloadScheduling: podGroupSchedulingPlacementAlgorithm runs the
// default algorithm once per placement, the snapshot's nodes narrowed to it), and the placement
// whose run the cycle's outcome is, whose last pod's per-node data the backend reports, as kspread's
// per-cycle keys describe it:
//
//   - the group can be placed: the run podGroupSchedulingPlacementAlgorithm returned (the only one
//     that fit, or findBestPlacement's pick, ties broken by rand.Int()). Upstream says which
//     directly: submitPodGroupAlgorithmResult unmarks the pod group cycle of the cycle state each of
//     that run's pods that fit was tried in (SetPodGroupSchedulingCycle(nil)) before taking it to
//     its binding cycle, and no other try's.
//   - a run ended in an Error: the placement algorithm returns that run at once, the last one
//     tried (the FailureHandler then fails the group's pods with an Error status).
//   - the group fits in no placement: upstream gives the pods the statuses of the first placement
//     its generator listed, in a Go map's order ("first placement status"); kspread tries the
//     placements in the order of their first node in the snapshot's node list and reports its
//     first. Both sides report that one: the placement whose earliest node comes first in the
//     snapshot's node list (every placement is tried, so the backend has its run; its pods' outcomes
//     are upstream's whenever the placements give each pod the same one, else kspread lists
//     placementOrder).
//   - no pod was tried (no placement, or the generator's Error): no per-node data; kspread
//     observes nothing either, and the last cycle's stays.
//
// A group that waits on preemption (Unschedulable, no pod bound) has one placement: DefaultPreemption
// refuses a pod of a group with scheduling constraints, and a group without them has one. The
// reported run's last pod is asked about over its placement's nodes (ListNodesInPlacement, as
// schedulePod searches them): with storage or devices as the run was about to try it, else
// afterwards on the cycle's snapshot with the pods the run had assumed before it (their
// assumptions logged in the run) assumed again. Without the gate a group has one run
// (workload-aware preemption's runs try it again, victims removed: a pod's first try counts, as it
// does per placement).

import (
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// groupTry: a pod a pod group cycle is about to try (watchGroupPods)
type groupTry struct {
	pod *v1.Pod
	// ask: a new cycle state marked with the group's, to ask about the pod in as the cycle does
	ask func() *framework.CycleState
	// nodes: the nodes the try searches: its placement's, every node without one
	nodes []fwNodeInfo
	// bound: whether upstream took the try's result to the pod's binding cycle (asked after the
	// cycle)
	bound func() bool
}

type triedPod struct {
	pod   *v1.Pod
	nodes []fwNodeInfo
	bound func() bool
	// mark: the outcome events logged before the try (the assumptions of the group's pods tried
	// before it in the run are logged after its run's first try's mark)
	mark int
	// table: the pod's per-node data asked as the cycle was about to try it (nil: not asked)
	table *Cycle
}

// groupTries: the tries of the pod group cycle running (reset when a pod is popped). The
// FailureHandler may be called from binding cycles too, so erred is guarded.
type groupTries struct {
	tries []triedPod
	mu    sync.Mutex
	erred map[types.UID]bool
}

func (g *groupTries) reset() {
	g.tries = nil
	g.mu.Lock()
	g.erred = nil
	g.mu.Unlock()
}

// samePlacement: whether two tries searched the same nodes
func samePlacement(a, b []fwNodeInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Node().Name != b[i].Node().Name {
			return false
		}
	}
	return true
}

// add notes a try (a pod's first in its placement) made after mark outcome events, with ask's
// per-node data
func (g *groupTries) add(t groupTry, mark int, ask func() (*Cycle, error)) error {
	for _, r := range g.tries {
		if r.pod.UID == t.pod.UID && samePlacement(r.nodes, t.nodes) {
			return nil
		}
	}
	table, err := ask()
	if err != nil {
		return err
	}
	g.tries = append(g.tries, triedPod{pod: t.pod, nodes: t.nodes, bound: t.bound, mark: mark, table: table})
	return nil
}

// fail notes a pod the FailureHandler failed with an Error status
func (g *groupTries) fail(p *v1.Pod) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.erred == nil {
		g.erred = map[types.UID]bool{}
	}
	g.erred[p.UID] = true
}

// firstTable: the per-node data of the pod's first try in the cycle (nil: none asked)
func (g *groupTries) firstTable(uid types.UID) *Cycle {
	for _, r := range g.tries {
		if r.pod.UID == uid {
			return r.table
		}
	}
	return nil
}

// reportedTry: the try whose per-node data a pod group cycle with placements reports
type reportedTry struct {
	pod *v1.Pod
	// nodes: its placement's nodes, by name (nil: every node)
	nodes []string
	table *Cycle
	// assumed: without table, the group's pods its run had assumed when it tried the pod (each on
	// its node), to ask about it afterwards as it was tried
	assumed []*v1.Pod
}

// reported: the last pod tried in the placement whose run is the cycle's outcome (above), all: every
// node of the snapshot, in its order, and logged: the outcome events from the n-th on; false when
// the cycle tried no pod
func (g *groupTries) reported(all []fwNodeInfo, logged func(n int) []outcomeEvent) (reportedTry, bool) {
	if len(g.tries) == 0 {
		return reportedTry{}, false
	}
	since := g.tries[0].mark
	events := logged(since)
	var run []fwNodeInfo
	bound := false
	for _, r := range g.tries {
		if r.bound() {
			run, bound = r.nodes, true
			break
		}
	}
	if !bound {
		erred := false
		g.mu.Lock()
		for _, r := range g.tries {
			erred = erred || g.erred[r.pod.UID]
		}
		g.mu.Unlock()
		if erred {
			run = g.tries[len(g.tries)-1].nodes
		} else {
			at := make(map[string]int, len(all))
			for i, ni := range all {
				at[ni.Node().Name] = i
			}
			first := func(nodes []fwNodeInfo) int {
				m := len(all)
				for _, ni := range nodes {
					if i, ok := at[ni.Node().Name]; ok && i < m {
						m = i
					}
				}
				return m
			}
			run = g.tries[0].nodes
			for _, r := range g.tries[1:] {
				if first(r.nodes) < first(run) {
					run = r.nodes
				}
			}
		}
	}
	// the run's tries: its last pod, and the pods tried before it in the run that its assumptions
	// (logged after the run's first try) put in the snapshot and that were not forgotten (a pod
	// Permit rejected fails with Permit's status: known where the run is the one upstream reported)
	var in []triedPod
	for _, r := range g.tries {
		if samePlacement(r.nodes, run) {
			in = append(in, r)
		}
	}
	last := in[len(in)-1]
	out := reportedTry{pod: last.pod, table: last.table}
	if len(run) < len(all) {
		for _, ni := range run {
			out.nodes = append(out.nodes, ni.Node().Name)
		}
	}
	if last.table != nil {
		return out, true
	}
	before := map[types.UID]bool{}
	for _, r := range in[:len(in)-1] {
		before[r.pod.UID] = true
	}
	rejected := map[types.UID]bool{}
	if bound {
		for _, e := range events {
			if before[e.pod.UID] && e.reason == "FailedScheduling" && !strings.HasPrefix(e.message, "pod group is unschedulable") {
				rejected[e.pod.UID] = true
			}
		}
	}
	at := map[types.UID]*v1.Pod{}
	var order []types.UID
	for _, e := range events[max(in[0].mark-since, 0):max(last.mark-since, 0)] {
		if e.reason == "Assume" && before[e.pod.UID] && !rejected[e.pod.UID] {
			if _, ok := at[e.pod.UID]; !ok {
				order = append(order, e.pod.UID)
			}
			at[e.pod.UID] = e.pod
		}
	}
	for _, uid := range order {
		out.assumed = append(out.assumed, at[uid])
	}
	return out, true
}
