package kspreadbackend

import "k8s.io/component-base/metrics/legacyregistry"

// bindingCycles: the scheduler's binding cycles still running, by its own gauge
// (scheduler_goroutines{operation="binding"}, process-wide: a run takes its value at the start
// as its base). A binding cycle that ends in an error (a pod rejected while waiting at Permit)
// records the pod's failure, which takes it out of the queue's in-flight pods, before it sends
// the event its forgotten assumption makes (AssignedPodDelete, deferred in
// handleBindingCycleError): the run waits for the goroutine itself, which the gauge counts until
// it returns.
func bindingCycles() int {
	mfs, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() != "scheduler_goroutines" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" && l.GetValue() == "binding" {
					return int(m.GetGauge().GetValue())
				}
			}
		}
	}
	return 0
}
