#!/usr/bin/env bash
# Two users on one server (docs/how-to/class-server.md#taking-turns): alice queues three runs,
# then bob one, all the same config; the server has two run slots (--workers 2). After a
# warm-up, counts the generations each user's runs play in a window and prints each user's
# share of the game throughput (every generation of this config plays the same games). Then
# cancels the runs and compares the processor time charged to them (each run's measured
# `processor_seconds`, what quotas count) with the processor time the server process used.
#
#   bash benches/fair-share.sh            (about 3 minutes)
#
# Needs curl and python3. BIN: a built kalah-tuner (default: build this checkout). WINDOW:
# the measured seconds (default 120).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
source "$repo/benches/serve.sh"
work="$(mktemp -d)"
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
bin="${BIN:-$repo/target/release/kalah-tuner}"
[ -n "${BIN:-}" ] || (cd "$repo" && cargo build --release --quiet)
window="${WINDOW:-120}"
db="sqlite://$work/fair.db"
alice="$("$bin" users add alice --database-url "$db" 2>/dev/null)"
bob="$("$bin" users add bob --database-url "$db" 2>/dev/null)"
serve "$bin" "$work" --database-url "$db" --workers 2 --ladder-share 0
config='{"config": {"population": 16, "generations": 10000, "depth": 3, "fitness": {"games_per_pair": 4}}}'
start_run() {
    curl -s -H "authorization: Bearer $1" -H 'content-type: application/json' -d "$config" "$url/api/runs" |
        python3 -c 'import json,sys; a=json.load(sys.stdin); print(a["id"]) if "id" in a else sys.exit(f"refused: {a}")'
}
a_runs=("$(start_run "$alice")" "$(start_run "$alice")" "$(start_run "$alice")")
b_run="$(start_run "$bob")"
done_of() { curl -sf "$url/api/runs/$1" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["generations_done"], r["status"])'; }
sleep 20
snapshot() { for id in "${a_runs[@]}" "$b_run"; do done_of "$id"; done; }
before="$(snapshot)"
sleep "$window"
after="$(snapshot)"
python3 - "$before" "$after" <<'PY'
import sys
before = [l.split() for l in sys.argv[1].splitlines()]
after = [l.split() for l in sys.argv[2].splitlines()]
played = [int(a[0]) - int(b[0]) for a, b in zip(after, before)]
alice, bob = sum(played[:3]), played[3]
total = max(alice + bob, 1)
print("runs (alice x3, bob x1): status", [a[1] for a in after], "generations in the window", played)
print(f"alice {alice} generations ({alice / total:.1%}), bob {bob} ({bob / total:.1%})")
print("each user at least a third: " + ("yes" if min(alice, bob) / total >= 1 / 3 else "NO"))
PY
for id in "${a_runs[@]}" "$b_run"; do
    curl -sf -o /dev/null -X POST -H "authorization: Bearer $(
        [ "$id" = "$b_run" ] && echo "$bob" || echo "$alice")" "$url/api/runs/$id/cancel"
done
sleep 3
charged="$(for id in "${a_runs[@]}" "$b_run"; do
    curl -sf "$url/api/runs/$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["processor_seconds"] or 0)'
done)"
ticks="$(getconf CLK_TCK)"
used="$(awk -v t="$ticks" '{print ($14 + $15) / t}' "/proc/$server/stat")"
python3 - "$charged" "$used" <<'PY'
import sys
charged = [float(x) for x in sys.argv[1].split()]
used = float(sys.argv[2])
print(f"processor time charged to the runs: {sum(charged):.1f} s (alice {sum(charged[:3]):.1f}, "
      f"bob {charged[3]:.1f}); the server process used {used:.1f} s: "
      f"{sum(charged) / max(used, 1e-9):.1%} of it charged")
PY
