#!/usr/bin/env bash
# Drives the release server over loopback with wrk and prints, per (endpoint, concurrency),
# p50/p90/p99 as wrk sees them, p50/p90/p99/max inside the server, and requests/s.
#
#   bench/load.sh [--nodes N] [--pods-per-node P] [--duration SECONDS] [--concurrency "1 4 16"]
#                 [--sample K] [--cases "names sample nodes prioritize"] [--port P] [--regen]
#
# Generates (or reuses) into target/load/N-nodes/ (N-nodes-Pppn/ when P is not 20) with
# `gen-cluster`: a snapshot of N nodes x P pods (20 by default), the pending pod, and its /filter
# bodies (every node as NodeNames, K of them as NodeNames (sample-K.json), every node as Nodes). Starts `serve
# --cluster-snapshot` on it, waits for /readyz, runs wrk for a fixed duration per case (wrk runs
# for a duration, not a request count), stops the server on exit. "Inside" percentiles come from
# the `elapsed_us` of the server's "answered" log lines: from the body's first byte read to the
# answer made, the time kube-scheduler's extender call spends in our code.
# --cases runs only some of the four cases: names (/filter, every node as NodeNames), sample
# (/filter, K NodeNames), nodes (/filter, every node as Nodes), prioritize (/prioritize, every node).
# The same settings come from the environment: NODES, PODS_PER_NODE, DURATION, CONCURRENCY, SAMPLE,
# CASES, PORT; and BIN=path runs that binary instead of building target/release/predicate-extender
# (GEN=path the same for target/release/gen-cluster);
# SERVE_ARGS adds flags to `serve` (e.g. SERVE_ARGS="--parallelism 2" or "--predicate-ordering
# dynamic"); GEN_ARGS adds flags to every `gen-cluster` call (e.g. GEN_ARGS="--tainted-percent 80"),
# into a directory of its own.
set -euo pipefail
cd "$(dirname "$0")/.."

NODES=${NODES:-5000}
PODS_PER_NODE=${PODS_PER_NODE:-20}
DURATION=${DURATION:-20}
CONCURRENCY=${CONCURRENCY:-"1 4 16"}
SAMPLE=${SAMPLE:-500}   # kube-scheduler's default sample at 5,000 nodes (percentageOfNodesToScore)
CASES=${CASES:-"names sample nodes prioritize"}
PORT=${PORT:-18888}
REGEN=0

usage() { sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }
number() { [[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "load.sh: $1 must be a positive number (got '$2')" >&2; exit 2; }; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --nodes) NODES=${2:?--nodes needs a value}; shift 2 ;;
    --pods-per-node) PODS_PER_NODE=${2:?--pods-per-node needs a value}; shift 2 ;;
    --duration) DURATION=${2:?--duration needs a value}; shift 2 ;;
    --concurrency) CONCURRENCY=${2:?--concurrency needs a value}; shift 2 ;;
    --sample) SAMPLE=${2:?--sample needs a value}; shift 2 ;;
    --cases) CASES=${2:?--cases needs a value}; shift 2 ;;
    --port) PORT=${2:?--port needs a value}; shift 2 ;;
    --regen) REGEN=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "load.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
number --nodes "$NODES"; number --pods-per-node "$PODS_PER_NODE"; number --duration "$DURATION"; number --sample "$SAMPLE"; number --port "$PORT"
for c in $CONCURRENCY; do number --concurrency "$c"; done
for k in $CASES; do
  [[ $k =~ ^(names|sample|nodes|prioritize)$ ]] || { echo "load.sh: --cases takes names, sample, nodes, prioritize (got '$k')" >&2; exit 2; }
done
ADMIN_PORT=$((PORT + 1))

if ! command -v wrk >/dev/null; then
  echo "load.sh: wrk is not installed (Debian: apt-get install -y wrk)" >&2
  exit 2
fi

if [[ -z ${BIN:-} ]]; then # BIN=path uses that binary as it is
  echo "== building the release binary"
  cargo build --release --locked --bin predicate-extender
  BIN=target/release/predicate-extender
fi
if [[ -z ${GEN:-} ]]; then # GEN=path uses that gen-cluster as it is
  cargo build --release --locked --bin gen-cluster
  GEN=target/release/gen-cluster
fi

DIR=target/load/$NODES-nodes
if [[ $PODS_PER_NODE != 20 ]]; then DIR=$DIR-${PODS_PER_NODE}ppn; fi
if [[ -n ${GEN_ARGS:-} ]]; then DIR=$DIR$(echo " $GEN_ARGS" | tr -c 'a-zA-Z0-9\n' '-'); fi
mkdir -p "$DIR"
SHAPE=(--nodes "$NODES" --pods-per-node "$PODS_PER_NODE" --zones 3 --seed 1)
generate() { # FILE GEN-CLUSTER-ARGS...
  local file=$1; shift
  if [[ $REGEN == 1 || ! -s $DIR/$file ]]; then
    "$GEN" "${SHAPE[@]}" ${GEN_ARGS:-} "$@" --out "$DIR/$file"
  fi
}
echo "== generating into $DIR (reused when present; --regen to rewrite)"
generate cluster.json
generate pod.json --pending-pod
generate names.json --extender-args node-names
generate "sample-$SAMPLE.json" --extender-args node-names --candidates "$SAMPLE"
generate nodes.json --extender-args nodes
ls -l "$DIR"/*.json | awk '{printf "  %12d  %s\n", $5, $NF}'

echo "== starting the server"
LOG=$DIR/server.log
"$BIN" serve --cluster-snapshot "$DIR/cluster.json" --listen "127.0.0.1:$PORT" \
  --admin-listen "127.0.0.1:$ADMIN_PORT" --log-format json ${SERVE_ARGS:-} 2>"$LOG" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true' EXIT
started=$SECONDS
until curl -sf "http://127.0.0.1:$ADMIN_PORT/readyz" >/dev/null; do
  if ! kill -0 "$SERVER" 2>/dev/null; then
    echo "load.sh: the server exited; its log ($LOG):" >&2
    tail -20 "$LOG" >&2
    exit 1
  fi
  if ((SECONDS - started > 600)); then
    echo "load.sh: the server was not ready within 600s" >&2
    exit 1
  fi
  sleep 0.5
done
echo "ready after $((SECONDS - started))s; server RSS $(ps -o rss= -p "$SERVER" | awk '{printf "%.0f MiB", $1/1024}')"

BASE=http://127.0.0.1:$PORT
RUN=()
for k in $CASES; do
  case $k in
    names) RUN+=("filter NodeNames x$NODES|/filter|names.json") ;;
    sample) RUN+=("filter NodeNames x$((SAMPLE < NODES ? SAMPLE : NODES))|/filter|sample-$SAMPLE.json") ;;
    nodes) RUN+=("filter Nodes x$NODES|/filter|nodes.json") ;;
    prioritize) RUN+=("prioritize NodeNames x$NODES|/prioritize|names.json") ;;
  esac
done

# One request of each first: a failure here is a broken setup, not a measurement.
for case in "${RUN[@]}"; do
  IFS='|' read -r name path file <<<"$case"
  out=$DIR/answer.json
  status=$(curl -s -o "$out" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$DIR/$file" "$BASE$path")
  if [[ $status != 200 ]] || grep -q '"Error":"[^"]' "$out"; then
    echo "load.sh: $name answered $status: $(head -c 300 "$out")" >&2
    exit 1
  fi
done

timeouts() { grep -c 'request timed out' "$LOG" || true; }
# inside FIRST-LINE: p50 p90 p99 max (microseconds) of the "answered" lines from that log line on.
inside() {
  tail -n "+$1" "$LOG" | grep -o '"elapsed_us":[0-9]*' | cut -d: -f2 | sort -n \
    | awk 'function at(q,  i) { i = int(NR * q + 0.5); if (i < 1) i = 1; if (i > NR) i = NR; return v[i] }
           { v[NR] = $1 }
           END { if (NR == 0) print "0 0 0 0"; else printf "%d %d %d %d\n", at(0.50), at(0.90), at(0.99), v[NR] }'
}
echo "== wrk, ${DURATION}s per case (fixed duration); latencies in ms: wrk's, then inside the server"
printf '%-28s %5s %8s %8s %8s | %8s %8s %8s %8s | %8s %8s %6s %8s\n' endpoint conc p50 p90 p99 \
  in-p50 in-p90 in-p99 in-max req/s requests errors timeouts
for case in "${RUN[@]}"; do
  IFS='|' read -r name path file <<<"$case"
  for c in $CONCURRENCY; do
    threads=$((c < 2 ? c : 2))
    before=$(timeouts)
    first=$(($(wc -l <"$LOG") + 1))
    result=$(wrk -t "$threads" -c "$c" -d "${DURATION}s" --timeout 60s -s bench/post.lua "$BASE$path" -- "$DIR/$file" \
      | grep '^RESULT') || { echo "load.sh: wrk failed for $name at $c" >&2; exit 1; }
    read -r _ p50 p90 p99 rps requests errors <<<"$result"
    read -r i50 i90 i99 imax <<<"$(inside "$first")"
    awk -v n="$name" -v c="$c" -v a="$p50" -v b="$p90" -v d="$p99" -v r="$rps" -v q="$requests" -v e="$errors" \
      -v i50="$i50" -v i90="$i90" -v i99="$i99" -v imax="$imax" -v t=$(($(timeouts) - before)) \
      'BEGIN { printf "%-28s %5d %8.2f %8.2f %8.2f | %8.3f %8.3f %8.3f %8.2f | %8.2f %8d %6d %8d\n",
               n, c, a / 1000, b / 1000, d / 1000, i50 / 1000, i90 / 1000, i99 / 1000, imax / 1000, r, q, e, t }'
  done
done
echo "(timeouts: answers the server gave up on after --request-timeout, 4s by default; they count as 200s for wrk)"
