//! The benchmark panel and the run's champion (DESIGN 11).
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
use serde::{Deserialize, Serialize};

use super::config::{BenchmarkConfig, ConfigError};
use crate::agents::spec::{FeatureChoice, WeightChoice};
use crate::agents::{AgentSpec, Budget, GameRng, Ties};
use crate::eval::Feature;
use crate::game::{Position, Rules};
use crate::matches::agreement::{measure, solved_positions, AgreementSetup, SolvedPosition};
use crate::matches::{game_rng, schedule, PairSeeds, Pairing, ScoreEstimate};
use crate::search::Depth;

/// RNG stream of the panel's openings and tie-breaking, apart from every fitness stream.
const PANEL_STREAM: u64 = 0x7061_6e65;
/// RNG stream of the agreement set's games, beside the panel's.
const AGREEMENT_STREAM: u64 = 0x6167_7265;
/// One-sided 95% z: a challenger must beat the champion by this many standard errors.
const Z_ONE_SIDED_95: f64 = 1.644_853_626_951_472_2;

/// One individual's games against the panel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PanelResult {
    /// Index of the individual in its generation.
    pub index: usize,
    pub weights: Vec<f64>,
    /// Score against each panel agent, in panel order.
    pub per_agent: Vec<ScoreEstimate>,
    /// Score over the whole panel.
    pub overall: ScoreEstimate,
    /// The individual's points in each pair (0 to 2), panel agent by panel agent: the paired
    /// test compares these with the champion's.
    pub pair_points: Vec<f64>,
    /// Its moves against perfect play, when the benchmark measures agreement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Agreement>,
}

/// A leader's moves on the run's agreement set ([`crate::matches::agreement`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    pub positions: usize,
    /// Share of positions where its move is one of the perfect moves, with a 95% interval.
    pub share: f64,
    pub share_ci: (f64, f64),
    /// Mean seeds given away against perfect play a move, with a 95% interval.
    pub mean_loss: f64,
    pub mean_loss_ci: (f64, f64),
}

/// The player a run hands out, and the panel games that made it champion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Champion {
    pub weights: Vec<f64>,
    /// The generation it was measured in.
    pub generation: u32,
    /// Its fitness in that generation.
    pub fitness: f64,
    pub panel: PanelResult,
}

/// What the panel measured in one generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkRecord {
    /// The panel's agents, as specs.
    pub panel: Vec<String>,
    /// The leaders' results, best fitness first.
    pub leaders: Vec<PanelResult>,
    /// Whether a leader of this generation became champion.
    pub new_champion: bool,
}

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
pub struct Benchmark {
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
    pub fn new(
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
    pub fn set_cancel(&mut self, cancel: Budget) {
        self.cancel = cancel;
    }

    pub fn config(&self) -> &BenchmarkConfig {
        &self.config
    }

    /// The agent that plays as an individual: the same spec its export hands out.
    pub fn individual_spec(&self, weights: &[f64]) -> AgentSpec {
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
    pub fn measure(&self, individuals: &[(usize, Vec<f64>)]) -> Vec<PanelResult> {
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

/// Whether `challenger` is better than `champion` by a one-sided paired test at 95% on their
/// pair-by-pair points (both played the same panel games).
pub fn beats(challenger: &PanelResult, champion: &PanelResult) -> bool {
    let diffs: Vec<f64> = challenger
        .pair_points
        .iter()
        .zip(&champion.pair_points)
        .map(|(a, b)| a - b)
        .collect();
    let n = diffs.len() as f64;
    if n < 2.0 || challenger.pair_points.len() != champion.pair_points.len() {
        return false;
    }
    let mean = diffs.iter().sum::<f64>() / n;
    let variance = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
    if variance == 0.0 {
        return mean > 0.0;
    }
    mean / (variance / n).sqrt() > Z_ONE_SIDED_95
}

/// How much better one panel result is than another that played the same panel games: the
/// champion against the first measured leader, say, to show what a run gained.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PanelGain {
    /// Colour-swapped pairs both played.
    pub pairs: usize,
    /// Difference of the two scores over the panel (0.05 is five points of score), with a
    /// 95% interval from the pair-by-pair differences.
    pub score: f64,
    pub score_ci: (f64, f64),
    /// The same as an Elo difference, measured from the baseline's score.
    pub elo: f64,
    pub elo_ci: (f64, f64),
    /// Whether the one-sided paired test at 95% (the champion rule's, [`beats`]) says better.
    pub better: bool,
}

impl PanelGain {
    /// `ours` over `baseline`; `None` unless both played the same pairs (two or more).
    pub fn of(ours: &PanelResult, baseline: &PanelResult) -> Option<PanelGain> {
        let n = ours.pair_points.len();
        if n < 2 || baseline.pair_points.len() != n {
            return None;
        }
        // A pair holds two games, so its points over two are its score.
        let diffs: Vec<f64> = ours
            .pair_points
            .iter()
            .zip(&baseline.pair_points)
            .map(|(a, b)| (a - b) / 2.0)
            .collect();
        let mean = diffs.iter().sum::<f64>() / n as f64;
        let variance = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
        let half = 1.959_963_984_540_054 * (variance / n as f64).sqrt();
        let base = baseline.pair_points.iter().sum::<f64>() / (2.0 * n as f64);
        let elo_from =
            |d: f64| crate::matches::stats::elo(base + d) - crate::matches::stats::elo(base);
        Some(PanelGain {
            pairs: n,
            score: mean,
            score_ci: (mean - half, mean + half),
            elo: elo_from(mean),
            elo_ci: (elo_from(mean - half), elo_from(mean + half)),
            better: beats(ours, baseline),
        })
    }

    /// "+6.2 points [+2.0, +10.4] of panel score, Elo +44 [+14, +74]".
    pub fn describe(&self) -> String {
        format!(
            "{:+.1} points [{:+.1}, {:+.1}] of panel score, Elo {:+.0} [{:+.0}, {:+.0}] over {} pairs",
            100.0 * self.score,
            100.0 * self.score_ci.0,
            100.0 * self.score_ci.1,
            self.elo,
            self.elo_ci.0,
            self.elo_ci.1,
            self.pairs
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matches::ScoreEstimate;

    #[test]
    fn a_gain_is_the_paired_difference_with_its_interval() {
        let base = result(&[1.0, 1.0, 0.0, 2.0, 1.0, 1.0]);
        let ours = result(&[2.0, 1.0, 1.0, 2.0, 2.0, 1.0]);
        let gain = PanelGain::of(&ours, &base).unwrap();
        assert_eq!(gain.pairs, 6);
        assert!((gain.score - 0.25).abs() < 1e-12);
        assert!(gain.score_ci.0 < gain.score && gain.score < gain.score_ci.1);
        assert!(gain.elo > 0.0 && gain.elo_ci.0 < gain.elo);
        assert_eq!(gain.better, beats(&ours, &base));
        assert!(PanelGain::of(&ours, &result(&[1.0])).is_none());
        let none = PanelGain::of(&base, &base).unwrap();
        assert_eq!((none.score, none.elo, none.better), (0.0, 0.0, false));
    }

    fn result(points: &[f64]) -> PanelResult {
        PanelResult {
            index: 0,
            weights: vec![],
            per_agent: vec![],
            overall: ScoreEstimate::from_groups(&[]),
            pair_points: points.to_vec(),
            agreement: None,
        }
    }

    #[test]
    fn a_challenger_must_be_better_by_the_paired_test() {
        let champion = result(&[1.0; 40]);
        assert!(
            !beats(&result(&[1.0; 40]), &champion),
            "equal is not better"
        );
        let mut slightly = vec![1.0; 40];
        slightly[0] = 2.0;
        assert!(!beats(&result(&slightly), &champion), "one pair is noise");
        let mut clearly = vec![1.0; 40];
        for p in clearly.iter_mut().take(20) {
            *p = 2.0;
        }
        assert!(beats(&result(&clearly), &champion));
        assert!(!beats(&champion, &result(&clearly)));
        assert!(!beats(&result(&[2.0; 10]), &champion), "different games");
    }
}
