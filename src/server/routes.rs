//! The routes: every path under `/api` to its handler, the dashboard's files, the checks
//! every request passes. The documented routes are registered through utoipa-axum's
//! `OpenApiRouter` from the handlers' own `#[utoipa::path]`, so the OpenAPI document
//! ([`super::openapi`]) lists exactly the routes served.

use std::time::Duration;

use axum::extract::{DefaultBodyLimit, OriginalUri};
use axum::http::{Method, StatusCode};
use axum::middleware;
use axum::Router;
use tower_http::compression::CompressionLayer;
use tower_http::trace::{DefaultMakeSpan, TraceLayer};
use tracing::Level;
use utoipa::openapi::path::{Operation, PathItem, Paths};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{self, ApiError};
use super::state::{SharedState, MAX_BODY_BYTES};
use super::{
    agents, assets, batch_workers, events, guard, health, limits, matches, metrics, moves, openapi,
    runs, sprt_tests, tournaments,
};
use crate::game::excerpt;

/// Where the API's routes are nested, in the router and in the document alike.
const API_PREFIX: &str = "/api";

/// The routes under [`API_PREFIX`] (their paths relative to it), each registered with its
/// handler's `#[utoipa::path]`, so the route and its document entry come in one step. Handlers
/// that share a path share a `routes!`: utoipa-axum gives every path of one call the same
/// method router.
fn api_routes() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(runs::list, runs::create))
        .routes(routes!(runs::estimate))
        .routes(routes!(runs::show, runs::describe, runs::delete))
        .routes(routes!(runs::cancel))
        .routes(routes!(runs::resume))
        .routes(routes!(runs::generations))
        .routes(routes!(runs::generation))
        .routes(routes!(runs::export))
        .routes(routes!(runs::events))
        .routes(routes!(events::stream))
        .routes(routes!(agents::catalogue))
        .routes(routes!(runs::config_schema))
        .routes(routes!(moves::best_move))
        .routes(routes!(moves::position_move))
        .routes(routes!(moves::position_start))
        .routes(routes!(matches::play_match))
        .routes(routes!(tournaments::list, tournaments::start))
        .routes(routes!(tournaments::show))
        .routes(routes!(tournaments::cancel))
        .routes(routes!(sprt_tests::list, sprt_tests::start))
        .routes(routes!(sprt_tests::show))
        .routes(routes!(sprt_tests::cancel))
        .routes(routes!(batch_workers::list))
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(openapi::document))
}

/// The routes outside the API: the probes where orchestrators look for them, and the metrics.
fn root_routes() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(metrics::metrics))
}

/// The document's paths and the schemas they name, from the routers that [`router`] serves.
pub fn documented() -> utoipa::openapi::OpenApi {
    let api = api_routes();
    let mut root = root_routes();
    // The probes are served at two paths, and an operation id names one operation.
    let api_ids: Vec<String> = operations(&api.get_openapi().paths)
        .filter_map(|op| op.operation_id.clone())
        .collect();
    for item in root.get_openapi_mut().paths.paths.values_mut() {
        for op in operations_mut(item) {
            if let Some(id) = op.operation_id.as_mut().filter(|id| api_ids.contains(id)) {
                id.push_str("_unprefixed");
            }
        }
    }
    root.nest(API_PREFIX, api).into_openapi()
}

fn operations(paths: &Paths) -> impl Iterator<Item = &Operation> {
    paths.paths.values().flat_map(|item| {
        [
            &item.get,
            &item.put,
            &item.post,
            &item.delete,
            &item.options,
            &item.head,
            &item.patch,
            &item.trace,
        ]
        .into_iter()
        .flatten()
    })
}

fn operations_mut(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
    ]
    .into_iter()
    .flatten()
}

pub fn router(state: SharedState, limits: limits::Limits) -> Router {
    let counts = state.requests.clone();
    let cors = guard::cors(&state.allowed_origins);
    // The documents are dropped here: `openapi::document` serves the one `documented` builds
    // from these same routers.
    let (api, _) = api_routes().split_for_parts();
    let api = api
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(api_not_found);
    let (root, _) = root_routes().split_for_parts();
    let mut app = root
        .method_not_allowed_fallback(method_not_allowed)
        .nest(API_PREFIX, api)
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
