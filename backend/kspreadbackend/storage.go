package kspreadbackend

// The case's storage objects, and the controllers that act on what the scheduler's VolumeBinding
// writes in PreBind, as the case format has them (docs/reference/storage.md): the PV controller
// binds a claim to the volume the scheduler chose, and an external provisioner creates a volume
// for a claim the scheduler selected a node for, which the PV controller then binds. Both act at
// once, inside the write that asks for them, so the binding cycle's wait (VolumeBinding's
// checkBindings) sees them at its first look.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
)

var (
	pvsResource      = v1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcsResource     = v1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	nodesResource    = v1.SchemeGroupVersion.WithResource("nodes")
	classResource    = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	csiNodesResource = storagev1.SchemeGroupVersion.WithResource("csinodes")
)

// versioned: the resources each write of which gets a new resourceVersion (stamped); devices.go
// adds the ResourceClaims
var versioned = map[schema.GroupVersionResource]bool{pvsResource: true, pvcsResource: true}

// admitUpdate (nil, or set by devices.go): what the API server refuses of an update that the
// fake tracker would store (its optimistic concurrency, its validation), checked before it is
// stored
var admitUpdate func(t *countingTracker, gvr schema.GroupVersionResource, obj runtime.Object, ns string) error

// objectKind: a kind of the case's objects the backend creates (storage.go, devices.go): its
// resource, whether namespaced, and a new object of its Go type.
type objectKind struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	new        func() runtime.Object
}

// the kinds a case's storage objects may have, each read as its v1 type
var objectKinds = map[string]objectKind{
	"PersistentVolume":      {pvsResource, false, func() runtime.Object { return &v1.PersistentVolume{} }},
	"PersistentVolumeClaim": {pvcsResource, true, func() runtime.Object { return &v1.PersistentVolumeClaim{} }},
	"StorageClass":          {classResource, false, func() runtime.Object { return &storagev1.StorageClass{} }},
	"CSINode":               {csiNodesResource, false, func() runtime.Object { return &storagev1.CSINode{} }},
	"CSIDriver": {storagev1.SchemeGroupVersion.WithResource("csidrivers"), false,
		func() runtime.Object { return &storagev1.CSIDriver{} }},
	"CSIStorageCapacity": {storagev1.SchemeGroupVersion.WithResource("csistoragecapacities"), true,
		func() runtime.Object { return &storagev1.CSIStorageCapacity{} }},
	"VolumeAttachment": {storagev1.SchemeGroupVersion.WithResource("volumeattachments"), false,
		func() runtime.Object { return &storagev1.VolumeAttachment{} }},
}

// decode: the case's object raw (section[i], of kind) as its Go type, in namespace default when
// the kind is namespaced and it names none, with a uid made of its kind, namespace and name when
// it has none; its metadata and namespace.
func (k objectKind) decode(section string, i int, kind string, raw json.RawMessage) (runtime.Object, metav1.Object, string, error) {
	obj := k.new()
	if err := json.Unmarshal(raw, obj); err != nil {
		return nil, nil, "", fmt.Errorf("%s[%d] (%s): %w", section, i, kind, err)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s[%d] (%s): %w", section, i, kind, err)
	}
	ns := ""
	if k.namespaced {
		ns = m.GetNamespace()
		if ns == "" {
			ns = "default"
			m.SetNamespace(ns)
		}
	}
	if m.GetUID() == "" {
		m.SetUID(types.UID(kind + "/" + ns + "/" + m.GetName()))
	}
	return obj, m, ns, nil
}

// createStorage creates the case's storage objects through the tracker (each counted, as every
// write is), a claim and a capacity in namespace default unless they name one; after every 50 it
// waits until the informers have them (a fake watcher's channel holds 100 events, and panics when a
// burst fills it before its reflector reads: 2 in 40 random storage sequences with steps)
func createStorage(t *countingTracker, objs []json.RawMessage, quiet func(string) error) error {
	for i, raw := range objs {
		var head struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return fmt.Errorf("storage[%d]: %w", i, err)
		}
		k, ok := objectKinds[head.Kind]
		if !ok {
			return fmt.Errorf("storage[%d]: kind %q is none of the storage kinds", i, head.Kind)
		}
		obj, m, ns, err := k.decode("storage", i, head.Kind, raw)
		if err != nil {
			return err
		}
		apiDefaults(obj)
		if err := t.Create(k.gvr, obj, ns); err != nil {
			return fmt.Errorf("storage[%d] (%s %s): %w", i, head.Kind, m.GetName(), err)
		}
		if (i+1)%50 == 0 {
			if err := quiet("the informers (storage objects)"); err != nil {
				return err
			}
		}
	}
	return nil
}

// apiDefaults: what the API server defaults in a storage object the scheduler reads (core/v1's
// defaulting of volumes and claims; storage/v1's of a class's binding mode and reclaim policy and a
// CSIDriver's attachRequired); and, as the case format has it, a volume written without a phase
// is Available, or Bound when it has a claimRef (the PV controller's first sync), where the API
// server would leave it Pending.
func apiDefaults(obj runtime.Object) {
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		if o.Status.Phase == "" {
			o.Status.Phase = v1.VolumeAvailable
			if o.Spec.ClaimRef != nil {
				o.Status.Phase = v1.VolumeBound
			}
		}
		corev1defaults.SetObjectDefaults_PersistentVolume(o)
	case *v1.PersistentVolumeClaim:
		corev1defaults.SetObjectDefaults_PersistentVolumeClaim(o)
	case *storagev1.StorageClass:
		if o.VolumeBindingMode == nil {
			mode := storagev1.VolumeBindingImmediate
			o.VolumeBindingMode = &mode
		}
		if o.ReclaimPolicy == nil {
			policy := v1.PersistentVolumeReclaimDelete
			o.ReclaimPolicy = &policy
		}
	case *storagev1.CSIDriver:
		if o.Spec.AttachRequired == nil {
			yes := true
			o.Spec.AttachRequired = &yes
		}
		if o.Spec.StorageCapacity == nil {
			no := false
			o.Spec.StorageCapacity = &no
		}
	}
}

// defaultPodVolumes: the API server's defaults of a pod's volume sources (an RBD volume's pool,
// an iSCSI volume's interface, an ephemeral volume's claim's volumeMode, ...), the rest of the pod
// as it was sent.
func defaultPodVolumes(p *v1.Pod) {
	if len(p.Spec.Volumes) == 0 {
		return
	}
	only := &v1.Pod{Spec: v1.PodSpec{Volumes: p.Spec.Volumes}}
	corev1defaults.SetObjectDefaults_Pod(only)
	p.Spec.Volumes = only.Spec.Volumes
}

// stamped: a copy of a volume or claim with the next resourceVersion (the scheduler's assume
// caches take an object only when its version is newer than the one they hold, as an API
// server's are); other objects as they are.
func (t *countingTracker) stamped(gvr schema.GroupVersionResource, obj runtime.Object) runtime.Object {
	if !versioned[gvr] {
		return obj
	}
	obj = obj.DeepCopyObject()
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(strconv.FormatInt(t.rv.Add(1), 10))
	}
	return obj
}

// updated: what the emulated controllers do after a successful update of a volume or claim.
// VolumeBinding's PreBind sets a chosen volume's claimRef (the PV controller then binds the
// pair) or a claim's selected-node annotation (a volume is provisioned on that node and bound).
// Their own writes meet neither condition, so they end here.
func (t *countingTracker) updated(gvr schema.GroupVersionResource, obj runtime.Object, ns string) error {
	switch gvr {
	case pvsResource:
		pv, ok := obj.(*v1.PersistentVolume)
		if !ok || pv.Spec.ClaimRef == nil {
			return nil
		}
		got, err := t.Get(pvcsResource, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name)
		if err != nil {
			return nil // a claimRef to no claim: the PV controller would wait for it
		}
		claim := got.(*v1.PersistentVolumeClaim)
		if claim.Spec.VolumeName != "" && claim.Spec.VolumeName != pv.Name {
			return nil // the claim is another volume's
		}
		if claim.Spec.VolumeName == pv.Name && metav1HasAnn(claim.Annotations, volume.AnnBindCompleted) &&
			pv.Status.Phase == v1.VolumeBound {
			return nil // bound both sides (a volume written with its claimRef is Bound, its claim may not be)
		}
		return t.bind(claim.DeepCopy(), pv.DeepCopy())
	case pvcsResource:
		claim, ok := obj.(*v1.PersistentVolumeClaim)
		if !ok || claim.Spec.VolumeName != "" || claim.Annotations[volume.AnnSelectedNode] == "" {
			return nil
		}
		return t.provision(claim.DeepCopy())
	}
	return nil
}

// controllersAct: updated, its failure kept for the case's answer (the scheduler's write succeeded).
func (t *countingTracker) controllersAct(gvr schema.GroupVersionResource, obj runtime.Object, ns string) {
	if err := t.updated(gvr, obj, ns); err != nil {
		t.ctlMu.Lock()
		if t.ctlErr == nil {
			t.ctlErr = fmt.Errorf("the emulated PV controller or provisioner: %w", err)
		}
		t.ctlMu.Unlock()
	}
}

// controllerFailed keeps the first failure of an emulated controller for the case's answer.
func (t *countingTracker) controllerFailed(err error) {
	if err != nil {
		t.ctlMu.Lock()
		if t.ctlErr == nil {
			t.ctlErr = err
		}
		t.ctlMu.Unlock()
	}
}

// controllerError: the first failure of the emulated controllers, or nil.
func (t *countingTracker) controllerError() error {
	t.ctlMu.Lock()
	defer t.ctlMu.Unlock()
	return t.ctlErr
}

// bind: the PV controller binds a claim and the volume whose claimRef names it, both sides: the
// claim first, so that the volume's update finds the pair bound and acts no further.
func (t *countingTracker) bind(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) error {
	claim.Spec.VolumeName = pv.Name
	metav1SetAnn(&claim.ObjectMeta.Annotations, volume.AnnBindCompleted, "yes")
	metav1SetAnn(&claim.ObjectMeta.Annotations, volume.AnnBoundByController, "yes")
	claim.Status.Phase = v1.ClaimBound
	claim.Status.AccessModes = pv.Spec.AccessModes
	claim.Status.Capacity = pv.Spec.Capacity
	if err := t.Update(pvcsResource, claim, claim.Namespace); err != nil {
		return err
	}
	pv.Spec.ClaimRef.UID = claim.UID
	metav1SetAnn(&pv.ObjectMeta.Annotations, volume.AnnBoundByController, "yes")
	pv.Status.Phase = v1.VolumeBound
	return t.Update(pvsResource, pv, "")
}

// provision: an external provisioner creates a volume for the claim on its selected node, with
// node affinity on the node's values of the topology keys the class's CSI driver reports in the
// node's CSINode (else the keys of the class's allowedTopologies, else the node's hostname);
// named pvc-<namespace>-<claim> (kspread's name); then the PV controller binds the two.
func (t *countingTracker) provision(claim *v1.PersistentVolumeClaim) error {
	className := ""
	if claim.Spec.StorageClassName != nil {
		className = *claim.Spec.StorageClassName
	}
	got, err := t.Get(classResource, "", className)
	if err != nil {
		return nil // no class: no provisioner acts (the scheduler did not select a node either)
	}
	class := got.(*storagev1.StorageClass)
	got, err = t.Get(nodesResource, "", claim.Annotations[volume.AnnSelectedNode])
	if err != nil {
		return nil
	}
	node := got.(*v1.Node)
	var keys []string
	if cn, err := t.Get(csiNodesResource, "", node.Name); err == nil {
		for _, d := range cn.(*storagev1.CSINode).Spec.Drivers {
			if d.Name == class.Provisioner && len(d.TopologyKeys) > 0 {
				keys = d.TopologyKeys
				break
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
	n := t.provisioned.Add(1)
	name := "pvc-" + claim.Namespace + "-" + claim.Name
	for {
		if _, err := t.Get(pvsResource, "", name); err != nil {
			break
		}
		name = fmt.Sprintf("%s-%d", name, n)
	}
	mode := claim.Spec.VolumeMode
	policy := v1.PersistentVolumeReclaimDelete // the class's, Delete unless it says
	if class.ReclaimPolicy != nil {
		policy = *class.ReclaimPolicy
	}
	pv := &v1.PersistentVolume{}
	pv.Name = name
	pv.UID = types.UID("PersistentVolume//" + name)
	pv.Annotations = map[string]string{volume.AnnDynamicallyProvisioned: class.Provisioner}
	pv.Spec = v1.PersistentVolumeSpec{
		Capacity:                      v1.ResourceList{v1.ResourceStorage: claim.Spec.Resources.Requests[v1.ResourceStorage]},
		AccessModes:                   claim.Spec.AccessModes,
		VolumeMode:                    mode,
		StorageClassName:              class.Name,
		VolumeAttributesClassName:     claim.Spec.VolumeAttributesClassName,
		PersistentVolumeReclaimPolicy: policy,
		ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
			Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID},
	}
	if len(reqs) > 0 {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}}}}
	}
	if !strings.HasPrefix(class.Provisioner, "kubernetes.io/") {
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: class.Provisioner, VolumeHandle: name}
	}
	pv.Status.Phase = v1.VolumeAvailable
	if err := t.Create(pvsResource, pv, ""); err != nil {
		return err
	}
	return t.bind(claim, pv.DeepCopy())
}

func metav1HasAnn(anns map[string]string, k string) bool {
	_, ok := anns[k]
	return ok
}

func metav1SetAnn(anns *map[string]string, k, v string) {
	if *anns == nil {
		*anns = map[string]string{}
	}
	(*anns)[k] = v
}
