//! The routes: every path under `/api` to its handler, the dashboard's files, the checks
//! every request passes.

use std::time::Duration;

use axum::extract::{DefaultBodyLimit, OriginalUri};
use axum::http::{Method, StatusCode};
use axum::middleware;
use axum::routing::{get, post};
use axum::Router;
use tower_http::compression::CompressionLayer;
use tower_http::trace::{DefaultMakeSpan, TraceLayer};
use tracing::Level;

use super::error::{self, ApiError};
use super::state::{SharedState, MAX_BODY_BYTES};
use super::{
    agents, assets, batch_workers, events, guard, health, limits, matches, metrics, moves, openapi,
    runs, sprt_tests, tournaments,
};
use crate::game::excerpt;

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
        .route("/sprt-tests", get(sprt_tests::list).post(sprt_tests::start))
        .route("/sprt-tests/{id}", get(sprt_tests::show))
        .route("/sprt-tests/{id}/cancel", post(sprt_tests::cancel))
        .route("/workers", get(batch_workers::list))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/openapi.json", get(openapi::document))
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(api_not_found);
    let mut app = Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(metrics::metrics))
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
        // gzip when the client asks for it. The default predicate leaves out event streams
        // (`text/event-stream`: each event must reach the browser when sent), images and
        // bodies under 32 bytes.
        .layer(CompressionLayer::new())
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
