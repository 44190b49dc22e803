//! The export document: a run's best weights as a self-contained, versioned JSON document with
//! everything needed to reproduce the player (an agent spec) and the run (config and seed).

use serde::{Deserialize, Serialize};

use super::config::{BoardConfig, GaConfig};
use super::engine::{GenerationRecord, GenerationSummary, HallOfFame};
use crate::agents::spec::{FeatureChoice, WeightChoice};
use crate::agents::{AgentSpec, Ties};
use crate::eval::Feature;
use crate::game::Rules;
use crate::rl::td::TdConfig;
use crate::rl::texel::TexelConfig;
use crate::search::Depth;

/// The version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Why a document could not be made or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
}

fn invalid(field: &str, reason: impl Into<String>) -> ExportError {
    ExportError::Invalid {
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// A run's best individual, with its provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportDocument {
    /// Always [`FORMAT_VERSION`] for documents this build writes.
    pub format_version: u32,
    /// The program and version that wrote the document.
    pub generator: String,
    pub rules: Rules,
    pub board: BoardConfig,
    /// Feature names, in the order of `weights`.
    pub features: Vec<Feature>,
    pub weights: Vec<f64>,
    /// Fitness of the individual in the generation it was evaluated in.
    pub fitness: f64,
    /// That generation (0-based).
    pub generation: u32,
    /// The individual's search depth.
    pub depth: u32,
    pub seed: u64,
    /// The full config of the run that tuned it: a GA run's, or a learning run's.
    pub config: TunerConfig,
    /// A GA run's fitness curve, one entry per generation (empty for other tuners).
    pub history: Vec<GenerationSummary>,
    /// An agent spec that plays exactly as the individual did.
    pub agent: AgentSpec,
}

/// The config of the tuner that made a document. Written as the config object itself, as
/// format version 1 always was; a learning run's config is told apart by its `method`
/// field, which a GA config does not have.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TunerConfig {
    Ga(Box<GaConfig>),
    Td(Box<TdConfig>),
    Texel(Box<TexelConfig>),
}

impl TunerConfig {
    /// The GA config, for documents a GA run wrote.
    pub fn ga(&self) -> Option<&GaConfig> {
        match self {
            TunerConfig::Ga(config) => Some(config),
            TunerConfig::Td(_) | TunerConfig::Texel(_) => None,
        }
    }

    /// `ga`, `td`, `td-leaf` or `texel`.
    pub fn tuner(&self) -> &'static str {
        match self {
            TunerConfig::Ga(_) => "ga",
            TunerConfig::Td(config) => config.method.name(),
            TunerConfig::Texel(_) => "texel",
        }
    }

    /// The features, rules, board and seed of a learning run's config; `None` for a GA's.
    fn learning_setting(&self) -> Option<(Vec<Feature>, Rules, BoardConfig, u64)> {
        let board = |pits, seeds| BoardConfig { pits, seeds };
        match self {
            TunerConfig::Ga(_) => None,
            TunerConfig::Td(c) => {
                Some((c.features.clone(), c.rules, board(c.pits, c.seeds), c.seed))
            }
            TunerConfig::Texel(c) => {
                Some((c.features.clone(), c.rules, board(c.pits, c.seeds), c.seed))
            }
        }
    }
}

impl ExportDocument {
    /// The document of a learning run's player (TD or Texel): `weights` searched to `depth`,
    /// measured as `fitness` (its benchmark score) at checkpoint `checkpoint`.
    pub fn from_learner(
        config: TunerConfig,
        weights: &[f64],
        depth: u32,
        fitness: f64,
        checkpoint: u32,
    ) -> Result<ExportDocument, ExportError> {
        let (features, rules, board, seed) = config
            .learning_setting()
            .ok_or_else(|| invalid("config", "a GA run's document is made from its records"))?;
        let agent = AgentSpec::Heuristic {
            features: FeatureChoice::List(features.clone()),
            weights: WeightChoice::Values(weights.to_vec()),
            depth: Depth::Fixed(depth),
            time_ms: None,
            ties: Ties::Random,
        };
        let doc = ExportDocument {
            format_version: FORMAT_VERSION,
            generator: format!("kalah-tuner {}", env!("CARGO_PKG_VERSION")),
            rules,
            board,
            features,
            weights: weights.to_vec(),
            fitness,
            generation: checkpoint,
            depth,
            seed,
            config,
            history: Vec::new(),
            agent,
        };
        doc.check()?;
        Ok(doc)
    }

    /// The document of a run from its records (in generation order); the exported individual
    /// is the last record's hall of fame.
    pub fn from_run(
        config: &GaConfig,
        records: &[GenerationRecord],
    ) -> Result<ExportDocument, ExportError> {
        let last = records.last().ok_or_else(|| {
            invalid(
                "records",
                "a run with no evaluated generation has nothing to export",
            )
        })?;
        let history: Vec<GenerationSummary> = records.iter().map(|r| r.summary()).collect();
        ExportDocument::from_summaries(config, history, &ExportDocument::champion(config, last))
    }

    /// The individual a run exports, as of its record `last`: every place that names a run's
    /// player (export, `run:ID`, the dashboard, `evolve`) asks here. With a benchmark panel it
    /// is the panel's champion ([`super::benchmark`]). Without one: fitness against fixed
    /// opponents is absolute, so the best ever (the hall of fame); round-robin fitness is
    /// relative to the population it was measured in (a high score in a weak early
    /// generation says little), so the best of the last generation.
    pub fn champion(config: &GaConfig, last: &GenerationRecord) -> HallOfFame {
        if let Some(champion) = &last.champion {
            return HallOfFame {
                weights: champion.weights.clone(),
                fitness: champion.fitness,
                generation: champion.generation,
            };
        }
        if config.fitness.mode == crate::ga::FitnessMode::Opponents {
            return last.hall_of_fame.clone();
        }
        let best = last.best();
        HallOfFame {
            weights: best.weights.clone(),
            fitness: best.fitness,
            generation: last.generation,
        }
    }

    /// The document of `best` from a run's fitness curve, for callers that kept summaries
    /// rather than whole records.
    pub fn from_summaries(
        config: &GaConfig,
        history: Vec<GenerationSummary>,
        best: &HallOfFame,
    ) -> Result<ExportDocument, ExportError> {
        let resolved = config
            .validate()
            .map_err(|e| invalid("config", e.to_string()))?;
        let agent = AgentSpec::Heuristic {
            features: FeatureChoice::List(resolved.features.clone()),
            weights: WeightChoice::Values(best.weights.clone()),
            depth: Depth::Fixed(config.depth),
            time_ms: None,
            ties: Ties::Random,
        };
        let doc = ExportDocument {
            format_version: FORMAT_VERSION,
            generator: format!("kalah-tuner {}", env!("CARGO_PKG_VERSION")),
            rules: config.rules,
            board: config.board,
            features: resolved.features,
            weights: best.weights.clone(),
            fitness: best.fitness,
            generation: best.generation,
            depth: config.depth,
            seed: config.seed,
            config: TunerConfig::Ga(Box::new(config.clone())),
            history,
            agent,
        };
        doc.check()?;
        Ok(doc)
    }

    pub fn to_json_pretty(&self) -> String {
        // Plain data with string keys always serialises.
        serde_json::to_string_pretty(self).expect("an export document serialises")
    }

    /// Reads and checks a document. Documents of another `format_version` are refused with
    /// that field named.
    pub fn from_json(text: &str) -> Result<ExportDocument, ExportError> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| invalid("document", format!("not valid JSON: {e}")))?;
        match value.get("format_version").and_then(|v| v.as_u64()) {
            Some(v) if v == FORMAT_VERSION as u64 => {}
            Some(v) => {
                return Err(invalid(
                    "format_version",
                    format!("unsupported version {v}, expected {FORMAT_VERSION}"),
                ))
            }
            None => {
                return Err(invalid(
                    "format_version",
                    format!("missing: an export document has \"format_version\": {FORMAT_VERSION}"),
                ))
            }
        }
        let doc: ExportDocument = serde_path_to_error::deserialize(value).map_err(|e| {
            let field = e.path().to_string();
            invalid(&field, e.into_inner().to_string())
        })?;
        doc.check()?;
        Ok(doc)
    }

    /// The agent that plays as the exported individual.
    pub fn agent_spec(&self) -> AgentSpec {
        self.agent.clone()
    }

    fn check(&self) -> Result<(), ExportError> {
        if self.features.len() != self.weights.len() {
            return Err(invalid(
                "weights",
                format!(
                    "{} features need {} weights, got {}",
                    self.features.len(),
                    self.features.len(),
                    self.weights.len()
                ),
            ));
        }
        self.agent
            .validate()
            .map_err(|e| invalid("agent", e.to_string()))?;
        let (features, weights) = self
            .agent
            .heuristic_terms()
            .map_err(|e| invalid("agent", e.to_string()))?;
        if features != self.features || weights != self.weights {
            return Err(invalid(
                "agent",
                "the agent's features and weights differ from the document's",
            ));
        }
        Ok(())
    }
}
