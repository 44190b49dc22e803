//! Cooperative cancellation of long computations: a run's generation, a tournament. The
//! owner keeps a clone of the [`Cancel`] handed to the computation and sets it; the
//! computation looks at it between games (never inside one), skips what is left and its
//! caller drops the partial result. Games already played are not undone, so a cancelled
//! computation stops within one game per thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag shared by the owner of a computation and the computation. The default is a flag
/// nobody holds, which is never set.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks the computation to stop; it sees this before its next game.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}
