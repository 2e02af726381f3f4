//! The C ABI (include/predicate_engine.h): every function the Go plugin calls, each a thin shim
//! over [`crate::engine`]. The whole of the workspace's `unsafe` is here.
//!
//! Invariants, which the header states for the caller:
//! - A `(pointer, length)` pair is `length` readable bytes, or a null pointer with length 0. Text
//!   is UTF-8; anything else is an error returned, never undefined behaviour.
//! - `pe_engine` and `pe_cycle` pointers come from `pe_engine_new` and `pe_cycle_new` and are freed
//!   once, by `pe_engine_free` and `pe_cycle_free`, after every call using them has returned. A
//!   cycle is freed before its engine. Null handles are refused with an error.
//! - Every function but the two frees may be called from many threads at once.
//! - `pe_out` is a caller-owned buffer: at most `cap` bytes are written (cut at a character
//!   boundary) and `len` set to what was written. A null `pe_out` means "no message wanted". A
//!   `pe_out`, like `pe_score`'s `scores`, belongs to one call at a time and overlaps no input.
//! - No Rust panic crosses the boundary: each function catches it and returns an error.

use std::panic::{catch_unwind, AssertUnwindSafe};

use predicate_engine::cluster::ObjectKind;

use crate::engine::{Cycle, CycleError, InProcess, NodeVerdict, Reload};

/// An engine, opaque to C.
pub struct PeEngine(InProcess);
/// A scheduling cycle, opaque to C.
pub struct PeCycle(Cycle);

/// A caller-owned output buffer.
#[repr(C)]
pub struct PeOut {
    pub ptr: *mut u8,
    pub cap: usize,
    pub len: usize,
}

/// The return codes (the header's `PE_*`).
pub const PE_OK: i32 = 0;
pub const PE_ERROR: i32 = -1;
pub const PE_NEED_POD: i32 = 1;
pub const PE_RELOADED: i32 = 1;
pub const PE_FITS: i32 = 0;
pub const PE_UNSCHEDULABLE: i32 = 1;
pub const PE_UNRESOLVABLE: i32 = 2;
pub const PE_UNKNOWN_NODE: i32 = 3;

/// The kinds, by the header's `PE_KIND_*` numbers.
fn kind_of(code: u32) -> Result<ObjectKind, String> {
    Ok(match code {
        0 => ObjectKind::Node,
        1 => ObjectKind::Pod,
        2 => ObjectKind::Namespace,
        3 => ObjectKind::Service,
        4 => ObjectKind::PersistentVolume,
        5 => ObjectKind::PersistentVolumeClaim,
        6 => ObjectKind::StorageClass,
        7 => ObjectKind::CSINode,
        8 => ObjectKind::ReplicaSet,
        9 => ObjectKind::ReplicationController,
        10 => ObjectKind::StatefulSet,
        other => return Err(format!("unknown object kind {other} (0 to 10, the header's PE_KIND_*)")),
    })
}

/// The bytes of a `(pointer, length)` pair.
///
/// # Safety
/// `ptr` is null with `len` 0, or points at `len` bytes readable for the call's duration.
unsafe fn bytes<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8], String> {
    if ptr.is_null() {
        return if len == 0 { Ok(&[]) } else { Err(format!("{what}: a null pointer with length {len}")) };
    }
    // SAFETY: the caller's contract above.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The UTF-8 text of a `(pointer, length)` pair.
///
/// # Safety
/// As [`bytes`].
unsafe fn text<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a str, String> {
    // SAFETY: passed on.
    let b = unsafe { bytes(ptr, len, what) }?;
    std::str::from_utf8(b).map_err(|e| format!("{what} is not UTF-8: {e}"))
}

/// Writes `message` into `out` (cut at a character boundary to fit).
///
/// # Safety
/// `out` is null, or a valid `PeOut` whose `ptr` has `cap` writable bytes (or is null with cap 0).
unsafe fn write(out: *mut PeOut, message: &str) {
    // SAFETY: the caller's contract above.
    let Some(out) = (unsafe { out.as_mut() }) else { return };
    let mut n = message.len().min(out.cap);
    while !message.is_char_boundary(n) {
        n -= 1;
    }
    if !out.ptr.is_null() && n > 0 {
        // SAFETY: `n <= cap` bytes writable at `ptr`; the source is a distinct Rust string.
        unsafe { std::ptr::copy_nonoverlapping(message.as_ptr(), out.ptr, n) };
    }
    out.len = if out.ptr.is_null() { 0 } else { n };
}

/// Runs `body`, turning a panic into an error message.
fn guarded<T>(body: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            Err(format!("the engine failed: {what}"))
        }
    }
}

/// The engine behind a handle.
///
/// # Safety
/// `engine` is null or from `pe_engine_new` and not freed.
unsafe fn engine<'a>(engine: *const PeEngine) -> Result<&'a InProcess, String> {
    // SAFETY: the caller's contract above.
    unsafe { engine.as_ref() }.map(|e| &e.0).ok_or_else(|| "a null engine".to_string())
}

/// The cycle behind a handle.
///
/// # Safety
/// `cycle` is null or from `pe_cycle_new` and not freed.
unsafe fn cycle<'a>(cycle: *const PeCycle) -> Result<&'a Cycle, String> {
    // SAFETY: the caller's contract above.
    unsafe { cycle.as_ref() }.map(|c| &c.0).ok_or_else(|| "a null cycle".to_string())
}

/// Writes an error to `err` and returns `PE_ERROR`; the result's code otherwise.
///
/// # Safety
/// As [`write`].
unsafe fn code(result: Result<i32, String>, err: *mut PeOut) -> i32 {
    match result {
        Ok(code) => code,
        Err(message) => {
            // SAFETY: passed on.
            unsafe { write(err, &message) };
            PE_ERROR
        }
    }
}

/// A new engine from its settings (JSON: `policy`, `schedulerVersion`, `parallelism`); null and
/// the reason in `err` when they are wrong or the Policy does not load.
///
/// # Safety
/// See the module's invariants.
#[no_mangle]
pub unsafe extern "C" fn pe_engine_new(config: *const u8, config_len: usize, err: *mut PeOut) -> *mut PeEngine {
    let made = guarded(|| {
        // SAFETY: the module's invariants.
        let config = unsafe { bytes(config, config_len, "the settings") }?;
        InProcess::new(config)
    });
    match made {
        Ok(engine) => Box::into_raw(Box::new(PeEngine(engine))),
        Err(message) => {
            // SAFETY: the module's invariants.
            unsafe { write(err, &message) };
            std::ptr::null_mut()
        }
    }
}

/// Frees an engine (null: nothing).
///
/// # Safety
/// See the module's invariants: no call using it is running or follows.
#[no_mangle]
pub unsafe extern "C" fn pe_engine_free(engine: *mut PeEngine) {
    if !engine.is_null() {
        // SAFETY: from `pe_engine_new`, freed once.
        drop(unsafe { Box::from_raw(engine) });
    }
}

/// Housekeeping, every couple of seconds: ends the assumptions no informer confirmed, and reads
/// the Policy file again. `PE_RELOADED` when a changed Policy is now in force, `PE_OK` when
/// nothing changed, `PE_ERROR` (the reason in `err`) when a changed one does not load.
///
/// # Safety
/// See the module's invariants.
#[no_mangle]
pub unsafe extern "C" fn pe_engine_tick(engine_: *const PeEngine, err: *mut PeOut) -> i32 {
    let result = guarded(|| {
        // SAFETY: the module's invariants.
        let engine = unsafe { engine(engine_) }?;
        engine.expire_assumed();
        Ok(match engine.reload_policy()? {
            Reload::Unchanged => PE_OK,
            Reload::Reloaded => PE_RELOADED,
        })
    });
    // SAFETY: the module's invariants.
    unsafe { code(result, err) }
}

/// An informer's add or update: the object of kind `kind` (`PE_KIND_*`) as JSON.
///
/// # Safety
/// See the module's invariants.
#[no_mangle]
pub unsafe extern "C" fn pe_upsert(
    engine_: *const PeEngine,
    kind: u32,
    json: *const u8,
    json_len: usize,
    err: *mut PeOut,
) -> i32 {
    let result = guarded(|| {
        // SAFETY: the module's invariants.
        let (engine, json) = unsafe { (engine(engine_)?, bytes(json, json_len, "the object")?) };
        engine.upsert(kind_of(kind)?, json)?;
        Ok(PE_OK)
    });
    // SAFETY: the module's invariants.
    unsafe { code(result, err) }
}

/// An informer's delete: the object's namespace (empty for a cluster-scoped kind) and name.
///
/// # Safety
/// See the module's invariants.
#[no_mangle]
pub unsafe extern "C" fn pe_delete(
    engine_: *const PeEngine,
    kind: u32,
    namespace: *const u8,
    namespace_len: usize,
    name: *const u8,
    name_len: usize,
    err: *mut PeOut,
) -> i32 {
    let result = guarded(|| {
        // SAFETY: the module's invariants.
        let (engine, namespace, name) = unsafe {
            (engine(engine_)?, text(namespace, namespace_len, "the namespace")?, text(name, name_len, "the name")?)
        };
        engine.delete(kind_of(kind)?, namespace, name);
        Ok(PE_OK)
    });
    // SAFETY: the module's invariants.
    unsafe { code(result, err) }
}

/// Starts a scheduling cycle for the pod `namespace/name` at `resource_version`: from the model's
/// copy when it has that version, else from `pod` (JSON; null when the caller hopes the model has
/// it). `*status` is `PE_OK` with a cycle returned; `PE_NEED_POD` (null returned) when the model
/// lacks the pod and none was passed; `PE_ERROR` (null, the reason in `err`) when the pod passed
/// does not decode or an argument is wrong.
///
/// # Safety
/// See the module's invariants; `status` is null or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C ABI's flat form of three strings and a buffer
pub unsafe extern "C" fn pe_cycle_new(
    engine_: *const PeEngine,
    namespace: *const u8,
    namespace_len: usize,
    name: *const u8,
    name_len: usize,
    resource_version: *const u8,
    resource_version_len: usize,
    pod: *const u8,
    pod_len: usize,
    status: *mut i32,
    err: *mut PeOut,
) -> *mut PeCycle {
    let made = guarded(|| {
        // SAFETY: the module's invariants.
        let (engine, namespace, name, rv) = unsafe {
            (
                engine(engine_)?,
                text(namespace, namespace_len, "the namespace")?,
                text(name, name_len, "the name")?,
                text(resource_version, resource_version_len, "the resourceVersion")?,
            )
        };
        // SAFETY: the module's invariants.
        let pod = if pod.is_null() { None } else { Some(unsafe { bytes(pod, pod_len, "the pod") }?) };
        match engine.cycle(namespace, name, rv, pod) {
            Ok(cycle) => Ok(Some(cycle)),
            Err(CycleError::NeedPod) => Ok(None),
            Err(CycleError::BadPod(e)) => Err(format!("the pod {namespace}/{name} does not decode: {e}")),
        }
    });
    let (code, out) = match made {
        Ok(Some(cycle)) => (PE_OK, Box::into_raw(Box::new(PeCycle(cycle)))),
        Ok(None) => (PE_NEED_POD, std::ptr::null_mut()),
        Err(message) => {
            // SAFETY: the module's invariants.
            unsafe { write(err, &message) };
            (PE_ERROR, std::ptr::null_mut())
        }
    };
    // SAFETY: the caller's contract: null or writable.
    if let Some(status) = unsafe { status.as_mut() } {
        *status = code;
    }
    out
}

/// Frees a cycle (null: nothing).
///
/// # Safety
/// See the module's invariants: no call using it is running or follows.
#[no_mangle]
pub unsafe extern "C" fn pe_cycle_free(cycle: *mut PeCycle) {
    if !cycle.is_null() {
        // SAFETY: from `pe_cycle_new`, freed once.
        drop(unsafe { Box::from_raw(cycle) });
    }
}

/// The cycle's pod against the node `node`: `PE_FITS`; `PE_UNSCHEDULABLE` or `PE_UNRESOLVABLE`
/// with the reasons in `reason` (joined as `/filter` joins them); `PE_UNKNOWN_NODE` when the model
/// does not know the node; `PE_ERROR` for a bad argument.
///
/// # Safety
/// See the module's invariants.
#[no_mangle]
pub unsafe extern "C" fn pe_filter(
    cycle_: *const PeCycle,
    node: *const u8,
    node_len: usize,
    reason: *mut PeOut,
) -> i32 {
    let result = guarded(|| {
        // SAFETY: the module's invariants.
        let (cycle, node) = unsafe { (cycle(cycle_)?, text(node, node_len, "the node name")?) };
        Ok(answer(cycle.filter(node)))
    });
    // SAFETY: the module's invariants.
    unsafe { verdict_code(result, reason) }
}

/// A verdict's code and, unless it fits, its words.
fn answer(verdict: NodeVerdict) -> (i32, Option<String>) {
    match verdict {
        NodeVerdict::Fits => (PE_FITS, None),
        NodeVerdict::Unschedulable(text) => (PE_UNSCHEDULABLE, Some(text)),
        NodeVerdict::Unresolvable(text) => (PE_UNRESOLVABLE, Some(text)),
        NodeVerdict::Unknown => (PE_UNKNOWN_NODE, Some(crate::engine::UNKNOWN_NODE.to_string())),
    }
}

/// Writes a verdict's words (or the error) to `reason` and returns its code.
///
/// # Safety
/// As [`write`].
unsafe fn verdict_code(result: Result<(i32, Option<String>), String>, reason: *mut PeOut) -> i32 {
    match result {
        Ok((code, text)) => {
            if let Some(text) = text {
                // SAFETY: passed on.
                unsafe { write(reason, &text) };
            }
            code
        }
        Err(message) => {
            // SAFETY: passed on.
            unsafe { write(reason, &message) };
            PE_ERROR
        }
    }
}

/// [`pe_filter`] on the node as kube-scheduler changed it for a simulation: `removed` and `added`
/// are pods of the model as `namespace/name` lines (joined by `\n`; either may be empty), the pods
/// its RemovePod and AddPod were told of (preemption's victims, its double pass's nominated pods).
///
/// # Safety
/// See the module's invariants.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C ABI's flat form of three strings and a buffer
pub unsafe extern "C" fn pe_filter_adjusted(
    cycle_: *const PeCycle,
    node: *const u8,
    node_len: usize,
    removed: *const u8,
    removed_len: usize,
    added: *const u8,
    added_len: usize,
    reason: *mut PeOut,
) -> i32 {
    let result = guarded(|| {
        // SAFETY: the module's invariants.
        let (cycle, node, removed, added) = unsafe {
            (
                cycle(cycle_)?,
                text(node, node_len, "the node name")?,
                text(removed, removed_len, "the removed pods")?,
                text(added, added_len, "the added pods")?,
            )
        };
        let (removed, added) = (pod_keys(removed, "removed")?, pod_keys(added, "added")?);
        Ok(answer(cycle.filter_adjusted(node, &removed, &added)))
    });
    // SAFETY: the module's invariants.
    unsafe { verdict_code(result, reason) }
}

/// `namespace/name` lines as keys.
fn pod_keys<'a>(lines: &'a str, what: &str) -> Result<Vec<(&'a str, &'a str)>, String> {
    lines
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| l.split_once('/').ok_or_else(|| format!("the {what} pod {l:?} is not namespace/name")))
        .collect()
}

/// Scores the feasible nodes (`names`: the node names joined by `\n`) with the plan's priorities,
/// each 0..=10 as `/prioritize` answers, into `scores` (`scores_len` must equal the number of
/// names).
///
/// # Safety
/// See the module's invariants; `scores` has `scores_len` writable `i64`s.
#[no_mangle]
pub unsafe extern "C" fn pe_score(
    engine_: *const PeEngine,
    cycle_: *const PeCycle,
    names: *const u8,
    names_len: usize,
    scores: *mut i64,
    scores_len: usize,
    err: *mut PeOut,
) -> i32 {
    let result = guarded(|| {
        // SAFETY: the module's invariants.
        let (engine, cycle, names) =
            unsafe { (engine(engine_)?, cycle(cycle_)?, text(names, names_len, "the node names")?) };
        let names: Vec<&str> = if names.is_empty() { Vec::new() } else { names.split('\n').collect() };
        if names.len() != scores_len {
            return Err(format!("{} node names and room for {scores_len} scores", names.len()));
        }
        if scores.is_null() && scores_len > 0 {
            return Err("a null scores array".to_string());
        }
        let computed = cycle.scores(engine, &names);
        if scores_len > 0 {
            // SAFETY: `scores_len` writable i64s (the caller's contract), not null (checked).
            let out = unsafe { std::slice::from_raw_parts_mut(scores, scores_len) };
            for (slot, score) in out.iter_mut().zip(computed) {
                *slot = score;
            }
        }
        Ok(PE_OK)
    });
    // SAFETY: the module's invariants.
    unsafe { code(result, err) }
}

/// Reserve: the cycle's pod counts on `node` in the model from now on (until the informer reports
/// the binding, Unreserve, or 30 s).
///
/// # Safety
/// See the module's invariants.
#[no_mangle]
pub unsafe extern "C" fn pe_reserve(
    engine_: *const PeEngine,
    cycle_: *const PeCycle,
    node: *const u8,
    node_len: usize,
    err: *mut PeOut,
) -> i32 {
    let result = guarded(|| {
        // SAFETY: the module's invariants.
        let (engine, cycle, node) =
            unsafe { (engine(engine_)?, cycle(cycle_)?, text(node, node_len, "the node name")?) };
        engine.reserve(cycle, node);
        Ok(PE_OK)
    });
    // SAFETY: the module's invariants.
    unsafe { code(result, err) }
}

/// Unreserve: the pod `namespace/name` stops counting on `node`.
///
/// # Safety
/// See the module's invariants.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C ABI's flat form of three strings
pub unsafe extern "C" fn pe_unreserve(
    engine_: *const PeEngine,
    namespace: *const u8,
    namespace_len: usize,
    name: *const u8,
    name_len: usize,
    node: *const u8,
    node_len: usize,
    err: *mut PeOut,
) -> i32 {
    let result = guarded(|| {
        // SAFETY: the module's invariants.
        let (engine, namespace, name, node) = unsafe {
            (
                engine(engine_)?,
                text(namespace, namespace_len, "the namespace")?,
                text(name, name_len, "the name")?,
                text(node, node_len, "the node name")?,
            )
        };
        engine.unreserve(namespace, name, node);
        Ok(PE_OK)
    });
    // SAFETY: the module's invariants.
    unsafe { code(result, err) }
}
