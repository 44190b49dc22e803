//! CMA-ES as a population tuner ([`super::population`]): each generation is `population - 1`
//! weight vectors sampled from the covariance matrix adaptation evolution strategy's
//! distribution (the `cmaes` crate, Hansen's algorithm with its default weights and learning
//! rates), plus the distribution's mean, all played as a GA generation is. The strategy is
//! told the samples' fitness and moves its mean, step size and covariance.
//!
//! **Noise.** Game results are noisy; CMA-ES uses only the order of a generation's fitness,
//! so the GA's fitness setting that shares openings between individuals
//! (`fitness.common_openings`, or round-robin fitness, where every pair meets on the same
//! openings) makes the samples' comparison paired. The mean is played too: it is the
//! strategy's best estimate of the optimum (the samples are its exploration), so the hall of
//! fame and the benchmark panel see it.
//!
//! **Resuming.** The crate's state cannot be saved, and it cannot hand out a generation's
//! samples before it is told their fitness; but it is a function of its seed and of the
//! fitness it was told. So before each generation the strategy is rebuilt from its seed and
//! told the fitness of every earlier generation again (the records hold them), then asked for
//! one more generation, whose points are the samples. A run resumes the same way from all its
//! records ([`crate::tune::TunerSpec::resumes_from_all`]); the records carry nothing extra.
//! The cost grows with the run: rebuilding after generation g tells g generations again
//! (measured in docs/explanation/tuners.md#cma-es-and-spsa). The samples are drawn unbounded and clamped to the config's bounds before they
//! play; the strategy learns from the samples it drew, each told its fitness less a penalty
//! for how far it lies outside the bounds (Hansen's repair-and-penalise handling of box
//! bounds).

use std::cell::RefCell;
use std::rc::Rc;

use cmaes::{CMAESOptions, DVector, Mode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::population::{at_least, BreederSettings, PopulationConfig};
use crate::ga::population::Breeder;
use crate::ga::{Bounds, GaConfig};
use crate::tune::bounds::SettingBound;
use crate::tune::config::TunerKind;
use crate::tune::{ConfigError, GenerationRecord, Genome};

/// A CMA-ES run's config.
pub type CmaesConfig = PopulationConfig<CmaesSettings>;

inventory::submit! { TunerKind::of::<CmaesConfig>(20) }

/// Mixed into the run's seed for the strategy's own random numbers.
const CMAES_STREAM: u64 = 0x636d_6165_7321;

/// What CMA-ES adds to the GA's config (under `"cmaes"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CmaesSettings {
    /// The initial step size, as a share of the bounds' width (sigma0 = step x (max - min)).
    /// The mean starts at `init.weights` with `init.kind = "around"`, else in the middle of
    /// the bounds.
    pub step: f64,
}

impl Default for CmaesSettings {
    fn default() -> Self {
        CmaesSettings { step: 0.3 }
    }
}

impl BreederSettings for CmaesSettings {
    const TUNER: &'static str = "cmaes";
    const LABEL: &'static str = "CMA-ES: covariance matrix adaptation";

    const BOUNDS: &'static [SettingBound] = &[SettingBound::above(
        "step",
        0.0,
        1.0,
        "The first step size, as a share of the bounds' width: how far the first samples spread around the mean.",
    )];

    fn validate(&self, ga: &GaConfig, _genes: usize) -> Result<(), ConfigError> {
        at_least(ga, 3, "CMA-ES (two samples and the mean)")?;
        Ok(())
    }

    fn breeder(&self, ga: &GaConfig, genes: usize) -> Box<dyn Breeder> {
        Box::new(CmaesBreeder {
            seed: ga.seed ^ CMAES_STREAM,
            samples: ga.population - 1,
            sigma: self.step * ga.bounds.width(),
            start: super::population::starting_point(ga, genes),
            told: Vec::new(),
        })
    }

    /// Nothing: the strategy is rebuilt from the records' fitness.
    fn checkpoint_bytes(&self, _genes: usize) -> u64 {
        0
    }

    const RESUMES_FROM_ALL: bool = true;
}

#[derive(Debug)]
struct CmaesBreeder {
    seed: u64,
    samples: usize,
    sigma: f64,
    start: Vec<f64>,
    /// The samples' fitness of every generation told so far, oldest first.
    told: Vec<Vec<f64>>,
}

/// The strategy's objective: while `replay` holds fitness, each evaluation answers the next
/// of them (a generation told again); then it records the points it is asked about.
#[derive(Default)]
struct Tape {
    replay: std::collections::VecDeque<f64>,
    drawn: Vec<Vec<f64>>,
}

impl CmaesBreeder {
    /// The generation the strategy samples after being told `self.told`: its samples, then
    /// its mean, clamped to `bounds`.
    fn propose(&self, bounds: &Bounds) -> Vec<Genome> {
        let tape = Rc::new(RefCell::new(Tape {
            replay: self.told.iter().flatten().copied().collect(),
            drawn: Vec::new(),
        }));
        let objective = {
            let tape = Rc::clone(&tape);
            let bounds = *bounds;
            move |x: &DVector<f64>| {
                let mut tape = tape.borrow_mut();
                match tape.replay.pop_front() {
                    Some(fitness) => fitness - out_of_bounds(x.as_slice(), &bounds),
                    None => {
                        tape.drawn.push(x.iter().copied().collect());
                        0.0
                    }
                }
            }
        };
        // The options are checked in `CmaesSettings::validate` and the breeder's fields.
        let Ok(mut strategy) = CMAESOptions::new(self.start.clone(), self.sigma)
            .population_size(self.samples)
            .seed(self.seed)
            .mode(Mode::Maximize)
            .build(objective)
        else {
            return vec![self.start.clone(); self.samples + 1];
        };
        for _ in &self.told {
            // Termination criteria (tolerances, stagnation) are the run's to decide: the
            // strategy is asked for more generations whatever it would say.
            let _ = strategy.next();
        }
        let mean: Vec<f64> = strategy.mean().iter().copied().collect();
        let _ = strategy.next();
        let drawn = std::mem::take(&mut tape.borrow_mut().drawn);
        drawn
            .into_iter()
            .chain(std::iter::once(mean))
            .map(|point| point.into_iter().map(|w| bounds.clamp(w)).collect())
            .collect()
    }
}

/// How far `x` lies outside `bounds`: the squared distance to its clamped point, in units of
/// a quarter of the bounds' width. The strategy is told a sample's fitness less this, so its
/// mean stays inside the bounds: a linear evaluation's play depends only on the direction of
/// its weights, so nothing else would stop the mean from drifting outward until every sample
/// is clamped to the same corner.
fn out_of_bounds(x: &[f64], bounds: &Bounds) -> f64 {
    let quarter = bounds.width() / 4.0;
    x.iter()
        .map(|&w| ((w - bounds.clamp(w)) / quarter).powi(2))
        .sum()
}

impl Breeder for CmaesBreeder {
    fn first(&mut self, bounds: &Bounds) -> Vec<Genome> {
        self.told.clear();
        self.propose(bounds)
    }

    fn breed(&mut self, record: &GenerationRecord, bounds: &Bounds) -> Vec<Genome> {
        self.told.push(
            record
                .individuals
                .iter()
                .take(self.samples)
                .map(|i| i.fitness)
                .collect(),
        );
        self.propose(bounds)
    }

    fn checkpoint(&self) -> Option<Value> {
        None
    }

    fn restore(&mut self, records: &[GenerationRecord]) -> Result<(), ConfigError> {
        for (i, record) in records.iter().enumerate() {
            if record.generation as usize != i {
                return Err(ConfigError::Resume(format!(
                    "CMA-ES resumes from every record of its run; record {i} is generation {}",
                    record.generation
                )));
            }
            if record.individuals.len() != self.samples + 1 {
                return Err(ConfigError::Resume(format!(
                    "generation {} has {} individuals; a CMA-ES run of this config has {}",
                    record.generation,
                    record.individuals.len(),
                    self.samples + 1
                )));
            }
        }
        // Told again, the fitness make the strategy that made the last record's generation.
        self.told = records[..records.len().saturating_sub(1)]
            .iter()
            .map(|r| {
                r.individuals
                    .iter()
                    .take(self.samples)
                    .map(|i| i.fitness)
                    .collect()
            })
            .collect();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_has_a_range() {
        crate::tuners::population::every_setting_has_a_range::<CmaesSettings>();
    }
}
