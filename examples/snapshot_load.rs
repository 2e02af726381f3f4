//! How long reading a cluster snapshot file takes (parse and decode, then the model built from
//! it), the median of a few runs: `cargo run --release --example snapshot_load -- FILE [RUNS]`.
//! `gen-cluster --out cluster.json` writes one; YAML files are read too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring tool: a panic is its error report

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;

/// How long reading a cluster snapshot file takes: parse and decode, then the model.
#[derive(Debug, Parser)]
struct Args {
    /// The snapshot file (a List as `kubectl get -o json|yaml` prints it, or multi-document YAML).
    file: PathBuf,
    /// How many times to read it.
    #[arg(default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
}

fn main() {
    let args = Args::parse();
    let (path, runs) = (args.file.display().to_string(), args.runs as usize);
    let mut parse = Vec::new();
    let mut build = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let objects = predicate_engine::cluster::source::load_file(&args.file).unwrap_or_else(|e| panic!("{e}"));
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
