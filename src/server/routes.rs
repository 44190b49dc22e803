//! The routes: every path under `/api` to its handler, the dashboard's files, the checks
//! every request passes. The documented routes are registered through utoipa-axum's
//! `OpenApiRouter` from the handlers' own `#[utoipa::path]`, so the OpenAPI document
//! ([`super::openapi`]) lists exactly the routes served.

use std::sync::LazyLock;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, OriginalUri};
use axum::http::{Method, StatusCode};
use axum::middleware;
use axum::{Json, Router};
use serde_json::Value;
use tower_http::compression::CompressionLayer;
use tower_http::trace::{DefaultMakeSpan, TraceLayer};
use tracing::Level;
use utoipa::openapi::path::{Operation, PathItem, Paths};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{self, ApiError};
use super::state::{SharedState, MAX_BODY_BYTES};
use super::{
    agents, assets, batch_workers, events, guard, health, ladder, limits, matches, metrics, moves,
    openapi, runs, sprt_tests, tournaments,
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
        .routes(routes!(ladder::list))
        .routes(routes!(ladder::show))
        .routes(routes!(ladder::withdraw))
        .routes(routes!(batch_workers::list))
        .routes(routes!(guard::check_token))
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(document))
        .routes(routes!(api_docs))
}

/// The routes outside the API: the probes where orchestrators look for them, and the metrics.
fn root_routes() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(metrics::metrics))
}

/// The document's paths and the schemas they name, from the routers that [`router`] serves.
pub(crate) fn documented() -> utoipa::openapi::OpenApi {
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

/// Built once: the routers and the schemas do not change while the process runs.
static DOCUMENT: LazyLock<Value> = LazyLock::new(|| openapi::spec(documented()));

/// The OpenAPI document `GET /api/openapi.json` serves, for the generated API reference.
pub(crate) fn openapi_document() -> Value {
    DOCUMENT.clone()
}

#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "openapi",
    summary = "This document",
    responses((status = 200, description = "OpenAPI 3.1", body = Object))
)]
pub(crate) async fn document() -> Json<Value> {
    Json(DOCUMENT.clone())
}

/// The page of `/api/docs`: RapiDoc over this server's document, its script served from the
/// dashboard's own files (`static/vendor/`, MIT) and system fonts only, so that it needs no
/// network: a server on a laptop in a train shows its reference as well.
const API_DOCS_PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kalah-tuner API reference</title>
<script type="module" src="/vendor/rapidoc-min.js"></script>
</head>
<body>
<rapi-doc spec-url="$specUrl" render-style="read" show-header="false" allow-try="true" load-fonts="false"
  allow-server-selection="false" schema-style="table" sort-endpoints-by="path"
  regular-font="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
  mono-font="ui-monospace, Menlo, Consolas, monospace">
</rapi-doc>
</body>
</html>
"#;

static API_DOCS: LazyLock<String> = LazyLock::new(|| {
    utoipa_rapidoc::RapiDoc::new(format!("{API_PREFIX}/openapi.json"))
        .custom_html(API_DOCS_PAGE)
        .to_html()
});

/// The interactive API reference: every route of the document, with a form to try it.
#[utoipa::path(
    get,
    path = "/docs",
    operation_id = "api_docs",
    summary = "The interactive API reference (RapiDoc over this document; works offline)",
    responses((status = 200, description = "an HTML page", content_type = "text/html", body = String))
)]
pub(crate) async fn api_docs() -> axum::response::Html<&'static str> {
    axum::response::Html(API_DOCS.as_str())
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

pub(crate) fn router(state: SharedState, limits: limits::Limits) -> Router {
    let counts = state.requests.clone();
    let cors = guard::cors(&state.allowed_origins);
    // The documents are dropped here: `document` serves the one `documented` builds
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
        .layer(middleware::from_fn_with_state(state.clone(), guard::origin))
        .layer(middleware::from_fn_with_state(state.clone(), guard::host));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{MAX_PITS, SWAP};
    use crate::server::matches::{MAX_MATCH_GAMES, MAX_SPRT_PAIRS};
    use crate::server::runs::{MAX_NAME_CHARS, MAX_NOTES_CHARS, MAX_TAGS};
    use crate::server::tournaments::MAX_TOURNAMENT_GAMES;
    use serde_json::json;
    use utoipa::openapi::RefOr;

    fn spec() -> Value {
        openapi::spec(documented())
    }

    fn refs(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r.clone());
                }
                map.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    /// Every `$ref` of the document names a schema it holds: the generated ones come under
    /// their types' names (or their `as`), the written ones under theirs (a written schema
    /// that does not parse would name `#/invalid`).
    #[test]
    fn every_reference_resolves() {
        let doc = spec();
        let mut found = Vec::new();
        refs(&doc, &mut found);
        assert!(found.iter().any(|r| r == "#/components/schemas/Run"));
        for r in found {
            let name = r.trim_start_matches("#/components/schemas/");
            assert!(doc["components"]["schemas"][name].is_object(), "{r}");
        }
    }

    /// Each limit of the table lands on a property of the generated schemas (a renamed field
    /// would otherwise lose its bound without a word), and the document carries it.
    #[test]
    fn the_bounds_are_the_handlers_constants() {
        let doc = openapi::generated(documented());
        let mut generated = serde_json::to_value(&doc).unwrap_or(Value::Null);
        let schemas = generated
            .pointer_mut("/components/schemas")
            .and_then(Value::as_object_mut)
            .expect("generated schemas");
        assert_eq!(openapi::write_bounds(schemas), Vec::<String>::new());
        let served = spec();
        let field = |schema: &str, field: &str| {
            served["components"]["schemas"][schema]["properties"][field].clone()
        };
        assert_eq!(field("MatchRequest", "games")["maximum"], MAX_MATCH_GAMES);
        assert_eq!(
            field("MatchRequest", "max_pairs")["maximum"],
            MAX_SPRT_PAIRS
        );
        assert_eq!(
            field("TournamentRequest", "games")["maximum"],
            MAX_TOURNAMENT_GAMES
        );
        assert_eq!(field("BoardBody", "pits")["maximum"], MAX_PITS);
        assert_eq!(field("PositionMove", "move")["maximum"], SWAP);
        assert_eq!(field("DescribeRun", "tags")["maxItems"], MAX_TAGS);
        assert_eq!(field("DescribeRun", "notes")["maxLength"], MAX_NOTES_CHARS);
        assert_eq!(field("CreateRun", "name")["maxLength"], MAX_NAME_CHARS);
        // The query limits come from the handlers' constants too.
        let limit = |path: &str| {
            served["paths"][path]["get"]["parameters"]
                .as_array()
                .and_then(|ps| ps.iter().find(|p| p["name"] == "limit"))
                .map(|p| p["schema"]["maximum"].clone())
        };
        assert_eq!(
            limit("/api/runs"),
            Some(json!(crate::server::runs::MAX_RUNS_PAGE))
        );
        assert_eq!(
            limit("/api/runs/{id}/generations"),
            Some(json!(crate::server::runs::MAX_GENERATIONS_PAGE))
        );
        // Every schema written as JSON parses.
        use crate::server::schemas::{preset_name, sprt, tuner_name};
        let agents = crate::server::tournaments::agent_list_schema();
        let report = crate::server::schemas::sprt_report();
        for schema in [agents, sprt(), tuner_name(), preset_name(), report] {
            assert!(!matches!(schema, RefOr::Ref(ref r) if r.ref_location == "#/invalid"));
        }
    }

    /// Operation ids name one operation each (the probes are served at two paths), and every
    /// state change documents the guards' refusals.
    #[test]
    fn operations_are_named_once_and_state_changes_are_guarded() {
        let doc = spec();
        let mut ids = Vec::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("path item") {
                let id = op["operationId"].as_str().unwrap_or_default().to_string();
                assert!(!id.is_empty(), "{method} {path} has an operation id");
                assert!(!ids.contains(&id), "{id} names two operations");
                ids.push(id);
                if method != "get" {
                    for code in ["401", "403"] {
                        assert!(op["responses"][code].is_object(), "{method} {path} {code}");
                    }
                }
                if op.get("requestBody").is_some() {
                    assert!(op["responses"]["415"].is_object(), "{method} {path} 415");
                }
            }
        }
        assert!(ids.contains(&"healthz_unprefixed".to_string()));
    }
}
