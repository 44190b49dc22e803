//! The tuning engine: a run of any tuner, from its config to its records and its exported
//! player. Above the tuners (the genetic algorithm in [`crate::ga`], the learners in
//! [`crate::rl`]), below the store, the server and the command line.
//!
//! - [`TunerConfig`] ([`config`]): the config of a run of any tuner (`ga`, `td`, `td-leaf`,
//!   `texel`), as a stored run and an export document keep it.
//! - [`loader`]: the one way a config is assembled (a preset or a tuner's defaults, then
//!   partial configs from a file, a request or flags, then validation), for `evolve`,
//!   `learn` and the server alike; [`schema`] describes the GA config as the dashboard's form.
//! - [`Tuner`] ([`tuner`]): one run of one tuner in ask/tell form: it hands out the game job
//!   lists of its step ([`Ask::Games`]), is told their points, makes a record, and resumes
//!   exactly from its last record ([`TunerConfig::open`]); [`ga`] and [`learning`] make the
//!   GA and the learners tuners, [`population`] the tuners that play generations as the GA
//!   does but breed them their own way: [`cmaes`] (CMA-ES) and [`spsa`] (SPSA). [`TunerSpec`] ([`spec`]) is what the engine asks of a
//!   tuner's config, so the export, the store and the server never ask which tuner a run
//!   has. A new tuner is a file here (its `Tuner` and its `TunerSpec`) and a [`TunerConfig`]
//!   variant.
//! - [`Driver`] ([`driver`]): steps a tuner, playing its games here, and hands each record to
//!   [`Observer`]s (the export file, the records file; the console's lives in `cli`); the
//!   server's `runner::Runner` steps the same driver with its games on the job
//!   queue.
//! - [`ExportDocument`] ([`export`]): a run's best weights as a versioned JSON document whose
//!   [`ExportDocument::agent_spec`] plays as the tuned player did.
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

pub mod cmaes;
pub mod config;
pub mod driver;
pub mod export;
pub mod ga;
pub mod learning;
pub mod loader;
pub mod population;
pub mod schema;
pub mod spec;
pub mod spsa;
pub mod tuner;

pub use cmaes::{CmaesConfig, CmaesSettings};
pub use config::{load_tuner, tuner_names, TunerConfig};
pub use driver::{
    write_atomically, DriveError, Driver, Ended, ExportFile, Next, Observer, RecordsFile, Step,
};
pub use export::{ExportDocument, ExportError, FORMAT_VERSION};
pub use learning::{LearnerConfig, LearningConfig, LearningRun};
pub use population::{BreederSettings, PopulationConfig};
pub use spec::TunerSpec;
pub use spsa::{SpsaConfig, SpsaSettings};
pub use tuner::{Ask, StepControl, Tuner};
