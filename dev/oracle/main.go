// kspread-oracle (extended): runs the real upstream kube-scheduler plugins (a vendored
// k8s.io/kubernetes) on JSON clusters and prints, per node, every filter plugin's status and
// every score plugin's raw, normalized and weighted score, and DefaultPreemption's dry run.
//
// This file holds what does not depend on the scheduler's Go API (input, Kubernetes objects,
// output); run_*.go hold the scheduling part, one per family of upstream APIs, chosen by
// build tags (see dev/README.md).
//
// Usage: kspread-oracle INPUT.json          one cluster, indented output
//
//	kspread-oracle -jsonl < IN > OUT    one cluster per input line, one output line each
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	storage "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
)

type ImageIn struct {
	Names     []string `json:"names"`
	SizeBytes int64    `json:"sizeBytes"`
}

type NodeIn struct {
	Name          string            `json:"name"`
	Labels        map[string]string `json:"labels"`
	Allocatable   map[string]string `json:"allocatable"`
	Taints        []v1.Taint        `json:"taints"`
	Unschedulable bool              `json:"unschedulable"`
	Images        []ImageIn         `json:"images"`
	// DeclaredFeatures: status.declaredFeatures (NodeDeclaredFeatures, 1.35+ oracles only).
	DeclaredFeatures []string `json:"declaredFeatures"`
}

type ControllerIn struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

type PodIn struct {
	Name                      string                        `json:"name"`
	Namespace                 string                        `json:"namespace"`
	Node                      string                        `json:"node"`
	Labels                    map[string]string             `json:"labels"`
	Priority                  *int32                        `json:"priority"`
	PreemptionPolicy          *v1.PreemptionPolicy          `json:"preemptionPolicy"`
	Requests                  map[string]string             `json:"requests"`
	Image                     string                        `json:"image"`
	Ports                     []v1.ContainerPort            `json:"ports"`
	NodeSelector              map[string]string             `json:"nodeSelector"`
	Affinity                  *v1.Affinity                  `json:"affinity"`
	Tolerations               []v1.Toleration               `json:"tolerations"`
	TopologySpreadConstraints []v1.TopologySpreadConstraint `json:"topologySpreadConstraints"`
	Controller                *ControllerIn                 `json:"controller"`
	InitContainers            []v1.Container                `json:"initContainers"`
	Overhead                  map[string]string             `json:"overhead"`
	Terminating               bool                          `json:"terminating"`
	// Resources: pod-level requests and limits (spec.resources, from 1.32).
	Resources *v1.ResourceRequirements `json:"resources"`
	// Volumes: spec.volumes (the volume plugins read claims, ephemeral volumes, in-tree disks).
	Volumes []v1.Volume `json:"volumes"`
	// Status: the pod's status as an in-place resize leaves it (containerStatuses' resources
	// and allocatedResources, conditions); phase and startTime are set here as for every pod.
	Status *v1.PodStatus `json:"status"`
	// RestartAll: the container has a restartPolicyRules rule with action RestartAllContainers
	// (1.35+ oracles only).
	RestartAll bool `json:"restartAll"`
	// ResourceClaims: spec.resourceClaims (DynamicResources). An entry naming a
	// ResourceClaimTemplate gets the claim the resource claim controller would make
	// (devices.go).
	ResourceClaims json.RawMessage `json:"resourceClaims"`
}

// Setters of API fields some versions lack, set by a version's own file (ndf_v135.go);
// nil: this oracle's API has no such field.
var (
	setDeclaredFeatures func(node *v1.Node, features []string)
	setRestartAll       func(c *v1.Container)
)

type OwnerIn struct {
	Kind      string          `json:"kind"` // Service, ReplicationController, ReplicaSet, StatefulSet
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Selector  json.RawMessage `json:"selector"` // label map (Service, RC) or LabelSelector (RS, StatefulSet)
}

type NamespaceIn struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

type PDBIn struct {
	Name               string                `json:"name"`
	Namespace          string                `json:"namespace"`
	Selector           *metav1.LabelSelector `json:"selector"`
	DisruptionsAllowed int32                 `json:"disruptionsAllowed"`
}

type Input struct {
	ID         string              `json:"id,omitempty"`
	Zones      map[string][]string `json:"zones"`
	Nodes      []NodeIn            `json:"nodes"`
	Pods       []PodIn             `json:"pods"`
	Owners     []OwnerIn           `json:"owners"`
	Namespaces []NamespaceIn       `json:"namespaces"`
	PDBs       []PDBIn             `json:"pdbs"`
	Pod        PodIn               `json:"pod"`
	Filter     []string            `json:"filter"`
	Score      []string            `json:"score"`
	// Preempt: when no node is feasible, run DefaultPreemption's dry run.
	Preempt bool `json:"preempt"`
	// FeatureGates: set on the process's feature gate (utilfeature.DefaultMutableFeatureGate)
	// before the case's plugins are created; they stay set for the following lines.
	FeatureGates map[string]bool `json:"featureGates"`
	// PluginConfig: plugin name -> its arguments in the versioned (v1) form, in place of
	// the default profile's (1.32 and later).
	PluginConfig map[string]json.RawMessage `json:"pluginConfig"`
	// Storage: PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers,
	// CSIStorageCapacities and VolumeAttachments as Kubernetes manifests (apiVersion and kind set).
	Storage []json.RawMessage `json:"storage"`
	// Devices: DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates as
	// manifests in the resource.k8s.io version the build's scheduler reads (devices.go).
	Devices []json.RawMessage `json:"devices"`
}

type StatusOut struct {
	Code    string   `json:"code"`
	Reasons []string `json:"reasons,omitempty"`
	Plugin  string   `json:"plugin,omitempty"`
}

type ScoreOut struct {
	Weight     int32            `json:"weight"`
	PreScore   *StatusOut       `json:"preScore,omitempty"`
	Raw        map[string]int64 `json:"raw,omitempty"`
	Normalized map[string]int64 `json:"normalized,omitempty"`
	Weighted   map[string]int64 `json:"weighted,omitempty"`
	Error      string           `json:"error,omitempty"`
}

type PreemptionOut struct {
	Eligible   bool                `json:"eligible"`
	Reason     string              `json:"reason,omitempty"`
	Candidates map[string][]string `json:"candidates"`
	Node       string              `json:"node,omitempty"`
	Victims    []string            `json:"victims,omitempty"`
	Error      string              `json:"error,omitempty"`
}

type Output struct {
	ID          string                           `json:"id,omitempty"`
	Version     string                           `json:"version"`
	FilterOrder []string                         `json:"filterOrder"`
	PreFilter   map[string]*StatusOut            `json:"preFilter"`
	Filter      map[string]map[string]*StatusOut `json:"filter"`
	Feasible    []string                         `json:"feasible"`
	Score       map[string]*ScoreOut             `json:"score"`
	Total       map[string]int64                 `json:"total"`
	Preemption  *PreemptionOut                   `json:"preemption,omitempty"`
	// Allocations: per feasible node, the devices DynamicResources' Reserve would allocate
	// there to each claim it allocates (claim -> "driver/pool/device@request", in result order).
	Allocations map[string]map[string][]string `json:"allocations,omitempty"`
	// PostFilter: DynamicResources' PostFilter status when no node fits.
	PostFilter *StatusOut `json:"postFilter,omitempty"`
	Error      string     `json:"error,omitempty"`
}

// k8sVersion is set at build time: -ldflags "-X main.k8sVersion=v1.35.4"
var k8sVersion = "unknown"

var defaultFilter = []string{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"}
var defaultScore = []string{"TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "PodTopologySpread", "InterPodAffinity"}

func rl(m map[string]string) v1.ResourceList {
	out := v1.ResourceList{}
	for k, v := range m {
		out[v1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}

func nsOr(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

func podKey(p *v1.Pod) string {
	if p.Namespace == "default" {
		return p.Name
	}
	return p.Namespace + "/" + p.Name
}

var controllerAPI = map[string]string{"ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "ReplicationController": "v1"}

func mkPod(p PodIn, i int) *v1.Pod {
	ns := nsOr(p.Namespace)
	image := p.Image
	if image == "" {
		image = "pause"
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns, UID: types.UID(ns + "/" + p.Name), Labels: p.Labels},
		Spec: v1.PodSpec{
			NodeName:                  p.Node,
			Priority:                  p.Priority,
			PreemptionPolicy:          p.PreemptionPolicy,
			NodeSelector:              p.NodeSelector,
			Affinity:                  p.Affinity,
			Tolerations:               p.Tolerations,
			TopologySpreadConstraints: p.TopologySpreadConstraints,
			Containers: []v1.Container{{Name: "c", Image: image, Ports: p.Ports,
				Resources: v1.ResourceRequirements{Requests: rl(p.Requests)}}},
			InitContainers: p.InitContainers,
			Volumes:        p.Volumes,
		},
	}
	if len(p.ResourceClaims) > 0 {
		setPodClaims(pod, p.ResourceClaims)
	}
	if p.Controller != nil {
		t := true
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: controllerAPI[p.Controller.Kind], Kind: p.Controller.Kind,
			Name: p.Controller.Name, UID: types.UID(ns + "/" + p.Controller.Kind + "/" + p.Controller.Name), Controller: &t}}
	}
	if p.Overhead != nil {
		pod.Spec.Overhead = rl(p.Overhead)
	}
	if p.Resources != nil {
		setPodResources(pod, p.Resources)
	}
	if p.Status != nil {
		// the status as given (an in-place resize's, DRANodeAllocatableResources' claim
		// statuses), with the claims setPodClaims recorded for the template entries
		made := pod.Status.ResourceClaimStatuses
		pod.Status = *p.Status.DeepCopy()
		pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses, made...)
	}
	if p.RestartAll {
		if setRestartAll == nil {
			panic("restartAll needs an oracle of 1.35 or later")
		}
		setRestartAll(&pod.Spec.Containers[0])
	}
	t := metav1.NewTime(metav1.Unix(1700000000+int64(i), 0).Time)
	pod.Status.StartTime = &t
	if p.Terminating {
		d := metav1.NewTime(metav1.Unix(1800000000, 0).Time)
		pod.DeletionTimestamp = &d
	}
	if p.Node != "" {
		pod.Status.Phase = v1.PodRunning
	} else {
		pod.Status.Phase = v1.PodPending
	}
	return pod
}

// Cluster is an Input turned into Kubernetes objects.
type Cluster struct {
	Nodes   []*v1.Node
	Pods    []*v1.Pod
	Pod     *v1.Pod
	Objects []runtime.Object // namespaces and owners, for the fake client
	PDBs    []*policy.PodDisruptionBudget
	// DRA: the device objects (classes, slices, claims; in the fake client's Objects too).
	DRA []runtime.Object
}

func build(in *Input) (*Cluster, error) {
	c := &Cluster{}
	zoneOf := map[string]string{}
	for z, ns := range in.Zones {
		for _, n := range ns {
			zoneOf[n] = z
		}
	}
	for _, n := range in.Nodes {
		labels := map[string]string{"kubernetes.io/hostname": n.Name}
		for k, v := range n.Labels {
			labels[k] = v
		}
		if z, ok := zoneOf[n.Name]; ok {
			labels["topology.kubernetes.io/zone"] = z
		}
		alloc := n.Allocatable
		if alloc == nil { // "unlimited": large but finite
			alloc = map[string]string{"cpu": "1000000", "memory": "1000000Gi", "ephemeral-storage": "1000000Gi", "pods": "110"}
		}
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, UID: types.UID("node/" + n.Name)},
			Spec:       v1.NodeSpec{Taints: n.Taints, Unschedulable: n.Unschedulable},
			Status:     v1.NodeStatus{Allocatable: rl(alloc), Capacity: rl(alloc)},
		}
		for _, im := range n.Images {
			node.Status.Images = append(node.Status.Images, v1.ContainerImage{Names: im.Names, SizeBytes: im.SizeBytes})
		}
		if len(n.DeclaredFeatures) > 0 {
			if setDeclaredFeatures == nil {
				panic("declaredFeatures need an oracle of 1.35 or later")
			}
			setDeclaredFeatures(node, n.DeclaredFeatures)
		}
		c.Nodes = append(c.Nodes, node)
	}
	for i, p := range in.Pods {
		c.Pods = append(c.Pods, mkPod(p, i))
	}
	c.Pod = mkPod(in.Pod, len(in.Pods))
	c.Pod.Spec.NodeName = ""
	c.Pod.Status.Phase = v1.PodPending

	namespaces := map[string]bool{}
	for _, n := range in.Namespaces {
		namespaces[n.Name] = true
		c.Objects = append(c.Objects, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}})
	}
	for _, p := range append(append([]*v1.Pod{}, c.Pods...), c.Pod) {
		if !namespaces[p.Namespace] {
			namespaces[p.Namespace] = true
			c.Objects = append(c.Objects, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}})
		}
	}
	for _, o := range in.Owners {
		ns := nsOr(o.Namespace)
		meta := metav1.ObjectMeta{Name: o.Name, Namespace: ns, UID: types.UID(ns + "/" + o.Kind + "/" + o.Name)}
		switch o.Kind {
		case "Service", "ReplicationController":
			var sel map[string]string
			if len(o.Selector) > 0 {
				if err := json.Unmarshal(o.Selector, &sel); err != nil {
					return nil, fmt.Errorf("owner %s: %v", o.Name, err)
				}
			}
			if o.Kind == "Service" {
				c.Objects = append(c.Objects, &v1.Service{ObjectMeta: meta, Spec: v1.ServiceSpec{Selector: sel}})
			} else {
				c.Objects = append(c.Objects, &v1.ReplicationController{ObjectMeta: meta, Spec: v1.ReplicationControllerSpec{Selector: sel}})
			}
		case "ReplicaSet", "StatefulSet":
			var sel *metav1.LabelSelector
			if len(o.Selector) > 0 {
				if err := json.Unmarshal(o.Selector, &sel); err != nil {
					return nil, fmt.Errorf("owner %s: %v", o.Name, err)
				}
			}
			c.Objects = append(c.Objects, appsObject(o.Kind, meta, sel))
		default:
			return nil, fmt.Errorf("owner %s: unknown kind %q", o.Name, o.Kind)
		}
	}
	for i, raw := range in.Storage {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("storage[%d]: %v", i, err)
		}
		c.Objects = append(c.Objects, obj)
	}
	if err := buildDevices(in, c); err != nil {
		return nil, err
	}
	for _, p := range in.PDBs {
		ns := nsOr(p.Namespace)
		one := intstr.FromInt(1)
		c.PDBs = append(c.PDBs, &policy.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns},
			Spec:       policy.PodDisruptionBudgetSpec{Selector: p.Selector, MinAvailable: &one},
			Status:     policy.PodDisruptionBudgetStatus{DisruptionsAllowed: p.DisruptionsAllowed},
		})
	}
	if in.Filter == nil {
		in.Filter = defaultFilter
	}
	if in.Score == nil {
		in.Score = defaultScore
	}
	return c, nil
}

func appsObject(kind string, meta metav1.ObjectMeta, sel *metav1.LabelSelector) runtime.Object {
	if kind == "ReplicaSet" {
		return &apps.ReplicaSet{ObjectMeta: meta, Spec: apps.ReplicaSetSpec{Selector: sel}}
	}
	return &apps.StatefulSet{ObjectMeta: meta, Spec: apps.StatefulSetSpec{Selector: sel}}
}

// imageStates: per image name, the size the scheduler cache records (that of the first node
// reporting the name, in node order: the cache keeps the size of the node added first) and
// the number of nodes reporting it. cache.NewSnapshot, a test helper, would use each node's
// own size instead.
func imageStates(nodes []*v1.Node) (map[string]int64, map[string]int) {
	sizes, counts := map[string]int64{}, map[string]int{}
	for _, n := range nodes {
		seen := map[string]bool{}
		for _, im := range n.Status.Images {
			for _, name := range im.Names {
				if _, ok := sizes[name]; !ok {
					sizes[name] = im.SizeBytes
				}
				if !seen[name] {
					seen[name] = true
					counts[name]++
				}
			}
		}
	}
	return sizes, counts
}

// fillInformers puts the cluster's objects straight into the informers' stores: the listers
// the plugins hold read them there, with no informer running (much faster than a fake
// client's watch).
func fillInformers(f informers.SharedInformerFactory, c *Cluster) {
	add := func(inf cache.SharedIndexInformer, obj interface{}) { must(inf.GetIndexer().Add(obj)) }
	for _, o := range c.Objects {
		switch x := o.(type) {
		case *v1.Namespace:
			add(f.Core().V1().Namespaces().Informer(), x)
		case *v1.Service:
			add(f.Core().V1().Services().Informer(), x)
		case *v1.ReplicationController:
			add(f.Core().V1().ReplicationControllers().Informer(), x)
		case *apps.ReplicaSet:
			add(f.Apps().V1().ReplicaSets().Informer(), x)
		case *apps.StatefulSet:
			add(f.Apps().V1().StatefulSets().Informer(), x)
		case *v1.PersistentVolume:
			add(f.Core().V1().PersistentVolumes().Informer(), x)
		case *v1.PersistentVolumeClaim:
			add(f.Core().V1().PersistentVolumeClaims().Informer(), x)
		case *storage.StorageClass:
			add(f.Storage().V1().StorageClasses().Informer(), x)
		case *storage.CSINode:
			add(f.Storage().V1().CSINodes().Informer(), x)
		case *storage.CSIDriver:
			add(f.Storage().V1().CSIDrivers().Informer(), x)
		case *storage.VolumeAttachment:
			add(f.Storage().V1().VolumeAttachments().Informer(), x)
		default:
			addCapacity(f, o, add) // storage/v1 from 1.24, v1beta1 in 1.23: capacity_*.go
		}
	}
	for _, p := range c.Pods {
		add(f.Core().V1().Pods().Informer(), p)
	}
	add(f.Core().V1().Pods().Informer(), c.Pod)
	for _, p := range c.PDBs {
		add(f.Policy().V1().PodDisruptionBudgets().Informer(), p)
	}
	for _, n := range c.Nodes {
		add(f.Core().V1().Nodes().Informer(), n)
	}
}

// syncAssumeCaches runs the PersistentVolume and PersistentVolumeClaim informers until they
// have listed the fake client's objects: before 1.35 VolumeBinding's assume caches keep
// their own stores, filled only by informer events (1.35's read the informers' indexers).
func syncAssumeCaches(ctx context.Context, f informers.SharedInformerFactory) {
	for _, inf := range []cache.SharedIndexInformer{f.Core().V1().PersistentVolumes().Informer(),
		f.Core().V1().PersistentVolumeClaims().Informer()} {
		go inf.Run(ctx.Done())
		cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	}
}

func sortedKeys(m map[string][]string) {
	for k := range m {
		sort.Strings(m[k])
	}
}

// panicSite names the function that panicked and its caller (called from the deferred
// recover, whose goroutine's stack still holds the panicking frames, after "panic(").
func panicSite() string {
	lines := strings.Split(string(debug.Stack()), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "panic(") {
			continue
		}
		var names []string
		for j := i + 2; j < len(lines) && len(names) < 2; j += 2 {
			name := lines[j]
			if k := strings.LastIndex(name, "("); k > 0 {
				name = name[:k]
			}
			names = append(names, name)
		}
		return strings.Join(names, " <- ")
	}
	return "?"
}

func runOne(data []byte) (out *Output) {
	var in Input
	defer func() {
		if r := recover(); r != nil {
			out = &Output{ID: in.ID, Version: version, Error: fmt.Sprintf("panic: %v (in %s)", r, panicSite())}
		}
	}()
	if err := json.Unmarshal(data, &in); err != nil {
		return &Output{Version: version, Error: err.Error()}
	}
	if len(in.FeatureGates) > 0 {
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(in.FeatureGates); err != nil {
			return &Output{ID: in.ID, Version: version, Error: "featureGates: " + err.Error()}
		}
	}
	c, err := build(&in)
	if err != nil {
		return &Output{ID: in.ID, Version: version, Error: err.Error()}
	}
	out = run(&in, c)
	out.ID = in.ID
	if out.Preemption != nil {
		sortedKeys(out.Preemption.Candidates)
		sort.Strings(out.Preemption.Victims)
	}
	sort.Strings(out.Feasible)
	return out
}

func main() {
	setup()
	if len(os.Args) == 2 && os.Args[1] == "-jsonl" {
		r := bufio.NewReaderSize(os.Stdin, 1<<20)
		w := bufio.NewWriter(os.Stdout)
		enc := json.NewEncoder(w)
		for {
			line, err := r.ReadBytes('\n')
			if len(strings.TrimSpace(string(line))) > 0 {
				must(enc.Encode(runOne(line)))
				must(w.Flush())
			}
			if err != nil {
				break
			}
		}
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kspread-oracle INPUT.json | kspread-oracle -jsonl < lines")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	must(err)
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	must(enc.Encode(runOne(data)))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
