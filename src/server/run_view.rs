//! The run object of the API: how a stored run is shown in responses and in the `status`
//! events every stream sends.

use serde_json::{json, Value};

use crate::store::{RunRow, RunStatus};

/// The run object of the API. A run whose stored config no longer reads shows the stored JSON
/// and says so in `error`.
pub fn run_json(run: &RunRow) -> Value {
    let config = match (&run.config, &run.config_raw) {
        (Some(config), _) => serde_json::to_value(config).unwrap_or(Value::Null),
        (None, raw) => raw.clone().unwrap_or(Value::Null),
    };
    let (seed, tuner) = match &run.config {
        Some(c) => (json!(c.seed()), json!(c.tuner())),
        None => (
            config.get("seed").cloned().unwrap_or(Value::Null),
            Value::Null,
        ),
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
    json!({
        "id": run.id,
        "name": run.name,
        "status": run.status,
        "tuner": tuner,
        "preset": run.preset,
        "config": config,
        "seed": seed,
        "generations_total": run.generations_total,
        "generations_done": run.generations_done,
        "progress": progress,
        "best_fitness": run.best_fitness,
        "best_weights": run.best_weights,
        "features": run.features,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "error": error,
        "stop_reason": run.stop_reason,
        "notes": run.notes,
        "tags": run.tags,
    })
}
