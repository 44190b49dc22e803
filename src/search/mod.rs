//! Game-tree search: depth-limited alpha-beta over any [`Evaluator`](crate::eval::Evaluator)
//! and the exact solver. Knows the game and the evaluations, nothing of agents or matches.
//!
//! Depth counts turns, as in Hunter's and Pekar's minimax: an extra turn (the last seed in
//! the mover's own store) is searched at the same depth.

pub(crate) mod alphabeta;
pub(crate) mod budget;
pub mod depth;
pub mod egdb;
pub(crate) mod guess;
pub(crate) mod solver;

pub use alphabeta::{minimax_plain, zero_sum, AlphaBeta, KeptTable, SearchResult};
pub use budget::CancelOnDrop;
pub use budget::{Budget, Stopped};
pub(crate) use depth::Depth;
pub use egdb::{Egdb, EgdbError};
pub(crate) use guess::first_guess;
pub use solver::Solver;
pub use solver::{ProbeReport, SolverStats};
