//go:build legacy

// The scheduling part for upstream 1.23-1.31 (pkg/scheduler/framework concrete types,
// internal/cache: this package is built from inside the vendored k8s.io/kubernetes tree,
// see dev/README.md; Score by node name). What differs inside the family is in shim_*.go.
package main

import (
	"context"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/internal/cache"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
)

var version = "k8s.io/kubernetes " + k8sVersion + " (vendored)"

var defaultArgs = map[string]runtime.Object{}
var defaultWeights = map[string]int32{}

func setup() {
	schedmetrics.Register()
	cfg, err := latest.Default()
	must(err)
	prof := cfg.Profiles[0]
	for _, pc := range prof.PluginConfig {
		defaultArgs[pc.Name] = pc.Args
	}
	for _, p := range prof.Plugins.MultiPoint.Enabled {
		defaultWeights[p.Name] = p.Weight
	}
	for _, p := range prof.Plugins.Score.Enabled {
		defaultWeights[p.Name] = p.Weight
	}
}

func st(s *framework.Status) *StatusOut {
	if s == nil {
		return &StatusOut{Code: "Success"}
	}
	return &StatusOut{Code: s.Code().String(), Reasons: s.Reasons(), Plugin: statusPlugin(s)}
}

func run(in *Input, c *Cluster) *Output {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snapshot := cache.NewSnapshot(c.Pods, c.Nodes)
	infos, err := snapshot.NodeInfos().List()
	must(err)
	sizes, counts := imageStates(c.Nodes)
	for _, ni := range infos {
		ni.ImageStates = map[string]*framework.ImageStateSummary{}
		for _, im := range ni.Node().Status.Images {
			for _, name := range im.Names {
				ni.ImageStates[name] = &framework.ImageStateSummary{Size: sizes[name], NumNodes: counts[name]}
			}
		}
	}
	client := fake.NewSimpleClientset(c.Objects...)
	informerFactory := informers.NewSharedInformerFactory(client, 0)
	opts := []frameworkruntime.Option{
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithInformerFactory(informerFactory),
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithPodNominator(nominator{}),
	}
	draOpts, dra := draOptions(ctx, informerFactory, client, c)
	opts = append(opts, draOpts...)
	fh, err := newFramework(ctx, nil, nil, opts...)
	must(err)

	registry := plugins.NewInTreeRegistry()
	instances := map[string]framework.Plugin{}
	out := &Output{Version: version, PreFilter: map[string]*StatusOut{}, Filter: map[string]map[string]*StatusOut{},
		Score: map[string]*ScoreOut{}, Total: map[string]int64{}}
	args, err := caseArgs(in)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	for _, name := range append(append([]string{}, in.Filter...), in.Score...) {
		if _, ok := instances[name]; ok {
			continue
		}
		f, ok := registry[name]
		if !ok {
			out.Error = "unknown plugin " + name
			return out
		}
		p, err := callFactory(f, ctx, args[name], fh)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		instances[name] = p
	}
	// DefaultPreemption runs in a framework that has the filter plugins (its dry run calls them).
	var dp *defaultpreemption.DefaultPreemption
	var pfw framework.Framework
	if in.Preempt {
		reg := frameworkruntime.Registry{}
		for k, v := range registry {
			reg[k] = v
		}
		reg[defaultpreemption.Name] = wrapFactory(registry[defaultpreemption.Name], func(p framework.Plugin) {
			dp = p.(*defaultpreemption.DefaultPreemption)
		})
		plugs := &config.Plugins{QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: "PrioritySort"}}},
			Bind:       config.PluginSet{Enabled: []config.Plugin{{Name: "DefaultBinder"}}},
			PostFilter: config.PluginSet{Enabled: []config.Plugin{{Name: defaultpreemption.Name}}}}
		for _, name := range in.Filter {
			if _, ok := instances[name].(framework.PreFilterPlugin); ok {
				plugs.PreFilter.Enabled = append(plugs.PreFilter.Enabled, config.Plugin{Name: name})
			}
			if _, ok := instances[name].(framework.FilterPlugin); ok {
				plugs.Filter.Enabled = append(plugs.Filter.Enabled, config.Plugin{Name: name})
			}
		}
		var pcs []config.PluginConfig
		for name, a := range args {
			pcs = append(pcs, config.PluginConfig{Name: name, Args: a})
		}
		prof := &config.KubeSchedulerProfile{SchedulerName: "default-scheduler", Plugins: plugs, PluginConfig: pcs}
		pfw, err = newFramework(ctx, reg, prof, opts...)
		if err != nil {
			out.Error = "preemption framework: " + err.Error()
			return out
		}
	}
	fillInformers(informerFactory, c)
	syncAssumeCaches(ctx, informerFactory)

	pod := c.Pod
	allNodes, err := snapshot.NodeInfos().List()
	must(err)
	out.FilterOrder = in.Filter
	state := framework.NewCycleState()
	feasible := map[string]bool{}
	nodeStatus := map[string]*framework.Status{} // the scheduler's status per node: the first rejection
	for _, n := range allNodes {
		feasible[n.Node().Name] = true
	}
	reject := func(node string, s *framework.Status) {
		feasible[node] = false
		if _, ok := nodeStatus[node]; !ok {
			nodeStatus[node] = s
		}
	}
	for _, name := range in.Filter {
		pl := instances[name]
		fp, ok := pl.(framework.FilterPlugin)
		if !ok {
			continue
		}
		skip := false
		if pfp, ok := pl.(framework.PreFilterPlugin); ok {
			res, s := preFilter(pfp, ctx, state, pod)
			so := st(s)
			out.PreFilter[name] = so
			if isSkip(s) {
				skip = true
			} else if !s.IsSuccess() {
				out.Filter[name] = map[string]*StatusOut{}
				for _, n := range allNodes {
					out.Filter[name][n.Node().Name] = so
					reject(n.Node().Name, s)
				}
				continue
			}
			if res != nil {
				for _, n := range allNodes {
					if !res(n.Node().Name) {
						reject(n.Node().Name, framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) ["+name+"]"))
					}
				}
			}
		}
		out.Filter[name] = map[string]*StatusOut{}
		for _, n := range allNodes {
			if skip {
				out.Filter[name][n.Node().Name] = &StatusOut{Code: "Skip"}
				continue
			}
			if name == "DynamicResources" && !feasible[n.Node().Name] {
				// its Filter keeps state (the claims unavailable on a node, which PostFilter
				// deallocates): as the framework, it runs only where every plugin before it passed
				continue
			}
			s := fp.Filter(ctx, state, pod, n)
			out.Filter[name][n.Node().Name] = st(s)
			if !s.IsSuccess() {
				reject(n.Node().Name, s)
			}
		}
	}
	var feasibleNodes []*framework.NodeInfo
	out.Feasible = []string{}
	for _, n := range allNodes {
		if feasible[n.Node().Name] {
			feasibleNodes = append(feasibleNodes, n)
			out.Feasible = append(out.Feasible, n.Node().Name)
			out.Total[n.Node().Name] = 0
		}
	}
	if len(feasibleNodes) > 0 {
		for _, name := range in.Score {
			pl := instances[name]
			sp, ok := pl.(framework.ScorePlugin)
			if !ok {
				continue
			}
			w := defaultWeights[name]
			if w == 0 {
				w = 1
			}
			so := &ScoreOut{Weight: w}
			out.Score[name] = so
			if psp, ok := pl.(framework.PreScorePlugin); ok {
				s := preScore(psp, ctx, state, pod, feasibleNodes)
				so.PreScore = st(s)
				if isSkip(s) {
					continue
				}
				if !s.IsSuccess() {
					so.Error = s.Message()
					continue
				}
			}
			so.Raw, so.Normalized, so.Weighted = map[string]int64{}, map[string]int64{}, map[string]int64{}
			list := make(framework.NodeScoreList, 0, len(feasibleNodes))
			for _, n := range feasibleNodes {
				sc, s := sp.Score(ctx, state, pod, n.Node().Name)
				if !s.IsSuccess() {
					so.Error = s.Message()
				}
				so.Raw[n.Node().Name] = sc
				list = append(list, framework.NodeScore{Name: n.Node().Name, Score: sc})
			}
			if ext := sp.ScoreExtensions(); ext != nil {
				if s := ext.NormalizeScore(ctx, state, pod, list); !s.IsSuccess() {
					so.Error = s.Message()
				}
			}
			for _, ns := range list {
				so.Normalized[ns.Name] = ns.Score
				so.Weighted[ns.Name] = ns.Score * int64(w)
				out.Total[ns.Name] += ns.Score * int64(w)
			}
		}
		if pl, ok := instances["DynamicResources"]; ok {
			var msg string
			out.Allocations, msg = dra.allocations(ctx, pl, pod, feasibleNodes)
			if msg != "" {
				out.Error = msg
			}
		}
	} else {
		if pl, ok := instances["DynamicResources"]; ok {
			out.PostFilter = dra.postFilter(ctx, pl, state, pod)
		}
		if in.Preempt {
			out.Preemption = preempt(ctx, pfw, dp, pod, allNodes, nodeStatus, c)
		}
	}
	return out
}

func preempt(ctx context.Context, pfw framework.Framework, dp *defaultpreemption.DefaultPreemption, pod *v1.Pod,
	allNodes []*framework.NodeInfo, nodeStatus map[string]*framework.Status, c *Cluster) *PreemptionOut {
	po := &PreemptionOut{Candidates: map[string][]string{}}
	if dp == nil {
		po.Error = "DefaultPreemption was not instantiated"
		return po
	}
	ok, msg := eligible(dp, pod)
	po.Eligible, po.Reason = ok, msg
	if !ok {
		return po
	}
	var potential []*framework.NodeInfo
	for _, n := range allNodes {
		if s := nodeStatus[n.Node().Name]; s != nil && s.Code() == framework.Unschedulable {
			potential = append(potential, n)
		}
	}
	if len(potential) == 0 {
		return po
	}
	state := framework.NewCycleState()
	if s := runPreFilter(pfw, ctx, state, pod); !s.IsSuccess() && !isSkip(s) {
		po.Error = "PreFilter: " + s.Message()
		return po
	}
	_, num := dp.GetOffsetAndNumCandidates(int32(len(potential)))
	ev := &preemption.Evaluator{PluginName: defaultpreemption.Name, Handler: pfw, State: state, Interface: dp}
	cands, _, err := ev.DryRunPreemption(ctx, pod, potential, c.PDBs, 0, num)
	if err != nil {
		po.Error = err.Error()
	}
	for _, cd := range cands {
		var names []string
		for _, p := range cd.Victims().Pods {
			names = append(names, podKey(p))
		}
		po.Candidates[cd.Name()] = names
	}
	if best := selectCandidate(ev, ctx, cands); best != nil {
		po.Node = best.Name()
		for _, p := range best.Victims().Pods {
			po.Victims = append(po.Victims, podKey(p))
		}
	}
	sort.Strings(po.Victims)
	return po
}
