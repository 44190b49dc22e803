//! Learning evaluation from play rather than evolving it: asynchronous advantage
//! actor-critic for the `a3c` agent's network ([`a3c`]), temporal-difference learning of
//! linear evaluations (`td`) and Texel-style fitting of them to labelled positions
//! (`texel`). No command-line code lives here; the
//! commands in `cli/` drive these trainers.

pub mod a3c;
pub(crate) mod progress;
pub(crate) mod td;
pub(crate) mod texel;

pub(crate) use progress::LearnerProgress;

use crate::eval::{Feature, WeightedEval};
use crate::game::{Position, Rules, SettingBound};

/// A learning setting out of range, with the field it concerns (TD and Texel alike).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {reason}")]
pub(crate) struct LearnConfigError {
    pub field: &'static str,
    pub reason: String,
}

impl crate::game::UserError for LearnConfigError {
    fn field(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(self.field)
    }

    fn reason(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(&self.reason)
    }
}
inventory::submit! { crate::game::UserErrorKind::of::<LearnConfigError>() }

pub(crate) fn bad(field: &'static str, reason: impl Into<String>) -> LearnConfigError {
    LearnConfigError {
        field,
        reason: reason.into(),
    }
}

/// Checks what every linear learner starts from: features, one starting weight each within
/// the evaluator's range, and the board. Returns the start position.
pub(crate) fn check_start(
    features: &[Feature],
    initial: &[f64],
    rules: Rules,
    pits: usize,
    seeds: u32,
    pie: bool,
) -> Result<Position, LearnConfigError> {
    if features.is_empty() {
        return Err(bad("features", "give at least one feature"));
    }
    if initial.len() != features.len() {
        return Err(bad(
            "initial",
            format!(
                "{} features need {} initial weights, got {}",
                features.len(),
                features.len(),
                initial.len()
            ),
        ));
    }
    WeightedEval::new(features, initial, rules)
        .map_err(|reason| bad("initial", reason.to_string()))?;
    Position::start(pits, seeds)
        .map(|start| start.with_pie(pie))
        .map_err(|e| bad("board", e.to_string()))
}

/// Checks the settings of `config` that `bounds` declares: a learner's numeric settings, each
/// declared once with its range (which the dashboard's form shows too).
pub(crate) fn check_bounds(
    config: &impl serde::Serialize,
    bounds: &'static [SettingBound],
) -> Result<(), LearnConfigError> {
    let written = serde_json::to_value(config).map_err(|e| bad("config", e.to_string()))?;
    crate::game::check_written(&written, bounds, |_| None, |_| false)
        .map_err(|e| bad(e.key, e.why.to_string()))
}
