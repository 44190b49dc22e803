//! The run object of the API: how a stored run is shown in responses and in the `status`
//! events every stream sends.

use serde::Serialize;
use serde_json::Value;

use crate::store::{RunRow, RunStatus};

/// The run object of the API. A run whose stored config no longer reads shows the stored JSON
/// and says so in `error`. Fields in alphabetical order, the order the API's objects have
/// always had.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Run)]
pub(crate) struct RunView {
    pub best_fitness: Option<f64>,
    pub best_weights: Option<Vec<f64>>,
    /// The whole config the run got (the stored JSON when it no longer reads).
    #[schema(value_type = Object)]
    pub config: Value,
    #[schema(format = DateTime)]
    pub created_at: String,
    pub error: Option<String>,
    #[schema(value_type = Vec<String>)]
    pub features: Value,
    pub finished_at: Option<String>,
    pub generations_done: u32,
    pub generations_total: u32,
    pub id: String,
    pub name: Option<String>,
    pub notes: String,
    /// The user who created the run, on a server with users (`kalah-tuner users`); none for
    /// runs created with the server's own token or without one.
    pub owner: Option<String>,
    pub preset: Option<String>,
    /// The processor time the run's work has used so far, in seconds, measured on the game
    /// threads that did it (its own and the queue workers' for its games); what a user's quota
    /// counts once the run has ended. None for a run stored before it was measured.
    pub processor_seconds: Option<f64>,
    pub progress: f64,
    #[schema(value_type = Option<u64>)]
    pub seed: Value,
    pub started_at: Option<String>,
    pub status: RunStatus,
    #[schema(value_type = Option<crate::tune::StopReason>)]
    pub stop_reason: Option<String>,
    pub tags: Vec<String>,
    #[schema(schema_with = super::schemas::tuner_name)]
    pub tuner: Option<&'static str>,
}

/// [`RunView`] of `run`.
pub(crate) fn run_view(run: &RunRow) -> RunView {
    let config = match (&run.config, &run.config_raw) {
        (Some(config), _) => serde_json::to_value(config).unwrap_or(Value::Null),
        (None, raw) => raw.clone().unwrap_or(Value::Null),
    };
    let (seed, tuner) = match &run.config {
        Some(c) => (Value::from(c.seed()), Some(c.tuner())),
        None => (config.get("seed").cloned().unwrap_or(Value::Null), None),
    };
    let error = match (&run.error, &run.unreadable) {
        (Some(e), Some(u)) => Some(format!("{e}; {u}")),
        (e, u) => e.clone().or_else(|| u.clone()),
    };
    let progress = if run.status == RunStatus::Finished {
        1.0
    } else if run.generations_total == 0 {
        0.0
    } else {
        run.generations_done as f64 / run.generations_total as f64
    };
    RunView {
        best_fitness: run.best_fitness,
        best_weights: run.best_weights.clone(),
        config,
        created_at: run.created_at.clone(),
        error,
        features: run.features.clone(),
        finished_at: run.finished_at.clone(),
        generations_done: run.generations_done,
        generations_total: run.generations_total,
        id: run.id.clone(),
        name: run.name.clone(),
        notes: run.notes.clone(),
        owner: run.created_by.clone(),
        preset: run.preset.clone(),
        processor_seconds: run.processor_seconds,
        progress,
        seed,
        started_at: run.started_at.clone(),
        status: run.status,
        stop_reason: run.stop_reason.clone(),
        tags: run.tags.clone(),
        tuner,
    }
}

/// [`RunView`] of `run` as JSON, for the events, which carry JSON.
pub(crate) fn run_json(run: &RunRow) -> Value {
    serde_json::to_value(run_view(run)).unwrap_or(Value::Null)
}
