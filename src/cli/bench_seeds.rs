//! The random numbers of `bench`'s self-play games, shared by its speed and cost tables.

use crate::agents::{rng_from_seed, GameRng};
use crate::matches::{game_rng, PairSeeds};

/// The self-play games' random numbers: game g's opening from seed g, its players' from
/// (g, 1) and (g, 2). Every game is A (South) against an identical B, so colours never swap.
pub(crate) struct BenchSeeds;

impl PairSeeds for BenchSeeds {
    fn opening(&self, game: u64) -> GameRng {
        rng_from_seed(game)
    }

    fn players(&self, game: u64, _a_first: bool) -> (GameRng, GameRng) {
        (game_rng(game, &[1]), game_rng(game, &[2]))
    }
}
