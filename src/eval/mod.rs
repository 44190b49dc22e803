//! Evaluation features, named feature sets and published weight presets (docs/reference/agents.md),
//! and the evaluators the searches call at their leaves.
//!
//! Every feature is oriented so that larger is better for the searching side ("me"). A
//! [`WeightedEval`] scores a position as `sum_i w_i * f_i`, in fixed point so that search
//! values compare exactly and ties are ties.
//!
//! - `features`: the [`Feature`] catalogue and the quantities features share.
//! - `sets`: named feature sets (`hunter10`, `abrams3`, ...) and their published weights.
//! - `weighted`: [`WeightedEval`], the weighted sum the heuristic agents and the GA search
//!   with.

pub(crate) mod features;
pub(crate) mod sets;
pub(crate) mod weighted;

pub use features::{best_capture, exposed_seeds, Feature};
pub use sets::FeatureSet;
pub use sets::{feature_set, parse_features, FEATURE_SETS};
pub use weighted::{round_to_i64, WeightedEval};

/// Features or weights an evaluator cannot take: an unknown name or preset, a weight out of
/// range, counts that differ. Says what is wrong; the caller names the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub(crate) String);

use crate::game::{Position, Side};

/// Fixed-point unit of heuristic scores: one seed of store difference is `SCALE`.
pub(crate) const SCALE: f64 = 1_000_000.0;
/// Any finished game scores beyond this, so a win beats every non-terminal score.
pub(crate) const WIN: i64 = 100_000_000_000_000_000;
/// Largest weight magnitude accepted, so that no leaf score can reach [`WIN`].
pub(crate) const MAX_WEIGHT: f64 = 1000.0;

/// Score of a finished game with final margin `margin` (mine minus theirs): a bigger win beats a
/// smaller one and any win beats any position that is not yet decided.
#[inline]
pub(crate) fn terminal_score(margin: i32) -> i64 {
    match margin.signum() {
        1 => WIN + margin as i64 * SCALE as i64,
        -1 => -WIN + margin as i64 * SCALE as i64,
        _ => 0,
    }
}

/// The final margin a finished game's score stands for (the inverse of [`terminal_score`]);
/// `None` for the score of a game not yet decided.
#[inline]
pub(crate) fn terminal_margin(score: i64) -> Option<i64> {
    is_decisive(score).then(|| (score - score.signum() * WIN) / SCALE as i64)
}

/// The scores of finished games: wins and losses lie beyond [`WIN`].
#[inline]
pub(crate) fn is_decisive(score: i64) -> bool {
    score.abs() >= WIN
}

/// Scores a position from `me`'s point of view. Called at the leaves of every search.
pub trait Evaluator: Send + Sync {
    /// Score of a position that is not over.
    fn evaluate(&self, pos: &Position, me: Side) -> i64;
}

/// The plain evaluation of Hunter's and Pekar's minimax: store difference.
#[derive(Clone, Copy, Debug, Default)]
pub struct StoreDiff;

impl Evaluator for StoreDiff {
    #[inline]
    fn evaluate(&self, pos: &Position, me: Side) -> i64 {
        pos.store_diff(me) as i64 * SCALE as i64
    }
}
