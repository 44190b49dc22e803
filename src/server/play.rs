//! Agents and games over HTTP: the agent catalogue, a move from an agent, human moves,
//! matches and tournaments. Games run on the server's rayon pool inside `spawn_blocking`, one
//! compute permit per request.

use std::time::Instant;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::error::{ApiError, ApiJson, ApiResult};
use super::SharedState;
use crate::agents::{rng_from_seed, AgentSpec};
use crate::eval::FEATURE_SETS;
use crate::ga::{ExportDocument, PRESETS};
use crate::game::{parse_kpn, to_kpn, Position, Rules, Side};
use crate::matches::{play_tournament, Setup, TournamentConfig};
use crate::store::RunStatus;

/// Deepest search an API agent may use.
pub const MAX_API_DEPTH: u32 = 10;
/// Longest time budget per move for an API agent.
pub const MAX_API_TIME_MS: u64 = 10_000;
/// MCTS playouts per move through the API: about a second a move.
pub const MAX_API_MCTS_ITERATIONS: u32 = 200_000;
/// Most games in one `/api/matches` request.
pub const MAX_MATCH_GAMES: u32 = 200;
/// Most games per pairing in a tournament.
pub const MAX_TOURNAMENT_GAMES: u32 = 100;
/// Most agents in a tournament.
pub const MAX_TOURNAMENT_AGENTS: usize = 8;
/// Most random opening plies.
pub const MAX_OPENING_PLIES: u32 = 30;
/// Tournaments kept in memory.
const KEEP_TOURNAMENTS: usize = 100;

/// Resolves an agent given in a request (a spec string or JSON) for the request field
/// `field`, with the API's limits. Export files on the server's disk are refused; runs
/// (`{"kind":"run","id":...}` or `run:ID`) and inline documents (`from_export`) are not.
pub async fn resolve_agent(
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
    let refers_to_file = match value {
        Value::String(s) => s.trim().starts_with("export:"),
        Value::Object(map) => map.get("kind").and_then(Value::as_str) == Some("export"),
        _ => false,
    };
    if refers_to_file {
        return Err(ApiError::invalid(
            field,
            "export files are not read through the API: use {\"kind\":\"run\",\"id\":...} or {\"kind\":\"heuristic\",\"from_export\":<document>}",
        ));
    }
    let spec = match run_id {
        Some(id) => run_agent(state, field, &id).await?,
        None => match value {
            Value::String(_) | Value::Object(_) => {
                AgentSpec::from_json(value).map_err(|e| ApiError::from_spec(field, &e))?
            }
            _ => {
                return Err(ApiError::invalid(
                    field,
                    "expected an agent spec: a string such as \"minimax:4\" or an object such as {\"kind\":\"minimax\",\"depth\":4}",
                ))
            }
        },
    };
    check_limits(field, &spec)?;
    Ok(spec)
}

/// The player a run exports, from its last written generation.
async fn run_agent(state: &SharedState, field: &str, id: &str) -> ApiResult<AgentSpec> {
    let unknown = || ApiError::invalid(&format!("{field}.id"), format!("no run {id:?}"));
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(unknown());
    }
    let run = state.store.get_run(id).await?.ok_or_else(unknown)?;
    let last = state.store.last_record(id).await?.ok_or_else(|| {
        ApiError::invalid(
            &format!("{field}.id"),
            format!("run {id} has no generation yet"),
        )
    })?;
    let champion = ExportDocument::champion(&run.config, &last);
    let doc = ExportDocument::from_summaries(&run.config, Vec::new(), &champion)
        .map_err(ApiError::internal)?;
    Ok(doc.agent_spec())
}

fn check_limits(field: &str, spec: &AgentSpec) -> ApiResult<()> {
    let depth_ok = |d: u32| {
        if d > MAX_API_DEPTH {
            Err(ApiError::invalid(
                &format!("{field}.depth"),
                format!("must be 1 to {MAX_API_DEPTH} through the API, got {d}"),
            ))
        } else {
            Ok(())
        }
    };
    let time_ok = |t: Option<u64>| match t {
        Some(t) if t > MAX_API_TIME_MS => Err(ApiError::invalid(
            &format!("{field}.time_ms"),
            format!("must be at most {MAX_API_TIME_MS} through the API, got {t}"),
        )),
        _ => Ok(()),
    };
    match spec {
        AgentSpec::Minimax { depth, time_ms, .. } | AgentSpec::Heuristic { depth, time_ms, .. } => {
            depth_ok(*depth)?;
            time_ok(*time_ms)
        }
        AgentSpec::PekarMinimax { depth, .. } => depth_ok(*depth),
        AgentSpec::Perfect {
            max_seeds,
            fallback_depth,
            ..
        } => {
            depth_ok(*fallback_depth)?;
            if *max_seeds > 22 {
                return Err(ApiError::invalid(
                    &format!("{field}.max_seeds"),
                    format!("must be at most 22 through the API, got {max_seeds}"),
                ));
            }
            Ok(())
        }
        AgentSpec::Mcts {
            iterations,
            time_ms,
            ..
        } => {
            if *iterations > MAX_API_MCTS_ITERATIONS {
                return Err(ApiError::invalid(
                    &format!("{field}.iterations"),
                    format!(
                        "must be at most {MAX_API_MCTS_ITERATIONS} through the API, got {iterations}"
                    ),
                ));
            }
            time_ok(*time_ms)
        }
        // Like export files, model files would be read from the server's disk.
        AgentSpec::A3c { model: Some(_), .. } => Err(ApiError::invalid(
            &format!("{field}.model"),
            "model files are not read through the API: the a3c agent plays the embedded model",
        )),
        AgentSpec::A3c { model: None, .. }
        | AgentSpec::Random
        | AgentSpec::Greedy { .. }
        | AgentSpec::Pekar { .. } => Ok(()),
    }
}

fn param(name: &str, ty: &str, default: Value, min: Value, max: Value, help: &str) -> Value {
    json!({"name": name, "type": ty, "default": default, "min": min, "max": max, "description": help})
}

/// The agent catalogue: kinds with parameters, feature sets and weight presets, GA presets,
/// and one agent per run that has a generation.
pub async fn agents(State(state): State<SharedState>) -> ApiResult<Json<Value>> {
    let depth = |d: u32| {
        param(
            "depth",
            "integer",
            json!(d),
            json!(1),
            json!(MAX_API_DEPTH),
            "search depth in turns (an extra turn does not use depth)",
        )
    };
    let time = param(
        "time_ms",
        "integer",
        Value::Null,
        json!(1),
        json!(MAX_API_TIME_MS),
        "iterative deepening within this many milliseconds per move, up to depth",
    );
    let ties = json!({"name": "ties", "type": "string", "default": "random", "enum": ["random", "first"], "description": "how to choose among equally good moves"});
    let kinds = json!([
        {"kind": "random", "description": "uniform over legal moves", "params": [], "examples": ["random"]},
        {"kind": "greedy", "description": "the move, with chained extra turns, that puts most seeds in its store now", "params": [ties], "examples": ["greedy"]},
        {"kind": "minimax", "description": "alpha-beta on the store difference", "params": [depth(4), time, ties], "examples": ["minimax:4", "minimax:8"]},
        {"kind": "heuristic", "description": "alpha-beta on a weighted sum of evaluation features", "params": [
            {"name": "features", "type": "string|array", "default": "hunter10", "enum": FEATURE_SETS.iter().map(|s| s.name).collect::<Vec<_>>(), "description": "a feature set or a list of feature names"},
            {"name": "weights", "type": "string|array", "default": "published", "description": "a preset of the feature set or one number per feature"},
            depth(4), time, ties,
            {"name": "from_export", "type": "object", "default": null, "description": "an export document; plays as its evolved individual"}
        ], "examples": ["heuristic:hunter10:published:4", "heuristic:abrams3:0.58,0.44,0.28:7"]},
        {"kind": "pekar", "description": "Pekar et al.'s rule list", "params": [ties], "examples": ["pekar"]},
        {"kind": "pekar-minimax", "description": "Pekar et al.'s modified minimax with cost function (4)", "params": [depth(4), ties], "examples": ["pekar-minimax:4"]},
        {"kind": "perfect", "description": "exact play from the solver with few seeds left, a store-difference search above that", "params": [
            param("max_seeds", "integer", json!(22), json!(0), json!(22), "solve exactly with at most this many seeds in the pits"),
            param("fallback_depth", "integer", json!(8), json!(1), json!(MAX_API_DEPTH), "search depth with more seeds than that"),
            ties
        ], "examples": ["perfect:16"]},
        {"kind": "mcts", "description": "UCT Monte Carlo tree search with epsilon-greedy playouts; plays the most visited move", "params": [
            param("iterations", "integer", json!(4000), json!(1), json!(MAX_API_MCTS_ITERATIONS), "playouts per move"),
            param("c", "number", json!(crate::agents::mcts::DEFAULT_C), json!(0), Value::Null, "UCT exploration constant"),
            param("epsilon", "number", json!(crate::agents::mcts::DEFAULT_EPSILON), json!(0), json!(1), "chance of a random playout move instead of the greedy one"),
            time,
            {"name": "reuse", "type": "boolean", "default": false, "description": "keep the subtree between moves"},
            ties
        ], "examples": ["mcts:4000", "mcts:1000"]},
        {"kind": "a3c", "description": "the policy network trained by asynchronous advantage actor-critic (the embedded Kalah(6,4) model)", "params": [
            {"name": "sample", "type": "boolean", "default": false, "description": "sample from the policy instead of playing its most likely move"},
            ties
        ], "examples": ["a3c"]},
        {"kind": "run", "description": "the evolved player of a run of this server (its export's agent)", "params": [
            {"name": "id", "type": "string", "default": null, "description": "the run's id"}
        ], "examples": ["run:<id>"]}
    ]);
    let feature_sets: Vec<Value> = FEATURE_SETS
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "features": s.features.iter().map(|f| f.name()).collect::<Vec<_>>(),
                "source": s.source,
            })
        })
        .collect();
    let weights: Vec<Value> = FEATURE_SETS
        .iter()
        .flat_map(|s| {
            s.presets.iter().map(move |(name, w)| {
                json!({"feature_set": s.name, "name": name, "weights": w,
                       "spec": format!("heuristic:{}:{}:4", s.name, name)})
            })
        })
        .collect();
    let mut exports = Vec::new();
    for run in state.store.list_runs().await? {
        if run.generations_done == 0 {
            continue;
        }
        let label = format!(
            "{} ({}, generation {}, fitness {:.3})",
            run.name
                .clone()
                .unwrap_or_else(|| format!("run {}", &run.id[..8.min(run.id.len())])),
            run.status.as_str(),
            run.generations_done.saturating_sub(1),
            run.best_fitness.unwrap_or(0.0)
        );
        exports.push(json!({
            "run_id": run.id,
            "spec": {"kind": "run", "id": run.id},
            "label": label,
            "finished": run.status == RunStatus::Finished,
        }));
    }
    Ok(Json(json!({
        "agents": kinds,
        "presets": {"feature_sets": feature_sets, "weights": weights, "ga": PRESETS},
        "exports": exports,
    })))
}

fn parse_rules(field: &str, rules: Option<&str>) -> ApiResult<Rules> {
    match rules {
        None => Ok(Rules::Standard),
        Some(r) => r.parse().map_err(|e| ApiError::invalid(field, e)),
    }
}

fn parse_position(field: &str, text: &str) -> ApiResult<Position> {
    parse_kpn(text).map_err(|e| ApiError::from_game(field, &e))
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::South => "south",
        Side::North => "north",
    }
}

/// What a client shows of a position.
fn position_view(pos: &Position) -> Value {
    json!({
        "position": to_kpn(pos),
        "legal_moves": pos.legal_moves().to_vec(),
        "to_move": side_name(pos.side_to_move()),
        "stores": [pos.store(Side::South), pos.store(Side::North)],
        "game_over": pos.is_game_over(),
        "pits": pos.pits(),
    })
}

/// Plays `mv` and describes the outcome and the position after it.
fn play_view(pos: &Position, mv: usize, rules: Rules) -> ApiResult<Value> {
    let mut after = *pos;
    let outcome = after
        .play(mv, rules)
        .map_err(|e| ApiError::invalid("move", e))?;
    let mut view = position_view(&after);
    let map = view.as_object_mut().expect("an object");
    map.insert("position_after".into(), json!(to_kpn(&after)));
    map.insert("extra_turn".into(), json!(outcome.extra_turn));
    map.insert("capture".into(), json!(outcome.captured));
    map.insert(
        "game_over".into(),
        json!(outcome.game_over || after.is_game_over()),
    );
    map.insert("move".into(), json!(mv));
    Ok(view)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveRequest {
    agent: Value,
    position: String,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    rules: Option<String>,
}

/// Runs `f` on the game pool, holding a compute permit.
async fn compute<T: Send + 'static>(
    state: &SharedState,
    f: impl FnOnce() -> T + Send + 'static,
) -> ApiResult<T> {
    let _permit = state.compute.acquire().await.map_err(ApiError::internal)?;
    let pool = state.pool.clone();
    tokio::task::spawn_blocking(move || pool.install(f))
        .await
        .map_err(ApiError::internal)
}

pub async fn best_move(
    State(state): State<SharedState>,
    ApiJson(req): ApiJson<MoveRequest>,
) -> ApiResult<Json<Value>> {
    let rules = parse_rules("rules", req.rules.as_deref())?;
    let pos = parse_position("position", &req.position)?;
    if pos.is_game_over() {
        return Err(ApiError::invalid(
            "position",
            "the game is over: there is no move to make",
        ));
    }
    let spec = resolve_agent(&state, "agent", &req.agent).await?;
    let mut agent = spec
        .build(rules)
        .map_err(|e| ApiError::from_spec("agent", &e))?;
    let seed = req.seed;
    let started = Instant::now();
    let decision = compute(&state, move || {
        let mut rng = rng_from_seed(seed);
        agent.choose(&pos, &mut rng)
    })
    .await?;
    let mut view = play_view(&pos, decision.mv, rules)?;
    let map = view.as_object_mut().expect("an object");
    map.insert("nodes".into(), json!(decision.nodes));
    map.insert("value".into(), json!(decision.value));
    map.insert("agent".into(), json!(spec.to_string()));
    map.insert("ms".into(), json!(started.elapsed().as_secs_f64() * 1e3));
    Ok(Json(view))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PositionMove {
    position: String,
    #[serde(rename = "move")]
    mv: usize,
    #[serde(default)]
    rules: Option<String>,
}

pub async fn position_move(ApiJson(req): ApiJson<PositionMove>) -> ApiResult<Json<Value>> {
    let rules = parse_rules("rules", req.rules.as_deref())?;
    let pos = parse_position("position", &req.position)?;
    Ok(Json(play_view(&pos, req.mv, rules)?))
}

#[derive(Deserialize)]
pub struct StartQuery {
    pits: Option<String>,
    seeds: Option<String>,
}

fn query_number(field: &str, value: Option<&str>, default: u32) -> ApiResult<u32> {
    match value {
        None | Some("") => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| ApiError::invalid(field, format!("must be a whole number, got {v:?}"))),
    }
}

pub async fn position_start(Query(q): Query<StartQuery>) -> ApiResult<Json<Value>> {
    let pits = query_number("pits", q.pits.as_deref(), 6)?;
    let seeds = query_number("seeds", q.seeds.as_deref(), 4)?;
    let pos = Position::start(pits as usize, seeds).map_err(|e| ApiError::from_game("pits", &e))?;
    Ok(Json(position_view(&pos)))
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct BoardBody {
    pits: usize,
    seeds: u32,
}

fn default_match_games() -> u32 {
    10
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchRequest {
    south: Value,
    north: Value,
    #[serde(default = "default_match_games")]
    games: u32,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    opening_plies: u32,
    #[serde(default)]
    board: Option<BoardBody>,
    #[serde(default)]
    rules: Option<String>,
    /// Keep `south` South in every game instead of colour-swapped pairs.
    #[serde(default)]
    fixed_colours: bool,
}

fn setup_of(
    board: Option<BoardBody>,
    rules: Option<&str>,
    opening_plies: u32,
    seed: u64,
) -> ApiResult<Setup> {
    if opening_plies > MAX_OPENING_PLIES {
        return Err(ApiError::invalid(
            "opening_plies",
            format!("must be 0 to {MAX_OPENING_PLIES}, got {opening_plies}"),
        ));
    }
    let board = board.unwrap_or(BoardBody { pits: 6, seeds: 4 });
    Position::start(board.pits, board.seeds).map_err(|e| ApiError::from_game("board", &e))?;
    Ok(Setup {
        pits: board.pits,
        seeds: board.seeds,
        rules: parse_rules("rules", rules)?,
        opening_plies,
        seed,
    })
}

pub async fn play_match(
    State(state): State<SharedState>,
    ApiJson(req): ApiJson<MatchRequest>,
) -> ApiResult<Json<Value>> {
    if req.games == 0 || req.games > MAX_MATCH_GAMES {
        return Err(ApiError::invalid(
            "games",
            format!("must be 1 to {MAX_MATCH_GAMES}, got {}", req.games),
        ));
    }
    let setup = setup_of(req.board, req.rules.as_deref(), req.opening_plies, req.seed)?;
    let a = resolve_agent(&state, "south", &req.south).await?;
    let b = resolve_agent(&state, "north", &req.north).await?;
    let games = req.games;
    let swap = !req.fixed_colours;
    let report = compute(&state, move || {
        crate::matches::play_match(&a, &b, games, &setup, swap, true)
    })
    .await?
    .map_err(|e| ApiError::from_match(&e))?;
    let game_list = serde_json::to_value(&report.game_list).map_err(ApiError::internal)?;
    let score = report.a_score.score;
    let mut summary = serde_json::to_value(&report).map_err(ApiError::internal)?;
    if let Some(map) = summary.as_object_mut() {
        map.remove("game_list");
    }
    Ok(Json(
        json!({"games": game_list, "score": score, "summary": summary}),
    ))
}

/// A tournament started through the API, kept in memory.
#[derive(Clone, Debug, Serialize)]
pub struct TournamentState {
    pub id: String,
    pub status: &'static str,
    pub agents: Vec<String>,
    pub table: Vec<Vec<Option<Value>>>,
    pub scores: Vec<Value>,
    pub progress: f64,
    pub games_per_pairing: u32,
    pub error: Option<String>,
    pub created_at: String,
    #[serde(skip)]
    pub order: u64,
}

fn default_tournament_games() -> u32 {
    20
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TournamentRequest {
    agents: Vec<Value>,
    #[serde(default = "default_tournament_games")]
    games: u32,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    opening_plies: u32,
    #[serde(default)]
    self_play: bool,
    #[serde(default)]
    board: Option<BoardBody>,
    #[serde(default)]
    rules: Option<String>,
}

pub async fn start_tournament(
    State(state): State<SharedState>,
    ApiJson(req): ApiJson<TournamentRequest>,
) -> ApiResult<Response> {
    let n = req.agents.len();
    if !(2..=MAX_TOURNAMENT_AGENTS).contains(&n) {
        return Err(ApiError::invalid(
            "agents",
            format!("must list 2 to {MAX_TOURNAMENT_AGENTS} agents, got {n}"),
        ));
    }
    if req.games == 0 || req.games > MAX_TOURNAMENT_GAMES {
        return Err(ApiError::invalid(
            "games",
            format!("must be 1 to {MAX_TOURNAMENT_GAMES}, got {}", req.games),
        ));
    }
    let setup = setup_of(req.board, req.rules.as_deref(), req.opening_plies, req.seed)?;
    let mut specs = Vec::with_capacity(n);
    for (i, v) in req.agents.iter().enumerate() {
        specs.push(resolve_agent(&state, &format!("agents[{i}]"), v).await?);
    }
    let id = uuid::Uuid::new_v4().to_string();
    let entry = TournamentState {
        id: id.clone(),
        status: "running",
        agents: specs.iter().map(|s| s.to_string()).collect(),
        table: Vec::new(),
        scores: Vec::new(),
        progress: 0.0,
        games_per_pairing: req.games,
        error: None,
        created_at: crate::store::now_rfc3339(),
        order: 0,
    };
    {
        let mut map = state.tournaments.lock().map_err(ApiError::internal)?;
        let order = map.values().map(|t| t.order).max().unwrap_or(0) + 1;
        // Forget the oldest finished ones beyond the limit.
        while map.len() >= KEEP_TOURNAMENTS {
            let oldest = map
                .values()
                .filter(|t| t.status != "running")
                .min_by_key(|t| t.order)
                .map(|t| t.id.clone());
            match oldest {
                Some(old) => {
                    map.remove(&old);
                }
                None => {
                    return Err(ApiError::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        None,
                        "too many tournaments are running",
                    ))
                }
            }
        }
        map.insert(id.clone(), TournamentState { order, ..entry });
    }
    let config = TournamentConfig {
        agents: specs,
        games: req.games,
        self_play: req.self_play,
        setup,
    };
    let task_state = state.clone();
    let task_id = id.clone();
    tokio::spawn(async move {
        let result = compute(&task_state, move || play_tournament(&config)).await;
        let Ok(mut map) = task_state.tournaments.lock() else {
            return;
        };
        let Some(t) = map.get_mut(&task_id) else {
            return;
        };
        match result {
            Ok(Ok(report)) => {
                t.status = "finished";
                t.progress = 1.0;
                t.table = report
                    .first
                    .iter()
                    .map(|row| {
                        row.iter()
                            .map(|cell| {
                                cell.as_ref().map(|tally| {
                                    json!({
                                        "first_player_score": (tally.wins as f64 + 0.5 * tally.draws as f64) / tally.games().max(1) as f64,
                                        "win_rate": tally.win_rate(),
                                        "games": tally.games(),
                                        "wins": tally.wins, "draws": tally.draws, "losses": tally.losses,
                                    })
                                })
                            })
                            .collect()
                    })
                    .collect();
                t.scores = report
                    .scores
                    .iter()
                    .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
                    .collect();
            }
            Ok(Err(e)) => {
                t.status = "failed";
                t.error = Some(e.to_string());
            }
            Err(e) => {
                t.status = "failed";
                t.error = Some(e.message);
            }
        }
    });
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"id": id, "status": "running"})),
    )
        .into_response())
}

pub async fn show_tournament(
    State(state): State<SharedState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let map = state.tournaments.lock().map_err(ApiError::internal)?;
    let t = map
        .get(&id)
        .ok_or_else(|| ApiError::not_found(format!("no tournament {id:?}")))?;
    Ok(Json(serde_json::to_value(t).map_err(ApiError::internal)?))
}
