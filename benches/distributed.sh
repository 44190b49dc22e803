#!/usr/bin/env bash
# Games per second of one generation of the `abrams` preset played through the PostgreSQL
# batch queue by 1, then 2 `kalah-tuner worker` processes of one thread each, with a
# coordinating `serve --no-batches`; and what the queue costs the database per batch.
#
#   bash benches/distributed.sh [postgres://USER@HOST:PORT]   (default: postgres://postgres@127.0.0.1:5432)
#
# The benchmark panel is switched off (it is played by the coordinator, not in batches), so
# a generation is its 1,560 fitness games at depth 7. Database cost comes from PostgreSQL's
# own counters for the benchmark's database (pg_stat_database: transactions and active_time,
# the time spent executing statements), divided by the batches played.
set -euo pipefail
server=${1:-postgres://postgres@127.0.0.1:5432}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/target/release/kalah-tuner
[ -x "$bin" ] || (cd "$root" && cargo build --release --quiet)
workdir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$workdir"; }
trap cleanup EXIT

stat() {
  psql -qtA "$server/postgres" -c "SELECT xact_commit + xact_rollback, round(active_time::numeric, 1) FROM pg_stat_database WHERE datname = '$1'"
}

measure() {
  local workers=$1 db="kt_bench_$$_$1"
  psql -q "$server/postgres" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
  local url="$server/$db"
  "$bin" serve --bind 127.0.0.1:0 --threads 1 --no-batches --database-url "$url" \
    >"$workdir/serve.out" 2>"$workdir/serve.err" & pids+=($!)
  local serve_pid=$!
  until grep -q listening "$workdir/serve.out"; do sleep 0.1; done
  local base; base=$(sed 's/.*listening on //' "$workdir/serve.out")
  local wpids=()
  for i in $(seq "$workers"); do
    "$bin" worker --threads 1 --database-url "$url" >"$workdir/w$i.out" 2>"$workdir/w$i.err" & pids+=($!); wpids+=($!)
    until grep -q ready "$workdir/w$i.out"; do sleep 0.1; done
  done
  sleep 3  # idle: stats settle
  read -r tx0 ms0 < <(stat "$db" | tr '|' ' ')
  local id; id=$(curl -s -XPOST "$base/api/runs" -H 'content-type: application/json' \
    -d '{"preset": "abrams", "config": {"generations": 1, "benchmark": {"panel": []}}}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  until curl -s "$base/api/runs/$id" | grep -q '"status":"finished"'; do sleep 0.5; done
  sleep 2  # statistics are flushed within a second
  read -r tx1 ms1 < <(stat "$db" | tr '|' ' ')
  local gen; gen=$(curl -s "$base/api/runs/$id/generations")
  local batches; batches=$(psql -qtA "$url" -c "SELECT COUNT(*) FROM batch_results")
  local play; play=$(psql -qtA "$url" -c "SELECT SUM(play_ms) FROM batch_results")
  python3 - "$workers" "$gen" "$tx0" "$tx1" "$ms0" "$ms1" "$batches" "$play" <<'PY'
import json, sys
workers, gen, tx0, tx1, ms0, ms1, batches, play = sys.argv[1:]
g = json.loads(gen)["generations"][0]
games, wall = g["games_played"], g["wall_ms"] / 1000
batches = int(batches)
tx, ms = int(tx1) - int(tx0), float(ms1) - float(ms0)
print(json.dumps({"workers": int(workers), "games": games, "wall_s": round(wall, 2),
                  "games_per_s": round(games / wall, 2), "batches": batches,
                  "batch_play_s_mean": round(int(play) / batches / 1000, 2),
                  "db_transactions": tx, "db_active_ms": round(ms, 1),
                  "db_transactions_per_batch": round(tx / batches, 1),
                  "db_ms_per_batch": round(ms / batches, 2)}))
PY
  for p in "${wpids[@]}" "$serve_pid"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  psql -q "$server/postgres" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
}

measure 1 | tee "$workdir/one.json"
measure 2 | tee "$workdir/two.json"
python3 - "$workdir/one.json" "$workdir/two.json" <<'PY'
import json, sys
one, two = (json.load(open(p)) for p in sys.argv[1:])
print(f"speed-up with 2 workers: {two['games_per_s'] / one['games_per_s']:.2f}x")
PY
