//! The compute permits: moves and matches a person waits for run on the interactive pool,
//! tournaments beside the runs on the game pool, each holding a permit so that no flood of
//! requests can take the machine from the runs.

use std::sync::Arc;
use std::time::Duration;

use super::error::{self, ApiError};
use super::limits;
use super::state::{SharedState, COMPUTE_SLOTS};

/// Runs `f` (a move, a match) on the interactive pool, holding a compute permit.
pub(crate) async fn compute<T: Send + 'static>(
    state: &SharedState,
    budget: &crate::search::Budget,
    f: impl FnOnce() -> T + Send + 'static,
) -> error::ApiResult<T> {
    // The budget's clock started with the request: the wait for a slot is part of its
    // deadline, and it is short, since a person is waiting for the answer.
    let patience = budget.remaining().map_or(limits::MAX_COMPUTE_WAIT, |left| {
        left.min(limits::MAX_COMPUTE_WAIT)
    });
    let permit = match tokio::time::timeout(patience, state.compute.clone().acquire_owned()).await
    {
        Ok(permit) => permit.map_err(ApiError::internal)?,
        Err(_) => {
            return Err(ApiError::busy(
                format!(
                    "every compute slot is taken by other moves and matches (at most {COMPUTE_SLOTS} at a time): try again shortly"
                ),
                limits::COMPUTE_RETRY_AFTER_SECS,
            ))
        }
    };
    run_holding(permit, state.interactive.clone(), f).await
}

/// Runs `f` (a tournament) on the game pool beside the runs, holding a background permit.
/// The wait for a permit counts against `budget`: a tournament whose deadline passes, or that
/// is cancelled, while it waits runs `f` at once without a permit, and `f` stops under the
/// spent budget with its reason.
pub(crate) async fn compute_in_background<T: Send + 'static>(
    state: &SharedState,
    budget: &crate::search::Budget,
    f: impl FnOnce() -> T + Send + 'static,
) -> error::ApiResult<T> {
    // A budget has no waker: look at it a few times a second while waiting.
    const LOOK: Duration = Duration::from_millis(200);
    let permit = loop {
        let wait = budget.remaining().map_or(LOOK, |left| left.min(LOOK));
        match tokio::time::timeout(wait, state.background.clone().acquire_owned()).await {
            Ok(permit) => break Some(permit.map_err(ApiError::internal)?),
            Err(_) if budget.check_now().is_err() => break None,
            Err(_) => {}
        }
    };
    match permit {
        Some(permit) => run_holding(permit, state.pool.clone(), f).await,
        None => tokio::task::spawn_blocking(f)
            .await
            .map_err(ApiError::internal),
    }
}

/// The permit goes with the work, not with the request: a request whose client went away is
/// dropped at once, but its slot is free only once its computation has seen the cancel.
async fn run_holding<T: Send + 'static>(
    permit: tokio::sync::OwnedSemaphorePermit,
    pool: Arc<rayon::ThreadPool>,
    f: impl FnOnce() -> T + Send + 'static,
) -> error::ApiResult<T> {
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        pool.install(f)
    })
    .await
    .map_err(ApiError::internal)
}
