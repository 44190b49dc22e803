//! What a tuner writes after each step: a [`GenerationRecord`] (a generation of a population
//! tuner, or a learner's checkpoint) and the small types it is made of.

use serde::{Deserialize, Serialize};

use super::panel::{BenchmarkRecord, Champion};
use crate::rl::LearnerProgress;

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
    /// A learning run's progress after this checkpoint (`tune::learning`); GA records
    /// have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learner: Option<LearnerProgress>,
    /// What a population tuner other than the GA (`Breeder`: CMA-ES,
    /// SPSA) knew when it made this generation, from which the run resumes; GA records have
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breeder: Option<serde_json::Value>,
    #[serde(default)]
    pub timing: Timing,
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

    pub fn summary(&self) -> GenerationSummary {
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
    pub fn of(fitness: &[f64]) -> FitnessStats {
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
