//! Differential evolution (Storn and Price 1997, DE/rand/1/bin) as a population tuner
//! ([`super::population`]). Each generation plays `population / 2` targets beside one trial
//! vector each. A trial of target x_i is built from three other targets x_r1, x_r2, x_r3,
//! all distinct, drawn at random:
//!
//! ```text
//! v   = x_r1 + F (x_r2 - x_r3)                       mutation (rand/1)
//! u_j = v_j if U(0,1) < CR or j = j_rand, else x_ij  binomial crossover
//! ```
//!
//! clamped to the bounds. A trial replaces its target for the next generation when its fitness
//! is at least the target's.
//!
//! **Noise.** Fitness is played, not computed, and round-robin fitness is relative to the
//! generation that played it. So a target is never compared with a trial on an old score: the
//! targets play again, in the same generation as their trials (the first half of the
//! population, the trials the second), and the selection compares fitness from the same
//! games. This costs the targets' games again each generation, which is the re-evaluation
//! noisy DE needs anyway.
//!
//! Generation 0 is drawn uniformly within the bounds (both halves). The next generation
//! follows from a record's individuals and fitness alone, with its random numbers drawn from
//! the run's seed and the generation, so the breeder keeps no state and resumes from the last
//! record. Written here rather than taken from a crate: the update is the few lines above, and
//! the crates that offer DE are not ask/tell.

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::population::{at_least, BreederSettings, PopulationConfig};
use crate::ga::genome::uniform;
use crate::ga::population::Breeder;
use crate::ga::{Bounds, GaConfig};
use crate::matches::game_rng;
use crate::tune::bounds::SettingBound;
use crate::tune::config::TunerKind;
use crate::tune::{ConfigError, GenerationRecord, Genome};

/// A differential evolution run's config.
pub(crate) type DeConfig = PopulationConfig<DeSettings>;

inventory::submit! { TunerKind::of::<DeConfig>(40) }

/// RNG stream of a generation's trials.
const DE_STREAM: u64 = 0x6465_7276;
/// The generation whose stream draws generation 0.
const FIRST: u64 = u64::MAX;

/// What differential evolution adds to the GA's config (under `"de"`). Targets:
/// `population / 2`, each played beside its trial; the population must be even.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct DeSettings {
    /// F, the differential weight: how far a trial moves along the difference of two targets.
    pub weight: f64,
    /// CR, the crossover rate: the chance that a weight of the trial comes from the mutant
    /// rather than from its target (one weight always does).
    pub crossover: f64,
}

impl Default for DeSettings {
    fn default() -> Self {
        DeSettings {
            weight: 0.5,
            crossover: 0.9,
        }
    }
}

impl BreederSettings for DeSettings {
    const TUNER: &'static str = "de";
    const LABEL: &'static str = "DE: differential evolution";

    const BOUNDS: &'static [SettingBound] = &[
        SettingBound::above(
            "weight",
            0.0,
            2.0,
            "F, the differential weight: how far a trial moves along the difference of two targets.",
        ),
        SettingBound::real(
            "crossover",
            0.0,
            1.0,
            "CR: the chance that a weight of a trial comes from the mutant rather than its target.",
        ),
    ];

    fn validate(&self, ga: &GaConfig, _genes: usize) -> Result<(), ConfigError> {
        at_least(
            ga,
            8,
            "differential evolution (four targets and their trials)",
        )?;
        if ga.population % 2 != 0 {
            return Err(ConfigError::invalid(
                "population",
                format!(
                    "must be even for differential evolution (targets and their trials), got {}",
                    ga.population
                ),
            ));
        }
        Ok(())
    }

    fn breeder(&self, ga: &GaConfig, genes: usize) -> Box<dyn Breeder> {
        Box::new(DeBreeder {
            seed: ga.seed,
            targets: ga.population / 2,
            genes,
            weight: self.weight,
            crossover: self.crossover,
        })
    }

    /// Nothing: the next generation follows from a record alone.
    fn checkpoint_bytes(&self, _genes: usize) -> u64 {
        0
    }

    const RESUMES_FROM_ALL: bool = false;
}

#[derive(Debug)]
struct DeBreeder {
    seed: u64,
    targets: usize,
    genes: usize,
    weight: f64,
    crossover: f64,
}

impl DeBreeder {
    /// The targets, and after them one trial each, built with generation `generation`'s
    /// random numbers.
    fn with_trials(&self, targets: Vec<Genome>, generation: u64, bounds: &Bounds) -> Vec<Genome> {
        let mut rng = game_rng(self.seed, &[DE_STREAM, generation]);
        let n = targets.len();
        let mut trials = Vec::with_capacity(n);
        for (i, target) in targets.iter().enumerate() {
            // Three distinct targets other than i, by rejection (n >= 4 by validation).
            let mut pick = |taken: &[usize]| loop {
                let r = rng.random_range(0..n);
                if r != i && !taken.contains(&r) {
                    return r;
                }
            };
            let r1 = pick(&[]);
            let r2 = pick(&[r1]);
            let r3 = pick(&[r1, r2]);
            let forced = rng.random_range(0..self.genes.max(1));
            let trial: Genome = (0..target.len())
                .map(|j| {
                    let from_mutant = rng.random::<f64>() < self.crossover || j == forced;
                    if from_mutant {
                        let mutant =
                            targets[r1][j] + self.weight * (targets[r2][j] - targets[r3][j]);
                        bounds.clamp(mutant)
                    } else {
                        target[j]
                    }
                })
                .collect();
            trials.push(trial);
        }
        let mut population = targets;
        population.extend(trials);
        population
    }
}

impl Breeder for DeBreeder {
    fn first(&mut self, bounds: &Bounds) -> Vec<Genome> {
        let mut rng = game_rng(self.seed, &[DE_STREAM, FIRST]);
        (0..2 * self.targets)
            .map(|_| uniform(self.genes, bounds, &mut rng))
            .collect()
    }

    fn breed(&mut self, record: &GenerationRecord, bounds: &Bounds) -> Vec<Genome> {
        let n = self.targets;
        let played = &record.individuals;
        // Each target against its own trial, on the same generation's games; a tie goes to
        // the trial, as in Storn and Price, so that the search drifts across plateaus.
        let survivors: Vec<Genome> = (0..n)
            .map(|i| match played.get(n + i) {
                Some(trial) if trial.fitness >= played[i].fitness => trial.weights.clone(),
                _ => played[i].weights.clone(),
            })
            .collect();
        self.with_trials(survivors, record.generation as u64 + 1, bounds)
    }

    fn checkpoint(&self) -> Option<Value> {
        None
    }

    fn restore(&mut self, _records: &[GenerationRecord]) -> Result<(), ConfigError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_has_a_range() {
        crate::tuners::population::every_setting_has_a_range::<DeSettings>();
    }
}
