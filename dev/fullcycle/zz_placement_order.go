// zz_placement_order.go: added by kspread's dev/seqoracle-build.sh (1.36) to the vendored
// k8s.io/kubernetes/pkg/scheduler/framework/plugins/topologyaware, with one call in
// GeneratePlacements (the build script inserts it after the loop that lists the placements from a
// map). The placements are taken in the order their first node has in the parent placement (the
// snapshot's node list), as kspread tries them, instead of Go's map order, which decides which
// placement's statuses a group that fits none reports and where nextStartNodeIndex ends.
// Nothing else changes.
package topologyaware

import (
	"sort"

	fwk "k8s.io/kube-scheduler/framework"
)

func oracleSortPlacements(placements []*fwk.Placement, parent *fwk.Placement) {
	at := make(map[string]int, len(parent.Nodes))
	for i, n := range parent.Nodes {
		at[n.Node().Name] = i
	}
	sort.SliceStable(placements, func(i, j int) bool {
		return at[placements[i].Nodes[0].Node().Name] < at[placements[j].Nodes[0].Node().Name]
	})
}
