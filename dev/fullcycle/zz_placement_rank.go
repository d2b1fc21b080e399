// zz_placement_rank.go: added by kspread's dev/seqoracle-build.sh (1.36) to the vendored
// k8s.io/kubernetes/pkg/scheduler, with findBestPlacement's `rand.Int()` replaced by a call to
// oraclePlacementRandomizer: among placements of equal total score, the one whose first node comes
// first in the snapshot's node list wins (kspread's pick; upstream's is random), whatever order
// the successful placements come in (a Go map's). Nothing else changes.
package scheduler

import (
	fwk "k8s.io/kube-scheduler/framework"
)

func (sched *Scheduler) oraclePlacementRandomizer(p *fwk.Placement) int {
	nodes, err := sched.nodeInfoSnapshot.NodeInfos().List()
	if err != nil || len(p.Nodes) == 0 {
		return 0
	}
	first := p.Nodes[0].Node().Name
	for i, n := range nodes {
		if n.Node().Name == first {
			return len(nodes) - i // a larger Randomizer wins
		}
	}
	return 0
}
