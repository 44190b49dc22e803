//! The agent catalogue, and agents named in requests: spec strings, JSON specs and runs of
//! this server, checked against the API's limits.

use axum::extract::State;
use axum::Json;
use serde::Serialize;
use serde_json::{json, Value};

use super::error::{ApiError, ApiResult};
use super::state::SharedState;
use crate::agents::{catalogue, AgentSpec, Profile};
use crate::store::RunStatus;

/// Resolves an agent given in a request (a spec string or JSON) for the request field
/// `field`, with the API's limits. Runs (`{"kind":"run","id":...}` or `run:ID`) and inline
/// documents (`from_export`) name what the server knows; files, wherever a spec names them
/// (an `a3c` model, `export:PATH`, inside a `from_export` document), are refused unless the
/// server has a models folder, and then looked up only there, before anything is opened.
pub(crate) async fn resolve_agent(
    state: &SharedState,
    field: &str,
    value: &Value,
) -> ApiResult<AgentSpec> {
    let run_id = match value {
        Value::String(s) => s.trim().strip_prefix("run:").map(str::to_string),
        Value::Object(map) if map.get("kind").and_then(Value::as_str) == Some("run") => Some(
            map.get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    ApiError::invalid(&format!("{field}.id"), "a run agent needs the run's id")
                })?
                .to_string(),
        ),
        _ => None,
    };
    if let Some(id) = run_id {
        let spec = run_agent(state, field, &id).await?;
        spec.check(Profile::Api)
            .map_err(|e| ApiError::from_spec(field, &e))?;
        return Ok(spec);
    }
    if !matches!(value, Value::String(_) | Value::Object(_)) {
        return Err(ApiError::invalid(
            field,
            "expected an agent spec: a string such as \"minimax:4\" or an object such as {\"kind\":\"minimax\",\"depth\":4}",
        ));
    }
    // Parsing may read a model or an export document from the models folder: not on the
    // async runtime.
    let (value, files) = (value.clone(), state.files.clone());
    tokio::task::spawn_blocking(move || AgentSpec::from_json_with(&value, Profile::Api, &files))
        .await
        .map_err(ApiError::internal)?
        .map_err(|e| ApiError::from_spec(field, &e))
}

/// The player a run exports, from its last written generation.
async fn run_agent(state: &SharedState, field: &str, id: &str) -> ApiResult<AgentSpec> {
    let unknown = || {
        ApiError::invalid(
            &format!("{field}.id"),
            format!("no run {:?}", crate::game::excerpt(id)),
        )
    };
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(unknown());
    }
    let run = state.store.get_run(id).await?.ok_or_else(unknown)?;
    let config = run.config().map_err(|e| {
        ApiError::invalid(&format!("{field}.id"), format!("run {id} cannot play: {e}"))
    })?;
    let last = state.store.last_record(id).await?.ok_or_else(|| {
        ApiError::invalid(
            &format!("{field}.id"),
            format!("run {id} has no generation yet"),
        )
    })?;
    config.agent(&last).map_err(ApiError::internal)
}

/// The agent catalogue under the API's limits, GA presets, and one agent per run of this
/// server that has a generation.
#[utoipa::path(
    get, path = "/agents", operation_id = "agents",
    summary = "Agent catalogue: kinds with parameters, presets, and an agent per run with a generation",
    responses((status = 200, description = "the catalogue", body = Catalogue))
)]
pub(crate) async fn catalogue(State(state): State<SharedState>) -> ApiResult<Json<Catalogue>> {
    let mut kinds = catalogue::kinds(Profile::Api);
    if let Some(list) = kinds.as_array_mut() {
        list.push(json!(
{"kind": "run", "description": "the evolved player of a run of this server (its export's agent)", "params": [
            {"name": "id", "type": "string", "default": null, "description": "the run's id"}
        ], "examples": ["run:<id>"]}
        ));
    }
    let mut presets = catalogue::presets();
    presets["ga"] = json!(crate::tune::presets_of("ga"));
    let mut exports = Vec::new();
    for run in state.store.list_runs().await? {
        if run.generations_done == 0 || run.config.is_none() {
            continue;
        }
        let label = format!(
            "{} ({}, generation {}, fitness {:.3})",
            run.name
                .clone()
                .unwrap_or_else(|| format!("run {}", short_id(&run.id))),
            run.status.as_str(),
            run.generations_done.saturating_sub(1),
            run.best_fitness.unwrap_or(0.0)
        );
        exports.push(RunAgent {
            finished: run.status == RunStatus::Finished,
            label,
            spec: RunRef {
                id: run.id.clone(),
                kind: "run",
            },
            run_id: run.id,
        });
    }
    Ok(Json(Catalogue {
        agents: kinds,
        exports,
        presets,
    }))
}

/// `GET /api/agents`. Fields in alphabetical order, the order the API's objects have always
/// had.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Catalogue {
    /// Every agent kind with its parameters under the API's limits, and `run`.
    #[schema(value_type = Vec<Object>)]
    agents: Value,
    /// One agent per run of this server that has a generation.
    exports: Vec<RunAgent>,
    /// Named settings of the kinds that have them; the GA's under `ga`.
    #[schema(value_type = Object)]
    presets: Value,
}

/// A run of this server as an agent: the evolved player of its last generation.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct RunAgent {
    finished: bool,
    /// Name (or short id), status, generation and fitness.
    label: String,
    run_id: String,
    spec: RunRef,
}

/// An agent that is a run of this server, as requests name it.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct RunRef {
    id: String,
    /// `run`.
    #[schema(value_type = String)]
    kind: &'static str,
}

/// Eight characters that tell runs apart, as the dashboard shows them: the random tail of the
/// id (a UUIDv7 starts with its creation time, the same for runs created within a minute).
pub(crate) fn short_id(id: &str) -> String {
    let hex: String = id.chars().filter(|c| *c != '-').collect();
    let n = hex.chars().count();
    if n >= 8 {
        hex.chars().skip(n - 8).collect()
    } else {
        id.to_string()
    }
}
