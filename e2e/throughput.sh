#!/usr/bin/env bash
# Pods per second through a real kube-scheduler with and without the extender (examples/
# scheduler-throughput.rs; docs/throughput.md has the figures and what each flag means).
#   e2e/throughput.sh --nodes 5000 --initial-pods 1000 --measured-pods 5000 --configs alone,extender,policy --rounds 3
set -euo pipefail
cd "$(dirname "$0")/.."
# The flags are the example's (clap): `--help` lists them, a bad one is refused there, after the build.
bash e2e/build.sh >/dev/null
cargo build --release --locked --bin predicate-extender --example scheduler-throughput
# The in-process configurations link the engine built in the release profile too.
export PREDICATE_ENGINE_PROFILE=release
exec target/release/examples/scheduler-throughput "$@"
