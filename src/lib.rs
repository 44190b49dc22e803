//! kalah-tuner: evolve and test Kalah (Mancala) evaluation functions.
//!
//! The crate is layered; each module uses only those above it in this list (a test,
//! tests/layering.rs, fails when one reaches down the list):
//!
//! - [`game`]: [`game::Position`], the rules ([`game::Rules`]), KPN notation and perft.
//! - [`eval`]: evaluation [`eval::Feature`]s, named feature sets, published weights.
//! - [`search`]: alpha-beta to a depth or time ([`search::AlphaBeta`]) and the exact
//!   [`search::Solver`].
//! - [`agents`]: [`agents::AgentSpec`] (JSON or `minimax:4`-style strings) and the agents it
//!   builds (`random`, `greedy`, `minimax`, `heuristic`, `pekar`, `pekar-minimax`, `perfect`,
//!   `mcts`, `a3c`).
//! - [`matches`](mod@matches): the game loop, the pairing engine (colour-swapped pairs from shared
//!   openings), matches and round-robin tournaments on rayon, with confidence intervals.
//! - [`tune`]: the tuning engine, the floor under every tuner: the [`tune::Tuner`] trait
//!   (ask/tell), the records a tuner writes, the game jobs it asks for, the one config error,
//!   the [`tune::TunerConfig`] that holds any tuner's config, the [`tune::Driver`] that steps
//!   a run and tells its observers, and the export document.
//! - [`rl`]: the learning algorithms: TD(lambda) and TD-Leaf(lambda) self-play, Texel-style
//!   fitting, and asynchronous advantage actor-critic training of the `a3c` network (candle).
//! - [`ga`]: the genetic algorithm ([`ga::Evolution`], stepped and resumable), its config,
//!   presets and loader, and its benchmark panel; a tuner over [`tune`].
//! - [`tuners`]: the other tuners over [`tune`]: CMA-ES, SPSA, differential evolution, and the
//!   learners (TD(lambda), TD-Leaf(lambda), Texel-style fitting); and the dashboard's form of
//!   every tuner's config, with the name the dashboard shows for each.
//! - [`runner`]: a run's life, from claim to end (its executor), and its steps,
//!   playing the games its tuner asks for on this process's cores or on the PostgreSQL job
//!   queue (its coordinator and its worker); and the ladder's scheduler, which rates every
//!   finished run's champion.
//! - [`store`]: runs and generation records in SQLite or PostgreSQL (sqlx, embedded migrations).
//! - `server`: the HTTP API (`kalah-tuner serve`): runs evolved by background workers with
//!   crash-safe resume, live events, agents, matches and tournaments, and the dashboard.
//! - `cli`: the `kalah-tuner` command line, every command and its flags.
//!
//! `server` and `cli` are the two front ends, not library API: they are public only so that
//! the binary and the tests reach them, and hidden from these docs. Inside every module, what
//! no user of the library needs is `pub(crate)`.
//!
//! Every error a user can cause (a field of a request, an argument, a config) implements
//! [`game::UserError`], which says the field at fault, the HTTP status and the exit code;
//! the front ends find it in any error chain with [`game::as_user_error`].

pub mod agents;
#[doc(hidden)]
pub mod cli;
pub mod eval;
pub mod ga;
pub mod game;
pub mod matches;
pub mod rl;
pub mod runner;
pub mod search;
#[doc(hidden)]
pub mod server;
pub mod store;
pub mod tune;
pub mod tuners;
