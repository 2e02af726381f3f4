//! The `/filter` answer, built from the engine's verdicts: feasible nodes in request order (names,
//! or the request's own node objects verbatim), failed nodes with their reasons, split by whether
//! preemption could resolve them. Everything is borrowed from the request and the verdicts.

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::wire::{ExtenderFilterResult, NodeListOut};
use predicate_engine::engine::{Candidate, Verdict};
use predicate_engine::framework::Reason;

/// The message for a node the cluster model does not know.
pub const UNKNOWN_NODE: &str = "node is not in the extender's cluster cache yet";

/// The answer for `candidates` and their `verdicts` (same order). `request_nodes` is the request's
/// `Nodes` (list metadata and each item's bytes, in candidate order) or `None` for `NodeNames`.
pub fn filter_result<'a>(
    candidates: &'a [Candidate],
    verdicts: &'a [Verdict],
    request_nodes: Option<(Option<&'a RawValue>, &[&'a RawValue])>,
    pod_key: &str,
) -> ExtenderFilterResult<'a> {
    let mut result = ExtenderFilterResult::default();
    let mut feasible_names = Vec::new();
    let mut feasible_raw = Vec::new();
    for (i, (candidate, verdict)) in candidates.iter().zip(verdicts).enumerate() {
        let name = candidate.name();
        match verdict {
            Verdict::Fits => match request_nodes {
                Some((_, raws)) => feasible_raw.extend(raws.get(i).copied()),
                None => feasible_names.push(name),
            },
            Verdict::Unknown => {
                result.failed_nodes.insert(name, Cow::Borrowed(UNKNOWN_NODE));
            }
            Verdict::Fails(reasons) => {
                let text = predicate_engine::framework::reason::joined(reasons);
                tracing::debug!(pod = %pod_key, node = name, reasons = %text, "node does not fit");
                if reasons.iter().all(Reason::is_resolvable) {
                    result.failed_nodes.insert(name, text);
                } else {
                    result.failed_and_unresolvable_nodes.insert(name, text);
                }
            }
        }
    }
    match request_nodes {
        Some((metadata, _)) => result.nodes = Some(NodeListOut { metadata, items: feasible_raw }),
        None => result.node_names = Some(feasible_names),
    }
    result
}
