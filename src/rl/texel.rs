//! Texel-style fitting of a linear evaluation: positions sampled from games, each labelled
//! with how the game went for the side to move (or, where the exact solver reaches, with the
//! game's value under perfect play), and weights chosen to minimise the logistic loss of a
//! short search's score.
//!
//! The score of a position is the evaluation `W . H` at the leaf of its principal variation
//! to `depth` turns; its predicted result is `sigmoid(W . H)`. With the leaves held fixed the
//! loss is convex in the weights, and argmin's L-BFGS minimises it; the leaves are then found
//! again with the new weights, for `rounds` rounds. Each `TexelFitter::step` is one round, so
//! whoever drives it can measure the weights between rounds.

use argmin::core::{CostFunction, Executor, Gradient};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::td::principal_leaf;
use crate::agents::{AgentSpec, GameRng};
use crate::eval::{Feature, WeightedEval, MAX_WEIGHT};
use crate::game::{Position, Rules, Side};
use crate::matches::{game_rng, random_opening};
use crate::search::{AlphaBeta, Budget, Solver};

use super::{bad, check_bounds, check_start, LearnConfigError};
use crate::game::SettingBound;

/// RNG stream of the games positions are sampled from.
const TEXEL_STREAM: u64 = 0x7465_7865;
/// Most games to sample from.
pub(crate) const MAX_TEXEL_GAMES: u32 = 1_000_000;
/// Most solved seeds: a solve's time grows about fourfold with every two seeds.
pub(crate) const MAX_EXACT_SEEDS: u32 = 24;

/// Fitting's numeric settings with their ranges, in the form's order: its check and the
/// dashboard's fields read this one table.
pub(crate) const TEXEL_BOUNDS: &[SettingBound] = &[
    SettingBound::whole(
        "games",
        1.0,
        MAX_TEXEL_GAMES as f64,
        "Self-play games to sample positions from.",
    ),
    SettingBound::whole(
        "positions_per_game",
        1.0,
        200.0,
        "Positions sampled from each game.",
    ),
    SettingBound::whole(
        "opening_plies",
        0.0,
        crate::matches::MAX_OPENING_PLIES as f64,
        "Random sowings before each game.",
    ),
    SettingBound::whole(
        "exact_seeds",
        0.0,
        MAX_EXACT_SEEDS as f64,
        "Positions with at most this many seeds in the pits are labelled by the exact solver \
         (0: never); every two seeds more double the cost.",
    ),
    SettingBound::whole(
        "depth",
        1.0,
        8.0,
        "Depth of the search whose leaf is scored.",
    ),
    SettingBound::whole(
        "rounds",
        1.0,
        100.0,
        "Rounds of finding leaves and fitting; the panel measures after each.",
    ),
    SettingBound::whole("max_iters", 1.0, 10_000.0, "L-BFGS iterations a round."),
    SettingBound::real(
        "l2",
        0.0,
        1.0,
        "Weight of the L2 penalty, which keeps collinear features finite.",
    )
    .stepping(0.0001),
];

/// A fitting run's settings; [`TexelConfig::validate`] checks them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TexelConfig {
    /// Always `texel`: tells a fitting config apart from the other tuners' in documents.
    pub method: String,
    pub features: Vec<Feature>,
    /// The weights fitting starts from, one per feature.
    pub initial: Vec<f64>,
    /// The agent whose self-play games give the positions.
    pub source: AgentSpec,
    /// Self-play games to sample from.
    pub games: u32,
    /// Positions sampled from each game.
    pub positions_per_game: u32,
    /// Random sowings before each game.
    pub opening_plies: u32,
    /// Positions with at most this many seeds in the pits are labelled by the exact solver
    /// (0: never).
    pub exact_seeds: u32,
    /// Depth of the search whose leaf is scored.
    pub depth: u32,
    /// Rounds of finding leaves and fitting.
    pub rounds: u32,
    /// L-BFGS iterations in a round.
    pub max_iters: u64,
    /// Weight of the L2 penalty `l2 * |W|^2`, which keeps collinear features finite.
    pub l2: f64,
    pub pits: usize,
    pub seeds: u32,
    pub rules: Rules,
    /// The pie rule: every game starts with South's opening (no extra turn) and North may
    /// swap; what is learnt includes the positions after a swap.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pie: bool,
    pub seed: u64,
}

impl Default for TexelConfig {
    /// Hunter's features from his published weights, fitted on 2,000 games of that player.
    fn default() -> Self {
        let set = crate::eval::feature_set("hunter10").expect("hunter10 is in the catalogue");
        TexelConfig {
            method: "texel".into(),
            features: set.features.to_vec(),
            initial: set.presets[0].1.to_vec(),
            source: AgentSpec::parse("heuristic:hunter10:published:4")
                .expect("a valid built-in spec"),
            games: 2000,
            positions_per_game: 8,
            opening_plies: 4,
            exact_seeds: 14,
            depth: 1,
            rounds: 4,
            max_iters: 100,
            l2: 1e-4,
            pits: 6,
            seeds: 4,
            rules: Rules::Standard,
            pie: false,
            seed: 1,
        }
    }
}

impl TexelConfig {
    /// Checks every setting and returns the start position.
    pub(crate) fn validate(&self) -> Result<Position, LearnConfigError> {
        if self.method != "texel" {
            return Err(bad("method", "a fitting config's method is \"texel\""));
        }
        let start = check_start(
            &self.features,
            &self.initial,
            self.rules,
            self.pits,
            self.seeds,
            self.pie,
        )?;
        self.source
            .validate()
            .map_err(|e| bad("source", e.to_string()))?;
        check_bounds(self, TEXEL_BOUNDS)?;
        Ok(start)
    }
}

/// A sampled position and what it is labelled with.
#[derive(Clone, Debug)]
struct Sample {
    pos: Position,
    /// 1 if the side to move won, 0.5 for a draw, 0 for a loss.
    label: f64,
}

/// What fitting has done so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TexelProgress {
    pub rounds: u32,
    pub positions: u64,
    /// Positions labelled by the exact solver rather than by the game's result.
    pub exact_labels: u64,
    /// Positions whose leaf is a finished game: their prediction does not depend on the
    /// weights, so they are left out of the fit.
    pub decided_leaves: u64,
    /// Mean logistic loss (penalty included) before and after the last round's fit.
    pub loss_before: f64,
    pub loss_after: f64,
}

/// Fits weights round by round; see the module docs.
pub(crate) struct TexelFitter {
    config: TexelConfig,
    samples: Vec<Sample>,
    weights: Vec<f64>,
    progress: TexelProgress,
    cancel: Budget,
}

impl TexelFitter {
    /// Plays the source agent's games and samples and labels their positions; its games,
    /// searches and solves stop once `cancel` is set, and so do those of every later step. A fitter made or stepped under a cancel means nothing: its
    /// owner drops it.
    pub(crate) fn new_within(
        config: TexelConfig,
        cancel: &Budget,
    ) -> Result<TexelFitter, LearnConfigError> {
        let start = config.validate()?;
        let per_game: Vec<Vec<Sample>> = (0..config.games as u64)
            .into_par_iter()
            .map(|game| sample_game(&config, start, game, cancel))
            .collect::<Result<_, _>>()?;
        let samples: Vec<Sample> = per_game.into_iter().flatten().collect();
        let mut exact = 0;
        let samples: Vec<(Sample, bool)> = samples
            .into_par_iter()
            .map(|s| label_exactly(s, &config, cancel))
            .collect();
        let samples = samples
            .into_iter()
            .map(|(s, solved)| {
                exact += solved as u64;
                s
            })
            .collect::<Vec<_>>();
        Ok(TexelFitter {
            weights: config.initial.clone(),
            progress: TexelProgress {
                positions: samples.len() as u64,
                exact_labels: exact,
                ..TexelProgress::default()
            },
            samples,
            config,
            cancel: cancel.clone(),
        })
    }

    /// Carries on from `weights` after the rounds `progress` counts (a resumed run): the
    /// samples were drawn again by [`TexelFitter::new`], the same ones for the same config.
    pub(crate) fn resume(
        &mut self,
        weights: Vec<f64>,
        progress: TexelProgress,
    ) -> Result<(), LearnConfigError> {
        if weights.len() != self.weights.len() {
            return Err(bad("weights", "one weight per feature"));
        }
        if progress.positions != self.progress.positions
            || progress.exact_labels != self.progress.exact_labels
        {
            return Err(bad(
                "progress",
                "the saved run sampled other positions than this config gives",
            ));
        }
        self.weights = weights;
        self.progress = progress;
        Ok(())
    }

    /// Makes the searches of later steps stop once `cancel` is set; a step cancelled so
    /// leaves weights that mean nothing.
    pub(crate) fn set_cancel(&mut self, cancel: Budget) {
        self.cancel = cancel;
    }

    pub(crate) fn config(&self) -> &TexelConfig {
        &self.config
    }

    pub(crate) fn weights(&self) -> &[f64] {
        &self.weights
    }

    pub(crate) fn progress(&self) -> &TexelProgress {
        &self.progress
    }

    pub(crate) fn is_done(&self) -> bool {
        self.progress.rounds >= self.config.rounds
    }

    /// One round: finds every sample's leaf with the current weights, then fits the weights
    /// to those leaves. Returns false once done.
    pub(crate) fn step(&mut self) -> bool {
        if self.is_done() {
            return false;
        }
        let problem = self.leaves();
        self.progress.decided_leaves = (self.samples.len() - problem.rows.len()) as u64;
        self.progress.loss_before = problem.loss(&self.weights);
        let fitted = problem.fit(&self.weights, self.config.max_iters);
        self.weights = fitted
            .iter()
            .map(|w| w.clamp(-MAX_WEIGHT, MAX_WEIGHT))
            .collect();
        self.progress.loss_after = problem.loss(&self.weights);
        self.progress.rounds += 1;
        true
    }

    /// The features at each sample's leaf, for the side to move at the sample.
    fn leaves(&self) -> Problem {
        let config = &self.config;
        let eval = WeightedEval::new(&config.features, &self.weights, config.rules)
            .expect("weights are kept within the evaluator's range");
        let rows: Vec<Option<(Vec<f64>, f64)>> = self
            .samples
            .par_iter()
            .map(|sample| {
                let me = sample.pos.side_to_move();
                let mut search = AlphaBeta::new(&eval, config.rules);
                search.set_budget(&self.cancel);
                let best = search.search_depth(&sample.pos, config.depth).best_moves[0];
                let leaf =
                    principal_leaf(&mut search, &sample.pos, best, config.depth, config.rules);
                if leaf.is_game_over() {
                    return None;
                }
                let features = config
                    .features
                    .iter()
                    .map(|f| f.value(&leaf, me, config.rules))
                    .collect();
                Some((features, sample.label))
            })
            .collect();
        Problem {
            rows: rows.into_iter().flatten().collect(),
            l2: config.l2,
        }
    }
}

/// Plays one self-play game of the source agent and samples positions from it, labelled with
/// the game's result for the side to move.
fn sample_game(
    config: &TexelConfig,
    start: Position,
    game: u64,
    cancel: &Budget,
) -> Result<Vec<Sample>, LearnConfigError> {
    let build = || {
        config
            .source
            .build_within(config.rules, cancel)
            .map_err(|e| bad("source", e.to_string()))
    };
    let (mut south, mut north) = (build()?, build()?);
    let mut rng: GameRng = game_rng(config.seed, &[TEXEL_STREAM, game]);
    let (mut pos, _) = random_opening(start, config.opening_plies, config.rules, &mut rng);
    let mut seen = Vec::new();
    while !pos.is_game_over() && !cancel.is_stopped() {
        seen.push(pos);
        let agent = match pos.side_to_move() {
            Side::South => &mut south,
            Side::North => &mut north,
        };
        let mv = agent.choose(&pos, &mut rng).mv;
        pos.play_unchecked(mv, config.rules);
    }
    let (south_store, north_store) = pos.final_stores();
    let south_points = match south_store.cmp(&north_store) {
        std::cmp::Ordering::Greater => 1.0,
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Less => 0.0,
    };
    let mut samples = Vec::new();
    for _ in 0..config.positions_per_game.min(seen.len() as u32) {
        let pos = seen.swap_remove(rng.random_range(0..seen.len()));
        let label = match pos.side_to_move() {
            Side::South => south_points,
            Side::North => 1.0 - south_points,
        };
        samples.push(Sample { pos, label });
    }
    Ok(samples)
}

/// The sample with the exact solver's label where it has few enough seeds, and whether it was
/// solved.
fn label_exactly(sample: Sample, config: &TexelConfig, cancel: &Budget) -> (Sample, bool) {
    if config.exact_seeds == 0 || sample.pos.seeds_in_pits() > config.exact_seeds {
        return (sample, false);
    }
    // A small table that grows on demand: endgames this size need little.
    let mut solver = Solver::new(config.rules, 12);
    solver.set_budget(cancel);
    let (value, _) = solver.solve(&sample.pos);
    let label = match value.signum() {
        1 => 1.0,
        0 => 0.5,
        _ => 0.0,
    };
    (
        Sample {
            pos: sample.pos,
            label,
        },
        true,
    )
}

/// The fit of one round: leaf features and labels, with the leaves held fixed.
#[derive(Clone, Debug)]
struct Problem {
    rows: Vec<(Vec<f64>, f64)>,
    l2: f64,
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl Problem {
    /// Mean cross-entropy of `sigmoid(W . H)` against the labels, plus the L2 penalty.
    fn loss(&self, w: &[f64]) -> f64 {
        if self.rows.is_empty() {
            return 0.0;
        }
        let sum: f64 = self
            .rows
            .iter()
            .map(|(h, y)| {
                let x: f64 = w.iter().zip(h).map(|(a, b)| a * b).sum();
                // log(1 + e^x) - y x, written to stay finite for large |x|.
                let softplus = if x > 0.0 {
                    x + (-x).exp().ln_1p()
                } else {
                    x.exp().ln_1p()
                };
                softplus - y * x
            })
            .sum();
        sum / self.rows.len() as f64 + self.l2 * w.iter().map(|a| a * a).sum::<f64>()
    }

    fn gradient(&self, w: &[f64]) -> Vec<f64> {
        let mut g: Vec<f64> = w.iter().map(|a| 2.0 * self.l2 * a).collect();
        if self.rows.is_empty() {
            return g;
        }
        let n = self.rows.len() as f64;
        for (h, y) in &self.rows {
            let x: f64 = w.iter().zip(h).map(|(a, b)| a * b).sum();
            let residual = (sigmoid(x) - y) / n;
            for (gi, hi) in g.iter_mut().zip(h) {
                *gi += residual * hi;
            }
        }
        g
    }

    /// L-BFGS from `start`; keeps `start` if the solver fails (a flat or degenerate problem).
    fn fit(&self, start: &[f64], max_iters: u64) -> Vec<f64> {
        let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7);
        let result = Executor::new(self.clone(), solver)
            .configure(|state| state.param(start.to_vec()).max_iters(max_iters))
            .run();
        match result {
            Ok(result) => {
                use argmin::core::State;
                match result.state().get_best_param() {
                    Some(best) if self.loss(best) <= self.loss(start) => best.clone(),
                    _ => start.to_vec(),
                }
            }
            Err(_) => start.to_vec(),
        }
    }
}

impl CostFunction for Problem {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, w: &Self::Param) -> Result<f64, argmin::core::Error> {
        Ok(self.loss(w))
    }
}

impl Gradient for Problem {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, w: &Self::Param) -> Result<Vec<f64>, argmin::core::Error> {
        Ok(Problem::gradient(self, w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> TexelConfig {
        TexelConfig {
            games: 40,
            positions_per_game: 6,
            source: AgentSpec::parse("heuristic:hunter10:published:2").unwrap(),
            rounds: 2,
            max_iters: 30,
            seed: 4,
            ..TexelConfig::default()
        }
    }

    #[test]
    fn the_gradient_is_the_derivative_of_the_loss() {
        let problem = Problem {
            rows: vec![
                (vec![1.0, -2.0], 1.0),
                (vec![0.5, 3.0], 0.0),
                (vec![-1.0, 1.0], 0.5),
            ],
            l2: 0.01,
        };
        let w = [0.3, -0.1];
        let g = problem.gradient(&w);
        for i in 0..2 {
            let mut wp = w;
            wp[i] += 1e-6;
            let numeric = (problem.loss(&wp) - problem.loss(&w)) / 1e-6;
            assert!((numeric - g[i]).abs() < 1e-4, "{numeric} vs {}", g[i]);
        }
    }

    #[test]
    fn fitting_lowers_the_loss_and_is_the_same_at_any_thread_count() {
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    let mut fitter =
                        TexelFitter::new_within(small(), &Budget::unlimited()).unwrap();
                    let mut losses = Vec::new();
                    while fitter.step() {
                        let p = fitter.progress();
                        losses.push((p.loss_before, p.loss_after));
                    }
                    (fitter.weights().to_vec(), losses, fitter.progress().clone())
                })
        };
        let (weights, losses, progress) = run(1);
        assert_eq!((weights.clone(), losses.clone()), (run(2).0, run(2).1));
        assert_eq!(progress.positions, 40 * 6);
        assert!(progress.exact_labels > 0, "{progress:?}");
        for (before, after) in &losses {
            assert!(after < before, "{losses:?}");
        }
        // The fitted weights load as a player.
        let spec = AgentSpec::Heuristic {
            features: crate::agents::spec::FeatureChoice::List(small().features),
            weights: crate::agents::spec::WeightChoice::Values(weights),
            depth: crate::search::Depth::Fixed(2),
            time_ms: None,
            nodes: None,
            ties: crate::agents::Ties::Random,
            egdb: false,
        };
        assert!(spec.build(Rules::Standard).is_ok());
    }

    #[test]
    fn bad_settings_name_their_field() {
        let mut config = small();
        config.depth = 0;
        assert_eq!(config.validate().unwrap_err().field, "depth");
        let mut config = small();
        config.l2 = -1.0;
        assert_eq!(config.validate().unwrap_err().field, "l2");
    }
}
