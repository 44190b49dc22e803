//! Waiting out a database that does not answer (a lost connection, a restarting server), so
//! that a run survives an outage instead of failing: the executor's own writes and the queue
//! coordinator's hand-outs and collections retry through the one [`Outage`] here, and the
//! store and the queue tell a passing failure from a lasting one by the same SQLSTATE rule.

use std::fmt::Display;
use std::future::Future;
use std::time::{Duration, Instant};

/// How long a run's owner waits out a database that does not answer before it gives up: long
/// enough for a PostgreSQL restart or a fail-over, short enough that a database gone for good
/// fails its runs within minutes.
const MAX_OUTAGE: Duration = Duration::from_secs(600);

/// The first wait after a failure; each further wait doubles, up to [`LONGEST_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(500);
const LONGEST_WAIT: Duration = Duration::from_secs(10);

/// An error that may say the database will answer again later.
pub(crate) trait Transient: Display {
    fn is_transient(&self) -> bool;
}

/// Whether a PostgreSQL SQLSTATE says the connection, not the statement, failed: class 08
/// (connection exception) or 57P01..57P03 (admin shutdown, crash shutdown, cannot connect
/// now). Such an error is worth waiting out; any other is the statement's own and lasts.
pub(crate) fn is_connection_sqlstate(code: &str) -> bool {
    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
}

/// One outage being waited out: back-off from [`FIRST_WAIT`] to [`LONGEST_WAIT`], for at most
/// [`MAX_OUTAGE`] from its first failure.
pub(crate) struct Outage {
    started: Instant,
    wait: Duration,
    /// [`MAX_OUTAGE`], but in tests.
    limit: Duration,
}

impl Outage {
    pub(crate) fn new() -> Outage {
        Outage {
            started: Instant::now(),
            wait: FIRST_WAIT,
            limit: MAX_OUTAGE,
        }
    }

    /// Sleeps before the next try after `error`, which happened while doing `what` for
    /// `run_id`; gives `error` back when it is not transient or the outage has lasted too long.
    pub(crate) async fn wait_out<E: Transient>(
        &mut self,
        run_id: &str,
        what: &str,
        error: E,
    ) -> Result<(), E> {
        if !error.is_transient() || self.started.elapsed() >= self.limit {
            return Err(error);
        }
        tracing::warn!(run = %run_id, "{what}: {error}; retrying in {:?}", self.wait);
        tokio::time::sleep(self.wait).await;
        self.wait = (self.wait * 2).min(LONGEST_WAIT);
        Ok(())
    }
}

/// Runs `op` until it succeeds, fails for good, or the database has been unreachable for
/// [`MAX_OUTAGE`].
pub(crate) async fn with_retries<T, E, F, Fut>(run_id: &str, what: &str, mut op: F) -> Result<T, E>
where
    E: Transient,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut outage = Outage::new();
    loop {
        match op().await {
            Ok(value) => return Ok(value),
            Err(e) => outage.wait_out(run_id, what, e).await?,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[derive(Debug)]
    struct Failure(bool);

    impl Display for Failure {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "failure (transient: {})", self.0)
        }
    }

    impl Transient for Failure {
        fn is_transient(&self) -> bool {
            self.0
        }
    }

    #[test]
    fn connection_failures_are_told_from_the_statements_own() {
        for code in ["08000", "08006", "08P01", "57P01", "57P02", "57P03"] {
            assert!(is_connection_sqlstate(code), "{code}");
        }
        for code in ["23505", "40001", "42P01", "57014", "3D000"] {
            assert!(!is_connection_sqlstate(code), "{code}");
        }
    }

    #[tokio::test]
    async fn transient_errors_are_retried_and_lasting_ones_are_not() {
        let tries = Cell::new(0);
        let got = with_retries("r", "testing", || {
            tries.set(tries.get() + 1);
            let n = tries.get();
            async move {
                match n {
                    1 | 2 => Err(Failure(true)),
                    _ => Ok(n),
                }
            }
        })
        .await;
        assert_eq!(got.ok(), Some(3));

        tries.set(0);
        let got: Result<u32, Failure> = with_retries("r", "testing", || {
            tries.set(tries.get() + 1);
            async { Err(Failure(false)) }
        })
        .await;
        assert!(got.is_err());
        assert_eq!(tries.get(), 1);
    }

    #[tokio::test]
    async fn an_outage_past_its_limit_is_not_waited_out() {
        // An outage that has lasted its limit already.
        let mut long = Outage {
            limit: Duration::ZERO,
            ..Outage::new()
        };
        let quick = Instant::now();
        assert!(long.wait_out("r", "testing", Failure(true)).await.is_err());
        assert!(quick.elapsed() < FIRST_WAIT);
    }
}
