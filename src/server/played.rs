//! What tournaments and SPRT tests share as rows one server plays and every server reads
//! ([`crate::store::Played`]): the owner's heartbeat loop, and reads that give up on rows
//! whose server died.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use super::error::{ApiError, ApiResult};
use super::guard::{not_yours, Caller};
use super::state::SharedState;
use crate::search::Budget;
use crate::store::{PlayLease, Played, PlayedRow, StoreError};

/// How often the process playing a row writes its progress and reads whether it was
/// cancelled (through any server): the heartbeat of its ownership too.
const BEAT: Duration = Duration::from_millis(250);

/// The owner's side of a row it plays: every [`BEAT`] it writes the progress and state that
/// `now` gives (a state of `None` leaves the stored one), and stops the games (`cancel`) once
/// the row says cancelled (or is gone, or no longer this process's) or the process is
/// stopping.
pub(super) async fn keep_playing(
    state: SharedState,
    kind: Played,
    id: String,
    cancel: Budget,
    now: impl Fn() -> (f64, Option<Value>),
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(BEAT) => {}
            _ = state.stopping() => {
                cancel.cancel();
                return;
            }
        }
        let (progress, shown) = now();
        match state
            .store
            .played_progress(kind, &id, &state.owner, progress, shown.as_ref())
            .await
        {
            Ok(PlayLease::Playing) => {}
            Ok(PlayLease::Stop) => {
                tracing::info!(%id, "{} cancelled: its games stop", kind.noun());
                cancel.cancel();
                return;
            }
            // The database may answer at the next beat; the games go on meanwhile.
            Err(e) => tracing::warn!(%id, "writing a {}'s progress: {e}", kind.noun()),
        }
    }
}

/// Reads played rows with `read`. When some of them were abandoned (their server stopped
/// beating: it died, as one that stops cleanly marks its own), they are marked failed and, if
/// any was, read again.
pub(super) async fn read_failing_abandoned<R, Read>(
    state: &SharedState,
    kind: Played,
    read: impl Fn() -> Read,
    rows: impl Fn(&R) -> &[PlayedRow],
) -> ApiResult<R>
where
    Read: Future<Output = Result<R, StoreError>>,
{
    let read_first = read().await?;
    if !rows(&read_first).iter().any(|r| r.abandoned())
        || state.store.fail_abandoned(kind).await? == 0
    {
        return Ok(read_first);
    }
    Ok(read().await?)
}

/// A row from the database, the same on every server while it plays and after (one whose
/// server died marked failed first); `not_found` when there is none.
pub(super) async fn show(
    state: &SharedState,
    kind: Played,
    id: &str,
    not_found: impl FnOnce() -> ApiError,
) -> ApiResult<PlayedRow> {
    if !names_a_row(id) {
        return Err(not_found());
    }
    let read = || state.store.played(kind, id);
    read_failing_abandoned(state, kind, read, Option::as_slice)
        .await?
        .ok_or_else(not_found)
}

/// Whether `id` could name a row: every id is a UUID in its usual text. Anything else is
/// answered 404 without asking the database, which PostgreSQL would refuse for a NUL byte
/// (a 500, not the client's 404).
pub(super) fn names_a_row(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok()
}

/// Cancels a row that is still being played, whichever server plays it: stored as
/// `cancelled` at once, and the owner stops its games within a beat. The row as it stands
/// then; `over` (a 409, given the status) when it was no longer played, `not_found` when
/// there is none, 403 when `caller` may not change what its creator started.
pub(super) async fn cancel(
    state: &SharedState,
    caller: &Caller,
    kind: Played,
    id: &str,
    not_found: impl FnOnce() -> ApiError,
    over: impl FnOnce(&str) -> ApiError,
) -> ApiResult<PlayedRow> {
    if !names_a_row(id) {
        return Err(not_found());
    }
    let before = state.store.played(kind, id).await?.ok_or_else(not_found)?;
    if !caller.may_change(before.created_by.as_deref()) {
        return Err(not_yours(
            &format!("{} {id}", kind.noun()),
            before.created_by.as_deref(),
        ));
    }
    let cancelled = state.store.cancel_played(kind, id).await?;
    let row = state.store.played(kind, id).await?.unwrap_or(before);
    if !cancelled {
        return Err(over(&row.status));
    }
    tracing::info!(%id, "{} cancelled", kind.noun());
    Ok(row)
}
