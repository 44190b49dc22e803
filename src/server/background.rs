//! The tournaments' share of the cores, as separate pools that tournaments and SPRT tests
//! take turns on.

use std::sync::{Arc, Mutex};

use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore};

type FreePools = Arc<Mutex<Vec<Arc<rayon::ThreadPool>>>>;

/// The tournaments' share of the cores, cut into one pool per background slot: a turn takes
/// a whole pool, so every tournament or SPRT test that plays makes progress. (With one pool
/// for all, the first kept every thread busy: rayon's threads serve the work they already
/// have before a job given from outside, and a second "running" tournament played nothing.)
pub(crate) struct BackgroundPools {
    permits: Arc<Semaphore>,
    free: FreePools,
    slots: usize,
}

impl BackgroundPools {
    /// `threads` in all (at least one), in at most `max_slots` pools of equal size.
    pub(crate) fn new(
        threads: usize,
        max_slots: usize,
        build: impl Fn(usize) -> anyhow::Result<rayon::ThreadPool>,
    ) -> anyhow::Result<BackgroundPools> {
        let threads = threads.max(1);
        let slots = max_slots.clamp(1, threads);
        let pools = (0..slots)
            .map(|_| build(threads / slots).map(Arc::new))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(BackgroundPools {
            permits: Arc::new(Semaphore::new(slots)),
            free: Arc::new(Mutex::new(pools)),
            slots,
        })
    }

    /// Tournaments and SPRT tests that may play at once.
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// Turns taken now.
    pub(crate) fn in_use(&self) -> usize {
        self.slots - self.permits.available_permits().min(self.slots)
    }

    /// A turn on one of the pools, once one is free.
    pub(crate) async fn turn(&self) -> Result<BackgroundTurn, AcquireError> {
        let permit = self.permits.clone().acquire_owned().await?;
        // A permit is held for each pool out of the free list, so one is there.
        let pool = self
            .free
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop();
        Ok(BackgroundTurn {
            pool,
            free: self.free.clone(),
            _permit: permit,
        })
    }
}

/// A turn on one of the background pools, given back when dropped.
pub(crate) struct BackgroundTurn {
    pool: Option<Arc<rayon::ThreadPool>>,
    free: FreePools,
    // Dropped after `drop` has put the pool back, so the next holder finds one.
    _permit: OwnedSemaphorePermit,
}

impl BackgroundTurn {
    /// The pool this turn plays on.
    pub(crate) fn pool(&self) -> Option<Arc<rayon::ThreadPool>> {
        self.pool.clone()
    }
}

impl Drop for BackgroundTurn {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            self.free
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(pool);
        }
    }
}
