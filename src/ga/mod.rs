//! The genetic algorithm that tunes the weights of a heuristic evaluation (docs/explanation/tuners.md#the-genetic-algorithm).
//! Knows the game, the evaluation, the agents and the match helpers; nothing of
//! HTTP, storage or the command line.
//!
//! - [`GaConfig`] (`config`): every parameter of a run, serde (JSON and TOML) with defaults,
//!   presets ([`GaConfig::preset`]: `abrams`, `hunter`), partial overrides
//!   ([`GaConfig::with_overrides`]) and validation whose [`crate::tune::ConfigError`]s name the field and
//!   what it accepts.
//!   A config is assembled from presets, files, requests and flags by the tuning engine's
//!   loader ([`crate::ga::loader`]).
//! - `genome`: a genome is one weight per feature within `Bounds`; uniform and Gaussian
//!   initialisation, diversity, fitness statistics.
//! - `operators`: one trait each for [`Selection`] (`roulette`, `tournament`, `rank`,
//!   `sus`), [`Crossover`] (`average-hybrid`, `average`, `hybrid`, `uniform`, `blend`) and
//!   [`Mutation`] (Gaussian); every operator takes the RNG explicitly.
//! - `fitness`: the games of one generation as a flat job list played on rayon (round robin,
//!   fixed opponents or both), scored as points over points available.
//! - `population`: the frame every population tuner runs in (the GA, CMA-ES, SPSA,
//!   differential evolution): a generation's fitness games, the benchmark panel, the hall of
//!   fame, the records and resuming, with a `Breeder` making each next generation.
//! - [`Evolution`] (`engine`): the GA's run, the frame with the GA's operators as its
//!   breeder. [`Evolution::new`] draws generation 0,
//!   each generation hands out its game lists, is told their points and returns its
//!   [`crate::tune::GenerationRecord`] after breeding the next (as a [`crate::tune::Tuner`],
//!   stepped by the [`crate::tune::Driver`]), [`Evolution::resume`] continues from the last saved record exactly as
//!   the uninterrupted run would.
//! - `benchmark`: the panel the leaders play and the champion it chooses (the learners'
//!   panel too).
//! - [`tuner`]: the GA as a [`crate::tune::Tuner`], registered with the tuning engine, and
//!   [`loader`], the one way a GA config is assembled.
//!
//! The GA stands on the tuning engine ([`crate::tune`]): its records, job lists and config
//! errors are the engine's, written as every tuner writes them.
//!
//! Determinism: a run is a pure function of its config. Generation 0 is drawn from
//! (seed, "init"); breeding generation g+1 uses one RNG from (seed, "breed", g) for selection,
//! crossover and mutation in that order; a game's opening comes from (seed, "opening", g,
//! pair) and each player's tie-breaking RNG from (seed, "game", g, game, side). Games are
//! collected in job order, so records are byte-identical whatever the number of rayon
//! threads; only [`crate::tune::GenerationRecord::timing`] differs between runs.
//!
//! ```no_run
//! use kalah_tuner::ga::GaConfig;
//! use kalah_tuner::search::Budget;
//! use kalah_tuner::tune::{Driver, StepControl, TunerConfig};
//!
//! let config = GaConfig::preset("abrams")?.with_overrides(&serde_json::json!({
//!     "population": 10, "generations": 5, "depth": 3
//! }))?;
//! // The driver steps every run of every tuner; the records come to its observers.
//! let mut driver = Driver::open(TunerConfig::new(config.clone()), None)?;
//! let mut records = Vec::new();
//! driver.run(&StepControl::new(Budget::unlimited()), &mut [&mut records])?;
//! for record in &records {
//!     println!("generation {}: best {:.3}", record.generation, record.fitness.best);
//! }
//! let doc = TunerConfig::new(config).export(&records)?;
//! println!("{}", doc.to_json_pretty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod benchmark;
pub(crate) mod config;
pub(crate) mod engine;
pub(crate) mod fitness;
pub(crate) mod genome;
pub mod loader;
pub(crate) mod operators;
pub(crate) mod population;
pub mod tuner;

pub(crate) use config::{Bounds, FitnessMode, PRESETS};
pub use config::{GaConfig, SelectionKind};
pub use engine::Evolution;
pub use fitness::{Evaluation, FitnessSetup, Scoring};
pub use operators::{Crossover, Mutation, Selection};
