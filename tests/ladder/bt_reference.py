#!/usr/bin/env python3
"""An independent Bradley-Terry fit of the ladder's model, to check src/matches/rating.rs.

The model (docs/explanation/statistics.md#the-ladder): player i scores against j with
probability 1 / (1 + 10^((r_j - r_i) / 400)); each trial is a colour-swapped pair scored
0 to 1; one player is pinned at 0 and every other one has a virtual drawn trial against it.

Where the Rust code minimises the negative log posterior with L-BFGS, this script uses
Hunter's MM algorithm (Hunter 2004, "MM algorithms for generalized Bradley-Terry models"),
and inverts the information matrix by Gauss-Jordan elimination: a different method in a
different language, so that a shared mistake is unlikely.

    python3 tests/ladder/bt_reference.py            # prints expected.tsv from trials.tsv
    python3 tests/ladder/bt_reference.py --check    # exits 1 if expected.tsv differs
    python3 tests/ladder/bt_reference.py --generate # writes a new trials.tsv (seeded)
"""
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ELO_PER_NAT = 400.0 / math.log(10.0)
Z95 = 1.959963984540054


def read_trials(path):
    lines = [l for l in open(path) if l.strip() and not l.startswith("#")]
    players, pinned = (int(x) for x in lines[0].split())
    trials = []
    for line in lines[1:]:
        a, b, s = line.split()
        trials.append((int(a), int(b), float(s)))
    return players, pinned, trials


def fit(players, pinned, trials):
    w = [[0.0] * players for _ in range(players)]
    n = [[0.0] * players for _ in range(players)]
    for a, b, s in trials:
        w[a][b] += s
        w[b][a] += 1.0 - s
        n[a][b] += 1.0
        n[b][a] += 1.0
    for i in range(players):
        if i != pinned:
            w[i][pinned] += 0.5
            w[pinned][i] += 0.5
            n[i][pinned] += 1.0
            n[pinned][i] += 1.0
    gamma = [1.0] * players
    for _ in range(200000):
        new = []
        for i in range(players):
            wins = sum(w[i])
            denom = sum(n[i][j] / (gamma[i] + gamma[j]) for j in range(players) if n[i][j] > 0)
            new.append(wins / denom if denom > 0 else gamma[i])
        scale = new[pinned]
        new = [g / scale for g in new]
        change = max(abs(math.log(x) - math.log(y)) for x, y in zip(new, gamma))
        gamma = new
        if change < 1e-13:
            break
    r = [math.log(g) for g in gamma]
    free = [i for i in range(players) if i != pinned]
    info = [[0.0] * len(free) for _ in free]
    for x, i in enumerate(free):
        for j in range(players):
            if j == i or n[i][j] == 0:
                continue
            p = 1.0 / (1.0 + math.exp(r[j] - r[i]))
            v = n[i][j] * p * (1.0 - p)
            info[x][x] += v
            if j != pinned:
                info[x][free.index(j)] -= v
    cov = invert(info)
    out = []
    for i in range(players):
        margin = 0.0 if i == pinned else Z95 * math.sqrt(cov[free.index(i)][free.index(i)]) * ELO_PER_NAT
        out.append((r[i] * ELO_PER_NAT, margin))
    return out


def invert(m):
    size = len(m)
    a = [row[:] + [1.0 if i == j else 0.0 for j in range(size)] for i, row in enumerate(m)]
    for c in range(size):
        pivot = max(range(c, size), key=lambda r: abs(a[r][c]))
        a[c], a[pivot] = a[pivot], a[c]
        p = a[c][c]
        a[c] = [x / p for x in a[c]]
        for r in range(size):
            if r != c and a[r][c] != 0.0:
                f = a[r][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [row[size:] for row in a]


def generate(path):
    rng = random.Random(20261129)
    # Eight players: the pinned anchor, a spread of strengths, one far above the rest (it
    # wins nearly everything: the prior keeps it finite) and one that played twice.
    truth = [0, -250, -80, 40, 120, 260, 900, 60]
    players, pinned = len(truth), 0
    trials = []
    for _ in range(600):
        a, b = rng.sample(range(players - 1), 2)
        trials.append((a, b))
    trials += [(7, 0), (7, 3)]
    with open(path, "w") as f:
        f.write("# players pinned, then one colour-swapped pair per line: a b a's score (0 to 1)\n")
        f.write(f"{players} {pinned}\n")
        for a, b in trials:
            p = 1.0 / (1.0 + 10 ** ((truth[b] - truth[a]) / 400.0))
            g = sum(1.0 if rng.random() < p else 0.0 for _ in range(2))
            f.write(f"{a} {b} {g / 2}\n")


def expected_text(players, pinned, trials):
    lines = ["# player elo margin95 (python3 tests/ladder/bt_reference.py > tests/ladder/expected.tsv)"]
    for i, (elo, margin) in enumerate(fit(players, pinned, trials)):
        lines.append(f"{i} {elo:.4f} {margin:.4f}")
    return "\n".join(lines) + "\n"


def main():
    trials_path = os.path.join(HERE, "trials.tsv")
    if "--generate" in sys.argv:
        generate(trials_path)
    text = expected_text(*read_trials(trials_path))
    if "--check" in sys.argv:
        stored = open(os.path.join(HERE, "expected.tsv")).read()
        if stored != text:
            sys.stderr.write("tests/ladder/expected.tsv differs from the reference fit:\n" + text)
            sys.exit(1)
        print("tests/ladder/expected.tsv matches the reference fit")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
