//! Agent specs: the one description of an agent used by the CLI, the API, tournaments and the
//! GA. JSON (`{"kind":"heuristic","features":"hunter10","weights":"published","depth":4}`) and
//! short strings (`heuristic:hunter10:published:4`) describe the same thing.
//!
//! Short strings, one per kind:
//!
//! | string | meaning |
//! |---|---|
//! | `random` | uniform over legal moves |
//! | `greedy` | most seeds into the store this turn |
//! | `minimax[:D]` | alpha-beta, store difference, D turns (default 4) |
//! | `heuristic[:FEATURES[:WEIGHTS]][:D]` | FEATURES a set (`hunter10`) or `a+b+c`; WEIGHTS a preset (`published`) or numbers joined by `,` or `/` |
//! | `pekar` | Pekar et al.'s rule list |
//! | `pekar-minimax[:D]` | Pekar et al.'s modified minimax with cost function (4) |
//! | `export:PATH` | the player of an export document written by `evolve` or the server (read under the caller's [`FileAccess`]) |
//! | `mcts[:ITERATIONS[:C[:EPSILON]]]` | UCT with epsilon-greedy playouts (defaults 4000, sqrt(2)/2, 0.1) |
//! | `a3c[:PATH]` | the actor-critic network of a model file, read under the caller's [`FileAccess`] (default: the embedded Kalah(6,4) model) |
//! | `perfect[:S]` | exact play with at most S seeds in the pits (default 22, at most 32); a store-difference search to depth 8 above that |

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::a3c::{load_model, A3cAgent};
use super::files::{read_capped, FileAccess, MAX_EXPORT_BYTES};
use super::limits::{Profile, MAX_MCTS_C};
use super::mcts::{self, Mcts};
use super::{
    Agent, EndgameTable, Greedy, Pekar, PekarMinimax, Perfect, RandomAgent, SearchAgent, Ties,
};
use crate::eval::{feature_set, parse_features, Feature, StoreDiff, WeightedEval, FEATURE_SETS};
use crate::game::{excerpt, Rules, UserError};
use crate::search::Depth;

/// A spec that cannot be parsed or built, with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid agent spec {spec:?}: {field}: {reason}")]
pub struct SpecError {
    pub spec: String,
    pub field: String,
    pub reason: String,
}

inventory::submit! { crate::game::UserErrorKind::of::<SpecError>() }

impl UserError for SpecError {
    /// `json` names the document as a whole, not a field of it.
    fn field(&self) -> Cow<'_, str> {
        match self.field.as_str() {
            "json" => Cow::Borrowed(""),
            field => Cow::Borrowed(field),
        }
    }

    /// The spec quoted before the reason, unless there is none to quote.
    fn reason(&self) -> Cow<'_, str> {
        if self.spec.trim().is_empty() {
            return Cow::Borrowed(&self.reason);
        }
        Cow::Owned(format!("{}: {}", self.spec, self.reason))
    }
}

fn err(spec: &str, field: &str, reason: impl Into<String>) -> SpecError {
    SpecError {
        // A spec can be a whole JSON document; the message quotes only its start.
        spec: excerpt(spec).into_owned(),
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// Features of a heuristic: a named set or an explicit list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum FeatureChoice {
    Set(String),
    List(Vec<Feature>),
}

/// Weights of a heuristic: a preset name of its feature set or explicit numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum WeightChoice {
    Preset(String),
    Values(Vec<f64>),
}

pub(super) fn default_depth() -> Depth {
    Depth::Fixed(4)
}
fn default_features() -> FeatureChoice {
    FeatureChoice::Set("hunter10".into())
}
fn default_weights() -> WeightChoice {
    WeightChoice::Preset("published".into())
}
pub(super) fn default_max_seeds() -> u32 {
    22
}
pub(super) fn default_fallback_depth() -> u32 {
    8
}
fn default_iterations() -> u32 {
    mcts::DEFAULT_ITERATIONS
}
fn default_c() -> f64 {
    mcts::DEFAULT_C
}
fn default_epsilon() -> f64 {
    mcts::DEFAULT_EPSILON
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Describes an agent; [`AgentSpec::build`] makes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum AgentSpec {
    Random,
    Greedy {
        #[serde(default)]
        ties: Ties,
    },
    Minimax {
        #[serde(default = "default_depth")]
        depth: Depth,
        /// Iterative deepening within this many milliseconds per move, up to `depth`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        time_ms: Option<u64>,
        /// Iterative deepening up to `depth` that stops once a move's search has visited
        /// this many positions: equal cost that reproduces, unlike `time_ms`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nodes: Option<u64>,
        #[serde(default)]
        ties: Ties,
        /// Read exact values from the endgame database (`kalah-tuner egdb build`) where it
        /// covers a position: endgames are played perfectly.
        #[serde(default, skip_serializing_if = "is_false")]
        egdb: bool,
    },
    Heuristic {
        #[serde(default = "default_features")]
        features: FeatureChoice,
        #[serde(default = "default_weights")]
        weights: WeightChoice,
        #[serde(default = "default_depth")]
        depth: Depth,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        time_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nodes: Option<u64>,
        #[serde(default)]
        ties: Ties,
        /// Read exact values from the endgame database (`kalah-tuner egdb build`) where it
        /// covers a position: endgames are played perfectly.
        #[serde(default, skip_serializing_if = "is_false")]
        egdb: bool,
    },
    Pekar {
        #[serde(default)]
        ties: Ties,
    },
    PekarMinimax {
        #[serde(default = "default_depth")]
        depth: Depth,
        #[serde(default)]
        ties: Ties,
    },
    Perfect {
        /// Solve exactly when at most this many seeds are in the pits.
        #[serde(default = "default_max_seeds")]
        max_seeds: u32,
        /// Depth of the store-difference search used where no exact answer is found.
        #[serde(default = "default_fallback_depth")]
        fallback_depth: u32,
        /// Above `max_seeds`, try an exact solve of at most this many positions per move
        /// before falling back to the search (0: never).
        #[serde(default, skip_serializing_if = "is_zero")]
        solve_nodes: u64,
        #[serde(default)]
        ties: Ties,
        /// Read exact values from the endgame database (`kalah-tuner egdb build`) where it
        /// covers a position: endgames are played perfectly.
        #[serde(default, skip_serializing_if = "is_false")]
        egdb: bool,
    },
    /// Monte Carlo tree search (UCT), Hunter 5.5.
    Mcts {
        #[serde(default = "default_iterations")]
        iterations: u32,
        /// Exploration constant of UCT.
        #[serde(default = "default_c")]
        c: f64,
        /// Chance of a random move at each playout step (otherwise the greedy move).
        #[serde(default = "default_epsilon")]
        epsilon: f64,
        /// Search for this many milliseconds a move instead of `iterations`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        time_ms: Option<u64>,
        /// Keep the subtree of the position reached between moves.
        #[serde(default, skip_serializing_if = "is_false")]
        reuse: bool,
        #[serde(default)]
        ties: Ties,
    },
    /// The actor-critic network of a model file written by `train-a3c`, Hunter 5.6.
    A3c {
        /// Path of a safetensors model; none for the embedded Kalah(6,4) model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Sample the move from the policy (with the agent's seeded RNG) instead of playing
        /// the most likely legal move.
        #[serde(default, skip_serializing_if = "is_false")]
        sample: bool,
        #[serde(default)]
        ties: Ties,
    },
}

impl AgentSpec {
    /// Parses a short string or, when the text starts with `{`, JSON, within the library's
    /// limits, reading the files it names as given (the command line's way).
    pub fn parse(text: &str) -> Result<AgentSpec, SpecError> {
        AgentSpec::parse_with(text, Profile::Library, &FileAccess::Any)
    }

    /// Parses a short string or JSON text within `profile`'s limits. The files the spec
    /// names (a model, an export document) are checked against `files` before any is opened.
    pub(crate) fn parse_with(
        text: &str,
        profile: Profile,
        files: &FileAccess,
    ) -> Result<AgentSpec, SpecError> {
        let text = text.trim();
        if !text.starts_with('{') {
            // A budget after the spec: `@20ms` (time_ms) or `@50000nodes` (nodes).
            type Apply = fn(&AgentSpec, u64) -> Option<AgentSpec>;
            let budgets: [(&str, &str, Apply, &str); 2] = [
                ("ms", "time_ms", AgentSpec::with_time_ms, "no time control (minimax, heuristic and mcts have)"),
                ("nodes", "nodes", AgentSpec::with_nodes, "no node budget (minimax and heuristic have; mcts counts playouts in its iterations)"),
            ];
            for (unit, field, apply, lacking) in budgets {
                if let Some((base, amount)) = split_suffix(text, unit) {
                    let spec = AgentSpec::parse_with(base, profile, files)?;
                    let kind = spec.kind();
                    let bounded = apply(&spec, amount)
                        .ok_or_else(|| err(text, field, format!("{kind} agents have {lacking}")))?;
                    bounded.check(profile)?;
                    return Ok(bounded);
                }
            }
        }
        let spec = if text.starts_with('{') {
            let value: serde_json::Value =
                serde_json::from_str(text).map_err(|e| err(text, "json", e.to_string()))?;
            return AgentSpec::from_json_with(&value, profile, files);
        } else if let Some(path) = text.strip_prefix("export:") {
            return from_export_file(path, profile, files);
        } else if let Some(path) = text.strip_prefix("a3c:") {
            if path.is_empty() {
                return Err(err(
                    text,
                    "model",
                    "give the path of a model file, e.g. a3c:model.safetensors",
                ));
            }
            AgentSpec::A3c {
                model: Some(path.to_string()),
                sample: false,
                ties: Ties::Random,
            }
        } else {
            parse_short(text)?
        };
        spec.check(profile)?;
        spec.open_files(files)?;
        Ok(spec)
    }

    /// Parses JSON (a spec object or a short string in a JSON string) within the library's
    /// limits, reading the files it names as given.
    ///
    /// Two forms import an export document written by `evolve` or the server:
    /// `{"kind":"export","path":"best.json"}` and
    /// `{"kind":"heuristic","from_export":{...the document...}}`.
    pub fn from_json(value: &serde_json::Value) -> Result<AgentSpec, SpecError> {
        AgentSpec::from_json_with(value, Profile::Library, &FileAccess::Any)
    }

    /// Parses JSON within `profile`'s limits, opening only the files `files` allows (see
    /// [`AgentSpec::parse_with`]). An export document given inline (`from_export`) is read
    /// under the same limits and policy, wherever it is nested.
    pub(crate) fn from_json_with(
        value: &serde_json::Value,
        profile: Profile,
        files: &FileAccess,
    ) -> Result<AgentSpec, SpecError> {
        if let Some(object) = value.as_object() {
            let kind = object.get("kind").and_then(|k| k.as_str());
            if kind == Some("export") {
                let path = object.get("path").and_then(|p| p.as_str()).ok_or_else(|| {
                    err(
                        &value.to_string(),
                        "path",
                        "an export agent needs the path of its document",
                    )
                })?;
                return from_export_file(path, profile, files);
            }
            if let (Some("heuristic"), Some(document)) = (kind, object.get("from_export")) {
                return from_export_document(document, "from_export", profile, files);
            }
        }
        let spec = match value {
            serde_json::Value::String(s) => return AgentSpec::parse_with(s, profile, files),
            other => serde_json::from_value::<AgentSpec>(other.clone())
                .map_err(|e| err(&other.to_string(), "json", e.to_string()))?,
        };
        spec.check(profile)?;
        spec.open_files(files)?;
        Ok(spec)
    }

    /// Checks the model file an `a3c` spec names against `files` and, where the policy opens
    /// files, loads it now, so that a missing or broken model is reported with its spec rather
    /// than at the first game. The spec keeps the name it was given (see [`AgentSpec::locate`]).
    fn open_files(&self, files: &FileAccess) -> Result<(), SpecError> {
        let AgentSpec::A3c {
            model: Some(name), ..
        } = self
        else {
            return Ok(());
        };
        let Some(path) = self.model_path(name, files)? else {
            return Ok(());
        };
        // Messages name the model as the spec did, not by where the server keeps it.
        load_model(Some(&path)).map_err(|reason| {
            err(
                &self.to_string(),
                "model",
                reason.to_string().replace(&path, name),
            )
        })?;
        Ok(())
    }

    /// The file to open for the model `name` under `files`; `None` under
    /// [`FileAccess::Stored`].
    fn model_path(&self, name: &str, files: &FileAccess) -> Result<Option<String>, SpecError> {
        let me = || self.to_string();
        match files
            .resolve(name, "model file")
            .map_err(|reason| err(&me(), "model", reason.to_string()))?
        {
            None => Ok(None),
            Some(path) => path
                .to_str()
                .map(|p| Some(p.to_string()))
                .ok_or_else(|| err(&me(), "model", "the model's path is not UTF-8")),
        }
    }

    /// The spec to build, its model name replaced by the file `files` resolves it to. A server
    /// keeps specs as its clients named them (`a3c:m.safetensors`), so that answers and stored
    /// configs never show where its models folder is and survive the folder moving, and
    /// locates them just before building; the command line's names are paths already.
    pub(crate) fn locate(&self, files: &FileAccess) -> Result<AgentSpec, SpecError> {
        let mut spec = self.clone();
        if let AgentSpec::A3c {
            model: Some(name), ..
        } = &mut spec
        {
            if let Some(path) = self.model_path(name, files)? {
                *name = path;
            }
        }
        Ok(spec)
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            AgentSpec::Random => "random",
            AgentSpec::Greedy { .. } => "greedy",
            AgentSpec::Minimax { .. } => "minimax",
            AgentSpec::Heuristic { .. } => "heuristic",
            AgentSpec::Pekar { .. } => "pekar",
            AgentSpec::PekarMinimax { .. } => "pekar-minimax",
            AgentSpec::Perfect { .. } => "perfect",
            AgentSpec::Mcts { .. } => "mcts",
            AgentSpec::A3c { .. } => "a3c",
        }
    }

    /// The same agent searching to a clock of `ms` milliseconds a move (short form
    /// `minimax:6@20ms`), within its depth; `None` for the kinds with no time control.
    pub(crate) fn with_time_ms(&self, ms: u64) -> Option<AgentSpec> {
        let mut spec = self.clone();
        match &mut spec {
            AgentSpec::Minimax { time_ms, .. }
            | AgentSpec::Heuristic { time_ms, .. }
            | AgentSpec::Mcts { time_ms, .. } => *time_ms = Some(ms),
            _ => return None,
        }
        Some(spec)
    }

    /// The same alpha-beta agent stopping each move's iterative deepening at `n` positions
    /// (short form `minimax:20@50000nodes`); `None` for other kinds.
    pub(crate) fn with_nodes(&self, n: u64) -> Option<AgentSpec> {
        let mut spec = self.clone();
        match &mut spec {
            AgentSpec::Minimax { nodes, .. } | AgentSpec::Heuristic { nodes, .. } => {
                *nodes = Some(n)
            }
            _ => return None,
        }
        Some(spec)
    }

    /// The agent as an equal-cost match that reproduces plays it (`play --nodes`): alpha-beta
    /// deepens up to the library's depth limit until a move has visited `n` positions, MCTS
    /// runs `n` playouts a move (a playout costs far more than a position: equal counts,
    /// not equal time). Kinds that count neither stay as they are: `false`.
    pub fn with_nodes_per_move(&self, n: u64) -> (AgentSpec, bool) {
        let deepest = Depth::Fixed(Profile::Library.limits().max_depth);
        let mut spec = self.clone();
        match &mut spec {
            AgentSpec::Minimax {
                depth,
                nodes,
                time_ms,
                ..
            }
            | AgentSpec::Heuristic {
                depth,
                nodes,
                time_ms,
                ..
            } => {
                *depth = deepest;
                *nodes = Some(n);
                *time_ms = None;
            }
            AgentSpec::Mcts {
                iterations,
                time_ms,
                ..
            } => {
                *iterations = n.min(u32::MAX as u64) as u32;
                *time_ms = None;
            }
            _ => return (spec, false),
        }
        (spec, true)
    }

    /// The agent as an equal-time match plays it (`play --time-ms`): searches that can follow
    /// a clock get `ms` milliseconds a move, alpha-beta deepening as far as the library's
    /// depth limit allows so that the clock, not the depth, decides. Kinds without a clock
    /// (random, greedy, pekar, pekar-minimax, perfect, a3c) stay as they are: `false`.
    pub fn with_time_per_move(&self, ms: u64) -> (AgentSpec, bool) {
        let deepest = Depth::Fixed(Profile::Library.limits().max_depth);
        let mut spec = self.clone();
        match &mut spec {
            AgentSpec::Minimax {
                depth,
                time_ms,
                nodes,
                ..
            }
            | AgentSpec::Heuristic {
                depth,
                time_ms,
                nodes,
                ..
            } => {
                *depth = deepest;
                *time_ms = Some(ms);
                *nodes = None;
            }
            AgentSpec::Mcts { time_ms, .. } => *time_ms = Some(ms),
            _ => return (spec, false),
        }
        (spec, true)
    }

    /// Checks the spec against the library's limits (the command line's).
    pub fn validate(&self) -> Result<(), SpecError> {
        self.check(Profile::Library)
    }

    /// Checks every parameter of the spec against `profile`'s limits, naming the field at
    /// fault. One arm per kind in one function on purpose: every limit an agent has is read
    /// here, next to the others.
    pub(crate) fn check(&self, profile: Profile) -> Result<(), SpecError> {
        let limits = profile.limits();
        let context = profile.context();
        let me = self.to_string();
        let check_depth = |field: &str, depth: Depth| {
            if depth == Depth::Adaptive && depth.deepest() > limits.max_depth {
                let max = limits.max_depth;
                let deepest = depth.deepest();
                return Err(err(
                    &me,
                    field,
                    format!("adaptive searches to depth {deepest}, beyond the most here ({max}{context}); give a depth"),
                ));
            }
            let depth = depth.deepest();
            if depth == 0 || depth > limits.max_depth {
                let max = limits.max_depth;
                Err(err(
                    &me,
                    field,
                    format!("must be 1 to {max}{context}, got {depth}"),
                ))
            } else {
                Ok(())
            }
        };
        let check_time = |time_ms: Option<u64>| {
            match (time_ms, limits.max_time_ms) {
            (None, _) => Ok(()),
            (Some(_), None) => Err(err(
                &me,
                "time_ms",
                format!("a time budget makes games depend on the machine's speed, so they would not reproduce{context}; give a depth instead"),
            )),
            (Some(t), Some(max)) if t == 0 || t > max => Err(err(
                &me,
                "time_ms",
                format!("must be 1 to {max}{context}, got {t}"),
            )),
            _ => Ok(()),
        }
        };
        let check_nodes = |nodes: Option<u64>, time_ms: Option<u64>| match nodes {
            None => Ok(()),
            Some(_) if time_ms.is_some() => {
                Err(err(&me, "nodes", "give time_ms or nodes, not both"))
            }
            Some(n) if n == 0 || n > limits.max_move_nodes => Err(err(
                &me,
                "nodes",
                format!("must be 1 to {}{context}, got {n}", limits.max_move_nodes),
            )),
            Some(_) => Ok(()),
        };
        match self {
            AgentSpec::Minimax {
                depth,
                time_ms,
                nodes,
                ..
            } => {
                check_depth("depth", *depth)?;
                check_time(*time_ms)?;
                check_nodes(*nodes, *time_ms)?;
            }
            AgentSpec::Heuristic {
                depth,
                time_ms,
                nodes,
                ..
            } => {
                check_depth("depth", *depth)?;
                check_time(*time_ms)?;
                check_nodes(*nodes, *time_ms)?;
                self.heuristic_terms()?;
            }
            AgentSpec::PekarMinimax { depth, .. } => check_depth("depth", *depth)?,
            AgentSpec::Perfect {
                max_seeds,
                fallback_depth,
                solve_nodes,
                ..
            } => {
                check_depth("fallback_depth", Depth::Fixed(*fallback_depth))?;
                let max_nodes = limits.max_move_nodes.min(super::limits::MAX_SOLVE_NODES);
                if *solve_nodes > max_nodes {
                    return Err(err(
                        &me,
                        "solve_nodes",
                        format!("must be at most {max_nodes}{context}, got {solve_nodes}"),
                    ));
                }
                let max = limits.max_perfect_seeds;
                if *max_seeds > max {
                    return Err(err(
                        &me,
                        "max_seeds",
                        format!("must be at most {max}{context} (an exact solve's time grows about fourfold with every two seeds), got {max_seeds}"),
                    ));
                }
            }
            AgentSpec::Mcts {
                iterations,
                c,
                epsilon,
                time_ms,
                ..
            } => {
                check_time(*time_ms)?;
                let max = limits.max_mcts_iterations;
                if *iterations == 0 || *iterations > max {
                    return Err(err(
                        &me,
                        "iterations",
                        format!("must be 1 to {max}{context}, got {iterations}"),
                    ));
                }
                if !c.is_finite() || *c < 0.0 || *c > MAX_MCTS_C {
                    return Err(err(&me, "c", format!("must be 0 to {MAX_MCTS_C}, got {c}")));
                }
                if !(0.0..=1.0).contains(epsilon) {
                    return Err(err(
                        &me,
                        "epsilon",
                        format!("must be 0 to 1, got {epsilon}"),
                    ));
                }
            }
            // Model files are a matter of who asks, checked by `open_files`; limits open nothing.
            AgentSpec::A3c { .. }
            | AgentSpec::Random
            | AgentSpec::Greedy { .. }
            | AgentSpec::Pekar { .. } => {}
        }
        Ok(())
    }

    /// The features and weights of a `heuristic` spec, resolved and checked.
    pub(crate) fn heuristic_terms(&self) -> Result<(Vec<Feature>, Vec<f64>), SpecError> {
        let AgentSpec::Heuristic {
            features, weights, ..
        } = self
        else {
            return Err(err(&self.to_string(), "kind", "not a heuristic agent"));
        };
        resolve_terms(features, weights)
            .map_err(|(field, reason)| err(&self.to_string(), field, reason))
    }

    /// Builds the agent for `rules`, its searches bounded by `budget` ([`Agent::set_budget`]).
    pub fn build_within(
        &self,
        rules: Rules,
        budget: &crate::search::Budget,
    ) -> Result<Box<dyn Agent>, SpecError> {
        let mut agent = self.build(rules)?;
        agent.set_budget(budget);
        Ok(agent)
    }

    /// Builds the agent for `rules`.
    pub fn build(&self, rules: Rules) -> Result<Box<dyn Agent>, SpecError> {
        self.validate()?;
        Ok(match self {
            AgentSpec::Random => Box::new(RandomAgent),
            AgentSpec::Greedy { ties } => Box::new(Greedy { rules, ties: *ties }),
            AgentSpec::Minimax {
                depth,
                time_ms,
                nodes,
                ties,
                egdb,
            } => Box::new(SearchAgent {
                eval: StoreDiff,
                rules,
                depth: *depth,
                time: time_ms.map(Duration::from_millis),
                nodes: *nodes,
                ties: *ties,
                table: Default::default(),
                budget: Default::default(),
                egdb: EndgameTable::new(*egdb),
            }),
            AgentSpec::Heuristic {
                depth,
                time_ms,
                nodes,
                ties,
                egdb,
                ..
            } => {
                let (features, weights) = self.heuristic_terms()?;
                let eval = WeightedEval::new(&features, &weights, rules)
                    .map_err(|reason| err(&self.to_string(), "weights", reason.to_string()))?;
                Box::new(SearchAgent {
                    eval,
                    rules,
                    depth: *depth,
                    time: time_ms.map(Duration::from_millis),
                    nodes: *nodes,
                    ties: *ties,
                    table: Default::default(),
                    budget: Default::default(),
                    egdb: EndgameTable::new(*egdb),
                })
            }
            AgentSpec::Pekar { ties } => Box::new(Pekar { rules, ties: *ties }),
            AgentSpec::PekarMinimax { depth, ties } => Box::new(PekarMinimax {
                rules,
                depth: *depth,
                ties: *ties,
                budget: Default::default(),
            }),
            AgentSpec::Perfect {
                max_seeds,
                fallback_depth,
                solve_nodes,
                ties,
                egdb,
            } => Box::new(
                Perfect::new(rules, *max_seeds, *fallback_depth, *ties)
                    .with_egdb(*egdb, *solve_nodes),
            ),
            AgentSpec::Mcts {
                iterations,
                c,
                epsilon,
                time_ms,
                reuse,
                ties,
            } => {
                let mut agent = Mcts::new(rules, *iterations, *c, *epsilon);
                agent.time = time_ms.map(Duration::from_millis);
                agent.reuse = *reuse;
                agent.ties = *ties;
                Box::new(agent)
            }
            AgentSpec::A3c {
                model,
                sample,
                ties,
            } => {
                let net = load_model(model.as_deref())
                    .map_err(|reason| err(&self.to_string(), "model", reason.to_string()))?;
                Box::new(A3cAgent::new(net, rules, *sample, *ties))
            }
        })
    }
}

/// Resolved features and their weights.
type Terms = (Vec<Feature>, Vec<f64>);

fn resolve_terms(
    features: &FeatureChoice,
    weights: &WeightChoice,
) -> Result<Terms, (&'static str, String)> {
    let (list, set) = match features {
        FeatureChoice::Set(name) => (
            parse_features(name).map_err(|e| ("features", e.to_string()))?,
            feature_set(name),
        ),
        FeatureChoice::List(list) => {
            if list.is_empty() {
                return Err(("features", "the feature list is empty".into()));
            }
            (list.clone(), None)
        }
    };
    let values = match weights {
        WeightChoice::Values(values) => values.clone(),
        WeightChoice::Preset(name) => {
            let Some(set) = set else {
                return Err((
                    "weights",
                    format!(
                        "preset {name:?} needs a named feature set ({}); give explicit weights for a feature list",
                        FEATURE_SETS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                    ),
                ));
            };
            set.preset(name)
                .map_err(|reason| ("weights", reason.to_string()))?
                .to_vec()
        }
    };
    if values.len() != list.len() {
        return Err((
            "weights",
            format!(
                "{} features need {} weights, got {}",
                list.len(),
                list.len(),
                values.len()
            ),
        ));
    }
    if let Some(w) = values
        .iter()
        .find(|w| !w.is_finite() || w.abs() > crate::eval::MAX_WEIGHT)
    {
        return Err((
            "weights",
            format!(
                "{w} is out of range: weights must be finite and within +-{}",
                crate::eval::MAX_WEIGHT
            ),
        ));
    }
    Ok((list, values))
}

/// The export document format this version reads (see `tune::export`).
pub(crate) const EXPORT_FORMAT_VERSION: u64 = 1;

/// The agent an export document describes: its `agent` field, which holds the spec that plays
/// as the exported individual did, read within `profile`'s limits and under `files`. Only this
/// much of the document is read here, so that agents need not know the GA.
pub(crate) fn from_export_document(
    document: &serde_json::Value,
    origin: &str,
    profile: Profile,
    files: &FileAccess,
) -> Result<AgentSpec, SpecError> {
    let version = document.get("format_version").and_then(|v| v.as_u64());
    if version != Some(EXPORT_FORMAT_VERSION) {
        return Err(err(
            origin,
            "format_version",
            format!(
                "expected an export document of format_version {EXPORT_FORMAT_VERSION}, found {}",
                version.map_or("none".to_string(), |v| v.to_string())
            ),
        ));
    }
    let agent = document
        .get("agent")
        .ok_or_else(|| err(origin, "agent", "the export document has no agent spec"))?;
    let points_to_export = match agent {
        serde_json::Value::String(s) => s.trim().starts_with("export:"),
        other => other.get("kind").and_then(|k| k.as_str()) == Some("export"),
    };
    if points_to_export {
        return Err(err(
            origin,
            "agent",
            "an export document may not point to another export",
        ));
    }
    AgentSpec::from_json_with(agent, profile, files)
}

/// Reads an export document from a file, if `files` allows it, and returns its agent.
pub(crate) fn from_export_file(
    path: &str,
    profile: Profile,
    files: &FileAccess,
) -> Result<AgentSpec, SpecError> {
    let origin = format!("export:{path}");
    if path.is_empty() {
        return Err(err(
            &origin,
            "path",
            "give the path of an export document, e.g. export:best.json",
        ));
    }
    let Some(file) = files
        .resolve(path, "export document")
        .map_err(|reason| match files {
            FileAccess::None => err(
                &origin,
                "path",
                format!(
                    "{reason}: give the document itself, as {{\"kind\":\"heuristic\",\"from_export\":<document>}}, or a run of the server, as run:ID"
                ),
            ),
            _ => err(&origin, "path", reason.to_string()),
        })?
    else {
        return Err(err(
            &origin,
            "path",
            "an export: reference is resolved when a config or spec is loaded, and is not read \
             back from stored data",
        ));
    };
    let shown = excerpt(path);
    let bytes = read_capped(&file, MAX_EXPORT_BYTES)
        .map_err(|e| err(&origin, "path", format!("cannot read {shown}: {e}")))?;
    let document: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| err(&origin, "json", format!("{shown} is not JSON: {e}")))?;
    from_export_document(&document, &origin, profile, files)
}

fn parse_depth(spec: &str, text: &str) -> Result<Depth, SpecError> {
    Depth::parse(text).ok_or_else(|| {
        err(
            spec,
            "depth",
            format!("expected a whole number or \"adaptive\", got {text:?}"),
        )
    })
}

/// Parses the short string form. One match over the kinds on purpose: the table in the module
/// docs maps line for line to its arms, so a kind's syntax is read in one place.
fn parse_short(text: &str) -> Result<AgentSpec, SpecError> {
    let mut parts = text.split(':');
    let kind = parts.next().unwrap_or_default();
    let args: Vec<&str> = parts.collect();
    let too_many = |max: usize| {
        if args.len() > max {
            Err(err(
                text,
                "spec",
                format!(
                    "{kind} takes at most {max} ':'-separated argument(s), got {}",
                    args.len()
                ),
            ))
        } else {
            Ok(())
        }
    };
    let spec = match kind {
        "random" => {
            too_many(0)?;
            AgentSpec::Random
        }
        "greedy" => {
            too_many(0)?;
            AgentSpec::Greedy { ties: Ties::Random }
        }
        "minimax" => {
            too_many(1)?;
            AgentSpec::Minimax {
                depth: args.first().map(|d| parse_depth(text, d)).transpose()?.unwrap_or(default_depth()),
                time_ms: None,
                nodes: None,
                ties: Ties::Random,
                egdb: false,
            }
        }
        "pekar" => {
            too_many(0)?;
            AgentSpec::Pekar { ties: Ties::Random }
        }
        "pekar-minimax" => {
            too_many(1)?;
            AgentSpec::PekarMinimax {
                depth: args.first().map(|d| parse_depth(text, d)).transpose()?.unwrap_or(default_depth()),
                ties: Ties::Random,
            }
        }
        "perfect" => {
            too_many(1)?;
            AgentSpec::Perfect {
                max_seeds: match args.first() {
                    Some(s) => s.parse().map_err(|_| {
                        err(text, "max_seeds", format!("expected a whole number, got {s:?}"))
                    })?,
                    None => default_max_seeds(),
                },
                fallback_depth: default_fallback_depth(),
                solve_nodes: 0,
                ties: Ties::Random,
                egdb: false,
            }
        }
        "a3c" => {
            too_many(0)?;
            AgentSpec::A3c {
                model: None,
                sample: false,
                ties: Ties::Random,
            }
        }
        "mcts" => {
            too_many(3)?;
            let number = |i: usize, field: &str, default: f64| -> Result<f64, SpecError> {
                match args.get(i) {
                    Some(t) => t.parse::<f64>().map_err(|_| {
                        err(text, field, format!("expected a number, got {t:?}"))
                    }),
                    None => Ok(default),
                }
            };
            AgentSpec::Mcts {
                iterations: match args.first() {
                    Some(t) => t.parse().map_err(|_| {
                        err(text, "iterations", format!("expected a whole number, got {t:?}"))
                    })?,
                    None => default_iterations(),
                },
                c: number(1, "c", default_c())?,
                epsilon: number(2, "epsilon", default_epsilon())?,
                time_ms: None,
                reuse: false,
                ties: Ties::Random,
            }
        }
        "heuristic" => {
            too_many(3)?;
            let features = FeatureChoice::Set(args.first().copied().unwrap_or("hunter10").to_string());
            let mut weights = default_weights();
            let mut depth = default_depth();
            match args.len() {
                0 | 1 => {}
                2 => {
                    // One more argument: depth if it is a plain whole number or "adaptive", else
                    // weights.
                    if args[1] == "adaptive"
                        || (args[1].bytes().all(|b| b.is_ascii_digit()) && !args[1].is_empty())
                    {
                        depth = parse_depth(text, args[1])?;
                    } else {
                        weights = parse_weights(text, args[1])?;
                    }
                }
                _ => {
                    weights = parse_weights(text, args[1])?;
                    depth = parse_depth(text, args[2])?;
                }
            }
            AgentSpec::Heuristic {
                features,
                weights,
                depth,
                time_ms: None,
                nodes: None,
                ties: Ties::Random,
                egdb: false,
            }
        }
        "" => {
            return Err(err(
                text,
                "json",
                "no agent given: write a spec such as minimax:4 or heuristic:hunter10:published:4",
            ))
        }
        other => {
            return Err(err(
                text,
                "kind",
                format!(
                    "unknown agent {other:?}; known: random, greedy, minimax, heuristic, pekar, pekar-minimax, perfect, mcts, a3c"
                ),
            ))
        }
    };
    Ok(spec)
}

fn parse_weights(spec: &str, text: &str) -> Result<WeightChoice, SpecError> {
    if text.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Ok(WeightChoice::Preset(text.to_string()));
    }
    text.split([',', '/'])
        .map(|w| {
            w.trim()
                .parse::<f64>()
                .map_err(|_| err(spec, "weights", format!("{w:?} is not a number")))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(WeightChoice::Values)
}

impl FromStr for AgentSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AgentSpec::parse(s)
    }
}

/// `minimax:6@20ms` is `minimax:6` with `time_ms` 20, `minimax:20@50000nodes` one with
/// `nodes` 50000: the base spec and the number before `unit`.
fn split_suffix<'t>(text: &'t str, unit: &str) -> Option<(&'t str, u64)> {
    let (base, suffix) = text.rsplit_once('@')?;
    let digits = suffix.strip_suffix(unit)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((base, digits.parse().ok()?))
}

/// The short string of a spec; a time budget is written `@20ms` after it. Parameters the
/// short form cannot carry (ties, egdb, mcts reuse, ...) are left out: use JSON for those.
impl fmt::Display for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_untimed(f)?;
        match self {
            AgentSpec::Minimax {
                time_ms: Some(ms), ..
            }
            | AgentSpec::Heuristic {
                time_ms: Some(ms), ..
            }
            | AgentSpec::Mcts {
                time_ms: Some(ms), ..
            } => write!(f, "@{ms}ms"),
            AgentSpec::Minimax { nodes: Some(n), .. }
            | AgentSpec::Heuristic { nodes: Some(n), .. } => write!(f, "@{n}nodes"),
            _ => Ok(()),
        }
    }
}

impl AgentSpec {
    fn fmt_untimed(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentSpec::Random => write!(f, "random"),
            AgentSpec::Greedy { .. } => write!(f, "greedy"),
            AgentSpec::Minimax { depth, .. } => write!(f, "minimax:{depth}"),
            AgentSpec::Pekar { .. } => write!(f, "pekar"),
            AgentSpec::PekarMinimax { depth, .. } => write!(f, "pekar-minimax:{depth}"),
            AgentSpec::Perfect { max_seeds, .. } => write!(f, "perfect:{max_seeds}"),
            AgentSpec::A3c { model: None, .. } => write!(f, "a3c"),
            AgentSpec::A3c {
                model: Some(path), ..
            } => write!(f, "a3c:{path}"),
            AgentSpec::Mcts {
                iterations,
                c,
                epsilon,
                ..
            } => {
                write!(f, "mcts:{iterations}")?;
                if *c != default_c() || *epsilon != default_epsilon() {
                    write!(f, ":{c}:{epsilon}")?;
                }
                Ok(())
            }
            AgentSpec::Heuristic {
                features,
                weights,
                depth,
                ..
            } => {
                let features = match features {
                    FeatureChoice::Set(s) => s.clone(),
                    FeatureChoice::List(l) => {
                        l.iter().map(|f| f.name()).collect::<Vec<_>>().join("+")
                    }
                };
                let weights = match weights {
                    WeightChoice::Preset(p) => p.clone(),
                    WeightChoice::Values(v) => v
                        .iter()
                        .map(|w| w.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                };
                write!(f, "heuristic:{features}:{weights}:{depth}")
            }
        }
    }
}

/// Splits a comma-separated list of agent specs, keeping commas that belong to a weight list
/// (`heuristic:abrams3:0.5,0.4,0.3:7,minimax:4` is two agents: pieces that do not start with a
/// letter continue the previous spec). A list that starts with `[` is read as a JSON array.
pub fn parse_spec_list(text: &str) -> Result<Vec<AgentSpec>, SpecError> {
    let text = text.trim();
    if text.starts_with('[') {
        let values: Vec<serde_json::Value> =
            serde_json::from_str(text).map_err(|e| err(text, "json", e.to_string()))?;
        return values.iter().map(AgentSpec::from_json).collect();
    }
    let mut pieces: Vec<String> = Vec::new();
    for piece in text.split(',') {
        match pieces.last_mut() {
            Some(last) if !piece.starts_with(|c: char| c.is_ascii_alphabetic()) => {
                last.push(',');
                last.push_str(piece);
            }
            _ => pieces.push(piece.to_string()),
        }
    }
    pieces.iter().map(|p| AgentSpec::parse(p)).collect()
}
