//! `predicate-engine-ffi`: the predicate engine linked into kube-scheduler (docs/in-process.md).
//!
//! kube-scheduler's framework plugins (e2e/kube/inprocess, Go) call it through a C ABI
//! (include/predicate_engine.h, [`abi`]): the informers write the cluster model, a scheduling cycle
//! prepares the pod once and answers Filter per node and Score for the feasible nodes, Reserve and
//! Unreserve assume and forget. [`engine`] is that API in safe Rust; [`abi`] holds the workspace's
//! only `unsafe`, the shims from C's pointers to it.
#![deny(unreachable_pub)]

pub mod abi;
#[deny(unsafe_code)]
pub mod engine;
