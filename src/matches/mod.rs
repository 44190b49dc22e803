//! Games, matches and tournaments between agents, and the statistics that summarise them.
//! Knows agents and the game; nothing of the GA, HTTP or storage.

pub mod agreement;
pub(crate) mod game;
pub mod mankalah;
pub(crate) mod pairing;
pub(crate) mod presets;
pub mod rating;
pub(crate) mod setup;
pub mod sprt;
pub(crate) mod stats;
pub(crate) mod tournament;

pub use game::{derive_seed, GameRecord, Ply};
pub use game::{game_rng, play_game, random_opening, Seats};
pub use pairing::{schedule, PairSeeds, PairedGame, Pairing};
pub use setup::Setup;
pub use setup::{MatchError, MAX_GAMES, MAX_OPENING_PLIES};
pub use sprt::{play_sprt, play_sprt_within};
pub use stats::{wilson, ScoreEstimate, Tally};
pub use tournament::{play_match, play_tournament, TournamentConfig};
pub(crate) use tournament::{
    play_match_within, play_tournament_counted, tournament_games, MatchReport, ReferenceTable,
    TournamentReport,
};
