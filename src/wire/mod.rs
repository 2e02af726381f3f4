//! The kube-scheduler extender v1 wire format (`k8s.io/kube-scheduler/extender/v1`).
//!
//! kube-scheduler encodes these types with Go's encoding/json and no json tags: keys arrive
//! capitalised (`Pod`, `NodeNames`), older schedulers sent lower case, and Go matches either, so
//! requests are decoded case-insensitively. Answers use the capitalised names and carry every
//! field, as Go writes them.

pub mod args;
pub mod fields;
pub mod item_splitter;
pub mod predecoded;
pub mod preemption;
pub mod raw_list;
pub mod results;

pub use args::{Candidates, ExtenderArgs, ExtenderBindingArgs, RequestNode, RequestNodes};
pub use fields::WireError;
pub use preemption::{ExtenderPreemptionArgs, Victims};
pub use results::{
    go_format_safe, ExtenderBindingResult, ExtenderFilterResult, ExtenderPreemptionResult, HostPriority, MetaPod,
    MetaVictims, NodeListOut,
};
