//go:build v133

// DynamicResources for 1.32 and 1.33 (resource.k8s.io/v1beta1): the DRA manager built as
// scheduler.New builds it (an assume cache on the ResourceClaim informer, the
// ResourceSlice lister (1.32) or tracker without device taint rules (1.33: dra_mgr_*.go),
// the DeviceClass lister), wrapped so
// that the claims Reserve would allocate are recorded instead of becoming in-flight
// allocations.
package main

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

type recordingTracker struct {
	framework.ResourceClaimTracker
	got map[string][]string
}

// SignalClaimPendingAllocation records the claim's allocation (Reserve's result) and
// leaves the tracker's in-flight allocations alone: the oracle reserves on every
// feasible node in turn.
func (t *recordingTracker) SignalClaimPendingAllocation(_ types.UID, claim *resourceapi.ResourceClaim) error {
	devs := []string{} // an allocation without devices (an All request that matched none, up to 1.32) is []
	if claim.Status.Allocation != nil {
		for _, r := range claim.Status.Allocation.Devices.Results {
			devs = append(devs, r.Driver+"/"+r.Pool+"/"+r.Device+"@"+r.Request)
		}
	}
	t.got[claim.Namespace+"/"+claim.Name] = devs
	return nil
}

type recordingManager struct {
	framework.SharedDRAManager
	rt *recordingTracker
}

func (m *recordingManager) ResourceClaims() framework.ResourceClaimTracker { return m.rt }

type draRun struct{ rec *recordingTracker }

func draOptions(ctx context.Context, f informers.SharedInformerFactory, client kubernetes.Interface, c *Cluster) ([]frameworkruntime.Option, *draRun) {
	if !utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		return nil, nil
	}
	logger := klog.FromContext(ctx)
	claimInformer := f.Resource().V1beta1().ResourceClaims().Informer()
	claimCache := assumecache.NewAssumeCache(logger, claimInformer, "ResourceClaim", "", nil)
	mgr := newDRAManager(ctx, claimCache, f, client)
	for _, o := range c.DRA {
		switch x := o.(type) {
		case *resourceapi.DeviceClass:
			must(f.Resource().V1beta1().DeviceClasses().Informer().GetIndexer().Add(x))
		case *resourceapi.ResourceSlice:
			must(f.Resource().V1beta1().ResourceSlices().Informer().GetIndexer().Add(x))
		case *resourceapi.ResourceClaim:
			must(claimInformer.GetIndexer().Add(x))
			assumecache.AddTestObject(claimCache, x) // delivers the event (allocated devices) at once
		default:
			panic(fmt.Sprintf("devices: %T: this release's scheduler reads resource.k8s.io/v1beta1", o))
		}
	}
	rt := &recordingTracker{ResourceClaimTracker: mgr.ResourceClaims(), got: map[string][]string{}}
	return []frameworkruntime.Option{frameworkruntime.WithSharedDRAManager(&recordingManager{mgr, rt})}, &draRun{rt}
}

type reservePlugin interface {
	Reserve(context.Context, *framework.CycleState, *v1.Pod, string) *framework.Status
}

type postFilterPlugin interface {
	PostFilter(context.Context, *framework.CycleState, *v1.Pod, framework.NodeToStatusReader) (*framework.PostFilterResult, *framework.Status)
}

// allocations: Reserve on each node, recording the claims it allocates there.
func (d *draRun) allocations(ctx context.Context, pl framework.Plugin, state *framework.CycleState, pod *v1.Pod, nodes []string) (map[string]map[string][]string, string) {
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

func (d *draRun) postFilter(ctx context.Context, pl framework.Plugin, state *framework.CycleState, pod *v1.Pod) *StatusOut {
	pp, ok := pl.(postFilterPlugin)
	if d == nil || !ok {
		return nil
	}
	_, s := pp.PostFilter(ctx, state, pod, framework.NewDefaultNodeToStatus())
	return st(s)
}
