package kspreadbackend

// What follows the interfaces of the vendored client-go (v0.35) and scheduler (v1.35) where
// they differ between versions: a build for another version replaces these functions.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

// The object tracker's writes (ObjectTracker of client-go v0.35: options on every write, Apply).

func (t *countingTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	return t.count(gvr, t.ObjectTracker.Create(gvr, t.stamped(gvr, obj), ns, opts...))
}

func (t *countingTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	obj = t.stamped(gvr, obj)
	if err := t.count(gvr, t.ObjectTracker.Update(gvr, obj, ns, opts...)); err != nil {
		return err
	}
	t.controllersAct(gvr, obj, ns)
	return nil
}

func (t *countingTracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	return t.count(gvr, t.ObjectTracker.Patch(gvr, t.stamped(gvr, obj), ns, opts...))
}

func (t *countingTracker) Apply(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	return t.count(gvr, t.ObjectTracker.Apply(gvr, obj, ns, opts...))
}

func (t *countingTracker) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	err := t.ObjectTracker.Delete(gvr, ns, name, opts...)
	if err == nil && gvr == podsResource {
		t.podGone(ns, name)
	}
	return t.count(gvr, err)
}

// AddEventHandlerWithOptions: client-go v0.33 and later.
func (i *countedInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithOptions(i.wrap(h), o)
}

// preemptionRunning: the evaluator is still preempting for the pod (asynchronous preemption,
// 1.32 and later: the victims' deletion runs after the cycle).
func preemptionRunning(ev *preemption.Evaluator, uid types.UID) bool {
	return ev.IsPodRunningPreemption(uid)
}

// PodEligibleToPreemptOthers: the first call of the Evaluator's Preempt (its signature of v1.35),
// noted (dryRun.ran) and passed on.
func (d *dryRun) PodEligibleToPreemptOthers(ctx context.Context, pod *v1.Pod, nominatedNodeStatus *fwk.Status) (bool, string) {
	d.mu.Lock()
	d.ran = true
	d.mu.Unlock()
	return d.Interface.PodEligibleToPreemptOthers(ctx, pod, nominatedNodeStatus)
}
