//! How long reading a cluster snapshot file takes (parse and decode, then the model built from
//! it), the median of a few runs: `cargo run --release --example snapshot_load -- FILE [RUNS]`.
//! `gen-cluster --out cluster.json` writes one; YAML files are read too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring tool: a panic is its error report

use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: snapshot_load FILE [RUNS]");
    let runs: usize = args.next().map_or(5, |r| r.parse().expect("RUNS: a number"));
    let mut parse = Vec::new();
    let mut build = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let objects = predicate_engine::cluster::source::load_file(path.as_ref()).unwrap_or_else(|e| panic!("{e}"));
        parse.push(started.elapsed());
        let (nodes, pods) = (objects.nodes.len(), objects.pods.len());
        let started = Instant::now();
        let snapshot = objects.into_snapshot();
        build.push(started.elapsed());
        assert_eq!((snapshot.node_count(), snapshot.pod_count()), (nodes, pods));
        eprintln!("{nodes} nodes, {pods} pods: read {:?}, model {:?}", parse.last().unwrap(), build.last().unwrap());
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    println!("{path}: {runs} runs, median read {:?}, median model {:?}", median(&mut parse), median(&mut build));
}
