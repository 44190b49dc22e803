//! `kalah-tuner serve`: the HTTP API and dashboard until Ctrl-C or SIGTERM.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::args::usage;
use crate::server::limits::Limits;
use crate::server::{init_tracing, redact, start, ServerConfig, DEFAULT_DATABASE_URL};

/// `kalah-tuner serve` options.
#[derive(Args, Debug, Clone)]
pub(crate) struct ServeArgs {
    /// Address to listen on (port 0 picks a free port)
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// sqlite://PATH or postgres://USER@HOST/DB [default: sqlite://kalah-tuner.db]
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,
    /// Runs evolved at the same time
    #[arg(long, default_value_t = 1, env = "KALAH_TUNER_WORKERS")]
    pub workers: usize,
    /// Game threads of each run slot, and of the batches this server plays from the queue
    /// (default: all cores)
    #[arg(long, env = "KALAH_TUNER_THREADS")]
    pub threads: Option<usize>,
    /// Serve the dashboard from this folder instead of the copy built into the binary
    #[arg(long, env = "KALAH_TUNER_STATIC_DIR")]
    pub static_dir: Option<PathBuf>,
    /// Folder of a3c models and export documents that clients may name (a3c:NAME,
    /// export:NAME); without it the API reads no file a client names
    #[arg(long, env = "KALAH_TUNER_MODELS_DIR")]
    pub models_dir: Option<PathBuf>,
    /// Another web origin (scheme://HOST, with :PORT unless the scheme's default) whose pages may use the API, with CORS;
    /// repeat for more. The server's own pages need none
    #[arg(
        long = "allow-origin",
        value_name = "URL",
        env = "KALAH_TUNER_ALLOW_ORIGIN",
        value_delimiter = ','
    )]
    pub allow_origins: Vec<String>,
    /// The origin (scheme://HOST, with :PORT unless the scheme's default) at which browsers open this server, behind a proxy
    /// or by a name; repeat for more. Only pages there (and --allow-origin's) may change
    /// state. Default: the --bind address, with localhost forms when it is a loopback one
    #[arg(
        long = "public-origin",
        value_name = "URL",
        env = "KALAH_TUNER_PUBLIC_ORIGIN",
        value_delimiter = ','
    )]
    pub public_origins: Vec<String>,
    /// On PostgreSQL, do not play game batches here: only serve and coordinate runs, and
    /// leave every game to `kalah-tuner worker` processes
    #[arg(long, env = "KALAH_TUNER_NO_BATCHES")]
    pub no_batches: bool,
    /// Open connections at most; more wait until one closes (a line in the log says so)
    #[arg(long, default_value_t = 512, env = "KALAH_TUNER_MAX_CONNECTIONS")]
    pub max_connections: usize,
    /// Gigabytes of generation records that the queued and running runs may have still to
    /// write, by their estimates; a new run past it is refused (429) with the figures
    #[arg(
        long,
        default_value_t = 10.0,
        env = "KALAH_TUNER_MAX_PENDING_STORAGE_GB"
    )]
    pub max_pending_storage_gb: f64,
    /// Open connections from one IP address at most; one more is answered 503 and closed
    /// [default: 64, or --max-connections if lower]
    #[arg(long, env = "KALAH_TUNER_MAX_CONNECTIONS_PER_PEER")]
    pub max_connections_per_peer: Option<usize>,
    /// Event streams open at once at most (a browser holds one for all its tabs); one more
    /// is answered 503. At most half of --max-connections [default: 128, or half of
    /// --max-connections if lower]
    #[arg(long, env = "KALAH_TUNER_MAX_EVENT_STREAMS")]
    pub max_event_streams: Option<usize>,
    /// Share of the cores the ladder's background games may take, 0 to 1: the queue's
    /// workers' where there are live ones, else this machine's (0: no ladder games scheduled
    /// by this server; the ladder still shows what is stored)
    #[arg(long, default_value_t = crate::runner::ladder::DEFAULT_SHARE, env = "KALAH_TUNER_LADDER_SHARE")]
    pub ladder_share: f64,
    /// The fixed search depth of every ladder game (each depth is a ladder of its own)
    #[arg(long, default_value_t = crate::runner::ladder::DEFAULT_DEPTH, env = "KALAH_TUNER_LADDER_DEPTH")]
    pub ladder_depth: u32,
}

impl ServeArgs {
    fn per_peer(&self) -> usize {
        let default = Limits::default().max_connections_per_peer;
        self.max_connections_per_peer
            .unwrap_or(default.min(self.max_connections))
    }

    fn most_streams(&self) -> usize {
        (self.max_connections / 2).max(1)
    }

    fn event_streams(&self) -> usize {
        let default = Limits::default().max_event_streams;
        self.max_event_streams
            .unwrap_or(default.min(self.most_streams()))
    }
}

impl ServeArgs {
    fn config(&self) -> ServerConfig {
        ServerConfig {
            bind: self.bind.clone(),
            database_url: self
                .database_url
                .clone()
                .filter(|u| !u.is_empty())
                .unwrap_or_else(|| DEFAULT_DATABASE_URL.to_string()),
            workers: self.workers,
            threads: self.threads,
            static_dir: self.static_dir.clone(),
            models_dir: self.models_dir.clone(),
            allow_origins: self.allow_origins.clone(),
            public_origins: self.public_origins.clone(),
            play_batches: !self.no_batches,
            max_pending_storage_bytes: (self.max_pending_storage_gb * 1e9) as u64,
            limits: Limits {
                max_connections: self.max_connections,
                max_connections_per_peer: self.per_peer(),
                max_event_streams: self.event_streams(),
                ..Limits::default()
            },
            ladder: crate::server::LadderSettings {
                share: self.ladder_share,
                depth: self.ladder_depth,
            },
            token: std::env::var("KALAH_TUNER_TOKEN")
                .ok()
                .filter(|t| !t.is_empty()),
        }
    }
}

/// `kalah-tuner serve`: starts and serves until Ctrl-C or SIGTERM.
pub(crate) fn run(args: &ServeArgs) -> Result<()> {
    if args.workers == 0 || args.workers > 64 {
        bail!(usage(format!(
            "--workers must be 1 to 64, got {}",
            args.workers
        )));
    }
    if args.max_connections == 0 || args.max_connections > 100_000 {
        bail!(usage(format!(
            "--max-connections must be 1 to 100000, got {}",
            args.max_connections
        )));
    }
    if !(args.max_pending_storage_gb.is_finite()
        && args.max_pending_storage_gb > 0.0
        && args.max_pending_storage_gb <= 1e6)
    {
        bail!(usage(format!(
            "--max-pending-storage-gb must be over 0, up to 1000000, got {}",
            args.max_pending_storage_gb
        )));
    }
    if !(0.0..=1.0).contains(&args.ladder_share) {
        bail!(usage(format!(
            "--ladder-share must be 0 to 1, got {}",
            args.ladder_share
        )));
    }
    let most = crate::runner::ladder::MAX_DEPTH;
    if args.ladder_depth == 0 || args.ladder_depth > most {
        bail!(usage(format!(
            "--ladder-depth must be 1 to {most}, got {}",
            args.ladder_depth
        )));
    }
    let per_peer = args.per_peer();
    if per_peer == 0 || per_peer > args.max_connections {
        bail!(usage(format!(
            "--max-connections-per-peer must be 1 to --max-connections ({}), got {per_peer}",
            args.max_connections
        )));
    }
    let streams = args.event_streams();
    if streams == 0 || streams > args.most_streams() {
        bail!(usage(format!(
            "--max-event-streams must be 1 to half of --max-connections ({}), got {streams}",
            args.most_streams()
        )));
    }
    init_tracing();
    let config = args.config();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let served = runtime.block_on(async move {
        let server = start(config.clone()).await?;
        tracing::info!(
            "database {} ({}), {} worker(s)",
            redact(&config.database_url),
            server.state.store.backend().name(),
            config.workers
        );
        // Tests and scripts read this line to find the port.
        println!("kalah-tuner listening on http://{}", server.addr);
        use std::io::Write;
        let _ = std::io::stdout().flush();
        server.wait().await;
        tracing::info!("stopped");
        Ok(())
    });
    // The games under way saw the stop and return within a position or a playout; should one
    // not, it must not keep a stopped process alive (dropping the runtime would wait for it).
    runtime.shutdown_timeout(SHUTDOWN_WAIT);
    served
}

/// How long a stopped process waits for threads still computing before it exits anyway.
pub(super) const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
