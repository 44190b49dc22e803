//! Run events for every server on the database, each exactly once.
//!
//! The process that writes a generation or changes a run's status broadcasts the event to its
//! own streams at once. Other processes on the same database hear of the change from the
//! database itself: on PostgreSQL every such write sends a NOTIFY in its transaction, on
//! SQLite (no way to tell another process) a watcher looks at the runs list's version a few
//! times a second, and only while some stream here follows a run. Either way the watcher
//! reads the followed runs and broadcasts what is new.
//!
//! Both paths go through [`emit`], which remembers per followed run the last generation and
//! the last status sent: whichever path sees a change first sends it, the other finds it
//! already sent. So the server that ran a generation sends it once, and every other server
//! sends it once too.

use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};

use futures_util::future::BoxFuture;

use super::run_view::run_json;
use super::state::{AppState, Followed, RunEvent, SharedState};
use crate::runner::RunObserver;
use crate::store::{GenerationPoint, RunRow, StoreError};
use crate::tune::GenerationRecord;

/// What the server hears of the runs its executor steps: each status change and record goes
/// to the event streams, and records are counted for `/metrics`.
pub(crate) struct Announcer(pub SharedState);

impl RunObserver for Announcer {
    fn status_changed<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(publish_status(&self.0, run_id))
    }

    fn record_written(&self, run_id: &str, record: &GenerationRecord) {
        self.0.counters.generation_written(record.games_played);
        tracing::info!(
            run = %run_id,
            generation = record.generation,
            best = record.fitness.best,
            mean = record.fitness.mean,
            games = record.games_played,
            wall_ms = record.timing.wall_ms,
            "generation written"
        );
        emit(
            &self.0,
            generation_event(run_id, &GenerationPoint::of(record)),
        );
    }
}

/// How often, on SQLite, the watcher looks at the runs list's version while streams follow
/// runs: a cheap one-row read.
const SQLITE_POLL: Duration = Duration::from_millis(300);
/// How often, on PostgreSQL, the watcher looks anyway: a notification is lost when the
/// listening connection is (it reconnects by itself).
const PG_FALLBACK: Duration = Duration::from_secs(2);

/// What of a run a `status` event is about: its state and what the user says of it, not the
/// progress that every generation changes (generation events carry that).
fn status_key(run: &Value) -> String {
    json!([
        run.get("status"),
        run.get("name"),
        run.get("notes"),
        run.get("tags"),
        run.get("error")
    ])
    .to_string()
}

/// A `generation` event's data: the generation's point with its run's id.
#[derive(Serialize)]
struct GenerationData<'a> {
    #[serde(flatten)]
    point: &'a GenerationPoint,
    run_id: &'a str,
}

/// The `generation` event of run `run_id`'s `point`.
pub(crate) fn generation_event(run_id: &str, point: &GenerationPoint) -> RunEvent {
    let data = serde_json::to_value(GenerationData { point, run_id }).unwrap_or(Value::Null);
    RunEvent {
        run_id: run_id.to_string(),
        kind: "generation",
        data,
    }
}

/// Broadcasts `event` to this process's streams unless it was broadcast already: a
/// generation at or below the last one sent, or a status that says nothing new.
///
/// A generation that would leave a gap (a server that took over a run writes generation 25
/// while this process's streams were last sent 22, and 23-24 came from the server before it)
/// is not sent here: the watcher reads the database, where the earlier ones are, and sends
/// them all in order.
pub(crate) fn emit(state: &AppState, event: RunEvent) {
    send_once(state, event, false);
}

fn send_once(state: &AppState, event: RunEvent, from_database: bool) {
    let Ok(mut follows) = state.follows.lock() else {
        let _ = state.events.send(event);
        return;
    };
    if let Some(followed) = follows.get_mut(&event.run_id) {
        match event.kind {
            "generation" => {
                if let Some(g) = event.data.get("generation").and_then(Value::as_i64) {
                    if g <= followed.generation {
                        return;
                    }
                    if g > followed.generation + 1 && !from_database {
                        return;
                    }
                    followed.generation = g;
                }
            }
            "status" => {
                let key = status_key(&event.data);
                if key == followed.status {
                    return;
                }
                followed.status = key;
            }
            "deleted" => {
                if followed.status == "deleted" {
                    return;
                }
                followed.status = "deleted".into();
            }
            _ => {}
        }
    }
    // Sent under the lock, so that two paths cannot interleave their checks and sends.
    let _ = state.events.send(event);
}

/// One open stream's hold on its run: while any is held, the watcher keeps the run's events
/// coming from the database.
pub(crate) struct Following {
    state: SharedState,
    id: String,
}

impl Following {
    /// Follows run `id`, whose stream starts from `generations_done` and the status `run`
    /// (as [`run_json`] shows it).
    pub(crate) fn new(
        state: SharedState,
        id: &str,
        generations_done: u32,
        run: &Value,
    ) -> Following {
        if let Ok(mut follows) = state.follows.lock() {
            follows
                .entry(id.to_string())
                .or_insert_with(|| Followed {
                    streams: 0,
                    generation: i64::from(generations_done) - 1,
                    status: status_key(run),
                })
                .streams += 1;
        }
        Following {
            state,
            id: id.to_string(),
        }
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        if let Ok(mut follows) = self.state.follows.lock() {
            if let Some(followed) = follows.get_mut(&self.id) {
                followed.streams = followed.streams.saturating_sub(1);
                if followed.streams == 0 {
                    follows.remove(&self.id);
                }
            }
        }
    }
}

/// Broadcasts what the database holds of run `id` that this process's streams were not sent:
/// generations first, then the status (the last generation of a run and its end are written
/// together, and the end closes the streams).
async fn catch_up(state: &SharedState, id: &str) -> Result<(), StoreError> {
    let Some(run) = state.store.get_run(id).await? else {
        emit(
            state,
            RunEvent {
                run_id: id.to_string(),
                kind: "deleted",
                data: Value::Null,
            },
        );
        return Ok(());
    };
    let sent = match state.follows.lock() {
        Ok(follows) => follows.get(id).map(|f| f.generation),
        Err(_) => None,
    };
    if let Some(sent) = sent {
        if i64::from(run.generations_done) - 1 > sent {
            for point in state.store.generation_points(id, Some(sent)).await? {
                send_once(state, generation_event(id, &point), true);
            }
        }
    }
    emit_status(state, &run);
    Ok(())
}

/// Broadcasts `run`'s state as a `status` event (unless it says nothing new, see [`emit`]).
/// Broadcasts a run's current state to its event streams.
pub(crate) async fn publish_status(state: &AppState, id: &str) {
    if let Ok(Some(run)) = state.store.get_run(id).await {
        emit_status(state, &run);
    }
}

pub(crate) fn emit_status(state: &AppState, run: &RunRow) {
    emit(
        state,
        RunEvent {
            run_id: run.id.clone(),
            kind: "status",
            data: run_json(run),
        },
    );
}

/// The watcher: one task a server, until it stops.
pub(crate) async fn watch(state: SharedState) {
    let mut listener = match state.store.listen_runs().await {
        Ok(listener) => listener,
        Err(e) => {
            tracing::warn!(
                "listening for other servers' run changes: {e}; looking every {PG_FALLBACK:?} instead"
            );
            None
        }
    };
    let poll = if state.store.backend() == crate::store::Backend::Sqlite {
        SQLITE_POLL
    } else {
        PG_FALLBACK
    };
    // The version last read and the runs then followed: a stream that starts following a
    // run makes the next look read it, whatever the version.
    let mut seen: Option<(i64, Vec<String>)> = None;
    loop {
        match &mut listener {
            Some(l) => {
                tokio::select! {
                    heard = l.changed() => {
                        if let Err(e) = heard {
                            tracing::warn!("listening for run changes: {e}");
                            tokio::time::sleep(Duration::from_secs(1)).await;
                        }
                    }
                    _ = tokio::time::sleep(poll) => {}
                    _ = state.stopping() => return,
                }
            }
            None => {
                tokio::select! {
                    _ = tokio::time::sleep(poll) => {}
                    _ = state.stopping() => return,
                }
            }
        }
        let mut ids: Vec<String> = match state.follows.lock() {
            Ok(follows) => follows.keys().cloned().collect(),
            Err(_) => continue,
        };
        ids.sort();
        if ids.is_empty() {
            continue;
        }
        // Read before the runs: whatever the runs say is at least as new as this version.
        let version = match state.store.list_version().await {
            Ok(v) => v,
            Err(e) => {
                tracing::debug!("reading the runs' version: {e}");
                continue;
            }
        };
        if seen
            .as_ref()
            .is_some_and(|(v, was)| *v == version && *was == ids)
        {
            continue;
        }
        let mut complete = true;
        for id in &ids {
            if let Err(e) = catch_up(&state, id).await {
                tracing::debug!(run = %id, "reading a followed run: {e}");
                complete = false;
            }
        }
        seen = complete.then_some((version, ids));
    }
}
