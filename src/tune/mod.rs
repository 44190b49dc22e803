//! The tuning engine: the floor every tuner stands on, with a vocabulary of its own. It knows
//! the game, the agents and the matches, and no tuner: the genetic algorithm, CMA-ES, SPSA,
//! differential evolution and the learners are peers above it, each registering itself
//! here. The runner, the store, the server and the command line work through it and
//! never ask which tuner a run has.
//!
//! - [`Tuner`] (`tuner`): one run of one tuner in ask/tell form. It hands out the game jobs
//!   of its step (`Ask::Games`, a [`JobList`] of `jobs`), is told their points, makes a
//!   [`GenerationRecord`] (`record`: a generation, or a learner's checkpoint), and resumes
//!   exactly from its last record.
//! - `TunerSpec` (`spec`): what the engine asks of a tuner's config; [`TunerConfig`]
//!   (`config`) holds any tuner's config behind it, and [`TunerKind`] is how a tuner
//!   registers its configs (its names, how they are read and assembled) from its own file.
//!   [`load_tuner`] assembles any tuner's config from a preset and partial configs.
//! - `games`: how a population's games are played (`games::GameSetup`), here or on a
//!   worker, as the [`GameSpec`] every job list carries says.
//! - [`ConfigError`] (`error`): the one error of a config, naming the field at fault.
//! - [`Driver`] (`driver`): the loop that steps a tuner, playing its games here or handing
//!   them out (`Driver::next`), and shows each record to `Observer`s (the export file,
//!   the records file; the console's lives in `cli`).
//! - [`ExportDocument`] (`export`): a run's best weights as a versioned JSON document whose
//!   [`ExportDocument::agent_spec`] plays as the tuned player did.
//! - [`panel`]: what a benchmark panel measured and the champion it chose, as records keep it.
//!
//! ```no_run
//! use kalah_tuner::agents::FileAccess;
//! use kalah_tuner::search::Budget;
//! use kalah_tuner::tune::{load_tuner, Driver, ExportFile, StepControl};
//!
//! let layer = serde_json::json!({"population": 10, "generations": 5, "depth": 3});
//! let config = load_tuner(Some("ga"), Some("abrams"), &[&layer], &FileAccess::Any)?;
//! let mut driver = Driver::open(config, None)?;
//! let mut export = ExportFile::new("best.json");
//! driver.run(&StepControl::new(Budget::unlimited()), &mut [&mut export])?;
//! println!("{}", export.document().map(|d| d.to_json_pretty()).unwrap_or_default());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod bounds;
pub(crate) mod config;
pub(crate) mod driver;
pub(crate) mod error;
pub(crate) mod export;
pub(crate) mod games;
pub(crate) mod jobs;
pub mod panel;
pub(crate) mod record;
pub(crate) mod spec;
pub(crate) mod tuner;

pub use config::{load_tuner, presets_of, tuner_names, tuner_names_breeding, TunerConfig};
pub use config::{preset_names, TunerKind};
pub(crate) use driver::{write_atomically, Next};
pub use driver::{DriveError, Driver, Ended, ExportFile, Observer, RecordsFile, Step};
pub(crate) use error::agent_error;
pub use error::ConfigError;
pub use export::ExportDocument;
pub use export::{ExportError, FORMAT_VERSION};
pub use jobs::{BadBatch, BoardConfig, GameSpec, Genome, Job, JobList, Rival};
pub(crate) use record::{
    CurvePoint, FitnessStats, GenerationSummary, HallOfFame, Individual, Timing,
};
pub use record::{GenerationRecord, StopReason, TunerState};
pub(crate) use spec::{describe_bytes, TunerSpec, MAX_CORE_HOURS, MAX_RUN_STORAGE_BYTES};
pub(crate) use tuner::Ask;
pub use tuner::{StepControl, Tuner};
