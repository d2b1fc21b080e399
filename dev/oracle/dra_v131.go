//go:build legacy && v131

// DynamicResources for 1.31 (resource.k8s.io/v1alpha3, structured parameters; the plugin
// also runs classic DRA, which the claims here, without a controller, do not use): the
// ResourceClaim assume cache scheduler.New gives the framework, the objects in the
// informers' stores. 1.31's plugin keeps its allocations (Reserve's in-flight claims, the
// Filter's per-node results) to itself, so the oracle finds what Reserve allocates on a
// node by running the plugin's PreFilter, Filter, Reserve and PreBind on that node in a
// cycle of its own: PreBind writes each allocated claim through the client, where a
// reactor records it (and stores nothing); the assume cache is then restored.
package main

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1alpha3"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

type draRun struct {
	cache  *assumecache.AssumeCache
	claims []string            // ns/name of every claim
	before map[string]bool     // claims allocated in the input
	got    map[string][]string // claim -> devices, written by PreBind
}

func draOptions(ctx context.Context, f informers.SharedInformerFactory, client kubernetes.Interface, c *Cluster) ([]frameworkruntime.Option, *draRun) {
	if !utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		return nil, nil
	}
	logger := klog.FromContext(ctx)
	claimInformer := f.Resource().V1alpha3().ResourceClaims().Informer()
	claimCache := assumecache.NewAssumeCache(logger, claimInformer, "ResourceClaim", "", nil)
	d := &draRun{cache: claimCache, before: map[string]bool{}, got: map[string][]string{}}
	for _, o := range c.DRA {
		switch x := o.(type) {
		case *resourceapi.DeviceClass:
			must(f.Resource().V1alpha3().DeviceClasses().Informer().GetIndexer().Add(x))
		case *resourceapi.ResourceSlice:
			must(f.Resource().V1alpha3().ResourceSlices().Informer().GetIndexer().Add(x))
		case *resourceapi.ResourceClaim:
			must(claimInformer.GetIndexer().Add(x))
			assumecache.AddTestObject(claimCache, x)
			key := x.Namespace + "/" + x.Name
			d.claims = append(d.claims, key)
			d.before[key] = x.Status.Allocation != nil
		default:
			panic(fmt.Sprintf("devices: %T: this release's scheduler reads resource.k8s.io/v1alpha3", o))
		}
	}
	fc := client.(*fake.Clientset)
	// claim updates (PreBind's finalizer and status, PostFilter's deallocation, Unreserve's
	// patch) are answered with the object sent and change nothing; a status update with
	// an allocation the input did not have is recorded.
	fc.PrependReactor("*", "resourceclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		u, ok := a.(k8stesting.UpdateAction)
		if !ok {
			return a.GetVerb() == "patch", nil, nil
		}
		claim := u.GetObject().(*resourceapi.ResourceClaim)
		key := claim.Namespace + "/" + claim.Name
		if u.GetSubresource() == "status" && claim.Status.Allocation != nil && !d.before[key] {
			devs := []string{}
			for _, r := range claim.Status.Allocation.Devices.Results {
				devs = append(devs, r.Driver+"/"+r.Pool+"/"+r.Device+"@"+r.Request)
			}
			d.got[key] = devs
		}
		return true, claim, nil
	})
	return []frameworkruntime.Option{frameworkruntime.WithResourceClaimCache(claimCache)}, d
}

type nodePlugin interface {
	framework.PreFilterPlugin
	framework.FilterPlugin
	Reserve(context.Context, *framework.CycleState, *v1.Pod, string) *framework.Status
	Unreserve(context.Context, *framework.CycleState, *v1.Pod, string)
	PreBind(context.Context, *framework.CycleState, *v1.Pod, string) *framework.Status
}

// allocations: per feasible node, a cycle of the plugin alone up to PreBind, recording
// the claims allocated there.
func (d *draRun) allocations(ctx context.Context, pl framework.Plugin, pod *v1.Pod, nodes []*framework.NodeInfo) (map[string]map[string][]string, string) {
	np, ok := pl.(nodePlugin)
	if d == nil || !ok {
		return nil, ""
	}
	out := map[string]map[string][]string{}
	for _, n := range nodes {
		name := n.Node().Name
		var msg string
		// the node passed the cycle's Filter; the allocator takes pools in a new (map)
		// order at every call, so where the order decides, this cycle's Filter may fail
		// (a constraint, v1.31.8's "stop allocation" after an All request): try again
		for try := 0; try < 50; try++ {
			var skip, again bool
			msg, skip, again = d.cycle(ctx, np, pod, n)
			if skip || !again {
				break
			}
		}
		if msg != "" {
			return out, msg
		}
		if len(d.got) > 0 {
			out[name] = d.got
		}
	}
	return out, ""
}

// cycle runs the plugin on one node up to PreBind; again: its Filter failed.
func (d *draRun) cycle(ctx context.Context, np nodePlugin, pod *v1.Pod, n *framework.NodeInfo) (msg string, skip, again bool) {
	name := n.Node().Name
	state := framework.NewCycleState()
	d.got = map[string][]string{}
	if _, s := np.PreFilter(ctx, state, pod); s.IsSkip() {
		return "", true, false
	} else if !s.IsSuccess() {
		msg = "PreFilter again: " + s.Message()
	} else if s := np.Filter(ctx, state, pod, n); !s.IsSuccess() {
		msg, again = "Filter again on "+name+": "+s.Message(), true
	} else if s := np.Reserve(ctx, state, pod, name); !s.IsSuccess() {
		msg = "Reserve on " + name + ": " + s.Message()
	} else if s := np.PreBind(ctx, state, pod, name); !s.IsSuccess() {
		msg = "PreBind on " + name + ": " + s.Message()
	}
	np.Unreserve(ctx, state, pod, name)
	for _, k := range d.claims {
		d.cache.Restore(k)
	}
	return msg, false, again
}

type postFilterPlugin interface {
	PostFilter(context.Context, *framework.CycleState, *v1.Pod, framework.NodeToStatusMap) (*framework.PostFilterResult, *framework.Status)
}

func (d *draRun) postFilter(ctx context.Context, pl framework.Plugin, state *framework.CycleState, pod *v1.Pod) *StatusOut {
	pp, ok := pl.(postFilterPlugin)
	if d == nil || !ok {
		return nil
	}
	_, s := pp.PostFilter(ctx, state, pod, framework.NodeToStatusMap{})
	return st(s)
}
