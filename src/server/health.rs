//! The liveness and readiness probes (`/healthz`, `/readyz`) and what they answer.

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;

use super::error::ApiError;
use super::state::SharedState;
use crate::store::Backend;

/// What `/healthz` and `/readyz` answer. Fields in alphabetical order, the order the API's
/// objects have always had.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Health {
    pub database: Backend,
    /// `ok` (alive) or `ready`.
    pub status: &'static str,
}

/// Liveness: the process answers. It asks the database nothing, so a slow or lost database
/// never makes an orchestrator restart a server that would only wait for it again.
#[utoipa::path(
    get, path = "/healthz", operation_id = "healthz",
    summary = "Liveness (answers at once, asks the database nothing) and database kind",
    responses((status = 200, description = "alive", body = Health))
)]
pub(crate) async fn healthz(State(state): State<SharedState>) -> Json<Health> {
    Json(Health {
        database: state.store.backend(),
        status: "ok",
    })
}

/// How long `/readyz` waits for the database before it answers 503.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(1);

/// 503 from `/readyz`: the database did not answer the probe in time.
pub(crate) struct NotReady;

impl utoipa::IntoResponses for NotReady {
    fn responses() -> std::collections::BTreeMap<
        String,
        utoipa::openapi::RefOr<utoipa::openapi::response::Response>,
    > {
        let text = format!(
            "the database did not answer within {} s",
            READY_TIMEOUT.as_secs_f64()
        );
        [("503".to_string(), super::api_doc::error_answer(text))].into()
    }
}

/// Readiness: the database answers a query within [`READY_TIMEOUT`], else 503 at once (a
/// pool waiting to connect would otherwise hold the probe for its whole acquire timeout).
#[utoipa::path(
    get, path = "/readyz", operation_id = "readyz",
    summary = format!("Readiness: the database answers within {} s", READY_TIMEOUT.as_secs_f64()),
    responses((status = 200, description = "ready", body = Health), NotReady)
)]
pub(crate) async fn readyz(State(state): State<SharedState>) -> Result<Json<Health>, ApiError> {
    let unready = |why: &str| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            format!("not ready: {why}"),
        )
    };
    match tokio::time::timeout(READY_TIMEOUT, state.store.ping()).await {
        Ok(Ok(())) => Ok(Json(Health {
            database: state.store.backend(),
            status: "ready",
        })),
        Ok(Err(e)) => {
            // The detail (a host, a driver's message) goes to the log only.
            tracing::warn!("not ready: the database answered with an error: {e}");
            Err(unready("the database answered with an error"))
        }
        Err(_) => {
            tracing::warn!("not ready: the database did not answer within {READY_TIMEOUT:?}");
            Err(unready("the database did not answer within 1 s"))
        }
    }
}
