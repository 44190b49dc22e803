//! The runner: executes a run step by step, playing the games its tuner asks for
//! ([`crate::tune::Tuner::ask`]) on this process's rayon pool or on the PostgreSQL job queue,
//! as plain async code on the caller's runtime. Above the tuning engine ([`crate::tune`]),
//! below the store, which keeps what the queue needs through `BatchStore`.
//!
//! - `Executor`: a run's life, from claim through lease, steps and writes to its end; the
//!   server's run workers are its loops.
//! - `Runner`: one run's [`Driver`] and where its games go (`Games`), stepped a record at
//!   a time.
//! - `queue`: the job queue and its coordinator ([`queue::QueueRunner`]), which cuts a job
//!   list into batches, enqueues them and awaits their results.
//! - `worker`: the queue's worker, which plays batches in `kalah-tuner worker` and `serve`.
//! - `results`: what the runner keeps in the database, as traits the store implements.
//! - `ladder`: the ladder's scheduler, which enrols finished runs' champions and has rounds
//!   played between the pairings that narrow the ratings' intervals most.
//! - `pairs`: colour-swapped pairs of games between two agents (the ladder's rounds), played
//!   here or by the queue's workers.
//! - `meter`: game pools whose threads' processor time is measured, which is what a run's
//!   work is charged.
//! - `outage`: waiting out a database that does not answer, for the executor and the queue.

pub(crate) mod executor;
pub(crate) mod ladder;
pub(crate) mod meter;
pub(crate) mod outage;
pub(crate) mod pairs;
pub(crate) mod queue;
pub(crate) mod results;
pub(crate) mod worker;

use std::sync::Arc;

pub(crate) use executor::{
    ClaimedRun, Executor, RecordWrite, RunObserver, RunStore, UnreadableRun,
};
pub(crate) use meter::MeteredPool;
pub use queue::{BatchQueue, QueueError, QueueRunner, QueueStats};
pub(crate) use results::{BatchStore, SliceResult, StoreAccessError, StoreFuture, WorkerInfo};
pub use results::{ResultWrite, SliceKey};
pub(crate) use worker::{start_batch_worker, BatchEnv};

use crate::tune::{DriveError, Driver, Next, Step, StepControl};
use crate::tune::{GenerationRecord, StopReason};

/// Where a run's games are played.
#[derive(Debug)]
pub(crate) enum Games {
    /// On the runner's rayon pool, in this process.
    Here,
    /// On the job queue, by any worker process.
    Queue(Box<QueueRunner>),
}

/// What one step of a [`Runner`] made.
#[derive(Debug)]
pub(crate) enum Stepped {
    /// The step's record.
    Record(Box<GenerationRecord>),
    /// The run had already finished (a resumed run whose last record ended it).
    Finished(Option<StopReason>),
    /// The step's control was cancelled: nothing to keep.
    Cancelled,
}

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Drive(#[from] DriveError),
    #[error("playing the game batches: {0}")]
    Queue(#[from] QueueError),
    #[error("the game thread stopped: {0}")]
    Thread(String),
}

/// A run under way: its driver, the pool its tuner works on, and where its games go.
pub(crate) struct Runner {
    /// `None` only while a step has it on a game thread (or after that thread panicked).
    driver: Option<Driver>,
    pool: Arc<rayon::ThreadPool>,
    games: Games,
}

impl Runner {
    pub fn new(driver: Driver, pool: Arc<rayon::ThreadPool>, games: Games) -> Runner {
        Runner {
            driver: Some(driver),
            pool,
            games,
        }
    }

    pub fn games(&self) -> &Games {
        &self.games
    }

    pub fn games_mut(&mut self) -> &mut Games {
        &mut self.games
    }

    /// Makes the run's next record. The tuner's own work runs on the pool, off the async
    /// runtime; games on the queue are awaited here, holding no thread.
    pub async fn step(&mut self, control: &StepControl) -> Result<Stepped, RunnerError> {
        loop {
            let local = matches!(self.games, Games::Here);
            let next = self
                .on_pool(control, move |driver, control| match local {
                    // Played here, a step is the driver's own loop: one trip to the pool.
                    true => Ok(match driver.step(control, &mut [])? {
                        Step::Record(record) => Next::Record(Box::new(record.clone())),
                        Step::Cancelled => Next::Cancelled,
                        Step::Finished => Next::Finished,
                    }),
                    false => driver.next(control, &mut []),
                })
                .await?;
            match next {
                Next::Games(list) => {
                    let Games::Queue(queue) = &mut self.games else {
                        return Err(RunnerError::Thread(
                            "a step played here asked for games".into(),
                        ));
                    };
                    let Some(points) = queue.play(&list, control.cancel()).await? else {
                        return Ok(Stepped::Cancelled);
                    };
                    if let Some(driver) = &mut self.driver {
                        driver.tell(points);
                    }
                }
                // A record made as the cancel came is dropped too.
                Next::Cancelled => return Ok(Stepped::Cancelled),
                Next::Record(_) if control.cancel().is_stopped() => return Ok(Stepped::Cancelled),
                Next::Record(record) => return Ok(Stepped::Record(record)),
                Next::Finished => {
                    return Ok(Stepped::Finished(
                        self.driver.as_ref().and_then(|d| d.stop_reason()),
                    ))
                }
            }
        }
    }

    /// Runs `work` on the driver on a thread of the pool and gives the driver back.
    async fn on_pool(
        &mut self,
        control: &StepControl,
        work: impl FnOnce(&mut Driver, &StepControl) -> Result<Next, DriveError> + Send + 'static,
    ) -> Result<Next, RunnerError> {
        let mut driver = self
            .driver
            .take()
            .ok_or_else(|| RunnerError::Thread("an earlier step did not come back".into()))?;
        let (pool, control) = (self.pool.clone(), control.clone());
        let (driver, next) = tokio::task::spawn_blocking(move || {
            let next = pool.install(|| work(&mut driver, &control));
            (driver, next)
        })
        .await
        .map_err(|e| RunnerError::Thread(e.to_string()))?;
        self.driver = Some(driver);
        Ok(next?)
    }
}
