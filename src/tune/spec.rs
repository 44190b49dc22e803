//! [`TunerSpec`]: what the tuning engine asks of a tuner's config, whichever tuner it is. A
//! [`super::TunerConfig`] holds a config behind it, so the engine, the export
//! document, the store and the server never look at which tuner a run has.

use super::error::ConfigError;
use super::jobs::BoardConfig;
use super::record::{GenerationRecord, HallOfFame};
use super::tuner::Tuner;
use crate::agents::FileAccess;
use crate::eval::Feature;
use crate::game::Rules;
use crate::search::Budget;

/// What the tuning engine needs of a tuner's config. A new tuner implements it in its own
/// file, beside its [`Tuner`], and registers its configs there ([`super::config::TunerKind`]).
/// The config is written as itself (`erased_serde`) and copied as itself (`dyn_clone`).
pub trait TunerSpec:
    Send + Sync + std::fmt::Debug + std::any::Any + erased_serde::Serialize + dyn_clone::DynClone
{
    /// The tuner's name in configs, the API and the dashboard (`ga`, `td`, ...).
    fn tuner(&self) -> &'static str;

    fn seed(&self) -> u64;

    /// Records a whole run writes (generations, checkpoints).
    fn records_total(&self) -> u32;

    /// The game the run tunes for.
    fn rules(&self) -> Rules;

    fn pie(&self) -> bool;

    fn board(&self) -> BoardConfig;

    /// The run's features, in weight order.
    fn features(&self) -> Result<Vec<Feature>, ConfigError>;

    /// The depth the tuned player searches to.
    fn play_depth(&self) -> u32;

    /// Checks every setting.
    fn validate(&self) -> Result<(), ConfigError>;

    /// Resolves its agents' model names under `files`.
    fn locate_agents(&mut self, files: &FileAccess) -> Result<(), ConfigError>;

    /// A rough upper estimate of the whole run's processor time, in core-hours.
    fn estimated_core_hours(&self) -> f64;

    /// An upper estimate of what the run's records take in storage, in bytes.
    fn estimated_storage_bytes(&self) -> u64;

    /// The running tuner, fresh or after `last` (see [`super::TunerConfig::open`]); its
    /// preparation stops once `cancel` is set (the tuner is then to be dropped).
    fn open(
        &self,
        last: Option<&GenerationRecord>,
        cancel: &Budget,
    ) -> Result<Box<dyn Tuner>, ConfigError>;

    /// The running tuner after `records`, the run's records so far, oldest first: all of
    /// them when [`TunerSpec::resumes_from_all`], else at least the last (none: from the
    /// start).
    fn open_after(
        &self,
        records: &[GenerationRecord],
        cancel: &Budget,
    ) -> Result<Box<dyn Tuner>, ConfigError> {
        self.open(records.last(), cancel)
    }

    /// Whether resuming needs every earlier record, not only the last (CMA-ES, whose state is
    /// rebuilt from the fitness it was told).
    fn resumes_from_all(&self) -> bool {
        false
    }

    /// The player the run hands out as of its record `last`: every place that names a run's
    /// player (export, `run:ID`, the dashboard, `evolve`) asks here.
    fn champion(&self, last: &GenerationRecord) -> HallOfFame;

    /// The numeric settings of the tuner's own (beside a population's), with their ranges:
    /// what the form shows under the tuner's name.
    fn setting_bounds(&self) -> &'static [super::bounds::SettingBound] {
        &[]
    }

    /// What the dashboard's form calls the tuner.
    fn label(&self) -> &'static str {
        self.tuner()
    }

    /// The config a population tuner's generations are played under (the GA's, for the GA,
    /// CMA-ES and SPSA): what the job queue's workers play its games by.
    fn population(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// Where a run stands after `record`, in the unit of [`Tuner::length`]: generations, or
    /// a learner's self-play games or rounds.
    fn position(&self, record: &GenerationRecord) -> u64 {
        record.generation as u64 + 1
    }

    /// Whether the run's export keeps its fitness curve (one summary a record).
    fn keeps_curve(&self) -> bool {
        false
    }
}

/// Largest estimated cost of one run, in core-hours (see `GaConfig::estimated_core_hours`):
/// about a day of this project's two-core machines, so no single config can hold one for days.
pub(crate) const MAX_CORE_HOURS: f64 = 48.0;

/// Largest estimated storage of one run's generation records, in bytes (see
/// `GaConfig::estimated_storage_bytes`): a run is one of many a server keeps, and a
/// population of 1000 with 32 features for 10,000 generations would write some 8 GB.
pub(crate) const MAX_RUN_STORAGE_BYTES: u64 = 1_000_000_000;

/// A byte count for people: "4.9 GB", "16 KB".
pub(crate) fn describe_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} KB", b / 1e3)
    } else {
        format!("{bytes} bytes")
    }
}
