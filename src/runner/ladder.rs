//! The ladder's scheduler: every finished run's champion, beside hosted anchors, rated on one
//! Elo scale per board, rules, pie setting and depth (docs/explanation/statistics.md#the-ladder).
//!
//! - [`schedule`] runs in every server; the one that holds the database's ladder lease enrols
//!   champions of newly finished runs (and, with a ladder's first champion, its anchors),
//!   picks the pairing whose games would narrow the intervals most, has a few colour-swapped
//!   pairs of it played at fixed depth, and writes the trials with a new Bradley-Terry fit.
//!   It plays only while some player's interval is wider than [`SETTLED_MARGIN`], and only
//!   its configured share of the cores.
//! - Where the job queue has live workers (PostgreSQL), a round goes to them, after every
//!   run's batches; its processor time `p` on `n` worker threads is followed by a rest of
//!   `p / (share n) - t` (`t` the round's wall time). Elsewhere it plays here on threads of
//!   its own at the lowest priority, and a round that took `t` is followed by a rest of
//!   `t (1/duty - 1)`.
//! - What it reads and writes goes through [`LadderStore`], which the store implements; the
//!   rows are this module's.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::pairs::{play_pairs, PlayPairs};
use super::{
    BatchQueue, BatchStore, QueueError, SliceKey, StoreAccessError, StoreFuture, UnreadableRun,
};
use crate::agents::AgentSpec;
use crate::game::Rules;
use crate::matches::rating::{fit, Ratings, Trial};
use crate::matches::{derive_seed, Setup};
use crate::search::Depth;
use crate::tune::{GenerationRecord, TunerConfig};

/// How the ladder plays, from `serve`'s flags.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LadderSettings {
    /// Share of the machine's cores the ladder's games may take, 0 to 1 (0: no ladder games).
    pub share: f64,
    /// The search depth of every ladder game.
    pub depth: u32,
}

impl Default for LadderSettings {
    fn default() -> Self {
        LadderSettings {
            share: DEFAULT_SHARE,
            depth: DEFAULT_DEPTH,
        }
    }
}

/// A tenth of the cores.
pub(crate) const DEFAULT_SHARE: f64 = 0.1;
/// The benchmark panel's depth, at which the main job tunes.
pub(crate) const DEFAULT_DEPTH: u32 = 4;
/// Deepest ladder: the anchors search two plies deeper still.
pub(crate) const MAX_DEPTH: u32 = 10;

/// A ladder: board, rules, pie and the depth its games are played at.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LadderRow {
    pub(crate) id: String,
    pub(crate) pits: usize,
    pub(crate) seeds: u32,
    pub(crate) rules: String,
    pub(crate) pie: bool,
    pub(crate) depth: u32,
    pub(crate) created_at: String,
}

/// A player of a ladder, with its latest fitted rating.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LadderPlayerRow {
    pub(crate) id: String,
    pub(crate) ladder: String,
    pub(crate) entry: String,
    pub(crate) name: String,
    /// The agent as a JSON spec.
    pub(crate) spec: String,
    pub(crate) run_id: Option<String>,
    pub(crate) owner: Option<String>,
    pub(crate) anchor: bool,
    pub(crate) created_at: String,
    pub(crate) withdrawn_at: Option<String>,
    /// None until its first fit.
    pub(crate) elo: Option<f64>,
    pub(crate) margin: Option<f64>,
    pub(crate) trials: u64,
    /// Points scored in those trials (each trial 0 to 1).
    pub(crate) points: f64,
}

/// One fitted rating to write.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LadderFit {
    pub(crate) player: String,
    pub(crate) elo: f64,
    pub(crate) margin: f64,
    pub(crate) trials: u64,
    pub(crate) points: f64,
}

/// One trial as stored: a colour-swapped pair, `a_score` a's share of its points.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LadderTrial {
    pub(crate) a: String,
    pub(crate) b: String,
    pub(crate) a_score: f64,
}

/// A finished run whose champion is on no ladder yet.
pub(crate) struct FinishedRun {
    pub(crate) id: String,
    pub(crate) name: Option<String>,
    pub(crate) created_by: Option<String>,
    pub(crate) config: Result<TunerConfig, UnreadableRun>,
    /// Its last record, whose champion plays.
    pub(crate) last: Option<GenerationRecord>,
}

/// The persistence the scheduler needs, implemented by [`crate::store::Store`]. Trials and
/// ratings are written only by the holder of the lease; entries are unique per ladder, so two
/// servers enrolling one champion make one player.
pub(crate) trait LadderStore: BatchStore {
    /// Takes or renews the scheduling lease for `owner` for `ttl`; `false` while another holds it.
    fn take_ladder_lease<'a>(&'a self, owner: &'a str, ttl: Duration) -> StoreFuture<'a, bool>;

    /// Gives the lease back, if `owner` holds it.
    fn release_ladder_lease<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, ()>;

    /// Up to `limit` finished runs on no ladder yet, the longest finished first.
    fn runs_off_the_ladder(&self, limit: u32) -> StoreFuture<'_, Vec<FinishedRun>>;

    /// Creates the ladder unless it exists.
    fn ensure_ladder<'a>(&'a self, ladder: &'a LadderRow) -> StoreFuture<'a, ()>;

    /// Enters a player unless its entry is on its ladder already; whether it was entered.
    fn enter_ladder<'a>(&'a self, player: &'a LadderPlayerRow) -> StoreFuture<'a, bool>;

    /// Every ladder.
    fn ladders(&self) -> StoreFuture<'_, Vec<LadderRow>>;

    /// A ladder's players.
    fn ladder_players<'a>(&'a self, ladder: &'a str) -> StoreFuture<'a, Vec<LadderPlayerRow>>;

    /// A ladder's trials, oldest first.
    fn ladder_trials<'a>(&'a self, ladder: &'a str) -> StoreFuture<'a, Vec<LadderTrial>>;

    /// Adds `trials` and the new `fits` in one transaction, with a point of every player's
    /// rating over time when `snapshot`.
    fn record_ladder_batch<'a>(
        &'a self,
        ladder: &'a str,
        trials: &'a [LadderTrial],
        fits: &'a [LadderFit],
        snapshot: bool,
    ) -> StoreFuture<'a, ()>;

    /// Now, as the store writes its times (so that they compare as text).
    fn timestamp(&self) -> String;

    /// The game threads of the queue's workers that take batches now.
    fn live_worker_threads(&self) -> StoreFuture<'_, u64>;
}

/// Why a step of the scheduler failed; it tries again after [`IDLE_POLL`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum LadderError {
    #[error(transparent)]
    Store(#[from] StoreAccessError),
    #[error("ladder player {who}: {why}")]
    Unplayable { who: String, why: String },
    #[error("a ladder round on the queue: {0}")]
    Queue(#[from] QueueError),
    #[error("a ladder round panicked: {0}")]
    Panicked(String),
}

/// Where the scheduler reads and plays: the store, the job queue (PostgreSQL) and the name
/// this process holds leases under.
pub(crate) struct LadderHost<S> {
    pub(crate) store: Arc<S>,
    pub(crate) queue: Option<BatchQueue>,
    pub(crate) owner: String,
}

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

/// The ladder's id for a board, rules, pie setting and depth.
pub(crate) fn ladder_id(pits: usize, seeds: u32, rules: Rules, pie: bool, depth: u32) -> String {
    let pie = if pie { " pie" } else { "" };
    format!("{pits},{seeds} {rules}{pie} depth {depth}")
}

/// The hosted anchors of a ladder at `depth`, the reference (rated 0) first: plain minimax at
/// the ladder's depth, so a champion's rating says what its weights gain over the store
/// difference at equal depth.
pub(crate) fn anchors(depth: u32) -> Vec<String> {
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
async fn enrol<S: LadderStore>(store: &S, depth: u32) -> Result<(), LadderError> {
    for run in store.runs_off_the_ladder(ENROL_BATCH).await? {
        let entry = champion(&run, depth);
        let created_at = store.timestamp();
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
        store.ensure_ladder(&new_ladder).await?;
        for anchor in anchors(new_ladder.depth) {
            let Ok(spec) = AgentSpec::parse(&anchor) else {
                continue;
            };
            store
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
        let entered = store
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
fn champion(run: &FinishedRun, depth: u32) -> Result<(LadderRow, AgentSpec), (LadderRow, String)> {
    let (pits, seeds, rules, pie) = match &run.config {
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
    let config = match &run.config {
        Ok(config) => config,
        Err(e) => return Err((ladder, e.to_string())),
    };
    let Some(last) = &run.last else {
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
    async fn read(
        store: &impl LadderStore,
        ladder: &LadderRow,
    ) -> Result<Option<Table>, LadderError> {
        let players = store.ladder_players(&ladder.id).await?;
        let reference = format!("anchor:{}", anchors(ladder.depth)[0]);
        let Some(pinned) = players.iter().position(|p| p.entry == reference) else {
            return Ok(None);
        };
        let index: HashMap<&str, usize> = players
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.as_str(), i))
            .collect();
        let trials = store
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

/// The scheduler: runs until `stopping` completes. Every server runs one; only the holder of
/// the lease plays.
pub(crate) async fn schedule<S: LadderStore + 'static>(
    host: LadderHost<S>,
    settings: LadderSettings,
    stopping: impl Future<Output = ()>,
) {
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
    tokio::pin!(stopping);
    loop {
        // A round under way is given up when the server stops: its games are not written.
        let stepped = tokio::select! {
            _ = &mut stopping => break,
            stepped = step(&host, settings, &local, &mut snapshots, &mut turn) => stepped,
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
    if let Err(e) = host.store.release_ladder_lease(&host.owner).await {
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

async fn step<S: LadderStore>(
    host: &LadderHost<S>,
    settings: LadderSettings,
    local: &LocalThreads,
    snapshots: &mut HashMap<String, Instant>,
    turn: &mut usize,
) -> Result<Step, LadderError> {
    if !host.store.take_ladder_lease(&host.owner, LEASE).await? {
        return Ok(Step::Idle);
    }
    enrol(&*host.store, settings.depth).await?;
    let ladders: Vec<LadderRow> = host
        .store
        .ladders()
        .await?
        .into_iter()
        .filter(|l| l.depth == settings.depth)
        .collect();
    // Each ladder in turn, so one with many unsettled players does not starve another.
    for k in 0..ladders.len() {
        let ladder = &ladders[(*turn + k) % ladders.len()];
        let Some(table) = Table::read(&*host.store, ladder).await? else {
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
                host.store
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
        let (trials, rest) = play_round(host, local, ladder, &table, i, j).await?;
        // Written only while still the scheduler: a server that lost the lease mid-round
        // drops its round rather than write beside the new holder.
        if !host.store.take_ladder_lease(&host.owner, LEASE).await? {
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
        host.store
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
async fn play_round<S: LadderStore>(
    host: &LadderHost<S>,
    local: &LocalThreads,
    ladder: &LadderRow,
    table: &Table,
    i: usize,
    j: usize,
) -> Result<(Vec<Trial>, Duration), LadderError> {
    let unplayable = |what: &str, why: String| LadderError::Unplayable {
        who: what.to_string(),
        why,
    };
    let parse = |p: &LadderPlayerRow| -> Result<AgentSpec, LadderError> {
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
    if let Some(queue) = &host.queue {
        let threads = host.store.live_worker_threads().await?;
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
            let played = queue.play_pairs(&*host.store, &round).await?;
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
    .map_err(|e| LadderError::Panicked(e.to_string()))?
    .map_err(|e| unplayable("round", e.to_string()))?;
    let rest = started.elapsed().mul_f64(1.0 / local.duty - 1.0);
    Ok((trials(scores), rest))
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
    fn ladder_ids_name_board_rules_pie_and_depth() {
        assert_eq!(
            ladder_id(6, 4, Rules::Standard, true, 4),
            "6,4 standard pie depth 4"
        );
    }
}
