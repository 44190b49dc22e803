#!/usr/bin/env bash
# Exact solves of Kalah start positions through endgame databases: for each board, the
# database's build time and size, then the solve's time, peak memory and value.
#
#   bash benches/solver.sh [DIR] [ROWS]
#
# DIR holds the databases (default: a fresh temporary folder, so every build is timed from
# nothing; give a folder that already has them to time the solves alone). ROWS picks rows by
# name (default: "small 64"; "64big" and "65" (empty captures) use the 24-seed databases,
# "64xl" and "65xl" (standard rules) the 28-seed database of standard rules: 5.3 GB, over half
# an hour to build). Solves run on every core; SOLVE_ARGS adds flags to each solve (e.g.
# "--threads 1 --table-mb 3200").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/target/release/kalah-tuner
[ -x "$bin" ] || (cd "$root" && cargo build --release --quiet)
dir=${1:-$(mktemp -d)}
rows=${2:-small 64}
mkdir -p "$dir"

# Prints one table row: board, rules, the database (pits and seeds) it uses.
row() {
  local board=$1 rules=$2 pits=$3 seeds=$4
  local out build_s size_mb
  out=$( { /usr/bin/time -f "TIME %e %M" "$bin" egdb build --pits "$pits" --seeds "$seeds" \
             --rules "$rules" --dir "$dir" >/dev/null; } 2>&1 )
  if grep -q "already built" <<<"$out"; then build_s="(built)"; else
    build_s=$(awk '/^TIME/ {print $2}' <<<"$out"); fi
  size_mb=$(du -m "$dir/kalah-$pits-$rules-$seeds.egdb" | cut -f1)
  # The solve reads the largest database in its folder: a folder of this one alone.
  local only="$dir/only-$pits-$rules-$seeds"
  mkdir -p "$only"
  ln -sf "$dir/kalah-$pits-$rules-$seeds.egdb" "$only/"
  # shellcheck disable=SC2086
  out=$( { /usr/bin/time -f "TIME %e %M" "$bin" solve --board "$board" --rules "$rules" \
             --egdb-dir "$only" ${SOLVE_ARGS:-}; } 2>&1 )
  local value solve_s peak_mb nodes
  value=$(grep -E '^-?[0-9]+$' <<<"$out" | tail -1)
  solve_s=$(awk '/^TIME/ {print $2}' <<<"$out")
  peak_mb=$(awk '/^TIME/ {printf "%d", $3 / 1024}' <<<"$out")
  nodes=$(sed -n 's/^solved .* \([0-9]*\) nodes.*/\1/p' <<<"$out")
  echo "| Kalah($board) | $rules | $pits pits, up to $seeds seeds | $build_s s | $size_mb MB | $solve_s s | $peak_mb MB | $nodes | $value |"
}

echo "| board | rules | database | build | size | solve | peak memory | nodes | value |"
echo "|---|---|---|---|---|---|---|---|---|"
for r in $rows; do
  case $r in
    small)
      row 4,5 empty-capture 4 30
      row 4,5 standard 4 30
      row 5,4 empty-capture 5 24
      row 5,4 standard 5 24
      row 6,3 empty-capture 6 20
      row 6,3 standard 6 20 ;;
    64)
      row 6,4 empty-capture 6 20
      row 6,4 standard 6 20 ;;
    64big)
      row 6,4 empty-capture 6 24
      row 6,4 standard 6 24 ;;
    65)
      # With standard rules and this database the solve takes over half an hour: 65xl.
      row 6,5 empty-capture 6 24 ;;
    64xl)
      row 6,4 standard 6 28 ;;
    65xl)
      row 6,5 standard 6 28 ;;
  esac
done
