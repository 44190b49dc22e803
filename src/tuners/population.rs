//! Population tuners other than the GA: a tuner that, like the GA, plays a generation of weight
//! vectors against fixed opponents or each other and then proposes the next generation, but
//! proposes it its own way ([`Breeder`]). [`PopulationConfig`] is such a tuner's config: a GA
//! config (fitness games, benchmark panel, board, features, bounds, initial weights) and the
//! tuner's own settings; its runs are population runs (`crate::ga::population`, the frame the
//! GA runs in too) with the tuner's breeder, so fitness games, the panel, the records, resuming
//! and the job queue are shared with the GA; making each generation is the breeder's alone.
//!
//! A new population tuner is a file here: its settings type implementing [`BreederSettings`]
//! (with the [`Breeder`] it builds), registered with the engine ([`crate::tune::TunerKind`]). CMA-ES
//! ([`super::cmaes`]) and SPSA ([`super::spsa`]) are two.
//!
//! Written as the GA's config object with `"tuner"` naming the tuner and the settings under
//! the tuner's name: `{"tuner": "cmaes", "population": 12, ..., "cmaes": {"step": 0.3}}`.
//! The GA's own operators (`selection`, `crossover`, `mutation`, `elite`) are kept as given and
//! take no part.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::agents::FileAccess;
use crate::eval::Feature;
use crate::ga::population::Breeder;
use crate::ga::population::PopulationRun;
use crate::ga::GaConfig;
use crate::game::Rules;
use crate::search::Budget;
use crate::tune::bounds::{check_settings, SettingBound};
use crate::tune::config::ConfigForm;
use crate::tune::spec::TunerSpec;
use crate::tune::tuner::Tuner;
use crate::tune::{BoardConfig, ConfigError, GenerationRecord, HallOfFame};

/// A population tuner's own settings: what it adds to the GA's config.
pub trait BreederSettings:
    Serialize + DeserializeOwned + Default + Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static
{
    /// The tuner's name (`"cmaes"`): the `tuner` of its configs, and the key of its settings.
    const TUNER: &'static str;

    /// What the dashboard's form calls it.
    const LABEL: &'static str;

    /// Every numeric setting with its range and help: the settings are checked against it
    /// before [`BreederSettings::validate`], and the form's fields are made from it.
    const BOUNDS: &'static [SettingBound];

    /// Checks what the ranges cannot: the settings against the GA config they run under.
    fn validate(&self, ga: &GaConfig, genes: usize) -> Result<(), ConfigError>;

    /// The breeder of a run of `ga` with `genes` weights.
    fn breeder(&self, ga: &GaConfig, genes: usize) -> Box<dyn Breeder>;

    /// An upper estimate of the bytes the breeder's state adds to each record.
    fn checkpoint_bytes(&self, genes: usize) -> u64;

    /// Whether the breeder resumes from every record of a run rather than from the last.
    const RESUMES_FROM_ALL: bool;
}

/// The config of a run of a population tuner: the GA config its generations are played under
/// and the tuner's settings `S`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PopulationConfig<S> {
    pub ga: GaConfig,
    pub settings: S,
}

impl<S: BreederSettings> PopulationConfig<S> {
    /// Whether `value` is a config of this tuner (its `tuner` field names it).
    pub(crate) fn claims(value: &Value) -> bool {
        value.get("tuner").and_then(Value::as_str) == Some(S::TUNER)
    }

    /// Reads a whole config: the GA's fields, `tuner`, and the settings under the tuner's name.
    pub(crate) fn from_value(value: Value) -> Result<Self, ConfigError> {
        let Value::Object(mut map) = value else {
            return Err(ConfigError::Parse {
                field: String::new(),
                reason: format!("a {} config must be an object", S::TUNER),
            });
        };
        check_tuner::<S>(map.remove("tuner"))?;
        let settings = read_settings::<S>(S::default(), map.remove(S::TUNER))?;
        let ga: GaConfig = ConfigError::read(Value::Object(map), "")?;
        Ok(PopulationConfig { ga, settings })
    }

    /// Assembles and validates a config from partial configs: each layer's `tuner` (if any)
    /// must name this tuner, its settings (under the tuner's name) merge field by field, and
    /// the rest goes to `load_ga`, the GA's loader (`loader::load` with the preset and the
    /// caller's file access).
    pub(crate) fn load(
        layers: &[&Value],
        load_ga: impl FnOnce(&[&Value]) -> Result<GaConfig, ConfigError>,
    ) -> Result<Self, ConfigError> {
        let mut settings = S::default();
        let mut ga_layers = Vec::with_capacity(layers.len());
        for layer in layers {
            let Value::Object(map) = layer else {
                return Err(ConfigError::Parse {
                    field: String::new(),
                    reason: format!("a {} config must be an object", S::TUNER),
                });
            };
            let mut map = map.clone();
            check_tuner::<S>(map.remove("tuner"))?;
            settings = read_settings::<S>(settings, map.remove(S::TUNER))?;
            ga_layers.push(Value::Object(map));
        }
        let ga_layers: Vec<&Value> = ga_layers.iter().collect();
        let ga = load_ga(&ga_layers)?;
        let config = PopulationConfig { ga, settings };
        config.check()?;
        Ok(config)
    }

    fn check(&self) -> Result<Vec<Feature>, ConfigError> {
        let features = self.ga.validate()?.features;
        check_settings(S::TUNER, &self.settings, S::BOUNDS)?;
        self.settings.validate(&self.ga, features.len())?;
        Ok(features)
    }
}

fn check_tuner<S: BreederSettings>(tuner: Option<Value>) -> Result<(), ConfigError> {
    match tuner {
        None => Ok(()),
        Some(Value::String(t)) if t == S::TUNER => Ok(()),
        Some(other) => Err(ConfigError::invalid(
            "tuner",
            format!("the tuner is {:?}; got {other}", S::TUNER),
        )),
    }
}

/// `base` with the fields of `patch` (an object of the settings' fields) laid over it.
fn read_settings<S: BreederSettings>(base: S, patch: Option<Value>) -> Result<S, ConfigError> {
    let Some(patch) = patch else {
        return Ok(base);
    };
    let parse = |field: String, reason: String| ConfigError::Parse {
        field: format!("{}{}", S::TUNER, field),
        reason,
    };
    let Value::Object(patch) = patch else {
        return Err(parse(
            String::new(),
            "expected an object of settings".into(),
        ));
    };
    let Value::Object(mut merged) =
        serde_json::to_value(&base).map_err(|e| parse(String::new(), e.to_string()))?
    else {
        return Err(parse(String::new(), "settings are not an object".into()));
    };
    merged.extend(patch);
    ConfigError::read(Value::Object(merged), S::TUNER)
}

impl<S: BreederSettings> Serialize for PopulationConfig<S> {
    fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        use serde::ser::Error;
        let Value::Object(ga) = serde_json::to_value(&self.ga).map_err(Z::Error::custom)? else {
            return Err(Z::Error::custom("a GA config is an object"));
        };
        let mut map = Map::with_capacity(ga.len() + 2);
        map.insert("tuner".into(), S::TUNER.into());
        map.extend(ga);
        map.insert(
            S::TUNER.into(),
            serde_json::to_value(&self.settings).map_err(Z::Error::custom)?,
        );
        Value::Object(map).serialize(serializer)
    }
}

impl<'de, S: BreederSettings> Deserialize<'de> for PopulationConfig<S> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        PopulationConfig::from_value(value).map_err(serde::de::Error::custom)
    }
}

impl<S: BreederSettings> TunerSpec for PopulationConfig<S> {
    fn tuner(&self) -> &'static str {
        S::TUNER
    }

    fn seed(&self) -> u64 {
        self.ga.seed
    }

    fn records_total(&self) -> u32 {
        self.ga.generations
    }

    fn rules(&self) -> Rules {
        self.ga.rules
    }

    fn pie(&self) -> bool {
        self.ga.pie
    }

    fn board(&self) -> BoardConfig {
        self.ga.board
    }

    fn features(&self) -> Result<Vec<Feature>, ConfigError> {
        self.check()
    }

    fn play_depth(&self) -> u32 {
        self.ga.depth
    }

    fn validate(&self) -> Result<(), ConfigError> {
        self.check().map(|_| ())
    }

    fn locate_agents(&mut self, files: &FileAccess) -> Result<(), ConfigError> {
        self.ga = self.ga.locate_agents(files)?;
        Ok(())
    }

    fn estimated_core_hours(&self) -> f64 {
        self.ga.estimated_core_hours()
    }

    fn estimated_storage_bytes(&self) -> u64 {
        self.check().map_or(0, |features| {
            let genes = features.len();
            let states = self.settings.checkpoint_bytes(genes) * self.ga.generations as u64;
            self.ga
                .estimated_storage_bytes(genes)
                .saturating_add(states)
        })
    }

    fn open(
        &self,
        last: Option<&GenerationRecord>,
        cancel: &Budget,
    ) -> Result<Box<dyn Tuner>, ConfigError> {
        match last {
            None => self.open_after(&[], cancel),
            Some(record) => self.open_after(std::slice::from_ref(record), cancel),
        }
    }

    fn open_after(
        &self,
        records: &[GenerationRecord],
        _cancel: &Budget,
    ) -> Result<Box<dyn Tuner>, ConfigError> {
        let genes = self.check()?.len();
        let breeder = self.settings.breeder(&self.ga, genes);
        Ok(Box::new(PopulationRun::open(
            self.ga.clone(),
            breeder,
            records,
        )?))
    }

    fn resumes_from_all(&self) -> bool {
        S::RESUMES_FROM_ALL
    }

    /// As a GA run's ([`GaConfig`]'s `champion`): the panel's champion, else the best ever
    /// against fixed opponents, else the best of the last generation.
    fn champion(&self, last: &GenerationRecord) -> HallOfFame {
        TunerSpec::champion(&self.ga, last)
    }

    fn population(&self) -> Option<&dyn std::any::Any> {
        Some(&self.ga)
    }

    fn label(&self) -> &'static str {
        S::LABEL
    }

    fn setting_bounds(&self) -> &'static [SettingBound] {
        S::BOUNDS
    }

    fn keeps_curve(&self) -> bool {
        true
    }
}

/// The population size's check shared by the breeders: at least `min` individuals.
pub(crate) fn at_least(ga: &GaConfig, min: usize, why: &str) -> Result<(), ConfigError> {
    if ga.population < min {
        return Err(ConfigError::invalid(
            "population",
            format!("must be at least {min} for {why}"),
        ));
    }
    Ok(())
}

/// Where a breeder's search starts: the config's initial weights (`init.kind = "around"`),
/// clamped to the bounds, else the middle of the bounds.
pub(crate) fn starting_point(ga: &GaConfig, genes: usize) -> Vec<f64> {
    match ga.validate().ok().and_then(|r| r.init_center) {
        Some(center) if center.len() == genes => {
            center.into_iter().map(|w| ga.bounds.clamp(w)).collect()
        }
        _ => vec![(ga.bounds.min + ga.bounds.max) / 2.0; genes],
    }
}

impl<S: BreederSettings> ConfigForm for PopulationConfig<S> {
    const NAMES: &'static [&'static str] = &[S::TUNER];
    const PRESETS: &'static [&'static str] = crate::ga::PRESETS;

    fn load(
        _tuner: &str,
        preset: Option<&str>,
        layers: &[&serde_json::Value],
        files: &FileAccess,
    ) -> Result<Self, ConfigError> {
        PopulationConfig::load(layers, |ga_layers| {
            crate::ga::loader::load(preset, ga_layers, files)
        })
    }

    fn claims(value: &serde_json::Value) -> bool {
        PopulationConfig::<S>::claims(value)
    }

    fn read(value: serde_json::Value) -> Result<Self, ConfigError> {
        PopulationConfig::from_value(value)
    }
}

/// Checks that every field of a population tuner's settings has a declared range with help,
/// and that the defaults are within them: each tuner's tests call it for its settings.
#[cfg(test)]
pub(crate) fn every_setting_has_a_range<S: BreederSettings + utoipa::PartialSchema>() {
    let schema = serde_json::to_value(S::schema()).expect("a schema");
    let fields: Vec<String> = schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    assert!(!fields.is_empty(), "{}: no fields read", S::TUNER);
    for field in &fields {
        assert!(
            S::BOUNDS.iter().any(|b| b.name == field),
            "{}.{field} has no declared range (BreederSettings::BOUNDS)",
            S::TUNER
        );
    }
    for bound in S::BOUNDS {
        assert!(
            fields.iter().any(|f| f == bound.name),
            "{}.{}: no such field",
            S::TUNER,
            bound.name
        );
        assert!(
            !bound.help.is_empty(),
            "{}.{} has no help",
            S::TUNER,
            bound.name
        );
    }
    check_settings(S::TUNER, &S::default(), S::BOUNDS).expect("the defaults are in range");
}
