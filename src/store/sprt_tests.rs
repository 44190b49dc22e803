//! SPRT tests as rows (`migrations/0009_sprt_tests.sql`): the process that plays one writes its
//! report and LLR path at each heartbeat, and every server reads, lists and cancels it here,
//! as with tournaments.

use sqlx::any::AnyRow;
use sqlx::Row;
use time::OffsetDateTime;

use super::{
    beat_lapsed, corrupt, now_rfc3339, rfc3339, Store, StoreError, TournamentLease, LEASE_TTL,
};

/// An SPRT test as stored: its state document (what the API shows) with the columns that
/// change while it plays or once it ends, whichever server ended it.
#[derive(Clone, Debug)]
pub struct StoredSprtTest {
    pub id: String,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub status: String,
    pub error: Option<String>,
    /// Pairs played over the most pairs, 0 to 1.
    pub progress: f64,
    /// The playing server's last heartbeat (`None` when never written).
    pub heartbeat_at: Option<String>,
    pub state: serde_json::Value,
}

impl StoredSprtTest {
    /// Still `running`, but its server has not beaten for [`LEASE_TTL`]: it died, and the
    /// test will never end by itself.
    pub fn abandoned(&self) -> bool {
        self.status == "running" && beat_lapsed(self.heartbeat_at.as_deref())
    }
}

const COLUMNS: &str = "id, created_at, finished_at, status, error, progress, heartbeat_at, state";

/// What a test whose server died says.
const ABANDONED: &str =
    "the server playing this SPRT test stopped before it finished; start it again";

impl Store {
    /// Stores a new running SPRT test, played by `owner`.
    pub async fn create_sprt_test(
        &self,
        t: &StoredSprtTest,
        owner: &str,
    ) -> Result<(), StoreError> {
        let state = serde_json::to_string(&t.state).map_err(|e| corrupt("SPRT test", e))?;
        sqlx::query(
            "INSERT INTO sprt_tests (id, created_at, status, state, progress, owner, heartbeat_at) \
             VALUES ($1, $2, 'running', $3, 0, $4, $5)",
        )
        .bind(&t.id)
        .bind(&t.created_at)
        .bind(state)
        .bind(owner)
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The owner's heartbeat with the test as it stands; tells it whether to play on. One
    /// conditional UPDATE: a cancel that lands first makes it match nothing, so the state a
    /// cancel left is the one every server shows.
    pub async fn sprt_test_progress(
        &self,
        id: &str,
        owner: &str,
        progress: f64,
        state: &serde_json::Value,
    ) -> Result<TournamentLease, StoreError> {
        let state = serde_json::to_string(state).map_err(|e| corrupt("SPRT test", e))?;
        let row = sqlx::query(
            "UPDATE sprt_tests SET progress = $3, state = $4, heartbeat_at = $5 \
             WHERE id = $1 AND owner = $2 AND status = 'running' RETURNING cancel_requested",
        )
        .bind(id)
        .bind(owner)
        .bind(progress)
        .bind(state)
        .bind(now_rfc3339())
        .fetch_optional(&self.pool)
        .await?;
        TournamentLease::of_beat(row)
    }

    /// The owner's last write: the final state, status and error, unless the test was
    /// cancelled or given up meanwhile (then the row stays as that left it: a stopped test
    /// shows the pairs it had when it was stopped, on every server, and no more later).
    pub async fn end_sprt_test(&self, t: &StoredSprtTest, owner: &str) -> Result<(), StoreError> {
        let state = serde_json::to_string(&t.state).map_err(|e| corrupt("SPRT test", e))?;
        sqlx::query(
            "UPDATE sprt_tests SET status = $2, error = $3, state = $4, progress = $5, \
             finished_at = $6, heartbeat_at = $6 \
             WHERE id = $1 AND owner = $7 AND status = 'running'",
        )
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

    /// Cancels a running SPRT test, whichever process plays it: it reads the flag at its
    /// next heartbeat. `Ok(true)` when it was running.
    pub async fn cancel_sprt_test(&self, id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE sprt_tests SET status = 'cancelled', cancel_requested = 1, finished_at = $2 \
             WHERE id = $1 AND status = 'running'",
        )
        .bind(id)
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn sprt_test(&self, id: &str) -> Result<Option<StoredSprtTest>, StoreError> {
        let row = self.row_by_id("sprt_tests", COLUMNS, id).await?;
        row.map(|r| from_row(&r)).transpose()
    }

    /// The newest `limit` SPRT tests, newest first.
    pub async fn list_sprt_tests(&self, limit: u32) -> Result<Vec<StoredSprtTest>, StoreError> {
        let rows = self.newest_rows("sprt_tests", COLUMNS, limit).await?;
        rows.iter().map(from_row).collect()
    }

    /// SPRT tests whose owner stopped beating for [`LEASE_TTL`] cannot finish (their games
    /// were played in its memory; a new test with the same seed replays them): they are
    /// marked failed, saying so. A live owner's are never touched.
    pub async fn fail_abandoned_sprt_tests(&self) -> Result<u64, StoreError> {
        let now = OffsetDateTime::now_utc();
        let done = sqlx::query(
            "UPDATE sprt_tests SET status = 'failed', error = $2, finished_at = $3 \
             WHERE status = 'running' AND (heartbeat_at IS NULL OR heartbeat_at < $1)",
        )
        .bind(rfc3339(now - LEASE_TTL))
        .bind(ABANDONED)
        .bind(rfc3339(now))
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }
}

fn from_row(r: &AnyRow) -> Result<StoredSprtTest, StoreError> {
    let state: String = r.try_get("state")?;
    Ok(StoredSprtTest {
        id: r.try_get("id")?,
        created_at: r.try_get("created_at")?,
        finished_at: r.try_get("finished_at")?,
        status: r.try_get("status")?,
        error: r.try_get("error")?,
        progress: r.try_get("progress")?,
        heartbeat_at: r.try_get("heartbeat_at")?,
        state: serde_json::from_str(&state).map_err(|e| corrupt("SPRT test", e))?,
    })
}
