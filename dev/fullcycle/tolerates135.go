// tolerates135.go: steps.go's toleration test against k8s.io/api v0.35 (seqoracle-build.sh copies it
// into the 1.35 driver; tolerates131.go is the v1.31 form).
package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

func toleratesTaint(tol v1.Toleration, t *v1.Taint) bool {
	return tol.ToleratesTaint(klog.Background(), t, false)
}
