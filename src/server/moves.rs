//! Positions and moves over HTTP: the start position, a human's move, an agent's move.

use std::time::Instant;

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::agents::resolve_agent;
use super::compute::compute;
use super::error::{ApiError, ApiJson, ApiQuery, ApiResult};
use super::state::SharedState;
use crate::agents::{rng_from_seed, Profile};
use crate::game::{parse_kpn, to_kpn, Position, Rules, Side};

pub fn parse_rules(field: &str, rules: Option<&str>) -> ApiResult<Rules> {
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
    map.insert("swap".into(), json!(mv == crate::game::SWAP));
    Ok(view)
}

/// `POST /api/move`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveRequest {
    #[schema(schema_with = super::schemas::api_agent)]
    agent: Value,
    /// The position in KPN (docs/rules.md): South's pits, store, North's pits, store, the
    /// side to move, and `P` when the pie rule's swap is on offer. The parser checks the rest.
    #[schema(pattern = r"^\s*\d+(,\d+)*/\d+/\d+(,\d+)*/\d+/[SsNn](/P)?\s*$")]
    position: String,
    /// Seeds the agent's tie-breaking (and MCTS's playouts).
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    #[schema(value_type = Option<crate::game::Rules>)]
    rules: Option<String>,
    /// The pie rule: a start position is the opening, whose move earns no extra turn and
    /// lets North swap. A position offering the swap says so itself (KPN field `P`).
    #[serde(default)]
    pie: bool,
}

pub async fn best_move(
    State(state): State<SharedState>,
    ApiJson(req): ApiJson<MoveRequest>,
) -> ApiResult<Json<Value>> {
    let rules = parse_rules("rules", req.rules.as_deref())?;
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
    let mut view = play_view(&pos, decision.mv, rules)?;
    let map = view.as_object_mut().expect("an object");
    map.insert("nodes".into(), json!(decision.nodes));
    map.insert("playouts".into(), json!(decision.playouts));
    map.insert("value".into(), json!(decision.value));
    map.insert(
        "value_text".into(),
        json!(decision.value.map(|v| v.describe())),
    );
    map.insert("agent".into(), json!(spec.to_string()));
    map.insert("ms".into(), json!(started.elapsed().as_secs_f64() * 1e3));
    Ok(Json(view))
}

/// `POST /api/position`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionMove {
    /// The position in KPN, as for `/api/move`.
    #[schema(pattern = r"^\s*\d+(,\d+)*/\d+/\d+(,\d+)*/\d+/[SsNn](/P)?\s*$")]
    position: String,
    /// 1 to the number of pits from the mover's side, or 16 for the pie rule's swap.
    #[serde(rename = "move")]
    #[schema(minimum = 1, maximum = 16)]
    mv: usize,
    #[serde(default)]
    #[schema(value_type = Option<crate::game::Rules>)]
    rules: Option<String>,
    /// The pie rule, as for `/api/move`.
    #[serde(default)]
    pie: bool,
}

pub async fn position_move(ApiJson(req): ApiJson<PositionMove>) -> ApiResult<Json<Value>> {
    let rules = parse_rules("rules", req.rules.as_deref())?;
    let pos = parse_position("position", &req.position)?.with_pie(req.pie);
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

pub async fn position_start(ApiQuery(q): ApiQuery<StartQuery>) -> ApiResult<Json<Value>> {
    let pits = query_number("pits", q.pits.as_deref(), 6)?;
    let seeds = query_number("seeds", q.seeds.as_deref(), 4)?;
    let pos = Position::start(pits as usize, seeds).map_err(|e| ApiError::from_game("pits", &e))?;
    Ok(Json(position_view(&pos)))
}
