// zz_pool_order.go: copied by kspread's dev/seqoracle-build.sh into each of the vendored
// structured allocators (stable, incubating, experimental; the package name and the pool's
// slice field set by sed), whose Allocate calls oracleSortPools after GatherPools. With
// FC_POOL_ORDER (a comma-separated list of ResourceSlice names) a node's pools are taken in the
// order of their first slice in that list and each pool's slices in list order (kspread's
// rule); without it nothing changes (upstream: a Go map's order).
package stable

import (
	"os"
	"sort"
	"strings"
	"sync"

	draapi "k8s.io/dynamic-resource-allocation/api"
)

var (
	oracleOrderOnce sync.Once
	oracleOrder     map[string]int
)

func oracleSliceRank(s *draapi.ResourceSlice) int {
	if i, ok := oracleOrder[s.Name]; ok {
		return i
	}
	return len(oracleOrder)
}

func oracleSortSlices(l []*draapi.ResourceSlice) {
	sort.SliceStable(l, func(i, j int) bool { return oracleSliceRank(l[i]) < oracleSliceRank(l[j]) })
}

func oraclePoolRank(l []*draapi.ResourceSlice) int {
	if len(l) == 0 {
		return len(oracleOrder) + 1
	}
	return oracleSliceRank(l[0])
}

func oracleSortPools(pools []*Pool) {
	oracleOrderOnce.Do(func() {
		if v := os.Getenv("FC_POOL_ORDER"); v != "" {
			oracleOrder = map[string]int{}
			for i, n := range strings.Split(v, ",") {
				oracleOrder[n] = i
			}
		}
	})
	if oracleOrder == nil {
		return
	}
	for _, p := range pools {
		oracleSortSlices(p.Slices) // POOL-SLICES
	}
	sort.SliceStable(pools, func(i, j int) bool { return oraclePoolRank(pools[i].Slices) < oraclePoolRank(pools[j].Slices) })
}
