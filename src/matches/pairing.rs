//! The pairing engine: games between two agents A and B in colour-swapped pairs that share a
//! random opening.
//!
//! Matches, tournaments, GA fitness, the A3C trainer's evaluation and `bench` all play their
//! games here. They differ only in how they draw random numbers from their seed, and each keeps
//! its own derivation (a [`PairSeeds`]), because committed configs, exports and the figures in
//! docs/ are reproduced from exactly those numbers.
//!
//! - [`schedule`]: the games of `pairs` pairs, in the order results are collected.
//! - [`Pairing::opening`]: the start position both games of a pair share.
//! - [`Pairing::play`]: one game to the end, with its record.
//! - [`Pairing::points`]: one game's result only, stopping once it is decided.

use serde::{Deserialize, Serialize};

use super::game::{decided_south_points, play_game, random_opening, GameRecord, Seats};
use crate::agents::{Agent, GameRng};
use crate::game::{Position, Rules};

/// Where a pairing's random numbers come from.
pub trait PairSeeds {
    /// The RNG that draws pair `pair`'s random opening.
    fn opening(&self, pair: u64) -> GameRng;
    /// The tie-breaking RNGs of A and of B in the game of pair `pair` in which A moves first
    /// when `a_first`.
    fn players(&self, pair: u64, a_first: bool) -> (GameRng, GameRng);
}

/// The board, rules and openings of a set of colour-swapped pairs, and their random numbers.
#[derive(Clone, Copy, Debug)]
pub struct Pairing<S> {
    pub start: Position,
    pub rules: Rules,
    /// Random sowings before the agents take over (0: both games start from `start`).
    pub opening_plies: u32,
    pub seeds: S,
}

/// One game of a pair, seen from A.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairedGame {
    pub pair: u64,
    /// A moved first (played South).
    pub a_first: bool,
    /// A's points: 1 for a win, 0.5 for a draw, 0 for a loss.
    pub a_points: f64,
    pub record: GameRecord,
}

/// The games of `pairs` colour-swapped pairs, as (pair, A moves first), A first in the first
/// game of each pair.
pub fn schedule(pairs: u64) -> impl Iterator<Item = (u64, bool)> + Clone {
    (0..pairs).flat_map(|pair| [(pair, true), (pair, false)])
}

/// A's points from South's points.
pub(crate) fn a_points(south_points: f64, a_first: bool) -> f64 {
    if a_first {
        south_points
    } else {
        1.0 - south_points
    }
}

impl<S: PairSeeds> Pairing<S> {
    /// The start position of pair `pair`, and the opening sowings that led there.
    pub(crate) fn opening(&self, pair: u64) -> (Position, Vec<u8>) {
        if self.opening_plies == 0 {
            return (self.start, Vec::new());
        }
        random_opening(
            self.start,
            self.opening_plies,
            self.rules,
            &mut self.seeds.opening(pair),
        )
    }

    /// Plays the game of pair `pair` in which A moves first when `a_first`, to the end.
    pub(crate) fn play(
        &self,
        a: &mut dyn Agent,
        b: &mut dyn Agent,
        pair: u64,
        a_first: bool,
    ) -> PairedGame {
        let (start, opening) = self.opening(pair);
        let (mut rng_a, mut rng_b) = self.seeds.players(pair, a_first);
        let seats = Seats::ordered(a, b, &mut rng_a, &mut rng_b, a_first);
        let mut record = play_game(seats, start, self.rules);
        record.opening = opening;
        PairedGame {
            pair,
            a_first,
            a_points: a_points(record.south_points(), a_first),
            record,
        }
    }

    /// A's points in the same game as [`Pairing::play`], without a record: play stops as
    /// soon as one store holds more than half of the seeds, which is all a fitness needs.
    pub(crate) fn points(
        &self,
        a: &mut dyn Agent,
        b: &mut dyn Agent,
        pair: u64,
        a_first: bool,
    ) -> f64 {
        let (start, _) = self.opening(pair);
        let (mut rng_a, mut rng_b) = self.seeds.players(pair, a_first);
        let seats = Seats::ordered(a, b, &mut rng_a, &mut rng_b, a_first);
        let south = decided_south_points(seats, start, self.rules);
        a_points(south, a_first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::AgentSpec;
    use crate::matches::game::game_rng;

    struct Plain(u64);

    impl PairSeeds for Plain {
        fn opening(&self, pair: u64) -> GameRng {
            game_rng(self.0, &[pair])
        }
        fn players(&self, pair: u64, a_first: bool) -> (GameRng, GameRng) {
            (
                game_rng(self.0, &[pair, a_first as u64, 1]),
                game_rng(self.0, &[pair, a_first as u64, 2]),
            )
        }
    }

    #[test]
    fn both_games_of_a_pair_share_the_opening_with_colours_swapped() {
        let pairing = Pairing {
            start: Position::start(6, 4).expect("a board"),
            rules: Rules::Standard,
            opening_plies: 4,
            seeds: Plain(3),
        };
        let spec = AgentSpec::parse("minimax:2").expect("a spec");
        let mut a = spec.build(Rules::Standard).expect("builds");
        let mut b = AgentSpec::Random.build(Rules::Standard).expect("builds");
        let first = pairing.play(&mut *a, &mut *b, 7, true);
        let second = pairing.play(&mut *a, &mut *b, 7, false);
        assert_eq!(first.record.opening, second.record.opening);
        assert_eq!(first.record.opening.len(), 4);
        assert_eq!(first.record.start, second.record.start);
        assert_eq!(
            first.a_points,
            first.record.south_points(),
            "A is South when it moves first"
        );
        assert_eq!(second.a_points, 1.0 - second.record.south_points());
        for (pair, a_first) in [(7, true), (7, false), (8, true)] {
            let full = pairing.play(&mut *a, &mut *b, pair, a_first);
            assert_eq!(
                pairing.points(&mut *a, &mut *b, pair, a_first),
                full.a_points
            );
        }
    }

    #[test]
    fn the_schedule_alternates_colours_within_each_pair() {
        let games: Vec<_> = schedule(2).collect();
        assert_eq!(games, [(0, true), (0, false), (1, true), (1, false)]);
    }
}
