//! `GET /api/workers`: the batch workers playing game batches from the PostgreSQL queue
//! (`kalah-tuner worker` processes and servers that play batches), as Fishtest and OpenBench
//! show their machines: host, threads, the batch each plays now, its last heartbeat, and its
//! games per second over every batch it wrote a result for. Read from the database, so every
//! server shows the same list.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::error::ApiResult;
use super::state::SharedState;
use crate::store::{StoredWorker, LEASE_TTL};

/// Workers the page lists: the ones that beat last.
const LISTED: u32 = 100;

/// Whether a worker is `playing` a batch, `idle` (waiting for one), `stopped` (it said so)
/// or `lost` (no heartbeat for [`LEASE_TTL`]: killed, or cut off from the database).
fn status(w: &StoredWorker, now: OffsetDateTime) -> &'static str {
    if w.stopped_at.is_some() {
        return "stopped";
    }
    let beat = OffsetDateTime::parse(&w.heartbeat_at, &Rfc3339).ok();
    if beat.is_none_or(|at| now - at > LEASE_TTL) {
        "lost"
    } else if w.batch.is_some() {
        "playing"
    } else {
        "idle"
    }
}

fn shown(w: StoredWorker, now: OffsetDateTime) -> Value {
    let status = status(&w, now);
    // Games over the time spent playing them, as the worker measured each batch.
    let games_per_second = (w.play_ms > 0).then(|| w.games as f64 * 1000.0 / w.play_ms as f64);
    json!({
        "name": w.name,
        "host": w.host,
        "threads": w.threads,
        "status": status,
        "started_at": w.started_at,
        "heartbeat_at": w.heartbeat_at,
        "stopped_at": w.stopped_at,
        "batch": if status == "playing" { json!(w.batch) } else { Value::Null },
        "batches": w.batches,
        "games": w.games,
        "play_ms": w.play_ms,
        "games_per_second": games_per_second,
    })
}

/// The workers that beat last, newest beat first.
pub async fn list(State(state): State<SharedState>) -> ApiResult<Json<Value>> {
    let workers = state.store.list_workers(LISTED).await?;
    let now = OffsetDateTime::now_utc();
    let workers: Vec<Value> = workers.into_iter().map(|w| shown(w, now)).collect();
    Ok(Json(json!({ "workers": workers })))
}
