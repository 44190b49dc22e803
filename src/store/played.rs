//! Rows that one server plays and every server reads (tournaments, `migrations/0004` and
//! `0008`; SPRT tests, `migrations/0009`): the process that plays one writes its progress at
//! each heartbeat, any server lists, shows and cancels it (the owner reads the cancel at its
//! next beat), and one whose owner stopped beating is marked failed.

use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use time::OffsetDateTime;

use super::{corrupt, now_rfc3339, rfc3339, Store, StoreError, LEASE_TTL};

/// What kind of played row: the two differ in their first status (a tournament waits for
/// cores, an SPRT test is given them at once), in whether the end time is a column, and in
/// what a cancelled row keeps (a tournament's table shows every game played, an SPRT test's
/// report the pairs it had when it was stopped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Played {
    Tournament,
    SprtTest,
}

impl Played {
    fn table(self) -> &'static str {
        match self {
            Played::Tournament => "tournaments",
            Played::SprtTest => "sprt_tests",
        }
    }

    pub(crate) fn noun(self) -> &'static str {
        match self {
            Played::Tournament => "tournament",
            Played::SprtTest => "SPRT test",
        }
    }

    /// The statuses of a row still being played, as SQL.
    fn live(self) -> &'static str {
        match self {
            Played::Tournament => "('queued', 'running')",
            Played::SprtTest => "('running')",
        }
    }

    fn first_status(self) -> &'static str {
        match self {
            Played::Tournament => "queued",
            Played::SprtTest => "running",
        }
    }

    fn has_finished_at(self) -> bool {
        self == Played::SprtTest
    }

    fn columns(self) -> &'static str {
        match self {
            Played::Tournament => {
                "id, created_at, status, error, progress, heartbeat_at, state, created_by"
            }
            Played::SprtTest => {
                "id, created_at, finished_at, status, error, progress, heartbeat_at, state, \
                 created_by"
            }
        }
    }

    fn text(self, state: &serde_json::Value) -> Result<String, StoreError> {
        serde_json::to_string(state).map_err(|e| corrupt(self.noun(), e))
    }

    /// `, finished_at = $n` where the table has the column.
    fn finished_at_set(self, param: u8) -> String {
        if self.has_finished_at() {
            format!(", finished_at = ${param}")
        } else {
            String::new()
        }
    }
}

/// A played row as stored: its state document (what the API shows) with the columns that
/// change while it plays or once it ends, whichever server ended it.
#[derive(Clone, Debug)]
pub(crate) struct PlayedRow {
    pub id: String,
    pub created_at: String,
    /// When it ended; always `None` for a tournament (no such column).
    pub finished_at: Option<String>,
    pub status: String,
    pub error: Option<String>,
    /// Games (or pairs) played over the most planned, 0 to 1.
    pub progress: f64,
    /// The playing server's last heartbeat (`None` when never written).
    pub heartbeat_at: Option<String>,
    pub state: serde_json::Value,
    /// The user who started it, on a server with users: only they or an admin may cancel it.
    pub created_by: Option<String>,
}

impl PlayedRow {
    /// Still `queued` or `running`, but its server has not beaten for [`LEASE_TTL`]: it died,
    /// and the row will never end by itself.
    pub(crate) fn abandoned(&self) -> bool {
        let stale_before = rfc3339(OffsetDateTime::now_utc() - LEASE_TTL);
        matches!(self.status.as_str(), "queued" | "running")
            && self
                .heartbeat_at
                .as_deref()
                .is_none_or(|beat| beat < stale_before.as_str())
    }
}

/// What the process playing a row learns when it writes its progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlayLease {
    /// Still going and this process's: play on.
    Playing,
    /// Cancelled (through any server), failed as abandoned, or gone: stop playing.
    Stop,
}

impl Store {
    /// Stores a new row played by `owner`: a tournament queued until it has cores
    /// ([`Store::start_tournament`]), an SPRT test running.
    pub(crate) async fn create_played(
        &self,
        kind: Played,
        t: &PlayedRow,
        owner: &str,
    ) -> Result<(), StoreError> {
        let state = kind.text(&t.state)?;
        let sql = format!(
            "INSERT INTO {} (id, created_at, status, state, progress, owner, heartbeat_at, \
             created_by) VALUES ($1, $2, '{}', $3, 0, $4, $5, $6)",
            kind.table(),
            kind.first_status()
        );
        sqlx::query(AssertSqlSafe(sql))
            .bind(&t.id)
            .bind(&t.created_at)
            .bind(state)
            .bind(owner)
            .bind(now_rfc3339())
            .bind(&t.created_by)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The owner's heartbeat with its progress (and, when given, its state as it stands);
    /// tells it whether to play on. One conditional UPDATE: a cancel that lands first makes
    /// it match nothing, so the state a cancel left is the one every server shows.
    pub(crate) async fn played_progress(
        &self,
        kind: Played,
        id: &str,
        owner: &str,
        progress: f64,
        state: Option<&serde_json::Value>,
    ) -> Result<PlayLease, StoreError> {
        let state = state.map(|s| kind.text(s)).transpose()?;
        let sql = format!(
            "UPDATE {} SET progress = $3, heartbeat_at = $4{} \
             WHERE id = $1 AND owner = $2 AND status IN {} RETURNING cancel_requested",
            kind.table(),
            if state.is_some() { ", state = $5" } else { "" },
            kind.live()
        );
        let mut query = sqlx::query(AssertSqlSafe(sql))
            .bind(id)
            .bind(owner)
            .bind(progress)
            .bind(now_rfc3339());
        if let Some(state) = state {
            query = query.bind(state);
        }
        let row = query.fetch_optional(&self.pool).await?;
        // Play on only when it matched a row no cancel has marked.
        Ok(match row {
            Some(r) if r.try_get::<i64, _>("cancel_requested")? == 0 => PlayLease::Playing,
            _ => PlayLease::Stop,
        })
    }

    /// A queued tournament of `owner`'s has its cores and plays: `running` from now on.
    /// `Ok(false)` when it is no longer queued (cancelled meanwhile).
    pub(crate) async fn start_tournament(&self, id: &str, owner: &str) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE tournaments SET status = 'running', heartbeat_at = $3 \
             WHERE id = $1 AND owner = $2 AND status = 'queued'",
        )
        .bind(id)
        .bind(owner)
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The owner's last write: the final state, status and error. A row cancelled or given
    /// up meanwhile keeps its status and error; a tournament still takes the final state (its
    /// table shows what was played), an SPRT test keeps the one it had when it was stopped,
    /// on every server, and no more later.
    pub(crate) async fn end_played(
        &self,
        kind: Played,
        t: &PlayedRow,
        owner: &str,
    ) -> Result<(), StoreError> {
        let (table, live, finished) = (kind.table(), kind.live(), kind.finished_at_set(6));
        let state = kind.text(&t.state)?;
        let sql = match kind {
            Played::Tournament => format!(
                "UPDATE {table} SET \
                 error = CASE WHEN status IN {live} THEN $3 ELSE error END, \
                 status = CASE WHEN status IN {live} THEN $2 ELSE status END, \
                 state = $4, progress = $5, heartbeat_at = $6{finished} \
                 WHERE id = $1 AND owner = $7"
            ),
            Played::SprtTest => format!(
                "UPDATE {table} SET status = $2, error = $3, state = $4, progress = $5, \
                 heartbeat_at = $6{finished} \
                 WHERE id = $1 AND owner = $7 AND status IN {live}"
            ),
        };
        sqlx::query(AssertSqlSafe(sql))
            .bind(&t.id)
            .bind(&t.status)
            .bind(&t.error)
            .bind(state)
            .bind(t.progress)
            .bind(now_rfc3339())
            .bind(owner)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Cancels a row still being played, whichever process plays it: it reads the flag at its
    /// next heartbeat. `Ok(true)` when it was still being played.
    pub(crate) async fn cancel_played(&self, kind: Played, id: &str) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE {} SET status = 'cancelled', cancel_requested = 1{} \
             WHERE id = $1 AND status IN {}",
            kind.table(),
            kind.finished_at_set(2),
            kind.live()
        );
        let mut query = sqlx::query(AssertSqlSafe(sql)).bind(id);
        if kind.has_finished_at() {
            query = query.bind(now_rfc3339());
        }
        Ok(query.execute(&self.pool).await?.rows_affected() == 1)
    }

    pub(crate) async fn played(
        &self,
        kind: Played,
        id: &str,
    ) -> Result<Option<PlayedRow>, StoreError> {
        let sql = format!(
            "SELECT {} FROM {} WHERE id = $1",
            kind.columns(),
            kind.table()
        );
        let row = sqlx::query(AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| from_row(kind, &r)).transpose()
    }

    /// The newest `limit` rows of a kind, newest first.
    pub(crate) async fn list_played(
        &self,
        kind: Played,
        limit: u32,
    ) -> Result<Vec<PlayedRow>, StoreError> {
        let sql = format!(
            "SELECT {} FROM {} ORDER BY created_at DESC, id DESC LIMIT $1",
            kind.columns(),
            kind.table()
        );
        let rows = sqlx::query(AssertSqlSafe(sql))
            .bind(limit as i64)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| from_row(kind, r)).collect()
    }

    /// Rows whose owner stopped beating for [`LEASE_TTL`] cannot finish (they were played in
    /// its memory; a new one with the same seed replays them): they are marked failed, saying
    /// so. A live owner's are never touched, so a server that starts beside another leaves
    /// its rows alone.
    pub(crate) async fn fail_abandoned(&self, kind: Played) -> Result<u64, StoreError> {
        let now = OffsetDateTime::now_utc();
        let sql = format!(
            "UPDATE {} SET status = 'failed', error = $2{} \
             WHERE status IN {} AND (heartbeat_at IS NULL OR heartbeat_at < $1)",
            kind.table(),
            kind.finished_at_set(3),
            kind.live()
        );
        let error = format!(
            "the server playing this {} stopped before it finished; start it again",
            kind.noun()
        );
        let mut query = sqlx::query(AssertSqlSafe(sql))
            .bind(rfc3339(now - LEASE_TTL))
            .bind(error);
        if kind.has_finished_at() {
            query = query.bind(rfc3339(now));
        }
        Ok(query.execute(&self.pool).await?.rows_affected())
    }
}

fn from_row(kind: Played, r: &AnyRow) -> Result<PlayedRow, StoreError> {
    let state: String = r.try_get("state")?;
    Ok(PlayedRow {
        id: r.try_get("id")?,
        created_at: r.try_get("created_at")?,
        finished_at: if kind.has_finished_at() {
            r.try_get("finished_at")?
        } else {
            None
        },
        status: r.try_get("status")?,
        error: r.try_get("error")?,
        progress: r.try_get("progress")?,
        heartbeat_at: r.try_get("heartbeat_at")?,
        state: serde_json::from_str(&state).map_err(|e| corrupt(kind.noun(), e))?,
        created_by: r.try_get("created_by")?,
    })
}
