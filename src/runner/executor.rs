//! A run's life from claim to end: the [`Executor`] claims the oldest queued run, keeps its
//! lease, steps it with a [`Runner`] one record at a time, writes each record, and finishes,
//! fails or hands the run back. The server's run workers are `Executor::work` loops; the
//! persistence it needs is the [`RunStore`] trait, which the store implements, and what the
//! outside world hears of it goes through a [`RunObserver`].
//!
//! A run found already started (resumed after a crash or a cancel) carries on from its last
//! written record with the tuning engine's [`Driver`], which gives exactly the records an
//! uninterrupted run would. While a step computes, the owner renews the lease every second:
//! once the run is cancelled or deleted (by this process or another on the same database) the
//! step's remaining games are skipped and its result dropped, so the cores are free again
//! within about a second plus one game per thread.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::{watch, Notify};

use super::meter::{Mark, MeteredPool};
use super::outage::with_retries;
use super::results::{BatchStore, StoreAccessError, StoreFuture};
use super::{BatchQueue, Games, QueueRunner, Runner, RunnerError, Stepped};
use crate::agents::FileAccess;
use crate::search::Budget;
use crate::tune::TunerConfig;
use crate::tune::{ConfigError, Driver, GenerationRecord, HallOfFame, StepControl, StopReason};

/// How often an idle worker looks at the queue even without being woken.
const POLL: Duration = Duration::from_secs(1);
/// How often an owner renews its run's lease (and so learns that the run was cancelled).
const LEASE_BEAT: Duration = Duration::from_secs(1);
/// How long a run keeps its slot before it yields to another user's waiting run (when its
/// user has more runs running): long enough that resuming costs little beside it.
const TURN: Duration = Duration::from_secs(30);

/// A run a worker has claimed: its id, the claim it writes under, and its config as stored.
#[derive(Debug)]
pub(crate) struct ClaimedRun {
    pub id: String,
    pub claim: i64,
    /// The stored config, or why it does not read as one (the run then fails).
    pub config: Result<TunerConfig, UnreadableRun>,
}

/// A claimed run whose stored config does not read as one: what of it could not be read.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct UnreadableRun(pub String);

/// What became of a record the owner wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordWrite {
    Written,
    /// The run is no longer running under the claim: the record was dropped.
    NotRunning,
}

/// The persistence of a run's life, implemented by [`crate::store::Store`]. Every write is
/// conditional on the run still being `running` under the claim, so an owner that lost its
/// lease changes nothing.
pub(crate) trait RunStore: Send + Sync {
    /// Claims the oldest queued run (or a running one whose lease is stale) for `owner`.
    fn claim_next<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Option<ClaimedRun>>;

    /// The run's records, oldest first: every one with `all`, else only the last.
    fn run_records<'a>(
        &'a self,
        run_id: &'a str,
        all: bool,
    ) -> StoreFuture<'a, Vec<GenerationRecord>>;

    /// Renews the lease; `false` once the run is no longer running under `claim`.
    fn renew_lease<'a>(&'a self, run_id: &'a str, claim: i64) -> StoreFuture<'a, bool>;

    /// Writes one record and the run's progress, `champion` its player, and adds `processor`
    /// to the run's processor time; a record with a stop reason also finishes the run.
    fn write_record<'a>(
        &'a self,
        run_id: &'a str,
        claim: i64,
        record: &'a GenerationRecord,
        champion: &'a HallOfFame,
        processor: Duration,
    ) -> StoreFuture<'a, RecordWrite>;

    /// Adds `processor` to the run's processor time, whatever its status: the time of work
    /// that made no record (a cancelled step, a failed one, one whose record was dropped).
    fn add_processor_time<'a>(
        &'a self,
        run_id: &'a str,
        processor: Duration,
    ) -> StoreFuture<'a, ()>;

    /// Finishes a run without a new record (a resumed run whose last record ended it).
    fn finish_run<'a>(
        &'a self,
        run_id: &'a str,
        claim: i64,
        stop: Option<StopReason>,
    ) -> StoreFuture<'a, ()>;

    /// Fails the run with `error`, the message its readers see.
    fn fail_run<'a>(&'a self, run_id: &'a str, claim: i64, error: &'a str) -> StoreFuture<'a, ()>;

    /// Hands the run back to the queue; `false` when it was not running under `claim`.
    fn release_run<'a>(&'a self, run_id: &'a str, claim: i64) -> StoreFuture<'a, bool>;

    /// Whether the run should give its slot to another user's waiting run (users take turns).
    fn should_yield<'a>(&'a self, run_id: &'a str) -> StoreFuture<'a, bool>;
}

/// What the rest of the process hears of the runs an executor steps: the server announces
/// them to its event streams and counts them.
pub(crate) trait RunObserver: Send + Sync {
    /// The run's status changed (claimed, or ended one way or another).
    fn status_changed<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, ()>;
    /// A record was written.
    fn record_written(&self, run_id: &str, record: &GenerationRecord);
}

/// Why a run failed: the message stored with it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunFailure {
    #[error(transparent)]
    Unreadable(#[from] UnreadableRun),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Store(#[from] StoreAccessError),
    #[error(transparent)]
    Runner(#[from] RunnerError),
    #[error("preparing the run stopped: {0}")]
    Preparation(String),
}

/// Claims queued runs and steps them to their end; see the module documentation.
pub(crate) struct Executor {
    store: Arc<dyn RunStore>,
    /// On PostgreSQL, the batch queue a run's games go to, and where their results are kept.
    queue: Option<(BatchQueue, Arc<dyn BatchStore>)>,
    /// The game threads of each run worker: a worker steps one run at a time on its own pool,
    /// so the processor time its threads use is that run's.
    pools: Vec<Arc<MeteredPool>>,
    /// Which files a run's agent specs may name.
    files: FileAccess,
    /// This process's name in the runs it leases.
    owner: String,
    shutdown: watch::Receiver<bool>,
    wake: Notify,
    /// The stop of each run this process steps, by id: a cancel or delete through this
    /// process stops the run's games at once, without waiting for the next lease renewal
    /// (which tells of runs cancelled through other processes within a second).
    running: Mutex<HashMap<String, Budget>>,
}

impl Executor {
    /// `shutdown` turns true once the process starts to stop: owners then hand their runs
    /// back to the queue after the step under way. Run worker `i` plays on `pools[i]`
    /// (`pools` must not be empty; workers past its end share its pools in turn).
    pub(crate) fn new(
        store: Arc<dyn RunStore>,
        queue: Option<(BatchQueue, Arc<dyn BatchStore>)>,
        pools: Vec<Arc<MeteredPool>>,
        files: FileAccess,
        owner: String,
        shutdown: watch::Receiver<bool>,
    ) -> Executor {
        Executor {
            store,
            queue,
            pools,
            files,
            owner,
            shutdown,
            wake: Notify::new(),
            running: Mutex::new(HashMap::new()),
        }
    }

    /// Wakes idle workers: a run was queued.
    pub(crate) fn wake(&self) {
        self.wake.notify_waiters();
    }

    /// Stops the games of run `id` if this process steps it.
    pub(crate) fn stop_here(&self, id: &str) {
        if let Some(budget) = self.running.lock().ok().and_then(|r| r.get(id).cloned()) {
            budget.cancel();
        }
    }

    /// How many runs this process steps now.
    pub(crate) fn running_here(&self) -> usize {
        self.running.lock().map_or(0, |r| r.len())
    }

    fn is_stopping(&self) -> bool {
        *self.shutdown.borrow()
    }

    fn stopping(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.shutdown.clone();
        async move {
            let _ = rx.wait_for(|stop| *stop).await;
        }
    }

    /// One run worker: claims runs and steps each to its end, one at a time, until the
    /// process stops.
    pub(crate) async fn work(self: Arc<Self>, index: usize, observer: Arc<dyn RunObserver>) {
        let Some(pool) = self.pools.get(index % self.pools.len().max(1)).cloned() else {
            tracing::error!(worker = index, "no game threads for this run worker");
            return;
        };
        loop {
            if self.is_stopping() {
                return;
            }
            match self.store.claim_next(&self.owner).await {
                Ok(Some(run)) => {
                    let (id, claim) = (run.id.clone(), run.claim);
                    tracing::info!(run = %id, worker = index, claim, "run started");
                    observer.status_changed(&id).await;
                    if let Err(e) = self.execute(run, &pool, &*observer).await {
                        tracing::warn!(run = %id, "run failed: {e}");
                        if let Err(e2) = self.store.fail_run(&id, claim, &e.to_string()).await {
                            tracing::error!(run = %id, "could not mark the run failed: {e2}");
                        }
                    }
                    observer.status_changed(&id).await;
                }
                Ok(None) => {
                    tokio::select! {
                        _ = tokio::time::timeout(POLL, self.wake.notified()) => {}
                        _ = self.stopping() => return,
                    }
                }
                Err(e) => {
                    tracing::error!(worker = index, "claiming a run: {e}");
                    tokio::select! {
                        _ = tokio::time::sleep(POLL) => {}
                        _ = self.stopping() => return,
                    }
                }
            }
        }
    }

    /// Steps a claimed run until it finishes, stops being this process's `running` run, or
    /// the process stops (then the run goes back to the queue).
    async fn execute(
        self: &Arc<Self>,
        run: ClaimedRun,
        pool: &Arc<MeteredPool>,
        observer: &dyn RunObserver,
    ) -> Result<(), RunFailure> {
        let budget = Budget::unlimited();
        let _registered = Registered::new(self, &run.id, &budget);
        let lease = tokio::spawn(self.clone().keep_lease(
            run.id.clone(),
            run.claim,
            budget.clone(),
        ));
        let mut meter = Meter {
            pool: pool.clone(),
            mark: Mark::now(pool),
            queued: Duration::ZERO,
        };
        let outcome = self
            .execute_leased(&run, &budget, &mut meter, observer)
            .await;
        lease.abort();
        // Every way out of a step charges its time; what is left is the time of a failure
        // (preparing the run, a step that failed), or nothing worth a write.
        let rest = meter.lap();
        if outcome.is_err() || rest >= Duration::from_millis(10) {
            self.charge(&run.id, rest).await;
        }
        if self.is_stopping() && outcome.is_ok() {
            match self.store.release_run(&run.id, run.claim).await {
                Ok(true) => {
                    tracing::info!(run = %run.id, "stopping: run handed back to the queue")
                }
                Ok(false) => {}
                Err(e) => tracing::warn!(run = %run.id,
                    "stopping: could not hand the run back ({e}); another process takes it over \
                     once its lease is stale"),
            }
        }
        outcome
    }

    async fn execute_leased(
        &self,
        run: &ClaimedRun,
        budget: &Budget,
        meter: &mut Meter,
        observer: &dyn RunObserver,
    ) -> Result<(), RunFailure> {
        let config = run.config.clone()?;
        // A tuner rebuilt from its whole history (CMA-ES) reads every record; the others only
        // the last, which is all a long GA run should have to load.
        let all = config.resumes_from_all();
        let records = with_retries(&run.id, "reading the records", || {
            self.store.run_records(&run.id, all)
        })
        .await?;
        if let Some(record) = records.last() {
            tracing::info!(run = %run.id, generation = record.generation, "resuming after generation");
        }
        // Off the async runtime: locating and loading the agents' models reads the disk, and
        // a Texel run plays and labels its positions before its first checkpoint.
        let (files, pool, cancel) = (
            self.files.clone(),
            meter.pool.pool().clone(),
            budget.clone(),
        );
        let located = config.clone();
        let driver = tokio::task::spawn_blocking(move || {
            let located = located.locate_agents(&files)?;
            pool.install(|| Driver::open_within(located, records, &cancel))
        })
        .await
        .map_err(|e| RunFailure::Preparation(e.to_string()))??;
        let games = match &self.queue {
            // On PostgreSQL a run's games go to the batch queue, where this and any other
            // process's batch workers play them.
            Some((queue, results)) => Games::Queue(Box::new(QueueRunner::new(
                queue.clone(),
                results.clone(),
                run.id.clone(),
                run.claim,
            ))),
            None => Games::Here,
        };
        let mut runner = Runner::new(driver, meter.pool.pool().clone(), games);
        let control = StepControl::new(budget.clone());
        let claimed = std::time::Instant::now();
        loop {
            let stepped = runner.step(&control).await;
            if let Games::Queue(queue) = runner.games_mut() {
                meter.queued += queue.take_processor_time();
            }
            let record = match stepped? {
                Stepped::Cancelled => {
                    tracing::info!(run = %run.id,
                        "run no longer this process's to run: the step under way stopped");
                    self.charge(&run.id, meter.lap()).await;
                    return Ok(());
                }
                Stepped::Finished(stop) => {
                    self.charge(&run.id, meter.lap()).await;
                    // Only a resumed run whose last record already ended it gets here.
                    with_retries(&run.id, "finishing the run", || {
                        self.store.finish_run(&run.id, run.claim, stop)
                    })
                    .await?;
                    tracing::info!(run = %run.id, "run finished");
                    return Ok(());
                }
                Stepped::Record(record) => record,
            };
            let champion = config.champion(&record);
            let processor = meter.lap();
            let written = with_retries(&run.id, "writing a record", || {
                self.store
                    .write_record(&run.id, run.claim, &record, &champion, processor)
            })
            .await?;
            match written {
                RecordWrite::NotRunning => {
                    tracing::info!(run = %run.id, generation = record.generation,
                        "run no longer running: record dropped");
                    self.charge(&run.id, processor).await;
                    return Ok(());
                }
                RecordWrite::Written => observer.record_written(&run.id, &record),
            }
            if let Games::Queue(queue) = runner.games() {
                tracing::debug!(run = %run.id, stats = ?queue.stats(), "batches so far");
            }
            if record.stop.is_some() {
                tracing::info!(run = %run.id, stop = ?record.stop, "run finished");
                return Ok(());
            }
            if self.is_stopping() {
                return Ok(());
            }
            // Between generations, after a turn: another user waiting with fewer runs running
            // gets this slot; this run goes back to the queue and resumes from this record
            // (exactly as it would have gone on) when its user's turn comes again.
            if claimed.elapsed() >= TURN
                && self.store.should_yield(&run.id).await.unwrap_or(false)
                && self
                    .store
                    .release_run(&run.id, run.claim)
                    .await
                    .unwrap_or(false)
            {
                tracing::info!(run = %run.id, generation = record.generation,
                    "run yields its slot to another user's waiting run");
                return Ok(());
            }
        }
    }

    /// Adds processor time to a run, or says why it could not: the time is then missing from
    /// the run's figure (and its user's quota), which is no reason to stop the run.
    async fn charge(&self, run_id: &str, processor: Duration) {
        if processor.is_zero() {
            return;
        }
        let added = with_retries(run_id, "adding the run's processor time", || {
            self.store.add_processor_time(run_id, processor)
        })
        .await;
        if let Err(e) = added {
            tracing::warn!(run = %run_id, "the run's processor time was not added: {e}");
        }
    }

    /// Renews the run's lease every second while this process steps it, and stops `budget`
    /// once the run is no longer running under `claim` (cancelled, deleted, failed, or taken
    /// over by another process that found the lease stale) or the process is stopping. A
    /// database error is not a reason to stop: the write at the step's end decides then.
    async fn keep_lease(self: Arc<Self>, run_id: String, claim: i64, budget: Budget) {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(LEASE_BEAT) => {}
                _ = self.stopping() => {
                    budget.cancel();
                    return;
                }
            }
            match self.store.renew_lease(&run_id, claim).await {
                Ok(true) => {}
                Ok(false) => {
                    budget.cancel();
                    return;
                }
                Err(e) => tracing::warn!(run = %run_id, "renewing the run's lease: {e}"),
            }
        }
    }
}

/// The processor time of the run a worker steps, not yet added to the run: its own game
/// threads' since the last lap, and its games' on the queue's workers.
struct Meter {
    pool: Arc<MeteredPool>,
    mark: Mark,
    queued: Duration,
}

impl Meter {
    /// The time since the last lap.
    fn lap(&mut self) -> Duration {
        self.mark.lap(&self.pool) + std::mem::take(&mut self.queued)
    }
}

/// A run's entry in [`Executor::running`] while this process steps it.
struct Registered<'a>(&'a Executor, String, Budget);

impl<'a> Registered<'a> {
    fn new(executor: &'a Executor, id: &str, budget: &Budget) -> Registered<'a> {
        if let Ok(mut running) = executor.running.lock() {
            running.insert(id.to_string(), budget.clone());
        }
        Registered(executor, id.to_string(), budget.clone())
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        if let Ok(mut running) = self.0.running.lock() {
            // A run resumed at once may be stepped again here already, under a new budget.
            if running.get(&self.1).is_some_and(|b| b.is_same(&self.2)) {
                running.remove(&self.1);
            }
        }
    }
}
