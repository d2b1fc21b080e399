//go:build v123

// 1.23's VolumeBinding reads CSIStorageCapacity objects of storage/v1beta1 (v1 has none yet).
package main

import (
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

func addCapacity(f informers.SharedInformerFactory, o runtime.Object, add func(cache.SharedIndexInformer, interface{})) {
	if x, ok := o.(*storagev1beta1.CSIStorageCapacity); ok {
		add(f.Storage().V1beta1().CSIStorageCapacities().Informer(), x)
	}
}
