// tolerates131.go: steps.go's toleration test against k8s.io/api v0.31 (seqoracle-build.sh copies it
// into the 1.31 driver; tolerates135.go is the v1.35 form).
package main

import v1 "k8s.io/api/core/v1"

func toleratesTaint(tol v1.Toleration, t *v1.Taint) bool {
	return tol.ToleratesTaint(t)
}
