#!/usr/bin/env bash
# Engine speed of the working tree against a base commit, binary against binary in one run:
# builds both release binaries, then runs them alternately (ROUNDS rounds, default 5) and
# prints each figure's best and the ratio new/base. Ratios from one run on one machine are
# what to quote; absolute times move with the machine and its load.
#
#   bash benches/compare.sh [BASE]        (default BASE: origin/main if it exists, else HEAD~1)
#
# The base is built in a git worktree under target/compare/ with a target folder of its own,
# which later runs reuse (the first build of a base takes a few minutes); BASE_TREE and
# BASE_TARGET name an existing checkout of the base and its target folder instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-$(git -C "$root" rev-parse --verify -q origin/main || git -C "$root" rev-parse HEAD~1)}
base_sha=$(git -C "$root" rev-parse --short "$base")
rounds=${ROUNDS:-5}
tree=${BASE_TREE:-$root/target/compare/$base_sha}
base_target=${BASE_TARGET:-$root/target/compare/target}
if [ ! -d "$tree" ]; then
  mkdir -p "$root/target/compare"
  git -C "$root" worktree add -q --detach "$tree" "$base_sha"
fi
echo "building base $base_sha and the working tree (release)" >&2
(cd "$tree" && CARGO_TARGET_DIR=$base_target cargo build --release --quiet)
(cd "$root" && cargo build --release --quiet)
old=$base_target/release/kalah-tuner
new=${CARGO_TARGET_DIR:-$root/target}/release/kalah-tuner

# One measurement round of a binary: "name value" lines, times in seconds or ms.
measure() {
  local bin=$1
  "$bin" perft --depth 11 2>&1 >/dev/null | sed -nE 's/^perft\(11\).* in ([0-9.]+) s.*/perft11_s \1/p'
  "$bin" bench --quick | sed -nE \
    -e 's/^minimax depth ([0-9]+) from the start: ([0-9.]+) ms per move.*/minimax\1_ms \2/p' \
    -e 's/^mcts:4000 from the start: ([0-9.]+) ms per move best.*/mcts4000_ms \1/p' \
    -e 's/.*self-play: [0-9]+ games in ([0-9.]+) s.*/selfplay20_s \1/p'
}
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for r in $(seq 1 "$rounds"); do
  echo "round $r of $rounds" >&2
  measure "$old" | sed 's/^/base /' >>"$results"
  measure "$new" | sed 's/^/new /' >>"$results"
done
printf '%-14s %12s %12s %10s\n' figure "base $base_sha" "working tree" new/base
for fig in $(awk '{print $2}' "$results" | sort -u); do
  b=$(awk -v f="$fig" '$1 == "base" && $2 == f {print $3}' "$results" | sort -g | head -1)
  n=$(awk -v f="$fig" '$1 == "new" && $2 == f {print $3}' "$results" | sort -g | head -1)
  awk -v f="$fig" -v b="$b" -v n="$n" 'BEGIN {printf "%-14s %12s %12s %10.3f\n", f, b, n, n / b}'
done
echo "(best of $rounds; times, so a ratio under 1 means the working tree is faster)"
