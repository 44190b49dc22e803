//! The HTTP service (docs/how-to/run-a-server.md): axum routes under `/api`, server-sent events, the
//! OpenAPI document and the dashboard's static files, over the store and the runner's
//! `Executor`, whose run workers it starts; none of them knows
//! about it.
//!
//! - `state`: what the handlers, workers and streams share (`AppState`); `routes`: the
//!   router and the probes; `compute`: the permits moves, matches and tournaments hold;
//!   `background`: the tournaments' threads, a pool for each that plays at once.
//! - `schemas`: the OpenAPI schemas of request fields that the types cannot describe.
//! - `error`: the JSON error shape and the request id a 500 names; `extract`: the body, query
//!   and path extractors that answer in that shape, and the checks every body passes.
//! - `guard`: what every request passes first: the host it names, the origin of a state
//!   change, the token, CORS.
//! - `limits`: connections (in all and per peer), event streams, timeouts and the body
//!   limit, and the loop that serves them.
//! - `runs`: runs, generations, export and the event stream.
//! - `run_events`: what the executor reports of the runs it steps, and run events from
//!   every server on the database, each sent once.
//! - `events`: the event streams of many runs in one connection (one per browser).
//! - `agents`, `moves`, `matches`, `tournaments`: the agent catalogue,
//!   moves and positions, matches and tournaments.
//! - `metrics`: `GET /metrics`, for Prometheus.
//! - `openapi`: the OpenAPI 3.1 document, generated from the handlers' `#[utoipa::path]`
//!   through the router (`routes`) and from the request and answer types.
//!   `api_doc`: the error answers and written schemas the handlers' annotations name.
//! - `assets`: the dashboard, embedded at compile time or read from `--static-dir`.

pub(crate) mod agents;
pub(crate) mod api_doc;
pub(crate) mod assets;
mod background;
pub(crate) mod batch_workers;
pub(crate) mod compute;
pub(crate) mod error;
pub(crate) mod event_stream;
pub(crate) mod events;
pub(crate) mod extract;
pub(crate) mod guard;
pub(crate) mod health;
pub(crate) mod ladder;
pub(crate) mod limits;
pub(crate) mod matches;
pub(crate) mod metrics;
pub(crate) mod moves;
pub(crate) mod openapi;
mod played;
pub(crate) mod routes;
pub(crate) mod run_events;
pub(crate) mod run_view;
pub(crate) mod runs;
pub(crate) mod schemas;
pub(crate) mod sprt_tests;
pub(crate) mod state;
pub(crate) mod tournaments;

pub use crate::runner::ladder::LadderSettings;
pub use limits::Limits;
use routes::router;
pub(crate) use state::{AppState, RequestCounts, SharedState, BACKGROUND_SLOTS, COMPUTE_SLOTS};

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::{broadcast, watch, Semaphore};

use crate::agents::FileAccess;
use crate::game::excerpt;
use crate::runner::{start_batch_worker, BatchEnv, BatchQueue, BatchStore, Executor, MeteredPool};
use crate::store::{Backend, Played, Store};

/// A server setting out of range: the caller's mistake.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidServerConfig(pub String);

impl crate::game::UserError for InvalidServerConfig {}
inventory::submit! { crate::game::UserErrorKind::of::<InvalidServerConfig>() }

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
    /// (`--public-origin`); empty: the bound address's, see `guard::default_public_origins`.
    pub public_origins: Vec<String>,
    /// On PostgreSQL, whether this process also plays game batches from the job queue on its
    /// game threads (off: it only coordinates its runs, and `kalah-tuner worker` processes
    /// play every game).
    pub play_batches: bool,
    /// The most bytes of generation records that the queued and running runs may have still
    /// to write (`--max-pending-storage-gb`): a new run past it is refused with the figures.
    pub max_pending_storage_bytes: u64,
    /// Connections and request timeouts (`--max-connections`; the timeouts are fixed).
    pub limits: limits::Limits,
    /// The ladder's share of the cores and depth (`--ladder-share`, `--ladder-depth`).
    pub ladder: LadderSettings,
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
            ladder: LadderSettings::default(),
            max_pending_storage_bytes: DEFAULT_MAX_PENDING_STORAGE_BYTES,
            limits: limits::Limits::default(),
        }
    }
}

/// The default of `--max-pending-storage-gb`: ten runs at the one-run cap.
pub const DEFAULT_MAX_PENDING_STORAGE_BYTES: u64 = 10 * crate::tune::MAX_RUN_STORAGE_BYTES;

pub(crate) const DEFAULT_DATABASE_URL: &str = "sqlite://kalah-tuner.db";

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
    pub(crate) state: SharedState,
    serve: tokio::task::JoinHandle<()>,
    workers: Vec<tokio::task::JoinHandle<()>>,
    batch_worker: Option<tokio::task::JoinHandle<()>>,
    /// The ladder's scheduler: waited for, so that it gives its lease back before the
    /// database closes (another server then takes the ladder over at once).
    ladder: Option<tokio::task::JoinHandle<()>>,
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
        // Tournaments and SPRT tests saw the stop too: each stores itself failed once its games
        // under way end.
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
        if let Some(ladder) = self.ladder.take() {
            let abort = ladder.abort_handle();
            if tokio::time::timeout(Duration::from_secs(4), ladder)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        self.state.store.close().await;
    }
}

/// Game threads at a lower priority than the HTTP threads, whose processor time is measured:
/// one pool for each run worker, and one for the batches `serve` plays from the queue.
fn metered_game_pool(threads: Option<usize>, name: &'static str) -> Result<Arc<MeteredPool>> {
    let threads = threads.unwrap_or_else(default_threads);
    MeteredPool::build(threads.max(1), name, lower_priority)
        .map(Arc::new)
        .with_context(|| format!("starting the {name} threads"))
}

fn named_game_pool(threads: Option<usize>, name: &'static str) -> Result<rayon::ThreadPool> {
    let threads = threads.unwrap_or_else(default_threads);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(move |i| format!("{name}-{i}"))
        .start_handler(|_| lower_priority())
        .build()
        .with_context(|| format!("starting the {name} threads"))
}

fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

/// The tournaments' share of the cores: half the game threads, at least one.
fn tournament_threads(game_threads: Option<usize>) -> usize {
    let cores = game_threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    (cores / 2).max(1)
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
    let interrupted = store.fail_abandoned(Played::Tournament).await?;
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
    // Each run worker has game threads of its own, so that what a run's threads use is the
    // run's; workers left waiting hold idle threads, which cost nothing.
    let pools = (0..config.workers)
        .map(|_| metered_game_pool(config.threads, "kalah-games"))
        .collect::<Result<Vec<_>>>()?;
    let executor = Arc::new(Executor::new(
        Arc::new(store.clone()),
        queue
            .clone()
            .map(|q| (q, Arc::new(store.clone()) as Arc<dyn BatchStore>)),
        pools,
        files.clone(),
        owner.clone(),
        shutdown.subscribe(),
    ));
    let state = Arc::new(AppState {
        store,
        interactive: Arc::new(interactive_pool()?),
        background: background::BackgroundPools::new(
            tournament_threads(config.threads),
            BACKGROUND_SLOTS,
            |threads| named_game_pool(Some(threads), "kalah-tournaments"),
        )?,
        events,
        follows: Mutex::new(HashMap::new()),
        compute: Arc::new(Semaphore::new(COMPUTE_SLOTS)),
        event_streams: Arc::new(Semaphore::new(config.limits.max_event_streams.max(1))),
        tournament_tasks: tokio::sync::Mutex::new(tokio::task::JoinSet::new()),
        runs_cache: std::sync::RwLock::new(None),
        max_pending_storage_bytes: config.max_pending_storage_bytes,
        token: config.token.clone(),
        static_dir: config.static_dir.clone(),
        files,
        allowed_origins,
        public_origins,
        requests: Arc::new(RequestCounts::default()),
        owner,
        queue,
        shutdown,
        executor,
        counters: Default::default(),
        ladder: config.ladder,
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
    let ladder_host = crate::runner::ladder::LadderHost {
        store: Arc::new(state.store.clone()),
        queue: state.queue.clone(),
        owner: state.owner.clone(),
    };
    let ladder = Some(tokio::spawn(crate::runner::ladder::schedule(
        ladder_host,
        config.ladder,
        state.stopping(),
    )));
    let workers = (0..config.workers)
        .map(|i| {
            let observer = Arc::new(run_events::Announcer(state.clone()));
            tokio::spawn(state.executor.clone().work(i, observer))
        })
        .collect();
    let batch_worker = match (&state.queue, config.play_batches) {
        (Some(queue), true) => {
            // Batches play on threads of their own, so that a batch's processor time is its
            // own; a run's coordinator awaits its batches on the async runtime, and its
            // worker's threads stay idle meanwhile.
            let env = BatchEnv::new(
                Arc::new(state.store.clone()),
                metered_game_pool(config.threads, "kalah-batches")?,
                state.owner.clone(),
            );
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
        ladder,
    })
}

/// A name for this process in leases and batch results: its role, host and process id, and a
/// random suffix (process ids repeat across containers).
pub(crate) fn process_name(role: &str) -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!("{role}@{host}:{}:{}", std::process::id(), &suffix[..8])
}

/// Completes on Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
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
pub(crate) fn redact(url: &str) -> String {
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

/// Logs to standard error; `RUST_LOG` sets the level (default: info for this crate and the
/// request log).
pub(crate) fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("kalah_tuner=info,tower_http=info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
