#!/usr/bin/env python3
"""Latency of interactive moves while a GA run keeps every game thread busy.

Starts nothing itself: point it at a running `kalah-tuner serve`. It queues an `abrams` run
(unless --no-run), waits until the run is computing, then sends --requests sequential
`POST /api/move` requests for --agent from the start position and prints the latency
percentiles. The run is cancelled at the end. Standard library only.

    kalah-tuner serve --database-url sqlite://load.db &
    python3 tests/load/move_latency.py --base http://127.0.0.1:8080 --requests 300
"""

import argparse
import json
import statistics
import time
import urllib.request


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.loads(resp.read() or b"null")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="http://127.0.0.1:8080")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--agent", default="greedy")
    ap.add_argument("--no-run", action="store_true", help="measure on an idle server")
    args = ap.parse_args()

    run_id = None
    if not args.no_run:
        run = call(args.base, "POST", "/api/runs", {"preset": "abrams", "name": "load: move latency"})
        run_id = run["id"]
        while call(args.base, "GET", f"/api/runs/{run_id}")["status"] != "running":
            time.sleep(0.2)
        time.sleep(2)  # the generation's games are under way
    times = []
    try:
        for i in range(args.requests):
            body = {"agent": args.agent, "position": "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S", "seed": i}
            started = time.perf_counter()
            call(args.base, "POST", "/api/move", body)
            times.append((time.perf_counter() - started) * 1000)
    finally:
        if run_id is not None:
            call(args.base, "POST", f"/api/runs/{run_id}/cancel", {})
    times.sort()
    pct = lambda p: times[min(len(times) - 1, int(p / 100 * len(times)))]
    print(
        f"{len(times)} moves by {args.agent}{'' if args.no_run else ' while an abrams run computes'}: "
        f"p50 {pct(50):.1f} ms, p90 {pct(90):.1f} ms, p99 {pct(99):.1f} ms, "
        f"max {times[-1]:.1f} ms, mean {statistics.mean(times):.1f} ms"
    )


if __name__ == "__main__":
    main()
