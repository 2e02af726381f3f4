//! The verbs' bodies, answered as the handlers answer them once the body is in.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::fuzz::{ensure, shown, Harness, Violation};
use predicate_engine::cluster::ClusterStore;
use predicate_engine::engine::{Cancelled, Evaluator};
use predicate_extender::bind::ModelBinder;
use predicate_extender::server::handlers::{filter_body, prioritize_body, BodyAnswer};
use predicate_extender::server::preempt_handler::preempt_answer;
use predicate_extender::server::AppState;
use predicate_extender::wire::{
    go_format_safe, Candidates, ExtenderArgs, ExtenderBindingArgs, ExtenderBindingResult, ExtenderPreemptionArgs,
    ExtenderPreemptionResult, WireError,
};

/// `/filter`: a body that does not decode gets 400 and an `Error` at an `ExtenderArgs` path; one
/// that does gets 200, no `Error`, and every candidate in exactly one of the feasible nodes,
/// `FailedNodes` and `FailedAndUnresolvableNodes` (feasible ones in request order; in `Nodes` mode
/// the request's own bytes and list metadata).
pub fn filter(h: &Harness, body: &[u8]) -> Result<(), Violation> {
    let (status, answer) = on_pool(h, body, filter_body)?;
    let at = || format!("/filter of {}: answered {status} {}", shown(body), shown(&answer));
    let parsed: FilterAnswer = serde_json::from_slice(&answer)
        .map_err(|e| format!("{}: not an ExtenderFilterResult with every field: {e}", at()))?;
    let args = match ExtenderArgs::decode(body) {
        Ok(args) => args,
        Err(e) => {
            refused("ExtenderArgs", &e, status, &parsed.error).map_err(|v| format!("{}: {v}", at()))?;
            let bare = parsed.nodes.is_none()
                && parsed.node_names.is_none()
                && parsed.failed.is_empty()
                && parsed.unresolvable.is_empty();
            return ensure(bare, || format!("{}: an error answer that names nodes", at()));
        }
    };
    ensure(status == StatusCode::OK && parsed.error.is_empty(), || format!("{}: a valid request not answered", at()))?;
    let failed: BTreeSet<&str> = parsed.failed.keys().map(String::as_str).collect();
    let unresolvable: BTreeSet<&str> = parsed.unresolvable.keys().map(String::as_str).collect();
    ensure(failed.is_disjoint(&unresolvable), || format!("{}: a node in both failed maps", at()))?;
    let reasons = parsed.failed.values().chain(parsed.unresolvable.values());
    ensure(reasons.into_iter().all(|r| !r.trim().is_empty()), || format!("{}: a failed node without a reason", at()))?;
    let fails = |name: &str| failed.contains(name) || unresolvable.contains(name);
    let requested: BTreeSet<&str> = match &args.nodes {
        Candidates::Names(names) => names.iter().map(|n| n.as_ref()).collect(),
        Candidates::Nodes(list) => list.items.iter().map(|i| i.node.metadata.name.as_str()).collect(),
    };
    let strangers: Vec<&&str> = failed.union(&unresolvable).filter(|n| !requested.contains(**n)).collect();
    ensure(strangers.is_empty(), || format!("{}: failed nodes that were not asked about: {strangers:?}", at()))?;
    match &args.nodes {
        Candidates::Names(names) => {
            let want: Vec<&str> = names.iter().map(|n| n.as_ref()).filter(|n| !fails(n)).collect();
            let got: Option<Vec<&str>> = parsed.node_names.as_ref().map(|n| n.iter().map(String::as_str).collect());
            ensure(parsed.nodes.is_none() && got.as_ref() == Some(&want), || {
                format!("{}: NodeNames should be the candidates that did not fail, in order: {want:?}", at())
            })
        }
        Candidates::Nodes(list) => {
            let want: Vec<&str> =
                list.items.iter().filter(|i| !fails(&i.node.metadata.name)).map(|i| i.raw.get()).collect();
            let Some(nodes) = parsed.nodes.as_ref().filter(|_| parsed.node_names.is_none()) else {
                return Err(format!("{}: a Nodes request answered without Nodes", at()));
            };
            let got: Vec<&str> = nodes.items.iter().map(|r| r.get()).collect();
            ensure(got == want, || {
                format!("{}: Nodes.items should be the request's items that did not fail, verbatim, in order", at())
            })?;
            let metadata = list.metadata.map_or("{}", RawValue::get);
            ensure(nodes.metadata.get() == metadata, || format!("{}: the list metadata is not echoed", at()))
        }
    }
}

/// `/prioritize`: a body that does not decode gets 400 and `{"Error": ...}` at an `ExtenderArgs`
/// path; one that does gets 200 and one score in 0..=10 per candidate, in request order.
pub fn prioritize(h: &Harness, body: &[u8]) -> Result<(), Violation> {
    let (status, answer) = on_pool(h, body, prioritize_body)?;
    let at = || format!("/prioritize of {}: answered {status} {}", shown(body), shown(&answer));
    let args = match ExtenderArgs::decode(body) {
        Ok(args) => args,
        Err(e) => {
            let parsed: ErrorAnswer =
                serde_json::from_slice(&answer).map_err(|e| format!("{}: not an object with only Error: {e}", at()))?;
            return refused("ExtenderArgs", &e, status, &parsed.error).map_err(|v| format!("{}: {v}", at()));
        }
    };
    ensure(status == StatusCode::OK, || format!("{}: a valid request not answered", at()))?;
    let list: Vec<HostPriorityAnswer> =
        serde_json::from_slice(&answer).map_err(|e| format!("{}: not a HostPriorityList: {e}", at()))?;
    let names: Vec<&str> = match &args.nodes {
        Candidates::Names(names) => names.iter().map(|n| n.as_ref()).collect(),
        Candidates::Nodes(list) => list.items.iter().map(|i| i.node.metadata.name.as_str()).collect(),
    };
    let hosts: Vec<&str> = list.iter().map(|p| p.host.as_str()).collect();
    ensure(hosts == names, || format!("{}: not one entry per candidate in request order", at()))?;
    let out_of_range: Vec<&HostPriorityAnswer> = list.iter().filter(|p| !(0..=10).contains(&p.score)).collect();
    ensure(out_of_range.is_empty(), || format!("{}: scores outside 0..=10: {out_of_range:?}", at()))
}

/// `/preempt`: a body that does not decode is refused at an `ExtenderPreemptionArgs` path; one
/// that does gets victims only on nodes it asked about and the model knows, only from the victims
/// it named for that node, each once, with `NumPDBViolations` in 0..=victims.
pub fn preempt(h: &Harness, body: &[u8]) -> Result<(), Violation> {
    let at = || format!("/preempt of {}", shown(body));
    let args = match ExtenderPreemptionArgs::decode(body) {
        Ok(args) => args,
        Err(e) => {
            let answer = encoded(&ExtenderPreemptionResult::error(&e.to_string()))?;
            let parsed: ErrorAnswer = serde_json::from_slice(&answer)
                .map_err(|e| format!("{}: the error answer does not parse: {e}", at()))?;
            return refused("ExtenderPreemptionArgs", &e, StatusCode::BAD_REQUEST, &parsed.error)
                .map_err(|v| format!("{}: {v}", at()));
        }
    };
    let asked: BTreeMap<String, Vec<String>> =
        args.node_victims.iter().map(|(node, v)| (node.clone(), v.pod_uids.clone())).collect();
    let state = Arc::clone(&h.state);
    let result = run_on_pool(&h.state.evaluator, move |ev| preempt_answer(&state, args, ev))
        .map_err(|_| format!("{}: the evaluator dropped the job", at()))?
        .map_err(|e| format!("{}: the evaluation failed (nothing cancels it here): {e}", at()))?;
    let answer = encoded(&result)?;
    let parsed: PreemptAnswer = serde_json::from_slice(&answer)
        .map_err(|e| format!("{}: the answer {} does not parse: {e}", at(), shown(&answer)))?;
    for (node, victims) in &parsed.victims {
        let at = || format!("{}: answered {}: node {node:?}", at(), shown(&answer));
        let Some(named) = asked.get(node) else {
            return Err(format!("{}: was not asked about", at()));
        };
        ensure(h.snapshot.has_node(node), || format!("{}: is not in the model", at()))?;
        let uids: Vec<&str> = victims.pods.iter().map(|p| p.uid.as_str()).collect();
        let once: BTreeSet<&str> = uids.iter().copied().collect();
        ensure(once.len() == uids.len(), || format!("{}: a victim twice", at()))?;
        ensure(uids.iter().all(|u| named.iter().any(|n| n == u)), || format!("{}: a victim not named for it", at()))?;
        let pdb = victims.num_pdb_violations;
        ensure(pdb >= 0 && pdb as usize <= uids.len(), || format!("{}: NumPDBViolations {pdb}", at()))?;
    }
    Ok(())
}

/// `/bind` (into the model, as in snapshot and demo mode, on a model of its own): a body that does
/// not decode is refused at an `ExtenderBindingArgs` path; a bind that succeeds leaves the pod on
/// the node; one that fails says why.
pub fn bind(h: &Harness, body: &[u8]) -> Result<(), Violation> {
    let at = || format!("/bind of {}", shown(body));
    let args = match ExtenderBindingArgs::decode(body) {
        Ok(args) => args,
        Err(e) => {
            let answer = encoded(&ExtenderBindingResult::error(&e.to_string()))?;
            let parsed: ErrorAnswer = serde_json::from_slice(&answer)
                .map_err(|e| format!("{}: the error answer does not parse: {e}", at()))?;
            return refused("ExtenderBindingArgs", &e, StatusCode::BAD_REQUEST, &parsed.error)
                .map_err(|v| format!("{}: {v}", at()));
        }
    };
    let named = [&args.pod_name, &args.pod_namespace, &args.node];
    ensure(named.iter().all(|v| !v.is_empty()), || format!("{}: decoded with an empty name: {args:?}", at()))?;
    let store = Arc::new(ClusterStore::new((*h.snapshot).clone()));
    match ModelBinder::new(Arc::clone(&store)).bind_now(&args) {
        Ok(()) => {
            let snapshot = store.snapshot();
            let bound = snapshot.pod(&args.pod_namespace, &args.pod_name).map(|p| p.pod.spec.node_name.as_str());
            ensure(bound == Some(args.node.as_str()), || format!("{}: bound, but the pod is on {bound:?}", at()))
        }
        Err(e) => {
            let answer = encoded(&ExtenderBindingResult::error(&e.to_string()))?;
            let parsed: ErrorAnswer = serde_json::from_slice(&answer)
                .map_err(|e| format!("{}: the error answer does not parse: {e}", at()))?;
            ensure(!parsed.error.trim().is_empty(), || format!("{}: a failed bind without an Error", at()))
        }
    }
}

/// Runs a verb's body-to-answer work on the harness's evaluator, as the handler does.
fn on_pool(
    h: &Harness,
    body: &[u8],
    work: fn(&AppState, &[u8], &Evaluator) -> BodyAnswer,
) -> Result<(StatusCode, Vec<u8>), Violation> {
    let (state, body) = (Arc::clone(&h.state), body.to_vec());
    run_on_pool(&h.state.evaluator, move |ev| work(&state, &body, ev))
        .map_err(|_| "the evaluator dropped the job".to_string())?
        .map_err(|Cancelled| "cancelled with nothing to cancel it".to_string())
}

/// Runs `job` on the evaluator's pool and waits for its result.
fn run_on_pool<R: Send + 'static>(
    evaluator: &Arc<Evaluator>,
    job: impl FnOnce(&Evaluator) -> R + Send + 'static,
) -> Result<R, std::sync::mpsc::RecvError> {
    let (tx, rx) = std::sync::mpsc::channel();
    evaluator.spawn(job, move |result| {
        let _ = tx.send(result);
    });
    rx.recv()
}

/// A refused request: 400, an error at a path under `what` with a message, and the answer's
/// `Error` that error as a Go format string.
fn refused(what: &str, e: &WireError, status: StatusCode, answered: &str) -> Result<(), Violation> {
    ensure(status == StatusCode::BAD_REQUEST, || format!("refused with {status}, not 400"))?;
    let under = e.path == what || e.path.starts_with(&format!("{what}.")) || e.path.starts_with(&format!("{what}["));
    ensure(under, || format!("the error's path {:?} is not under {what}", e.path))?;
    ensure(!e.message.trim().is_empty(), || format!("an empty error message at {}", e.path))?;
    ensure(answered == go_format_safe(&e.to_string()), || format!("Error {answered:?} is not the decoding error {e}"))
}

fn encoded(value: &impl serde::Serialize) -> Result<Vec<u8>, Violation> {
    serde_json::to_vec(value).map_err(|e| format!("the answer does not encode: {e}"))
}

/// An `ExtenderFilterResult` as kube-scheduler reads it; every field must be there.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilterAnswer<'a> {
    #[serde(rename = "Nodes", borrow)]
    nodes: Option<NodesAnswer<'a>>,
    #[serde(rename = "NodeNames")]
    node_names: Option<Vec<String>>,
    #[serde(rename = "FailedNodes")]
    failed: BTreeMap<String, String>,
    #[serde(rename = "FailedAndUnresolvableNodes")]
    unresolvable: BTreeMap<String, String>,
    #[serde(rename = "Error")]
    error: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodesAnswer<'a> {
    #[serde(borrow)]
    metadata: &'a RawValue,
    #[serde(borrow)]
    items: Vec<&'a RawValue>,
}

/// An answer that is only an error (`/prioritize`, `/bind`, and a refused `/preempt`).
#[derive(Deserialize)]
struct ErrorAnswer {
    #[serde(rename = "Error")]
    error: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HostPriorityAnswer {
    #[serde(rename = "Host")]
    host: String,
    #[serde(rename = "Score")]
    score: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PreemptAnswer {
    #[serde(rename = "NodeNameToMetaVictims")]
    victims: BTreeMap<String, VictimsAnswer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VictimsAnswer {
    #[serde(rename = "Pods")]
    pods: Vec<MetaPodAnswer>,
    #[serde(rename = "NumPDBViolations")]
    num_pdb_violations: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MetaPodAnswer {
    #[serde(rename = "UID")]
    uid: String,
}
