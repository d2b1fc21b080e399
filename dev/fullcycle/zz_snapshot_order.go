// zz_snapshot_order.go: added by kspread's dev/seqoracle-build.sh to the vendored
// k8s.io/kubernetes/pkg/scheduler for the fullcycle driver's steps.go. Nothing of upstream's
// behaviour changes.
package scheduler

// OracleSnapshotOrder: the nodes of the scheduler's snapshot, in its order (the node tree's),
// as the current scheduling cycle sees them.
func (sched *Scheduler) OracleSnapshotOrder() []string {
	list, err := sched.nodeInfoSnapshot.NodeInfos().List()
	if err != nil {
		panic(err)
	}
	out := make([]string, 0, len(list))
	for _, n := range list {
		out = append(out, n.Node().Name)
	}
	return out
}
