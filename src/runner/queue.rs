//! Game batches on a PostgreSQL job queue, so that one run's games spread over many worker
//! processes on many machines: the coordinator's side ([`QueueRunner`]).
//!
//! The queue is [graphile_worker](https://docs.rs/graphile_worker) in its own schema
//! (`SCHEMA`): it hands each batch to one worker (`SKIP LOCKED`), retries failed batches
//! with back-off, and with its dead-worker recovery returns the batches of a worker whose
//! heartbeat stops (a process killed, a machine gone) to the queue. Nothing of leasing,
//! heartbeats or re-queueing is ours.
//!
//! - The run's owner (the *coordinator*, [`QueueRunner`]) cuts each job list a tuner asks for
//!   into contiguous slices of roughly `BATCH_TARGET_MS` of games (`slice_layout`, by
//!   the run cost estimate's game times corrected by how long earlier batches really took),
//!   enqueues one `PlayBatch` per slice that has no result yet (a coordinator that takes a
//!   run over reuses the slices already played, when it cuts them the same), awaits every
//!   result and hands the points back in job order. Where the slices fall changes nothing in
//!   the points. All of it is async code on the server's runtime: no game thread waits.
//! - A worker ([`super::worker`], in `kalah-tuner worker` and in `serve`) plays a batch with
//!   `crate::tune::games::GameSetup::play_batch`, the very function a tuner's games are
//!   played with in one process, and writes the points once ([`BatchStore::put_slice_result`]). A second,
//!   different result for one slice fails the run with a determinism error.
//!
//! A batch carries everything it needs (what the games are, [`crate::tune::GameSpec`],
//! with its agents located; the population; its jobs), so a worker reads nothing else of the
//! run but its status, and knows nothing of which tuner asked for the games.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use graphile_worker::{JobSpec, TaskHandler, WorkerUtils};
use serde::{Deserialize, Serialize};
use sqlx::postgres::PgPoolOptions;

use super::outage::{is_connection_sqlstate, Outage, Transient};
use super::pairs::PlayPairs;
use super::results::{BatchStore, SliceKey, SliceResult, StoreAccessError};
use crate::search::Budget;
use crate::tune::GameSpec;
use crate::tune::{ConfigError, Genome, Job, JobList};

/// The PostgreSQL schema of the queue's tables.
pub(crate) const SCHEMA: &str = "kalah_tuner_queue";
/// Single-core milliseconds of games a batch aims at (by the run cost estimate's game times):
/// long enough that the queue's few queries per batch cost nothing beside the games, short
/// enough that a lost batch costs little and the last batches of a generation spread evenly.
pub(crate) const BATCH_TARGET_MS: f64 = 15_000.0;
/// A job list is cut into at least this many batches (when it has that many jobs and they
/// cost at least [`MIN_BATCH_MS`] each), so that a generation smaller than a few batch
/// targets still spreads over many workers.
pub(crate) const MIN_BATCHES: usize = 16;
/// Batches are not made smaller than this for the sake of `MIN_BATCHES`: below it, the
/// queue's latency (up to `QUEUE_POLL` per batch) would cost more than spreading gains.
pub(crate) const MIN_BATCH_MS: f64 = 2_000.0;
/// How often an idle worker asks the queue for a batch, beside PostgreSQL's notification of
/// new batches (graphile_worker takes one batch per signal, so a worker that finishes a
/// batch while others wait finds the next at its next poll).
pub(super) const QUEUE_POLL: Duration = Duration::from_millis(500);
/// How often a coordinator looks for its batches' results.
const RESULT_POLL: Duration = Duration::from_millis(200);
/// How often a worker looks at the status of the run whose batch it plays.
pub(super) const STATUS_POLL: Duration = Duration::from_secs(1);
/// graphile_worker's dead-worker recovery: workers beat every 2 s, and the batches of a
/// worker silent for 10 s go back to the queue at once.
pub(super) const HEARTBEAT: Duration = Duration::from_secs(2);
pub(super) const SWEEP_INTERVAL: Duration = Duration::from_secs(3);
pub(super) const SWEEP_THRESHOLD: Duration = Duration::from_secs(10);
/// How long a stopping worker lets the batch under way finish before it hands it back.
pub(super) const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// Attempts of a batch whose worker failed (a database error, a bad payload).
const MAX_ATTEMPTS: i16 = 8;

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("the batch queue needs PostgreSQL (postgres://...), not {0}")]
    NotPostgres(String),
    #[error("connecting the batch queue: {0}")]
    Connect(#[from] sqlx::Error),
    #[error("batch queue: {0}")]
    Queue(String),
    /// The database did not answer (a lost connection, a restarting server): worth waiting
    /// out.
    #[error("batch queue: the database did not answer: {0}")]
    Unavailable(String),
    #[error(transparent)]
    Store(#[from] StoreAccessError),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

pub(super) fn queue_error(e: impl fmt::Display) -> QueueError {
    QueueError::Queue(e.to_string())
}

impl Transient for QueueError {
    /// Whether the database may answer again later, so that the work is worth retrying.
    fn is_transient(&self) -> bool {
        match self {
            QueueError::Unavailable(_) => true,
            QueueError::Store(e) => e.transient,
            _ => false,
        }
    }
}

/// A queue error, transient when it is the database's connection that failed: an error with
/// no SQLSTATE (the connection), or one of [`is_connection_sqlstate`]'s.
fn from_queue(e: graphile_worker::errors::GraphileWorkerError) -> QueueError {
    use graphile_worker::errors::GraphileWorkerError;
    match &e {
        GraphileWorkerError::SqlError(db) if db.code().is_none_or(is_connection_sqlstate) => {
            QueueError::Unavailable(e.to_string())
        }
        _ => queue_error(e),
    }
}

/// The job queue's connection: a PostgreSQL pool of its own (graphile_worker speaks to
/// PostgreSQL through sqlx's typed driver) and its utilities.
#[derive(Clone)]
pub struct BatchQueue {
    pub(super) pool: sqlx::PgPool,
    utils: Arc<WorkerUtils>,
}

impl fmt::Debug for BatchQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchQueue")
            .field("schema", &SCHEMA)
            .finish()
    }
}

impl BatchQueue {
    /// Connects to `url` and creates or updates the queue's schema.
    pub(crate) async fn connect(url: &str) -> Result<BatchQueue, QueueError> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(QueueError::NotPostgres(
                url.split(':').next().unwrap_or("").to_string() + ":",
            ));
        }
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await?;
        let utils = WorkerUtils::new(pool.clone(), SCHEMA);
        utils.migrate().await.map_err(queue_error)?;
        // Registers the tasks' identifiers, so that jobs this process adds read back
        // with their task's name.
        let database = graphile_worker::Database::from(pool.clone());
        let details = graphile_worker::sql::task_identifiers::get_tasks_details(
            &database,
            SCHEMA,
            vec![
                PlayBatch::IDENTIFIER.to_string(),
                PlayPairs::IDENTIFIER.to_string(),
            ],
        )
        .await
        .map_err(queue_error)?;
        let utils = utils.with_task_details(details.into());
        Ok(BatchQueue {
            pool,
            utils: Arc::new(utils),
        })
    }

    /// Batches waiting in the queue or being played (all runs).
    pub(crate) async fn pending(&self) -> Result<u64, QueueError> {
        let sql = format!("SELECT COUNT(*) FROM {SCHEMA}._private_jobs");
        let (n,): (i64,) = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .fetch_one(&self.pool)
            .await?;
        Ok(n.max(0) as u64)
    }
}

/// Cuts a job list whose jobs cost `costs` (any unit) into contiguous slices `(first, len)` of
/// nearly equal cost: about `target` each, but at least `min_batches` of them as long as each
/// still costs `min_cost`, and never more slices than jobs.
pub(crate) fn slice_layout(
    costs: &[f64],
    target: f64,
    min_batches: usize,
    min_cost: f64,
) -> Vec<(usize, usize)> {
    let n = costs.len();
    if n == 0 {
        return Vec::new();
    }
    let total: f64 = costs.iter().map(|c| c.max(0.0)).sum();
    let at_most = |cost: f64| {
        if cost > 0.0 {
            (total / cost).ceil() as usize
        } else {
            n
        }
    };
    let spread = min_batches.min(at_most(min_cost).max(1));
    let batches = at_most(target).max(spread).clamp(1, n);
    let mut slices = Vec::with_capacity(batches);
    let (mut first, mut spent) = (0usize, 0.0f64);
    for (i, cost) in costs.iter().enumerate() {
        spent += cost.max(0.0);
        let made = slices.len() + 1;
        let jobs_left = n - (i + 1);
        let slices_left = batches - made;
        // Cut where the running cost passes the next equal share, keeping a job for each
        // slice still to come; the last slice takes what is left.
        let due = spent >= total * made as f64 / batches as f64 && slices_left > 0;
        if (due && jobs_left >= slices_left) || jobs_left == slices_left && slices_left > 0 {
            slices.push((first, i + 1 - first));
            first = i + 1;
        }
    }
    if first < n {
        slices.push((first, n - first));
    }
    slices
}

/// One batch: a slice of one job list of a run's generation, with all it takes to play it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PlayBatch {
    pub run_id: String,
    /// The coordinator's claim on the run: a batch of an owner that lost the run is skipped.
    pub claim: i64,
    pub generation: u32,
    pub part: u32,
    pub first_job: u64,
    /// What the games are (the job list's spec, its agents located).
    pub games: GameSpec,
    pub population: Vec<Genome>,
    pub jobs: Vec<Job>,
}

impl PlayBatch {
    pub(super) fn key(&self) -> SliceKey {
        SliceKey {
            run_id: self.run_id.clone(),
            generation: self.generation,
            part: self.part,
            first_job: self.first_job,
            jobs: self.jobs.len() as u64,
        }
    }
}

/// Counts of what a coordinator's batches cost, for its log and the benchmark.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub batches: u64,
    /// Slices found already played (by a previous owner of the run) and not enqueued.
    pub reused: u64,
    pub polls: u64,
}

/// A run owner's game player on the queue: every job list its tuner asks for goes to the
/// queue, cut into batches, and the owner awaits the results.
pub struct QueueRunner {
    queue: BatchQueue,
    store: Arc<dyn BatchStore>,
    run_id: String,
    claim: i64,
    stats: QueueStats,
    /// Measured milliseconds of play per estimated millisecond, from the batches played so
    /// far: the estimate's game times are upper bounds (searches repeat positions, games end
    /// early), and batches are sized in real time.
    calibration: Option<f64>,
    /// The processor time of the batches collected since [`QueueRunner::take_processor_time`].
    processor: Duration,
}

impl fmt::Debug for QueueRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueRunner")
            .field("run_id", &self.run_id)
            .field("claim", &self.claim)
            .finish()
    }
}

impl QueueRunner {
    /// The player of run `run_id`'s games, owned under `claim`.
    pub(crate) fn new(
        queue: BatchQueue,
        store: Arc<dyn BatchStore>,
        run_id: String,
        claim: i64,
    ) -> QueueRunner {
        QueueRunner {
            queue,
            store,
            run_id,
            claim,
            stats: QueueStats::default(),
            calibration: None,
            processor: Duration::ZERO,
        }
    }

    pub(crate) fn stats(&self) -> QueueStats {
        self.stats
    }

    /// The processor time the workers spent on the batches collected since the last call:
    /// the run's games, charged to the run with its next record.
    pub(crate) fn take_processor_time(&mut self) -> Duration {
        std::mem::take(&mut self.processor)
    }

    /// The points of `list`, in job order, played by whichever workers take its batches;
    /// `None` once `stop` is set (the run stopped running here): its batches that no worker
    /// has taken yet then leave the queue (the queue keeps those being played; their workers
    /// see the run stop within a second), so that workers go on to other runs' batches.
    pub(crate) async fn play(
        &mut self,
        list: &JobList,
        stop: &Budget,
    ) -> Result<Option<Vec<f64>>, QueueError> {
        // Enqueueing again after a failure is safe: a slice with a result is not enqueued, and
        // a slice played twice is written once.
        let mut outage = Outage::new();
        let (wanted, queued) = loop {
            if stop.is_stopped() {
                return Ok(None);
            }
            match self.enqueue(list).await {
                Ok(enqueued) => break enqueued,
                Err(e) => {
                    outage
                        .wait_out(&self.run_id, "handing out batches", e)
                        .await?
                }
            }
        };
        if !self.wait_for_results(list, &wanted, stop).await? {
            if let Err(e) = self.queue.utils.complete_jobs(&queued).await {
                tracing::warn!(run = %self.run_id, "removing the stopped run's batches: {e}");
            }
            return Ok(None);
        }
        let mut outage = Outage::new();
        loop {
            if stop.is_stopped() {
                return Ok(None);
            }
            match self.collect(list, &wanted).await {
                Ok(points) => return Ok(Some(points)),
                Err(e) => {
                    outage
                        .wait_out(&self.run_id, "collecting batches", e)
                        .await?
                }
            }
        }
    }

    /// Enqueues the slices of `list` that have no result yet and returns the keys of all its
    /// slices, and the queue's ids of the batches enqueued.
    async fn enqueue(
        &mut self,
        list: &JobList,
    ) -> Result<(HashSet<(u64, u64)>, Vec<i64>), QueueError> {
        let real_per_estimated = self.calibration.unwrap_or(1.0);
        let costs: Vec<f64> = list
            .jobs
            .iter()
            .map(|j| list.games.job_cost_ms(j) * real_per_estimated)
            .collect();
        let layout = slice_layout(&costs, BATCH_TARGET_MS, MIN_BATCHES, MIN_BATCH_MS);
        let wanted: HashSet<(u64, u64)> = layout
            .iter()
            .map(|&(first, len)| (first as u64, len as u64))
            .collect();
        let done: HashSet<(u64, u64)> = self
            .store
            .slices_done(&self.run_id, list.generation, list.part)
            .await?
            .into_iter()
            .collect();
        let batches: Vec<PlayBatch> = layout
            .iter()
            .filter(|&&(first, len)| !done.contains(&(first as u64, len as u64)))
            .map(|&(first, len)| PlayBatch {
                run_id: self.run_id.clone(),
                claim: self.claim,
                generation: list.generation,
                part: list.part,
                first_job: first as u64,
                games: list.games.as_ref().clone(),
                population: list.population.to_vec(),
                jobs: list.jobs[first..first + len].to_vec(),
            })
            .collect();
        self.stats.batches += batches.len() as u64;
        self.stats.reused += (layout.len() - batches.len()) as u64;
        if batches.is_empty() {
            return Ok((wanted, Vec::new()));
        }
        let spec = JobSpec {
            max_attempts: Some(MAX_ATTEMPTS),
            ..JobSpec::default()
        };
        let jobs: Vec<(PlayBatch, &JobSpec)> = batches.into_iter().map(|b| (b, &spec)).collect();
        let added = self.queue.utils.add_jobs(&jobs).await.map_err(from_queue)?;
        Ok((wanted, added.iter().map(|job| *job.id()).collect()))
    }

    /// Waits until every slice of `wanted` has a result (`true`), or `stop` is set (`false`).
    async fn wait_for_results(
        &mut self,
        list: &JobList,
        wanted: &HashSet<(u64, u64)>,
        stop: &Budget,
    ) -> Result<bool, QueueError> {
        let started = Instant::now();
        let mut last_note = Instant::now();
        loop {
            if stop.is_stopped() {
                return Ok(false);
            }
            let done = match self
                .store
                .slices_done(&self.run_id, list.generation, list.part)
                .await
            {
                Ok(done) => done,
                Err(e) if e.transient => {
                    tracing::warn!(run = %self.run_id, "polling batch results: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            self.stats.polls += 1;
            let finished = done.iter().filter(|k| wanted.contains(k)).count();
            if finished == wanted.len() {
                return Ok(true);
            }
            if last_note.elapsed() > Duration::from_secs(30) {
                last_note = Instant::now();
                tracing::info!(run = %self.run_id, generation = list.generation,
                    "waiting for game batches: {finished} of {} played after {:?} \
                     (is a worker running? `kalah-tuner worker --database-url ...`)",
                    wanted.len(), started.elapsed());
            }
            tokio::time::sleep(RESULT_POLL).await;
        }
    }

    async fn collect(
        &mut self,
        list: &JobList,
        wanted: &HashSet<(u64, u64)>,
    ) -> Result<Vec<f64>, QueueError> {
        let results = self
            .store
            .slice_results(&self.run_id, list.generation, list.part)
            .await?;
        let mut points = vec![f64::NAN; list.jobs.len()];
        let (mut estimated, mut played, mut processor_ms) = (0.0, 0.0, 0u64);
        for SliceResult {
            key,
            points: p,
            play_ms,
            processor_ms: slice_processor_ms,
        } in results
        {
            let first = key.first_job as usize;
            let fits = first + p.len() <= points.len() && p.len() as u64 == key.jobs;
            if wanted.contains(&(key.first_job, key.jobs)) && fits {
                points[first..first + p.len()].copy_from_slice(&p);
                estimated += list.jobs[first..first + p.len()]
                    .iter()
                    .map(|j| list.games.job_cost_ms(j))
                    .sum::<f64>();
                played += play_ms as f64;
                processor_ms = processor_ms.saturating_add(slice_processor_ms);
            }
        }
        if estimated > 0.0 && played > 0.0 {
            self.calibration = Some(played / estimated);
        }
        if points.iter().any(|p| p.is_nan()) {
            return Err(queue_error("a batch result is missing after all were seen"));
        }
        self.processor += Duration::from_millis(processor_ms);
        Ok(points)
    }
}

/// Queue priority of a ladder round: after every run's batches (which have 0; lower goes
/// first), so that the ladder only takes workers the runs leave idle.
const ROUND_PRIORITY: i16 = 100;

/// How long an asker waits for a round on the queue before it plays the round itself: the
/// workers are all busy with runs, or gone.
const ROUND_PATIENCE: Duration = Duration::from_secs(120);

impl BatchQueue {
    /// Plays `round` on the queue's workers and returns its result, or `None` if no worker has
    /// played it within [`ROUND_PATIENCE`] (the round then leaves the queue). A round played
    /// before (by a worker for an asker that stopped) is not played again.
    pub(crate) async fn play_pairs(
        &self,
        store: &dyn BatchStore,
        round: &PlayPairs,
    ) -> Result<Option<SliceResult>, QueueError> {
        if let Some(scores) = stored(store, &round.key).await? {
            return Ok(Some(scores));
        }
        let spec = JobSpec {
            priority: Some(ROUND_PRIORITY),
            max_attempts: Some(2),
            ..JobSpec::default()
        };
        let mut outage = Outage::new();
        let job = loop {
            match self.utils.add_job(round.clone(), spec.clone()).await {
                Ok(job) => break job,
                Err(e) => {
                    let error = from_queue(e);
                    outage
                        .wait_out(&round.key.run_id, "queueing a ladder round", error)
                        .await?
                }
            }
        };
        let asked = Instant::now();
        loop {
            tokio::time::sleep(RESULT_POLL).await;
            match stored(store, &round.key).await {
                Ok(Some(scores)) => return Ok(Some(scores)),
                Ok(None) => {}
                Err(e) if e.transient => continue,
                Err(e) => return Err(e.into()),
            }
            if asked.elapsed() >= ROUND_PATIENCE {
                if let Err(e) = self.utils.complete_jobs(&[*job.id()]).await {
                    tracing::warn!("taking an unplayed ladder round off the queue: {e}");
                }
                return Ok(None);
            }
        }
    }
}

/// The result stored under `key`, if its round has been played.
async fn stored(
    store: &dyn BatchStore,
    key: &SliceKey,
) -> Result<Option<SliceResult>, StoreAccessError> {
    let results = store
        .slice_results(&key.run_id, key.generation, key.part)
        .await?;
    Ok(results
        .into_iter()
        .find(|r| &r.key == key && r.points.len() as u64 == key.jobs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(costs: &[f64], target: f64, min: usize) -> Vec<(usize, usize)> {
        let layout = slice_layout(costs, target, min, 0.0);
        let mut next = 0;
        for &(first, len) in &layout {
            assert_eq!(first, next, "contiguous: {layout:?}");
            assert!(len > 0, "no empty slice: {layout:?}");
            next = first + len;
        }
        assert_eq!(next, costs.len(), "covers every job: {layout:?}");
        layout
    }

    #[test]
    fn slices_cover_the_jobs_in_nearly_equal_cost() {
        assert!(check(&[], 10.0, 4).is_empty());
        assert_eq!(check(&[1.0; 3], 10.0, 16).len(), 3);
        assert_eq!(check(&[1.0; 100], 10.0, 4).len(), 10);
        assert_eq!(check(&[1.0; 100], 1000.0, 4).len(), 4);
        let uneven: Vec<f64> = (0..60).map(|i| if i < 10 { 10.0 } else { 1.0 }).collect();
        let layout = check(&uneven, 30.0, 1);
        assert_eq!(layout.len(), 5);
        for &(first, len) in &layout {
            let cost: f64 = uneven[first..first + len].iter().sum();
            assert!((25.0..=40.0).contains(&cost), "{layout:?}");
        }
        // Small lists are not cut finer than the minimum cost for the sake of spreading.
        assert_eq!(slice_layout(&[1.0; 100], 1000.0, 16, 20.0).len(), 5);
        assert_eq!(slice_layout(&[1.0; 100], 1000.0, 16, 1.0).len(), 16);
        assert_eq!(slice_layout(&[1.0; 100], 1000.0, 16, 500.0).len(), 1);
        for n in 1..40 {
            for min in 1..20 {
                check(&vec![3.0; n], 7.0, min);
            }
        }
    }
}
