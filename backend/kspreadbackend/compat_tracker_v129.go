//go:build pre131

package kspreadbackend

// The object tracker's writes, client-go v0.29-v0.30: no options, no Patch or Apply (the fake
// clientset's reactor writes a patch as an Update).

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
)

func (t *countingTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string) error {
	return t.count(gvr, t.ObjectTracker.Create(gvr, t.stamped(gvr, obj), ns))
}

func (t *countingTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string) error {
	if admitUpdate != nil {
		if err := admitUpdate(t, gvr, obj, ns); err != nil {
			return err
		}
	}
	obj = t.stamped(gvr, obj)
	if err := t.count(gvr, t.ObjectTracker.Update(gvr, obj, ns)); err != nil {
		return err
	}
	t.controllersAct(gvr, obj, ns)
	return nil
}

func (t *countingTracker) Delete(gvr schema.GroupVersionResource, ns, name string) error {
	err := t.ObjectTracker.Delete(gvr, ns, name)
	if err == nil && gvr == podsResource {
		t.podGone(ns, name)
	}
	return t.count(gvr, err)
}

// watch: the tracker's watch for a watch action (no list options before client-go v0.31).
func (t *countingTracker) watch(action clienttesting.Action) (watch.Interface, error) {
	return t.Watch(action.GetResource(), action.GetNamespace())
}
