// A kspread backend with two out-of-tree plugins of kubernetes-sigs/scheduler-plugins and one of
// our own (teamrank/) registered, as kube-scheduler's app.WithPlugin registers them. Build it with
//
//	backend/build.sh .backend-build/kspread-backend-outoftree examples/backend-outoftree examples/backend-outoftree/teamrank
package main

import (
	// the plugins' args types (NodeResourcesAllocatableArgs) in the scheduler's config scheme
	_ "sigs.k8s.io/scheduler-plugins/apis/config/scheme"
	"sigs.k8s.io/scheduler-plugins/kspreadbackend"
	"sigs.k8s.io/scheduler-plugins/pkg/noderesources"
	"sigs.k8s.io/scheduler-plugins/pkg/podstate"
	// a plugin directory given to build.sh: copied to plugins/teamrank/ of the build tree
	"sigs.k8s.io/scheduler-plugins/plugins/teamrank"
)

func main() {
	kspreadbackend.Main(
		kspreadbackend.WithPlugin(noderesources.AllocatableName, noderesources.NewAllocatable),
		kspreadbackend.WithPlugin(podstate.Name, podstate.New),
		kspreadbackend.WithPlugin(teamrank.Name, teamrank.New),
	)
}
