//go:build !pre136

package kspreadbackend

// DeviceTaintRules in 1.36: resource.k8s.io/v1beta2, the version whose informer v1.36.2's
// scheduler.New gives the ResourceSlice tracker with DRADeviceTaintRules on. That tracker
// takes the rules as v1alpha3 objects and panics on one (kubernetes/kubernetes#139651, fixed
// in v1.36.3): kspread refuses DeviceTaintRules at 1.36 and sends none; a backend input that
// has one reproduces upstream's crash.

import (
	"time"

	resourceapi "k8s.io/api/resource/v1"
	resourcebetaapi "k8s.io/api/resource/v1beta2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func init() {
	deviceKinds["DeviceTaintRule"] = objectKind{resourcebetaapi.SchemeGroupVersion.WithResource("devicetaintrules"), false,
		func() runtime.Object { return &resourcebetaapi.DeviceTaintRule{} }}
}

// listEvictingRules: the NoExecute DeviceTaintRules (devicetaints.go)
func listEvictingRules(t *countingTracker) ([]evictingRule, error) {
	got, err := t.List(deviceKinds["DeviceTaintRule"].gvr, resourcebetaapi.SchemeGroupVersion.WithKind("DeviceTaintRule"), "")
	if err != nil {
		return nil, err
	}
	var out []evictingRule
	for _, r := range got.(*resourcebetaapi.DeviceTaintRuleList).Items {
		if r.Spec.Taint.Effect != resourcebetaapi.DeviceTaintEffectNoExecute {
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
	if r, ok := obj.(*resourcebetaapi.DeviceTaintRule); ok && r.Spec.Taint.TimeAdded == nil {
		r.Spec.Taint.TimeAdded = &metav1.Time{Time: at.Truncate(time.Second)}
	}
}
