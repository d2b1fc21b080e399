//go:build !legacy

// Plugin arguments of a case (1.32 and later: the v1 KubeSchedulerConfiguration API).
package main

import (
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
)

// caseArgs: the default profile's plugin arguments with the case's pluginConfig (versioned
// v1 args per plugin name) in place of those plugins' defaults, decoded and defaulted as the
// scheduler decodes a KubeSchedulerConfiguration file (scheme.Codecs, strict). The plugin
// factories validate them.
func caseArgs(in *Input) (map[string]runtime.Object, error) {
	if len(in.PluginConfig) == 0 {
		return defaultArgs, nil
	}
	type pluginConfig struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	var names []string
	for n := range in.PluginConfig {
		names = append(names, n)
	}
	sort.Strings(names)
	var pcs []pluginConfig
	for _, n := range names {
		pcs = append(pcs, pluginConfig{Name: n, Args: in.PluginConfig[n]})
	}
	doc, err := json.Marshal(map[string]interface{}{
		"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
		"profiles": []interface{}{map[string]interface{}{"schedulerName": "default-scheduler", "pluginConfig": pcs}},
	})
	if err != nil {
		return nil, err
	}
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(doc, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("pluginConfig: %v", err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok || len(cfg.Profiles) != 1 {
		return nil, fmt.Errorf("pluginConfig: decoded %T", obj)
	}
	out := map[string]runtime.Object{}
	for k, v := range defaultArgs {
		out[k] = v
	}
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if _, ok := in.PluginConfig[pc.Name]; ok {
			out[pc.Name] = pc.Args
		}
	}
	return out, nil
}
