/*
 * The predicate engine's C ABI (crates/engine-ffi/src/abi.rs, docs/in-process.md), for
 * kube-scheduler's framework plugins (e2e/kube/inprocess) through cgo.
 *
 * - A (pointer, length) pair is `length` readable bytes, or NULL with length 0; text is UTF-8
 *   (anything else is an error returned).
 * - Handles come from pe_engine_new and pe_cycle_new and are freed once, after every call using
 *   them has returned; a cycle before its engine. NULL handles are refused with an error.
 * - Every function but the frees may be called from many threads at once.
 * - pe_out is a caller-owned buffer: at most `cap` bytes are written (cut at a UTF-8 character
 *   boundary) and `len` set to what was written. A NULL pe_out means no message is wanted. A
 *   pe_out, like pe_score's `scores`, belongs to one call at a time and overlaps no input.
 * - No Rust panic crosses the boundary: it comes back as PE_ERROR with its message.
 */
#ifndef PREDICATE_ENGINE_H
#define PREDICATE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct PeEngine pe_engine;
typedef struct PeCycle pe_cycle;

typedef struct {
  uint8_t *ptr;
  size_t cap;
  size_t len;
} pe_out;

#define PE_OK 0
#define PE_ERROR (-1)
#define PE_NEED_POD 1
#define PE_RELOADED 1
#define PE_FITS 0
#define PE_UNSCHEDULABLE 1
#define PE_UNRESOLVABLE 2
#define PE_UNKNOWN_NODE 3

#define PE_KIND_NODE 0
#define PE_KIND_POD 1
#define PE_KIND_NAMESPACE 2
#define PE_KIND_SERVICE 3
#define PE_KIND_PERSISTENT_VOLUME 4
#define PE_KIND_PERSISTENT_VOLUME_CLAIM 5
#define PE_KIND_STORAGE_CLASS 6
#define PE_KIND_CSI_NODE 7
#define PE_KIND_REPLICA_SET 8
#define PE_KIND_REPLICATION_CONTROLLER 9
#define PE_KIND_STATEFUL_SET 10

/* Settings as JSON: {"policy": path, "schedulerVersion": "v1.37.2", "parallelism": n}.
 * NULL, with the reason in err, when they are wrong or the Policy does not load. */
pe_engine *pe_engine_new(const uint8_t *config, size_t config_len, pe_out *err);
void pe_engine_free(pe_engine *engine);
/* Every couple of seconds: expire unconfirmed assumptions, read the Policy again.
 * PE_OK unchanged, PE_RELOADED a new Policy in force, PE_ERROR a changed one that does not load. */
int32_t pe_engine_tick(const pe_engine *engine, pe_out *err);

/* The informers' events: an object of kind PE_KIND_* as JSON; a delete by namespace and name. */
int32_t pe_upsert(const pe_engine *engine, uint32_t kind, const uint8_t *json, size_t json_len, pe_out *err);
int32_t pe_delete(const pe_engine *engine, uint32_t kind, const uint8_t *ns, size_t ns_len, const uint8_t *name,
                  size_t name_len, pe_out *err);

/* A cycle for the pod ns/name at resource_version: the model's copy, else `pod` (JSON; NULL to
 * try the model only). *status: PE_OK (a cycle), PE_NEED_POD (NULL: pass the pod), PE_ERROR. */
pe_cycle *pe_cycle_new(const pe_engine *engine, const uint8_t *ns, size_t ns_len, const uint8_t *name,
                       size_t name_len, const uint8_t *resource_version, size_t resource_version_len,
                       const uint8_t *pod, size_t pod_len, int32_t *status, pe_out *err);
void pe_cycle_free(pe_cycle *cycle);

/* PE_FITS, PE_UNSCHEDULABLE / PE_UNRESOLVABLE (reasons in `reason`), PE_UNKNOWN_NODE, PE_ERROR. */
int32_t pe_filter(const pe_cycle *cycle, const uint8_t *node, size_t node_len, pe_out *reason);
/* pe_filter on the node as kube-scheduler changed it for a simulation (preemption, its double pass):
 * removed and added are pods of the model as "namespace/name" lines joined by '\n' (either empty). */
int32_t pe_filter_adjusted(const pe_cycle *cycle, const uint8_t *node, size_t node_len, const uint8_t *removed,
                           size_t removed_len, const uint8_t *added, size_t added_len, pe_out *reason);
/* names: the feasible nodes joined by '\n'; scores: one 0..10 per name. */
int32_t pe_score(const pe_engine *engine, const pe_cycle *cycle, const uint8_t *names, size_t names_len,
                 int64_t *scores, size_t scores_len, pe_out *err);
int32_t pe_reserve(const pe_engine *engine, const pe_cycle *cycle, const uint8_t *node, size_t node_len,
                   pe_out *err);
int32_t pe_unreserve(const pe_engine *engine, const uint8_t *ns, size_t ns_len, const uint8_t *name,
                     size_t name_len, const uint8_t *node, size_t node_len, pe_out *err);

#endif
