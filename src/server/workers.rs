//! Run workers: each is a tokio task that claims the oldest queued run and steps it one
//! generation (GA) or checkpoint (TD, Texel) at a time with the [`crate::runner::Runner`]:
//! a generation is computed on the rayon pool inside `spawn_blocking` (or, on PostgreSQL,
//! its games are awaited from the job queue), so the async runtime that serves HTTP never
//! waits on the games, and each generation is
//! written in one transaction before the next starts. A run the worker finds already started
//! (resumed after a crash or a cancel) continues from its last written generation with
//! the tuning engine's [`Driver`] (`TunerConfig::open`), which gives exactly the records an
//! uninterrupted run would.
//!
//! While a generation computes, the worker looks at the run's status every second: once the
//! run is cancelled or deleted (by this process or another on the same database) the
//! generation's remaining games are skipped and its result dropped, so the cores are free
//! again within about a second plus one game per thread.

use std::sync::Arc;
use std::time::Duration;

use super::runs::publish_status;
use super::state::SharedState;
use crate::runner::{Games, QueueRunner, Runner, Stepped};
use crate::search::Budget;
use crate::store::{GenerationPoint, RunRow, StoreError, WriteOutcome};
use crate::tune::GenerationRecord;
use crate::tune::{Driver, StepControl};

/// How often an idle worker looks at the queue even without being woken.
const POLL: Duration = Duration::from_secs(1);
/// How often an owner renews its run's lease (and so learns that the run was cancelled).
const LEASE_BEAT: Duration = Duration::from_secs(1);
/// How long a worker waits out a database that does not answer before it gives up on the
/// run (which stays `running`, and is resumed by the next process to start).
const MAX_OUTAGE: Duration = Duration::from_secs(600);

/// Runs `op` until it succeeds, fails for good, or the database has been unreachable for
/// [`MAX_OUTAGE`]: transient errors (a lost connection, a restarting server) are retried
/// with back-off from 0.5 s to 10 s, so a run survives a database outage.
async fn with_retries<T, F, Fut>(run_id: &str, what: &str, mut op: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let started = std::time::Instant::now();
    let mut wait = Duration::from_millis(500);
    loop {
        match op().await {
            Err(e) if e.is_transient() && started.elapsed() < MAX_OUTAGE => {
                tracing::warn!(run = %run_id, "{what}: {e}; retrying in {wait:?}");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(10));
            }
            other => return other,
        }
    }
}

pub async fn worker(state: SharedState, index: usize) {
    loop {
        if state.is_stopping() {
            return;
        }
        match state.store.claim_next(&state.owner).await {
            Ok(Some(run)) => {
                let id = run.id.clone();
                tracing::info!(run = %id, worker = index, claim = run.claim, "run started");
                publish_status(&state, &id).await;
                let claim = run.claim;
                match evolve(&state, run).await {
                    Ok(()) => {}
                    Err(e) => {
                        tracing::warn!(run = %id, "run failed: {e}");
                        if let Err(e2) = state.store.fail(&id, claim, &e).await {
                            tracing::error!(run = %id, "could not mark the run failed: {e2}");
                        }
                    }
                }
                publish_status(&state, &id).await;
            }
            Ok(None) => {
                tokio::select! {
                    _ = tokio::time::timeout(POLL, state.wake.notified()) => {}
                    _ = state.stopping() => return,
                }
            }
            Err(e) => {
                tracing::error!(worker = index, "claiming a run: {e}");
                tokio::select! {
                    _ = tokio::time::sleep(POLL) => {}
                    _ = state.stopping() => return,
                }
            }
        }
    }
}

/// Steps a claimed run until it finishes, stops being this process's `running` run, or the
/// process stops (then the run goes back to the queue). `Err` carries the message stored
/// with a failed run.
async fn evolve(state: &SharedState, run: RunRow) -> Result<(), String> {
    let budget = Budget::unlimited();
    let _registered = Evolving::register(state, &run.id, &budget);
    let lease = tokio::spawn(keep_lease(
        state.clone(),
        run.id.clone(),
        run.claim,
        budget.clone(),
    ));
    let outcome = evolve_leased(state, &run, &budget).await;
    lease.abort();
    if state.is_stopping() && outcome.is_ok() {
        match state.store.release(&run.id, run.claim).await {
            Ok(true) => tracing::info!(run = %run.id, "stopping: run handed back to the queue"),
            Ok(false) => {}
            Err(e) => tracing::warn!(run = %run.id,
                "stopping: could not hand the run back ({e}); another process takes it over \
                 once its lease is stale"),
        }
    }
    outcome
}

async fn evolve_leased(state: &SharedState, run: &RunRow, budget: &Budget) -> Result<(), String> {
    let config = run.config()?.clone();
    // A tuner rebuilt from its whole history (CMA-ES) reads every record; the others only the
    // last, which is all a long GA run should have to load.
    let records = if config.resumes_from_all() {
        with_retries(&run.id, "reading the generations", || {
            state.store.records(&run.id)
        })
        .await
        .map_err(|e| e.to_string())?
    } else {
        with_retries(&run.id, "reading the last generation", || {
            state.store.last_record(&run.id)
        })
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .collect()
    };
    if let Some(record) = records.last() {
        tracing::info!(run = %run.id, generation = record.generation, "resuming after generation");
    }
    // Off the async runtime: locating and loading the agents' models reads the disk, and a
    // Texel run plays and labels its positions before its first checkpoint.
    let (files, pool, cancel) = (state.files.clone(), state.pool.clone(), budget.clone());
    let driver = tokio::task::spawn_blocking(move || {
        let config = config.locate_agents(&files)?;
        pool.install(|| Driver::open_within(config, records, &cancel))
    })
    .await
    .map_err(|e| format!("preparing the run stopped: {e}"))?
    .map_err(|e| e.to_string())?;
    let champion_config = run.config()?;
    // On PostgreSQL a run's games go to the batch queue, where this and any other process's
    // batch workers play them.
    let games = match &state.queue {
        Some(queue) => Games::Queue(Box::new(QueueRunner::new(
            queue.clone(),
            Arc::new(state.store.clone()),
            run.id.clone(),
            run.claim,
        ))),
        None => Games::Here,
    };
    let mut runner = Runner::new(driver, state.pool.clone(), games);
    let control = StepControl::new(budget.clone());
    loop {
        let stepped = runner.step(&control).await.map_err(|e| e.to_string())?;
        let record = match stepped {
            Stepped::Cancelled => {
                tracing::info!(run = %run.id, "run no longer this process's to run: the generation under way stopped");
                return Ok(());
            }
            Stepped::Finished(stop) => {
                // Only a resumed run whose last record already ended it gets here.
                with_retries(&run.id, "finishing the run", || {
                    state.store.finish(&run.id, run.claim, stop)
                })
                .await
                .map_err(|e| e.to_string())?;
                tracing::info!(run = %run.id, "run finished");
                return Ok(());
            }
            Stepped::Record(record) => record,
        };
        let champion = champion_config.champion(&record);
        let written = with_retries(&run.id, "writing a generation", || {
            state
                .store
                .write_generation(&run.id, run.claim, &record, &champion)
        })
        .await
        .map_err(|e| e.to_string())?;
        match written {
            WriteOutcome::NotRunning => {
                tracing::info!(run = %run.id, generation = record.generation,
                    "run no longer running: generation dropped");
                return Ok(());
            }
            WriteOutcome::Written => {
                state.counters.generation_written(record.games_played);
                announce(state, &run.id, &record)
            }
        }
        if let Games::Queue(queue) = runner.games() {
            tracing::debug!(run = %run.id, stats = ?queue.stats(), "batches so far");
        }
        if record.stop.is_some() {
            tracing::info!(run = %run.id, stop = ?record.stop, "run finished");
            return Ok(());
        }
        if state.is_stopping() {
            return Ok(());
        }
    }
}

/// A run's entry in [`AppState::evolving`](super::state::AppState::evolving) while its
/// owner evolves it.
struct Evolving<'a>(&'a SharedState, String, Budget);

impl<'a> Evolving<'a> {
    fn register(state: &'a SharedState, id: &str, budget: &Budget) -> Evolving<'a> {
        if let Ok(mut evolving) = state.evolving.lock() {
            evolving.insert(id.to_string(), budget.clone());
        }
        Evolving(state, id.to_string(), budget.clone())
    }
}

impl Drop for Evolving<'_> {
    fn drop(&mut self) {
        if let Ok(mut evolving) = self.0.evolving.lock() {
            // A run resumed at once may be evolved again here already, under a new budget.
            if evolving.get(&self.1).is_some_and(|b| b.is_same(&self.2)) {
                evolving.remove(&self.1);
            }
        }
    }
}

/// Renews the run's lease every second while its owner evolves it, and stops `budget` once
/// the run is no longer running under `claim` (cancelled, deleted, failed, or taken over by
/// another process that found the lease stale) or the process is stopping. A database error
/// is not a reason to stop: the write at the generation's end decides then.
async fn keep_lease(state: SharedState, run_id: String, claim: i64, budget: Budget) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(LEASE_BEAT) => {}
            _ = state.stopping() => {
                budget.cancel();
                return;
            }
        }
        match state.store.heartbeat(&run_id, claim).await {
            Ok(true) => {}
            Ok(false) => {
                budget.cancel();
                return;
            }
            Err(e) => tracing::warn!(run = %run_id, "renewing the run's lease: {e}"),
        }
    }
}

fn announce(state: &SharedState, run_id: &str, record: &GenerationRecord) {
    tracing::info!(
        run = %run_id,
        generation = record.generation,
        best = record.fitness.best,
        mean = record.fitness.mean,
        games = record.games_played,
        wall_ms = record.timing.wall_ms,
        "generation written"
    );
    let event = super::run_events::generation_event(run_id, &GenerationPoint::of(record));
    super::run_events::emit(state, event);
}
