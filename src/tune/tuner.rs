//! The [`Tuner`] trait: one run of one tuner, advanced one record at a time. A config becomes
//! a running tuner (fresh, or resumed after its last record) in one place,
//! [`super::TunerConfig::open`].

use std::sync::Arc;

use crate::search::Budget;
use crate::tune::{GenerationRecord, JobList, StopReason};

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
    pub(crate) fn with_go_on(
        mut self,
        go_on: impl Fn(u64) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.go_on = Arc::new(go_on);
        self
    }

    pub(crate) fn cancel(&self) -> &Budget {
        &self.cancel
    }

    /// Whether to carry on past `position` (games learnt, rounds fitted, generations).
    pub(crate) fn go_on(&self, position: u64) -> bool {
        !self.cancel.is_stopped() && (self.go_on)(position)
    }
}

/// What a tuner needs next ([`Tuner::ask`]).
#[derive(Debug)]
pub enum Ask {
    /// These games played: their points, in job order, go back through [`Tuner::tell`]
    /// before the next ask. Whoever plays them (this process, the job queue's workers) must
    /// give exactly what [`Tuner::play_here`] gives.
    Games(JobList),
    /// The step is done: its record.
    Record(Box<GenerationRecord>),
    /// The run has finished ([`Tuner::stop_reason`] says why).
    Finished,
}

/// A run of one tuner in ask/tell form. A step is a sequence of asks: the tuner hands out the
/// game jobs of its step (`Ask::Games`) and is told their results, until it makes its
/// record (`Ask::Record`): a GA generation or a learner's checkpoint, from which the run
/// resumes exactly ([`super::TunerConfig::open`]). A tuner knows nothing of where its games
/// are played (the [`super::Driver`] plays them here, the server's runner on the job queue)
/// nor of where its records go (the driver's observers, the store).
///
/// The [`super::Driver`] is the one loop that steps a tuner, for every front end.
///
/// Work that cannot be spread, such as a learner's self-play, whose every game learns from
/// the one before, is done inside `ask` itself.
pub trait Tuner: Send {
    /// What the run needs next. `control` ends a step early: cancelled, its record is to be
    /// dropped; `go_on` declined, the record is measured at once.
    fn ask(&mut self, control: &StepControl) -> Ask;

    /// The points of the games last asked for, in job order. Only tuners that ask for games
    /// are told anything.
    fn tell(&mut self, points: Vec<f64>);

    /// Plays `list`, as asked for by this tuner, on the current rayon pool.
    fn play_here(&mut self, list: &JobList) -> Vec<f64>;

    /// Why the run finished, once it has.
    fn stop_reason(&self) -> Option<StopReason>;

    /// How far a whole run goes, in the unit of `position`: generations, self-play games
    /// or rounds.
    fn length(&self) -> u64;
}
