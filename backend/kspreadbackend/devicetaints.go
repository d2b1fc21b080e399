//go:build !pre134

package kspreadbackend

// The device taint eviction controller (pkg/controller/devicetainteviction, which
// kube-controller-manager runs while DynamicResourceAllocation and DRADeviceTaints are on) on the
// sequence's clock, and the device steps (addDeviceTaintRule, deleteDeviceTaintRule,
// setDeviceConditions), for a sequence with steps (steps.go calls it where the taint manager acts:
// docs/reference/backends.md, Steps).
//
// The controller: a bound pod is evicted once the earliest eviction time of its claims (allocated,
// reserved for it: by UID, a template's claim owned by it) has come. A claim's eviction time is the
// earliest, over the NoExecute taints of its allocated devices that a result's NoExecute
// toleration without tolerationSeconds does not tolerate for ever, of the taint's timeAdded plus
// the least tolerationSeconds of the result's NoExecute tolerations that tolerate it (0 without
// one; a negative count is 0). The taints: in 1.34 those of the slices as its own ResourceSlice
// tracker patches them (every DeviceTaintRule's taint applied: the scheduler's tracker, the same
// code, stands for it); from 1.35 the slices' own, from the API, and the NoExecute rules (with
// DRADeviceTaintRules) whose deviceSelector names the device's driver, pool and device (a rule
// without a deviceSelector matches none). A device is looked up in its pool's slices of the
// highest generation. The eviction: the condition DisruptionTarget (reason
// DeletionByDeviceTaintManager) written into the pod's status, then the pod deleted (from 1.35 a
// pod already terminating is left alone); the resource claim controller then releases its claims
// as for any deleted pod (devices.go), and a ReplicaSet's pod is replaced (steps.go).
//
// The API server sets a taint's timeAdded when the object is created (SetDefaults_DeviceTaint,
// whole seconds), which the fake API does not: a taint without one is taken as added at the
// sequence's start, when the case's objects are created; a step's rule, and the slices of a node
// an addNode step adds (published by the step: publish), are written with the step's time. A DeviceTaintRule's status (EvictionInProgress), which the controller keeps and
// no scheduler reads, is not written.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
)

var slicesResource = resourceapi.SchemeGroupVersion.WithResource("resourceslices")

// evictingRule: a NoExecute DeviceTaintRule as the 1.35 controller reads it
type evictingRule struct {
	name                 string
	selector             bool // a deviceSelector is given
	driver, pool, device *string
	taint                resourceapi.DeviceTaint
}

type deviceTaintController struct {
	t *timeline
	// rules: the controller matches the NoExecute DeviceTaintRules itself (1.35 and later, with
	// DRADeviceTaintRules)
	rules bool
}

func init() {
	deviceTaintEviction = func(t *timeline) deviceEvictor {
		return &deviceTaintController{t: t, rules: !dteTrackerSlices && gateOn("DRADeviceTaintRules")}
	}
}

// running: the controller runs (kube-controller-manager starts it with these gates on)
func (c *deviceTaintController) running() bool {
	return gateOn("DynamicResourceAllocation") && gateOn("DRADeviceTaints")
}

// deviceKey: driver/pool/device
type deviceKey struct{ driver, pool, device string }

// taintedDevices: each device's NoExecute taints, from its pool's slices of the highest generation
// (the first such slice naming the device)
func (c *deviceTaintController) taintedDevices() (map[deviceKey][]resourceapi.DeviceTaint, error) {
	var list []*resourceapi.ResourceSlice
	if dteTrackerSlices {
		for _, fw := range c.t.sched.Profiles {
			got, err := fw.SharedDRAManager().ResourceSlices().ListWithDeviceTaintRules()
			if err != nil {
				return nil, err
			}
			list = got
			break // every profile shares the one DRA manager
		}
	} else {
		got, err := c.t.tracker.List(slicesResource, resourceapi.SchemeGroupVersion.WithKind("ResourceSlice"), "")
		if err != nil {
			return nil, err
		}
		for i := range got.(*resourceapi.ResourceSliceList).Items {
			list = append(list, &got.(*resourceapi.ResourceSliceList).Items[i])
		}
	}
	newest := map[[2]string]int64{}
	for _, s := range list {
		k := [2]string{s.Spec.Driver, s.Spec.Pool.Name}
		if g, ok := newest[k]; !ok || s.Spec.Pool.Generation > g {
			newest[k] = s.Spec.Pool.Generation
		}
	}
	out := map[deviceKey][]resourceapi.DeviceTaint{}
	for _, s := range list {
		if s.Spec.Pool.Generation != newest[[2]string{s.Spec.Driver, s.Spec.Pool.Name}] {
			continue
		}
		for _, d := range s.Spec.Devices {
			k := deviceKey{s.Spec.Driver, s.Spec.Pool.Name, d.Name}
			if _, seen := out[k]; seen {
				continue
			}
			taints := []resourceapi.DeviceTaint{}
			for _, tt := range d.Taints {
				if tt.Effect == resourceapi.DeviceTaintEffectNoExecute {
					taints = append(taints, tt)
				}
			}
			out[k] = taints
		}
	}
	return out, nil
}

// claimEviction: when the claim's pods are to be evicted; false when never
func (c *deviceTaintController) claimEviction(claim *resourceapi.ResourceClaim, devices map[deviceKey][]resourceapi.DeviceTaint,
	rules []evictingRule) (time.Time, bool) {
	var when time.Time
	found := false
	for _, r := range claim.Status.Allocation.Devices.Results {
		taints := append([]resourceapi.DeviceTaint{}, devices[deviceKey{r.Driver, r.Pool, r.Device}]...)
		for _, rule := range rules {
			if rule.selector && (rule.driver == nil || *rule.driver == r.Driver) &&
				(rule.pool == nil || *rule.pool == r.Pool) && (rule.device == nil || *rule.device == r.Device) {
				taints = append(taints, rule.taint)
			}
		}
	taint:
		for _, tt := range taints {
			at := c.t.epoch // timeAdded as the API server defaults it for the case's objects
			if tt.TimeAdded != nil {
				at = tt.TimeAdded.Time
			}
			least := int64(math.MaxInt64)
			tolerated := false
			for _, tol := range r.Tolerations {
				if tol.Effect != resourceapi.DeviceTaintEffectNoExecute || !resourceclaim.ToleratesTaint(tol, tt) {
					continue
				}
				if tol.TolerationSeconds == nil {
					continue taint // tolerated for ever
				}
				s := max(*tol.TolerationSeconds, 0)
				least = min(least, s)
				tolerated = true
			}
			if tolerated {
				at = at.Add(time.Duration(least) * time.Second)
			}
			if !found || at.Before(when) {
				when, found = at, true
			}
		}
	}
	return when, found
}

// podEviction: when the pod is to be evicted; false when never (not bound, or no claim of its
// allocated and reserved for it with an eviction time)
func (c *deviceTaintController) podEviction(p *v1.Pod, devices map[deviceKey][]resourceapi.DeviceTaint,
	rules []evictingRule) (time.Time, bool, error) {
	var when time.Time
	found := false
	if p.Spec.NodeName == "" {
		return when, false, nil
	}
	for i := range p.Spec.ResourceClaims {
		name, mustCheckOwner, err := resourceclaim.Name(p, &p.Spec.ResourceClaims[i])
		if err != nil || name == nil {
			continue
		}
		got, err := c.t.tracker.Get(claimsResource, p.Namespace, *name)
		if err != nil {
			continue
		}
		claim := got.(*resourceapi.ResourceClaim)
		if claim.Status.Allocation == nil {
			continue
		}
		if mustCheckOwner && !ownedBy(claim, p) {
			continue
		}
		reserved := false
		for _, r := range claim.Status.ReservedFor {
			if r.APIGroup == "" && r.Resource == "pods" && r.UID == p.UID {
				reserved = true
			}
		}
		if !reserved {
			continue
		}
		if at, ok := c.claimEviction(claim, devices, rules); ok && (!found || at.Before(when)) {
			when, found = at, true
		}
	}
	return when, found, nil
}

func ownedBy(claim *resourceapi.ResourceClaim, p *v1.Pod) bool {
	ref := metav1.GetControllerOf(claim)
	return ref != nil && ref.APIVersion == "v1" && ref.Kind == "Pod" && ref.UID == p.UID
}

// due: the bound pods whose eviction time has come (by the sequence clock's second), in case
// order, each with the second it came at
func (c *deviceTaintController) due(ctx context.Context) ([]deviceDue, error) {
	if !c.running() {
		return nil, nil
	}
	devices, err := c.taintedDevices()
	if err != nil {
		return nil, err
	}
	var rules []evictingRule
	if c.rules {
		if rules, err = listEvictingRules(c.t.tracker); err != nil {
			return nil, err
		}
	}
	c.t.mu.Lock()
	order := append([]string{}, c.t.order...)
	now := c.t.epoch.Add(time.Duration(c.t.now) * time.Second)
	c.t.mu.Unlock()
	done := map[string]bool{}
	var out []deviceDue
	for _, k := range order {
		if done[k] {
			continue
		}
		done[k] = true
		p := c.t.getPod(ctx, k)
		if p == nil {
			continue
		}
		at, ok, err := c.podEviction(p, devices, rules)
		if err != nil {
			return nil, err
		}
		if !ok || at.After(now) {
			continue
		}
		if p.DeletionTimestamp != nil && dteSkipsTerminating {
			continue
		}
		// (whole seconds: timeAdded has no finer resolution, the epoch is a second's start)
		out = append(out, deviceDue{int64(at.Sub(c.t.epoch) / time.Second), k})
	}
	return out, nil
}

// evict: addConditionAndDeletePod: the DisruptionTarget condition, then the deletion
func (c *deviceTaintController) evict(ctx context.Context, p *v1.Pod) error {
	cond := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "DeletionByDeviceTaintManager",
		Message: "Device Taint manager: deleting due to NoExecute taint"}
	i := -1
	for j, x := range p.Status.Conditions {
		if x.Type == cond.Type {
			i = j
		}
	}
	if i < 0 || p.Status.Conditions[i].Status != cond.Status || p.Status.Conditions[i].Reason != cond.Reason ||
		p.Status.Conditions[i].Message != cond.Message {
		p = p.DeepCopy()
		cond.LastTransitionTime = metav1.NewTime(c.t.epoch.Add(time.Duration(c.t.now) * time.Second))
		if i < 0 {
			p.Status.Conditions = append(p.Status.Conditions, cond)
		} else {
			p.Status.Conditions[i] = cond
		}
		p.ResourceVersion = c.t.nextRV()
		if err := c.t.tracker.Update(podsResource, p, p.Namespace); err != nil {
			return fmt.Errorf("the DisruptionTarget condition of pod %s: %w", podKey(p.Namespace, p.Name), err)
		}
	}
	return c.t.evict(ctx, p)
}

// applyStep: addDeviceTaintRule (the rule created, its timeAdded the step's second),
// deleteDeviceTaintRule, setDeviceConditions; false for another kind
func (c *deviceTaintController) applyStep(ctx context.Context, st inStep) (bool, error) {
	switch st.Kind {
	case "addDeviceTaintRule":
		k, ok := deviceKinds["DeviceTaintRule"]
		if !ok || len(st.Rule) == 0 {
			return true, fmt.Errorf("no DeviceTaintRule given, or this backend takes none")
		}
		raw, err := ruleTimeAdded(st.Rule, c.t.epoch.Add(time.Duration(c.t.now)*time.Second))
		if err != nil {
			return true, fmt.Errorf("the DeviceTaintRule: %w", err)
		}
		obj, m, _, err := k.decode("steps", 0, "DeviceTaintRule", raw)
		if err != nil {
			return true, err
		}
		if err := c.t.tracker.Create(k.gvr, obj, ""); err != nil {
			return true, fmt.Errorf("DeviceTaintRule %s: %w", m.GetName(), err)
		}
	case "deleteDeviceTaintRule":
		k, ok := deviceKinds["DeviceTaintRule"]
		if !ok {
			return true, fmt.Errorf("this backend takes no DeviceTaintRule")
		}
		if err := c.t.tracker.Delete(k.gvr, "", st.Name); err != nil {
			return true, fmt.Errorf("DeviceTaintRule %s: %w", st.Name, err)
		}
	case "setDeviceConditions":
		return true, c.setConditions(st)
	default:
		return false, nil
	}
	return true, c.t.quiet("the DeviceTaintRule's informers")
}

// publish: a node's driver publishes its ResourceSlices once the node is there (the addNode step:
// steps.go); the API server sets each taint's timeAdded that has none to the step's second. A slice
// of that name already there (the node's before it was deleted; upstream's garbage collector
// deletes a node's slices with it) is deleted first.
func (c *deviceTaintController) publish(ctx context.Context, slices []json.RawMessage) error {
	k := deviceKinds["ResourceSlice"]
	at := metav1.NewTime(c.t.epoch.Add(time.Duration(c.t.now) * time.Second))
	for i, raw := range slices {
		obj, m, _, err := k.decode("devices", i, "ResourceSlice", raw)
		if err != nil {
			return err
		}
		s := obj.(*resourceapi.ResourceSlice)
		for j := range s.Spec.Devices {
			for l := range s.Spec.Devices[j].Taints {
				if s.Spec.Devices[j].Taints[l].TimeAdded == nil {
					s.Spec.Devices[j].Taints[l].TimeAdded = &at
				}
			}
		}
		if _, err := c.t.tracker.Get(k.gvr, "", m.GetName()); err == nil {
			if err := c.t.tracker.Delete(k.gvr, "", m.GetName()); err != nil {
				return fmt.Errorf("ResourceSlice %s: %w", m.GetName(), err)
			}
		}
		if err := c.t.tracker.Create(k.gvr, obj, ""); err != nil {
			return fmt.Errorf("ResourceSlice %s: %w", m.GetName(), err)
		}
	}
	return nil
}

// setConditions: a driver writes conditions of an allocated device into its claim's
// status.devices (a condition of the same type replaced, the others kept)
func (c *deviceTaintController) setConditions(st inStep) error {
	ns, name := splitKey(st.Claim)
	got, err := c.t.tracker.Get(claimsResource, ns, name)
	if err != nil {
		return fmt.Errorf("ResourceClaim %s: %w", st.Claim, err)
	}
	claim := got.(*resourceapi.ResourceClaim).DeepCopy()
	parts := strings.Split(st.Device, "/")
	if len(parts) != 3 || claim.Status.Allocation == nil {
		return fmt.Errorf("ResourceClaim %s has no allocated device %q", st.Claim, st.Device)
	}
	allocated := false
	for _, r := range claim.Status.Allocation.Devices.Results {
		allocated = allocated || (r.Driver == parts[0] && r.Pool == parts[1] && r.Device == parts[2])
	}
	if !allocated {
		return fmt.Errorf("ResourceClaim %s has no allocated device %q", st.Claim, st.Device)
	}
	i := -1
	for j, d := range claim.Status.Devices {
		if d.Driver == parts[0] && d.Pool == parts[1] && d.Device == parts[2] {
			i = j
		}
	}
	if i < 0 {
		claim.Status.Devices = append(claim.Status.Devices,
			resourceapi.AllocatedDeviceStatus{Driver: parts[0], Pool: parts[1], Device: parts[2]})
		i = len(claim.Status.Devices) - 1
	}
	at := metav1.NewTime(c.t.epoch.Add(time.Duration(c.t.now) * time.Second))
	for _, x := range st.Conditions {
		x.LastTransitionTime = at
		x.ObservedGeneration = claim.Generation
		replaced := false
		for j := range claim.Status.Devices[i].Conditions {
			if claim.Status.Devices[i].Conditions[j].Type == x.Type {
				claim.Status.Devices[i].Conditions[j] = x
				replaced = true
			}
		}
		if !replaced {
			claim.Status.Devices[i].Conditions = append(claim.Status.Devices[i].Conditions, x)
		}
	}
	if err := c.t.tracker.Update(claimsResource, claim, ns); err != nil {
		return fmt.Errorf("ResourceClaim %s: %w", st.Claim, err)
	}
	return nil
}
