#!/usr/bin/env bash
# Fuzzes the HTTP API from its own OpenAPI document with schemathesis (from PyPI), against a
# release server on a fresh SQLite database, and fails on any server error or any answer that
# does not conform to the document (status code, content type, headers, body schema).
#
#   bash tests/fuzz/schemathesis.sh              # 100 examples per operation (tests/server/README.md)
#   EXAMPLES=20 bash tests/fuzz/schemathesis.sh  # the small run .ci/run makes
#
# Environment: EXAMPLES (per operation, default 100), SEED (default 19), BIN (default
# $CARGO_TARGET_DIR/release/kalah-tuner or target/release/kalah-tuner, built when missing), VENV (where schemathesis is installed,
# default target/schemathesis-venv), REPORT (a JUnit XML report path, optional).
#
# The checks left out, and why (tests/server/README.md#api-fuzzing): positive_data_acceptance and
# negative_data_rejection need a schema that says exactly which values the server accepts;
# JSON Schema cannot say that a KPN's two rows have as many pits, nor that an agent spec fits
# the limits table at its board size, so the server rightly refuses some schema-valid
# requests (422, naming the field).
#
# The event streams are left out: GET /api/runs/{id}/events stays open until its run ends and
# GET /api/events until the server stops, so every generated request would wait for the
# timeout. tests/server/api.rs and tests/server/shared.rs read them.
set -euo pipefail
cd "$(dirname "$0")/../.."

examples="${EXAMPLES:-100}"
seed="${SEED:-19}"
bin="${BIN:-${CARGO_TARGET_DIR:-target}/release/kalah-tuner}"
venv="${VENV:-target/schemathesis-venv}"
version="4.32.5"

if [ ! -x "$bin" ]; then
    cargo build --release
fi
if [ ! -x "$venv/bin/schemathesis" ] || ! "$venv/bin/schemathesis" --version | grep -q "$version"; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
fi

work="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$bin" serve --bind "127.0.0.1:$port" --database-url "sqlite://$work/fuzz.db" >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 50); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.2
done

report=()
if [ -n "${REPORT:-}" ]; then
    report=(--report junit --report-junit-path "$REPORT")
fi
started=$(date +%s)
"$venv/bin/schemathesis" run "http://127.0.0.1:$port/api/openapi.json" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --phases examples,coverage,fuzzing,stateful \
    --exclude-path '/api/runs/{id}/events' --exclude-path '/api/events' \
    --max-examples "$examples" --seed "$seed" --workers 2 --request-timeout 60 \
    --no-color "${report[@]}"
echo "schemathesis: passed in $(( $(date +%s) - started )) s ($examples examples per operation, seed $seed)"
