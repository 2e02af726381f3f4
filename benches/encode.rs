//! Encoding the answers: the `ExtenderFilterResult` of `/filter` for the pending pod, built from
//! the verdicts as the filter handler builds it (feasible names, or the request's own node bytes,
//! and the failure reasons), and the `HostPriorityList` of `/prioritize`.
//!
//! `cargo bench --bench encode` (ids `encode/filter_node_names/N`, `encode/filter_nodes/N`,
//! `encode/prioritize/N`).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use predicate_extender::engine::{Candidate, Verdict};
use predicate_extender::server::handlers::UNKNOWN_NODE;
use predicate_extender::wire::{Candidates, ExtenderArgs, ExtenderFilterResult, HostPriority, NodeListOut};
use serde_json::value::RawValue;

/// The filter handler's answer (`server::handlers::filter`, after the evaluation): keep this in
/// step with it.
fn filter_result<'a>(
    candidates: &[Candidate],
    verdicts: &[Verdict],
    request_nodes: Option<(&'a RawValue, &[&'a RawValue])>,
) -> ExtenderFilterResult<'a> {
    let mut result = ExtenderFilterResult::default();
    let mut feasible_names = Vec::new();
    let mut feasible_raw = Vec::new();
    for (i, (candidate, verdict)) in candidates.iter().zip(verdicts).enumerate() {
        let name = candidate.name();
        match verdict {
            Verdict::Fits => match request_nodes {
                Some((_, raws)) => feasible_raw.push(raws[i]),
                None => feasible_names.push(name.to_string()),
            },
            Verdict::Unknown => {
                result.failed_nodes.insert(name.to_string(), UNKNOWN_NODE.to_string());
            }
            Verdict::Fails(reasons) => {
                let text = reasons.iter().map(|r| r.message.as_ref()).collect::<Vec<_>>().join(", ");
                if reasons.iter().all(|r| r.resolvable) {
                    result.failed_nodes.insert(name.to_string(), text);
                } else {
                    result.failed_and_unresolvable_nodes.insert(name.to_string(), text);
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

fn bench_encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode");
    for nodes in common::SIZES {
        common::configure(&mut group, nodes);
        group.bench_function(BenchmarkId::new("filter_node_names", nodes), |b| {
            let f = common::fixture(nodes);
            let job = f.job(f.candidates_by_name(), false);
            let verdicts = job.filter(common::evaluator()).expect("not cancelled");
            b.iter(|| {
                let result = filter_result(&job.candidates, &verdicts, None);
                std::hint::black_box(serde_json::to_vec(&result).expect("encodes"))
            })
        });
        group.bench_function(BenchmarkId::new("filter_nodes", nodes), |b| {
            let f = common::fixture(nodes);
            let list = match ExtenderArgs::decode(&f.nodes_body).expect("decodes").nodes {
                Candidates::Nodes(list) => list,
                Candidates::Names(_) => unreachable!("a Nodes body"),
            };
            let empty = RawValue::from_string("{}".to_string()).expect("raw");
            let metadata: &RawValue = list.metadata.unwrap_or(&*empty);
            let raws: Vec<&RawValue> = list.items.iter().map(|item| item.raw).collect();
            let candidates = list
                .items
                .into_iter()
                .map(|item| {
                    let (info, nominated) = f.snapshot.candidate_for(item.node);
                    Candidate::Known(info, nominated)
                })
                .collect();
            let job = f.job(candidates, true);
            let verdicts = job.filter(common::evaluator()).expect("not cancelled");
            b.iter(|| {
                let result = filter_result(&job.candidates, &verdicts, Some((metadata, &raws)));
                std::hint::black_box(serde_json::to_vec(&result).expect("encodes"))
            })
        });
        group.bench_function(BenchmarkId::new("prioritize", nodes), |b| {
            let f = common::fixture(nodes);
            let job = f.job(f.candidates_by_name(), false);
            let scores = job.prioritize(common::evaluator()).expect("not cancelled");
            b.iter(|| {
                let list: Vec<HostPriority> = job
                    .candidates
                    .iter()
                    .zip(&scores)
                    .map(|(c, &score)| HostPriority { host: c.name().to_string(), score })
                    .collect();
                std::hint::black_box(serde_json::to_vec(&list).expect("encodes"))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_encode);
criterion_main!(benches);
