//! Colour-swapped pairs of games between two agents, played here or by the queue's workers:
//! the ladder's rounds. A round's result is one score per pair (the first agent's points over
//! its two games, halved), written like a run's batch under a [`SliceKey`] that names the
//! round, so that a second worker or a second asker finds it played once.

use std::time::{Duration, Instant};

use graphile_worker::{IntoTaskHandlerResult, JobSpec, TaskHandler, WorkerContext};
use serde::{Deserialize, Serialize};

use super::meter::Mark;
use super::queue::{from_queue, BatchQueue, Outage, QueueError, RESULT_POLL};
use super::results::{BatchStore, ResultWrite, SliceKey, SliceResult};
use super::worker::BatchEnv;
use crate::agents::AgentSpec;
use crate::matches::{play_match_within, MatchError, Setup};
use crate::search::Budget;

/// Queue priority of a round: after every run's batches (which have 0; lower goes first), so
/// that the ladder only takes workers the runs leave idle.
const ROUND_PRIORITY: i16 = 100;

/// A round to play: `pairs` colour-swapped pairs of `a` against `b` under `setup`, its result
/// written under `key` (whose `jobs` is `pairs`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PlayPairs {
    pub key: SliceKey,
    pub a: AgentSpec,
    pub b: AgentSpec,
    pub setup: Setup,
    pub pairs: u32,
}

/// `pairs` colour-swapped pairs of `a` against `b` on the current rayon pool: `a`'s score in
/// each pair, 0 to 1.
pub(crate) fn play_pairs(
    a: &AgentSpec,
    b: &AgentSpec,
    setup: &Setup,
    pairs: u32,
) -> Result<Vec<f64>, MatchError> {
    let report = play_match_within(a, b, 2 * pairs, setup, true, true, &Budget::unlimited())?;
    let mut scores = vec![0.0; pairs as usize];
    for game in &report.game_list {
        if let Some(points) = scores.get_mut(game.pair as usize) {
            *points += game.a_points;
        }
    }
    Ok(scores.into_iter().map(|points| points / 2.0).collect())
}

impl TaskHandler for PlayPairs {
    const IDENTIFIER: &'static str = "kalah_tuner_play_pairs";

    async fn run(self, ctx: WorkerContext) -> impl IntoTaskHandlerResult {
        let Some(env) = ctx.get_ext::<BatchEnv>().cloned() else {
            return Err("the worker has no batch environment".to_string());
        };
        let key = self.key.clone();
        let (pool, started) = (env.pool.clone(), Instant::now());
        let played = tokio::task::spawn_blocking(move || {
            let mut mark = Mark::now(&pool);
            let scores = pool
                .pool()
                .install(|| play_pairs(&self.a, &self.b, &self.setup, self.pairs));
            (scores, mark.lap(&pool))
        })
        .await;
        let (scores, processor) = match played {
            Ok((Ok(scores), processor)) => (scores, processor),
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
                started.elapsed().as_millis() as u64,
                processor.as_millis() as u64,
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
                Err(e) => outage.wait_out(&round.key.run_id, from_queue(e)).await?,
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
) -> Result<Option<SliceResult>, super::StoreAccessError> {
    let results = store
        .slice_results(&key.run_id, key.generation, key.part)
        .await?;
    Ok(results
        .into_iter()
        .find(|r| &r.key == key && r.points.len() as u64 == key.jobs))
}
