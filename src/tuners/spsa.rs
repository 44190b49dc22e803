//! SPSA (Spall's simultaneous perturbation stochastic approximation, the tuner of Stockfish's
//! Fishtest) as a population tuner ([`super::population`]). Iteration k plays, as one GA
//! generation, `population / 2` pairs of players theta + c_k d and theta - c_k d (d a random
//! vector of +1 and -1 per pair), and theta itself when the population is odd; the difference of each pair's fitness estimates the
//! gradient along d, and theta moves by a_k times their mean:
//!
//! ```text
//! g = mean over pairs of (f(theta + c_k d) - f(theta - c_k d)) / (2 c_k) * d
//! theta <- clamp(theta + a_k g)        a_k = a / (k + 1 + A)^alpha,  c_k = c / (k + 1)^gamma
//! ```
//!
//! with Spall's exponents alpha = 0.602 and gamma = 0.101. `a` and `c` are given in shares of
//! the bounds' width w: `perturbation` = c / w, and `gain` = a_0 / w^2, so that the first
//! iteration moves each weight by `gain` x w x (pair difference) / (2 `perturbation`): with the
//! defaults, half the bounds' width times the difference of the pair's fitness.
//!
//! **Noise.** A pair's two players meet the same opponents on the same openings with
//! `fitness.common_openings` (or round-robin fitness), so their difference is paired; the
//! gain falls as the run goes on, which averages the noise out. theta is played in each
//! generation, so the hall of fame and the benchmark panel see it.
//!
//! Written here rather than taken from a crate: the crates that offer SPSA (`stochy`, argmin
//! has none) are unmaintained or not ask/tell, and the update is the few lines above. Its state
//! is theta alone (the perturbations are drawn from the run's seed and the iteration), kept in
//! each record.

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::population::{at_least, BreederSettings, PopulationConfig};
use crate::ga::population::Breeder;
use crate::ga::{Bounds, GaConfig};
use crate::matches::game_rng;
use crate::tune::bounds::SettingBound;
use crate::tune::config::TunerKind;
use crate::tune::{ConfigError, GenerationRecord, Genome};

/// An SPSA run's config.
pub type SpsaConfig = PopulationConfig<SpsaSettings>;

inventory::submit! { TunerKind::of::<SpsaConfig>(30) }

/// RNG stream of an iteration's perturbations.
const PERTURB_STREAM: u64 = 0x7370_7361;

/// What SPSA adds to the GA's config (under `"spsa"`). Perturbation pairs: `population / 2`;
/// an odd population also plays theta.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SpsaSettings {
    /// c: each weight's perturbation in the first iteration, as a share of the bounds' width.
    pub perturbation: f64,
    /// a_0 / w^2 (a_0 = a / (1 + A)^alpha, the first iteration's gain; w the bounds' width).
    pub gain: f64,
    /// A, Spall's stability constant, in iterations; by default a tenth of `generations`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stability: Option<u32>,
    /// alpha: how fast the gain falls.
    pub alpha: f64,
    /// gamma: how fast the perturbation falls.
    pub gamma: f64,
}

impl Default for SpsaSettings {
    fn default() -> Self {
        SpsaSettings {
            perturbation: 0.1,
            gain: 0.1,
            stability: None,
            alpha: 0.602,
            gamma: 0.101,
        }
    }
}

impl SpsaSettings {
    fn stability(&self, ga: &GaConfig) -> f64 {
        self.stability.unwrap_or(ga.generations / 10) as f64
    }
}

impl BreederSettings for SpsaSettings {
    const TUNER: &'static str = "spsa";
    const LABEL: &'static str = "SPSA: simultaneous perturbation";

    const BOUNDS: &'static [SettingBound] = &[
        SettingBound::above(
            "perturbation",
            0.0,
            1.0,
            "c: each weight's perturbation in the first iteration, as a share of the bounds' width.",
        ),
        SettingBound::above(
            "gain",
            0.0,
            100.0,
            "a_0 / w^2: the first iteration's gain, over the bounds' width squared.",
        ),
        SettingBound::whole(
            "stability",
            0.0,
            1_000_000.0,
            "A, Spall's stability constant, in iterations; empty: a tenth of the generations.",
        )
        .optional(),
        SettingBound::real("alpha", 0.0, 1.0, "alpha: how fast the gain falls."),
        SettingBound::real("gamma", 0.0, 1.0, "gamma: how fast the perturbation falls."),
    ];

    fn validate(&self, ga: &GaConfig, _genes: usize) -> Result<(), ConfigError> {
        at_least(ga, 2, "SPSA (a pair of perturbations)")?;
        Ok(())
    }

    fn breeder(&self, ga: &GaConfig, genes: usize) -> Box<dyn Breeder> {
        let width = ga.bounds.width();
        let stability = self.stability(ga);
        Box::new(SpsaBreeder {
            seed: ga.seed,
            pairs: ga.population / 2,
            with_theta: ga.population % 2 == 1,
            c: self.perturbation * width,
            a: self.gain * width * width * (1.0 + stability).powf(self.alpha),
            stability,
            alpha: self.alpha,
            gamma: self.gamma,
            theta: super::population::starting_point(ga, genes),
        })
    }

    /// theta, about 24 bytes a weight.
    fn checkpoint_bytes(&self, genes: usize) -> u64 {
        genes as u64 * 24 + 16
    }

    /// theta is in the last record.
    const RESUMES_FROM_ALL: bool = false;
}

#[derive(Debug)]
struct SpsaBreeder {
    seed: u64,
    pairs: usize,
    /// Whether theta itself plays, after the pairs.
    with_theta: bool,
    c: f64,
    a: f64,
    stability: f64,
    alpha: f64,
    gamma: f64,
    /// The point the current generation's pairs perturb.
    theta: Vec<f64>,
}

impl SpsaBreeder {
    fn c_k(&self, k: u32) -> f64 {
        self.c / (k as f64 + 1.0).powf(self.gamma)
    }

    fn a_k(&self, k: u32) -> f64 {
        self.a / (k as f64 + 1.0 + self.stability).powf(self.alpha)
    }

    /// Iteration `k`'s perturbation directions, one a pair: +1 or -1 per weight.
    fn directions(&self, k: u32) -> Vec<Vec<f64>> {
        let mut rng = game_rng(self.seed, &[PERTURB_STREAM, k as u64]);
        (0..self.pairs)
            .map(|_| {
                (0..self.theta.len())
                    .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
                    .collect()
            })
            .collect()
    }

    /// Iteration `k`'s generation: each pair's theta + c_k d and theta - c_k d, then theta
    /// (with an odd population).
    fn generation(&self, k: u32, bounds: &Bounds) -> Vec<Genome> {
        let c = self.c_k(k);
        let mut players = Vec::with_capacity(2 * self.pairs + 1);
        for d in self.directions(k) {
            for sign in [1.0, -1.0] {
                players.push(
                    self.theta
                        .iter()
                        .zip(&d)
                        .map(|(t, d)| bounds.clamp(t + sign * c * d))
                        .collect(),
                );
            }
        }
        if self.with_theta {
            players.push(self.theta.clone());
        }
        players
    }
}

impl Breeder for SpsaBreeder {
    fn first(&mut self, bounds: &Bounds) -> Vec<Genome> {
        self.generation(0, bounds)
    }

    fn breed(&mut self, record: &GenerationRecord, bounds: &Bounds) -> Vec<Genome> {
        let k = record.generation;
        let (a, c) = (self.a_k(k), self.c_k(k));
        let fitness: Vec<f64> = record.individuals.iter().map(|i| i.fitness).collect();
        let mut gradient = vec![0.0; self.theta.len()];
        for (pair, d) in self.directions(k).iter().enumerate() {
            let difference = fitness[2 * pair] - fitness[2 * pair + 1];
            for (g, d) in gradient.iter_mut().zip(d) {
                *g += difference / (2.0 * c) * d / self.pairs as f64;
            }
        }
        for (t, g) in self.theta.iter_mut().zip(&gradient) {
            *t = bounds.clamp(*t + a * g);
        }
        self.generation(k + 1, bounds)
    }

    fn checkpoint(&self) -> Option<Value> {
        Some(json!({ "theta": self.theta }))
    }

    fn restore(&mut self, records: &[GenerationRecord]) -> Result<(), ConfigError> {
        #[derive(Deserialize)]
        struct Saved {
            theta: Vec<f64>,
        }
        let checkpoint = records
            .last()
            .and_then(|r| r.breeder.clone())
            .ok_or_else(|| ConfigError::Resume("the record has no SPSA state (theta)".into()))?;
        let saved: Saved = serde_json::from_value(checkpoint).map_err(|e| {
            ConfigError::Resume(format!("the record's SPSA state does not read: {e}"))
        })?;
        if saved.theta.len() != self.theta.len() {
            return Err(ConfigError::Resume(format!(
                "the record's SPSA theta has {} weights, the config {}",
                saved.theta.len(),
                self.theta.len()
            )));
        }
        self.theta = saved.theta;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_has_a_range() {
        crate::tuners::population::every_setting_has_a_range::<SpsaSettings>();
    }
}
