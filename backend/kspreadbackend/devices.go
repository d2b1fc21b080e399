//go:build !pre134

package kspreadbackend

// Dynamic resource allocation (resource.k8s.io/v1, the version the scheduler's informers watch
// from 1.34): the case's DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates
// (and DeviceTaintRules in the version the scheduler's ResourceSlice tracker watches:
// devices_rules_v135.go, devices_rules_v136.go), created before the nodes, so that scheduler.New's DRA manager (its informers, the claims' assume
// cache, the allocated-devices tracker) sees them as a cluster's; and the resource claim
// controller the fake API lacks: a pod's template claim is made as <pod>-<name> (the case
// format's name; upstream's controller gives it a generated one) and named in the pod's
// status.resourceClaimStatuses when the pod is created; a deleted pod (a preemption victim) is
// removed from the reservedFor of every claim, and a claim no pod reserves any more is
// deallocated. At the end every claim's allocation is read back.
//
// This file is the whole of it: it registers itself in dra (backend.go) at init. A build for a
// version without resource.k8s.io/v1 leaves the file out: dra stays nil, --info lists no protocol
// "devices" (kspread then skips cases with devices) and a case sent with devices is refused.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

var (
	claimsResource    = resourceapi.SchemeGroupVersion.WithResource("resourceclaims")
	templatesResource = resourceapi.SchemeGroupVersion.WithResource("resourceclaimtemplates")
)

var deviceKinds = map[string]objectKind{
	"DeviceClass": {resourceapi.SchemeGroupVersion.WithResource("deviceclasses"), false,
		func() runtime.Object { return &resourceapi.DeviceClass{} }},
	"ResourceSlice": {resourceapi.SchemeGroupVersion.WithResource("resourceslices"), false,
		func() runtime.Object { return &resourceapi.ResourceSlice{} }},
	"ResourceClaim":         {claimsResource, true, func() runtime.Object { return &resourceapi.ResourceClaim{} }},
	"ResourceClaimTemplate": {templatesResource, true, func() runtime.Object { return &resourceapi.ResourceClaimTemplate{} }},
}

// the annotation the resource claim controller puts on a claim it makes for a pod
const podClaimNameAnnotation = "resource.kubernetes.io/pod-claim-name"

type draEmulation struct {
	// generated: the names given to claims created with a generateName (the extended
	// resources' claim DynamicResources makes)
	generated atomic.Int64
}

func init() {
	dra = &draEmulation{}
	// the claims' assume cache takes an object only when its resourceVersion is newer
	versioned[claimsResource] = true
	admitUpdate = admitClaimUpdate
}

// admitClaimUpdate: what a real API server refuses of a ResourceClaim update and the fake
// tracker stores. An update naming a resourceVersion other than the stored one is a Conflict
// (optimistic concurrency): two pods of a pod group sharing a claim both write it in PreBind
// from the copy their PreFilter read, and the second write must fail, as it fails upstream
// (bindClaim then reads the claim again and finds it allocated elsewhere). A status.reservedFor
// naming a uid twice is Invalid (the validation's unique set): two pods reserving a claim for
// their PodGroup.
func admitClaimUpdate(t *countingTracker, gvr schema.GroupVersionResource, obj runtime.Object, ns string) error {
	c, ok := obj.(*resourceapi.ResourceClaim)
	if gvr != claimsResource || !ok {
		return nil
	}
	if got, err := t.ObjectTracker.Get(gvr, ns, c.Name); err == nil && c.ResourceVersion != "" &&
		got.(*resourceapi.ResourceClaim).ResourceVersion != c.ResourceVersion {
		return apierrors.NewConflict(gvr.GroupResource(), c.Name,
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	seen := map[types.UID]bool{}
	for i, r := range c.Status.ReservedFor {
		if seen[r.UID] {
			return apierrors.NewInvalid(schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaim"}, c.Name,
				field.ErrorList{field.Duplicate(field.NewPath("status", "reservedFor").Index(i), r.UID)})
		}
		seen[r.UID] = true
	}
	return nil
}

// setUp creates the case's device objects (each with its apiVersion resource.k8s.io/v1), and
// makes the API server's naming of a claim created with a generateName (the fake leaves the
// name empty): the generateName and a counter, where the API server appends 5 random characters.
func (d *draEmulation) setUp(client *fake.Clientset, t *countingTracker, objs []json.RawMessage) error {
	client.PrependReactor("create", "resourceclaims", func(action clienttesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(clienttesting.CreateAction)
		if !ok || action.GetSubresource() != "" {
			return false, nil, nil
		}
		claim, ok := create.GetObject().(*resourceapi.ResourceClaim)
		if !ok || (claim.Name != "" && claim.UID != "") {
			return false, nil, nil
		}
		claim = claim.DeepCopy()
		if claim.Name == "" && claim.GenerateName != "" {
			claim.Name = fmt.Sprintf("%sk%04d", claim.GenerateName, d.generated.Add(1))
		}
		if claim.UID == "" {
			claim.UID = types.UID("ResourceClaim/" + action.GetNamespace() + "/" + claim.Name)
		}
		return clienttesting.ObjectReaction(t)(clienttesting.NewCreateAction(claimsResource, action.GetNamespace(), claim))
	})
	rules, rulesSeen := false, false
	for i, raw := range objs {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return fmt.Errorf("devices[%d]: %w", i, err)
		}
		k, ok := deviceKinds[head.Kind]
		if !ok {
			return fmt.Errorf("devices[%d]: kind %q is none of DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate, DeviceTaintRule", i, head.Kind)
		}
		if gv := k.gvr.GroupVersion().String(); head.APIVersion != gv {
			return fmt.Errorf("devices[%d] (%s): apiVersion %q, not %s (the version this backend's scheduler reads)",
				i, head.Kind, head.APIVersion, gv)
		}
		if head.Kind == "DeviceTaintRule" {
			rules = true
		} else if head.Kind == "ResourceSlice" && rules && !rulesSeen {
			// the tracker has every rule and class before its first slice (kspread's model: a
			// slice whose patch fails, a rule naming a class whose selector does not compile, is
			// never in the scheduler's view; a slice synced before would keep its untainted copy)
			if err := waitUntil(time.Now().Add(30*time.Second), "the informers (DeviceTaintRules)", t.c.quiet); err != nil {
				return fmt.Errorf("devices[%d]: %w (%s)", i, err, t.c.pending())
			}
			rulesSeen = true
		}
		obj, m, ns, err := k.decode("devices", i, head.Kind, raw)
		if err != nil {
			return err
		}
		if err := t.Create(k.gvr, obj, ns); err != nil {
			return fmt.Errorf("devices[%d] (%s %s): %w", i, head.Kind, m.GetName(), err)
		}
	}
	return nil
}

// podGroupClaim (nil, or set by podgroups_v136.go): the claim a pod's template entry resolves
// to when its PodGroup lists the same entry (name and template) in spec.resourceClaims: the
// PodGroup's claim <podgroup>-<name>, owned by the PodGroup (the resource claim controller's
// handlePodGroupClaim; upstream's name has five random characters appended).
var podGroupClaim func(t *countingTracker, p *v1.Pod, pc v1.PodResourceClaim) (string, metav1.OwnerReference, bool)

// podCreating: the resource claim controller's part for a pod about to be created. For each of
// its claims from a template: the claim <pod>-<name>, unless one exists (the case wrote it), made
// from the template and owned by the pod; the pod's status names it.
func (d *draEmulation) podCreating(t *countingTracker, p *v1.Pod) error {
	for _, pc := range p.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName == nil {
			continue
		}
		name := p.Name + "-" + pc.Name
		yes := true
		owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
			Controller: &yes, BlockOwnerDeletion: &yes}
		if podGroupClaim != nil {
			if n, o, ok := podGroupClaim(t, p, pc); ok {
				name, owner = n, o // the claim of the pod's PodGroup (DRAWorkloadResourceClaims)
			}
		}
		if _, err := t.Get(claimsResource, p.Namespace, name); err != nil {
			got, err := t.Get(templatesResource, p.Namespace, *pc.ResourceClaimTemplateName)
			if err != nil {
				return fmt.Errorf("pod %s: resourceClaims %s: ResourceClaimTemplate %q: %w",
					podKey(p.Namespace, p.Name), pc.Name, *pc.ResourceClaimTemplateName, err)
			}
			tmpl := got.(*resourceapi.ResourceClaimTemplate)
			claim := &resourceapi.ResourceClaim{Spec: *tmpl.Spec.Spec.DeepCopy()}
			claim.Name, claim.Namespace = name, p.Namespace
			claim.UID = types.UID("ResourceClaim/" + p.Namespace + "/" + name)
			claim.Labels = tmpl.Spec.Labels
			claim.Annotations = map[string]string{podClaimNameAnnotation: pc.Name}
			for k, v := range tmpl.Spec.Annotations {
				claim.Annotations[k] = v
			}
			claim.OwnerReferences = []metav1.OwnerReference{owner}
			if err := t.Create(claimsResource, claim, p.Namespace); err != nil {
				return fmt.Errorf("pod %s: creating its claim %s: %w", podKey(p.Namespace, p.Name), name, err)
			}
		}
		claimName := name
		p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses,
			v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: &claimName})
	}
	return nil
}

// podDeleted: the resource claim controller's part once a pod is gone: it leaves the reservedFor
// of every claim in its namespace, and a claim no pod reserves any more is deallocated.
func (d *draEmulation) podDeleted(t *countingTracker, ns, name string, uid types.UID) error {
	got, err := t.List(claimsResource, resourceapi.SchemeGroupVersion.WithKind("ResourceClaim"), ns)
	if err != nil {
		return err
	}
	for i := range got.(*resourceapi.ResourceClaimList).Items {
		claim := &got.(*resourceapi.ResourceClaimList).Items[i]
		kept := []resourceapi.ResourceClaimConsumerReference{}
		for _, r := range claim.Status.ReservedFor {
			if !(r.Resource == "pods" && r.APIGroup == "" && r.Name == name && (uid == "" || r.UID == uid)) {
				kept = append(kept, r)
			}
		}
		if len(kept) == len(claim.Status.ReservedFor) {
			continue
		}
		claim = claim.DeepCopy()
		claim.Status.ReservedFor = kept
		if len(kept) == 0 {
			claim.Status.ReservedFor = nil
			claim.Status.Allocation = nil
		}
		if err := t.Update(claimsResource, claim, ns); err != nil {
			return fmt.Errorf("releasing claim %s of deleted pod %s: %w", podKey(ns, claim.Name), podKey(ns, name), err)
		}
	}
	return nil
}

// allocations: every claim's allocated devices (driver/pool/device, sorted), nil when it is not
// allocated; a claim created with a generateName by its generateName without the final "-"
// (kspread's name for the extended resources' claim, <pod>-extended-resources).
func (d *draEmulation) allocations(t *countingTracker) (map[string]any, error) {
	got, err := t.List(claimsResource, resourceapi.SchemeGroupVersion.WithKind("ResourceClaim"), "")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, c := range got.(*resourceapi.ResourceClaimList).Items {
		name := c.Name
		if c.GenerateName != "" {
			name = strings.TrimSuffix(c.GenerateName, "-")
		}
		if c.Status.Allocation == nil {
			out[podKey(c.Namespace, name)] = nil
			continue
		}
		devs := []string{}
		for _, r := range c.Status.Allocation.Devices.Results {
			devs = append(devs, r.Driver+"/"+r.Pool+"/"+r.Device)
		}
		sort.Strings(devs)
		out[podKey(c.Namespace, name)] = devs
	}
	return out, nil
}
