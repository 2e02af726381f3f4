#!/usr/bin/env bash
# A development cluster on 127.0.0.1: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
# (config/scheduler-config.yaml) and the extender in live mode, loaded with a generated cluster.
# Prints a kubeconfig for kubectl and `explain --kubeconfig`; Ctrl-C stops everything.
#   e2e/dev-cluster.sh [--nodes 20] [--pods-per-node 5] [--seed 1] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
# The flags are the example's (clap): `--help` lists them, a bad one is refused there, after the build.
bash e2e/build.sh >/dev/null
cargo build --release --locked --bin predicate-extender --example dev-cluster
exec target/release/examples/dev-cluster "$@"
