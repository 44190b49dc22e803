//! The cost model: rough processor time of a game side by agent kind and board, from which
//! run, match and tournament estimates (and the limits that refuse what would take weeks)
//! are made. Rough on purpose: it has to tell a run of minutes from one of hours and one of
//! weeks, and it is checked against measured runs within a factor of 2
//! (docs/performance.md#cost-estimates).

use super::AgentSpec;

/// Moves one side makes in a Kalah(6,4) game, about.
const MOVES_A_SIDE: f64 = 18.0;

/// How much longer than Kalah(6,4) a game on `pits` x `seeds` lasts, for agents whose cost a
/// move does not depend on the board (a game has about as many moves as seeds).
pub fn board_scale(pits: usize, seeds: u32) -> f64 {
    (pits as f64 * seeds as f64 / 24.0).max(1.0)
}

/// One side of a game of an alpha-beta search with a weighted evaluation at `depth` on
/// `pits` x `seeds`, in milliseconds: moves grow with the seeds, and every ply multiplies a
/// search's positions by about 0.45 x pits (the effective branching of alpha-beta with
/// Kalah's extra turns). Fitted to games on one core of the 2-core machine (2026-11-26,
/// `kalah-tuner play --threads 1`, 40 to 200 games): a side on Kalah(6,4) 0.4 ms at depth 4,
/// 2.2 ms at 6, 5.9 ms at 7, 12 ms at 8; Kalah(7,7) at depth 6 20 ms; Kalah(12,8) at depth 4
/// 24 ms and at depth 6 650 ms. The model gives 0.32, 2.3, 6.3, 17, 12, 17 and 580 ms, and
/// whole runs within 2x (docs/performance.md#cost-estimates).
pub fn search_side_ms(depth: u32, pits: usize, seeds: u32) -> f64 {
    let branching = 0.45 * pits as f64;
    2.5e-4 * pits as f64 * seeds as f64 * branching.powi(depth as i32)
}

/// What a TD learner spends on a self-play game besides its searches (features, gradients and
/// traces of every position), in milliseconds on Kalah(6,4): measured with `kalah-tuner learn`
/// (2026-11-26: 8,000 games at depth 2 took 5.2 s, 1.6 s of it searches and the panel).
pub const TD_GAME_OVERHEAD_MS: f64 = 0.35;

/// Rough processor time, in milliseconds, that one side of a game on `pits` x `seeds` costs
/// when played by `spec`: what estimates count for opponents and panel agents. Measured with
/// `kalah-tuner play --threads 1` on Kalah(6,4) (2026-11-25): `mcts:4000` 155 ms a game
/// against random (0.04 ms an iteration), `perfect` 21 ms (its solves grow about fourfold with
/// every two more `max_seeds`), `a3c` 0.2 ms, greedy, random and `pekar` well under 0.1 ms,
/// scaled to larger boards by their seeds ([`board_scale`]); searches as [`search_side_ms`].
/// A time budget is counted as spent in full on every move.
pub fn game_side_ms(spec: &AgentSpec, pits: usize, seeds: u32) -> f64 {
    use AgentSpec as A;
    let scale = board_scale(pits, seeds);
    let search = |depth| search_side_ms(depth, pits, seeds);
    match spec {
        A::Random | A::Greedy { .. } | A::Pekar { .. } => 0.05 * scale,
        A::A3c { .. } => 0.2 * scale,
        A::Minimax {
            depth,
            time_ms,
            nodes,
            ..
        }
        | A::Heuristic {
            depth,
            time_ms,
            nodes,
            ..
        } => match (time_ms, nodes) {
            (Some(ms), _) => *ms as f64 * MOVES_A_SIDE * scale,
            // About 30 million positions a second on one core, every move spending its all.
            (None, Some(n)) => {
                (*n as f64 / 30_000.0 * MOVES_A_SIDE * scale).min(search(depth_of(*depth)))
            }
            (None, None) => search(depth_of(*depth)),
        },
        A::PekarMinimax { depth, .. } => search(depth_of(*depth)),
        // A capped solve is counted as spent in full on every move, at about 5 million
        // positions a second.
        A::Perfect {
            max_seeds,
            fallback_depth,
            solve_nodes,
            ..
        } => {
            (21.0 * 4f64.powf((*max_seeds as f64 - 22.0) / 2.0)
                + *solve_nodes as f64 / 5_000.0 * MOVES_A_SIDE)
                * scale
                + search(*fallback_depth)
        }
        A::Mcts {
            iterations,
            time_ms,
            ..
        } => match time_ms {
            Some(ms) => *ms as f64 * MOVES_A_SIDE * scale,
            None => *iterations as f64 * 0.04 * scale,
        },
    }
}

/// Estimated processor time of `games` games between `a` and `b` on a board of `pits` pits
/// and `seeds` seeds each, in core-minutes ([`game_side_ms`] for each side).
pub fn games_core_minutes(
    a: &AgentSpec,
    b: &AgentSpec,
    games: u64,
    pits: usize,
    seeds: u32,
) -> f64 {
    games as f64 * (game_side_ms(a, pits, seeds) + game_side_ms(b, pits, seeds)) / 60_000.0
}

fn depth_of(depth: crate::search::Depth) -> u32 {
    match depth {
        crate::search::Depth::Fixed(d) => d,
        crate::search::Depth::Adaptive => crate::search::depth::MAX_ADAPTIVE_DEPTH,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn larger_boards_and_deeper_searches_cost_more() {
        let m = |d| AgentSpec::parse(&format!("minimax:{d}")).expect("a spec");
        assert!(game_side_ms(&m(6), 6, 4) > 3.0 * game_side_ms(&m(4), 6, 4));
        assert!(game_side_ms(&m(4), 12, 8) > 20.0 * game_side_ms(&m(4), 6, 4));
        let random = AgentSpec::parse("random").expect("a spec");
        assert_eq!(
            game_side_ms(&random, 12, 4),
            2.0 * game_side_ms(&random, 6, 4)
        );
    }
}
