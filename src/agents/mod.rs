//! Agents: anything that picks a move in a position. Knows the game and the searches,
//! nothing of matches, the GA or storage.
//!
//! An agent is described by an [`AgentSpec`] (JSON such as `{"kind":"minimax","depth":4}` or
//! a short string such as `minimax:4`), built for a rule set into a `Box<dyn Agent>`, and
//! asked for moves with a seeded [`GameRng`] that breaks ties between equally good moves.

pub mod a3c;
mod greedy;
pub mod mcts;
mod pekar;
mod perfect;
mod random;
mod search_agent;
pub mod spec;

use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::game::Position;

pub use a3c::A3cAgent;
pub use greedy::Greedy;
pub use mcts::Mcts;
pub use pekar::{Pekar, PekarMinimax};
pub use perfect::Perfect;
pub use random::RandomAgent;
pub use search_agent::SearchAgent;
pub use spec::{AgentSpec, SpecError};

/// The random number generator every agent and game uses: small, fast and the same on every
/// platform and version, so seeded runs stay reproducible.
pub type GameRng = rand_pcg::Pcg64Mcg;

/// A seeded [`GameRng`].
pub fn rng_from_seed(seed: u64) -> GameRng {
    use rand::SeedableRng;
    GameRng::seed_from_u64(seed)
}

/// What an agent decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// The move, 1..=m from the mover's side.
    pub mv: usize,
    /// Positions searched to decide (0 for agents that do not search).
    pub nodes: u64,
    /// The agent's own value of the move, where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<i64>,
}

/// Something that plays Kalah.
pub trait Agent: Send {
    /// Picks a legal move in `pos`, which must not be over.
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision;
}

/// How to choose among equally good moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ties {
    /// Uniformly at random, with the agent's seeded RNG.
    #[default]
    Random,
    /// The lowest move number.
    First,
}

impl Ties {
    /// Picks one of `moves` (non-empty, sorted ascending).
    pub fn pick(self, moves: &[usize], rng: &mut GameRng) -> usize {
        debug_assert!(!moves.is_empty());
        match (self, moves.len()) {
            (_, 1) | (Ties::First, _) => moves[0],
            (Ties::Random, n) => moves[rng.random_range(0..n)],
        }
    }

    pub fn is_first(&self) -> bool {
        *self == Ties::First
    }
}
