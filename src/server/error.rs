//! The API's one error shape: `{"error": {"status", "field", "message"}}`.

use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::agents::SpecError;
use crate::ga::ConfigError;
use crate::game::GameError;
use crate::matches::MatchError;
use crate::store::StoreError;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub field: Option<String>,
    pub message: String,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, field: Option<&str>, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            field: field.map(str::to_string),
            message: message.into(),
        }
    }

    /// 422 for a value that parses but is not acceptable; the message starts with the field.
    pub fn invalid(field: &str, reason: impl std::fmt::Display) -> ApiError {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            Some(field),
            format!("{field}: {reason}"),
        )
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, None, message)
    }

    pub fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, None, what)
    }

    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, None, message)
    }

    pub fn internal(e: impl std::fmt::Display) -> ApiError {
        tracing::error!("internal error: {e}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, None, e.to_string())
    }

    /// A GA config error under `prefix` (e.g. `config`), naming the dotted field.
    pub fn from_config(prefix: &str, e: &ConfigError) -> ApiError {
        let inner = e.field();
        let field = match (prefix.is_empty(), inner.is_empty()) {
            (true, _) => inner.to_string(),
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}.{inner}"),
        };
        let reason = match e {
            ConfigError::Invalid { reason, .. } | ConfigError::Parse { reason, .. } => {
                reason.clone()
            }
            ConfigError::Resume(r) => r.clone(),
        };
        // A field named by the user's preset key sits at the top, not under `config`.
        let field = if inner == "preset" {
            "preset".to_string()
        } else {
            field
        };
        ApiError::invalid(&field, reason)
    }

    /// An agent spec error for the request field `field` (e.g. `south`, `agents[2]`).
    pub fn from_spec(field: &str, e: &SpecError) -> ApiError {
        let field = if e.field.is_empty() || e.field == "json" {
            field.to_string()
        } else {
            format!("{field}.{}", e.field)
        };
        ApiError::invalid(&field, format!("{}: {}", e.spec, e.reason))
    }

    pub fn from_game(field: &str, e: &GameError) -> ApiError {
        ApiError::invalid(field, e)
    }

    pub fn from_match(e: &MatchError) -> ApiError {
        match e {
            MatchError::Spec(s) => ApiError::from_spec("agent", s),
            MatchError::Game(g) => ApiError::from_game("board", g),
            MatchError::Invalid { field, reason } => ApiError::invalid(field, reason),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        ApiError::internal(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {
            "status": self.status.as_u16(),
            "field": self.field,
            "message": self.message,
        }});
        (self.status, Json(body)).into_response()
    }
}

/// A JSON body read leniently (any content type, so `curl -d` works) with errors in the API's
/// shape: 400 for text that is not JSON or not an object, 413 past the body limit, 422 for a
/// field of the wrong type (named by its path).
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes =
            axum::body::Bytes::from_request(req, state)
                .await
                .map_err(|e: BytesRejection| {
                    ApiError::new(e.status(), None, format!("request body: {}", e.body_text()))
                })?;
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))?;
        if !value.is_object() {
            return Err(ApiError::bad_request(
                "the request body must be a JSON object",
            ));
        }
        serde_path_to_error::deserialize(value)
            .map(ApiJson)
            .map_err(|e| {
                let path = e.path().to_string();
                let inner = e.into_inner().to_string();
                if path == "." || path.is_empty() {
                    // Missing fields and unknown fields are reported at the top level.
                    let field = inner
                        .split('`')
                        .nth(1)
                        .map(str::to_string)
                        .unwrap_or_default();
                    ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        (!field.is_empty()).then_some(field.as_str()),
                        inner,
                    )
                } else {
                    ApiError::invalid(&path, inner)
                }
            })
    }
}
