// steps.go: added by kspread's dev/seqoracle-build.sh to the fullcycle driver (next to main.go and
// outcomes.go; steps.patch calls it). A sequence's steps (kspread's `schedule` steps, issue 28),
// each applied when the scheduler is idle, after the first `at` incoming pods, through the fake API
// as the real component writes it: kubectl cordon/uncordon/label/taint update the Node; a node added
// is created (as a kubelet registers it); a node deleted is deleted, then its pods (as the pod
// garbage collector deletes them); kubectl delete pod deletes the pod. A NoExecute taint deletes at
// once the pods of the node that do not tolerate it (the taint manager; tolerationSeconds are not
// modelled here). The scheduler sees all of it through its informers and event handlers.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler"
)

type inStep struct {
	At      int                `json:"at"`
	Kind    string             `json:"kind"`
	Node    string             `json:"node"`
	NewNode *inNode            `json:"newNode"`
	Labels  map[string]*string `json:"labels"`
	Taint   *v1.Taint          `json:"taint"`
	Key     string             `json:"key"`
	Effect  string             `json:"effect"`
	Pod     string             `json:"pod"`
}

func readSteps(raw []byte) []inStep {
	var in struct {
		Steps []inStep `json:"steps"`
	}
	must(json.Unmarshal(raw, &in))
	return in.Steps
}

func updateNode(ctx context.Context, client *fake.Clientset, name string, change func(*v1.Node)) *v1.Node {
	n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	must(err)
	n = n.DeepCopy()
	change(n)
	n, err = client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	must(err)
	return n
}

func podsOn(ctx context.Context, client *fake.Clientset, node string) []v1.Pod {
	pl, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	must(err)
	var out []v1.Pod
	for _, p := range pl.Items {
		if p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	return out
}

func deletePod(ctx context.Context, client *fake.Clientset, ns, name string) {
	must(client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}))
}

func tolerated(p v1.Pod, t v1.Taint) bool {
	for _, tol := range p.Spec.Tolerations {
		if toleratesTaint(tol, &t) { // tolerates135.go / tolerates131.go
			return true
		}
	}
	return false
}

func applyStep(ctx context.Context, client *fake.Clientset, sched *scheduler.Scheduler, st inStep) {
	switch st.Kind {
	case "cordon", "uncordon":
		updateNode(ctx, client, st.Node, func(n *v1.Node) { n.Spec.Unschedulable = st.Kind == "cordon" })
	case "label":
		updateNode(ctx, client, st.Node, func(n *v1.Node) {
			for k, v := range st.Labels {
				if v == nil {
					delete(n.Labels, k)
				} else {
					n.Labels[k] = *v
				}
			}
		})
	case "taint":
		n := updateNode(ctx, client, st.Node, func(n *v1.Node) { n.Spec.Taints = append(n.Spec.Taints, *st.Taint) })
		if st.Taint.Effect == v1.TaintEffectNoExecute {
			time.Sleep(20 * time.Millisecond)
			for _, p := range podsOn(ctx, client, n.Name) {
				if !tolerated(p, *st.Taint) {
					deletePod(ctx, client, p.Namespace, p.Name)
				}
			}
		}
	case "untaint":
		updateNode(ctx, client, st.Node, func(n *v1.Node) {
			var keep []v1.Taint
			for _, t := range n.Spec.Taints {
				if !(t.Key == st.Key && (st.Effect == "" || string(t.Effect) == st.Effect)) {
					keep = append(keep, t)
				}
			}
			n.Spec.Taints = keep
		})
	case "addNode":
		nn := st.NewNode
		labels := map[string]string{"kubernetes.io/hostname": nn.Name}
		for k, v := range nn.Labels {
			labels[k] = v
		}
		alloc := quantities(map[string]string{"cpu": "1000000", "memory": "1000000Gi", "ephemeral-storage": "1000000Gi", "pods": "110"})
		if nn.Allocatable != nil {
			alloc = quantities(nn.Allocatable)
		}
		if scheduler.OracleNodeIndex != nil {
			// an added node comes last in the case's node order (kspread's rule for ties)
			scheduler.OracleNodeIndex[nn.Name] = len(scheduler.OracleNodeIndex)
		}
		before := sched.Cache.NodeCount()
		_, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nn.Name, Labels: labels},
			Spec:   v1.NodeSpec{Taints: nn.Taints, Unschedulable: nn.Unschedulable},
			Status: v1.NodeStatus{Allocatable: alloc, Capacity: alloc}}, metav1.CreateOptions{})
		must(err)
		waitFor(func() bool { return sched.Cache.NodeCount() == before+1 })
	case "deleteNode":
		pods := podsOn(ctx, client, st.Node)
		must(client.CoreV1().Nodes().Delete(ctx, st.Node, metav1.DeleteOptions{}))
		time.Sleep(20 * time.Millisecond)
		for _, p := range pods {
			deletePod(ctx, client, p.Namespace, p.Name)
		}
	case "deletePod":
		ns, name := "default", st.Pod
		if i := strings.Index(st.Pod, "/"); i >= 0 {
			ns, name = st.Pod[:i], st.Pod[i+1:]
		}
		deletePod(ctx, client, ns, name)
	default:
		must(fmt.Errorf("unknown step kind %q", st.Kind))
	}
}
