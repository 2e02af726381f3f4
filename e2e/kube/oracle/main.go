// Command oracle runs kube-scheduler's own PreFilter and Filter plugins (the default profile of
// the pinned k8s.io/kubernetes) over clusters read as JSON lines on standard input, one case per
// line, and prints one JSON line per case: per node, whether the pod fits, and if not the status
// code and reasons of the whole filter run and of every filter plugin that rejects it.
//
// A case is {"objects": [<Kubernetes objects>], "pod": <the pod to schedule>}. Objects are Nodes,
// Pods (assigned: spec.nodeName; nominated: status.nominatedNodeName), PersistentVolumes,
// PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers, Namespaces, Services,
// ReplicationControllers, ReplicaSets and StatefulSets, each with apiVersion and kind.
//
// Each node is checked as the scheduling cycle checks it (pkg/scheduler/schedule_one.go,
// findNodesThatFitPod): PreFilter once, then RunFilterPluginsWithNominatedPods per node, nominated
// pods coming from the framework's PodNominator. A node that fails is checked again by one
// framework per filter plugin, so that every plugin that rejects it is named, not only the first.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"
)

type input struct {
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
	// The status of the whole filter run (the first plugin that rejected the node).
	Code    string   `json:"code,omitempty"`
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	// Every filter plugin that rejects the node, in profile order.
	Plugins []pluginStatus `json:"plugins,omitempty"`
	// Rejected in PreFilter: the whole pod (the first PreFilter plugin that rejects it), or the
	// node left out of a PreFilterResult. No Filter plugin ran on the node.
	PreFilter bool `json:"prefilter,omitempty"`
}

type output struct {
	Nodes map[string]nodeResult `json:"nodes"`
	// What kube-scheduler counts of each pod: the pods of the snapshot and the nominated ones by
	// "namespace/name" (PodInfo.CalculateResource), and the pod to schedule under "" (as
	// NodeResourcesFit's PreFilter and its resource scores compute it).
	Requests map[string]podResources `json:"requests,omitempty"`
	Error    string                  `json:"error,omitempty"`
}

// podResources is a pod's requests in the scheduler's units (cpu in millicores, the rest in
// units), with the non-zero cpu and memory the resource scores count.
type podResources struct {
	MilliCPU         int64            `json:"milliCPU"`
	Memory           int64            `json:"memory"`
	EphemeralStorage int64            `json:"ephemeralStorage"`
	Scalar           map[string]int64 `json:"scalar,omitempty"`
	NonZeroCPU       int64            `json:"nonZeroCPU"`
	NonZeroMemory    int64            `json:"nonZeroMemory"`
}

func resourcesOf(r fwk.Resource, non0CPU, non0Mem int64) podResources {
	out := podResources{MilliCPU: r.GetMilliCPU(), Memory: r.GetMemory(), EphemeralStorage: r.GetEphemeralStorage(), NonZeroCPU: non0CPU, NonZeroMemory: non0Mem}
	for name, v := range r.GetScalarResources() {
		if out.Scalar == nil {
			out.Scalar = map[string]int64{}
		}
		out.Scalar[string(name)] = v
	}
	return out
}

// placedRequests is what a pod in the snapshot takes from its node: PodInfo.CalculateResource.
func placedRequests(p *v1.Pod) (podResources, error) {
	pi, err := framework.NewPodInfo(p)
	if err != nil {
		return podResources{}, err
	}
	r := pi.CalculateResource()
	return resourcesOf(r.Resource, r.Non0CPU, r.Non0Mem), nil
}

// pendingRequests is what the pod to schedule asks: PodRequests with the options
// NodeResourcesFit's PreFilter passes (computePodResourceRequest, unexported: these lines are its
// options), and its non-zero cpu and memory with the options its resource scores pass
// (resourceAllocationScorer.calculatePodResourceRequest, with the scoring defaults).
func pendingRequests(p *v1.Pod) podResources {
	gate := utilfeature.DefaultFeatureGate.Enabled
	reqs := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{SkipPodLevelResources: !gate(features.PodLevelResources)})
	var r framework.Resource
	r.SetMaxResource(reqs)
	scored := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{
		UseStatusResources: gate(features.InPlacePodVerticalScaling),
		InPlacePodLevelResourcesVerticalScalingEnabled: gate(features.InPlacePodLevelResourcesVerticalScaling),
		SkipPodLevelResources:                          !gate(features.PodLevelResources),
		NonMissingContainerRequests: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(schedutil.DefaultMilliCPURequest, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(schedutil.DefaultMemoryRequest, resource.DecimalSI),
		},
	})
	cpu, mem := scored[v1.ResourceCPU], scored[v1.ResourceMemory]
	return resourcesOf(&r, cpu.MilliValue(), mem.Value())
}

// swapLister is the frameworks' snapshot lister; each case swaps the snapshot behind it.
type swapLister struct{ fwk.SharedLister }

// nominator answers NominatedPodsForNode from the case's nominated pods.
type nominator struct{ byNode map[string][]fwk.PodInfo }

func (n *nominator) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (n *nominator) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (n *nominator) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (n *nominator) NominatedPodsForNode(node string) []fwk.PodInfo                { return n.byNode[node] }

type oracle struct {
	lister    *swapLister
	nominator *nominator
	factory   informers.SharedInformerFactory
	indexers  map[string]cache.Indexer // by kind
	full      framework.Framework
	// One framework per filter plugin, in profile order (all PreFilter plugins, one Filter plugin).
	single []framework.Framework
	names  []string
}

func newOracle(ctx context.Context) (*oracle, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	profile := cfg.Profiles[0]
	// Dynamic resource allocation needs a DRA manager and its trackers; the generated pods claim
	// no devices, so the plugin would skip every pod. Left out (docs/semantics.md).
	enabled := profile.Plugins.MultiPoint.Enabled[:0:0]
	for _, p := range profile.Plugins.MultiPoint.Enabled {
		if p.Name != names.DynamicResources {
			enabled = append(enabled, p)
		}
	}
	profile.Plugins.MultiPoint.Enabled = enabled
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	o := &oracle{lister: &swapLister{schedcache.NewEmptySnapshot()}, nominator: &nominator{}, factory: factory}
	// Objects reach the plugins through these indexers, filled per case (Replace): the listers read
	// them, and so do VolumeBinding's PV and PVC caches, which in v1.35-v1.37 read the informer's indexer
	// directly (volumebinding/passive_assume_cache.go, newAssumeCache); the informers are not
	// started, and need not be.
	o.indexers = map[string]cache.Indexer{
		"Namespace":             factory.Core().V1().Namespaces().Informer().GetIndexer(),
		"Service":               factory.Core().V1().Services().Informer().GetIndexer(),
		"ReplicationController": factory.Core().V1().ReplicationControllers().Informer().GetIndexer(),
		"ReplicaSet":            factory.Apps().V1().ReplicaSets().Informer().GetIndexer(),
		"StatefulSet":           factory.Apps().V1().StatefulSets().Informer().GetIndexer(),
		"PersistentVolume":      factory.Core().V1().PersistentVolumes().Informer().GetIndexer(),
		"PersistentVolumeClaim": factory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer(),
		"StorageClass":          factory.Storage().V1().StorageClasses().Informer().GetIndexer(),
		"CSINode":               factory.Storage().V1().CSINodes().Informer().GetIndexer(),
		"CSIDriver":             factory.Storage().V1().CSIDrivers().Informer().GetIndexer(),
	}
	// As kube-scheduler builds it (pkg/scheduler/scheduler.go).
	csiManager := nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())
	build := func(p *config.KubeSchedulerProfile) (framework.Framework, error) {
		return frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), p,
			frameworkruntime.WithClientSet(client),
			frameworkruntime.WithInformerFactory(factory),
			frameworkruntime.WithSnapshotSharedLister(o.lister),
			frameworkruntime.WithPodNominator(o.nominator),
			frameworkruntime.WithSharedCSIManager(csiManager),
			frameworkruntime.WithParallelism(1),
		)
	}
	if o.full, err = build(&profile); err != nil {
		return nil, err
	}
	for _, p := range o.full.ListPlugins().Filter.Enabled {
		one := *profile.DeepCopy()
		one.Plugins.Filter = config.PluginSet{Enabled: []config.Plugin{{Name: p.Name}}, Disabled: []config.Plugin{{Name: "*"}}}
		f, err := build(&one)
		if err != nil {
			return nil, fmt.Errorf("framework with only %s: %w", p.Name, err)
		}
		o.single = append(o.single, f)
		o.names = append(o.names, p.Name)
	}
	return o, nil
}

func decode(raw []byte) (runtime.Object, string, error) {
	obj, gvk, err := clientscheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, "", err
	}
	return obj, gvk.Kind, nil
}

func (o *oracle) run(ctx context.Context, in *input) (*output, error) {
	var nodes []*v1.Node
	var assigned []*v1.Pod
	byKind := map[string][]interface{}{}
	requests := map[string]podResources{}
	o.nominator.byNode = map[string][]fwk.PodInfo{}
	for i, raw := range in.Objects {
		obj, kind, err := decode(raw)
		if err != nil {
			return nil, fmt.Errorf("object %d: %w", i, err)
		}
		switch t := obj.(type) {
		case *v1.Node:
			nodes = append(nodes, t)
		case *v1.Pod:
			if requests[t.Namespace+"/"+t.Name], err = placedRequests(t); err != nil {
				return nil, fmt.Errorf("object %d: %w", i, err)
			}
			if t.Spec.NodeName != "" {
				assigned = append(assigned, t)
			} else if t.Status.NominatedNodeName != "" {
				pi, err := framework.NewPodInfo(t)
				if err != nil {
					return nil, err
				}
				o.nominator.byNode[t.Status.NominatedNodeName] = append(o.nominator.byNode[t.Status.NominatedNodeName], pi)
			}
		default:
			if _, ok := o.indexers[kind]; !ok {
				return nil, fmt.Errorf("object %d: kind %s is not read", i, kind)
			}
			byKind[kind] = append(byKind[kind], obj)
		}
	}
	for kind, idx := range o.indexers {
		if err := idx.Replace(byKind[kind], ""); err != nil {
			return nil, err
		}
	}
	podObj, _, err := decode(in.Pod)
	if err != nil {
		return nil, fmt.Errorf("pod: %w", err)
	}
	pod, ok := podObj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("pod: not a Pod")
	}
	// kube-scheduler's snapshot holds only the nodes it knows: pods bound to a node it has no
	// object for stay in its cache and out of the snapshot (backend/cache.UpdateSnapshot).
	known := map[string]bool{}
	for _, n := range nodes {
		known[n.Name] = true
	}
	placed := assigned[:0]
	for _, p := range assigned {
		if known[p.Spec.NodeName] {
			placed = append(placed, p)
		}
	}
	snapshot := schedcache.NewSnapshot(placed, nodes)
	o.lister.SharedLister = snapshot
	requests[""] = pendingRequests(pod)
	out := &output{Nodes: map[string]nodeResult{}, Requests: requests}

	state := framework.NewCycleState()
	preRes, s, _ := o.full.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return nil, s.AsError()
		}
		for _, n := range nodes {
			st := pluginStatus{Plugin: s.Plugin(), Code: s.Code().String(), Reasons: s.Reasons()}
			out.Nodes[n.Name] = nodeResult{Code: st.Code, Plugin: st.Plugin, Reasons: st.Reasons, Plugins: []pluginStatus{st}, PreFilter: true}
		}
		return out, nil
	}
	// Each plugin's own PreFilter state, made at the first rejected node and shared by the others:
	// Filter plugins only read the cycle state (kube-scheduler runs them on many nodes at once
	// over one state).
	var singleStates []fwk.CycleState
	for _, n := range nodes {
		if !preRes.AllNodes() && !preRes.NodeNames.Has(n.Name) {
			st := pluginStatus{Plugin: "PreFilterResult", Code: fwk.UnschedulableAndUnresolvable.String(), Reasons: []string{"node(s) didn't satisfy plugin(s) PreFilter"}}
			out.Nodes[n.Name] = nodeResult{Code: st.Code, Plugin: st.Plugin, Reasons: st.Reasons, Plugins: []pluginStatus{st}, PreFilter: true}
			continue
		}
		info, err := snapshot.NodeInfos().Get(n.Name)
		if err != nil {
			return nil, err
		}
		status := o.full.RunFilterPluginsWithNominatedPods(ctx, state, pod, info)
		if status.IsSuccess() {
			out.Nodes[n.Name] = nodeResult{Fits: true}
			continue
		}
		if !status.IsRejected() {
			return nil, status.AsError()
		}
		r := nodeResult{Code: status.Code().String(), Plugin: status.Plugin(), Reasons: status.Reasons()}
		if singleStates == nil {
			if singleStates, err = o.singlePreFilter(ctx, pod); err != nil {
				return nil, err
			}
		}
		if r.Plugins, err = o.everyRejection(ctx, pod, info, singleStates); err != nil {
			return nil, err
		}
		out.Nodes[n.Name] = r
	}
	return out, nil
}

// everyRejection runs each filter plugin alone through the two passes of
// RunFilterPluginsWithNominatedPods, and returns every plugin that rejects the node in the pass
// that decides: the first (nominated pods of at least the pod's priority added) when any plugin
// rejects it there, since the full run stops after it; else the second (without them).
func (o *oracle) everyRejection(ctx context.Context, pod *v1.Pod, info fwk.NodeInfo, states []fwk.CycleState) ([]pluginStatus, error) {
	var rejected []pluginStatus
	added := false
	for pass := 0; pass < 2; pass++ {
		if pass == 1 && (!added || len(rejected) > 0) {
			break
		}
		for i, f := range o.single {
			state, nodeInfo := states[i], info
			if pass == 0 {
				var err error
				var podsAdded bool
				if podsAdded, state, nodeInfo, err = addNominated(ctx, f, o.nominator, pod, states[i], info); err != nil {
					return nil, err
				}
				added = added || podsAdded
			}
			s := f.RunFilterPlugins(ctx, state, pod, nodeInfo)
			if s.IsSuccess() {
				continue
			}
			if !s.IsRejected() {
				return nil, s.AsError()
			}
			rejected = append(rejected, pluginStatus{Plugin: o.names[i], Code: s.Code().String(), Reasons: s.Reasons()})
		}
	}
	return rejected, nil
}

// singlePreFilter runs the PreFilter plugins of each one-plugin framework, each into its own
// cycle state.
func (o *oracle) singlePreFilter(ctx context.Context, pod *v1.Pod) ([]fwk.CycleState, error) {
	states := make([]fwk.CycleState, len(o.single))
	for i, f := range o.single {
		states[i] = framework.NewCycleState()
		if _, s, _ := f.RunPreFilterPlugins(ctx, states[i], pod); !s.IsSuccess() {
			return nil, fmt.Errorf("PreFilter with only %s: %v", o.names[i], s)
		}
	}
	return states, nil
}

// addNominated is framework/runtime's addGENominatedPods (unexported there), line for line.
func addNominated(ctx context.Context, f framework.Framework, nom *nominator, pod *v1.Pod, state fwk.CycleState, nodeInfo fwk.NodeInfo) (bool, fwk.CycleState, fwk.NodeInfo, error) {
	nominated := nom.NominatedPodsForNode(nodeInfo.Node().Name)
	if len(nominated) == 0 {
		return false, state, nodeInfo, nil
	}
	nodeInfoOut := nodeInfo.Snapshot()
	stateOut := state.Clone()
	podsAdded := false
	for _, pi := range nominated {
		if corev1.PodPriority(pi.GetPod()) >= corev1.PodPriority(pod) && pi.GetPod().UID != pod.UID {
			nodeInfoOut.AddPodInfo(pi)
			if status := f.RunPreFilterExtensionAddPod(ctx, stateOut, pod, pi, nodeInfoOut); !status.IsSuccess() {
				return false, state, nodeInfo, status.AsError()
			}
			podsAdded = true
		}
	}
	return podsAdded, stateOut, nodeInfoOut, nil
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Each case's objects are garbage once answered and the heap stays small: collecting less
	// often buys about a sixth of the comparison's time (docs/testing.md).
	debug.SetGCPercent(800)
	klog.SetOutput(os.Stderr)
	klog.LogToStderr(false)
	metrics.Register()
	o, err := newOracle(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(2)
	}
	if len(os.Args) > 1 && os.Args[1] == "--plugins" {
		fmt.Println(strings.Join(o.names, " "))
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	for in.Scan() {
		var c input
		var out *output
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			out = &output{Error: err.Error()}
		} else if out, err = o.run(ctx, &c); err != nil {
			out = &output{Error: err.Error()}
		}
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(1)
		}
		if err := w.Flush(); err != nil {
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(1)
	}
}
