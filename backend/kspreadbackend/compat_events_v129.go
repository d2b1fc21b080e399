//go:build pre136

package kspreadbackend

import (
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// recorderFactory: every profile's event recorder is rec (up to 1.35 the factory returns an
// events.EventRecorder).
func recorderFactory(rec *recorder) profile.RecorderFactory {
	return func(string) events.EventRecorder { return rec }
}
