//! Static against dynamic predicate ordering (issue 15), on generated clusters where a cheap
//! predicate late in the static order rejects most nodes, and on the default generated cluster.
//! Each iteration is a /filter of the pending pod over every node (`NodeNames`), as the handler
//! runs it: every tenth request sampled (its predicates timed, which the dynamic order learns
//! costs from), the rest not; the dynamic plan learns during criterion's warm-up.
//!
//! `cargo bench --bench ordering` (ids `ordering/{default,tainted_80,label_presence}/{static,dynamic}`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark of generated input: a panic is its error report

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use gen_cluster::generate::ClusterSpec;
use predicate_engine::engine::{OrderingMode, Plan, Timed};
use predicate_engine::policy::{parse, Overrides};

const NODES: usize = 2000;

/// The default predicates and one more, CheckNodeLabelPresence requiring a `gpu` label that no
/// generated node has: cheap, rejects every node, and ranked after GeneralPredicates statically.
fn label_presence_plan() -> Plan {
    let defaults: Vec<String> =
        Plan::default_plan().predicate_names().iter().map(|n| format!(r#"{{"name":"{n}"}}"#)).collect();
    let policy = format!(
        r#"{{"kind":"Policy","apiVersion":"v1","predicates":[{},
            {{"name":"NeedsGPU","argument":{{"labelsPresence":{{"labels":["gpu"],"presence":true}}}}}}]}}"#,
        defaults.join(",")
    );
    parse("bench policy", policy.as_bytes(), Overrides::default()).expect("the bench policy loads")
}

fn bench_ordering(c: &mut Criterion) {
    let mut group = c.benchmark_group("ordering");
    group.sampling_mode(SamplingMode::Flat).sample_size(20).warm_up_time(Duration::from_secs(2));
    group.measurement_time(Duration::from_secs(6));
    let default = ClusterSpec { nodes: NODES, ..ClusterSpec::default() };
    let cases = [
        ("default", default, Plan::default_plan()),
        ("tainted_80", ClusterSpec { tainted_percent: 80, ..default }, Plan::default_plan()),
        ("label_presence", default, label_presence_plan()),
    ];
    for (name, spec, plan) in cases {
        let mut fixture = common::build_spec(spec);
        for mode in [OrderingMode::Static, OrderingMode::Dynamic] {
            fixture.plan = Arc::new(plan.clone().with_ordering(mode));
            let requests = AtomicU64::new(0);
            group.bench_function(BenchmarkId::new(name, mode.name()), |b| {
                b.iter(|| {
                    let mut job = fixture.job(fixture.candidates_by_name(), false);
                    // As the server samples: one candidate in ten of every request.
                    let offset = (requests.fetch_add(1, Ordering::Relaxed) % 10) as usize;
                    job.timed = Timed::OneIn { stride: 10, offset };
                    let filtered = job.filter(common::evaluator()).expect("not cancelled");
                    std::hint::black_box(filtered.verdicts.len())
                })
            });
            eprintln!("{name}/{}: order {:?}", mode.name(), fixture.plan.ordered_predicate_names());
        }
    }
    group.finish();
}

criterion_group!(benches, bench_ordering);
criterion_main!(benches);
