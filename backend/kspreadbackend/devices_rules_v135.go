//go:build !pre134 && pre136

package kspreadbackend

// DeviceTaintRules in 1.34-1.35: resource.k8s.io/v1alpha3, the version whose informer
// scheduler.New gives the ResourceSlice tracker while DRADeviceTaints (1.34) or
// DRADeviceTaintRules (1.35) is on; the tracker then puts each rule's taint on the devices
// it selects, as in a cluster.

import (
	"time"

	resourceapi "k8s.io/api/resource/v1"
	resourcealphaapi "k8s.io/api/resource/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func init() {
	deviceKinds["DeviceTaintRule"] = objectKind{resourcealphaapi.SchemeGroupVersion.WithResource("devicetaintrules"), false,
		func() runtime.Object { return &resourcealphaapi.DeviceTaintRule{} }}
}

// listEvictingRules: the NoExecute DeviceTaintRules (devicetaints.go)
func listEvictingRules(t *countingTracker) ([]evictingRule, error) {
	got, err := t.List(deviceKinds["DeviceTaintRule"].gvr, resourcealphaapi.SchemeGroupVersion.WithKind("DeviceTaintRule"), "")
	if err != nil {
		return nil, err
	}
	var out []evictingRule
	for _, r := range got.(*resourcealphaapi.DeviceTaintRuleList).Items {
		if r.Spec.Taint.Effect != resourcealphaapi.DeviceTaintEffectNoExecute {
			continue
		}
		e := evictingRule{name: r.Name, taint: resourceapi.DeviceTaint{Key: r.Spec.Taint.Key, Value: r.Spec.Taint.Value,
			Effect: resourceapi.DeviceTaintEffect(r.Spec.Taint.Effect), TimeAdded: r.Spec.Taint.TimeAdded}}
		if s := r.Spec.DeviceSelector; s != nil {
			e.selector, e.driver, e.pool, e.device = true, s.Driver, s.Pool, s.Device
		}
		out = append(out, e)
	}
	return out, nil
}

// setRuleTimeAdded: the API server's default of a new rule's taint's timeAdded
func setRuleTimeAdded(obj runtime.Object, at time.Time) {
	if r, ok := obj.(*resourcealphaapi.DeviceTaintRule); ok && r.Spec.Taint.TimeAdded == nil {
		r.Spec.Taint.TimeAdded = &metav1.Time{Time: at.Truncate(time.Second)}
	}
}
