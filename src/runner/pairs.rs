//! Colour-swapped pairs of games between two agents, played here or by the queue's workers:
//! the ladder's rounds. A round's result is one score per pair (the first agent's points over
//! its two games, halved), written like a run's batch under a [`SliceKey`] that names the
//! round, so that a second worker or a second asker finds it played once. The queue's side is
//! `BatchQueue::play_pairs`, the worker's the task handler of [`PlayPairs`].

use serde::{Deserialize, Serialize};

use super::results::SliceKey;
use crate::agents::AgentSpec;
use crate::matches::{play_match_within, MatchError, Setup};
use crate::search::Budget;

/// A round to play: `pairs` colour-swapped pairs of `a` against `b` under `setup`, its result
/// written under `key` (whose `jobs` is `pairs`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PlayPairs {
    pub key: SliceKey,
    pub a: AgentSpec,
    pub b: AgentSpec,
    pub setup: Setup,
    pub pairs: u32,
}

/// `pairs` colour-swapped pairs of `a` against `b` on the current rayon pool: `a`'s score in
/// each pair, 0 to 1.
pub(crate) fn play_pairs(
    a: &AgentSpec,
    b: &AgentSpec,
    setup: &Setup,
    pairs: u32,
) -> Result<Vec<f64>, MatchError> {
    let report = play_match_within(a, b, 2 * pairs, setup, true, true, &Budget::unlimited())?;
    let mut scores = vec![0.0; pairs as usize];
    for game in &report.game_list {
        if let Some(points) = scores.get_mut(game.pair as usize) {
            *points += game.a_points;
        }
    }
    Ok(scores.into_iter().map(|points| points / 2.0).collect())
}
