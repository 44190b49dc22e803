//! Learning evaluation from play rather than evolving it: asynchronous advantage
//! actor-critic for the `a3c` agent's network ([`a3c`]), temporal-difference learning of
//! linear evaluations ([`td`]) and Texel-style fitting of them to labelled positions
//! ([`texel`]). No command-line code lives here; the
//! commands in `cli/` drive these trainers.

pub mod a3c;
pub mod td;
pub mod texel;
