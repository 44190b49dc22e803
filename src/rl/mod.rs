//! Learning evaluation from play rather than evolving it: asynchronous advantage
//! actor-critic for the `a3c` agent's network ([`a3c`]). No command-line code lives here; the
//! commands in `cli/` drive these trainers.

pub mod a3c;
pub mod td;
