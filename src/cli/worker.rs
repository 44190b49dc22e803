//! `kalah-tuner worker`: plays game batches from the PostgreSQL job queue on this machine's
//! cores, for runs that `serve` processes own, until Ctrl-C or SIGTERM. No HTTP.

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::args::usage;
use crate::runner::{start_batch_worker, BatchEnv, BatchQueue, MeteredPool};
use crate::server::{init_tracing, process_name, redact, shutdown_signal};
use crate::store::Store;

/// `kalah-tuner worker` options.
#[derive(Args, Debug, Clone)]
pub(crate) struct WorkerArgs {
    /// postgres://USER@HOST/DB: the database the `serve` processes use
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
    /// Threads that play a batch's games (default: all cores)
    #[arg(long, env = "KALAH_TUNER_THREADS")]
    pub threads: Option<usize>,
}

/// `kalah-tuner worker`: plays batches until Ctrl-C or SIGTERM, then lets the batch under way
/// finish for two seconds or hands it back to the queue, and exits 0.
pub(crate) fn run(args: &WorkerArgs) -> Result<()> {
    let url = args.database_url.trim();
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        bail!(usage(format!(
            "--database-url must be a PostgreSQL URL (postgres://...): workers share runs \
             through PostgreSQL's job queue; SQLite runs are played by `serve` alone, got {}",
            redact(url)
        )));
    }
    let threads = match args.threads {
        Some(0) | Some(257..) => bail!(usage("--threads must be 1 to 256")),
        Some(n) => n,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2),
    };
    init_tracing();
    // A batch's processor time is its pool's threads': the worker plays one batch at a time.
    let pool =
        MeteredPool::build(threads, "kalah-batch", || {}).context("starting the game threads")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let worked = runtime.block_on(async move {
        let store = Store::connect(url)
            .await
            .with_context(|| format!("opening the database {}", redact(url)))?;
        let queue = BatchQueue::connect(url)
            .await
            .context("opening the game batch queue")?;
        let name = process_name("worker");
        let env = BatchEnv::new(Arc::new(store.clone()), Arc::new(pool), name.clone());
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let stopped = async move {
            let _ = stop_rx.await;
        };
        let worker = start_batch_worker(&queue, env, stopped).await?;
        tracing::info!(worker = %name, threads, database = %redact(url), "worker started");
        // Scripts read this line to know the worker is taking batches.
        println!("kalah-tuner worker {name} ready ({threads} threads)");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        shutdown_signal().await;
        tracing::info!(worker = %name, "stopping: finishing or handing back the batch under way");
        let _ = stop_tx.send(());
        let _ = worker.await;
        store.close().await;
        tracing::info!(worker = %name, "stopped");
        Ok(())
    });
    // As `serve`: a batch's games stop within a position of the stop, and none may keep the
    // process alive if one does not.
    runtime.shutdown_timeout(super::serve::SHUTDOWN_WAIT);
    worked
}
