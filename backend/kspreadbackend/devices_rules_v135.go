//go:build !pre134 && pre136

package kspreadbackend

// DeviceTaintRules in 1.34-1.35: resource.k8s.io/v1alpha3, the version whose informer
// scheduler.New gives the ResourceSlice tracker while DRADeviceTaints (1.34) or
// DRADeviceTaintRules (1.35) is on; the tracker then puts each rule's taint on the devices
// it selects, as in a cluster (devices_rules.go reads them).

import (
	resourcealphaapi "k8s.io/api/resource/v1alpha3"
	"k8s.io/apimachinery/pkg/runtime"
)

func init() {
	deviceKinds["DeviceTaintRule"] = objectKind{resourcealphaapi.SchemeGroupVersion.WithResource("devicetaintrules"), false,
		func() runtime.Object { return &resourcealphaapi.DeviceTaintRule{} }}
}
