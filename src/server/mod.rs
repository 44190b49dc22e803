//! The HTTP service (DESIGN.md section 7): axum routes under `/api`, run workers, server-sent
//! events, the OpenAPI document and the dashboard's static files. Wires the GA, the agents and
//! the store together; none of them knows about it.
//!
//! - [`error`]: the JSON error shape and the body and query extractors that answer in it.
//! - [`guard`]: what every request passes first: the origin of a state change, the token, CORS.
//! - [`limits`]: connections, timeouts and the body limit, and the loop that serves them.
//! - [`runs`]: runs, generations, export and the event stream.
//! - [`run_events`]: run events from every server on the database, each sent once.
//! - [`events`]: the event streams of many runs in one connection (one per browser).
//! - [`agents`], [`moves`], [`matches`](mod@matches), [`tournaments`]: the agent catalogue,
//!   moves and positions, matches and tournaments.
//! - [`workers`]: tokio tasks that claim queued runs and step the GA on a rayon pool.
//! - [`openapi`]: the OpenAPI 3.1 document, its request schemas generated from the types.
//! - [`assets`]: the dashboard, embedded at compile time or read from `--static-dir`.

pub mod agents;
pub mod assets;
pub mod error;
pub mod events;
pub mod guard;
pub mod limits;
pub mod matches;
pub mod moves;
pub mod openapi;
pub mod run_events;
pub mod runs;
pub mod tournaments;
pub mod workers;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use axum::extract::{DefaultBodyLimit, OriginalUri, State};
use axum::http::{Method, StatusCode};
use axum::middleware;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use tokio::sync::{broadcast, watch, Notify, Semaphore};
use tower_http::trace::{DefaultMakeSpan, TraceLayer};
use tracing::Level;

use crate::agents::FileAccess;
use crate::game::excerpt;
use crate::store::queue::{start_batch_worker, BatchEnv, BatchQueue};
use crate::store::{Backend, Store};
use error::ApiError;

/// Moves and matches computed at a time: one for each interactive thread.
pub const COMPUTE_SLOTS: usize = 2;
/// Tournaments played at a time, beside the runs on the game pool.
pub const BACKGROUND_SLOTS: usize = 2;

/// Largest request body: an export document used as an agent fits with room to spare.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// A server setting out of range: the caller's mistake.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidServerConfig(pub String);

/// Everything [`start`] needs (`kalah-tuner serve` builds it from its flags).
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub bind: String,
    pub database_url: String,
    pub workers: usize,
    pub threads: Option<usize>,
    pub static_dir: Option<PathBuf>,
    /// Bearer token required by POST and DELETE routes (env `KALAH_TUNER_TOKEN`).
    pub token: Option<String>,
    /// The folder whose files clients may name as `a3c` models and export documents
    /// (`--models-dir`); none: clients name no files at all.
    pub models_dir: Option<PathBuf>,
    /// Web origins besides the server's own whose pages may change state and get CORS
    /// headers (`--allow-origin`), as `scheme://host[:port]`.
    pub allow_origins: Vec<String>,
    /// The origins (`scheme://host[:port]`) at which browsers open this server's own pages
    /// (`--public-origin`); empty: the bound address's, see [`guard::default_public_origins`].
    pub public_origins: Vec<String>,
    /// On PostgreSQL, whether this process also plays game batches from the job queue on its
    /// game threads (off: it only coordinates its runs, and `kalah-tuner worker` processes
    /// play every game).
    pub play_batches: bool,
    /// Connections and request timeouts (`--max-connections`; the timeouts are fixed).
    pub limits: limits::Limits,
}

impl ServerConfig {
    /// The defaults of `kalah-tuner serve` for `bind` and `database_url`.
    pub fn new(bind: impl Into<String>, database_url: impl Into<String>) -> ServerConfig {
        ServerConfig {
            bind: bind.into(),
            database_url: database_url.into(),
            workers: 1,
            threads: None,
            static_dir: None,
            token: None,
            models_dir: None,
            allow_origins: Vec::new(),
            public_origins: Vec::new(),
            play_batches: true,
            limits: limits::Limits::default(),
        }
    }
}

pub const DEFAULT_DATABASE_URL: &str = "sqlite://kalah-tuner.db";

/// A change a client may want to hear about, broadcast to the event streams.
#[derive(Clone, Debug)]
pub struct RunEvent {
    pub run_id: String,
    /// `generation`, `status`, or `deleted` (no data: ends the run's streams).
    pub kind: &'static str,
    pub data: serde_json::Value,
}

/// Shared by every handler and worker.
pub struct AppState {
    pub store: Store,
    /// Plays the games of runs, matches and tournaments, at a lower CPU priority than the
    /// HTTP threads so that a busy machine still answers requests promptly.
    pub pool: Arc<rayon::ThreadPool>,
    /// Plays moves and matches, at normal priority: requests a person waits for answer within
    /// a second even while the game pool keeps every core busy with runs. (Jobs given to a
    /// busy pool from outside wait until its threads run out of their own work.)
    pub interactive: Arc<rayon::ThreadPool>,
    pub events: broadcast::Sender<RunEvent>,
    /// The runs this process's event streams follow and what each was last sent: see
    /// [`run_events::emit`], the only sender of run events.
    pub follows: Mutex<run_events::Follows>,
    /// Wakes idle workers when a run is queued.
    pub wake: Notify,
    /// Requests that compute (moves, matches, tournaments) hold a permit, so no flood of them
    /// can take the machine from the runs.
    pub compute: Arc<Semaphore>,
    /// The same for tournaments, which play on the game pool: long ones cannot take the
    /// permits of moves and matches.
    pub background: Arc<Semaphore>,
    /// The tournaments this process plays: a stopping server waits for them (they see the
    /// stop, and store themselves as failed) as it waits for its runs.
    pub tournament_tasks: tokio::sync::Mutex<tokio::task::JoinSet<()>>,
    /// `GET /api/runs` rendered at a store version: dashboards poll it, and rendering every
    /// run's config for each poll would cost more than everything else the request does.
    pub runs_cache: std::sync::RwLock<Option<(i64, axum::body::Bytes)>>,
    pub token: Option<String>,
    pub static_dir: Option<PathBuf>,
    /// Which files the specs of requests may name: none, or names in the models folder.
    pub files: FileAccess,
    /// `--allow-origin`, normalised by [`guard::normalize_origin`].
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
}

impl AppState {
    /// Completes once the process is stopping.
    pub fn stopping(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.shutdown.subscribe();
        async move {
            let _ = rx.wait_for(|stop| *stop).await;
        }
    }

    pub fn is_stopping(&self) -> bool {
        *self.shutdown.borrow()
    }
}

pub type SharedState = Arc<AppState>;

/// Requests answered, by class, since the last summary (`log_summary`).
#[derive(Default)]
pub struct RequestCounts {
    ok: std::sync::atomic::AtomicU64,
    client_errors: std::sync::atomic::AtomicU64,
    server_errors: std::sync::atomic::AtomicU64,
}

impl RequestCounts {
    fn record(&self, status: StatusCode) {
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

    fn take(&self) -> [u64; 3] {
        use std::sync::atomic::Ordering::Relaxed;
        [
            self.ok.swap(0, Relaxed),
            self.client_errors.swap(0, Relaxed),
            self.server_errors.swap(0, Relaxed),
        ]
    }
}

/// How often the request summary is logged (when there were requests).
const SUMMARY_EVERY: Duration = Duration::from_secs(60);

/// One INFO line a minute with the requests answered, while per-request lines are DEBUG.
async fn log_summary(state: SharedState) {
    let mut tick = tokio::time::interval(SUMMARY_EVERY);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = state.stopping() => return,
        }
        let [ok, client_errors, server_errors] = state.requests.take();
        if ok + client_errors + server_errors > 0 {
            tracing::info!(
                ok,
                client_errors,
                server_errors,
                "requests answered in the last {} s",
                SUMMARY_EVERY.as_secs()
            );
        }
    }
}

/// A started server.
pub struct RunningServer {
    pub addr: SocketAddr,
    pub state: SharedState,
    serve: tokio::task::JoinHandle<()>,
    workers: Vec<tokio::task::JoinHandle<()>>,
    batch_worker: Option<tokio::task::JoinHandle<()>>,
}

/// How long a stopping process waits for its run workers to hand their runs back (they stop
/// the generation under way within a game per thread) before it stops waiting.
const STOP_RUNS: Duration = Duration::from_secs(8);

impl RunningServer {
    /// Stops as on SIGTERM: see [`RunningServer::wait`].
    pub async fn shutdown(self) {
        self.state.shutdown.send_replace(true);
        self.wait().await;
    }

    /// Serves until the process is told to stop (Ctrl-C, SIGTERM or [`RunningServer::shutdown`]),
    /// then stops cleanly within about 10 seconds: no new requests, event streams closed, the
    /// generations under way abandoned and their runs handed back to the queue (another
    /// process resumes them at once), the tournaments it plays stopped and stored as failed,
    /// the batch worker's batch finished or handed back, and the database closed.
    pub async fn wait(mut self) {
        let _ = (&mut self.serve).await;
        self.stop_workers_and_close().await;
    }

    async fn stop_workers_and_close(&mut self) {
        self.state.shutdown.send_replace(true);
        let deadline = tokio::time::Instant::now() + STOP_RUNS;
        for w in self.workers.drain(..) {
            let abort = w.abort_handle();
            if tokio::time::timeout_at(deadline, w).await.is_err() {
                tracing::warn!("a run worker did not stop in time");
                abort.abort();
            }
        }
        // Tournaments saw the stop too: each stores itself failed once its games under way end.
        let mut tournaments = std::mem::take(&mut *self.state.tournament_tasks.lock().await);
        loop {
            match tokio::time::timeout_at(deadline, tournaments.join_next()).await {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => {
                    tracing::warn!(
                        count = tournaments.len(),
                        "tournaments did not stop in time; they are marked failed once their \
                         heartbeat is stale"
                    );
                    tournaments.abort_all();
                    break;
                }
            }
        }
        if let Some(batches) = self.batch_worker.take() {
            let abort = batches.abort_handle();
            if tokio::time::timeout(Duration::from_secs(4), batches)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        self.state.store.close().await;
    }
}

fn rayon_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    named_game_pool(threads, "kalah-games")
}

fn named_game_pool(threads: Option<usize>, name: &'static str) -> Result<rayon::ThreadPool> {
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(move |i| format!("{name}-{i}"))
        .start_handler(|_| lower_priority())
        .build()
        .with_context(|| format!("starting the {name} threads"))
}

/// Up to two threads at normal priority for interactive requests ([`compute`]).
fn interactive_pool() -> Result<rayon::ThreadPool> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(2);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("kalah-interactive-{i}"))
        .build()
        .context("starting the interactive game threads")
}

/// Game threads yield to the HTTP threads: on Linux `nice` applies to the calling thread.
fn lower_priority() {
    #[cfg(unix)]
    // SAFETY: nice only changes the scheduling priority of the calling thread.
    unsafe {
        libc::nice(10);
    }
}

/// Connects the database (running migrations), requeues runs a dead process left running,
/// binds and starts serving and the workers.
pub async fn start(config: ServerConfig) -> Result<RunningServer> {
    if config.workers == 0 || config.workers > 64 {
        anyhow::bail!(InvalidServerConfig(format!(
            "workers must be 1 to 64, got {}",
            config.workers
        )));
    }
    let files = match &config.models_dir {
        None => FileAccess::None,
        Some(dir) => FileAccess::under_dir(dir)
            .map_err(|e| InvalidServerConfig(format!("--models-dir: {e}")))?,
    };
    let allowed_origins = config
        .allow_origins
        .iter()
        .map(|o| {
            guard::normalize_origin(o).ok_or_else(|| {
                InvalidServerConfig(format!(
                    "--allow-origin: {} is not an origin (http[s]://HOST[:PORT], no path)",
                    excerpt(o)
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let configured_public = config
        .public_origins
        .iter()
        .map(|o| {
            guard::normalize_origin(o).ok_or_else(|| {
                InvalidServerConfig(format!(
                    "--public-origin: {} is not an origin (http[s]://HOST[:PORT], no path)",
                    excerpt(o)
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let store = Store::connect(&config.database_url)
        .await
        .with_context(|| format!("opening the database {}", redact(&config.database_url)))?;
    // Only those whose server stopped beating: another server's live ones play on.
    let interrupted = store.fail_abandoned_tournaments().await?;
    if interrupted > 0 {
        tracing::info!(
            count = interrupted,
            "tournaments left running by a stopped process: marked failed"
        );
    }
    // Runs another process left running are not touched here: they are taken over by
    // `claim_next` once their owner's lease is stale (it died), and never while it lives.
    let queue = match store.backend() {
        Backend::Postgres => Some(
            BatchQueue::connect(&config.database_url)
                .await
                .context("opening the game batch queue")?,
        ),
        Backend::Sqlite => None,
    };
    let listener = tokio::net::TcpListener::bind(&config.bind)
        .await
        .with_context(|| format!("binding {}", config.bind))?;
    let addr = listener.local_addr()?;
    let public_origins = if configured_public.is_empty() {
        if addr.ip().is_unspecified() {
            tracing::warn!(
                "bound to {addr}: pages opened at any address but this machine's loopback one \
                 cannot change anything until --public-origin names it"
            );
        }
        guard::default_public_origins(addr)
    } else {
        configured_public
    };
    tracing::info!(
        "public origins (pages that may change state): {}",
        public_origins.join(", ")
    );
    let owner = process_name("serve");
    let (events, _) = broadcast::channel(1024);
    let (shutdown, _) = watch::channel(false);
    let state = Arc::new(AppState {
        store,
        pool: Arc::new(rayon_pool(config.threads)?),
        interactive: Arc::new(interactive_pool()?),
        events,
        follows: Mutex::new(HashMap::new()),
        wake: Notify::new(),
        compute: Arc::new(Semaphore::new(COMPUTE_SLOTS)),
        background: Arc::new(Semaphore::new(BACKGROUND_SLOTS)),
        tournament_tasks: tokio::sync::Mutex::new(tokio::task::JoinSet::new()),
        runs_cache: std::sync::RwLock::new(None),
        token: config.token.clone(),
        static_dir: config.static_dir.clone(),
        files,
        allowed_origins,
        public_origins,
        requests: Arc::new(RequestCounts::default()),
        owner,
        queue,
        shutdown,
    });
    let app = router(state.clone(), config.limits);
    let signalled = state.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = shutdown_signal() => {
                tracing::info!("stopping: handing runs back, closing event streams");
                signalled.shutdown.send_replace(true);
            }
            _ = signalled.stopping() => {}
        }
    });
    let stopping = state.stopping();
    let limits = config.limits;
    let serve = tokio::spawn(limits::serve(listener, app, limits, stopping));
    tokio::spawn(log_summary(state.clone()));
    tokio::spawn(run_events::watch(state.clone()));
    let workers = (0..config.workers)
        .map(|i| tokio::spawn(workers::worker(state.clone(), i)))
        .collect();
    let batch_worker = match (&state.queue, config.play_batches) {
        (Some(queue), true) => {
            // Batches play on a pool of their own: a coordinator's generation blocks a thread
            // of the runs' pool while it waits for its batches, and a game thread that steals
            // that wait while its own batch is under way would wait for itself (it did, in
            // tests/server_api.rs's cancel-and-resume test under load).
            let env = BatchEnv {
                store: state.store.clone(),
                pool: Arc::new(named_game_pool(config.threads, "kalah-batches")?),
                name: state.owner.clone(),
            };
            Some(
                start_batch_worker(queue, env, state.stopping())
                    .await
                    .context("starting the batch worker")?,
            )
        }
        _ => None,
    };
    Ok(RunningServer {
        addr,
        state,
        serve,
        workers,
        batch_worker,
    })
}

/// A name for this process in leases and batch results: its role, host and process id, and a
/// random suffix (process ids repeat across containers).
pub fn process_name(role: &str) -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!("{role}@{host}:{}:{}", std::process::id(), &suffix[..8])
}

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

pub fn router(state: SharedState, limits: limits::Limits) -> Router {
    let counts = state.requests.clone();
    let cors = guard::cors(&state.allowed_origins);
    let api = Router::new()
        .route("/runs", get(runs::list).post(runs::create))
        .route("/runs/estimate", post(runs::estimate))
        .route(
            "/runs/{id}",
            get(runs::show).patch(runs::describe).delete(runs::delete),
        )
        .route("/runs/{id}/cancel", post(runs::cancel))
        .route("/runs/{id}/resume", post(runs::resume))
        .route("/runs/{id}/generations", get(runs::generations))
        .route("/runs/{id}/generations/{g}", get(runs::generation))
        .route("/runs/{id}/export", get(runs::export))
        .route("/runs/{id}/events", get(runs::events))
        .route("/events", get(events::stream))
        .route("/agents", get(agents::catalogue))
        .route("/config-schema", get(runs::config_schema))
        .route("/move", post(moves::best_move))
        .route("/position", post(moves::position_move))
        .route("/position/start", get(moves::position_start))
        .route("/matches", post(matches::play_match))
        .route(
            "/tournaments",
            get(tournaments::list).post(tournaments::start),
        )
        .route("/tournaments/{id}", get(tournaments::show))
        .route("/tournaments/{id}/cancel", post(tournaments::cancel))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/openapi.json", get(openapi::document))
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(api_not_found);
    let mut app = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .method_not_allowed_fallback(method_not_allowed)
        .nest("/api", api)
        .fallback(assets::serve)
        .layer(middleware::from_fn_with_state(state.clone(), guard::auth))
        .layer(middleware::from_fn_with_state(state.clone(), guard::origin));
    let body_read = limits.body_read;
    app = app.layer(middleware::from_fn(move |req, next| {
        limits::refuse_large_and_stamp(body_read, req, next)
    }));
    // Outside the checks, so that an allowed origin's pages can read their refusals too.
    if let Some(cors) = cors {
        app = app.layer(cors);
    }
    app.layer(middleware::from_fn(error::with_request_id))
        .layer(middleware::from_fn(guard::security_headers))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(
            // A line per request at DEBUG: at INFO a dashboard polling the runs would fill the
            // log. Refused and failed requests, and a summary a minute (`log_summary`), stay
            // at INFO. The span stays INFO: it prints nothing itself, and gives those lines
            // (and the handlers' own) the method and path.
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
                .on_request(())
                .on_response(
                    move |response: &axum::http::Response<axum::body::Body>,
                          latency: Duration,
                          _span: &tracing::Span| {
                        let status = response.status();
                        counts.record(status);
                        let ms = latency.as_secs_f64() * 1e3;
                        if status.is_client_error() || status.is_server_error() {
                            tracing::info!(
                                status = status.as_u16(),
                                latency_ms = ms,
                                "request refused or failed"
                            );
                        } else {
                            tracing::debug!(status = status.as_u16(), latency_ms = ms, "request");
                        }
                    },
                ),
        )
        .with_state(state)
}

/// Runs `f` (a move, a match) on the interactive pool, holding a compute permit.
pub(crate) async fn compute<T: Send + 'static>(
    state: &SharedState,
    budget: &crate::search::Budget,
    f: impl FnOnce() -> T + Send + 'static,
) -> error::ApiResult<T> {
    // The budget's clock started with the request: the wait for a slot is part of its
    // deadline, and it is short, since a person is waiting for the answer.
    let patience = budget.remaining().map_or(limits::MAX_COMPUTE_WAIT, |left| {
        left.min(limits::MAX_COMPUTE_WAIT)
    });
    let permit = match tokio::time::timeout(patience, state.compute.clone().acquire_owned()).await
    {
        Ok(permit) => permit.map_err(ApiError::internal)?,
        Err(_) => {
            return Err(ApiError::busy(
                format!(
                    "every compute slot is taken by other moves and matches (at most {COMPUTE_SLOTS} at a time): try again shortly"
                ),
                limits::COMPUTE_RETRY_AFTER_SECS,
            ))
        }
    };
    run_holding(permit, state.interactive.clone(), f).await
}

/// Runs `f` (a tournament) on the game pool beside the runs, holding a background permit.
/// The wait for a permit counts against `budget`: a tournament whose deadline passes, or that
/// is cancelled, while it waits runs `f` at once without a permit, and `f` stops under the
/// spent budget with its reason.
pub(crate) async fn compute_in_background<T: Send + 'static>(
    state: &SharedState,
    budget: &crate::search::Budget,
    f: impl FnOnce() -> T + Send + 'static,
) -> error::ApiResult<T> {
    // A budget has no waker: look at it a few times a second while waiting.
    const LOOK: Duration = Duration::from_millis(200);
    let permit = loop {
        let wait = budget.remaining().map_or(LOOK, |left| left.min(LOOK));
        match tokio::time::timeout(wait, state.background.clone().acquire_owned()).await {
            Ok(permit) => break Some(permit.map_err(ApiError::internal)?),
            Err(_) if budget.check_now().is_err() => break None,
            Err(_) => {}
        }
    };
    match permit {
        Some(permit) => run_holding(permit, state.pool.clone(), f).await,
        None => tokio::task::spawn_blocking(f)
            .await
            .map_err(ApiError::internal),
    }
}

/// The permit goes with the work, not with the request: a request whose client went away is
/// dropped at once, but its slot is free only once its computation has seen the cancel.
async fn run_holding<T: Send + 'static>(
    permit: tokio::sync::OwnedSemaphorePermit,
    pool: Arc<rayon::ThreadPool>,
    f: impl FnOnce() -> T + Send + 'static,
) -> error::ApiResult<T> {
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        pool.install(f)
    })
    .await
    .map_err(ApiError::internal)
}

/// Liveness: the process answers. It asks the database nothing, so a slow or lost database
/// never makes an orchestrator restart a server that would only wait for it again.
async fn healthz(State(state): State<SharedState>) -> Json<serde_json::Value> {
    Json(json!({"status": "ok", "database": state.store.backend().name()}))
}

/// How long `/readyz` waits for the database before it answers 503.
pub const READY_TIMEOUT: Duration = Duration::from_secs(1);

/// Readiness: the database answers a query within [`READY_TIMEOUT`], else 503 at once (a
/// pool waiting to connect would otherwise hold the probe for its whole acquire timeout).
async fn readyz(State(state): State<SharedState>) -> Result<Json<serde_json::Value>, ApiError> {
    let unready = |why: &str| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            format!("not ready: {why}"),
        )
    };
    match tokio::time::timeout(READY_TIMEOUT, state.store.ping()).await {
        Ok(Ok(())) => Ok(Json(
            json!({"status": "ready", "database": state.store.backend().name()}),
        )),
        Ok(Err(e)) => {
            // The detail (a host, a driver's message) goes to the log only.
            tracing::warn!("not ready: the database answered with an error: {e}");
            Err(unready("the database answered with an error"))
        }
        Err(_) => {
            tracing::warn!("not ready: the database did not answer within {READY_TIMEOUT:?}");
            Err(unready("the database did not answer within 1 s"))
        }
    }
}

// `OriginalUri`, not `Uri`: inside the nested `/api` router `Uri` has lost its prefix, and
// the client should read back the path it sent.
async fn api_not_found(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::not_found(format!("no route {method} {}", excerpt(uri.path())))
}

async fn method_not_allowed(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        None,
        format!(
            "method {method} not allowed on {} (the Allow header lists those that are)",
            excerpt(uri.path())
        ),
    )
}

/// Logs to standard error; `RUST_LOG` sets the level (default: info for this crate and the
/// request log).
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("kalah_tuner=info,tower_http=info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
