//! Processor time, measured: a [`MeteredPool`] is a rayon pool that knows the processor-time
//! clock of each of its threads, so that the time its threads spent on a piece of work can be
//! read as the difference of two totals. A pool serves one run (or one batch) at a time, so
//! that difference is that work's own processor time, whatever else the process does: what a
//! user's quota counts once a run has ended.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// A rayon pool whose threads' processor time can be read.
pub(crate) struct MeteredPool {
    pool: Arc<rayon::ThreadPool>,
    clocks: Arc<Mutex<Vec<ThreadClock>>>,
}

impl MeteredPool {
    /// A pool of `threads` threads named `name-i`, each running `on_start` first.
    pub(crate) fn build(
        threads: usize,
        name: &'static str,
        on_start: fn(),
    ) -> Result<MeteredPool, rayon::ThreadPoolBuildError> {
        let clocks = Arc::new(Mutex::new(Vec::with_capacity(threads)));
        let registry = clocks.clone();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(move |i| format!("{name}-{i}"))
            .start_handler(move |_| {
                on_start();
                if let Some(clock) = ThreadClock::current() {
                    registry
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(clock);
                }
            })
            .build()?;
        Ok(MeteredPool {
            pool: Arc::new(pool),
            clocks,
        })
    }

    pub(crate) fn pool(&self) -> &Arc<rayon::ThreadPool> {
        &self.pool
    }

    /// The processor time all the pool's threads have used since they started; `None` where
    /// the system has no per-thread clocks. Threads register as they start, so read it once the
    /// pool has run something (a difference of two readings is right either way: a thread not
    /// yet started has used nothing).
    pub(crate) fn processor_time(&self) -> Option<Duration> {
        if !ThreadClock::SUPPORTED {
            return None;
        }
        let clocks = self.clocks.lock().unwrap_or_else(PoisonError::into_inner);
        // The pool, and so every thread whose clock is listed, lives as long as `self`: a
        // listed clock never names an exited thread (whose id could have been reused).
        Some(clocks.iter().filter_map(ThreadClock::read).sum())
    }
}

/// The processor time a pool's threads spent between two readings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mark(Option<Duration>);

impl Mark {
    pub(crate) fn now(pool: &MeteredPool) -> Mark {
        Mark(pool.processor_time())
    }

    /// The time spent since `self`, and a mark for the next interval.
    pub(crate) fn lap(&mut self, pool: &MeteredPool) -> Duration {
        let now = pool.processor_time();
        let spent = match (self.0, now) {
            (Some(before), Some(after)) => after.saturating_sub(before),
            _ => Duration::ZERO,
        };
        self.0 = now;
        spent
    }
}

/// One thread's processor-time clock.
#[derive(Clone, Copy, Debug)]
struct ThreadClock(#[allow(dead_code)] libc::clockid_t);

impl ThreadClock {
    const SUPPORTED: bool = cfg!(target_os = "linux");

    /// The calling thread's clock.
    fn current() -> Option<ThreadClock> {
        #[cfg(target_os = "linux")]
        {
            let mut clock: libc::clockid_t = 0;
            // SAFETY: pthread_self is always valid for the calling thread, and the call only
            // writes the clock id it is given.
            let status = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
            (status == 0).then_some(ThreadClock(clock))
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    fn read(&self) -> Option<Duration> {
        #[cfg(target_os = "linux")]
        {
            let mut at = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: clock_gettime only writes the timespec it is given; a clock id that no
            // longer names a thread makes it fail, not misbehave.
            let status = unsafe { libc::clock_gettime(self.0, &mut at) };
            (status == 0).then(|| Duration::new(at.tv_sec as u64, at.tv_nsec as u32))
        }
        #[cfg(not(target_os = "linux"))]
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_counts_the_processor_time_of_work_on_its_threads() {
        let pool = MeteredPool::build(2, "meter-test", || {}).expect("a pool");
        let mut mark = Mark::now(&pool);
        // Each side spins until its own thread's clock has moved 60 ms: a load on the machine
        // stretches the wall time, not the processor time.
        let spin = || {
            let Some(clock) = ThreadClock::current() else {
                return;
            };
            let start = clock.read().unwrap_or_default();
            let mut x = 0u64;
            while clock.read().map_or(Duration::MAX, |t| t - start) < Duration::from_millis(60) {
                x = x.wrapping_add(1);
            }
            std::hint::black_box(x);
        };
        pool.pool().install(|| rayon::join(spin, spin));
        let spent = mark.lap(&pool);
        if ThreadClock::SUPPORTED {
            // Two spins of 60 ms each, on one thread or two: at least 120 ms, never more
            // than a few seconds.
            assert!(spent >= Duration::from_millis(120), "{spent:?}");
            assert!(spent <= Duration::from_secs(10), "{spent:?}");
        } else {
            assert_eq!(spent, Duration::ZERO);
        }
        // Idle, the pool's threads use (almost) nothing.
        std::thread::sleep(Duration::from_millis(50));
        assert!(mark.lap(&pool) < Duration::from_millis(40));
    }
}
