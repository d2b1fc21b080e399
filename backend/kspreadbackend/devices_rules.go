//go:build !pre134

package kspreadbackend

// DeviceTaintRules in the version of resource.k8s.io whose informer the build's scheduler.New
// gives the ResourceSlice tracker (devices_rules_v135.go registers v1alpha3's type, 1.34-1.35;
// devices_rules_v136.go v1beta2's, 1.36). What the backend reads of a rule and the timeAdded the
// API server defaults are spelled alike in both versions: it reads and writes them here, for
// either.

import (
	"encoding/json"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// taintRule: what the device taint eviction controller reads of a DeviceTaintRule
type taintRule struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		DeviceSelector *struct {
			Driver *string `json:"driver"`
			Pool   *string `json:"pool"`
			Device *string `json:"device"`
		} `json:"deviceSelector"`
		Taint resourceapi.DeviceTaint `json:"taint"`
	} `json:"spec"`
}

// listEvictingRules: the NoExecute DeviceTaintRules (devicetaints.go)
func listEvictingRules(t *countingTracker) ([]evictingRule, error) {
	k := deviceKinds["DeviceTaintRule"]
	got, err := t.List(k.gvr, k.gvr.GroupVersion().WithKind("DeviceTaintRule"), "")
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(got)
	if err != nil {
		return nil, err
	}
	var out []evictingRule
	for _, obj := range items {
		var r taintRule
		b, err := json.Marshal(obj)
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err != nil {
			return nil, err
		}
		if r.Spec.Taint.Effect != resourceapi.DeviceTaintEffectNoExecute {
			continue
		}
		e := evictingRule{name: r.Metadata.Name, taint: r.Spec.Taint}
		if s := r.Spec.DeviceSelector; s != nil {
			e.selector, e.driver, e.pool, e.device = true, s.Driver, s.Pool, s.Device
		}
		out = append(out, e)
	}
	return out, nil
}

// ruleTimeAdded: a new rule as the API server stores it, its taint's timeAdded defaulted to the
// time (whole seconds) when not given
func ruleTimeAdded(raw json.RawMessage, at time.Time) (json.RawMessage, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if v, found, _ := unstructured.NestedFieldNoCopy(obj, "spec", "taint", "timeAdded"); found && v != nil {
		return raw, nil
	}
	added := metav1.NewTime(at.Truncate(time.Second)).UTC().Format(time.RFC3339)
	if err := unstructured.SetNestedField(obj, added, "spec", "taint", "timeAdded"); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}
