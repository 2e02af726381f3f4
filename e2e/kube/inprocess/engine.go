package main

// The Rust engine (crates/engine-ffi), linked in as a static library. Its C ABI is
// crates/engine-ffi/include/predicate_engine.h; this file is the only one that calls it.
// PREDICATE_ENGINE_LIB (set by e2e/build.sh inprocess) names the directory of
// libpredicate_engine_ffi.a.

/*
#cgo CFLAGS: -I${SRCDIR}/../../../crates/engine-ffi/include
#cgo LDFLAGS: -lpredicate_engine_ffi -ldl -lm -lpthread
#include <stdlib.h>
#include "predicate_engine.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// messageCap is the room given to the engine for an error or a node's reasons; longer ones are cut.
const messageCap = 4096

// kinds are the engine's PE_KIND_* numbers.
const (
	kindNode                  = C.PE_KIND_NODE
	kindPod                   = C.PE_KIND_POD
	kindNamespace             = C.PE_KIND_NAMESPACE
	kindService               = C.PE_KIND_SERVICE
	kindPersistentVolume      = C.PE_KIND_PERSISTENT_VOLUME
	kindPersistentVolumeClaim = C.PE_KIND_PERSISTENT_VOLUME_CLAIM
	kindStorageClass          = C.PE_KIND_STORAGE_CLASS
	kindCSINode               = C.PE_KIND_CSI_NODE
	kindReplicaSet            = C.PE_KIND_REPLICA_SET
	kindReplicationController = C.PE_KIND_REPLICATION_CONTROLLER
	kindStatefulSet           = C.PE_KIND_STATEFUL_SET
)

// Verdicts of engineCycle.filter.
const (
	fits          = int(C.PE_FITS)
	unschedulable = int(C.PE_UNSCHEDULABLE)
	unresolvable  = int(C.PE_UNRESOLVABLE)
	unknownNode   = int(C.PE_UNKNOWN_NODE)
)

// outBuf is a pe_out and its bytes in C memory (cgo forbids passing C a Go pointer to memory that
// holds another Go pointer), pooled: most calls need one. The C memory is freed when the pool
// drops the Go value.
type outBuf struct{ out *C.pe_out }

var outs = sync.Pool{New: func() any {
	out := (*C.pe_out)(C.malloc(C.size_t(unsafe.Sizeof(C.pe_out{}))))
	out.ptr = (*C.uint8_t)(C.malloc(messageCap))
	out.cap = messageCap
	o := &outBuf{out: out}
	runtime.AddCleanup(o, func(out *C.pe_out) {
		C.free(unsafe.Pointer(out.ptr))
		C.free(unsafe.Pointer(out))
	}, out)
	return o
}}

func getOut() *outBuf {
	o := outs.Get().(*outBuf)
	o.out.len = 0
	return o
}

func putOut(o *outBuf) { outs.Put(o) }

func (o *outBuf) ptr() *C.pe_out { return o.out }

func (o *outBuf) String() string {
	return C.GoStringN((*C.char)(unsafe.Pointer(o.out.ptr)), C.int(o.out.len))
}

// bytesArg is a (pointer, length) pair over a Go slice or string, valid for one call.
func bytesArg(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

func strArg(s string) (*C.uint8_t, C.size_t) {
	if len(s) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(unsafe.StringData(s))), C.size_t(len(s))
}

// engine is the Rust engine of this kube-scheduler: one per profile that enables the plugin.
type engine struct{ p *C.pe_engine }

func newEngine(config []byte) (*engine, error) {
	o := getOut()
	defer putOut(o)
	ptr, n := bytesArg(config)
	p := C.pe_engine_new(ptr, n, o.ptr())
	runtime.KeepAlive(config)
	if p == nil {
		return nil, errors.New(o.String())
	}
	return &engine{p: p}, nil
}

// free frees the engine (when the plugin could not be made; a running engine lives as long as
// kube-scheduler).
func (e *engine) free() { C.pe_engine_free(e.p) }

// tick expires unconfirmed assumptions and reads the Policy again: whether a new one is in force.
func (e *engine) tick() (bool, error) {
	o := getOut()
	defer putOut(o)
	switch C.pe_engine_tick(e.p, o.ptr()) {
	case C.PE_OK:
		return false, nil
	case C.PE_RELOADED:
		return true, nil
	default:
		return false, errors.New(o.String())
	}
}

func (e *engine) upsert(kind uint32, json []byte) error {
	o := getOut()
	defer putOut(o)
	ptr, n := bytesArg(json)
	code := C.pe_upsert(e.p, C.uint32_t(kind), ptr, n, o.ptr())
	runtime.KeepAlive(json)
	if code != C.PE_OK {
		return errors.New(o.String())
	}
	return nil
}

func (e *engine) delete(kind uint32, namespace, name string) error {
	o := getOut()
	defer putOut(o)
	nsPtr, nsLen := strArg(namespace)
	namePtr, nameLen := strArg(name)
	code := C.pe_delete(e.p, C.uint32_t(kind), nsPtr, nsLen, namePtr, nameLen, o.ptr())
	runtime.KeepAlive(namespace)
	runtime.KeepAlive(name)
	if code != C.PE_OK {
		return errors.New(o.String())
	}
	return nil
}

// errNeedPod: the engine's model does not hold the pod at this version; pass it.
var errNeedPod = errors.New("the engine's model does not have the pod at this resourceVersion")

// engineCycle is one scheduling cycle's pod, prepared by the engine. Freed when the Go value is
// collected (kube-scheduler's CycleState has no end of its own; preemption's dry runs read it
// after Filter).
type engineCycle struct {
	p      *C.pe_cycle
	engine *engine
}

func (e *engine) cycle(namespace, name, resourceVersion string, pod []byte) (*engineCycle, error) {
	o := getOut()
	defer putOut(o)
	nsPtr, nsLen := strArg(namespace)
	namePtr, nameLen := strArg(name)
	rvPtr, rvLen := strArg(resourceVersion)
	podPtr, podLen := bytesArg(pod)
	var status C.int32_t
	p := C.pe_cycle_new(e.p, nsPtr, nsLen, namePtr, nameLen, rvPtr, rvLen, podPtr, podLen, &status, o.ptr())
	runtime.KeepAlive(namespace)
	runtime.KeepAlive(name)
	runtime.KeepAlive(resourceVersion)
	runtime.KeepAlive(pod)
	switch {
	case status == C.PE_OK && p != nil:
		c := &engineCycle{p: p, engine: e}
		runtime.AddCleanup(c, func(p *C.pe_cycle) { C.pe_cycle_free(p) }, p)
		return c, nil
	case status == C.PE_NEED_POD:
		return nil, errNeedPod
	default:
		return nil, errors.New(o.String())
	}
}

// filter is the pod against one node: a verdict and, unless it fits, the reasons.
func (c *engineCycle) filter(node string) (int, string) {
	o := getOut()
	defer putOut(o)
	ptr, n := strArg(node)
	code := int(C.pe_filter(c.p, ptr, n, o.ptr()))
	runtime.KeepAlive(node)
	runtime.KeepAlive(c)
	if code == fits {
		return fits, ""
	}
	return code, o.String()
}

// filterAdjusted is filter on the node as the framework changed it for a simulation: the pods
// (namespace/name) its RemovePod and AddPod were told of.
func (c *engineCycle) filterAdjusted(node string, removed, added []string) (int, string) {
	o := getOut()
	defer putOut(o)
	r, a := strings.Join(removed, "\n"), strings.Join(added, "\n")
	nodePtr, nodeLen := strArg(node)
	rPtr, rLen := strArg(r)
	aPtr, aLen := strArg(a)
	code := int(C.pe_filter_adjusted(c.p, nodePtr, nodeLen, rPtr, rLen, aPtr, aLen, o.ptr()))
	runtime.KeepAlive(node)
	runtime.KeepAlive(r)
	runtime.KeepAlive(a)
	runtime.KeepAlive(c)
	if code == fits {
		return fits, ""
	}
	return code, o.String()
}

// scores are the plan's priorities over the feasible nodes, 0..10 each, in their order.
func (c *engineCycle) scores(nodes []string) ([]int64, error) {
	scores := make([]int64, len(nodes))
	if len(nodes) == 0 {
		return scores, nil
	}
	o := getOut()
	defer putOut(o)
	names := strings.Join(nodes, "\n")
	ptr, n := strArg(names)
	code := C.pe_score(c.engine.p, c.p, ptr, n, (*C.int64_t)(unsafe.Pointer(&scores[0])), C.size_t(len(scores)), o.ptr())
	runtime.KeepAlive(names)
	runtime.KeepAlive(scores)
	runtime.KeepAlive(c)
	if code != C.PE_OK {
		return nil, errors.New(o.String())
	}
	return scores, nil
}

func (c *engineCycle) reserve(node string) error {
	o := getOut()
	defer putOut(o)
	ptr, n := strArg(node)
	code := C.pe_reserve(c.engine.p, c.p, ptr, n, o.ptr())
	runtime.KeepAlive(node)
	runtime.KeepAlive(c)
	if code != C.PE_OK {
		return errors.New(o.String())
	}
	return nil
}

func (e *engine) unreserve(namespace, name, node string) error {
	o := getOut()
	defer putOut(o)
	nsPtr, nsLen := strArg(namespace)
	namePtr, nameLen := strArg(name)
	nodePtr, nodeLen := strArg(node)
	code := C.pe_unreserve(e.p, nsPtr, nsLen, namePtr, nameLen, nodePtr, nodeLen, o.ptr())
	runtime.KeepAlive(namespace)
	runtime.KeepAlive(name)
	runtime.KeepAlive(node)
	if code != C.PE_OK {
		return fmt.Errorf("unreserve %s/%s on %s: %s", namespace, name, node, o.String())
	}
	return nil
}
