//! What every long-running command shares: a progress bar on a terminal (plain lines
//! otherwise, so logs stay readable), a two-stage Ctrl-C, and files written whole.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar of `len` steps with `template` (indicatif syntax), or `None` when standard
/// error is not a terminal.
pub(crate) fn progress_bar(len: u64, template: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// A flag that the first Ctrl-C sets, asking the command to stop at its next safe point (it
/// prints `first_message`); the second Ctrl-C exits at once with status 130, which is safe
/// because every command writes its files whole ([`crate::tune::write_atomically`]).
pub(crate) fn stop_flag(first_message: &'static str) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    // One handler per process: a second command in the same process (tests) keeps the first
    // one's, and then Ctrl-C simply ends the process as it would without a handler.
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            eprintln!("\ninterrupted again: stopping now");
            std::process::exit(130);
        }
        eprintln!("\n{first_message}");
    });
    stop
}

/// Processor time this process has used so far, in seconds, over all its threads.
pub(crate) fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return 0.0;
        }
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// `--cpu-minutes`: a budget of processor time for the whole command. Tuners are compared at
/// equal cost by processor time rather than wall time, because wall time would charge one
/// run for whatever else the machine was doing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CpuBudget {
    limit_seconds: Option<f64>,
}

impl CpuBudget {
    /// `minutes` as given on the command line (`None`: no budget).
    pub(crate) fn new(minutes: Option<f64>) -> Result<CpuBudget> {
        match minutes {
            Some(m) if !(m.is_finite() && m > 0.0) => Err(super::args::usage(format!(
                "--cpu-minutes must be a positive number, got {m}"
            ))),
            _ => Ok(CpuBudget {
                limit_seconds: minutes.map(|m| m * 60.0),
            }),
        }
    }

    /// Whether the budget is used up; checked between steps, so a run overshoots by at most
    /// the step under way.
    pub(crate) fn spent(&self) -> bool {
        self.limit_seconds
            .is_some_and(|limit| process_cpu_seconds() >= limit)
    }

    /// Ends the summary line: the processor time used, and the budget if there is one.
    pub(crate) fn describe_use(&self) -> String {
        match self.limit_seconds {
            Some(limit) => format!(
                "{:.0} s of processor time (budget {:.0} s)",
                process_cpu_seconds(),
                limit
            ),
            None => format!("{:.0} s of processor time", process_cpu_seconds()),
        }
    }
}
