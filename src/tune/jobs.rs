//! Game jobs: what a tuner asks to have played ([`JobList`]), one game each ([`Job`]), in a
//! form that can go to another thread, process or machine.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A weight vector, one weight per feature of the run.
pub type Genome = Vec<f64>;

/// Whom a game is against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rival {
    /// Another member of the population, by index.
    Member(usize),
    /// A fixed opponent, by index into `fitness.opponents`.
    Opponent(usize),
}

/// One game of a generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The individual whose point of view the job is written from.
    pub me: usize,
    pub rival: Rival,
    /// The colour-swapped pair the game belongs to; both games of a pair share the opening.
    pub pair: u64,
    /// `me` plays South (moves first from the start position).
    pub me_first: bool,
}

/// One job list of a generation's fitness games: what the GA asks to have played (see
/// `Scoring`). It owns its population, so that it can go to another thread, process or
/// machine, and whatever plays it must give exactly what `FitnessSetup::play_batch` gives
/// for the same jobs, so that a run writes the same records however its games were spread.
#[derive(Clone, Debug)]
pub struct JobList {
    pub generation: u32,
    /// Which job list of the generation: 0 for the games fixed in advance
    /// (`FitnessSetup::jobs`), then one per racing round.
    pub part: u32,
    pub population: Arc<Vec<Genome>>,
    pub jobs: Vec<Job>,
}

/// Why a batch of jobs cannot be played: it names an individual or opponent the run does not
/// have (a corrupt or foreign queue entry).
#[derive(Debug, thiserror::Error)]
#[error("batch job {index} does not fit the run: {reason}")]
pub struct BadBatch {
    pub index: usize,
    pub reason: String,
}
