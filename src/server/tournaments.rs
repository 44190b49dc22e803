//! Round-robin tournaments over HTTP: started by one request, played in the background,
//! read by id while they run, and stored in the database when they start and when they end,
//! so that they are listed and reopened after a restart.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::agents::resolve_agent;
use super::error::{ApiError, ApiJson, ApiPath, ApiResult};
use super::matches::{check_cost, parse_sprt, setup_of, BoardBody, CostCap};
use super::{compute_in_background, SharedState};
use crate::agents::{Profile, Stopped};
use crate::matches::tournament::TournamentSprt;
use crate::matches::{
    play_tournament_until, MatchError, Tally, TournamentConfig, TournamentReport,
};
use crate::search::Budget;
use crate::store::StoredTournament;

/// Most games per pairing in a tournament.
pub const MAX_TOURNAMENT_GAMES: u32 = 100;
/// Most agents in a tournament.
pub const MAX_TOURNAMENT_AGENTS: usize = 8;
/// Tournaments kept in memory.
const KEEP_TOURNAMENTS: usize = 100;

/// A tournament started through the API: in memory while it runs, and in the database.
#[derive(Clone, Debug, Serialize)]
pub struct TournamentState {
    pub id: String,
    pub status: &'static str,
    pub agents: Vec<String>,
    /// The agents' display names, as the request gave them (else the specs).
    pub names: Vec<String>,
    pub games: u32,
    pub seed: u64,
    pub table: Vec<Vec<Option<Value>>>,
    pub scores: Vec<Value>,
    pub progress: f64,
    pub games_per_pairing: u32,
    /// With `sprt`: each pairing's test (verdict, LLR, bounds, Elo), once finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sprt: Option<TournamentSprt>,
    pub error: Option<String>,
    pub created_at: String,
    #[serde(skip)]
    pub order: u64,
    /// Set by `POST /api/tournaments/{id}/cancel`; the games look at it.
    #[serde(skip)]
    pub cancel: Budget,
}

fn default_tournament_games() -> u32 {
    20
}

/// `POST /api/tournaments`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TournamentRequest {
    #[schema(schema_with = super::openapi::api_agent_list)]
    agents: Vec<Value>,
    /// Games of each pairing (default 20), in colour-swapped pairs; the cap of an SPRT.
    #[serde(default = "default_tournament_games")]
    #[schema(minimum = 2, maximum = 100, multiple_of = 2)]
    games: u32,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    #[schema(maximum = 30)]
    opening_plies: u32,
    /// Each agent also plays itself (not with `sprt`).
    #[serde(default)]
    self_play: bool,
    #[serde(default)]
    board: Option<BoardBody>,
    #[serde(default)]
    #[schema(value_type = Option<crate::game::Rules>)]
    rules: Option<String>,
    /// The pie rule (DESIGN.md section 9).
    #[serde(default)]
    pie: bool,
    /// Play each pairing as an SPRT, with `games` as its cap.
    #[serde(default)]
    #[schema(schema_with = super::openapi::sprt)]
    sprt: Option<Value>,
    /// Display names of the agents, in their order (the dashboard's short names), 1 to 60
    /// characters each.
    #[serde(default)]
    names: Option<Vec<String>>,
}

/// Longest display name of a tournament's agent.
const MAX_AGENT_NAME_CHARS: usize = 60;
/// Tournaments `GET /api/tournaments` lists.
const LIST_TOURNAMENTS: u32 = 100;

/// Starts a tournament in the background and answers its id at once (202).
pub async fn start(
    State(state): State<SharedState>,
    ApiJson(req): ApiJson<TournamentRequest>,
) -> ApiResult<Response> {
    let config = tournament_config(&state, &req).await?;
    let names = display_names(&req, &config)?;
    let id = uuid::Uuid::new_v4().to_string();
    let entry = register(&state, &id, &config, names)?;
    save(&state, &entry).await?;
    let task_state = state.clone();
    let task_id = id.clone();
    let files = state.files.clone();
    let cancel = entry.cancel.clone();
    let waiting = cancel.clone();
    tokio::spawn(async move {
        let result = compute_in_background(&task_state, &waiting, move || {
            // Located here, on the game pool: locating a model looks at the disk.
            let agents = config
                .agents
                .iter()
                .map(|s| s.locate(&files))
                .collect::<Result<Vec<_>, _>>()?;
            play_tournament_until(&TournamentConfig { agents, ..config }, &cancel)
        })
        .await;
        let done = {
            let Ok(mut map) = task_state.tournaments.lock() else {
                return;
            };
            let Some(t) = map.get_mut(&task_id) else {
                return;
            };
            match result {
                Ok(Ok(report)) => t.finish(&report),
                Ok(Err(MatchError::Stopped(Stopped::Cancelled))) => t.status = "cancelled",
                Ok(Err(e)) => t.fail(e.to_string()),
                Err(e) => t.fail(e.message),
            }
            t.clone()
        };
        if let Err(e) = save(&task_state, &done).await {
            tracing::error!(tournament = %task_id, "storing the finished tournament: {}", e.message);
        }
    });
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"id": id, "status": "running"})),
    )
        .into_response())
}

/// The request checked field by field, its agents resolved under the API's limits.
async fn tournament_config(
    state: &SharedState,
    req: &TournamentRequest,
) -> ApiResult<TournamentConfig> {
    let n = req.agents.len();
    if !(2..=MAX_TOURNAMENT_AGENTS).contains(&n) {
        return Err(ApiError::invalid(
            "agents",
            format!("must list 2 to {MAX_TOURNAMENT_AGENTS} agents, got {n}"),
        ));
    }
    if req.games < 2 || req.games > MAX_TOURNAMENT_GAMES || req.games % 2 == 1 {
        return Err(ApiError::invalid(
            "games",
            format!(
                "must be an even number from 2 to {MAX_TOURNAMENT_GAMES} (each pairing plays colour-swapped pairs), got {}",
                req.games
            ),
        ));
    }
    let setup = setup_of(
        req.board,
        req.rules.as_deref(),
        req.pie,
        req.opening_plies,
        req.seed,
    )?;
    let sprt = req.sprt.as_ref().map(parse_sprt).transpose()?;
    if sprt.is_some() && req.self_play {
        return Err(ApiError::invalid(
            "sprt",
            "an SPRT tests one agent against another: not with self_play",
        ));
    }
    let mut specs = Vec::with_capacity(n);
    for (i, v) in req.agents.iter().enumerate() {
        specs.push(resolve_agent(state, &format!("agents[{i}]"), v).await?);
    }
    let mut pairings = Vec::new();
    for i in 0..n {
        for j in i..n {
            if i != j || req.self_play {
                pairings.push((&specs[i], &specs[j], req.games as u64));
            }
        }
    }
    check_cost("games", &pairings, &setup, CostCap::Tournament)?;
    Ok(TournamentConfig {
        agents: specs,
        games: req.games,
        self_play: req.self_play,
        sprt,
        setup,
    })
}

/// Records a new running tournament, forgetting the oldest finished ones beyond
/// [`KEEP_TOURNAMENTS`]; refuses (429) when all those kept are still running.
fn register(
    state: &SharedState,
    id: &str,
    config: &TournamentConfig,
    names: Vec<String>,
) -> ApiResult<TournamentState> {
    let mut map = state.tournaments.lock().map_err(ApiError::internal)?;
    let order = map.values().map(|t| t.order).max().unwrap_or(0) + 1;
    while map.len() >= KEEP_TOURNAMENTS {
        let oldest = map
            .values()
            .filter(|t| t.status != "running")
            .min_by_key(|t| t.order)
            .map(|t| t.id.clone());
        let Some(old) = oldest else {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                None,
                "too many tournaments are running",
            ));
        };
        map.remove(&old);
    }
    let entry = TournamentState {
        id: id.to_string(),
        status: "running",
        agents: config.agents.iter().map(|s| s.to_string()).collect(),
        names,
        games: config.games,
        seed: config.setup.seed,
        table: Vec::new(),
        scores: Vec::new(),
        progress: 0.0,
        games_per_pairing: config.games,
        sprt: None,
        error: None,
        created_at: crate::store::now_rfc3339(),
        order,
        cancel: Profile::Api.limits().tournament_budget(),
    };
    map.insert(id.to_string(), entry.clone());
    Ok(entry)
}

/// The display names of a request's agents: the ones given, checked, else the specs.
fn display_names(req: &TournamentRequest, config: &TournamentConfig) -> ApiResult<Vec<String>> {
    let Some(names) = &req.names else {
        return Ok(config.agents.iter().map(|s| s.to_string()).collect());
    };
    if names.len() != config.agents.len() {
        return Err(ApiError::invalid(
            "names",
            format!(
                "one name per agent: {} agents, {} names",
                config.agents.len(),
                names.len()
            ),
        ));
    }
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let name = name.trim();
            if name.is_empty() || name.chars().count() > MAX_AGENT_NAME_CHARS {
                return Err(ApiError::invalid(
                    &format!("names[{i}]"),
                    format!("a name has 1 to {MAX_AGENT_NAME_CHARS} characters"),
                ));
            }
            Ok(name.to_string())
        })
        .collect()
}

/// Writes a tournament's state to the database.
async fn save(state: &SharedState, t: &TournamentState) -> ApiResult<()> {
    let stored = StoredTournament {
        id: t.id.clone(),
        created_at: t.created_at.clone(),
        status: t.status.to_string(),
        error: t.error.clone(),
        state: serde_json::to_value(t).map_err(ApiError::internal)?,
    };
    Ok(state.store.save_tournament(&stored).await?)
}

/// A stored tournament as the API shows it: its state with the stored status and error (a
/// tournament a stopped server left running has been marked failed since).
fn stored_json(t: StoredTournament) -> Value {
    let mut value = t.state;
    if let Some(map) = value.as_object_mut() {
        map.insert("status".into(), json!(t.status));
        map.insert("error".into(), json!(t.error));
    }
    value
}

/// The newest tournaments, newest first, without their tables.
pub async fn list(State(state): State<SharedState>) -> ApiResult<Json<Value>> {
    let stored = state.store.list_tournaments(LIST_TOURNAMENTS).await?;
    let items: Vec<Value> = stored
        .into_iter()
        .map(|t| {
            let value = stored_json(t);
            json!({
                "id": value["id"], "status": value["status"], "error": value["error"],
                "created_at": value["created_at"], "agents": value["agents"],
                "names": value["names"], "games": value["games"], "seed": value["seed"],
            })
        })
        .collect();
    Ok(Json(json!({ "tournaments": items })))
}

impl TournamentState {
    fn finish(&mut self, report: &TournamentReport) {
        self.status = "finished";
        self.progress = 1.0;
        self.table = report
            .first
            .iter()
            .map(|row| {
                row.iter()
                    .map(|cell| cell.as_ref().map(cell_json))
                    .collect()
            })
            .collect();
        self.scores = report
            .scores
            .iter()
            .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
            .collect();
        self.sprt = report.sprt.clone();
    }

    fn fail(&mut self, error: String) {
        self.status = "failed";
        self.error = Some(error);
    }
}

/// One cell of the cross-table: the row agent moving first against the column agent.
fn cell_json(tally: &Tally) -> Value {
    let score = (tally.wins as f64 + 0.5 * tally.draws as f64) / tally.games().max(1) as f64;
    json!({
        "first_player_score": score,
        "win_rate": tally.win_rate(),
        "games": tally.games(),
        "wins": tally.wins, "draws": tally.draws, "losses": tally.losses,
    })
}

/// A tournament: from memory while this process plays it, else from the database.
pub async fn show(
    State(state): State<SharedState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let live = {
        let map = state.tournaments.lock().map_err(ApiError::internal)?;
        map.get(&id).cloned()
    };
    if let Some(t) = live {
        return Ok(Json(serde_json::to_value(t).map_err(ApiError::internal)?));
    }
    let stored = state.store.tournament(&id).await?.ok_or_else(|| {
        ApiError::not_found(format!("no tournament {:?}", crate::game::excerpt(&id)))
    })?;
    Ok(Json(stored_json(stored)))
}

/// Stops a running tournament: the games under way finish, the rest are not played, and it
/// is stored as `cancelled` (409 when it is not running, 404 when there is no such one).
pub async fn cancel(
    State(state): State<SharedState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let cancelled = {
        let mut map = state.tournaments.lock().map_err(ApiError::internal)?;
        let Some(t) = map.get_mut(&id) else {
            return Err(ApiError::not_found(format!(
                "no running tournament {:?}",
                crate::game::excerpt(&id)
            )));
        };
        if t.status != "running" {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                None,
                format!(
                    "tournament {id} is {}: only a running one can be cancelled",
                    t.status
                ),
            ));
        }
        t.cancel.cancel();
        t.status = "cancelled";
        t.clone()
    };
    tracing::info!(tournament = %id, "tournament cancelled");
    // Stored at once, so that the list says so; the games' end stores it again.
    save(&state, &cancelled).await?;
    Ok(Json(
        serde_json::to_value(&cancelled).map_err(ApiError::internal)?,
    ))
}
