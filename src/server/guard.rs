//! What a request passes before a handler sees it: a request that changes state and comes
//! from a web page must come from this server's own pages, at one of its public origins
//! (`--public-origin`), or from an origin allowed with `--allow-origin`; with a token
//! configured it needs the bearer token. Reads (GET, HEAD, OPTIONS) stay open to any client
//! that names the server by an address, `localhost` or a public origin's host (`Host`).

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer};

use super::error::ApiError;
use super::state::SharedState;
use crate::game::excerpt;
use crate::store::{StoreError, User};

pub(crate) fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Who sent a request that changes state, as [`auth`] found: handlers that change a run, a
/// tournament or an SPRT test compare it with the owner (`Caller::may_change`).
#[derive(Clone, Debug)]
pub(crate) enum Caller {
    /// The server's own token (`KALAH_TUNER_TOKEN`), or no token on a server that needs
    /// none: may change anything.
    Admin,
    /// A user of the database (`kalah-tuner users`).
    User(User),
}

impl Caller {
    /// Whether this caller may rename, cancel, resume or delete what `owner` created (none:
    /// created with the server's own token, or before there were users).
    pub(crate) fn may_change(&self, owner: Option<&str>) -> bool {
        match self {
            Caller::Admin => true,
            Caller::User(user) => user.admin || owner == Some(user.name.as_str()),
        }
    }

    /// The owner of what this caller creates.
    pub(crate) fn owner(&self) -> Option<String> {
        match self {
            Caller::Admin => None,
            Caller::User(user) => Some(user.name.clone()),
        }
    }
}

/// The answer to a caller who may not change `what`, which belongs to `owner`.
pub(crate) fn not_yours(what: &str, owner: Option<&str>) -> ApiError {
    let owner = owner.map_or_else(|| "an admin".to_string(), |o| format!("user {o:?}"));
    ApiError::new(
        StatusCode::FORBIDDEN,
        None,
        format!("{what} belongs to {owner}: only its owner or an admin may change it"),
    )
}

/// A state-changing request needs a token when the server has one (`KALAH_TUNER_TOKEN`) or
/// has users (`kalah-tuner users`): `Authorization: Bearer <token>`, the server's token or a
/// user's. A server with neither stays open, as before users existed. Reads stay open.
/// The caller found goes into the request's extensions for the handlers.
pub(crate) async fn auth(
    State(state): State<SharedState>,
    mut req: Request,
    next: Next,
) -> Response {
    if !changes_state(req.method()) {
        return next.run(req).await;
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_credentials)
        .map(str::to_string);
    match caller(&state, given.as_deref()).await {
        Ok(Some(caller)) => {
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Ok(None) => {
            let mut resp = ApiError::new(
                StatusCode::UNAUTHORIZED,
                Some("Authorization"),
                "this route needs Authorization: Bearer <token>, the server's KALAH_TUNER_TOKEN or a user's token",
            )
            .into_response();
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            resp
        }
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// The caller a token names, or none when the server refuses it. Users are read from the
/// database on every request, so a removed user is refused at once by every server.
async fn caller(state: &SharedState, given: Option<&str>) -> Result<Option<Caller>, StoreError> {
    // The server's own token needs no look at the database.
    if let (Some(given), Some(token)) = (given, state.token.as_deref()) {
        if tokens_match(given, token) {
            return Ok(Some(Caller::Admin));
        }
    }
    let has_users = state.store.has_users().await?;
    if state.token.is_none() && !has_users {
        return Ok(Some(Caller::Admin));
    }
    match given {
        Some(given) if has_users => Ok(state
            .store
            .user_by_token(&token_digest(given))
            .await?
            .map(Caller::User)),
        _ => Ok(None),
    }
}

/// The SHA-256 digest of a token in lower-case hex: what the users table keeps of it.
pub(crate) fn token_digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `POST /api/token-check`: answered only when the request may change state, so a client
/// learns whether the server takes its token (or needs none) without asking for a change
/// (the guards answer 401 or 403 first).
#[utoipa::path(
    post, path = "/token-check", operation_id = "check_token",
    summary = "Whether this request's token (or none) may change state: 204 if so, 401 if not; changes nothing",
    responses((status = 204, description = "the server takes this request's token, or needs none"))
)]
pub(crate) async fn check_token() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// The credentials of an `Authorization: Bearer <token>` header. The scheme's name is
/// case-insensitive (RFC 7235), so `bearer` and `BEARER` are taken as well.
pub(crate) fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// Compares the SHA-256 digests of the two tokens, every byte of them: digests have one
/// length whatever the tokens' lengths, and the loop does not stop at the first difference,
/// so response times tell neither how long the token is nor how much of a guess was right.
pub(crate) fn tokens_match(given: &str, token: &str) -> bool {
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
pub(crate) fn normalize_origin(text: &str) -> Option<String> {
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

/// The origins of the server's own pages when none are configured (`--public-origin`): the
/// bound address over http, and on a loopback or unspecified address its loopback forms
/// (`127.0.0.1`, `localhost`, `[::1]`) at the same port, which is how a browser on the same
/// machine (or through a published container port) opens it.
pub(crate) fn default_public_origins(addr: std::net::SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut origins = Vec::new();
    let ip = addr.ip();
    if !ip.is_unspecified() {
        origins.extend(normalize_origin(&format!("http://{addr}")));
    }
    if ip.is_loopback() || ip.is_unspecified() {
        for host in ["127.0.0.1", "localhost", "[::1]"] {
            if let Some(o) = normalize_origin(&format!("http://{host}:{port}")) {
                if !origins.contains(&o) {
                    origins.push(o);
                }
            }
        }
    }
    origins
}

/// Whether a request from a page at `origin` (the raw header) may change state: the origin
/// must be one of the server's public origins or an allowed one. The request's `Host` is not
/// looked at: a page whose name an attacker points at this server (DNS rebinding) sends its
/// own name in both `Host` and `Origin`.
pub(crate) fn origin_allowed(origin: &HeaderValue, public: &[String], allowed: &[String]) -> bool {
    let Some(origin) = origin.to_str().ok().and_then(normalize_origin) else {
        return false;
    };
    public.contains(&origin) || allowed.contains(&origin)
}

/// A browser names the page behind every cross-site request in `Origin` (and same-site ones
/// that change state), and any site's page can make a user's browser POST to a server on
/// localhost. So a state change that carries an `Origin` must come from this server's own
/// pages or an allowed origin; clients that are not browsers send no `Origin` and pass.
pub(crate) async fn origin(State(state): State<SharedState>, req: Request, next: Next) -> Response {
    if changes_state(req.method()) {
        if let Some(origin) = req.headers().get(header::ORIGIN) {
            if !origin_allowed(origin, &state.public_origins, &state.allowed_origins) {
                let shown = String::from_utf8_lossy(origin.as_bytes()).into_owned();
                return ApiError::new(
                    StatusCode::FORBIDDEN,
                    Some("Origin"),
                    format!(
                        "cross-site request refused: {} is neither one of this server's public \
                         origins (--public-origin) nor an origin allowed with --allow-origin",
                        excerpt(&shown)
                    ),
                )
                .into_response();
            }
        }
    }
    next.run(req).await
}

/// The host name of a `Host` header (`name[:port]`, `[v6]:port`), in lower case.
fn host_name(host: &str) -> Option<String> {
    let authority: axum::http::uri::Authority = host.trim().parse().ok()?;
    Some(authority.host().to_ascii_lowercase())
}

/// Whether a request that names `host` in its `Host` header may be answered. A page whose
/// domain an attacker points at this server (DNS rebinding) sends that domain as `Host`, and
/// would otherwise read runs, exports, metrics and worker host names from a server on a
/// user's loopback or LAN. So the name must be an IP address, `localhost`, or the host of a
/// public or allowed origin; an address cannot be rebound, and the others are the owner's.
pub(crate) fn host_allowed(host: &str, public: &[String], allowed: &[String]) -> bool {
    let Some(name) = host_name(host) else {
        return false;
    };
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    if bare.parse::<std::net::IpAddr>().is_ok() || name == "localhost" {
        return true;
    }
    public.iter().chain(allowed).any(|origin| {
        origin
            .split_once("://")
            .and_then(|(_, authority)| host_name(authority))
            .is_some_and(|h| h == name)
    })
}

/// Refuses a request whose `Host` names this server by a name it was not given (see
/// [`host_allowed`]), reads included. The health probes stay open: orchestrators call them by
/// whatever name their network gives the container. Clients that send no `Host` (HTTP/1.0)
/// pass: a browser always sends one.
pub(crate) async fn host(State(state): State<SharedState>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let probe = matches!(
        path,
        "/healthz" | "/readyz" | "/api/healthz" | "/api/readyz"
    );
    if !probe {
        if let Some(host) = req.headers().get(header::HOST) {
            let text = String::from_utf8_lossy(host.as_bytes()).into_owned();
            if !host_allowed(&text, &state.public_origins, &state.allowed_origins) {
                return ApiError::new(
                    StatusCode::FORBIDDEN,
                    Some("Host"),
                    format!(
                        "this server does not answer to the name {}: open it by its address, \
                         at localhost, or at a name given with --public-origin",
                        excerpt(&text)
                    ),
                )
                .into_response();
            }
        }
    }
    next.run(req).await
}

/// No page of another site may frame the dashboard (clickjacking: a hidden frame over a
/// decoy button that starts or deletes runs), and browsers must take each answer as the type
/// it declares. Every answer gets these; they cost nothing on JSON.
pub(crate) async fn security_headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("frame-ancestors 'none'"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// CORS for the `--allow-origin` list only (`None` without one): pages there may call every
/// route with a JSON body and the token; any other origin gets no CORS headers, so browsers
/// keep its pages from reading the answers or sending anything a form could not.
pub(crate) fn cors(allowed: &[String]) -> Option<CorsLayer> {
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
    fn only_public_and_allowed_origins_change_state() {
        let allowed = |o: &'static str, public: &[String], list: &[String]| {
            origin_allowed(&HeaderValue::from_static(o), public, list)
        };
        let local = default_public_origins("127.0.0.1:8080".parse().expect("addr"));
        assert_eq!(
            local,
            [
                "http://127.0.0.1:8080",
                "http://localhost:8080",
                "http://[::1]:8080"
            ]
        );
        assert!(allowed("http://127.0.0.1:8080", &local, &[]));
        assert!(allowed("http://LOCALHOST:8080/", &local, &[]));
        assert!(allowed("http://[::1]:8080", &local, &[]));
        assert!(!allowed("https://127.0.0.1:8080", &local, &[]));
        assert!(!allowed("http://127.0.0.1:8081", &local, &[]));
        assert!(!allowed("http://evil.example", &local, &[]));
        assert!(!allowed("http://evil.example:8080", &local, &[]));
        assert!(!allowed("null", &local, &[]));
        let list = vec!["http://localhost:3000".to_string()];
        assert!(allowed("http://localhost:3000", &local, &list));
        assert!(!allowed("http://localhost:3001", &local, &list));

        let lan = default_public_origins("192.168.1.5:80".parse().expect("addr"));
        assert_eq!(lan, ["http://192.168.1.5"]);
        assert!(allowed("http://192.168.1.5:80", &lan, &[]));
        assert!(!allowed("http://localhost", &lan, &[]));
        let any = default_public_origins("0.0.0.0:8080".parse().expect("addr"));
        assert_eq!(
            any,
            [
                "http://127.0.0.1:8080",
                "http://localhost:8080",
                "http://[::1]:8080"
            ]
        );
        let v6 = default_public_origins("[::1]:9000".parse().expect("addr"));
        assert_eq!(
            v6,
            [
                "http://[::1]:9000",
                "http://127.0.0.1:9000",
                "http://localhost:9000"
            ]
        );
        let public = vec!["https://tuner.example.org".to_string()];
        assert!(allowed("https://tuner.example.org", &public, &[]));
        assert!(!allowed("http://tuner.example.org", &public, &[]));
    }

    #[test]
    fn only_addresses_localhost_and_given_names_are_answered() {
        let public = vec!["https://tuner.example.org".to_string()];
        let allowed = vec!["http://localhost:3000".to_string()];
        for ok in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "192.168.1.5:80",
            "[::1]:8080",
            "localhost:8080",
            "LOCALHOST",
            "tuner.example.org",
            "Tuner.Example.Org:443",
        ] {
            assert!(host_allowed(ok, &public, &allowed), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "127.0.0.1.evil.example",
            "localhost.evil.example",
            "",
            "exa mple",
        ] {
            assert!(!host_allowed(bad, &public, &allowed), "{bad}");
        }
    }

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        for (header, want) in [
            ("Bearer s3cret", Some("s3cret")),
            ("bearer s3cret", Some("s3cret")),
            ("BEARER  s3cret ", Some("s3cret")),
            ("Basic s3cret", None),
            ("Bearers3cret", None),
            ("s3cret", None),
        ] {
            assert_eq!(bearer_credentials(header), want, "{header:?}");
        }
    }

    #[test]
    fn tokens_compare_by_digest() {
        assert!(tokens_match("s3cret", "s3cret"));
        for wrong in ["", "s", "s3cre", "s3cret ", "S3cret", &"s3cret".repeat(100)] {
            assert!(!tokens_match(wrong, "s3cret"), "{wrong:?}");
        }
    }
}
