//! The API's one error shape: `{"error": {"status", "field", "message"}}`, plus
//! `request_id` on a 500. Internal errors never show their detail (a database's message, a
//! file path) to the client: the detail goes to the server log under the request's id, and
//! the client gets a generic message with that id to quote.

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use crate::agents::{SpecError, Stopped};
use crate::game::{excerpt, excerpt_to, GameError, UserError};
use crate::matches::MatchError;
use crate::store::StoreError;
use crate::tune::ConfigError;

/// When the body of the current request must have arrived: put in the request's extensions
/// by `limits::refuse_large_and_stamp`, read by the JSON extractor here.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyDeadline(pub std::time::Instant, pub std::time::Duration);

tokio::task_local! {
    /// The id of the request a handler is serving, set by [`with_request_id`].
    static REQUEST_ID: String;
}

/// The response header that carries every request's id.
pub(crate) const REQUEST_ID_HEADER: &str = "x-request-id";

/// Middleware: gives every request an id, answers it in `x-request-id`, and makes it
/// available to [`ApiError::internal`] for the log line and the error body.
pub(crate) async fn with_request_id(req: Request, next: axum::middleware::Next) -> Response {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let mut response = REQUEST_ID.scope(id.clone(), next.run(req)).await;
    if let Ok(value) = axum::http::HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    response
}

/// The current request's id; a fresh one outside a request (a background task).
fn current_request_id() -> String {
    REQUEST_ID
        .try_with(String::clone)
        .unwrap_or_else(|_| uuid::Uuid::new_v4().simple().to_string())
}

#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub field: Option<String>,
    pub message: String,
    /// Set on internal errors: where the log holds the detail.
    pub request_id: Option<String>,
    /// Seconds to answer in `Retry-After`: the server is busy, not the request wrong.
    pub retry_after: Option<u64>,
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;

/// Longest message answered: messages quote the input at fault, which may be huge (a field
/// name, an unknown variant in a 1 MiB body), and an error must not echo it back whole.
pub(crate) const MAX_MESSAGE_CHARS: usize = 500;

impl ApiError {
    pub(crate) fn new(
        status: StatusCode,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> ApiError {
        let message = in_plain_words(&message.into());
        ApiError {
            status,
            field: field.map(|f| excerpt(f).into_owned()),
            message: excerpt_to(&message, MAX_MESSAGE_CHARS).into_owned(),
            request_id: None,
            retry_after: None,
        }
    }

    /// 503 with `Retry-After`: every compute slot is taken, and waiting for one would spend
    /// the request's deadline in a queue.
    pub(crate) fn busy(message: impl Into<String>, retry_after_secs: u64) -> ApiError {
        ApiError {
            retry_after: Some(retry_after_secs),
            ..ApiError::new(StatusCode::SERVICE_UNAVAILABLE, None, message)
        }
    }

    /// 422 for a value that parses but is not acceptable; the message starts with the field.
    pub(crate) fn invalid(field: &str, reason: impl std::fmt::Display) -> ApiError {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            Some(field),
            format!("{field}: {reason}"),
        )
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, None, message)
    }

    pub(crate) fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, None, what)
    }

    pub(crate) fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, None, message)
    }

    /// A failure of the server, not of the request: logged in full, answered without detail.
    pub(crate) fn internal(e: impl std::fmt::Display) -> ApiError {
        let id = current_request_id();
        tracing::error!(request_id = %id, "internal error: {e:#}");
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            field: None,
            message: format!(
                "internal server error; the server log has the details under request id {id}"
            ),
            request_id: Some(id),
            retry_after: None,
        }
    }

    /// An error in the user's input found under the request field `prefix` (e.g. `config`,
    /// `south`, `agents[2]`; empty at the top): its status, and its own field's dotted path
    /// below `prefix`.
    pub(crate) fn from_user(prefix: &str, e: &dyn UserError) -> ApiError {
        let inner = e.field();
        let field = match (prefix.is_empty(), inner.is_empty()) {
            (true, _) => inner.into_owned(),
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}.{inner}"),
        };
        let status =
            StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::UNPROCESSABLE_ENTITY);
        ApiError::new(status, Some(&field), format!("{field}: {}", e.reason()))
    }

    /// A GA config error under `prefix` (e.g. `config`), naming the dotted field.
    pub(crate) fn from_config(prefix: &str, e: &ConfigError) -> ApiError {
        // A field named by the user's preset key sits at the top, not under `config`.
        let prefix = if ConfigError::field(e) == "preset" {
            ""
        } else {
            prefix
        };
        ApiError::from_user(prefix, e)
    }

    /// An agent spec error for the request field `field` (e.g. `south`, `agents[2]`).
    pub(crate) fn from_spec(field: &str, e: &SpecError) -> ApiError {
        ApiError::from_user(field, e)
    }

    pub(crate) fn from_game(field: &str, e: &GameError) -> ApiError {
        ApiError::from_user(field, e)
    }

    pub(crate) fn from_match(e: &MatchError) -> ApiError {
        match e {
            MatchError::Spec(s) => ApiError::from_user("agent", s),
            MatchError::Game(g) => ApiError::from_user("board", g),
            MatchError::Invalid { .. } => ApiError::from_user("", e),
            MatchError::Stopped(why) => ApiError::from_stopped("agent", why),
        }
    }

    /// A computation stopped by its request's budget (the API's limits table). A move that
    /// needs too many positions will always need them: 422 on the agent. A deadline depends
    /// on the load as well: 503. A cancelled one had a client that went away, and nobody
    /// reads the answer.
    pub(crate) fn from_stopped(field: &str, why: &Stopped) -> ApiError {
        match why {
            Stopped::Nodes(max) => ApiError::invalid(
                field,
                format!("one move needed more than {max} positions, the most one move may search through the API: ask for less depth, fewer seeds for `perfect` or a smaller board (the command line has no such cap)"),
            ),
            Stopped::Deadline(_) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(field),
                format!("stopped: {why} (the API's limit): ask for less, or use the command line"),
            ),
            Stopped::Cancelled => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, None, "cancelled"),
        }
    }
}

/// The `Retry-After` of an answer given while the database does not answer, in seconds.
pub(crate) const DATABASE_RETRY_AFTER_SECS: u64 = 5;

impl From<StoreError> for ApiError {
    /// A database that is unreachable for now (refused or cut connections, no connection
    /// within the pool's wait) is the server's state, not a fault in the request: 503 with
    /// `Retry-After`, answered as soon as the pool gives up rather than as a 500.
    fn from(e: StoreError) -> ApiError {
        if e.is_transient() {
            tracing::warn!("database unavailable: {e}");
            return ApiError {
                retry_after: Some(DATABASE_RETRY_AFTER_SECS),
                ..ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    None,
                    "the database is not answering; try again shortly",
                )
            };
        }
        ApiError::internal(e)
    }
}

/// The body of every error answer.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub(crate) struct ErrorBody {
    error: ErrorDetail,
}

/// What went wrong. Fields in alphabetical order, the order the API's objects have always had.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct ErrorDetail {
    /// The request field at fault, as a dotted path.
    field: Option<String>,
    message: String,
    /// On a 500: the id under which the server log holds the detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    request_id: Option<String>,
    status: u16,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                field: self.field,
                message: self.message,
                request_id: self.request_id,
                status: self.status.as_u16(),
            },
        };
        let mut response = (self.status, Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, secs.into());
        }
        response
    }
}

/// `message` with serde's and Rust's words put in the API's: "invalid type: string "x",
/// expected u32" becomes "must be a whole number from 0 to 4294967295, got the text "x"". A
/// client reads the range it may send, not the server's types, and the types do not show
/// how the server is built.
pub(crate) fn in_plain_words(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    loop {
        let found = ["invalid type: ", "invalid value: ", "invalid length "]
            .iter()
            .filter_map(|p| rest.find(p).map(|i| (i, p.len())))
            .min();
        let Some((at, len)) = found else { break };
        let after = &rest[at + len..];
        let Some(comma) = after.find(", expected ") else {
            break;
        };
        let got = &after[..comma];
        let tail = &after[comma + ", expected ".len()..];
        // The expected part runs to serde_json's position note or the end.
        let end = tail.find(" at line ").unwrap_or(tail.len());
        let got = if rest[at..].starts_with("invalid length ") {
            format!("{got} items")
        } else {
            got_in_words(got)
        };
        out.push_str(&rest[..at]);
        out.push_str(&format!(
            "must be {}, got {got}",
            expected_in_words(&tail[..end])
        ));
        rest = &tail[end..];
    }
    out.push_str(rest);
    let mut out = out.replace(
        "data did not match any variant of untagged enum",
        "matches no accepted form:",
    );
    if let Some(at) = out.find("matches no accepted form:") {
        // Drop the enum's name that follows.
        let name_end = out[at + 25..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ' '))
            .map_or(out.len(), |i| at + 25 + i);
        out.replace_range(at..name_end, "matches no accepted form");
    }
    for ty in PRIMITIVES {
        let bare = format!("expected {ty}");
        if out.contains(&bare) && !out.contains(&format!("{bare}_")) {
            out = out.replace(&bare, &format!("expected {}", expected_in_words(ty)));
        }
    }
    out
}

const PRIMITIVES: [&str; 14] = [
    "usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8", "f64",
    "f32",
];

/// serde's name for what a field takes, in words.
fn expected_in_words(expected: &str) -> String {
    let whole = |lo: i128, hi: u128| format!("a whole number from {lo} to {hi}");
    match expected.trim() {
        "u8" => whole(0, u8::MAX.into()),
        "u16" => whole(0, u16::MAX.into()),
        "u32" => whole(0, u32::MAX.into()),
        "u64" | "usize" => whole(0, u64::MAX.into()),
        "u128" => whole(0, u128::MAX),
        "i8" => whole(i8::MIN.into(), i8::MAX as u128),
        "i16" => whole(i16::MIN.into(), i16::MAX as u128),
        "i32" => whole(i32::MIN.into(), i32::MAX as u128),
        "i64" | "isize" | "i128" => whole(i64::MIN.into(), i64::MAX as u128),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" => "true or false".to_string(),
        "a sequence" => "a list".to_string(),
        "a borrowed string" | "a string" => "text".to_string(),
        "a character" | "a char" => "one character".to_string(),
        "unit" => "null".to_string(),
        e if e.starts_with("struct ") || e.starts_with("map") => "an object".to_string(),
        e if e.starts_with("tuple struct ")
            || e.starts_with("tuple")
            || e.starts_with("a tuple") =>
        {
            "a list".to_string()
        }
        e if e.starts_with("enum ") => "one of the accepted values".to_string(),
        e => e.to_string(),
    }
}

/// serde's description of the value a client sent, in words.
fn got_in_words(got: &str) -> String {
    let quoted = |prefix: &str| {
        got.strip_prefix(prefix)
            .map(|v| v.trim_matches('`').to_string())
    };
    if let Some(text) = got.strip_prefix("string ") {
        return format!("the text {text}");
    }
    quoted("integer ")
        .or_else(|| quoted("floating point "))
        .or_else(|| quoted("boolean "))
        .or_else(|| quoted("char "))
        .unwrap_or_else(|| match got {
            "map" => "an object".to_string(),
            "sequence" => "a list".to_string(),
            "unit value" | "null" => "null".to_string(),
            other => other.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_of(response: Response) -> serde_json::Value {
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .expect("body");
        serde_json::from_slice(&bytes).expect("JSON body")
    }

    #[tokio::test]
    async fn internal_errors_hide_their_detail_and_name_the_request() {
        let detail = "error returned from database: password authentication failed for \"tuner\"";
        let response = REQUEST_ID
            .scope("abc123".to_string(), async { ApiError::internal(detail) })
            .await
            .into_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = body_of(response).await;
        let message = body["error"]["message"].as_str().expect("message");
        assert!(!message.contains("database"), "leaks the detail: {message}");
        assert!(message.contains("abc123"), "names no request id: {message}");
        assert_eq!(body["error"]["request_id"], "abc123");
        assert_eq!(body["error"]["status"], 500);
    }

    #[tokio::test]
    async fn echoed_input_is_cut_short() {
        let huge = "x".repeat(900_000);
        let body = body_of(ApiError::invalid(&huge, &huge).into_response()).await;
        let message = body["error"]["message"].as_str().expect("message");
        assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS);
        assert!(message.ends_with('\u{2026}'));
        let field = body["error"]["field"].as_str().expect("field");
        assert!(field.chars().count() <= crate::game::ECHO_CHARS);
    }

    #[test]
    fn serde_words_become_the_apis() {
        for (given, wanted) in [
            (
                "population: invalid type: string \"x\", expected usize",
                "population: must be a whole number from 0 to 18446744073709551615, got the text \"x\"",
            ),
            (
                "seed: invalid value: integer `-1`, expected u32",
                "seed: must be a whole number from 0 to 4294967295, got -1",
            ),
            (
                "x: invalid type: floating point `1.5`, expected i32 at line 1 column 9",
                "x: must be a whole number from -2147483648 to 2147483647, got 1.5 at line 1 column 9",
            ),
            (
                "config: invalid type: sequence, expected struct GaConfig",
                "config: must be an object, got a list",
            ),
            (
                "agent: data did not match any variant of untagged enum SpecJson",
                "agent: matches no accepted form",
            ),
            ("ties: unknown variant `x`, expected `first` or `random`", "ties: unknown variant `x`, expected `first` or `random`"),
        ] {
            assert_eq!(in_plain_words(given), wanted);
        }
    }

    #[tokio::test]
    async fn client_errors_keep_their_message_and_have_no_request_id() {
        let body = body_of(ApiError::invalid("games", "must be 1 to 10").into_response()).await;
        assert_eq!(body["error"]["message"], "games: must be 1 to 10");
        assert!(body["error"].get("request_id").is_none());
    }
}
