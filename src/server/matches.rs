//! Matches over HTTP: two agents, colour-swapped pairs of games, played while the request
//! waits.

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agents::resolve_agent;
use super::compute::compute;
use super::error::{ApiError, ApiResult};
use super::extract::ApiJson;
use super::state::SharedState;
use crate::agents::cost::games_core_minutes;
use crate::agents::{AgentSpec, FileAccess, Profile};
use crate::game::{Position, Rules};
use crate::matches::play_match_within;
use crate::matches::sprt::{play_sprt_within, Sprt, SprtError};
use crate::matches::{Setup, MAX_OPENING_PLIES};

/// Most games in one `/api/matches` request.
pub(crate) const MAX_MATCH_GAMES: u32 = 200;

/// Kalah(pits, seeds).
#[derive(Deserialize, Clone, Copy, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BoardBody {
    #[schema(minimum = 1)]
    pits: usize,
    #[schema(minimum = 1)]
    seeds: u32,
}

/// Games of a match that names no number.
const DEFAULT_MATCH_GAMES: u32 = 10;
/// Most pairs one SPRT request may play.
pub(crate) const MAX_SPRT_PAIRS: u64 = 2000;

/// `POST /api/matches`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MatchRequest {
    #[schema(schema_with = super::schemas::api_agent)]
    south: Value,
    #[schema(schema_with = super::schemas::api_agent)]
    north: Value,
    /// Games in all (default 10): an even number, as colour-swapped pairs are played, unless
    /// `fixed_colours`; not with `sprt`, which decides how many it needs.
    #[serde(default)]
    #[schema(minimum = 1)]
    games: Option<u32>,
    #[serde(default)]
    seed: u64,
    /// Random sowings from the start, shared by both games of a pair.
    #[serde(default)]
    opening_plies: u32,
    #[serde(default)]
    board: Option<BoardBody>,
    #[serde(default, deserialize_with = "super::moves::rules_by_name")]
    rules: Option<Rules>,
    /// The pie rule (docs/reference/rules.md).
    #[serde(default)]
    pie: bool,
    /// Keep `south` South in every game instead of colour-swapped pairs.
    #[serde(default)]
    fixed_colours: bool,
    /// Play pairs until a sequential test decides: `"0,10"` or `{"elo0": 0, "elo1": 10,
    /// "alpha": 0.05, "beta": 0.05}`.
    #[serde(default)]
    #[schema(schema_with = super::schemas::sprt)]
    sprt: Option<SprtBounds>,
    /// With `sprt`: the most pairs to play before stopping inconclusive (default 1000).
    #[serde(default)]
    #[schema(minimum = 1)]
    max_pairs: Option<u64>,
}

pub(crate) fn setup_of(
    board: Option<BoardBody>,
    rules: Option<Rules>,
    pie: bool,
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
        rules: rules.unwrap_or_default(),
        pie,
        opening_plies,
        seed,
    })
}

/// `POST /api/matches`' answer: the games with A's score, or with `sprt` the test's report.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub(crate) enum MatchAnswer {
    Games(MatchGames),
    /// With `sprt`: the test's counts, LLR with its bounds, pairs, verdict and Elo estimate.
    #[schema(value_type = super::schemas::SprtReportSchema)]
    Sprt(Value),
}

/// A match of fixed length: every game, A's score, and the report without the games. Fields
/// in alphabetical order, the order the API's objects have always had.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct MatchGames {
    /// Every game: its moves, its result, who played South.
    #[schema(value_type = Vec<Object>)]
    games: Value,
    /// A's score, draws counting half, 0 to 1.
    score: f64,
    /// The match report: both agents' scores with their intervals, the settings.
    #[schema(value_type = Object)]
    summary: Value,
}

#[utoipa::path(
    post, path = "/matches", operation_id = "play_match",
    summary = "Play a match of colour-swapped pairs",
    request_body = MatchRequest,
    responses(
        (status = 200, description = "games, A's score and the report; with sprt, the test's report", body = MatchAnswer),
        super::api_doc::BadRequest, super::api_doc::Invalid, super::api_doc::Busy,
    )
)]
pub(crate) async fn play_match(
    State(state): State<SharedState>,
    ApiJson(req): ApiJson<MatchRequest>,
) -> ApiResult<Json<MatchAnswer>> {
    let setup = setup_of(req.board, req.rules, req.pie, req.opening_plies, req.seed)?;
    let a = resolve_agent(&state, "south", &req.south).await?;
    let b = resolve_agent(&state, "north", &req.north).await?;
    if let Some(SprtBounds(sprt)) = req.sprt {
        return play_sprt_match(&state, &req, sprt, a, b, setup).await;
    }
    if req.max_pairs.is_some() {
        return Err(ApiError::invalid("max_pairs", "only with sprt"));
    }
    let games = req.games.unwrap_or(DEFAULT_MATCH_GAMES);
    if games == 0 || games > MAX_MATCH_GAMES {
        return Err(ApiError::invalid(
            "games",
            format!("must be 1 to {MAX_MATCH_GAMES}, got {games}"),
        ));
    }
    let swap = !req.fixed_colours;
    if swap && games % 2 == 1 {
        return Err(ApiError::invalid(
            "games",
            format!(
                "must be even: colour-swapped pairs are played (or set fixed_colours), got {games}"
            ),
        ));
    }
    check_cost("games", &[(&a, &b, games as u64)], &setup, CostCap::Match)?;
    let files = state.files.clone();
    let budget = Profile::Api.limits().match_budget();
    let _stop_if_dropped = budget.cancel_on_drop();
    let bounds = budget.clone();
    let report = compute(&state, &budget, move || {
        let (a, b) = locate_pair(&a, &b, &files)?;
        play_match_within(&a, &b, games, &setup, swap, true, &bounds)
            .map_err(|e| ApiError::from_match(&e))
    })
    .await??;
    let game_list = serde_json::to_value(&report.game_list).map_err(ApiError::internal)?;
    let score = report.a_score.score;
    let mut summary = serde_json::to_value(&report).map_err(ApiError::internal)?;
    if let Some(map) = summary.as_object_mut() {
        map.remove("game_list");
    }
    Ok(Json(MatchAnswer::Games(MatchGames {
        games: game_list,
        score,
        summary,
    })))
}

/// Which cap of the limits table a request's games fall under.
#[derive(Clone, Copy)]
pub(crate) enum CostCap {
    /// A match played while its request waits.
    Match,
    /// A tournament, played in the background.
    Tournament,
}

/// Refuses a match or tournament whose games (each pairing with its number of games) would
/// take more processor time than the API's limits table allows, by the estimate of
/// [`games_core_minutes`]: two `mcts` agents thinking 10 s a move would otherwise be accepted
/// for days of games.
pub(crate) fn check_cost(
    field: &str,
    pairings: &[(&AgentSpec, &AgentSpec, u64)],
    setup: &Setup,
    cap: CostCap,
) -> ApiResult<()> {
    let minutes: f64 = pairings
        .iter()
        .map(|(a, b, games)| games_core_minutes(a, b, *games, setup.pits, setup.seeds))
        .sum();
    let limits = Profile::Api.limits();
    let (max, longer) = match cap {
        CostCap::Match => (
            limits.max_match_core_minutes,
            "a tournament, a run or the command line plays longer",
        ),
        CostCap::Tournament => (
            limits.max_games_core_minutes,
            "a run or the command line plays longer",
        ),
    };
    if minutes > max as f64 {
        return Err(ApiError::invalid(
            field,
            format!(
                "these games would take about {minutes:.0} core-minutes by a rough estimate; at most {max} are allowed through the API: fewer games, or cheaper agents ({longer})"
            ),
        ));
    }
    Ok(())
}

/// The two agents of a match as they are built ([`AgentSpec::locate`]); on the interactive pool,
/// since locating a model looks at the disk.
fn locate_pair(
    a: &AgentSpec,
    b: &AgentSpec,
    files: &FileAccess,
) -> ApiResult<(AgentSpec, AgentSpec)> {
    Ok((
        a.locate(files)
            .map_err(|e| ApiError::from_spec("south", &e))?,
        b.locate(files)
            .map_err(|e| ApiError::from_spec("north", &e))?,
    ))
}

/// An SPRT of a request: `"ELO0,ELO1[,ALPHA,BETA]"` or `{elo0, elo1, alpha, beta}`.
/// An SPRT as a request gives it: `"ELO0,ELO1[,ALPHA,BETA]"` or `{elo0, elo1, alpha, beta}`,
/// checked as it is read (422, `sprt`, in the test's own words).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SprtBounds(pub Sprt);

impl<'de> Deserialize<'de> for SprtBounds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(text) => Sprt::parse(&text),
            other => serde_json::from_value::<Sprt>(other)
                .map_err(|e| SprtError(e.to_string()))
                .and_then(|s| s.validate().map(|()| s)),
        }
        .map(SprtBounds)
        .map_err(serde::de::Error::custom)
    }
}

/// The SPRT form of a match: the report of [`play_sprt`] (counts, LLR, bounds, verdict, Elo).
async fn play_sprt_match(
    state: &SharedState,
    req: &MatchRequest,
    sprt: Sprt,
    a: AgentSpec,
    b: AgentSpec,
    setup: Setup,
) -> ApiResult<Json<MatchAnswer>> {
    if req.games.is_some() || req.fixed_colours {
        return Err(ApiError::invalid(
            "sprt",
            "an SPRT plays colour-swapped pairs until it decides: give max_pairs, not games or fixed_colours",
        ));
    }
    let max_pairs = req.max_pairs.unwrap_or(MAX_SPRT_PAIRS / 2);
    if max_pairs == 0 || max_pairs > MAX_SPRT_PAIRS {
        return Err(ApiError::invalid(
            "max_pairs",
            format!("must be 1 to {MAX_SPRT_PAIRS}, got {max_pairs}"),
        ));
    }
    check_cost(
        "max_pairs",
        &[(&a, &b, 2 * max_pairs)],
        &setup,
        CostCap::Match,
    )?;
    let files = state.files.clone();
    let budget = Profile::Api.limits().match_budget();
    let _stop_if_dropped = budget.cancel_on_drop();
    let bounds = budget.clone();
    let report = compute(state, &budget, move || {
        let (a, b) = locate_pair(&a, &b, &files)?;
        play_sprt_within(&a, &b, &setup, sprt, max_pairs, |_| {}, &bounds)
            .map_err(|e| ApiError::from_match(&e))
    })
    .await??;
    let report = serde_json::to_value(&report).map_err(ApiError::internal)?;
    Ok(Json(MatchAnswer::Sprt(report)))
}
