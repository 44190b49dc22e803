//! One game between two agents, and the random openings that pairs of games share.

use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::agents::{rng_from_seed, Agent, Decision, GameRng};
use crate::game::{MoveOutcome, Position, Rules, Side};

/// One sowing of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ply {
    pub side: Side,
    pub mv: u8,
    pub extra_turn: bool,
    pub captured: u16,
}

/// The result of one finished game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    /// The position the agents started from (after the opening, if any).
    pub start: String,
    /// Random plies played before the agents took over.
    pub opening: Vec<u8>,
    /// The agents' sowings, in order.
    pub plies: Vec<Ply>,
    pub south_store: u32,
    pub north_store: u32,
    pub south_nodes: u64,
    pub north_nodes: u64,
}

impl GameRecord {
    /// 1 for a South win, 0.5 for a draw, 0 for a loss.
    pub(crate) fn south_points(&self) -> f64 {
        points(self.south_store, self.north_store)
    }

    pub fn winner(&self) -> Option<Side> {
        match self.south_store.cmp(&self.north_store) {
            std::cmp::Ordering::Greater => Some(Side::South),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Less => Some(Side::North),
        }
    }
}

/// Points (win 1, draw 0.5, loss 0) for final stores `mine` and `theirs`.
pub(crate) fn points(mine: u32, theirs: u32) -> f64 {
    match mine.cmp(&theirs) {
        std::cmp::Ordering::Greater => 1.0,
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Less => 0.0,
    }
}

/// The two sides of a game: each agent with its own RNG, so that one agent's choices never
/// shift the other's random numbers.
pub struct Seats<'a> {
    pub south: &'a mut dyn Agent,
    pub north: &'a mut dyn Agent,
    pub south_rng: &'a mut GameRng,
    pub north_rng: &'a mut GameRng,
}

impl<'a> Seats<'a> {
    pub fn new(
        south: &'a mut dyn Agent,
        north: &'a mut dyn Agent,
        south_rng: &'a mut GameRng,
        north_rng: &'a mut GameRng,
    ) -> Seats<'a> {
        Seats {
            south,
            north,
            south_rng,
            north_rng,
        }
    }

    /// A and B seated for a game in which A moves first (plays South) when `a_first`.
    pub(crate) fn ordered(
        a: &'a mut dyn Agent,
        b: &'a mut dyn Agent,
        rng_a: &'a mut GameRng,
        rng_b: &'a mut GameRng,
        a_first: bool,
    ) -> Seats<'a> {
        if a_first {
            Seats::new(a, b, rng_a, rng_b)
        } else {
            Seats::new(b, a, rng_b, rng_a)
        }
    }
}

/// The game loop every caller shares: asks the side to move for a move, plays it and reports
/// it to `on_ply`, until the game is over or `stop` says enough. Returns the last position.
pub(crate) fn play_until(
    seats: Seats<'_>,
    start: Position,
    rules: Rules,
    mut stop: impl FnMut(&Position) -> bool,
    mut on_ply: impl FnMut(Side, &Decision, MoveOutcome),
) -> Position {
    let mut pos = start;
    while !pos.is_game_over() && !stop(&pos) {
        let side = pos.side_to_move();
        let decision = match side {
            Side::South => seats.south.choose(&pos, seats.south_rng),
            Side::North => seats.north.choose(&pos, seats.north_rng),
        };
        // An agent that returns an illegal move is a bug; playing on would corrupt the result.
        let outcome = pos
            .play(decision.mv, rules)
            .unwrap_or_else(|e| panic!("agent chose an illegal move in {pos}: {e}"));
        on_ply(side, &decision, outcome);
    }
    pos
}

/// Plays a game from `start` to the end and records it.
pub fn play_game(seats: Seats<'_>, start: Position, rules: Rules) -> GameRecord {
    let mut plies = Vec::new();
    let (mut south_nodes, mut north_nodes) = (0, 0);
    let end = play_until(
        seats,
        start,
        rules,
        |_| false,
        |side, decision, outcome| {
            match side {
                Side::South => south_nodes += decision.nodes,
                Side::North => north_nodes += decision.nodes,
            }
            plies.push(Ply {
                side,
                mv: decision.mv as u8,
                extra_turn: outcome.extra_turn,
                captured: outcome.captured,
            });
        },
    );
    let (south_store, north_store) = end.final_stores();
    GameRecord {
        start: start.to_string(),
        opening: Vec::new(),
        plies,
        south_store,
        north_store,
        south_nodes,
        north_nodes,
    }
}

/// Whether one store holds more than half of a game's `total` seeds: who wins is then known.
pub(crate) fn is_decided(pos: &Position, total: u32) -> bool {
    2 * pos.store(Side::South) > total || 2 * pos.store(Side::North) > total
}

/// South's points (1, 0.5 or 0) in a game played from `start`, stopping as soon as one store
/// holds more than half of the seeds: stores only grow, so the winner is then known and the
/// rest of the game cannot change the points. The moves played up to there are the same as in
/// [`play_game`] with the same agents and RNGs.
pub(crate) fn decided_south_points(seats: Seats<'_>, start: Position, rules: Rules) -> f64 {
    let total = start.total_seeds();
    let end = play_until(
        seats,
        start,
        rules,
        |pos| is_decided(pos, total),
        |_, _, _| {},
    );
    // A decided game's stores already say who wins; a finished one's final stores do.
    let (s, n) = end.final_stores();
    points(s, n)
}

/// A random opening of `plies` sowings from `start` that leaves a game still going; both games
/// of a colour-swapped pair start from it. Retries (up to 100 times) when the random moves end
/// the game, and gives the start position back if every try does.
pub fn random_opening(
    start: Position,
    plies: u32,
    rules: Rules,
    rng: &mut GameRng,
) -> (Position, Vec<u8>) {
    for _ in 0..100 {
        let mut pos = start;
        let mut moves = Vec::with_capacity(plies as usize);
        for _ in 0..plies {
            if pos.is_game_over() {
                break;
            }
            let legal = pos.legal_moves().to_vec();
            let mv = legal[rng.random_range(0..legal.len())];
            pos.play_unchecked(mv, rules);
            moves.push(mv as u8);
        }
        if !pos.is_game_over() {
            return (pos, moves);
        }
    }
    (start, Vec::new())
}

/// Mixes a seed with stream numbers (SplitMix64 finaliser): per-game seeds depend only on the
/// run's seed and the game's place in it, never on which thread plays it.
pub fn derive_seed(seed: u64, streams: &[u64]) -> u64 {
    let mut x = seed;
    for &s in streams {
        x = x
            .wrapping_add(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(s.wrapping_mul(0xbf58_476d_1ce4_e5b9));
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
    }
    x
}

/// The RNG of one participant of one game.
pub fn game_rng(seed: u64, streams: &[u64]) -> GameRng {
    rng_from_seed(derive_seed(seed, streams))
}
