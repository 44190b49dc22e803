//! The [`Tuner`] trait: one run of one tuner, advanced one record at a time. A config becomes
//! a running tuner (fresh, or resumed after its last record) in one place,
//! [`super::TunerConfig::open`].

use std::sync::Arc;

use crate::ga::{GameBatches, GenerationRecord, StopReason};
use crate::search::Budget;

/// How a step may end before its natural end. Two different things: `cancel` abandons the
/// step (its games stop at once and whatever it returns is to be dropped, with the tuner);
/// `go_on`, asked between a learner's batches with its progress, ends the step early but
/// measured, so that Ctrl-C or a processor-time budget still leaves a usable last record.
#[derive(Clone)]
pub struct StepControl {
    cancel: Budget,
    go_on: Arc<dyn Fn(u64) -> bool + Send + Sync>,
}

impl StepControl {
    /// A step that runs to its end unless `cancel` is set.
    pub fn new(cancel: Budget) -> StepControl {
        StepControl {
            cancel,
            go_on: Arc::new(|_| true),
        }
    }

    /// This control, also asking `go_on` (with the tuner's position in its own unit) whether
    /// to carry on; `go_on` may also show the position (a progress bar).
    pub fn with_go_on(mut self, go_on: impl Fn(u64) -> bool + Send + Sync + 'static) -> Self {
        self.go_on = Arc::new(go_on);
        self
    }

    pub fn cancel(&self) -> &Budget {
        &self.cancel
    }

    /// Whether to carry on past `position` (games learnt, rounds fitted, generations).
    pub fn go_on(&self, position: u64) -> bool {
        !self.cancel.is_stopped() && (self.go_on)(position)
    }
}

/// A run of one tuner. Each step makes one [`GenerationRecord`]: a GA generation or a
/// learner's checkpoint, from which the run resumes exactly
/// ([`super::TunerConfig::open`]). A tuner knows nothing
/// of where its records go: the [`super::Driver`] hands them to observers, the server to the
/// store.
pub trait Tuner: Send {
    /// The next record; `None` once the run has finished.
    fn step(&mut self, control: &StepControl) -> Option<GenerationRecord>;

    /// Why the run finished, once it has.
    fn stop_reason(&self) -> Option<StopReason>;

    /// How far a whole run goes, in the unit of [`position`]: generations, self-play games
    /// or rounds.
    fn length(&self) -> u64;

    /// Plays the tuner's fitness games through `batches` (the PostgreSQL job queue) rather
    /// than on the local pool. `false` when the tuner has no such games to hand out.
    fn play_games_on(&mut self, _batches: Arc<dyn GameBatches>) -> bool {
        false
    }
}

/// Where a run stands after `record`, in the unit of [`Tuner::length`].
pub fn position(record: &GenerationRecord) -> u64 {
    match &record.learner {
        Some(progress) => progress.position(),
        None => record.generation as u64 + 1,
    }
}
