//! The cost model: rough processor time of a game side by agent kind, from which run, match
//! and tournament estimates (and the limits that refuse what would take weeks) are made.
//! Measured on the 2-core machine; rough on purpose.

use super::AgentSpec;

/// Rough processor time, in milliseconds, that one side of a Kalah(6,4) game costs when
/// played by `spec`: what run cost estimates count for opponents and panel agents. Measured
/// with `kalah-tuner play --threads 1` on the 2-core machine (2026-11-25): `mcts:4000`
/// 155 ms a game against random (0.04 ms an iteration), `perfect` 21 ms (its solves grow
/// about fourfold with every two more `max_seeds`), `a3c` 0.2 ms, greedy, random and
/// `pekar` well under 0.1 ms; searches as [`search_side_ms`]. A time budget is counted as
/// spent in full on each of about 18 moves. Rough on purpose: it only has to tell a run of
/// hours from one of weeks.
pub fn game_side_ms(spec: &AgentSpec) -> f64 {
    use AgentSpec as A;
    const MOVES_A_SIDE: f64 = 18.0;
    match spec {
        A::Random | A::Greedy { .. } | A::Pekar { .. } => 0.05,
        A::A3c { .. } => 0.2,
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
            (Some(ms), _) => *ms as f64 * MOVES_A_SIDE,
            // About 30 million positions a second on one core, every move spending its all.
            (None, Some(n)) => {
                (*n as f64 / 30_000.0 * MOVES_A_SIDE).min(search_side_ms(depth_of(*depth)))
            }
            (None, None) => search_side_ms(depth_of(*depth)),
        },
        A::PekarMinimax { depth, .. } => search_side_ms(depth_of(*depth)),
        // A capped solve is counted as spent in full on every move, at about 5 million
        // positions a second.
        A::Perfect {
            max_seeds,
            fallback_depth,
            solve_nodes,
            ..
        } => {
            21.0 * 4f64.powf((*max_seeds as f64 - 22.0) / 2.0)
                + search_side_ms(*fallback_depth)
                + *solve_nodes as f64 / 5_000.0 * MOVES_A_SIDE
        }
        A::Mcts {
            iterations,
            time_ms,
            ..
        } => match time_ms {
            Some(ms) => *ms as f64 * MOVES_A_SIDE,
            None => *iterations as f64 * 0.04,
        },
    }
}

/// Estimated processor time of `games` games between `a` and `b` on a board of `pits` pits
/// and `seeds` seeds each, in core-minutes ([`game_side_ms`] for each side, scaled by the
/// board's seeds as run estimates are).
pub fn games_core_minutes(
    a: &AgentSpec,
    b: &AgentSpec,
    games: u64,
    pits: usize,
    seeds: u32,
) -> f64 {
    let board = (pits as f64 * seeds as f64 / 24.0).max(1.0);
    games as f64 * (game_side_ms(a) + game_side_ms(b)) * board / 60_000.0
}

/// One side of a game of an alpha-beta search with a weighted evaluation at `depth`: about
/// 1.75 ms at depth 4 (a whole game of two such players 3.5 ms), three times more a ply.
pub fn search_side_ms(depth: u32) -> f64 {
    1.75 * 3f64.powi(depth as i32 - 4)
}

fn depth_of(depth: crate::search::Depth) -> u32 {
    match depth {
        crate::search::Depth::Fixed(d) => d,
        crate::search::Depth::Adaptive => crate::search::depth::MAX_ADAPTIVE_DEPTH,
    }
}
