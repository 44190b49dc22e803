//! Storage of runs and their generations in SQLite or PostgreSQL. Knows the GA's record types
//! (it stores them) and nothing of HTTP.
//!
//! One code path serves both databases through sqlx's `Any` driver with one portable
//! migrations folder (`migrations/`): the schema only needs TEXT, BIGINT and DOUBLE PRECISION,
//! and every statement uses `$n` placeholders, which SQLite accepts too. Typed pools would
//! have doubled every query for no gain here.
//!
//! Status changes are single conditional `UPDATE`s (`... WHERE status IN (...)`), so two
//! callers racing on one run never both succeed, whatever the backend.

mod batches;
mod ladder;
pub(crate) mod metrics;
mod played;
mod run_life;
mod users;

pub(crate) use batches::{StoredWorker, WorkerState};
pub(crate) use ladder::LadderRatingPoint;
pub(crate) use played::Played;
pub(crate) use played::{PlayLease, PlayedRow};
pub(crate) use users::{AddUserError, User};

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};
use time::OffsetDateTime;

use crate::matches::ScoreEstimate;
use crate::runner::{RecordWrite, UnreadableRun};
use crate::tune::TunerConfig;
use crate::tune::{CurvePoint, GenerationRecord, HallOfFame, StopReason};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Which database a [`Store`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// A run's life: queued -> running -> finished | cancelled | failed; cancelled and failed runs
/// can be queued again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Queued,
    Running,
    Finished,
    Cancelled,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Failed => "failed",
        }
    }
}

impl FromStr for RunStatus {
    type Err = StoreError;
    fn from_str(s: &str) -> Result<Self, StoreError> {
        Ok(match s {
            "queued" => RunStatus::Queued,
            "running" => RunStatus::Running,
            "finished" => RunStatus::Finished,
            "cancelled" => RunStatus::Cancelled,
            "failed" => RunStatus::Failed,
            other => return Err(StoreError::Corrupt(format!("unknown run status {other:?}"))),
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is unreadable: {0}")]
    Corrupt(String),
    #[error("unsupported database URL {0:?}: use sqlite://PATH or postgres://...")]
    BadUrl(String),
    #[error("creating the database file {path}: {source}")]
    Create {
        path: String,
        source: std::io::Error,
    },
}

impl StoreError {
    /// Whether the database may answer again later: the connection failed or was refused, the
    /// pool found no connection in time, or PostgreSQL is shutting down or starting up. A
    /// worker waits these out instead of failing its run.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            StoreError::Db(e) => match e {
                sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::Tls(_) => true,
                sqlx::Error::Protocol(_) => true,
                sqlx::Error::Database(db) => db
                    .code()
                    .is_some_and(|code| crate::runner::outage::is_connection_sqlstate(&code)),
                _ => false,
            },
            _ => false,
        }
    }
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

/// One run as stored. A row whose config, features or weights no longer read (a config
/// written by another version, a hand-edited database) is still a row: `unreadable` says what
/// is wrong, so that listing goes on and the run can be deleted.
#[derive(Clone, Debug)]
pub struct RunRow {
    pub id: String,
    pub name: Option<String>,
    pub status: RunStatus,
    pub preset: Option<String>,
    /// `None` when the stored config does not read as a [`TunerConfig`].
    pub config: Option<TunerConfig>,
    /// The stored config as JSON when it does not read as a [`TunerConfig`] (`null` when it
    /// is not even JSON).
    pub config_raw: Option<serde_json::Value>,
    /// What of the stored row could not be read.
    pub unreadable: Option<String>,
    pub features: serde_json::Value,
    pub generations_total: u32,
    pub generations_done: u32,
    pub best_fitness: Option<f64>,
    pub best_weights: Option<Vec<f64>>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub error: Option<String>,
    pub stop_reason: Option<String>,
    /// The user's notes and tags.
    pub notes: String,
    pub tags: Vec<String>,
    /// How many times a worker has claimed the run: the number its current owner writes
    /// under (`Store::write_generation`).
    pub claim: i64,
    /// The user who created the run, on a server with users (`kalah-tuner users`): only they
    /// or an admin may change it.
    pub created_by: Option<String>,
    /// The processor time the run's work has used so far, in seconds, as measured on the
    /// threads that did it (`None` for a run stored before it was measured).
    pub processor_seconds: Option<f64>,
}

impl RunRow {
    /// The run's config, or why it cannot be read.
    pub fn config(&self) -> Result<&TunerConfig, UnreadableRun> {
        self.config.as_ref().ok_or_else(|| {
            UnreadableRun(
                self.unreadable
                    .clone()
                    .unwrap_or_else(|| "the stored config cannot be read".into()),
            )
        })
    }
}

/// A change to what the user says about a run: each part is set only when given.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunDescription {
    /// The new name; empty clears it.
    pub name: Option<String>,
    pub notes: Option<String>,
    pub tags: Option<Vec<String>>,
}

/// A run to create.
pub struct NewRun {
    pub id: String,
    pub name: Option<String>,
    pub preset: Option<String>,
    pub config: TunerConfig,
    pub features: serde_json::Value,
    /// The user creating it, on a server with users.
    pub created_by: Option<String>,
}

/// One point of a run's fitness curve.
#[derive(Clone, Debug, Serialize)]
pub struct GenerationPoint {
    #[serde(flatten)]
    pub curve: CurvePoint,
    pub best_so_far: f64,
    pub best_weights: Vec<f64>,
    pub games_played: u64,
    pub wall_ms: u64,
    /// The panel's measure of the generation's leader, on measured generations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub panel: Option<PanelPoint>,
}

/// One point of a run's panel curve: the generation's leader against the benchmark panel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PanelPoint {
    /// Score and Elo over the whole panel.
    pub overall: ScoreEstimate,
    /// The panel's agents and the leader's score against each.
    pub agents: Vec<String>,
    pub per_agent: Vec<ScoreEstimate>,
    /// The champion after this generation: the generation it comes from, and its panel score.
    pub champion_generation: u32,
    pub champion: ScoreEstimate,
    /// The leader's perfect-move agreement, when the benchmark measures it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<crate::tune::panel::Agreement>,
}

impl PanelPoint {
    pub fn of(record: &GenerationRecord) -> Option<PanelPoint> {
        let benchmark = record.benchmark.as_ref()?;
        let leader = benchmark.leaders.first()?;
        let champion = record.champion.as_ref()?;
        Some(PanelPoint {
            overall: leader.overall,
            agents: benchmark.panel.clone(),
            per_agent: leader.per_agent.clone(),
            champion_generation: champion.generation,
            champion: champion.panel.overall,
            agreement: leader.agreement.clone(),
        })
    }
}

impl GenerationPoint {
    pub fn of(record: &GenerationRecord) -> GenerationPoint {
        GenerationPoint {
            curve: record.curve_point(),
            best_so_far: record.hall_of_fame.fitness,
            best_weights: record.best().weights.clone(),
            games_played: record.games_played,
            wall_ms: record.timing.wall_ms,
            panel: PanelPoint::of(record),
        }
    }
}

/// Now, as fixed-width RFC 3339 UTC with milliseconds (sorts as text).
pub(crate) fn now_rfc3339() -> String {
    rfc3339(OffsetDateTime::now_utc())
}

/// `at` as fixed-width RFC 3339 UTC with milliseconds, so that times compare as text
/// (`time`'s own RFC 3339 format drops a fraction's trailing zeros: `.32Z` would sort
/// before `.3Z`).
fn rfc3339(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

/// How long a run's owner may go without a heartbeat before another process takes the run
/// over. Owners beat every second; processes on several machines need clocks within a few
/// seconds of each other (NTP), as the comparison is of each writer's own clock.
pub(crate) const LEASE_TTL: Duration = Duration::from_secs(10);

const RUN_COLUMNS: &str = "id, name, status, preset, config, features, generations_total, \
     generations_done, best_fitness, best_weights, created_at, started_at, finished_at, error, \
     stop_reason, notes, tags, claim, created_by, processor_seconds";

/// The PostgreSQL channel on which every write that changes the runs list (and so a run's
/// status or generations) notifies, in its transaction: listeners hear of it once committed.
const RUNS_CHANNEL: &str = "kalah_tuner_runs";

#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// Where [`Store::listen_runs`] connects, on PostgreSQL.
    listen_url: Option<Secret>,
}

/// A database URL, which may hold a password: kept out of `Debug` output.
#[derive(Clone)]
struct Secret(Arc<str>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(database URL)")
    }
}

/// Hears, on PostgreSQL, that another process (or this one) changed the runs: see
/// [`Store::listen_runs`].
pub(crate) struct RunsListener(sqlx::postgres::PgListener);

impl RunsListener {
    /// Completes at the next committed change to the runs. After a lost connection it
    /// reconnects and completes at once: changes in between were not heard, so the caller
    /// looks at the database either way.
    pub async fn changed(&mut self) -> Result<(), StoreError> {
        self.0.recv().await?;
        Ok(())
    }
}

/// How long a query waits for a pooled connection. PostgreSQL's connections are only
/// missing when the server is unreachable (queries are short), so a request there is answered
/// 503 within a few seconds instead of being held; SQLite's come free as writers finish,
/// which the busy timeout already waits for.
fn acquire_timeout(backend: Backend) -> Duration {
    match backend {
        Backend::Postgres => Duration::from_secs(3),
        Backend::Sqlite => Duration::from_secs(10),
    }
}

impl Store {
    /// Connects and migrates. `url` is `sqlite://PATH` (created if missing) or
    /// `postgres://...` (the database must exist).
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let (backend, url) = if url.starts_with("sqlite:") {
            let url = if url.contains("mode=") {
                url.to_string()
            } else if url.contains('?') {
                format!("{url}&mode=rwc")
            } else {
                format!("{url}?mode=rwc")
            };
            (Backend::Sqlite, url)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Backend::Postgres, url.to_string())
        } else {
            return Err(StoreError::BadUrl(url.to_string()));
        };
        if backend == Backend::Sqlite {
            create_private_sqlite_file(&url)?;
        }
        let options = AnyConnectOptions::from_str(&url)?;
        let mut pool = AnyPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(acquire_timeout(backend));
        if backend == Backend::Sqlite {
            // WAL lets readers go on while a worker writes a generation; the busy timeout
            // makes concurrent writers wait for each other instead of failing.
            pool = pool.after_connect(|conn, _meta| {
                Box::pin(async move {
                    sqlx::query("PRAGMA journal_mode = WAL")
                        .execute(&mut *conn)
                        .await?;
                    sqlx::query("PRAGMA busy_timeout = 5000")
                        .execute(&mut *conn)
                        .await?;
                    sqlx::query("PRAGMA foreign_keys = ON")
                        .execute(&mut *conn)
                        .await?;
                    sqlx::query("PRAGMA synchronous = NORMAL")
                        .execute(&mut *conn)
                        .await?;
                    Ok(())
                })
            });
        }
        let pool = pool.connect_with(options).await?;
        if backend == Backend::Sqlite {
            incremental_vacuum_mode(&pool).await?;
        }
        MIGRATOR.run(&pool).await?;
        Ok(Store {
            pool,
            backend,
            listen_url: (backend == Backend::Postgres).then(|| Secret(url.as_str().into())),
        })
    }

    /// The version of the runs list: it changes in the transaction of every write, by any
    /// process on this database, that changes what the list shows (a run created, claimed,
    /// advanced by a generation, renamed, cancelled, resumed, failed, finished or deleted).
    /// What was read from the runs after reading version `v` is at least as new as `v`.
    pub(crate) async fn list_version(&self) -> Result<i64, StoreError> {
        let version: i64 = sqlx::query_scalar("SELECT version FROM versions WHERE name = 'runs'")
            .fetch_one(&self.pool)
            .await?;
        Ok(version)
    }

    /// Marks the runs changed, inside the transaction of the change: the list's version goes
    /// up and, on PostgreSQL, listeners are notified when (and only if) it commits.
    async fn runs_changed(&self, conn: &mut sqlx::AnyConnection) -> Result<(), StoreError> {
        sqlx::query("UPDATE versions SET version = version + 1 WHERE name = 'runs'")
            .execute(&mut *conn)
            .await?;
        if self.backend == Backend::Postgres {
            sqlx::query(sqlx::AssertSqlSafe(format!("NOTIFY {RUNS_CHANNEL}")))
                .execute(&mut *conn)
                .await?;
        }
        Ok(())
    }

    /// On PostgreSQL, a listener that hears of every committed change to the runs, whichever
    /// process made it; `None` on SQLite, which cannot tell other processes (poll
    /// [`Store::list_version`] there).
    pub(crate) async fn listen_runs(&self) -> Result<Option<RunsListener>, StoreError> {
        let Some(url) = &self.listen_url else {
            return Ok(None);
        };
        let mut listener = sqlx::postgres::PgListener::connect(&url.0).await?;
        listener.listen(RUNS_CHANNEL).await?;
        Ok(Some(RunsListener(listener)))
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub(crate) async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Closes every connection. On SQLite the write-ahead log is first checkpointed into the
    /// database file and truncated: after a clean stop the `.db` file alone holds everything.
    pub async fn close(&self) {
        if self.backend == Backend::Sqlite {
            if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&self.pool)
                .await
            {
                tracing::warn!("checkpointing the SQLite log on close: {e}");
            }
        }
        self.pool.close().await;
    }

    pub async fn create_run(&self, run: &NewRun) -> Result<RunRow, StoreError> {
        let config = serde_json::to_string(&run.config).map_err(|e| corrupt("config", e))?;
        // RETURNING gives the run as inserted, before any worker can claim it.
        let sql = format!(
            "INSERT INTO runs (id, name, status, preset, config, features, generations_total, \
             generations_done, created_at, created_by, processor_seconds) \
             VALUES ($1, $2, 'queued', $3, $4, $5, $6, 0, $7, $8, 0.0) RETURNING {RUN_COLUMNS}"
        );
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&run.id)
            .bind(&run.name)
            .bind(&run.preset)
            .bind(config)
            .bind(run.features.to_string())
            .bind(run.config.records_total() as i64)
            .bind(now_rfc3339())
            .bind(&run.created_by)
            .fetch_one(&mut *tx)
            .await?;
        self.runs_changed(&mut tx).await?;
        tx.commit().await?;
        run_from_row(&row)
    }

    pub(crate) async fn get_run(&self, id: &str) -> Result<Option<RunRow>, StoreError> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| run_from_row(&r)).transpose()
    }

    /// A run's status and claim only: what a worker polls every second while it evolves the
    /// run, without reading and parsing the whole row.
    pub(crate) async fn run_claim(&self, id: &str) -> Result<Option<(RunStatus, i64)>, StoreError> {
        let row = sqlx::query("SELECT status, claim FROM runs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| {
            let status: String = r.try_get("status")?;
            Ok((status.parse()?, r.try_get::<i64, _>("claim")?))
        })
        .transpose()
    }

    /// All runs, newest first. A row that cannot be read at all (not even its id and status
    /// columns) is left out with a warning in the log rather than failing the whole list.
    pub(crate) async fn list_runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC, id DESC");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .iter()
            .filter_map(|row| match run_from_row(row) {
                Ok(run) => Some(run),
                Err(e) => {
                    let id = row.try_get::<String, _>("id").unwrap_or_default();
                    tracing::warn!(run = %id, "run left out of the list: {e}");
                    None
                }
            })
            .collect())
    }

    /// At most `limit` runs, newest first, after the run `after` (its `created_at` and id: a
    /// keyset, so pages stay in step while runs are added), and the key of the last run when
    /// more follow.
    pub(crate) async fn list_runs_page(
        &self,
        after: Option<(&str, &str)>,
        limit: u32,
    ) -> Result<(Vec<RunRow>, Option<(String, String)>), StoreError> {
        let fetch = i64::from(limit) + 1;
        let rows = match after {
            None => {
                let sql = format!(
                    "SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC, id DESC LIMIT $1"
                );
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(fetch)
                    .fetch_all(&self.pool)
                    .await?
            }
            Some((created_at, id)) => {
                let sql = format!(
                    "SELECT {RUN_COLUMNS} FROM runs WHERE created_at < $1 OR (created_at = $1 AND id < $2) \
                     ORDER BY created_at DESC, id DESC LIMIT $3"
                );
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(created_at)
                    .bind(id)
                    .bind(fetch)
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        let more = rows.len() as i64 > i64::from(limit);
        let page = &rows[..rows.len().min(limit as usize)];
        let next = match page.last() {
            Some(last) if more => Some((
                last.try_get::<String, _>("created_at")?,
                last.try_get::<String, _>("id")?,
            )),
            _ => None,
        };
        let runs = page
            .iter()
            .filter_map(|row| match run_from_row(row) {
                Ok(run) => Some(run),
                Err(e) => {
                    let id = row.try_get::<String, _>("id").unwrap_or_default();
                    tracing::warn!(run = %id, "run left out of the list: {e}");
                    None
                }
            })
            .collect();
        Ok((runs, next))
    }

    /// The runs that are queued or running, oldest first.
    pub(crate) async fn active_runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE status IN ('queued', 'running') \
             ORDER BY created_at, id"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(run_from_row).collect()
    }

    pub(crate) async fn count_status(&self, status: RunStatus) -> Result<u64, StoreError> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM runs WHERE status = $1")
            .bind(status.as_str())
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get::<i64, _>("n")?.max(0) as u64)
    }

    /// Takes the next run that is queued, or running under an owner whose heartbeat is older
    /// than `LEASE_TTL` (a process that died), and leases it to `owner`: running, a
    /// new claim number, a fresh heartbeat. A taken-over run keeps its generations, so the new
    /// owner resumes it from the last one written. `None` when there is nothing to take or
    /// another process took the run first (one conditional UPDATE: on PostgreSQL the loser
    /// re-reads the row after the winner commits and finds its lease fresh).
    ///
    /// Users take turns, so that one user's ten runs do not hold the workers while another's
    /// one waits: the next run is one of the user with the fewest running runs, among those
    /// the user whose last run was claimed longest ago, then the oldest. Runs without a user
    /// (servers without users) count as no one's and keep the oldest-first order. A running
    /// run gives its slot back when another user waits with fewer running runs
    /// ([`Store::should_yield`]), so turns come round even while runs are long.
    pub async fn claim_next(&self, owner: &str) -> Result<Option<RunRow>, StoreError> {
        let now = OffsetDateTime::now_utc();
        let stale_before = rfc3339(now - LEASE_TTL);
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(
            "UPDATE runs SET status = 'running', started_at = COALESCE(started_at, $1), \
             claimed_at = $1, claim = claim + 1, owner = $2, heartbeat_at = $1 \
             WHERE id = (SELECT c.id FROM runs c WHERE c.status = 'queued' \
                           OR (c.status = 'running' AND (c.heartbeat_at IS NULL OR c.heartbeat_at < $3)) \
                         ORDER BY (SELECT COUNT(*) FROM runs m \
                                   WHERE m.created_by = c.created_by AND m.status = 'running'), \
                                  COALESCE((SELECT MAX(m.claimed_at) FROM runs m \
                                            WHERE m.created_by = c.created_by), ''), \
                                  c.created_at, c.id LIMIT 1) \
             AND (status = 'queued' \
                  OR (status = 'running' AND (heartbeat_at IS NULL OR heartbeat_at < $3))) \
             RETURNING id",
        )
        .bind(rfc3339(now))
        .bind(owner)
        .bind(stale_before)
        .fetch_optional(&mut *tx)
        .await?;
        match row {
            Some(r) => {
                self.runs_changed(&mut tx).await?;
                tx.commit().await?;
                let id: String = r.try_get("id")?;
                self.get_run(&id).await
            }
            None => {
                tx.rollback().await?;
                Ok(None)
            }
        }
    }

    /// Renews the lease of a run evaluated under `claim`: `Ok(false)` once the run is no
    /// longer running under that claim (cancelled, deleted, failed, or taken over), when its
    /// owner must stop.
    pub async fn heartbeat(&self, id: &str, claim: i64) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE runs SET heartbeat_at = $3 WHERE id = $1 AND claim = $2 AND status = 'running'",
        )
        .bind(id)
        .bind(claim)
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Adds `processor` to the processor time of run `id`, whatever its status (work that
    /// made no record still used the cores). A deleted run has nothing to add to.
    pub(crate) async fn add_processor_time(
        &self,
        id: &str,
        processor: Duration,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let updated = sqlx::query(
            "UPDATE runs SET processor_seconds = COALESCE(processor_seconds, 0) + $2 WHERE id = $1",
        )
        .bind(id)
        .bind(processor.as_secs_f64())
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 1 {
            // Servers show the figure from their cached runs list: tell them it changed.
            self.runs_changed(&mut tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Whether run `id` should give its slot to another user's run: one of a user other than
    /// its own waits, and that user has fewer runs running than this run's user. Never for
    /// runs without a user (a server without users keeps runs in their slots to the end).
    pub async fn should_yield(&self, id: &str) -> Result<bool, StoreError> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS waiting FROM runs q, runs me \
             WHERE me.id = $1 AND me.created_by IS NOT NULL AND q.status = 'queued' \
               AND q.created_by IS NOT NULL AND q.created_by <> me.created_by \
               AND (SELECT COUNT(*) FROM runs m WHERE m.created_by = q.created_by \
                      AND m.status = 'running') \
                   < (SELECT COUNT(*) FROM runs m WHERE m.created_by = me.created_by \
                      AND m.status = 'running')",
        )
        .bind(id)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.try_get::<i64, _>("waiting")? > 0)
    }

    /// Gives a run evaluated under `claim` back to the queue at once (a process stopping
    /// cleanly), so that another process resumes it from its last generation without waiting
    /// for the lease to go stale. `Ok(false)` when the run was no longer this owner's.
    pub async fn release(&self, id: &str, claim: i64) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query(
            "UPDATE runs SET status = 'queued', owner = NULL, heartbeat_at = NULL \
             WHERE id = $1 AND claim = $2 AND status = 'running'",
        )
        .bind(id)
        .bind(claim)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() > 0 {
            self.runs_changed(&mut tx).await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Sets what the user says about a run (each part only when given); the run as it is
    /// afterwards, `None` when there is no such run. Whatever its status: notes are not
    /// part of the run's computation.
    pub(crate) async fn describe_run(
        &self,
        id: &str,
        change: &RunDescription,
    ) -> Result<Option<RunRow>, StoreError> {
        let tags = match &change.tags {
            Some(tags) => Some(serde_json::to_string(tags).map_err(|e| corrupt("tags", e))?),
            None => None,
        };
        // An absent part keeps its column: COALESCE with the bound NULL. The name is
        // nullable itself, so "clear the name" is an empty string, stored as NULL.
        let sql = format!(
            "UPDATE runs SET \
             name = CASE WHEN $2 = 1 THEN NULLIF($3, '') ELSE name END, \
             notes = COALESCE($4, notes), tags = COALESCE($5, tags) \
             WHERE id = $1 RETURNING {RUN_COLUMNS}"
        );
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .bind(change.name.is_some() as i64)
            .bind(change.name.clone().unwrap_or_default())
            .bind(change.notes.clone())
            .bind(tags)
            .fetch_optional(&mut *tx)
            .await?;
        if row.is_some() {
            self.runs_changed(&mut tx).await?;
        }
        tx.commit().await?;
        row.map(|r| run_from_row(&r)).transpose()
    }

    /// Cancels a queued or running run. `Ok(false)` when it is in another state.
    pub async fn cancel(&self, id: &str) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query(
            "UPDATE runs SET status = 'cancelled', finished_at = $2 \
             WHERE id = $1 AND status IN ('queued', 'running')",
        )
        .bind(id)
        .bind(now_rfc3339())
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() > 0 {
            self.runs_changed(&mut tx).await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Queues a cancelled or failed run again and returns it as queued (a worker may claim it
    /// the moment this returns). `None` when it is in another state.
    pub(crate) async fn requeue(&self, id: &str) -> Result<Option<RunRow>, StoreError> {
        let sql = format!(
            "UPDATE runs SET status = 'queued', finished_at = NULL, error = NULL \
             WHERE id = $1 AND status IN ('cancelled', 'failed') RETURNING {RUN_COLUMNS}"
        );
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        if row.is_some() {
            self.runs_changed(&mut tx).await?;
        }
        tx.commit().await?;
        row.map(|r| run_from_row(&r)).transpose()
    }

    /// Marks a running run failed.
    pub async fn fail(&self, id: &str, claim: i64, error: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query(
            "UPDATE runs SET status = 'failed', error = $2, finished_at = $3 \
             WHERE id = $1 AND status = 'running' AND claim = $4",
        )
        .bind(id)
        .bind(error)
        .bind(now_rfc3339())
        .bind(claim)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() > 0 {
            self.runs_changed(&mut tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Marks a running run finished without a new generation (a resumed run whose last
    /// record already ends it).
    pub async fn finish(
        &self,
        id: &str,
        claim: i64,
        stop: Option<StopReason>,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query(
            "UPDATE runs SET status = 'finished', finished_at = $2, stop_reason = $3 \
             WHERE id = $1 AND status = 'running' AND claim = $4",
        )
        .bind(id)
        .bind(now_rfc3339())
        .bind(stop.map(stop_name))
        .bind(claim)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() > 0 {
            self.runs_changed(&mut tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Deletes a run and its generations; its owner, if any, finds it gone at its next
    /// heartbeat and drops the generation under way. `Ok(false)` when there was no such run.
    pub(crate) async fn delete_run(&self, id: &str) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        // Cancelled first, in the same transaction: on PostgreSQL this waits for a generation
        // being written (the row lock) instead of deleting around it, and no other server
        // sees the run cancelled on its way out (its streams end with `deleted`).
        sqlx::query(
            "UPDATE runs SET status = 'cancelled' WHERE id = $1 AND status IN ('queued', 'running')",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM batch_results WHERE run_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM generations WHERE run_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        // Its champion leaves the ladders (its games stay: the other players' ratings rest
        // on them).
        sqlx::query(
            "UPDATE ladder_players SET withdrawn_at = $2 WHERE run_id = $1 AND withdrawn_at IS NULL",
        )
        .bind(id)
        .bind(now_rfc3339())
        .execute(&mut *tx)
        .await?;
        let done = sqlx::query("DELETE FROM runs WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() > 0 {
            self.runs_changed(&mut tx).await?;
        }
        tx.commit().await?;
        if self.backend == Backend::Sqlite {
            // SQLite keeps a deleted run's pages in the file for reuse; give them back, so
            // deleting a big run frees the disk it took. (PostgreSQL's autovacuum reuses them.)
            // The run is gone either way: a failure here costs disk, not the answer.
            if let Err(e) = sqlx::query("PRAGMA incremental_vacuum")
                .execute(&self.pool)
                .await
            {
                tracing::warn!("giving a deleted run's pages back to the file system: {e}");
            }
        }
        Ok(done.rows_affected() == 1)
    }

    /// Writes one generation and the run's progress in one transaction, only while the run
    /// is still `running` under `claim` (the number [`Store::claim_next`] gave its owner). The last generation of a run (`record.stop` set) also finishes it.
    /// Writes a generation and the run's progress; the run's best (`best_fitness`,
    /// `best_weights`) becomes `champion`, the player the run hands out.
    pub(crate) async fn write_generation(
        &self,
        run_id: &str,
        claim: i64,
        record: &GenerationRecord,
        champion: &HallOfFame,
        processor: Duration,
    ) -> Result<RecordWrite, StoreError> {
        let point = GenerationPoint::of(record);
        let record_json = serde_json::to_string(record).map_err(|e| corrupt("record", e))?;
        let champion_weights =
            serde_json::to_string(&champion.weights).map_err(|e| corrupt("weights", e))?;
        let panel = match &point.panel {
            Some(p) => Some(serde_json::to_string(p).map_err(|e| corrupt("panel", e))?),
            None => None,
        };
        let best_weights =
            serde_json::to_string(&point.best_weights).map_err(|e| corrupt("weights", e))?;
        let now = now_rfc3339();
        let (status, finished_at) = match record.stop {
            Some(_) => ("finished", Some(now.clone())),
            None => ("running", None),
        };
        let mut tx = self.pool.begin().await?;
        // The UPDATE comes first: on PostgreSQL it locks the run row, so a cancel waits for
        // this transaction instead of slipping in between.
        let updated = sqlx::query(
            "UPDATE runs SET generations_done = $2, best_fitness = $3, best_weights = $4, \
             status = $5, finished_at = $6, stop_reason = $7, \
             processor_seconds = COALESCE(processor_seconds, 0) + $9 \
             WHERE id = $1 AND status = 'running' AND claim = $8",
        )
        .bind(run_id)
        .bind(record.generation as i64 + 1)
        .bind(champion.fitness)
        .bind(champion_weights)
        .bind(status)
        .bind(finished_at)
        .bind(record.stop.map(stop_name))
        .bind(claim)
        .bind(processor.as_secs_f64())
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() != 1 {
            tx.rollback().await?;
            return Ok(RecordWrite::NotRunning);
        }
        sqlx::query(
            "INSERT INTO generations (run_id, generation, best, mean, min, std, diversity, \
             best_so_far, best_weights, games_played, wall_ms, record, created_at, panel) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind(run_id)
        .bind(record.generation as i64)
        .bind(point.curve.best)
        .bind(point.curve.mean)
        .bind(point.curve.min)
        .bind(point.curve.std)
        .bind(point.curve.diversity)
        .bind(point.best_so_far)
        .bind(best_weights)
        .bind(point.games_played as i64)
        .bind(point.wall_ms as i64)
        .bind(record_json)
        .bind(now)
        .bind(panel)
        .execute(&mut *tx)
        .await?;
        self.runs_changed(&mut tx).await?;
        tx.commit().await?;
        Ok(RecordWrite::Written)
    }

    /// A run's fitness curve, generations after `since` (all when `None`).
    pub(crate) async fn generation_points(
        &self,
        run_id: &str,
        since: Option<i64>,
    ) -> Result<Vec<GenerationPoint>, StoreError> {
        self.generation_points_page(run_id, since, None).await
    }

    /// At most `limit` points after `since`, in order: a page of a long run's curve.
    pub(crate) async fn generation_points_page(
        &self,
        run_id: &str,
        since: Option<i64>,
        limit: Option<i64>,
    ) -> Result<Vec<GenerationPoint>, StoreError> {
        let rows = sqlx::query(
            "SELECT generation, best, mean, min, std, diversity, best_so_far, best_weights, \
             games_played, wall_ms, panel FROM generations \
             WHERE run_id = $1 AND generation > $2 ORDER BY generation LIMIT $3",
        )
        .bind(run_id)
        .bind(since.unwrap_or(-1))
        .bind(limit.unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let weights: String = r.try_get("best_weights")?;
                let panel: Option<String> = r.try_get("panel")?;
                let panel = match panel {
                    Some(text) => {
                        Some(serde_json::from_str(&text).map_err(|e| corrupt("panel", e))?)
                    }
                    None => None,
                };
                Ok(GenerationPoint {
                    curve: CurvePoint {
                        generation: r.try_get::<i64, _>("generation")? as u32,
                        best: r.try_get("best")?,
                        mean: r.try_get("mean")?,
                        min: r.try_get("min")?,
                        std: r.try_get("std")?,
                        diversity: r.try_get("diversity")?,
                    },
                    best_so_far: r.try_get("best_so_far")?,
                    best_weights: serde_json::from_str(&weights)
                        .map_err(|e| corrupt("best_weights", e))?,
                    games_played: r.try_get::<i64, _>("games_played")? as u64,
                    wall_ms: r.try_get::<i64, _>("wall_ms")? as u64,
                    panel,
                })
            })
            .collect()
    }

    /// The full record of generation `generation`.
    pub async fn record(
        &self,
        run_id: &str,
        generation: i64,
    ) -> Result<Option<GenerationRecord>, StoreError> {
        let row =
            sqlx::query("SELECT record FROM generations WHERE run_id = $1 AND generation = $2")
                .bind(run_id)
                .bind(generation)
                .fetch_optional(&self.pool)
                .await?;
        row.map(|r| record_from_row(&r)).transpose()
    }

    /// The last record written for a run.
    pub(crate) async fn last_record(
        &self,
        run_id: &str,
    ) -> Result<Option<GenerationRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT record FROM generations WHERE run_id = $1 ORDER BY generation DESC LIMIT 1",
        )
        .bind(run_id)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| record_from_row(&r)).transpose()
    }

    /// Every record of a run, in generation order.
    pub async fn records(&self, run_id: &str) -> Result<Vec<GenerationRecord>, StoreError> {
        let rows =
            sqlx::query("SELECT record FROM generations WHERE run_id = $1 ORDER BY generation")
                .bind(run_id)
                .fetch_all(&self.pool)
                .await?;
        rows.iter().map(record_from_row).collect()
    }
}

fn stop_name(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Generations => "generations",
        StopReason::Stagnation => "stagnation",
        StopReason::TargetFitness => "target-fitness",
    }
}

fn record_from_row(row: &AnyRow) -> Result<GenerationRecord, StoreError> {
    let text: String = row.try_get("record")?;
    serde_json::from_str(&text).map_err(|e| corrupt("generation record", e))
}

/// Puts a SQLite database in incremental auto-vacuum mode, so that [`Store::delete_run`] can
/// hand freed pages back to the file system. A new database takes the mode before its first
/// table; one made before this version needs a VACUUM, once, to take it.
async fn incremental_vacuum_mode(pool: &sqlx::AnyPool) -> Result<(), StoreError> {
    const INCREMENTAL: i64 = 2;
    let mut conn = pool.acquire().await?;
    let mode: i64 = sqlx::query_scalar("PRAGMA auto_vacuum")
        .fetch_one(&mut *conn)
        .await?;
    if mode != INCREMENTAL {
        sqlx::query("PRAGMA auto_vacuum = INCREMENTAL")
            .execute(&mut *conn)
            .await?;
        sqlx::query("VACUUM").execute(&mut *conn).await?;
    }
    Ok(())
}

/// Creates a new SQLite database file readable by its owner only (SQLite gives its journal
/// files the database file's mode): runs' configs are nobody else's business. An existing file
/// keeps its mode, and in-memory databases have no file.
fn create_private_sqlite_file(url: &str) -> Result<(), StoreError> {
    if !url.contains("mode=rwc") {
        return Ok(());
    }
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(url)?;
    let path = options.get_filename();
    if path.as_os_str().is_empty() || path.to_string_lossy().starts_with("file:sqlx-in-memory") {
        return Ok(());
    }
    let mut file = std::fs::OpenOptions::new();
    file.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        file.mode(0o600);
    }
    match file.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(StoreError::Create {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Reads a run. Only the columns every row must have (id, counts, times) can fail it; a
/// config, features, weights or status that no longer read are noted in `unreadable`.
fn run_from_row(r: &AnyRow) -> Result<RunRow, StoreError> {
    let config: String = r.try_get("config")?;
    let features: String = r.try_get("features")?;
    let weights: Option<String> = r.try_get("best_weights")?;
    let status: String = r.try_get("status")?;
    let tags: String = r.try_get("tags")?;
    let mut problems = Vec::new();
    let tags = serde_json::from_str(&tags).unwrap_or_else(|e| {
        problems.push(format!("the stored tags cannot be read: {e}"));
        Vec::new()
    });
    let (config, config_raw) = match serde_json::from_str::<TunerConfig>(&config) {
        Ok(c) => (Some(c), None),
        Err(e) => {
            problems.push(format!("the stored config cannot be read: {e}"));
            (
                None,
                Some(serde_json::from_str(&config).unwrap_or_default()),
            )
        }
    };
    let features = serde_json::from_str(&features).unwrap_or_else(|e| {
        problems.push(format!("the stored features cannot be read: {e}"));
        serde_json::Value::Null
    });
    let best_weights = weights.and_then(|w| {
        serde_json::from_str(&w)
            .map_err(|e| problems.push(format!("the stored best weights cannot be read: {e}")))
            .ok()
    });
    let status = status.parse().unwrap_or_else(|e: StoreError| {
        problems.push(e.to_string());
        RunStatus::Failed
    });
    Ok(RunRow {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        status,
        preset: r.try_get("preset")?,
        config,
        config_raw,
        unreadable: (!problems.is_empty()).then(|| problems.join("; ")),
        features,
        generations_total: r.try_get::<i64, _>("generations_total")? as u32,
        generations_done: r.try_get::<i64, _>("generations_done")? as u32,
        best_fitness: r.try_get("best_fitness")?,
        best_weights,
        created_at: r.try_get("created_at")?,
        started_at: r.try_get("started_at")?,
        finished_at: r.try_get("finished_at")?,
        error: r.try_get("error")?,
        stop_reason: r.try_get("stop_reason")?,
        notes: r.try_get("notes")?,
        tags,
        claim: r.try_get("claim")?,
        created_by: r.try_get("created_by")?,
        processor_seconds: r.try_get("processor_seconds")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_times_have_one_width_and_sort_as_text() {
        let at = |nanos: i128| {
            rfc3339(OffsetDateTime::from_unix_timestamp_nanos(nanos).expect("a valid time"))
        };
        let whole = at(1_700_000_000_000_000_000);
        let three_tenths = at(1_700_000_000_300_000_000);
        let later = at(1_700_000_000_305_000_000);
        assert_eq!(whole, "2023-11-14T22:13:20.000Z");
        assert_eq!(three_tenths, "2023-11-14T22:13:20.300Z");
        assert!(whole < three_tenths && three_tenths < later);
        assert_eq!(now_rfc3339().len(), whole.len());
    }
}
