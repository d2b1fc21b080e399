//go:build pre133

package kspreadbackend

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// scoreOn: a score plugin's raw score of a node (Score takes the node's name up to 1.32).
func scoreOn(ctx context.Context, pl fwScorePlugin, state fwCycleState, pod *v1.Pod, ni fwNodeInfo) (int64, *fwStatus) {
	return pl.Score(ctx, state, pod, ni.Node().Name)
}
