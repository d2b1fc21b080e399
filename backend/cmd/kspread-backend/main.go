// The stock kspread backend: upstream kube-scheduler's in-tree plugins only.
package main

import "sigs.k8s.io/scheduler-plugins/kspreadbackend"

func main() { kspreadbackend.Main() }
