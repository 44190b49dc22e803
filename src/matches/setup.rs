//! What every match, tournament and SPRT test shares: the [`Setup`] of their games (board,
//! rules, openings, seed), the random numbers of a pairing drawn from it (`MatchSeeds`),
//! the limits on games and openings, and [`MatchError`].

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::game::game_rng;
use super::pairing::{PairSeeds, Pairing};
use crate::agents::{GameRng, SpecError, Stopped};
use crate::game::{GameError, Position, Rules, UserError};

/// Largest number of games one match or pairing may ask for.
pub const MAX_GAMES: u32 = 1_000_000;
/// Most random sowings before the agents take over: deeper openings are mostly decided
/// before the agents play.
pub const MAX_OPENING_PLIES: u32 = 30;

/// Board, rules and openings shared by every game of a match or tournament.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    pub pits: usize,
    pub seeds: u32,
    pub rules: Rules,
    /// The pie rule (docs/reference/rules.md). Written only when on, so reports of games without
    /// it read (and fingerprint) as before; documents without it read as off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pie: bool,
    /// Random sowings before the agents take over (the same for both games of a pair).
    pub opening_plies: u32,
    pub seed: u64,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            pits: 6,
            seeds: 4,
            rules: Rules::Standard,
            pie: false,
            opening_plies: 0,
            seed: 0,
        }
    }
}

impl Setup {
    pub(crate) fn start(&self) -> Result<Position, GameError> {
        Ok(Position::start(self.pits, self.seeds)?.with_pie(self.pie))
    }

    /// The games of one pairing: stream 0 for a match, one stream per pair of agents in a
    /// tournament.
    pub(crate) fn pairing(&self, start: Position, stream: u64) -> Pairing<MatchSeeds> {
        Pairing {
            start,
            rules: self.rules,
            opening_plies: self.opening_plies,
            seeds: MatchSeeds {
                seed: self.seed,
                stream,
            },
        }
    }
}

/// Matches' and tournaments' random numbers: a pair's opening from (seed, stream, pair), each
/// agent's tie-breaking RNG from (seed, stream, pair, A first, 1 for A or 2 for B).
#[derive(Clone, Copy, Debug)]
pub(crate) struct MatchSeeds {
    seed: u64,
    stream: u64,
}

impl PairSeeds for MatchSeeds {
    fn opening(&self, pair: u64) -> GameRng {
        game_rng(self.seed, &[self.stream, pair, 0x6f70])
    }

    fn players(&self, pair: u64, a_first: bool) -> (GameRng, GameRng) {
        (
            game_rng(self.seed, &[self.stream, pair, a_first as u64, 1]),
            game_rng(self.seed, &[self.stream, pair, a_first as u64, 2]),
        )
    }
}

/// Why a match, a tournament or an agreement set could not be played or made.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Game(#[from] GameError),
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    /// The computation's [`crate::agents::Budget`] was spent or cancelled: the games left were not played.
    #[error("stopped: {0}")]
    Stopped(#[from] Stopped),
}

/// Refused input, or a computation its budget stopped: the user asked for more than allowed.
impl UserError for MatchError {
    fn field(&self) -> Cow<'_, str> {
        match self {
            MatchError::Spec(e) => e.field(),
            MatchError::Game(e) => e.field(),
            MatchError::Invalid { field, .. } => Cow::Borrowed(field),
            MatchError::Stopped(_) => Cow::Borrowed(""),
        }
    }

    fn reason(&self) -> Cow<'_, str> {
        match self {
            MatchError::Spec(e) => e.reason(),
            MatchError::Game(e) => e.reason(),
            MatchError::Invalid { reason, .. } => Cow::Borrowed(reason),
            MatchError::Stopped(_) => Cow::Owned(self.to_string()),
        }
    }

    /// A move that needs too many positions always will (422); a deadline depends on the
    /// load too, and a cancelled computation had nobody waiting (503).
    fn http_status(&self) -> u16 {
        match self {
            MatchError::Stopped(Stopped::Nodes(_)) => 422,
            MatchError::Stopped(_) => 503,
            _ => 422,
        }
    }
}
inventory::submit! { crate::game::UserErrorKind::of::<MatchError>() }
