//! Runs: create, list, show, cancel, resume, delete; generations; export; live events.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::stream::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::error::{ApiError, ApiResult};
use super::event_stream::{end_event, is_terminal, sse, sse_event, stream_seat, Outbox, RunStream};
use super::extract::{ApiJson, ApiPath, ApiQuery, RunPath};
use super::guard::{not_yours, Caller};
use super::run_events::{emit, emit_status, Following};
use super::run_view::{run_json, run_view, RunView};
use super::state::{RunEvent, SharedState};
use crate::agents::FileAccess;
use crate::store::{NewRun, RunDescription, RunRow, RunStatus};
use crate::tune::{describe_bytes, ExportDocument, TunerConfig};

/// Most runs waiting in the queue at once.
pub(crate) const MAX_QUEUED: u64 = 100;
/// Longest run name.
pub(crate) const MAX_NAME_CHARS: usize = 200;
/// Longest notes of a run.
pub(crate) const MAX_NOTES_CHARS: usize = 10_000;
/// Most tags on a run, and the longest tag.
pub(crate) const MAX_TAGS: usize = 20;
pub(crate) const MAX_TAG_CHARS: usize = 40;

/// A page of `GET /api/runs`. Fields in alphabetical order, the order the API's objects have
/// always had.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct RunsPage {
    /// The cursor of the next page; null after the last.
    next_cursor: Option<String>,
    #[schema(schema_with = runs_page_items)]
    runs: Vec<RunView>,
}

/// Whole runs, or with `fields=summary` runs without [`SUMMARY_OMITS`] (`RunSummary`, which
/// `openapi` derives from the run's schema): one schema for both, as a query parameter
/// cannot choose the answer's schema.
fn runs_page_items() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    super::schemas::from_json(json!({"type": "array", "items": {"anyOf": [
        {"$ref": "#/components/schemas/Run"},
        {"$ref": "#/components/schemas/RunSummary"}
    ]}}))
}

/// `POST /api/runs`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateRun {
    /// The tuner: the GA (the default), CMA-ES, SPSA, TD(lambda), TD-Leaf(lambda) or
    /// Texel-style fitting.
    #[serde(default)]
    #[schema(schema_with = super::schemas::tuner_name)]
    tuner: Option<String>,
    /// A GA preset, or TD's (`ahmed`).
    #[serde(default)]
    #[schema(schema_with = super::schemas::preset_name)]
    preset: Option<String>,
    /// Partial config laid over the tuner's preset or defaults.
    #[serde(default)]
    #[schema(schema_with = super::schemas::run_config)]
    config: Option<Value>,
    /// At most 200 characters.
    #[serde(default)]
    name: Option<String>,
}

/// Builds the config of a new run: the tuner's preset (or defaults), then the overrides. The
/// tuner and preset belong at the top of the request, where the dashboard's form puts them.
/// The files its agents name are read under `files`, the server's policy; call it off the
/// async runtime.
pub(crate) fn build_config(
    tuner: Option<&str>,
    preset: Option<&str>,
    overrides: Option<&Value>,
    files: &FileAccess,
) -> ApiResult<TunerConfig> {
    let layer = match overrides {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(map)) => {
            for key in ["preset", "tuner"] {
                if map.contains_key(key) {
                    return Err(ApiError::invalid(
                        &format!("config.{key}"),
                        format!(
                            "give the {key} at the top level of the request, not inside config"
                        ),
                    ));
                }
            }
            Some(v)
        }
        Some(_) => return Err(ApiError::invalid("config", "must be an object")),
    };
    let layers: Vec<&Value> = layer.into_iter().collect();
    crate::tune::load_tuner(tuner, preset, &layers, files).map_err(|e| match e.field() {
        // The tuner and preset are the request's own fields, not the config's.
        "tuner" | "preset" => ApiError::from_config("", &e),
        _ => ApiError::from_config("config", &e),
    })
}

/// The GA config as the dashboard's form shows it: defaults, presets, ranges.
#[utoipa::path(
    get, path = "/config-schema", operation_id = "config_schema",
    summary = "The GA config as a form: defaults, presets, every field's range and when it applies",
    responses((status = 200, description = "the schema", body = super::api_doc::ConfigFormSchema))
)]
pub(crate) async fn config_schema() -> Json<Value> {
    Json(crate::tuners::schema::config_schema())
}

/// Checks a request for a new run and builds its config (off the async runtime: loading
/// may read model files from the models folder): everything `POST /api/runs` does before it
/// stores the run.
async fn prepare(state: &SharedState, body: &CreateRun) -> ApiResult<TunerConfig> {
    if let Some(name) = &body.name {
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(ApiError::invalid(
                "name",
                format!("at most {MAX_NAME_CHARS} characters"),
            ));
        }
    }
    // Loading may read model files (from the models folder): not on the async runtime.
    let (tuner, preset, overrides, access) = (
        body.tuner.clone(),
        body.preset.clone(),
        body.config.clone(),
        state.files.clone(),
    );
    tokio::task::spawn_blocking(move || {
        build_config(
            tuner.as_deref(),
            preset.as_deref(),
            overrides.as_ref(),
            &access,
        )
    })
    .await
    .map_err(ApiError::internal)?
}

/// `POST /api/runs/estimate`: a dry run of `POST /api/runs`. The same body, the same checks
/// and errors, nothing stored: the config the run would get and what it would cost, from the
/// one cost model the server also refuses runs by (the dashboard's form shows it).
#[utoipa::path(
    post, path = "/runs/estimate", operation_id = "estimate_run",
    summary = "A dry run of creating a run: the config it would get and its estimated cost; nothing is stored",
    request_body = CreateRun,
    responses(
        (status = 200, description = "the estimate", body = RunEstimate),
        super::api_doc::BadRequest, super::api_doc::Invalid,
    )
)]
pub(crate) async fn estimate(
    State(state): State<SharedState>,
    ApiJson(body): ApiJson<CreateRun>,
) -> ApiResult<Json<RunEstimate>> {
    let config = prepare(&state, &body).await?;
    let hours = config.estimated_core_hours();
    Ok(Json(RunEstimate {
        config: serde_json::to_value(&config).map_err(ApiError::internal)?,
        estimated_core_hours: hours,
        estimated_cpu_seconds: (hours * 3600.0).round(),
        estimated_storage_bytes: config.estimated_storage_bytes(),
        max_core_hours: crate::tune::MAX_CORE_HOURS,
        records: config.records_total(),
        tuner: config.tuner(),
    }))
}

/// `POST /api/runs/estimate`'s answer. Fields in alphabetical order, the order the API's
/// objects have always had.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct RunEstimate {
    /// The whole config the run would get.
    #[schema(value_type = Object)]
    config: Value,
    estimated_core_hours: f64,
    estimated_cpu_seconds: f64,
    estimated_storage_bytes: u64,
    /// The most core-hours a run may be estimated at.
    max_core_hours: f64,
    /// Generations (or learner records) the run would write.
    records: u32,
    #[schema(schema_with = super::schemas::tuner_name)]
    tuner: &'static str,
}

#[utoipa::path(
    post, path = "/runs", operation_id = "create_run",
    summary = "Create a run (queued for a worker)",
    request_body = CreateRun,
    responses(
        (status = 201, description = "the new run", body = RunView),
        super::api_doc::BadRequest, super::api_doc::Invalid, super::api_doc::TooMany,
    )
)]
pub(crate) async fn create(
    State(state): State<SharedState>,
    Extension(caller): Extension<Caller>,
    ApiJson(body): ApiJson<CreateRun>,
) -> ApiResult<Response> {
    let config = prepare(&state, &body).await?;
    let features = config
        .features()
        .map_err(|e| ApiError::from_config("config", &e))?;
    if state.store.count_status(RunStatus::Queued).await? >= MAX_QUEUED {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            None,
            format!("{MAX_QUEUED} runs are already queued; cancel some or wait"),
        ));
    }
    if let Caller::User(user) = &caller {
        if let Some(quota) = user.quota_core_hours {
            let used = core_hours_used(&state, &user.name).await?;
            let asked = config.estimated_core_hours();
            if used + asked > quota {
                return Err(ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    Some("config"),
                    format!(
                        "this run would take about {asked:.2} core-hours, and {} has used {used:.2} of a quota of {quota} core-hours (measured for work done, estimated for work queued or running): cancel or delete runs, or ask an admin for more",
                        user.name
                    ),
                ));
            }
        }
    }
    // One run's records are capped (`MAX_RUN_STORAGE_BYTES`); so are all that the queued and
    // running runs have still to write, or a hundred runs at the cap would fill the disk.
    let pending = pending_storage_bytes(&state).await?;
    let asked = config.estimated_storage_bytes();
    let most = state.max_pending_storage_bytes;
    if pending.saturating_add(asked) > most {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            Some("config"),
            format!(
                "the queued and running runs have about {} of records still to write and this run would add about {}; at most {} in all are allowed on this server (--max-pending-storage-gb): wait for some to end, or cancel some",
                describe_bytes(pending),
                describe_bytes(asked),
                describe_bytes(most)
            ),
        ));
    }
    let run = state
        .store
        .create_run(&NewRun {
            id: uuid::Uuid::now_v7().to_string(),
            name: body.name.filter(|n| !n.trim().is_empty()),
            preset: body.preset,
            features: serde_json::to_value(&features).map_err(ApiError::internal)?,
            config,
            created_by: caller.owner(),
        })
        .await?;
    tracing::info!(run = %run.id, "run queued");
    emit_status(&state, &run);
    state.executor.wake();
    Ok((StatusCode::CREATED, Json(run_view(&run))).into_response())
}

/// The core-hours a user's runs take: the processor time measured for the work done, and the
/// server's cost estimate (the one the 48 core-hour cap uses) for the work still to do (a
/// queued run's whole estimate, a running run's share of it that its records still to make
/// are). A run from before processor time was measured counts by the estimate of the records
/// it made. Deleted runs count no more.
async fn core_hours_used(state: &SharedState, user: &str) -> ApiResult<f64> {
    let runs = state.store.runs_created_by(user).await?;
    Ok(runs.iter().map(core_hours_of).sum())
}

fn core_hours_of(run: &RunRow) -> f64 {
    let Some(config) = run.config.as_ref() else {
        return run.processor_seconds.unwrap_or(0.0) / 3600.0;
    };
    let estimate = config.estimated_core_hours();
    let done = if run.generations_total == 0 {
        0.0
    } else {
        (f64::from(run.generations_done) / f64::from(run.generations_total)).min(1.0)
    };
    let measured = match run.processor_seconds {
        Some(seconds) => seconds / 3600.0,
        None => estimate * done,
    };
    match run.status {
        RunStatus::Queued | RunStatus::Running => measured + estimate * (1.0 - done),
        _ => measured,
    }
}

/// What the queued and running runs have still to write, by their configs' estimates: a
/// queued run all its records, a running one those it has not written yet. A row whose config
/// no longer reads counts for nothing (it cannot run).
async fn pending_storage_bytes(state: &SharedState) -> ApiResult<u64> {
    let runs = state.store.active_runs().await?;
    Ok(runs
        .iter()
        .filter_map(|run| {
            let config = run.config().ok()?;
            let total = config.records_total().max(1);
            let left = total.saturating_sub(run.generations_done);
            let per_record = config.estimated_storage_bytes() / u64::from(total);
            Some(per_record.saturating_mul(u64::from(left)))
        })
        .fold(0u64, u64::saturating_add))
}

/// Runs a page of `GET /api/runs` holds unless the client asks for fewer or more.
pub(crate) const DEFAULT_RUNS_PAGE: u32 = 100;
/// Most runs one page of `GET /api/runs` holds.
pub(crate) const MAX_RUNS_PAGE: u32 = 500;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListQuery {
    /// Runs in the page: 1 to `MAX_RUNS_PAGE`, default `DEFAULT_RUNS_PAGE`.
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// `summary` leaves out what a list of runs does not show and what makes it heavy.
    pub fields: Option<String>,
}

impl utoipa::IntoParams for ListQuery {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        use super::api_doc::{integer, query_param, text};
        vec![
            query_param(
                "limit",
                "runs in the page",
                integer()
                    .minimum(Some(1))
                    .maximum(Some(MAX_RUNS_PAGE))
                    .default(Some(json!(DEFAULT_RUNS_PAGE))),
            ),
            query_param("cursor", "next_cursor of the previous page", text()),
            query_param(
                "fields",
                "summary: each run without config, features and best_weights",
                text()
                    .enum_values(Some(["all", "summary"]))
                    .default(Some(json!("all"))),
            ),
        ]
    }
}

/// What `fields=summary` leaves out of each run: its config, feature list and best weights,
/// most of a run's bytes, which a run's own page (`GET /api/runs/{id}`) still has.
pub(crate) const SUMMARY_OMITS: [&str; 3] = ["best_weights", "config", "features"];

/// A cursor is the last run's `created_at` and id, hex-encoded: opaque to clients, and free
/// of the `+` and `:` a query string would mangle.
fn encode_cursor(created_at: &str, id: &str) -> String {
    format!("{created_at}\n{id}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn decode_cursor(cursor: &str) -> Option<(String, String)> {
    if cursor.len() % 2 != 0 || cursor.len() > 512 {
        return None;
    }
    let bytes = (0..cursor.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(cursor.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    let text = String::from_utf8(bytes).ok()?;
    let (created_at, id) = text.split_once('\n')?;
    uuid::Uuid::parse_str(id).ok()?;
    Some((created_at.to_string(), id.to_string()))
}

#[utoipa::path(
    get, path = "/runs", operation_id = "list_runs",
    summary = "List runs, newest first, a page at a time",
    params(ListQuery),
    responses(
        (status = 200, description = "a page of runs, and the cursor of the next page (null after the last)", body = RunsPage),
        super::api_doc::BadRequest, super::api_doc::Invalid,
    )
)]
pub(crate) async fn list(
    State(state): State<SharedState>,
    headers: axum::http::HeaderMap,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Response> {
    let summary = match query.fields.as_deref() {
        None | Some("all") => false,
        Some("summary") => true,
        Some(other) => {
            return Err(ApiError::invalid(
                "fields",
                format!(
                    "must be summary or all, got {:?}",
                    crate::game::excerpt(other)
                ),
            ))
        }
    };
    let limit = query.limit.unwrap_or(DEFAULT_RUNS_PAGE);
    if !(1..=MAX_RUNS_PAGE).contains(&limit) {
        return Err(ApiError::invalid(
            "limit",
            format!("must be 1 to {MAX_RUNS_PAGE}, got {limit}"),
        ));
    }
    let after = match &query.cursor {
        None => None,
        Some(c) => Some(decode_cursor(c).ok_or_else(|| {
            ApiError::invalid(
                "cursor",
                "is not a cursor this server gave: pass next_cursor of the previous page as it came",
            )
        })?),
    };
    // Only the first page as dashboards ask for it is cached: that is what they poll.
    let cacheable = query.cursor.is_none() && query.limit.is_none();
    // The version lives in the database and every process's writes bump it, so a run another
    // server created or advanced is never hidden behind this one's cache. Read it before the
    // rows: a write that lands in between makes the cached copy outdated at once, never newer
    // than its version says.
    let version = if cacheable {
        Some(state.store.list_version().await?)
    } else {
        None
    };
    // Every open runs page polls the first page; when nothing changed since its last copy
    // (the same version, so the same on every server of the database) it is told so in a few
    // bytes instead of being sent the page again.
    // Weak: the same page is sent gzip-compressed or not.
    let etag = version.map(|v| format!("W/\"runs-{v}-{}\"", if summary { "s" } else { "a" }));
    if let Some(etag) = &etag {
        let seen = headers
            .get(header::IF_NONE_MATCH)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| {
                h.split(',')
                    .any(|t| t.trim().trim_start_matches("W/") == etag.trim_start_matches("W/"))
            });
        if seen {
            return Ok((
                StatusCode::NOT_MODIFIED,
                [
                    (header::ETAG, etag.clone()),
                    (header::CACHE_CONTROL, "no-cache".to_string()),
                ],
            )
                .into_response());
        }
    }
    let cached = version.and_then(|version| {
        state.runs_cache.read().ok().and_then(|c| {
            c.as_ref()
                .filter(|(v, s, _)| *v == version && *s == summary)
                .map(|(_, _, b)| b.clone())
        })
    });
    let body = match cached {
        Some(body) => body,
        None => {
            let key = after.as_ref().map(|(c, i)| (c.as_str(), i.as_str()));
            let (runs, next) = state.store.list_runs_page(key, limit).await?;
            let page = RunsPage {
                next_cursor: next.map(|(c, i)| encode_cursor(&c, &i)),
                runs: runs.iter().map(run_view).collect(),
            };
            let mut page = serde_json::to_value(&page).map_err(ApiError::internal)?;
            if summary {
                if let Some(runs) = page.get_mut("runs").and_then(Value::as_array_mut) {
                    for run in runs.iter_mut().filter_map(Value::as_object_mut) {
                        for key in SUMMARY_OMITS {
                            run.remove(key);
                        }
                    }
                }
            }
            let body =
                axum::body::Bytes::from(serde_json::to_string(&page).map_err(ApiError::internal)?);
            if let Some(version) = version {
                if let Ok(mut cache) = state.runs_cache.write() {
                    *cache = Some((version, summary, body.clone()));
                }
            }
            body
        }
    };
    let mut response = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(etag) = etag {
        if let Ok(value) = header::HeaderValue::from_str(&etag) {
            response.headers_mut().insert(header::ETAG, value);
            response.headers_mut().insert(
                header::CACHE_CONTROL,
                header::HeaderValue::from_static("no-cache"),
            );
        }
    }
    Ok(response)
}

/// The run or 404 (an id that is no UUID never gets here: [`RunPath`]).
async fn find(state: &SharedState, id: &str) -> ApiResult<RunRow> {
    state
        .store
        .get_run(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no run {id}")))
}

#[utoipa::path(
    get, path = "/runs/{id}", operation_id = "show_run",
    summary = "Show a run",
    params(("id" = String, Path, description = "the run's id")),
    responses((status = 200, description = "the run", body = RunView), super::api_doc::NotFound)
)]
pub(crate) async fn show(
    State(state): State<SharedState>,
    RunPath(id): RunPath,
) -> ApiResult<Json<RunView>> {
    Ok(Json(run_view(&find(&state, &id).await?)))
}

#[utoipa::path(
    post, path = "/runs/{id}/cancel", operation_id = "cancel_run",
    summary = "Cancel a queued or running run",
    params(("id" = String, Path, description = "the run's id")),
    responses(
        (status = 200, description = "the run, cancelled", body = RunView),
        super::api_doc::NotFound, super::api_doc::Conflict,
    )
)]
pub(crate) async fn cancel(
    State(state): State<SharedState>,
    Extension(caller): Extension<Caller>,
    RunPath(id): RunPath,
) -> ApiResult<Json<RunView>> {
    let run = find(&state, &id).await?;
    check_owner(&caller, &id, run.created_by.as_deref())?;
    if !state.store.cancel(&id).await? {
        return Err(ApiError::conflict(format!(
            "run {id} is {}: only queued or running runs can be cancelled",
            run.status.as_str()
        )));
    }
    tracing::info!(run = %id, "run cancelled");
    state.stop_run_here(&id);
    super::run_events::publish_status(&state, &id).await;
    Ok(Json(run_view(&find(&state, &id).await?)))
}

/// Refuses (403) a caller who may not change run `id`, created by `owner`: on a server with
/// users, only its owner or an admin may.
fn check_owner(caller: &Caller, id: &str, owner: Option<&str>) -> ApiResult<()> {
    if caller.may_change(owner) {
        Ok(())
    } else {
        Err(not_yours(&format!("run {id}"), owner))
    }
}

/// What `PATCH /api/runs/{id}` may change: what the user says about a run, never what it
/// computes.
/// `PATCH /api/runs/{id}`: each part only when given.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DescribeRun {
    /// Empty clears the name.
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    notes: Option<String>,
    /// Up to 20 tags of at most 40 characters: letters, digits, spaces and `-_.:`.
    #[serde(default)]
    tags: Option<Vec<String>>,
}

/// Tags as stored: trimmed, each once, in the order given; letters, digits, spaces and
/// `-_.:` only, so that they read the same in a URL, a CSV and a chip.
fn clean_tags(tags: &[String]) -> ApiResult<Vec<String>> {
    if tags.len() > MAX_TAGS {
        return Err(ApiError::invalid(
            "tags",
            format!("at most {MAX_TAGS} tags, got {}", tags.len()),
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for (i, tag) in tags.iter().enumerate() {
        let tag = tag.trim();
        let field = format!("tags[{i}]");
        if tag.is_empty() || tag.chars().count() > MAX_TAG_CHARS {
            return Err(ApiError::invalid(
                &field,
                format!("a tag has 1 to {MAX_TAG_CHARS} characters"),
            ));
        }
        if let Some(c) = tag
            .chars()
            .find(|c| !(c.is_alphanumeric() || " -_.:".contains(*c)))
        {
            return Err(ApiError::invalid(
                &field,
                format!("{c:?} is not allowed: letters, digits, spaces and -_.: only"),
            ));
        }
        if !out.iter().any(|t| t == tag) {
            out.push(tag.to_string());
        }
    }
    Ok(out)
}

/// Renames a run, or sets its notes or tags; any status.
#[utoipa::path(
    patch, path = "/runs/{id}", operation_id = "describe_run",
    summary = "Rename a run or set its notes and tags (any status; each part only when given)",
    params(("id" = String, Path, description = "the run's id")),
    request_body = DescribeRun,
    responses(
        (status = 200, description = "the run", body = RunView),
        super::api_doc::BadRequest, super::api_doc::NotFound, super::api_doc::Invalid,
    )
)]
pub(crate) async fn describe(
    State(state): State<SharedState>,
    Extension(caller): Extension<Caller>,
    RunPath(id): RunPath,
    ApiJson(body): ApiJson<DescribeRun>,
) -> ApiResult<Json<RunView>> {
    let run = find(&state, &id).await?;
    check_owner(&caller, &id, run.created_by.as_deref())?;
    if let Some(name) = &body.name {
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(ApiError::invalid(
                "name",
                format!("at most {MAX_NAME_CHARS} characters"),
            ));
        }
    }
    if let Some(notes) = &body.notes {
        if notes.chars().count() > MAX_NOTES_CHARS {
            return Err(ApiError::invalid(
                "notes",
                format!("at most {MAX_NOTES_CHARS} characters"),
            ));
        }
    }
    let change = RunDescription {
        name: body.name.map(|n| n.trim().to_string()),
        notes: body.notes,
        tags: body.tags.as_deref().map(clean_tags).transpose()?,
    };
    let run = state
        .store
        .describe_run(&id, &change)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no run {id}")))?;
    super::run_events::publish_status(&state, &id).await;
    Ok(Json(run_view(&run)))
}

#[utoipa::path(
    post, path = "/runs/{id}/resume", operation_id = "resume_run",
    summary = "Queue a cancelled or failed run again; it continues from its last generation",
    params(("id" = String, Path, description = "the run's id")),
    responses(
        (status = 200, description = "the run, queued", body = RunView),
        super::api_doc::NotFound, super::api_doc::Conflict,
    )
)]
pub(crate) async fn resume(
    State(state): State<SharedState>,
    Extension(caller): Extension<Caller>,
    RunPath(id): RunPath,
) -> ApiResult<Json<RunView>> {
    let run = find(&state, &id).await?;
    check_owner(&caller, &id, run.created_by.as_deref())?;
    let Some(queued) = state.store.requeue(&id).await? else {
        return Err(ApiError::conflict(format!(
            "run {id} is {}: only cancelled or failed runs can be resumed",
            run.status.as_str()
        )));
    };
    tracing::info!(run = %id, "run queued again");
    emit_status(&state, &queued);
    state.executor.wake();
    Ok(Json(run_view(&queued)))
}

/// Deletes without reading the run: a run whose stored data no longer reads must still go.
#[utoipa::path(
    delete, path = "/runs/{id}", operation_id = "delete_run",
    summary = "Delete a run and its generations (cancels it first)",
    params(("id" = String, Path, description = "the run's id")),
    responses((status = 204, description = "deleted"), super::api_doc::NotFound)
)]
pub(crate) async fn delete(
    State(state): State<SharedState>,
    Extension(caller): Extension<Caller>,
    RunPath(id): RunPath,
) -> ApiResult<StatusCode> {
    // Only the owner column is read: a run whose other data no longer reads must still go.
    if let Some(owner) = state.store.run_owner(&id).await? {
        check_owner(&caller, &id, owner.as_deref())?;
    }
    // The owner drops the generation under way once it finds the run gone.
    if !state.store.delete_run(&id).await? {
        return Err(ApiError::not_found(format!("no run {id}")));
    }
    tracing::info!(run = %id, "run deleted");
    state.stop_run_here(&id);
    // Its event streams end now rather than at their next look at the database.
    emit(
        &state,
        RunEvent {
            run_id: id.clone(),
            kind: "deleted",
            data: Value::Null,
        },
    );
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
pub(crate) struct SinceQuery {
    since: Option<String>,
    limit: Option<String>,
}

impl utoipa::IntoParams for SinceQuery {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        use super::api_doc::{integer, query_param};
        vec![
            query_param("since", "only generations after this one", integer()),
            query_param(
                "limit",
                "at most this many points; `next_since` says where the next page starts",
                integer()
                    .minimum(Some(1))
                    .maximum(Some(MAX_GENERATIONS_PAGE)),
            ),
        ]
    }
}

/// Most points a page of `/generations` holds.
pub(crate) const MAX_GENERATIONS_PAGE: i64 = 5000;

#[utoipa::path(
    get, path = "/runs/{id}/generations", operation_id = "run_generations",
    summary = "The fitness curve, whole or a page at a time",
    params(("id" = String, Path, description = "the run's id"), SinceQuery),
    responses(
        (status = 200, description = "one point per generation", body = GenerationsPage),
        super::api_doc::BadRequest, super::api_doc::NotFound, super::api_doc::Invalid,
    )
)]
pub(crate) async fn generations(
    State(state): State<SharedState>,
    RunPath(id): RunPath,
    ApiQuery(q): ApiQuery<SinceQuery>,
) -> ApiResult<Json<GenerationsPage>> {
    find(&state, &id).await?;
    let since = match q.since.as_deref() {
        None | Some("") => None,
        Some(s) => Some(s.parse::<i64>().map_err(|_| {
            ApiError::invalid("since", format!("must be a generation number, got {s:?}"))
        })?),
    };
    let limit = match q.limit.as_deref() {
        None | Some("") => None,
        Some(s) => match s.parse::<i64>() {
            Ok(n) if (1..=MAX_GENERATIONS_PAGE).contains(&n) => Some(n),
            _ => {
                return Err(ApiError::invalid(
                    "limit",
                    format!(
                        "must be 1 to {MAX_GENERATIONS_PAGE}, got {:?}",
                        crate::game::excerpt(s)
                    ),
                ))
            }
        },
    };
    // One point more than asked tells whether another page follows.
    let mut points = state
        .store
        .generation_points_page(&id, since, limit.map(|n| n + 1))
        .await?;
    let next = match limit {
        Some(n) if points.len() as i64 > n => {
            points.truncate(n as usize);
            points.last().map(|p| p.curve.generation)
        }
        _ => None,
    };
    Ok(Json(GenerationsPage {
        generations: serde_json::to_value(&points).map_err(ApiError::internal)?,
        next_since: next,
        run_id: id,
    }))
}

/// `GET /api/runs/{id}/generations`: the fitness curve, or a page of it. Fields in
/// alphabetical order, the order the API's objects have always had.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct GenerationsPage {
    /// One point per generation, oldest first.
    #[schema(schema_with = super::schemas::generation_points)]
    generations: Value,
    /// When a limit cut the page short: the `since` of the next page.
    next_since: Option<u32>,
    run_id: String,
}

#[utoipa::path(
    get, path = "/runs/{id}/generations/{g}", operation_id = "run_generation",
    summary = "A generation's full record: every individual's weights and fitness",
    params(("id" = String, Path, description = "the run's id"), ("g" = i64, Path, description = "the generation's number")),
    responses(
        (status = 200, description = "the record", body = super::api_doc::GenerationRecordSchema),
        super::api_doc::NotFound,
    )
)]
pub(crate) async fn generation(
    State(state): State<SharedState>,
    RunPath(id): RunPath,
    ApiPath((_, g)): ApiPath<(String, String)>,
) -> ApiResult<Json<Value>> {
    let run = find(&state, &id).await?;
    let g: i64 = g.parse().map_err(|_| {
        ApiError::not_found(format!("no generation {g:?}: generations are numbers"))
    })?;
    let record = state
        .store
        .record(&id, g)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("run {id} has no generation {g} yet")))?;
    let mut value = serde_json::to_value(&record).map_err(ApiError::internal)?;
    if let Some(map) = value.as_object_mut() {
        map.insert("features".into(), run.features.clone());
        map.insert("run_id".into(), json!(id));
    }
    Ok(Json(value))
}

/// The export document of a run's generations so far.
pub(crate) async fn export_document(
    state: &SharedState,
    run: &RunRow,
) -> ApiResult<ExportDocument> {
    let config = run
        .config()
        .map_err(|e| ApiError::conflict(format!("run {} cannot be exported: {e}", run.id)))?;
    let records = state.store.records(&run.id).await?;
    if records.is_empty() {
        return Err(ApiError::conflict(format!(
            "run {} has no finished generation to export yet",
            run.id
        )));
    }
    config.export(&records).map_err(ApiError::internal)
}

#[utoipa::path(
    get, path = "/runs/{id}/export", operation_id = "export_run",
    summary = "The export document (as a download)",
    params(("id" = String, Path, description = "the run's id")),
    responses(
        (status = 200, description = "the export document", body = super::api_doc::ExportDocumentSchema),
        super::api_doc::NotFound, super::api_doc::Conflict,
    )
)]
pub(crate) async fn export(
    State(state): State<SharedState>,
    RunPath(id): RunPath,
) -> ApiResult<Response> {
    let run = find(&state, &id).await?;
    let doc = export_document(&state, &run).await?;
    let disposition = format!("attachment; filename=\"kalah-tuner-{id}.json\"");
    Ok((
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        doc.to_json_pretty(),
    )
        .into_response())
}

/// How often an open event stream reads its run from the database: the run may end where
/// this process hears nothing of it (the broadcast lagged, or the database was changed by
/// hand, which bumps no version).
const STREAM_RECHECK: Duration = Duration::from_secs(5);

/// One client's view of a run's events, ended by the run's end.
struct Follow {
    state: SharedState,
    id: String,
    out: Outbox,
    /// Keeps the run's events coming from the database while the stream is open.
    _following: Following,
}

impl Follow {
    /// Queues `status` and `end` once the run has ended; for a deleted run, `end` alone.
    fn close_with(&mut self, run: Option<&RunRow>) {
        match run {
            Some(run) => {
                self.out
                    .queue
                    .push_back(sse_event("status", &run_json(run)));
                self.out
                    .queue
                    .push_back(end_event(&self.id, run.status.as_str()));
            }
            None => self.out.queue.push_back(end_event(&self.id, "deleted")),
        }
        self.out.ended = true;
    }
}

impl RunStream for Follow {
    fn outbox(&mut self) -> &mut Outbox {
        &mut self.out
    }

    async fn recheck(&mut self) {
        match self.state.store.get_run(&self.id).await {
            Ok(Some(run)) if is_terminal(run.status.as_str()) => self.close_with(Some(&run)),
            Ok(None) => self.close_with(None),
            // Still going, or the database did not answer: the next check may tell.
            _ => {}
        }
    }

    fn take(&mut self, ev: RunEvent) {
        if ev.run_id != self.id {
            return;
        }
        if ev.kind == "deleted" {
            self.close_with(None);
            return;
        }
        self.out.queue.push_back(sse_event(ev.kind, &ev.data));
        let status = ev.data.get("status").and_then(Value::as_str);
        if ev.kind == "status" && status.is_some_and(is_terminal) {
            let end = end_event(&self.id, status.unwrap_or_default());
            self.out.queue.push_back(end);
            self.out.ended = true;
        }
    }
}

/// Server-sent events: first a `status` event with the run as it is, then a `generation`
/// event per new generation and a `status` event per status change, whichever server on the
/// database made them (see `super::run_events`); once the run has ended
/// (finished, failed, cancelled, deleted) an `end` event, and the stream closes. A run that
/// has already ended gets its `status` and `end` at once.
#[utoipa::path(
    get, path = "/runs/{id}/events", operation_id = "run_events",
    summary = "Server-sent events: `status` (data: the run; sent first on connect), `generation` (data: a generation point plus run_id), and once the run has ended (finished, failed, cancelled or deleted; at once for a run that already has) `end` (data: run_id and status), after which the stream closes",
    params(("id" = String, Path, description = "the run's id")),
    responses(
        (status = 200, description = "an event stream", content_type = "text/event-stream", body = super::api_doc::StreamEventSchema),
        super::api_doc::NotFound,
    )
)]
pub(crate) async fn events(
    State(state): State<SharedState>,
    RunPath(id): RunPath,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let seat = stream_seat(&state)?;
    // Subscribe before reading the run so that nothing between the two is missed.
    let out = Outbox::new(state.events.subscribe(), STREAM_RECHECK, None);
    let run = find(&state, &id).await?;
    let shown = run_json(&run);
    let following = Following::new(state.clone(), &id, run.generations_done, &shown);
    let mut follow = Follow {
        state: state.clone(),
        id,
        out,
        _following: following,
    };
    if is_terminal(run.status.as_str()) {
        follow.close_with(Some(&run));
    } else {
        follow.out.queue.push_back(sse_event("status", &shown));
    }
    Ok(sse(&state, follow, seat))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::TunerConfig;

    fn run(status: RunStatus, done: u32, processor_seconds: Option<f64>) -> RunRow {
        RunRow {
            id: "r".into(),
            name: None,
            status,
            preset: None,
            config: crate::tune::load_tuner(None, None, &[], &crate::agents::FileAccess::None).ok(),
            config_raw: None,
            unreadable: None,
            features: serde_json::json!([]),
            generations_total: 10,
            generations_done: done,
            best_fitness: None,
            best_weights: None,
            created_at: String::new(),
            started_at: None,
            finished_at: None,
            error: None,
            stop_reason: None,
            notes: String::new(),
            tags: Vec::new(),
            claim: 0,
            created_by: Some("u".into()),
            processor_seconds,
        }
    }

    #[test]
    fn quotas_count_measured_time_for_work_done_and_the_estimate_for_the_rest() {
        let estimate = run(RunStatus::Queued, 0, Some(0.0))
            .config
            .as_ref()
            .map(TunerConfig::estimated_core_hours)
            .unwrap_or_default();
        assert!(estimate > 0.0);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        // Queued: the whole estimate.
        assert!(close(
            core_hours_of(&run(RunStatus::Queued, 0, Some(0.0))),
            estimate
        ));
        // Running, 4 of 10 records made in 1,800 s: half an hour and the rest's estimate.
        assert!(close(
            core_hours_of(&run(RunStatus::Running, 4, Some(1800.0))),
            0.5 + 0.6 * estimate
        ));
        // Ended, however far it got: what it used.
        for status in [RunStatus::Finished, RunStatus::Cancelled, RunStatus::Failed] {
            assert!(close(core_hours_of(&run(status, 4, Some(7200.0))), 2.0));
        }
        // Stored before it was measured: the estimate of the records it made.
        assert!(close(
            core_hours_of(&run(RunStatus::Finished, 4, None)),
            0.4 * estimate
        ));
    }
}
