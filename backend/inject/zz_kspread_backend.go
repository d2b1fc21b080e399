// Copied by backend/build.sh into the vendored k8s.io/kubernetes/pkg/scheduler/framework/runtime
// of the build tree: the one way to reach a framework's score plugins (kspread reports each
// plugin's raw score, before NormalizeScore, which RunScorePlugins does not return) and its
// PostFilter plugins (kspread reports DefaultPreemption's candidates, which its Evaluator keeps
// inside Preempt). It reads and changes nothing else. The lists are returned as the framework
// keeps them (their element type moved to k8s.io/kube-scheduler/framework in v1.35): the same
// file serves every version from 1.29.

package runtime

import "k8s.io/kubernetes/pkg/scheduler/framework"

// KspreadScorePlugins returns the score plugins of a framework made by NewFramework (a slice of
// the version's ScorePlugin interface), in the profile's order, with their weights; nil when f is
// another implementation.
func KspreadScorePlugins(f framework.Framework) (any, map[string]int) {
	fi, ok := f.(*frameworkImpl)
	if !ok {
		return nil, nil
	}
	return fi.scorePlugins, fi.scorePluginWeight
}

// KspreadPostFilterPlugins returns the PostFilter plugins of a framework made by NewFramework (a
// slice of the version's PostFilterPlugin interface), in the profile's order; nil when f is
// another implementation.
func KspreadPostFilterPlugins(f framework.Framework) any {
	fi, ok := f.(*frameworkImpl)
	if !ok {
		return nil
	}
	return fi.postFilterPlugins
}
