// zz_preemption_order.go: added by kspread's dev/seqoracle-build.sh to the vendored
// k8s.io/kubernetes/pkg/scheduler/framework/preemption, with one call in pickOneNodeForPreemption
// (the build script inserts it after the loop that lists the candidates from a map). With the
// fullcycle driver's tie-break in node order, the candidates are taken in the scheduler snapshot's
// node order (the order DefaultPreemption's dry run visits the potential nodes from offset 0) instead
// of Go's map order, so that candidates tied on every criterion give the first of them, as kspread
// does; upstream's choice among such candidates is random. Nothing else changes.
package preemption

// OracleCandidateOrder, when set, orders pickOneNodeForPreemption's candidates in place.
var OracleCandidateOrder func(candidates []string)
