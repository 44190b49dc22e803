//! SPRT tests as objects of their own, as Fishtest and OpenBench have them: started with
//! `POST /api/sprt-tests` (two agents, elo0 and elo1), played in the background on the game
//! pool, watched through `GET /api/sprt-tests/{id}` (the pentanomial counts, the LLR after
//! every batch of pairs with its bounds, the Elo estimate), and over on their own once the
//! LLR leaves its bounds, or stopped with `POST /api/sprt-tests/{id}/cancel`.
//!
//! The database is where every server reads them, as with tournaments: the server that took
//! the request plays the test and writes its report and LLR path at each heartbeat; any
//! server lists, shows and cancels it (the owner reads the cancel at its next beat). A
//! stopping server marks its tests failed and waits for their tasks; a test whose server died
//! is marked failed once its heartbeat is stale. A finished test's report is the one
//! `POST /api/matches` with `sprt` answers with.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agents::resolve_agent;
use super::compute::{background_turn, compute_in_background};
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use super::guard::Caller;
use super::matches::{check_cost, setup_of, BoardBody, CostCap, SprtBounds, MAX_SPRT_PAIRS};
use super::played::{self, keep_playing, read_failing_abandoned};
use super::state::SharedState;
use crate::agents::{Profile, Stopped};
use crate::game::Rules;
use crate::matches::sprt::{play_sprt_counted, SprtReport};
use crate::store::{Played, PlayedRow};

/// Tests `GET /api/sprt-tests` lists.
const LISTED: u32 = 100;
/// Tests one server plays at once: each holds a game-pool permit while it plays.
const MAX_RUNNING: usize = 4;
/// What a test whose server stopped says: its games were played in that server's memory.
const STOPPED_BEFORE_THE_END: &str =
    "the server playing this SPRT test stopped before it finished; start it again";

/// Tests this process plays now, against [`MAX_RUNNING`].
static PLAYING: AtomicUsize = AtomicUsize::new(0);

/// One of the [`PLAYING`] places, given back when the test's task ends however it ends.
struct Seat;

impl Seat {
    fn take() -> Option<Seat> {
        PLAYING
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_RUNNING).then_some(n + 1)
            })
            .ok()
            .map(|_| Seat)
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        PLAYING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `POST /api/sprt-tests`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SprtTestRequest {
    /// The agent under test.
    #[schema(schema_with = super::schemas::api_agent)]
    a: Value,
    /// The agent it is measured against.
    #[schema(schema_with = super::schemas::api_agent)]
    b: Value,
    /// `"0,10"` or `{"elo0": 0, "elo1": 10, "alpha": 0.05, "beta": 0.05}`.
    #[schema(schema_with = super::schemas::sprt)]
    sprt: SprtBounds,
    /// The most pairs before the test stops inconclusive (default 1000).
    #[serde(default)]
    #[schema(minimum = 1)]
    max_pairs: Option<u64>,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    opening_plies: u32,
    #[serde(default)]
    board: Option<BoardBody>,
    #[serde(default, deserialize_with = "super::moves::rules_by_name")]
    rules: Option<Rules>,
    #[serde(default)]
    pie: bool,
    /// A name to show instead of the agents' specs.
    #[serde(default)]
    name: Option<String>,
}

/// One point of the LLR's path: after `pairs` pairs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct LlrPoint {
    llr: f64,
    pairs: u64,
}

/// An SPRT test as the API answers it and the database stores it (its state document, with
/// the row's status, error, progress and end time shown over it: any server may change
/// those). Fields in alphabetical order, the order the API's objects have always had.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = SprtTest)]
pub(crate) struct SprtTestView {
    /// The agent under test, as a spec.
    a: String,
    /// The agent it is measured against.
    b: String,
    #[schema(format = DateTime)]
    created_at: String,
    error: Option<String>,
    finished_at: Option<String>,
    /// The LLR after every batch of pairs, from 0 (not in the list of tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    history: Option<Vec<LlrPoint>>,
    id: String,
    max_pairs: u64,
    name: Option<String>,
    /// The user who started it, on a server with users: only they or an admin may stop it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
    /// Games played so far, those of the batch under way included (the report counts whole
    /// batches: its LLR moves when a batch of 64 pairs ends). Absent in tests stored by an
    /// older server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    games_played: Option<u64>,
    #[schema(minimum = 0, maximum = 1)]
    progress: f64,
    /// The pentanomial counts, the LLR with its bounds, the verdict and the Elo estimate.
    #[schema(value_type = super::schemas::SprtReportSchema)]
    report: Value,
    #[schema(schema_with = super::schemas::played_status)]
    status: String,
}

/// `GET /api/sprt-tests`: the newest first, without their LLR paths.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct SprtTestList {
    tests: Vec<SprtTestView>,
}

/// A test as its owner holds it while it plays; what is stored is [`Test::view`].
#[derive(Debug)]
struct Test {
    id: String,
    name: Option<String>,
    a: String,
    b: String,
    created_at: String,
    finished_at: Option<String>,
    /// running | finished | cancelled | failed
    status: &'static str,
    max_pairs: u64,
    report: SprtReport,
    history: Vec<LlrPoint>,
    error: Option<String>,
    /// Games played, counted as each ends.
    games_played: Arc<AtomicU64>,
    /// The user who started it.
    owner: Option<String>,
}

impl Test {
    fn progress(&self) -> f64 {
        self.report.pairs as f64 / self.max_pairs.max(1) as f64
    }

    fn view(&self) -> SprtTestView {
        SprtTestView {
            a: self.a.clone(),
            b: self.b.clone(),
            created_at: self.created_at.clone(),
            error: self.error.clone(),
            finished_at: self.finished_at.clone(),
            history: Some(self.history.clone()),
            id: self.id.clone(),
            max_pairs: self.max_pairs,
            name: self.name.clone(),
            owner: self.owner.clone(),
            games_played: Some(
                self.games_played
                    .load(Ordering::Relaxed)
                    .max(self.report.games),
            ),
            progress: self.progress(),
            report: serde_json::to_value(&self.report).unwrap_or(Value::Null),
            status: self.status.to_string(),
        }
    }

    fn to_json(&self) -> Value {
        serde_json::to_value(self.view()).unwrap_or(Value::Null)
    }

    fn stored(&self) -> PlayedRow {
        PlayedRow {
            id: self.id.clone(),
            created_at: self.created_at.clone(),
            finished_at: self.finished_at.clone(),
            status: self.status.to_string(),
            error: self.error.clone(),
            progress: self.progress(),
            heartbeat_at: None,
            state: self.to_json(),
            created_by: self.owner.clone(),
        }
    }
}

fn lock(test: &Mutex<Test>) -> std::sync::MutexGuard<'_, Test> {
    // A panic while holding the lock leaves plain data behind: still readable.
    test.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A stored test as the API shows it: its state with the stored status, error, progress and
/// end time, which any server may have changed (a cancel, a dead owner given up).
fn shown(t: PlayedRow, with_history: bool) -> ApiResult<SprtTestView> {
    let mut shown: SprtTestView = serde_json::from_value(t.state).map_err(|e| {
        ApiError::internal(format!("SPRT test {} as stored does not read: {e}", t.id))
    })?;
    shown.status = t.status;
    shown.error = t.error;
    shown.progress = t.progress;
    shown.finished_at = t.finished_at;
    shown.owner = t.created_by;
    if !with_history {
        shown.history = None;
    }
    Ok(shown)
}

#[utoipa::path(
    post, path = "/sprt-tests", operation_id = "start_sprt_test",
    summary = "Start an SPRT test of agent a against agent b, played in the background until the LLR leaves its bounds",
    request_body = SprtTestRequest,
    responses(
        (status = 202, description = "started", body = SprtTestView, links(
            ("GetSprtTest" = (operation_id = "show_sprt_test", parameters(("id" = "$response.body#/id")))),
            ("CancelSprtTest" = (operation_id = "cancel_sprt_test", parameters(("id" = "$response.body#/id")))),
        )),
        super::api_doc::BadRequest, super::api_doc::Conflict, super::api_doc::Invalid,
    )
)]
pub(crate) async fn start(
    State(state): State<SharedState>,
    Extension(caller): Extension<Caller>,
    ApiJson(req): ApiJson<SprtTestRequest>,
) -> ApiResult<(StatusCode, Json<SprtTestView>)> {
    let setup = setup_of(req.board, req.rules, req.pie, req.opening_plies, req.seed)?;
    let SprtBounds(sprt) = req.sprt;
    let max_pairs = req.max_pairs.unwrap_or(MAX_SPRT_PAIRS / 2);
    if max_pairs == 0 || max_pairs > MAX_SPRT_PAIRS {
        return Err(ApiError::invalid(
            "max_pairs",
            format!("must be 1 to {MAX_SPRT_PAIRS}, got {max_pairs}"),
        ));
    }
    if let Some(name) = &req.name {
        if name.chars().count() > super::runs::MAX_NAME_CHARS {
            return Err(ApiError::invalid(
                "name",
                format!("at most {} characters", super::runs::MAX_NAME_CHARS),
            ));
        }
    }
    let a = resolve_agent(&state, "a", &req.a).await?;
    let b = resolve_agent(&state, "b", &req.b).await?;
    check_cost(
        "max_pairs",
        &[(&a, &b, 2 * max_pairs)],
        &setup,
        CostCap::Tournament,
    )?;
    let test = Test {
        id: uuid::Uuid::now_v7().to_string(),
        name: req.name.filter(|n| !n.trim().is_empty()),
        a: a.to_string(),
        b: b.to_string(),
        created_at: crate::store::now_rfc3339(),
        finished_at: None,
        status: "running",
        max_pairs,
        report: SprtReport::start(&a, &b, &setup, sprt),
        history: vec![LlrPoint { pairs: 0, llr: 0.0 }],
        error: None,
        games_played: Arc::new(AtomicU64::new(0)),
        owner: caller.owner(),
    };
    let Some(seat) = Seat::take() else {
        return Err(ApiError::conflict(format!(
            "{MAX_RUNNING} SPRT tests are playing on this server, the most it plays at once: stop one or wait"
        )));
    };
    let stored = test.stored();
    let body = test.view();
    let mut tasks = state.tournament_tasks.lock().await;
    while tasks.try_join_next().is_some() {}
    state
        .store
        .create_played(Played::SprtTest, &stored, &state.owner)
        .await?;
    let test = Arc::new(Mutex::new(test));
    let counter = lock(&test).games_played.clone();
    let (files, playing) = (state.files.clone(), test.clone());
    let budget = Profile::Api.limits().tournament_budget();
    let (id, beating) = (stored.id.clone(), test.clone());
    let beat = tokio::spawn(keep_playing(
        state.clone(),
        Played::SprtTest,
        id,
        budget.clone(),
        move || {
            let t = lock(&beating);
            (t.progress(), Some(t.to_json()))
        },
    ));
    let task_state = state.clone();
    tasks.spawn(async move {
        let _seat = seat;
        let bounds = budget.clone();
        // Its turn on the tournaments' share of the cores, waited for under its budget.
        let turn = background_turn(&task_state, &budget).await;
        let result = match turn {
            Err(e) => Err(e),
            Ok(permit) => compute_in_background(permit, move || {
            let a = a.locate(&files).map_err(|e| e.to_string())?;
            let b = b.locate(&files).map_err(|e| e.to_string())?;
            play_sprt_counted(
                &a,
                &b,
                &setup,
                sprt,
                max_pairs,
                |report| {
                    let mut t = lock(&playing);
                    t.history.push(LlrPoint {
                        pairs: report.pairs,
                        llr: report.llr,
                    });
                    t.report = report.clone();
                },
                &bounds,
                &counter,
            )
            .map_err(|e| e.to_string())
            })
            .await,
        };
        beat.abort();
        let ended = {
            let mut t = lock(&test);
            t.finished_at = Some(crate::store::now_rfc3339());
            match result {
                Ok(Ok(report)) => {
                    t.report = report;
                    t.status = "finished";
                }
                // Stopped by the process's stop: it cannot be finished later.
                _ if task_state.is_stopping() => {
                    t.status = "failed";
                    t.error = Some(STOPPED_BEFORE_THE_END.into());
                }
                // A cancel stored itself; this write does not change a cancelled row.
                _ if matches!(budget.stopped(), Some(Stopped::Cancelled)) => t.status = "cancelled",
                Ok(Err(e)) => {
                    t.status = "failed";
                    t.error = Some(e);
                }
                Err(e) => {
                    t.status = "failed";
                    t.error = Some(e.message);
                }
            }
            tracing::info!(test = %t.id, status = t.status, pairs = t.report.pairs, "SPRT test over");
            t.stored()
        };
        if let Err(e) = task_state
            .store
            .end_played(Played::SprtTest, &ended, &task_state.owner)
            .await
        {
            tracing::error!(test = %ended.id, "storing the ended SPRT test: {e}");
        }
    });
    drop(tasks);
    Ok((StatusCode::ACCEPTED, Json(body)))
}

/// The newest tests of every server on the database, newest first, without their LLR paths.
#[utoipa::path(
    get, path = "/sprt-tests", operation_id = "list_sprt_tests",
    summary = "The SPRT tests of every server on the database (the newest 100), newest first, without their LLR paths",
    responses((status = 200, description = "the tests", body = SprtTestList))
)]
pub(crate) async fn list(State(state): State<SharedState>) -> ApiResult<Json<SprtTestList>> {
    let stored = read_failing_abandoned(
        &state,
        Played::SprtTest,
        || state.store.list_played(Played::SprtTest, LISTED),
        Vec::as_slice,
    )
    .await?;
    let tests = stored
        .into_iter()
        .map(|t| shown(t, false))
        .collect::<ApiResult<_>>()?;
    Ok(Json(SprtTestList { tests }))
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("no SPRT test {:?}", crate::game::excerpt(id)))
}

/// A test, from the database: the same on every server, while it plays and after.
#[utoipa::path(
    get, path = "/sprt-tests/{id}", operation_id = "show_sprt_test",
    summary = "An SPRT test: counts, LLR and its path, bounds, verdict, Elo",
    params(("id" = String, Path, description = "the test's id")),
    responses((status = 200, description = "the test", body = SprtTestView), super::api_doc::NotFound)
)]
pub(crate) async fn show(
    State(state): State<SharedState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SprtTestView>> {
    let t = played::show(&state, Played::SprtTest, &id, || not_found(&id)).await?;
    Ok(Json(shown(t, true)?))
}

/// Stops a running test, whichever server plays it: stored as `cancelled` at once, with the
/// report of the owner's last beat; the owner stops its games within a beat. 409 when it is
/// over, 404 when there is no such test.
#[utoipa::path(
    post, path = "/sprt-tests/{id}/cancel", operation_id = "cancel_sprt_test",
    summary = "Stop a running SPRT test: the batch under way finishes, the rest is not played",
    params(("id" = String, Path, description = "the test's id")),
    responses(
        (status = 200, description = "the test, cancelled", body = SprtTestView),
        super::api_doc::NotFound, super::api_doc::Conflict,
    )
)]
pub(crate) async fn cancel(
    State(state): State<SharedState>,
    Extension(caller): Extension<Caller>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SprtTestView>> {
    let over =
        |status: &str| ApiError::conflict(format!("SPRT test {id} is {status}, not running"));
    let t = played::cancel(
        &state,
        &caller,
        Played::SprtTest,
        &id,
        || not_found(&id),
        over,
    )
    .await?;
    Ok(Json(shown(t, true)?))
}
