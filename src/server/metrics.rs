//! `GET /metrics`: Prometheus metrics in the OpenMetrics text format, through the Prometheus
//! project's own client library (`prometheus-client`). What the database knows (runs and
//! tournaments by status, batch results, each worker's recent games) is the same on every
//! server of one database; permits, the runs this process evolves and the games of the
//! generations it wrote are this process's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::error::{ApiError, ApiResult};
use super::state::{SharedState, COMPUTE_SLOTS};

/// How far back a worker's batches count for its games per second.
pub(crate) const WORKER_WINDOW: Duration = Duration::from_secs(300);

/// The OpenMetrics text format's media type, which Prometheus asks for and reads.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

type Labels = Vec<(&'static str, String)>;

fn gauge_family(registry: &mut Registry, name: &str, help: &str) -> Family<Labels, Gauge> {
    let family = Family::<Labels, Gauge>::default();
    registry.register(name, help, family.clone());
    family
}

fn gauge(registry: &mut Registry, name: &str, help: &str, value: i64) {
    let g = Gauge::<i64>::default();
    g.set(value);
    registry.register(name, help, g);
}

fn float_gauge(family: &Family<Labels, Gauge<f64, AtomicU64>>, labels: Labels, value: f64) {
    family.get_or_create(&labels).set(value);
}

/// The metrics, rendered at each scrape from the database and this process's state.
#[utoipa::path(
    get, path = "/metrics", operation_id = "metrics",
    summary = "Prometheus metrics (OpenMetrics text): runs and tournaments by status, run and batch queue depth, batch results, each worker's batches and games a second over the last 5 minutes, compute permits in use, and this process's runs, generations and games",
    responses((status = 200, description = "the metrics", content_type = "application/openmetrics-text", body = String))
)]
pub(crate) async fn metrics(State(state): State<SharedState>) -> ApiResult<Response> {
    let snapshot = state.store.work_snapshot(WORKER_WINDOW).await?;
    let batch_queue = match &state.queue {
        Some(queue) => Some(queue.pending().await.map_err(ApiError::internal)?),
        None => None,
    };
    let mut registry = Registry::with_prefix("kalah_tuner");

    let runs = gauge_family(
        &mut registry,
        "runs",
        "Runs in the database by status (every server's)",
    );
    for status in ["queued", "running", "finished", "cancelled", "failed"] {
        runs.get_or_create(&vec![("status", status.to_string())])
            .set(0);
    }
    for (status, n) in &snapshot.runs {
        runs.get_or_create(&vec![("status", status.clone())])
            .set(*n as i64);
    }
    let queued = snapshot
        .runs
        .iter()
        .find(|(s, _)| s == "queued")
        .map_or(0, |(_, n)| *n);
    gauge(
        &mut registry,
        "run_queue_depth",
        "Runs waiting for a worker",
        queued as i64,
    );
    if let Some(pending) = batch_queue {
        gauge(
            &mut registry,
            "batch_queue_depth",
            "Game batches in the PostgreSQL job queue, waiting or being played (all runs)",
            pending as i64,
        );
    }
    let tournaments = gauge_family(
        &mut registry,
        "tournaments",
        "Tournaments in the database by status",
    );
    for (status, n) in &snapshot.tournaments {
        tournaments
            .get_or_create(&vec![("status", status.clone())])
            .set(*n as i64);
    }
    gauge(
        &mut registry,
        "batch_results",
        "Game batches whose results are stored (all runs)",
        snapshot.batch_results as i64,
    );
    let batches = gauge_family(
        &mut registry,
        "worker_batches",
        "Game batches each worker finished in the last 5 minutes",
    );
    let rates = Family::<Labels, Gauge<f64, AtomicU64>>::default();
    registry.register(
        "worker_games_per_second",
        "Games each worker finished a second, over the last 5 minutes",
        rates.clone(),
    );
    for w in &snapshot.workers {
        let labels = vec![("worker", w.worker.clone())];
        batches.get_or_create(&labels).set(w.batches as i64);
        float_gauge(&rates, labels, w.games as f64 / WORKER_WINDOW.as_secs_f64());
    }

    let permits = gauge_family(
        &mut registry,
        "permits_in_use",
        "Compute permits held by this process: moves and matches (interactive), tournaments",
    );
    let capacity = gauge_family(
        &mut registry,
        "permits",
        "Compute permits this process has, by kind",
    );
    let interactive_in_use = COMPUTE_SLOTS - state.compute.available_permits().min(COMPUTE_SLOTS);
    for (kind, in_use, slots) in [
        ("interactive", interactive_in_use, COMPUTE_SLOTS),
        (
            "tournament",
            state.background.in_use(),
            state.background.slots(),
        ),
    ] {
        let labels = vec![("kind", kind.to_string())];
        permits.get_or_create(&labels).set(in_use as i64);
        capacity.get_or_create(&labels).set(slots as i64);
    }
    let evolving = state.executor.running_here();
    gauge(
        &mut registry,
        "runs_evolving",
        "Runs this process evolves now",
        evolving as i64,
    );
    registry.register(
        "generations_written",
        "Generations and checkpoints this process wrote since it started",
        ConstCounter::new(state.counters.generations.load(Ordering::Relaxed)),
    );
    registry.register(
        "games",
        "Games of the generations and checkpoints this process wrote since it started",
        ConstCounter::new(state.counters.games.load(Ordering::Relaxed)),
    );

    let mut text = String::new();
    encode(&mut text, &registry).map_err(ApiError::internal)?;
    let mut response = text.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    Ok(response)
}
