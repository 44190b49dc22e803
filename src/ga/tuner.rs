//! The genetic algorithm as a [`Tuner`]: one generation a step ([`crate::ga::Evolution`]),
//! whose fitness games it hands out as job lists (the games fixed in advance, then one list
//! per racing round).

use crate::agents::FileAccess;
use crate::eval::Feature;
use crate::ga::{Evolution, FitnessMode, GaConfig};
use crate::game::Rules;
use crate::search::Budget;
use crate::tune::config::{ConfigForm, TunerKind};
use crate::tune::spec::TunerSpec;
use crate::tune::tuner::Tuner;
use crate::tune::{BoardConfig, ConfigError, GenerationRecord, HallOfFame};

inventory::submit! { TunerKind::of::<GaConfig>(0) }

impl TunerSpec for GaConfig {
    fn tuner(&self) -> &'static str {
        "ga"
    }

    fn label(&self) -> &'static str {
        "GA: a genetic algorithm"
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn records_total(&self) -> u32 {
        self.generations
    }

    fn rules(&self) -> Rules {
        self.rules
    }

    fn pie(&self) -> bool {
        self.pie
    }

    fn board(&self) -> BoardConfig {
        self.board
    }

    fn features(&self) -> Result<Vec<Feature>, ConfigError> {
        Ok(GaConfig::validate(self)?.features)
    }

    fn play_depth(&self) -> u32 {
        self.depth
    }

    fn validate(&self) -> Result<(), ConfigError> {
        GaConfig::validate(self).map(|_| ())
    }

    fn locate_agents(&mut self, files: &FileAccess) -> Result<(), ConfigError> {
        *self = GaConfig::locate_agents(self, files)?;
        Ok(())
    }

    fn estimated_core_hours(&self) -> f64 {
        GaConfig::estimated_core_hours(self)
    }

    fn estimated_storage_bytes(&self) -> u64 {
        GaConfig::validate(self).map_or(0, |r| {
            GaConfig::estimated_storage_bytes(self, r.features.len())
        })
    }

    /// A GA has nothing to prepare: its games start with its first step.
    fn open(
        &self,
        last: Option<&GenerationRecord>,
        _cancel: &Budget,
    ) -> Result<Box<dyn Tuner>, ConfigError> {
        Ok(match last {
            None => Box::new(Evolution::new(self.clone())?),
            Some(record) => Box::new(Evolution::resume(self.clone(), record)?),
        })
    }

    /// With a benchmark panel, the panel's champion ([`crate::ga::benchmark`]). Without one:
    /// fitness against fixed opponents is absolute, so the best ever (the hall of fame);
    /// round-robin fitness is relative to the population it was measured in (a high score in
    /// a weak early generation says little), so the best of the last generation.
    fn champion(&self, last: &GenerationRecord) -> HallOfFame {
        if let Some(champion) = &last.champion {
            return HallOfFame {
                weights: champion.weights.clone(),
                fitness: champion.fitness,
                generation: champion.generation,
            };
        }
        if self.fitness.mode == FitnessMode::Opponents {
            return last.hall_of_fame.clone();
        }
        let best = last.best();
        HallOfFame {
            weights: best.weights.clone(),
            fitness: best.fitness,
            generation: last.generation,
        }
    }

    fn population(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn keeps_curve(&self) -> bool {
        true
    }
}

impl ConfigForm for GaConfig {
    const NAMES: &'static [&'static str] = &["ga"];
    const PRESETS: &'static [&'static str] = crate::ga::PRESETS;

    fn load(
        _tuner: &str,
        preset: Option<&str>,
        layers: &[&serde_json::Value],
        files: &FileAccess,
    ) -> Result<Self, ConfigError> {
        crate::ga::loader::load(preset, layers, files)
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

/// The GA config a population tuner's generations are played under (the GA's, CMA-ES's,
/// SPSA's): what the job queue's workers play its fitness games by.
pub fn population_of(config: &crate::tune::TunerConfig) -> Option<&GaConfig> {
    config
        .spec()
        .population()
        .and_then(|any| any.downcast_ref::<GaConfig>())
}
