//! What every handler, worker and stream of one server process shares: the [`AppState`]
//! (store, pools, event channel, permits, settings), the [`RunEvent`]s it broadcasts, and the
//! limits the routes are built with. Kept apart from `mod.rs`, which starts the server and
//! routes requests to the handlers, so that the handlers depend on the state and not on the
//! routing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use tokio::sync::{broadcast, watch, Semaphore};

use crate::agents::FileAccess;
use crate::runner::ladder::LadderSettings;
use crate::runner::{BatchQueue, Executor};
use crate::store::Store;

/// Moves and matches computed at a time: one for each interactive thread.
pub(crate) const COMPUTE_SLOTS: usize = 2;
/// Tournaments and SPRT tests played at a time at most, each on its own part of the
/// tournaments' threads beside the runs'; more wait, `queued`. Fewer with fewer threads.
pub(crate) const BACKGROUND_SLOTS: usize = 2;

/// Largest request body: an export document used as an agent fits with room to spare.
pub(crate) const MAX_BODY_BYTES: usize = 1 << 20;

/// A change a client may want to hear about, broadcast to the event streams.
#[derive(Clone, Debug)]
pub(crate) struct RunEvent {
    pub run_id: String,
    /// `generation`, `status`, or `deleted` (no data: ends the run's streams).
    pub kind: &'static str,
    pub data: serde_json::Value,
}

/// Shared by every handler and worker.
pub(crate) struct AppState {
    pub store: Store,
    /// Plays moves and matches, at normal priority: requests a person waits for answer within
    /// a second even while the game pool keeps every core busy with runs. (Jobs given to a
    /// busy pool from outside wait until its threads run out of their own work.)
    pub interactive: Arc<rayon::ThreadPool>,
    pub events: broadcast::Sender<RunEvent>,
    /// The runs this process's event streams follow and what each was last sent: see
    /// `run_events::emit`, the only sender of run events.
    pub follows: Mutex<Follows>,
    /// Requests that compute (moves, matches, tournaments) hold a permit, so no flood of them
    /// can take the machine from the runs.
    pub compute: Arc<Semaphore>,
    /// Seats for event streams (`Limits::max_event_streams`): a stream holds one while open.
    pub event_streams: Arc<Semaphore>,
    /// Plays tournaments and SPRT tests: half the cores (at least one thread), at the game
    /// pool's lower priority, cut into a pool for each that plays at once. Their own share: a
    /// tournament of hours never holds a thread of the runs' pool, and the runs none of its;
    /// long ones cannot take the permits of moves and matches.
    pub(crate) background: super::background::BackgroundPools,
    /// The tournaments and SPRT tests this process plays: a stopping server waits for them (they see the
    /// stop, and store themselves as failed) as it waits for its runs.
    pub tournament_tasks: tokio::sync::Mutex<tokio::task::JoinSet<()>>,
    /// `GET /api/runs` rendered at a store version: dashboards poll it, and rendering every
    /// run's config for each poll would cost more than everything else the request does. With
    /// the version, whether it is the summary (`fields=summary`) or every field.
    pub runs_cache: std::sync::RwLock<Option<(i64, bool, axum::body::Bytes)>>,
    /// The most bytes of records the queued and running runs may have still to write.
    pub max_pending_storage_bytes: u64,
    pub token: Option<String>,
    pub static_dir: Option<PathBuf>,
    /// Which files the specs of requests may name: none, or names in the models folder.
    pub files: FileAccess,
    /// `--allow-origin`, normalised by `guard::normalize_origin`.
    pub allowed_origins: Vec<String>,
    /// The server's own origins, whose pages may change state: `--public-origin` or the
    /// bound address's, normalised.
    pub public_origins: Vec<String>,
    /// This process's name in the runs it leases (`runs.owner`).
    pub owner: String,
    /// The game batch queue, on PostgreSQL: GA runs this process owns play their fitness
    /// games through it.
    pub queue: Option<BatchQueue>,
    /// Requests answered since the last summary line in the log.
    pub requests: Arc<RequestCounts>,
    /// Set once when the process starts to stop: run workers hand their runs back, event
    /// streams end, the batch worker stops.
    pub shutdown: watch::Sender<bool>,
    /// Claims queued runs and steps them (the run workers are its loops); a cancel or delete
    /// through this process stops the run's games at once through it.
    pub executor: Arc<Executor>,
    /// What `GET /metrics` counts of this process's own work.
    pub counters: ProcessCounters,
    /// The ladder's share of the cores and the depth of its games.
    pub ladder: LadderSettings,
}

impl AppState {
    /// Completes once the process is stopping.
    pub(crate) fn stopping(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.shutdown.subscribe();
        async move {
            let _ = rx.wait_for(|stop| *stop).await;
        }
    }

    pub(crate) fn is_stopping(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Stops the games of run `id` if this process evolves it.
    pub(crate) fn stop_run_here(&self, id: &str) {
        self.executor.stop_here(id);
    }
}

pub(crate) type SharedState = Arc<AppState>;

/// Requests answered, by class, since the last summary (`log_summary`).
#[derive(Default)]
pub(crate) struct RequestCounts {
    ok: std::sync::atomic::AtomicU64,
    client_errors: std::sync::atomic::AtomicU64,
    server_errors: std::sync::atomic::AtomicU64,
}

impl RequestCounts {
    pub(super) fn record(&self, status: StatusCode) {
        use std::sync::atomic::Ordering::Relaxed;
        let counter = if status.is_server_error() {
            &self.server_errors
        } else if status.is_client_error() {
            &self.client_errors
        } else {
            &self.ok
        };
        counter.fetch_add(1, Relaxed);
    }

    pub(super) fn take(&self) -> [u64; 3] {
        use std::sync::atomic::Ordering::Relaxed;
        [
            self.ok.swap(0, Relaxed),
            self.client_errors.swap(0, Relaxed),
            self.server_errors.swap(0, Relaxed),
        ]
    }
}

/// Counters this process keeps between scrapes.
#[derive(Debug, Default)]
pub(crate) struct ProcessCounters {
    /// Fitness and panel games of the generations and checkpoints this process wrote.
    pub games: AtomicU64,
    /// Generations and checkpoints this process wrote.
    pub generations: AtomicU64,
}

impl ProcessCounters {
    pub(crate) fn generation_written(&self, games: u64) {
        self.generations.fetch_add(1, Ordering::Relaxed);
        self.games.fetch_add(games, Ordering::Relaxed);
    }
}

/// What this process's streams of one run have been sent.
pub(crate) struct Followed {
    pub(super) streams: usize,
    /// The last generation broadcast (-1: none).
    pub(super) generation: i64,
    /// The last status broadcast, as `run_events::status_key` reads it.
    pub(super) status: String,
}

/// The runs this process's streams follow, for [`AppState::follows`].
pub(crate) type Follows = HashMap<String, Followed>;
