#!/usr/bin/env bash
# The benchmark matrix: small, middle and large cases of every command with a speed target,
# the working tree's release binary against a base commit's, in one run. Builds both, runs
# them alternately (ROUNDS rounds, default 3) and prints each case's best wall time and the
# ratio working tree / base, so that a change that helps one size and hurts another shows at
# once. Ratios from one run on one machine are what to quote; absolute times move with the
# machine and its load (benches/count-guard.sh gives counts that do not).
#
#   bash benches/compare.sh [BASE]        (default BASE: origin/main if it exists, else HEAD~1)
#
# ONLY=REGEX keeps the cases whose names match; LARGE=1 adds the cases that take minutes
# (perft(13), Kalah(6,5) with its 26-seed database, the 24-seed database's build). The base
# is built in a git worktree under target/compare/ with a target folder of its own, which
# later runs reuse; BASE_TREE and BASE_TARGET name an existing checkout of the base and its
# target folder instead, BASE_BIN and NEW_BIN two binaries to compare without building.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-$(git -C "$root" rev-parse --verify -q origin/main || git -C "$root" rev-parse HEAD~1)}
base_sha=$(git -C "$root" rev-parse --short "$base")
rounds=${ROUNDS:-3}
only=${ONLY:-.}
old=${BASE_BIN:-}
new=${NEW_BIN:-}
if [ -z "$old" ]; then
  tree=${BASE_TREE:-$root/target/compare/$base_sha}
  base_target=${BASE_TARGET:-$root/target/compare/target}
  if [ ! -d "$tree" ]; then
    mkdir -p "$root/target/compare"
    git -C "$root" worktree add -q --detach "$tree" "$base_sha"
  fi
  echo "building base $base_sha (release)" >&2
  (cd "$tree" && CARGO_TARGET_DIR=$base_target cargo build --release --quiet --bin kalah-tuner)
  old=$base_target/release/kalah-tuner
fi
if [ -z "$new" ]; then
  echo "building the working tree (release)" >&2
  (cd "$root" && cargo build --release --quiet --bin kalah-tuner)
  new=${CARGO_TARGET_DIR:-$root/target}/release/kalah-tuner
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Databases that both binaries read (the format is the same); each binary's "from nothing"
# cases get an empty folder every time.
dbs=$work/dbs
mkdir -p "$dbs"
echo "building the shared endgame databases" >&2
"$new" egdb build --pits 6 --seeds 18 --dir "$dbs" >/dev/null 2>&1
"$new" egdb build --pits 5 --seeds 23 --dir "$dbs" >/dev/null 2>&1
"$new" egdb build --pits 4 --seeds 30 --rules empty-capture --dir "$dbs" >/dev/null 2>&1
if [ "${LARGE:-}" = 1 ]; then
  "$new" egdb build --pits 6 --seeds 26 --dir "$dbs" >/dev/null 2>&1
fi

# name | command (BIN stands for the binary, EMPTY for a fresh empty folder)
cases=$(cat <<EOF
perft-7|BIN perft --depth 7
perft-9|BIN perft --depth 9
perft-11|BIN perft --depth 11
minimax-6x20|BIN play --south minimax:6 --north minimax:6 --games 20 --threads 1 --opening-plies 2 --seed 1
minimax-8x20|BIN play --south minimax:8 --north minimax:8 --games 20 --threads 1 --opening-plies 2 --seed 1
minimax-12|BIN move --agent minimax:12 --position 4,4,4,4,4,4/0/4,4,4,4,4,4/0/S
play-d2x200|BIN play --south heuristic:hunter10:published:2 --north minimax:2 --games 200 --threads 1 --seed 1
play-d4x200|BIN play --south heuristic:hunter10:published:4 --north minimax:4 --games 200 --threads 1 --seed 1
play-7x7-pie|BIN play --board 7,7 --pie --south minimax:6 --north heuristic:hunter10:published:4 --games 20 --threads 1 --seed 1
mcts-4000x4|BIN play --south mcts:4000 --north minimax:4 --games 4 --threads 1 --seed 1
generation-abrams|BIN evolve --preset abrams --generations 1 --out EMPTY/out.json
generation-hunter|BIN evolve --preset hunter --generations 1 --population 10 --out EMPTY/out.json
generation-mankalah|BIN evolve --preset mankalah --generations 1 --population 6 --out EMPTY/out.json
solve-4x3|BIN solve --board 4,3 --egdb-dir EMPTY
solve-5x3-nothing|BIN solve --board 5,3 --egdb-dir EMPTY
solve-5x3-db|BIN solve --board 5,3 --egdb-dir $dbs
solve-4x5-empty-db|BIN solve --board 4,5 --rules empty-capture --egdb-dir $dbs
solve-4x5-empty-nodb|BIN solve --board 4,5 --rules empty-capture --no-egdb
solve-5x4-nodb|BIN solve --board 5,4 --rules empty-capture --no-egdb
solve-6x4-db|BIN solve --board 6,4 --egdb-dir $dbs
solve-6x4-nothing|BIN solve --board 6,4 --egdb-dir EMPTY
egdb-build-14|BIN egdb build --pits 6 --seeds 14 --dir EMPTY
egdb-build-20|BIN egdb build --pits 6 --seeds 20 --dir EMPTY
EOF
)
if [ "${LARGE:-}" = 1 ]; then
  cases+=$'\n'"perft-13|BIN perft --depth 13"
  cases+=$'\n'"solve-6x5-db|BIN solve --board 6,5 --egdb-dir $dbs"
  cases+=$'\n'"egdb-build-24|BIN egdb build --pits 6 --seeds 24 --dir EMPTY"
fi
cases=$(grep -E "^[^|]*(${only})[^|]*\|" <<<"$cases" || true)
[ -n "$cases" ] || { echo "no case matches ONLY=$only" >&2; exit 2; }

# Wall seconds of one case run by one binary; its output must be the same for both.
run_case() {
  local bin=$1 command=$2 empty t0 t1
  empty=$(mktemp -d -p "$work")
  command=${command//BIN/$bin}
  command=${command//EMPTY/$empty}
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  if ! $command >"$empty.out" 2>"$empty.err"; then
    echo "failed: $command" >&2
    tail -n 5 "$empty.err" >&2
    exit 2
  fi
  t1=$(date +%s.%N)
  rm -rf "$empty"
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}

results=$work/results
for r in $(seq 1 "$rounds"); do
  echo "round $r of $rounds" >&2
  while IFS='|' read -r name command; do
    echo "base $name $(run_case "$old" "$command")" >>"$results"
    echo "new $name $(run_case "$new" "$command")" >>"$results"
  done <<<"$cases"
done
printf '%-22s %10s %10s %9s\n' case "base $base_sha" "new" new/base
while IFS='|' read -r name _; do
  b=$(awk -v f="$name" '$1 == "base" && $2 == f {print $3}' "$results" | sort -g | head -1)
  n=$(awk -v f="$name" '$1 == "new" && $2 == f {print $3}' "$results" | sort -g | head -1)
  awk -v f="$name" -v b="$b" -v n="$n" 'BEGIN {printf "%-22s %10s %10s %9.3f\n", f, b, n, n / b}'
done <<<"$cases"
echo "(wall seconds, best of $rounds, whole commands; under 1 means the working tree is faster)"
