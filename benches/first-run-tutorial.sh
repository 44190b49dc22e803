#!/usr/bin/env bash
# Times the first tutorial (docs/tutorials/first-run.md) as a new user follows it: a bare clone
# of this repository with an empty cargo cache (crates downloaded and built from nothing),
# `cargo build --release`, `serve`, the dashboard's New run, Start run and Export JSON in
# headless Chromium (tests/e2e/first-run.mjs), then the tutorial's `play` command.
#
#   bash benches/first-run-tutorial.sh
#
# Needs network access to crates.io, node with tests/e2e's packages (`npm ci` there) and
# Chromium (CHROMIUM, default /usr/bin/chromium). Prints each step's seconds and the total.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
source "$repo/benches/serve.sh"
work="$(mktemp -d)"
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
(cd "$repo/tests/e2e" && [ -d node_modules ] || PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)

start=$SECONDS
mark() { echo "[$((SECONDS - start)) s] $*"; }

mark "1. clone and build (empty cargo cache: CARGO_HOME=$work/cargo-home)"
git clone -q "$repo" "$work/kalah-tuner"
cd "$work/kalah-tuner"
CARGO_HOME="$work/cargo-home" cargo build --release --quiet
mark "   built"

mark "2. serve"
serve ./target/release/kalah-tuner "$work"
mark "   listening on $url"

mark "3-5. New run, watch it finish, Export JSON (headless Chromium)"
node "$repo/tests/e2e/first-run.mjs" "$url" "$work/export.json" | sed 's/^/   /'
name="$(cat "$work/export.json.name")"
mv "$work/export.json" "$work/kalah-tuner/$name"
mark "   exported $name"

mark "5. play it against minimax:4, 200 games"
./target/release/kalah-tuner play --south "export:$name" --north minimax:4 --games 200 | tail -n 3 | sed 's/^/   /'
mark "done: the tutorial took $((SECONDS - start)) s from a bare clone"
