//! The ladder: every finished run's champion, beside hosted anchors, rated on one Elo scale
//! per board, rules, pie setting and depth (docs/explanation/statistics.md#the-ladder).
//!
//! - The scheduler ([`schedule`]) runs in every server; the one that holds the database's
//!   ladder lease enrols champions of newly finished runs (and, with a ladder's first
//!   champion, its anchors), picks the pairing whose games would narrow the intervals most,
//!   has a few colour-swapped pairs of it played at fixed depth, and writes the trials with a
//!   new Bradley-Terry fit. It plays only while some player's interval is wider than
//!   [`SETTLED_MARGIN`], and only its configured share of the cores.
//! - Where the job queue has live workers (PostgreSQL), a round goes to them, after every
//!   run's batches; its processor time `p` on `n` worker threads is followed by a rest of
//!   `p / (share n) - t` (`t` the round's wall time). Elsewhere it plays here on threads of
//!   its own at the lowest priority, and a round that took `t` is followed by a rest of
//!   `t (1/duty - 1)`.
//! - `GET /api/ladders`, `GET /api/ladder` and `POST /api/ladder/players/{id}/withdraw` read
//!   and change the rows every server shares.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::error::{ApiError, ApiResult};
use super::extract::{ApiPath, ApiQuery};
use super::guard::{not_yours, Caller};
use super::state::SharedState;
pub(crate) use super::state::{LadderSettings, DEFAULT_DEPTH, DEFAULT_SHARE, MAX_DEPTH};
use crate::agents::AgentSpec;
use crate::game::{excerpt, Rules};
use crate::matches::rating::{fit, Ratings, Trial};
use crate::matches::{derive_seed, Setup};
use crate::runner::pairs::{play_pairs, PlayPairs};
use crate::runner::SliceKey;
use crate::search::Depth;
use crate::store::{LadderFit, LadderPlayerRow, LadderRow, LadderTrial, RunRow, StoreError};

/// The ladder plays while some active player's 95% interval is wider than this, in Elo
/// (plus or minus), and rests once every interval is narrower.
pub(crate) const SETTLED_MARGIN: f64 = 30.0;
/// Colour-swapped pairs per round, between one pairing.
const PAIRS_PER_ROUND: u32 = 4;
/// Random sowings before the agents take over, the same for both games of a pair.
const OPENING_PLIES: u32 = 4;
/// The lease on scheduling: renewed before and after each round, so a server that died is
/// replaced within this.
const LEASE: Duration = Duration::from_secs(60);
/// How often a server without work (or without the lease) looks again.
const IDLE_POLL: Duration = Duration::from_secs(2);
/// A point of every player's rating over time at most this often per ladder.
const SNAPSHOT_EVERY: Duration = Duration::from_secs(30);
/// Finished runs enrolled per round.
const ENROL_BATCH: u32 = 20;
/// Points of each player's rating over time `GET /api/ladder` returns at most.
const HISTORY_POINTS: usize = 100;

/// The ladder's id for a board, rules, pie setting and depth.
pub(crate) fn ladder_id(pits: usize, seeds: u32, rules: Rules, pie: bool, depth: u32) -> String {
    let pie = if pie { " pie" } else { "" };
    format!("{pits},{seeds} {rules}{pie} depth {depth}")
}

/// The hosted anchors of a ladder at `depth`, the reference (rated 0) first: plain minimax at
/// the ladder's depth, so a champion's rating says what its weights gain over the store
/// difference at equal depth.
fn anchors(depth: u32) -> Vec<String> {
    let mut specs = vec![
        format!("minimax:{depth}"),
        format!("minimax:{}", depth.saturating_sub(2).max(1)),
        format!("minimax:{}", depth + 2),
        "greedy".to_string(),
        "mcts:1000".to_string(),
        format!("heuristic:hunter10:published:{depth}"),
        format!("heuristic:divilly6:published:{depth}"),
        format!("heuristic:abrams3:published:{depth}"),
    ];
    let mut seen = std::collections::HashSet::new();
    specs.retain(|s| seen.insert(s.clone()));
    specs
}

/// `spec` searching to exactly `depth` plies: the ladder compares weights at equal depth.
fn at_depth(mut spec: AgentSpec, depth: u32) -> AgentSpec {
    match &mut spec {
        AgentSpec::Heuristic {
            depth: d,
            time_ms,
            nodes,
            ..
        }
        | AgentSpec::Minimax {
            depth: d,
            time_ms,
            nodes,
            ..
        } => {
            *d = Depth::Fixed(depth);
            *time_ms = None;
            *nodes = None;
        }
        AgentSpec::PekarMinimax { depth: d, .. } => *d = Depth::Fixed(depth),
        _ => {}
    }
    spec
}

fn spec_json(spec: &AgentSpec) -> String {
    serde_json::to_string(spec).unwrap_or_else(|_| "null".into())
}

/// Enters the champions of finished runs not on a ladder yet, with their ladders' anchors.
async fn enrol(state: &SharedState, depth: u32) -> Result<(), StoreError> {
    for run in state.store.runs_off_the_ladder(ENROL_BATCH).await? {
        let last = state.store.last_record(&run.id).await?;
        let entry = champion(&run, last.as_ref(), depth);
        let created_at = crate::store::now_rfc3339();
        let (ladder, spec, withdrawn_at) = match entry {
            Ok((ladder, spec)) => (ladder, spec_json(&spec), None),
            Err((ladder, why)) => {
                tracing::warn!(run = %run.id, "its champion cannot play on the ladder: {why}");
                (ladder, "null".into(), Some(created_at.clone()))
            }
        };
        let new_ladder = LadderRow {
            created_at: created_at.clone(),
            ..ladder
        };
        state.store.ensure_ladder(&new_ladder).await?;
        for anchor in anchors(new_ladder.depth) {
            let Ok(spec) = AgentSpec::parse(&anchor) else {
                continue;
            };
            state
                .store
                .enter_ladder(&LadderPlayerRow {
                    id: uuid::Uuid::now_v7().to_string(),
                    ladder: new_ladder.id.clone(),
                    entry: format!("anchor:{anchor}"),
                    name: anchor.clone(),
                    spec: spec_json(&spec),
                    run_id: None,
                    owner: None,
                    anchor: true,
                    created_at: created_at.clone(),
                    withdrawn_at: None,
                    elo: None,
                    margin: None,
                    trials: 0,
                    points: 0.0,
                })
                .await?;
        }
        let short = run.id.get(..8).unwrap_or(&run.id);
        let entered = state
            .store
            .enter_ladder(&LadderPlayerRow {
                id: uuid::Uuid::now_v7().to_string(),
                ladder: new_ladder.id.clone(),
                entry: format!("run:{}", run.id),
                name: run
                    .name
                    .clone()
                    .filter(|n| !n.trim().is_empty())
                    .unwrap_or_else(|| format!("run {short}")),
                spec,
                run_id: Some(run.id.clone()),
                owner: run.created_by.clone(),
                anchor: false,
                created_at,
                withdrawn_at,
                elo: None,
                margin: None,
                trials: 0,
                points: 0.0,
            })
            .await?;
        if entered {
            tracing::info!(run = %run.id, ladder = %new_ladder.id, "champion entered the ladder");
        }
    }
    Ok(())
}

/// A finished run's ladder and its champion at the ladder's depth, or why it cannot play.
fn champion(
    run: &RunRow,
    last: Option<&crate::tune::GenerationRecord>,
    depth: u32,
) -> Result<(LadderRow, AgentSpec), (LadderRow, String)> {
    let (pits, seeds, rules, pie) = match run.config() {
        Ok(config) => {
            let spec = config.spec();
            let board = spec.board();
            (board.pits, board.seeds, spec.rules(), spec.pie())
        }
        Err(_) => (6, 4, Rules::Standard, false),
    };
    let ladder = LadderRow {
        id: ladder_id(pits, seeds, rules, pie, depth),
        pits,
        seeds,
        rules: rules.to_string(),
        pie,
        depth,
        created_at: String::new(),
    };
    let config = match run.config() {
        Ok(config) => config,
        Err(e) => return Err((ladder, e.to_string())),
    };
    let Some(last) = last else {
        return Err((ladder, "the run has no generation".into()));
    };
    match config.agent(last) {
        Ok(spec) => Ok((ladder, at_depth(spec, depth))),
        Err(e) => Err((ladder, e.to_string())),
    }
}

/// A ladder's players and their trials as indices for the fit.
struct Table {
    players: Vec<LadderPlayerRow>,
    trials: Vec<Trial>,
    /// The reference anchor's index.
    pinned: usize,
}

impl Table {
    async fn read(state: &SharedState, ladder: &LadderRow) -> Result<Option<Table>, StoreError> {
        let players = state.store.ladder_players(&ladder.id).await?;
        let reference = format!("anchor:{}", anchors(ladder.depth)[0]);
        let Some(pinned) = players.iter().position(|p| p.entry == reference) else {
            return Ok(None);
        };
        let index: HashMap<&str, usize> = players
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.as_str(), i))
            .collect();
        let trials = state
            .store
            .ladder_trials(&ladder.id)
            .await?
            .iter()
            .filter_map(|t| {
                Some(Trial {
                    a: *index.get(t.a.as_str())?,
                    b: *index.get(t.b.as_str())?,
                    a_score: t.a_score,
                })
            })
            .collect();
        Ok(Some(Table {
            players,
            trials,
            pinned,
        }))
    }

    fn fit(&self) -> Option<Ratings> {
        fit(self.players.len(), self.pinned, &self.trials).ok()
    }

    /// Players that still play: not withdrawn, and able to.
    fn active(&self) -> Vec<usize> {
        (0..self.players.len())
            .filter(|&i| self.players[i].withdrawn_at.is_none() && self.players[i].spec != "null")
            .collect()
    }

    fn fits(&self, ratings: &Ratings) -> Vec<LadderFit> {
        let mut points = vec![0.0; self.players.len()];
        for t in &self.trials {
            points[t.a] += t.a_score;
            points[t.b] += 1.0 - t.a_score;
        }
        self.players
            .iter()
            .zip(&ratings.players)
            .zip(points)
            .map(|((p, r), points)| LadderFit {
                player: p.id.clone(),
                elo: r.elo,
                margin: r.margin,
                trials: r.trials,
                points,
            })
            .collect()
    }
}

/// What one step of the scheduler did.
enum Step {
    /// Played a round; rest this long before the next to keep to the ladder's share.
    Played { rest: Duration },
    /// Nothing to play, or another server schedules.
    Idle,
}

/// The threads a round plays on here, and the share of their time the ladder may use.
struct LocalThreads {
    pool: std::sync::Arc<rayon::ThreadPool>,
    duty: f64,
    share: f64,
}

/// The scheduler: runs until the server stops. Every server runs one; only the holder of the
/// lease plays.
pub(crate) async fn schedule(state: SharedState, settings: LadderSettings) {
    if settings.share <= 0.0 {
        return;
    }
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2) as f64;
    let wanted = (settings.share.min(1.0) * cores).max(0.01);
    let threads = wanted.ceil().max(1.0) as usize;
    let duty = (wanted / threads as f64).min(1.0);
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("kalah-ladder-{i}"))
        .start_handler(|_| lowest_priority())
        .build()
    {
        Ok(pool) => std::sync::Arc::new(pool),
        Err(e) => {
            tracing::error!("starting the ladder's threads: {e}; no ladder games");
            return;
        }
    };
    let local = LocalThreads {
        pool,
        duty,
        share: settings.share.min(1.0),
    };
    let mut snapshots: HashMap<String, Instant> = HashMap::new();
    let mut turn = 0usize;
    let stopping = state.stopping();
    tokio::pin!(stopping);
    loop {
        // A round under way is given up when the server stops: its games are not written.
        let stepped = tokio::select! {
            _ = &mut stopping => break,
            stepped = step(&state, settings, &local, &mut snapshots, &mut turn) => stepped,
        };
        let rest = match stepped {
            Ok(Step::Played { rest }) => rest,
            Ok(Step::Idle) => IDLE_POLL,
            Err(e) => {
                tracing::warn!("ladder: {e}");
                IDLE_POLL
            }
        };
        tokio::select! {
            _ = &mut stopping => break,
            _ = tokio::time::sleep(rest) => {}
        }
    }
    if let Err(e) = state.store.release_ladder_lease(&state.owner).await {
        tracing::warn!("giving the ladder lease back: {e}");
    }
}

/// Ladder games yield to every other thread: the lowest priority there is.
fn lowest_priority() {
    #[cfg(unix)]
    // SAFETY: nice only changes the scheduling priority of the calling thread.
    unsafe {
        libc::nice(19);
    }
}

async fn step(
    state: &SharedState,
    settings: LadderSettings,
    local: &LocalThreads,
    snapshots: &mut HashMap<String, Instant>,
    turn: &mut usize,
) -> Result<Step, StoreError> {
    if !state.store.take_ladder_lease(&state.owner, LEASE).await? {
        return Ok(Step::Idle);
    }
    enrol(state, settings.depth).await?;
    let ladders: Vec<LadderRow> = state
        .store
        .ladders()
        .await?
        .into_iter()
        .filter(|l| l.depth == settings.depth)
        .collect();
    // Each ladder in turn, so one with many unsettled players does not starve another.
    for k in 0..ladders.len() {
        let ladder = &ladders[(*turn + k) % ladders.len()];
        let Some(table) = Table::read(state, ladder).await? else {
            continue;
        };
        let Some(ratings) = table.fit() else {
            continue;
        };
        let active = table.active();
        let unsettled = active
            .iter()
            .any(|&i| ratings.players[i].margin > SETTLED_MARGIN || ratings.players[i].trials == 0);
        let due = snapshots
            .get(&ladder.id)
            .is_none_or(|at| at.elapsed() >= SNAPSHOT_EVERY);
        if !unsettled {
            // Settled: a last point of the curve with the final fit, then rest.
            if due && table.players.iter().any(|p| p.elo.is_none()) {
                state
                    .store
                    .record_ladder_batch(&ladder.id, &[], &table.fits(&ratings), true)
                    .await?;
                snapshots.insert(ladder.id.clone(), Instant::now());
            }
            continue;
        }
        let Some(((i, j), _)) = ratings.most_informative_pair(&active) else {
            continue;
        };
        *turn = (*turn + k + 1) % ladders.len().max(1);
        let (trials, rest) = play_round(state, local, ladder, &table, i, j).await?;
        // Written only while still the scheduler: a server that lost the lease mid-round
        // drops its round rather than write beside the new holder.
        if !state.store.take_ladder_lease(&state.owner, LEASE).await? {
            return Ok(Step::Idle);
        }
        let mut table = table;
        let stored: Vec<LadderTrial> = trials
            .iter()
            .map(|t| LadderTrial {
                a: table.players[t.a].id.clone(),
                b: table.players[t.b].id.clone(),
                a_score: t.a_score,
            })
            .collect();
        table.trials.extend(trials);
        let Some(ratings) = table.fit() else {
            return Ok(Step::Played { rest });
        };
        let snapshot = snapshots
            .get(&ladder.id)
            .is_none_or(|at| at.elapsed() >= SNAPSHOT_EVERY);
        state
            .store
            .record_ladder_batch(&ladder.id, &stored, &table.fits(&ratings), snapshot)
            .await?;
        if snapshot {
            snapshots.insert(ladder.id.clone(), Instant::now());
        }
        return Ok(Step::Played { rest });
    }
    Ok(Step::Idle)
}

/// Plays [`PAIRS_PER_ROUND`] colour-swapped pairs of players `i` and `j`: on the queue's
/// workers where it has live ones, else (or when none took the round in time) on the ladder's
/// own threads. One trial per pair, and the rest that keeps the ladder to its share. The
/// openings come from the ladder and how many trials it has, so a ladder's games never repeat
/// a seed, and a round's result is the same wherever it is played.
async fn play_round(
    state: &SharedState,
    local: &LocalThreads,
    ladder: &LadderRow,
    table: &Table,
    i: usize,
    j: usize,
) -> Result<(Vec<Trial>, Duration), StoreError> {
    let unplayable =
        |what: &str, e: String| StoreError::Corrupt(format!("ladder player {what}: {e}"));
    let parse = |p: &LadderPlayerRow| -> Result<AgentSpec, StoreError> {
        let value: serde_json::Value =
            serde_json::from_str(&p.spec).map_err(|e| unplayable(&p.name, e.to_string()))?;
        AgentSpec::from_json(&value).map_err(|e| unplayable(&p.name, e.to_string()))
    };
    let (a, b) = (parse(&table.players[i])?, parse(&table.players[j])?);
    let rules: Rules = ladder
        .rules
        .parse()
        .map_err(|e: crate::game::GameError| unplayable("rules", e.to_string()))?;
    let setup = Setup {
        pits: ladder.pits,
        seeds: ladder.seeds,
        rules,
        pie: ladder.pie,
        opening_plies: OPENING_PLIES,
        seed: derive_seed(
            u64::from(crc32fast::hash(ladder.id.as_bytes())),
            &[table.trials.len() as u64],
        ),
    };
    let trials = |scores: Vec<f64>| {
        scores
            .into_iter()
            .map(|a_score| Trial {
                a: i,
                b: j,
                a_score,
            })
            .collect::<Vec<_>>()
    };
    let started = Instant::now();
    if let Some(queue) = &state.queue {
        let threads = live_worker_threads(state).await?;
        if threads > 0 {
            let round = PlayPairs {
                // Names the pairing and how many trials came before: a round asked again
                // (by a server that took the lease over) is played once.
                key: SliceKey {
                    run_id: format!(
                        "ladder:{}:{}:{}",
                        ladder.id, table.players[i].id, table.players[j].id
                    ),
                    generation: table.trials.len() as u32,
                    part: 0,
                    first_job: 0,
                    jobs: u64::from(PAIRS_PER_ROUND),
                },
                a: a.clone(),
                b: b.clone(),
                setup: setup.clone(),
                pairs: PAIRS_PER_ROUND,
            };
            let played = queue
                .play_pairs(&state.store, &round)
                .await
                .map_err(|e| StoreError::Corrupt(format!("a ladder round on the queue: {e}")))?;
            if let Some(result) = played {
                let processor = Duration::from_millis(result.processor_ms);
                let rest = processor
                    .div_f64(local.share.max(0.001) * threads as f64)
                    .saturating_sub(started.elapsed());
                return Ok((trials(result.points), rest));
            }
            tracing::info!(ladder = %ladder.id, "no worker took the ladder's round: played here");
        }
    }
    let pool = local.pool.clone();
    let scores = tokio::task::spawn_blocking(move || {
        pool.install(|| play_pairs(&a, &b, &setup, PAIRS_PER_ROUND))
    })
    .await
    .map_err(|e| StoreError::Corrupt(format!("a ladder round panicked: {e}")))?
    .map_err(|e| unplayable("round", e.to_string()))?;
    let rest = started.elapsed().mul_f64(1.0 / local.duty - 1.0);
    Ok((trials(scores), rest))
}

/// The threads of the batch workers that beat within the last lease (not stopped).
async fn live_worker_threads(state: &SharedState) -> Result<u64, StoreError> {
    let now = time::OffsetDateTime::now_utc();
    Ok(state
        .store
        .list_workers(100)
        .await?
        .iter()
        .filter(|w| super::batch_workers::is_live(w, now))
        .map(|w| u64::from(w.threads))
        .sum())
}

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
    fn anchors_put_the_reference_first_and_repeat_none() {
        assert_eq!(anchors(4)[0], "minimax:4");
        let one = anchors(1);
        assert_eq!(one[0], "minimax:1");
        assert_eq!(one.iter().filter(|s| *s == "minimax:1").count(), 1);
        for spec in anchors(4) {
            AgentSpec::parse(&spec).unwrap();
        }
    }

    #[test]
    fn a_champion_plays_at_the_ladder_depth() {
        let spec = AgentSpec::parse("heuristic:hunter10:published:7").unwrap();
        assert_eq!(
            at_depth(spec, 4).to_string(),
            AgentSpec::parse("heuristic:hunter10:published:4")
                .unwrap()
                .to_string()
        );
    }

    #[test]
    fn boards_and_ladder_ids_read_as_written() {
        assert_eq!(parse_board("6,4").unwrap(), (6, 4));
        assert!(parse_board("6").is_err());
        assert!(parse_board("0,4").is_err());
        assert_eq!(
            ladder_id(6, 4, Rules::Standard, true, 4),
            "6,4 standard pie depth 4"
        );
    }
}
