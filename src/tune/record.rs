//! What a tuner writes after each step: a [`GenerationRecord`] (a generation of a population
//! tuner, or a learner's checkpoint) and the small types it is made of.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::panel::{BenchmarkRecord, Champion};

/// One member of an evaluated generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Individual {
    /// Weights in the order of the run's features.
    pub weights: Vec<f64>,
    pub fitness: f64,
    /// With `fitness.racing`, the games it played against the fixed opponents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raced_games: Option<u32>,
}

/// The best individual seen so far in a run (ties keep the earlier one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HallOfFame {
    pub weights: Vec<f64>,
    pub fitness: f64,
    /// The generation it was evaluated in.
    pub generation: u32,
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// The configured number of generations ran.
    Generations,
    /// `stagnation` generations in a row brought no better hall-of-fame individual.
    Stagnation,
    /// A generation's best fitness reached `target_fitness`.
    TargetFitness,
}

/// Wall-clock measurements: the only part of a record that differs between identical runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timing {
    /// Time to evaluate and breed the generation, in milliseconds.
    pub wall_ms: u64,
}

/// Everything about one evaluated generation. With [`GenerationRecord::timing`] set aside, a
/// pure function of the config and the generation index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationRecord {
    /// 0 for the first generation.
    pub generation: u32,
    /// Every individual in population order.
    pub individuals: Vec<Individual>,
    /// Best / mean / min / standard deviation of this generation's fitness.
    pub fitness: FitnessStats,
    /// Index of this generation's best individual (the lowest among equals).
    pub best_index: usize,
    /// Mean Euclidean distance between the genomes of all pairs of individuals.
    pub diversity: f64,
    /// The best individual of the run up to and including this generation.
    pub hall_of_fame: HallOfFame,
    /// Games played to evaluate this generation.
    pub games_played: u64,
    /// Set on the last generation of a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopReason>,
    /// The leaders' games against the benchmark panel, on measured generations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<BenchmarkRecord>,
    /// The run's champion as it stands after this generation (with a panel configured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub champion: Option<Champion>,
    /// A learner's progress after this checkpoint, in the learner's own type
    /// (`TunerState::read`); population tuners' records have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learner: Option<TunerState>,
    /// What a population tuner other than the GA (`Breeder`: CMA-ES,
    /// SPSA) knew when it made this generation, from which the run resumes; GA records have
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breeder: Option<serde_json::Value>,
    #[serde(default)]
    pub timing: Timing,
}

/// A tuner's own state in a record: a value of the tuner's type, which the engine keeps and
/// stores without knowing it. Held as the JSON text the tuner wrote, so a record read back
/// and written again is byte for byte the record first written (a tree of JSON values would
/// sort the keys).
#[derive(Clone, Debug)]
pub struct TunerState(Box<RawValue>);

impl TunerState {
    /// The state `value`, as its tuner writes it.
    pub(crate) fn new<T: Serialize>(value: &T) -> Result<TunerState, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(TunerState)
    }

    /// The state as its tuner's type `T`; an error if it is another tuner's.
    pub(crate) fn read<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }

    /// The JSON text.
    pub(crate) fn json(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for TunerState {
    fn eq(&self, other: &TunerState) -> bool {
        self.json() == other.json()
    }
}

impl Serialize for TunerState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for TunerState {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(TunerState)
    }
}

/// A generation's place on a fitness curve: the numbers every view of a run's progress
/// (export history, API curve, event stream) shows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub generation: u32,
    pub best: f64,
    pub mean: f64,
    pub min: f64,
    pub std: f64,
    pub diversity: f64,
}

/// The per-generation numbers an export document keeps of its run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationSummary {
    #[serde(flatten)]
    pub curve: CurvePoint,
    pub hall_of_fame_fitness: f64,
    pub games_played: u64,
}

impl GenerationRecord {
    pub(crate) fn curve_point(&self) -> CurvePoint {
        CurvePoint {
            generation: self.generation,
            best: self.fitness.best,
            mean: self.fitness.mean,
            min: self.fitness.min,
            std: self.fitness.std,
            diversity: self.diversity,
        }
    }

    pub(crate) fn summary(&self) -> GenerationSummary {
        GenerationSummary {
            curve: self.curve_point(),
            hall_of_fame_fitness: self.hall_of_fame.fitness,
            games_played: self.games_played,
        }
    }

    /// This generation's best individual.
    pub fn best(&self) -> &Individual {
        &self.individuals[self.best_index]
    }

    /// The record with its timing zeroed: what two runs of one config must agree on.
    pub fn without_timing(&self) -> GenerationRecord {
        GenerationRecord {
            timing: Timing::default(),
            ..self.clone()
        }
    }
}

/// Best, mean, minimum and population standard deviation of a set of fitness values.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitnessStats {
    pub best: f64,
    pub mean: f64,
    pub min: f64,
    pub std: f64,
}

impl FitnessStats {
    pub(crate) fn of(fitness: &[f64]) -> FitnessStats {
        if fitness.is_empty() {
            return FitnessStats {
                best: 0.0,
                mean: 0.0,
                min: 0.0,
                std: 0.0,
            };
        }
        let n = fitness.len() as f64;
        let mean = fitness.iter().sum::<f64>() / n;
        let var = fitness.iter().map(|f| (f - mean) * (f - mean)).sum::<f64>() / n;
        FitnessStats {
            best: fitness.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            mean,
            min: fitness.iter().copied().fold(f64::INFINITY, f64::min),
            std: var.sqrt(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Progress {
        rounds: u32,
        loss: f64,
        another: u64,
    }

    /// A tuner's state keeps the tuner's field order through every way a record travels
    /// (text in the store, a JSON tree in the API), so records written again are the same bytes.
    #[test]
    fn a_tuner_state_is_kept_as_written() {
        let progress = Progress {
            rounds: 3,
            loss: 0.25,
            another: 7,
        };
        let state = TunerState::new(&progress).expect("serialises");
        assert_eq!(state.json(), r#"{"rounds":3,"loss":0.25,"another":7}"#);
        assert_eq!(state.read::<Progress>().expect("reads"), progress);
        let text = serde_json::to_string(&state).expect("serialises");
        let back: TunerState = serde_json::from_str(&text).expect("parses");
        assert_eq!(back, state);
        assert_eq!(serde_json::to_string(&back).expect("serialises"), text);
        let tree = serde_json::to_value(&state).expect("a JSON tree");
        let from_tree: TunerState = serde_json::from_value(tree).expect("from a tree");
        assert_eq!(from_tree.read::<Progress>().expect("reads"), progress);
        assert!(state.read::<Vec<u8>>().is_err(), "another tuner's state");
    }
}
