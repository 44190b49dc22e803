//! The ladder's rows (`migrations/0012`): ladders, their players with their latest fitted
//! ratings, the trials played between them, each player's rating over time, and the lease
//! that lets one server at a time schedule the games.
//!
//! Consistency between servers: entries are unique per ladder (`run:ID`, `anchor:SPEC`), so
//! two servers enrolling the same champion make one player; trials and ratings are written
//! only by the lease's holder, each batch in one transaction, so every server reads a fit and
//! the trials it came from together.

use std::time::Duration;

use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use time::OffsetDateTime;

use super::{now_rfc3339, rfc3339, run_from_row, RunRow, Store, StoreError, RUN_COLUMNS};
use crate::runner::ladder::{FinishedRun, LadderStore};
use crate::runner::ladder::{LadderFit, LadderPlayerRow, LadderRow, LadderTrial};
use crate::runner::StoreFuture;

/// A point of a player's rating over time.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LadderRatingPoint {
    pub(crate) player: String,
    pub(crate) at: String,
    pub(crate) elo: f64,
    pub(crate) margin: f64,
    pub(crate) trials: u64,
}

const PLAYER_COLUMNS: &str = "id, ladder, entry, name, spec, run_id, owner, anchor, created_at, \
     withdrawn_at, elo, margin, trials, points";

fn ladder_from_row(row: &AnyRow) -> Result<LadderRow, StoreError> {
    Ok(LadderRow {
        id: row.try_get("id")?,
        pits: row.try_get::<i64, _>("pits")? as usize,
        seeds: row.try_get::<i64, _>("seeds")? as u32,
        rules: row.try_get("rules")?,
        pie: row.try_get::<i64, _>("pie")? != 0,
        depth: row.try_get::<i64, _>("depth")? as u32,
        created_at: row.try_get("created_at")?,
    })
}

fn player_from_row(row: &AnyRow) -> Result<LadderPlayerRow, StoreError> {
    Ok(LadderPlayerRow {
        id: row.try_get("id")?,
        ladder: row.try_get("ladder")?,
        entry: row.try_get("entry")?,
        name: row.try_get("name")?,
        spec: row.try_get("spec")?,
        run_id: row.try_get("run_id")?,
        owner: row.try_get("owner")?,
        anchor: row.try_get::<i64, _>("anchor")? != 0,
        created_at: row.try_get("created_at")?,
        withdrawn_at: row.try_get("withdrawn_at")?,
        elo: row.try_get("elo")?,
        margin: row.try_get("margin")?,
        trials: row.try_get::<i64, _>("trials")?.max(0) as u64,
        points: row.try_get("points")?,
    })
}

impl Store {
    /// Finished runs whose champion is on no ladder yet, the longest finished first.
    pub(crate) async fn runs_off_the_ladder(&self, limit: u32) -> Result<Vec<RunRow>, StoreError> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE status = 'finished' AND NOT EXISTS \
             (SELECT 1 FROM ladder_players p WHERE p.run_id = runs.id) \
             ORDER BY finished_at, id LIMIT $1"
        )))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(run_from_row).collect()
    }

    /// Creates the ladder `ladder.id` unless it exists.
    pub(crate) async fn ensure_ladder(&self, ladder: &LadderRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO ladders (id, pits, seeds, rules, pie, depth, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&ladder.id)
        .bind(ladder.pits as i64)
        .bind(i64::from(ladder.seeds))
        .bind(&ladder.rules)
        .bind(i64::from(ladder.pie))
        .bind(i64::from(ladder.depth))
        .bind(&ladder.created_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(crate) async fn ladders(&self) -> Result<Vec<LadderRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, pits, seeds, rules, pie, depth, created_at FROM ladders ORDER BY created_at, id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(ladder_from_row).collect()
    }

    /// Enters a player unless its entry is on the ladder already; true when it was added.
    pub(crate) async fn enter_ladder(&self, player: &LadderPlayerRow) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO ladder_players (id, ladder, entry, name, spec, run_id, owner, anchor, \
             created_at, withdrawn_at, trials, points) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, 0) \
             ON CONFLICT (ladder, entry) DO NOTHING",
        )
        .bind(&player.id)
        .bind(&player.ladder)
        .bind(&player.entry)
        .bind(&player.name)
        .bind(&player.spec)
        .bind(&player.run_id)
        .bind(&player.owner)
        .bind(i64::from(player.anchor))
        .bind(&player.created_at)
        .bind(&player.withdrawn_at)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// A ladder's players, withdrawn ones included, in the order they entered.
    pub(crate) async fn ladder_players(
        &self,
        ladder: &str,
    ) -> Result<Vec<LadderPlayerRow>, StoreError> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {PLAYER_COLUMNS} FROM ladder_players WHERE ladder = $1 ORDER BY created_at, id"
        )))
        .bind(ladder)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(player_from_row).collect()
    }

    pub(crate) async fn ladder_player(
        &self,
        id: &str,
    ) -> Result<Option<LadderPlayerRow>, StoreError> {
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {PLAYER_COLUMNS} FROM ladder_players WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(player_from_row).transpose()
    }

    /// The ladder players of run `run_id` (one per ladder it entered).
    pub(crate) async fn ladder_players_of_run(
        &self,
        run_id: &str,
    ) -> Result<Vec<LadderPlayerRow>, StoreError> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {PLAYER_COLUMNS} FROM ladder_players WHERE run_id = $1 ORDER BY created_at"
        )))
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(player_from_row).collect()
    }

    /// Withdraws a player: it plays no more games, and the ladder shows it as withdrawn.
    /// False when it was withdrawn already or does not exist.
    pub(crate) async fn withdraw_ladder_player(&self, id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE ladder_players SET withdrawn_at = $2 WHERE id = $1 AND withdrawn_at IS NULL",
        )
        .bind(id)
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub(crate) async fn ladder_trials(&self, ladder: &str) -> Result<Vec<LadderTrial>, StoreError> {
        let rows = sqlx::query(
            "SELECT a, b, a_score FROM ladder_trials WHERE ladder = $1 ORDER BY played_at, id",
        )
        .bind(ladder)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(LadderTrial {
                    a: r.try_get("a")?,
                    b: r.try_get("b")?,
                    a_score: r.try_get("a_score")?,
                })
            })
            .collect()
    }

    /// Writes a batch of trials and the fit made with them in one transaction, and a point of
    /// every player's rating over time when `snapshot`.
    pub(crate) async fn record_ladder_batch(
        &self,
        ladder: &str,
        trials: &[LadderTrial],
        fits: &[LadderFit],
        snapshot: bool,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let at = now_rfc3339();
        for t in trials {
            sqlx::query(
                "INSERT INTO ladder_trials (id, ladder, a, b, a_score, played_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(uuid::Uuid::now_v7().to_string())
            .bind(ladder)
            .bind(&t.a)
            .bind(&t.b)
            .bind(t.a_score)
            .bind(&at)
            .execute(&mut *tx)
            .await?;
        }
        for f in fits {
            sqlx::query(
                "UPDATE ladder_players SET elo = $2, margin = $3, trials = $4, points = $5 \
                 WHERE id = $1",
            )
            .bind(&f.player)
            .bind(f.elo)
            .bind(f.margin)
            .bind(f.trials as i64)
            .bind(f.points)
            .execute(&mut *tx)
            .await?;
            if snapshot {
                sqlx::query(
                    "INSERT INTO ladder_ratings (ladder, player, at, elo, margin, trials) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(ladder)
                .bind(&f.player)
                .bind(&at)
                .bind(f.elo)
                .bind(f.margin)
                .bind(f.trials as i64)
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Every player's rating over time on a ladder, oldest first.
    pub(crate) async fn ladder_history(
        &self,
        ladder: &str,
    ) -> Result<Vec<LadderRatingPoint>, StoreError> {
        let rows = sqlx::query(
            "SELECT player, at, elo, margin, trials FROM ladder_ratings WHERE ladder = $1 \
             ORDER BY at, player",
        )
        .bind(ladder)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(LadderRatingPoint {
                    player: r.try_get("player")?,
                    at: r.try_get("at")?,
                    elo: r.try_get("elo")?,
                    margin: r.try_get("margin")?,
                    trials: r.try_get::<i64, _>("trials")?.max(0) as u64,
                })
            })
            .collect()
    }

    /// Takes or renews the ladder's scheduling lease for `owner` for `ttl`: true while
    /// `owner` holds it. A single conditional upsert, so two servers never both hold it.
    pub(crate) async fn take_ladder_lease(
        &self,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let now = OffsetDateTime::now_utc();
        let done = sqlx::query(
            "INSERT INTO ladder_lease (name, owner, expires_at) VALUES ('scheduler', $1, $2) \
             ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at \
             WHERE ladder_lease.owner = excluded.owner OR ladder_lease.expires_at < $3",
        )
        .bind(owner)
        .bind(rfc3339(now + ttl))
        .bind(rfc3339(now))
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Gives the lease back, if `owner` holds it, so that another server takes over at once.
    pub(crate) async fn release_ladder_lease(&self, owner: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM ladder_lease WHERE name = 'scheduler' AND owner = $1")
            .bind(owner)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

/// The scheduler's side ([`crate::runner::ladder`]), over the methods above.
impl LadderStore for Store {
    fn take_ladder_lease<'a>(&'a self, owner: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move { Ok(Store::take_ladder_lease(self, owner, ttl).await?) })
    }

    fn release_ladder_lease<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move { Ok(Store::release_ladder_lease(self, owner).await?) })
    }

    fn runs_off_the_ladder(&self, limit: u32) -> StoreFuture<'_, Vec<FinishedRun>> {
        Box::pin(async move {
            let mut runs = Vec::new();
            for run in Store::runs_off_the_ladder(self, limit).await? {
                let last = self.last_record(&run.id).await?;
                let config = run.config().cloned();
                runs.push(FinishedRun {
                    id: run.id,
                    name: run.name,
                    created_by: run.created_by,
                    config,
                    last,
                });
            }
            Ok(runs)
        })
    }

    fn ensure_ladder<'a>(&'a self, ladder: &'a LadderRow) -> StoreFuture<'a, ()> {
        Box::pin(async move { Ok(Store::ensure_ladder(self, ladder).await?) })
    }

    fn enter_ladder<'a>(&'a self, player: &'a LadderPlayerRow) -> StoreFuture<'a, bool> {
        Box::pin(async move { Ok(Store::enter_ladder(self, player).await?) })
    }

    fn ladders(&self) -> StoreFuture<'_, Vec<LadderRow>> {
        Box::pin(async move { Ok(Store::ladders(self).await?) })
    }

    fn ladder_players<'a>(&'a self, ladder: &'a str) -> StoreFuture<'a, Vec<LadderPlayerRow>> {
        Box::pin(async move { Ok(Store::ladder_players(self, ladder).await?) })
    }

    fn ladder_trials<'a>(&'a self, ladder: &'a str) -> StoreFuture<'a, Vec<LadderTrial>> {
        Box::pin(async move { Ok(Store::ladder_trials(self, ladder).await?) })
    }

    fn record_ladder_batch<'a>(
        &'a self,
        ladder: &'a str,
        trials: &'a [LadderTrial],
        fits: &'a [LadderFit],
        snapshot: bool,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            Ok(Store::record_ladder_batch(self, ladder, trials, fits, snapshot).await?)
        })
    }

    fn timestamp(&self) -> String {
        now_rfc3339()
    }

    fn live_worker_threads(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let now = OffsetDateTime::now_utc();
            Ok(self
                .list_workers(100)
                .await?
                .iter()
                .filter(|w| w.is_live(now))
                .map(|w| u64::from(w.threads))
                .sum())
        })
    }
}
