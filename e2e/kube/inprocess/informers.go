package main

// The engine's cluster model, fed by kube-scheduler's own informers: every add and update of the
// kinds the model keeps goes in as JSON, every delete by key. The informers are the ones
// kube-scheduler already runs (nodes, pods, volumes, CSINodes, namespaces), plus services and the
// workload controllers that the Policy's spreading priorities read; no second watch of the API server.

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// feed registers the engine's handlers on the informers of every kind its model keeps. `changed` is
// called after a change to the model that can make room for a pod the engine rejected (a pod
// deleted, a pod bound or updated on a node, a node added or updated), with the pod that is gone
// or bound, if any.
func feed(e *engine, factory informers.SharedInformerFactory, changed func(gone *v1.Pod)) error {
	core, apps, storage := factory.Core().V1(), factory.Apps().V1(), factory.Storage().V1()
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
		if _, err := kind.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    h.upsert,
			UpdateFunc: func(_, obj any) { h.upsert(obj) },
			DeleteFunc: h.delete,
		}); err != nil {
			return fmt.Errorf("%s: the engine's informer handler: %w", Name, err)
		}
	}
	return nil
}

type handler struct {
	engine  *engine
	kind    uint32
	changed func(gone *v1.Pod)
}

func (h handler) upsert(obj any) {
	raw, err := json.Marshal(obj)
	if err == nil {
		err = h.engine.upsert(h.kind, raw)
	}
	if err != nil {
		// The model keeps the previous version; the error names the object and the field.
		klog.ErrorS(err, "The engine's model refused an object", "plugin", Name, "kind", h.kind)
		return
	}
	switch h.kind {
	case kindNode:
		h.changed(nil)
	case kindPod:
		if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName != "" {
			h.changed(pod)
		}
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
