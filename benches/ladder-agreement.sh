#!/usr/bin/env bash
# The ladder against a round robin (docs/explanation/statistics.md#the-ladder): three runs of
# the main job's preset with seeds 1, 2 and 3 finish on one server; their champions and the
# hosted anchors are rated on the 6,4 ladder at depth 4 until every interval is within its
# settled margin; then a round robin of the same players (40 games a pairing, over 2,000
# games) is played with `kalah-tuner tournament`, and tests/ladder/compare.py checks (1) the ladder's
# ratings against the independent fit of its trials (to 1 Elo) and (2) its order against the
# round robin's, within the intervals.
#
#   bash benches/ladder-agreement.sh          (about an hour on two cores)
#
# Needs curl and python3. REUSE=1 goes on from an earlier run's WORK folder (its finished runs
# and ladder survive the restart). BIN: a built kalah-tuner to use (default: build this checkout);
# WORK: the folder for the database and the answers (default: a new temporary one). Prints
# the comparison; exits 1 when a check fails.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
source "$repo/benches/serve.sh"
work="${WORK:-$(mktemp -d)}"
trap 'kill "${server:-}" 2>/dev/null || true' EXIT
cd "$repo"
bin="${BIN:-$repo/target/release/kalah-tuner}"
[ -n "${BIN:-}" ] || cargo build --release --quiet
start=$SECONDS
mark() { echo "[$((SECONDS - start)) s] $*"; }

serve "$bin" "$work" --database-url "sqlite://$work/ladder.db" --ladder-share 1 --ladder-depth 4
mark "serving on $url, data in $work"

get() { curl -sf "$url/api/$1"; }
post() { curl -sf -H 'content-type: application/json' -d "$2" "$url/api/$1"; }
field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

# REUSE=1 (with WORK set to an earlier run's folder): the runs are there already, finished.
runs=()
[ -n "${REUSE:-}" ] || for seed in 1 2 3; do
    runs+=("$(post runs "{\"preset\": \"main-job\", \"name\": \"main-job seed $seed\", \"config\": {\"seed\": $seed}}" | field "['id']")")
done
for id in "${runs[@]+"${runs[@]}"}"; do
    until [ "$(get "runs/$id" | field "['status']")" = finished ]; do sleep 5; done
    mark "run $id finished"
done

settled='import json,sys
l = json.load(sys.stdin)
ps = [p for p in l["players"] if not p["withdrawn"]]
champions = sum(p["kind"] == "champion" for p in ps)
wide = [p for p in ps if p["margin"] is None or p["margin"] > l["settled_margin"]]
print("yes" if champions == 3 and not wide else "%d wide, %d pairs" % (len(wide), l["trials"]))'
while :; do
    state="$(get 'ladder?board=6,4' | python3 -c "$settled")"
    [ "$state" = yes ] && break
    mark "ladder: $state"
    sleep 30
done
get 'ladder?board=6,4' > "$work/ladder.json"
mark "ladder settled: $(field "['trials']" < "$work/ladder.json") pairs"

# The round robin: the same players, in the ladder's order, at the ladder's depth, on the
# command line (the API's tournaments take at most 8 agents).
agents="$(python3 -c 'import json,sys; print(json.dumps([p["spec"] for p in json.load(open(sys.argv[1]))["players"]]))' "$work/ladder.json")"
"$bin" tournament --agents "$agents" --games 40 --opening-plies 4 --seed 2026 \
    --json "$work/tournament.json" > "$work/tournament.txt"
mark "round robin finished"

python3 tests/ladder/compare.py "$work/ladder.db" "$work/ladder.json" "$work/tournament.json"
mark "done"
