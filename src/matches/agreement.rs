//! Perfect play as a yardstick: how often an agent's move is one of the perfect moves, and
//! how many seeds its moves give away against perfect play, on positions from real games.
//!
//! **How positions are sampled.** Game `i` of a set starts from a random opening of
//! [`AgreementSetup::opening_plies`] sowings and is played to the end by two `minimax:4`
//! agents breaking ties at random (every RNG derived from the seed and `i`). Among the
//! positions of the game with at most [`AgreementSetup::max_seeds`] seeds in the pits and at
//! least two legal moves, one is drawn uniformly; a game with none gives no position and the
//! next game is played, until the set has its positions. One position a game keeps the
//! positions about as independent as the games, which is what the intervals assume. The cap on
//! seeds keeps each exact solve short: the yardstick measures late middle games and endings,
//! not openings.
//!
//! Each position is solved exactly once per set ([`Solver::solve_moves`]: the final margin
//! after every legal move), so several agents are measured on the same positions at the
//! cost of their own moves only.

use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use super::game::{game_rng, play_until, random_opening, Seats};
use super::stats::wilson;
use super::MatchError;
use crate::agents::AgentSpec;
use crate::game::{Position, Rules};
use crate::search::{Depth, Egdb, Solver};

/// Where the positions of an agreement set come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgreementSetup {
    pub pits: usize,
    pub seeds: u32,
    pub rules: Rules,
    /// Positions in the set.
    pub positions: usize,
    /// Most seeds in the pits of a sampled position.
    pub max_seeds: u32,
    /// Random sowings before the sampling games start.
    pub opening_plies: u32,
    pub seed: u64,
}

impl Default for AgreementSetup {
    fn default() -> AgreementSetup {
        AgreementSetup {
            pits: 6,
            seeds: 4,
            rules: Rules::Standard,
            positions: 1000,
            max_seeds: 20,
            opening_plies: 4,
            seed: 1,
        }
    }
}

/// Most positions in one set.
pub(crate) const MAX_AGREEMENT_POSITIONS: usize = 100_000;
/// Most seeds in the pits of a sampled position: the exact solve of every move grows about
/// fourfold with every two seeds more.
pub(crate) const MAX_AGREEMENT_SEEDS: u32 = 26;
/// The same with an endgame database, which answers the solves' last 20 or more seeds.
pub(crate) const MAX_AGREEMENT_SEEDS_WITH_EGDB: u32 = 40;

/// A sampled position and the exact final margin, for the mover, after each legal move.
#[derive(Clone, Debug, PartialEq)]
pub struct SolvedPosition {
    pub position: Position,
    pub move_values: Vec<(usize, i32)>,
}

impl SolvedPosition {
    /// The best margin the mover can reach.
    pub(crate) fn best(&self) -> i32 {
        self.move_values.iter().map(|&(_, v)| v).max().unwrap_or(0)
    }

    /// The seeds `mv` gives away against perfect play (0 for a perfect move); `None` for a
    /// move that is not legal here.
    pub(crate) fn loss(&self, mv: usize) -> Option<i32> {
        let best = self.best();
        self.move_values
            .iter()
            .find(|&&(m, _)| m == mv)
            .map(|&(_, v)| best - v)
    }
}

fn invalid(field: &'static str, reason: String) -> MatchError {
    MatchError::Invalid { field, reason }
}

/// `value` of `field` within `low..=high`.
fn check_range(field: &'static str, value: u64, low: u64, high: u64) -> Result<(), MatchError> {
    if (low..=high).contains(&value) {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("must be {low} to {high}, got {value}"),
        ))
    }
}

/// Samples and solves the positions of `setup` (see the module docs). Deterministic: the
/// same setup gives the same positions on any number of threads.
pub fn solved_positions(setup: &AgreementSetup) -> Result<Vec<SolvedPosition>, MatchError> {
    solved_positions_with(setup, None)
}

/// [`solved_positions`], the solves reading `egdb` (which allows positions with up to
/// `MAX_AGREEMENT_SEEDS_WITH_EGDB` seeds). The positions and their values are the same
/// with or without it.
pub fn solved_positions_with(
    setup: &AgreementSetup,
    egdb: Option<Arc<Egdb>>,
) -> Result<Vec<SolvedPosition>, MatchError> {
    check_range(
        "positions",
        setup.positions as u64,
        1,
        MAX_AGREEMENT_POSITIONS as u64,
    )?;
    let max_seeds = if egdb.is_some() {
        MAX_AGREEMENT_SEEDS_WITH_EGDB
    } else {
        MAX_AGREEMENT_SEEDS
    };
    check_range("max_seeds", setup.max_seeds.into(), 1, max_seeds.into())?;
    check_range(
        "opening_plies",
        setup.opening_plies.into(),
        0,
        super::MAX_OPENING_PLIES.into(),
    )?;
    let start = Position::start(setup.pits, setup.seeds)?;
    let sampler = AgentSpec::Minimax {
        depth: Depth::Fixed(4),
        time_ms: None,
        nodes: None,
        ties: Default::default(),
        egdb: false,
    };
    sampler.validate()?;
    // Games in rounds until enough give a position; each game's position depends on its
    // number only, so the set does not depend on the round size or the threads.
    let mut positions: Vec<Position> = Vec::with_capacity(setup.positions);
    let mut next_game = 0u64;
    let mut games_without = 0u64;
    while positions.len() < setup.positions {
        let wanted = setup.positions - positions.len();
        let round = (wanted + wanted / 4 + 8) as u64;
        let found: Vec<Option<Position>> = (next_game..next_game + round)
            .into_par_iter()
            .map(|game| sample_game(setup, start, &sampler, game))
            .collect::<Result<_, _>>()?;
        next_game += round;
        for pos in found {
            match pos {
                Some(pos) if positions.len() < setup.positions => positions.push(pos),
                Some(_) => {}
                None => games_without += 1,
            }
        }
        if games_without > 1000 && games_without * 2 > next_game {
            return Err(invalid(
                "max_seeds",
                format!(
                    "most games of Kalah({},{}) never have at most {} seeds in the pits with a choice of moves; allow more seeds",
                    setup.pits, setup.seeds, setup.max_seeds
                ),
            ));
        }
    }
    Ok(positions
        .into_par_iter()
        .map_init(
            || {
                let mut solver = Solver::new(setup.rules, 20);
                if let Some(db) = &egdb {
                    solver.set_egdb(db.clone());
                }
                solver
            },
            |solver, position| SolvedPosition {
                move_values: solver.solve_moves(&position),
                position,
            },
        )
        .collect())
}

/// Game `game` of the sampling: its drawn position, if it has one.
fn sample_game(
    setup: &AgreementSetup,
    start: Position,
    sampler: &AgentSpec,
    game: u64,
) -> Result<Option<Position>, MatchError> {
    let mut opening_rng = game_rng(setup.seed, &[game, 0]);
    let (opening, _) = random_opening(start, setup.opening_plies, setup.rules, &mut opening_rng);
    let mut south = sampler.build(setup.rules)?;
    let mut north = sampler.build(setup.rules)?;
    let (mut south_rng, mut north_rng) = (
        game_rng(setup.seed, &[game, 1]),
        game_rng(setup.seed, &[game, 2]),
    );
    let mut candidates = Vec::new();
    play_until(
        Seats::new(&mut *south, &mut *north, &mut south_rng, &mut north_rng),
        opening,
        setup.rules,
        |pos| {
            if pos.seeds_in_pits() <= setup.max_seeds && pos.legal_moves().len() >= 2 {
                candidates.push(*pos);
            }
            false
        },
        |_, _, _| {},
    );
    if candidates.is_empty() {
        return Ok(None);
    }
    let mut pick_rng = game_rng(setup.seed, &[game, 3]);
    use rand::RngExt;
    Ok(Some(candidates[pick_rng.random_range(0..candidates.len())]))
}

/// One agent measured on a set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct AgreementReport {
    pub agent: String,
    pub positions: usize,
    /// Positions where the agent's move is one of the perfect moves.
    pub perfect_moves: usize,
    /// `perfect_moves / positions` with its 95% Wilson interval.
    pub agreement: f64,
    pub agreement_ci: (f64, f64),
    /// Mean seeds given away against perfect play, with a 95% normal interval.
    pub mean_loss: f64,
    pub mean_loss_ci: (f64, f64),
    /// Share of positions where the best move is the only perfect one, for context: a set
    /// where most moves are perfect is easy to agree with.
    pub single_perfect_move: f64,
}

/// Measures `spec` on `set`: its move in each position (its RNG seeded from `seed` and the
/// position's number) against the exact values.
pub(crate) fn measure(
    spec: &AgentSpec,
    set: &[SolvedPosition],
    rules: Rules,
    seed: u64,
) -> Result<AgreementReport, MatchError> {
    spec.validate()?;
    if set.is_empty() {
        return Err(invalid("positions", "the set is empty".into()));
    }
    let losses: Vec<i32> = set
        .par_iter()
        .enumerate()
        .map(|(i, solved)| {
            let mut agent = spec.build(rules)?;
            let mut rng = game_rng(seed, &[i as u64, 4]);
            let mv = agent.choose(&solved.position, &mut rng).mv;
            // Agents only ever choose legal moves; a missing value would be a solver bug.
            Ok(solved.loss(mv).unwrap_or(i32::MAX))
        })
        .collect::<Result<_, MatchError>>()?;
    let n = losses.len() as f64;
    let perfect = losses.iter().filter(|&&l| l == 0).count();
    let mean = losses.iter().map(|&l| l as f64).sum::<f64>() / n;
    let variance = losses
        .iter()
        .map(|&l| (l as f64 - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0).max(1.0);
    let half = 1.96 * (variance / n).sqrt();
    let single = set
        .iter()
        .filter(|s| {
            let best = s.best();
            s.move_values.iter().filter(|&&(_, v)| v == best).count() == 1
        })
        .count();
    Ok(AgreementReport {
        agent: spec.to_string(),
        positions: losses.len(),
        perfect_moves: perfect,
        agreement: perfect as f64 / n,
        agreement_ci: wilson(perfect as f64 / n, n),
        mean_loss: mean,
        mean_loss_ci: (mean - half, mean + half),
        single_perfect_move: single as f64 / n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> AgreementSetup {
        AgreementSetup {
            positions: 40,
            max_seeds: 12,
            ..AgreementSetup::default()
        }
    }

    #[test]
    fn the_perfect_agent_agrees_everywhere_and_the_set_is_the_same_on_any_threads() {
        let setup = small();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| solved_positions(&setup).unwrap());
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(|| solved_positions(&setup).unwrap());
        assert_eq!(one, two);
        assert_eq!(one.len(), 40);
        for solved in &one {
            assert!(solved.position.seeds_in_pits() <= 12);
            assert!(solved.move_values.len() >= 2);
        }
        let perfect: AgentSpec = "perfect:26".parse().unwrap();
        let report = measure(&perfect, &one, Rules::Standard, 1).unwrap();
        assert_eq!(report.perfect_moves, 40);
        assert_eq!(report.mean_loss, 0.0);
        let random = measure(&AgentSpec::Random, &one, Rules::Standard, 1).unwrap();
        assert!(
            random.agreement < 1.0 && random.mean_loss > 0.0,
            "{random:?}"
        );
    }

    #[test]
    fn bad_setups_name_their_field() {
        for (setup, field) in [
            (
                AgreementSetup {
                    positions: 0,
                    ..small()
                },
                "positions",
            ),
            (
                AgreementSetup {
                    max_seeds: 99,
                    ..small()
                },
                "max_seeds",
            ),
            (
                AgreementSetup {
                    opening_plies: 99,
                    ..small()
                },
                "opening_plies",
            ),
        ] {
            let err = solved_positions(&setup).unwrap_err();
            assert!(err.to_string().starts_with(field), "{err}");
        }
    }
}
