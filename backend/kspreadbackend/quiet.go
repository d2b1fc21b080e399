package kspreadbackend

// Waiting on the scheduler's own signals instead of sleeping. Every write to the fake API goes
// through a tracker that counts it per resource; every informer the scheduler takes from the
// factory counts, per resource, the events it delivered and, per handler registered on it, the
// events that handler has finished. The cluster is quiet when every write has been delivered and
// every handler (the scheduler's cache and queue, the assume caches of the volume and DRA
// plugins, this package's emulated controllers) has handled it: what the next scheduling cycle
// would see is then what the writes so far made.

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/apps"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/policy"
	"k8s.io/client-go/informers/resource"
	"k8s.io/client-go/informers/scheduling"
	"k8s.io/client-go/informers/storage"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// counts is the bookkeeping shared by the tracker and the informers.
type counts struct {
	mu sync.Mutex
	// writes: successful writes per resource (each makes one watch event)
	writes map[schema.GroupVersionResource]int64
	// informers: per resource, the counting informer the scheduler was handed
	informers map[schema.GroupVersionResource]*countedInformer
	// all: every informer handed out, by resource
	all map[schema.GroupVersionResource]cache.SharedIndexInformer
	// watching: the resources whose watch the tracker has registered (an object created after an
	// informer's list and before its watch would never reach it: the fake replays nothing)
	watching map[schema.GroupVersionResource]bool
	// deleted: the pods deleted, in order ("ns/name" as kspread names them)
	deleted []string
}

func newCounts() *counts {
	return &counts{writes: map[schema.GroupVersionResource]int64{},
		informers: map[schema.GroupVersionResource]*countedInformer{},
		all:       map[schema.GroupVersionResource]cache.SharedIndexInformer{},
		watching:  map[schema.GroupVersionResource]bool{}}
}

func (c *counts) wrote(gvr schema.GroupVersionResource) {
	c.mu.Lock()
	c.writes[gvr]++
	c.mu.Unlock()
}

// quiet: every write delivered by its informer and handled by every handler registered there.
func (c *counts) quiet() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for gvr, inf := range c.informers {
		seen := inf.seen.Load()
		if seen != c.writes[gvr] {
			return false
		}
		inf.mu.Lock()
		for _, h := range inf.handlers {
			if h.done.Load() != seen {
				inf.mu.Unlock()
				return false
			}
		}
		inf.mu.Unlock()
	}
	return true
}

// pending: what is not quiet yet, for an error message ("pods: 3 writes, 2 delivered, a handler
// has handled 1").
func (c *counts) pending() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []string{}
	for gvr, inf := range c.informers {
		seen := inf.seen.Load()
		inf.mu.Lock()
		for _, h := range inf.handlers {
			if d := h.done.Load(); d != seen || seen != c.writes[gvr] {
				out = append(out, fmt.Sprintf("%s: %d writes, %d delivered, a handler has handled %d",
					gvr.Resource, c.writes[gvr], seen, d))
			}
		}
		inf.mu.Unlock()
		if seen != c.writes[gvr] && len(inf.handlers) == 0 {
			out = append(out, fmt.Sprintf("%s: %d writes, %d delivered", gvr.Resource, c.writes[gvr], seen))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func (c *counts) deletedSince(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.deleted[n:]...)
}

func (c *counts) deletedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.deleted)
}

// podGone: a pod was deleted (from the tracker's Delete): it is recorded, and its claims are
// released (with devices); the claims it owned go (ephemeral.go).
func (t *countingTracker) podGone(ns, name string) {
	t.c.mu.Lock()
	t.c.deleted = append(t.c.deleted, podKey(ns, name))
	t.c.mu.Unlock()
	if dra != nil {
		t.controllerFailed(dra.podDeleted(t, ns, name, ""))
	}
	t.controllerFailed(t.ephemeralPodGone(ns, name))
}

// countingTracker is the fake clientset's object tracker, counting its successful writes.
type countingTracker struct {
	clienttesting.ObjectTracker
	c *counts
	// rv: the last resourceVersion given to a volume or claim; provisioned: volumes provisioned
	rv, provisioned atomic.Int64
	// ctlErr: the first write of the emulated storage controllers that failed
	ctlMu  sync.Mutex
	ctlErr error
	// collected: the claims (namespace/name) the emulated garbage collector deleted that are still
	// there, kept by the PVC protection finalizer (ephemeral.go)
	collected sync.Map
}

var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func (t *countingTracker) count(gvr schema.GroupVersionResource, err error) error {
	if err == nil {
		t.c.wrote(gvr)
	}
	return err
}

// installTracker makes every API call of the clientset go through a counting tracker.
func installTracker(client interface {
	PrependReactor(verb, resource string, reaction clienttesting.ReactionFunc)
	PrependWatchReactor(resource string, reaction clienttesting.WatchReactionFunc)
	Tracker() clienttesting.ObjectTracker
}, c *counts) *countingTracker {
	t := &countingTracker{ObjectTracker: client.Tracker(), c: c}
	client.PrependReactor("*", "*", clienttesting.ObjectReaction(t))
	client.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w, err := t.watch(action)
		if err != nil {
			return false, nil, err
		}
		c.mu.Lock()
		c.watching[action.GetResource()] = true
		c.mu.Unlock()
		return true, w, nil
	})
	return t
}

// countingFactory hands out informers that count what they deliver and what their handlers
// finished, for the API groups whose objects the scheduler, its plugins or the emulated
// controllers write (core, storage, resource).
type countingFactory struct {
	informers.SharedInformerFactory
	c *counts
}

func (f *countingFactory) Core() core.Interface { return core.New(f, metav1.NamespaceAll, nil) }
func (f *countingFactory) Storage() storage.Interface {
	return storage.New(f, metav1.NamespaceAll, nil)
}
func (f *countingFactory) Resource() resource.Interface {
	return resource.New(f, metav1.NamespaceAll, nil)
}
func (f *countingFactory) Apps() apps.Interface     { return apps.New(f, metav1.NamespaceAll, nil) }
func (f *countingFactory) Policy() policy.Interface { return policy.New(f, metav1.NamespaceAll, nil) }
func (f *countingFactory) Scheduling() scheduling.Interface {
	return scheduling.New(f, metav1.NamespaceAll, nil)
}

// synced: every informer handed out has synced (the factory's WaitForCacheSync polls every 100 ms)
func (f *countingFactory) synced() bool {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	for gvr, inf := range f.c.all {
		if !inf.HasSynced() || !f.c.watching[gvr] {
			return false
		}
	}
	return true
}

func (f *countingFactory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	inf := f.SharedInformerFactory.InformerFor(obj, newFunc)
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return inf
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvks[0])
	f.c.all[gvr] = inf
	if ci, ok := f.c.informers[gvr]; ok {
		return ci
	}
	ci := &countedInformer{SharedIndexInformer: inf}
	// the first handler: counts every event the informer delivers (past its initial list)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ interface{}, initial bool) {
			if !initial {
				ci.seen.Add(1)
			}
		},
		UpdateFunc: func(_, _ interface{}) { ci.seen.Add(1) },
		DeleteFunc: func(_ interface{}) { ci.seen.Add(1) },
	}); err != nil {
		panic(fmt.Sprintf("counting the events of %s: %v", gvr, err))
	}
	f.c.informers[gvr] = ci
	return ci
}

type countedInformer struct {
	cache.SharedIndexInformer
	seen     atomic.Int64
	mu       sync.Mutex
	handlers []*countedHandler
}

type countedHandler struct {
	inner cache.ResourceEventHandler
	done  atomic.Int64
}

func (h *countedHandler) OnAdd(obj interface{}, initial bool) {
	h.inner.OnAdd(obj, initial)
	if !initial {
		h.done.Add(1)
	}
}

func (h *countedHandler) OnUpdate(oldObj, newObj interface{}) {
	h.inner.OnUpdate(oldObj, newObj)
	h.done.Add(1)
}

func (h *countedHandler) OnDelete(obj interface{}) {
	h.inner.OnDelete(obj)
	h.done.Add(1)
}

func (i *countedInformer) wrap(h cache.ResourceEventHandler) cache.ResourceEventHandler {
	ch := &countedHandler{inner: h}
	i.mu.Lock()
	i.handlers = append(i.handlers, ch)
	i.mu.Unlock()
	return ch
}

func (i *countedInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandler(i.wrap(h))
}

func (i *countedInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, p time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(i.wrap(h), p)
}

// waitUntil polls cond (from 20 us to 1 ms apart) until it holds or the deadline passes.
func waitUntil(deadline time.Time, what string, cond func() bool) error {
	d := 20 * time.Microsecond
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s", what)
		}
		time.Sleep(d)
		if d < time.Millisecond {
			d *= 2
		}
	}
	return nil
}
