//! What the one-run stream (`GET /api/runs/{id}/events`) and the many-runs stream
//! (`GET /api/events`) share: the events' form, and the loop that hands out what is queued and
//! otherwise waits for a broadcast run event or a timer.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast::{error::RecvError, Receiver};
use tokio::time::{Instant, Interval, MissedTickBehavior};

use tokio::sync::OwnedSemaphorePermit;

use super::error::{ApiError, ApiResult};
use super::state::{RunEvent, SharedState};

pub(super) fn sse_event(kind: &str, data: &Value) -> Event {
    Event::default().event(kind).data(data.to_string())
}

pub(super) fn is_terminal(status: &str) -> bool {
    matches!(status, "finished" | "failed" | "cancelled")
}

/// An `end` event's data: the run and how it ended (`deleted` for a deleted run).
#[derive(Serialize)]
struct RunEnd<'a> {
    run_id: &'a str,
    status: &'a str,
}

/// The last event of a run: it has ended (or was deleted), nothing more of it follows.
pub(super) fn end_event(id: &str, status: &str) -> Event {
    let data = serde_json::to_value(RunEnd { run_id: id, status }).unwrap_or(Value::Null);
    sse_event("end", &data)
}

/// A stream's events not yet sent, and what wakes it.
pub(super) struct Outbox {
    pub queue: VecDeque<Event>,
    /// Nothing more comes once the queue is sent.
    pub ended: bool,
    rx: Receiver<RunEvent>,
    /// When the stream reads its runs from the database: a run may end where this process
    /// hears nothing of it (the broadcast lagged, or another server ended it).
    recheck: Interval,
    discover: Option<Interval>,
}

impl Outbox {
    /// An outbox on `rx` (subscribed before the stream's first read, so that nothing between
    /// the two is missed) that rechecks every `recheck` from now on and, with `discover`,
    /// also looks for new runs that often, from now.
    pub(crate) fn new(
        rx: Receiver<RunEvent>,
        recheck: Duration,
        discover: Option<Duration>,
    ) -> Outbox {
        let mut recheck = tokio::time::interval_at(Instant::now() + recheck, recheck);
        recheck.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let discover = discover.map(|every| {
            let mut discover = tokio::time::interval(every);
            discover.set_missed_tick_behavior(MissedTickBehavior::Delay);
            discover
        });
        Outbox {
            queue: VecDeque::new(),
            ended: false,
            rx,
            recheck,
            discover,
        }
    }
}

/// A stream of run events: what it does with a broadcast event and at its timers.
pub(super) trait RunStream: Send + Sized + 'static {
    fn outbox(&mut self) -> &mut Outbox;
    /// A run event broadcast in this process.
    fn take(&mut self, ev: RunEvent);
    /// Reads the runs it follows from the database (also after missing events).
    fn recheck(&mut self) -> impl Future<Output = ()> + Send;
    /// Looks for runs to follow that went elsewhere (with an outbox that discovers).
    fn discover(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

enum Wake {
    Event(RunEvent),
    Recheck,
    Discover,
    Closed,
}

async fn next_event<S: RunStream>(s: &mut S) -> Option<Event> {
    loop {
        let out = s.outbox();
        if let Some(event) = out.queue.pop_front() {
            return Some(event);
        }
        if out.ended {
            return None;
        }
        let (rx, recheck, discover) = (&mut out.rx, &mut out.recheck, &mut out.discover);
        let discover = async move {
            match discover {
                Some(discover) => discover.tick().await,
                None => std::future::pending().await,
            }
        };
        let wake = tokio::select! {
            msg = rx.recv() => match msg {
                Ok(ev) => Wake::Event(ev),
                // A slow client missed some events: the runs it follows are read again.
                Err(RecvError::Lagged(_)) => Wake::Recheck,
                Err(RecvError::Closed) => Wake::Closed,
            },
            _ = recheck.tick() => Wake::Recheck,
            _ = discover => Wake::Discover,
        };
        match wake {
            Wake::Event(ev) => s.take(ev),
            Wake::Recheck => s.recheck().await,
            Wake::Discover => s.discover().await,
            Wake::Closed => s.outbox().ended = true,
        }
    }
}

/// A seat for one more event stream, or 503 with `Retry-After` when every one is taken:
/// streams last for hours, and without a cap they alone could hold every connection.
pub(super) fn stream_seat(state: &SharedState) -> ApiResult<OwnedSemaphorePermit> {
    state
        .event_streams
        .clone()
        .try_acquire_owned()
        .map_err(|_| {
            ApiError::busy(
                "every event stream this server keeps is open (--max-event-streams): try again \
             shortly, or watch fewer runs at once",
                super::limits::CROWDED_RETRY_AFTER_SECS,
            )
        })
}

/// The server-sent events of `follow`, ended when the server stops (so that its graceful
/// shutdown is not held open by browsers watching runs). The stream holds `seat` while open.
pub(super) fn sse<S: RunStream>(
    state: &SharedState,
    follow: S,
    seat: OwnedSemaphorePermit,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stream = stream::unfold((follow, seat), |(mut follow, seat)| async move {
        let event = next_event(&mut follow).await?;
        Some((Ok(event), (follow, seat)))
    });
    let stream = stream.take_until(state.stopping());
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
