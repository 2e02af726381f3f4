package main

// The engine's cluster model, fed by kube-scheduler's own informers: every add and update of the
// kinds the model keeps goes in as JSON, every delete by key. The informers are the ones
// kube-scheduler already runs (nodes, pods, volumes, CSINodes, namespaces), plus services and the
// workload controllers that the Policy's spreading priorities read; no second watch of the API server.

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// feed registers the engine's handlers on the informers of every kind its model keeps, and returns
// whether they have all delivered their initial lists. `changed` is called after a change to the
// model that can make room for a pod the engine rejected (a pod deleted, finished, relabelled or
// bound; a node added or changed), with the pod that is gone or bound, if any.
func feed(e *engine, factory informers.SharedInformerFactory, changed func(gone *v1.Pod)) (func() bool, error) {
	core, apps, storage := factory.Core().V1(), factory.Apps().V1(), factory.Storage().V1()
	var registrations []cache.ResourceEventHandlerRegistration
	for _, kind := range []struct {
		code     uint32
		informer cache.SharedIndexInformer
	}{
		{kindNode, core.Nodes().Informer()},
		{kindPod, core.Pods().Informer()},
		{kindNamespace, core.Namespaces().Informer()},
		{kindService, core.Services().Informer()},
		{kindPersistentVolume, core.PersistentVolumes().Informer()},
		{kindPersistentVolumeClaim, core.PersistentVolumeClaims().Informer()},
		{kindStorageClass, storage.StorageClasses().Informer()},
		{kindCSINode, storage.CSINodes().Informer()},
		{kindReplicaSet, apps.ReplicaSets().Informer()},
		{kindReplicationController, core.ReplicationControllers().Informer()},
		{kindStatefulSet, apps.StatefulSets().Informer()},
	} {
		h := handler{engine: e, kind: kind.code, changed: changed}
		registration, err := kind.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { h.upsert(nil, obj) },
			UpdateFunc: h.upsert,
			DeleteFunc: h.delete,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: the engine's informer handler: %w", Name, err)
		}
		registrations = append(registrations, registration)
	}
	synced := func() bool {
		for _, r := range registrations {
			if !r.HasSynced() {
				return false
			}
		}
		return true
	}
	return synced, nil
}

// makesRoom says whether an update can let a pod the engine rejected fit: for a pod, bound,
// finished or relabelled (the affinity of others); for a node, added, or changed in what the
// predicates read (labels, taints, unschedulable, allocatable, conditions, images).
func makesRoom(kind uint32, old, obj any) bool {
	switch kind {
	case kindPod:
		pod, ok := obj.(*v1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			return false
		}
		before, ok := old.(*v1.Pod)
		if !ok {
			return true
		}
		return before.Spec.NodeName != pod.Spec.NodeName || before.Status.Phase != pod.Status.Phase ||
			!equality.Semantic.DeepEqual(before.Labels, pod.Labels)
	case kindNode:
		node, ok := obj.(*v1.Node)
		before, wasNode := old.(*v1.Node)
		if !ok || !wasNode {
			return true
		}
		return !equality.Semantic.DeepEqual(before.Labels, node.Labels) ||
			!equality.Semantic.DeepEqual(before.Spec, node.Spec) ||
			!equality.Semantic.DeepEqual(before.Status.Allocatable, node.Status.Allocatable) ||
			!equality.Semantic.DeepEqual(before.Status.Conditions, node.Status.Conditions) ||
			!equality.Semantic.DeepEqual(before.Status.Images, node.Status.Images)
	default:
		return false
	}
}

type handler struct {
	engine  *engine
	kind    uint32
	changed func(gone *v1.Pod)
}

func (h handler) upsert(old, obj any) {
	raw, err := json.Marshal(obj)
	if err == nil {
		err = h.engine.upsert(h.kind, raw)
	}
	if err != nil {
		// The model keeps the previous version; the error names the object and the field.
		klog.ErrorS(err, "The engine's model refused an object", "plugin", Name, "kind", h.kind)
		return
	}
	if makesRoom(h.kind, old, obj) {
		pod, _ := obj.(*v1.Pod)
		h.changed(pod)
	}
}

func (h handler) delete(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	m, err := meta.Accessor(obj)
	if err == nil {
		err = h.engine.delete(h.kind, m.GetNamespace(), m.GetName())
	}
	if err != nil {
		klog.ErrorS(err, "The engine's model could not delete an object", "plugin", Name, "kind", h.kind)
		return
	}
	if h.kind == kindPod {
		pod, _ := obj.(*v1.Pod)
		h.changed(pod)
	}
}
