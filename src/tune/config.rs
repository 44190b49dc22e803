//! [`TunerConfig`]: the config of a run of any tuner, as a stored run and an export document
//! keep it. Written as the tuner's own config object, as format version 1 always was; a
//! learning config is told apart by its `method` field, a CMA-ES or SPSA config by its `tuner`
//! field, and a GA config has neither.

use serde::{Deserialize, Serialize};

use std::any::Any;

use super::spec::TunerSpec;
use super::tuner::Tuner;
use crate::agents::FileAccess;
use crate::eval::Feature;
use crate::search::Budget;
use crate::tune::{ConfigError, GenerationRecord};

/// A run's config, of whichever tuner: the tuner's own config object behind the one interface
/// the engine asks (`TunerSpec`). Serialized as that object, as format version 1 always was;
/// read back by the first registered tuner ([`TunerKind`]) whose configs claim its form.
#[derive(Debug)]
pub struct TunerConfig(Box<dyn TunerSpec>);

impl TunerConfig {
    /// The config of a run of `config`'s tuner.
    pub fn new(config: impl TunerSpec + 'static) -> TunerConfig {
        TunerConfig(Box::new(config))
    }

    /// The tuner's own config, when it is a `T`.
    pub fn get<T: TunerSpec + 'static>(&self) -> Option<&T> {
        let any: &dyn Any = self.0.as_ref();
        any.downcast_ref::<T>()
    }

    /// What the engine asks of this config's tuner, whichever it is.
    pub(crate) fn spec(&self) -> &dyn TunerSpec {
        self.0.as_ref()
    }

    /// Reads a config of any tuner: the first whose configs claim `value`'s form.
    pub(crate) fn from_value(value: serde_json::Value) -> Result<TunerConfig, ConfigError> {
        match kinds().into_iter().find(|kind| (kind.claims)(&value)) {
            Some(kind) => (kind.read)(value),
            None => Err(ConfigError::invalid(
                "tuner",
                format!(
                    "unknown tuner {}; tuners: {}",
                    value.get("tuner").cloned().unwrap_or_default(),
                    tuner_names().join(", ")
                ),
            )),
        }
    }

    /// Assembles and validates the config of a run of `tuner` (one of [`tuner_names`]):
    /// `preset` (or the tuner's defaults), then each partial config in `layers`, with the
    /// files its agents name read under `files`.
    pub(crate) fn load(
        tuner: &str,
        preset: Option<&str>,
        layers: &[&serde_json::Value],
        files: &FileAccess,
    ) -> Result<TunerConfig, ConfigError> {
        match kinds().into_iter().find(|kind| kind.names.contains(&tuner)) {
            Some(kind) => (kind.load)(tuner, preset, layers, files),
            None => Err(ConfigError::invalid(
                "tuner",
                format!(
                    "unknown tuner {tuner:?}; tuners: {}",
                    tuner_names().join(", ")
                ),
            )),
        }
    }
}

impl Clone for TunerConfig {
    fn clone(&self) -> TunerConfig {
        TunerConfig(dyn_clone::clone_box(&*self.0))
    }
}

/// Two configs are equal when they are of one tuner and written alike.
impl PartialEq for TunerConfig {
    fn eq(&self, other: &TunerConfig) -> bool {
        self.tuner() == other.tuner()
            && serde_json::to_value(self).ok() == serde_json::to_value(other).ok()
    }
}

impl Serialize for TunerConfig {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        erased_serde::serialize(self.0.as_ref(), serializer)
    }
}

/// Assembles a tuner's config: its name, a preset, partial configs, where its files are read.
pub(crate) type LoadFn =
    fn(&str, Option<&str>, &[&serde_json::Value], &FileAccess) -> Result<TunerConfig, ConfigError>;

/// A tuner, as the engine finds it: how its configs are named, told apart and read. Each
/// tuner registers one, beside its config (`inventory::submit!`), so that adding a tuner
/// touches nothing outside its own file and the line that compiles it.
pub struct TunerKind {
    /// Where the tuner is listed among the others ([`tuner_names`], the form's menu).
    pub rank: u32,
    /// The tuner names its configs serve (`tuner` in a request).
    pub names: &'static [&'static str],
    /// The presets its configs may start from.
    pub presets: &'static [&'static str],
    /// Whether a stored config is written as this tuner's.
    pub claims: fn(&serde_json::Value) -> bool,
    /// Reads a whole stored config.
    pub read: fn(serde_json::Value) -> Result<TunerConfig, ConfigError>,
    /// Assembles a config from a preset and partial configs (`TunerConfig::load`).
    pub load: LoadFn,
    /// Whether it breeds generations of a population, rather than learning one set of
    /// weights.
    pub breeds_population: bool,
}

inventory::collect!(TunerKind);

impl TunerKind {
    /// The registration of the tuner whose configs are `C`s, listed at `rank`.
    pub(crate) const fn of<C: ConfigForm + TunerSpec + 'static>(rank: u32) -> TunerKind {
        TunerKind {
            rank,
            names: C::NAMES,
            presets: C::PRESETS,
            claims: C::claims,
            read: read_as::<C>,
            load: load_as::<C>,
            breeds_population: C::BREEDS_POPULATION,
        }
    }
}

fn read_as<C: ConfigForm + TunerSpec + 'static>(
    value: serde_json::Value,
) -> Result<TunerConfig, ConfigError> {
    C::read(value).map(TunerConfig::new)
}

fn load_as<C: ConfigForm + TunerSpec + 'static>(
    tuner: &str,
    preset: Option<&str>,
    layers: &[&serde_json::Value],
    files: &FileAccess,
) -> Result<TunerConfig, ConfigError> {
    C::load(tuner, preset, layers, files).map(TunerConfig::new)
}

/// Every registered tuner, in rank order.
fn kinds() -> Vec<&'static TunerKind> {
    let mut kinds: Vec<&'static TunerKind> = inventory::iter::<TunerKind>.into_iter().collect();
    kinds.sort_by_key(|kind| (kind.rank, kind.names.first().copied()));
    kinds
}

/// The presets of `tuner` (one of [`tuner_names`]; none for a name that is not).
pub fn presets_of(tuner: &str) -> &'static [&'static str] {
    kinds()
        .into_iter()
        .find(|kind| kind.names.contains(&tuner))
        .map_or(&[], |kind| kind.presets)
}

/// Every preset of any tuner, each once, in tuner order.
pub fn preset_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for kind in kinds() {
        for preset in kind.presets {
            if !names.contains(preset) {
                names.push(preset);
            }
        }
    }
    names
}

/// Every tuner's name, as `tuner` in a request or `evolve --tuner` takes it.
pub fn tuner_names() -> Vec<&'static str> {
    kinds()
        .into_iter()
        .flat_map(|kind| kind.names.iter().copied())
        .collect()
}

/// The registered tuners that breed generations of a population (`evolve` runs them), or
/// with `false` those that learn one set of weights (`learn` runs them), in [`tuner_names`]'s
/// order.
pub fn tuner_names_breeding(population: bool) -> Vec<&'static str> {
    kinds()
        .into_iter()
        .filter(|kind| kind.breeds_population == population)
        .flat_map(|kind| kind.names.iter().copied())
        .collect()
}

/// How a tuner's configs are named, told apart from other tuners' and read.
pub(crate) trait ConfigForm: Sized {
    /// The tuner names this config type serves (`tuner` in a request).
    const NAMES: &'static [&'static str];

    /// The presets a config may start from (`preset` beside `tuner`).
    const PRESETS: &'static [&'static str] = &[];

    /// Whether the tuner breeds generations of a population (`evolve` runs it), rather than
    /// learning one set of weights (`learn` runs it).
    const BREEDS_POPULATION: bool = true;

    /// Whether `value` is written as this tuner's config.
    fn claims(value: &serde_json::Value) -> bool;

    /// Reads a whole stored config.
    fn read(value: serde_json::Value) -> Result<Self, ConfigError>;

    /// Assembles a config of `tuner` from a preset and partial configs
    /// ([`TunerConfig::load`]).
    fn load(
        tuner: &str,
        preset: Option<&str>,
        layers: &[&serde_json::Value],
        files: &FileAccess,
    ) -> Result<Self, ConfigError>;
}

impl<'de> Deserialize<'de> for TunerConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        TunerConfig::from_value(value).map_err(serde::de::Error::custom)
    }
}

impl TunerConfig {
    /// One of [`tuner_names`].
    pub fn tuner(&self) -> &'static str {
        self.spec().tuner()
    }

    pub(crate) fn seed(&self) -> u64 {
        self.spec().seed()
    }

    /// Records a whole run writes: generations, or checkpoints.
    pub(crate) fn records_total(&self) -> u32 {
        self.spec().records_total()
    }

    /// The run's features, in weight order.
    pub(crate) fn features(&self) -> Result<Vec<Feature>, ConfigError> {
        self.spec().features()
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.spec().validate()
    }

    /// This config with its agents' model names resolved under `files`.
    pub(crate) fn locate_agents(&self, files: &FileAccess) -> Result<TunerConfig, ConfigError> {
        let mut located = dyn_clone::clone_box(&*self.0);
        located.locate_agents(files)?;
        Ok(TunerConfig(located))
    }

    /// A rough upper estimate of the whole run's processor time, in core-hours: what
    /// `crate::tune::MAX_CORE_HOURS` caps and `POST /api/runs/estimate` reports.
    pub fn estimated_core_hours(&self) -> f64 {
        self.spec().estimated_core_hours()
    }

    /// An upper estimate of what the run's records take in storage, in bytes: what run
    /// creation checks against the storage budget.
    pub fn estimated_storage_bytes(&self) -> u64 {
        self.spec().estimated_storage_bytes()
    }

    /// The tuner this config describes: from its first record, or carrying on after `last`
    /// exactly as the uninterrupted run would. Validates the config; a Texel run samples and
    /// labels its positions here, so call it on the rayon pool the run is to use.
    pub fn open(&self, last: Option<&GenerationRecord>) -> Result<Box<dyn Tuner>, ConfigError> {
        self.open_within(last, &Budget::unlimited())
    }

    /// [`TunerConfig::open`] whose preparation (a Texel run's games and solves) stops once
    /// `cancel` is set; the tuner then means nothing and is to be dropped.
    pub fn open_within(
        &self,
        last: Option<&GenerationRecord>,
        cancel: &Budget,
    ) -> Result<Box<dyn Tuner>, ConfigError> {
        self.spec().open(last, cancel)
    }

    /// The tuner carrying on after `records`, the run's records so far (oldest first): all of
    /// them when [`TunerConfig::resumes_from_all`], else at least the last.
    pub(crate) fn open_after(
        &self,
        records: &[GenerationRecord],
        cancel: &Budget,
    ) -> Result<Box<dyn Tuner>, ConfigError> {
        self.spec().open_after(records, cancel)
    }

    /// Whether resuming a run needs every record it wrote, not only its last.
    pub fn resumes_from_all(&self) -> bool {
        self.spec().resumes_from_all()
    }
}

/// Assembles and validates the config of a run of any tuner, through the registration of the
/// tuner it names (`ConfigForm::load`, which `TunerConfig::load` calls). Without `tuner`, the tuner a layer names (its `tuner` field, the
/// last layer's that has one), else the GA.
pub fn load_tuner(
    tuner: Option<&str>,
    preset: Option<&str>,
    layers: &[&serde_json::Value],
    files: &FileAccess,
) -> Result<TunerConfig, ConfigError> {
    let named = layers
        .iter()
        .rev()
        .find_map(|layer| layer.get("tuner"))
        .map(|t| {
            t.as_str().ok_or_else(|| {
                ConfigError::invalid("tuner", format!("expected a tuner's name, got {t}"))
            })
        })
        .transpose()?;
    TunerConfig::load(tuner.or(named).unwrap_or("ga"), preset, layers, files)
}
