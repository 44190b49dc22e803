use rand::RngExt;

use super::{Agent, Decision, GameRng};
use crate::game::Position;

/// Uniform over the legal moves (Hunter 5.1).
#[derive(Clone, Debug, Default)]
pub struct RandomAgent;

impl Agent for RandomAgent {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        let moves = pos.legal_moves().to_vec();
        Decision {
            mv: moves[rng.random_range(0..moves.len())],
            nodes: 0,
            playouts: 0,
            value: None,
        }
    }
}
