#!/usr/bin/env bash
# Memory and server-side time of /filter with every node as `Nodes` (kube-scheduler's
# `nodeCacheCapable: false`): prints VmRSS once ready, VmHWM after ten serial requests, VmHWM of a
# second server after five rounds of two requests in flight at once, and p50/p99 of the server's own
# time per request (the `elapsed_us` of its "answered" log lines: body read to answer built).
#
#   bench/full-nodes-memory.sh [--nodes N] [--port P]
#
# BIN=path runs that binary (else target/release/predicate-extender, built first as load.sh does). The
# files are gen-cluster's, in target/load/N-nodes/ (the ones bench/load.sh writes, reused).
set -euo pipefail
cd "$(dirname "$0")/.."

NODES=${NODES:-5000}
PORT=${PORT:-18988}
while [[ $# -gt 0 ]]; do
  case $1 in
    --nodes) NODES=${2:?--nodes needs a value}; shift 2 ;;
    --port) PORT=${2:?--port needs a value}; shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "full-nodes-memory.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
ADMIN_PORT=$((PORT + 1))
if [[ -z ${BIN:-} ]]; then # BIN=path uses that binary as it is
  cargo build --release --locked --bin predicate-extender
  BIN=target/release/predicate-extender
fi
GEN=target/release/gen-cluster
[[ -x $GEN ]] || cargo build --release --locked --bin gen-cluster

DIR=target/load/$NODES-nodes
mkdir -p "$DIR"
SHAPE=(--nodes "$NODES" --pods-per-node 20 --zones 3 --seed 1)
[[ -s $DIR/cluster.json ]] || "$GEN" "${SHAPE[@]}" --out "$DIR/cluster.json"
[[ -s $DIR/nodes.json ]] || "$GEN" "${SHAPE[@]}" --extender-args nodes --out "$DIR/nodes.json"
LOG=$(mktemp)
SERVER=
trap '[[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null; rm -f "$LOG"' EXIT

status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
start() {
  : >"$LOG"
  "$BIN" serve --cluster-snapshot "$DIR/cluster.json" --listen "127.0.0.1:$PORT" \
    --admin-listen "127.0.0.1:$ADMIN_PORT" --log-format json 2>"$LOG" &
  SERVER=$!
  until curl -sf "http://127.0.0.1:$ADMIN_PORT/readyz" >/dev/null; do
    kill -0 "$SERVER" 2>/dev/null || { echo "the server exited:" >&2; tail -5 "$LOG" >&2; exit 1; }
    sleep 0.5
  done
  sleep 1
}
stop() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=; }
post() { # fails unless the answer is a 200 without an Error
  local out; out=$(mktemp)
  local code
  code=$(curl -s -o "$out" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "@$DIR/nodes.json" "http://127.0.0.1:$PORT/filter")
  if [[ $code != 200 ]] || grep -q '"Error":"[^"]' "$out"; then
    echo "/filter answered $code: $(head -c 300 "$out")" >&2; rm -f "$out"; return 1
  fi
  rm -f "$out"
}
# p50 and p99 (nearest rank) of the filter requests' elapsed_us in the log, in ms.
times() {
  grep '"answered"' "$LOG" | grep '"verb":"filter"' | sed 's/.*"elapsed_us":\([0-9]*\).*/\1/' | sort -n |
    awk '{ t[NR] = $1 } END { p50 = t[int((NR + 1) / 2)]; i = int(NR * 0.99 + 0.999); printf "%.1f %.1f %d", p50 / 1000, t[i] / 1000, NR }'
}

echo "body: $(stat -c %s "$DIR/nodes.json") bytes; binary: $BIN"
start
ready=$(status_kib "$SERVER" VmRSS)
for _ in $(seq 10); do post; done
read -r s50 s99 sn <<<"$(times)"
serial=$(status_kib "$SERVER" VmHWM)
after=$(status_kib "$SERVER" VmRSS)
stop

start
for _ in $(seq 5); do
  post & a=$!; post & b=$!
  wait "$a"; wait "$b"
done
read -r c50 c99 cn <<<"$(times)"
concurrent=$(status_kib "$SERVER" VmHWM)
stop

printf 'VmRSS ready %s MiB; 10 serial: VmHWM %s MiB (VmRSS after %s MiB), p50 %s ms p99 %s ms (%s requests)\n' \
  "$(mib "$ready")" "$(mib "$serial")" "$(mib "$after")" "$s50" "$s99" "$sn"
printf '5 x 2 concurrent (a second server): VmHWM %s MiB, p50 %s ms p99 %s ms (%s requests)\n' \
  "$(mib "$concurrent")" "$c50" "$c99" "$cn"
