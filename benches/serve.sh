# Sourced by the benchmark scripts: serve BIN OUT_DIR [serve flags...] starts `BIN serve` on a
# free loopback port, its output in OUT_DIR/serve.out and serve.err, and sets `server` (its
# process id) and `url` (its address) once it listens; exits the script if it never does.
serve() {
    local bin="$1" dir="$2"
    shift 2
    "$bin" serve --bind 127.0.0.1:0 "$@" > "$dir/serve.out" 2> "$dir/serve.err" &
    server=$!
    url=""
    for _ in $(seq 1 100); do
        url="$(grep -o 'http://[0-9.:]*' "$dir/serve.out" | head -n 1 || true)"
        [ -n "$url" ] && return 0
        sleep 0.1
    done
    echo "the server printed no address" >&2
    cat "$dir/serve.err" >&2
    exit 1
}
