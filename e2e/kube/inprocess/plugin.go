package main

// The framework plugin: the engine's predicates as one Filter, its priorities as one Score (computed
// for every feasible node at once, in NormalizeScore), and
// Reserve/Unreserve keeping its model's assumed pods as kube-scheduler keeps its own.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in a profile's `plugins` and `pluginConfig`.
const Name = "PredicateEngine"

const stateKey fwk.StateKey = Name

// Args are the plugin's settings (pluginConfig's args); an unknown field is refused.
type Args struct {
	// Policy is the Policy file (the extender's --policy); empty: the default plan. Read again
	// every two seconds, a change put in force when it loads.
	Policy string `json:"policy,omitempty"`
	// Parallelism: threads scoring the feasible nodes; 0 or 1 scores on kube-scheduler's own
	// thread, which waits for the scores anyway.
	Parallelism int `json:"parallelism,omitempty"`
}

// Plugin is the engine inside kube-scheduler's cycle.
type Plugin struct {
	engine *engine
	handle fwk.Handle
	// synced: every informer handler of the engine's model has delivered its initial list.
	synced  func() bool
	waiting sync.Once
	// podsPassed counts the cycles whose pod the informer had not delivered yet (passed as JSON).
	podsPassed atomic.Uint64
	rejected   rejectedPods
}

var (
	_ fwk.PreFilterPlugin     = (*Plugin)(nil)
	_ fwk.FilterPlugin        = (*Plugin)(nil)
	_ fwk.ScorePlugin         = (*Plugin)(nil)
	_ fwk.ScoreExtensions     = (*Plugin)(nil)
	_ fwk.ReservePlugin       = (*Plugin)(nil)
	_ fwk.PreFilterExtensions = (*Plugin)(nil)
	_ fwk.EnqueueExtensions   = (*Plugin)(nil)
)

// decodeArgs reads the plugin's args strictly: a misspelt field is an error, not a default.
func decodeArgs(obj runtime.Object) (Args, error) {
	var args Args
	if obj == nil {
		return args, nil
	}
	unknown, ok := obj.(*runtime.Unknown)
	if !ok {
		return args, fmt.Errorf("%s: args of type %T, want the plugin's own (policy, parallelism)", Name, obj)
	}
	if len(unknown.Raw) == 0 {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(unknown.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return args, fmt.Errorf("%s's args: %w", Name, err)
	}
	return args, nil
}

// New makes the plugin: the engine (the Policy read now; a bad one stops kube-scheduler with the
// file and field), the informers feeding its model, and the Policy's reload.
func New(ctx context.Context, obj runtime.Object, handle fwk.Handle) (fwk.Plugin, error) {
	args, err := decodeArgs(obj)
	if err != nil {
		return nil, err
	}
	config, err := json.Marshal(map[string]any{
		"policy":           nilIfEmpty(args.Policy),
		"parallelism":      args.Parallelism,
		"schedulerVersion": version.Get().GitVersion,
	})
	if err != nil {
		return nil, err
	}
	e, err := newEngine(config)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	p := &Plugin{engine: e, handle: handle, rejected: rejectedPods{pods: map[types.UID]*v1.Pod{}}}
	synced, err := feed(e, handle.SharedInformerFactory(), p.rejected.modelChanged)
	if err != nil {
		e.free()
		return nil, err
	}
	p.synced = synced
	go p.housekeeping(ctx)
	go p.retryRejected(ctx)
	klog.InfoS("The predicate engine is in the scheduling cycle", "plugin", Name, "policy", args.Policy)
	return p, nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// housekeeping reads the Policy again and ends lost assumptions every two seconds, and logs (at
// -v=2) how many cycles had to be passed their pod.
func (p *Plugin) housekeeping(ctx context.Context) {
	ticker := time.NewTicker(2 * time.Second)
	defer ticker.Stop()
	var passed uint64
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			reloaded, err := p.engine.tick()
			if err != nil {
				klog.ErrorS(err, "The Policy changed and does not load; the previous one stays in force", "plugin", Name)
			} else if reloaded {
				klog.InfoS("New Policy in force", "plugin", Name)
			}
			if now := p.podsPassed.Load(); now != passed {
				passed = now
				klog.V(2).InfoS("Cycles whose pod the engine's informer had not delivered yet", "plugin", Name, "total", now)
			}
		}
	}
}

func (p *Plugin) Name() string { return Name }

// cycleState holds the engine's cycle for the pod, and the changes the framework made to nodes in
// this copy of the state (PreFilterExtensions: preemption's victims removed and spared, the double
// pass's nominated pods added).
type cycleState struct {
	cycle   *engineCycle
	changes []change
	pod     *v1.Pod
	// rejected: the engine rejected some node in this cycle (the pod is then remembered, see
	// rejectedPods).
	rejected *atomic.Bool
}

// change is one pod removed from or added to a node in a simulation.
type change struct {
	node, pod string // pod: namespace/name
	added     bool
}

// Clone shares the prepared pod and copies the changes: each copy of the state is its own
// simulation.
func (s *cycleState) Clone() fwk.StateData {
	return &cycleState{cycle: s.cycle, changes: append([]change(nil), s.changes...), pod: s.pod, rejected: s.rejected}
}

// PreFilter prepares the pod once: from the engine's model by key and resourceVersion, or (when
// the informer has not delivered this version yet) from the pod itself.
func (p *Plugin) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	// kube-scheduler waits for its own informers' handlers before the first cycle, not for this
	// plugin's: the first cycle waits for the engine's model to have every initial list, as the
	// extender's /readyz waits for its watches.
	if !p.synced() {
		p.waiting.Do(func() { klog.InfoS("Waiting for the engine's model to sync", "plugin", Name) })
		if !cache.WaitForCacheSync(ctx.Done(), p.synced) {
			return nil, fwk.AsStatus(fmt.Errorf("%s: the engine's model has not synced", Name))
		}
	}
	c, err := p.engine.cycle(pod.Namespace, pod.Name, pod.ResourceVersion, nil)
	if err == errNeedPod {
		p.podsPassed.Add(1)
		var raw []byte
		if raw, err = json.Marshal(pod); err == nil {
			c, err = p.engine.cycle(pod.Namespace, pod.Name, pod.ResourceVersion, raw)
		}
	}
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	state.Write(stateKey, &cycleState{cycle: c, pod: pod, rejected: new(atomic.Bool)})
	return nil, nil
}

// EventsToRegister says which cluster events can let a pod the engine rejected fit, so that
// kube-scheduler retries it on those only, after its backoff, as it does for its own plugins: an
// assigned pod deleted, added (another's affinity), relabelled or scaled down; a node added or
// changed in what the predicates read; the volume objects. Without it every event would retry the
// pod, a victim's deletionTimestamp too, which can start a second preemption before the first one's
// nomination is in place.
func (p *Plugin) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{
			Event:          fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Add | fwk.Delete | fwk.UpdatePodLabel | fwk.UpdatePodScaleDown},
			QueueingHintFn: assignedPodOnly,
		},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable | fwk.UpdateNodeLabel | fwk.UpdateNodeTaint | fwk.UpdateNodeCondition}},
		{Event: fwk.ClusterEvent{Resource: fwk.PersistentVolume, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.PersistentVolumeClaim, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.StorageClass, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.CSINode, ActionType: fwk.Add | fwk.Update}},
	}, nil
}

// assignedPodOnly queues the rejected pod for events of pods on a node (the only ones the engine
// counts), and skips those of pods waiting to be scheduled.
func assignedPodOnly(_ klog.Logger, _ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	for _, obj := range []any{newObj, oldObj} {
		if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName != "" {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// PreFilterExtensions: the framework tells the plugin of the pods it adds to or removes from a node
// in a simulation, and the engine sees the node so changed.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return p }

func (p *Plugin) AddPod(_ context.Context, state fwk.CycleState, _ *v1.Pod, pod fwk.PodInfo, node fwk.NodeInfo) *fwk.Status {
	return recordChange(state, pod, node, true)
}

func (p *Plugin) RemovePod(_ context.Context, state fwk.CycleState, _ *v1.Pod, pod fwk.PodInfo, node fwk.NodeInfo) *fwk.Status {
	return recordChange(state, pod, node, false)
}

func recordChange(state fwk.CycleState, pod fwk.PodInfo, node fwk.NodeInfo, added bool) *fwk.Status {
	s, status := readState(state)
	if status != nil {
		return status
	}
	if n := node.Node(); n != nil {
		p := pod.GetPod()
		s.changes = append(s.changes, change{node: n.Name, pod: p.Namespace + "/" + p.Name, added: added})
	}
	return nil
}

func readState(state fwk.CycleState) (*cycleState, *fwk.Status) {
	data, err := state.Read(stateKey)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("%s: no cycle from PreFilter: %w", Name, err))
	}
	s, ok := data.(*cycleState)
	if !ok {
		return nil, fwk.AsStatus(fmt.Errorf("%s: cycle state of type %T", Name, data))
	}
	return s, nil
}

func read(state fwk.CycleState) (*engineCycle, *fwk.Status) {
	s, status := readState(state)
	if status != nil {
		return nil, status
	}
	return s.cycle, nil
}

// Filter is the plan's predicates, in the plan's order, against one node, with the engine's
// nominated-pod double pass.
func (p *Plugin) Filter(_ context.Context, state fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	s, status := readState(state)
	if status != nil {
		return status
	}
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	// Each pod's last change counts: preemption removes every lower-priority pod, then adds back
	// (and, when the pod no longer fits, removes again) one victim after another.
	var last map[string]bool
	for _, c := range s.changes {
		if c.node == node.Name {
			if last == nil {
				last = map[string]bool{}
			}
			last[c.pod] = c.added
		}
	}
	var removed, added []string
	for pod, isAdded := range last {
		if isAdded {
			added = append(added, pod)
		} else {
			removed = append(removed, pod)
		}
	}
	verdict, reasons := 0, ""
	if removed == nil && added == nil {
		verdict, reasons = s.cycle.filter(node.Name)
	} else {
		verdict, reasons = s.cycle.filterAdjusted(node.Name, removed, added)
	}
	if verdict != fits && s.rejected.CompareAndSwap(false, true) {
		p.rejected.add(s.pod)
	}
	switch verdict {
	case fits:
		return nil
	case unschedulable:
		return fwk.NewStatus(fwk.Unschedulable, reasons)
	case unresolvable, unknownNode:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reasons)
	default:
		return fwk.AsStatus(fmt.Errorf("%s: %s", Name, reasons))
	}
}

// Score is 0 for every node: the priorities normalise over all the feasible nodes, so the engine
// scores them all at once in NormalizeScore, which the framework calls with every node's score.
func (p *Plugin) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, _ fwk.NodeInfo) (int64, *fwk.Status) {
	return 0, nil
}

func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore scores every feasible node in one call to the engine, 0..10 as the extender
// protocol's, scaled to the framework's 0..100 as kube-scheduler scales an extender's
// (MaxNodeScore / MaxExtenderPriority); the profile's weight then applies.
func (p *Plugin) NormalizeScore(_ context.Context, state fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	c, status := read(state)
	if status != nil {
		return status
	}
	names := make([]string, len(scores))
	for i := range scores {
		names[i] = scores[i].Name
	}
	computed, err := c.scores(names)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("%s: %w", Name, err))
	}
	for i := range scores {
		scores[i].Score = computed[i] * (fwk.MaxNodeScore / 10)
	}
	return nil
}

// Reserve counts the pod on its node in the engine's model at once, as kube-scheduler's assume
// does in its own cache: the next pod's cycle sees it before the binding's informer event.
func (p *Plugin) Reserve(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	c, status := read(state)
	if status != nil {
		return status
	}
	if err := c.reserve(nodeName); err != nil {
		return fwk.AsStatus(fmt.Errorf("%s: %w", Name, err))
	}
	p.rejected.remove(pod.UID)
	return nil
}

// Unreserve: a later plugin or the binding failed; the pod stops counting on the node.
func (p *Plugin) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) {
	if err := p.engine.unreserve(pod.Namespace, pod.Name, nodeName); err != nil {
		klog.ErrorS(err, "Unreserve in the engine's model failed", "plugin", Name)
	}
}

// rejectedPods are the pods the engine rejected some node for in their latest cycle. kube-scheduler
// moves a pod rejected by a plugin without queueing hints back to its active queue on any cluster
// event, but it may do so before this plugin's own informer handler has put the same event into
// the engine's model (each handler has its own goroutine): the retry then meets the model of
// before the event, and nothing wakes the pod again until the queue's periodic flush. So after a
// change to the model that can make room (modelChanged: a pod deleted, finished, relabelled or
// bound; a node added or changed), these pods are activated once more, at most every
// retryInterval, and forgotten: a pod rejected again is remembered again by its next Filter.
type rejectedPods struct {
	mu      sync.Mutex
	pods    map[types.UID]*v1.Pod
	changed bool
}

// retryInterval coalesces the model's changes into one activation.
const retryInterval = 250 * time.Millisecond

// rejectedLimit bounds the pods remembered between two activations: past it, new ones are left to
// kube-scheduler's own events and flush.
const rejectedLimit = 10000

func (r *rejectedPods) add(pod *v1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pods) < rejectedLimit {
		r.pods[pod.UID] = pod
	}
}

func (r *rejectedPods) remove(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pods, uid)
}

// modelChanged notes a change that can make room, and forgets a pod that is gone or bound.
func (r *rejectedPods) modelChanged(gone *v1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gone != nil {
		delete(r.pods, gone.UID)
	}
	r.changed = true
}

// take returns the remembered pods and forgets them, when the model changed since the last take.
func (r *rejectedPods) take() map[string]*v1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.changed || len(r.pods) == 0 {
		return nil
	}
	r.changed = false
	pods := make(map[string]*v1.Pod, len(r.pods))
	for uid, pod := range r.pods {
		pods[pod.Namespace+"/"+pod.Name] = pod
		delete(r.pods, uid)
	}
	return pods
}

// retryRejected activates the rejected pods after the model changed, every retryInterval at most.
func (p *Plugin) retryRejected(ctx context.Context) {
	ticker := time.NewTicker(retryInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if pods := p.rejected.take(); pods != nil {
				p.handle.Activate(klog.FromContext(ctx), pods)
			}
		}
	}
}
