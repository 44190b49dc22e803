//! What a request passes before a handler sees it: a request that changes state and comes
//! from a web page must come from this server's own pages (or an origin allowed with
//! `--allow-origin`), and with a token configured it needs the bearer token. Reads (GET,
//! HEAD, OPTIONS) stay open.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer};

use super::error::ApiError;
use super::SharedState;
use crate::game::excerpt;

fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// With a token configured, every state-changing request needs `Authorization: Bearer
/// <token>`; reads stay open.
pub async fn auth(State(state): State<SharedState>, req: Request, next: Next) -> Response {
    let Some(token) = &state.token else {
        return next.run(req).await;
    };
    if changes_state(req.method()) {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        if !given.is_some_and(|g| tokens_match(g, token)) {
            let mut resp = ApiError::new(
                StatusCode::UNAUTHORIZED,
                Some("Authorization"),
                "this route needs Authorization: Bearer <KALAH_TUNER_TOKEN>",
            )
            .into_response();
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return resp;
        }
    }
    next.run(req).await
}

/// Compares the SHA-256 digests of the two tokens, every byte of them: digests have one
/// length whatever the tokens' lengths, and the loop does not stop at the first difference,
/// so response times tell neither how long the token is nor how much of a guess was right.
pub fn tokens_match(given: &str, token: &str) -> bool {
    let a = Sha256::digest(given.as_bytes());
    let b = Sha256::digest(token.as_bytes());
    let difference = a
        .iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

/// `scheme://host[:port]` as browsers send it in `Origin`, normalised for comparison: scheme
/// and host in lower case, the scheme's default port left out, one trailing `/` allowed (people
/// paste URLs). `None` for anything else: another scheme, a path, user info, `null`.
pub fn normalize_origin(text: &str) -> Option<String> {
    let text = text.trim();
    let text = text.strip_suffix('/').unwrap_or(text);
    let (scheme, authority) = text.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    if authority.is_empty()
        || authority
            .chars()
            .any(|c| matches!(c, '/' | '?' | '#' | '@' | '\\') || c.is_whitespace())
    {
        return None;
    }
    // Uri checks the host's characters and splits off the port, brackets of IPv6 included.
    let uri: Uri = format!("{scheme}://{authority}").parse().ok()?;
    let host = uri.host().filter(|h| !h.is_empty())?.to_ascii_lowercase();
    let port = match uri.authority()?.as_str().rsplit_once(']') {
        // An IPv6 literal: a port only after the closing bracket.
        Some((_, rest)) if !rest.is_empty() => Some(rest.strip_prefix(':')?.parse::<u16>().ok()?),
        Some(_) => None,
        None => match authority.rsplit_once(':') {
            Some((_, p)) => Some(p.parse::<u16>().ok()?),
            None => None,
        },
    };
    Some(match port {
        Some(p) if p != default_port => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    })
}

/// Whether `origin` is this server as the request reached it: the same host and port as the
/// request's `Host` (HTTP/2: its authority), under the origin's own scheme, since behind a TLS
/// proxy the page is https while the server itself speaks http.
fn same_origin(origin: &str, headers: &HeaderMap, uri: &Uri) -> bool {
    let Some((scheme, _)) = origin.split_once("://") else {
        return false;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| uri.authority().map(|a| a.as_str()));
    host.and_then(|h| normalize_origin(&format!("{scheme}://{h}")))
        .is_some_and(|own| own == origin)
}

/// Whether a request from a page at `origin` (the raw header) may change state.
pub fn origin_allowed(
    origin: &HeaderValue,
    headers: &HeaderMap,
    uri: &Uri,
    allowed: &[String],
) -> bool {
    let Some(origin) = origin.to_str().ok().and_then(normalize_origin) else {
        return false;
    };
    allowed.contains(&origin) || same_origin(&origin, headers, uri)
}

/// A browser names the page behind every cross-site request in `Origin` (and same-site ones
/// that change state), and any site's page can make a user's browser POST to a server on
/// localhost. So a state change that carries an `Origin` must come from this server's own
/// pages or an allowed origin; clients that are not browsers send no `Origin` and pass.
pub async fn origin(State(state): State<SharedState>, req: Request, next: Next) -> Response {
    if changes_state(req.method()) {
        if let Some(origin) = req.headers().get(header::ORIGIN) {
            if !origin_allowed(origin, req.headers(), req.uri(), &state.allowed_origins) {
                let shown = String::from_utf8_lossy(origin.as_bytes()).into_owned();
                return ApiError::new(
                    StatusCode::FORBIDDEN,
                    Some("Origin"),
                    format!(
                        "cross-site request refused: {} is neither this server nor an origin \
                         allowed with --allow-origin",
                        excerpt(&shown)
                    ),
                )
                .into_response();
            }
        }
    }
    next.run(req).await
}

/// CORS for the `--allow-origin` list only (`None` without one): pages there may call every
/// route with a JSON body and the token; any other origin gets no CORS headers, so browsers
/// keep its pages from reading the answers or sending anything a form could not.
pub fn cors(allowed: &[String]) -> Option<CorsLayer> {
    if allowed.is_empty() {
        return None;
    }
    let allowed = allowed.to_vec();
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::predicate(move |origin, _| {
                origin
                    .to_str()
                    .ok()
                    .and_then(normalize_origin)
                    .is_some_and(|o| allowed.contains(&o))
            }))
            .allow_methods(AllowMethods::list([
                Method::GET,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
            ]))
            .allow_headers(AllowHeaders::list([
                header::CONTENT_TYPE,
                header::AUTHORIZATION,
            ])),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_normalise() {
        for (given, want) in [
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("HTTP://Example.COM/", "http://example.com"),
            ("http://example.com:80", "http://example.com"),
            ("https://example.com:443", "https://example.com"),
            ("https://example.com:80", "https://example.com:80"),
            ("http://[::1]:8080", "http://[::1]:8080"),
            ("http://[::1]", "http://[::1]"),
            (
                " https://tuner.example.org:8443 ",
                "https://tuner.example.org:8443",
            ),
        ] {
            assert_eq!(normalize_origin(given).as_deref(), Some(want), "{given}");
        }
        for bad in [
            "null",
            "",
            "example.com",
            "ftp://example.com",
            "http://",
            "http://example.com/path",
            "http://user@example.com",
            "http://example.com?x",
            "http://example.com:99999",
            "http://example.com:port",
            "http://[::1]x",
            "http://exa mple.com",
            "*",
        ] {
            assert_eq!(normalize_origin(bad), None, "{bad}");
        }
    }

    #[test]
    fn same_origin_follows_the_host_header() {
        let uri: Uri = "/api/runs".parse().expect("uri");
        let host = |h: &'static str| {
            let mut m = HeaderMap::new();
            m.insert(header::HOST, HeaderValue::from_static(h));
            m
        };
        let allowed = |o: &'static str, h: &HeaderMap, list: &[String]| {
            origin_allowed(&HeaderValue::from_static(o), h, &uri, list)
        };
        let local = host("127.0.0.1:8080");
        assert!(allowed("http://127.0.0.1:8080", &local, &[]));
        assert!(allowed("https://127.0.0.1:8080", &local, &[]));
        assert!(!allowed("http://127.0.0.1:8081", &local, &[]));
        assert!(!allowed("http://localhost:8080", &local, &[]));
        assert!(!allowed("http://evil.example", &local, &[]));
        assert!(!allowed("null", &local, &[]));
        assert!(allowed(
            "https://tuner.example.org",
            &host("tuner.example.org"),
            &[]
        ));
        assert!(allowed(
            "http://tuner.example.org",
            &host("Tuner.Example.org:80"),
            &[]
        ));
        assert!(!allowed(
            "https://tuner.example.org",
            &host("tuner.example.org:80"),
            &[]
        ));
        assert!(!allowed("http://127.0.0.1:8080", &HeaderMap::new(), &[]));
        let list = vec!["http://localhost:3000".to_string()];
        assert!(allowed("http://localhost:3000", &local, &list));
        assert!(allowed("http://LOCALHOST:3000", &local, &list));
        assert!(!allowed("http://localhost:3001", &local, &list));
    }

    #[test]
    fn tokens_compare_by_digest() {
        assert!(tokens_match("s3cret", "s3cret"));
        for wrong in ["", "s", "s3cre", "s3cret ", "S3cret", &"s3cret".repeat(100)] {
            assert!(!tokens_match(wrong, "s3cret"), "{wrong:?}");
        }
    }
}
