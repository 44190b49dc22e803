//! Training of the `a3c` agent's network by asynchronous advantage actor-critic (Mnih et al.
//! 2016; Hunter 5.6). The `train-a3c` command (src/cli/train_a3c.rs) drives it.
//!
//! Worker threads each own a local copy of the network. A worker plays games against a mix of
//! opponents (the network itself, random, greedy, shallow minimax), and every `n_steps` of
//! its own moves (or at the end of a game) it computes n-step returns and Hunter's loss
//!
//! `L = 0.5 * sum (R - V(s))^2 - sum log pi(a|s) * A(s) - beta * H(pi)`,
//!
//! back-propagates it through its local copy, then, holding the lock of the global network
//! only for that, applies the gradients to the global parameters with the shared Adam
//! optimiser and copies the new global parameters back into its local copy. Workers thus
//! learn from slightly stale parameters, as in A3C.
//!
//! Tensor library: candle (candle-core + candle-nn). Both candle and burn were measured on
//! this network; burn's flex backend is faster per step (about 250 us against 550 us) but
//! takes twice the clean build time (5 min against 2.6 min), and the whole CI must stay under
//! 25 minutes. Per-step speed matters little here: moves are chosen by the plain-`f32`
//! forward pass of [`crate::agents::a3c::Net`], and candle only runs one batched forward and
//! backward pass per update.
//!
//! Reproducibility: the global network starts from the seed and each worker's games from
//! (seed, worker). With one worker and `--episodes` a run repeats exactly; with several
//! workers the order of their updates depends on thread scheduling, as in any A3C.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use candle_core::{backprop::GradStore, DType, Device, Tensor, Var, D};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::RngExt;
use serde::Serialize;

use crate::agents::a3c::{input_len, sample_move, A3cAgent, Layer, Net, Scratch};
use crate::agents::{rng_from_seed, Agent, AgentSpec, GameRng, Ties};
use crate::game::{Position, Rules};
use crate::matches::{derive_seed, game_rng, random_opening, schedule, PairSeeds, Pairing};

/// Who a worker's network plays against in a game.
#[derive(Clone, Debug, PartialEq)]
pub enum Opponent {
    /// The worker's own current network, sampling its moves.
    SelfPlay,
    Agent(AgentSpec),
}

impl std::fmt::Display for Opponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Opponent::SelfPlay => f.write_str("self"),
            Opponent::Agent(spec) => write!(f, "{spec}"),
        }
    }
}

/// A training setting out of range: the caller's mistake, not a failure of training.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct InvalidTraining(pub String);

impl crate::game::UserError for InvalidTraining {}
inventory::submit! { crate::game::UserErrorKind::of::<InvalidTraining>() }

/// Parses `self=2,random=1,greedy=4,minimax:1=2`: opponents with relative weights (a missing
/// weight is 1).
pub fn parse_opponents(text: &str) -> Result<Vec<(Opponent, f64)>> {
    let mut out = Vec::new();
    for piece in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, weight) = match piece.rsplit_once('=') {
            Some((n, w)) => (
                n,
                w.parse::<f64>()
                    .ok()
                    .filter(|w| w.is_finite() && *w >= 0.0)
                    .ok_or_else(|| {
                        InvalidTraining(format!(
                            "opponent weight {w:?} of {n:?} is not a number >= 0"
                        ))
                    })?,
            ),
            None => (piece, 1.0),
        };
        let opponent = if name == "self" {
            Opponent::SelfPlay
        } else {
            Opponent::Agent(AgentSpec::parse(name)?)
        };
        out.push((opponent, weight));
    }
    if out.iter().map(|o| o.1).sum::<f64>() <= 0.0 {
        bail!(InvalidTraining(
            "give at least one opponent with a weight above 0".into()
        ));
    }
    Ok(out)
}

/// Everything a training run depends on.
#[derive(Clone, Debug)]
pub struct A3cConfig {
    pub pits: usize,
    pub seeds: u32,
    pub rules: Rules,
    pub workers: usize,
    /// Stop after this many games in all (whichever of this and `time` comes first).
    pub episodes: Option<u64>,
    pub time: Option<Duration>,
    pub seed: u64,
    pub hidden: usize,
    /// Adam's learning rate at the start; it falls linearly to a tenth by the end of the run.
    pub learning_rate: f64,
    /// Discount of future rewards.
    pub gamma: f64,
    /// Own moves between updates (t_max of A3C).
    pub n_steps: usize,
    /// Entropy bonus weight.
    pub beta: f64,
    /// Weight of the value loss (Hunter: 0.5).
    pub value_weight: f64,
    /// Potential-based shaping by store difference (Ng et al. 1999): each move also earns
    /// `shaping * (gamma * phi(s') - phi(s))` with phi the store difference over half the
    /// seeds. It telescopes away over a game, so the best policy stays the same.
    pub shaping: f64,
    /// Decay of the moving average of the parameters that is evaluated and saved (0: no
    /// averaging, the raw parameters are used).
    pub average_decay: f64,
    /// Gradients are scaled down to at most this global norm.
    pub max_grad_norm: f64,
    /// Random sowings before each training game: 0 to this many, so that games vary.
    pub max_opening_plies: u32,
    pub opponents: Vec<(Opponent, f64)>,
    /// Evaluation games against random and against greedy (colour-swapped pairs from random
    /// two-ply openings).
    pub eval_games: u32,
    /// Time between evaluations (besides one at the start and one at the end).
    pub eval_every: Duration,
}

impl Default for A3cConfig {
    fn default() -> Self {
        A3cConfig {
            pits: 6,
            seeds: 4,
            rules: Rules::Standard,
            workers: 2,
            episodes: None,
            time: Some(Duration::from_secs(60)),
            seed: 1,
            hidden: DEFAULT_HIDDEN,
            learning_rate: DEFAULT_LEARNING_RATE,
            gamma: DEFAULT_GAMMA,
            n_steps: DEFAULT_N_STEPS,
            beta: DEFAULT_BETA,
            value_weight: 0.5,
            shaping: DEFAULT_SHAPING,
            average_decay: 0.0,
            max_grad_norm: 5.0,
            max_opening_plies: 4,
            opponents: parse_opponents(DEFAULT_OPPONENTS).expect("default opponents parse"),
            eval_games: DEFAULT_EVAL_GAMES,
            eval_every: Duration::from_secs(DEFAULT_EVAL_SECONDS),
        }
    }
}

/// The default opponent mix: weighted toward the agents the network must beat.
pub(crate) const DEFAULT_OPPONENTS: &str = "self=1,random=1,greedy=6,minimax:1=3,minimax:2=1";
// The defaults below are shared by `A3cConfig::default()` and the `train-a3c` flags, so the
// library and the command that trained the committed model cannot drift apart.
/// Adam's starting learning rate: at 1e-3 the network levelled off below 97% against random.
pub(crate) const DEFAULT_LEARNING_RATE: f64 = 3e-4;
pub(crate) const DEFAULT_GAMMA: f64 = 0.99;
pub(crate) const DEFAULT_N_STEPS: usize = 20;
pub(crate) const DEFAULT_BETA: f64 = 0.01;
pub(crate) const DEFAULT_SHAPING: f64 = 0.5;
pub(crate) const DEFAULT_HIDDEN: usize = 128;
pub(crate) const DEFAULT_EVAL_GAMES: u32 = 2000;
pub(crate) const DEFAULT_EVAL_SECONDS: u64 = 60;

/// Results of one evaluation.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Evaluation {
    pub episodes: u64,
    pub seconds: f64,
    /// Win rates moving first and second, and the score (draw = half) over all games.
    pub random_first: f64,
    pub random_second: f64,
    pub random_score: f64,
    pub greedy_first: f64,
    pub greedy_second: f64,
    pub greedy_score: f64,
}

impl Evaluation {
    /// What the run keeps the best model by: the scores against both opponents, equally
    /// weighted, so that a gain against greedy does not hide a loss against random.
    fn merit(&self) -> f64 {
        self.greedy_score + self.random_score
    }
}

impl std::fmt::Display for Evaluation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "vs random {:.1}% first {:.1}% second; vs greedy {:.1}% first {:.1}% second",
            100.0 * self.random_first,
            100.0 * self.random_second,
            100.0 * self.greedy_first,
            100.0 * self.greedy_second
        )
    }
}

/// Mean losses over a window of updates.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct LossPoint {
    pub updates: u64,
    /// Hunter's whole loss per step.
    pub loss: f64,
    /// Its value part, `0.5 * (R - V)^2`, per step.
    pub value_loss: f64,
    pub entropy: f64,
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct A3cReport {
    pub episodes: u64,
    pub updates: u64,
    pub seconds: f64,
    pub evaluations: Vec<Evaluation>,
    /// Loss per window of updates, in order.
    pub losses: Vec<LossPoint>,
    /// The best network by evaluation (the last one without evaluations in between).
    pub best: Net,
    pub best_evaluation: Evaluation,
    pub last: Net,
}

/// Progress reported to the caller about five times a second.
pub struct Progress<'a> {
    pub episodes: u64,
    pub updates: u64,
    pub elapsed: Duration,
    pub fraction: f64,
    pub last_evaluation: Option<&'a Evaluation>,
    pub new_evaluation: bool,
    pub loss: Option<LossPoint>,
}

/// Parameters of the network as candle variables, in [`LAYER_NAMES`] order: weight, bias.
///
/// [`LAYER_NAMES`]: crate::agents::a3c::LAYER_NAMES
struct Params {
    vars: Vec<Var>,
    shapes: Vec<(usize, usize)>,
}

impl Params {
    fn shapes(config: &A3cConfig) -> Vec<(usize, usize)> {
        let h = config.hidden;
        vec![
            (h, input_len(config.pits)),
            (h, h),
            (config.pits, h),
            (1, h),
        ]
    }

    /// He-style uniform initialisation from the seed (biases zero).
    fn init(config: &A3cConfig, rng: &mut GameRng) -> Result<Params> {
        let shapes = Params::shapes(config);
        let mut vars = Vec::new();
        for &(rows, cols) in &shapes {
            let bound = (6.0 / cols as f64).sqrt() as f32;
            let w: Vec<f32> = (0..rows * cols)
                .map(|_| rng.random_range(-bound..bound))
                .collect();
            vars.push(Var::from_vec(w, (rows, cols), &Device::Cpu)?);
            vars.push(Var::from_vec(vec![0f32; rows], rows, &Device::Cpu)?);
        }
        Ok(Params { vars, shapes })
    }

    fn copy(&self) -> Result<Params> {
        Ok(Params {
            vars: self
                .vars
                .iter()
                .map(|v| Var::from_tensor(&v.as_tensor().copy()?))
                .collect::<candle_core::Result<_>>()?,
            shapes: self.shapes.clone(),
        })
    }

    fn to_net(&self, config: &A3cConfig) -> Result<Net> {
        let mut layers = Vec::new();
        for (i, &(rows, cols)) in self.shapes.iter().enumerate() {
            layers.push(Layer {
                rows,
                cols,
                weight: self.vars[2 * i]
                    .as_tensor()
                    .flatten_all()?
                    .to_vec1::<f32>()?,
                bias: self.vars[2 * i + 1].as_tensor().to_vec1::<f32>()?,
            });
        }
        Ok(Net {
            pits: config.pits,
            seeds: config.seeds,
            layers: layers
                .try_into()
                .map_err(|_| anyhow!("expected four layers"))?,
            info: Default::default(),
        })
    }

    /// Policy logits (illegal moves pushed to -1e9) and values of a batch.
    fn forward(&self, x: &Tensor, mask: &Tensor) -> Result<(Tensor, Tensor)> {
        let v = &self.vars;
        let dense = |x: &Tensor, i: usize| -> candle_core::Result<Tensor> {
            x.matmul(&v[2 * i].as_tensor().t()?)?
                .broadcast_add(v[2 * i + 1].as_tensor())
        };
        let h1 = dense(x, 0)?.relu()?;
        let h2 = dense(&h1, 1)?.relu()?;
        let logits = (dense(&h2, 2)? + mask)?;
        let value = dense(&h2, 3)?.squeeze(1)?;
        Ok((logits, value))
    }
}

/// Log-softmax over the last dimension with the maximum held constant (it cancels out of the
/// gradient anyway).
fn log_softmax(logits: &Tensor) -> Result<Tensor> {
    let max = logits.max_keepdim(D::Minus1)?.detach();
    let shifted = logits.broadcast_sub(&max)?;
    let log_sum = shifted.exp()?.sum_keepdim(D::Minus1)?.log()?;
    Ok(shifted.broadcast_sub(&log_sum)?)
}

struct Global {
    params: Params,
    optimiser: AdamW,
    /// Exponential moving average of `params` (Polyak averaging), when enabled: what is
    /// evaluated and saved, because asynchronous updates at a useful learning rate leave the
    /// raw parameters flickering between policies a point or two apart.
    average: Option<Params>,
}

struct Shared {
    global: Mutex<Global>,
    episodes: AtomicU64,
    updates: AtomicU64,
    stop: AtomicBool,
    /// Sums over the current window: (updates, steps, loss, value loss, entropy).
    window: Mutex<(u64, u64, f64, f64, f64)>,
    losses: Mutex<Vec<LossPoint>>,
    started: Instant,
}

/// One of the learner's own moves, waiting for its update.
struct Step {
    mask: u16,
    action: usize,
    reward: f64,
    potential: f64,
}

struct Worker<'a> {
    config: &'a A3cConfig,
    shared: &'a Shared,
    local: Params,
    net: Net,
    scratch: Scratch,
    rng: GameRng,
    inputs: Vec<f32>,
    steps: Vec<Step>,
}

const LOSS_WINDOW: u64 = 50;

impl<'a> Worker<'a> {
    fn fraction_done(&self) -> f64 {
        let by_time = self.config.time.map_or(0.0, |t| {
            self.shared.started.elapsed().as_secs_f64() / t.as_secs_f64()
        });
        let by_episodes = self.config.episodes.map_or(0.0, |e| {
            self.shared.episodes.load(Ordering::Relaxed) as f64 / e.max(1) as f64
        });
        by_time.max(by_episodes).min(1.0)
    }

    /// Store difference from the learner's view over half the seeds.
    fn potential(pos: &Position, learner: crate::game::Side) -> f64 {
        pos.store_diff(learner) as f64 / (pos.total_seeds().max(2) as f64 / 2.0)
    }

    fn run(&mut self, worker: usize) -> Result<()> {
        let start = Position::start(self.config.pits, self.config.seeds)?;
        let total_weight: f64 = self.config.opponents.iter().map(|o| o.1).sum();
        let mut game = 0u64;
        while !self.shared.stop.load(Ordering::Relaxed) {
            let episode = self.shared.episodes.fetch_add(1, Ordering::Relaxed);
            if self.config.episodes.is_some_and(|e| episode >= e) {
                break;
            }
            // Pick the opponent by weight.
            let mut pick = self.rng.random::<f64>() * total_weight;
            let mut opponent = &self.config.opponents[0].0;
            for (o, w) in &self.config.opponents {
                opponent = o;
                if pick < *w {
                    break;
                }
                pick -= w;
            }
            let mut agent: Option<Box<dyn Agent>> = match opponent {
                Opponent::SelfPlay => None,
                Opponent::Agent(spec) => Some(spec.build(self.config.rules)?),
            };
            let plies = self.rng.random_range(0..=self.config.max_opening_plies);
            let (pos, _) = random_opening(start, plies, self.config.rules, &mut self.rng);
            let learner = if self.rng.random::<bool>() {
                crate::game::Side::South
            } else {
                crate::game::Side::North
            };
            let mut opp_rng = game_rng(self.config.seed, &[worker as u64, game, 7]);
            self.play_episode(pos, learner, &mut agent, &mut opp_rng)?;
            game += 1;
        }
        Ok(())
    }

    fn play_episode(
        &mut self,
        mut pos: Position,
        learner: crate::game::Side,
        opponent: &mut Option<Box<dyn Agent>>,
        opp_rng: &mut GameRng,
    ) -> Result<()> {
        let rules = self.config.rules;
        let gamma = self.config.gamma;
        let shaping = self.config.shaping;
        self.steps.clear();
        self.inputs.clear();
        while !pos.is_game_over() {
            let moves = pos.legal_moves();
            if pos.side_to_move() == learner {
                let potential = Self::potential(&pos, learner);
                if let Some(last) = self.steps.last_mut() {
                    last.reward += shaping * (gamma * potential - last.potential);
                }
                if self.steps.len() >= self.config.n_steps {
                    let bootstrap = self.net.evaluate(&pos, rules, &mut self.scratch) as f64;
                    self.update(bootstrap)?;
                }
                self.net.evaluate(&pos, rules, &mut self.scratch);
                let action = sample_move(&self.scratch.logits, moves.0, &mut self.rng);
                self.inputs.extend_from_slice(&self.scratch.input);
                self.steps.push(Step {
                    mask: moves.0,
                    action,
                    reward: 0.0,
                    potential,
                });
                pos.play_unchecked(action, rules);
            } else {
                let mv = match opponent {
                    Some(agent) => agent.choose(&pos, opp_rng).mv,
                    None => {
                        self.net.evaluate(&pos, rules, &mut self.scratch);
                        sample_move(&self.scratch.logits, moves.0, opp_rng)
                    }
                };
                pos.play_unchecked(mv, rules);
            }
        }
        if let Some(last) = self.steps.last_mut() {
            let (mine, theirs) = match learner {
                crate::game::Side::South => pos.final_stores(),
                crate::game::Side::North => {
                    let (s, n) = pos.final_stores();
                    (n, s)
                }
            };
            last.reward += match mine.cmp(&theirs) {
                std::cmp::Ordering::Greater => 1.0,
                std::cmp::Ordering::Equal => 0.0,
                std::cmp::Ordering::Less => -1.0,
            };
            last.reward -= shaping * last.potential;
            self.update(0.0)?;
        }
        Ok(())
    }

    /// One A3C update from the buffered steps, bootstrapped with `bootstrap` = V(s_{t+n}).
    fn update(&mut self, bootstrap: f64) -> Result<()> {
        let t = self.steps.len();
        if t == 0 {
            return Ok(());
        }
        let (grads, losses) = self.gradients(bootstrap)?;
        self.apply_to_global(&grads)?;
        self.net = self.local.to_net(self.config)?;
        let updates = self.shared.updates.fetch_add(1, Ordering::Relaxed) + 1;
        self.record_loss(updates, t as u64, losses);
        self.steps.clear();
        self.inputs.clear();
        Ok(())
    }

    /// Hunter's loss on the buffered steps with n-step returns from `bootstrap`, its gradients
    /// with respect to the local copy, and (loss, value loss, entropy) for the log.
    fn gradients(&self, bootstrap: f64) -> Result<(GradStore, (f64, f64, f64))> {
        let t = self.steps.len();
        let m = self.config.pits;
        let mut returns = vec![0f32; t];
        let mut r = bootstrap;
        for (i, step) in self.steps.iter().enumerate().rev() {
            r = step.reward + self.config.gamma * r;
            returns[i] = r as f32;
        }
        let mut mask = vec![0f32; t * m];
        let mut onehot = vec![0f32; t * m];
        for (i, step) in self.steps.iter().enumerate() {
            for j in 0..m {
                if step.mask & (1 << j) == 0 {
                    mask[i * m + j] = -1e9;
                }
            }
            onehot[i * m + step.action - 1] = 1.0;
        }
        let dev = &Device::Cpu;
        let x = Tensor::from_slice(&self.inputs, (t, input_len(m)), dev)?;
        let mask = Tensor::from_vec(mask, (t, m), dev)?;
        let onehot = Tensor::from_vec(onehot, (t, m), dev)?;
        let returns = Tensor::from_vec(returns, t, dev)?;

        let (logits, value) = self.local.forward(&x, &mask)?;
        let log_p = log_softmax(&logits)?;
        let p = log_p.exp()?;
        let entropy = (p * &log_p)?.sum_all()?.neg()?;
        let log_p_action = (&log_p * &onehot)?.sum(D::Minus1)?;
        let diff = (&returns - &value)?;
        let advantage = diff.detach();
        let policy_loss = (log_p_action * advantage)?.sum_all()?.neg()?;
        let value_loss = (diff.sqr()?.sum_all()? * self.config.value_weight)?;
        let loss = ((&policy_loss + &value_loss)? - (&entropy * self.config.beta)?)?;
        let grads = loss.backward()?;
        let logged = (
            loss.to_scalar::<f32>()? as f64,
            value_loss.to_scalar::<f32>()? as f64,
            entropy.to_scalar::<f32>()? as f64,
        );
        Ok((grads, logged))
    }

    /// Clips the local gradients by global norm, steps the shared optimiser on the global
    /// parameters with them (holding the lock only for that), updates the parameter average,
    /// and copies the new global parameters into the local copy.
    fn apply_to_global(&mut self, grads: &GradStore) -> Result<()> {
        let mut norm2 = 0f64;
        for v in &self.local.vars {
            if let Some(g) = grads.get(v.as_tensor()) {
                norm2 += g
                    .sqr()?
                    .sum_all()?
                    .to_dtype(DType::F64)?
                    .to_scalar::<f64>()?;
            }
        }
        let scale = (self.config.max_grad_norm / norm2.sqrt().max(1e-12)).min(1.0);
        let lr = self.config.learning_rate * (1.0 - 0.9 * self.fraction_done());
        let mut global = self
            .shared
            .global
            .lock()
            .map_err(|_| anyhow!("a worker panicked while updating"))?;
        let mut store = GradStore::default();
        for (g_var, l_var) in global.params.vars.iter().zip(&self.local.vars) {
            if let Some(g) = grads.get(l_var.as_tensor()) {
                store.insert(g_var.as_tensor(), (g * scale)?);
            }
        }
        global.optimiser.set_learning_rate(lr);
        global.optimiser.step(&store)?;
        let decay = self.config.average_decay;
        let global = &mut *global;
        if let Some(average) = &mut global.average {
            for (a, p) in average.vars.iter().zip(&global.params.vars) {
                a.set(&((a.as_tensor() * decay)? + (p.as_tensor() * (1.0 - decay))?)?)?;
            }
        }
        for (g_var, l_var) in global.params.vars.iter().zip(&self.local.vars) {
            l_var.set(g_var.as_tensor())?;
        }
        Ok(())
    }

    /// Adds one update's losses to the shared window; every [`LOSS_WINDOW`] updates the
    /// window's per-step means become a point of the loss curve.
    fn record_loss(&self, updates: u64, steps: u64, (loss, value_loss, entropy): (f64, f64, f64)) {
        let Ok(mut w) = self.shared.window.lock() else {
            return;
        };
        w.0 += 1;
        w.1 += steps;
        w.2 += loss;
        w.3 += value_loss;
        w.4 += entropy;
        if w.0 >= LOSS_WINDOW {
            let steps = w.1.max(1) as f64;
            let point = LossPoint {
                updates,
                loss: w.2 / steps,
                value_loss: w.3 / steps,
                entropy: w.4 / steps,
            };
            *w = Default::default();
            if let Ok(mut l) = self.shared.losses.lock() {
                l.push(point);
            }
        }
    }
}

/// Plays `net` (most likely legal move) against random and greedy: `games` games each, in
/// colour-swapped pairs from random two-ply openings, seeded.
/// The evaluation's random numbers: a pair's opening from (seed, opponent, pair), each
/// player's tie-breaking RNG from (seed, opponent, pair, network first, 1 for the network or
/// 2 for its opponent).
struct EvaluationSeeds {
    seed: u64,
    opponent: u64,
}

impl PairSeeds for EvaluationSeeds {
    fn opening(&self, pair: u64) -> GameRng {
        game_rng(self.seed, &[self.opponent, pair])
    }

    fn players(&self, pair: u64, a_first: bool) -> (GameRng, GameRng) {
        let streams = |who: u64| [self.opponent, pair, a_first as u64, who];
        (
            game_rng(self.seed, &streams(1)),
            game_rng(self.seed, &streams(2)),
        )
    }
}

pub fn evaluate(net: &Arc<Net>, rules: Rules, games: u32, seed: u64) -> Result<Evaluation> {
    let start = Position::start(net.pits, net.seeds)?;
    let mut rates = [[0f64; 3]; 2];
    for (k, opponent) in ["random", "greedy"].iter().enumerate() {
        let spec = AgentSpec::parse(opponent)?;
        let pairing = Pairing {
            start,
            rules,
            opening_plies: 2,
            seeds: EvaluationSeeds {
                seed,
                opponent: k as u64,
            },
        };
        let (mut first, mut second, mut points) = (0u32, 0u32, 0f64);
        let pairs = games.div_ceil(2).max(1);
        for (pair, a_first) in schedule(pairs as u64) {
            let mut me = A3cAgent::new(Arc::clone(net), rules, false, Ties::Random);
            let mut other = spec.build(rules)?;
            let mine = pairing.play(&mut me, &mut *other, pair, a_first).a_points;
            points += mine;
            if mine > 0.75 {
                if a_first {
                    first += 1;
                } else {
                    second += 1;
                }
            }
        }
        rates[k] = [
            first as f64 / pairs as f64,
            second as f64 / pairs as f64,
            points / (2 * pairs) as f64,
        ];
    }
    Ok(Evaluation {
        episodes: 0,
        seconds: 0.0,
        random_first: rates[0][0],
        random_second: rates[0][1],
        random_score: rates[0][2],
        greedy_first: rates[1][0],
        greedy_second: rates[1][1],
        greedy_score: rates[1][2],
    })
}

impl Shared {
    /// The global network drawn from the run's seed, with its optimiser.
    fn new(config: &A3cConfig) -> Result<Shared> {
        let mut init_rng = rng_from_seed(derive_seed(config.seed, &[0x6133]));
        let params = Params::init(config, &mut init_rng)?;
        let optimiser = AdamW::new(
            params.vars.clone(),
            ParamsAdamW {
                lr: config.learning_rate,
                weight_decay: 0.0,
                ..Default::default()
            },
        )?;
        Ok(Shared {
            global: Mutex::new(Global {
                average: if config.average_decay > 0.0 {
                    Some(params.copy()?)
                } else {
                    None
                },
                params,
                optimiser,
            }),
            episodes: AtomicU64::new(0),
            updates: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            window: Mutex::new(Default::default()),
            losses: Mutex::new(Vec::new()),
            started: Instant::now(),
        })
    }

    /// The network to evaluate and save: the parameter average when there is one.
    fn snapshot(&self, config: &A3cConfig) -> Result<Net> {
        let global = self
            .global
            .lock()
            .map_err(|_| anyhow!("a worker panicked while updating"))?;
        global
            .average
            .as_ref()
            .unwrap_or(&global.params)
            .to_net(config)
    }

    /// Games counted toward the run (the last workers may overshoot `episodes` by a game).
    fn episodes_done(&self, config: &A3cConfig) -> u64 {
        self.episodes
            .load(Ordering::Relaxed)
            .min(config.episodes.unwrap_or(u64::MAX))
    }

    /// How far the run is toward its time or game limit, whichever is nearer.
    fn fraction_done(&self, config: &A3cConfig, elapsed: Duration) -> f64 {
        let by_time = config
            .time
            .map_or(0.0, |t| elapsed.as_secs_f64() / t.as_secs_f64());
        let by_games = config.episodes.map_or(0.0, |e| {
            self.episodes.load(Ordering::Relaxed) as f64 / e.max(1) as f64
        });
        by_time.max(by_games).min(1.0)
    }
}

/// One worker thread: a local copy of the network, playing and updating until told to stop.
/// A failing worker stops the others, so the run ends with its error.
fn run_worker(config: &A3cConfig, shared: &Shared, w: usize) -> Result<()> {
    let local = shared
        .global
        .lock()
        .map_err(|_| anyhow!("poisoned"))?
        .params
        .copy()?;
    let net = local.to_net(config)?;
    let mut worker = Worker {
        config,
        shared,
        local,
        net,
        scratch: Scratch::default(),
        rng: game_rng(config.seed, &[w as u64, 0x776b]),
        inputs: Vec::new(),
        steps: Vec::new(),
    };
    let result = worker.run(w);
    if result.is_err() {
        shared.stop.store(true, Ordering::Relaxed);
    }
    result
}

/// The evaluations of a run and the best network they found.
struct Judge<F> {
    rules: Rules,
    games: u32,
    seed: u64,
    evaluations: Vec<Evaluation>,
    best: Option<(Net, Evaluation)>,
    on_best: F,
}

impl<F: FnMut(&Net, &Evaluation) -> Result<()>> Judge<F> {
    /// Evaluates `net`; keeps it (and tells `on_best`) when it beats the best so far.
    fn consider(&mut self, net: Net, shared: &Shared) -> Result<()> {
        let arc = Arc::new(net);
        let mut e = evaluate(&arc, self.rules, self.games, self.seed)?;
        e.episodes = shared.episodes.load(Ordering::Relaxed);
        e.seconds = shared.started.elapsed().as_secs_f64();
        if self
            .best
            .as_ref()
            .is_none_or(|(_, b)| e.merit() > b.merit())
        {
            let net = Arc::try_unwrap(arc).unwrap_or_else(|a| (*a).clone());
            (self.on_best)(&net, &e)?;
            self.best = Some((net, e.clone()));
        }
        self.evaluations.push(e);
        Ok(())
    }
}

/// The calling thread's part while the workers train: stops the run at its limit or on
/// `interrupt`, evaluates every `eval_every`, and reports progress five times a second.
fn supervise<F: FnMut(&Net, &Evaluation) -> Result<()>>(
    config: &A3cConfig,
    shared: &Shared,
    interrupt: &AtomicBool,
    workers_done: impl Fn() -> bool,
    judge: &mut Judge<F>,
    progress: &mut impl FnMut(&Progress),
) -> Result<()> {
    let mut last_eval = Instant::now();
    let mut new_eval = false;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let elapsed = shared.started.elapsed();
        if config.time.is_some_and(|t| elapsed >= t) || interrupt.load(Ordering::Relaxed) {
            shared.stop.store(true, Ordering::Relaxed);
        }
        if shared.stop.load(Ordering::Relaxed) || workers_done() {
            return Ok(());
        }
        if config.eval_games > 0 && last_eval.elapsed() >= config.eval_every {
            judge.consider(shared.snapshot(config)?, shared)?;
            new_eval = true;
            last_eval = Instant::now();
        }
        progress(&Progress {
            episodes: shared.episodes_done(config),
            updates: shared.updates.load(Ordering::Relaxed),
            elapsed,
            fraction: shared.fraction_done(config, elapsed),
            last_evaluation: judge.evaluations.last(),
            new_evaluation: std::mem::take(&mut new_eval),
            loss: shared.losses.lock().ok().and_then(|l| l.last().copied()),
        });
    }
}

/// Refuses a training run that could not start or would never stop.
fn check_training(config: &A3cConfig) -> Result<()> {
    if config.workers == 0 || config.workers > 64 {
        bail!(InvalidTraining(format!(
            "workers must be 1 to 64, got {}",
            config.workers
        )));
    }
    if config.episodes.is_none() && config.time.is_none() {
        bail!(InvalidTraining(
            "give a time limit or a number of episodes".into()
        ));
    }
    Position::start(config.pits, config.seeds)?;
    Ok(())
}

/// Runs A3C training. `progress` is called from the calling thread about five times a second;
/// `on_best` whenever an evaluation finds a better network (to save it at once). `interrupt`
/// stops the run early when set.
pub fn train(
    config: &A3cConfig,
    interrupt: &AtomicBool,
    mut progress: impl FnMut(&Progress),
    on_best: impl FnMut(&Net, &Evaluation) -> Result<()>,
) -> Result<A3cReport> {
    check_training(config)?;
    let shared = Shared::new(config)?;
    let mut judge = Judge {
        rules: config.rules,
        games: config.eval_games,
        seed: derive_seed(config.seed, &[0x6576]),
        evaluations: Vec::new(),
        best: None,
        on_best,
    };
    if config.eval_games > 0 {
        judge.consider(shared.snapshot(config)?, &shared)?;
    }
    std::thread::scope(|scope| -> Result<()> {
        let handles: Vec<_> = (0..config.workers)
            .map(|w| {
                let shared = &shared;
                scope.spawn(move || run_worker(config, shared, w))
            })
            .collect();
        let supervised = supervise(
            config,
            &shared,
            interrupt,
            || handles.iter().all(|h| h.is_finished()),
            &mut judge,
            &mut progress,
        );
        // Whatever ended the run, the workers stop before their results are read.
        shared.stop.store(true, Ordering::Relaxed);
        supervised?;
        for h in handles {
            h.join()
                .unwrap_or_else(|_| Err(anyhow!("a worker panicked")))?;
        }
        Ok(())
    })?;
    let last = shared.snapshot(config)?;
    if config.eval_games > 0 {
        judge.consider(last.clone(), &shared)?;
    }
    let episodes = shared.episodes_done(config);
    let seconds = shared.started.elapsed().as_secs_f64();
    let (best, best_evaluation) = judge.best.unwrap_or_else(|| {
        (
            last.clone(),
            // No evaluation ran (`eval_games` 0): the last network, with no scores.
            Evaluation {
                episodes,
                seconds,
                ..Evaluation::default()
            },
        )
    });
    let losses = shared.losses.lock().map(|l| l.clone()).unwrap_or_default();
    Ok(A3cReport {
        episodes,
        updates: shared.updates.load(Ordering::Relaxed),
        seconds,
        evaluations: judge.evaluations,
        losses,
        best,
        best_evaluation,
        last,
    })
}
