//go:build !pre131

package kspreadbackend

// The object tracker's writes, client-go v0.31 and later: options on every write, Patch and Apply.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
)

func (t *countingTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	return t.count(gvr, t.ObjectTracker.Create(gvr, t.stamped(gvr, obj), ns, opts...))
}

func (t *countingTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	if admitUpdate != nil {
		if err := admitUpdate(t, gvr, obj, ns); err != nil {
			return err
		}
	}
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

// watch: the tracker's watch for a watch action, with its list options.
func (t *countingTracker) watch(action clienttesting.Action) (watch.Interface, error) {
	var opts metav1.ListOptions
	if w, ok := action.(clienttesting.WatchActionImpl); ok {
		opts = w.ListOptions
	}
	return t.Watch(action.GetResource(), action.GetNamespace(), opts)
}
