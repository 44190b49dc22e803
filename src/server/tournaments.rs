//! Round-robin tournaments over HTTP: started by one request and played in the background by
//! the server that took it. The database is where every server reads them: the row holds the
//! status, the progress (written as games finish) and a cancel that any server may set, which
//! the playing server reads between games. A stopping server cancels its tournaments, marks
//! them failed and waits for their tasks; a tournament whose server died is marked failed
//! once its heartbeat is stale.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::agents::resolve_agent;
use super::compute::{background_turn, compute_in_background};
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use super::guard::Caller;
use super::matches::{check_cost, setup_of, BoardBody, CostCap, SprtBounds};
use super::played::{self, keep_playing, read_failing_abandoned};
use super::state::SharedState;
use crate::agents::{Profile, Stopped};
use crate::game::Rules;
use crate::matches::{
    play_tournament_counted, tournament_games, MatchError, Tally, TournamentConfig,
    TournamentReport,
};
use crate::store::{Played, PlayedRow};

/// Most games per pairing in a tournament.
pub(crate) const MAX_TOURNAMENT_GAMES: u32 = 100;
/// Most agents in a tournament.
pub(crate) const MAX_TOURNAMENT_AGENTS: usize = 8;
/// Tournaments one server plays (or waits to play) at a time.
const MAX_PLAYING: usize = 100;

/// A tournament started through the API: the state document the database stores and what
/// `GET /api/tournaments/{id}` answers (with the row's status, error and progress, which any
/// server may change). Fields in alphabetical order, the order the API's objects have always
/// had; a field an older server did not store reads as empty.
#[derive(Clone, Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default)]
#[schema(as = Tournament)]
pub(crate) struct TournamentState {
    pub agents: Vec<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
    pub error: Option<String>,
    pub games: u32,
    pub games_per_pairing: u32,
    pub id: String,
    /// The agents' display names, as the request gave them (else the specs).
    pub names: Vec<String>,
    /// The user who started it, on a server with users: only they or an admin may stop it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Games played over games planned, written by the server playing it as games finish;
    /// the same on every server.
    #[schema(minimum = 0, maximum = 1)]
    pub progress: f64,
    /// Each agent's score with its interval, in the agents' order, once finished.
    #[schema(value_type = Vec<Object>)]
    pub scores: Vec<Value>,
    pub seed: u64,
    /// With `sprt`: each pairing's test (verdict, LLR, bounds, Elo), once finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub sprt: Option<Value>,
    /// queued (waiting for the tournaments' share of the cores), running, finished,
    /// cancelled or failed.
    #[schema(schema_with = super::schemas::played_status)]
    pub status: String,
    /// The cross-table: row agent moving first against column agent (`null` on the diagonal
    /// without self-play).
    pub table: Vec<Vec<Option<CrossCell>>>,
}

/// One cell of the cross-table: the row agent moving first against the column agent.
#[derive(Clone, Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct CrossCell {
    pub draws: u64,
    /// The row agent's score, draws counting half.
    pub first_player_score: f64,
    pub games: u64,
    pub losses: u64,
    pub win_rate: f64,
    pub wins: u64,
}

/// A tournament as `GET /api/tournaments` lists it: without its table, scores and tests.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct TournamentSummary {
    agents: Vec<String>,
    #[schema(format = DateTime)]
    created_at: String,
    error: Option<String>,
    games: u32,
    id: String,
    names: Vec<String>,
    #[schema(minimum = 0, maximum = 1)]
    progress: f64,
    seed: u64,
    #[schema(schema_with = super::schemas::played_status)]
    status: String,
}

/// `GET /api/tournaments`: the newest first.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct TournamentList {
    tournaments: Vec<TournamentSummary>,
}

fn default_tournament_games() -> u32 {
    20
}

/// `POST /api/tournaments`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TournamentRequest {
    #[schema(schema_with = agent_list_schema)]
    agents: Vec<Value>,
    /// Games of each pairing (default 20), in colour-swapped pairs; the cap of an SPRT.
    #[serde(default = "default_tournament_games")]
    #[schema(minimum = 2, multiple_of = 2)]
    games: u32,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    opening_plies: u32,
    /// Each agent also plays itself (not with `sprt`).
    #[serde(default)]
    self_play: bool,
    #[serde(default)]
    board: Option<BoardBody>,
    #[serde(default, deserialize_with = "super::moves::rules_by_name")]
    rules: Option<Rules>,
    /// The pie rule (docs/reference/rules.md).
    #[serde(default)]
    pie: bool,
    /// Play each pairing as an SPRT, with `games` as its cap.
    #[serde(default)]
    #[schema(schema_with = super::schemas::sprt)]
    sprt: Option<SprtBounds>,
    /// Display names of the agents, in their order (the dashboard's short names), 1 to 60
    /// characters each.
    #[serde(default)]
    names: Option<Vec<String>>,
}

/// Longest display name of a tournament's agent.
const MAX_AGENT_NAME_CHARS: usize = 60;
/// Tournaments `GET /api/tournaments` lists.
const LIST_TOURNAMENTS: u32 = 100;

/// What a tournament whose server stopped says: it was played in that server's memory.
const STOPPED_BEFORE_THE_END: &str =
    "the server playing this tournament stopped before it finished; start it again";

/// Starts a tournament in the background and answers its id at once (202).
#[utoipa::path(
    post, path = "/tournaments", operation_id = "start_tournament",
    summary = "Start a round-robin tournament",
    request_body = TournamentRequest,
    responses(
        (status = 202, description = "started", body = TournamentStarted, links(
            ("GetTournament" = (operation_id = "show_tournament", parameters(("id" = "$response.body#/id")))),
            ("CancelTournament" = (operation_id = "cancel_tournament", parameters(("id" = "$response.body#/id")))),
        )),
        super::api_doc::BadRequest, super::api_doc::Invalid, super::api_doc::TooMany,
    )
)]
pub(crate) async fn start(
    State(state): State<SharedState>,
    Extension(caller): Extension<Caller>,
    ApiJson(req): ApiJson<TournamentRequest>,
) -> ApiResult<Response> {
    let config = tournament_config(&state, &req).await?;
    let names = display_names(&req, &config)?;
    let id = uuid::Uuid::new_v4().to_string();
    let mut entry = new_state(&id, &config, names);
    entry.owner = caller.owner();
    let planned = tournament_games(&config);
    let mut tasks = state.tournament_tasks.lock().await;
    while tasks.try_join_next().is_some() {}
    if tasks.len() >= MAX_PLAYING {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            None,
            format!("{MAX_PLAYING} tournaments are already playing on this server"),
        ));
    }
    state
        .store
        .create_played(Played::Tournament, &stored(&entry)?, &state.owner)
        .await?;
    tasks.spawn(play(state.clone(), entry, config, planned));
    drop(tasks);
    let started = TournamentStarted {
        id,
        status: "queued",
    };
    Ok((StatusCode::ACCEPTED, Json(started)).into_response())
}

/// `POST /api/tournaments`' answer: the new tournament's id, to follow and cancel it by.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct TournamentStarted {
    id: String,
    /// `queued`: it waits for the tournaments' share of the cores.
    #[schema(value_type = String)]
    status: &'static str,
}

/// Plays a stored tournament to its end, writing its progress as games finish, and stores
/// how it ended: finished, cancelled (through any server), failed, or failed because this
/// server is stopping.
async fn play(state: SharedState, mut t: TournamentState, config: TournamentConfig, planned: u64) {
    let cancel = Profile::Api.limits().tournament_budget();
    let played = Arc::new(AtomicU64::new(0));
    let counted = played.clone();
    let beat = tokio::spawn(keep_playing(
        state.clone(),
        Played::Tournament,
        t.id.clone(),
        cancel.clone(),
        move || (fraction(counted.load(Ordering::Relaxed), planned), None),
    ));
    let files = state.files.clone();
    let (counter, stop) = (played.clone(), cancel.clone());
    // Queued until its share of the cores is free; the row says so meanwhile. A tournament
    // cancelled while queued gets no turn, or stops at once under its cancelled budget.
    let turn = match background_turn(&state, &cancel).await {
        Ok(Some(permit)) => match state.store.start_tournament(&t.id, &state.owner).await {
            Ok(true) => Ok(Some(permit)),
            // Cancelled (or given up) while it waited: it plays no game.
            Ok(false) => {
                cancel.cancel();
                Ok(None)
            }
            Err(e) => Err(ApiError::from(e)),
        },
        other => other,
    };
    let result = match turn {
        // No turn: cancelled, or its budget spent, while it waited. It plays no game (one
        // started under the spent budget would still count towards its progress).
        Ok(None) => Ok(Err(MatchError::Stopped(
            cancel.check_now().err().unwrap_or(Stopped::Cancelled),
        ))),
        Ok(permit) => {
            compute_in_background(permit, move || {
                // Located here, on the tournaments' pool: locating a model looks at the disk.
                let agents = config
                    .agents
                    .iter()
                    .map(|s| s.locate(&files))
                    .collect::<Result<Vec<_>, _>>()?;
                play_tournament_counted(&TournamentConfig { agents, ..config }, &stop, &counter)
            })
            .await
        }
        Err(e) => Err(e),
    };
    beat.abort();
    t.progress = fraction(played.load(Ordering::Relaxed), planned);
    match result {
        Ok(Ok(report)) => t.finish(&report),
        Ok(Err(MatchError::Stopped(Stopped::Cancelled))) if state.is_stopping() => {
            t.fail(STOPPED_BEFORE_THE_END.into())
        }
        Ok(Err(MatchError::Stopped(Stopped::Cancelled))) => t.status = "cancelled".into(),
        Ok(Err(e)) => t.fail(e.to_string()),
        Err(e) => t.fail(e.message),
    }
    let ended = match stored(&t) {
        Ok(ended) => ended,
        Err(e) => {
            tracing::error!(tournament = %t.id, "storing the ended tournament: {}", e.message);
            return;
        }
    };
    if let Err(e) = state
        .store
        .end_played(Played::Tournament, &ended, &state.owner)
        .await
    {
        tracing::error!(tournament = %t.id, "storing the ended tournament: {e}");
    }
}

/// Games played over games planned, short of 1 until the report says the end.
fn fraction(played: u64, planned: u64) -> f64 {
    if planned == 0 {
        0.0
    } else {
        (played as f64 / planned as f64).min(0.99)
    }
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
    let setup = setup_of(req.board, req.rules, req.pie, req.opening_plies, req.seed)?;
    let sprt = req.sprt.map(|SprtBounds(s)| s);
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

/// A new running tournament as the API shows it.
fn new_state(id: &str, config: &TournamentConfig, names: Vec<String>) -> TournamentState {
    TournamentState {
        id: id.to_string(),
        status: "queued".into(),
        agents: config.agents.iter().map(|s| s.to_string()).collect(),
        names,
        owner: None,
        games: config.games,
        seed: config.setup.seed,
        table: Vec::new(),
        scores: Vec::new(),
        progress: 0.0,
        games_per_pairing: config.games,
        sprt: None,
        error: None,
        created_at: crate::store::now_rfc3339(),
    }
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

/// A tournament's state as the database keeps it.
fn stored(t: &TournamentState) -> ApiResult<PlayedRow> {
    Ok(PlayedRow {
        id: t.id.clone(),
        created_at: t.created_at.clone(),
        finished_at: None,
        status: t.status.clone(),
        error: t.error.clone(),
        progress: t.progress,
        heartbeat_at: None,
        state: serde_json::to_value(t).map_err(ApiError::internal)?,
        created_by: t.owner.clone(),
    })
}

/// A stored tournament as the API shows it: its state with the stored status, error and
/// progress, which change while it plays (and after, when its server stopped).
fn shown(t: PlayedRow) -> ApiResult<TournamentState> {
    let mut shown: TournamentState = serde_json::from_value(t.state).map_err(|e| {
        ApiError::internal(format!("tournament {} as stored does not read: {e}", t.id))
    })?;
    shown.status = t.status;
    shown.error = t.error;
    shown.progress = t.progress;
    shown.owner = t.created_by;
    Ok(shown)
}

/// The newest tournaments, newest first, without their tables.
#[utoipa::path(
    get, path = "/tournaments", operation_id = "list_tournaments",
    summary = "The newest 100 tournaments (stored; without their tables), newest first",
    responses((status = 200, description = "the tournaments", body = TournamentList))
)]
pub(crate) async fn list(State(state): State<SharedState>) -> ApiResult<Json<TournamentList>> {
    let stored = read_failing_abandoned(
        &state,
        Played::Tournament,
        || {
            state
                .store
                .list_played(Played::Tournament, LIST_TOURNAMENTS)
        },
        Vec::as_slice,
    )
    .await?;
    let tournaments = stored
        .into_iter()
        .map(|t| {
            let t = shown(t)?;
            Ok(TournamentSummary {
                agents: t.agents,
                created_at: t.created_at,
                error: t.error,
                games: t.games,
                id: t.id,
                names: t.names,
                progress: t.progress,
                seed: t.seed,
                status: t.status,
            })
        })
        .collect::<ApiResult<_>>()?;
    Ok(Json(TournamentList { tournaments }))
}

impl TournamentState {
    fn finish(&mut self, report: &TournamentReport) {
        self.status = "finished".into();
        self.progress = 1.0;
        self.table = report
            .first
            .iter()
            .map(|row| {
                row.iter()
                    .map(|cell| cell.as_ref().map(CrossCell::of))
                    .collect()
            })
            .collect();
        self.scores = report
            .scores
            .iter()
            .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
            .collect();
        self.sprt = report
            .sprt
            .as_ref()
            .map(|s| serde_json::to_value(s).unwrap_or(Value::Null));
    }

    fn fail(&mut self, error: String) {
        self.status = "failed".into();
        self.error = Some(error);
    }
}

impl CrossCell {
    fn of(tally: &Tally) -> CrossCell {
        let games = tally.games();
        CrossCell {
            draws: tally.draws,
            first_player_score: (tally.wins as f64 + 0.5 * tally.draws as f64)
                / games.max(1) as f64,
            games,
            losses: tally.losses,
            win_rate: tally.win_rate(),
            wins: tally.wins,
        }
    }
}

/// A tournament, from the database: the same on every server, while it plays and after.
#[utoipa::path(
    get, path = "/tournaments/{id}", operation_id = "show_tournament",
    summary = "A tournament's state and cross-table",
    params(("id" = String, Path, description = "the tournament's id")),
    responses((status = 200, description = "the tournament", body = TournamentState), super::api_doc::NotFound)
)]
pub(crate) async fn show(
    State(state): State<SharedState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<TournamentState>> {
    let not_found =
        || ApiError::not_found(format!("no tournament {:?}", crate::game::excerpt(&id)));
    let t = played::show(&state, Played::Tournament, &id, not_found).await?;
    Ok(Json(shown(t)?))
}

/// Stops a queued or running tournament, whichever server plays it: it is stored as `cancelled` at
/// once, and the server playing it stops its games within a beat (the games under way
/// finish). 409 when it is not running, 404 when there is no such one.
#[utoipa::path(
    post, path = "/tournaments/{id}/cancel", operation_id = "cancel_tournament",
    summary = "Cancel a queued or running tournament, through any server: the games under way finish, the rest are not played",
    params(("id" = String, Path, description = "the tournament's id")),
    responses(
        (status = 200, description = "the tournament, cancelled", body = TournamentState),
        super::api_doc::NotFound, super::api_doc::Conflict,
    )
)]
pub(crate) async fn cancel(
    State(state): State<SharedState>,
    Extension(caller): Extension<Caller>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<TournamentState>> {
    let not_found = || {
        ApiError::not_found(format!(
            "no queued or running tournament {:?}",
            crate::game::excerpt(&id)
        ))
    };
    let over = |status: &str| {
        ApiError::conflict(format!(
            "tournament {id} is {status}: only a queued or running one can be cancelled"
        ))
    };
    let t = played::cancel(&state, &caller, Played::Tournament, &id, not_found, over).await?;
    Ok(Json(shown(t)?))
}

/// A tournament's agents: 2 to [`MAX_TOURNAMENT_AGENTS`] of them, each as `schemas::api_agent`.
pub(crate) fn agent_list_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    super::schemas::from_json(json!({
        "type": "array", "items": {"$ref": "#/components/schemas/ApiAgent"},
        "minItems": 2, "maxItems": MAX_TOURNAMENT_AGENTS
    }))
}
