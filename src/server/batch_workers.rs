//! `GET /api/workers`: the batch workers playing game batches from the PostgreSQL queue
//! (`kalah-tuner worker` processes and servers that play batches), as Fishtest and OpenBench
//! show their machines: host, threads, the batch each plays now, its last heartbeat, and its
//! games per second over every batch it wrote a result for. Read from the database, so every
//! server shows the same list.

use axum::extract::State;
use axum::Json;
use serde::Serialize;
use time::OffsetDateTime;

use super::error::ApiResult;
use super::state::SharedState;
use crate::runner::SliceKey;
use crate::store::{StoredWorker, WorkerState};

/// Workers the page lists: the ones that beat last.
const LISTED: u32 = 100;

/// Whether a worker is `playing` a batch, `idle` (waiting for one), `stopped` (it said so)
/// or `lost` (no heartbeat for the store's lease: killed, or cut off from the database).
#[derive(Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum WorkerStatus {
    Playing,
    Idle,
    Stopped,
    Lost,
}

impl From<WorkerState> for WorkerStatus {
    fn from(state: WorkerState) -> WorkerStatus {
        match state {
            WorkerState::Playing => WorkerStatus::Playing,
            WorkerState::Idle => WorkerStatus::Idle,
            WorkerState::Stopped => WorkerStatus::Stopped,
            WorkerState::Lost => WorkerStatus::Lost,
        }
    }
}

/// A batch worker as `GET /api/workers` lists it. Fields in alphabetical order, the order the
/// API's objects have always had.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct WorkerView {
    /// The batch it plays now (when playing).
    batch: Option<SliceKey>,
    batches: u64,
    games: u64,
    /// Games over the milliseconds its batches took.
    games_per_second: Option<f64>,
    heartbeat_at: String,
    host: String,
    name: String,
    play_ms: u64,
    started_at: String,
    status: WorkerStatus,
    stopped_at: Option<String>,
    threads: u32,
}

/// `GET /api/workers`.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Workers {
    workers: Vec<WorkerView>,
}

fn shown(w: StoredWorker, now: OffsetDateTime) -> WorkerView {
    let status = WorkerStatus::from(w.state(now));
    // Games over the time spent playing them, as the worker measured each batch.
    let games_per_second = (w.play_ms > 0).then(|| w.games as f64 * 1000.0 / w.play_ms as f64);
    WorkerView {
        batch: w.batch.filter(|_| status == WorkerStatus::Playing),
        batches: w.batches,
        games: w.games,
        games_per_second,
        heartbeat_at: w.heartbeat_at,
        host: w.host,
        name: w.name,
        play_ms: w.play_ms,
        started_at: w.started_at,
        status,
        stopped_at: w.stopped_at,
        threads: w.threads,
    }
}

/// The workers that beat last, newest beat first.
#[utoipa::path(
    get, path = "/workers", operation_id = "workers",
    summary = "The batch workers on the database (the 100 that beat last), newest heartbeat first: host, threads, status (playing, idle, stopped, lost), the batch under way, batches and games played, games per second",
    responses((status = 200, description = "the workers", body = Workers))
)]
pub(crate) async fn list(State(state): State<SharedState>) -> ApiResult<Json<Workers>> {
    let workers = state.store.list_workers(LISTED).await?;
    let now = OffsetDateTime::now_utc();
    let workers = workers.into_iter().map(|w| shown(w, now)).collect();
    Ok(Json(Workers { workers }))
}
