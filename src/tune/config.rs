//! [`TunerConfig`]: the config of a run of any tuner, as a stored run and an export document
//! keep it. Written as the tuner's own config object, as format version 1 always was; a
//! learning config is told apart by its `method` field, a CMA-ES or SPSA config by its `tuner`
//! field, and a GA config has neither.

use serde::{Deserialize, Serialize};

use super::cmaes::CmaesConfig;
use super::learning::LearningConfig;
use super::population::{BreederSettings, PopulationConfig};
use super::spec::TunerSpec;
use super::spsa::SpsaConfig;
use super::tuner::Tuner;
use crate::agents::FileAccess;
use crate::eval::Feature;
use crate::ga::{ConfigError, GaConfig, GenerationRecord};
use crate::search::Budget;

/// Declares [`TunerConfig`], one variant a tuner, and the places that look at its variant:
/// adding a tuner is a line here (and its file).
macro_rules! tuner_configs {
    ($($(#[$doc:meta])* $variant:ident($config:ty),)+) => {
        /// The config of the tuner that made a document or a stored run. Written as the config
        /// object itself, as format version 1 always was: a learning config is told apart by its
        /// `method` field, a CMA-ES or SPSA config by its `tuner` field; a GA config has neither.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum TunerConfig {
            $($(#[$doc])* $variant(Box<$config>),)+
        }

        /// Every tuner's name, as `tuner` in a request or `evolve --tuner` takes it.
        pub fn tuner_names() -> Vec<&'static str> {
            let mut names = Vec::new();
            $(names.extend(<$config as ConfigForm>::NAMES);)+
            names
        }

        impl TunerConfig {
            /// Reads a config of any tuner: the first whose configs claim `value`'s form.
            pub fn from_value(value: serde_json::Value) -> Result<TunerConfig, ConfigError> {
                $(if <$config as ConfigForm>::claims(&value) {
                    return <$config as ConfigForm>::read(value)
                        .map(|c| TunerConfig::$variant(Box::new(c)));
                })+
                Err(ConfigError::invalid(
                    "tuner",
                    format!(
                        "unknown tuner {}; tuners: {}",
                        value.get("tuner").cloned().unwrap_or_default(),
                        tuner_names().join(", ")
                    ),
                ))
            }

            /// Assembles and validates the config of a run of `tuner` (one of [`tuner_names`]):
            /// `preset` (or the tuner's defaults), then each partial config in `layers`, with
            /// the files its agents name read under `files`.
            pub fn load(
                tuner: &str,
                preset: Option<&str>,
                layers: &[&serde_json::Value],
                files: &FileAccess,
            ) -> Result<TunerConfig, ConfigError> {
                $(if <$config as ConfigForm>::NAMES.contains(&tuner) {
                    return <$config as ConfigForm>::load(tuner, preset, layers, files)
                        .map(|c| TunerConfig::$variant(Box::new(c)));
                })+
                Err(ConfigError::invalid(
                    "tuner",
                    format!("unknown tuner {tuner:?}; tuners: {}", tuner_names().join(", ")),
                ))
            }

            /// What the engine asks of this config's tuner, whichever it is: with
            /// `spec_mut`, the one place a [`TunerConfig`] looks at its variant.
            pub fn spec(&self) -> &dyn TunerSpec {
                match self {
                    $(TunerConfig::$variant(config) => config.as_ref(),)+
                }
            }

            fn spec_mut(&mut self) -> &mut dyn TunerSpec {
                match self {
                    $(TunerConfig::$variant(config) => config.as_mut(),)+
                }
            }
        }
    };
}

tuner_configs! {
    /// The genetic algorithm ([`crate::ga`]).
    Ga(GaConfig),
    /// TD(lambda), TD-Leaf(lambda) and Texel-style fitting ([`super::learning`]).
    Learning(LearningConfig),
    /// CMA-ES ([`super::cmaes`]).
    Cmaes(CmaesConfig),
    /// SPSA ([`super::spsa`]).
    Spsa(SpsaConfig),
}

/// How a tuner's configs are named, told apart from other tuners' and read.
pub trait ConfigForm: Sized {
    /// The tuner names this config type serves (`tuner` in a request).
    const NAMES: &'static [&'static str];

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

impl ConfigForm for GaConfig {
    const NAMES: &'static [&'static str] = &["ga"];

    fn load(
        _tuner: &str,
        preset: Option<&str>,
        layers: &[&serde_json::Value],
        files: &FileAccess,
    ) -> Result<Self, ConfigError> {
        super::loader::load(preset, layers, files)
    }

    /// A GA config has neither `method` nor `tuner` (or names `"tuner": "ga"`).
    fn claims(value: &serde_json::Value) -> bool {
        value.get("method").is_none() && value.get("tuner").is_none_or(|t| t.as_str() == Some("ga"))
    }

    fn read(mut value: serde_json::Value) -> Result<Self, ConfigError> {
        if let Some(map) = value.as_object_mut() {
            map.remove("tuner");
        }
        ConfigError::read(value, "")
    }
}

impl ConfigForm for LearningConfig {
    const NAMES: &'static [&'static str] = &super::learning::LEARNING_TUNERS;

    fn load(
        tuner: &str,
        preset: Option<&str>,
        layers: &[&serde_json::Value],
        files: &FileAccess,
    ) -> Result<Self, ConfigError> {
        super::loader::load_learning(tuner, preset, layers, files)
    }

    fn claims(value: &serde_json::Value) -> bool {
        value.get("method").is_some()
    }

    fn read(value: serde_json::Value) -> Result<Self, ConfigError> {
        LearningConfig::from_value(value)
    }
}

impl<S: BreederSettings> ConfigForm for PopulationConfig<S> {
    const NAMES: &'static [&'static str] = &[S::TUNER];

    fn load(
        _tuner: &str,
        preset: Option<&str>,
        layers: &[&serde_json::Value],
        files: &FileAccess,
    ) -> Result<Self, ConfigError> {
        PopulationConfig::load(layers, |ga_layers| {
            super::loader::load(preset, ga_layers, files)
        })
    }

    fn claims(value: &serde_json::Value) -> bool {
        PopulationConfig::<S>::claims(value)
    }

    fn read(value: serde_json::Value) -> Result<Self, ConfigError> {
        PopulationConfig::from_value(value)
    }
}

impl<'de> Deserialize<'de> for TunerConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        TunerConfig::from_value(value).map_err(serde::de::Error::custom)
    }
}

impl TunerConfig {
    /// The GA config, for documents a GA run wrote.
    pub fn ga(&self) -> Option<&GaConfig> {
        match self {
            TunerConfig::Ga(config) => Some(config),
            _ => None,
        }
    }

    /// The GA config a population tuner's generations are played under (GA, CMA-ES, SPSA):
    /// what the job queue's workers play its fitness games by.
    pub fn population(&self) -> Option<&GaConfig> {
        self.spec().population()
    }

    /// The learning config, for documents a learning run wrote.
    pub fn learning(&self) -> Option<&LearningConfig> {
        match self {
            TunerConfig::Learning(config) => Some(config),
            _ => None,
        }
    }

    /// One of [`tuner_names`].
    pub fn tuner(&self) -> &'static str {
        self.spec().tuner()
    }

    pub fn seed(&self) -> u64 {
        self.spec().seed()
    }

    /// Records a whole run writes: generations, or checkpoints.
    pub fn records_total(&self) -> u32 {
        self.spec().records_total()
    }

    /// The run's features, in weight order.
    pub fn features(&self) -> Result<Vec<Feature>, ConfigError> {
        self.spec().features()
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.spec().validate()
    }

    /// This config with its agents' model names resolved under `files`.
    pub fn locate_agents(&self, files: &FileAccess) -> Result<TunerConfig, ConfigError> {
        let mut located = self.clone();
        located.spec_mut().locate_agents(files)?;
        Ok(located)
    }

    /// A rough upper estimate of the whole run's processor time, in core-hours: what
    /// [`crate::ga::config::MAX_CORE_HOURS`] caps and `POST /api/runs/estimate` reports.
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
    pub fn open_after(
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

/// Assembles and validates the config of a run of any tuner: `ga` is [`super::loader::load`]'s, `td`,
/// `td-leaf` and `texel` are [`super::loader::load_learning`]'s, and every other tuner's its own
/// ([`TunerConfig::load`]). Without `tuner`, the tuner a layer names (its `tuner` field, the
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
