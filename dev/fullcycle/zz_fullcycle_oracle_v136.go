// Injected into the vendored k8s.io/kubernetes/pkg/scheduler package (vendor tree only) by
// the full-cycle oracle's build: accessors for the scheduler's own unexported cycle, and a copy of
// schedulePod whose only change is how ties are broken (see oracleSchedulePod).
// zz_fullcycle_oracle_v136.go: the shared driver's zz_fullcycle_oracle.go (v1.35.4) turned to
// v1.36.2 by kspread's dev/ (dev/seqoracle-build.sh copies it for 1.36): SchedulePod takes the
// QueuedPodInfo (its PodSignature), the snapshot is updated by the caller (scheduleOnePod), the
// placement's node count and findNodesThatFitPod's four results.
package scheduler

import (
	"context"
	"sort"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// OracleCycle records one call of SchedulePod.
type OracleCycle struct {
	Pod        string           `json:"pod"`
	NumAll     int              `json:"numAllNodes"`
	StartIndex int              `json:"startIndex"`
	NextStart  int              `json:"nextStartNodeIndex"`
	Nominated  string           `json:"nominatedNodeName,omitempty"`
	Hint       string           `json:"batchHint,omitempty"`
	Feasible   []string         `json:"searched"`
	Totals     map[string]int64 `json:"totals,omitempty"`
	Ties       []string         `json:"ties"`
	HeapPick   string           `json:"upstreamHeapPick,omitempty"`
	Picked     string           `json:"picked,omitempty"`
	Err        string           `json:"err,omitempty"`
	Cycle      int64            `json:"cycle"`
}

// OracleLog collects every cycle, in order.
var OracleLog []OracleCycle

// OracleNodeIndex: the case's node order; when set, ties are broken by the lowest index
// (kspread's rule inside a sequence). When nil, upstream's own heap order decides.
var OracleNodeIndex map[string]int

// OracleInstall makes the scheduler use oracleSchedulePod.
func (sched *Scheduler) OracleInstall() { sched.SchedulePod = sched.oracleSchedulePod }

// OracleNextStartNodeIndex exposes sched.nextStartNodeIndex.
func (sched *Scheduler) OracleNextStartNodeIndex() int { return sched.nextStartNodeIndex }

// oracleSchedulePod is schedule_one.go's schedulePod (v1.36.2) with two additions: it records
// what the cycle saw (OracleLog), and, when OracleNodeIndex is set, it sets each node's
// Randomizer so that equal totals pop in the case's node order (upstream sets Randomizer only when
// extenders are configured; otherwise the heap's structure breaks ties).
func (sched *Scheduler) oracleSchedulePod(ctx context.Context, f framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (result ScheduleResult, err error) {
	pod := podInfo.Pod
	rec := OracleCycle{Pod: pod.Namespace + "/" + pod.Name, StartIndex: sched.nextStartNodeIndex,
		Nominated: pod.Status.NominatedNodeName, Cycle: sched.CurrentCycle(), Ties: []string{}, Feasible: []string{}}
	defer func() {
		rec.NextStart = sched.nextStartNodeIndex
		if err != nil {
			rec.Err = err.Error()
		}
		OracleLog = append(OracleLog, rec)
	}()
	if sched.nodeInfoSnapshot.NumNodesInPlacement() == 0 {
		return result, ErrNoNodesAvailable
	}
	rec.NumAll = sched.nodeInfoSnapshot.NumNodesInPlacement()
	feasibleNodes, diagnosis, nodeHint, err := sched.findNodesThatFitPod(ctx, f, state, podInfo)
	signature := podInfo.PodSignature
	rec.Hint = nodeHint
	if err != nil {
		return result, err
	}
	for _, n := range feasibleNodes {
		rec.Feasible = append(rec.Feasible, n.Node().Name)
	}
	if len(feasibleNodes) == 0 {
		return result, &framework.FitError{Pod: pod, NumAllNodes: sched.nodeInfoSnapshot.NumNodesInPlacement(), Diagnosis: diagnosis}
	}
	if len(feasibleNodes) == 1 {
		node := feasibleNodes[0].Node().Name
		if utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching) {
			f.StoreScheduleResults(ctx, signature, nodeHint, node, nil, sched.CurrentCycle())
		}
		rec.Ties = []string{node}
		rec.Picked = node
		return ScheduleResult{SuggestedHost: node, EvaluatedNodes: 1 + diagnosis.NodeToStatus.Len(), FeasibleNodes: 1}, nil
	}
	priorityList, err := prioritizeNodes(ctx, sched.Extenders, f, state, pod, feasibleNodes)
	if err != nil {
		return result, err
	}
	rec.Totals = map[string]int64{}
	var best int64 = -1 << 62
	for _, s := range priorityList {
		rec.Totals[s.Name] = s.TotalScore
		if s.TotalScore > best {
			best = s.TotalScore
		}
	}
	for _, s := range priorityList {
		if s.TotalScore == best {
			rec.Ties = append(rec.Ties, s.Name)
		}
	}
	sort.Strings(rec.Ties)
	// what upstream's heap pops with upstream's own Randomizer values
	cp := make([]fwk.NodePluginScores, len(priorityList))
	copy(cp, priorityList)
	rec.HeapPick = newSortedNodeScores(cp).Pop()
	if OracleNodeIndex != nil {
		for i := range priorityList {
			priorityList[i].Randomizer = 1<<30 - OracleNodeIndex[priorityList[i].Name]
		}
	}
	sortedPrioritizedNodes := newSortedNodeScores(priorityList)
	node := sortedPrioritizedNodes.Pop()
	rec.Picked = node
	if utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching) {
		f.StoreScheduleResults(ctx, signature, nodeHint, node, sortedPrioritizedNodes, sched.CurrentCycle())
	}
	return ScheduleResult{SuggestedHost: node, EvaluatedNodes: len(feasibleNodes) + diagnosis.NodeToStatus.Len(), FeasibleNodes: len(feasibleNodes)}, err
}
