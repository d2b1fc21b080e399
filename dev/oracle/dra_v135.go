//go:build !v133 && !legacy

// DynamicResources for 1.34 and later (resource.k8s.io/v1): the DRA manager built as
// scheduler.New builds it (an assume cache on the ResourceClaim informer, the
// ResourceSlice tracker, with DeviceTaintRules when 1.35's gate is on, the DeviceClass lister), wrapped so
// that the claims Reserve would allocate are recorded instead of becoming in-flight
// allocations.
package main

import (
	"context"
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

type recordingTracker struct {
	fResourceClaimTracker
	got map[string][]string
}

// SignalClaimPendingAllocation records the claim's allocation (Reserve's result) and
// leaves the tracker's in-flight allocations alone: the oracle reserves on every
// feasible node in turn.
func (t *recordingTracker) SignalClaimPendingAllocation(_ types.UID, claim *resourceapi.ResourceClaim) error {
	var devs []string
	if claim.Status.Allocation != nil {
		for _, r := range claim.Status.Allocation.Devices.Results {
			devs = append(devs, r.Driver+"/"+r.Pool+"/"+r.Device+"@"+r.Request)
		}
	}
	t.got[claim.Namespace+"/"+claim.Name] = devs
	return nil
}

type recordingManager struct {
	fSharedDRAManager
	rt *recordingTracker
}

func (m *recordingManager) ResourceClaims() fResourceClaimTracker { return m.rt }

type draRun struct{ rec *recordingTracker }

func draOptions(ctx context.Context, f informers.SharedInformerFactory, client kubernetes.Interface, c *Cluster) ([]frameworkruntime.Option, *draRun) {
	if !utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		return nil, nil
	}
	logger := klog.FromContext(ctx)
	claimInformer := f.Resource().V1().ResourceClaims().Informer()
	claimCache := assumecache.NewAssumeCache(logger, claimInformer, "ResourceClaim", "", nil)
	trackerOpts, rules := trackerOptions(f, client)
	tracker, err := resourceslicetracker.StartTracker(ctx, trackerOpts)
	must(err)
	mgr := dynamicresources.NewDRAManager(ctx, claimCache, tracker, f)
	for _, o := range c.DRA {
		switch x := o.(type) {
		case *resourceapi.DeviceClass:
			if !rules { // with rules the informers list them from the fake client
				must(f.Resource().V1().DeviceClasses().Informer().GetIndexer().Add(x))
			}
		case *resourceapi.ResourceSlice:
			if !rules {
				must(f.Resource().V1().ResourceSlices().Informer().GetIndexer().Add(x))
			}
		case *resourceapi.ResourceClaim:
			must(claimInformer.GetIndexer().Add(x))
			assumecache.AddTestObject(claimCache, x) // delivers the event (allocated devices) at once
		default:
			if !rules || !isTaintRule(o) {
				panic(fmt.Sprintf("devices: %T: this release's scheduler reads resource.k8s.io/v1", o))
			}
		}
	}
	if rules {
		syncTracker(ctx, f, tracker)
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.DRAExtendedResource) {
		extendedResourceClasses(mgr, c)
	}
	rt := &recordingTracker{fResourceClaimTracker: mgr.ResourceClaims(), got: map[string][]string{}}
	return []frameworkruntime.Option{frameworkruntime.WithSharedDRAManager(&recordingManager{mgr, rt})}, &draRun{rt}
}

type reservePlugin interface {
	Reserve(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status
}

type postFilterPlugin interface {
	PostFilter(context.Context, fwk.CycleState, *v1.Pod, fNodeToStatusReader) (*fPostFilterResult, *fwk.Status)
}

// allocations: Reserve on each node, recording the claims it allocates there.
func (d *draRun) allocations(ctx context.Context, pl fPlugin, state fwk.CycleState, pod *v1.Pod, nodes []string) (map[string]map[string][]string, string) {
	rp, ok := pl.(reservePlugin)
	if d == nil || !ok {
		return nil, ""
	}
	out := map[string]map[string][]string{}
	for _, n := range nodes {
		d.rec.got = map[string][]string{}
		if s := rp.Reserve(ctx, state, pod, n); !s.IsSuccess() {
			return out, "Reserve on " + n + ": " + s.Message()
		}
		if len(d.rec.got) > 0 {
			out[n] = d.rec.got
		}
	}
	return out, ""
}

func (d *draRun) postFilter(ctx context.Context, pl fPlugin, state fwk.CycleState, pod *v1.Pod) *StatusOut {
	pp, ok := pl.(postFilterPlugin)
	if d == nil || !ok {
		return nil
	}
	_, s := pp.PostFilter(ctx, state, pod, framework.NewDefaultNodeToStatus())
	return st(s)
}

// extendedResourceClasses gives the DRA manager's extended resource cache (its
// DeviceClassResolver, which NodeResourcesFit, BalancedAllocation and DynamicResources ask
// which class backs an extended resource) the case's DeviceClasses: scheduler.New chains
// the cache before the DeviceClass informer's handlers (eventhandlers.go), and the oracle
// puts the classes straight into the informer's store, which delivers no event. Called by
// name: the method's result type moved between releases.
func extendedResourceClasses(mgr any, c *Cluster) {
	m := reflect.ValueOf(mgr).MethodByName("DeviceClassResolver")
	if !m.IsValid() {
		return
	}
	cache, ok := m.Call(nil)[0].Interface().(interface {
		OnAdd(obj interface{}, isInInitialList bool)
	})
	if !ok {
		panic("devices: the DRA manager's DeviceClassResolver takes no informer events")
	}
	for _, o := range c.DRA {
		if x, ok := o.(*resourceapi.DeviceClass); ok {
			cache.OnAdd(x, true)
		}
	}
}
