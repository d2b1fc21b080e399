// dra.go: added by kspread's dev/seqoracle-build.sh to the fullcycle driver (next to main.go,
// outcomes.go, steps.go and storage.go; dra.patch calls it). It gives the driver dynamic
// resource allocation (resource.k8s.io/v1, v1.35.4):
//
//   - input `devices`: DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates
//     (Kubernetes manifests), created through the fake API before the nodes, a claim with the
//     uid "<ns>/<name>" and every object with a resourceVersion (the scheduler's claim assume
//     cache parses them and ignores a write that does not raise it); a pod's `resourceClaims`
//     (PodSpec shape). scheduler.New builds the DRA manager from the informers itself
//     (DynamicResourceAllocation is on by default).
//   - the resource claim controller, which the fake API lacks, emulated as kspread's case format
//     describes it: a pod created with a template entry gets the claim `<pod>-<entry>` made from
//     the template (owned by the pod, without the controller's random suffix) and its
//     status.resourceClaimStatuses, in the same write (the driver waits until the scheduler's
//     claim informer holds the claim, so the pod never meets a missing claim); a deleted pod
//     (a step, the taint manager, preemption) leaves the reservedFor of its claims, a claim no
//     pod reserves any more is deallocated (and loses the scheduler's finalizer), and the
//     claims it owns are deleted (the garbage collector), after that deallocation (an
//     update event: the claim's finalizer holds the deletion until the controller is done). Claims nobody reserves at the start
//     stay as written (the controller's resync is not modelled: kspread's case describes a state).
//   - an update of a claim whose status.reservedFor names a uid twice is Invalid (the API
//     server's validation), and one that names an old resourceVersion is a Conflict (the API server's
//     optimistic concurrency, which the fake tracker lacks: two pods of a pod group that share a
//     claim both write it from the copy their PreFilter read);
//   - every write of a claim (DynamicResources' PreBind: the finalizer, then the allocation and
//     reservation; PostFilter's deallocation; Unreserve's patch) is stored with a new
//     resourceVersion in one write, and an allocation written is logged (`allocationLog`: the
//     claim, its devices, the pod it is reserved for, in write order);
//   - output `allocations`: every allocated claim at the end (claim key -> its devices
//     `driver/pool/device`, sorted), `reservedFor` (claim key -> its status.reservedFor in order,
//     `pods/<name>`), and `allocationLog`.
//
// FC_POOL_ORDER (environment, a comma-separated list of ResourceSlice names): seqoracle-build.sh
// patches the allocators (zz_pool_order.go) to take a node's pools in the order of their first
// slice in that list and each pool's slices in list order -- kspread's rule -- where upstream
// takes a Go map's order. seqtest.py sets it only to check whether an order explains a difference.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
)

var (
	claimGVR    = resourceapi.SchemeGroupVersion.WithResource("resourceclaims")
	templateGVR = resourceapi.SchemeGroupVersion.WithResource("resourceclaimtemplates")
	draPodGVR   = v1.SchemeGroupVersion.WithResource("pods")
	claimGVK    = resourceapi.SchemeGroupVersion.WithKind("ResourceClaim")
)

type draAllocation struct {
	Claim   string   `json:"claim"`
	Pod     string   `json:"pod"`
	Devices []string `json:"devices"`
}

var (
	draMu      sync.Mutex
	draLog     []draAllocation
	draEnabled bool
	// podGroupClaim (1.36, set by podgroup136.go): for a pod's template entry that its PodGroup's
	// spec.resourceClaims names alike (DRAWorkloadResourceClaims), the PodGroup's claim name and
	// its controller reference; ok false: the pod's own claim
	podGroupClaim func(pod *v1.Pod, rc v1.PodResourceClaim) (name string, owner metav1.OwnerReference, ok bool)
	// draClaimSeen: the scheduler's claim informer holds the claim (set by createDevices)
	draClaimSeen func(ns, name string) bool
)

func claimKey(ns, name string) string {
	if ns == "default" {
		return name
	}
	return ns + "/" + name
}

func allocatedDevices(c *resourceapi.ResourceClaim) []string {
	var out []string
	if c.Status.Allocation == nil {
		return nil
	}
	for _, r := range c.Status.Allocation.Devices.Results {
		out = append(out, r.Driver+"/"+r.Pool+"/"+r.Device)
	}
	sort.Strings(out)
	return out
}

// storeClaim stores a claim with a new resourceVersion; logs an allocation it gains.
func storeClaim(client *fake.Clientset, c *resourceapi.ResourceClaim) error {
	var before *resourceapi.ResourceClaim
	if obj, err := client.Tracker().Get(claimGVR, c.Namespace, c.Name); err == nil {
		before = obj.(*resourceapi.ResourceClaim)
	}
	c.ResourceVersion = nextRV()
	if err := client.Tracker().Update(claimGVR, c, c.Namespace); err != nil {
		return err
	}
	if c.Status.Allocation != nil && (before == nil || before.Status.Allocation == nil) {
		pod := ""
		if n := len(c.Status.ReservedFor); n > 0 {
			pod = c.Status.ReservedFor[n-1].Name
		}
		draMu.Lock()
		draLog = append(draLog, draAllocation{Claim: claimKey(c.Namespace, c.Name), Pod: pod, Devices: allocatedDevices(c)})
		draMu.Unlock()
	}
	return nil
}

// draReactors: the claims' writes with resourceVersions, and the resource claim controller.
func draReactors(client *fake.Clientset) {
	client.PrependReactor("update", "resourceclaims", func(action clienttesting.Action) (bool, runtime.Object, error) {
		c := action.(clienttesting.UpdateAction).GetObject().(*resourceapi.ResourceClaim).DeepCopy()
		// the API server's optimistic concurrency (the fake tracker has none): an update
		// naming a resourceVersion other than the stored one is a Conflict, as a real
		// server answers two PreBinds that write one claim from the same old copy
		if obj, err := client.Tracker().Get(claimGVR, c.Namespace, c.Name); err == nil && c.ResourceVersion != "" &&
			obj.(*resourceapi.ResourceClaim).ResourceVersion != c.ResourceVersion {
			return true, nil, apierrors.NewConflict(claimGVR.GroupResource(), c.Name,
				fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		}
		// the API server's validation of status.reservedFor: unique uids (validateSet), as a
		// second PreBind reserving a claim for its PodGroup again meets it
		seen := map[types.UID]bool{}
		for i, r := range c.Status.ReservedFor {
			if seen[r.UID] {
				return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaim"},
					c.Name, field.ErrorList{field.Duplicate(field.NewPath("status", "reservedFor").Index(i), r.UID)})
			}
			seen[r.UID] = true
		}
		if err := storeClaim(client, c); err != nil {
			return true, nil, err
		}
		return true, c.DeepCopy(), nil
	})
	client.PrependReactor("patch", "resourceclaims", func(action clienttesting.Action) (bool, runtime.Object, error) {
		// the default reaction applies the patch; stored again with a new resourceVersion (the
		// assume cache drops the first event: its resourceVersion is not newer)
		handled, obj, err := clienttesting.ObjectReaction(client.Tracker())(action)
		if err != nil || obj == nil {
			return handled, obj, err
		}
		c := obj.(*resourceapi.ResourceClaim).DeepCopy()
		if err := storeClaim(client, c); err != nil {
			return true, nil, err
		}
		return true, c.DeepCopy(), nil
	})
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "" || !draEnabled {
			return false, nil, nil
		}
		pod := action.(clienttesting.CreateAction).GetObject().(*v1.Pod)
		must(makeTemplateClaims(client, pod))
		return false, nil, nil // the pod (with its status) is stored by the next reaction
	})
	client.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if !draEnabled {
			return false, nil, nil
		}
		a := action.(clienttesting.DeleteAction)
		obj, err := client.Tracker().Get(draPodGVR, a.GetNamespace(), a.GetName())
		if err != nil {
			return false, nil, nil
		}
		pod := obj.(*v1.Pod)
		if err := client.Tracker().Delete(draPodGVR, a.GetNamespace(), a.GetName()); err != nil {
			return true, nil, err
		}
		must(releaseClaims(client, pod))
		return true, nil, nil
	})
}

// makeTemplateClaims: the controller's claim for each template entry of the pod, and the pod's
// status.resourceClaimStatuses.
func makeTemplateClaims(client *fake.Clientset, pod *v1.Pod) error {
	var made []string
	for _, rc := range pod.Spec.ResourceClaims {
		if rc.ResourceClaimTemplateName == nil {
			continue
		}
		obj, err := client.Tracker().Get(templateGVR, pod.Namespace, *rc.ResourceClaimTemplateName)
		if err != nil {
			return fmt.Errorf("pod %s/%s: %v", pod.Namespace, pod.Name, err)
		}
		t := obj.(*resourceapi.ResourceClaimTemplate)
		name := pod.Name + "-" + rc.Name
		yes := true
		owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
			Controller: &yes, BlockOwnerDeletion: &yes}
		if podGroupClaim != nil {
			if n, o, ok := podGroupClaim(pod, rc); ok {
				// the PodGroup's claim (the controller's syncPodGroup makes it once; kspread's
				// name <podgroup>-<entry>, without the random suffix); the pod's status names it
				name, owner = n, o
				if _, err := client.Tracker().Get(claimGVR, pod.Namespace, name); err == nil {
					claimName := name
					pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses,
						v1.PodResourceClaimStatus{Name: rc.Name, ResourceClaimName: &claimName})
					continue
				}
			}
		}
		if old, err := client.Tracker().Get(claimGVR, pod.Namespace, name); err == nil {
			if c := old.(*resourceapi.ResourceClaim); metav1.IsControlledBy(c, pod) {
				continue
			}
			if err := client.Tracker().Delete(claimGVR, pod.Namespace, name); err != nil {
				return err
			}
		}
		annotations := map[string]string{"resource.kubernetes.io/pod-claim-name": rc.Name}
		for k, v := range t.Spec.ObjectMeta.Annotations {
			annotations[k] = v
		}
		claim := &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pod.Namespace, UID: types.UID(pod.Namespace + "/" + name + "#" + string(owner.UID)),
				ResourceVersion: nextRV(), Labels: t.Spec.ObjectMeta.Labels, Annotations: annotations,
				OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: *t.Spec.Spec.DeepCopy(),
		}
		if err := client.Tracker().Create(claimGVR, claim, pod.Namespace); err != nil {
			return err
		}
		made = append(made, name)
		claimName := name
		pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses,
			v1.PodResourceClaimStatus{Name: rc.Name, ResourceClaimName: &claimName})
	}
	if len(made) > 0 && draClaimSeen != nil {
		waitFor(func() bool {
			for _, n := range made {
				if !draClaimSeen(pod.Namespace, n) {
					return false
				}
			}
			return true
		})
		time.Sleep(2 * time.Millisecond) // the assume cache's event handler after the store
	}
	return nil
}

// releaseClaims: the controller and the garbage collector after a pod's deletion.
func releaseClaims(client *fake.Clientset, pod *v1.Pod) error {
	obj, err := client.Tracker().List(claimGVR, claimGVK, pod.Namespace)
	if err != nil {
		return err
	}
	items := obj.(*resourceapi.ResourceClaimList).Items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	for i := range items {
		c := items[i].DeepCopy()
		owned := metav1.IsControlledBy(c, pod)
		var left []resourceapi.ResourceClaimConsumerReference
		for _, r := range c.Status.ReservedFor {
			if r.UID != pod.UID {
				left = append(left, r)
			}
		}
		if len(left) == len(c.Status.ReservedFor) && !(owned && c.Status.Allocation != nil) {
			if owned {
				if err := client.Tracker().Delete(claimGVR, c.Namespace, c.Name); err != nil {
					return err
				}
			}
			continue
		}
		c.Status.ReservedFor = left
		if len(left) == 0 && c.Status.Allocation != nil {
			c.Status.Allocation = nil
			c.Status.Devices = nil
			var fin []string
			for _, f := range c.Finalizers {
				if f != resourceapi.Finalizer {
					fin = append(fin, f)
				}
			}
			c.Finalizers = fin
		}
		if err := storeClaim(client, c); err != nil {
			return err
		}
		if owned {
			// the garbage collector's deletion waits for the finalizer: the controller
			// deallocates first (an update, which requeues pods), then the claim goes
			if err := client.Tracker().Delete(claimGVR, c.Namespace, c.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// createDevices creates the input's device objects and waits until the informers hold them.
func createDevices(ctx context.Context, client *fake.Clientset, f informers.SharedInformerFactory, raw []byte) {
	var in struct {
		Devices []json.RawMessage `json:"devices"`
	}
	must(json.Unmarshal(raw, &in))
	claims := f.Resource().V1().ResourceClaims().Lister()
	draClaimSeen = func(ns, name string) bool { _, err := claims.ResourceClaims(ns).Get(name); return err == nil }
	if len(in.Devices) == 0 {
		return
	}
	draEnabled = true
	counts := map[string]int{}
	listers := map[string]func() int{
		"DeviceClass": func() int { l, _ := f.Resource().V1().DeviceClasses().Lister().List(labels.Everything()); return len(l) },
		"ResourceSlice": func() int {
			l, _ := f.Resource().V1().ResourceSlices().Lister().List(labels.Everything())
			return len(l)
		},
		"ResourceClaim": func() int { l, _ := claims.List(labels.Everything()); return len(l) },
		"ResourceClaimTemplate": func() int {
			l, _ := f.Resource().V1().ResourceClaimTemplates().Lister().List(labels.Everything())
			return len(l)
		},
	}
	f.Resource().V1().ResourceClaimTemplates().Informer() // no plugin asks for it: made before Start
	f.Resource().V1().DeviceClasses().Informer()
	f.Resource().V1().ResourceSlices().Informer()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	synced := func() bool {
		for k, n := range counts {
			if listers[k]() != n {
				return false
			}
		}
		return true
	}
	for i, r := range in.Devices {
		obj, gvk, err := clientscheme.Codecs.UniversalDeserializer().Decode(r, nil, nil)
		if err != nil {
			must(fmt.Errorf("devices[%d]: %v", i, err))
		}
		acc, err := meta(obj)
		must(err)
		if gvk.Kind == "ResourceClaim" || gvk.Kind == "ResourceClaimTemplate" {
			if acc.GetNamespace() == "" {
				acc.SetNamespace("default")
			}
		}
		if acc.GetUID() == "" {
			uid := acc.GetName()
			if acc.GetNamespace() != "" {
				uid = acc.GetNamespace() + "/" + uid
			}
			acc.SetUID(types.UID(uid))
		}
		acc.SetResourceVersion(nextRV())
		switch x := obj.(type) {
		case *resourceapi.DeviceClass:
			_, err = client.ResourceV1().DeviceClasses().Create(ctx, x, metav1.CreateOptions{})
		case *resourceapi.ResourceSlice:
			_, err = client.ResourceV1().ResourceSlices().Create(ctx, x, metav1.CreateOptions{})
		case *resourceapi.ResourceClaim:
			_, err = client.ResourceV1().ResourceClaims(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		case *resourceapi.ResourceClaimTemplate:
			_, err = client.ResourceV1().ResourceClaimTemplates(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("devices[%d]: kind %s (%s) is not modelled by the driver", i, gvk.Kind, gvk.GroupVersion())
		}
		must(err)
		counts[gvk.Kind]++
		if i%40 == 39 {
			waitFor(synced) // the fake watcher's channel holds 100 events
		}
	}
	waitFor(synced)
}

// draOutput: the allocated claims at the end, and the allocations in write order.
func draOutput(ctx context.Context, client *fake.Clientset, out map[string]any) {
	if !draEnabled {
		return
	}
	l, err := client.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{})
	must(err)
	allocs := map[string][]string{}
	reserved := map[string][]string{}
	for i := range l.Items {
		if d := allocatedDevices(&l.Items[i]); d != nil {
			allocs[claimKey(l.Items[i].Namespace, l.Items[i].Name)] = d
		}
		for _, r := range l.Items[i].Status.ReservedFor {
			k := claimKey(l.Items[i].Namespace, l.Items[i].Name)
			reserved[k] = append(reserved[k], r.Resource+"/"+r.Name)
		}
	}
	out["allocations"] = allocs
	out["reservedFor"] = reserved // each claim's status.reservedFor in order (resource/name)
	draMu.Lock()
	out["allocationLog"] = append([]draAllocation{}, draLog...)
	draMu.Unlock()
}

