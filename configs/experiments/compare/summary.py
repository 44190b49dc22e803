"""Prints the tuner comparison table (markdown) from the files run.sh wrote in OUT.

Score: points per game of the champion over all its games against the panel (1,000 against
each player), with a 95% normal interval from the per-game variance of those points."""
import json
import math
import re
import sys
from pathlib import Path

out = Path(sys.argv[1] if len(sys.argv) > 1 else "compare-out")
panel = ["minimax:4", "heuristic:hunter10:published:4", "heuristic:divilly6:published:4",
         "heuristic:abrams3:published:4"]
short = {"minimax:4": "minimax", "heuristic:hunter10:published:4": "hunter10",
         "heuristic:divilly6:published:4": "divilly6", "heuristic:abrams3:published:4": "abrams3"}


def used(tuner, log):
    """What the tuner learnt from, and the processor time it took, from its log."""
    cpu = re.search(r"([\d.]+) s of processor time", log)
    cpu = float(cpu.group(1)) if cpu else float("nan")
    if tuner in ("ga", "cmaes", "spsa", "de"):
        doc = json.loads((out / f"{name}.json").read_text())
        games = sum(g["games_played"] for g in doc["history"])
        return f"{games:,} games, {len(doc['history'])} generations", cpu
    if tuner == "td-leaf":
        m = re.search(r"(\d+) games \((\d+) plies\)", log)
        return f"{int(m.group(1)):,} self-play games", cpu
    m = re.search(r"(\d+) rounds on (\d+) positions \((\d+) labelled exactly", log)
    return f"{int(m.group(2)):,} positions ({int(m.group(3)):,} exact), {m.group(1)} rounds", cpu


print("| features | tuner | score vs panel [95%] | " + " | ".join(short[p] for p in panel)
      + " | learnt from | CPU s |")
print("|---|---|---|" + "---|" * len(panel) + "---|---|")
for features in ["hunter10", "beat13"]:
    for tuner in ["ga", "cmaes", "spsa", "de", "td-leaf", "texel"]:
        name = f"{tuner}-{features}"
        if not (out / f"{name}.log").exists():
            continue
        cells, points, squares, games = [], 0.0, 0.0, 0
        for p in panel:
            path = out / f"{name}.vs.{p}.json"
            if not path.exists():
                cells.append("-")
                continue
            r = json.loads(path.read_text())
            t = r["a_total"]
            n = t["wins"] + t["draws"] + t["losses"]
            points += t["wins"] + 0.5 * t["draws"]
            squares += t["wins"] + 0.25 * t["draws"]
            games += n
            cells.append(f"{100 * r['a_score']['score']:.1f}")
        if games:
            mean = points / games
            se = math.sqrt(max(squares / games - mean * mean, 0.0) / games)
            score = f"{100 * mean:.1f}% [{100 * (mean - 1.96 * se):.1f}, {100 * (mean + 1.96 * se):.1f}]"
        else:
            score = "-"
        what, cpu = used(tuner, (out / f"{name}.log").read_text())
        print(f"| {features} | {tuner} | {score} | " + " | ".join(cells) + f" | {what} | {cpu:.0f} |")
