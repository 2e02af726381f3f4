#!/usr/bin/env bash
# whatif at 5,000 nodes, two builds alternating (docs/performance.md, "whatif at 5,000 nodes").
#
#   bench/whatif-rounds.sh OLD_BINARY NEW_BINARY [ROUNDS]
#
# Each round runs, for the old build then the new one, the three commands of that section on the
# same generated snapshot (target/load/whatif-5000.json, made by gen-cluster on first use) and
# prints one line per command and build: the wall clock in seconds, from `date +%s.%N` before and
# after. Output of whatif itself goes to /dev/null; a failing command stops the script.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
if (($# < 2 || $# > 3)); then
  echo "usage: bench/whatif-rounds.sh OLD_BINARY NEW_BINARY [ROUNDS] (--help says more)" >&2
  exit 2
fi
if [[ -n ${3:-} && ! $3 =~ ^[1-9][0-9]*$ ]]; then
  echo "whatif-rounds.sh: ROUNDS must be a positive number, not $3" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
old=${1:?usage: bench/whatif-rounds.sh OLD_BINARY NEW_BINARY [ROUNDS]}
new=${2:?usage: bench/whatif-rounds.sh OLD_BINARY NEW_BINARY [ROUNDS]}
rounds=${3:-3}
snapshot=target/load/whatif-5000.json
if [[ ! -s $snapshot ]]; then
  mkdir -p "$(dirname "$snapshot")"
  cargo build --release --locked --bin gen-cluster
  target/release/gen-cluster --nodes 5000 --pods-per-node 15 --out "$snapshot"
fi
commands=(
  "read-only|--policy config/policy.json --scheduler nobody"
  "no-change|--policy config/policy.json --scheduler default-scheduler"
  "every-pod-stops-fitting|--policy tests/fixtures/whatif/needs-ssd.json --scheduler default-scheduler"
)
for round in $(seq 1 "$rounds"); do
  for entry in "${commands[@]}"; do
    name=${entry%%|*}
    for build in old new; do
      binary=$old
      [[ $build == new ]] && binary=$new
      start=$(date +%s.%N)
      # shellcheck disable=SC2086 # the flags are words
      "$binary" whatif --cluster-snapshot "$snapshot" ${entry#*|} >/dev/null
      end=$(date +%s.%N)
      printf 'round %s %-24s %s %.2f s\n' "$round" "$name" "$build" "$(echo "$end - $start" | bc)"
    done
  done
done
