//! The ladder's routes: `GET /api/ladders`, `GET /api/ladder` and
//! `POST /api/ladder/players/{id}/withdraw` read and change the rows every server shares;
//! the scheduler that plays the ladder's games is the runner's
//! (`runner::ladder`, docs/explanation/statistics.md#the-ladder).

use std::collections::HashMap;

use axum::extract::State;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::error::{ApiError, ApiResult};
use super::extract::{ApiPath, ApiQuery};
use super::guard::{not_yours, Caller};
use super::state::SharedState;
use crate::game::{excerpt, Rules};
use crate::runner::ladder::{anchors, ladder_id, LadderPlayerRow, MAX_DEPTH, SETTLED_MARGIN};

/// Points of each player's rating over time `GET /api/ladder` returns at most.
const HISTORY_POINTS: usize = 100;
/// `GET /api/ladder`'s query: a ladder by board, rules and pie (and depth), or by one of its
/// runs.
#[derive(Debug, Deserialize)]
pub(crate) struct LadderQuery {
    board: Option<String>,
    rules: Option<String>,
    pie: Option<bool>,
    depth: Option<u32>,
    run: Option<String>,
}

impl utoipa::IntoParams for LadderQuery {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        use super::api_doc::{integer, query_param, text};
        vec![
            query_param(
                "board",
                "pits,seeds",
                text()
                    .default(Some(json!("6,4")))
                    .pattern(Some("^[0-9]+,[0-9]+$")),
            ),
            query_param(
                "rules",
                "standard or empty-capture",
                text()
                    .enum_values(Some(["standard", "empty-capture"]))
                    .default(Some(json!("standard"))),
            ),
            query_param(
                "pie",
                "the pie rule",
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::Type::Boolean)
                    .default(Some(json!(false))),
            ),
            query_param(
                "depth",
                "the depth of the ladder's games (default: the server's)",
                integer().minimum(Some(1)).maximum(Some(MAX_DEPTH)),
            ),
            query_param(
                "run",
                "instead of the above: the ladder on which this run's champion plays",
                text(),
            ),
        ]
    }
}

/// One player as `GET /api/ladder` shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct LadderPlayerView {
    id: String,
    name: String,
    /// `champion` (a run's best) or `anchor` (a hosted agent).
    kind: &'static str,
    /// The agent as played, a JSON spec (null when it cannot play).
    #[schema(value_type = Option<Object>)]
    spec: serde_json::Value,
    run_id: Option<String>,
    /// The user whose run it is, on a server with users.
    owner: Option<String>,
    /// Place among the players still on the ladder, by rating, from 1.
    rank: Option<u32>,
    /// Elo relative to the reference anchor; none before its first fit.
    elo: Option<f64>,
    /// The 95% interval: elo - margin to elo + margin.
    margin: Option<f64>,
    low: Option<f64>,
    high: Option<f64>,
    /// Trials (colour-swapped pairs) played.
    trials: u64,
    /// Share of the points in those trials.
    score: Option<f64>,
    withdrawn: bool,
    entered_at: String,
}

/// One point of a player's rating over time.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct LadderHistoryPoint {
    player: String,
    at: String,
    elo: f64,
    margin: f64,
    trials: u64,
}

/// `GET /api/ladder`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct LadderView {
    /// Board, rules, pie and depth, as one id; none when no run has finished on it yet.
    id: Option<String>,
    pits: usize,
    seeds: u32,
    rules: String,
    pie: bool,
    /// Every game is played at this fixed depth.
    depth: u32,
    /// The player rated 0.
    reference: String,
    /// The method, in a line.
    method: &'static str,
    /// The ladder plays while some interval is wider than this (Elo, plus or minus).
    settled_margin: f64,
    /// The share of the cores this server gives the ladder (0: none).
    share: f64,
    trials: u64,
    /// By rating, the best first; withdrawn players last.
    players: Vec<LadderPlayerView>,
    /// Each player's rating over time, oldest first (at most 100 points each).
    history: Vec<LadderHistoryPoint>,
}

/// One ladder in `GET /api/ladders`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct LadderSummary {
    id: String,
    /// `pits,seeds`, as `GET /api/ladder?board=` takes it.
    board: String,
    rules: String,
    pie: bool,
    depth: u32,
    created_at: String,
}

/// `GET /api/ladders`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct LadderList {
    ladders: Vec<LadderSummary>,
}

const METHOD: &str = "Bradley-Terry maximum a posteriori fit over colour-swapped pairs at fixed depth, one virtual draw against the reference, 95% intervals from the observed information";

#[utoipa::path(
    get, path = "/ladders", operation_id = "list_ladders",
    summary = "The ladders: one per board, rules, pie setting and depth on which a run has finished",
    responses((status = 200, description = "the ladders", body = LadderList))
)]
pub(crate) async fn list(State(state): State<SharedState>) -> ApiResult<Json<LadderList>> {
    let ladders = state
        .store
        .ladders()
        .await?
        .into_iter()
        .map(|l| LadderSummary {
            board: format!("{},{}", l.pits, l.seeds),
            id: l.id,
            rules: l.rules,
            pie: l.pie,
            depth: l.depth,
            created_at: l.created_at,
        })
        .collect();
    Ok(Json(LadderList { ladders }))
}

/// A board written `pits,seeds`, as the command line takes it.
fn parse_board(text: &str) -> ApiResult<(usize, u32)> {
    crate::game::parse_board(text).map_err(|e| ApiError::invalid("board", e.to_string()))
}

#[utoipa::path(
    get, path = "/ladder", operation_id = "show_ladder",
    summary = "A ladder: every player with its rating, interval, trials and owner, and the ratings over time (with run=ID: the ladder that run's champion plays on, or will once entered)",
    params(LadderQuery),
    responses(
        (status = 200, description = "the ladder (no players when no run has finished on it)", body = LadderView),
        super::api_doc::BadRequest, super::api_doc::NotFound, super::api_doc::Invalid,
    )
)]
pub(crate) async fn show(
    State(state): State<SharedState>,
    ApiQuery(query): ApiQuery<LadderQuery>,
) -> ApiResult<Json<LadderView>> {
    let settings = state.ladder;
    let (pits, seeds, rules, pie, depth) = if let Some(run) = &query.run {
        let no_ladder = || {
            ApiError::not_found(format!(
                "no run {:?} with a ladder: no such run, or its config does not read",
                excerpt(run)
            ))
        };
        // Ids are UUIDs; anything else names nothing (and PostgreSQL refuses a NUL byte).
        if uuid::Uuid::parse_str(run).is_err() {
            return Err(no_ladder());
        }
        let entries = state.store.ladder_players_of_run(run).await?;
        let ladders = state.store.ladders().await?;
        let entered = entries
            .iter()
            .filter_map(|p| ladders.iter().find(|l| l.id == p.ladder))
            .find(|l| l.depth == settings.depth);
        match entered {
            Some(ladder) => (
                ladder.pits,
                ladder.seeds,
                rules_named(&ladder.rules)?,
                ladder.pie,
                ladder.depth,
            ),
            // Not entered yet (it has not finished, or the ladder has not taken it in): the
            // ladder it will enter, without it.
            None => {
                let found = state.store.get_run(run).await?.ok_or_else(no_ladder)?;
                let config = found.config().map_err(|_| no_ladder())?.spec();
                let board = config.board();
                (
                    board.pits,
                    board.seeds,
                    config.rules(),
                    config.pie(),
                    settings.depth,
                )
            }
        }
    } else {
        let (pits, seeds) = parse_board(query.board.as_deref().unwrap_or("6,4"))?;
        let rules = rules_named(query.rules.as_deref().unwrap_or("standard"))?;
        let depth = query.depth.unwrap_or(settings.depth);
        if depth == 0 || depth > MAX_DEPTH {
            return Err(ApiError::invalid(
                "depth",
                format!("must be 1 to {MAX_DEPTH}, got {depth}"),
            ));
        }
        (pits, seeds, rules, query.pie.unwrap_or(false), depth)
    };
    let id = ladder_id(pits, seeds, rules, pie, depth);
    let exists = state.store.ladders().await?.iter().any(|l| l.id == id);
    let players = if exists {
        state.store.ladder_players(&id).await?
    } else {
        Vec::new()
    };
    let history = if exists {
        state.store.ladder_history(&id).await?
    } else {
        Vec::new()
    };
    let mut views: Vec<LadderPlayerView> = players.iter().map(player_view).collect();
    views.sort_by(|x, y| {
        x.withdrawn.cmp(&y.withdrawn).then(
            y.elo
                .unwrap_or(f64::MIN)
                .total_cmp(&x.elo.unwrap_or(f64::MIN)),
        )
    });
    let mut rank = 0;
    for v in views.iter_mut().filter(|v| !v.withdrawn && v.elo.is_some()) {
        rank += 1;
        v.rank = Some(rank);
    }
    let trials = players.iter().map(|p| p.trials).sum::<u64>() / 2;
    Ok(Json(LadderView {
        id: exists.then_some(id),
        pits,
        seeds,
        rules: rules.to_string(),
        pie,
        depth,
        reference: anchors(depth)[0].clone(),
        method: METHOD,
        settled_margin: SETTLED_MARGIN,
        share: settings.share,
        trials,
        players: views,
        history: thin(history),
    }))
}

fn rules_named(name: &str) -> ApiResult<Rules> {
    name.parse()
        .map_err(|e: crate::game::GameError| ApiError::invalid("rules", e.to_string()))
}

/// At most [`HISTORY_POINTS`] points per player, evenly spread, the last always kept.
fn thin(points: Vec<crate::store::LadderRatingPoint>) -> Vec<LadderHistoryPoint> {
    let mut by_player: HashMap<String, Vec<crate::store::LadderRatingPoint>> = HashMap::new();
    for p in points {
        by_player.entry(p.player.clone()).or_default().push(p);
    }
    let mut out = Vec::new();
    for (_, points) in by_player {
        let n = points.len();
        let step = n.div_ceil(HISTORY_POINTS).max(1);
        for (k, p) in points.into_iter().enumerate() {
            if k % step == 0 || k + 1 == n {
                out.push(LadderHistoryPoint {
                    player: p.player,
                    at: p.at,
                    elo: p.elo,
                    margin: p.margin,
                    trials: p.trials,
                });
            }
        }
    }
    out.sort_by(|x, y| x.at.cmp(&y.at).then(x.player.cmp(&y.player)));
    out
}

fn player_view(p: &LadderPlayerRow) -> LadderPlayerView {
    LadderPlayerView {
        id: p.id.clone(),
        name: p.name.clone(),
        kind: if p.anchor { "anchor" } else { "champion" },
        spec: serde_json::from_str(&p.spec).unwrap_or(serde_json::Value::Null),
        run_id: p.run_id.clone(),
        owner: p.owner.clone(),
        rank: None,
        elo: p.elo,
        margin: p.margin,
        low: p.elo.zip(p.margin).map(|(e, m)| e - m),
        high: p.elo.zip(p.margin).map(|(e, m)| e + m),
        trials: p.trials,
        score: (p.trials > 0).then(|| p.points / p.trials as f64),
        withdrawn: p.withdrawn_at.is_some(),
        entered_at: p.created_at.clone(),
    }
}

#[utoipa::path(
    post, path = "/ladder/players/{id}/withdraw", operation_id = "withdraw_ladder_player",
    summary = "Withdraw a player from its ladder: it plays no more games (its owner or an admin; anchors: an admin)",
    params(("id" = String, Path, description = "the player's id")),
    responses(
        (status = 200, description = "the player, withdrawn", body = LadderPlayerView),
        super::api_doc::NotFound, super::api_doc::Conflict,
    )
)]
pub(crate) async fn withdraw(
    State(state): State<SharedState>,
    Extension(caller): Extension<Caller>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<LadderPlayerView>> {
    let missing = || ApiError::not_found(format!("no ladder player {:?}", excerpt(&id)));
    if uuid::Uuid::parse_str(&id).is_err() {
        return Err(missing());
    }
    let player = state.store.ladder_player(&id).await?.ok_or_else(missing)?;
    if !caller.may_change(player.owner.as_deref()) {
        return Err(not_yours(
            &format!("ladder player {id}"),
            player.owner.as_deref(),
        ));
    }
    if !state.store.withdraw_ladder_player(&id).await? {
        return Err(ApiError::conflict(format!(
            "ladder player {id} is withdrawn already"
        )));
    }
    tracing::info!(player = %id, "withdrawn from the ladder");
    let player = state.store.ladder_player(&id).await?.ok_or_else(missing)?;
    Ok(Json(player_view(&player)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_read_as_written() {
        assert_eq!(parse_board("6,4").unwrap(), (6, 4));
        assert!(parse_board("6").is_err());
        assert!(parse_board("0,4").is_err());
    }
}
