//! SPRT tests as objects of their own, as Fishtest and OpenBench have them: started with
//! `POST /api/sprt-tests` (two agents, elo0 and elo1), played in the background on the game
//! pool, watched through `GET /api/sprt-tests/{id}` (the pentanomial counts, the LLR after
//! every batch of pairs with its bounds, the Elo estimate), and over on their own once the
//! LLR leaves its bounds, or stopped with `POST /api/sprt-tests/{id}/cancel`.
//!
//! They live in the memory of the server that plays them: a restart forgets them, and another
//! server on the same database does not list them. A finished test's report is the one
//! `POST /api/matches` with `sprt` answers with.

use std::collections::VecDeque;
use std::sync::{Arc, LazyLock, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::agents::resolve_agent;
use super::compute::{background_turn, compute_in_background};
use super::error::{ApiError, ApiJson, ApiPath, ApiResult};
use super::matches::{check_cost, parse_sprt, setup_of, BoardBody, CostCap, MAX_SPRT_PAIRS};
use super::state::SharedState;
use crate::agents::Profile;
use crate::matches::sprt::{play_sprt_within, Pentanomial, SprtReport, Verdict};
use crate::search::Budget;

/// Tests a server keeps; the oldest finished one is forgotten past this.
const KEPT: usize = 100;
/// Tests one server plays at once: each holds a game-pool permit while it plays.
const MAX_RUNNING: usize = 4;

/// `POST /api/sprt-tests`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SprtTestRequest {
    /// The agent under test.
    #[schema(schema_with = super::schemas::api_agent)]
    a: Value,
    /// The agent it is measured against.
    #[schema(schema_with = super::schemas::api_agent)]
    b: Value,
    /// `"0,10"` or `{"elo0": 0, "elo1": 10, "alpha": 0.05, "beta": 0.05}`.
    #[schema(schema_with = super::schemas::sprt)]
    sprt: Value,
    /// The most pairs before the test stops inconclusive (default 1000).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 2000)]
    max_pairs: Option<u64>,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    #[schema(maximum = 30)]
    opening_plies: u32,
    #[serde(default)]
    board: Option<BoardBody>,
    #[serde(default)]
    #[schema(value_type = Option<crate::game::Rules>)]
    rules: Option<String>,
    #[serde(default)]
    pie: bool,
    /// A name to show instead of the agents' specs.
    #[serde(default)]
    #[schema(max_length = 200)]
    name: Option<String>,
}

/// One point of the LLR's path: after `pairs` pairs.
#[derive(Clone, Copy, Debug, Serialize)]
struct LlrPoint {
    pairs: u64,
    llr: f64,
}

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
    budget: Budget,
}

impl Test {
    fn to_json(&self, with_history: bool) -> Value {
        let mut value = json!({
            "id": self.id,
            "name": self.name,
            "a": self.a,
            "b": self.b,
            "status": self.status,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "max_pairs": self.max_pairs,
            "progress": self.report.pairs as f64 / self.max_pairs.max(1) as f64,
            "error": self.error,
            "report": self.report,
        });
        if with_history {
            value["history"] = json!(self.history);
        }
        value
    }
}

type Shared = Arc<Mutex<Test>>;

/// The tests of this process, newest last.
static TESTS: LazyLock<Mutex<VecDeque<Shared>>> = LazyLock::new(|| Mutex::new(VecDeque::new()));

fn tests() -> std::sync::MutexGuard<'static, VecDeque<Shared>> {
    // A panic while holding the lock leaves plain data behind: still readable.
    TESTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn lock(test: &Shared) -> std::sync::MutexGuard<'_, Test> {
    test.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn find(id: &str) -> ApiResult<Shared> {
    tests()
        .iter()
        .find(|t| lock(t).id == id)
        .cloned()
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no SPRT test {:?} on this server",
                crate::game::excerpt(id)
            ))
        })
}

pub async fn start(
    State(state): State<SharedState>,
    ApiJson(req): ApiJson<SprtTestRequest>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let setup = setup_of(
        req.board,
        req.rules.as_deref(),
        req.pie,
        req.opening_plies,
        req.seed,
    )?;
    let sprt = parse_sprt(&req.sprt)?;
    let max_pairs = req.max_pairs.unwrap_or(MAX_SPRT_PAIRS / 2);
    if max_pairs == 0 || max_pairs > MAX_SPRT_PAIRS {
        return Err(ApiError::invalid(
            "max_pairs",
            format!("must be 1 to {MAX_SPRT_PAIRS}, got {max_pairs}"),
        ));
    }
    if let Some(name) = &req.name {
        if name.chars().count() > 200 {
            return Err(ApiError::invalid("name", "at most 200 characters"));
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
    let (lower, upper) = sprt.bounds();
    let budget = Profile::Api.limits().tournament_budget();
    let test = Arc::new(Mutex::new(Test {
        id: uuid::Uuid::now_v7().to_string(),
        name: req.name.filter(|n| !n.trim().is_empty()),
        a: a.to_string(),
        b: b.to_string(),
        created_at: crate::store::now_rfc3339(),
        finished_at: None,
        status: "running",
        max_pairs,
        report: SprtReport {
            a: a.to_string(),
            b: b.to_string(),
            setup: setup.clone(),
            sprt,
            counts: Default::default(),
            pairs: 0,
            games: 0,
            llr: 0.0,
            lower_bound: lower,
            upper_bound: upper,
            verdict: Verdict::Inconclusive,
            estimate: Pentanomial::default().estimate(),
        },
        history: vec![LlrPoint { pairs: 0, llr: 0.0 }],
        error: None,
        budget: budget.clone(),
    }));
    {
        let mut all = tests();
        let running = all.iter().filter(|t| lock(t).status == "running").count();
        if running >= MAX_RUNNING {
            return Err(ApiError::conflict(format!(
                "{running} SPRT tests are playing on this server, the most it plays at once: stop one or wait"
            )));
        }
        all.push_back(test.clone());
        while all.len() > KEPT {
            // The oldest test that is over goes; running ones stay.
            match all.iter().position(|t| lock(t).status != "running") {
                Some(i) => {
                    all.remove(i);
                }
                None => break,
            }
        }
    }
    let body = lock(&test).to_json(true);
    let files = state.files.clone();
    let playing = test.clone();
    tokio::spawn(async move {
        let bounds = budget.clone();
        let watched = playing.clone();
        // Its turn on the tournaments' share of the cores, waited for under its budget.
        let turn = background_turn(&state, &budget).await;
        let result = match turn {
            Err(e) => Err(e),
            Ok(permit) => {
                compute_in_background(&state, permit, move || {
                    let a = a.locate(&files).map_err(|e| e.to_string())?;
                    let b = b.locate(&files).map_err(|e| e.to_string())?;
                    play_sprt_within(
                        &a,
                        &b,
                        &setup,
                        sprt,
                        max_pairs,
                        |report| {
                            let mut t = lock(&watched);
                            t.history.push(LlrPoint {
                                pairs: report.pairs,
                                llr: report.llr,
                            });
                            t.report = report.clone();
                        },
                        &bounds,
                    )
                    .map_err(|e| e.to_string())
                })
                .await
            }
        };
        let mut t = lock(&playing);
        t.finished_at = Some(crate::store::now_rfc3339());
        match result {
            Ok(Ok(report)) => {
                t.report = report;
                t.status = "finished";
            }
            // A cancel already said so; any other stop is a failure with its reason.
            _ if t.status == "cancelled" => {}
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
    });
    Ok((StatusCode::ACCEPTED, Json(body)))
}

pub async fn list() -> Json<Value> {
    let all: Vec<Value> = tests()
        .iter()
        .rev()
        .map(|t| lock(t).to_json(false))
        .collect();
    Json(json!({ "tests": all }))
}

pub async fn show(ApiPath(id): ApiPath<String>) -> ApiResult<Json<Value>> {
    let test = find(&id)?;
    let value = lock(&test).to_json(true);
    Ok(Json(value))
}

pub async fn cancel(ApiPath(id): ApiPath<String>) -> ApiResult<Json<Value>> {
    let test = find(&id)?;
    let mut t = lock(&test);
    if t.status != "running" {
        return Err(ApiError::conflict(format!(
            "SPRT test {id} is {}, not running",
            t.status
        )));
    }
    t.status = "cancelled";
    t.budget.cancel();
    tracing::info!(test = %id, "SPRT test cancelled");
    Ok(Json(t.to_json(true)))
}
