//! The benchmark panel and the run's champion
//! (docs/explanation/tuners.md#the-benchmark-panel-and-the-champion).
//!
//! Fitness tells individuals of one generation apart; it cannot tell whether a run gets
//! better (round-robin fitness stays near 0.5 by construction). On measured generations the
//! generation's leaders (its best by fitness) play a fixed panel of agents on openings that no
//! fitness evaluation uses, the same openings every generation, so that every measured
//! individual faced exactly the same games and two of them can be compared pair by pair.
//!
//! The champion is the player a run hands out (export, `run:ID`, "Play against it"). It is the
//! first measured leader, and a later leader takes its place only when a paired test on the
//! panel games says it is better: the mean of its pair-by-pair differences from the champion
//! is above zero with one-sided 95% confidence.

use std::sync::Arc;

use rand::RngExt;
use rayon::prelude::*;

use super::config::BenchmarkConfig;
use crate::agents::spec::{FeatureChoice, WeightChoice};
use crate::agents::{AgentSpec, Budget, GameRng, Ties};
use crate::eval::Feature;
use crate::game::{Position, Rules};
use crate::matches::agreement::{measure, solved_positions, AgreementSetup, SolvedPosition};
use crate::matches::{game_rng, schedule, PairSeeds, Pairing, ScoreEstimate};
use crate::search::Depth;
use crate::tune::panel::{Agreement, PanelResult};
use crate::tune::ConfigError;

/// RNG stream of the panel's openings and tie-breaking, apart from every fitness stream.
const PANEL_STREAM: u64 = 0x7061_6e65;
/// RNG stream of the agreement set's games, beside the panel's.
const AGREEMENT_STREAM: u64 = 0x6167_7265;

/// The panel's random numbers: pair k against panel agent a always has the same opening and
/// tie-breaks, whatever the generation.
struct PanelSeeds {
    seed: u64,
    agent: u64,
}

impl PairSeeds for PanelSeeds {
    fn opening(&self, pair: u64) -> GameRng {
        game_rng(self.seed, &[PANEL_STREAM, self.agent, pair])
    }

    fn players(&self, pair: u64, a_first: bool) -> (GameRng, GameRng) {
        let streams = |who: u64| [PANEL_STREAM, self.agent, pair, a_first as u64, who];
        (
            game_rng(self.seed, &streams(1)),
            game_rng(self.seed, &streams(2)),
        )
    }
}

/// Everything needed to measure individuals against the panel, fixed for a run.
#[derive(Clone, Debug)]
pub(crate) struct Benchmark {
    config: BenchmarkConfig,
    features: Vec<Feature>,
    depth: u32,
    rules: Rules,
    start: Position,
    seed: u64,
    cancel: Budget,
    /// The solved positions of `config.agreement`, shared by the clones of a run.
    agreement_set: Option<Arc<Vec<SolvedPosition>>>,
}

impl Benchmark {
    pub(crate) fn new(
        config: &BenchmarkConfig,
        features: &[Feature],
        depth: u32,
        rules: Rules,
        start: Position,
        seed: u64,
    ) -> Result<Benchmark, ConfigError> {
        for (i, spec) in config.panel.iter().enumerate() {
            spec.build(rules).map_err(|e| {
                ConfigError::invalid(format!("benchmark.panel[{i}]"), e.to_string())
            })?;
        }
        let agreement_set = match config.agreement {
            None => None,
            Some(positions) => {
                let pits = start.pits();
                let setup = AgreementSetup {
                    pits,
                    seeds: start.seeds_in_pits() / (2 * pits as u32),
                    rules,
                    positions: positions as usize,
                    seed: game_rng(seed, &[PANEL_STREAM, AGREEMENT_STREAM]).random(),
                    ..AgreementSetup::default()
                };
                let set = solved_positions(&setup)
                    .map_err(|e| ConfigError::invalid("benchmark.agreement", e.to_string()))?;
                Some(Arc::new(set))
            }
        };
        Ok(Benchmark {
            agreement_set,
            config: config.clone(),
            features: features.to_vec(),
            depth,
            rules,
            start,
            seed,
            cancel: Budget::unlimited(),
        })
    }

    /// Games of [`Benchmark::measure`] are skipped, and the searches of those under way
    /// stopped, once `cancel` is set; the results of a cancelled measurement mean nothing and
    /// are to be dropped.
    pub(crate) fn set_cancel(&mut self, cancel: Budget) {
        self.cancel = cancel;
    }

    pub(crate) fn config(&self) -> &BenchmarkConfig {
        &self.config
    }

    /// The agent that plays as an individual: the same spec its export hands out.
    pub(crate) fn individual_spec(&self, weights: &[f64]) -> AgentSpec {
        AgentSpec::Heuristic {
            features: FeatureChoice::List(self.features.clone()),
            weights: WeightChoice::Values(weights.to_vec()),
            depth: Depth::Fixed(self.depth),
            time_ms: None,
            nodes: None,
            ties: Ties::Random,
            egdb: false,
        }
    }

    fn pairing(&self, agent: usize) -> Pairing<PanelSeeds> {
        Pairing {
            start: self.start,
            rules: self.rules,
            opening_plies: self.config.opening_plies,
            seeds: PanelSeeds {
                seed: self.seed,
                agent: agent as u64,
            },
        }
    }

    /// Plays each of `individuals` (index, weights) against the whole panel, all games in
    /// parallel and collected in order, so the results do not depend on the thread count.
    pub(crate) fn measure(&self, individuals: &[(usize, Vec<f64>)]) -> Vec<PanelResult> {
        let pairs = self.config.pairs as u64;
        let jobs: Vec<(usize, usize, u64, bool)> = (0..individuals.len())
            .flat_map(|i| {
                (0..self.config.panel.len()).flat_map(move |a| {
                    schedule(pairs).map(move |(pair, first)| (i, a, pair, first))
                })
            })
            .collect();
        let points: Vec<f64> = jobs
            .par_iter()
            .map(|&(i, a, pair, first)| {
                if self.cancel.is_stopped() {
                    return 0.0;
                }
                // Panel agents and individuals were built once in `new` and by the GA, so
                // building them again cannot fail.
                let mut me = self
                    .individual_spec(&individuals[i].1)
                    .build_within(self.rules, &self.cancel)
                    .expect("individuals are valid heuristic players");
                let mut rival = self.config.panel[a]
                    .build_within(self.rules, &self.cancel)
                    .expect("panel agents are checked when the benchmark is made");
                self.pairing(a)
                    .play(&mut *me, &mut *rival, pair, first)
                    .a_points
            })
            .collect();
        let per_individual = self.config.panel.len() * 2 * pairs as usize;
        individuals
            .iter()
            .zip(points.chunks(per_individual.max(1)))
            .map(|((index, weights), games)| {
                let mut result = self.result(*index, weights, games);
                result.agreement = self.agreement(weights);
                result
            })
            .collect()
    }

    /// `weights`' agreement with perfect play on the run's set, when it has one. The
    /// individual's tie-breaks are seeded from the run's seed, so the figure is reproducible.
    fn agreement(&self, weights: &[f64]) -> Option<Agreement> {
        let set = self.agreement_set.as_ref()?;
        if self.cancel.is_stopped() {
            return None;
        }
        let spec = self.individual_spec(weights);
        // The individual was built by the GA, so measuring it cannot fail.
        let report = measure(&spec, set, self.rules, self.seed).ok()?;
        Some(Agreement {
            positions: report.positions,
            share: report.agreement,
            share_ci: report.agreement_ci,
            mean_loss: report.mean_loss,
            mean_loss_ci: report.mean_loss_ci,
        })
    }

    /// Scores from one individual's games, panel agent by panel agent, each a run of pairs.
    fn result(&self, index: usize, weights: &[f64], games: &[f64]) -> PanelResult {
        let per_agent_games = 2 * self.config.pairs as usize;
        let groups = |games: &[f64]| -> Vec<Vec<f64>> {
            games.chunks(2).map(|pair| pair.to_vec()).collect()
        };
        PanelResult {
            index,
            weights: weights.to_vec(),
            per_agent: games
                .chunks(per_agent_games.max(1))
                .map(|agent_games| ScoreEstimate::from_groups(&groups(agent_games)))
                .collect(),
            overall: ScoreEstimate::from_groups(&groups(games)),
            pair_points: games.chunks(2).map(|pair| pair.iter().sum()).collect(),
            agreement: None,
        }
    }
}
