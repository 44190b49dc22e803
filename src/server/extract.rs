//! The API's extractors: a JSON body ([`ApiJson`]), a query string ([`ApiQuery`]), path
//! parameters ([`ApiPath`]) and a run's id ([`RunPath`]) whose rejections are [`ApiError`]s
//! in the API's one shape, naming the field at fault; and the checks every body passes
//! before a handler sees it (its content type, keys given once, text without NUL or
//! bidirectional controls).

use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use super::error::{ApiError, BodyDeadline};
use crate::game::excerpt;

/// A JSON body with errors in the API's shape: 415 unless it is sent as `application/json`,
/// 400 for text that is not JSON or not an object, 413 past the body limit, 422 for a field of
/// the wrong type (named by its path).
pub(crate) struct ApiJson<T>(pub T);

/// The content type a JSON body must declare.
pub(crate) const JSON_CONTENT_TYPE: &str = "application/json";

/// 415 unless the request says its body is JSON. A browser sends a cross-site `text/plain`,
/// form or multipart POST without asking the server first (no CORS preflight); only a page
/// allowed by CORS can send `application/json`, so insisting on it keeps other sites' pages
/// from acting with the user's access to the server.
pub(crate) fn require_json_content_type(headers: &axum::http::HeaderMap) -> Result<(), ApiError> {
    let given = headers
        .get(axum::http::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let essence = given
        .as_deref()
        .map(|v| v.split(';').next().unwrap_or("").trim());
    if essence.is_some_and(|e| e.eq_ignore_ascii_case(JSON_CONTENT_TYPE)) {
        return Ok(());
    }
    let got = match &given {
        Some(v) => format!("got {}", excerpt(v)),
        None => "got none".to_string(),
    };
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        Some("Content-Type"),
        format!("the request body must be sent as Content-Type: {JSON_CONTENT_TYPE} ({got})"),
    ))
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        require_json_content_type(req.headers())?;
        let deadline = req.extensions().get::<BodyDeadline>().copied();
        let read = axum::body::Bytes::from_request(req, state);
        let read = match deadline {
            Some(BodyDeadline(at, allowed)) => tokio::time::timeout_at(at.into(), read)
                .await
                .map_err(|_| {
                    ApiError::new(
                        StatusCode::REQUEST_TIMEOUT,
                        None,
                        format!(
                            "request body: not all of it arrived within {} s",
                            allowed.as_secs_f64()
                        ),
                    )
                })?,
            None => read.await,
        };
        let bytes = read.map_err(|e: BytesRejection| {
            // axum's own text names its internals; the status says what happened.
            let message = if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                format!(
                    "request body: larger than the {} bytes allowed",
                    super::state::MAX_BODY_BYTES
                )
            } else {
                "request body: it could not be read to its end".to_string()
            };
            ApiError::new(e.status(), None, message)
        })?;
        let value = parse_unique_keys(&bytes)?;
        if !value.is_object() {
            return Err(ApiError::bad_request(
                "the request body must be a JSON object",
            ));
        }
        check_text(&value, "")?;
        serde_path_to_error::deserialize(value)
            .map(ApiJson)
            .map_err(|e| {
                let path = e.path().to_string();
                let inner = e.into_inner().to_string();
                if path == "." || path.is_empty() {
                    // Missing fields and unknown fields are reported at the top level.
                    ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        quoted_field(&inner),
                        inner.clone(),
                    )
                } else {
                    ApiError::invalid(&path, inner)
                }
            })
    }
}

/// Parses a JSON body, refusing (422, naming the key by its path) an object that holds a key
/// twice: serde_json would keep the last silently, so what a client reads in its own body
/// and what the server acts on could differ.
pub(crate) fn parse_unique_keys(bytes: &[u8]) -> Result<serde_json::Value, ApiError> {
    use serde::de::DeserializeSeed;
    let duplicate = std::cell::RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed = UniqueKeys {
        path: String::new(),
        duplicate: &duplicate,
    }
    .deserialize(&mut de)
    .and_then(|value| de.end().map(|()| value));
    match (parsed, duplicate.into_inner()) {
        (_, Some(field)) => Err(ApiError::invalid(
            &field,
            "the key appears more than once in its object",
        )),
        (Ok(value), None) => Ok(value),
        (Err(e), None) => Err(ApiError::bad_request(format!("malformed JSON body: {e}"))),
    }
}

/// Builds a [`serde_json::Value`] like its own `Deserialize`, but stops at the first key an
/// object repeats and records the key's path (the `check_text` notation) in `duplicate`.
struct UniqueKeys<'a> {
    path: String,
    duplicate: &'a std::cell::RefCell<Option<String>>,
}

impl UniqueKeys<'_> {
    fn at(&self, path: String) -> UniqueKeys<'_> {
        UniqueKeys {
            path,
            duplicate: self.duplicate,
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = serde_json::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys<'_> {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) =
            seq.next_element_seed(self.at(format!("{}[{}]", self.path, items.len())))?
        {
            items.push(item);
        }
        Ok(items.into())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let field = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if object.contains_key(&key) {
                *self.duplicate.borrow_mut() = Some(field);
                return Err(serde::de::Error::custom("duplicate key"));
            }
            let value = map.next_value_seed(self.at(field))?;
            object.insert(key, value);
        }
        Ok(object.into())
    }
}

/// A character no text the API takes may hold, and what it is: NUL (PostgreSQL's text
/// refuses it, SQLite keeps it and cuts C strings at it), and the Unicode bidirectional
/// overrides and isolates, which make a name or a note display as something else than it
/// is (Trojan Source, CVE-2021-42574).
pub(crate) fn forbidden_char(text: &str) -> Option<(char, &'static str)> {
    text.chars().find_map(|c| match c {
        '\0' => Some((c, "NUL")),
        '\u{202A}'..='\u{202E}' => Some((c, "a bidirectional override")),
        '\u{2066}'..='\u{2069}' => Some((c, "a bidirectional isolate")),
        _ => None,
    })
}

/// 422 naming the field (`name`, `config.fitness.opponents[0]`) of the first string, or
/// object key, in `value` that holds a [`forbidden_char`]. Every JSON body passes here, so no
/// handler can store such text by forgetting to check.
pub(crate) fn check_text(value: &serde_json::Value, path: &str) -> Result<(), ApiError> {
    use serde_json::Value;
    let refuse = |field: &str, c: char, what: &str| {
        let field = if field.is_empty() { "body" } else { field };
        Err(ApiError::invalid(
            field,
            format!(
                "contains U+{:04X} ({what}), which text here may not hold",
                u32::from(c)
            ),
        ))
    };
    match value {
        Value::String(text) => match forbidden_char(text) {
            Some((c, what)) => refuse(path, c, what),
            None => Ok(()),
        },
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, item)| check_text(item, &format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            let field = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            if let Some((c, what)) = forbidden_char(key) {
                // The key itself is at fault: name where it sits, not the key.
                return refuse(path, c, what);
            }
            check_text(item, &field)
        }),
        _ => Ok(()),
    }
}

/// The field a serde message names in backquotes (`missing field `x``, `duplicate field `x``).
fn quoted_field(message: &str) -> Option<&str> {
    message.split('`').nth(1).filter(|f| !f.is_empty())
}

/// A query string with errors in the API's shape: 400, naming the parameter where the message
/// does (a repeated parameter, an unknown one).
pub(crate) struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(q)| ApiQuery(q))
            .map_err(|e| {
                // axum's text starts with its own words; serde's part says what is wrong.
                let text = e.body_text();
                let reason = text
                    .split_once(": ")
                    .map_or(text.as_str(), |(_, reason)| reason);
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    quoted_field(reason),
                    format!("query string: {reason}"),
                )
            })
    }
}

/// Path parameters with errors in the API's shape instead of axum's text: a path segment that
/// is not UTF-8 once percent-decoded is the only way a `String` parameter fails.
pub(crate) struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(v)| ApiPath(v))
            .map_err(|e| {
                if e.status().is_server_error() {
                    return ApiError::internal(e.body_text());
                }
                ApiError::new(
                    e.status(),
                    None,
                    "the URL's path holds a part that is not text (percent-encoded bytes that \
                     are not UTF-8)",
                )
            })
    }
}

/// A run's id from the path (`{id}`), read as a UUID: a path that names no possible run is
/// answered 404 `no run "…"` before any handler reads the database. The id is the UUID's
/// usual text, the form the store keeps.
pub(crate) struct RunPath(pub String);

impl<S: Send + Sync> FromRequestParts<S> for RunPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let ApiPath(params) =
            ApiPath::<std::collections::HashMap<String, String>>::from_request_parts(parts, state)
                .await?;
        let given = params.get("id").map(String::as_str).unwrap_or_default();
        uuid::Uuid::parse_str(given)
            .map(|id| RunPath(id.to_string()))
            .map_err(|_| ApiError::not_found(format!("no run {:?}", excerpt(given))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_bodies_must_say_so() {
        use axum::http::{header::CONTENT_TYPE, HeaderMap, HeaderValue};
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(CONTENT_TYPE, HeaderValue::from_static(v));
            h
        };
        for ok in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON;charset=UTF-8",
            " application/json ",
        ] {
            assert!(require_json_content_type(&with(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/jsonp",
            "text/plain; application/json",
            "",
        ] {
            let e = require_json_content_type(&with(bad)).expect_err(bad);
            assert_eq!(e.status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{bad}");
            assert!(e.message.contains("application/json"), "{}", e.message);
        }
        let e = require_json_content_type(&HeaderMap::new()).expect_err("no content type");
        assert_eq!(e.field.as_deref(), Some("Content-Type"));
    }

    #[test]
    fn text_holds_no_nul_and_no_bidi_controls() {
        for bad in [
            '\0', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}',
            '\u{2067}', '\u{2068}', '\u{2069}',
        ] {
            let body = json!({"name": "ok", "config": {"fitness": {"opponents": ["greedy", format!("x{bad}y")]}}});
            let e = check_text(&body, "").expect_err("refused");
            assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY);
            assert_eq!(e.field.as_deref(), Some("config.fitness.opponents[1]"));
            assert!(
                e.message.contains(&format!("U+{:04X}", u32::from(bad))),
                "{}",
                e.message
            );
            let key = json!({"config": {format!("k{bad}"): 1}});
            assert_eq!(
                check_text(&key, "").expect_err("key").field.as_deref(),
                Some("config")
            );
        }
        // Neighbours of the refused ranges, and ordinary right-to-left text, pass.
        let fine = json!({"name": "\u{2029}\u{202F}\u{2065}\u{206A}\u{200F} \u{05e9}\u{05dc}\u{05d5}\u{05dd} caf\u{e9}", "n": [1, null, true]});
        assert!(check_text(&fine, "").is_ok());
    }

    #[test]
    fn repeated_keys_are_refused_at_any_depth() {
        let ok = parse_unique_keys(br#"{"a": {"b": 1, "c": [1, {"b": 2}]}, "b": 3.5}"#).unwrap();
        assert_eq!(ok, json!({"a": {"b": 1, "c": [1, {"b": 2}]}, "b": 3.5}));
        for (body, field) in [
            (r#"{"name": "a", "name": "b"}"#, "name"),
            (r#"{"config": {"seed": 1, "seed": 2}}"#, "config.seed"),
            (
                r#"{"agents": ["x", {"kind": "m", "kind": "g"}]}"#,
                "agents[1].kind",
            ),
        ] {
            let e = parse_unique_keys(body.as_bytes()).expect_err(body);
            assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
            assert_eq!(e.field.as_deref(), Some(field), "{body}");
            assert!(e.message.contains("more than once"), "{}", e.message);
        }
        let e = parse_unique_keys(b"{\"a\": 1} x").expect_err("trailing");
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
    }
}
