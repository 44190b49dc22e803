//! What a request passes before a handler sees it: with a token configured, the bearer token
//! of every request that changes state. Reads (GET, HEAD, OPTIONS) stay open.

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::error::ApiError;
use super::SharedState;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_by_digest() {
        assert!(tokens_match("s3cret", "s3cret"));
        for wrong in ["", "s", "s3cre", "s3cret ", "S3cret", &"s3cret".repeat(100)] {
            assert!(!tokens_match(wrong, "s3cret"), "{wrong:?}");
        }
    }
}
