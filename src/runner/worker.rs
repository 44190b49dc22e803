//! The worker's side of the job queue ([`super::queue`]): a queue worker that takes one
//! batch at a time, plays it on the process's game pool and writes its points once. The same
//! worker runs in `kalah-tuner worker` and inside `serve`.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use graphile_worker::{IntoTaskHandlerResult, TaskHandler, WorkerContext, WorkerOptions};

use super::meter::{Mark, MeteredPool};
use super::pairs::{play_pairs, PlayPairs};
use super::queue::{
    queue_error, BatchQueue, PlayBatch, QueueError, HEARTBEAT, QUEUE_POLL, SCHEMA, SHUTDOWN_GRACE,
    STATUS_POLL, SWEEP_INTERVAL, SWEEP_THRESHOLD,
};
use super::results::{BatchStore, ResultWrite, SliceKey, WorkerInfo};
use crate::search::Budget;
use crate::tune::games::GameSetup;

/// What a worker process plays batches with, shared by its queue worker.
#[derive(Clone)]
pub(crate) struct BatchEnv {
    pub store: Arc<dyn BatchStore>,
    /// Plays one batch at a time, so that its threads' processor time is the batch's.
    pub pool: Arc<MeteredPool>,
    /// Names the worker in the results it writes, in the workers table and in its logs.
    pub name: String,
    /// The batch it plays now, for its heartbeat in the workers table.
    under_way: Arc<std::sync::Mutex<Option<SliceKey>>>,
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

impl TaskHandler for PlayPairs {
    const IDENTIFIER: &'static str = "kalah_tuner_play_pairs";

    async fn run(self, ctx: WorkerContext) -> impl IntoTaskHandlerResult {
        let Some(env) = ctx.get_ext::<BatchEnv>().cloned() else {
            return Err("the worker has no batch environment".to_string());
        };
        let key = self.key.clone();
        let played = env
            .on_pool(move || play_pairs(&self.a, &self.b, &self.setup, self.pairs))
            .await;
        let (scores, times) = match played {
            Ok((Ok(scores), times)) => (scores, times),
            // A round that cannot be played never will: the asker hears of it by the queue
            // giving up on the job, and plays the round itself.
            Ok((Err(e), _)) => return Err(format!("the round cannot be played: {e}")),
            Err(e) => return Err(format!("the round's games stopped: {e}")),
        };
        let written = env
            .store
            .put_slice_result(
                &key,
                &scores,
                &env.name,
                times.wall_ms(),
                times.processor_ms(),
            )
            .await
            .map_err(|e| e.to_string())?;
        if let ResultWrite::Different { .. } = written {
            // Only a worker of another version could score a round differently; the first
            // result stands.
            tracing::error!(run = %key.run_id, "a round scored differently on {}", env.name);
        }
        Ok(())
    }
}

/// The time a batch's games took: on the clock, and on the pool's threads' processor clocks
/// (what its run is charged).
struct Took {
    wall: Duration,
    processor: Duration,
}

impl Took {
    fn wall_ms(&self) -> u64 {
        self.wall.as_millis() as u64
    }

    /// Rounded, not truncated: a run of many short batches is charged what they took in all,
    /// not a millisecond less for each.
    fn processor_ms(&self) -> u64 {
        (self.processor.as_secs_f64() * 1000.0).round() as u64
    }
}

/// Clears the batch under way when its play ends, however it ends.
struct UnderWay<'a>(&'a std::sync::Mutex<Option<SliceKey>>);

impl UnderWay<'_> {
    fn set(&self, key: Option<SliceKey>) {
        // A panic while holding the lock leaves a plain value behind: still usable.
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = key;
    }
}

impl Drop for UnderWay<'_> {
    fn drop(&mut self) {
        self.set(None);
    }
}

impl BatchEnv {
    pub(crate) fn new(
        store: Arc<dyn BatchStore>,
        pool: Arc<MeteredPool>,
        name: String,
    ) -> BatchEnv {
        BatchEnv {
            store,
            pool,
            name,
            under_way: Arc::default(),
        }
    }

    fn under_way(&self) -> Option<SliceKey> {
        self.under_way
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    async fn play(&self, batch: PlayBatch) -> Result<Played, QueueError> {
        if !self.still_running(&batch).await? {
            return Ok(Played::Skipped);
        }
        let key = batch.key();
        let under_way = UnderWay(&self.under_way);
        under_way.set(Some(key.clone()));
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
        let games = budget.clone();
        let played = self
            .on_pool(move || {
                let mut setup = GameSetup::new(batch.games)?;
                setup.set_cancel(games);
                setup
                    .play_batch(&batch.population, batch.generation, &batch.jobs)
                    .map_err(|e| crate::tune::ConfigError::invalid("batch", e.to_string()))
            })
            .await;
        watcher.abort();
        let (points, times) = match played {
            Ok((Ok(points), times)) => (points, times),
            Ok((Err(e), _)) => {
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
        match self
            .store
            .put_slice_result(
                &key,
                &points,
                &self.name,
                times.wall_ms(),
                times.processor_ms(),
            )
            .await?
        {
            ResultWrite::Written => Ok(Played::Written),
            ResultWrite::Same => Ok(Played::Same),
            ResultWrite::Different { stored } => {
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

    /// Runs `games` on this worker's metered pool, off the async threads: what they gave and
    /// the time they took. Err when they panicked.
    async fn on_pool<T: Send + 'static>(
        &self,
        games: impl FnOnce() -> T + Send + 'static,
    ) -> Result<(T, Took), tokio::task::JoinError> {
        let pool = self.pool.clone();
        let started = Instant::now();
        tokio::task::spawn_blocking(move || {
            let mut mark = Mark::now(&pool);
            let value = pool.pool().install(games);
            let processor = mark.lap(&pool);
            let took = Took {
                wall: started.elapsed(),
                processor,
            };
            (value, took)
        })
        .await
    }

    async fn still_running(&self, batch: &PlayBatch) -> Result<bool, QueueError> {
        Ok(self.store.running_claim(&batch.run_id).await? == Some(batch.claim))
    }
}

/// Stops `budget` once the run is no longer running under `claim`.
async fn stop_when_not_running(
    store: Arc<dyn BatchStore>,
    run_id: String,
    claim: i64,
    budget: Budget,
) {
    loop {
        tokio::time::sleep(STATUS_POLL).await;
        match store.running_claim(&run_id).await {
            Ok(Some(current)) if current == claim => {}
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
pub(crate) async fn start_batch_worker(
    queue: &BatchQueue,
    env: BatchEnv,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<tokio::task::JoinHandle<()>, QueueError> {
    use futures_util::FutureExt;
    let shutdown = shutdown.boxed().shared();
    let name = env.name.clone();
    let first = batch_worker(queue, env.clone(), shutdown.clone()).await?;
    let queue = queue.clone();
    let beats = tokio::spawn(beat(env.clone(), shutdown.clone()));
    Ok(tokio::spawn(async move {
        tracing::info!(worker = %name, "playing game batches from the queue");
        let mut worker = Some(first);
        loop {
            if let Some(running) = worker.take() {
                match running.run().await {
                    Ok(()) => break,
                    Err(e) => tracing::error!(worker = %name, "the batch worker stopped: {e}"),
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(RESTART_DELAY) => {}
                _ = shutdown.clone() => break,
            }
            match batch_worker(&queue, env.clone(), shutdown.clone()).await {
                Ok(restarted) => {
                    tracing::info!(worker = %name, "the batch worker started again");
                    worker = Some(restarted);
                }
                Err(e) => tracing::warn!(worker = %name, "restarting the batch worker: {e}"),
            }
        }
        // The beat task saw the shutdown too: it marks the worker stopped.
        let _ = beats.await;
    }))
}

/// How often a worker writes its heartbeat and the batch it plays to the workers table.
const WORKER_BEAT: Duration = Duration::from_secs(1);

/// The worker's row in the workers table: registered at the start, beaten every
/// [`WORKER_BEAT`] with the batch under way, marked stopped at `shutdown`. A failed write is
/// logged and tried again at the next beat: the row is for people watching, and batches play
/// on without it.
async fn beat(env: BatchEnv, shutdown: impl Future<Output = ()> + Send + 'static) {
    let info = WorkerInfo {
        name: env.name.clone(),
        host: host_name(),
        threads: env.pool.pool().current_num_threads() as u32,
    };
    let mut registered = false;
    tokio::pin!(shutdown);
    loop {
        let written = if registered {
            let batch = env.under_way();
            env.store.worker_beat(&env.name, batch.as_ref()).await
        } else {
            env.store.register_worker(&info).await
        };
        match written {
            Ok(()) => registered = true,
            Err(e) => tracing::warn!(worker = %env.name, "writing the worker's heartbeat: {e}"),
        }
        tokio::select! {
            _ = tokio::time::sleep(WORKER_BEAT) => {}
            _ = &mut shutdown => break,
        }
    }
    if let Err(e) = env.store.worker_stopped(&env.name).await {
        tracing::warn!(worker = %env.name, "marking the worker stopped: {e}");
    }
}

/// The machine's name as the workers page shows it (`HOSTNAME`, as in process names).
fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into())
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
        .define_job::<PlayPairs>()
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
