//! Game batches on a PostgreSQL job queue, so that one run's games spread over many worker
//! processes on many machines.
//!
//! The queue is [graphile_worker](https://docs.rs/graphile_worker) in its own schema
//! ([`SCHEMA`]): it hands each batch to one worker (`SKIP LOCKED`), retries failed batches
//! with back-off, and with its dead-worker recovery returns the batches of a worker whose
//! heartbeat stops (a process killed, a machine gone) to the queue. Nothing of leasing,
//! heartbeats or re-queueing is ours.
//!
//! - The run's owner (the *coordinator*, [`Distributed`]) cuts each job list of a generation
//!   into contiguous slices of roughly [`BATCH_TARGET_MS`] of games ([`slice_layout`], by
//!   the run cost estimate's game times corrected by how long earlier batches really took),
//!   enqueues one [`PlayBatch`] per slice that has no result yet (a coordinator that takes a
//!   run over reuses the slices already played, when it cuts them the same), waits for
//!   every result and hands the points back in job order. Where the slices fall changes
//!   nothing in the points.
//! - A worker ([`start_batch_worker`], in `kalah-tuner worker` and in `serve`) plays a batch
//!   with [`FitnessSetup::play_batch`], the very function the GA plays its jobs with in one
//!   process, and writes the points once ([`Store::put_slice_result`]). A second, different
//!   result for one slice fails the run with a determinism error.
//!
//! A batch carries everything it needs (the located config, the population, its jobs), so a
//! worker reads nothing else of the run but its status.

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use graphile_worker::{
    IntoTaskHandlerResult, JobSpec, TaskHandler, WorkerContext, WorkerOptions, WorkerUtils,
};
use serde::{Deserialize, Serialize};
use sqlx::postgres::PgPoolOptions;

use super::{RunStatus, SliceKey, Store, StoreError};
use crate::ga::{FitnessSetup, GaConfig, GameBatches, GameSlice, Genome, Job};
use crate::search::Budget;

/// The PostgreSQL schema of the queue's tables.
pub const SCHEMA: &str = "kalah_tuner_queue";
/// Single-core milliseconds of games a batch aims at (by the run cost estimate's game times):
/// long enough that the queue's few queries per batch cost nothing beside the games, short
/// enough that a lost batch costs little and the last batches of a generation spread evenly.
pub const BATCH_TARGET_MS: f64 = 15_000.0;
/// A job list is cut into at least this many batches (when it has that many jobs and they
/// cost at least [`MIN_BATCH_MS`] each), so that a generation smaller than a few batch
/// targets still spreads over many workers.
pub const MIN_BATCHES: usize = 16;
/// Batches are not made smaller than this for the sake of [`MIN_BATCHES`]: below it, the
/// queue's latency (up to `QUEUE_POLL` per batch) would cost more than spreading gains.
pub const MIN_BATCH_MS: f64 = 2_000.0;
/// How often an idle worker asks the queue for a batch, beside PostgreSQL's notification of
/// new batches (graphile_worker takes one batch per signal, so a worker that finishes a
/// batch while others wait finds the next at its next poll).
const QUEUE_POLL: Duration = Duration::from_millis(500);
/// How often a coordinator looks for its batches' results.
const RESULT_POLL: Duration = Duration::from_millis(200);
/// How often a worker looks at the status of the run whose batch it plays.
const STATUS_POLL: Duration = Duration::from_secs(1);
/// graphile_worker's dead-worker recovery: workers beat every 2 s, and the batches of a
/// worker silent for 10 s go back to the queue at once.
const HEARTBEAT: Duration = Duration::from_secs(2);
const SWEEP_INTERVAL: Duration = Duration::from_secs(3);
const SWEEP_THRESHOLD: Duration = Duration::from_secs(10);
/// How long a stopping worker lets the batch under way finish before it hands it back.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
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
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn queue_error(e: impl fmt::Display) -> QueueError {
    QueueError::Queue(e.to_string())
}

/// The job queue's connection: a PostgreSQL pool of its own (graphile_worker speaks to
/// PostgreSQL through sqlx's typed driver) and its utilities.
#[derive(Clone)]
pub struct BatchQueue {
    pool: sqlx::PgPool,
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
    pub async fn connect(url: &str) -> Result<BatchQueue, QueueError> {
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
        // Registers the batch task's identifier, so that jobs this process adds read back
        // with their task's name.
        let database = graphile_worker::Database::from(pool.clone());
        let details = graphile_worker::sql::task_identifiers::get_tasks_details(
            &database,
            SCHEMA,
            vec![PlayBatch::IDENTIFIER.to_string()],
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
    pub async fn pending(&self) -> Result<u64, QueueError> {
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
pub fn slice_layout(
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
pub struct PlayBatch {
    pub run_id: String,
    /// The coordinator's claim on the run: a batch of an owner that lost the run is skipped.
    pub claim: i64,
    pub generation: u32,
    pub part: u32,
    pub first_job: u64,
    /// The run's config with its agents located (what the coordinator evolves).
    pub config: Box<GaConfig>,
    pub population: Vec<Genome>,
    pub jobs: Vec<Job>,
}

impl PlayBatch {
    fn key(&self) -> SliceKey {
        SliceKey {
            run_id: self.run_id.clone(),
            generation: self.generation,
            part: self.part,
            first_job: self.first_job,
            jobs: self.jobs.len() as u64,
        }
    }
}

/// What a worker process plays batches with, shared by its queue worker.
#[derive(Clone)]
pub struct BatchEnv {
    pub store: Store,
    pub pool: Arc<rayon::ThreadPool>,
    /// Names the worker in the results it writes and in its logs.
    pub name: String,
}

/// What became of one batch a worker took.
#[derive(Debug, PartialEq)]
enum Played {
    Written,
    Same,
    /// The run is not running under the batch's claim any more: nothing played.
    Skipped,
    /// The run stopped while the games were under way: nothing written.
    Stopped,
    /// The result differs from one stored before: the run was failed.
    Nondeterministic,
}

impl TaskHandler for PlayBatch {
    const IDENTIFIER: &'static str = "kalah_tuner_play_batch";

    async fn run(self, ctx: WorkerContext) -> impl IntoTaskHandlerResult {
        let Some(env) = ctx.get_ext::<BatchEnv>().cloned() else {
            return Err("the worker has no batch environment".to_string());
        };
        let (run, generation, part, first) = (
            self.run_id.clone(),
            self.generation,
            self.part,
            self.first_job,
        );
        match env.play(self).await {
            Ok(played) => {
                tracing::debug!(%run, generation, part, first, ?played, "batch done");
                Ok(())
            }
            Err(e) => {
                tracing::warn!(%run, generation, part, first, "batch failed: {e}");
                Err(e.to_string())
            }
        }
    }
}

impl BatchEnv {
    async fn play(&self, batch: PlayBatch) -> Result<Played, QueueError> {
        if !self.still_running(&batch).await? {
            return Ok(Played::Skipped);
        }
        let key = batch.key();
        let budget = Budget::unlimited();
        // Dropped with this future when the queue gives up on the batch (shutdown): the
        // games then stop within one game per thread.
        let _stop_games = budget.cancel_on_drop();
        let watcher = tokio::spawn(stop_when_not_running(
            self.store.clone(),
            batch.run_id.clone(),
            batch.claim,
            budget.clone(),
        ));
        let pool = self.pool.clone();
        let games = budget.clone();
        let started = Instant::now();
        let played = tokio::task::spawn_blocking(move || {
            let resolved = batch.config.validate()?;
            let mut setup = FitnessSetup::new(&batch.config, &resolved)?;
            setup.set_cancel(games);
            pool.install(|| setup.play_batch(&batch.population, batch.generation, &batch.jobs))
                .map_err(|e| crate::ga::ConfigError::invalid("batch", e.to_string()))
        })
        .await;
        watcher.abort();
        let points = match played {
            Ok(Ok(points)) => points,
            Ok(Err(e)) => {
                // A payload that does not play never will: the run cannot go on.
                let error = format!(
                    "a game batch of generation {} is unusable: {e}",
                    key.generation
                );
                self.store.fail_running(&key.run_id, &error).await?;
                return Err(queue_error(error));
            }
            Err(e) => return Err(queue_error(format!("the batch's games stopped: {e}"))),
        };
        if budget.is_stopped() {
            return Ok(Played::Stopped);
        }
        let play_ms = started.elapsed().as_millis() as u64;
        match self
            .store
            .put_slice_result(&key, &points, &self.name, play_ms)
            .await?
        {
            super::ResultWrite::Written => Ok(Played::Written),
            super::ResultWrite::Same => Ok(Played::Same),
            super::ResultWrite::Different { stored } => {
                let first_difference = stored
                    .iter()
                    .zip(&points)
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                let error = format!(
                    "determinism error: jobs {}..{} of generation {} (list {}) gave two \
                     different results; job {} scored {} once and {} on {}",
                    key.first_job,
                    key.first_job + key.jobs,
                    key.generation,
                    key.part,
                    key.first_job + first_difference as u64,
                    stored.get(first_difference).copied().unwrap_or(f64::NAN),
                    points.get(first_difference).copied().unwrap_or(f64::NAN),
                    self.name
                );
                tracing::error!(run = %key.run_id, "{error}");
                self.store.fail_running(&key.run_id, &error).await?;
                Ok(Played::Nondeterministic)
            }
        }
    }

    async fn still_running(&self, batch: &PlayBatch) -> Result<bool, QueueError> {
        Ok(matches!(
            self.store.run_claim(&batch.run_id).await?,
            Some((RunStatus::Running, claim)) if claim == batch.claim
        ))
    }
}

/// Stops `budget` once the run is no longer running under `claim`.
async fn stop_when_not_running(store: Store, run_id: String, claim: i64, budget: Budget) {
    loop {
        tokio::time::sleep(STATUS_POLL).await;
        match store.run_claim(&run_id).await {
            Ok(Some((RunStatus::Running, current))) if current == claim => {}
            Ok(_) => {
                budget.cancel();
                return;
            }
            Err(e) => tracing::warn!(run = %run_id, "checking the run's status: {e}"),
        }
    }
}

/// Starts a queue worker that plays batches one at a time on `env.pool` until `shutdown`
/// completes; then it lets the batch under way finish for `SHUTDOWN_GRACE`, hands it back
/// to the queue otherwise, and the returned task ends. A worker that stops on a database
/// error (a lost connection, a restarting server) is started again after `RESTART_DELAY`,
/// for as long as the process runs: the queue returns whatever batch it held.
pub async fn start_batch_worker(
    queue: &BatchQueue,
    env: BatchEnv,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<tokio::task::JoinHandle<()>, QueueError> {
    use futures_util::FutureExt;
    let shutdown = shutdown.boxed().shared();
    let name = env.name.clone();
    let first = batch_worker(queue, env.clone(), shutdown.clone()).await?;
    let queue = queue.clone();
    Ok(tokio::spawn(async move {
        tracing::info!(worker = %name, "playing game batches from the queue");
        let mut worker = Some(first);
        loop {
            if let Some(running) = worker.take() {
                match running.run().await {
                    Ok(()) => return,
                    Err(e) => tracing::error!(worker = %name, "the batch worker stopped: {e}"),
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(RESTART_DELAY) => {}
                _ = shutdown.clone() => return,
            }
            match batch_worker(&queue, env.clone(), shutdown.clone()).await {
                Ok(restarted) => {
                    tracing::info!(worker = %name, "the batch worker started again");
                    worker = Some(restarted);
                }
                Err(e) => tracing::warn!(worker = %name, "restarting the batch worker: {e}"),
            }
        }
    }))
}

/// How long a batch worker that stopped on an error waits before it starts again.
const RESTART_DELAY: Duration = Duration::from_secs(1);

async fn batch_worker(
    queue: &BatchQueue,
    env: BatchEnv,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<graphile_worker::Worker, QueueError> {
    WorkerOptions::default()
        .pg_pool(queue.pool.clone())
        .schema(SCHEMA)
        .concurrency(1)
        .poll_interval(QUEUE_POLL)
        .define_job::<PlayBatch>()
        .add_extension(env)
        .listen_os_shutdown_signals(false)
        .shutdown_signal(shutdown)
        .shutdown_grace_period(SHUTDOWN_GRACE)
        .shutdown_interrupted_job_retry_delay(Duration::ZERO)
        .heartbeat_interval(HEARTBEAT)
        .sweep_interval(SWEEP_INTERVAL)
        .sweep_threshold(SWEEP_THRESHOLD)
        .recovery_delay(Duration::ZERO)
        .init()
        .await
        .map_err(queue_error)
}

impl fmt::Debug for BatchEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchEnv")
            .field("name", &self.name)
            .finish()
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

/// A run owner's [`GameBatches`]: every job list goes to the queue, cut into batches, and
/// the owner waits for the results.
pub struct Distributed {
    queue: BatchQueue,
    store: Store,
    runtime: tokio::runtime::Handle,
    run_id: String,
    claim: i64,
    config: Box<GaConfig>,
    /// The run's stop: set by the owner when the run stops running, and here when the
    /// batches fail for good.
    budget: Budget,
    failure: Mutex<Option<String>>,
    stats: Mutex<QueueStats>,
    /// Measured milliseconds of play per estimated millisecond, from the batches played so
    /// far: the estimate's game times are upper bounds (searches repeat positions, games end
    /// early), and batches are sized in real time.
    calibration: Mutex<Option<f64>>,
}

impl fmt::Debug for Distributed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Distributed")
            .field("run_id", &self.run_id)
            .field("claim", &self.claim)
            .finish()
    }
}

impl Distributed {
    /// `config` is the run's located config; `budget` is stopped by the owner when the run
    /// stops running.
    pub fn new(
        queue: BatchQueue,
        store: Store,
        runtime: tokio::runtime::Handle,
        run_id: String,
        claim: i64,
        config: GaConfig,
        budget: Budget,
    ) -> Distributed {
        Distributed {
            queue,
            store,
            runtime,
            run_id,
            claim,
            config: Box::new(config),
            budget,
            failure: Mutex::new(None),
            stats: Mutex::new(QueueStats::default()),
            calibration: Mutex::new(None),
        }
    }

    /// Why the batches failed for good, once: the run's failure message.
    pub fn take_failure(&self) -> Option<String> {
        self.failure.lock().ok().and_then(|mut f| f.take())
    }

    pub fn stats(&self) -> QueueStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }

    /// Enqueues the slices of `slice.jobs` that have no result yet and returns the keys of
    /// all its slices, and the queue's ids of the batches enqueued.
    async fn enqueue(
        &self,
        setup: &FitnessSetup,
        slice: &GameSlice<'_>,
    ) -> Result<(HashSet<(u64, u64)>, Vec<i64>), QueueError> {
        let real_per_estimated = self.calibration.lock().ok().and_then(|c| *c).unwrap_or(1.0);
        let costs: Vec<f64> = slice
            .jobs
            .iter()
            .map(|j| setup.job_cost_ms(j) * real_per_estimated)
            .collect();
        let layout = slice_layout(&costs, BATCH_TARGET_MS, MIN_BATCHES, MIN_BATCH_MS);
        let wanted: HashSet<(u64, u64)> = layout
            .iter()
            .map(|&(first, len)| (first as u64, len as u64))
            .collect();
        let done: HashSet<(u64, u64)> = self
            .store
            .slices_done(&self.run_id, slice.generation, slice.part)
            .await?
            .into_iter()
            .collect();
        let batches: Vec<PlayBatch> = layout
            .iter()
            .filter(|&&(first, len)| !done.contains(&(first as u64, len as u64)))
            .map(|&(first, len)| PlayBatch {
                run_id: self.run_id.clone(),
                claim: self.claim,
                generation: slice.generation,
                part: slice.part,
                first_job: first as u64,
                config: self.config.clone(),
                population: slice.population.to_vec(),
                jobs: slice.jobs[first..first + len].to_vec(),
            })
            .collect();
        if let Ok(mut stats) = self.stats.lock() {
            stats.batches += batches.len() as u64;
            stats.reused += (layout.len() - batches.len()) as u64;
        }
        if !batches.is_empty() {
            let spec = JobSpec {
                max_attempts: Some(MAX_ATTEMPTS),
                ..JobSpec::default()
            };
            let jobs: Vec<(PlayBatch, &JobSpec)> =
                batches.into_iter().map(|b| (b, &spec)).collect();
            let added = self
                .queue
                .utils
                .add_jobs(&jobs)
                .await
                .map_err(queue_error)?;
            return Ok((wanted, added.iter().map(|job| *job.id()).collect()));
        }
        Ok((wanted, Vec::new()))
    }

    /// Waits until every slice of `layout` has a result (`Some(true)`), or the run stopped
    /// (`Some(false)`). Called on a thread of the owner's game pool: between looks at the
    /// database it plays whatever games that pool has waiting (this process's own batch
    /// worker's), so waiting costs the pool no thread.
    fn wait_for_results(
        &self,
        slice: &GameSlice<'_>,
        wanted: &HashSet<(u64, u64)>,
    ) -> Result<bool, QueueError> {
        let started = Instant::now();
        let mut last_note = Instant::now();
        let mut last_poll: Option<Instant> = None;
        loop {
            if self.budget.is_stopped() {
                return Ok(false);
            }
            if last_poll.is_none_or(|t| t.elapsed() >= RESULT_POLL) {
                last_poll = Some(Instant::now());
                let polled = self.runtime.block_on(self.store.slices_done(
                    &self.run_id,
                    slice.generation,
                    slice.part,
                ));
                let done = match polled {
                    Ok(done) => done,
                    Err(e) if e.is_transient() => {
                        tracing::warn!(run = %self.run_id, "polling batch results: {e}");
                        std::thread::sleep(Duration::from_secs(1));
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                if let Ok(mut stats) = self.stats.lock() {
                    stats.polls += 1;
                }
                let finished = done.iter().filter(|k| wanted.contains(k)).count();
                if finished == wanted.len() {
                    return Ok(true);
                }
                if last_note.elapsed() > Duration::from_secs(30) {
                    last_note = Instant::now();
                    tracing::info!(run = %self.run_id, generation = slice.generation,
                        "waiting for game batches: {finished} of {} played after {:?} \
                         (is a worker running? `kalah-tuner worker --database-url ...`)",
                        wanted.len(), started.elapsed());
                }
            }
            match rayon::yield_now() {
                Some(rayon::Yield::Executed) => {}
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    async fn collect(
        &self,
        setup: &FitnessSetup,
        slice: &GameSlice<'_>,
        wanted: &HashSet<(u64, u64)>,
    ) -> Result<Vec<f64>, QueueError> {
        let results = self
            .store
            .slice_results(&self.run_id, slice.generation, slice.part)
            .await?;
        let mut points = vec![f64::NAN; slice.jobs.len()];
        let (mut estimated, mut played) = (0.0, 0.0);
        for (key, p, play_ms) in results {
            if wanted.contains(&(key.first_job, key.jobs)) {
                let first = key.first_job as usize;
                points[first..first + p.len()].copy_from_slice(&p);
                estimated += slice.jobs[first..first + p.len()]
                    .iter()
                    .map(|j| setup.job_cost_ms(j))
                    .sum::<f64>();
                played += play_ms as f64;
            }
        }
        if estimated > 0.0 && played > 0.0 {
            if let Ok(mut c) = self.calibration.lock() {
                *c = Some(played / estimated);
            }
        }
        if points.iter().any(|p| p.is_nan()) {
            return Err(queue_error("a batch result is missing after all were seen"));
        }
        Ok(points)
    }

    fn play_slice(
        &self,
        setup: &FitnessSetup,
        slice: &GameSlice<'_>,
    ) -> Result<Option<Vec<f64>>, QueueError> {
        let (wanted, queued) = self.runtime.block_on(self.enqueue(setup, slice))?;
        let waited = self.wait_for_results(slice, &wanted);
        if !matches!(waited, Ok(true)) {
            // The run stopped: its batches that no worker has taken yet leave the queue (the
            // queue keeps those being played; their workers see the run stop within a
            // second), so that workers go on to other runs' batches at once.
            if let Err(e) = self
                .runtime
                .block_on(self.queue.utils.complete_jobs(&queued))
            {
                tracing::warn!(run = %self.run_id, "removing the stopped run's batches: {e}");
            }
            return waited.map(|_| None);
        }
        self.runtime
            .block_on(self.collect(setup, slice, &wanted))
            .map(Some)
    }
}

impl GameBatches for Distributed {
    fn play(&self, setup: &FitnessSetup, slice: GameSlice<'_>) -> Vec<f64> {
        // Called on a thread of the owner's game pool, never on the async runtime's own.
        match self.play_slice(setup, &slice) {
            Ok(Some(points)) => points,
            Ok(None) => vec![0.0; slice.jobs.len()],
            Err(e) => {
                if let Ok(mut failure) = self.failure.lock() {
                    failure.get_or_insert_with(|| format!("playing the game batches: {e}"));
                }
                self.budget.cancel();
                vec![0.0; slice.jobs.len()]
            }
        }
    }
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
