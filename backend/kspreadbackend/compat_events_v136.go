//go:build !pre136

package kspreadbackend

import (
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// recorderFactory: every profile's event recorder is rec (from 1.36 the factory returns an
// events.EventRecorderLogger).
func recorderFactory(rec *recorder) profile.RecorderFactory {
	return func(string) events.EventRecorderLogger { return rec }
}
