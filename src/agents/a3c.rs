//! The `a3c` agent (Hunter 5.6): a policy/value network trained by asynchronous advantage
//! actor-critic (`crate::rl::a3c`), playing the legal move its policy likes best.
//!
//! The network is a small MLP: the encoded position (see `encode`) -> 128 ReLU -> 128 ReLU
//! -> m policy logits and one value. Playing needs only this forward pass, done here on plain
//! `f32` slices: a few microseconds a move, bit-for-bit reproducible, and no tensor library
//! on the playing path. Models are safetensors files (`hidden1`, `hidden2`, `policy`,
//! `value`, each `.weight` of shape (out, in) and `.bias`) whose metadata names the board and
//! the input encoding.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use rand::RngExt;

use super::files::MAX_MODEL_BYTES;
use super::mcts::immediate_gain;
use super::{Agent, Decision, GameRng, Greedy, MoveValue, Ties};
use crate::game::{Position, Rules};

/// Name of the input encoding written into model metadata; a model with another encoding is
/// refused rather than fed inputs it was not trained on.
pub(crate) const ENCODING: &str = "kalah-a3c-v2";
/// The layers of a model, in order.
pub(crate) const LAYER_NAMES: [&str; 4] = ["hidden1", "hidden2", "policy", "value"];
/// The committed Kalah(6,4) model, embedded so that `a3c` plays from any directory.
pub(crate) const DEFAULT_MODEL: &[u8] = include_bytes!("../../models/a3c-6x4.safetensors");
/// Where the embedded model lives in the repository (for messages and the README).
pub(crate) const DEFAULT_MODEL_PATH: &str = "models/a3c-6x4.safetensors";

/// Inputs the network takes for a board of `pits` pits a side.
pub(crate) fn input_len(pits: usize) -> usize {
    6 * pits + 2
}

/// Encodes `pos` from the side to move's view into `out` (cleared first):
///
/// - its pits (move 1 first) and its store, the opponent's pits (its move 1 first) and store,
///   pits scaled by twice the mean seeds a pit and stores by half the seeds of the game;
/// - for each of its moves, the seeds the move puts in its store at once (sowing and capture)
///   and whether it earns an extra turn;
/// - for each of its moves, the most the opponent could then put in its store with one sowing
///   (what the move leaves exposed; counted as if the opponent moved next, also after an extra
///   turn);
/// - for each of the opponent's moves, what it would put in its store at once (its threats).
///
/// The move-consequence inputs are what the rules say one or two sowings do; the network still
/// has to learn what to make of them (the trainer is plain A3C). They are there because a
/// 30-minute training budget on two cores is too short for a raw-board network to learn sowing
/// arithmetic; the exposure inputs (v2) were added after v1 models kept leaving pits open to
/// capture (the README has the measurements).
pub(crate) fn encode(pos: &Position, rules: Rules, out: &mut Vec<f32>) {
    out.clear();
    let m = pos.pits();
    let me = pos.side_to_move();
    let opp = me.opponent();
    let total = pos.total_seeds().max(1) as f32;
    let pit_scale = 1.0 / (2.0 * total / (2 * m) as f32);
    let store_scale = 2.0 / total;
    for side in [me, opp] {
        out.extend(pos.side_pits(side).iter().map(|&s| s as f32 * pit_scale));
        out.push(pos.store(side) as f32 * store_scale);
    }
    let gain_scale = 2.0 * pit_scale;
    let mine = pos.nonempty_pits();
    for mv in 1..=m {
        out.push(if mine.contains(mv) {
            immediate_gain(pos, mv, rules) as f32 * gain_scale
        } else {
            0.0
        });
    }
    for mv in 1..=m {
        out.push(f32::from(
            mine.contains(mv) && pos.landing_offset(me, mv) == m,
        ));
    }
    for mv in 1..=m {
        out.push(if mine.contains(mv) {
            let mut after = *pos;
            after.play_unchecked(mv, rules);
            if after.is_game_over() {
                0.0
            } else {
                let after = after.with_side_to_move(opp);
                after
                    .nonempty_pits()
                    .into_iter()
                    .map(|reply| immediate_gain(&after, reply, rules))
                    .max()
                    .unwrap_or(0) as f32
                    * gain_scale
            }
        } else {
            0.0
        });
    }
    let theirs = pos.with_side_to_move(opp);
    let their_moves = theirs.nonempty_pits();
    for mv in 1..=m {
        out.push(if their_moves.contains(mv) {
            immediate_gain(&theirs, mv, rules) as f32 * gain_scale
        } else {
            0.0
        });
    }
}

/// One dense layer: `weight` is row-major (out rows, in columns).
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    pub rows: usize,
    pub cols: usize,
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
}

impl Layer {
    fn apply(&self, input: &[f32], out: &mut Vec<f32>, relu: bool) {
        out.clear();
        for (row, &b) in self.weight.chunks_exact(self.cols).zip(&self.bias) {
            let z = b + row.iter().zip(input).map(|(w, x)| w * x).sum::<f32>();
            out.push(if relu { z.max(0.0) } else { z });
        }
    }
}

/// A policy/value network and the board it was trained for.
#[derive(Clone, Debug, PartialEq)]
pub struct Net {
    pub pits: usize,
    pub seeds: u32,
    /// `hidden1`, `hidden2`, `policy`, `value`.
    pub layers: [Layer; 4],
    /// Free-form facts about the model (training command, time, evaluation), saved with it.
    pub info: BTreeMap<String, String>,
}

/// Scratch buffers for `Net::forward`, so that playing allocates nothing per move.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    pub input: Vec<f32>,
    h1: Vec<f32>,
    h2: Vec<f32>,
    pub logits: Vec<f32>,
    value: Vec<f32>,
}

/// A model that does not read, or whose layers do not fit together or the board.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ModelError(pub(crate) String);

impl From<String> for ModelError {
    fn from(reason: String) -> ModelError {
        ModelError(reason)
    }
}

impl Net {
    /// Checks that the layer shapes fit together and the board.
    pub(crate) fn check(&self) -> Result<(), ModelError> {
        let [h1, h2, p, v] = &self.layers;
        let shapes_ok = h1.cols == input_len(self.pits)
            && h2.cols == h1.rows
            && p.cols == h2.rows
            && v.cols == h2.rows
            && p.rows == self.pits
            && v.rows == 1
            && self
                .layers
                .iter()
                .all(|l| l.weight.len() == l.rows * l.cols && l.bias.len() == l.rows);
        if !shapes_ok {
            return Err(ModelError(format!(
                "layer shapes do not fit a {}-pit board: {}",
                self.pits,
                self.layers
                    .iter()
                    .zip(LAYER_NAMES)
                    .map(|(l, n)| format!("{n} {}x{}", l.rows, l.cols))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        if self
            .layers
            .iter()
            .any(|l| l.weight.iter().chain(&l.bias).any(|w| !w.is_finite()))
        {
            return Err(ModelError("the model holds NaN or infinite weights".into()));
        }
        Ok(())
    }

    /// Policy logits (into `scratch.logits`) and value of the position encoded in
    /// `scratch.input`.
    pub(crate) fn forward(&self, scratch: &mut Scratch) -> f32 {
        let [h1, h2, p, v] = &self.layers;
        h1.apply(&scratch.input, &mut scratch.h1, true);
        h2.apply(&scratch.h1, &mut scratch.h2, true);
        p.apply(&scratch.h2, &mut scratch.logits, false);
        v.apply(&scratch.h2, &mut scratch.value, false);
        scratch.value[0]
    }

    /// Encodes `pos` and runs the network on it; returns the value.
    pub(crate) fn evaluate(&self, pos: &Position, rules: Rules, scratch: &mut Scratch) -> f32 {
        encode(pos, rules, &mut scratch.input);
        self.forward(scratch)
    }

    /// The model as a safetensors file.
    pub fn to_safetensors(&self) -> Result<Vec<u8>, ModelError> {
        self.check()?;
        let mut views = Vec::new();
        let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = self
            .layers
            .iter()
            .zip(LAYER_NAMES)
            .flat_map(|(l, name)| {
                [
                    (format!("{name}.weight"), vec![l.rows, l.cols], &l.weight),
                    (format!("{name}.bias"), vec![l.rows], &l.bias),
                ]
            })
            .map(|(n, shape, values)| {
                let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                (n, shape, data)
            })
            .collect();
        for (name, shape, data) in &bytes {
            let view =
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), data)
                    .map_err(|e| e.to_string())?;
            views.push((name.clone(), view));
        }
        let mut meta: HashMap<String, String> = self
            .info
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        meta.insert("encoding".into(), ENCODING.into());
        meta.insert("pits".into(), self.pits.to_string());
        meta.insert("seeds".into(), self.seeds.to_string());
        safetensors::serialize(views, Some(meta)).map_err(|e| ModelError(e.to_string()))
    }

    /// Reads a model written by [`Net::to_safetensors`].
    pub fn from_safetensors(bytes: &[u8]) -> Result<Net, ModelError> {
        let (_, header) = safetensors::SafeTensors::read_metadata(bytes)
            .map_err(|e| format!("not a safetensors file: {e}"))?;
        let mut info: BTreeMap<String, String> = header
            .metadata()
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect();
        match info.remove("encoding") {
            Some(e) if e == ENCODING => {}
            other => {
                return Err(ModelError(format!(
                    "the model's input encoding is {:?}, this version reads {ENCODING:?}",
                    other.unwrap_or_else(|| "missing".into())
                )));
            }
        }
        let number = |info: &mut BTreeMap<String, String>, key: &str| {
            info.remove(key)
                .and_then(|v| v.parse::<u32>().ok())
                .ok_or_else(|| format!("the model's metadata has no whole number {key:?}"))
        };
        let pits = number(&mut info, "pits")? as usize;
        let seeds = number(&mut info, "seeds")?;
        let tensors = safetensors::SafeTensors::deserialize(bytes)
            .map_err(|e| format!("not a safetensors file: {e}"))?;
        let read = |name: &str, dims: usize| -> Result<(Vec<usize>, Vec<f32>), ModelError> {
            let t = tensors
                .tensor(name)
                .map_err(|_| format!("the model has no tensor {name:?}"))?;
            if t.dtype() != safetensors::Dtype::F32 || t.shape().len() != dims {
                return Err(ModelError(format!(
                    "tensor {name:?} should be f32 of rank {dims}, is {:?} {:?}",
                    t.dtype(),
                    t.shape()
                )));
            }
            let values = t
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            Ok((t.shape().to_vec(), values))
        };
        let mut layers = Vec::with_capacity(4);
        for name in LAYER_NAMES {
            let (shape, weight) = read(&format!("{name}.weight"), 2)?;
            let (_, bias) = read(&format!("{name}.bias"), 1)?;
            layers.push(Layer {
                rows: shape[0],
                cols: shape[1],
                weight,
                bias,
            });
        }
        let net = Net {
            pits,
            seeds,
            layers: layers.try_into().expect("four layers"),
            info,
        };
        net.check()?;
        Ok(net)
    }
}

fn cache() -> &'static Mutex<HashMap<String, Arc<Net>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Net>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The model at `path`, or the embedded Kalah(6,4) model for `None`. Loaded once per process:
/// tournaments build an agent for every game.
pub fn load_model(path: Option<&str>) -> Result<Arc<Net>, ModelError> {
    let key = path.unwrap_or("").to_string();
    if let Some(net) = cache().lock().map_err(|e| e.to_string())?.get(&key) {
        return Ok(Arc::clone(net));
    }
    let net = match path {
        None => Net::from_safetensors(DEFAULT_MODEL)
            .map_err(|e| format!("embedded model {DEFAULT_MODEL_PATH}: {e}"))?,
        Some(p) => {
            let bytes = super::files::read_capped(std::path::Path::new(p), MAX_MODEL_BYTES)
                .map_err(|e| format!("cannot read {p}: {e}"))?;
            Net::from_safetensors(&bytes).map_err(|e| format!("{p}: {e}"))?
        }
    };
    let net = Arc::new(net);
    cache()
        .lock()
        .map_err(|e| e.to_string())?
        .insert(key, Arc::clone(&net));
    Ok(net)
}

/// The `a3c` agent.
pub struct A3cAgent {
    pub net: Arc<Net>,
    pub rules: Rules,
    /// Sample the move from the policy (seeded) instead of taking the most likely one.
    pub sample: bool,
    pub ties: Ties,
    scratch: Scratch,
}

impl A3cAgent {
    pub(crate) fn new(net: Arc<Net>, rules: Rules, sample: bool, ties: Ties) -> A3cAgent {
        A3cAgent {
            net,
            rules,
            sample,
            ties,
            scratch: Scratch::default(),
        }
    }
}

/// A move drawn from the softmax of `logits` over the legal `moves` (bit set).
pub(crate) fn sample_move(logits: &[f32], moves: u16, rng: &mut GameRng) -> usize {
    let legal = || (0..logits.len()).filter(|&i| moves & (1 << i) != 0);
    let max = legal().map(|i| logits[i]).fold(f32::NEG_INFINITY, f32::max);
    let total: f64 = legal().map(|i| ((logits[i] - max) as f64).exp()).sum();
    let mut u = rng.random::<f64>() * total;
    let mut last = 0;
    for i in legal() {
        last = i;
        u -= ((logits[i] - max) as f64).exp();
        if u <= 0.0 {
            break;
        }
    }
    last + 1
}

impl Agent for A3cAgent {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        if pos.pits() != self.net.pits {
            // A model knows only its own board; rather than guess, play as greedy does.
            return Greedy {
                rules: self.rules,
                ties: self.ties,
            }
            .choose(pos, rng);
        }
        let value = self.net.evaluate(pos, self.rules, &mut self.scratch);
        if pos.swap_available() {
            // The value head estimates the result for the side to move, which the swap would
            // hand to the other player: swap when it sees North behind.
            return super::decide_swap(pos, value < 0.0, |pos| self.choose(pos, rng));
        }
        let moves = pos.legal_moves();
        let logits = &self.scratch.logits;
        let mv = if self.sample {
            sample_move(logits, moves.0, rng)
        } else {
            let best = moves
                .into_iter()
                .map(|mv| logits[mv - 1])
                .fold(f32::NEG_INFINITY, f32::max);
            let tied: Vec<usize> = moves
                .into_iter()
                .filter(|&mv| logits[mv - 1] == best)
                .collect();
            self.ties.pick(&tied, rng)
        };
        Decision {
            mv,
            nodes: 1,
            playouts: 0,
            value: Some(MoveValue::NetworkEstimate(value.clamp(-1.0, 1.0))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::rng_from_seed;

    /// The exposure inputs against playing the moves out: for each legal move, the largest
    /// store gain of one opponent sowing afterwards (replies that end the game are skipped,
    /// since the end-of-game sweep is not part of a sowing's gain).
    #[test]
    fn exposure_inputs_match_playing_the_replies() {
        let mut rng = rng_from_seed(11);
        let rules = Rules::Standard;
        let mut input = Vec::new();
        let mut checked = 0;
        for _ in 0..200 {
            let mut pos = Position::start(6, 4).unwrap();
            while !pos.is_game_over() {
                encode(&pos, rules, &mut input);
                assert_eq!(input.len(), input_len(6));
                let me = pos.side_to_move();
                let gain_scale = 2.0 / (2.0 * pos.total_seeds() as f32 / 12.0);
                for mv in 1..=6 {
                    let exposure = input[26 + mv - 1];
                    if !pos.is_legal(mv) {
                        assert_eq!(exposure, 0.0);
                        continue;
                    }
                    let mut after = pos;
                    after.play_unchecked(mv, rules);
                    if after.is_game_over() {
                        assert_eq!(exposure, 0.0);
                        continue;
                    }
                    let after = after.with_side_to_move(me.opponent());
                    let mut ends_game = false;
                    let worst = after
                        .legal_moves()
                        .into_iter()
                        .filter_map(|reply| {
                            let mut next = after;
                            let before = next.store(me.opponent());
                            let over = next.play_unchecked(reply, rules).game_over;
                            ends_game |= over;
                            (!over).then(|| next.store(me.opponent()) - before)
                        })
                        .max()
                        .unwrap_or(0) as f32
                        * gain_scale;
                    if ends_game {
                        // A reply that ends the game sweeps pits into the store as well, so
                        // only a lower bound can be read off playing it.
                        assert!(exposure >= worst - 1e-6);
                    } else {
                        assert!((exposure - worst).abs() < 1e-6, "{pos:?} move {mv}");
                        checked += 1;
                    }
                }
                let moves: Vec<usize> = pos.legal_moves().into_iter().collect();
                let mv = moves[rng.random_range(0..moves.len())];
                pos.play_unchecked(mv, rules);
            }
        }
        assert!(checked > 1000, "{checked} moves checked");
    }
}
