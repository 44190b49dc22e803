#!/usr/bin/env python3
"""Checks a settled ladder against the independent fit and against a round robin.

    python3 tests/ladder/compare.py DB.sqlite LADDER.json TOURNAMENT.json

DB.sqlite is the server's database (the ladder's trials are read from it), LADDER.json the
answer of GET /api/ladder, TOURNAMENT.json the report of `kalah-tuner tournament --json` (or
GET /api/tournaments/{id}) for a round robin of the ladder's players in the order LADDER.json
lists them.

1. The ladder's ratings against tests/ladder/bt_reference.py's fit of the same trials: the
   largest difference, which must be under 1 Elo.
2. The round robin's own Bradley-Terry ratings (the same model, each game a trial) against
   the ladder's: each player's two intervals must overlap, and where the two orders differ
   the players' intervals must overlap.
Prints a table and exits 1 when a check fails.
"""
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bt_reference import fit  # noqa: E402


def main():
    db, ladder_path, tournament_path = sys.argv[1:4]
    ladder = json.load(open(ladder_path))
    tournament = json.load(open(tournament_path))
    players = [p for p in ladder["players"]]
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT id, entry FROM ladder_players WHERE ladder = ? ORDER BY created_at, id", (ladder["id"],)
    ).fetchall()
    index = {pid: i for i, (pid, _) in enumerate(rows)}
    pinned = next(i for i, (_, entry) in enumerate(rows) if entry == "anchor:" + ladder["reference"])
    trials = [
        (index[a], index[b], s)
        for a, b, s in con.execute("SELECT a, b, a_score FROM ladder_trials WHERE ladder = ?", (ladder["id"],))
    ]
    reference = fit(len(rows), pinned, trials)
    by_id = {p["id"]: p for p in players}
    worst = 0.0
    for pid, i in index.items():
        worst = max(worst, abs(by_id[pid]["elo"] - reference[i][0]), abs(by_id[pid]["margin"] - reference[i][1]))
    print(f"ladder: {len(trials)} trials (colour-swapped pairs) between {len(rows)} players")
    print(f"largest difference from the independent fit (rating or margin): {worst:.4f} Elo")
    ok = worst < 1.0

    report = tournament.get("report", tournament)
    n = len(report["agents"])
    assert n == len(players), "the round robin has the ladder's players in its order"
    games = report["total_games"]
    # Each game a trial: i's points against j from i's games first and j's games first.
    rr = []
    for i in range(n):
        for j in range(n):
            t = report["first"][i][j]
            if i == j or t is None:
                continue
            rr += [(i, j, 1.0)] * t["wins"] + [(i, j, 0.5)] * t["draws"] + [(i, j, 0.0)] * t["losses"]
    rr_pinned = next(i for i, p in enumerate(players) if p["name"] == ladder["reference"])
    rr_fit = fit(n, rr_pinned, rr)
    print(f"round robin: {games} games")
    print(f"{'player':40} {'ladder':>18} {'round robin':>18}  overlap")
    overlaps = []
    for i, p in enumerate(players):
        lo, hi = p["elo"] - p["margin"], p["elo"] + p["margin"]
        rlo, rhi = rr_fit[i][0] - rr_fit[i][1], rr_fit[i][0] + rr_fit[i][1]
        overlap = lo <= rhi and rlo <= hi
        overlaps.append(overlap)
        print(f"{p['name'][:40]:40} {p['elo']:7.0f} ±{p['margin']:4.0f}     {rr_fit[i][0]:7.0f} ±{rr_fit[i][1]:4.0f}      {'yes' if overlap else 'NO'}")
    ok = ok and all(overlaps)
    disagreements = 0
    for i in range(n):
        for j in range(i + 1, n):
            ladder_says = players[i]["elo"] > players[j]["elo"]
            rr_says = rr_fit[i][0] > rr_fit[j][0]
            if ladder_says != rr_says:
                a, b = players[i], players[j]
                within = abs(a["elo"] - b["elo"]) <= a["margin"] + b["margin"]
                disagreements += 1
                print(f"order differs: {a['name']} / {b['name']}: {'within the intervals' if within else 'OUTSIDE the intervals'}")
                ok = ok and within
    print(f"pairs ordered differently: {disagreements} of {n * (n - 1) // 2}")
    print("agreement: " + ("yes" if ok else "NO"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
