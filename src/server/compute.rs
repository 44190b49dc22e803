//! The compute permits: moves and matches a person waits for run on the interactive pool,
//! tournaments on a pool of their own beside the runs' (their share of the cores), each
//! holding a permit so that no flood of requests can take the machine from the runs, and
//! none of them ever holds a thread of the runs' pool.

use std::sync::Arc;
use std::time::Duration;

use super::background::BackgroundTurn;
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
    let _stop_on_shutdown = cancel_on_shutdown(state, budget);
    run_holding(permit, state.interactive.clone(), f).await
}

/// Cancels `budget` once the process starts to stop, until dropped: a stopping server
/// waits for the requests under way, and a match may have minutes left before its deadline.
fn cancel_on_shutdown(state: &SharedState, budget: &crate::search::Budget) -> StopWatch {
    let (stopping, budget) = (state.stopping(), budget.clone());
    StopWatch(
        tokio::spawn(async move {
            stopping.await;
            budget.cancel();
        })
        .abort_handle(),
    )
}

/// See [`cancel_on_shutdown`].
struct StopWatch(tokio::task::AbortHandle);

impl Drop for StopWatch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Waits for a turn on the tournaments' pools. The wait counts against `budget`: `None` once
/// its deadline passes or it is cancelled meanwhile.
pub(crate) async fn background_turn(
    state: &SharedState,
    budget: &crate::search::Budget,
) -> error::ApiResult<Option<BackgroundTurn>> {
    // A budget has no waker: look at it a few times a second while waiting.
    const LOOK: Duration = Duration::from_millis(200);
    loop {
        let wait = budget.remaining().map_or(LOOK, |left| left.min(LOOK));
        match tokio::time::timeout(wait, state.background.turn()).await {
            Ok(turn) => return Ok(Some(turn.map_err(ApiError::internal)?)),
            Err(_) if budget.check_now().is_err() => return Ok(None),
            Err(_) => {}
        }
    }
}

/// Runs `f` (a tournament) on the pool of `turn` from [`background_turn`]; without one (its
/// budget was spent while it waited) `f` runs at once off the pools, and stops under the
/// spent budget with its reason.
pub(crate) async fn compute_in_background<T: Send + 'static>(
    turn: Option<BackgroundTurn>,
    f: impl FnOnce() -> T + Send + 'static,
) -> error::ApiResult<T> {
    match turn.and_then(|turn| turn.pool().map(|pool| (turn, pool))) {
        Some((turn, pool)) => tokio::task::spawn_blocking(move || {
            let _turn = turn;
            pool.install(f)
        })
        .await
        .map_err(ApiError::internal),
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
