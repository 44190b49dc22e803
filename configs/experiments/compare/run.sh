#!/usr/bin/env bash
# The tuner comparison of docs/results/reproductions.md#tuner-comparison: the GA, CMA-ES, SPSA, DE,
# TD-Leaf(lambda) and Texel-style fitting on hunter10 and on the thirteen features of configs/beat-published.toml,
# at depth 4, each from scratch (random or zero weights) with the same budget of processor
# time (20 minutes of it by default: ten minutes on two cores), each choosing its champion on
# the DESIGN.md section 11 panel. Then every champion plays 1,000 games against each panel
# player from 8-ply openings, a length no tuner's panel or fitness used.
#   bash configs/experiments/compare/run.sh            # from the project's root, ~3.5 hours
# BIN, OUT, BUDGET (processor minutes) and SETS override the defaults.
set -euo pipefail
BIN=${BIN:-target/release/kalah-tuner}
OUT=${OUT:-compare-out}
BUDGET=${BUDGET:-20}
SETS=${SETS:-"hunter10 beat13"}
PANEL=(minimax:4 heuristic:hunter10:published:4 heuristic:divilly6:published:4 heuristic:abrams3:published:4)
mkdir -p "$OUT"

features() {
    case $1 in
        hunter10) echo hunter10 ;;
        beat13) echo hoard+side_seeds+mobility+my_store+rightmost_empty+neg_opp_store+extra_turns+store_diff+win_margin+neg_opp_margin+side_diff+overflow_diff+capturable_diff ;;
    esac
}
zeros() {
    case $1 in
        hunter10) echo 0,0,0,0,0,0,0,0,0,0 ;;
        beat13) echo 0,0,0,0,0,0,0,0,0,0,0,0,0 ;;
    esac
}

measure() {
    local name=$1
    for opponent in "${PANEL[@]}"; do
        "$BIN" play --south "export:$OUT/$name.json" --north "$opponent" --games 1000 \
            --opening-plies 8 --seed 777 --json "$OUT/$name.vs.$opponent.json" >/dev/null
    done
}

for set in $SETS; do
    f=$(features "$set")
    z=$(zeros "$set")
    for tuner in ga cmaes spsa de; do
        "$BIN" evolve --config "configs/experiments/compare/$tuner-$set.toml" --cpu-minutes "$BUDGET" \
            --out "$OUT/$tuner-$set.json" >"$OUT/$tuner-$set.log" 2>&1
    done
    "$BIN" learn --method td-leaf --features "$f" --init "$z" --depth 4 --games 10000000 \
        --every 10000 --panel "${PANEL[@]}" --pairs 32 --panel-opening-plies 6 --play-depth 4 \
        --cpu-minutes "$BUDGET" --out "$OUT/td-leaf-$set.json" >"$OUT/td-leaf-$set.log" 2>&1
    "$BIN" learn --method texel --features "$f" --init "$z" --source minimax:4 --depth 4 \
        --games 50000 --rounds 100 --panel "${PANEL[@]}" --pairs 32 --panel-opening-plies 6 \
        --play-depth 4 --cpu-minutes "$BUDGET" --out "$OUT/texel-$set.json" >"$OUT/texel-$set.log" 2>&1
    for tuner in ga cmaes spsa de td-leaf texel; do
        measure "$tuner-$set"
    done
done
python3 "$(dirname "$0")/summary.py" "$OUT"
