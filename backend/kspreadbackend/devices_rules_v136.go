//go:build !pre136

package kspreadbackend

// DeviceTaintRules in 1.36: resource.k8s.io/v1beta2, the version whose informer v1.36.2's
// scheduler.New gives the ResourceSlice tracker with DRADeviceTaintRules on. That tracker
// takes the rules as v1alpha3 objects and panics on one (kubernetes/kubernetes#139651, fixed
// in v1.36.3): kspread refuses DeviceTaintRules at 1.36 and sends none; a backend input that
// has one reproduces upstream's crash (devices_rules.go reads them).

import (
	resourcebetaapi "k8s.io/api/resource/v1beta2"
	"k8s.io/apimachinery/pkg/runtime"
)

func init() {
	deviceKinds["DeviceTaintRule"] = objectKind{resourcebetaapi.SchemeGroupVersion.WithResource("devicetaintrules"), false,
		func() runtime.Object { return &resourcebetaapi.DeviceTaintRule{} }}
}
