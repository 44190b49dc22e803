//! [`TunerConfig`]: the config of a run of any tuner, as a stored run and an export document
//! keep it. Written as the tuner's own config object, as format version 1 always was; a
//! learning config is told apart by its `method` field, which a GA config does not have.

use serde::{Deserialize, Serialize};

use super::learning::LearningConfig;
use super::spec::TunerSpec;
use super::tuner::Tuner;
use crate::agents::FileAccess;
use crate::eval::Feature;
use crate::ga::{ConfigError, GaConfig, GenerationRecord};
use crate::search::Budget;

/// The config of the tuner that made a document or a stored run: a GA's, or a learning
/// run's ([`LearningConfig`]). Written as the config object itself, as format version 1 always
/// was; a learning config is told apart by its `method` field, which a GA config does not have.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum TunerConfig {
    Ga(Box<GaConfig>),
    Learning(Box<LearningConfig>),
}

impl<'de> Deserialize<'de> for TunerConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        TunerConfig::from_value(value).map_err(serde::de::Error::custom)
    }
}

impl TunerConfig {
    /// Reads a config of either kind, by whether it has a `method` field.
    pub fn from_value(value: serde_json::Value) -> Result<TunerConfig, ConfigError> {
        if value.get("method").is_some() {
            return LearningConfig::from_value(value).map(|c| TunerConfig::Learning(Box::new(c)));
        }
        serde_path_to_error::deserialize::<_, GaConfig>(value)
            .map(|c| TunerConfig::Ga(Box::new(c)))
            .map_err(|e| {
                let field = e.path().to_string();
                ConfigError::Parse {
                    field: if field == "." { String::new() } else { field },
                    reason: e.into_inner().to_string(),
                }
            })
    }

    /// What the engine asks of this config's tuner, whichever it is: with
    /// `spec_mut`, the one place a [`TunerConfig`] looks at its variant.
    pub fn spec(&self) -> &dyn TunerSpec {
        match self {
            TunerConfig::Ga(config) => config.as_ref(),
            TunerConfig::Learning(config) => config.as_ref(),
        }
    }

    fn spec_mut(&mut self) -> &mut dyn TunerSpec {
        match self {
            TunerConfig::Ga(config) => config.as_mut(),
            TunerConfig::Learning(config) => config.as_mut(),
        }
    }

    /// The GA config, for documents a GA run wrote.
    pub fn ga(&self) -> Option<&GaConfig> {
        match self {
            TunerConfig::Ga(config) => Some(config),
            _ => None,
        }
    }

    /// The learning config, for documents a learning run wrote.
    pub fn learning(&self) -> Option<&LearningConfig> {
        match self {
            TunerConfig::Learning(config) => Some(config),
            _ => None,
        }
    }

    /// `ga`, `td`, `td-leaf` or `texel`.
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
}
