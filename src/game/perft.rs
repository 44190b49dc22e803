//! perft: the number of move sequences of exactly `depth` sowings (docs/reference/rules.md).
//! An extra turn is a sowing of its own; a game that ends early contributes nothing and one
//! that ends exactly at `depth` counts once.

use super::{Position, Rules};

/// Counts the move paths of exactly `depth` sowings from `pos`.
pub fn perft(pos: &Position, depth: u32, rules: Rules) -> u64 {
    match depth {
        0 => 1,
        // At the last ply the count is the number of legal moves: no need to play them.
        1 => pos.legal_moves().len() as u64,
        _ => {
            let mut total = 0;
            for mv in pos.legal_moves() {
                let mut child = *pos;
                child.play_unchecked(mv, rules);
                total += perft(&child, depth - 1, rules);
            }
            total
        }
    }
}

/// perft split by first move, as `(move, count)` pairs: handy to find where two move
/// generators disagree.
pub(crate) fn perft_divide(pos: &Position, depth: u32, rules: Rules) -> Vec<(usize, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .into_iter()
        .map(|mv| {
            let mut child = *pos;
            child.play_unchecked(mv, rules);
            (mv, perft(&child, depth - 1, rules))
        })
        .collect()
}
