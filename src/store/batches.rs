//! Results of game batches (slices of a generation's job lists) played by worker processes,
//! as the runner's job queue ([`crate::runner::queue`]) stores and reads them through
//! [`BatchStore`].

use sqlx::Row;

use super::{corrupt, now_rfc3339, RunStatus, Store, StoreError, LEASE_TTL};
use crate::runner::{BatchStore, ResultWrite, SliceKey, SliceResult, StoreFuture, WorkerInfo};

/// A batch worker as the workers table holds it, with what it played (from batch_results).
#[derive(Clone, Debug)]
pub(crate) struct StoredWorker {
    pub name: String,
    pub host: String,
    pub threads: u32,
    pub started_at: String,
    pub heartbeat_at: String,
    pub stopped_at: Option<String>,
    /// The batch it played at its last beat.
    pub batch: Option<SliceKey>,
    /// Batches it wrote results for, their jobs (games) and the milliseconds they took.
    pub batches: u64,
    pub games: u64,
    pub play_ms: u64,
}

/// Whether a worker takes batches now: it is playing one or waiting for one, or it stopped
/// (it said so), or it is lost (no heartbeat for [`LEASE_TTL`]: killed, or cut off from the
/// database).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WorkerState {
    Playing,
    Idle,
    Stopped,
    Lost,
}

impl StoredWorker {
    /// What the worker is doing at `now`, from its last heartbeat.
    pub(crate) fn state(&self, now: time::OffsetDateTime) -> WorkerState {
        if self.stopped_at.is_some() {
            return WorkerState::Stopped;
        }
        let beat = time::OffsetDateTime::parse(
            &self.heartbeat_at,
            &time::format_description::well_known::Rfc3339,
        )
        .ok();
        if beat.is_none_or(|at| now - at > LEASE_TTL) {
            WorkerState::Lost
        } else if self.batch.is_some() {
            WorkerState::Playing
        } else {
            WorkerState::Idle
        }
    }

    /// Whether the worker takes batches now: neither stopped nor lost.
    pub(crate) fn is_live(&self, now: time::OffsetDateTime) -> bool {
        matches!(self.state(now), WorkerState::Playing | WorkerState::Idle)
    }
}

impl Store {
    /// Writes the points of a slice once; see [`ResultWrite`].
    pub async fn put_slice_result(
        &self,
        key: &SliceKey,
        points: &[f64],
        worker: &str,
        play_ms: u64,
        processor_ms: u64,
    ) -> Result<ResultWrite, StoreError> {
        if points.len() as u64 != key.jobs {
            return Err(StoreError::Corrupt(format!(
                "a slice of {} jobs has {} results",
                key.jobs,
                points.len()
            )));
        }
        let text = serde_json::to_string(points).map_err(|e| corrupt("batch points", e))?;
        let inserted = sqlx::query(
            "INSERT INTO batch_results (run_id, generation, part, first_job, jobs, points, worker, \
             play_ms, created_at, processor_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (run_id, generation, part, first_job, jobs) DO NOTHING",
        )
        .bind(&key.run_id)
        .bind(key.generation as i64)
        .bind(key.part as i64)
        .bind(key.first_job as i64)
        .bind(key.jobs as i64)
        .bind(text)
        .bind(worker)
        .bind(play_ms as i64)
        .bind(now_rfc3339())
        .bind(processor_ms as i64)
        .execute(&self.pool)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(ResultWrite::Written);
        }
        let stored = self
            .slice_results(&key.run_id, key.generation, key.part)
            .await?
            .into_iter()
            .find(|r| &r.key == key)
            .map(|r| r.points)
            .ok_or_else(|| StoreError::Corrupt("a batch result vanished while read".into()))?;
        Ok(if stored == points {
            ResultWrite::Same
        } else {
            ResultWrite::Different { stored }
        })
    }

    /// The slices of one job list that have results: their keys only, which is what a
    /// coordinator polls while it waits.
    pub(crate) async fn slices_done(
        &self,
        run_id: &str,
        generation: u32,
        part: u32,
    ) -> Result<Vec<(u64, u64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT first_job, jobs FROM batch_results \
             WHERE run_id = $1 AND generation = $2 AND part = $3",
        )
        .bind(run_id)
        .bind(generation as i64)
        .bind(part as i64)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get::<i64, _>("first_job")? as u64,
                    r.try_get::<i64, _>("jobs")? as u64,
                ))
            })
            .collect()
    }

    /// Every stored slice result of one job list: its points, and the milliseconds its
    /// worker took to play it.
    pub(crate) async fn slice_results(
        &self,
        run_id: &str,
        generation: u32,
        part: u32,
    ) -> Result<Vec<SliceResult>, StoreError> {
        let rows = sqlx::query(
            "SELECT first_job, jobs, points, play_ms, processor_ms FROM batch_results \
             WHERE run_id = $1 AND generation = $2 AND part = $3",
        )
        .bind(run_id)
        .bind(generation as i64)
        .bind(part as i64)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let points: String = r.try_get("points")?;
                Ok(SliceResult {
                    key: SliceKey {
                        run_id: run_id.to_string(),
                        generation,
                        part,
                        first_job: r.try_get::<i64, _>("first_job")? as u64,
                        jobs: r.try_get::<i64, _>("jobs")? as u64,
                    },
                    points: serde_json::from_str(&points)
                        .map_err(|e| corrupt("batch points", e))?,
                    play_ms: r.try_get::<i64, _>("play_ms")?.max(0) as u64,
                    processor_ms: r
                        .try_get::<Option<i64>, _>("processor_ms")?
                        .unwrap_or(0)
                        .max(0) as u64,
                })
            })
            .collect()
    }

    /// Fails a running run whoever owns it: what a worker does on finding that a batch gave
    /// two different results. The owner sees the run stop running and drops its generation.
    pub(crate) async fn fail_running(&self, id: &str, error: &str) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query(
            "UPDATE runs SET status = 'failed', error = $2, finished_at = $3 \
             WHERE id = $1 AND status = 'running'",
        )
        .bind(id)
        .bind(error)
        .bind(now_rfc3339())
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() > 0 {
            self.runs_changed(&mut tx).await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }
}

impl Store {
    pub(crate) async fn register_worker(&self, w: &WorkerInfo) -> Result<(), StoreError> {
        let now = now_rfc3339();
        sqlx::query(
            "INSERT INTO workers (name, host, threads, started_at, heartbeat_at) \
             VALUES ($1, $2, $3, $4, $4) \
             ON CONFLICT (name) DO UPDATE SET host = $2, threads = $3, heartbeat_at = $4, \
             stopped_at = NULL, batch = NULL",
        )
        .bind(&w.name)
        .bind(&w.host)
        .bind(w.threads as i64)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(crate) async fn worker_beat(
        &self,
        name: &str,
        batch: Option<&SliceKey>,
    ) -> Result<(), StoreError> {
        let batch = batch
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| corrupt("worker batch", e))?;
        sqlx::query("UPDATE workers SET heartbeat_at = $2, batch = $3 WHERE name = $1")
            .bind(name)
            .bind(now_rfc3339())
            .bind(batch)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub(crate) async fn worker_stopped(&self, name: &str) -> Result<(), StoreError> {
        let now = now_rfc3339();
        sqlx::query(
            "UPDATE workers SET heartbeat_at = $2, stopped_at = $2, batch = NULL WHERE name = $1",
        )
        .bind(name)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The `limit` workers that beat last, newest beat first, each with the batches it
    /// wrote results for.
    pub(crate) async fn list_workers(&self, limit: u32) -> Result<Vec<StoredWorker>, StoreError> {
        // The sums are cast: PostgreSQL sums BIGINTs as NUMERIC.
        let rows = sqlx::query(
            "SELECT w.name, w.host, w.threads, w.started_at, w.heartbeat_at, w.stopped_at, \
             w.batch, COALESCE(r.batches, 0) AS batches, COALESCE(r.games, 0) AS games, \
             COALESCE(r.play_ms, 0) AS play_ms FROM workers w LEFT JOIN ( \
               SELECT worker, COUNT(*) AS batches, CAST(SUM(jobs) AS BIGINT) AS games, \
               CAST(SUM(play_ms) AS BIGINT) AS play_ms FROM batch_results GROUP BY worker \
             ) r ON r.worker = w.name \
             ORDER BY w.heartbeat_at DESC, w.name LIMIT $1",
        )
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let batch: Option<String> = r.try_get("batch")?;
                Ok(StoredWorker {
                    name: r.try_get("name")?,
                    host: r.try_get("host")?,
                    threads: r.try_get::<i64, _>("threads")?.max(0) as u32,
                    started_at: r.try_get("started_at")?,
                    heartbeat_at: r.try_get("heartbeat_at")?,
                    stopped_at: r.try_get("stopped_at")?,
                    batch: batch
                        .map(|b| serde_json::from_str(&b))
                        .transpose()
                        .map_err(|e| corrupt("worker batch", e))?,
                    batches: r.try_get::<i64, _>("batches")?.max(0) as u64,
                    games: r.try_get::<i64, _>("games")?.max(0) as u64,
                    play_ms: r.try_get::<i64, _>("play_ms")?.max(0) as u64,
                })
            })
            .collect()
    }
}

impl BatchStore for Store {
    fn running_claim<'a>(&'a self, run_id: &'a str) -> StoreFuture<'a, Option<i64>> {
        Box::pin(async move {
            Ok(match self.run_claim(run_id).await? {
                Some((RunStatus::Running, claim)) => Some(claim),
                _ => None,
            })
        })
    }

    fn fail_running<'a>(&'a self, run_id: &'a str, error: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            Store::fail_running(self, run_id, error).await?;
            Ok(())
        })
    }

    fn put_slice_result<'a>(
        &'a self,
        key: &'a SliceKey,
        points: &'a [f64],
        worker: &'a str,
        play_ms: u64,
        processor_ms: u64,
    ) -> StoreFuture<'a, ResultWrite> {
        Box::pin(async move {
            Ok(Store::put_slice_result(self, key, points, worker, play_ms, processor_ms).await?)
        })
    }

    fn slices_done<'a>(
        &'a self,
        run_id: &'a str,
        generation: u32,
        part: u32,
    ) -> StoreFuture<'a, Vec<(u64, u64)>> {
        Box::pin(async move { Ok(Store::slices_done(self, run_id, generation, part).await?) })
    }

    fn slice_results<'a>(
        &'a self,
        run_id: &'a str,
        generation: u32,
        part: u32,
    ) -> StoreFuture<'a, Vec<SliceResult>> {
        Box::pin(async move { Ok(Store::slice_results(self, run_id, generation, part).await?) })
    }

    fn register_worker<'a>(&'a self, worker: &'a WorkerInfo) -> StoreFuture<'a, ()> {
        Box::pin(async move { Ok(Store::register_worker(self, worker).await?) })
    }

    fn worker_beat<'a>(
        &'a self,
        name: &'a str,
        batch: Option<&'a SliceKey>,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move { Ok(Store::worker_beat(self, name, batch).await?) })
    }

    fn worker_stopped<'a>(&'a self, name: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move { Ok(Store::worker_stopped(self, name).await?) })
    }
}
