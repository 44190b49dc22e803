#!/usr/bin/env python3
"""An independent implementation of the SPRT's log-likelihood ratio (the generalised one over
pentanomial pair counts, as in docs/explanation/statistics.md), finding theta by bisection
where src/matches/sprt.rs uses argmin's Brent root finder. The unit test
`llr_matches_values_worked_out_independently` holds the values this prints:

    python3 tests/sprt/llr_reference.py
"""
import math

A = [0, 0.25, 0.5, 0.75, 1]


def score(elo):
    return 1 / (1 + 10 ** (-elo / 400))


def mle(p, s):
    d = [a - s for a in A]
    lo, hi = -1 / max(d) + 1e-12, -1 / min(d) - 1e-12
    f = lambda t: sum(pi * di / (1 + t * di) for pi, di in zip(p, d))
    for _ in range(300):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    t = (lo + hi) / 2
    return [pi / (1 + t * di) for pi, di in zip(p, d)]


def llr(counts, elo0, elo1):
    # An outcome never seen counts as 0.001 of a pair, as in fishtest.
    counts = [max(c, 1e-3) for c in counts]
    n = sum(counts)
    p = [c / n for c in counts]
    q0, q1 = mle(p, score(elo0)), mle(p, score(elo1))
    return n * sum(pi * (math.log(b) - math.log(a)) for pi, a, b in zip(p, q0, q1))


if __name__ == "__main__":
    for counts, elo0, elo1 in [
        ([10, 40, 100, 60, 20], 0, 10),
        ([5, 30, 120, 35, 10], 0, 10),
        ([0, 12, 50, 30, 8], -5, 5),
        ([100, 200, 300, 250, 150], 0, 20),
    ]:
        print(f"llr({counts}, {elo0}, {elo1}) = {llr(counts, elo0, elo1)!r}")
