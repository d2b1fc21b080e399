package kspreadbackend

// The controllers that act on the claims of a pod's generic ephemeral volumes when a pod is deleted
// (a step, the taint manager, a deleted node's pod garbage collector, preemption) or a controller
// replaces one (steps.go), emulated at once inside the write that asks for them, as storage.go's PV
// controller and provisioner are (the sequence's clock does not move):
//
//   - the ephemeral volume controller (pkg/controller/volume/ephemeral): for each ephemeral volume of
//     a pod it makes the claim <pod>-<volume> from the volume's template (its labels, annotations and
//     spec, the API server's defaults), owned by the pod (controller, blockOwnerDeletion), unless a
//     claim of that name exists: one the pod owns is its own, one it does not is left alone (the pod
//     waits, VolumeBinding rejecting it, until that claim goes; the controller then makes the pod's on
//     the claim's deletion, onPVCDelete). The backend makes a replacement pod's claims just before
//     the pod is created, as kspread has them (and as the case's pods' claims are sent): upstream's
//     controller makes them once it sees the pod, racing the scheduler, whose VolumeBinding PreFilter
//     would reject a pod tried first ("waiting for ephemeral volume controller to create the
//     persistentvolumeclaim") until the claim's Add moves it;
//   - the garbage collector (pkg/controller/garbagecollector): a claim each of whose owner references
//     names a Pod that no longer exists (by UID) is deleted with background propagation, at once
//     after the pod's deletion;
//   - the API server and the PVC protection controller (pkg/controller/volume/pvcprotection): every
//     claim carries kubernetes.io/pvc-protection (the StorageObjectInUseProtection admission plugin
//     adds it at creation), so the deletion sets the claim's deletionTimestamp (an update the
//     scheduler's informers see; VolumeBinding then rejects a pod using it, "is being deleted"), and
//     the controller removes the finalizer, which deletes the claim, once no scheduled pod uses it (a
//     persistentVolumeClaim volume of that name, or an ephemeral volume of a pod the claim is for,
//     podUsesPVCForDeletion); a claim kept so goes when the last such pod is deleted;
//   - the PV controller (pkg/controller/volume/persistentvolume, syncVolume and reclaimVolume): the
//     volume bound to a deleted claim (its claimRef's UID the claim's) becomes Released (an update),
//     then by its reclaim policy: Retain leaves it so (its claimRef keeps the old claim's UID, so no
//     claim binds it, a new claim of the same name neither); Delete deletes a dynamically provisioned
//     volume (the provisioned-by annotation: the external provisioner deletes it) and marks any other
//     Failed (deleteVolumeOperation finds no deleter for a static CSI or local volume); Recycle (the
//     recycler pod scrubbing the volume on the wall clock) is not emulated: an error names it.
//
// A new claim's UID is its kind, namespace and name, with the resourceVersion it was created at for
// one made in the run, so that a claim made again under an old name (a StatefulSet's replacement) is
// not the Released volume's claim.

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
)

// ephemeralProtocol: the protocol --info lists with "steps": a sequence's pods with generic ephemeral
// volumes may be deleted and replaced (kspread skips such a sequence with steps on a build without it)
const ephemeralProtocol = "ephemeralVolumes"

// pvcProtectionFinalizer: the finalizer every claim carries (volumeutil.PVCProtectionFinalizer)
const pvcProtectionFinalizer = "kubernetes.io/pvc-protection"

// ephemeralClaims: the ephemeral volume controller's work for a pod about to be created (a
// replacement): the claim of each of its generic ephemeral volumes that does not exist yet.
func ephemeralClaims(t *countingTracker, p *v1.Pod) error {
	for i := range p.Spec.Volumes {
		vol := &p.Spec.Volumes[i]
		if vol.Ephemeral == nil || vol.Ephemeral.VolumeClaimTemplate == nil {
			continue
		}
		name := ephemeral.VolumeClaimName(p, vol)
		if _, err := t.Get(pvcsResource, p.Namespace, name); err == nil {
			continue // the pod's own, or another's: the controller makes none (handleVolume)
		}
		tmpl := vol.Ephemeral.VolumeClaimTemplate
		yes := true
		claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: p.Namespace, Labels: tmpl.Labels, Annotations: tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
				Controller: &yes, BlockOwnerDeletion: &yes}},
			Finalizers: []string{pvcProtectionFinalizer},
			UID:        types.UID(fmt.Sprintf("PersistentVolumeClaim/%s/%s@%d", p.Namespace, name, t.rv.Load()+1)),
		}, Spec: *tmpl.Spec.DeepCopy()}
		corev1defaults.SetObjectDefaults_PersistentVolumeClaim(claim)
		claim.Status.Phase = v1.ClaimPending
		if err := t.Create(pvcsResource, claim, p.Namespace); err != nil {
			return fmt.Errorf("pod %s: the ephemeral volume controller creating claim %s: %w",
				podKey(p.Namespace, p.Name), name, err)
		}
	}
	return nil
}

// ephemeralPodGone: after the pod ns/name was deleted (inside the tracker's Delete), the garbage
// collector deletes the claims it owned; the PVC protection controller lets a claim being deleted
// go once no scheduled pod uses it (this pod's deletion may free one kept for it), and the PV
// controller releases the volume of each claim gone.
func (t *countingTracker) ephemeralPodGone(ns, name string) error {
	claims, err := t.claimsIn(ns)
	if err != nil {
		return err
	}
	for i := range claims {
		c := &claims[i]
		if !t.ownersGone(c, name) {
			continue
		}
		t.collected.Store(podKey(ns, c.Name), true)
		if c.DeletionTimestamp != nil {
			continue // being deleted already (the case wrote it so): the PVC protection controller's
		}
		// the garbage collector's delete: the finalizer keeps the claim, marked for deletion
		c = c.DeepCopy()
		now := metav1.Now()
		var zero int64
		c.DeletionTimestamp, c.DeletionGracePeriodSeconds = &now, &zero
		if !hasFinalizer(c.Finalizers, pvcProtectionFinalizer) {
			c.Finalizers = append(c.Finalizers, pvcProtectionFinalizer)
		}
		if err := t.write(pvcsResource, c, ns); err != nil {
			return fmt.Errorf("the garbage collector deleting claim %s of pod %s: %w", podKey(ns, c.Name),
				podKey(ns, name), err)
		}
	}
	return t.pvcProtection(ns)
}

// ownersGone: the claim has an owner reference to the pod of that name, and every one of its
// owner references names a Pod that no longer exists (by UID)
func (t *countingTracker) ownersGone(c *v1.PersistentVolumeClaim, name string) bool {
	named := false
	for _, ref := range c.OwnerReferences {
		if ref.Kind != "Pod" || ref.APIVersion != "v1" {
			return false
		}
		if got, err := t.Get(podsResource, c.Namespace, ref.Name); err == nil && got.(*v1.Pod).UID == ref.UID {
			return false
		}
		named = named || ref.Name == name
	}
	return named
}

// pvcProtection: the PVC protection controller over the claims the garbage collector deleted in the
// namespace (a pod's deletion sends it the claims its volumes name, which those are; a claim the case
// wrote as being deleted stays so, as kspread has it): each that no scheduled pod uses loses its
// finalizer and is deleted; the PV controller then acts on its volume.
func (t *countingTracker) pvcProtection(ns string) error {
	claims, err := t.claimsIn(ns)
	if err != nil {
		return err
	}
	got, err := t.List(podsResource, v1.SchemeGroupVersion.WithKind("Pod"), ns)
	if err != nil {
		return err
	}
	pods := got.(*v1.PodList).Items
	for i := range claims {
		c := &claims[i]
		if _, ok := t.collected.Load(podKey(ns, c.Name)); !ok || c.DeletionTimestamp == nil || claimUsed(c, pods) {
			continue
		}
		t.collected.Delete(podKey(ns, c.Name))
		if err := t.count(pvcsResource, t.ObjectTracker.Delete(pvcsResource, ns, c.Name)); err != nil {
			return fmt.Errorf("the PVC protection controller deleting claim %s: %w", podKey(ns, c.Name), err)
		}
		if err := t.releaseVolume(c); err != nil {
			return err
		}
		// the ephemeral volume controller's onPVCDelete: a pod whose ephemeral volume names the
		// claim gets it made (for that pod)
		for j := range pods {
			p := &pods[j]
			if p.DeletionTimestamp != nil {
				continue
			}
			for k := range p.Spec.Volumes {
				if p.Spec.Volumes[k].Ephemeral != nil && ephemeral.VolumeClaimName(p, &p.Spec.Volumes[k]) == c.Name {
					if err := ephemeralClaims(t, p); err != nil {
						return err
					}
					break
				}
			}
		}
	}
	return nil
}

// claimUsed: podUsesPVCForDeletion for any pod: a scheduled pod with a persistentVolumeClaim
// volume of the claim's name, or an ephemeral volume whose claim it is
func claimUsed(c *v1.PersistentVolumeClaim, pods []v1.Pod) bool {
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" {
			continue
		}
		for k := range p.Spec.Volumes {
			vol := &p.Spec.Volumes[k]
			if vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ClaimName == c.Name {
				return true
			}
			if vol.Ephemeral != nil && ephemeral.VolumeClaimName(p, vol) == c.Name && ephemeral.VolumeIsForPod(p, c) == nil {
				return true
			}
		}
	}
	return false
}

// releaseVolume: the PV controller once the claim is gone: the volume bound to it is Released,
// then reclaimed by its policy
func (t *countingTracker) releaseVolume(c *v1.PersistentVolumeClaim) error {
	if c.Spec.VolumeName == "" {
		return nil
	}
	got, err := t.Get(pvsResource, "", c.Spec.VolumeName)
	if err != nil {
		return nil // no such volume
	}
	pv := got.(*v1.PersistentVolume).DeepCopy()
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.Namespace != c.Namespace || ref.Name != c.Name || (ref.UID != "" && ref.UID != c.UID) {
		return nil // the volume is not this claim's
	}
	// a pair the case wrote bound has no UID in the claimRef: the PV controller's first sync of the
	// bound pair would have written it (syncBoundClaim, bind), and it keeps a new claim of the name off
	ref.UID = c.UID
	if pv.Status.Phase == v1.VolumeReleased || pv.Status.Phase == v1.VolumeFailed {
		return nil
	}
	if _, ok := pv.Annotations[volume.AnnMigratedTo]; !ok && pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimRecycle {
		return fmt.Errorf("volume %s of deleted claim %s has reclaim policy Recycle: its recycler (a pod "+
			"scrubbing the volume, then the volume Available again) is not emulated", pv.Name, podKey(c.Namespace, c.Name))
	}
	pv.Status.Phase = v1.VolumeReleased
	if err := t.write(pvsResource, pv, ""); err != nil {
		return fmt.Errorf("the PV controller releasing volume %s: %w", pv.Name, err)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete {
		return nil // Retain
	}
	if _, ok := pv.Annotations[volume.AnnDynamicallyProvisioned]; ok {
		// the external provisioner deletes it (the PV controller stands down for it)
		if err := t.count(pvsResource, t.ObjectTracker.Delete(pvsResource, "", pv.Name)); err != nil {
			return fmt.Errorf("the provisioner deleting volume %s: %w", pv.Name, err)
		}
		return nil
	}
	pv = pv.DeepCopy()
	pv.Status.Phase = v1.VolumeFailed
	pv.Status.Message = "error getting deleter volume plugin for volume \"" + pv.Name + "\": no deletable volume plugin matched"
	if err := t.write(pvsResource, pv, ""); err != nil {
		return fmt.Errorf("the PV controller failing volume %s: %w", pv.Name, err)
	}
	return nil
}

// write: an update by an emulated controller, with a new resourceVersion and counted, that no other
// emulated controller acts on (storage.go's updated: a claim being deleted is not provisioned)
func (t *countingTracker) write(gvr schema.GroupVersionResource, obj runtime.Object, ns string) error {
	return t.count(gvr, t.ObjectTracker.Update(gvr, t.stamped(gvr, obj), ns))
}

func (t *countingTracker) claimsIn(ns string) ([]v1.PersistentVolumeClaim, error) {
	got, err := t.List(pvcsResource, v1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), ns)
	if err != nil {
		return nil, err
	}
	return got.(*v1.PersistentVolumeClaimList).Items, nil
}

func hasFinalizer(list []string, f string) bool {
	for _, x := range list {
		if x == f {
			return true
		}
	}
	return false
}
