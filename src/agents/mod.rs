//! Agents: anything that picks a move in a position. Knows the game and the searches,
//! nothing of matches, the GA or storage.
//!
//! An agent is described by an [`AgentSpec`] (JSON such as `{"kind":"minimax","depth":4}` or
//! a short string such as `minimax:4`), built for a rule set into a `Box<dyn Agent>`, and
//! asked for moves with a seeded [`GameRng`] that breaks ties between equally good moves.

pub mod a3c;
pub(crate) mod catalogue;
pub(crate) mod cost;
pub mod endgame;
pub mod files;
mod greedy;
pub(crate) mod limits;
pub(crate) mod mcts;
mod pekar;
mod perfect;
mod random;
mod search_agent;
pub mod spec;

use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::game::Position;

pub use crate::search::{Budget, Stopped};
pub use a3c::A3cAgent;
pub use endgame::EndgameTable;
pub use files::{FileAccess, FileRefused};
pub(crate) use greedy::Greedy;
pub use limits::{Limits, Profile};
pub use mcts::Mcts;
pub use pekar::{Pekar, PekarMinimax};
pub(crate) use perfect::Perfect;
pub use random::RandomAgent;
pub(crate) use search_agent::SearchAgent;
pub use spec::AgentSpec;
pub(crate) use spec::SpecError;

/// The random number generator every agent and game uses: small, fast and the same on every
/// platform and version, so seeded runs stay reproducible.
pub type GameRng = rand_pcg::Pcg64Mcg;

/// A seeded [`GameRng`].
pub fn rng_from_seed(seed: u64) -> GameRng {
    use rand::SeedableRng;
    GameRng::seed_from_u64(seed)
}

/// What an agent decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The move, 1..=m from the mover's side.
    pub mv: usize,
    /// Positions searched to decide (0 for agents that do not search; for MCTS the nodes of
    /// its tree).
    pub nodes: u64,
    /// Playouts run to decide (MCTS; 0 for every other agent).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub playouts: u64,
    /// The agent's own value of the move, where it has one, in that agent's unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<MoveValue>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An agent's own value of the move it chose. Each kind of agent measures in its own unit, so
/// the unit travels with the number (JSON: `{"unit": "search_score", "value": 2000000}`): a
/// search score and a network's estimate must never be compared or averaged.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "unit", content = "value", rename_all = "snake_case")]
pub enum MoveValue {
    /// An alpha-beta score from the mover's side, in fixed point: `crate::eval::SCALE` per
    /// seed of store difference (or per unit of a weighted evaluation); a finished game lies
    /// beyond `crate::eval::WIN` by its final margin (`crate::eval::terminal_score`).
    SearchScore(i64),
    /// Pekar et al.'s cost function (4) of the move: store difference gained, in seeds.
    PekarCost(i64),
    /// The exact final margin in seeds with perfect play from here (the solver).
    ExactMargin(i32),
    /// Seeds the move puts into the store this turn, extra turns chained (`greedy`).
    SeedsThisTurn(u32),
    /// The value network's estimate of the game's result for the mover, from -1 (a sure
    /// loss) to 1 (a sure win) (`a3c`).
    NetworkEstimate(f32),
    /// The mean result of the playouts through the chosen move for the mover, from 0 (all
    /// lost) through 0.5 (even) to 1 (all won) (`mcts`).
    PlayoutScore(f32),
}

impl MoveValue {
    /// The value in words for people: "wins by 6", "+2.5 seeds", "62% of playouts".
    pub fn describe(&self) -> String {
        let margin = |m: i64| match m.signum() {
            1 => format!("wins by {m}"),
            -1 => format!("loses by {}", -m),
            _ => "draws".to_string(),
        };
        match *self {
            MoveValue::SearchScore(score) if crate::eval::is_decisive(score) => {
                margin(crate::eval::terminal_margin(score).unwrap_or(0))
            }
            MoveValue::SearchScore(0) => "even".to_string(),
            MoveValue::SearchScore(score) => {
                format!("{:+.2} (search score)", score as f64 / crate::eval::SCALE)
            }
            MoveValue::PekarCost(cost) => format!("{cost:+} seeds (Pekar's cost)"),
            MoveValue::ExactMargin(m) => margin(m as i64),
            MoveValue::SeedsThisTurn(1) => "1 seed into the store".to_string(),
            MoveValue::SeedsThisTurn(n) => format!("{n} seeds into the store"),
            MoveValue::NetworkEstimate(v) => format!("{v:+.2} (network's estimate)"),
            MoveValue::PlayoutScore(p) => format!("{:.0}% of playouts", 100.0 * p),
        }
    }
}

/// The pie rule's swap decision of the agents that do not search (`greedy`, `pekar`): swap
/// when South's first move left South more seeds in its store than North, the one measure
/// those agents read. `None` when no swap is on offer.
pub(crate) fn store_rule_swap(pos: &Position) -> Option<bool> {
    use crate::game::Side;
    pos.swap_available()
        .then(|| pos.store(Side::South) > pos.store(Side::North))
}

/// The [`Decision`] of an agent that settles the swap offer by a rule: [`crate::game::SWAP`]
/// or, when it keeps its seat, the move `otherwise` gives for the position without the offer.
pub(crate) fn decide_swap(
    pos: &Position,
    swap: bool,
    otherwise: impl FnOnce(&Position) -> Decision,
) -> Decision {
    if swap {
        Decision {
            mv: crate::game::SWAP,
            nodes: 0,
            playouts: 0,
            value: None,
        }
    } else {
        // The same board and side to move without the offer: the agent's own pit moves.
        otherwise(&pos.with_side_to_move(pos.side_to_move()))
    }
}

/// Something that plays Kalah.
pub trait Agent: Send {
    /// Picks a legal move in `pos`, which must not be over.
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision;

    /// Bounds every later search of this agent by `budget` ([`Budget`]): a spent budget
    /// makes the agent answer at once with some legal move, for its owner to discard. Agents
    /// whose moves take microseconds need not look at it.
    fn set_budget(&mut self, _budget: &Budget) {}
}

/// How to choose among equally good moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
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
    pub(crate) fn pick(self, moves: &[usize], rng: &mut GameRng) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_values_carry_their_unit_in_json_and_in_words() {
        let value = MoveValue::SearchScore(crate::eval::terminal_score(6));
        assert_eq!(value.describe(), "wins by 6");
        assert_eq!(
            MoveValue::SearchScore(crate::eval::terminal_score(-4)).describe(),
            "loses by 4"
        );
        assert_eq!(
            MoveValue::SearchScore(2_500_000).describe(),
            "+2.50 (search score)"
        );
        assert_eq!(MoveValue::ExactMargin(0).describe(), "draws");
        assert_eq!(MoveValue::PlayoutScore(0.625).describe(), "62% of playouts");
        let json = serde_json::to_value(MoveValue::SeedsThisTurn(3)).expect("serialises");
        assert_eq!(
            json,
            serde_json::json!({"unit": "seeds_this_turn", "value": 3})
        );
        let back: MoveValue = serde_json::from_value(json).expect("deserialises");
        assert_eq!(back, MoveValue::SeedsThisTurn(3));
    }
}
