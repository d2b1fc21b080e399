//go:build legacy && !v131

// Before 1.31 the oracle takes no device objects (kspread models structured parameters from 1.31).
package main

import (
	"encoding/json"
	"errors"

	v1 "k8s.io/api/core/v1"
)

func setPodClaims(*v1.Pod, json.RawMessage) { panic("resourceClaims: not before 1.31") }

func buildDevices(in *Input, _ *Cluster) error {
	if len(in.Devices) > 0 {
		return errors.New("devices: not before 1.31")
	}
	return nil
}
