#!/usr/bin/env python3
"""An independent reference for Kalah with the pie rule (shared/DESIGN.md sections 1, 2, 9).

Pure Python and written from the rules alone, sharing no code or representation with the
engine: the board is kept by *seat* as the rules describe it (a swap exchanges the players'
seats and leaves the board alone), where the engine relabels the board instead. Writes
tests/pie/vectors.tsv, which tests/pie.rs checks the engine against.

    python3 tests/pie/reference.py            # rewrites tests/pie/vectors.tsv

State: (board, seat to move, phase). board is a tuple in sowing order (South pits 0..m-1,
South store m, North pits m+1..2m, North store 2m+1); seat 0 is South, 1 is North. phase:
0 normal play, 1 South's first move (no extra turn), 2 North may swap.
"""

import os
import sys
import time

SWAP = "SWAP"


def start(m, n, pie=True):
    board = [n] * m + [0] + [n] * m + [0]
    return (tuple(board), 0, 1 if pie else 0)


def parse_kpn(text):
    f = text.split("/")
    south = [int(x) for x in f[0].split(",")]
    north = [int(x) for x in f[2].split(",")]
    board = tuple(south + [int(f[1])] + north + [int(f[3])])
    seat = 0 if f[4] == "S" else 1
    phase = 2 if len(f) == 6 and f[5] == "P" else 0
    return (board, seat, phase)


def over(board):
    m = (len(board) - 2) // 2
    return sum(board[:m]) == 0 or sum(board[m + 1:2 * m + 1]) == 0


def moves(state):
    board, seat, phase = state
    if over(board):
        return []
    m = (len(board) - 2) // 2
    first = 0 if seat == 0 else m + 1
    result = [k + 1 for k in range(m) if board[first + k] > 0]
    if phase == 2:
        result.append(SWAP)
    return result


def play(state, mv, empty_capture):
    """Returns (next state, whether the same player moves again)."""
    board, seat, phase = state
    if mv == SWAP:
        # Seats change hands; the first mover, now North, moves next: the seat to move is
        # still North but the player is not.
        return (board, 1, 0), False
    m = (len(board) - 2) // 2
    b = list(board)
    first = 0 if seat == 0 else m + 1
    own_store = m if seat == 0 else 2 * m + 1
    their_store = 2 * m + 1 if seat == 0 else m
    pos = first + mv - 1
    seeds = b[pos]
    b[pos] = 0
    while seeds:
        pos = (pos + 1) % (2 * m + 2)
        if pos == their_store:
            continue
        b[pos] += 1
        seeds -= 1
    again = pos == own_store
    if not again and first <= pos < first + m and b[pos] == 1:
        opposite = 2 * m - pos
        if b[opposite] > 0 or empty_capture:
            b[own_store] += b[opposite] + 1
            b[opposite] = 0
            b[pos] = 0
    if phase == 1:
        again = False
    if sum(b[:m]) == 0 or sum(b[m + 1:2 * m + 1]) == 0:
        b[m] += sum(b[:m])
        b[2 * m + 1] += sum(b[m + 1:2 * m + 1])
        for i in list(range(m)) + list(range(m + 1, 2 * m + 1)):
            b[i] = 0
    next_seat = seat if again else 1 - seat
    next_phase = 2 if phase == 1 and not over(b) else 0
    return (tuple(b), next_seat, next_phase), again


def perft(state, depth, empty_capture):
    if depth == 0:
        return 1
    ms = moves(state)
    if depth == 1:
        return len(ms)
    return sum(perft(play(state, mv, empty_capture)[0], depth - 1, empty_capture) for mv in ms)


def value(state, empty_capture, memo):
    """Final store of the player to move minus the other's, both playing perfectly."""
    key = state
    if key in memo:
        return memo[key]
    board, seat, phase = state
    m = (len(board) - 2) // 2
    if over(board):
        mine, theirs = (m, 2 * m + 1) if seat == 0 else (2 * m + 1, m)
        result = board[mine] - board[theirs]
    else:
        best = None
        for mv in moves(state):
            child, again = play(state, mv, empty_capture)
            v = value(child, empty_capture, memo)
            v = v if again else -v
            best = v if best is None else max(best, v)
        result = best
    memo[key] = result
    return result


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors.tsv")
    rows = []
    # (rules, setup, perft depth, solve?)
    cases = [
        ("standard", "7,7", 9, False),
        ("empty-capture", "7,7", 9, False),
        ("standard", "6,4", 8, False),
        ("empty-capture", "6,4", 8, False),
        ("standard", "0,8,8,8,8,8,8/1/7,7,7,7,7,7,7/0/N/P", 7, False),
        ("standard", "7,7,7,7,7,7,0/1/8,8,8,8,8,8,7/0/N/P", 7, False),
    ]
    for m, n in [(2, 2), (3, 2), (3, 3), (4, 2), (3, 4), (4, 3)]:
        for rules in ("standard", "empty-capture"):
            cases.append((rules, f"{m},{n}", 8, True))
    cases.append(("standard", "0,4,4/1/3,3,3/0/N/P", 8, True))
    cases.append(("empty-capture", "3,3,0/1/4,4,3/0/N/P", 8, True))
    for rules, setup, depth, solve in cases:
        if setup.count("/") == 0:
            m, n = (int(x) for x in setup.split(","))
            state = start(m, n)
        else:
            state = parse_kpn(setup)
        ec = rules == "empty-capture"
        t = time.time()
        counts = [perft(state, d, ec) for d in range(1, depth + 1)]
        v = value(state, ec, {}) if solve else None
        rows.append("\t".join([
            rules,
            setup,
            ",".join(str(c) for c in counts) if counts else "-",
            "-" if v is None else str(v),
        ]))
        print(rows[-1], f"({time.time() - t:.1f}s)", file=sys.stderr)
    with open(out, "w") as f:
        f.write(
            "# Pie-rule vectors from tests/pie/reference.py (an independent implementation).\n"
            "# Columns: rules <TAB> setup: m,n (the start of Kalah(m,n) with the pie rule) or KPN\n"
            "# <TAB> perft counts from depth 1 (a swap is one ply), or - <TAB> exact value for the\n"
            "# side to move (its final store minus the other's under perfect play), or -.\n"
        )
        for row in rows:
            f.write(row + "\n")


if __name__ == "__main__":
    main()
