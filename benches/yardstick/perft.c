/* A plain C perft of Kalah(6,4), standard rules, written the obvious way: the speed yardstick
 * that the engine's guard (benches/engine-guard.sh) divides ours by. It shares no code with
 * the engine, so a regression in the engine shows as a falling ratio on any machine, noisy or
 * not. Rules as in DESIGN.md section 1: sow counter-clockwise skipping the opponent's store,
 * an extra turn when the last seed lands in one's own store, a capture when it lands in one's
 * own empty pit facing seeds, the game ends when either side's pits are all empty.
 *
 * Usage: perft DEPTH  ->  prints "COUNT SECONDS" */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define M 6
#define CELLS (2 * M + 2)

typedef struct {
    uint8_t c[CELLS];
    int side; /* 0 South, 1 North */
} Pos;

static int side_empty(const Pos *p, int side) {
    int first = side ? M + 1 : 0;
    for (int i = 0; i < M; i++)
        if (p->c[first + i]) return 0;
    return 1;
}

static int over(const Pos *p) { return side_empty(p, 0) || side_empty(p, 1); }

static void play(Pos *p, int mv) {
    int side = p->side;
    int first = side ? M + 1 : 0;
    int own_store = side ? 2 * M + 1 : M;
    int opp_store = side ? M : 2 * M + 1;
    int cell = first + mv;
    int seeds = p->c[cell];
    p->c[cell] = 0;
    while (seeds > 0) {
        cell = (cell + 1) % CELLS;
        if (cell == opp_store) continue;
        p->c[cell]++;
        seeds--;
    }
    if (cell != own_store) {
        if (cell >= first && cell < first + M && p->c[cell] == 1) {
            int opposite = 2 * M - cell;
            if (p->c[opposite] > 0) {
                p->c[own_store] += p->c[opposite] + 1;
                p->c[opposite] = 0;
                p->c[cell] = 0;
            }
        }
        p->side = 1 - side;
    }
}

static uint64_t perft(const Pos *p, int depth) {
    if (depth == 0) return 1;
    if (over(p)) return 0;
    int first = p->side ? M + 1 : 0;
    uint64_t total = 0;
    for (int mv = 0; mv < M; mv++) {
        if (!p->c[first + mv]) continue;
        if (depth == 1) {
            total++;
            continue;
        }
        Pos child = *p;
        play(&child, mv);
        total += perft(&child, depth - 1);
    }
    return total;
}

int main(int argc, char **argv) {
    int depth = argc > 1 ? atoi(argv[1]) : 11;
    Pos start = {{4, 4, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4, 0}, 0};
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t n = perft(&start, depth);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%llu %.4f\n", (unsigned long long)n,
           (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
