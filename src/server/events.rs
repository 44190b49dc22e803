//! `GET /api/events`: the event streams of many runs in one connection.
//!
//! A browser keeps at most six connections to a host over HTTP/1.1: a dashboard with one
//! stream per open run page runs out of them at the seventh. The dashboard opens this stream
//! once per browser (one tab holds it and shares its events with the others) and picks the
//! runs it shows from it.
//!
//! The events are those of `/api/runs/{id}/events`, with the run's id in every one: `status`
//! (the run), `generation` (a generation point with `run_id`) and `end` (`run_id` and the
//! final status, `deleted` for a deleted run). Unlike the one-run stream this one stays open
//! after a run ends; it ends when the server stops.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, Sse};
use futures_util::stream::Stream;
use serde::Deserialize;
use serde_json::{json, Value};

use super::error::{ApiError, ApiResult};
use super::event_stream::{end_event, is_terminal, sse, sse_event, stream_seat, Outbox, RunStream};
use super::extract::ApiQuery;
use super::run_events::Following;
use super::run_view::run_json;
use super::state::{RunEvent, SharedState};
use crate::store::RunRow;

/// Most run ids one request may name.
const MAX_RUNS: usize = 500;

/// How often the stream reads the runs it has seen going from the database: a run may end (or
/// be deleted) where this process hears nothing of it.
const RECHECK: Duration = Duration::from_secs(5);

/// How often a stream of every run looks for runs that start going elsewhere (another server
/// on the database): a one-row read of the runs list's version, and the list when it moved.
const DISCOVER: Duration = Duration::from_secs(1);

/// `GET /api/events?runs=ID,ID`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventsQuery {
    /// Comma-separated run ids; every run when absent.
    #[serde(default)]
    runs: Option<String>,
}

impl utoipa::IntoParams for EventsQuery {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        use super::api_doc::{query_param, text};
        vec![query_param(
            "runs",
            &format!("comma-separated run ids, at most {MAX_RUNS}; every run when absent"),
            text(),
        )]
    }
}

struct Follow {
    state: SharedState,
    /// The runs asked for; every run when `None`.
    only: Option<HashSet<String>>,
    /// Runs seen going (queued or running), read again at every recheck.
    going: HashSet<String>,
    /// Runs whose `end` this stream has sent: a second word of the same end (the worker and
    /// the cancel request both tell) sends no second `end`. A resumed run leaves the set.
    ended_runs: HashSet<String>,
    /// A hold on every going run, so that this process's watcher brings the events other
    /// servers write for it ([`Following`]).
    followings: HashMap<String, Following>,
    /// The runs list's version last seen, for a stream of every run.
    version: Option<i64>,
    out: Outbox,
}

impl Follow {
    fn wants(&self, id: &str) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(id))
    }

    /// Queues a run's state as read from the database: `status`, and `end` once it has ended;
    /// `end` alone for a deleted run.
    fn queue_run(&mut self, id: &str, run: Option<&RunRow>) {
        match run {
            Some(run) => {
                let shown = run_json(run);
                self.out.queue.push_back(sse_event("status", &shown));
                if is_terminal(run.status.as_str()) {
                    self.end(id, run.status.as_str());
                } else {
                    self.follow(id, run.generations_done, &shown);
                    self.resume(id);
                }
            }
            None => self.end(id, "deleted"),
        }
    }

    /// Holds on to run `id` (see [`Follow::followings`]) from `generations_done` on.
    fn follow(&mut self, id: &str, generations_done: u32, shown: &Value) {
        if !self.followings.contains_key(id) {
            let following = Following::new(self.state.clone(), id, generations_done, shown);
            self.followings.insert(id.to_string(), following);
        }
    }

    /// Queues the run's `end`, once.
    fn end(&mut self, id: &str, status: &str) {
        self.followings.remove(id);
        self.going.remove(id);
        if self.ended_runs.insert(id.to_string()) {
            self.out.queue.push_back(end_event(id, status));
        }
    }

    /// The run goes (again).
    fn resume(&mut self, id: &str) {
        self.ended_runs.remove(id);
        self.going.insert(id.to_string());
    }
}

impl RunStream for Follow {
    fn outbox(&mut self) -> &mut Outbox {
        &mut self.out
    }

    async fn recheck(&mut self) {
        let ids: Vec<String> = self.going.iter().cloned().collect();
        for id in ids {
            match self.state.store.get_run(&id).await {
                Ok(Some(run)) if is_terminal(run.status.as_str()) => {
                    self.queue_run(&id, Some(&run))
                }
                Ok(None) => self.queue_run(&id, None),
                _ => {}
            }
        }
    }

    fn take(&mut self, ev: RunEvent) {
        if !self.wants(&ev.run_id) {
            return;
        }
        if ev.kind == "deleted" {
            // A deletion is told even after the run's earlier end (cancelled, then deleted).
            self.ended_runs.remove(&ev.run_id);
            self.end(&ev.run_id, "deleted");
            return;
        }
        self.out.queue.push_back(sse_event(ev.kind, &ev.data));
        let status = ev.data.get("status").and_then(Value::as_str);
        match status {
            Some(s) if ev.kind == "status" && is_terminal(s) => self.end(&ev.run_id, s),
            // Queued or running, a resumed run included.
            Some(_) if ev.kind == "status" => {
                let done = ev.data.get("generations_done").and_then(Value::as_u64);
                self.follow(&ev.run_id, done.unwrap_or(0) as u32, &ev.data);
                self.resume(&ev.run_id);
            }
            // A generation (no status in it) of a run not known to have ended: it goes.
            _ if ev.kind == "generation" && !self.ended_runs.contains(&ev.run_id) => {
                let next = ev.data.get("generation").and_then(Value::as_u64);
                let shown = json!({"status": "running"});
                self.follow(&ev.run_id, next.map_or(0, |g| g as u32 + 1), &shown);
                self.going.insert(ev.run_id);
            }
            _ => {}
        }
    }

    /// With no runs named, starts following the runs that went (or were created) elsewhere
    /// since the last look.
    async fn discover(&mut self) {
        if self.only.is_some() {
            return;
        }
        let Ok(version) = self.state.store.list_version().await else {
            return;
        };
        if self.version == Some(version) {
            return;
        }
        self.version = Some(version);
        let Ok(runs) = self.state.store.list_runs().await else {
            return;
        };
        for run in runs {
            if !is_terminal(run.status.as_str()) && !self.going.contains(&run.id) {
                self.queue_run(&run.id.clone(), Some(&run));
            }
        }
    }
}

/// Server-sent events of the runs named in `runs` (every run when absent). For each named
/// run, first its `status` (and `end` if it has ended, `end` alone if there is no such run);
/// then `status`, `generation` and `end` events as they come. The stream stays open.
#[utoipa::path(
    get, path = "/events", operation_id = "events",
    summary = "Server-sent events of many runs in one connection (the dashboard opens one per browser): the events of `/api/runs/{id}/events`, each naming its run (`status`: the run; `generation`: a point with run_id; `end`: run_id and the final status, `deleted` for a deleted run). Each run named in `runs` gets its `status` first (and `end` if it has ended). The stream stays open after runs end",
    params(EventsQuery),
    responses(
        (status = 200, description = "an event stream", content_type = "text/event-stream", body = super::api_doc::StreamEventSchema),
        super::api_doc::BadRequest, super::api_doc::Invalid,
    )
)]
pub(crate) async fn stream(
    State(state): State<SharedState>,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let only: Option<HashSet<String>> = query.runs.as_deref().map(|list| {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    });
    if let Some(only) = &only {
        // A run id is a UUID; anything else names no run, and PostgreSQL would refuse a NUL
        // byte in it with a server error rather than find nothing.
        if let Some(bad) = only.iter().find(|id| uuid::Uuid::parse_str(id).is_err()) {
            return Err(ApiError::invalid(
                "runs",
                format!("{:?} is not a run id (a UUID)", crate::game::excerpt(bad)),
            ));
        }
        if only.len() > MAX_RUNS {
            return Err(ApiError::invalid(
                "runs",
                format!("at most {MAX_RUNS} run ids, got {}", only.len()),
            ));
        }
    }
    let seat = stream_seat(&state)?;
    // Subscribe before reading the runs so that nothing between the two is missed.
    let out = Outbox::new(state.events.subscribe(), RECHECK, Some(DISCOVER));
    let mut follow = Follow {
        state: state.clone(),
        only: only.clone(),
        going: HashSet::new(),
        ended_runs: HashSet::new(),
        followings: HashMap::new(),
        version: None,
        out,
    };
    let mut named: Vec<String> = only.into_iter().flatten().collect();
    named.sort();
    for id in named {
        let run = state.store.get_run(&id).await?;
        follow.queue_run(&id, run.as_ref());
    }
    Ok(sse(&state, follow, seat))
}
