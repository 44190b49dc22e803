//! Bounds on a computation that someone else may need to stop: a tournament, a run's
//! generation, a match or a single move asked for over HTTP.
//!
//! A [`Budget`] is shared (cloned) between the owner of a computation and the computation. It
//! holds a stop flag the owner can set ([`Budget::cancel`]), an optional wall-clock deadline
//! and an optional cap on the positions one move's search may visit. Searches read the stop
//! flag at every position (alpha-beta, Pekar's minimax) or playout (MCTS), and every thousand
//! positions in the exact solver, so that a cancel reaches inside a game at once; the clock
//! and the node cap they read every few thousand positions through [`Budget::check`], as
//! reading the clock costs more than a leaf. Game loops look at it between games through
//! `Budget::check_now`. Once a budget is spent it stays spent: every search under it
//! returns at once with whatever move it has, and the owner throws the partial result away,
//! reporting [`Budget::stopped`] as the reason.
//!
//! The default budget is unlimited: only a cancel stops it. The command line runs under one
//! nobody cancels; the server's runs and the batch workers' games under one their owner
//! cancels when the run is cancelled or deleted or the process stops. A search that is not
//! stopped never looks at anything but the flag, so its result is the same with any budget.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a computation was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Stopped {
    /// The owner cancelled it (a user's cancel, a client that went away).
    #[error("cancelled")]
    Cancelled,
    /// The wall-clock deadline passed.
    #[error("it ran past its deadline of {}", describe_ms(*.0))]
    Deadline(u64),
    /// One move's search visited more positions than allowed.
    #[error("one move needed more than {0} positions")]
    Nodes(u64),
}

fn describe_ms(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

const RUNNING: u8 = 0;
const CANCELLED: u8 = 1;
const DEADLINE: u8 = 2;
const NODES: u8 = 3;

#[derive(Debug)]
struct Shared {
    state: AtomicU8,
    deadline: Option<(Instant, u64)>,
    max_move_nodes: u64,
    max_playouts: u64,
}

/// See the module docs. Clones share one state.
#[derive(Clone, Debug)]
pub struct Budget(Arc<Shared>);

impl Default for Budget {
    fn default() -> Budget {
        Budget::unlimited()
    }
}

impl Budget {
    /// No deadline, no node cap; stops only when cancelled.
    pub fn unlimited() -> Budget {
        Budget::new(None, u64::MAX)
    }

    /// A budget that ends `deadline` from now (when given) and lets one move's search visit
    /// at most `max_move_nodes` positions.
    pub fn new(deadline: Option<Duration>, max_move_nodes: u64) -> Budget {
        Budget(Arc::new(Shared {
            state: AtomicU8::new(RUNNING),
            deadline: deadline.map(|d| (Instant::now() + d, d.as_millis() as u64)),
            max_move_nodes,
            max_playouts: u64::MAX,
        }))
    }

    /// The same bounds with at most `max_playouts` MCTS playouts a move. A playout cap is a
    /// cap on the move, not a reason to stop: a search that reaches it answers with its move.
    /// Set before the budget is shared (clones made earlier keep the old cap).
    pub(crate) fn with_max_playouts(self, max_playouts: u64) -> Budget {
        Budget(Arc::new(Shared {
            state: AtomicU8::new(self.0.state.load(Ordering::Acquire)),
            deadline: self.0.deadline,
            max_move_nodes: self.0.max_move_nodes,
            max_playouts,
        }))
    }

    /// Time left before the deadline (zero once it has passed); `None` without one.
    pub(crate) fn remaining(&self) -> Option<Duration> {
        self.0
            .deadline
            .map(|(at, _)| at.saturating_duration_since(Instant::now()))
    }

    /// Most MCTS playouts one move may take under this budget (`u64::MAX`: no cap).
    pub(crate) fn max_playouts(&self) -> u64 {
        self.0.max_playouts
    }

    /// Asks the computation to stop.
    pub fn cancel(&self) {
        self.stop(CANCELLED);
    }

    /// The first reason recorded wins: a computation cancelled after its deadline passed was
    /// stopped by the deadline.
    fn stop(&self, reason: u8) {
        let _ = self
            .0
            .state
            .compare_exchange(RUNNING, reason, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Why the computation was stopped, if it was.
    pub fn stopped(&self) -> Option<Stopped> {
        match self.0.state.load(Ordering::Acquire) {
            RUNNING => None,
            CANCELLED => Some(Stopped::Cancelled),
            DEADLINE => Some(Stopped::Deadline(self.0.deadline.map_or(0, |(_, ms)| ms))),
            _ => Some(Stopped::Nodes(self.0.max_move_nodes)),
        }
    }

    /// Whether the budget is spent or cancelled: one atomic load, cheap enough for every
    /// position of a search.
    #[inline]
    pub(crate) fn is_stopped(&self) -> bool {
        self.0.state.load(Ordering::Acquire) != RUNNING
    }

    /// Whether a search that has visited `move_nodes` positions for the current move must
    /// stop. Reads the clock, so searches call it every few thousand positions.
    #[inline]
    pub(crate) fn check(&self, move_nodes: u64) -> bool {
        if move_nodes > self.0.max_move_nodes {
            self.stop(NODES);
        }
        if let Some((deadline, _)) = self.0.deadline {
            if Instant::now() >= deadline {
                self.stop(DEADLINE);
            }
        }
        self.is_stopped()
    }

    /// Between games: `Err` with the reason once the budget is spent (the deadline is read
    /// now).
    pub(crate) fn check_now(&self) -> Result<(), Stopped> {
        self.check(0);
        self.stopped().map_or(Ok(()), Err)
    }

    /// Whether this budget can stop a search by itself (a node cap or a deadline), beside a
    /// cancel.
    pub fn is_bounded(&self) -> bool {
        self.0.deadline.is_some() || self.0.max_move_nodes != u64::MAX
    }

    /// Whether `other` is a clone of this budget (shares its state).
    pub(crate) fn is_same(&self, other: &Budget) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// A guard that cancels the budget when dropped. An HTTP handler holds one while its
    /// computation runs elsewhere: a client that disconnects drops the handler, and with it
    /// the guard, so the computation stops instead of running for nobody.
    pub(crate) fn cancel_on_drop(&self) -> CancelOnDrop {
        CancelOnDrop(self.clone())
    }
}

/// See `Budget::cancel_on_drop`.
#[derive(Debug)]
pub struct CancelOnDrop(Budget);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_wins_and_clones_share_it() {
        let budget = Budget::new(None, 100);
        let held = budget.clone();
        assert!(!budget.check(100));
        assert!(budget.check(101));
        held.cancel();
        assert_eq!(held.stopped(), Some(Stopped::Nodes(100)));
        assert_eq!(
            budget.check_now(),
            Err(Stopped::Nodes(100)),
            "a spent budget stays spent"
        );
    }

    #[test]
    fn a_passed_deadline_stops_and_a_dropped_guard_cancels() {
        let late = Budget::new(Some(Duration::ZERO), u64::MAX);
        assert_eq!(late.check_now(), Err(Stopped::Deadline(0)));
        assert_eq!(
            Stopped::Deadline(20_000).to_string(),
            "it ran past its deadline of 20 s"
        );
        let budget = Budget::unlimited();
        assert!(!budget.is_bounded());
        drop(budget.cancel_on_drop());
        assert_eq!(budget.stopped(), Some(Stopped::Cancelled));
    }
}
