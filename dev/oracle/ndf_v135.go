//go:build !v133 && !legacy && !v134

// API fields of 1.35: nodes' declared features and containers' restart rules
// (NodeDeclaredFeatures; --ndf in dev/difftest.py).
package main

import v1 "k8s.io/api/core/v1"

func init() {
	setDeclaredFeatures = func(node *v1.Node, features []string) {
		node.Status.DeclaredFeatures = append([]string(nil), features...)
	}
	setRestartAll = func(c *v1.Container) {
		never := v1.ContainerRestartPolicyNever
		c.RestartPolicy = &never
		c.RestartPolicyRules = []v1.ContainerRestartRule{{
			Action:    v1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
		}}
	}
}
