//! Temporal-difference learning of a linear evaluation from self-play (Ahmed's report;
//! docs/explanation/tuners.md, "TD learning"): TD(lambda) on the positions a player moves from, and TD-Leaf(lambda)
//! on the leaves of the principal variations its searches found.
//!
//! The learner's utility of a position for a player is `U = atan(scale * sum_i W_i H_i)`
//! (Ahmed: scale 0.5), and a finished game is worth 1, 0 or -1 to it. After each of a
//! player's moves the weights move along the gradient of its previous utility, by the
//! difference to the next one: `W += alpha (Y_{t+1} - Y_t) e_t`, with the eligibility trace
//! `e_t = lambda e_{t-1} + grad_W Y_t` (lambda 0 is Ahmed's rule).
//!
//! `TdLearner` is a stepped solver: each `TdLearner::step` plays one batch of self-play
//! games in parallel with the same weights and then applies their updates in game order, so
//! the weights after any number of steps are the same at any thread count. Who drives it
//! (the `learn` command) measures the weights between steps and decides when to stop.

use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::agents::GameRng;
use crate::eval::{Feature, WeightedEval, MAX_WEIGHT};
use crate::game::{Position, Rules, Side};
use crate::matches::{game_rng, random_opening};
use crate::search::{AlphaBeta, Budget};

use super::{bad, check_bounds, check_start, LearnConfigError};
use crate::game::SettingBound;

/// RNG stream of the learner's self-play games, apart from every stream matches use.
const TD_STREAM: u64 = 0x7464_6c65;
/// Most self-play games of one learning run.
pub(crate) const MAX_TD_GAMES: u32 = 10_000_000;
/// Deepest search while learning: every move of every game is searched.
pub(crate) const MAX_TD_DEPTH: u32 = 8;
/// Most games played with one set of weights.
pub(crate) const MAX_TD_BATCH: u32 = 4096;

/// Where the update reads a player's utility.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TdMethod {
    /// TD(lambda) on the positions the player moved from (Ahmed's rule with lambda 0).
    Td,
    /// TD-Leaf(lambda): on the leaf of the principal variation of the player's search.
    TdLeaf,
}

impl TdMethod {
    pub(crate) fn name(self) -> &'static str {
        match self {
            TdMethod::Td => "td",
            TdMethod::TdLeaf => "td-leaf",
        }
    }
}

/// TD's numeric settings with their ranges, in the form's order: its check and the
/// dashboard's fields read this one table.
pub(crate) const TD_BOUNDS: &[SettingBound] = &[
    SettingBound::whole("games", 1.0, MAX_TD_GAMES as f64, "Self-play games in all."),
    SettingBound::whole(
        "batch",
        1.0,
        MAX_TD_BATCH as f64,
        "Games played with one set of weights before their updates are applied.",
    ),
    SettingBound::real("alpha", 0.0, 10.0, "Learning rate.").stepping(0.001),
    SettingBound::real(
        "lambda",
        0.0,
        1.0,
        "Trace decay: 0 updates each utility towards the next only.",
    )
    .stepping(0.05),
    SettingBound::real(
        "epsilon",
        0.0,
        1.0,
        "Chance of a random move instead of the search's.",
    )
    .stepping(0.05),
    SettingBound::above(
        "scale",
        0.0,
        100.0,
        "The utility is atan(scale × the weighted sum).",
    )
    .stepping(0.05),
    SettingBound::whole(
        "depth",
        1.0,
        MAX_TD_DEPTH as f64,
        "Search depth while learning, in turns.",
    ),
    SettingBound::whole(
        "opening_plies",
        0.0,
        crate::matches::MAX_OPENING_PLIES as f64,
        "Random sowings before each game.",
    ),
];

/// A learning run's settings; [`TdConfig::validate`] checks them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TdConfig {
    pub method: TdMethod,
    pub features: Vec<Feature>,
    /// The weights learning starts from, one per feature.
    pub initial: Vec<f64>,
    /// Learning rate.
    pub alpha: f64,
    /// Trace decay: 0 updates each utility towards the next only.
    pub lambda: f64,
    /// Chance of a uniformly random move instead of the search's.
    pub epsilon: f64,
    /// Search depth while learning, in turns (an extra turn does not count).
    pub depth: u32,
    /// Self-play games in all.
    pub games: u32,
    /// Games played in parallel with one set of weights before their updates are applied.
    pub batch: u32,
    /// Random sowings before each game, for variety beyond the random moves.
    pub opening_plies: u32,
    /// `U = atan(scale * sum W H)`.
    pub scale: f64,
    pub pits: usize,
    pub seeds: u32,
    pub rules: Rules,
    /// The pie rule: every game starts with South's opening (no extra turn) and North may
    /// swap; what is learnt includes the positions after a swap.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pie: bool,
    pub seed: u64,
}

/// The presets `learn --preset` knows.
pub(crate) const PRESETS: &[&str] = &["ahmed"];

impl Default for TdConfig {
    /// Ahmed's features and starting weights, learnt by TD-Leaf(0.7).
    fn default() -> Self {
        let set = crate::eval::feature_set("ahmed10").expect("ahmed10 is in the catalogue");
        TdConfig {
            method: TdMethod::TdLeaf,
            features: set.features.to_vec(),
            initial: set.presets[0].1.to_vec(),
            alpha: 0.004,
            lambda: 0.7,
            epsilon: 0.3,
            depth: 2,
            games: 8000,
            batch: 16,
            opening_plies: 0,
            scale: 0.5,
            pits: 6,
            seeds: 4,
            rules: Rules::Standard,
            pie: false,
            seed: 1,
        }
    }
}

impl TdConfig {
    /// A named preset: `ahmed` is the report's training, Ahmed's rule (TD(0) on the
    /// positions moved from) over 8,000 self-play games with 30% random moves, from his
    /// initial ahmed10 weights.
    pub(crate) fn preset(name: &str) -> Result<TdConfig, LearnConfigError> {
        match name {
            "ahmed" => Ok(TdConfig {
                method: TdMethod::Td,
                lambda: 0.0,
                ..TdConfig::default()
            }),
            other => Err(bad(
                "preset",
                format!("unknown preset {other:?}; presets: {}", PRESETS.join(", ")),
            )),
        }
    }

    /// Checks every setting and returns the start position.
    pub(crate) fn validate(&self) -> Result<Position, LearnConfigError> {
        let start = check_start(
            &self.features,
            &self.initial,
            self.rules,
            self.pits,
            self.seeds,
            self.pie,
        )?;
        check_bounds(self, TD_BOUNDS)?;
        Ok(start)
    }
}

/// The utility and its gradient at one of a player's moves.
#[derive(Clone, Debug)]
struct Step {
    utility: f64,
    gradient: Vec<f64>,
    /// The player's own move from here was random: its next utility says nothing about this
    /// one, so the difference is not learnt from and the trace starts again.
    explored: bool,
}

/// What one self-play game taught, before it is applied.
#[derive(Clone, Debug, Default)]
struct GameUpdate {
    delta: Vec<f64>,
    plies: u32,
    /// South's result: 1, 0 or -1.
    south_result: i32,
}

/// Learning so far, for progress reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TdProgress {
    pub games: u64,
    pub plies: u64,
    /// South's wins, draws and losses in the self-play games.
    pub south_wins: u64,
    pub draws: u64,
    pub south_losses: u64,
    /// Size of the last batch's update, sqrt(sum of squares).
    pub last_update_norm: f64,
}

/// Learns weights by self-play; see the module docs.
pub(crate) struct TdLearner {
    config: TdConfig,
    start: Position,
    weights: Vec<f64>,
    progress: TdProgress,
    cancel: Budget,
}

impl TdLearner {
    pub(crate) fn new(config: TdConfig) -> Result<TdLearner, LearnConfigError> {
        let start = config.validate()?;
        Ok(TdLearner {
            weights: config.initial.clone(),
            config,
            start,
            progress: TdProgress::default(),
            cancel: Budget::unlimited(),
        })
    }

    /// Makes the games of later steps stop, searches and all, once `cancel` is set. A step
    /// cancelled so leaves weights that mean nothing: its owner drops the learner.
    pub(crate) fn set_cancel(&mut self, cancel: Budget) {
        self.cancel = cancel;
    }

    /// Carries on from `weights` after `games` games (a resumed run).
    pub(crate) fn resume(
        config: TdConfig,
        weights: Vec<f64>,
        progress: TdProgress,
    ) -> Result<TdLearner, LearnConfigError> {
        let mut learner = TdLearner::new(config)?;
        if weights.len() != learner.weights.len() {
            return Err(bad("weights", "one weight per feature"));
        }
        learner.weights = weights;
        learner.progress = progress;
        Ok(learner)
    }

    pub(crate) fn config(&self) -> &TdConfig {
        &self.config
    }

    pub(crate) fn weights(&self) -> &[f64] {
        &self.weights
    }

    pub(crate) fn progress(&self) -> &TdProgress {
        &self.progress
    }

    pub(crate) fn is_done(&self) -> bool {
        self.progress.games >= self.config.games as u64
    }

    /// Plays the next batch (fewer at the end) and applies its updates in game order.
    /// Returns the number of games played: 0 once done.
    pub(crate) fn step(&mut self) -> u32 {
        let first = self.progress.games;
        let count = (self.config.games as u64 - first).min(self.config.batch as u64);
        let eval = WeightedEval::new(&self.config.features, &self.weights, self.config.rules)
            .expect("weights are kept within the evaluator's range");
        let updates: Vec<GameUpdate> = (first..first + count)
            .into_par_iter()
            .map(|game| self.play(&eval, game))
            .collect();
        let mut total = vec![0.0; self.weights.len()];
        for update in &updates {
            for (t, d) in total.iter_mut().zip(&update.delta) {
                *t += d;
            }
            self.progress.plies += update.plies as u64;
            match update.south_result {
                1 => self.progress.south_wins += 1,
                -1 => self.progress.south_losses += 1,
                _ => self.progress.draws += 1,
            }
        }
        for (w, d) in self.weights.iter_mut().zip(&total) {
            *w = (*w + d).clamp(-MAX_WEIGHT, MAX_WEIGHT);
        }
        self.progress.games += count;
        self.progress.last_update_norm = total.iter().map(|d| d * d).sum::<f64>().sqrt();
        count as u32
    }

    /// The utility of `pos` for `me` and its gradient with respect to the weights.
    fn utility(&self, pos: &Position, me: Side) -> (f64, Vec<f64>) {
        let features: Vec<f64> = self
            .config
            .features
            .iter()
            .map(|f| f.value(pos, me, self.config.rules))
            .collect();
        utility_and_gradient(&self.weights, &features, self.config.scale)
    }

    /// One self-play game with `eval`'s weights; returns its update.
    fn play(&self, eval: &WeightedEval, game: u64) -> GameUpdate {
        let config = &self.config;
        let mut rng: GameRng = game_rng(config.seed, &[TD_STREAM, game]);
        let (mut pos, _) = random_opening(self.start, config.opening_plies, config.rules, &mut rng);
        let mut search = AlphaBeta::new(eval, config.rules);
        search.set_budget(&self.cancel);
        let mut steps: [Vec<Step>; 2] = [Vec::new(), Vec::new()];
        let mut plies = 0;
        while !pos.is_game_over() && !self.cancel.is_stopped() {
            let me = pos.side_to_move();
            let result = search.search_depth(&pos, config.depth);
            let best = result.best_moves[rng.random_range(0..result.best_moves.len())];
            let explored = rng.random::<f64>() < config.epsilon;
            let mv = if explored {
                let legal = pos.legal_moves().to_vec();
                legal[rng.random_range(0..legal.len())]
            } else {
                best
            };
            let (utility, gradient) = match config.method {
                TdMethod::Td => self.utility(&pos, me),
                TdMethod::TdLeaf => {
                    let leaf = principal_leaf(&mut search, &pos, best, config.depth, config.rules);
                    if leaf.is_game_over() {
                        (result_for(&leaf, me) as f64, vec![0.0; self.weights.len()])
                    } else {
                        self.utility(&leaf, me)
                    }
                }
            };
            steps[me.index()].push(Step {
                utility,
                gradient,
                explored,
            });
            pos.play_unchecked(mv, config.rules);
            plies += 1;
        }
        let south_result = result_for(&pos, Side::South);
        let mut delta = vec![0.0; self.weights.len()];
        for side in [Side::South, Side::North] {
            let result = result_for(&pos, side) as f64;
            accumulate(&steps[side.index()], result, config, &mut delta);
        }
        GameUpdate {
            delta,
            plies,
            south_result,
        }
    }
}

/// `atan(scale * w . h)` and its gradient `scale * h / (1 + (scale * w . h)^2)`.
pub(crate) fn utility_and_gradient(
    weights: &[f64],
    features: &[f64],
    scale: f64,
) -> (f64, Vec<f64>) {
    let x = scale
        * weights
            .iter()
            .zip(features)
            .map(|(w, h)| w * h)
            .sum::<f64>();
    let slope = scale / (1.0 + x * x);
    (x.atan(), features.iter().map(|h| slope * h).collect())
}

/// Adds one player's TD(lambda) update to `delta`: its utilities in the order it moved, then
/// the game's result for it.
fn accumulate(steps: &[Step], result: f64, config: &TdConfig, delta: &mut [f64]) {
    let mut trace = vec![0.0; delta.len()];
    for (k, step) in steps.iter().enumerate() {
        for (e, g) in trace.iter_mut().zip(&step.gradient) {
            *e = config.lambda * *e + g;
        }
        let next = steps.get(k + 1).map_or(result, |s| s.utility);
        if step.explored {
            trace.iter_mut().for_each(|e| *e = 0.0);
            continue;
        }
        let error = config.alpha * (next - step.utility);
        for (d, e) in delta.iter_mut().zip(&trace) {
            *d += error * e;
        }
    }
}

/// The leaf of the principal variation that starts with `best` from `pos`: each later move is
/// the first best move of a search of the depth that is left, so the leaf's evaluation is the
/// root's value (or the leaf is a finished game). An extra turn does not use up depth.
pub(crate) fn principal_leaf(
    search: &mut AlphaBeta<'_, WeightedEval>,
    pos: &Position,
    best: usize,
    depth: u32,
    rules: Rules,
) -> Position {
    let mut leaf = *pos;
    let mut left = depth;
    let mut mv = best;
    loop {
        if !leaf.play_unchecked(mv, rules).extra_turn {
            left -= 1;
        }
        if left == 0 || leaf.is_game_over() {
            return leaf;
        }
        mv = search.search_depth(&leaf, left).best_moves[0];
    }
}

/// 1, 0 or -1: how a finished game ended for `side`.
fn result_for(pos: &Position, side: Side) -> i32 {
    let (south, north) = pos.final_stores();
    let margin = south as i64 - north as i64;
    let south_result = margin.signum() as i32;
    match side {
        Side::South => south_result,
        Side::North => -south_result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ahmed(method: TdMethod) -> TdConfig {
        TdConfig {
            method,
            features: crate::eval::parse_features("ahmed10").unwrap(),
            initial: vec![1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0],
            alpha: 0.01,
            lambda: 0.7,
            epsilon: 0.3,
            depth: 2,
            games: 8,
            batch: 4,
            opening_plies: 0,
            scale: 0.5,
            pits: 6,
            seeds: 4,
            rules: Rules::Standard,
            pie: false,
            seed: 3,
        }
    }

    #[test]
    fn the_gradient_is_the_derivative_of_the_utility() {
        let w = [0.3, -0.2, 0.5];
        let h = [4.0, 1.0, -2.0];
        let (u, g) = utility_and_gradient(&w, &h, 0.5);
        // By hand: x = 0.5 * (1.2 - 0.2 - 1.0) = 0, so U = 0 and the slope is 0.5.
        assert_eq!(u, 0.0);
        assert_eq!(g, vec![2.0, 0.5, -1.0]);
        for i in 0..3 {
            let mut wp = w;
            wp[i] += 1e-6;
            let (up, _) = utility_and_gradient(&wp, &h, 0.5);
            assert!(((up - u) / 1e-6 - g[i]).abs() < 1e-4);
        }
    }

    #[test]
    fn a_td_update_matches_one_worked_by_hand() {
        // Two moves of one player, then a win. alpha 0.1, lambda 0.5.
        let mut config = ahmed(TdMethod::Td);
        config.alpha = 0.1;
        config.lambda = 0.5;
        let steps = vec![
            Step {
                utility: 0.2,
                gradient: vec![1.0, 0.0],
                explored: false,
            },
            Step {
                utility: 0.6,
                gradient: vec![0.0, 2.0],
                explored: false,
            },
        ];
        let mut delta = vec![0.0, 0.0];
        accumulate(&steps, 1.0, &config, &mut delta);
        // Step 1: e = (1, 0), error 0.1 * (0.6 - 0.2) = 0.04 -> (0.04, 0).
        // Step 2: e = (0.5, 2), error 0.1 * (1 - 0.6) = 0.04 -> (0.02, 0.08).
        assert!((delta[0] - 0.06).abs() < 1e-12, "{delta:?}");
        assert!((delta[1] - 0.08).abs() < 1e-12, "{delta:?}");
        // A random move of the player's own is not learnt from, and its trace restarts.
        let mut explored = steps.clone();
        explored[0].explored = true;
        let mut delta = vec![0.0, 0.0];
        accumulate(&explored, 1.0, &config, &mut delta);
        assert!((delta[0]).abs() < 1e-12 && (delta[1] - 0.08).abs() < 1e-12);
    }

    #[test]
    fn the_principal_leaf_carries_the_root_value() {
        let features = crate::eval::parse_features("hunter10").unwrap();
        let weights = crate::eval::feature_set("hunter10").unwrap().presets[0].1;
        let eval = WeightedEval::new(&features, weights, Rules::Standard).unwrap();
        let mut pos = Position::start(6, 4).unwrap();
        let mut rng = game_rng(5, &[1]);
        for _ in 0..12 {
            if pos.is_game_over() {
                break;
            }
            let me = pos.side_to_move();
            let mut search = AlphaBeta::new(&eval, Rules::Standard);
            let result = search.search_depth(&pos, 3);
            let leaf = principal_leaf(&mut search, &pos, result.best_moves[0], 3, Rules::Standard);
            if !leaf.is_game_over() {
                use crate::eval::Evaluator;
                assert_eq!(eval.evaluate(&leaf, me), result.value);
            }
            let legal = pos.legal_moves().to_vec();
            pos.play_unchecked(legal[rng.random_range(0..legal.len())], Rules::Standard);
        }
    }

    #[test]
    fn learning_is_the_same_at_any_thread_count() {
        for method in [TdMethod::Td, TdMethod::TdLeaf] {
            let run = |threads: usize| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| {
                        let mut learner = TdLearner::new(ahmed(method)).unwrap();
                        while learner.step() > 0 {}
                        (learner.weights().to_vec(), learner.progress().clone())
                    })
            };
            let one = run(1);
            assert_eq!(one, run(2));
            assert_eq!(one.1.games, 8);
            assert_ne!(one.0, ahmed(method).initial, "{method:?} learnt nothing");
        }
    }

    #[test]
    fn bad_settings_name_their_field() {
        let mut config = ahmed(TdMethod::Td);
        config.lambda = 1.5;
        assert_eq!(config.validate().unwrap_err().field, "lambda");
        let mut config = ahmed(TdMethod::Td);
        config.initial.pop();
        assert_eq!(config.validate().unwrap_err().field, "initial");
        let mut config = ahmed(TdMethod::Td);
        config.depth = 0;
        assert_eq!(config.validate().unwrap_err().field, "depth");
    }
}
