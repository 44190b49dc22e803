//! Run workers: each is a tokio task that claims the oldest queued run and steps it one
//! generation (GA) or checkpoint (TD, Texel) at a time. A generation is computed on the rayon pool inside `spawn_blocking`,
//! so the async runtime that serves HTTP never waits on the games, and each generation is
//! written in one transaction before the next starts. A run the worker finds already started
//! (resumed after a crash or a cancel) continues from its last written generation with
//! [`Evolution::resume`] or [`LearningRun::resume`], which give exactly the records an
//! uninterrupted run would.

use std::time::Duration;

use serde_json::json;

use super::runs::publish_status;
use super::{RunEvent, SharedState};
use crate::ga::{ConfigError, Evolution, GenerationRecord, LearningRun, StopReason, TunerConfig};
use crate::store::{GenerationPoint, RunRow, WriteOutcome};

/// How often an idle worker looks at the queue even without being woken.
const POLL: Duration = Duration::from_secs(1);

pub async fn worker(state: SharedState, index: usize) {
    loop {
        match state.store.claim_next().await {
            Ok(Some(run)) => {
                let id = run.id.clone();
                tracing::info!(run = %id, worker = index, "run started");
                publish_status(&state, &id).await;
                if let Err(e) = evolve(&state, run).await {
                    tracing::warn!(run = %id, "run failed: {e}");
                    if let Err(e2) = state.store.fail(&id, &e).await {
                        tracing::error!(run = %id, "could not mark the run failed: {e2}");
                    }
                }
                publish_status(&state, &id).await;
            }
            Ok(None) => {
                let _ = tokio::time::timeout(POLL, state.wake.notified()).await;
            }
            Err(e) => {
                tracing::error!(worker = index, "claiming a run: {e}");
                tokio::time::sleep(POLL).await;
            }
        }
    }
}

/// A claimed run's tuner, stepped one record (generation or checkpoint) at a time.
enum Stepper {
    Ga(Box<Evolution>),
    Learning(Box<LearningRun>),
}

impl Stepper {
    /// The run from its first record, or after `last`. Texel samples its positions here: call
    /// it on the rayon pool, off the async runtime.
    fn prepare(
        config: TunerConfig,
        last: Option<&GenerationRecord>,
    ) -> Result<Stepper, ConfigError> {
        Ok(match (config, last) {
            (TunerConfig::Ga(c), None) => Stepper::Ga(Box::new(Evolution::new(*c)?)),
            (TunerConfig::Ga(c), Some(r)) => Stepper::Ga(Box::new(Evolution::resume(*c, r)?)),
            (TunerConfig::Learning(c), None) => Stepper::Learning(Box::new(LearningRun::new(*c)?)),
            (TunerConfig::Learning(c), Some(r)) => {
                Stepper::Learning(Box::new(LearningRun::resume(*c, r)?))
            }
        })
    }

    fn step(&mut self) -> Option<GenerationRecord> {
        match self {
            Stepper::Ga(e) => e.step(),
            Stepper::Learning(l) => l.step(),
        }
    }

    fn stop_reason(&self) -> Option<StopReason> {
        match self {
            Stepper::Ga(e) => e.stop_reason(),
            Stepper::Learning(l) => l.stop_reason(),
        }
    }
}

/// Steps a claimed run until it finishes or stops being `running`. `Err` carries the message
/// stored with a failed run.
async fn evolve(state: &SharedState, run: RunRow) -> Result<(), String> {
    let last = state
        .store
        .last_record(&run.id)
        .await
        .map_err(|e| e.to_string())?;
    let config = run.config()?.clone();
    if let Some(record) = &last {
        tracing::info!(run = %run.id, generation = record.generation, "resuming after generation");
    }
    // Off the async runtime: locating and loading the agents' models reads the disk, and a
    // Texel run plays and labels its positions before its first checkpoint.
    let (files, pool) = (state.files.clone(), state.pool.clone());
    let mut stepper = tokio::task::spawn_blocking(move || {
        let config = config.locate_agents(&files)?;
        pool.install(|| Stepper::prepare(config, last.as_ref()))
    })
    .await
    .map_err(|e| format!("preparing the run stopped: {e}"))?
    .map_err(|e| e.to_string())?;
    let champion_config = run.config()?;

    loop {
        let pool = state.pool.clone();
        let (back, record) = tokio::task::spawn_blocking(move || {
            let record = pool.install(|| stepper.step());
            (stepper, record)
        })
        .await
        .map_err(|e| format!("the generation thread stopped: {e}"))?;
        stepper = back;
        let Some(record) = record else {
            // Only a resumed run whose last record already ended it gets here.
            state
                .store
                .finish(&run.id, stepper.stop_reason())
                .await
                .map_err(|e| e.to_string())?;
            tracing::info!(run = %run.id, "run finished");
            return Ok(());
        };
        match state
            .store
            .write_generation(&run.id, &record, &champion_config.champion(&record))
            .await
            .map_err(|e| e.to_string())?
        {
            WriteOutcome::NotRunning => {
                tracing::info!(run = %run.id, generation = record.generation,
                    "run no longer running: generation dropped");
                return Ok(());
            }
            WriteOutcome::Written => announce(state, &run.id, &record),
        }
        if record.stop.is_some() {
            tracing::info!(run = %run.id, stop = ?record.stop, "run finished");
            return Ok(());
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
    let mut data = serde_json::to_value(GenerationPoint::of(record)).unwrap_or_else(|_| json!({}));
    if let Some(map) = data.as_object_mut() {
        map.insert("run_id".into(), json!(run_id));
    }
    let _ = state.events.send(RunEvent {
        run_id: run_id.to_string(),
        kind: "generation",
        data,
    });
}
