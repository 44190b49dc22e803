//! Learning runs: the other tuners (TD(lambda) and TD-Leaf(lambda) from self-play,
//! `crate::rl::td`; Texel-style fitting, `crate::rl::texel`) stepped checkpoint by
//! checkpoint as a GA run is stepped generation by generation, so that `learn`, the server's
//! workers, the store and the dashboard treat every tuner alike.
//!
//! A [`LearningRun`] makes one [`GenerationRecord`] per checkpoint: record 0 measures the
//! starting weights, each later one learns (TD: at least `checkpoint_games` self-play games;
//! Texel: one round of finding leaves and fitting) and measures the weights it reached. A
//! record holds the learner's one set of weights as its one individual, whose fitness is its
//! score against the benchmark panel, the panel's games, the champion (chosen as a GA run's
//! is: a later checkpoint takes over only when it wins a paired test on the same games), and
//! the learner's progress, from which [`LearningRun::resume`] carries on exactly as the
//! uninterrupted run would.
//!
//! A [`LearningConfig`] is written as the learner's own config object with the run's
//! settings beside it (`play_depth`, `checkpoint_games`, `benchmark`), and is told apart from
//! a GA config by its `method` field.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::agents::cost::{
    board_scale, game_side_ms, leaf_cost, search_side_ms, TD_GAME_OVERHEAD_MS,
};
use crate::agents::{Budget, FileAccess};
use crate::eval::Feature;
use crate::ga::benchmark::Benchmark;
use crate::ga::config::{
    check_agent, check_benchmark, describe_bytes, merge, record_bytes, BenchmarkConfig, MAX_DEPTH,
    PAIR_POINT_BYTES,
};
use crate::ga::loader::{parse_error, resolve_agent};
use crate::game::{check_written, Position, Rules, SettingBound};
use crate::rl::td::{TdConfig, TdLearner, TdMethod, MAX_TD_GAMES};
use crate::rl::texel::{TexelConfig, TexelFitter};
use crate::rl::{LearnConfigError, LearnerProgress};
use crate::tune::config::{ConfigForm, TunerKind};
use crate::tune::panel::{beats, BenchmarkRecord, Champion};
use crate::tune::TunerState;
use crate::tune::{agent_error, ConfigError, MAX_CORE_HOURS, MAX_RUN_STORAGE_BYTES};
use crate::tune::{FitnessStats, GenerationRecord, HallOfFame, Individual, StopReason, Timing};

inventory::submit! { TunerKind::of::<LearningConfig>(10) }

/// Bytes of a learner's progress in a checkpoint's record (TD's counts, Texel's losses), with
/// room to spare.
const LEARNER_PROGRESS_BYTES: u64 = 512;

/// Bytes of one panel agent's result in a checkpoint's record: half a GA generation's (which
/// keeps its leaders' and its champion's), from the stored checkpoints of the learning runs
/// of docs/run-costs.toml (2026-11-29: 2.2 times over with the GA's figure).
const LEARNER_PANEL_AGENT_BYTES: u64 = 768;

/// The tuners a learning config names in its `method` field.
pub(crate) const LEARNING_TUNERS: [&str; 3] = ["td", "td-leaf", "texel"];
/// Default search depth of a learnt player and of its panel games.
pub(crate) const DEFAULT_PLAY_DEPTH: u32 = 4;

/// A learning run's own numeric settings, beside its learner's (`TD_BOUNDS`, `TEXEL_BOUNDS`):
/// its check and the dashboard's form read this one table.
pub(crate) const LEARNING_BOUNDS: &[SettingBound] = &[
    SettingBound::whole(
        "play_depth",
        1.0,
        MAX_DEPTH as f64,
        "Search depth of the learnt player in its panel games.",
    ),
    SettingBound::whole(
        "checkpoint_games",
        1.0,
        MAX_TD_GAMES as f64,
        "Self-play games between two measures against the panel; empty: a sixteenth of the games.",
    )
    .optional()
    .up_to("games"),
];

/// The learner of a learning run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LearnerConfig {
    Td(TdConfig),
    Texel(TexelConfig),
}

impl LearnerConfig {
    /// The defaults of `tuner` (`td`, `td-leaf` or `texel`), from a TD preset if one is named.
    pub(crate) fn for_tuner(
        tuner: &str,
        preset: Option<&str>,
    ) -> Result<LearnerConfig, ConfigError> {
        let td = |method| -> Result<LearnerConfig, ConfigError> {
            let mut config = match preset {
                Some(name) => TdConfig::preset(name).map_err(learn_error)?,
                None => TdConfig::default(),
            };
            config.method = method;
            Ok(LearnerConfig::Td(config))
        };
        match tuner {
            "td" => td(TdMethod::Td),
            "td-leaf" => td(TdMethod::TdLeaf),
            "texel" if preset.is_some() => Err(ConfigError::invalid(
                "preset",
                "the presets are TD's (ahmed); texel has none",
            )),
            "texel" => Ok(LearnerConfig::Texel(TexelConfig::default())),
            other => Err(ConfigError::invalid(
                "tuner",
                format!(
                    "unknown tuner {other:?}; tuners: ga, {}",
                    LEARNING_TUNERS.join(", ")
                ),
            )),
        }
    }

    /// Reads a learner's config, choosing its type by the `method` field.
    pub(crate) fn from_value(value: Value) -> Result<LearnerConfig, ConfigError> {
        let method = value.get("method").and_then(Value::as_str).unwrap_or("");
        match method {
            "td" | "td-leaf" => parse(value).map(LearnerConfig::Td),
            "texel" => parse(value).map(LearnerConfig::Texel),
            other => Err(ConfigError::invalid(
                "method",
                format!(
                    "a learning config's method is one of {}, got {other:?}",
                    LEARNING_TUNERS.join(", ")
                ),
            )),
        }
    }

    /// `td`, `td-leaf` or `texel`.
    pub(crate) fn tuner(&self) -> &'static str {
        match self {
            LearnerConfig::Td(c) => c.method.name(),
            LearnerConfig::Texel(_) => "texel",
        }
    }

    /// What the dashboard calls the learner: its name, a colon, what it does.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            LearnerConfig::Td(c) => match c.method {
                TdMethod::Td => "TD(λ): learning from self-play",
                TdMethod::TdLeaf => "TD-Leaf(λ): learning from self-play at the search's leaves",
            },
            LearnerConfig::Texel(_) => "Texel: fitting to game results",
        }
    }

    pub(crate) fn features(&self) -> &[Feature] {
        match self {
            LearnerConfig::Td(c) => &c.features,
            LearnerConfig::Texel(c) => &c.features,
        }
    }

    pub fn initial(&self) -> &[f64] {
        match self {
            LearnerConfig::Td(c) => &c.initial,
            LearnerConfig::Texel(c) => &c.initial,
        }
    }

    pub(crate) fn rules(&self) -> Rules {
        match self {
            LearnerConfig::Td(c) => c.rules,
            LearnerConfig::Texel(c) => c.rules,
        }
    }

    /// Pits per side and seeds per pit.
    pub(crate) fn board(&self) -> (usize, u32) {
        match self {
            LearnerConfig::Td(c) => (c.pits, c.seeds),
            LearnerConfig::Texel(c) => (c.pits, c.seeds),
        }
    }

    /// Whether games are played under the pie rule.
    pub fn pie(&self) -> bool {
        match self {
            LearnerConfig::Td(c) => c.pie,
            LearnerConfig::Texel(c) => c.pie,
        }
    }

    pub(crate) fn seed(&self) -> u64 {
        match self {
            LearnerConfig::Td(c) => c.seed,
            LearnerConfig::Texel(c) => c.seed,
        }
    }

    /// Checks every setting and returns the start position.
    pub(crate) fn validate(&self) -> Result<Position, ConfigError> {
        match self {
            LearnerConfig::Td(c) => c.validate(),
            LearnerConfig::Texel(c) => c.validate(),
        }
        .map_err(learn_error)
    }
}

fn learn_error(e: LearnConfigError) -> ConfigError {
    ConfigError::invalid(e.field, e.reason)
}

/// A learning run's config: the learner's, and how the run measures and hands out its
/// weights. See the module docs for how it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct LearningConfig {
    pub learner: LearnerConfig,
    /// Search depth of the learnt player and of its games against the panel.
    pub play_depth: u32,
    /// TD: self-play games between checkpoints [default: a sixteenth of the games]. Texel
    /// measures after every round and takes none.
    pub checkpoint_games: Option<u32>,
    /// The panel the weights are measured against at every checkpoint (`every` and `leaders`
    /// are 1: every checkpoint is measured, and a learner has one set of weights).
    pub benchmark: BenchmarkConfig,
}

impl LearningConfig {
    /// `learner` with the run's defaults: depth 4 and the GA's default panel.
    pub(crate) fn new(learner: LearnerConfig) -> LearningConfig {
        LearningConfig {
            learner,
            play_depth: DEFAULT_PLAY_DEPTH,
            checkpoint_games: None,
            benchmark: BenchmarkConfig::default(),
        }
    }

    /// The config as one JSON object (see the module docs).
    pub(crate) fn to_value(&self) -> Value {
        // Plain data with string keys always serialises.
        let mut object = match serde_json::to_value(&self.learner) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        object.insert("play_depth".into(), self.play_depth.into());
        if let Some(n) = self.checkpoint_games {
            object.insert("checkpoint_games".into(), n.into());
        }
        object.insert(
            "benchmark".into(),
            serde_json::to_value(&self.benchmark).unwrap_or(Value::Null),
        );
        Value::Object(object)
    }

    /// Reads a config written by [`LearningConfig::to_value`]; the run's fields may be left
    /// out (an export document of an earlier version has only the learner's). Not validated.
    pub(crate) fn from_value(value: Value) -> Result<LearningConfig, ConfigError> {
        let Value::Object(mut object) = value else {
            return Err(ConfigError::Parse {
                field: String::new(),
                reason: "a learning config must be an object".into(),
            });
        };
        let mut config = LearningConfig::new(LearnerConfig::Td(TdConfig::default()));
        if let Some(v) = object.remove("play_depth") {
            config.play_depth = parse_field("play_depth", v)?;
        }
        if let Some(v) = object.remove("checkpoint_games") {
            config.checkpoint_games = parse_field("checkpoint_games", v)?;
        }
        if let Some(v) = object.remove("benchmark") {
            // Nested fields merge over the defaults, as a GA config's do.
            let mut base = serde_json::to_value(&config.benchmark).unwrap_or(Value::Null);
            merge(&mut base, &v);
            config.benchmark = parse(base).map_err(|e| prefixed("benchmark", e))?;
        }
        config.learner = LearnerConfig::from_value(Value::Object(object))?;
        Ok(config)
    }

    /// This config with the fields of `patch` (a partial config) laid over it; `benchmark`
    /// merges field by field, agents are replaced. Not validated.
    pub(crate) fn with_overrides(&self, patch: &Value) -> Result<LearningConfig, ConfigError> {
        let mut merged = self.to_value();
        merge(&mut merged, patch);
        // An agent spec is replaced whole: fields of the old agent do not carry over.
        if let (Some(source), Value::Object(map)) = (patch.get("source"), &mut merged) {
            map.insert("source".into(), source.clone());
        }
        LearningConfig::from_value(merged)
    }

    /// `td`, `td-leaf` or `texel`.
    pub fn tuner(&self) -> &'static str {
        self.learner.tuner()
    }

    /// TD's self-play games between checkpoints.
    pub(crate) fn checkpoint_every(&self) -> u32 {
        match &self.learner {
            LearnerConfig::Td(c) => self.checkpoint_games.unwrap_or((c.games / 16).max(1)),
            LearnerConfig::Texel(_) => 1,
        }
    }

    /// How many records a whole run writes: the starting weights' and one per checkpoint.
    pub fn checkpoints(&self) -> u32 {
        match &self.learner {
            LearnerConfig::Td(c) => {
                let batch = c.batch.max(1);
                // A checkpoint comes after the batch that reaches `every` games since the last.
                let per_step = self.checkpoint_every().div_ceil(batch) * batch;
                1 + c.games.div_ceil(per_step.max(1))
            }
            LearnerConfig::Texel(c) => 1 + c.rounds,
        }
    }

    /// An upper estimate of the bytes one checkpoint's stored row takes: a generation row of
    /// one individual with the panel's results, and besides the learner's progress and the
    /// champion (its weights, and its panel results with a point a pair, as the measure's).
    /// Checked against real records in `tests/learning.rs`.
    pub fn estimated_record_bytes(&self) -> u64 {
        let features = self.learner.features().len() as u64;
        let panel = self.benchmark.panel.len() as u64;
        let pair_points = 2 * panel * u64::from(self.benchmark.pairs) * PAIR_POINT_BYTES;
        record_bytes(1, features as usize, 0)
            + panel * LEARNER_PANEL_AGENT_BYTES
            + features * PAIR_POINT_BYTES * 4
            + pair_points
            + LEARNER_PROGRESS_BYTES
    }

    /// An upper estimate of the bytes a whole run stores: every checkpoint's row.
    pub fn estimated_storage_bytes(&self) -> u64 {
        u64::from(self.checkpoints()) * self.estimated_record_bytes()
    }

    /// A rough estimate of a run's cost in core-hours, from the same cost model as
    /// [`crate::ga::GaConfig::estimated_core_hours`] (a game of two depth-d searches costs two
    /// `search_side_ms`).
    pub fn estimated_core_hours(&self) -> f64 {
        let (pits, seeds) = self.learner.board();
        let leaf = leaf_cost(self.learner.features(), pits);
        let ms_per_game = |depth: u32| 2.0 * search_side_ms(depth, pits, seeds, leaf);
        let learning_ms = match &self.learner {
            // TD-Leaf walks each principal variation again; count it as a second search.
            LearnerConfig::Td(c) => {
                let searches = if c.method == TdMethod::TdLeaf {
                    2.0
                } else {
                    1.0
                };
                c.games as f64
                    * (ms_per_game(c.depth) * searches
                        + TD_GAME_OVERHEAD_MS * board_scale(pits, seeds))
            }
            // The source's self-play games at its kind's cost, then one search a position and
            // round (a game has about 40 positions), and the exact labels: about a quarter of
            // the positions have at most `exact_seeds` seeds, and their solves take 0.06 ms
            // on average at 14, doubling with every two seeds more (`learn --method texel
            // --threads 1` at `--exact-seeds` 0, 10, 14 and 18 on Kalah(6,4), 2026-11-26:
            // 0.04, 0.23 and 0.92 s of processor time over 16,000 positions' labels).
            LearnerConfig::Texel(c) => {
                let positions = c.games as f64 * c.positions_per_game as f64;
                let solve_ms = if c.exact_seeds == 0 {
                    0.0
                } else {
                    0.06 * 2f64.powf((c.exact_seeds as f64 - 14.0) / 2.0)
                };
                c.games as f64 * 2.0 * game_side_ms(&c.source, pits, seeds)
                    + positions * c.rounds as f64 * ms_per_game(c.depth) / 40.0
                    + positions * 0.25 * solve_ms
            }
        };
        // Each panel game: the learnt weights' side and the panel agent's, as measured for
        // its kind (a panel of `mcts:1000000` is counted at its cost).
        let per_agent = self.benchmark.leaders as f64 * 2.0 * self.benchmark.pairs as f64;
        let measure_ms: f64 = self
            .benchmark
            .panel
            .iter()
            .map(|a| {
                per_agent
                    * (search_side_ms(self.play_depth, pits, seeds, leaf)
                        + game_side_ms(a, pits, seeds))
            })
            .sum();
        let panel_ms = self.checkpoints() as f64 * measure_ms;
        (learning_ms + panel_ms) / 3_600_000.0
    }

    /// Checks every setting and returns the start position.
    pub(crate) fn validate(&self) -> Result<Position, ConfigError> {
        let start = self.learner.validate()?;
        if let LearnerConfig::Texel(c) = &self.learner {
            check_agent("source", &c.source)?;
        }
        if let (LearnerConfig::Texel(_), Some(_)) = (&self.learner, self.checkpoint_games) {
            return Err(ConfigError::invalid(
                "checkpoint_games",
                "is TD's: texel measures after every round",
            ));
        }
        let games = match &self.learner {
            LearnerConfig::Td(c) => Some(f64::from(c.games)),
            LearnerConfig::Texel(_) => None,
        };
        let cap = |key: &str| games.filter(|_| key == "checkpoint_games");
        check_written(&self.to_value(), LEARNING_BOUNDS, cap, |_| false)
            .map_err(|e| ConfigError::invalid(e.key, e.why.to_string()))?;
        let b = &self.benchmark;
        if b.panel.is_empty() {
            return Err(ConfigError::invalid(
                "benchmark.panel",
                "a learning run measures its weights against the panel and chooses its champion there: give at least one agent",
            ));
        }
        if b.every != 1 {
            return Err(ConfigError::invalid(
                "benchmark.every",
                "a learning run measures every checkpoint: leave it at 1 (checkpoint_games spaces TD's checkpoints)",
            ));
        }
        if b.leaders != 1 {
            return Err(ConfigError::invalid(
                "benchmark.leaders",
                "a learner has one set of weights to measure: leave it at 1",
            ));
        }
        check_benchmark(b, 1)?;
        let bytes = self.estimated_storage_bytes();
        if bytes > MAX_RUN_STORAGE_BYTES {
            let field = match self.learner {
                LearnerConfig::Td(_) => "checkpoint_games",
                LearnerConfig::Texel(_) => "rounds",
            };
            return Err(ConfigError::invalid(
                field,
                format!(
                    "this run would store about {} of checkpoint records ({} each, {} checkpoints); at most {} are allowed: measure less often (checkpoint_games), or fewer games or rounds",
                    describe_bytes(bytes),
                    describe_bytes(self.estimated_record_bytes()),
                    self.checkpoints(),
                    describe_bytes(MAX_RUN_STORAGE_BYTES),
                ),
            ));
        }
        let hours = self.estimated_core_hours();
        if hours > MAX_CORE_HOURS {
            let field = match self.learner {
                LearnerConfig::Td(_) => "games",
                LearnerConfig::Texel(_) => "rounds",
            };
            return Err(ConfigError::invalid(
                field,
                format!(
                    "this run would take about {} core-hours by a rough estimate; at most {MAX_CORE_HOURS:.0} are allowed: lower games, rounds, exact_seeds, depth, play_depth or benchmark.pairs",
                    crate::game::grouped(hours.round() as u64)
                ),
            ));
        }
        Ok(start)
    }

    /// This config with its agents' model names replaced by the files `files` resolves them
    /// to: what a server runs, while it stores and shows the names.
    pub(crate) fn locate_agents(&self, files: &FileAccess) -> Result<LearningConfig, ConfigError> {
        let mut config = self.clone();
        for (i, spec) in config.benchmark.panel.iter_mut().enumerate() {
            *spec = spec
                .locate(files)
                .map_err(|e| agent_error(&format!("benchmark.panel[{i}]"), &e))?;
        }
        if let LearnerConfig::Texel(c) = &mut config.learner {
            c.source = c
                .source
                .locate(files)
                .map_err(|e| agent_error("source", &e))?;
        }
        Ok(config)
    }
}

impl Serialize for LearningConfig {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for LearningConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        LearningConfig::from_value(value).map_err(serde::de::Error::custom)
    }
}

/// Reads `value` as a `T`, naming the path of the field at fault.
fn parse<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let mut field = e.path().to_string();
        if field == "." {
            field.clear();
        }
        ConfigError::Parse {
            field,
            reason: e.into_inner().to_string(),
        }
    })
}

fn parse_field<T: serde::de::DeserializeOwned>(name: &str, value: Value) -> Result<T, ConfigError> {
    parse(value).map_err(|e| prefixed(name, e))
}

/// `e` with its field under `prefix`.
fn prefixed(prefix: &str, e: ConfigError) -> ConfigError {
    match e {
        ConfigError::Invalid { field, reason } | ConfigError::Parse { field, reason } => {
            ConfigError::Parse {
                field: if field.is_empty() {
                    prefix.to_string()
                } else {
                    format!("{prefix}.{field}")
                },
                reason,
            }
        }
        other => other,
    }
}

/// The champion a learning run's record names, as the store and exports keep it.
pub(crate) fn champion_of(record: &GenerationRecord) -> HallOfFame {
    match &record.champion {
        Some(c) => HallOfFame {
            weights: c.weights.clone(),
            fitness: c.fitness,
            generation: c.generation,
        },
        None => record.hall_of_fame.clone(),
    }
}

enum Learner {
    Td(Box<TdLearner>),
    Texel(Box<TexelFitter>),
}

impl Learner {
    fn weights(&self) -> &[f64] {
        match self {
            Learner::Td(l) => l.weights(),
            Learner::Texel(f) => f.weights(),
        }
    }

    fn is_done(&self) -> bool {
        match self {
            Learner::Td(l) => l.is_done(),
            Learner::Texel(f) => f.is_done(),
        }
    }

    fn progress(&self) -> LearnerProgress {
        match self {
            Learner::Td(l) => LearnerProgress::Td(l.progress().clone()),
            Learner::Texel(f) => LearnerProgress::Texel(f.progress().clone()),
        }
    }
}

/// A learning run, advanced one checkpoint at a time; see the module docs.
pub struct LearningRun {
    config: LearningConfig,
    learner: Learner,
    benchmark: Benchmark,
    /// The record the next step makes.
    generation: u32,
    champion: Option<Champion>,
    finished: bool,
}

impl LearningRun {
    /// Validates `config` and prepares the learner (Texel plays and labels its positions
    /// here, on the current rayon pool).
    pub fn new(config: LearningConfig) -> Result<LearningRun, ConfigError> {
        LearningRun::new_within(config, &Budget::unlimited())
    }

    /// [`LearningRun::new`] whose preparation stops once `cancel` is set (then the run means
    /// nothing and is to be dropped), and whose steps stop under it too.
    pub(crate) fn new_within(
        config: LearningConfig,
        cancel: &Budget,
    ) -> Result<LearningRun, ConfigError> {
        let start = config.validate()?;
        let learner = match &config.learner {
            LearnerConfig::Td(c) => {
                Learner::Td(Box::new(TdLearner::new(c.clone()).map_err(learn_error)?))
            }
            LearnerConfig::Texel(c) => Learner::Texel(Box::new(
                TexelFitter::new_within(c.clone(), cancel).map_err(learn_error)?,
            )),
        };
        let benchmark = Benchmark::new(
            &config.benchmark,
            config.learner.features(),
            config.play_depth,
            config.learner.rules(),
            start,
            config.learner.seed(),
        )?;
        let mut run = LearningRun {
            config,
            learner,
            benchmark,
            generation: 0,
            champion: None,
            finished: false,
        };
        run.set_cancel(cancel.clone());
        Ok(run)
    }

    /// Carries on after `last`, the record of the last checkpoint written: every later record
    /// is the one the uninterrupted run makes (wall times aside).
    pub fn resume(
        config: LearningConfig,
        last: &GenerationRecord,
    ) -> Result<LearningRun, ConfigError> {
        LearningRun::resume_within(config, last, &Budget::unlimited())
    }

    /// [`LearningRun::resume`] under `cancel`, as [`LearningRun::new_within`].
    pub(crate) fn resume_within(
        config: LearningConfig,
        last: &GenerationRecord,
        cancel: &Budget,
    ) -> Result<LearningRun, ConfigError> {
        let bad = |why: &str| ConfigError::Resume(why.to_string());
        let weights = match last.individuals.as_slice() {
            [one] if one.weights.len() == config.learner.features().len() => one.weights.clone(),
            _ => {
                return Err(bad(
                    "a learning run's record holds one set of weights, one per feature",
                ))
            }
        };
        let mut run = LearningRun::new_within(config, cancel)?;
        run.learner = match (run.learner, progress_of(last)) {
            (Learner::Td(l), Some(LearnerProgress::Td(p))) => Learner::Td(Box::new(
                TdLearner::resume(l.config().clone(), weights, p).map_err(learn_error)?,
            )),
            (Learner::Texel(mut f), Some(LearnerProgress::Texel(p))) => {
                f.resume(weights, p).map_err(learn_error)?;
                Learner::Texel(f)
            }
            _ => return Err(bad("the record is not of this config's learner")),
        };
        run.set_cancel(cancel.clone());
        run.champion = last.champion.clone();
        run.generation = last.generation + 1;
        run.finished = last.stop.is_some();
        Ok(run)
    }

    pub fn config(&self) -> &LearningConfig {
        &self.config
    }

    pub fn weights(&self) -> &[f64] {
        self.learner.weights()
    }

    pub fn progress(&self) -> LearnerProgress {
        self.learner.progress()
    }

    pub fn champion(&self) -> Option<&Champion> {
        self.champion.as_ref()
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Why the run finished, once it has.
    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        self.finished.then_some(StopReason::Generations)
    }

    /// Games (TD) or rounds (Texel) the whole run learns: what a progress bar counts to.
    pub(crate) fn length(&self) -> u64 {
        match &self.learner {
            Learner::Td(l) => l.config().games as u64,
            Learner::Texel(f) => f.config().rounds as u64,
        }
    }

    /// Makes the panel games and the learner's own games and searches stop once `cancel` is
    /// set, inside the game under way. As with the population tuners' runs, a
    /// cancelled step's record is meaningless and the run is to be dropped.
    pub(crate) fn set_cancel(&mut self, cancel: Budget) {
        match &mut self.learner {
            Learner::Td(l) => l.set_cancel(cancel.clone()),
            Learner::Texel(f) => f.set_cancel(cancel.clone()),
        }
        self.benchmark.set_cancel(cancel);
    }

    /// The next checkpoint's record, asking `go_on` after each TD batch (with the games
    /// learnt so far) whether to carry on to the checkpoint or measure at once: the way to
    /// end a run early (Ctrl-C, a budget) with its last weights measured. A record cut short
    /// this way is not one the uninterrupted run makes.
    pub(crate) fn step_while(
        &mut self,
        mut go_on: impl FnMut(u64) -> bool,
    ) -> Option<GenerationRecord> {
        if self.finished {
            return None;
        }
        let started = Instant::now();
        let games_played = if self.generation == 0 {
            match &self.learner {
                Learner::Texel(f) => f.config().games as u64,
                Learner::Td(_) => 0,
            }
        } else {
            self.learn(&mut go_on)
        };
        let result = self
            .benchmark
            .measure(&[(0, self.learner.weights().to_vec())])
            .remove(0);
        let score = result.overall.score;
        let new_champion = self
            .champion
            .as_ref()
            .is_none_or(|c| beats(&result, &c.panel));
        if new_champion {
            self.champion = Some(Champion {
                weights: result.weights.clone(),
                generation: self.generation,
                fitness: score,
                panel: result.clone(),
            });
        }
        let champion = self.champion.clone().expect("set on the first checkpoint");
        self.finished = self.learner.is_done();
        let record = GenerationRecord {
            generation: self.generation,
            individuals: vec![Individual {
                weights: self.learner.weights().to_vec(),
                fitness: score,
                raced_games: None,
            }],
            fitness: FitnessStats::of(&[score]),
            best_index: 0,
            diversity: 0.0,
            hall_of_fame: HallOfFame {
                weights: champion.weights.clone(),
                fitness: champion.fitness,
                generation: champion.generation,
            },
            games_played,
            stop: self.finished.then_some(StopReason::Generations),
            benchmark: Some(BenchmarkRecord {
                panel: self
                    .benchmark
                    .config()
                    .panel
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                leaders: vec![result],
                new_champion,
            }),
            champion: Some(champion),
            learner: Some(
                TunerState::new(&self.learner.progress())
                    .expect("a learner's progress is plain numbers, which always serialise"),
            ),
            breeder: None,
            timing: Timing {
                wall_ms: started.elapsed().as_millis() as u64,
            },
        };
        self.generation += 1;
        Some(record)
    }

    /// Learns up to the next checkpoint; returns the self-play games played (TD) or 0.
    fn learn(&mut self, go_on: &mut impl FnMut(u64) -> bool) -> u64 {
        let every = self.config.checkpoint_every() as u64;
        match &mut self.learner {
            Learner::Td(l) => {
                let mut played = 0;
                loop {
                    played += l.step() as u64;
                    if l.is_done() || played >= every || !go_on(l.progress().games) {
                        return played;
                    }
                }
            }
            Learner::Texel(f) => {
                f.step();
                go_on(f.progress().rounds as u64);
                0
            }
        }
    }
}

/// A learner's self-play learns from each game before the next, so its games are played
/// inside [`crate::tune::Tuner::ask`] and it asks for none.
impl crate::tune::Tuner for LearningRun {
    fn ask(&mut self, control: &crate::tune::StepControl) -> crate::tune::Ask {
        self.set_cancel(control.cancel().clone());
        match self.step_while(|position| control.go_on(position)) {
            Some(record) => crate::tune::Ask::Record(Box::new(record)),
            None => crate::tune::Ask::Finished,
        }
    }

    fn tell(&mut self, points: Vec<f64>) {
        debug_assert!(points.is_empty(), "a learner asks for no games");
    }

    fn play_here(&mut self, _list: &crate::tune::JobList) -> Vec<f64> {
        Vec::new()
    }

    fn stop_reason(&self) -> Option<StopReason> {
        LearningRun::stop_reason(self)
    }

    fn length(&self) -> u64 {
        LearningRun::length(self)
    }
}

/// A learner's progress as its checkpoint `record` holds it; `None` for a record of another
/// tuner.
pub(crate) fn progress_of(record: &GenerationRecord) -> Option<LearnerProgress> {
    record.learner.as_ref().and_then(|state| state.read().ok())
}

impl crate::tune::TunerSpec for LearningConfig {
    /// Self-play games learnt from (TD) or rounds fitted (Texel).
    fn position(&self, record: &GenerationRecord) -> u64 {
        progress_of(record).map_or(record.generation as u64 + 1, |p| p.position())
    }

    fn tuner(&self) -> &'static str {
        self.learner.tuner()
    }

    fn label(&self) -> &'static str {
        self.learner.label()
    }

    fn seed(&self) -> u64 {
        self.learner.seed()
    }

    fn records_total(&self) -> u32 {
        self.checkpoints()
    }

    fn rules(&self) -> Rules {
        self.learner.rules()
    }

    fn pie(&self) -> bool {
        self.learner.pie()
    }

    fn board(&self) -> crate::tune::BoardConfig {
        let (pits, seeds) = self.learner.board();
        crate::tune::BoardConfig { pits, seeds }
    }

    fn features(&self) -> Result<Vec<Feature>, ConfigError> {
        Ok(self.learner.features().to_vec())
    }

    fn play_depth(&self) -> u32 {
        self.play_depth
    }

    fn validate(&self) -> Result<(), ConfigError> {
        LearningConfig::validate(self).map(|_| ())
    }

    fn locate_agents(&mut self, files: &FileAccess) -> Result<(), ConfigError> {
        *self = LearningConfig::locate_agents(self, files)?;
        Ok(())
    }

    fn estimated_core_hours(&self) -> f64 {
        LearningConfig::estimated_core_hours(self)
    }

    fn estimated_storage_bytes(&self) -> u64 {
        LearningConfig::estimated_storage_bytes(self)
    }

    fn open(
        &self,
        last: Option<&GenerationRecord>,
        cancel: &Budget,
    ) -> Result<Box<dyn crate::tune::Tuner>, ConfigError> {
        Ok(match last {
            None => Box::new(LearningRun::new_within(self.clone(), cancel)?),
            Some(record) => Box::new(LearningRun::resume_within(self.clone(), record, cancel)?),
        })
    }

    /// The best measured on the panel: a learner's checkpoints are all measured.
    fn champion(&self, last: &GenerationRecord) -> HallOfFame {
        champion_of(last)
    }
}

impl ConfigForm for LearningConfig {
    const NAMES: &'static [&'static str] = &LEARNING_TUNERS;
    const BREEDS_POPULATION: bool = false;
    const PRESETS: &'static [&'static str] = crate::rl::td::PRESETS;

    fn load(
        tuner: &str,
        preset: Option<&str>,
        layers: &[&serde_json::Value],
        files: &FileAccess,
    ) -> Result<Self, ConfigError> {
        load_learning(tuner, preset, layers, files)
    }

    fn claims(value: &serde_json::Value) -> bool {
        value.get("method").is_some()
    }

    fn read(value: serde_json::Value) -> Result<Self, ConfigError> {
        LearningConfig::from_value(value)
    }
}

/// Assembles and validates a learning run's config: the tuner's defaults (TD's from a preset
/// if one is named), then each layer, a partial [`LearningConfig`] whose `benchmark` merges
/// field by field. The agents the layers name (`benchmark.panel`, texel's `source`) are
/// resolved under `files` first, as [`crate::ga::loader::load`] does.
pub fn load_learning(
    tuner: &str,
    preset: Option<&str>,
    layers: &[&Value],
    files: &FileAccess,
) -> Result<LearningConfig, ConfigError> {
    if !LEARNING_TUNERS.contains(&tuner) {
        return Err(ConfigError::invalid(
            "tuner",
            format!(
                "unknown tuner {tuner:?}; tuners: ga, {}",
                LEARNING_TUNERS.join(", ")
            ),
        ));
    }
    let mut config = LearningConfig::new(LearnerConfig::for_tuner(tuner, preset)?);
    for layer in layers {
        let Value::Object(map) = layer else {
            return Err(parse_error("a learning config must be an object".into()));
        };
        let mut patch = map.clone();
        if patch.contains_key("preset") {
            return Err(ConfigError::invalid(
                "preset",
                "give the preset beside the tuner, not inside the config",
            ));
        }
        match patch.remove("tuner") {
            None => {}
            Some(Value::String(t)) if t == tuner => {}
            Some(other) => {
                return Err(ConfigError::invalid(
                    "tuner",
                    format!("the tuner is {tuner:?}; got {other}"),
                ))
            }
        }
        match patch.get("method") {
            None => {}
            Some(Value::String(m)) if m == tuner => {}
            Some(other) => {
                return Err(ConfigError::invalid(
                    "method",
                    format!("the tuner is {tuner:?}, so the method is too; got {other}"),
                ))
            }
        }
        if let Some(Value::Array(items)) =
            patch.get_mut("benchmark").and_then(|b| b.get_mut("panel"))
        {
            for (i, item) in items.iter_mut().enumerate() {
                *item = resolve_agent(item, &format!("benchmark.panel[{i}]"), files)?;
            }
        }
        if let Some(item) = patch.get_mut("source") {
            *item = resolve_agent(item, "source", files)?;
        }
        config = config.with_overrides(&Value::Object(patch))?;
    }
    config.validate()?;
    Ok(config)
}
