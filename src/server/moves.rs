//! Positions and moves over HTTP: the start position, a human's move, an agent's move.

use std::time::Instant;

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agents::resolve_agent;
use super::compute::compute;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiQuery};
use super::state::SharedState;
use crate::agents::{rng_from_seed, MoveValue, Profile};
use crate::game::{parse_kpn, to_kpn, Position, Rules, Side};

/// A request's `rules`, read by their names (`standard`, `empty-capture`) with the game's own
/// parser, so that an unknown name is refused (422, `rules`) in the words it has everywhere.
pub(crate) fn rules_by_name<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Rules>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|name| name.parse::<Rules>().map_err(serde::de::Error::custom))
        .transpose()
}

fn parse_position(field: &str, text: &str) -> ApiResult<Position> {
    parse_kpn(text).map_err(|e| ApiError::from_game(field, &e))
}

/// The side to move, as the API names it.
#[derive(Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mover {
    South,
    North,
}

impl From<Side> for Mover {
    fn from(side: Side) -> Mover {
        match side {
            Side::South => Mover::South,
            Side::North => Mover::North,
        }
    }
}

/// What a client shows of a position (`GET /api/position/start`). Fields in alphabetical
/// order, the order the API's objects have always had.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct PositionView {
    game_over: bool,
    legal_moves: Vec<usize>,
    pits: usize,
    /// The position in KPN.
    position: String,
    /// South's store, then North's.
    stores: [u32; 2],
    to_move: Mover,
}

fn position_view(pos: &Position) -> PositionView {
    PositionView {
        game_over: pos.is_game_over(),
        legal_moves: pos.legal_moves().to_vec(),
        pits: pos.pits(),
        position: to_kpn(pos),
        stores: [pos.store(Side::South), pos.store(Side::North)],
        to_move: pos.side_to_move().into(),
    }
}

/// A move played (`POST /api/position`): its outcome and the position after it. Fields in
/// alphabetical order, as [`PositionView`]'s.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct PlayedMove {
    /// Seeds the move captured into the mover's store.
    capture: u16,
    extra_turn: bool,
    game_over: bool,
    legal_moves: Vec<usize>,
    #[serde(rename = "move")]
    mv: usize,
    pits: usize,
    /// The position after the move in KPN (as `position`).
    position: String,
    position_after: String,
    stores: [u32; 2],
    /// The pie rule's swap.
    swap: bool,
    to_move: Mover,
}

/// Plays `mv` and describes the outcome and the position after it.
fn play_view(pos: &Position, mv: usize, rules: Rules) -> ApiResult<PlayedMove> {
    let mut after = *pos;
    let outcome = after
        .play(mv, rules)
        .map_err(|e| ApiError::invalid("move", e))?;
    let view = position_view(&after);
    Ok(PlayedMove {
        capture: outcome.captured,
        extra_turn: outcome.extra_turn,
        game_over: outcome.game_over || after.is_game_over(),
        legal_moves: view.legal_moves,
        mv,
        pits: view.pits,
        position_after: view.position.clone(),
        position: view.position,
        stores: view.stores,
        swap: mv == crate::game::SWAP,
        to_move: view.to_move,
    })
}

/// An agent's move (`POST /api/move`): the move played, what the agent searched and its own
/// value of the move.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct MoveResult {
    #[serde(flatten)]
    played: PlayedMove,
    /// The agent as a short spec.
    agent: String,
    /// Milliseconds the server took.
    ms: f64,
    nodes: u64,
    playouts: u64,
    /// The agent's own value of the move, in its unit.
    value: Option<MoveValue>,
    /// The value in words.
    value_text: Option<String>,
}

/// `POST /api/move`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MoveRequest {
    #[schema(schema_with = super::schemas::api_agent)]
    agent: Value,
    /// The position in KPN (docs/reference/rules.md): South's pits, store, North's pits, store, the
    /// side to move, and `P` when the pie rule's swap is on offer. The parser checks the rest.
    #[schema(pattern = r"^\s*\d+(,\d+)*/\d+/\d+(,\d+)*/\d+/[SsNn](/P)?\s*$")]
    position: String,
    /// Seeds the agent's tie-breaking (and MCTS's playouts).
    #[serde(default)]
    seed: u64,
    #[serde(default, deserialize_with = "super::moves::rules_by_name")]
    rules: Option<Rules>,
    /// The pie rule: a start position is the opening, whose move earns no extra turn and
    /// lets North swap. A position offering the swap says so itself (KPN field `P`).
    #[serde(default)]
    pie: bool,
}

#[utoipa::path(
    post, path = "/move", operation_id = "best_move",
    summary = "Ask an agent for a move",
    request_body = MoveRequest,
    responses(
        (status = 200, description = "the move and the position after it", body = MoveResult),
        super::api_doc::BadRequest, super::api_doc::Invalid, super::api_doc::Busy,
    )
)]
pub(crate) async fn best_move(
    State(state): State<SharedState>,
    ApiJson(req): ApiJson<MoveRequest>,
) -> ApiResult<Json<MoveResult>> {
    let rules = req.rules.unwrap_or_default();
    let pos = parse_position("position", &req.position)?.with_pie(req.pie);
    if pos.is_game_over() {
        return Err(ApiError::invalid(
            "position",
            "the game is over: there is no move to make",
        ));
    }
    let spec = resolve_agent(&state, "agent", &req.agent).await?;
    let seed = req.seed;
    let started = Instant::now();
    // Bounded by the API's limits table, and stopped when the client goes away (the guard
    // goes with this handler's future).
    let budget = Profile::Api.limits().move_budget();
    let _stop_if_dropped = budget.cancel_on_drop();
    // Built on the interactive pool too: building an a3c agent may read its model file.
    let (built, files, bounds) = (spec.clone(), state.files.clone(), budget.clone());
    let decision = compute(&state, &budget, move || {
        let mut agent = built
            .locate(&files)
            .and_then(|spec| spec.build_within(rules, &bounds))
            .map_err(|e| ApiError::from_spec("agent", &e))?;
        let mut rng = rng_from_seed(seed);
        let decision = agent.choose(&pos, &mut rng);
        match bounds.stopped() {
            Some(why) => Err(ApiError::from_stopped("agent", &why)),
            None => Ok(decision),
        }
    })
    .await??;
    Ok(Json(MoveResult {
        played: play_view(&pos, decision.mv, rules)?,
        agent: spec.to_string(),
        ms: started.elapsed().as_secs_f64() * 1e3,
        nodes: decision.nodes,
        playouts: decision.playouts,
        value: decision.value,
        value_text: decision.value.map(|v| v.describe()),
    }))
}

/// `POST /api/position`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PositionMove {
    /// The position in KPN, as for `/api/move`.
    #[schema(pattern = r"^\s*\d+(,\d+)*/\d+/\d+(,\d+)*/\d+/[SsNn](/P)?\s*$")]
    position: String,
    /// 1 to the number of pits from the mover's side, or 16 for the pie rule's swap.
    #[serde(rename = "move")]
    #[schema(minimum = 1)]
    mv: usize,
    #[serde(default, deserialize_with = "super::moves::rules_by_name")]
    rules: Option<Rules>,
    /// The pie rule, as for `/api/move`.
    #[serde(default)]
    pie: bool,
}

#[utoipa::path(
    post, path = "/position", operation_id = "position_move",
    summary = "Play a move (a human's) in a position",
    request_body = PositionMove,
    responses(
        (status = 200, description = "the position after the move", body = PlayedMove),
        super::api_doc::BadRequest, super::api_doc::Invalid,
    )
)]
pub(crate) async fn position_move(
    ApiJson(req): ApiJson<PositionMove>,
) -> ApiResult<Json<PlayedMove>> {
    let rules = req.rules.unwrap_or_default();
    let pos = parse_position("position", &req.position)?.with_pie(req.pie);
    Ok(Json(play_view(&pos, req.mv, rules)?))
}

#[derive(Deserialize)]
pub(crate) struct StartQuery {
    pits: Option<String>,
    seeds: Option<String>,
}

/// Kalah(6, 4) when the query names no board: the usual game.
const START_PITS: u32 = 6;
const START_SEEDS: u32 = 4;

impl utoipa::IntoParams for StartQuery {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        use super::api_doc::{integer, query_param};
        vec![
            query_param(
                "pits",
                "pits a side",
                integer().default(Some(serde_json::json!(START_PITS))),
            ),
            query_param(
                "seeds",
                "seeds a pit",
                integer().default(Some(serde_json::json!(START_SEEDS))),
            ),
        ]
    }
}

fn query_number(field: &str, value: Option<&str>, default: u32) -> ApiResult<u32> {
    match value {
        None | Some("") => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| ApiError::invalid(field, format!("must be a whole number, got {v:?}"))),
    }
}

#[utoipa::path(
    get, path = "/position/start", operation_id = "position_start",
    summary = "The start position of Kalah(pits, seeds)",
    params(StartQuery),
    responses(
        (status = 200, description = "the position", body = PositionView),
        super::api_doc::BadRequest, super::api_doc::Invalid,
    )
)]
pub(crate) async fn position_start(
    ApiQuery(q): ApiQuery<StartQuery>,
) -> ApiResult<Json<PositionView>> {
    let pits = query_number("pits", q.pits.as_deref(), START_PITS)?;
    let seeds = query_number("seeds", q.seeds.as_deref(), START_SEEDS)?;
    let pos = Position::start(pits as usize, seeds).map_err(|e| ApiError::from_game("pits", &e))?;
    Ok(Json(position_view(&pos)))
}
