// Package teamrank is an out-of-tree filter and score plugin of our own, written as a new user of
// kspread's backend would (README, "Backends"): Filter rejects a node whose label `team` is not the
// pod's (when the pod has one); Score is the node's numeric label `rank` (0 when missing or not a
// non-negative integer) times the args' multiplier; NormalizeScore scales by the highest score to
// 0..MaxNodeScore. Its args are no registered type: the factory decodes the JSON the case writes
// with frameworkruntime.DecodeInto.
package teamrank

import (
	"context"
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

const Name = "TeamRank"

// Args are the plugin's args (a case's profile.pluginConfig.TeamRank), decoded from JSON; a field
// left out keeps its default (teamLabel "team", rankLabel "rank", multiplier 1).
type Args struct {
	TeamLabel  string `json:"teamLabel"`
	RankLabel  string `json:"rankLabel"`
	Multiplier int64  `json:"multiplier"`
}

type TeamRank struct{ args Args }

var _ fwk.FilterPlugin = &TeamRank{}
var _ fwk.ScorePlugin = &TeamRank{}

func New(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	args := Args{TeamLabel: "team", RankLabel: "rank", Multiplier: 1}
	if err := frameworkruntime.DecodeInto(obj, &args); err != nil {
		return nil, fmt.Errorf("TeamRank args: %w", err)
	}
	if args.Multiplier < 0 {
		return nil, fmt.Errorf("TeamRank args: multiplier %d must not be negative", args.Multiplier)
	}
	return &TeamRank{args: args}, nil
}

func (t *TeamRank) Name() string { return Name }

func (t *TeamRank) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	want, ok := pod.Labels[t.args.TeamLabel]
	if !ok {
		return nil
	}
	if got := nodeInfo.Node().Labels[t.args.TeamLabel]; got != want {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node's team %q is not the pod's %q", got, want))
	}
	return nil
}

func (t *TeamRank) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	rank, err := strconv.ParseInt(nodeInfo.Node().Labels[t.args.RankLabel], 10, 64)
	if err != nil || rank < 0 {
		return 0, nil
	}
	return rank * t.args.Multiplier, nil
}

func (t *TeamRank) ScoreExtensions() fwk.ScoreExtensions { return t }

// NormalizeScore scales the raw scores to 0..MaxNodeScore by the highest one.
func (t *TeamRank) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	var highest int64
	for _, s := range scores {
		highest = max(highest, s.Score)
	}
	if highest == 0 {
		return nil
	}
	for i := range scores {
		scores[i].Score = scores[i].Score * fwk.MaxNodeScore / highest
	}
	return nil
}
