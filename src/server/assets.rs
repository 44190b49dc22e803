//! The dashboard's static files: built into the binary from `static/` (so a fresh clone and
//! the Docker image serve it with no set-up), or read from `--static-dir` when given, which
//! lets the dashboard be edited without rebuilding.

use std::path::{Component, Path, PathBuf};

use axum::extract::State;
use axum::http::{header, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

use super::error::ApiError;
use super::state::SharedState;

#[derive(RustEmbed)]
#[folder = "static/"]
struct Embedded;

/// Serves `GET /` (index.html) and the files under it; anything else is a JSON 404.
pub(crate) async fn serve(State(state): State<SharedState>, method: Method, uri: Uri) -> Response {
    let not_found = || ApiError::not_found(format!("no route {method} {}", uri.path()));
    if method != Method::GET && method != Method::HEAD {
        return not_found().into_response();
    }
    let mut path = uri.path().trim_start_matches('/').to_string();
    if path.is_empty() || path.ends_with('/') {
        path.push_str("index.html");
    }
    let Some(relative) = safe_relative(&path) else {
        return not_found().into_response();
    };
    let body = match &state.static_dir {
        Some(dir) => tokio::fs::read(dir.join(&relative)).await.ok(),
        None => Embedded::get(&path).map(|f| f.data.into_owned()),
    };
    match body {
        Some(bytes) => {
            let mime = mime_guess::from_path(&relative).first_or_octet_stream();
            (
                StatusCode::OK,
                [
                    (header::CONTENT_TYPE, mime.to_string()),
                    (header::CACHE_CONTROL, "no-cache".to_string()),
                ],
                bytes,
            )
                .into_response()
        }
        None => not_found().into_response(),
    }
}

/// A path made only of normal components, so `..` can never leave the static folder.
fn safe_relative(path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    if p.components().all(|c| matches!(c, Component::Normal(_))) {
        Some(p.to_path_buf())
    } else {
        None
    }
}
