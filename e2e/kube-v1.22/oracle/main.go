// Command oracle runs kube-scheduler v1.22's classic Policy (`kind: Policy`, `apiVersion: v1`,
// kube-scheduler's --policy-config-file, removed after v1.22) through v1.22's own Policy
// translation and scheduling framework, over clusters read as JSON lines on standard input, one
// case per line, and prints one JSON line per case: whether v1.22 accepts the Policy; per node,
// whether the pod fits, and if not the status of the whole filter run and of every filter plugin
// that rejects it; for the nodes that fit, every score plugin's normalized score, its weight and
// each node's weighted total.
//
// A case is {"policy": "<the Policy file's text, JSON or YAML>", "objects": [<Kubernetes objects>],
// "pod": <the pod to schedule>}. Objects are Nodes, Pods (assigned: spec.nodeName; nominated:
// status.nominatedNodeName), PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes,
// CSIDrivers, Namespaces, Services, ReplicationControllers, ReplicaSets and StatefulSets, each
// with apiVersion and kind.
//
// The Policy goes through scheduler.New with WithLegacyPolicySource, as kube-scheduler v1.22
// with --policy-config-file builds its scheduler (cmd/kube-scheduler/app/server.go: no profiles,
// the Policy file): initPolicyFromFile decodes it with the scheduler's config scheme,
// createFromPolicy validates it (validation.ValidatePolicy), translates it with the legacy
// registry (ProcessPredicatePolicy, ProcessPriorityPolicy, AppendPredicateConfigs,
// AppendPriorityConfigs, dedupPluginConfigs, defaultPluginConfigArgs) and builds the framework
// of the profile "default-scheduler". Calling New rather than the exported pieces keeps every step
// and every error message v1.22's own; the translated profile is taken with
// WithBuildFrameworkCapturer. A refused Policy answers {"policyError": "<New's error>"}.
//
// The scheduler is built once per distinct Policy text and kept (a small LRU), each with its own
// informer factory, scheduler cache, snapshot and nominator; a case fills them, runs, and empties
// them again:
//   - Nodes and assigned pods go into the scheduler's own cache (Scheduler.SchedulerCache, what its
//     informer handlers addNodeToCache and addPodToCache call) and the framework's snapshot is
//     refreshed from it by the cache's UpdateSnapshot, as each scheduling cycle begins
//     (generic_scheduler.go, snapshot). The snapshot and the cache's types live in
//     pkg/scheduler/internal, so that one call goes through reflection.
//   - Nominated pods go to the scheduler's PodNominator (Scheduler.SchedulingQueue,
//     AddNominatedPod with the pod's status.nominatedNodeName), which checks them against the pod
//     lister, as the queue's Add does for a pending pod.
//   - Every other object goes into its informer's store, and its informer's event handlers are
//     called with it at once: VolumeBinding's PV and PVC assume caches read only what their
//     handlers were given. The informers are never started (nothing is listed or watched); the
//     factory records the handlers instead (syncFactory).
//
// Each node is then checked as v1.22's scheduling cycle checks it (generic_scheduler.go,
// findNodesThatFitPod): PreFilter once, then RunFilterPluginsWithNominatedPods per node. A node
// that fails is checked again by one framework per filter plugin (the same profile with only that
// Filter plugin), so that every plugin that rejects it is named, not only the first. The nodes that
// fit are scored as prioritizeNodes scores them (RunPreScorePlugins, RunScorePlugins: normalized,
// then multiplied by the plugin's weight), even when only one node fits.
//
// The answers (README.md): {"policyError"}, {"error"}, or the node verdicts ("nodes", in the
// shape of the v1.37 oracle), the profile's "filterPlugins" and "scorePlugins", the score
// plugins' "weights", "scores" and "totals", and "scoreError" or "cycleError" when a plugin
// fails with an error. Panics, also of the framework's goroutines, answer {"error": "panic: ..."}.
package main

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/apps"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/policy"
	"k8s.io/client-go/informers/storage"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

type input struct {
	Policy  *string           `json:"policy"`
	Objects []json.RawMessage `json:"objects"`
	Pod     json.RawMessage   `json:"pod"`
}

type pluginStatus struct {
	Plugin  string   `json:"plugin"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
}

type nodeResult struct {
	Fits bool `json:"fits"`
	// The status of the whole filter run: the plugin that rejected the node (with
	// alwaysCheckAllPredicates, all of them merged; see mergedOrder).
	Code    string   `json:"code,omitempty"`
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	// Every filter plugin that rejects the node, in profile order. A plugin that, run alone, fails
	// on the node with an error has code "Error" and the error as its one reason.
	Plugins []pluginStatus `json:"plugins,omitempty"`
	// Rejected in PreFilter (the first PreFilter plugin that rejects the pod): no Filter plugin ran.
	PreFilter bool `json:"prefilter,omitempty"`
}

type output struct {
	// v1.22 refuses the Policy: the error scheduler.New returns. Nothing else is set.
	PolicyError string                `json:"policyError,omitempty"`
	Nodes       map[string]nodeResult `json:"nodes,omitempty"`
	// The profile's enabled Filter and Score plugins, in the order they run.
	FilterPlugins []string `json:"filterPlugins,omitempty"`
	ScorePlugins  []string `json:"scorePlugins,omitempty"`
	// Per Score plugin its weight; per Score plugin and node that fits, its normalized score
	// (0..100, before the weight); per node that fits, the sum of the weighted scores.
	Weights map[string]int64            `json:"weights,omitempty"`
	Scores  map[string]map[string]int64 `json:"scores,omitempty"`
	Totals  map[string]int64            `json:"totals,omitempty"`
	// A PreFilter or Filter plugin failed with an error (not a rejection): v1.22's scheduling cycle
	// ends with it (kube-scheduler requeues the pod). No node verdicts.
	CycleError string `json:"cycleError,omitempty"`
	// PreScore or Score failed (kube-scheduler would fail the cycle); the filter verdicts stand.
	ScoreError string `json:"scoreError,omitempty"`
	Error      string `json:"error,omitempty"`
}

// ---------------------------------------------------------------------------------------------
// Informers that deliver at once.

// syncInformer is a never-started informer whose event handlers are kept here and called
// directly by deliver, so that a case's objects reach them before the case runs.
type syncInformer struct {
	cache.SharedIndexInformer
	handlers []cache.ResourceEventHandler
	objects  []interface{} // what the handlers were last given
}

func (s *syncInformer) AddEventHandler(h cache.ResourceEventHandler) {
	s.handlers = append(s.handlers, h)
	// A handler added to a running informer first gets its current objects (shared_informer.go).
	for _, o := range s.objects {
		h.OnAdd(o)
	}
}

func (s *syncInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, _ time.Duration) {
	s.AddEventHandler(h)
}

func (s *syncInformer) HasSynced() bool { return true }

// deliver replaces the informer's objects: its store first, then every handler is told of each
// deletion and addition, as a running informer would tell them.
func (s *syncInformer) deliver(objs []interface{}) error {
	for _, o := range s.objects {
		for _, h := range s.handlers {
			h.OnDelete(o)
		}
	}
	s.objects = nil
	if err := s.GetIndexer().Replace(objs, ""); err != nil {
		return err
	}
	s.objects = objs
	for _, o := range objs {
		for _, h := range s.handlers {
			h.OnAdd(o)
		}
	}
	return nil
}

// syncFactory is the scheduler's informer factory: every typed informer of the groups the
// scheduler and its plugins use (core, storage, apps, policy) comes from InformerFor here, as a
// syncInformer.
type syncFactory struct {
	informers.SharedInformerFactory
	client    kubernetes.Interface
	informers map[reflect.Type]*syncInformer
}

func newSyncFactory(client kubernetes.Interface) *syncFactory {
	return &syncFactory{
		SharedInformerFactory: informers.NewSharedInformerFactory(client, 0),
		client:                client,
		informers:             map[reflect.Type]*syncInformer{},
	}
}

func (f *syncFactory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	t := reflect.TypeOf(obj)
	if inf, ok := f.informers[t]; ok {
		return inf
	}
	inf := &syncInformer{SharedIndexInformer: newFunc(f.client, 0)}
	f.informers[t] = inf
	return inf
}

func (f *syncFactory) Start(<-chan struct{}) {}
func (f *syncFactory) WaitForCacheSync(<-chan struct{}) map[reflect.Type]bool {
	return map[reflect.Type]bool{}
}
func (f *syncFactory) Core() core.Interface       { return core.New(f, v1.NamespaceAll, nil) }
func (f *syncFactory) Storage() storage.Interface { return storage.New(f, v1.NamespaceAll, nil) }
func (f *syncFactory) Apps() apps.Interface       { return apps.New(f, v1.NamespaceAll, nil) }
func (f *syncFactory) Policy() policy.Interface   { return policy.New(f, v1.NamespaceAll, nil) }

// informerOf returns the syncInformer of a kind the cases carry (creating it if no plugin did).
func (f *syncFactory) informerOf(kind string) *syncInformer {
	var inf cache.SharedIndexInformer
	switch kind {
	case "Pod":
		inf = f.Core().V1().Pods().Informer()
	case "Node":
		inf = f.Core().V1().Nodes().Informer()
	case "Namespace":
		inf = f.Core().V1().Namespaces().Informer()
	case "Service":
		inf = f.Core().V1().Services().Informer()
	case "ReplicationController":
		inf = f.Core().V1().ReplicationControllers().Informer()
	case "PersistentVolume":
		inf = f.Core().V1().PersistentVolumes().Informer()
	case "PersistentVolumeClaim":
		inf = f.Core().V1().PersistentVolumeClaims().Informer()
	case "ReplicaSet":
		inf = f.Apps().V1().ReplicaSets().Informer()
	case "StatefulSet":
		inf = f.Apps().V1().StatefulSets().Informer()
	case "StorageClass":
		inf = f.Storage().V1().StorageClasses().Informer()
	case "CSINode":
		inf = f.Storage().V1().CSINodes().Informer()
	case "CSIDriver":
		inf = f.Storage().V1().CSIDrivers().Informer()
	default:
		return nil
	}
	return inf.(*syncInformer)
}

// The kinds a case may carry besides Nodes and Pods, delivered through their informers.
var storeKinds = []string{"Namespace", "Service", "ReplicationController", "ReplicaSet", "StatefulSet",
	"PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver"}

// ---------------------------------------------------------------------------------------------
// One Policy's scheduler.

type policyScheduler struct {
	text     string
	err      error // New refused the Policy
	internal bool  // err is the oracle's, not v1.22's refusal
	stop     chan struct{}
	factory  *syncFactory
	sched    *scheduler.Scheduler
	full     framework.Framework
	// UpdateSnapshot of the scheduler's cache (an internal type) bound to its framework's snapshot.
	updateSnapshot func() error
	// One framework per Filter plugin of the profile, in profile order: every PreFilter plugin, that
	// one Filter plugin.
	single        []framework.Framework
	filterPlugins []string
	scorePlugins  []string
	weights       map[string]int64
	// What the last case put in: removed by clear.
	nodes     []*v1.Node
	pods      []*v1.Pod
	nominated []*v1.Pod
}

var (
	client        = fake.NewSimpleClientset()
	policyPath    string
	recorder      = &events.FakeRecorder{}
	recorderMaker = func(string) events.EventRecorder { return recorder }
)

func newPolicyScheduler(text string) (ps *policyScheduler) {
	ps = &policyScheduler{text: text, stop: make(chan struct{}), factory: newSyncFactory(client)}
	if err := os.WriteFile(policyPath, []byte(text), 0o600); err != nil {
		ps.err, ps.internal = fmt.Errorf("oracle: writing the policy file: %w", err), true
		return ps
	}
	var profile *schedulerapi.KubeSchedulerProfile
	sched, err := scheduler.New(client, ps.factory, recorderMaker, ps.stop,
		scheduler.WithProfiles(), // none: the Policy's (cmd/kube-scheduler/app/options: Profiles nil with a Policy)
		scheduler.WithLegacyPolicySource(&schedulerapi.SchedulerPolicySource{
			File: &schedulerapi.SchedulerPolicyFileSource{Path: policyPath},
		}),
		scheduler.WithPercentageOfNodesToScore(100),
		scheduler.WithParallelism(1),
		scheduler.WithBuildFrameworkCapturer(func(p schedulerapi.KubeSchedulerProfile) { profile = p.DeepCopy() }),
	)
	// New's cache debugger listens for SIGUSR2 with a channel it never releases: release it.
	signal.Reset(syscall.SIGUSR2)
	if err != nil {
		close(ps.stop)
		ps.err = err
		return ps
	}
	ps.sched = sched
	ps.full = sched.Profiles[v1.DefaultSchedulerName]
	if ps.full == nil || profile == nil {
		ps.close()
		ps.err, ps.internal = fmt.Errorf("oracle: no profile %s", v1.DefaultSchedulerName), true
		return ps
	}
	update := reflect.ValueOf(sched.SchedulerCache).MethodByName("UpdateSnapshot")
	snapshot := reflect.ValueOf(ps.full.SnapshotSharedLister())
	ps.updateSnapshot = func() error {
		if e := update.Call([]reflect.Value{snapshot})[0].Interface(); e != nil {
			return e.(error)
		}
		return nil
	}
	plugins := ps.full.ListPlugins()
	ps.weights = map[string]int64{}
	for _, p := range plugins.Score.Enabled {
		ps.scorePlugins = append(ps.scorePlugins, p.Name)
		ps.weights[p.Name] = int64(p.Weight)
	}
	for _, p := range plugins.Filter.Enabled {
		one := profile.DeepCopy()
		one.Plugins.Filter = schedulerapi.PluginSet{Enabled: []schedulerapi.Plugin{{Name: p.Name}}}
		f, err := frameworkruntime.NewFramework(frameworkplugins.NewInTreeRegistry(), one,
			frameworkruntime.WithClientSet(client),
			frameworkruntime.WithInformerFactory(ps.factory),
			frameworkruntime.WithSnapshotSharedLister(ps.full.SnapshotSharedLister()),
			frameworkruntime.WithPodNominator(sched.SchedulingQueue),
			frameworkruntime.WithEventRecorder(recorder),
			frameworkruntime.WithParallelism(1),
		)
		if err != nil {
			ps.close()
			ps.err, ps.internal = fmt.Errorf("oracle: framework with only %s: %w", p.Name, err), true
			return ps
		}
		ps.single = append(ps.single, f)
		ps.filterPlugins = append(ps.filterPlugins, p.Name)
	}
	return ps
}

// close stops what New and NewFramework started: the cache's and the debugger's goroutines (the
// stop channel), and each framework's metrics recorder, whose stop channel is unexported
// (framework/runtime/metrics_recorder.go; only tests stop it there).
func (ps *policyScheduler) close() {
	select {
	case <-ps.stop:
	default:
		close(ps.stop)
	}
	stopMetricsRecorder(ps.full)
	for _, f := range ps.single {
		stopMetricsRecorder(f)
	}
	ps.full, ps.single = nil, nil
}

func stopMetricsRecorder(f framework.Framework) {
	if f == nil {
		return
	}
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Ptr || v.Elem().Kind() != reflect.Struct {
		return
	}
	r := v.Elem().FieldByName("metricsRecorder")
	if !r.IsValid() || r.Kind() != reflect.Ptr || r.IsNil() {
		return
	}
	ch := r.Elem().FieldByName("stopCh")
	if !ch.IsValid() || ch.Kind() != reflect.Chan {
		return
	}
	stop := reflect.NewAt(ch.Type(), unsafe.Pointer(ch.UnsafeAddr())).Elem().Interface().(chan struct{})
	close(stop)
}

// clear takes the last case's objects out again.
func (ps *policyScheduler) clear() error {
	var errs []string
	for _, p := range ps.nominated {
		ps.sched.SchedulingQueue.DeleteNominatedPodIfExists(p)
	}
	for _, p := range ps.pods {
		if err := ps.sched.SchedulerCache.RemovePod(p); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, n := range ps.nodes {
		if err := ps.sched.SchedulerCache.RemoveNode(n); err != nil {
			errs = append(errs, err.Error())
		}
	}
	ps.nodes, ps.pods, ps.nominated = nil, nil, nil
	// The snapshot too: UpdateSnapshot rebuilds its node list (the node tree's order, zones in
	// turn) only when a node is new to it or gone from it, so a next case with the same node names
	// would otherwise list them in this case's order, which ServiceAffinity's "first pod" and
	// every plugin that walks the list read.
	if err := ps.updateSnapshot(); err != nil {
		errs = append(errs, err.Error())
	}
	for _, kind := range append([]string{"Pod", "Node"}, storeKinds...) {
		if err := ps.factory.informerOf(kind).deliver(nil); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// ---------------------------------------------------------------------------------------------
// The cases.

type decoded struct {
	nodes  []*v1.Node
	pods   []*v1.Pod
	byKind map[string][]interface{}
	pod    *v1.Pod
}

func decode(raw []byte) (runtime.Object, string, error) {
	obj, gvk, err := clientscheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, "", err
	}
	return obj, gvk.Kind, nil
}

func decodeCase(in *input) (*decoded, error) {
	d := &decoded{byKind: map[string][]interface{}{}}
	for i, raw := range in.Objects {
		obj, kind, err := decode(raw)
		if err != nil {
			return nil, fmt.Errorf("object %d: %w", i, err)
		}
		switch t := obj.(type) {
		case *v1.Node:
			d.nodes = append(d.nodes, t)
		case *v1.Pod:
			d.pods = append(d.pods, t)
		default:
			known := false
			for _, k := range storeKinds {
				known = known || k == kind
			}
			if !known {
				return nil, fmt.Errorf("object %d: kind %s is not read", i, kind)
			}
			d.byKind[kind] = append(d.byKind[kind], obj)
		}
	}
	obj, _, err := decode(in.Pod)
	if err != nil {
		return nil, fmt.Errorf("pod: %w", err)
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("pod: not a Pod")
	}
	d.pod = pod
	return d, nil
}

// load puts a case's objects where the scheduler reads them.
func (ps *policyScheduler) load(d *decoded) error {
	for _, kind := range storeKinds {
		if err := ps.factory.informerOf(kind).deliver(d.byKind[kind]); err != nil {
			return err
		}
	}
	// The pod informer's store: what the nominator's pod lister reads. Not delivered to its
	// handlers (the scheduler's own: assigned pods are added to the cache below, and pending
	// pods to the queue only with schedulerName default-scheduler, which API defaulting sets and
	// these objects lack); nominated pods are given to the nominator below.
	pods := make([]interface{}, len(d.pods))
	for i, p := range d.pods {
		pods[i] = p
	}
	if err := ps.factory.informerOf("Pod").GetIndexer().Replace(pods, ""); err != nil {
		return err
	}
	nodes := make([]interface{}, len(d.nodes))
	for i, n := range d.nodes {
		nodes[i] = n
	}
	if err := ps.factory.informerOf("Node").GetIndexer().Replace(nodes, ""); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, n := range d.nodes {
		ps.sched.SchedulerCache.AddNode(n)
		if !seen[n.Name] {
			seen[n.Name] = true
			ps.nodes = append(ps.nodes, n)
		}
	}
	for _, p := range d.pods {
		if p.Spec.NodeName != "" {
			if err := ps.sched.SchedulerCache.AddPod(p); err != nil {
				return fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
			}
			ps.pods = append(ps.pods, p)
		} else if p.Status.NominatedNodeName != "" {
			ps.sched.SchedulingQueue.AddNominatedPod(framework.NewPodInfo(p), "")
			ps.nominated = append(ps.nominated, p)
		}
	}
	return ps.updateSnapshot()
}

func (ps *policyScheduler) run(ctx context.Context, d *decoded) (*output, error) {
	if err := ps.load(d); err != nil {
		return nil, err
	}
	pod := d.pod
	out := &output{Nodes: map[string]nodeResult{}, FilterPlugins: ps.filterPlugins, ScorePlugins: ps.scorePlugins, Weights: ps.weights}
	lister := ps.full.SnapshotSharedLister().NodeInfos()
	nodes, err := lister.List()
	if err != nil {
		return nil, err
	}
	if len(nodes) != len(ps.nodes) {
		return nil, fmt.Errorf("snapshot has %d nodes, the case %d", len(nodes), len(ps.nodes))
	}

	state := framework.NewCycleState()
	if s := ps.full.RunPreFilterPlugins(ctx, state, pod); !s.IsSuccess() {
		if !s.IsUnschedulable() {
			out.CycleError = s.AsError().Error()
			out.Nodes = nil
			return out, nil
		}
		for _, n := range ps.nodes {
			st := pluginStatus{Plugin: s.FailedPlugin(), Code: s.Code().String(), Reasons: s.Reasons()}
			out.Nodes[n.Name] = nodeResult{Code: st.Code, Plugin: st.Plugin, Reasons: st.Reasons, Plugins: []pluginStatus{st}, PreFilter: true}
		}
		return out, nil
	}
	var feasible []*v1.Node
	var singleStates []*framework.CycleState
	for _, n := range ps.nodes {
		info, err := lister.Get(n.Name)
		if err != nil {
			return nil, err
		}
		status := ps.full.RunFilterPluginsWithNominatedPods(ctx, state, pod, info)
		if status.IsSuccess() {
			out.Nodes[n.Name] = nodeResult{Fits: true}
			feasible = append(feasible, info.Node())
			continue
		}
		if !status.IsUnschedulable() {
			// findNodesThatPassFilters ends the cycle with this error.
			out.CycleError = status.AsError().Error()
			out.Nodes = nil
			return out, nil
		}
		r := nodeResult{Code: status.Code().String(), Plugin: status.FailedPlugin(), Reasons: status.Reasons()}
		if r.Plugins, err = ps.everyRejection(ctx, pod, info, &singleStates); err != nil {
			return nil, err
		}
		mergedOrder(&r)
		out.Nodes[n.Name] = r
	}
	if len(feasible) == 0 {
		return out, nil
	}
	// prioritizeNodes (generic_scheduler.go), which v1.22 skips when one node fits.
	if s := ps.full.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
		out.ScoreError = s.AsError().Error()
		return out, nil
	}
	scores, s := ps.full.RunScorePlugins(ctx, state, pod, feasible)
	if !s.IsSuccess() {
		out.ScoreError = s.AsError().Error()
		return out, nil
	}
	out.Scores = map[string]map[string]int64{}
	out.Totals = map[string]int64{}
	for _, n := range feasible {
		out.Totals[n.Name] = 0
	}
	for name, list := range scores {
		w := ps.weights[name]
		byNode := map[string]int64{}
		for _, ns := range list {
			if w == 0 || ns.Score%w != 0 {
				return nil, fmt.Errorf("plugin %s: weighted score %d of node %s is not a multiple of its weight %d", name, ns.Score, ns.Name, w)
			}
			byNode[ns.Name] = ns.Score / w
			out.Totals[ns.Name] += ns.Score
		}
		out.Scores[name] = byNode
	}
	return out, nil
}

// mergedOrder makes the whole run's status of a rejected node deterministic. With
// alwaysCheckAllPredicates (RunAllFilters) v1.22 merges the rejecting plugins' statuses from a
// map (PluginToStatus.Merge): the reasons come in random order and the plugin named is a random
// one of those with the most severe code. When the merged reasons are exactly the rejecting
// plugins' reasons, they are put in profile order and the first plugin of that code is named
// (one of the answers v1.22 gives). Otherwise (the run stopped at its first rejection) the status
// is left as it is.
func mergedOrder(r *nodeResult) {
	if len(r.Plugins) < 2 {
		return
	}
	var all []string
	for _, p := range r.Plugins {
		all = append(all, p.Reasons...)
	}
	a := append([]string(nil), all...)
	b := append([]string(nil), r.Reasons...)
	sort.Strings(a)
	sort.Strings(b)
	if !reflect.DeepEqual(a, b) {
		return
	}
	r.Reasons = all
	for _, p := range r.Plugins {
		if p.Code == r.Code {
			r.Plugin = p.Plugin
			break
		}
	}
}

// everyRejection runs each filter plugin alone through the two passes of
// RunFilterPluginsWithNominatedPods, and returns every plugin that rejects the node in the pass
// that decides: the first (nominated pods of at least the pod's priority added) when any plugin
// rejects it there, since the full run stops after it; else the second (without them).
//
// Each framework's PreFilter runs once per case (states, filled at the first rejected node): the
// scheduling cycle too runs Filter on every node with the one state PreFilter left.
func (ps *policyScheduler) everyRejection(ctx context.Context, pod *v1.Pod, info *framework.NodeInfo, prefiltered *[]*framework.CycleState) ([]pluginStatus, error) {
	if *prefiltered == nil {
		*prefiltered = make([]*framework.CycleState, len(ps.single))
		for i, f := range ps.single {
			(*prefiltered)[i] = framework.NewCycleState()
			if s := f.RunPreFilterPlugins(ctx, (*prefiltered)[i], pod); !s.IsSuccess() {
				return nil, fmt.Errorf("PreFilter with only %s: %v", ps.filterPlugins[i], s.AsError())
			}
		}
	}
	states := *prefiltered
	var rejected []pluginStatus
	added := false
	for pass := 0; pass < 2; pass++ {
		if pass == 1 && (!added || len(rejected) > 0) {
			break
		}
		for i, f := range ps.single {
			state, nodeInfo := states[i], info
			if pass == 0 {
				var err error
				var podsAdded bool
				if podsAdded, state, nodeInfo, err = addNominated(ctx, f, pod, states[i], info); err != nil {
					rejected = append(rejected, pluginStatus{Plugin: ps.filterPlugins[i], Code: framework.Error.String(), Reasons: []string{err.Error()}})
					continue
				}
				added = added || podsAdded
			}
			s := f.RunFilterPlugins(ctx, state, pod, nodeInfo).Merge()
			if s.IsSuccess() {
				continue
			}
			if !s.IsUnschedulable() {
				// The plugin fails on this node: its error, as the cycle would report it.
				rejected = append(rejected, pluginStatus{Plugin: ps.filterPlugins[i], Code: s.Code().String(), Reasons: []string{s.AsError().Error()}})
				continue
			}
			rejected = append(rejected, pluginStatus{Plugin: ps.filterPlugins[i], Code: s.Code().String(), Reasons: s.Reasons()})
		}
	}
	return rejected, nil
}

// addNominated is framework/runtime's addNominatedPods (unexported there), line for line.
func addNominated(ctx context.Context, fh framework.Framework, pod *v1.Pod, state *framework.CycleState, nodeInfo *framework.NodeInfo) (bool, *framework.CycleState, *framework.NodeInfo, error) {
	if fh == nil || nodeInfo.Node() == nil {
		return false, state, nodeInfo, nil
	}
	nominatedPodInfos := fh.NominatedPodsForNode(nodeInfo.Node().Name)
	if len(nominatedPodInfos) == 0 {
		return false, state, nodeInfo, nil
	}
	nodeInfoOut := nodeInfo.Clone()
	stateOut := state.Clone()
	podsAdded := false
	for _, pi := range nominatedPodInfos {
		if podPriority(pi.Pod) >= podPriority(pod) && pi.Pod.UID != pod.UID {
			nodeInfoOut.AddPodInfo(pi)
			status := fh.RunPreFilterExtensionAddPod(ctx, stateOut, pod, pi, nodeInfoOut)
			if !status.IsSuccess() {
				return false, state, nodeInfo, status.AsError()
			}
			podsAdded = true
		}
	}
	return podsAdded, stateOut, nodeInfoOut, nil
}

// podPriority is component-helpers' corev1.PodPriority.
func podPriority(pod *v1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// ---------------------------------------------------------------------------------------------
// The Policies seen lately, by their text.

type lru struct {
	max   int
	order *list.List // of *policyScheduler, most recent first
	byKey map[string]*list.Element
	built int
	// Refused Policies whose framework was being built: each left its metrics recorder behind.
	leaked int
	// The Policies v1.22 refused, with its error.
	refused map[string]error
}

const maxRefused = 1 << 16

func (c *lru) get(text string) *policyScheduler {
	if e, ok := c.byKey[text]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*policyScheduler)
	}
	if err, ok := c.refused[text]; ok {
		return &policyScheduler{text: text, err: err}
	}
	ps := newPolicyScheduler(text)
	c.built++
	if ps.err != nil && !ps.internal {
		if strings.Contains(ps.err.Error(), "initializing profiles: creating profile") {
			c.leaked++ // NewFramework began: its metrics recorder runs on
		}
		// A refused Policy is remembered apart, and is not built again: when v1.22 refuses it
		// while building a plugin, the framework's metrics recorder goroutine (started before, and
		// stopped by nothing) stays behind, about 18 KB and a wake-up a second each.
		if len(c.refused) >= maxRefused {
			c.refused = map[string]error{}
		}
		c.refused[text] = ps.err
		return ps
	}
	if ps.err != nil {
		return ps // the oracle's own failure: tried again next time
	}
	c.byKey[text] = c.order.PushFront(ps)
	for c.order.Len() > c.max {
		c.drop(c.order.Back().Value.(*policyScheduler))
	}
	return ps
}

func (c *lru) drop(ps *policyScheduler) {
	if e, ok := c.byKey[ps.text]; ok && e.Value == ps {
		c.order.Remove(e)
		delete(c.byKey, ps.text)
	}
	if ps.sched != nil {
		ps.close()
	}
}

// Panics of goroutines the framework starts (parallelize.Until, through
// utilruntime.HandleCrash) are recorded here instead of ending the process.
var goroutinePanic struct {
	sync.Mutex
	value interface{}
}

func takeGoroutinePanic() interface{} {
	goroutinePanic.Lock()
	defer goroutinePanic.Unlock()
	v := goroutinePanic.value
	goroutinePanic.value = nil
	return v
}

func runCase(ctx context.Context, schedulers *lru, line []byte) *output {
	var c input
	if err := json.Unmarshal(line, &c); err != nil {
		return &output{Error: err.Error()}
	}
	if c.Policy == nil {
		return &output{Error: "the case has no policy"}
	}
	ps, r := guard(func() *policyScheduler { return schedulers.get(*c.Policy) })
	if r != nil {
		return &output{Error: fmt.Sprintf("panic: %v", r)}
	}
	if ps.err != nil {
		if ps.internal {
			return &output{Error: ps.err.Error()}
		}
		return &output{PolicyError: ps.err.Error()}
	}
	d, err := decodeCase(&c)
	if err != nil {
		return &output{Error: err.Error()}
	}
	out, r := guard(func() *output {
		o, err := ps.run(ctx, d)
		if err != nil {
			return &output{Error: err.Error()}
		}
		return o
	})
	if r != nil {
		out = &output{Error: fmt.Sprintf("panic: %v", r)}
	}
	// A scheduler whose case failed may hold a half-loaded case: built again next time.
	if out.Error != "" {
		schedulers.drop(ps)
		return out
	}
	if err, r := guard(ps.clear); err != nil || r != nil {
		schedulers.drop(ps)
		if r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
		return &output{Error: "clearing the case: " + err.Error()}
	}
	return out
}

// guard runs f, and returns what it panicked with, if it did, in this goroutine or in one the
// framework started for it.
func guard[T any](f func() T) (v T, r interface{}) {
	takeGoroutinePanic()
	defer func() {
		if r = recover(); r == nil {
			r = takeGoroutinePanic()
		}
	}()
	return f(), nil
}

// restart makes the oracle a new process (the same binary and flags, by exec), which first reads
// the input this one had buffered and not used, then the rest of standard input: the metrics
// recorder goroutines that refused Policies left behind (lru.get) end with the old process. It
// returns only when it failed.
func restart(in *bufio.Reader, dir string) {
	rest, _ := in.Peek(in.Buffered())
	f, err := os.CreateTemp("", "policy-oracle-input-")
	if err == nil {
		_, err = f.Write(rest)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "oracle: not restarted:", err)
		return
	}
	var args []string
	for i := 0; i < len(os.Args); i++ {
		a := os.Args[i]
		if a == "-resume" || a == "--resume" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-resume=") || strings.HasPrefix(a, "--resume=") {
			continue
		}
		args = append(args, a)
	}
	args = append(args, "-resume", f.Name())
	pprof.StopCPUProfile()
	os.RemoveAll(dir)
	err = syscall.Exec("/proc/self/exe", args, os.Environ())
	// Still here: it failed.
	os.Remove(f.Name())
	fmt.Fprintln(os.Stderr, "oracle: not restarted:", err)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(2)
	}
}

func main() {
	verbosity := flag.Int("v", -1, "klog verbosity; its log goes to standard error (default: no log)")
	cached := flag.Int("policies", 32, "how many distinct Policies keep their scheduler")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile (runtime/pprof) to this file")
	maxLeaked := flag.Int("max-leaked", 10000, "start afresh (exec itself, the input carried over) once this many refused Policies have left a goroutine behind; 0: never")
	resume := flag.String("resume", "", "read this file's lines before standard input's, and delete it (the restart's)")
	stats := flag.Bool("stats", false, "at the end, print to standard error the cases, their rate, the schedulers built and the goroutines left")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(2)
		}
	}

	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	if *verbosity < 0 {
		_ = klogFlags.Set("logtostderr", "false")
		_ = klogFlags.Set("alsologtostderr", "false")
		_ = klogFlags.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	} else {
		_ = klogFlags.Set("logtostderr", "true")
		_ = klogFlags.Set("v", fmt.Sprint(*verbosity))
	}
	utilruntime.ReallyCrash = false
	utilruntime.PanicHandlers = append(utilruntime.PanicHandlers, func(r interface{}) {
		goroutinePanic.Lock()
		defer goroutinePanic.Unlock()
		if goroutinePanic.value == nil {
			goroutinePanic.value = r
		}
	})

	dir, err := os.MkdirTemp("", "policy-oracle-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(2)
	}
	defer os.RemoveAll(dir)
	policyPath = filepath.Join(dir, "policy")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	schedulers := &lru{max: max(*cached, 1), order: list.New(), byKey: map[string]*list.Element{}, refused: map[string]error{}}

	input := io.Reader(os.Stdin)
	if *resume != "" {
		f, err := os.Open(*resume)
		if err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(2)
		}
		os.Remove(*resume)
		input = io.MultiReader(f, os.Stdin)
	}
	in := bufio.NewReaderSize(input, 1<<20)
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	code := 0
	started, cases := time.Now(), 0
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			cases++
			out := runCase(ctx, schedulers, bytes.TrimRight(line, "\r\n"))
			if err := enc.Encode(out); err != nil {
				fmt.Fprintln(os.Stderr, "oracle:", err)
				code = 1
				break
			}
			if err := w.Flush(); err != nil {
				code = 1
				break
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			code = 1
			break
		}
		if *maxLeaked > 0 && schedulers.leaked >= *maxLeaked {
			restart(in, dir)
			*maxLeaked = 0 // restart returns only when it failed: no more tries
		}
	}
	if *stats {
		elapsed := time.Since(started)
		// The metrics recorders of dropped frameworks end within their one-second sleep.
		time.Sleep(1500 * time.Millisecond)
		fmt.Fprintf(os.Stderr, "oracle: %d cases in %.1f s (%.0f cases/s), %d schedulers built, %d kept, %d goroutines\n",
			cases, elapsed.Seconds(), float64(cases)/elapsed.Seconds(), schedulers.built, schedulers.order.Len(), goruntime.NumGoroutine())
	}
	for schedulers.order.Len() > 0 {
		schedulers.drop(schedulers.order.Back().Value.(*policyScheduler))
	}
	os.RemoveAll(dir)
	pprof.StopCPUProfile()
	os.Exit(code)
}
