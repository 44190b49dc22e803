#!/usr/bin/env python3
"""Draws a GA run's benchmark-panel curve from evolve's records (--records FILE.jsonl): the
measured leader's panel score with its 95% interval, and the champion's, by generation.

    python3 benches/panel-curve.py RECORDS.jsonl OUT.png [TITLE]

Needs matplotlib (pip install matplotlib). The README's curve of the main job is drawn so.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    records = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    title = sys.argv[3] if len(sys.argv) > 3 else "benchmark panel"
    gens, score, low, high, champ = [], [], [], [], []
    for r in records:
        bench = r.get("benchmark")
        if not bench or not bench.get("leaders"):
            continue
        overall = bench["leaders"][0]["overall"]
        gens.append(r["generation"])
        score.append(100 * overall["score"])
        low.append(100 * overall["ci_low"])
        high.append(100 * overall["ci_high"])
        champ.append(100 * r["champion"]["panel"]["overall"]["score"])
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=100)
    fig.patch.set_facecolor("white")
    ax.fill_between(gens, low, high, color="#1f77b4", alpha=0.18, label="leader, 95% interval")
    ax.plot(gens, score, "o-", color="#1f77b4", label="measured leader")
    ax.step(gens, champ, where="post", color="#d62728", linestyle="--", label="champion")
    ax.axhline(50, color="#555555", linewidth=0.8)
    ax.set_xlabel("generation")
    ax.set_ylabel("score against the panel (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(sys.argv[2])


if __name__ == "__main__":
    main()
