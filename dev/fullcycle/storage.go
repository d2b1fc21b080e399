// storage.go: added by kspread's dev/seqoracle-build.sh to the fullcycle driver (next to main.go,
// outcomes.go and steps.go; storage.patch calls it). It gives the driver storage:
//
//   - input `storage`: PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes,
//     CSIDrivers, CSIStorageCapacities (Kubernetes manifests), created through the fake API before
//     the nodes, each with a uid and a resourceVersion (VolumeBinding's assume caches parse
//     resourceVersions and its checkBindings wants the claim's uid in the volume's claimRef);
//     a pod's `volumes` (PodSpec shape);
//   - the PV controller and an external provisioner, which the fake API lacks, emulated as
//     kspread's case format describes them (CASE-FORMAT, Storage): when VolumeBinding's PreBind
//     writes a volume's claimRef, the volume is Bound and its claim gets volumeName,
//     bind-completed and phase Bound; when it writes a claim's selected-node annotation, a
//     volume is created for the claim with node affinity on the selected node's values of the
//     topology keys the class's CSI driver reports in the node's CSINode (else the keys of the
//     class's allowedTopologies; else the hostname), and both are bound. Nothing else is bound
//     (an unbound claim of an Immediate class stays unbound). CSIStorageCapacities stay as
//     written. Every write gets a new resourceVersion;
//   - waitBound: after a cycle, the driver waits until the cycle's pod is no longer assumed (its
//     binding, PreBind's wait for the controller included, finished or failed), so that each
//     cycle's outcome is observed once its binding settled.
//
// seqoracle-build.sh also shortens PreBind's poll (binder.go's BindPodVolumes checks the claims
// every second) to 10 ms: the controller here completes a binding within the write that asks for
// it, and a second per pod would only slow the runs down.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/scheduler"
)

const (
	annSelectedNode      = "volume.kubernetes.io/selected-node"
	annBindCompleted     = "pv.kubernetes.io/bind-completed"
	annBoundByController = "pv.kubernetes.io/bound-by-controller"
	annProvisionedBy     = "pv.kubernetes.io/provisioned-by"
)

var storageRV int64 = 1000000 // resourceVersions of storage objects (their own counter)

func nextRV() string { return strconv.FormatInt(atomic.AddInt64(&storageRV, 1), 10) }

var (
	pvGVR      = v1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcGVR     = v1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	nodeGVR    = v1.SchemeGroupVersion.WithResource("nodes")
	classGVR   = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	csiNodeGVR = storagev1.SchemeGroupVersion.WithResource("csinodes")
)

// storageReactors installs the emulated PV controller and provisioner: the reactions to the
// scheduler's updates of volumes and claims.
func storageReactors(client *fake.Clientset) {
	client.PrependReactor("update", "persistentvolumes", func(action clienttesting.Action) (bool, runtime.Object, error) {
		pv := action.(clienttesting.UpdateAction).GetObject().(*v1.PersistentVolume).DeepCopy()
		pv.ResourceVersion = nextRV()
		if err := client.Tracker().Update(pvGVR, pv, ""); err != nil {
			return true, nil, err
		}
		ret := pv.DeepCopy()
		if ref := pv.Spec.ClaimRef; ref != nil && pv.Status.Phase != v1.VolumeBound {
			obj, err := client.Tracker().Get(pvcGVR, ref.Namespace, ref.Name)
			if err != nil {
				return true, ret, nil // no such claim: the controller would release the volume later
			}
			claim := obj.(*v1.PersistentVolumeClaim).DeepCopy()
			if claim.Spec.VolumeName == "" {
				bindBoth(client, pv, claim)
			}
		}
		return true, ret, nil
	})
	client.PrependReactor("update", "persistentvolumeclaims", func(action clienttesting.Action) (bool, runtime.Object, error) {
		claim := action.(clienttesting.UpdateAction).GetObject().(*v1.PersistentVolumeClaim).DeepCopy()
		claim.ResourceVersion = nextRV()
		if err := client.Tracker().Update(pvcGVR, claim, claim.Namespace); err != nil {
			return true, nil, err
		}
		ret := claim.DeepCopy()
		if node := claim.Annotations[annSelectedNode]; node != "" && claim.Spec.VolumeName == "" {
			if err := provision(client, claim.DeepCopy(), node); err != nil {
				must(fmt.Errorf("provisioning %s/%s: %v", claim.Namespace, claim.Name, err))
			}
		}
		return true, ret, nil
	})
}

// bindBoth: the PV controller binds a volume whose claimRef names the claim: the volume's phase
// Bound, the claim's volumeName, bind-completed (and bound-by-controller) and phase Bound.
func bindBoth(client *fake.Clientset, pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) {
	pv = pv.DeepCopy()
	pv.Status.Phase = v1.VolumeBound
	pv.ResourceVersion = nextRV()
	must(client.Tracker().Update(pvGVR, pv, ""))
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Spec.VolumeName = pv.Name
	claim.Annotations[annBindCompleted] = "yes"
	claim.Annotations[annBoundByController] = "yes"
	claim.Status.Phase = v1.ClaimBound
	claim.Status.AccessModes = pv.Spec.AccessModes
	claim.Status.Capacity = pv.Spec.Capacity
	claim.ResourceVersion = nextRV()
	must(client.Tracker().Update(pvcGVR, claim, claim.Namespace))
}

// provision: an external provisioner creates a volume for the claim on the selected node, and the
// PV controller binds the two.
func provision(client *fake.Clientset, claim *v1.PersistentVolumeClaim, nodeName string) error {
	className := ""
	if claim.Spec.StorageClassName != nil {
		className = *claim.Spec.StorageClassName
	}
	obj, err := client.Tracker().Get(classGVR, "", className)
	if err != nil {
		return err
	}
	class := obj.(*storagev1.StorageClass)
	obj, err = client.Tracker().Get(nodeGVR, "", nodeName)
	if err != nil {
		return err
	}
	node := obj.(*v1.Node)
	var keys []string
	if obj, err := client.Tracker().Get(csiNodeGVR, "", nodeName); err == nil {
		for _, d := range obj.(*storagev1.CSINode).Spec.Drivers {
			if d.Name == class.Provisioner && len(d.TopologyKeys) > 0 {
				keys = d.TopologyKeys
			}
		}
	}
	if keys == nil {
		seen := map[string]bool{}
		for _, term := range class.AllowedTopologies {
			for _, e := range term.MatchLabelExpressions {
				if !seen[e.Key] {
					seen[e.Key] = true
					keys = append(keys, e.Key)
				}
			}
		}
	}
	if keys == nil {
		keys = []string{v1.LabelHostname}
	}
	var reqs []v1.NodeSelectorRequirement
	for _, k := range keys {
		if v, ok := node.Labels[k]; ok {
			reqs = append(reqs, v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{v}})
		}
	}
	name := "pvc-" + claim.Namespace + "-" + claim.Name
	size := claim.Spec.Resources.Requests[v1.ResourceStorage]
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("pv/" + name), ResourceVersion: nextRV(),
			Annotations: map[string]string{annProvisionedBy: class.Provisioner, annBoundByController: "yes"}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: size.DeepCopy()},
			AccessModes:      claim.Spec.AccessModes,
			VolumeMode:       claim.Spec.VolumeMode,
			StorageClassName: className,
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace,
				Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	if !strings.HasPrefix(class.Provisioner, "kubernetes.io/") {
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: class.Provisioner, VolumeHandle: name}
	} else {
		pv.Spec.HostPath = &v1.HostPathVolumeSource{Path: "/provisioned/" + name}
	}
	if len(reqs) > 0 {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}}}}
	}
	if err := client.Tracker().Create(pvGVR, pv, ""); err != nil {
		return err
	}
	bindBoth(client, pv, claim)
	return nil
}

// createStorage creates the input's storage objects (each with a uid and a resourceVersion) and
// waits until the scheduler's informers hold them all.
func createStorage(ctx context.Context, client *fake.Clientset, f informers.SharedInformerFactory, raw []byte) {
	var in struct {
		Storage []json.RawMessage `json:"storage"`
	}
	must(json.Unmarshal(raw, &in))
	if len(in.Storage) == 0 {
		return
	}
	counts := map[string]int{}
	listers := map[string]func() int{
		"PersistentVolume": func() int { l, _ := f.Core().V1().PersistentVolumes().Lister().List(labels.Everything()); return len(l) },
		"PersistentVolumeClaim": func() int {
			l, _ := f.Core().V1().PersistentVolumeClaims().Lister().List(labels.Everything())
			return len(l)
		},
		"StorageClass": func() int { l, _ := f.Storage().V1().StorageClasses().Lister().List(labels.Everything()); return len(l) },
		"CSINode":      func() int { l, _ := f.Storage().V1().CSINodes().Lister().List(labels.Everything()); return len(l) },
		"CSIDriver":    func() int { l, _ := f.Storage().V1().CSIDrivers().Lister().List(labels.Everything()); return len(l) },
		"CSIStorageCapacity": func() int {
			l, _ := f.Storage().V1().CSIStorageCapacities().Lister().List(labels.Everything())
			return len(l)
		},
	}
	f.Start(ctx.Done()) // informers no plugin asked for (none, with the default profile)
	f.WaitForCacheSync(ctx.Done())
	synced := func() bool {
		for k, n := range counts {
			if listers[k]() != n {
				return false
			}
		}
		return true
	}
	for i, r := range in.Storage {
		obj, gvk, err := clientscheme.Codecs.UniversalDeserializer().Decode(r, nil, nil)
		if err != nil {
			must(fmt.Errorf("storage[%d]: %v", i, err))
		}
		acc, err := meta(obj)
		must(err)
		if acc.GetUID() == "" {
			acc.SetUID(types.UID(strings.ToLower(gvk.Kind) + "/" + acc.GetNamespace() + "/" + acc.GetName()))
		}
		acc.SetResourceVersion(nextRV())
		switch x := obj.(type) {
		case *v1.PersistentVolume:
			_, err = client.CoreV1().PersistentVolumes().Create(ctx, x, metav1.CreateOptions{})
		case *v1.PersistentVolumeClaim:
			_, err = client.CoreV1().PersistentVolumeClaims(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		case *storagev1.StorageClass:
			_, err = client.StorageV1().StorageClasses().Create(ctx, x, metav1.CreateOptions{})
		case *storagev1.CSINode:
			_, err = client.StorageV1().CSINodes().Create(ctx, x, metav1.CreateOptions{})
		case *storagev1.CSIDriver:
			_, err = client.StorageV1().CSIDrivers().Create(ctx, x, metav1.CreateOptions{})
		case *storagev1.CSIStorageCapacity:
			_, err = client.StorageV1().CSIStorageCapacities(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("storage[%d]: kind %s is not modelled by the driver", i, gvk.Kind)
		}
		must(err)
		counts[gvk.Kind]++
		if i%40 == 39 {
			// the fake watcher's channel holds 100 events: let the informers catch up
			waitFor(synced)
		}
	}
	waitFor(synced)
}

func meta(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}

// waitBound waits (at most 5 s) until the newest cycle's pod is no longer assumed in the
// scheduler's cache: bound (the binding event seen) or forgotten (its binding failed).
func waitBound(ctx context.Context, client *fake.Clientset, sched *scheduler.Scheduler) {
	n := len(scheduler.OracleLog)
	if n == 0 {
		return
	}
	ns, name, _ := strings.Cut(scheduler.OracleLog[n-1].Pod, "/")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return
		}
		if assumed, err := sched.Cache.IsAssumedPod(p); err != nil || !assumed {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}
