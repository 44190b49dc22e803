//! Game jobs: what a tuner asks to have played ([`JobList`]), one game each ([`Job`]), in a
//! form that can go to another thread, process or machine.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize};

use crate::agents::cost::{game_side_ms, leaf_cost, search_side_ms};
use crate::agents::{AgentSpec, FileAccess, Profile};
use crate::eval::Feature;
use crate::game::Rules;

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

/// One list of a population's games: what a tuner asks to have played. It owns its
/// population and says what the games are ([`GameSpec`]), so that it can go to another
/// thread, process or machine, and whatever plays it must give exactly what
/// `super::games::GameSetup::play_batch` gives for the same jobs, so that a run writes the
/// same records however its games were spread.
#[derive(Clone, Debug)]
pub struct JobList {
    pub generation: u32,
    /// Which job list of the generation: 0 for the games fixed in advance, then one per
    /// later round (the GA's racing rounds).
    pub part: u32,
    pub population: Arc<Vec<Genome>>,
    pub jobs: Vec<Job>,
    /// What the games are.
    pub games: Arc<GameSpec>,
}

/// Why a batch of jobs cannot be played: it names an individual or opponent the run does not
/// have (a corrupt or foreign queue entry).
#[derive(Debug, thiserror::Error)]
#[error("batch job {index} does not fit the run: {reason}")]
pub struct BadBatch {
    pub index: usize,
    pub reason: String,
}

/// What a population's games are: everything a player of a [`JobList`] needs besides the
/// population and the jobs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameSpec {
    /// The individuals' features, in weight order.
    pub features: Vec<Feature>,
    /// The individuals' search depth.
    pub depth: u32,
    pub rules: Rules,
    pub board: BoardConfig,
    /// Whether the pie rule is on.
    #[serde(default)]
    pub pie: bool,
    /// The seed of every opening and tie-break.
    pub seed: u64,
    /// The fixed opponents a [`Rival::Opponent`] names, in order.
    #[serde(deserialize_with = "stored_agents")]
    pub opponents: Vec<AgentSpec>,
    /// Random sowings of each pair's opening.
    pub opening_plies: u32,
}

/// An agent list as a stored config or spec holds it. Nothing is opened here: this also reads
/// configs back from storage and from export documents, whose files were checked when the
/// config was loaded (the loader resolves the files a user names, under the caller's policy);
/// a tuner's limits are applied by its validation.
pub(crate) fn stored_agents<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<AgentSpec>, D::Error> {
    let values = Vec::<serde_json::Value>::deserialize(d)?;
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            AgentSpec::from_json_with(v, Profile::Library, &FileAccess::Stored)
                .map_err(|e| serde::de::Error::custom(format!("[{i}]: {e}")))
        })
        .collect()
}

impl GameSpec {
    /// A rough single-core cost of `job` in milliseconds, from the measured game times the
    /// run cost estimates use: what the job queue cuts batches by.
    pub(crate) fn job_cost_ms(&self, job: &Job) -> f64 {
        let (pits, seeds) = (self.board.pits, self.board.seeds);
        let me = search_side_ms(self.depth, pits, seeds, leaf_cost(&self.features, pits));
        let rival = match job.rival {
            Rival::Member(_) => me,
            Rival::Opponent(o) => self
                .opponents
                .get(o)
                .map_or(me, |spec| game_side_ms(spec, pits, seeds)),
        };
        me + rival
    }
}

/// Board size: pits per side and seeds per pit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoardConfig {
    pub pits: usize,
    pub seeds: u32,
}

impl Default for BoardConfig {
    fn default() -> Self {
        BoardConfig { pits: 6, seeds: 4 }
    }
}
