//go:build !pre133

package kspreadbackend

// AddEventHandlerWithOptions: client-go v0.33 and later (before, an informer has no such method
// and the scheduler calls AddEventHandler).

import "k8s.io/client-go/tools/cache"

func (i *countedInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithOptions(i.wrap(h), o)
}
