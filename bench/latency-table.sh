#!/usr/bin/env bash
# The serial latency table: for each cluster size, every verb and form one client at a time, and
# the percentiles inside the server (from its "answered" log lines) and as the client saw them.
#
#   bench/latency-table.sh [--sizes "1000 5000 15000"] [--duration SECONDS]
#
# Each size is a generated cluster of N nodes x 15 pods (the shape of issue 27's comparison:
# 5,000 nodes, 75,000 pods), in target/load/N-nodes-15ppn/ (generated on first use: the 15,000-node
# snapshot is 1.5 GB and takes a minute or two). Rows:
#   filter NodeNames xN       every node by name (nodeCacheCapable: true)
#   filter NodeNames xK       K names, K as kube-scheduler's default percentageOfNodesToScore
#                             picks for N nodes (max(5, 50 - N/125)% of N, at least 100)
#   filter Nodes xN           every node as a whole object (nodeCacheCapable: false)
#   prioritize NodeNames xN   every node by name
# One server per size, started on its snapshot and stopped after (bench/load.sh does the work;
# BIN and SERVE_ARGS are passed on; --max-body-bytes is raised to fit the size's Nodes body).
# Prints a Markdown table, latencies in ms (the latest: docs/performance.md, "Serial latency").
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-"1000 5000 15000"}
DURATION=${DURATION:-15}
while [[ $# -gt 0 ]]; do
  case $1 in
    --sizes) SIZES=${2:?--sizes needs a value}; shift 2 ;;
    --duration) DURATION=${2:?--duration needs a value}; shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "latency-table.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [[ -z ${BIN:-} ]]; then
  echo "== building the release binary" >&2
  cargo build --release --locked --bin predicate-extender >&2
  BIN=target/release/predicate-extender
fi
export BIN

# kube-scheduler's numFeasibleNodesToFind with the default percentageOfNodesToScore (0: adaptive).
sample_of() {
  local n=$1 percent=$((50 - $1 / 125))
  ((percent < 5)) && percent=5
  local k=$((n * percent / 100))
  ((k < 100)) && k=100
  ((k > n)) && k=$n
  echo "$k"
}

rows=()
for n in $SIZES; do
  k=$(sample_of "$n")
  echo "== $n nodes (sample $k names)" >&2
  # A Nodes body is ~10.5 KiB per node: past 128Mi (the default --max-body-bytes) at 12,500 nodes.
  limit=$((n * 11 * 1024 * 12 / 10 / 1048576 + 1))
  ((limit < 128)) && limit=128
  limit=${limit}Mi
  out=$(NODES=$n PODS_PER_NODE=15 SAMPLE=$k CONCURRENCY=1 DURATION=$DURATION \
    SERVE_ARGS="--max-body-bytes $limit ${SERVE_ARGS:-}" \
    CASES="names sample nodes prioritize" bench/load.sh) || exit 1
  printf '%s\n' "$out" >&2
  # "filter NodeNames x5000  1  p50 p90 p99 | in-p50 in-p90 in-p99 in-max | req/s requests errors timeouts"
  while read -r line; do
    rows+=("$n|$line")
  done < <(grep -E '^(filter|prioritize) ' <<<"$out")
done

echo
echo "| nodes | request | inside p50 | p90 | p99 | max | client p50 | client p99 | requests |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for row in "${rows[@]}"; do
  IFS='|' read -r n line <<<"$row"
  awk -v n="$n" '{ printf "| %s | %s %s %s | %s | %s | %s | %s | %s | %s | %s |\n", n, $1, $2, $3, $9, $10, $11, $12, $5, $7, $15 }' <<<"$line"
done
