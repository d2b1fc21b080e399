//go:build !v123

// CSIStorageCapacity objects are storage/v1 from 1.24.
package main

import (
	storage "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

func addCapacity(f informers.SharedInformerFactory, o runtime.Object, add func(cache.SharedIndexInformer, interface{})) {
	if x, ok := o.(*storage.CSIStorageCapacity); ok {
		add(f.Storage().V1().CSIStorageCapacities().Informer(), x)
	}
}
