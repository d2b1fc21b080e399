//go:build legacy

// Up to 1.31 the oracle runs with the default profile's plugin arguments only.
package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

func caseArgs(in *Input) (map[string]runtime.Object, error) {
	if len(in.PluginConfig) > 0 {
		return nil, fmt.Errorf("pluginConfig: this oracle (1.23-1.31 family) takes the default arguments only")
	}
	return defaultArgs, nil
}
