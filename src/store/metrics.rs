//! What the database says about the work of every process on it, for the server's Prometheus
//! endpoint: runs and tournaments by status, stored batch results, and each batch worker's
//! recent games. Read at each scrape, so every server on a database reports the same.

use sqlx::Row;
use time::OffsetDateTime;

use super::{rfc3339, Store, StoreError};

/// One batch worker's results written within a [`WorkSnapshot`]'s window.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct WorkerWork {
    /// The worker's process name (`worker@host:pid:...`, `serve@...`).
    pub worker: String,
    pub batches: u64,
    /// Games of those batches.
    pub games: u64,
    /// Milliseconds the worker spent playing them.
    pub play_ms: u64,
}

/// The database's counts at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct WorkSnapshot {
    /// Runs by status (only statuses some run has).
    pub runs: Vec<(String, u64)>,
    /// Tournaments by status.
    pub tournaments: Vec<(String, u64)>,
    /// Batch results stored, all runs.
    pub batch_results: u64,
    /// Per worker, the batch results written within the window.
    pub workers: Vec<WorkerWork>,
}

impl Store {
    /// Counts for the metrics endpoint; `window` is how far back a worker's batches count.
    pub(crate) async fn work_snapshot(
        &self,
        window: std::time::Duration,
    ) -> Result<WorkSnapshot, StoreError> {
        let by_status = |table: &str| {
            format!("SELECT status, COUNT(*) AS n FROM {table} GROUP BY status ORDER BY status")
        };
        let mut snapshot = WorkSnapshot::default();
        for (table, into) in [
            ("runs", &mut snapshot.runs),
            ("tournaments", &mut snapshot.tournaments),
        ] {
            let rows = sqlx::query(sqlx::AssertSqlSafe(by_status(table)))
                .fetch_all(&self.pool)
                .await?;
            for row in rows {
                into.push((
                    row.try_get("status")?,
                    row.try_get::<i64, _>("n")?.max(0) as u64,
                ));
            }
        }
        let row = sqlx::query("SELECT COUNT(*) AS n FROM batch_results")
            .fetch_one(&self.pool)
            .await?;
        snapshot.batch_results = row.try_get::<i64, _>("n")?.max(0) as u64;
        let since = rfc3339(OffsetDateTime::now_utc() - window);
        let rows = sqlx::query(
            // The casts: PostgreSQL sums BIGINTs as NUMERIC, which the `Any` driver cannot read.
            "SELECT worker, COUNT(*) AS batches, CAST(SUM(jobs) AS BIGINT) AS games, \
             CAST(SUM(play_ms) AS BIGINT) AS play_ms \
             FROM batch_results WHERE created_at >= $1 GROUP BY worker ORDER BY worker",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        for row in rows {
            snapshot.workers.push(WorkerWork {
                worker: row.try_get("worker")?,
                batches: row.try_get::<i64, _>("batches")?.max(0) as u64,
                games: row.try_get::<i64, _>("games")?.max(0) as u64,
                play_ms: row.try_get::<i64, _>("play_ms")?.max(0) as u64,
            });
        }
        Ok(snapshot)
    }
}
